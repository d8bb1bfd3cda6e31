"""confluent-kafka's AvroSerializer over roastedavro's codecs (see serde:
the wire format, the schemas, the swappable codec slot)."""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, Literal

from confluent_kafka.schema_registry import (
    Schema as RegistrySchema,
)
from confluent_kafka.serialization import (
    SerializationContext,
    SerializationError,
    Serializer,
)

from roastedavro._tier0 import Interpreter
from roastedavro.avro.types import Schema as AvroModel
from roastedavro.background import BackgroundCompiler, default_compiler
from roastedavro.flags import CompileFlags
from roastedavro.kafka.serde import (
    _KEY,
    PathCounts,
    _bare_bytes,
    _Codec,
    _compiled_codec,
    _conf,
    _from_registry,
    _marshmallow_schema,
    _no_rules,
    _record_name,
    _strategy,
    _user_schema,
    _wait,
    _write_bare,
    as_confluent,
    wire_header,
)


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

    def __init__(
        self,
        schema_registry_client: Any,
        schema_str: Any = None,
        to_dict: Callable[[Any, SerializationContext], dict] | None = None,
        conf: dict | None = None,
        rule_conf: Any = None,
        rule_registry: Any = None,
        *,
        flags: CompileFlags | None = None,
        compiler: BackgroundCompiler | None | Literal["default"] = "default",
        on_compiled: Callable[[str, BaseException | None], None] | None = None,
    ) -> None:
        schema = schema_str
        if to_dict is not None and not callable(to_dict):
            raise ValueError(
                "to_dict must be callable with the signature to_dict(object, SerializationContext) -> dict"
            )
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
            not isinstance(self._use_schema_id, int) or isinstance(self._use_schema_id, bool)
        ):
            raise ValueError("use.schema.id must be an int value")
        self._use_latest = settings["use.latest.version"]
        if self._use_latest and self._auto_register:
            raise ValueError("cannot enable both use.latest.version and auto.register.schemas")
        self._subject_name = _strategy(settings)
        self._marshmallow = _marshmallow_schema(schema)
        self._model: AvroModel | None
        self._text: str | None
        if self._marshmallow is not None:
            self._model = self._marshmallow.avro_model
            self._text = json.dumps(self._marshmallow.avro_schema())
        elif schema is None:
            # confluent-kafka's serializer without a schema writes with the
            # registry's (use.schema.id or use.latest.version)
            if self._use_schema_id is None and not self._use_latest:
                raise TypeError(
                    "an AvroSerializer without schema_str needs use.schema.id or "
                    "use.latest.version in conf: it writes with the registry's schema"
                )
            self._model, self._text = None, None
        else:
            self._model, self._text = _user_schema(schema_registry_client, schema)
        self._record_name = _record_name(self._model) if self._model is not None else None
        # a registry Schema is registered as given (its references too)
        self._registered = (
            schema
            if isinstance(schema, RegistrySchema)
            else RegistrySchema(self._text, "AVRO")
            if self._text is not None
            else None
        )
        self._lock = threading.Lock()
        # (topic, field) -> the header and codec slot of the target's schema id
        self._targets: dict[Any, tuple[bytes, _Codec]] = {}
        self._codecs: dict[str, _Codec] = {}  # by the full JSON of the schema written
        #: values written by each path (COMPILED, FALLBACK)
        self.stats = PathCounts()

    def __call__(self, obj: Any, ctx: SerializationContext | None = None) -> bytes | None:
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

    def _target(self, ctx: SerializationContext | None) -> tuple[bytes, _Codec]:
        subject = self._subject_name(ctx, self._record_name)
        if subject is None:
            raise SerializationError(
                f"the subject name strategy gave no subject for schema {self._record_name!r}"
            )
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
                    schema_id = registry.register_schema(
                        subject, self._registered, normalize_schemas=self._normalize
                    )
                    schema = None
                else:
                    schema_id = registry.lookup_schema(
                        subject, self._registered, normalize_schemas=self._normalize
                    ).schema_id
                    schema = None
            except SerializationError:
                raise
            except Exception as error:
                raise SerializationError(
                    f"subject {subject!r}: the schema registry failed: {error}"
                ) from error
            model = (
                self._model if schema is None else _from_registry(registry, schema, f"schema id {schema_id}")
            )
            # without a schema of its own the serializer takes the registry's (__init__)
            assert model is not None
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
        fallback: Callable[[bytes, Any], bytes]
        if marshmallow is not None:
            assert self._model is not None  # the CompiledSchema's
            if model.canonical_form() != self._model.canonical_form():
                raise SerializationError(
                    f"schema id {schema_id} in the registry is not the CompiledSchema's "
                    f"{type(marshmallow).__name__} schema; a CompiledSchema writes its own schema"
                )

            def fallback(header: bytes, obj: Any) -> bytes:
                return header + marshmallow._dump_uncompiled(obj)

            def make(build: str) -> Callable[[bytes, Any], bytes]:
                if marshmallow._roasted_codec is None:
                    marshmallow.compile(flags, build=build)
                dump = marshmallow.dump_compiled
                return lambda header, obj: header + dump(obj)
        elif _bare_bytes(model):
            slot = self._codecs[key] = _Codec(
                f"the writer of schema id {schema_id}", _write_bare, None, None, None, None
            )
            return slot
        else:
            # the values confluent-kafka's serializer takes: fastavro's view
            model = as_confluent(model)
            # tier 0 until the compiled codec is ready: the same bytes and errors
            fallback = Interpreter(model, flags).dump_prefixed

            def make(build: str) -> Callable[[bytes, Any], bytes]:
                return _compiled_codec(model, flags, None, build)._writer().dump_prefixed

        slot = self._codecs[key] = _Codec(
            f"the writer of schema id {schema_id}",
            fallback,
            make,
            ("write", key, flags, id(marshmallow) if marshmallow is not None else None),
            self._compiler,
            self._on_compiled,
        )
        return slot

    def wait_compiled(self, timeout: float | None = None) -> bool:
        """Waits for the background compiles this serializer started; True
        when every one has finished (built or failed)."""
        return _wait(self._codecs.values(), timeout)
