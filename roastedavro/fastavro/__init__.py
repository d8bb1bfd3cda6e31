"""fastavro's names and signatures over roastedavro's engine.

``import roastedavro.fastavro as fastavro`` in code written for fastavro:
``parse_schema``, ``schemaless_writer`` and ``schemaless_reader`` take the
same arguments and give the same bytes and values, through a codec per
schema (tier 0 at once, compiled when it pays, then a dictionary lookup per
call, in C: roastedavro._dropin), and reading with a reader schema through
a codec per pair of schemas. Schemas are taken as fastavro takes them
(``parse_schema`` is fastavro's parser, then roastedavro's model in its
``fastavro`` dialect) and errors are fastavro's types. fastavro's writer
options (``strict``, ``strict_allow_default``, ``disable_tuple_notation``,
``validator``) and reader options (the naming options,
``handle_unicode_errors``) run on roastedavro's engine: no data goes
through fastavro's own reader or writer.
"""

from __future__ import annotations

import io as _io
import threading
from typing import Any, BinaryIO

from roastedavro import _dropin, _fastavro_parts
from roastedavro._runtime import StreamWalker
from roastedavro.container import is_avro
from roastedavro.errors import DatumError, DecodeError
from roastedavro.errors import SchemaResolutionError as _SchemaResolutionError
from roastedavro.fastavro import _logical, _models, schema  # noqa: F401
from roastedavro.fastavro._codecs import _named_codec, codec_for, reading_codec
from roastedavro.fastavro._models import (
    BY_OBJECT,
    DatumResolutionError,
    SchemaResolutionError,
    generic_for,
)
from roastedavro.fastavro._writing import fastavro_error, strict_codec, without_tuples
from roastedavro.fastavro.schema import load_schema, parse_schema
from roastedavro.flags import CompileFlags

_DEFAULT_FLAGS = CompileFlags()

__all__ = [
    "parse_schema",
    "load_schema",
    "schemaless_writer",
    "schemaless_reader",
    "schema",
    "writer",
    "reader",
    "block_reader",
    "is_avro",
    "json_writer",
    "json_reader",
    "is_compiled",
    "SchemaResolutionError",
]


def _dump_with_options(
    schema: Any, record: Any, strict: bool, strict_allow_default: bool, disable_tuple_notation: bool
) -> bytes:
    if disable_tuple_notation:
        record = without_tuples(record)
    if strict or strict_allow_default:
        codec = strict_codec(schema, strict, strict_allow_default)
        plan = _logical.logical_plan(schema)
        if plan is not None:
            record = plan.prepare(record)
    else:
        codec = codec_for(schema)
    try:
        return codec.dump(record)
    except DatumError as error:
        raise fastavro_error(error) from None


#: streams whose buffered bytes can be looked at without consuming them
_BUFFERED = (_io.BufferedReader, _io.BufferedRandom)
#: what a seekable stream's first read takes; grown (x8) for a larger datum
_CHUNK = 8192
_CHUNK_LIMIT = 1 << 20


def _read_named(
    fo: BinaryIO,
    writer_schema: Any,
    reader_schema: Any,
    return_record_name: bool,
    return_record_name_override: bool,
    handle_unicode_errors: str,
    return_named_type: bool,
    return_named_type_override: bool,
) -> Any:
    # fastavro's naming options and handle_unicode_errors: tier 0's readers
    codec = _named_codec(
        writer_schema,
        reader_schema,
        (return_record_name, return_record_name_override, return_named_type, return_named_type_override),
        handle_unicode_errors,
    )
    plan = _logical.logical_plan(writer_schema, reader_schema)
    if plan is not None:
        return _read_datum(fo, codec, _logical.LogicalReader(codec, plan))
    return _read_datum(fo, codec, codec._reader)


def _pair_codec(writer_schema: Any, reader_schema: Any) -> Any:
    try:
        return reading_codec(writer_schema, reader_schema)
    except _SchemaResolutionError as error:
        raise SchemaResolutionError(error.reason, error.writer_path, error.reader_path) from None


def _read_datum(fo: BinaryIO, codec: Any, reader: Any) -> Any:
    """One datum read from ``fo`` by ``reader`` (``codec``'s): ``fo`` is left
    just after it."""
    kind = type(fo)
    if kind is _io.BytesIO:
        # one datum from the current position; the stream is left after it
        start = fo.tell()
        if start == 0:
            # read() of a whole BytesIO returns the bytes it was made from: no copy
            data = fo.read()
            if not data:
                return _at_end(reader)
            datum, end = reader.load_one(data, 0)
        else:
            # further into a stream: read in place rather than copy the rest
            # (getvalue() would share the BytesIO's bytes, so that each later
            # write to it copied them all)
            with fo.getbuffer() as view:  # type: ignore[attr-defined]  # a BytesIO here
                if start >= len(view):
                    return _at_end(reader)
                datum, end = reader.load_one(view, start)
        fo.seek(end)
        return datum
    peek = fo.peek if kind in _BUFFERED else getattr(fo, "peek", None)  # type: ignore[attr-defined]
    if peek is not None:
        # a file or pipe opened for reading (gzip, bz2, lzma and zip members
        # too): the datum is read from the bytes the stream holds already,
        # and exactly its bytes are consumed
        data = peek(1)
        if not data:
            return _at_end(reader)
        try:
            datum, end = reader.load_one(data, 0)
        except DecodeError:
            pass  # the datum runs past the buffered bytes, or is malformed
        else:
            fo.read(end)
            return datum
        if kind not in _BUFFERED:
            # seeking back in a decompressing stream starts it over: walk
            return _read_walked(fo, codec, reader)
    return _read_stream(fo, codec, reader)


