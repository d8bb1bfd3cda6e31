"""confluent-kafka's AvroDeserializer over roastedavro's codecs (see serde:
the wire format, the schemas, the swappable codec slot)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from typing import Any, Callable, Literal

from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import (
    Deserializer,
    SerializationContext,
    SerializationError,
)

from roastedavro._tier0 import Interpreter, ResolvingInterpreter
from roastedavro.avro.types import Schema as AvroModel
from roastedavro.background import BackgroundCompiler, default_compiler
from roastedavro.errors import SchemaError
from roastedavro.flags import CompileFlags
from roastedavro.kafka.serde import (
    _HEADER_SIZE,
    _MAGIC,
    PathCounts,
    RegistryFetchError,
    _bare_bytes,
    _Codec,
    _compiled_codec,
    _conf,
    _from_registry,
    _in_message,
    _marshmallow_schema,
    _named_reader,
    _names_records_in_unions,
    _no_rules,
    _read_bare,
    _record_name,
    _resolving_reader,
    _strategy,
    _user_schema,
    _wait,
    as_confluent,
    log,
    wire_header,
    wire_schema_id,
)
from roastedavro.schema import _Uncompiled


class AvroDeserializer(Deserializer):
    """Reads Confluent-framed Avro messages with the writer's schema from the
    registry, resolved to ``schema_str`` when one is given.

    The arguments are confluent-kafka 2.16's ``AvroDeserializer``'s,
    positionally or by keyword. ``schema_str`` is a ``CompiledSchema`` class
    or instance (values are what ``load_compiled`` returns) or an Avro schema
    (JSON text, dict, parsed schema or registry ``Schema``; values are what
    fastavro returns), or None to read each message as its writer wrote it.
    ``from_dict(value, ctx)`` converts each value. ``return_record_name``
    reads a union's record branch as ``(name, record)``, as fastavro does;
    compiled codecs cannot, so writers with a record in a union are then
    read on the bounded uncompiled path. ``rule_conf``/``rule_registry`` are
    accepted when they configure no data-contract rule. ``conf`` takes
    ``use.latest.version`` (read as the subject's latest version),
    ``subject.name.strategy`` and ``subject.name.strategy.type``.

    A writer schema met for the first time is read at once by the runtime's
    bounded generic decoder (the same limits as the compiled codecs, from
    ``flags``; fastavro reads only bytes that passed) while its codec
    compiles in the background (``compiler``; None starts no compile, though
    a codec already in the compile cache is used);
    ``stats`` counts messages per path, ``path(schema_id)`` tells a writer's
    current path, ``on_compiled(what, error)`` is called when a background
    compile ends. A registry that cannot be reached is retried by the client
    (its ``max.retries``); an id that could not be fetched fails fast for
    ``retry_after`` seconds before the registry is asked again.
    """

    _default_conf = {
        "use.latest.version": False,
        "subject.name.strategy": None,
        "subject.name.strategy.type": None,
    }

    def __init__(
        self,
        schema_registry_client: Any,
        schema_str: Any = None,
        from_dict: Callable[[Any, SerializationContext], Any] | None = None,
        return_record_name: bool = False,
        conf: dict | None = None,
        rule_conf: Any = None,
        rule_registry: Any = None,
        *,
        flags: CompileFlags | None = None,
        compiler: BackgroundCompiler | None | Literal["default"] = "default",
        on_compiled: Callable[[str, BaseException | None], None] | None = None,
        retry_after: float = 1.0,
    ) -> None:
        schema = schema_str
        settings = _conf(conf, self._default_conf)
        if from_dict is not None and not callable(from_dict):
            raise ValueError(
                "from_dict must be callable with the signature "
                "from_dict(dict, SerializationContext) -> object"
            )
        if not isinstance(return_record_name, bool):
            raise ValueError("return_record_name must be a boolean value")
        _no_rules(rule_conf, rule_registry)
        self._registry = schema_registry_client
        self._from_dict = from_dict
        self._return_record_name = return_record_name
        self._flags = flags or CompileFlags()
        self._compiler = default_compiler() if compiler == "default" else compiler
        self._on_compiled = on_compiled
        self._retry_after = retry_after
        self._use_latest = settings["use.latest.version"]
        self._subject_name = _strategy(settings)
        self._marshmallow = _marshmallow_schema(schema)
        if self._marshmallow is not None and return_record_name:
            raise ValueError(
                "return_record_name applies to Avro schemas' dicts; a CompiledSchema loads its own values"
            )
        if self._marshmallow is not None:
            self._reader: AvroModel | None = self._marshmallow.avro_model
        elif schema is not None:
            self._reader = _user_schema(schema_registry_client, schema)[0]
        else:
            self._reader = None
        self._lock = threading.Lock()
        # the writer id's 4 bytes (and the reader's id with use.latest.version) -> slot
        self._slots: dict[Any, _Codec] = {}
        self._failed: dict[int, tuple[float, SerializationError]] = {}
        #: messages read by each path (COMPILED, FALLBACK)
        self.stats = PathCounts()

    def __call__(self, data: Any, ctx: SerializationContext | None = None) -> Any:
        if data is None:
            return None
        if type(data) is not bytes:
            data = bytes(data)
        slot: _Codec | None
        if self._use_latest:
            slot = self._latest_slot(data, ctx)
        else:
            slot = self._slots.get(data[1:_HEADER_SIZE])
            if slot is None or data[0] != _MAGIC:
                slot = self._slot_for(data)
        path, load = slot.current
        value = load(data, _HEADER_SIZE)
        self.stats[path] += 1
        if self._from_dict is not None:
            if ctx is None:
                raise TypeError("SerializationContext cannot be None")
            return self._from_dict(value, ctx)
        return value

    def path(self, schema_id: int) -> str | None:
        """The path that reads the writer schema ``schema_id`` now (COMPILED
        or FALLBACK), or None before its first message."""
        slot = self._slots.get(schema_id.to_bytes(4, "big"))
        return slot.current[0] if slot is not None else None

    def prepare(self, schema_id: int) -> Future | None:
        """Fetches a writer schema and starts compiling its codec before any
        message needs it; the future of the compile, None if none was needed."""
        return self._slot_for(wire_header(schema_id)).future

    def wait_compiled(self, timeout: float | None = None) -> bool:
        """Waits for the background compiles this deserializer started; True
        when every one has finished (built or failed)."""
        return _wait(self._slots.values(), timeout)

    def _slot_for(self, data: bytes) -> _Codec:
        schema_id = wire_schema_id(data)
        key = bytes(data[1:_HEADER_SIZE])
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                writer = self._writer_schema(schema_id)
                slot = self._slots[key] = self._new_slot(writer, self._reader, schema_id)
        return slot

    def _latest_slot(self, data: bytes, ctx: SerializationContext | None) -> _Codec:
        writer_id = wire_schema_id(data)
        subject = self._subject_name(ctx, None)
        if subject is None:
            writer_name = _record_name(self._writer_schema(writer_id))
            subject = self._subject_name(ctx, writer_name)
        try:
            latest = self._registry.get_latest_version(subject)
        except Exception as error:
            raise SerializationError(
                f"subject {subject!r}: the latest version cannot be fetched: {error}"
            ) from error
        key = (writer_id, latest.schema_id)
        slot = self._slots.get(key)
        if slot is None:
            with self._lock:
                slot = self._slots.get(key)
                if slot is None:
                    writer = self._writer_schema(writer_id)
                    reader = _from_registry(self._registry, latest.schema, f"schema id {latest.schema_id}")
                    slot = self._slots[key] = self._new_slot(writer, reader, writer_id)
        return slot

    def _writer_schema(self, schema_id: int) -> AvroModel:
        failed = self._failed.get(schema_id)
        if failed is not None and time.monotonic() - failed[0] < self._retry_after:
            raise failed[1]
        try:
            registered = self._registry.get_schema(schema_id)
        except Exception as error:
            status = getattr(error, "http_status_code", None)
            if status == 404:
                message = f"schema id {schema_id} is not in the schema registry: {error}"
            else:
                message = (
                    f"schema id {schema_id} cannot be fetched from the schema registry "
                    f"(after the client's retries): {error}"
                )
            problem: SerializationError
            if isinstance(error, SchemaRegistryError):
                # confluent-kafka's deserializer lets the client's error through:
                # code that catches it keeps working
                problem = RegistryFetchError(message, error)
            else:
                problem = SerializationError(message)
            self._failed[schema_id] = (time.monotonic(), problem)
            raise problem from error
        self._failed.pop(schema_id, None)
        return _from_registry(self._registry, registered, f"schema id {schema_id}")

    def _new_slot(self, writer: AvroModel, reader: AvroModel | None, schema_id: int) -> _Codec:
        flags = self._flags
        marshmallow = self._marshmallow
        # without marshmallow, read as confluent-kafka reads (fastavro's rules)
        resolving = reader
        if marshmallow is None:
            writer = as_confluent(writer)
            if reader is not None:
                resolving = as_confluent(reader)
        if reader is not None:
            # an impossible pair fails now, not on some later message
            from roastedavro.avro.resolve import resolve

            try:
                resolve(writer, resolving).check()  # type: ignore[arg-type]  # a reader: resolving too
            except SchemaError as error:
                raise SerializationError(
                    f"schema id {schema_id} cannot be read as the reader schema: {error}"
                ) from None
        if _bare_bytes(writer) and marshmallow is None:
            # as confluent-kafka reads it, whatever the reader schema
            return _Codec(f"schema id {schema_id}", _read_bare, None, None, None, None)
        same = reader is None or writer.canonical_form() == reader.canonical_form()
        target = reader if reader is not None else writer
        fallback: Callable[[Any, int], Any]
        make: Callable[[str], Callable[[Any, int], Any]] | None
        if marshmallow is not None:
            # what load_compiled returns where the schema is not compiled:
            # tier 0 checks and reads the bytes (logical types, precision),
            # marshmallow's load makes the values
            uncompiled = _Uncompiled(marshmallow, flags)
            other_writer = None if same else writer

            def fallback(data: Any, start: int) -> Any:
                return _in_message(uncompiled.load, memoryview(data)[start:], start, other_writer)

            def make(build: str) -> Callable[[Any, int], Any]:
                if marshmallow._roasted_codec is None:
                    marshmallow.compile(flags, build=build)
                load = marshmallow.load_compiled
                if same:
                    return lambda data, start: _in_message(load, memoryview(data)[start:], start)
                pair = _compiled_codec(target, flags, writer, build)
                own = _compiled_codec(target, flags, None, build)
                read, write = pair._reader.load_from, own.dump
                return lambda data, start: load(write(read(data, start)))
        else:
            # confluent-kafka's values: fastavro's view of the schema read
            target = resolving if resolving is not None else writer  # (None where reader is)
            # where the pair's values by fastavro's rule are not the
            # resolution's (Java's), tier 0 reads them by fastavro's rule for good
            # (canonical forms leave logical types out: a pair "the same" by
            # them may still differ in how values convert)
            by_fastavro = None
            if reader is not None and writer.to_json() != reader.to_json():
                by_fastavro = ResolvingInterpreter(writer, target, flags, fastavro_values=True)
                if not by_fastavro.fastavro_differs:
                    by_fastavro = None
            if self._return_record_name and _names_records_in_unions(writer):
                fallback = _named_reader(writer, target, flags, same)
            elif by_fastavro is not None:
                fallback = by_fastavro.load_from
            elif same:
                # tier 0 until the compiled codec is ready: the same values and errors
                fallback = Interpreter(target, flags).load_from
            else:
                fallback = _resolving_reader(writer, target, flags)

            def make(build: str) -> Callable[[Any, int], Any]:
                if same:
                    return _compiled_codec(target, flags, None, build)._reader.load_from
                return _compiled_codec(target, flags, writer, build)._reader.load_from

            if (self._return_record_name and _names_records_in_unions(writer)) or by_fastavro is not None:
                # compiled codecs return a union's record without its name,
                # and read by the reader's logical types
                make = None

        what = f"schema id {schema_id}" + (" read as the reader schema" if not same else "")
        # a marshmallow reader's functions are its instance's
        key = (
            "read",
            writer.to_json(),
            target.to_json(),
            flags,
            id(marshmallow) if marshmallow is not None else None,
        )
        slot = _Codec(what, fallback, make, key, self._compiler, self._on_compiled)
        log.info("schema id %d: reading on the %s path", schema_id, slot.current[0])
        return slot
