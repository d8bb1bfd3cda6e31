"""CompiledSchema: a marshmallow Schema with a compiled Avro codec."""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import sys
import threading
from functools import partial
from typing import Any

from marshmallow import Schema, ValidationError
from marshmallow.decorators import PRE_DUMP

from roastedavro import compiler, tiers
from roastedavro._tier0 import Interpreter, Rearranger, ResolvingInterpreter
from roastedavro._datum import encode_long
from roastedavro._support import decimal_bytes, fits_precision, formatted
from marshmallow.utils import missing as missing_value
from roastedavro.avro.parse import parse_schema
from roastedavro.avro.types import Schema as AvroSchema
from roastedavro.errors import CompileError, DatumError, DecodeError, DumpError, NotCompiledError, SchemaError
from roastedavro.codegen import NO_VALUE, generate_module
from roastedavro.encoders import EncoderRegistry, default_registry
from roastedavro.encoders.collections import each_in_path
from roastedavro.flags import CompileFlags
from roastedavro.hooks import LoadHooks
from roastedavro.visitor import (
    FieldPlan,
    RecordPlan,
    SchemaVisitor,
    avro_schema,
    record_dump_datum,
    record_load_input,
    without_logical_types,
)


log = logging.getLogger("roastedavro")

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
        # output (dump_datum), written and read by tier 0 over the schema
        # without its logical types (the same bytes)
        self.raw = without_logical_types(self.avro)
        self.raw_model = parse_schema(self.raw)
        self.raw_many_model = parse_schema({"type": "array", "items": self.raw})
        # a union of records is read as (record name, value), fastavro's
        # return_record_name (where it has more than one record): the name
        # is the branch marshmallow's load input names
        self.naming = (True, True, False, False) if visitor.record_unions else None
        self._interpreters: dict = {}
        #: per record (by id): its fields that are decimals or nested records
        #: holding some, which the uncompiled writer checks (see _unroundable)
        self.decimal_checks = _decimal_checks(self.root)
        self.has_decimals = bool(self.decimal_checks.get(id(self.root)))
        #: whether the raw schema has decimals on bytes or fixed, whose
        #: precision the compiled reader checks (see _wide_decimal)
        self.reads_decimals = '"precision"' in json.dumps(self.raw)
        self.decimal_scan = _DecimalScan(self.raw) if self.reads_decimals else None
        # Features the compiled path does not implement yet take marshmallow's
        # own path for that direction, so results stay exactly marshmallow's.
        self.dump_reasons = visitor.dump_needs_marshmallow
        self.root_pre_dump = visitor.root_pre_dump
        self.load_reasons = visitor.load_needs_marshmallow

    def interpreters(self, flags: CompileFlags, logical: bool = False) -> tuple[Interpreter, Interpreter]:
        """Tier 0 over the raw schema (``logical``: over the schema itself,
        which checks what the compiled reader checks), for one record and
        for many (an array of them), with the bounds of ``flags``."""
        key = (flags.max_depth, flags.max_items, flags.item_allowance, logical)
        pair = self._interpreters.get(key)
        if pair is None:
            if len(self._interpreters) >= 16:  # a bound for callers that vary flags
                self._interpreters.clear()
            if logical:
                many = parse_schema({"type": "array", "items": self.avro})
                pair = (Interpreter(self.schema, flags), Interpreter(many, flags))
            else:
                pair = (Interpreter(self.raw_model, flags, self.naming),
                        Interpreter(self.raw_many_model, flags, self.naming))
            self._interpreters[key] = pair
        return pair


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
    #: the uncompiled codec serving the schema where it cannot be compiled
    _roasted_uncompiled: Any = None
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
            self._roasted_uncompiled = None
        finally:
            self._roasted_lock.release()
        return self

    @property
    def tier(self) -> str | None:
        """What serves :meth:`dump_compiled` and :meth:`load_compiled`:
        ``"compiled"`` (the schema's compiled codec), ``"interpreter"``
        (marshmallow's ``dump``/``load`` with tier 0 writing and reading the
        bytes, where the schema cannot be compiled), or None before the
        first use has chosen."""
        if self._roasted_codec is not None:
            return "compiled"
        if self._roasted_uncompiled is not None:
            return "interpreter"
        return None

    def _attach(self) -> None:
        """Choose the tier on first use: compile (policy ``eager``, the
        default for marshmallow schemas: their uncompiled path runs at
        marshmallow's speed), else a precompiled or cached codec, else the
        uncompiled path (``ROASTEDAVRO_COMPILE=never``, or no C compiler)."""
        if self._roasted_codec is not None or self._roasted_uncompiled is not None:
            return
        policy = tiers.compile_policy(None, default="eager")
        # "hot" compiles at once too: nothing here would repay waiting
        if policy != "never" and tiers.can_compile():
            self.compile()
            return
        try:
            self.compile(build="never")
            return
        except NotCompiledError:
            pass
        if policy != "never":
            _tell_no_compiler(self._label())
        flags = CompileFlags()
        with self._roasted_lock:
            if self._roasted_codec is not None or self._roasted_uncompiled is not None:
                return
            uncompiled = _Uncompiled(self, flags)
            self._roasted_flags = flags
            self._roasted_uncompiled = uncompiled
            self.dump_compiled = uncompiled.dump
            self.load_compiled = uncompiled.load

    def _bind_entry_points(self, codec, flags: CompileFlags) -> None:
        plan = self._plan()
        load_reasons = [
            (where, what) for where, what in plan.load_reasons
            if flags.validate or what not in VALIDATION
        ]
        hooks = LoadHooks(self)
        switches = EntryPoints(
            many=bool(self.many),
            validate=flags.validate,
            load_hooks=hooks if hooks else None,
            load_through_marshmallow=bool(load_reasons),
            dump_through_marshmallow=bool(plan.dump_reasons) or plan.root_pre_dump,
            dump_with_marshmallow=self._dump_with_marshmallow,
        )
        # the compiled reader always checks the bytes; marshmallow makes the
        # result when the schema needs it, or reports a value it refuses
        switches.bind(codec, partial(self._load_with_marshmallow, flags=flags, checked=True))
        codec.pairs = partial(_pair_for, plan.schema, flags, _Pairs(self, codec, switches))
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
        cannot be written. Compiles the schema on first use; where it cannot
        be compiled (see :attr:`tier`), writes the same bytes through
        marshmallow's ``dump`` and tier 0.
        """
        self._attach()
        return self.dump_compiled(obj, many)

    def load_compiled(self, data, many: bool | None = None, writer_schema: Any = None) -> Any:
        """The loaded value of Avro binary ``data``, as marshmallow's ``load`` returns it.

        ``writer_schema`` (an Avro schema as dict, JSON text or
        :class:`roastedavro.avro.Schema`, or another CompiledSchema) reads data
        written with another version of the schema: the bytes are
        rearranged into this schema's (fields moved, dropped, defaults
        added; see README "Schema evolution"), or where they need
        converting resolved by the pair's AvroCodec, then loaded. Malformed bytes raise :class:`roastedavro.DecodeError`
        with the offset; a writer schema whose data this schema cannot read
        raises :class:`roastedavro.SchemaResolutionError`. Compiles the schema
        on first use; where it cannot be compiled (see :attr:`tier`), tier 0
        reads the bytes and marshmallow's ``load`` makes the same result.
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
        return self._dump_uncompiled(obj, many, self._roasted_flags)

    def _dump_uncompiled(self, obj: Any, many: bool = False, flags: CompileFlags | None = None) -> bytes:
        """What dump_compiled writes, without the compiled codec: marshmallow's
        ``dump``, its output as Avro values (dump_datum), written by tier 0.
        Errors name the field path by attribute names, as the compiled
        writer's do."""
        plan = self._plan()
        # without dump hooks this stands in for the compiled writer: it
        # refuses a Decimal marshmallow's dump would round to its places, and
        # reports the first wrong value in the order that writer meets them
        # (with hooks the compiled codec writes marshmallow's output too)
        standing_in = not (plan.dump_reasons or plan.root_pre_dump)
        unroundable = False
        if standing_in and plan.has_decimals:
            unroundable = any(_unroundable(self, plan.root, item, plan.decimal_checks) is not None
                              for item in (_items(obj) if many else [obj]))
        try:
            if not unroundable:
                return self._write_uncompiled(obj, many, flags)
        except ValidationError:
            if not standing_in:
                raise
            first = self._first_refused(obj, many, flags)
            if first is None:
                raise
            raise ValidationError(first) from None
        first = self._first_refused(obj, many, flags)
        raise ValidationError(first or {"_schema": ["Cannot be written."]})

    def _first_refused(self, obj: Any, many: bool, flags: CompileFlags | None) -> dict | None:
        """The compiled writer's error for ``obj``: each field taken on its
        own (marshmallow's serialization, the Decimal check, the Avro value),
        a refused one marked where it stands, then tier 0 finds the first
        wrong value in write order. None when nothing is refused."""
        plan = self._plan()
        one = plan.interpreters(flags or CompileFlags())[0]
        try:
            for index, item in enumerate(_items(obj)) if many else [(None, obj)]:
                found = _first_refused_in(self, plan, one, item)
                if found is not None:
                    return found if index is None else {index: found}
        except (RecursionError, DumpError):
            return None
        return None

    def _write_uncompiled(self, obj: Any, many: bool, flags: CompileFlags | None) -> bytes:
        plan = self._plan()
        one, array = plan.interpreters(flags or CompileFlags())
        try:
            try:
                dumped = self.dump(obj, many=many)
            except ValidationError:
                raise
            except (TypeError, ValueError, AttributeError, KeyError, ArithmeticError) as error:
                # marshmallow's own conversions raise these: find the field
                raise _dump_error_of(self, plan.root, obj, many, error) from None
            try:
                if many:
                    datum = each_in_path(partial(record_dump_datum, plan.root), dumped)
                else:
                    datum = record_dump_datum(plan.root, dumped)
            except ValidationError as error:
                raise ValidationError(_renamed(error.messages, plan.root, many,
                                               standing_in=not plan.dump_reasons)) from None
        except RecursionError:
            raise _too_deep("dump", self._roasted_codec is None) from None
        try:
            return array.dump(datum) if many else one.dump(datum)
        except DatumError as error:
            messages: Any = [_datum_message(plan.root, datum, error.path, many) or error.reason]
            for part in reversed(_attribute_path(plan.root, error.path, many)):
                messages = {part: messages}
            raise ValidationError(messages) from None

    def _load_with_marshmallow(self, data, many: bool, flags: CompileFlags | None = None,
                               checked: bool = False) -> Any:
        """marshmallow's ``load`` of Avro binary ``data`` of this schema, read
        by tier 0. Unless the compiled reader has ``checked`` them, the bytes
        are checked as it checks them (logical types, a decimal's precision):
        DecodeError with the offset of the first wrong value."""
        plan = self._plan()
        flags = flags or CompileFlags()
        if not checked:
            check = plan.interpreters(flags, logical=True)[1 if many else 0]
            try:
                check.load(data)
            except DecodeError as error:
                wide = _wide_decimal(plan, data, many, error.offset) if plan.reads_decimals else None
                if wide is not None:
                    raise wide from None
                raise
        one, array = plan.interpreters(flags)
        raw = array.load(data) if many else one.load(data)
        if not checked and plan.reads_decimals and plan.decimal_scan.maybe_wide(raw, many):
            wide = _wide_decimal(plan, data, many, None)
            if wide is not None:
                raise wide
        return self._load_datum(raw, many)

    def _load_datum(self, raw: Any, many: bool = False) -> Any:
        """marshmallow's ``load`` of a datum as tier 0 reads this schema's raw
        bytes (what load_compiled returns, without the compiled codec)."""
        plan = self._plan()
        try:
            if many:
                return self.load([record_load_input(plan.root, item) for item in raw], many=True)
            return self.load(record_load_input(plan.root, raw))
        except RecursionError:
            raise _too_deep("load", self._roasted_codec is None) from None


