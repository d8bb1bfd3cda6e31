"""AvroCodec: a compiled codec for an Avro schema, with fastavro's datum conventions.

``AvroCodec(schema).dump(datum)`` writes what ``fastavro.schemaless_writer``
writes for the same schema and datum, and ``load`` returns what
``fastavro.schemaless_reader`` returns (see roastedavro._datum for the
conventions and the few values fastavro writes that are refused here).
Single-object encoding (the specification's "Single object encoding": the
marker C3 01, the schema's CRC-64-AVRO fingerprint as 8 little-endian
bytes, then the datum) is ``dump_single`` and ``load_single``; a
:class:`SchemaStore` reads messages of several schemas by their fingerprint.
"""

from __future__ import annotations

import threading
from typing import Any, Iterable, Iterator

from roastedavro import compiler
from roastedavro._datum import Duration  # the Python value of an Avro duration
from roastedavro.avro.parse import parse_schema
from roastedavro.avro.types import Schema
from roastedavro.avrogen import generate_avro_module
from roastedavro.resolvegen import generate_resolving_module
from roastedavro.errors import DecodeError, NotCompiledError
from roastedavro.flags import CompileFlags

__all__ = ["AvroCodec", "Duration", "SchemaStore", "SingleObjectError", "SINGLE_OBJECT_MARKER"]

#: the two bytes every single-object encoded message starts with
SINGLE_OBJECT_MARKER = b"\xc3\x01"
_HEADER_SIZE = 10

# one codec object per schema (its full JSON: defaults and logical types
# matter) and flags in a process: a second AvroCodec of an equal schema
# builds nothing and loads nothing
_codecs: dict[tuple[str, CompileFlags], Any] = {}
_locks: dict[tuple[str, CompileFlags], threading.Lock] = {}
_locks_guard = threading.Lock()


def _compiled(schema: Schema, flags: CompileFlags, writer: Schema | None = None,
              build: str = "here"):
    """The codec object of a schema, or of a (writer, reader) pair."""
    key = (schema.to_json(), flags, writer.to_json() if writer is not None else None)
    codec = _codecs.get(key)
    if codec is not None:
        return codec
    with _locks_guard:
        lock = _locks.setdefault(key, threading.Lock())
    # "never" does not wait for a build under way in another thread
    if not lock.acquire(blocking=build != "never"):
        raise NotCompiledError("the codec is being built by another thread")
    try:
        codec = _codecs.get(key)
        if codec is None:
            if writer is None:
                generated = generate_avro_module(schema)
            else:
                generated = generate_resolving_module(writer, schema)
            module = compiler.load(generated.source, flags, verify=generated.verify,
                                   fingerprint=f"{schema.fingerprint():016x}", build=build,
                                   label=_label(schema, writer))
            codec = module.Codec(generated.bindings, flags.max_depth, flags.max_items,
                                 flags.item_allowance)
            _codecs[key] = codec
    finally:
        lock.release()
    return codec


def _label(schema: Schema, writer: Schema | None) -> str:
    """How errors name a codec's schema (or pair)."""
    def name(model: Schema) -> str:
        return f"{getattr(model.root, 'name', None) or model.canonical_form()[:60]} " \
               f"(fingerprint {model.fingerprint():016x})"

    if writer is None:
        return f"the AvroCodec of {name(schema)}"
    return f"the AvroCodec reading {name(writer)} as {name(schema)}"


class SingleObjectError(DecodeError):
    """Bytes that are not a single-object encoded message of a known schema:
    too short, without the C3 01 marker, or with a fingerprint no codec has.
    ``fingerprint`` is the message's (an int, None when it has none)."""

    def __init__(self, message: str, offset: int, fingerprint: int | None = None):
        super().__init__(message, offset)
        self.fingerprint = fingerprint

    def __reduce__(self):
        return (type(self), (self.reason, self.offset, self.fingerprint))


def _fingerprint_text(fingerprint: int) -> str:
    return (f"0x{fingerprint:016x} (bytes {fingerprint.to_bytes(8, 'little').hex(' ')} "
            "after the marker)")


