"""What roastedavro.kafka's AvroSerializer (serializer.py) and
AvroDeserializer (deserializer.py) share: the wire format, their
configuration, the schemas (from the registry, as confluent-kafka's fastavro
sees them), and the swappable codec slot.

Each writer schema has one ``_Codec`` slot holding ``(path, function)``.
It starts on the compiled codec when the compile cache has it, and otherwise
on tier 0 (the interpreter, with the codecs' limits) while the background
compiler builds the codec; the finished codec replaces the tuple in one
assignment, so a message is handled wholly by one path or wholly by the
other.
"""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import Future
from typing import Any, Callable, Iterable

from confluent_kafka.schema_registry import (
    Schema as RegistrySchema,
)
from confluent_kafka.schema_registry import (
    record_subject_name_strategy,
    topic_record_subject_name_strategy,
    topic_subject_name_strategy,
)
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import (
    MessageField,
    SerializationError,
)

from roastedavro import tiers
from roastedavro._tier0 import Interpreter, ResolvingInterpreter
from roastedavro.avro.parse import parse_schema
from roastedavro.avro.types import NamedType, Primitive, Record, Union
from roastedavro.avro.types import Schema as AvroModel
from roastedavro.background import BackgroundCompiler, Job
from roastedavro.codec import AvroCodec
from roastedavro.errors import DecodeError, NotCompiledError, SchemaError
from roastedavro.flags import CompileFlags
from roastedavro.schema import CompiledSchema

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


def wire_schema_id(data: Any) -> int:
    """The schema id of a Confluent-framed message (``SerializationError`` if
    it is not one)."""
    view = memoryview(data)
    if len(view) < _HEADER_SIZE:
        raise SerializationError(
            f"not a Confluent schema registry message: {len(view)} bytes, shorter than the "
            f"{_HEADER_SIZE}-byte header (magic byte and schema id)"
        )
    if view[0] != _MAGIC:
        raise SerializationError(
            f"not a Confluent schema registry message: the first byte is {view[0]}, not the magic byte 0"
        )
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

    def __init__(self) -> None:
        super().__init__({COMPILED: 0, FALLBACK: 0})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, dict):
            return NotImplemented
        return {key: value for key, value in self.items() if value} == {
            key: value for key, value in other.items() if value
        }

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None


# -- configuration -----------------------------------------------------------------


def _conf(conf: dict | None, defaults: dict) -> dict:
    given = dict(conf or {})
    for key in given:
        if key in _UNSUPPORTED:
            raise ValueError(
                f"{key} ({_UNSUPPORTED[key]}) is not supported by roastedavro.kafka; "
                "use confluent-kafka's serializers for it"
            )
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


def _no_rules(rule_conf: Any, rule_registry: Any) -> None:
    """confluent-kafka's ``rule_conf`` and ``rule_registry`` arguments:
    accepted when they ask for no data-contract rule, which this library
    does not run."""
    if rule_conf is not None and not isinstance(rule_conf, dict):
        raise ValueError("rule_conf must be a dict")
    if rule_conf:
        raise ValueError(f"rule_conf {sorted(rule_conf)} configures data-contract rules, " + _NO_RULES)
    if rule_registry is not None and (rule_registry.get_executors() or rule_registry.get_actions()):
        raise ValueError("rule_registry has data-contract rule executors or actions, " + _NO_RULES)


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
        raise ValueError(
            f"subject.name.strategy.type {name!r} is not supported; use one of {', '.join(_STRATEGIES)}"
        )
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


def _from_registry(client: Any, schema: RegistrySchema, what: str) -> AvroModel:
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


def _add_references(client: Any, schema: RegistrySchema, named: dict, seen: set) -> None:
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


def _user_schema(client: Any, schema: Any) -> tuple[AvroModel, str | None]:
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
    raise TypeError(
        "schema must be a CompiledSchema (class or instance), an Avro schema as a "
        f"dict or JSON text, or a Schema, not {type(schema).__name__}"
    )


# -- the swappable codec slot -----------------------------------------------------


class _Codec:
    """One schema's current ``(path, function)``; swapped in one assignment."""

    __slots__ = ("current", "future", "what")

    def __init__(
        self,
        what: str,
        fallback: Callable,
        make: Callable[[str], Callable] | None,
        key: Any,
        compiler: BackgroundCompiler | None,
        on_compiled: Callable[[str, BaseException | None], None] | None,
    ):
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
        if (
            compiler is None
            or tiers.compile_policy(None, default="eager") == "never"
            or not tiers.can_compile()
        ):
            return  # tier 0 serves it for good
        # prepare() hands this future to the caller: a concurrent.futures one,
        # whatever the background compiler's own type
        future: Future = Future()
        self.future = future
        future.set_running_or_notify_cancel()

        def swap(job: Job) -> None:
            error = job.exception()
            try:
                if error is None:
                    self.current = (COMPILED, job.result())
                if on_compiled is not None:
                    on_compiled(what, error)
            finally:  # the swap is done when the future says so
                if error is None:
                    future.set_result(job.result())
                else:
                    future.set_exception(error)

        compiler.submit(key, make, what).add_done_callback(swap)


def _compiled_codec(
    schema: AvroModel, flags: CompileFlags, writer: AvroModel | None, build: str
) -> AvroCodec:
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


def _named_reader(writer: AvroModel, reader: AvroModel, flags: CompileFlags, same: bool) -> Callable:
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


def _in_message(load: Callable, body: Any, start: int, *args: Any) -> Any:
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
    except SchemaError:  # fastavro's rules refuse it: the specification's then
        return model


def _bare_bytes(model: AvroModel) -> bool:
    """Whether the schema is ``bytes`` itself: confluent-kafka (as Java's
    serializers) then frames the value's bytes as they are, without Avro's
    length."""
    return isinstance(model.root, Primitive) and model.root.name == "bytes"


def _write_bare(header: bytes, obj: Any) -> bytes:
    if isinstance(obj, str):
        return header + obj.encode()
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return header + bytes(obj)
    raise SerializationError(
        f"a bytes schema's value is written as it is: bytes or str, not {type(obj).__name__}"
    )


def _read_bare(data: Any, start: int) -> bytes:
    return bytes(data[start:])


def _names_records_in_unions(model: AvroModel) -> bool:
    """Whether a union of the schema has a record branch: the values that
    ``return_record_name`` turns into ``(name, record)`` tuples."""
    return any(
        isinstance(avro, Union) and any(isinstance(model.deref(branch), Record) for branch in avro.branches)
        for avro in model.walk()
    )


def _wait(slots: Iterable[_Codec], timeout: float | None) -> bool:
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