class _Uncompiled:
    """dump_compiled and load_compiled of a schema that cannot be compiled:
    marshmallow's dump and load for the values (hooks, validation, errors),
    tier 0 for the bytes, with the compiled codec's results."""

    def __init__(self, schema: CompiledSchema, flags: CompileFlags):
        self.schema = schema
        self.flags = flags
        self.many = bool(schema.many)
        plan = schema._plan()
        # the compiled writer's own check, where it does not dump through marshmallow
        self.check_single = not (plan.dump_reasons or plan.root_pre_dump)
        self.codecs = _Pairs()

    def dump(self, obj: Any, many: bool | None = None) -> bytes:
        if many is None:
            many = self.many
        if not many and self.check_single and type(obj) is list:
            raise ValidationError({"_schema": [
                "Expected a single record, got a list; pass many=True to write a list of records."]})
        return self.schema._dump_uncompiled(obj, bool(many), self.flags)

    def load(self, data, many: bool | None = None, writer_schema: Any = None) -> Any:
        if many is None:
            many = self.many
        if writer_schema is not None:
            data = _pair_for(self.schema._plan().schema, self.flags, self.codecs,
                             writer_schema, bool(many), compile="never")[0].transcode(data)
        return self.schema._load_with_marshmallow(data, bool(many), self.flags)


