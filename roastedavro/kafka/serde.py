"""AvroSerializer and AvroDeserializer: confluent-kafka's calling convention,
compiled codecs, and an uncompiled path while a codec builds.

Each writer schema has one :class:`_Codec` slot holding ``(path, function)``.
It starts on the compiled codec when the compile cache has it, and otherwise
on the uncompiled path (fastavro writing; reading, tier 0, with the codecs'
limits) while the background compiler builds the codec; the
finished codec replaces the tuple in one assignment, so a message is handled
wholly by one path or wholly by the other.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from concurrent.futures import Future
from typing import Any, Callable

from confluent_kafka.schema_registry import (
    Schema as RegistrySchema,
    record_subject_name_strategy,
    topic_record_subject_name_strategy,
    topic_subject_name_strategy,
)
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import (
    Deserializer, MessageField, SerializationContext, SerializationError, Serializer,
)

from roastedavro._tier0 import Interpreter, ResolvingInterpreter
from roastedavro.avro.parse import parse_schema
from roastedavro.avro.types import NamedType, Primitive, Record, Schema as AvroModel, Union
from roastedavro.background import BackgroundCompiler, default_compiler
from roastedavro.codec import AvroCodec
from roastedavro.errors import DecodeError, NotCompiledError, SchemaError
from roastedavro.flags import CompileFlags
from roastedavro import tiers
from roastedavro.schema import CompiledSchema, _Uncompiled

log = logging.getLogger("roastedavro.kafka")

#: the path names counted in ``stats`` and given to ``on_compiled``
COMPILED = "compiled"
FALLBACK = "fallback"

_MAGIC = 0
_HEADER_SIZE = 5
_KEY = MessageField.KEY

_STRATEGIES = {
    "TOPIC": topic_subject_name_strategy,
    "RECORD": record_subject_name_strategy,
    "TOPIC_RECORD": topic_record_subject_name_strategy,
}

# confluent-kafka's keys this library does not implement, and why
_UNSUPPORTED = {
    "use.latest.with.metadata": "metadata-based version selection",
    "subject.name.strategy.conf": "the ASSOCIATED strategy's settings",
    "schema.id.serializer": "schema ids in headers (GUIDs)",
    "schema.id.deserializer": "schema ids in headers (GUIDs)",
    "validate.strict": "fastavro's strict mode (compiled codecs refuse unknown types already)",
    "validate.strict.allow.default": "fastavro's strict mode",
    "validation.rules.execution": "data-contract rules",
    "validation.rules.fail.fast": "data-contract rules",
    "validation.rules.executor": "data-contract rules",
}


def wire_header(schema_id: int) -> bytes:
    """The 5 bytes before the Avro binary: magic byte 0, then the schema id
    as 4 big-endian bytes."""
    if not 0 <= schema_id < 2**32:
        raise ValueError(f"a schema id is an unsigned 32-bit int, not {schema_id!r}")
    return bytes((_MAGIC,)) + schema_id.to_bytes(4, "big")


def wire_schema_id(data) -> int:
    """The schema id of a Confluent-framed message (``SerializationError`` if
    it is not one)."""
    view = memoryview(data)
    if len(view) < _HEADER_SIZE:
        raise SerializationError(
            f"not a Confluent schema registry message: {len(view)} bytes, shorter than the "
            f"{_HEADER_SIZE}-byte header (magic byte and schema id)")
    if view[0] != _MAGIC:
        raise SerializationError(
            f"not a Confluent schema registry message: the first byte is {view[0]}, not the "
            f"magic byte 0")
    return int.from_bytes(view[1:_HEADER_SIZE], "big")


class RegistryFetchError(SerializationError, SchemaRegistryError):
    """A writer's schema the registry would not give: a ``SerializationError``
    naming the schema id, and the registry client's ``SchemaRegistryError``
    (with its ``http_status_code``, ``error_code`` and ``error_message``),
    which confluent-kafka's deserializer raises in the same place."""

    def __init__(self, message: str, cause: SchemaRegistryError):
        SerializationError.__init__(self, message)
        self.http_status_code = cause.http_status_code
        self.error_code = cause.error_code
        self.error_message = cause.error_message

    # KafkaException's text, not SchemaRegistryError's
    __str__ = SerializationError.__str__
    __repr__ = SerializationError.__repr__


