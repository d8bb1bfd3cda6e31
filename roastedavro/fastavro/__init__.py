"""fastavro's names and signatures over roastedavro's compiled codecs.

``import roastedavro.fastavro as fastavro`` in code written for fastavro:
``parse_schema``, ``schemaless_writer`` and ``schemaless_reader`` take the
same arguments and give the same bytes and values, through a compiled codec
per schema (compiled once, cached on disk, then a dictionary lookup per
call), and reading with a reader schema through a codec compiled per pair of
schemas. fastavro's writer options (``strict``, ``validator``) are passed
to fastavro itself, so code keeps working unchanged; its reader's naming
options are read by the interpreter (tier 0) with fastavro's rules, and
``handle_unicode_errors`` by fastavro, given only bytes that passed the same
bounded walk as the codecs' (depth, item budget, lengths).
"""

from __future__ import annotations

import io
import threading
from typing import Any, BinaryIO, Iterable

import fastavro as _fastavro

from fastavro.read import SchemaResolutionError as _FastavroResolutionError

from roastedavro._runtime import StreamWalker
from roastedavro.container import FileReader, is_avro, write_file
from roastedavro.errors import DecodeError
from roastedavro.errors import SchemaResolutionError as _SchemaResolutionError
from roastedavro.fastavro import schema  # noqa: F401
from roastedavro.fastavro._models import (
    BY_OBJECT, as_model, codec_for, generic_for)
from roastedavro.fastavro.json import json_reader, json_writer
from roastedavro.fastavro.schema import _fastavro_parse_schema, load_schema, parse_schema
from roastedavro.flags import CompileFlags

_DEFAULT_FLAGS = CompileFlags()

__all__ = ["parse_schema", "load_schema", "schemaless_writer", "schemaless_reader", "schema",
           "writer", "reader", "block_reader", "is_avro", "json_writer", "json_reader",
           "is_compiled", "SchemaResolutionError"]


class SchemaResolutionError(_SchemaResolutionError, _FastavroResolutionError):
    """A writer's and reader's schema whose data cannot be read across: both
    roastedavro's SchemaResolutionError and fastavro's, so code that catches
    fastavro's keeps working."""


def schemaless_writer(fo: BinaryIO, schema: Any, record: Any, *, strict: bool = False,
                      strict_allow_default: bool = False,
                      disable_tuple_notation: bool = False) -> None:
    """Write ``record`` to ``fo`` as Avro binary without a header (fastavro's)."""
    if strict or strict_allow_default or disable_tuple_notation:
        # fastavro's stricter checks are fastavro's own
        return _fastavro.schemaless_writer(
            fo, schema, record, strict=strict, strict_allow_default=strict_allow_default,
            disable_tuple_notation=disable_tuple_notation)
    # inline the cache lookup: this call is on the hot path
    entry = BY_OBJECT.get(id(schema))
    codec = entry[2] if entry is not None and entry[0] is schema else codec_for(schema)
    fo.write(codec.dump(record))


#: streams whose buffered bytes can be looked at without consuming them
_BUFFERED = (io.BufferedReader, io.BufferedRandom)
#: what a seekable stream's first read takes; grown (x8) for a larger datum
_CHUNK = 8192
_CHUNK_LIMIT = 1 << 20


def schemaless_reader(fo: BinaryIO, writer_schema: Any, reader_schema: Any = None,
                      return_record_name: bool = False,
                      return_record_name_override: bool = False,
                      handle_unicode_errors: str = "strict",
                      return_named_type: bool = False,
                      return_named_type_override: bool = False) -> Any:
    """Read one datum from ``fo`` (fastavro's).

    As fastavro, it reads one datum and leaves ``fo`` just after it, so a
    stream of datums is read by calling it again; ``EOFError`` at the end.
    Any stream is read, seekable or not (a pipe, a socket's file): only the
    datum's bytes are consumed, and nothing is read or allocated for a length
    or count its bytes do not back. With a ``reader_schema`` the datum is
    resolved by a codec compiled for the pair, as Java's reader resolves it
    (where fastavro differs, e.g. a reader union with both ``string`` and
    ``bytes``, Java's choice is taken); a pair that cannot be read raises
    :class:`SchemaResolutionError`. fastavro's naming options give its
    ``(name, value)`` tuples, read by tier 0 with fastavro's rules (values
    converted by the writer's logical types, as fastavro converts them);
    ``handle_unicode_errors`` decodes strings and map keys with that error
    handler, as fastavro does, also in tier 0.
    Malformed bytes raise ``DecodeError`` with the offset from the datum's
    start (from the stream's position for a BytesIO).
    """
    if return_record_name or return_record_name_override or return_named_type \
            or return_named_type_override or handle_unicode_errors != "strict":
        codec = _named_codec(writer_schema, reader_schema, (
            return_record_name, return_record_name_override, return_named_type,
            return_named_type_override), handle_unicode_errors)
        return _read_datum(fo, codec, codec._reader)
    if reader_schema is None or reader_schema is writer_schema:
        entry = BY_OBJECT.get(id(writer_schema))
        if entry is not None and entry[0] is writer_schema:
            codec = entry[2]
        else:
            codec = codec_for(writer_schema)
    else:
        entry = BY_OBJECT.get((id(writer_schema), id(reader_schema)))
        if entry is not None and entry[0] is writer_schema and entry[1] is reader_schema:
            codec = entry[2]
        else:
            try:
                codec = codec_for(writer_schema, reader_schema)
            except _SchemaResolutionError as error:
                raise SchemaResolutionError(error.reason, error.writer_path,
                                            error.reader_path) from None
    return _read_datum(fo, codec, codec._reader)