_told_no_compiler = False


def _tell_no_compiler(label: str) -> None:
    global _told_no_compiler
    if not _told_no_compiler:
        _told_no_compiler = True
        log.warning("CompiledSchema %s and others are served without compiling (marshmallow's "
                    "dump and load, tier 0 for the bytes): %s", label, compiler.compiler_missing())


def _record_plans(value: Any) -> list:
    """The record plans a field's value plan leads to, without passing one."""
    found, seen, stack = [], set(), [value]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, RecordPlan):
            found.append(item)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif hasattr(item, "__dict__") and not isinstance(item, (Schema, type)) and \
                type(item).__module__.startswith("roastedavro"):
            stack.extend(v for k, v in vars(item).items()
                         if k not in ("visitor", "field") and not callable(v))
    return found


def _attribute_path(root: RecordPlan, path: tuple, many: bool) -> list:
    """An error path of Avro names (data_key) as the compiled writer names
    it: record fields by their attribute names, indexes and keys as they are."""
    parts = list(path)
    result = []
    records = [root]
    if many and parts and isinstance(parts[0], int):
        result.append(parts.pop(0))
    for part in parts:
        field = None
        if isinstance(part, str):
            for record in records:
                field = next((f for f in record.fields if f.avro_name == part), None)
                if field is not None:
                    break
        if field is None:
            result.append(part)
            continue
        result.append(field.name)
        records = _record_plans(field.value) or records
    return result


def _renamed(messages: Any, root: RecordPlan, many: bool, standing_in: bool = False) -> Any:
    """record_dump_datum's messages, keyed by attribute names. ``standing_in``
    for the compiled writer (no dump hooks): a field the object has no value
    for is reported as that writer reports it (NO_VALUE), not as a post_dump
    output that left it out."""
    def walk(node, records, field=None):
        if not isinstance(node, dict):
            if standing_in and field is not None and node == [field.error_messages["required"]]:
                return [NO_VALUE]
            return node
        out = {}
        for key, value in node.items():
            field = None
            if isinstance(key, str):
                for record in records:
                    field = next((f for f in record.fields if f.avro_name == key), None)
                    if field is not None:
                        break
            if field is None:
                out[key] = walk(value, records)
            else:
                out[field.name] = walk(value, _record_plans(field.value) or records, field.field)
        return out

    if many and isinstance(messages, dict):
        return {key: walk(value, [root]) for key, value in messages.items()}
    return walk(messages, [root])


def _dump_error_of(schema: Schema, record: RecordPlan, obj: Any, many: bool,
                   error: Exception) -> ValidationError:
    """The ValidationError for an exception out of marshmallow's dump: the
    first field (by the schema's order, into nested schemas) whose own
    serialization raises, named by its path."""
    if many:
        for index, item in enumerate(obj):
            found = _failing_field(schema, record, item)
            if found is not None:
                return ValidationError({index: found})
    else:
        found = _failing_field(schema, record, obj)
        if found is not None:
            return ValidationError(found)
    return ValidationError({"_schema": [f"Cannot be serialized: {error}"]})


def _failing_field(schema: Schema, record: RecordPlan, obj: Any) -> dict | None:
    for plan in record.fields:
        field = plan.field
        if field.load_only:
            continue
        try:
            field.serialize(plan.name, obj, accessor=schema.get_attribute)
            continue
        except ValidationError as error:
            return {plan.name: error.messages}
        except (TypeError, ValueError, AttributeError, KeyError, ArithmeticError) as error:
            failure = error
        try:
            value = field.get_value(obj, plan.dump_key, accessor=schema.get_attribute)
        except Exception:  # noqa: BLE001 - reported as the field's own failure
            value = None
        inner = None
        if value is not None:
            inner = _failing_value(field, value, _record_plans(plan.value), obj)
        if inner is None:
            inner = [_serialize_message(field, value, failure)]
        return {plan.name: inner}
    return None