def read_header(data) -> tuple[int, memoryview]:
    """The fingerprint of a single-object encoded message, and the message."""
    view = memoryview(data)
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    if len(view) < _HEADER_SIZE:
        raise SingleObjectError(
            f"not a single-object encoded message: {len(view)} bytes, shorter than its "
            f"{_HEADER_SIZE}-byte header", len(view))
    if view[:2] != SINGLE_OBJECT_MARKER:
        raise SingleObjectError(
            f"not a single-object encoded message: it starts with {view[:2].hex(' ')}, "
            f"not the marker c3 01", 0)
    return int.from_bytes(view[2:_HEADER_SIZE], "little"), view


class AvroCodec:
    """A compiled codec for an Avro schema.

    ``schema`` is a dict, list or JSON text (parsed with
    ``roastedavro.avro.parse_schema``) or a parsed ``Schema``. The codec is
    built (or loaded from the compile cache) on construction.

    ``dump(datum) -> bytes`` writes a datum as fastavro's ``schemaless_writer``
    does; a value that cannot be written raises ``DatumError`` naming its path
    (``lines[2].price: ...``). ``load(data)`` reads bytes, bytearray or a
    memoryview, all of it, as fastavro's ``schemaless_reader``; malformed or
    trailing bytes raise ``DecodeError`` with the offset.

    ``build`` says where a module missing from the compile cache is built:
    ``"here"`` (the default), ``"child"`` (in a child Python process, so a
    thread constructing the codec leaves the rest of the program running at
    full speed) or ``"never"`` (raise :class:`roastedavro.errors.NotCompiledError`
    at once).
    """

    def __init__(self, schema: Any, flags: CompileFlags | None = None, *,
                 writer_schema: Any = None, build: str = "here"):
        self.flags = flags if flags is not None else CompileFlags()
        self.schema: Schema = _parsed(schema)
        #: CRC-64-AVRO of the schema's canonical form (an unsigned int)
        self.fingerprint: int = self.schema.fingerprint()
        self._header = SINGLE_OBJECT_MARKER + self.fingerprint.to_bytes(8, "little")
        #: the schema the data load reads was written with (``schema`` itself
        #: unless another is given)
        self.writer_schema: Schema = self.schema
        self._resolving = False
        if writer_schema is not None:
            writer = _parsed(writer_schema)
            self.writer_schema = writer
            # the same canonical form: the same bytes, read by the reader's
            # own codec (its logical types and names decide the values)
            self._resolving = writer.canonical_form() != self.schema.canonical_form()
        self._writer_header = SINGLE_OBJECT_MARKER + self.writer_schema.fingerprint().to_bytes(
            8, "little")
        if self._resolving:
            # reading and writing need different modules; writing (the
            # reader's schema) is built on its first use
            self._reader = reader = _compiled(self.schema, self.flags, self.writer_schema, build)
            self._codec = None
            self.load = reader.load
        else:
            self._codec = codec = self._reader = _compiled(self.schema, self.flags, None, build)
            # the compiled entry points themselves: no Python frame in between
            self.dump = codec.dump
            self.load = codec.load

    def _writer(self):
        if self._codec is None:
            self._codec = _compiled(self.schema, self.flags)
            self.dump = self._codec.dump
        return self._codec

    def dump(self, datum: Any) -> bytes:  # replaced by the compiled method
        """The Avro binary of ``datum`` (in ``schema``, also where the codec
        reads another writer's data)."""
        return self._writer().dump(datum)

    def load(self, data) -> Any:  # replaced by the compiled method
        """The datum of Avro binary ``data`` (written with ``writer_schema``)."""
        return self._reader.load(data)

    def dump_single(self, datum: Any) -> bytes:
        """``datum`` single-object encoded: C3 01, the fingerprint (8 bytes,
        little-endian), then its Avro binary."""
        return self._writer().dump_prefixed(self._header, datum)

    def load_single(self, data) -> Any:
        """The datum of a single-object encoded message of ``writer_schema``."""
        fingerprint, view = read_header(data)
        expected = self.writer_schema.fingerprint()
        if fingerprint != expected:
            raise SingleObjectError(
                f"the message's schema fingerprint is {_fingerprint_text(fingerprint)}, not "
                f"this codec's {_fingerprint_text(expected)}", 2, fingerprint)
        return self._reader.load_from(view, _HEADER_SIZE)

    def compile_to_string(self) -> str:
        """The Cython source the codec is built from (the resolving reader's
        where the codec reads another writer's data)."""
        if self._resolving:
            return generate_resolving_module(self.writer_schema, self.schema).source
        return generate_avro_module(self.schema).source

    def __repr__(self) -> str:
        if self.writer_schema is not self.schema:
            return f"AvroCodec({self.schema!r}, writer_schema={self.writer_schema!r})"
        return f"AvroCodec({self.schema!r})"

    def __reduce__(self):
        # another process builds or loads the same module from its cache
        if self.writer_schema is not self.schema:
            return (_codec_with_writer, (self.schema.to_json(), self.flags,
                                         self.writer_schema.to_json()))
        return (AvroCodec, (self.schema.to_json(), self.flags))