class PathCounts(dict):
    """Calls per path (COMPILED, FALLBACK). A plain dict underneath, so
    counting costs one C-level item update; a path with no calls compares as
    absent (``PathCounts() == {}``)."""

    def __init__(self):
        super().__init__({COMPILED: 0, FALLBACK: 0})

    def __eq__(self, other):
        if not isinstance(other, dict):
            return NotImplemented
        return ({key: value for key, value in self.items() if value}
                == {key: value for key, value in other.items() if value})

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None


# -- configuration -----------------------------------------------------------------


def _conf(conf: dict | None, defaults: dict) -> dict:
    given = dict(conf or {})
    for key in given:
        if key in _UNSUPPORTED:
            raise ValueError(f"{key} ({_UNSUPPORTED[key]}) is not supported by roastedavro.kafka; "
                             "use confluent-kafka's serializers for it")
    unknown = [key for key in given if key not in defaults]
    if unknown:
        raise ValueError("Unrecognized properties: " + ", ".join(unknown))
    merged = dict(defaults)
    merged.update(given)
    for key, default in defaults.items():
        if isinstance(default, bool) and not isinstance(merged[key], bool):
            raise ValueError(f"{key} must be a boolean value")
    return merged


_NO_RULES = "which roastedavro.kafka does not run; use confluent-kafka's serializers for them"


def _no_rules(rule_conf, rule_registry) -> None:
    """confluent-kafka's ``rule_conf`` and ``rule_registry`` arguments:
    accepted when they ask for no data-contract rule, which this library
    does not run."""
    if rule_conf is not None and not isinstance(rule_conf, dict):
        raise ValueError("rule_conf must be a dict")
    if rule_conf:
        raise ValueError(f"rule_conf {sorted(rule_conf)} configures data-contract rules, "
                         + _NO_RULES)
    if rule_registry is not None and (rule_registry.get_executors() or rule_registry.get_actions()):
        raise ValueError("rule_registry has data-contract rule executors or actions, "
                         + _NO_RULES)


def _strategy(conf: dict) -> Callable:
    strategy = conf.pop("subject.name.strategy")
    kind = conf.pop("subject.name.strategy.type")
    if strategy is not None:
        if not callable(strategy):
            raise ValueError("subject.name.strategy must be callable")
        return strategy
    if kind is None:
        # confluent-kafka's ASSOCIATED strategy falls back to this one when
        # the registry has no association for the topic
        return topic_subject_name_strategy
    name = getattr(kind, "value", kind)
    chosen = _STRATEGIES.get(str(name).upper())
    if chosen is None:
        raise ValueError(f"subject.name.strategy.type {name!r} is not supported; use one of "
                         f"{', '.join(_STRATEGIES)}")
    return chosen


# -- schemas ----------------------------------------------------------------------


def _record_name(model: AvroModel) -> str | None:
    # the name the record strategies put in the subject, as confluent-kafka
    # takes it: a named type's full name, else the type's name
    root = model.root
    name = getattr(root, "name", None)
    if name is not None:
        return name
    kind = getattr(root, "type", None)
    return kind if isinstance(kind, str) else None


