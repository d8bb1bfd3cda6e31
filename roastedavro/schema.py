"""CompiledSchema: a marshmallow Schema with a compiled Avro codec."""

from __future__ import annotations

import copy
import io
import threading
from typing import Any

import fastavro
from marshmallow import Schema, ValidationError

from roastedavro import compiler
from roastedavro._support import validation_error
from roastedavro.codegen import generate_module
from roastedavro.encoders import EncoderRegistry, default_registry
from roastedavro.errors import DumpError, LoadFallback
from roastedavro.flags import CompileFlags
from roastedavro.visitor import RecordPlan, SchemaVisitor, avro_schema


class _Plan:
    """What visiting a schema instance produced; computed once per instance."""

    def __init__(self, schema: Schema):
        registry = _registry_for(schema)
        visitor = SchemaVisitor(registry)
        self.root: RecordPlan = visitor.visit_record(schema)
        self.records = list(visitor.records.values())
        self.avro = avro_schema(self.root)
        self.parsed = fastavro.parse_schema(copy.deepcopy(self.avro))
        self.parsed_many = fastavro.parse_schema({"type": "array", "items": copy.deepcopy(self.avro)})
        # Features the compiled path does not implement yet take marshmallow's
        # own path for that direction, so results stay exactly marshmallow's.
        self.dump_reasons = visitor.dump_needs_marshmallow
        self.load_reasons = visitor.load_needs_marshmallow


def _registry_for(schema: Schema) -> EncoderRegistry:
    extra = getattr(getattr(schema, "Meta", None), "avro_encoders", ())
    if not extra:
        return default_registry
    registry = default_registry.copy()
    for encoder in extra:
        registry.register(encoder)
    return registry


class CompiledSchema(Schema):
    """A marshmallow ``Schema`` that also writes and reads Avro binary.

    Declare fields as usual; ``class Meta`` may set ``avro_name`` (the
    record name, default: the class name), ``avro_namespace`` (default:
    none) and ``avro_encoders`` (encoders used by this schema only).
    """

    _roasted_plan: _Plan | None = None
    _roasted_codec: Any = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._roasted_lock = threading.Lock()

    # -- the Avro schema ----------------------------------------------------

    def _plan(self) -> _Plan:
        plan = self._roasted_plan
        if plan is None:
            plan = self._roasted_plan = _Plan(self)
        return plan

    def avro_schema(self) -> dict:
        """The Avro record schema the compiled codec writes and reads."""
        return copy.deepcopy(self._plan().avro)

    # -- compiling ----------------------------------------------------------

    def _label(self) -> str:
        return f"{type(self).__module__}.{type(self).__qualname__}"

    def compile_to_string(self, flags: CompileFlags | None = None) -> str:
        """The Cython source that :meth:`compile` builds."""
        plan = self._plan()
        source, _ = generate_module(plan.root, plan.records, self._label(),
                                    (flags or CompileFlags()).build_key())
        return source

    def compile(self, flags: CompileFlags | None = None) -> CompiledSchema:
        """Generate, build (or load from the cache) and attach the codec."""
        flags = flags or CompileFlags()
        with self._roasted_lock:
            plan = self._plan()
            source, bindings = generate_module(plan.root, plan.records, self._label(),
                                               flags.build_key())
            module = compiler.load(source, flags)
            self._roasted_codec = module.Codec(bindings, flags.max_depth, flags.max_items)
        return self

    def _codec(self):
        codec = self._roasted_codec
        if codec is None:
            self.compile()
            codec = self._roasted_codec
        return codec

    # -- dump and load ------------------------------------------------------

    def dump_compiled(self, obj: Any, *, many: bool | None = None) -> bytes:
        """Avro binary of ``obj``: ``fastavro.schemaless_writer(avro_schema(), dump(obj))``.

        Raises ``marshmallow.ValidationError`` naming the field path when a
        value cannot be written.
        """
        many = self.many if many is None else bool(many)
        codec = self._codec()
        if self._plan().dump_reasons:
            return self._dump_with_marshmallow(obj, many)
        try:
            return codec.dump_many(obj) if many else codec.dump(obj)
        except DumpError as error:
            raise validation_error(error) from None

    def load_compiled(self, data, *, many: bool | None = None) -> Any:
        """The loaded value of Avro binary ``data``, as marshmallow's ``load`` returns it.

        Malformed bytes raise :class:`roastedavro.DecodeError` with the offset.
        """
        many = self.many if many is None else bool(many)
        codec = self._codec()
        try:
            result = codec.load_many(data) if many else codec.load(data)
        except LoadFallback:
            return self._load_with_marshmallow(data, many)
        if self._plan().load_reasons:
            return self._load_with_marshmallow(data, many)
        return result

    def _dump_with_marshmallow(self, obj: Any, many: bool) -> bytes:
        plan = self._plan()
        dumped = self.dump(obj, many=many)
        out = io.BytesIO()
        try:
            fastavro.schemaless_writer(out, plan.parsed_many if many else plan.parsed, dumped)
        except (TypeError, ValueError, AttributeError, OverflowError) as error:
            raise ValidationError({"_schema": [f"Cannot write as Avro: {error}"]}) from None
        return out.getvalue()

    def _load_with_marshmallow(self, data, many: bool) -> Any:
        # The compiled reader has already checked the bytes from start to end.
        plan = self._plan()
        decoded = fastavro.schemaless_reader(
            io.BytesIO(bytes(data)), plan.parsed_many if many else plan.parsed, None)
        return self.load(decoded, many=many)
