"""The codec that serves a schema object of the drop-in: roastedavro's
AvroCodec of its model (or of a writer/reader pair), with fastavro's custom
logical types around it where the schema uses any; and tier 0's reader under
fastavro's naming options, or of a pair whose values by fastavro's rule are
not the resolution's."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from roastedavro.errors import SchemaResolutionError as _SchemaResolutionError
from roastedavro.fastavro._logical import LogicalCodec, logical_plan
from roastedavro.fastavro._models import (
    _OBJECTS_KEPT,
    BY_OBJECT,
    Schema,
    SchemaResolutionError,
    _lock,
    as_model,
    unchanged,
)
from roastedavro._runtime import schema_shape
from roastedavro.flags import CompileFlags

if TYPE_CHECKING:
    from roastedavro._tier0 import Interpreter, ResolvingInterpreter

_DEFAULT_FLAGS = CompileFlags()

# one codec per schema text (and reader text): equal schemas given as
# different objects share it
_BY_TEXT: dict[tuple, Any] = {}


def codec_for(schema: Any, reader: Any = None) -> Any:
    """The compiled AvroCodec for a schema (reading with ``reader``'s schema,
    if given), or its LogicalCodec: a lookup after the first call."""
    key = id(schema) if reader is None else (id(schema), id(reader))
    entry = BY_OBJECT.get(key)
    if (
        entry is not None
        and entry[0] is schema
        and entry[1] is reader
        and unchanged(entry[3], schema)
        and unchanged(entry[4], reader)
    ):
        return entry[2]
    from roastedavro.codec import AvroCodec  # with tier 0: at the first call, not the import

    # taken first: what the codec is made from
    shapes = (schema_shape(schema), schema_shape(reader))

    model = as_model(schema)
    reader_model = as_model(reader) if reader is not None else None
    # the dialects too: a model of the specification's (passed in as a
    # Schema) keeps logical types the fastavro dialect's drops
    text = (
        model.to_json(),
        model.dialect,
        (reader_model.to_json(), reader_model.dialect) if reader_model is not None else None,
    )
    # fastavro's custom logical types the schema uses, if any: around the codec
    plan = logical_plan(schema, reader)
    with _lock:
        codec = _BY_TEXT.get(text)
        if codec is None:
            if reader_model is None:
                codec = AvroCodec(model)
            else:
                codec = AvroCodec(reader_model, writer_schema=model)
            _BY_TEXT[text] = codec
        if plan is not None:
            codec = LogicalCodec(codec, plan)
        if not isinstance(schema, (str, Schema)) or not isinstance(reader, (str, Schema, type(None))):
            # dicts are not hashable: remember the objects themselves, LRU-bounded
            BY_OBJECT[key] = (schema, reader, codec, *shapes)
            if len(BY_OBJECT) > _OBJECTS_KEPT:
                # the oldest entry goes (dicts keep insertion order)
                del BY_OBJECT[next(iter(BY_OBJECT))]
    return codec


class _NamedCodec:
    """Tier 0's reader of a schema (or pair) under fastavro's naming options,
    where the stream reading wants a codec: ``_reader``, ``flags`` and
    ``writer_schema`` (the model the bytes are walked over)."""

    __slots__ = ("_reader", "flags", "writer_schema")

    def __init__(
        self, reader: Interpreter | ResolvingInterpreter, flags: CompileFlags, writer_schema: Schema
    ) -> None:
        self._reader = reader
        self.flags = flags
        self.writer_schema = writer_schema


#: _NamedCodecs by id() of the writer's and reader's schema objects and the
#: options: (writer, reader, codec); the objects are held so their ids stay theirs
_NAMED: dict[Any, tuple[Any, Any, _NamedCodec, Any, Any]] = {}
#: _NamedCodecs by the schemas' JSON texts and the options
_NAMED_BY_TEXT: dict[Any, _NamedCodec] = {}
_NAMED_KEPT = 1024
_named_lock = threading.Lock()


def _named_codec(
    writer_schema: Any, reader_schema: Any, naming: tuple, unicode_errors: str = "strict"
) -> _NamedCodec:
    """Tier 0's reader of ``writer_schema``'s data (as ``reader_schema``'s
    values, if given) returning fastavro's names for ``naming``, fastavro's
    four naming options, and decoding text with ``unicode_errors`` (its
    handle_unicode_errors): one per (schema, reader schema, options), a
    lookup after the first call."""
    naming = tuple(bool(option) for option in naming)
    key = (id(writer_schema), id(reader_schema), naming, unicode_errors)
    entry = _NAMED.get(key)
    if (
        entry is not None
        and entry[0] is writer_schema
        and entry[1] is reader_schema
        and unchanged(entry[3], writer_schema)
        and unchanged(entry[4], reader_schema)
    ):
        return entry[2]
    shapes = (schema_shape(writer_schema), schema_shape(reader_schema))
    from roastedavro._tier0 import Interpreter, ResolvingInterpreter

    model = as_model(writer_schema)
    reader_model = None
    if reader_schema is not None and reader_schema is not writer_schema:
        reader_model = as_model(reader_schema)
        if reader_model.to_json() == model.to_json():
            reader_model = None  # as fastavro, which reads with the writer's alone
    text = (
        model.to_json(),
        model.dialect,
        (reader_model.to_json(), reader_model.dialect) if reader_model is not None else None,
        naming,
        unicode_errors,
    )
    with _named_lock:
        codec = _NAMED_BY_TEXT.get(text)
    if codec is None:
        if reader_model is None:
            reader: Interpreter | ResolvingInterpreter = Interpreter(
                model, _DEFAULT_FLAGS, naming, unicode_errors
            )
        else:
            try:
                reader = ResolvingInterpreter(
                    model, reader_model, _DEFAULT_FLAGS, naming, unicode_errors, fastavro_values=True
                )
            except _SchemaResolutionError as error:
                raise SchemaResolutionError(error.reason, error.writer_path, error.reader_path) from None
        codec = _NamedCodec(reader, _DEFAULT_FLAGS, model)
    with _named_lock:
        codec = _NAMED_BY_TEXT.setdefault(text, codec)
        _NAMED[key] = (writer_schema, reader_schema, codec, *shapes)
        for cache in (_NAMED, _NAMED_BY_TEXT):
            if len(cache) > _NAMED_KEPT:
                # the oldest goes (dicts keep insertion order)
                del cache[next(iter(cache))]
    return codec


_NO_NAMING = (False, False, False, False)


def reading_codec(writer_schema: Any, reader_schema: Any) -> Any:
    """The codec that reads ``writer_schema``'s data as ``reader_schema``'s
    values, as fastavro reads them. fastavro converts by the writer's
    logical types only (a long read as a timestamp-millis stays an int, a
    date read as an int stays a date) and promotes an int to a float
    without rounding it to 32 bits; the compiled pair codec reads as Java
    does. Where the two differ for the pair, tier 0 reads by fastavro's
    rule; elsewhere the compiled pair codec serves."""
    named = fastavro_pair(writer_schema, reader_schema)
    if named is None:
        return codec_for(writer_schema, reader_schema)
    plan = logical_plan(writer_schema, reader_schema)
    return named if plan is None else LogicalCodec(named, plan)


def fastavro_pair(writer_schema: Any, reader_schema: Any) -> _NamedCodec | None:
    """Tier 0's reader of the pair by fastavro's rule, if its values differ
    from the resolution's for some datum; else None."""
    named = _named_codec(writer_schema, reader_schema, _NO_NAMING)
    return named if getattr(named._reader, "fastavro_differs", False) else None