def _from_registry(client, schema: RegistrySchema, what: str) -> AvroModel:
    """The Avro schema of a registry ``Schema``, its references fetched."""
    if schema.schema_type not in (None, "AVRO"):
        raise SerializationError(f"{what} is a {schema.schema_type} schema, not Avro")
    named: dict[str, NamedType] = {}
    _add_references(client, schema, named, set())
    text = schema.schema_str or ""
    if text.strip()[:1] not in ("{", "["):
        text = '{"type":' + text.strip() + "}"  # a primitive's name, as confluent-kafka reads it
    try:
        return parse_schema(text, named)
    except SchemaError as error:
        raise SerializationError(f"{what} is not a valid Avro schema: {error}") from None


def _add_references(client, schema: RegistrySchema, named: dict, seen: set) -> None:
    for reference in schema.references or ():
        key = (reference.subject, reference.version)
        if key in seen:
            continue
        seen.add(key)
        registered = client.get_version(reference.subject, reference.version)
        _add_references(client, registered.schema, named, seen)
        referenced = parse_schema(registered.schema.schema_str, named)
        named.update(referenced.named)


def _marshmallow_schema(schema: Any) -> CompiledSchema | None:
    if isinstance(schema, type) and issubclass(schema, CompiledSchema):
        return schema()
    if isinstance(schema, CompiledSchema):
        return schema
    return None


def _user_schema(client, schema: Any) -> tuple[AvroModel, str]:
    """The Avro schema given to a serializer or deserializer, and its text."""
    if isinstance(schema, RegistrySchema):
        return _from_registry(client, schema, "the schema"), schema.schema_str
    if isinstance(schema, AvroModel):
        return schema, schema.to_json()
    if isinstance(schema, str):
        text = schema.strip()
        if text[:1] not in ("{", "["):
            text = '{"type":' + text + "}"
        return parse_schema(text), text
    if isinstance(schema, (dict, list)):
        return parse_schema(schema), json.dumps(schema)
    raise TypeError("schema must be a CompiledSchema (class or instance), an Avro schema as a "
                    f"dict or JSON text, or a Schema, not {type(schema).__name__}")


# -- the swappable codec slot -----------------------------------------------------


class _Codec:
    """One schema's current ``(path, function)``; swapped in one assignment."""

    __slots__ = ("current", "future", "what")

    def __init__(self, what: str, fallback: Callable, make: Callable[[str], Callable] | None,
                 key: Any, compiler: BackgroundCompiler | None,
                 on_compiled: Callable[[str, BaseException | None], None] | None):
        self.what = what
        self.future: Future | None = None
        if make is None:  # no codec serves this reader: the bounded path for good
            self.current = (FALLBACK, fallback)
            return
        built = _cached(make)
        if built is not None:
            self.current = (COMPILED, built)
            return
        self.current = (FALLBACK, fallback)
        if compiler is None or tiers.compile_policy(None, default="eager") == "never" \
                or not tiers.can_compile():
            return  # tier 0 serves it for good
        # prepare() hands this future to the caller: a concurrent.futures one,
        # whatever the background compiler's own type
        self.future = Future()
        self.future.set_running_or_notify_cancel()

        def swap(job) -> None:
            error = job.exception()
            try:
                if error is None:
                    self.current = (COMPILED, job.result())
                if on_compiled is not None:
                    on_compiled(what, error)
            finally:  # the swap is done when the future says so
                if error is None:
                    self.future.set_result(job.result())
                else:
                    self.future.set_exception(error)

        compiler.submit(key, make, what).add_done_callback(swap)


def _compiled_codec(schema: AvroModel, flags: CompileFlags, writer: AvroModel | None,
                    build: str) -> AvroCodec:
    """The compiled AvroCodec of a schema (or pair), built where ``build``
    says; NotCompiledError where it may not be built (``build="never"``,
    ROASTEDAVRO_COMPILE=never) and is neither cached nor precompiled."""
    codec = AvroCodec(schema, flags, writer_schema=writer, build=build, compile="eager")
    if codec.tier != "compiled":
        # ROASTEDAVRO_COMPILE=never or no compiler: the cached or precompiled
        # codec, looked up now, or NotCompiledError
        codec.compile(build)
    return codec