def _read_datum(fo: BinaryIO, codec, reader) -> Any:
    """One datum read from ``fo`` by ``reader`` (``codec``'s): ``fo`` is left
    just after it."""
    kind = type(fo)
    if kind is io.BytesIO:
        # one datum from the current position; the stream is left after it
        start = fo.tell()
        if start == 0:
            # read() of a whole BytesIO returns the bytes it was made from: no copy
            data = fo.read()
            if not data:
                raise EOFError  # the end of a stream of datums, as fastavro says it
            datum, end = reader.load_one(data, 0)
        else:
            # further into a stream: read in place rather than copy the rest
            # (getvalue() would share the BytesIO's bytes, so that each later
            # write to it copied them all)
            with fo.getbuffer() as view:
                if start >= len(view):
                    raise EOFError
                datum, end = reader.load_one(view, start)
        fo.seek(end)
        return datum
    peek = fo.peek if kind in _BUFFERED else getattr(fo, "peek", None)
    if peek is not None:
        # a file or pipe opened for reading (gzip, bz2, lzma and zip members
        # too): the datum is read from the bytes the stream holds already,
        # and exactly its bytes are consumed
        data = peek(1)
        if not data:
            raise EOFError
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


def _read_stream(fo: BinaryIO, codec, reader) -> Any:
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
                raise EOFError
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


def _read_walked(fo: BinaryIO, codec, reader) -> Any:
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


def _walker(owner: Any, key: Any, writer_schema: Any, flags: CompileFlags, check_text: bool,
            check_decimals: bool) -> tuple[Any, StreamWalker]:
    walker = StreamWalker(generic_for(writer_schema), flags.max_depth, flags.max_items,
                          flags.item_allowance, check_text, check_decimals)
    with _walkers_lock:
        entry = _WALKERS[key] = (owner, walker)
        if len(_WALKERS) > 1024:
            # the oldest goes (dicts keep insertion order)
            del _WALKERS[next(iter(_WALKERS))]
    return entry


class _NamedCodec:
    """Tier 0's reader of a schema (or pair) under fastavro's naming options,
    where the stream reading wants a codec: ``_reader``, ``flags`` and
    ``writer_schema`` (the model the bytes are walked over)."""

    __slots__ = ("_reader", "flags", "writer_schema")

    def __init__(self, reader, flags, writer_schema):
        self._reader = reader
        self.flags = flags
        self.writer_schema = writer_schema


#: _NamedCodecs by id() of the writer's and reader's schema objects and the
#: options: (writer, reader, codec); the objects are held so their ids stay theirs
_NAMED: dict[Any, tuple[Any, Any, _NamedCodec]] = {}
#: _NamedCodecs by the schemas' JSON texts and the options
_NAMED_BY_TEXT: dict[Any, _NamedCodec] = {}
_NAMED_KEPT = 1024
_named_lock = threading.Lock()


def _named_codec(writer_schema: Any, reader_schema: Any, naming: tuple,
                 unicode_errors: str = "strict") -> _NamedCodec:
    """Tier 0's reader of ``writer_schema``'s data (as ``reader_schema``'s
    values, if given) returning fastavro's names for ``naming``, fastavro's
    four naming options, and decoding text with ``unicode_errors`` (its
    handle_unicode_errors): one per (schema, reader schema, options), a
    lookup after the first call."""
    naming = tuple(bool(option) for option in naming)
    key = (id(writer_schema), id(reader_schema), naming, unicode_errors)
    entry = _NAMED.get(key)
    if entry is not None and entry[0] is writer_schema and entry[1] is reader_schema:
        return entry[2]
    from roastedavro._tier0 import Interpreter, ResolvingInterpreter

    model = as_model(writer_schema)
    reader_model = None
    if reader_schema is not None and reader_schema is not writer_schema:
        reader_model = as_model(reader_schema)
        if reader_model.to_json() == model.to_json():
            reader_model = None    # as fastavro, which reads with the writer's alone
    text = (model.to_json(), reader_model.to_json() if reader_model is not None else None, naming,
            unicode_errors)
    with _named_lock:
        codec = _NAMED_BY_TEXT.get(text)
    if codec is None:
        if reader_model is None:
            reader = Interpreter(model, _DEFAULT_FLAGS, naming, unicode_errors)
        else:
            try:
                reader = ResolvingInterpreter(model, reader_model, _DEFAULT_FLAGS, naming,
                                              unicode_errors)
            except _SchemaResolutionError as error:
                raise SchemaResolutionError(error.reason, error.writer_path,
                                            error.reader_path) from None
        codec = _NamedCodec(reader, _DEFAULT_FLAGS, model)
    with _named_lock:
        codec = _NAMED_BY_TEXT.setdefault(text, codec)
        _NAMED[key] = (writer_schema, reader_schema, codec)
        for cache in (_NAMED, _NAMED_BY_TEXT):
            if len(cache) > _NAMED_KEPT:
                # the oldest goes (dicts keep insertion order)
                del cache[next(iter(cache))]
    return codec


