"""Avro's JSON encoding (the specification's "JSON Encoding"), as Java's
JsonEncoder and JsonDecoder write and read it.

``AvroJSON(schema)`` is built once per schema; ``to_json_value(datum)`` gives
the datum as JSON values (dict, list, str, int, float, bool, None) for
``json.dumps``, ``from_json_value(value)`` reads ``json.loads`` output back.
Datums are AvroCodec's (fastavro's conventions: records as dicts, enums as
str, bytes and fixed as bytes, logical types as Python values).

The encoding, as Java 1.12's JsonEncoder writes it (GenericDatumWriter
without logical type conversions):

- a union's null as JSON null, any other branch as ``{"<branch>": value}``,
  the branch named by its full name for records, enums and fixed, by its type
  name otherwise (``"string"``, ``"array"``, ``"long"`` for a timestamp). The
  branch a Python value is written as is the one AvroCodec writes it as (the
  same dispatch on exact types, then fastavro's validation:
  ``roastedavro._datum.UnionChooser``), so JSON and binary agree;
- bytes and fixed as strings of the code points U+0000..U+00FF, one per byte;
- float and double NaN and infinities as the strings ``"NaN"``,
  ``"Infinity"`` and ``"-Infinity"`` (as Java writes them; JSON has no such
  numbers; a NaN's sign and payload are lost, as in Java); a float as the
  shortest decimal that is the same 32-bit float;
- logical types as their underlying type's value: a decimal as the bytes of
  its two's complement unscaled value, a uuid as its string, a date as days,
  times and timestamps as ints of their unit, a duration as its 12 bytes;
- enums as their symbols, records as objects in field order, maps as
  objects, arrays as lists.

Straight between binary and JSON, without Python datums (what the command
line's ``tojson``, ``fromjson`` and ``cat`` use): ``binary_to_json_values(data,
count)`` writes each union's value under the branch the bytes hold, and
``json_value_to_binary(value)`` writes the branch the JSON names, so
``{"float": 1.5}`` stays a float and a record stays the record the bytes or
the JSON name, where the datum path chooses the branch again from the Python
value (the first record branch a dict fits, a float's first float-like
branch). A logical type's value is its underlying type's on this path, as
Java writes it; JSON read is checked as ``from_json_value`` checks it. With a
``reader_schema``, ``binary_to_json_values`` resolves the writer's bytes to
the reader's JSON values by ``roastedavro.avro.resolve``'s plan, a reader
union's value under the branch resolution chose, as Java's resolving reader
and JsonEncoder print it.

A value that cannot be written raises ``roastedavro.errors.DatumError``
naming its path, with AvroCodec's message for it. JSON that does not match
the schema raises ``JSONDecodeError`` (a ValueError) naming its path.

Reading is as Java's JsonDecoder (``from_json`` refuses the bare ``NaN``,
``Infinity`` and ``-Infinity`` Python's json module would take: they are not
JSON), with these differences: a record field the
JSON object lacks takes the field's default (Java 1.12's JsonDecoder refuses
it; fastavro's json_reader takes the default; ``defaults=False`` refuses it
as Java does); a union object with more than one key, a byte string with a
code point above U+00FF and a string that is not valid Unicode (a lone
surrogate) are refused (Java reads the first key, and "?" for such
characters). As Java: keys the record does not have are ignored, a field may
be given by one of its aliases, an int or long may be written as a number
with a zero fraction (``1.0``), a float or double as any number or one of the
three strings above (``from_json`` reads numbers as Decimals, so a float is
rounded once from the decimal text, as Java rounds it). Values read are
AvroCodec's: a float rounded to 32 bits, a timestamp as an aware UTC datetime
(naive for local timestamps), and so on; a value outside what AvroCodec reads
(a date outside the years 1-9999, a time of day past midnight, a decimal with
more digits than its precision) is an error, as AvroCodec's DecodeError is.

Nesting is bounded by Python's recursion limit (a few hundred levels of
records), where AvroCodec's is ``CompileFlags.max_depth``: past it writing
raises DatumError and reading JSONDecodeError.
"""