def _cached(make: Callable[[str], Callable]) -> Callable | None:
    """The compiled function when it is built already (in this process or the
    compile cache), else None: nothing is compiled here."""
    try:
        return make("never")
    except NotCompiledError:
        return None


def _named_reader(writer: AvroModel, reader: AvroModel, flags: CompileFlags,
                  same: bool) -> Callable:
    """Tier 0's reader for ``return_record_name``, from byte ``start`` to the
    end of the message: a union's record is read as ``(name, record)``, as
    fastavro's reader gives it (its rules, roastedavro._tier0.union_names),
    with the reader's names where the reader has a union; values are
    converted by the writer's logical types, as fastavro converts them. The
    bounds and errors are tier 0's."""
    naming = (True, False, False, False)
    if same:
        return Interpreter(writer, flags, naming).load_from
    return ResolvingInterpreter(writer, reader, flags, naming).load_from


def _in_message(load: Callable, body, start: int, *args) -> Any:
    """``load(body, False, *args)`` of a message's body, a DecodeError's
    offset counted from the message's first byte (as tier 0's and the
    codecs' ``load_from`` count it)."""
    try:
        return load(body, False, *args)
    except DecodeError as error:
        raise DecodeError(error.reason, error.offset + start) from None


def _resolving_reader(writer: AvroModel, reader: AvroModel, flags: CompileFlags) -> Callable:
    """Tier 0's reader of ``writer``'s data as ``reader``'s values, from byte
    ``start`` to the end of the message."""
    return ResolvingInterpreter(writer, reader, flags).load_from


def as_confluent(model: AvroModel) -> AvroModel:
    """A schema as confluent-kafka's serializers use it (they write and read
    with fastavro): parsed again in the fastavro dialect (its JSON holds the
    referenced types too). A reader's record then gets its keys in
    fastavro's order (the fields read, in the writer's order, then the
    defaults) and fastavro's resolution rules apply; on either side the
    logical types fastavro does not convert (uuid on fixed, duration,
    big-decimal, the nanosecond timestamps) are their plain values. A model
    of its own, never one that shares the specification's tree under the
    same JSON and dialect (the codecs' caches tell models apart by both)."""
    try:
        return parse_schema(model.to_json(), dialect="fastavro")
    except SchemaError:    # fastavro's rules refuse it: the specification's then
        return model


def _bare_bytes(model: AvroModel) -> bool:
    """Whether the schema is ``bytes`` itself: confluent-kafka (as Java's
    serializers) then frames the value's bytes as they are, without Avro's
    length."""
    return isinstance(model.root, Primitive) and model.root.name == "bytes"


def _write_bare(header: bytes, obj) -> bytes:
    if isinstance(obj, str):
        return header + obj.encode()
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return header + bytes(obj)
    raise SerializationError(f"a bytes schema's value is written as it is: bytes or str, "
                             f"not {type(obj).__name__}")


def _read_bare(data, start) -> bytes:
    return bytes(data[start:])


def _names_records_in_unions(model: AvroModel) -> bool:
    """Whether a union of the schema has a record branch: the values that
    ``return_record_name`` turns into ``(name, record)`` tuples."""
    return any(isinstance(avro, Union)
               and any(isinstance(model.deref(branch), Record) for branch in avro.branches)
               for avro in model.walk())


# -- the serializer ----------------------------------------------------------------