def _serialize_message(field: Any, value: Any, failure: Exception) -> str:
    """The compiled writer's message for a value the field's own
    serialization refuses (roastedavro._support's conversions)."""
    from marshmallow import fields as mm_fields

    messages = field.error_messages
    if isinstance(field, mm_fields.Pluck):
        # a value without the plucked key: as the compiled writer's lookup says
        plucked = field.schema.fields.get(field.field_name)
        return (plucked or field).error_messages["required"]
    if isinstance(field, mm_fields.Nested) and field.many:
        return "Not a valid list."      # roastedavro._support.as_list
    if isinstance(field, mm_fields.Enum) and "unknown" in messages:
        return formatted(messages["unknown"], choices=getattr(field, "choices_text", ""))
    if isinstance(field, mm_fields.Tuple):
        try:
            if len(tuple(value)) != len(field.tuple_fields):
                return f"Length must be {len(field.tuple_fields)}."
        except TypeError:
            pass
    message = messages.get("invalid")
    if message is None:
        return f"Cannot be serialized: {failure}"
    return formatted(message, obj_type=getattr(field, "OBJ_TYPE", "value"), input=value)


def _failing_value(field: Any, value: Any, records: list, obj: Any) -> Any:
    """The messages for the part of ``value`` the field cannot serialize
    (an item of a list, a value of a dict, a field of a nested record), as
    the compiled writer nests them; None where no part can be named."""
    from marshmallow import fields as mm_fields

    def record_of(nested_schema):
        for record in records:
            if record.schema is nested_schema or type(record.schema) is type(nested_schema):
                return record
        return records[0] if records else None

    try:
        if isinstance(field, mm_fields.Pluck):
            return None
        if isinstance(field, mm_fields.Nested):
            record = record_of(field.schema)
            if record is None:
                return None
            if field.many:
                for index, item in enumerate(value):
                    found = _failing_field(field.schema, record, item)
                    if found is not None:
                        return {index: found}
                return None
            return _failing_field(field.schema, record, value)
        if isinstance(field, mm_fields.List):
            for index, item in enumerate(value):
                found = _failing_item(field.inner, item, records, obj)
                if found is not None:
                    return {index: found}
            return None
        if isinstance(field, mm_fields.Tuple):
            if len(tuple(value)) != len(field.tuple_fields):
                return None
            for index, (inner, item) in enumerate(zip(field.tuple_fields, value)):
                found = _failing_item(inner, item, records, obj)
                if found is not None:
                    return {index: found}
            return None
        if isinstance(field, mm_fields.Dict):
            for key, item in value.items():
                if field.key_field is not None:
                    found = _failing_item(field.key_field, key, records, obj)
                    if found is not None:
                        return {key: {"key": found}}
                if field.value_field is not None:
                    found = _failing_item(field.value_field, item, records, obj)
                    if found is not None:
                        return {key: {"value": found}}
            return None
    except (TypeError, ValueError, AttributeError, KeyError, ArithmeticError):
        return None
    return None


def _failing_item(field: Any, value: Any, records: list, obj: Any) -> Any:
    if value is None:
        return None
    try:
        field._serialize(value, field.name, obj)
        return None
    except ValidationError as error:
        return error.messages
    except (TypeError, ValueError, AttributeError, KeyError, ArithmeticError) as error:
        return _failing_value(field, value, records, obj) or [
            _serialize_message(field, value, error)]


def _decimal_encoder(value: Any) -> Any:
    from roastedavro.encoders.logical import DecimalEncoder

    encoder = getattr(value, "encoder", value)
    return encoder if isinstance(encoder, DecimalEncoder) else None


class _Stop(Exception):
    pass


