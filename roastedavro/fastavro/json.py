"""fastavro's ``json_writer`` and ``json_reader`` over roastedavro.avrojson.

The same arguments and, for the default encoder and decoder, the same JSON
lines: one JSON object per record, separated by newlines, as
``json.dumps`` writes them. NaN and the infinities are written as fastavro
writes them, as the tokens NaN, Infinity and -Infinity that Python's json
reads (not JSON: Java refuses them; written as the strings "NaN" and so on,
fastavro would read back strings), and both forms are read. Where fastavro
departs from Java's JSON encoding otherwise, Java's is taken: a float as
the shortest decimal of its 32-bit value, and JSON that
does not match the schema is a
``roastedavro.avrojson.JSONDecodeError`` naming its path. As in fastavro, a value read for a float is the double its
JSON number gives (Python has no 32-bit float). fastavro's
``strict``, ``strict_allow_default`` and ``disable_tuple_notation`` options
are checked as fastavro checks them; a custom ``encoder`` or ``decoder``
class (fastavro's own parser-driven machinery) is a TypeError.
"""

from __future__ import annotations

import decimal
import json
import threading
from typing import IO, Any, Iterable, Iterator

from fastavro.io.json_decoder import AvroJSONDecoder
from fastavro.io.json_encoder import AvroJSONEncoder

from roastedavro.errors import DatumError, UnreadableDatumError
from roastedavro.fastavro._writing import fastavro_error, strict_codec, validation_error, without_tuples
from roastedavro.fastavro._codecs import fastavro_pair
from roastedavro.fastavro._logical import logical_plan
from roastedavro.fastavro._models import DatumResolutionError, as_model
from roastedavro.fastavro.schema import parse_schema

__all__ = ["json_writer", "json_reader", "JSONDecodeError"]  # noqa: F822 (__getattr__ gives it)


def __getattr__(name: str) -> Any:
    # roastedavro.avrojson is imported when JSON is first used
    if name == "JSONDecodeError":
        from roastedavro.avrojson import JSONDecodeError

        return JSONDecodeError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_codecs: dict[tuple, Any] = {}
_KEPT = 256
_lock = threading.Lock()


def _json_codec(schema: Any, reader_schema: Any = None) -> Any:
    from roastedavro.avrojson import AvroJSON

    model = as_model(schema)
    reader = as_model(reader_schema) if reader_schema is not None else None
    key = (model.to_json(), model.dialect, (reader.to_json(), reader.dialect) if reader is not None else None)
    codec = _codecs.get(key)
    if codec is None:
        codec = AvroJSON(model, reader_schema=reader, narrow_floats=False, bare_constants=True)
        with _lock:
            _codecs[key] = codec
            if len(_codecs) > _KEPT:
                del _codecs[next(iter(_codecs))]
    return codec


def json_writer(
    fo: IO,
    schema: Any,
    records: Iterable[Any],
    *,
    write_union_type: bool = True,
    validator: bool = False,
    encoder: Any = AvroJSONEncoder,
    strict: bool = False,
    strict_allow_default: bool = False,
    disable_tuple_notation: bool = False,
) -> None:
    """Write ``records`` to the text stream ``fo`` in Avro's JSON encoding, one
    per line (fastavro's ``json_writer``). ``write_union_type=False`` writes
    union values without their ``{"<branch>": ...}`` object. A record that
    cannot be written raises ``roastedavro.errors.DatumError`` naming its
    path (with ``validator=True``, a ValidationError that is fastavro's too);
    the records before it have been written. ``strict``,
    ``strict_allow_default`` and ``disable_tuple_notation`` are fastavro's."""
    if encoder is not AvroJSONEncoder:
        raise _custom("encoder", encoder)
    codec = _json_codec(schema)
    checker = strict_codec(schema, strict, strict_allow_default) if strict or strict_allow_default else None
    plan = logical_plan(schema)  # fastavro's custom logical types, if the schema has any
    separator = ""
    for record in records:
        if disable_tuple_notation:
            record = without_tuples(record)
        if plan is not None:
            record = plan.prepare(record)
        try:
            if checker is not None:
                checker.dump(record)  # fastavro's strict checks, with its messages
            value = codec.to_json_value(record, union_type=write_union_type)
        except DatumError as error:
            if validator:
                raise validation_error(error, schema, record) from None
            raise fastavro_error(error, DatumError) from None
        fo.write(separator + json.dumps(value))
        separator = "\n"
    return None


def _custom(role: str, given: Any) -> TypeError:
    # fastavro's encoder and decoder classes are its own parser-driven
    # machinery, run by its own reader and writer: the drop-in runs none of that
    return TypeError(
        f"roastedavro.fastavro's json_{'writer' if role == 'encoder' else 'reader'} writes and "
        f"reads Avro JSON with roastedavro's engine and takes no custom {role} class "
        f"({getattr(given, '__name__', given)!r}); use fastavro's own json functions for one"
    )


class json_reader:
    """The records of Avro JSON text, one JSON value per line (fastavro's
    ``json_reader``): iterate it. Blank lines are skipped. As fastavro, the
    lines are read from ``fo`` when it is made; each is decoded as it is
    iterated. ``writer_schema`` and ``reader_schema`` are in fastavro's
    parsed form."""

    def __new__(
        cls, fo: IO, schema: Any, reader_schema: Any = None, *, decoder: Any = AvroJSONDecoder
    ) -> json_reader:
        if decoder is not AvroJSONDecoder:
            raise _custom("decoder", decoder)
        return super().__new__(cls)

    def __init__(self, fo: IO, schema: Any, reader_schema: Any = None, *, decoder: Any = AvroJSONDecoder):
        self._codec = _json_codec(schema, reader_schema)
        self._plan = logical_plan(schema, reader_schema)
        # a pair whose values by fastavro's rule are not the resolution's:
        # the writer's datum, through its binary, read by tier 0 by that rule
        self._fastavro_pair = None
        if reader_schema is not None:
            pair = fastavro_pair(schema, reader_schema)
            if pair is not None:
                from roastedavro.codec import AvroCodec

                written = _json_codec(schema)
                self._fastavro_pair = (written, AvroCodec(written.schema), pair._reader)
        self._lines = [line for line in fo]
        self.writer_schema = parse_schema(self._codec.schema.to_dict())
        self.reader_schema = (
            self.writer_schema if reader_schema is None else parse_schema(self._codec.reader_schema.to_dict())
        )
        self.schema = self.writer_schema
        self._records = self._decode()

    def _decode(self) -> Iterator[Any]:
        from roastedavro.avrojson import JSONDecodeError

        codec, plan = self._codec, self._plan
        for number, line in enumerate(self._lines, 1):
            if isinstance(line, bytes):
                line = line.decode("utf-8")
            if not line.strip():
                continue
            try:
                value = json.loads(line, parse_float=decimal.Decimal)
            except RecursionError:
                raise JSONDecodeError(
                    f"line {number}: the JSON is nested too deeply for Python's recursion limit"
                ) from None
            except ValueError as error:
                raise JSONDecodeError(f"line {number}: not valid JSON: {error}") from None
            try:
                if self._fastavro_pair is not None:
                    written, binary, reader = self._fastavro_pair
                    datum = reader.load(binary.dump(written.from_json_value(value)))
                else:
                    datum = codec.from_json_value(value)
            except UnreadableDatumError as error:
                # a symbol or branch the reader's schema cannot read: fastavro's error
                raise DatumResolutionError.of(error) from None
            yield datum if plan is None else plan.post(datum)

    def __iter__(self) -> Iterator[Any]:
        return self._records

    def __next__(self) -> Any:
        return next(self._records)
