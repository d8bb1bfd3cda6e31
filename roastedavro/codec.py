"""AvroCodec: a compiled codec for an Avro schema, with fastavro's datum conventions.

``AvroCodec(schema).dump(datum)`` writes what ``fastavro.schemaless_writer``
writes for the same schema and datum, and ``load`` returns what
``fastavro.schemaless_reader`` returns (see roastedavro._datum for the
conventions and the few values fastavro writes that are refused here).
Single-object encoding (the specification's "Single object encoding": the
marker C3 01, the schema's CRC-64-AVRO fingerprint as 8 little-endian
bytes, then the datum) is ``dump_single`` and ``load_single``; a
``SchemaStore`` reads messages of several schemas by their fingerprint.
"""

from __future__ import annotations

import functools
import weakref
from collections import OrderedDict
import threading
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from roastedavro import _tier0, buildenv, tiers
from roastedavro._datum import Duration  # the Python value of an Avro duration
from roastedavro.avro.parse import parse_schema
from roastedavro.avro.types import Schema
from roastedavro.errors import DecodeError, NotCompiledError
from roastedavro.flags import CompileFlags

if TYPE_CHECKING:
    from roastedavro._runtime import DatumCodec

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


def _key(schema: Schema, flags: CompileFlags, writer: Schema | None) -> tuple:
    # the reader's dialect decides how a pair is resolved (roastedavro.avro.resolve)
    # (the writer's too: a model of the fastavro dialect lacks the logical
    # types fastavro does not convert, with the same JSON)
    return (
        schema.to_json(),
        flags,
        (writer.to_json(), writer.dialect) if writer is not None else None,
        schema.dialect,
    )


def _compiled(schema: Schema, flags: CompileFlags, writer: Schema | None = None, build: str = "here") -> Any:
    """The codec object of a schema, or of a (writer, reader) pair.
    ``build="lookup"``: as "never", without generating the source (its key)
    where no codec can be stored for the schema (buildenv.may_be_stored)."""
    key = _key(schema, flags, writer)
    codec = _codecs.get(key)
    if codec is not None:
        return codec
    if build == "lookup":
        build = "never"
        if not buildenv.may_be_stored(f"{schema.fingerprint():016x}"):
            raise NotCompiledError("no precompiled or cached codec of this schema")
    with _locks_guard:
        lock = _locks.setdefault(key, threading.Lock())
    # "never" does not wait for a build under way in another thread
    if not lock.acquire(blocking=build != "never"):
        raise NotCompiledError("the codec is being built by another thread")
    try:
        codec = _codecs.get(key)
        if codec is None:
            from roastedavro import compiler  # a process that only serves never imports it

            generated = _generate(schema, writer)
            codec = compiler.load_codec(
                generated, flags, f"{schema.fingerprint():016x}", build=build, label=_label(schema, writer)
            )
            _codecs[key] = codec
    finally:
        lock.release()
    return codec


def _generate(schema: Schema, writer: Schema | None) -> Any:
    # the generators (jinja2, the marshmallow code generator) are imported
    # only by a process that generates code
    if writer is None:
        from roastedavro.avrogen import generate_avro_module

        return generate_avro_module(schema)
    from roastedavro.resolvegen import generate_resolving_module

    return generate_resolving_module(writer, schema)


def _label(schema: Schema, writer: Schema | None) -> str:
    """How errors name a codec's schema (or pair)."""

    def name(model: Schema) -> str:
        return (
            f"{getattr(model.root, 'name', None) or model.canonical_form()[:60]} "
            f"(fingerprint {model.fingerprint():016x})"
        )

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

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.reason, self.offset, self.fingerprint))


def _fingerprint_text(fingerprint: int) -> str:
    return f"0x{fingerprint:016x} (bytes {fingerprint.to_bytes(8, 'little').hex(' ')} after the marker)"


def read_header(data: Any) -> tuple[int, memoryview]:
    """The fingerprint of a single-object encoded message, and the message."""
    view = memoryview(data)
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    if len(view) < _HEADER_SIZE:
        raise SingleObjectError(
            f"not a single-object encoded message: {len(view)} bytes, shorter than its "
            f"{_HEADER_SIZE}-byte header",
            len(view),
        )
    if view[:2] != SINGLE_OBJECT_MARKER:
        raise SingleObjectError(
            f"not a single-object encoded message: it starts with {view[:2].hex(' ')}, not the marker c3 01",
            0,
        )
    return int.from_bytes(view[2:_HEADER_SIZE], "little"), view