def _wide_decimal(plan: _Plan, data, many: bool, until: int | None) -> DecodeError | None:
    """The compiled reader's DecodeError for the first decimal (on bytes or
    fixed) with more digits than its precision, before byte ``until``
    (None: anywhere): tier 0 reads decimals exactly, as plain Avro does. The
    bytes are walked in Python, positions only; None if there is none, or
    where the walk cannot go on (bytes tier 0 refused after ``until``)."""
    view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    end = len(view) if until is None else min(until, len(view))
    named: dict = {}
    pos = 0

    def varint() -> int:
        nonlocal pos
        shift = result = 0
        while True:
            if pos >= end or shift > 63:
                raise _Stop
            byte = view[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return (result >> 1) ^ -(result & 1)

    def skip(n: int) -> None:
        nonlocal pos
        if n < 0 or pos + n > end:
            raise _Stop
        pos += n

    def walk(schema: Any) -> None:
        nonlocal pos
        if isinstance(schema, str):
            if schema in named:
                return walk(named[schema])
            kind = schema
            schema = {"type": kind}
        elif isinstance(schema, list):
            index = varint()
            if not 0 <= index < len(schema):
                raise _Stop
            return walk(schema[index])
        kind = schema["type"]
        if isinstance(kind, (dict, list)):
            return walk(kind)
        if kind in ("record", "error"):
            named.setdefault(schema["name"], schema)
            for field in schema["fields"]:
                walk(field["type"])
        elif kind == "null":
            pass
        elif kind == "boolean":
            skip(1)
        elif kind in ("int", "long", "enum"):
            if kind == "enum":
                named.setdefault(schema["name"], schema)
            varint()
        elif kind == "float":
            skip(4)
        elif kind == "double":
            skip(8)
        elif kind in ("bytes", "string", "fixed"):
            if kind == "fixed":
                named.setdefault(schema["name"], schema)
            start = pos
            n = schema["size"] if kind == "fixed" else varint()
            if n < 0 or pos + n > end:
                raise _Stop
            precision = schema.get("precision")
            if type(precision) is int and kind != "string":
                if kind == "bytes" and n > (int(precision * 3.3220) + 1 + 8) // 8:
                    raise _Wide(precision, schema.get("scale", 0), start)
                unscaled = int.from_bytes(view[pos:pos + n], "big", signed=True)
                if not fits_precision(unscaled, precision):
                    raise _Wide(precision, schema.get("scale", 0), start)
            pos += n
        elif kind in ("array", "map"):
            while True:
                count = varint()
                if count == 0:
                    break
                if count < 0:
                    count = -count
                    varint()       # the block's size in bytes
                for _ in range(count):
                    if kind == "map":
                        skip(varint())
                    walk(schema["items"] if kind == "array" else schema["values"])
        else:
            raise _Stop

    try:
        walk({"type": "array", "items": plan.raw} if many else plan.raw)
    except _Wide as wide:
        return DecodeError(f"decimal value has more digits than decimal({wide.args[0]}, "
                           f"{wide.args[1]}) allows", wide.args[2])
    except (_Stop, RecursionError, KeyError, TypeError, IndexError):
        return None
    return None


class _Wide(Exception):
    pass


class _DecimalScan:
    """Whether a raw datum may hold a decimal wider than its precision (or
    longer than the compiled reader reads): a filter for the exact walk of
    the bytes (_wide_decimal), which visits only the parts of the schema
    that hold decimals; True where it cannot tell (a union of records)."""

    def __init__(self, raw: Any):
        self.named: dict = {}
        self._collect(raw)
        self.raw = raw
        self._holds: dict = {}

    def _collect(self, schema: Any) -> None:
        stack = [schema]
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, dict):
                kind = item.get("type")
                if kind in ("record", "error", "enum", "fixed") and "name" in item:
                    self.named.setdefault(item["name"], item)
                if kind in ("record", "error"):
                    stack.extend(f["type"] for f in item["fields"])
                elif kind == "array":
                    stack.append(item["items"])
                elif kind == "map":
                    stack.append(item["values"])
                elif isinstance(kind, (dict, list)):
                    stack.append(kind)

    def _resolve(self, schema: Any) -> Any:
        while True:
            if isinstance(schema, str):
                schema = self.named.get(schema, {"type": schema})
            elif isinstance(schema, dict) and isinstance(schema.get("type"), (dict, list)):
                schema = schema["type"]
            else:
                return schema

    def holds(self, schema: Any) -> bool:
        schema = self._resolve(schema)
        key = id(schema)
        if key in self._holds:
            return self._holds[key]
        self._holds[key] = False    # a recursive reference while deciding
        if isinstance(schema, list):
            result = any(self.holds(branch) for branch in schema)
        else:
            kind = schema.get("type")
            if kind in ("bytes", "fixed"):
                result = type(schema.get("precision")) is int
            elif kind in ("record", "error"):
                result = any(self.holds(f["type"]) for f in schema["fields"])
            elif kind == "array":
                result = self.holds(schema["items"])
            elif kind == "map":
                result = self.holds(schema["values"])
            else:
                result = False
        self._holds[key] = result
        return result

    def maybe_wide(self, datum: Any, many: bool) -> bool:
        check = self._check
        if check is None:
            check = self._check = self._compile(self.raw, {})
        try:
            if many:
                return any(check(item) for item in datum)
            return check(datum)
        except RecursionError:
            return True

    _check = None

    def _compile(self, schema: Any, made: dict):
        """A function of a raw value: True where it may hold a wide decimal."""
        schema = self._resolve(schema)
        if not self.holds(schema):
            return _never
        key = id(schema)
        if key in made:     # a recursive reference: called through its cell
            cell = made[key]
            return lambda value: cell[0](value)
        cell = made[key] = [None]
        if isinstance(schema, list):
            branches = [b for b in schema if self.holds(b)]
            if len(branches) > 1:
                def check(value):
                    return value is not None
            else:
                inner = self._compile(branches[0], made)

                def check(value):
                    return value is not None and inner(value)
        else:
            kind = schema["type"]
            if kind in ("bytes", "fixed"):
                precision = schema["precision"]
                longest = (int(precision * 3.3220) + 1 + 8) // 8 if kind == "bytes" else 1 << 62

                def check(value):
                    return type(value) is bytes and (len(value) > longest or not fits_precision(
                        int.from_bytes(value, "big", signed=True), precision))
            elif kind in ("record", "error"):
                parts = [(f["name"], self._compile(f["type"], made)) for f in schema["fields"]
                         if self.holds(f["type"])]

                def check(value):
                    if type(value) is not dict:
                        return False
                    for name, part in parts:
                        if part(value.get(name)):
                            return True
                    return False
            elif kind == "array":
                items = self._compile(schema["items"], made)

                def check(value):
                    return type(value) is list and any(items(item) for item in value)
            else:   # map
                values = self._compile(schema["values"], made)

                def check(value):
                    return type(value) is dict and any(values(item) for item in value.values())
        cell[0] = check
        return check


def _never(value) -> bool:
    return False


def _items(obj: Any) -> list:
    """The records of many=True, as the compiled writer takes them."""
    if type(obj) is list:
        return obj
    try:
        return list(obj)
    except TypeError:
        raise DumpError("Not a valid list.") from None


class _Refused:
    """A value marked as refused (its messages) in the datum tier 0 writes
    to find the first wrong value."""

    __slots__ = ("messages",)

    def __init__(self, messages):
        self.messages = messages


