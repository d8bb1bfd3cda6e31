"""CompiledSchema: a marshmallow Schema with a compiled Avro codec."""

from __future__ import annotations

import copy
import io
import sys
import threading
from functools import partial
from typing import Any

import fastavro
from marshmallow import Schema, ValidationError
from marshmallow.decorators import PRE_DUMP

from roastedavro import compiler
from roastedavro._datum import encode_long
from roastedavro.avro.parse import parse_schema
from roastedavro.avro.types import Schema as AvroSchema
from roastedavro.errors import CompileError, DecodeError, NotCompiledError, SchemaError
from roastedavro.codegen import generate_module
from roastedavro.encoders import EncoderRegistry, default_registry
from roastedavro.encoders.collections import each_in_path
from roastedavro.flags import CompileFlags
from roastedavro.hooks import LoadHooks
from roastedavro.visitor import (
    RecordPlan,
    SchemaVisitor,
    avro_schema,
    record_dump_datum,
    record_load_input,
    without_logical_types,
)


#: what CompileFlags(validate=False) skips among the reasons to load through
#: marshmallow (a Pluck's schema's validation hooks)
VALIDATION = {"validates", "validates_schema"}


class _Plan:
    """What visiting a schema instance produced; computed once per instance."""

    def __init__(self, schema: Schema):
        registry = _registry_for(schema)
        visitor = SchemaVisitor(registry)
        self.root: RecordPlan = visitor.visit_record(schema)
        self.records = list(visitor.records.values())
        self.avro = avro_schema(self.root)
        # the model every part shares: its fingerprint names the codec
        try:
            self.schema = parse_schema(self.avro)
        except SchemaError as error:
            raise CompileError(f"{type(schema).__name__}: the Avro schema written for it is "
                               f"not valid: {error}") from None
        self.fingerprint = self.schema.fingerprint_hex
        # for the paths through marshmallow: raw Avro values, which encoders
        # map to marshmallow's load input (load_input) and from its dump
        # output (dump_datum)
        raw = without_logical_types(self.avro)
        self.parsed_raw = fastavro.parse_schema(copy.deepcopy(raw))
        self.parsed_raw_many = fastavro.parse_schema({"type": "array", "items": raw})
        # Features the compiled path does not implement yet take marshmallow's
        # own path for that direction, so results stay exactly marshmallow's.
        self.dump_reasons = visitor.dump_needs_marshmallow
        self.root_pre_dump = visitor.root_pre_dump
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
    #: the flags of the attached codec (read_file pays for records with its item_allowance)
    _roasted_flags: CompileFlags | None = None

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

    @property
    def avro_model(self) -> AvroSchema:
        """The same schema as :class:`roastedavro.avro.Schema` (canonical form, fingerprints)."""
        return self._plan().schema

    # -- compiling ----------------------------------------------------------

    def _label(self) -> str:
        return f"{type(self).__module__}.{type(self).__qualname__}"

    def compile_to_string(self, flags: CompileFlags | None = None) -> str:
        """The Cython source that :meth:`compile` builds."""
        plan = self._plan()
        return generate_module(plan.root, plan.records, self._label(),
                               (flags or CompileFlags()).build_key(), plan.fingerprint).source

    def compile(self, flags: CompileFlags | None = None, *, build: str = "here") -> CompiledSchema:
        """Generate, build (or load from the cache) and attach the codec.

        ``build`` says where a codec missing from the compile cache is built:
        ``"here"`` (the default), ``"child"`` (a child Python process) or
        ``"never"`` (raise :class:`roastedavro.errors.NotCompiledError`).
        """
        flags = flags or CompileFlags()
        # "never" does not wait for a build under way in another thread
        if not self._roasted_lock.acquire(blocking=build != "never"):
            raise NotCompiledError(f"{self._label()} is being compiled by another thread")
        try:
            plan = self._plan()
            generated = generate_module(plan.root, plan.records, self._label(),
                                        flags.build_key(), plan.fingerprint)
            module = compiler.load(generated.source, flags, verify=generated.verify,
                                   fingerprint=plan.fingerprint, build=build,
                                   label=f"the CompiledSchema {self._label()}")
            codec = module.Codec(generated.bindings, flags.max_depth, flags.max_items,
                                 flags.item_allowance)
            self._bind_entry_points(codec, flags)
            self._roasted_flags = flags
            self._roasted_codec = codec
        finally:
            self._roasted_lock.release()
        return self

    def _attach(self) -> None:
        if self._roasted_codec is None:
            self.compile()

    def _bind_entry_points(self, codec, flags: CompileFlags) -> None:
        plan = self._plan()
        load_reasons = [
            (where, what) for where, what in plan.load_reasons
            if flags.validate or what not in VALIDATION
        ]
        codec.many = bool(self.many)
        codec.dump_with_marshmallow = self._dump_with_marshmallow
        codec.dump_through_marshmallow = bool(plan.dump_reasons) or plan.root_pre_dump
        # the compiled reader always checks the bytes; marshmallow makes the
        # result when the schema needs it, or reports a value it refuses
        codec.load_with_marshmallow = self._load_with_marshmallow
        codec.transcode = partial(_transcode, plan.schema, flags, {})
        codec.load_through_marshmallow = bool(load_reasons)
        codec.validate = flags.validate
        hooks = LoadHooks(self)
        codec.load_hooks = hooks if hooks else None
        # From now on the codec's own methods are this instance's
        # dump_compiled/load_compiled: no Python frame between the caller and
        # the generated code.
        self.dump_compiled = codec.dump
        self.load_compiled = codec.load

    # -- dump and load ------------------------------------------------------

    def dump_compiled(self, obj: Any, many: bool | None = None) -> bytes:
        """Avro binary of ``obj``: ``fastavro.schemaless_writer(avro_schema(), dump(obj))``.

        ``many=True`` writes a list of records as one Avro array. Raises
        ``marshmallow.ValidationError`` naming the field path when a value
        cannot be written. Compiles the schema on first use.
        """
        self._attach()
        return self.dump_compiled(obj, many)

    def load_compiled(self, data, many: bool | None = None, writer_schema: Any = None) -> Any:
        """The loaded value of Avro binary ``data``, as marshmallow's ``load`` returns it.

        ``writer_schema`` (an Avro schema as dict, JSON text or
        :class:`roastedavro.avro.Schema`, or another CompiledSchema) reads data
        written with another version of the schema: the bytes are resolved
        to this schema's by a reader compiled for the pair (see AvroCodec),
        then loaded. Malformed bytes raise :class:`roastedavro.DecodeError`
        with the offset; a writer schema whose data this schema cannot read
        raises :class:`roastedavro.SchemaResolutionError`. Compiles the schema
        on first use.
        """
        self._attach()
        return self.load_compiled(data, many, writer_schema)

    # -- container files ------------------------------------------------------

    def write_file(self, fo, objs, codec: str = "null", **options: Any) -> None:
        """Write ``objs`` to ``fo`` as an Avro object container file of
        :meth:`avro_schema`, each record as :meth:`dump_compiled` writes it
        (validation and hooks included), a block at a time.

        ``codec`` and the options are :class:`roastedavro.container.FileWriter`'s
        (``sync_interval``, ``metadata``, ``sync_marker``, ``codec_compression_level``).
        """
        from roastedavro.container import FileWriter

        writer = FileWriter(fo, self.avro_model, codec,
                            encode_block=partial(_block_of_records, self), **options)
        writer.write_many(objs)
        writer.close()

    def read_file(self, fo, **options: Any):
        """The records of an Avro container file, each as :meth:`load_compiled`
        returns it, a block at a time. A file written with another version
        of the schema is read by resolution (``writer_schema``). The options
        are :class:`roastedavro.container.FileReader`'s (``max_block_size``,
        ``on_damage``)."""
        from roastedavro.container import ContainerError, FileReader

        self._attach()
        options.setdefault("flags", self._roasted_flags)
        reader = FileReader(fo, **options)
        written = reader.writer_schema
        same = written.canonical_form() == self.avro_model.canonical_form()
        for block in reader.blocks():
            data = reader.decompress(block)
            # the file's records are paid for from one budget, as FileReader's
            # own decoder does (the compiled reader holds each block's items to
            # the message budget)
            reader.charge_records(block, len(data))
            # the block's records framed as one Avro array: many=True reads it
            framed = encode_long(block.count) + data + b"\x00" if block.count else b"\x00"
            try:
                records = self.load_compiled(framed, True, None if same else written)
            except DecodeError as error:
                raise ContainerError(f"its records cannot be read: {error.reason}",
                                     block.offset, block.number) from None
            yield from records

    def _dump_with_marshmallow(self, obj: Any, many: bool) -> bytes:
        plan = self._plan()
        if not plan.dump_reasons:
            # only this schema's own pre_dump hooks: run them as marshmallow's
            # dump does, then the compiled writer
            processed = self._invoke_dump_processors(PRE_DUMP, obj, many=many, original_data=obj)
            return self._roasted_codec.dump_records(processed, many)
        # post_dump or hooks on nested schemas: marshmallow's dump output,
        # mapped back to Avro values the way the compiled writer writes them
        return self._dump_uncompiled(obj, many)

    def _dump_uncompiled(self, obj: Any, many: bool = False) -> bytes:
        """What dump_compiled writes, without the compiled codec: marshmallow's
        ``dump``, then fastavro (the path of schemas that are not compiled yet)."""
        plan = self._plan()
        try:
            dumped = self.dump(obj, many=many)
            if many:
                datum = each_in_path(partial(record_dump_datum, plan.root), dumped)
            else:
                datum = record_dump_datum(plan.root, dumped)
        except RecursionError:
            raise _too_deep("dump") from None
        out = io.BytesIO()
        try:
            fastavro.schemaless_writer(out, plan.parsed_raw_many if many else plan.parsed_raw, datum)
        except (TypeError, ValueError, AttributeError, OverflowError, KeyError) as error:
            raise ValidationError({"_schema": [f"Cannot write as Avro: {error}"]}) from None
        return out.getvalue()

    def _load_with_marshmallow(self, data, many: bool) -> Any:
        # The compiled reader has already checked the bytes from start to end.
        plan = self._plan()
        raw = fastavro.schemaless_reader(
            io.BytesIO(bytes(data)), plan.parsed_raw_many if many else plan.parsed_raw, None)
        return self._load_datum(raw, many)

    def _load_datum(self, raw: Any, many: bool = False) -> Any:
        """marshmallow's ``load`` of a datum as fastavro reads this schema's
        bytes (what load_compiled returns, without the compiled codec)."""
        plan = self._plan()
        try:
            if many:
                return self.load([record_load_input(plan.root, item) for item in raw], many=True)
            return self.load(record_load_input(plan.root, raw))
        except RecursionError:
            raise _too_deep("load") from None