from __future__ import annotations

import decimal
import json
from typing import Any, Callable

from roastedavro._datum import datum_error
from roastedavro.avro.resolve import resolve as _resolve
from roastedavro.avro.parse import parse_schema
from roastedavro.avro.types import Schema
from roastedavro.errors import DatumError, DecodeError, DumpError

from roastedavro.avrojson._common import JSONDecodeError, _Mismatch
from roastedavro.avrojson._writing import _Writers
from roastedavro.avrojson._reading import _Readers
from roastedavro.avrojson._binary import (
    _BadBinary,
    _BinaryToJSON,
    _JSONToBinary,
    _ResolvedBinaryToJSON,
)

__all__ = ["AvroJSON", "JSONDecodeError", "to_json", "from_json"]


def _parsed(schema: Any) -> Schema:
    return schema if isinstance(schema, Schema) else parse_schema(schema)


class AvroJSON:
    """Avro's JSON encoding of one schema's datums.

    ``schema`` is a parsed ``roastedavro.avro.Schema``, or a dict, list
    or JSON text for ``roastedavro.avro.parse_schema``. With a
    ``reader_schema``, JSON written with ``schema`` is read as the reader's
    datum (schema resolution, through AvroCodec: the JSON is read as
    ``schema``'s datum, written as binary and read back with the reader's
    schema; both codecs are compiled on first use). ``to_json_value`` always
    writes ``schema``'s datums. ``defaults=False`` refuses a record field
    missing from the JSON even where it has a default, as Java's JsonDecoder.
    ``narrow_floats=False`` reads a ``float`` as the double its JSON number
    gives, as fastavro does, rather than rounded to 32 bits as Java does.
    ``bare_constants=True`` writes NaN and the infinities as floats, which
    ``json.dumps`` writes as the tokens ``NaN``, ``Infinity`` and
    ``-Infinity`` (fastavro's output; not JSON, and Java refuses it), rather
    than as the strings Java writes, and ``from_json`` reads them (both
    forms are read then).
    """

    def __init__(
        self,
        schema: Any,
        *,
        reader_schema: Any = None,
        defaults: bool = True,
        narrow_floats: bool = True,
        bare_constants: bool = False,
    ):
        self.schema: Schema = _parsed(schema)
        self.reader_schema: Schema | None = _parsed(reader_schema) if reader_schema is not None else None
        self.defaults = defaults
        self.narrow_floats = narrow_floats
        self.bare_constants = bare_constants
        # each built on first use: the binary-JSON paths need neither (nor the
        # defaults, which a container file's schema does not check)
        self._write: Callable | None = None
        self._write_bare: Callable | None = None  # union_type=False
        self._read: Callable | None = None
        self._codecs: tuple | None = None
        self._from_binary: Callable | None = None  # built on first use
        self._resolved_from_binary: Callable | None = None
        self._budget = [0]  # items the binary readers may still read, shared by them
        #: what was left of the item budget after the last binary_to_json_values call
        self.items_left: int | None = None
        self._to_binary: Callable | None = None

    # -- writing -----------------------------------------------------------------

    def to_json_value(self, datum: Any, *, union_type: bool = True) -> Any:
        """``datum`` as JSON values in Avro's JSON encoding (``json.dumps`` writes
        them). ``union_type=False`` writes a union's value without the
        ``{"<branch>": ...}`` object around it (as fastavro's
        ``write_union_type=False``; such JSON cannot be read back in general).

        Raises ``roastedavro.errors.DatumError`` naming the path of a
        value that cannot be written."""
        if union_type:
            write = self._write
            if write is None:
                write = self._write = _Writers(self.schema, True, self.bare_constants).of(self.schema.root)
        else:
            write = self._write_bare
            if write is None:
                write = self._write_bare = _Writers(self.schema, False, self.bare_constants).of(
                    self.schema.root
                )
        try:
            return write(datum)
        except DumpError as error:
            raise datum_error(error) from None
        except RecursionError:
            raise DatumError(
                f"the {type(datum).__name__} is nested too deeply for Python's "
                "recursion limit, or contains itself"
            ) from None

    def to_json(self, datum: Any, *, union_type: bool = True, **dumps_options: Any) -> str:
        """``datum`` as JSON text: compact, as Java writes it, unless
        ``dumps_options`` (for ``json.dumps``) say otherwise."""
        dumps_options.setdefault("separators", (",", ":"))
        dumps_options.setdefault("ensure_ascii", False)
        return json.dumps(self.to_json_value(datum, union_type=union_type), **dumps_options)

    # -- reading -----------------------------------------------------------------

    def from_json_value(self, value: Any) -> Any:
        """The datum of JSON values (``json.loads`` output) in Avro's JSON
        encoding; the reader schema's datum if the codec has one. Numbers
        may be Decimals (``json.loads(text, parse_float=Decimal)``, as
        ``from_json`` reads them): a float is then rounded once from the
        decimal, as Java does, where a Python float was rounded to a double
        first. Raises
        ``JSONDecodeError`` naming the path where the JSON does not match."""
        read = self._read
        if read is None:
            read = self._read = _Readers(self.schema, self.defaults, self.narrow_floats).of(self.schema.root)
        try:
            datum = read(value)
        except _Mismatch as error:
            raise JSONDecodeError(error.message, tuple(reversed(error.path))) from None
        except RecursionError:
            raise JSONDecodeError("the JSON is nested too deeply for Python's recursion limit") from None
        if self.reader_schema is None:
            return datum
        writer, reader = self._resolving_codecs()
        return reader.load(writer.dump(datum))

    def from_json(self, text: str | bytes) -> Any:
        """The datum of JSON text (one JSON value)."""
        try:
            # fastavro's bare NaN and infinities, where this codec writes them
            value = json.loads(
                text, parse_float=decimal.Decimal, parse_constant=None if self.bare_constants else _not_json
            )
        except RecursionError:
            raise JSONDecodeError("the JSON is nested too deeply for Python's recursion limit") from None
        except ValueError as error:  # json.JSONDecodeError, too many digits, bad UTF-8
            raise JSONDecodeError(f"not valid JSON: {error}") from None
        return self.from_json_value(value)

    # -- straight between binary and JSON ------------------------------------------

    def binary_to_json_values(
        self, data: bytes, count: int = 1, *, item_allowance: int | None = None
    ) -> list:
        """``count`` datums of ``schema``, one after another in Avro binary (a
        container block's data), as JSON values, without Python datums between:
        a union's value under the branch the bytes hold, a logical type's
        value as its underlying type's (as Java's JsonEncoder writes them).
        With a ``reader_schema``, the reader's values (schema resolution, as
        Java's resolving reader reads them: a reader union's value under the
        branch resolution chose). Raises
        ``roastedavro.errors.DecodeError`` with the byte offset (also
        for bytes left over after the last datum), and
        ``roastedavro.errors.SchemaResolutionError`` if the reader's
        schema cannot read the writer's.

        The datums and the items of their arrays and maps are paid for from
        a budget of ``len(data) + item_allowance`` (``CompileFlags``'
        ``item_allowance``, 1,000,000, by default), as the compiled codecs
        pay for them: a few bytes announcing billions of nulls or empty
        records are a DecodeError, not billions of values. ``items_left``
        is what was left of it after the call (a container file's next
        block gets it as its ``item_allowance``)."""
        return self._walk_binary(data, count, False, item_allowance)

    def binary_record_ends(self, data: bytes, count: int, *, item_allowance: int | None = None) -> list[int]:
        """Where each of ``count`` datums in ``data`` ends (as
        ``binary_to_json_values`` reads them, checking them the same way)."""
        return self._walk_binary(data, count, True, item_allowance)

    def _walk_binary(self, data: bytes, count: int, ends: bool, item_allowance: int | None) -> list:
        from roastedavro.flags import CompileFlags

        whole = item_allowance is None
        if whole:
            item_allowance = CompileFlags.item_allowance
        budget = self._budget
        budget[0] = len(data) + item_allowance - count  # type: ignore[operator]  # set above if None
        if budget[0] < 0:
            self.items_left = 0
            # a file's later blocks get what the earlier ones left: say both
            left = (
                "the item allowance"
                if whole
                else f"what is left of the item allowance of {CompileFlags.item_allowance} "
                f"(CompileFlags.item_allowance) after the earlier blocks"
            )
            raise DecodeError(
                f"item budget exceeded: {count} datums in {len(data)} bytes, "
                f"more than their length plus {left} ({item_allowance})",
                0,
            )
        if self.reader_schema is not None and not ends:
            read = self._resolved_from_binary
            if read is None:
                resolution = _resolve(self.schema, self.reader_schema)
                resolution.check()  # SchemaResolutionError, as AvroCodec's
                read = self._resolved_from_binary = _ResolvedBinaryToJSON(resolution, budget).of(
                    resolution.root
                )
        else:
            read = self._from_binary
            if read is None:
                read = self._from_binary = _BinaryToJSON(self.schema, budget).of(self.schema.root)
        out: list = []
        position = 0
        try:
            for _ in range(count):
                value, position = read(data, position)
                out.append(position if ends else value)
        except _BadBinary as error:
            self.items_left = max(0, budget[0])
            raise DecodeError(f"datum {len(out)}: {error.message}", error.position) from None
        except RecursionError:
            self.items_left = max(0, budget[0])
            raise DecodeError(
                f"datum {len(out)}: nested too deeply for Python's recursion limit", position
            ) from None
        self.items_left = budget[0]
        if position != len(data):
            raise DecodeError(f"{len(data) - position} bytes left over after {count} datums", position)
        return out

    def json_value_to_binary(self, value: Any) -> bytes:
        """JSON values (``json.loads`` output) in Avro's JSON encoding as the
        Avro binary of ``schema``'s datum, without a Python datum between: a
        union's value in the branch the JSON names (``{"float": 1.5}`` is a
        float, never a double). Raises ``JSONDecodeError`` naming the
        path where the JSON does not match."""
        write = self._to_binary
        if write is None:
            write = self._to_binary = _JSONToBinary(self.schema, self.defaults).of(self.schema.root)
        out = bytearray()
        try:
            write(value, out)
        except _Mismatch as error:
            raise JSONDecodeError(error.message, tuple(reversed(error.path))) from None
        except RecursionError:
            raise JSONDecodeError("the JSON is nested too deeply for Python's recursion limit") from None
        return bytes(out)

    def _resolving_codecs(self) -> tuple:
        if self._codecs is None:
            from roastedavro.codec import AvroCodec

            self._codecs = (AvroCodec(self.schema), AvroCodec(self.reader_schema, writer_schema=self.schema))
        return self._codecs

    def __repr__(self) -> str:
        if self.reader_schema is not None:
            return f"AvroJSON({self.schema!r}, reader_schema={self.reader_schema!r})"
        return f"AvroJSON({self.schema!r})"


def _not_json(name: str) -> Any:
    """``json.loads``' ``parse_constant``: NaN, Infinity and -Infinity are not JSON
    (Avro's JSON encoding writes them as the strings "NaN", "Infinity", "-Infinity")."""
    raise ValueError(f'{name} is not JSON (a float or double\'s {name} is the string "{name}")')


def to_json(schema: Any, datum: Any, **dumps_options: Any) -> str:
    """``datum`` of ``schema`` as Avro JSON text (``AvroJSON(schema).to_json``)."""
    return AvroJSON(schema).to_json(datum, **dumps_options)


def from_json(schema: Any, text: str | bytes, reader_schema: Any = None) -> Any:
    """The datum of Avro JSON text written with ``schema`` (``AvroJSON(schema,
    reader_schema=...).from_json``)."""
    return AvroJSON(schema, reader_schema=reader_schema).from_json(text)