def _first_refused_in(schema: CompiledSchema, plan: _Plan, interpreter, obj: Any) -> dict | None:
    datum = _datum_marking(schema, plan, plan.root, obj, 0)
    try:
        interpreter.dump(datum)
        return None
    except DatumError as error:
        value, prefix = datum, []
        for part in error.path:
            try:
                value = value[part]
            except (KeyError, IndexError, TypeError):
                break
            prefix.append(part)
            if isinstance(value, _Refused):
                messages = value.messages
                for name in reversed(_attribute_path(plan.root, tuple(prefix), False)):
                    messages = {name: messages}
                return messages
        messages = [_datum_message(plan.root, datum, error.path, False) or error.reason]
        for part in reversed(_attribute_path(plan.root, error.path, False)):
            messages = {part: messages}
        return messages


def _datum_marking(schema: Schema, plan: _Plan, record: RecordPlan, obj: Any, depth: int) -> dict:
    """The Avro record of ``obj`` field by field, each value the writer
    refuses replaced by a _Refused; nested records are followed."""
    from marshmallow import fields as mm_fields

    if depth > 200:
        raise DumpError("too deep")
    datum = {}
    checks = {entry[0].name: entry for entry in plan.decimal_checks.get(id(record), ())}
    for field_plan in record.fields:
        field = field_plan.field
        name = field_plan.avro_name
        if not field.load_only:
            try:
                value = field.get_value(obj, field_plan.dump_key, accessor=schema.get_attribute)
            except Exception:  # noqa: BLE001 - serialize below reports it
                value = missing_value
            nested = None
            if isinstance(field, mm_fields.Nested) and not isinstance(field, mm_fields.Pluck) \
                    and value is not None and value is not missing_value:
                nested = next((r for r in _record_plans(field_plan.value)
                               if type(r.schema) is type(field.schema)), None)
            if nested is not None:
                if field.many:
                    try:
                        items = list(value)
                    except TypeError:
                        datum[name] = _Refused(["Not a valid list."])
                        continue
                    datum[name] = [_datum_marking(field.schema, plan, nested, item, depth + 1)
                                   for item in items]
                else:
                    datum[name] = _datum_marking(field.schema, plan, nested, value, depth + 1)
                continue
            entry = checks.get(field_plan.name)
            if entry is not None and entry[1] is not None and value is not None \
                    and value is not missing_value:
                encoder = entry[1]
                try:
                    decimal_bytes(field, value, obj, encoder.scale, encoder.precision, encoder.size)
                except DumpError as error:
                    datum[name] = _Refused(error.messages)
                    continue
        datum[name] = _field_datum(schema, field_plan, obj)
    return datum


_single_field_records: dict = {}


def _field_datum(schema: Schema, field_plan: FieldPlan, obj: Any) -> Any:
    """One field's Avro value as the uncompiled writer makes it, or a _Refused."""
    field = field_plan.field
    dumped = {}
    if not field.load_only:
        try:
            value = field.serialize(field_plan.name, obj, accessor=schema.get_attribute)
        except ValidationError as error:
            return _Refused(error.messages)
        except (TypeError, ValueError, AttributeError, KeyError, ArithmeticError) as error:
            try:
                raw = field.get_value(obj, field_plan.dump_key, accessor=schema.get_attribute)
            except Exception:  # noqa: BLE001 - reported as the field's own failure
                raw = None
            found = None
            if raw is not None:
                found = _failing_value(field, raw, _record_plans(field_plan.value), obj)
            return _Refused(found or [_serialize_message(field, raw, error)])
        if value is not missing_value:
            dumped[field_plan.avro_name] = value
    single = _single_field_records.get(id(field_plan))
    if single is None or single[0] is not field_plan:
        if len(_single_field_records) > 4096:
            _single_field_records.clear()
        single = _single_field_records[id(field_plan)] = (
            field_plan, RecordPlan(None, "single", None, "single", [field_plan]))
    try:
        return record_dump_datum(single[1], dumped)[field_plan.avro_name]
    except ValidationError as error:
        renamed = _renamed(error.messages, single[1], False, standing_in=True)
        return _Refused(renamed.get(field_plan.name, renamed) if isinstance(renamed, dict) else renamed)


def _decimal_checks(root: RecordPlan) -> dict:
    """For each record reachable from ``root`` (by id), the fields to check
    before marshmallow's dump: (field plan, decimal encoder, None) for a
    Decimal field, (field plan, None, nested record) for a Nested field whose
    record holds Decimal fields, at any depth."""
    from marshmallow import fields as mm_fields

    fields_of: dict = {}
    stack = [root]
    while stack:
        record = stack.pop()
        if id(record) in fields_of:
            continue
        entries = []
        for plan in record.fields:
            if plan.field.load_only:
                continue
            encoder = _decimal_encoder(plan.value)
            if encoder is not None:
                entries.append((plan, encoder, None))
            elif isinstance(plan.field, mm_fields.Nested) and not isinstance(plan.field, mm_fields.Pluck):
                nested = [r for r in _record_plans(plan.value)
                          if type(r.schema) is type(plan.field.schema)]
                if nested:
                    entries.append((plan, None, nested[0]))
                    stack.append(nested[0])
        fields_of[id(record)] = entries
    # keep the nested records that lead to a decimal (a fixed point over cycles)
    holds = {key for key, entries in fields_of.items() if any(e[1] is not None for e in entries)}
    grown = True
    while grown:
        grown = False
        for key, entries in fields_of.items():
            if key not in holds and any(e[2] is not None and id(e[2]) in holds for e in entries):
                holds.add(key)
                grown = True
    return {key: [e for e in entries if e[1] is not None or id(e[2]) in holds]
            for key, entries in fields_of.items() if key in holds}