class AvroSerializer(Serializer):
    """Writes values as Avro binary in the Confluent wire format.

    The arguments are confluent-kafka 2.16's ``AvroSerializer``'s, positionally
    or by keyword: the registry client, ``schema_str`` (a ``CompiledSchema``
    class or instance, whose values are written as ``dump_compiled`` writes
    them; or an Avro schema as JSON text, a dict, a parsed schema or registry
    ``Schema``, whose values are dicts as fastavro takes them; None writes
    with the registry's schema, for ``use.schema.id`` or
    ``use.latest.version``), ``to_dict(obj, ctx)``, ``conf``, and
    ``rule_conf``/``rule_registry``, accepted when they configure no
    data-contract rule (rules are not run: ``ValueError``). The supported ``conf``
    keys are ``auto.register.schemas`` (True), ``normalize.schemas``
    (False), ``use.schema.id`` (None), ``use.latest.version`` (False),
    ``subject.name.strategy`` (a callable, e.g. confluent-kafka's
    ``record_subject_name_strategy``) and ``subject.name.strategy.type``
    (TOPIC, the default; RECORD; TOPIC_RECORD).

    ``flags`` are the codecs' compile flags; ``compiler`` the background
    compiler (the process's shared one by default; None starts no compile,
    though a codec already in the compile cache is used). ``stats`` counts
    the values written by each path.
    """

    _default_conf = {
        "auto.register.schemas": True,
        "normalize.schemas": False,
        "use.schema.id": None,
        "use.latest.version": False,
        "subject.name.strategy": None,
        "subject.name.strategy.type": None,
    }

    def __init__(self, schema_registry_client, schema_str=None, to_dict=None, conf=None,
                 rule_conf=None, rule_registry=None, *,
                 flags: CompileFlags | None = None,
                 compiler: BackgroundCompiler | None | str = "default",
                 on_compiled: Callable[[str, BaseException | None], None] | None = None):
        schema = schema_str
        if to_dict is not None and not callable(to_dict):
            raise ValueError("to_dict must be callable with the signature "
                             "to_dict(object, SerializationContext) -> dict")
        settings = _conf(conf, self._default_conf)
        _no_rules(rule_conf, rule_registry)
        self._registry = schema_registry_client
        self._to_dict = to_dict
        self._flags = flags or CompileFlags()
        self._compiler = default_compiler() if compiler == "default" else compiler
        self._on_compiled = on_compiled
        self._auto_register = settings["auto.register.schemas"]
        self._normalize = settings["normalize.schemas"]
        self._use_schema_id = settings["use.schema.id"]
        if self._use_schema_id is not None and (
                not isinstance(self._use_schema_id, int) or isinstance(self._use_schema_id, bool)):
            raise ValueError("use.schema.id must be an int value")
        self._use_latest = settings["use.latest.version"]
        if self._use_latest and self._auto_register:
            raise ValueError("cannot enable both use.latest.version and auto.register.schemas")
        self._subject_name = _strategy(settings)
        self._marshmallow = _marshmallow_schema(schema)
        if self._marshmallow is not None:
            self._model = self._marshmallow.avro_model
            self._text = json.dumps(self._marshmallow.avro_schema())
        elif schema is None:
            # confluent-kafka's serializer without a schema writes with the
            # registry's (use.schema.id or use.latest.version)
            if self._use_schema_id is None and not self._use_latest:
                raise TypeError("an AvroSerializer without schema_str needs use.schema.id or "
                                 "use.latest.version in conf: it writes with the registry's schema")
            self._model, self._text = None, None
        else:
            self._model, self._text = _user_schema(schema_registry_client, schema)
        self._record_name = _record_name(self._model) if self._model is not None else None
        # a registry Schema is registered as given (its references too)
        self._registered = (schema if isinstance(schema, RegistrySchema)
                            else RegistrySchema(self._text, "AVRO") if self._text is not None
                            else None)
        self._lock = threading.Lock()
        # (topic, field) -> the header and codec slot of the target's schema id
        self._targets: dict[Any, tuple[bytes, _Codec]] = {}
        self._codecs: dict[str, _Codec] = {}  # by the full JSON of the schema written
        #: values written by each path (COMPILED, FALLBACK)
        self.stats = PathCounts()

    def __call__(self, obj, ctx: SerializationContext | None = None) -> bytes | None:
        if obj is None:
            return None
        # MessageField is an Enum: identity, not its Python-level hash
        target = self._targets.get((ctx.topic, ctx.field is _KEY) if ctx is not None else None)
        if target is None or self._use_latest:
            target = self._target(ctx)
        header, slot = target
        if self._to_dict is not None:
            if ctx is None:
                raise TypeError("SerializationContext cannot be None")
            obj = self._to_dict(obj, ctx)
        path, dump = slot.current
        self.stats[path] += 1
        return dump(header, obj)

    def _target(self, ctx) -> tuple[bytes, _Codec]:
        subject = self._subject_name(ctx, self._record_name)
        if subject is None:
            raise SerializationError(
                f"the subject name strategy gave no subject for schema {self._record_name!r}")
        registry = self._registry
        with self._lock:
            try:
                if self._use_schema_id is not None:
                    registered = registry.get_schema(self._use_schema_id, subject)
                    schema_id, schema = self._use_schema_id, registered
                elif self._use_latest:
                    latest = registry.get_latest_version(subject)
                    schema_id, schema = latest.schema_id, latest.schema
                elif self._auto_register:
                    schema_id = registry.register_schema(subject, self._registered,
                                                         normalize_schemas=self._normalize)
                    schema = None
                else:
                    schema_id = registry.lookup_schema(subject, self._registered,
                                                       normalize_schemas=self._normalize).schema_id
                    schema = None
            except SerializationError:
                raise
            except Exception as error:
                raise SerializationError(
                    f"subject {subject!r}: the schema registry failed: {error}") from error
            model = self._model if schema is None else _from_registry(
                registry, schema, f"schema id {schema_id}")
            target = (wire_header(schema_id), self._slot(model, schema_id))
            if not self._use_latest:
                self._targets[(ctx.topic, ctx.field is _KEY) if ctx is not None else None] = target
        return target

    def _slot(self, model: AvroModel, schema_id: int) -> _Codec:
        key = model.to_json()
        slot = self._codecs.get(key)
        if slot is not None:
            return slot
        flags = self._flags
        marshmallow = self._marshmallow
        if marshmallow is not None:
            if model.canonical_form() != self._model.canonical_form():
                raise SerializationError(
                    f"schema id {schema_id} in the registry is not the CompiledSchema's "
                    f"{type(marshmallow).__name__} schema; a CompiledSchema writes its own schema")

            def fallback(header, obj):
                return header + marshmallow._dump_uncompiled(obj)

            def make(build):
                if marshmallow._roasted_codec is None:
                    marshmallow.compile(flags, build=build)
                dump = marshmallow.dump_compiled
                return lambda header, obj: header + dump(obj)
        elif _bare_bytes(model):
            slot = self._codecs[key] = _Codec(f"the writer of schema id {schema_id}", _write_bare,
                                              None, None, None, None)
            return slot
        else:
            # the values confluent-kafka's serializer takes: fastavro's view
            model = as_confluent(model)
            # tier 0 until the compiled codec is ready: the same bytes and errors
            fallback = Interpreter(model, flags).dump_prefixed

            def make(build):
                return _compiled_codec(model, flags, None, build)._writer().dump_prefixed

        slot = self._codecs[key] = _Codec(
            f"the writer of schema id {schema_id}", fallback, make,
            ("write", key, flags, id(marshmallow) if marshmallow is not None else None),
            self._compiler, self._on_compiled)
        return slot

    def wait_compiled(self, timeout: float | None = None) -> bool:
        """Waits for the background compiles this serializer started; True
        when every one has finished (built or failed)."""
        return _wait(self._codecs.values(), timeout)