def _at_end(reader: Any) -> Any:
    """No bytes left: the end of a stream of datums (EOFError, as fastavro
    says it), unless the schema's datums take no bytes (null, a record of
    no fields), which are read from nothing, as fastavro reads them."""
    try:
        return reader.load_one(b"", 0)[0]
    except EOFError:
        raise EOFError from None


def _read_stream(fo: BinaryIO, codec: Any, reader: Any) -> Any:
    """One datum from a stream other than a BytesIO."""
    # fastavro needs only read(): an object without seekable() is walked
    seekable = getattr(fo, "seekable", None)
    if seekable is not None and seekable():
        # a chunk, then back to the datum's end
        start = fo.tell()
        size = _CHUNK
        while True:
            data = fo.read(size)
            if not data:
                if data is None:
                    break  # a non-blocking stream with nothing ready: the walk says so
                return _at_end(reader)
            try:
                datum, end = reader.load_one(data, 0)
            except DecodeError:
                fo.seek(start)
                if len(data) < size or size >= _CHUNK_LIMIT:
                    break  # malformed, cut short or large: the walk decides
                size *= 8
                continue
            fo.seek(start + end)
            return datum
    return _read_walked(fo, codec, reader)


def _read_walked(fo: BinaryIO, codec: Any, reader: Any) -> Any:
    """The datum's bytes, read part by part as its schema says, then decoded
    (the compiled reader checks UTF-8 and decimals itself)."""
    entry = _WALKERS.get(id(reader))
    if entry is None or entry[0] is not reader:
        flags = codec.flags
        entry = _walker(reader, id(reader), codec.writer_schema, flags, False, False)
    return reader.load(entry[1].read(fo))


#: StreamWalkers by id() of the compiled reader, or of the writer's schema
#: object and the UTF-8 check: (the object, held so its id stays its own, walker)
_WALKERS: dict[Any, tuple[Any, StreamWalker]] = {}
_walkers_lock = threading.Lock()


def _walker(
    owner: Any, key: Any, writer_schema: Any, flags: CompileFlags, check_text: bool, check_decimals: bool
) -> tuple[Any, StreamWalker]:
    walker = StreamWalker(
        generic_for(writer_schema),
        flags.max_depth,
        flags.max_items,
        flags.item_allowance,
        check_text,
        check_decimals,
    )
    with _walkers_lock:
        entry = _WALKERS[key] = (owner, walker)
        if len(_WALKERS) > 1024:
            # the oldest goes (dicts keep insertion order)
            del _WALKERS[next(iter(_WALKERS))]
    return entry


# the per-call entry points, in C (roastedavro._dropin), over the paths above
_dropin.bind(
    BY_OBJECT,
    codec_for,
    _pair_codec,
    _dump_with_options,
    _read_named,
    _read_datum,
    fastavro_error,
    DatumResolutionError.of,
)


def _logical_changed() -> None:
    # keys were added to or removed from fastavro's LOGICAL_WRITERS or
    # LOGICAL_READERS: the codecs made before are made again, with or without
    # the custom logical types their schemas now use
    _logical.forget()
    _dropin.forget()
    with _models._lock:
        BY_OBJECT.clear()


def _watch_logical() -> None:
    # fastavro's registries exist once fastavro is imported: none can hold a
    # custom logical type before
    _logical.bind()
    _dropin.watch_logical(_logical.WRITERS, _logical.READERS, _logical_changed)
    _logical_changed()


_dropin.watch_logical(_logical.WRITERS, _logical.READERS, _logical_changed)
_fastavro_parts.when_imported(_watch_logical)
schemaless_writer = _dropin.schemaless_writer
schemaless_reader = _dropin.schemaless_reader

# container files: fastavro's bytes, attributes and errors (see _files)
from roastedavro.fastavro._files import (  # noqa: E402
    block_reader,
    reader,
    writer,
)
from roastedavro.fastavro._files import fastavro_form as _fastavro_form  # noqa: E402,F401


def is_compiled(schema: Any) -> bool:
    """Whether calls with this schema run its compiled codec now (rather than
    the interpreter, tier 0, which serves a schema until its compiled codec
    is ready: see roastedavro.tiers)."""
    return codec_for(schema).tier == "compiled"


#: fastavro's submodules the drop-in has its own of
_SUBMODULES = frozenset(
    {"read", "write", "json_read", "json_write", "schema", "validation", "utils", "types"}
)


def __getattr__(name: str) -> Any:
    if name in ("json_reader", "json_writer"):
        # Avro JSON (and fastavro's JSON encoder and decoder) on first use
        import importlib

        return getattr(importlib.import_module("roastedavro.fastavro.json"), name)
    if name.startswith("__"):
        # probes (__wrapped__, __path__ of a submodule, ...) import nothing
        raise AttributeError(f"module 'roastedavro.fastavro' has no attribute {name!r}")
    if name in _SUBMODULES:
        # `from roastedavro.fastavro import write` asks this before it
        # imports the submodule: the drop-in's, never fastavro's
        import importlib

        return importlib.import_module(f"roastedavro.fastavro.{name}")
    # the rest of fastavro's API (validate, the schema helpers we do not
    # compile, ...) is fastavro's own
    import fastavro

    try:
        return getattr(fastavro, name)
    except AttributeError:
        raise AttributeError(f"module 'roastedavro.fastavro' has no attribute {name!r}") from None