def _unroundable(schema: Schema, record: RecordPlan, obj: Any, checks: dict,
                 depth: int = 0) -> dict | None:
    """The compiled writer's error for a Decimal field's value (in this
    record or its nested records) that has more places than the field
    writes: marshmallow's dump would round it."""
    if depth > 100 or obj is None:
        return None
    for plan, encoder, nested in checks.get(id(record), ()):
        field = plan.field
        try:
            value = field.get_value(obj, plan.dump_key, accessor=schema.get_attribute)
        except Exception:  # noqa: BLE001 - marshmallow's dump reports it
            continue
        if value is None or value is missing_value:
            continue
        if encoder is not None:
            try:
                decimal_bytes(field, value, obj, encoder.scale, encoder.precision, encoder.size)
            except DumpError as error:
                return {plan.name: error.messages}
            continue
        try:
            items = list(enumerate(value)) if field.many else [(None, value)]
        except TypeError:
            continue
        for index, item in items:
            found = _unroundable(field.schema, nested, item, checks, depth + 1)
            if found is not None:
                return {plan.name: found if index is None else {index: found}}
    return None


def _datum_message(root: RecordPlan, datum: Any, path: tuple, many: bool) -> str | None:
    """The compiled writer's message where tier 0 refuses the value at
    ``path`` of the datum and the compiled writer words it otherwise: "Field
    may not be null." (the field's own message) for None, "Not valid
    bytes." for a Raw field's value."""
    from marshmallow import fields as mm_fields

    value, records, field = datum, [root], None
    parts = list(path)
    if many and parts and isinstance(parts[0], int):
        value = value[parts.pop(0)]
    try:
        for part in parts:
            value = value[part]
            found = None
            if isinstance(part, str):
                for record in records:
                    found = next((f for f in record.fields if f.avro_name == part), None)
                    if found is not None:
                        break
            if found is not None:
                field = found.field
                records = _record_plans(found.value) or records
    except (KeyError, IndexError, TypeError):
        return None
    if value is None:
        messages = getattr(field, "error_messages", None) or {}
        return messages.get("null", "Field may not be null.")
    if isinstance(field, mm_fields.Raw) and not isinstance(value, (bytes, bytearray, memoryview)):
        return "Not valid bytes."    # as roastedavro._support.as_bytes says
    return None


def _block_of_records(schema: CompiledSchema, objs: list) -> bytes:
    """Records as a container block holds them: many=True's Avro array
    without its count and its end."""
    data = schema.dump_compiled(objs, True)
    if not objs:
        return b""
    return data[len(encode_long(len(objs))):-1]


@dataclasses.dataclass(frozen=True)
class EntryPoints:
    """What a compiled codec of a schema (its own, or a one-pass pair's)
    takes from the schema: the marshmallow paths and the switches between
    them and the generated code (SchemaCodec's attributes)."""

    many: bool
    validate: bool
    load_hooks: Any
    load_through_marshmallow: bool
    dump_through_marshmallow: bool
    dump_with_marshmallow: Any

    def bind(self, codec: Any, load_with_marshmallow: Any) -> None:
        """Sets them on ``codec``, with marshmallow's load of the bytes the
        codec reads (``load_with_marshmallow(data, many)``)."""
        for field in dataclasses.fields(self):
            setattr(codec, field.name, getattr(self, field.name))
        codec.load_with_marshmallow = load_with_marshmallow


class _Pairs:
    """One reader schema's pair codecs, by the writer schema's JSON and many.

    ``given`` finds a pair from the writer schema as the caller gives it,
    without parsing it again: by the object (a class, an instance, JSON text,
    a parsed Schema), or a dict by its id, checked against a copy taken when
    it was first met, so a dict changed since, or a new dict at a reused
    address, is parsed again. Both are bounded for callers that make up
    schemas.
    """

    LIMIT = 256

    def __init__(self, schema: CompiledSchema | None = None, codec: Any = None,
                 switches: EntryPoints | None = None):
        self.by_json: dict = {}
        self.given: dict = {}
        #: the compiled schema and its codec's entry points, whose pairs of
        #: records that only move fields get one-pass codecs (roastedavro.evolved)
        self.schema = schema
        self.switches = switches
        self.codec = codec
        self.evolved: list = []

    def replace(self, old: Any, new: Any) -> None:
        """A compiled pair now serves what ``old`` served (also where ``old``
        is still held: a call under way, or not stored here yet)."""
        old.replaced_by = new
        for key, pair in list(self.by_json.items()):
            if pair is old:
                self.by_json[key] = new
        for key, (snapshot, pair) in list(self.given.items()):
            if pair is old:
                self.given[key] = (snapshot, new)
        if self.codec is not None:
            self.codec.forget_pair()

    def bind(self, pair_codec: Any, rearranger: Any) -> None:
        """A one-pass codec's entry points: the schema codec's, with
        marshmallow's path given the bytes in this schema's layout."""
        load = self.codec.load_with_marshmallow
        self.switches.bind(pair_codec, lambda data, many: load(rearranger.transcode(data), many))

    def find(self, writer_schema: Any, many: bool):
        key = _given_key(writer_schema, many)
        if key is None:
            return None
        found = self.given.get(key)
        if found is None:
            return None
        snapshot, pair = found
        if snapshot is not None and snapshot != writer_schema:
            return None
        return pair

    def keep(self, writer_schema: Any, many: bool, pair) -> None:
        key = _given_key(writer_schema, many)
        if key is None:
            return
        if len(self.given) >= self.LIMIT:
            self.given.clear()
        snapshot = copy.deepcopy(writer_schema) if isinstance(writer_schema, dict) else None
        self.given[key] = (snapshot, pair)


def _given_key(writer_schema: Any, many: bool):
    if isinstance(writer_schema, dict):
        return ("dict", id(writer_schema), many)
    # a class, JSON text, a parsed Schema (immutable), a CompiledSchema
    # instance (its plan is made once, as the instance's own codec's)
    try:
        hash(writer_schema)
    except TypeError:
        return None
    return (writer_schema, many)