def _block_of_records(schema: CompiledSchema, objs: list) -> bytes:
    """Records as a container block holds them: many=True's Avro array
    without its count and its end."""
    data = schema.dump_compiled(objs, True)
    if not objs:
        return b""
    return data[len(encode_long(len(objs))):-1]


def _transcode(schema: AvroSchema, flags: CompileFlags, codecs: dict, data, writer_schema: Any,
               many: bool) -> bytes:
    """``data``, written with ``writer_schema``, as this schema's bytes: read
    by the pair's resolving AvroCodec, written by this schema's AvroCodec."""
    from roastedavro.codec import AvroCodec

    if isinstance(writer_schema, CompiledSchema) or (
            isinstance(writer_schema, type) and issubclass(writer_schema, CompiledSchema)):
        writer = writer_schema().avro_model if isinstance(writer_schema, type) \
            else writer_schema.avro_model
    elif isinstance(writer_schema, AvroSchema):
        writer = writer_schema
    else:
        writer = parse_schema(writer_schema)
    key = (writer.to_json(), many)
    pair = codecs.get(key)
    if pair is None:
        if len(codecs) >= 256:  # a bound for callers that make up schemas
            codecs.clear()
        reader = schema
        if many:  # many records are one Avro array of them
            writer = parse_schema({"type": "array", "items": writer.to_dict()})
            reader = parse_schema({"type": "array", "items": schema.to_dict()})
        pair = codecs[key] = (AvroCodec(reader, flags, writer_schema=writer), AvroCodec(reader, flags))
    return pair[1].dump(pair[0].load(data))


def _too_deep(direction: str) -> ValidationError:
    # marshmallow nests a Python call chain per record level: data nested
    # within the codec's max_depth may still exceed Python's recursion limit
    # there. That is a ValidationError, never a RecursionError.
    return ValidationError({"_schema": [
        f"Records are nested too deeply for marshmallow's {direction}, which this schema "
        f"needs (hooks or a failed validation); Python's recursion limit is "
        f"{sys.getrecursionlimit()}."]})