# -- the deserializer --------------------------------------------------------------


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

    def __init__(self, schema_registry_client, schema_str=None, from_dict=None,
                 return_record_name=False, conf=None, rule_conf=None, rule_registry=None, *,
                 flags: CompileFlags | None = None,
                 compiler: BackgroundCompiler | None | str = "default",
                 on_compiled: Callable[[str, BaseException | None], None] | None = None,
                 retry_after: float = 1.0):
        schema = schema_str
        settings = _conf(conf, self._default_conf)
        if from_dict is not None and not callable(from_dict):
            raise ValueError("from_dict must be callable with the signature "
                             "from_dict(dict, SerializationContext) -> object")
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
            raise ValueError("return_record_name applies to Avro schemas' dicts; a CompiledSchema "
                             "loads its own values")
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

    def __call__(self, data, ctx: SerializationContext | None = None):
        if data is None:
            return None
        if type(data) is not bytes:
            data = bytes(data)
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

    def _slot_for(self, data) -> _Codec:
        schema_id = wire_schema_id(data)
        key = bytes(data[1:_HEADER_SIZE])
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                writer = self._writer_schema(schema_id)
                slot = self._slots[key] = self._new_slot(writer, self._reader, schema_id)
        return slot

    def _latest_slot(self, data, ctx) -> _Codec:
        writer_id = wire_schema_id(data)
        subject = self._subject_name(ctx, None)
        if subject is None:
            writer_name = _record_name(self._writer_schema(writer_id))
            subject = self._subject_name(ctx, writer_name)
        try:
            latest = self._registry.get_latest_version(subject)
        except Exception as error:
            raise SerializationError(
                f"subject {subject!r}: the latest version cannot be fetched: {error}") from error
        key = (writer_id, latest.schema_id)
        slot = self._slots.get(key)
        if slot is None:
            with self._lock:
                slot = self._slots.get(key)
                if slot is None:
                    writer = self._writer_schema(writer_id)
                    reader = _from_registry(self._registry, latest.schema,
                                            f"schema id {latest.schema_id}")
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
                message = (f"schema id {schema_id} cannot be fetched from the schema registry "
                           f"(after the client's retries): {error}")
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
                resolve(writer, resolving).check()
            except SchemaError as error:
                raise SerializationError(
                    f"schema id {schema_id} cannot be read as the reader schema: {error}") from None
        if _bare_bytes(writer) and marshmallow is None:
            # as confluent-kafka reads it, whatever the reader schema
            return _Codec(f"schema id {schema_id}", _read_bare, None, None, None, None)
        same = reader is None or writer.canonical_form() == reader.canonical_form()
        target = reader if reader is not None else writer

        if marshmallow is not None:
            # what load_compiled returns where the schema is not compiled:
            # tier 0 checks and reads the bytes (logical types, precision),
            # marshmallow's load makes the values
            uncompiled = _Uncompiled(marshmallow, flags)
            other_writer = None if same else writer

            def fallback(data, start):
                return _in_message(uncompiled.load, memoryview(data)[start:], start, other_writer)

            def make(build):
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
            target = resolving if reader is not None else writer
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

            def make(build):
                if same:
                    return _compiled_codec(target, flags, None, build)._reader.load_from
                return _compiled_codec(target, flags, writer, build)._reader.load_from

            if (self._return_record_name and _names_records_in_unions(writer)) \
                    or by_fastavro is not None:
                # compiled codecs return a union's record without its name,
                # and read by the reader's logical types
                make = None

        what = f"schema id {schema_id}" + (" read as the reader schema" if not same else "")
        # a marshmallow reader's functions are its instance's
        key = ("read", writer.to_json(), target.to_json(), flags,
               id(marshmallow) if marshmallow is not None else None)
        slot = _Codec(what, fallback, make, key, self._compiler, self._on_compiled)
        log.info("schema id %d: reading on the %s path", schema_id, slot.current[0])
        return slot


def _wait(slots, timeout: float | None) -> bool:
    deadline = None if timeout is None else time.monotonic() + timeout
    for slot in list(slots):
        if slot.future is None:
            continue
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            slot.future.exception(remaining)
        except TimeoutError:
            return False
    return True