def writer(fo: BinaryIO, schema: Any, records: Iterable[Any], codec: str = "null",
           sync_interval: int = 16000, metadata: dict | None = None, validator: Any = None,
           sync_marker: bytes | None = None, codec_compression_level: int | None = None, *,
           strict: bool = False, strict_allow_default: bool = False,
           disable_tuple_notation: bool = False) -> None:
    """Write ``records`` as an Avro container file (fastavro's). A file that
    already holds one (opened ``"a+b"``) is appended to, with its schema,
    codec and sync marker. Each block is written by the compiled codec in one
    call; fastavro's validator and strict options are fastavro's own."""
    if validator or strict or strict_allow_default or disable_tuple_notation:
        return _fastavro.writer(
            fo, schema, records, codec, sync_interval, metadata, validator, sync_marker,
            codec_compression_level, strict=strict, strict_allow_default=strict_allow_default,
            disable_tuple_notation=disable_tuple_notation)
    model = as_model(schema) if schema is not None else None
    write_file(fo, model, records, codec, sync_interval=sync_interval, metadata=metadata,
               sync_marker=sync_marker, codec_compression_level=codec_compression_level)


class reader(FileReader):
    """The records of an Avro container file (fastavro's ``reader``): iterate
    it. ``writer_schema`` and ``reader_schema`` are schema dicts, ``metadata``
    has str values, ``codec`` is the codec's name, as in fastavro. fastavro's
    naming options and ``handle_unicode_errors`` are read by tier 0, as in
    :func:`schemaless_reader`."""

    def __init__(self, fo: BinaryIO, reader_schema: Any = None, return_record_name: bool = False,
                 return_record_name_override: bool = False, handle_unicode_errors: str = "strict",
                 return_named_type: bool = False, return_named_type_override: bool = False,
                 **options: Any):
        reader_model = as_model(reader_schema) if reader_schema is not None else None
        super().__init__(fo, reader_model, **options)
        naming = (return_record_name, return_record_name_override, return_named_type,
                  return_named_type_override)
        if any(naming) or handle_unicode_errors != "strict":
            # the blocks are read by tier 0 with the options (decode_records
            # takes the codec's _reader and flags)
            self._avro_codec = _named_codec(self.header.schema, reader_model, naming,
                                            handle_unicode_errors)
        self.metadata = {key: value.decode("utf-8", "replace")
                         for key, value in self.header.metadata.items()}
        # schemas in fastavro's parsed form, as fastavro's reader has them
        self.writer_schema = _fastavro_form(self.header.schema)
        self.reader_schema = (self.writer_schema if reader_schema is None
                              else _fastavro_form(reader_model))


def _fastavro_form(schema) -> Any:
    """fastavro's parsed form of a schema; a file's schema whose names fastavro
    refuses too (Java's reflect names with $) stays a plain dict."""
    try:
        return _fastavro_parse_schema(schema.to_dict())
    except Exception:  # fastavro's errors are of several kinds
        return schema.to_dict()


def block_reader(fo: BinaryIO, reader_schema: Any = None, **options: Any):
    """The blocks of a container file (fastavro's ``block_reader``): each has
    ``num_records``, ``offset``, ``size`` and ``bytes_``, and iterating it gives
    its records."""
    return reader(fo, reader_schema, **options).blocks()


def is_compiled(schema: Any) -> bool:
    """Whether calls with this schema run its compiled codec now (rather than
    the interpreter, tier 0, which serves a schema until its compiled codec
    is ready: see roastedavro.tiers)."""
    return codec_for(schema).tier == "compiled"


def __getattr__(name: str) -> Any:
    # the rest of fastavro's API (validate, the schema helpers we do not
    # compile, ...) is fastavro's own
    try:
        return getattr(_fastavro, name)
    except AttributeError:
        raise AttributeError(f"module 'roastedavro.fastavro' has no attribute {name!r}") from None