class AvroCodec:
    """A codec for an Avro schema: tier 0 at once, compiled when it pays.

    ``schema`` is a dict, list or JSON text (parsed with
    ``roastedavro.avro.parse_schema``) or a parsed ``Schema``.

    ``dump(datum) -> bytes`` writes a datum as fastavro's ``schemaless_writer``
    does; a value that cannot be written raises ``DatumError`` naming its path
    (``lines[2].price: ...``). ``load(data)`` reads bytes, bytearray or a
    memoryview, all of it, as fastavro's ``schemaless_reader``; malformed or
    trailing bytes raise ``DecodeError`` with the offset.

    Calls are served by the interpreter (tier 0, roastedavro._tier0) until
    the compiled codec is ready, then by the compiled codec: same bytes,
    values, errors and bounds. ``compile`` is the policy that decides when it
    is built (see roastedavro.tiers): ``"eager"`` (now, before the
    constructor returns), ``"hot"`` (in a child process once the schema has
    done enough work; a cached or precompiled codec is used as soon as it is
    found) or ``"never"``; by default ``ROASTEDAVRO_COMPILE``'s, else
    ``"hot"``. ``stats`` shows which tier served how many calls.

    ``build`` says where an eager build runs: ``"here"`` (the default),
    ``"child"`` (in a child Python process, so a thread constructing the codec
    leaves the rest of the program running at full speed) or ``"never"``
    (raise ``roastedavro.errors.NotCompiledError`` at once when the
    codec is neither cached nor precompiled).
    """

    def __init__(
        self,
        schema: Any,
        flags: CompileFlags | None = None,
        *,
        writer_schema: Any = None,
        build: str = "here",
        compile: str | None = None,
    ):
        self.flags = flags if flags is not None else CompileFlags()
        self.schema: Schema = _parsed(schema)
        if build not in buildenv.BUILD_MODES:
            raise ValueError(f"build must be one of {', '.join(buildenv.BUILD_MODES)}, not {build!r}")
        #: the compile policy of this codec ("eager", "hot" or "never")
        self.policy: str = tiers.compile_policy(compile)
        self._build = build
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
        self._write_engine: tiers.Engine | None = None
        #: the codec that writes (a DatumCodec), once there is one
        self._codec: Any = None
        if self._resolving:
            # reading and writing need different codecs; writing (the
            # reader's schema) is made on its first use
            self._read_engine = _engine(self.schema, self.flags, self.writer_schema)
        else:
            self._read_engine = self._write_engine = _engine(self.schema, self.flags, None)
        self._read_engine.start(self.policy, build)
        self._read_engine.subscribe(self)
        self._rebind()

    @functools.cached_property
    def fingerprint(self) -> int:
        """CRC-64-AVRO of the schema's canonical form (an unsigned int)."""
        return self.schema.fingerprint()

    @functools.cached_property
    def _header(self) -> bytes:
        return SINGLE_OBJECT_MARKER + self.fingerprint.to_bytes(8, "little")

    def _rebind(self) -> None:
        """Serve from the engines' current codecs (called again when one is compiled)."""
        reader = self._reader = self._read_engine.current
        # the entry points themselves: no Python frame in between
        self.load = reader.load  # type: ignore[method-assign]  # the codec's own method replaces it
        if self._write_engine is not None and self._write_engine.current is not None:
            self._codec = self._write_engine.current
            self.dump = self._codec.dump  # type: ignore[method-assign]  # as load

    def _writer(self) -> Any:
        if self._codec is None:
            if self._write_engine is None:
                self._write_engine = _engine(self.schema, self.flags, None)
            self._write_engine.start(self.policy, self._build)
            self._write_engine.subscribe(self)
            self._rebind()
        return self._codec

    def dump(self, datum: Any) -> bytes:  # replaced by the codec's own method
        """The Avro binary of ``datum`` (in ``schema``, also where the codec
        reads another writer's data)."""
        return self._writer().dump(datum)

    def load(self, data: Any) -> Any:  # replaced by the codec's own method
        """The datum of Avro binary ``data`` (written with ``writer_schema``)."""
        return self._reader.load(data)

    def dump_single(self, datum: Any) -> bytes:
        """``datum`` single-object encoded: C3 01, the fingerprint (8 bytes,
        little-endian), then its Avro binary."""
        return self._writer().dump_prefixed(self._header, datum)

    def load_single(self, data: Any) -> Any:
        """The datum of a single-object encoded message of ``writer_schema``."""
        fingerprint, view = read_header(data)
        expected = self.writer_schema.fingerprint()
        if fingerprint != expected:
            raise SingleObjectError(
                f"the message's schema fingerprint is {_fingerprint_text(fingerprint)}, not "
                f"this codec's {_fingerprint_text(expected)}",
                2,
                fingerprint,
            )
        return self._reader.load_from(view, _HEADER_SIZE)

    # -- tiers ------------------------------------------------------------------

    @property
    def tier(self) -> str:
        """What serves ``load`` now: "compiled" or "interpreter" (tier 0)."""
        return self._read_engine.tier

    @property
    def stats(self) -> dict:
        """Calls served per tier (reading and writing together), the tier that
        serves ``load`` now, and the state of its compile ("interpreter",
        "looking" for a cached codec, "compiling", "compiled", "failed")."""
        report = self._read_engine.stats()
        report["policy"] = self.policy
        writer = self._write_engine
        if writer is not None and writer is not self._read_engine:
            written = writer.stats()
            for tier, calls in written["calls"].items():
                report["calls"][tier] += calls
        return report

    def compile(self, build: str = "here") -> AvroCodec:
        """Builds (or loads from the cache) the compiled codec now and serves
        from it. A ``CompileError`` where it cannot be built here (no C
        compiler; ``ROASTEDAVRO_COMPILE=never`` or ``build="never"`` with
        nothing cached or precompiled: ``NotCompiledError``)."""
        self._read_engine.compile(build)
        if self._write_engine is not None and self._write_engine is not self._read_engine:
            self._write_engine.compile(build)
        self._rebind()
        return self

    def wait_compiled(self, timeout: float | None = None) -> bool:
        """Waits for a background lookup or build under way; True when none is
        left (whether or not it produced a compiled codec: see ``stats``)."""
        return all(
            engine.wait(timeout) for engine in (self._read_engine, self._write_engine) if engine is not None
        )

    def compile_to_string(self) -> str:
        """The Cython source the codec is built from (the resolving reader's
        where the codec reads another writer's data)."""
        return _generate(self.schema, self.writer_schema if self._resolving else None).source

    def __repr__(self) -> str:
        if self.writer_schema is not self.schema:
            return f"AvroCodec({self.schema!r}, writer_schema={self.writer_schema!r})"
        return f"AvroCodec({self.schema!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # another process builds or loads the same module from its cache
        # a schema of another dialect than the specification's goes as itself
        schema = self.schema.to_json() if self.schema.dialect == "avro" else self.schema
        if self.writer_schema is not self.schema:
            return (_codec_with_writer, (schema, self.flags, self.writer_schema.to_json(), self.policy))
        return (_codec_with_writer, (schema, self.flags, None, self.policy))