def _codec_with_writer(schema: str, flags: CompileFlags, writer: str) -> AvroCodec:
    return AvroCodec(schema, flags, writer_schema=writer)


def _parsed(schema: Any) -> Schema:
    return schema if isinstance(schema, Schema) else parse_schema(schema)


class SchemaStore:
    """Codecs by the CRC-64-AVRO fingerprint of their schemas, for reading
    single-object encoded messages whose schema the message names.

    With a ``reader_schema``, every message is read as that schema's datum
    whichever schema (added to the store) wrote it: the store holds one
    resolving codec per writer schema, as Java's BinaryMessageDecoder does.
    """

    def __init__(self, schemas: Iterable[Any] = (), flags: CompileFlags | None = None, *,
                 reader_schema: Any = None):
        self.flags = flags
        self.reader_schema: Schema | None = (_parsed(reader_schema) if reader_schema is not None
                                             else None)
        self._codecs: dict[int, AvroCodec] = {}
        for schema in schemas:
            self.add(schema)

    def add(self, schema: Any) -> AvroCodec:
        """Add a writer's schema (anything AvroCodec takes) or an AvroCodec;
        returns the codec that reads its messages.

        Two schemas with one fingerprint but different JSON (the canonical
        form leaves out defaults and logical types) cannot share a store:
        which one a message was written with would be a guess.
        """
        if isinstance(schema, AvroCodec):
            codec = schema
        elif self.reader_schema is not None:
            codec = AvroCodec(self.reader_schema, self.flags, writer_schema=schema)
        else:
            codec = AvroCodec(schema, self.flags)
        writer = codec.writer_schema
        fingerprint = writer.fingerprint()
        known = self._codecs.get(fingerprint)
        if known is not None:
            if known.writer_schema.to_json() == writer.to_json():
                return known
            raise ValueError(
                f"the store already has a different schema with fingerprint "
                f"{_fingerprint_text(fingerprint)}: {known.writer_schema!r}")
        self._codecs[fingerprint] = codec
        return codec

    def lookup(self, fingerprint: int | bytes) -> AvroCodec | None:
        """The codec of a fingerprint (an int, or its 8 little-endian bytes), or None."""
        if isinstance(fingerprint, (bytes, bytearray, memoryview)):
            fingerprint = int.from_bytes(fingerprint, "little")
        return self._codecs.get(fingerprint)

    def load_single(self, data) -> Any:
        """The datum of a single-object encoded message, read with the codec
        of the schema its fingerprint names."""
        fingerprint, view = read_header(data)
        codec = self._codecs.get(fingerprint)
        if codec is None:
            raise SingleObjectError(
                f"no schema in the store has the message's fingerprint "
                f"{_fingerprint_text(fingerprint)}", 2, fingerprint)
        return codec._reader.load_from(view, _HEADER_SIZE)

    def __contains__(self, fingerprint) -> bool:
        return self.lookup(fingerprint) is not None

    def __len__(self) -> int:
        return len(self._codecs)

    def __iter__(self) -> Iterator[AvroCodec]:
        return iter(list(self._codecs.values()))