def _pair_for(schema: AvroSchema, flags: CompileFlags, codecs: _Pairs, writer_schema: Any,
              many: bool, compile: str | None = None):
    """What reads data written with ``writer_schema`` as this schema's: a
    one-pass codec, or what turns the data into this schema's bytes (its
    ``transcode(data)``), made once per writer schema (``compile="never"``:
    served without compiling); and how the caller may keep it by the
    object: True for one that cannot change (a class, an instance, text, a
    parsed Schema), a copy to compare a dict with before each use (it may
    have changed in place), False for neither."""
    pair = codecs.find(writer_schema, many)
    if pair is None:
        pair = _pair_codecs(schema, flags, codecs, writer_schema, many, compile)
        codecs.keep(writer_schema, many, pair)
    # dicts first: isinstance against a Schema class goes through ABCMeta (slow)
    if isinstance(writer_schema, dict):
        kept = codecs.given.get(_given_key(writer_schema, many))
        return pair, kept[0] if kept is not None else False
    lasting = not isinstance(writer_schema, list) and isinstance(
        writer_schema, (str, type, AvroSchema, CompiledSchema))
    return pair, lasting


def _named_branches(schema: AvroSchema) -> bool:
    """Whether a union of ``schema`` has two named types or more."""
    from roastedavro.avro.types import Enum, Fixed, NamedRef, Record, Union

    named = (Enum, Fixed, NamedRef, Record)
    return any(isinstance(avro, Union) and sum(isinstance(b, named) for b in avro.branches) > 1
               for avro in schema.walk())


class _SameLayout:
    """A writer schema whose Parsing Canonical Form is the reader's: its bytes
    are laid out as the reader's (the canonical form keeps exactly what
    decides the bytes), so they are read as they are."""

    @staticmethod
    def transcode(data):
        return data


_SAME_LAYOUT = _SameLayout()


class _ReadAndWrite:
    """A pair whose bytes need converting (a promotion to double, a remapped
    enum): read by the pair's resolving AvroCodec, written by the reader's."""

    def __init__(self, resolving, plain):
        self.resolving = resolving
        self.plain = plain

    def transcode(self, data):
        resolved = self.resolving.load(data)
        try:
            return self.plain.dump(resolved)
        except DatumError as error:
            # a value the writer's data holds that this schema's bytes cannot
            # (a decimal past the reader's precision): the data is not this
            # schema's, as when it is read without a writer schema
            raise DecodeError(f"the writer's data holds a value this schema cannot: {error}",
                              0) from None


def _pair_codecs(schema: AvroSchema, flags: CompileFlags, codecs: _Pairs, writer_schema: Any,
                 many: bool, compile: str | None):
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
    pair = codecs.by_json.get(key)
    if pair is None:
        if len(codecs.by_json) >= _Pairs.LIMIT:
            codecs.by_json.clear()
        if writer.canonical_form() == schema.canonical_form():
            codecs.by_json[key] = _SAME_LAYOUT
            return _SAME_LAYOUT
        reader, original = schema, writer
        if many:  # many records are one Avro array of them
            writer = parse_schema({"type": "array", "items": writer.to_dict()})
            reader = parse_schema({"type": "array", "items": schema.to_dict()})
        # where resolution only moves bytes (fields added, dropped, reordered),
        # they are moved; otherwise read by the pair's codec and written again
        pair = Rearranger.build(writer, reader, flags)
        if pair is not None and compile != "never":
            pair = _one_pass(codecs, schema, flags, original, pair)
        if pair is None and _named_branches(reader):
            # the values keep the branch they were read as, (name, value),
            # where a union has several named types the writer would choose
            # between by their content (two records with the same fields)
            pair = _ReadAndWrite(
                ResolvingInterpreter(writer, reader, flags, naming=(False, False, True, False)),
                Interpreter(reader, flags))
        elif pair is None:
            pair = _ReadAndWrite(AvroCodec(reader, flags, writer_schema=writer, compile=compile),
                                 AvroCodec(reader, flags, compile=compile))
        codecs.by_json[key] = pair
    return pair


def _one_pass(codecs: _Pairs, schema: AvroSchema, flags: CompileFlags, writer: AvroSchema,
              rearranger: Any) -> Any:
    """What serves a pair the Rearranger can serve: a one-pass compiled
    codec, when the records only move fields and the schema's load is its
    compiled reader's (roastedavro.evolved); until it is built, and for
    other pairs, the Rearranger."""
    from roastedavro.evolved import EvolvedPair, written_layout

    owner, codec = codecs.schema, codecs.codec
    if owner is None or codec is None or codec.load_through_marshmallow:
        return rearranger
    plan = owner._plan()
    layout = written_layout(plan.root, plan.records, schema, writer, flags)
    if layout is None:
        return rearranger
    evolved = EvolvedPair(owner, flags, layout, rearranger,
                          bind=lambda made: codecs.bind(made, rearranger),
                          on_change=codecs.replace)
    if len(codecs.evolved) >= _Pairs.LIMIT:
        del codecs.evolved[0]
    codecs.evolved.append(evolved)
    return evolved.start()


def _too_deep(direction: str, uncompiled: bool = False) -> ValidationError:
    # marshmallow nests a Python call chain per record level: data nested
    # within the codec's max_depth may still exceed Python's recursion limit
    # there. That is a ValidationError, never a RecursionError.
    why = ("which serves this schema while it is not compiled" if uncompiled
           else "which this schema needs (hooks or a failed validation)")
    return ValidationError({"_schema": [
        f"Records are nested too deeply for marshmallow's {direction}, {why}; Python's "
        f"recursion limit is {sys.getrecursionlimit()}."]})