def _codec_with_writer(
    schema: str, flags: CompileFlags, writer: str | None, policy: str | None = None
) -> AvroCodec:
    return AvroCodec(schema, flags, writer_schema=writer, compile=policy)


# one engine per schema (or pair) and flags in a process, like the compiled
# codecs: a second AvroCodec of an equal schema builds nothing. An engine lives
# while a codec uses it, and the ENGINES_KEPT last used are kept besides, so
# that AvroCodec(schema) made for every call still finds its engine; a process
# that meets endless new schemas (a registry's) does not keep them all.
ENGINES_KEPT = 256
_engines: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_recent_engines: OrderedDict = OrderedDict()


def _engine(schema: Schema, flags: CompileFlags, writer: Schema | None) -> tiers.Engine:
    key = _key(schema, flags, writer)
    with _locks_guard:
        engine = _engines.get(key)
        if engine is None:
            if writer is None:

                def interpret() -> DatumCodec:
                    return _tier0.Interpreter(schema, flags)
            else:

                def interpret() -> DatumCodec:
                    return _tier0.ResolvingInterpreter(writer, schema, flags)

            engine = _engines[key] = tiers.Engine(
                lambda: _label(schema, writer),
                interpret,
                lambda build: _compiled(schema, flags, writer, build),
            )
        _recent_engines[key] = engine
        _recent_engines.move_to_end(key)
        while len(_recent_engines) > ENGINES_KEPT:
            _recent_engines.popitem(last=False)
    return engine


def _parsed(schema: Any) -> Schema:
    return schema if isinstance(schema, Schema) else parse_schema(schema)


class SchemaStore:
    """Codecs by the CRC-64-AVRO fingerprint of their schemas, for reading
    single-object encoded messages whose schema the message names.

    With a ``reader_schema``, every message is read as that schema's datum
    whichever schema (added to the store) wrote it: the store holds one
    resolving codec per writer schema, as Java's BinaryMessageDecoder does.
    """

    def __init__(
        self, schemas: Iterable[Any] = (), flags: CompileFlags | None = None, *, reader_schema: Any = None
    ):
        self.flags = flags
        self.reader_schema: Schema | None = _parsed(reader_schema) if reader_schema is not None else None
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
                f"{_fingerprint_text(fingerprint)}: {known.writer_schema!r}"
            )
        self._codecs[fingerprint] = codec
        return codec

    def lookup(self, fingerprint: int | bytes) -> AvroCodec | None:
        """The codec of a fingerprint (an int, or its 8 little-endian bytes), or None."""
        if isinstance(fingerprint, (bytes, bytearray, memoryview)):
            fingerprint = int.from_bytes(fingerprint, "little")
        return self._codecs.get(fingerprint)

    def load_single(self, data: Any) -> Any:
        """The datum of a single-object encoded message, read with the codec
        of the schema its fingerprint names."""
        fingerprint, view = read_header(data)
        codec = self._codecs.get(fingerprint)
        if codec is None:
            raise SingleObjectError(
                f"no schema in the store has the message's fingerprint {_fingerprint_text(fingerprint)}",
                2,
                fingerprint,
            )
        return codec._reader.load_from(view, _HEADER_SIZE)

    def __contains__(self, fingerprint: int | bytes) -> bool:
        return self.lookup(fingerprint) is not None

    def __len__(self) -> int:
        return len(self._codecs)

    def __iter__(self) -> Iterator[AvroCodec]:
        return iter(list(self._codecs.values()))
