"""CompiledSchema: a marshmallow Schema with a compiled Avro codec."""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import sys
import threading
from functools import partial
from typing import Any, BinaryIO, Iterable, Iterator

from marshmallow import Schema, ValidationError
from marshmallow.decorators import PRE_DUMP

from roastedavro import compiler, tiers
from roastedavro._tier0 import Interpreter
from roastedavro._datum import encode_long
from roastedavro.avro.parse import parse_schema
from roastedavro.avro.types import Schema as AvroSchema
from roastedavro.errors import (
    CompileError,
    DatumError,
    DecodeError,
    DumpError,
    NotCompiledError,
    SchemaError,
)
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
from roastedavro.refusals import (
    _attribute_path,
    _datum_message,
    _decimal_checks,
    _dump_error_of,
    _first_refused_in,
    _items,
    _renamed,
    _unroundable,
)
from roastedavro.wide_decimals import _DecimalScan, _wide_decimal
from roastedavro import writer_pairs
from roastedavro.writer_pairs import _Pairs, _pair_for

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
            raise CompileError(
                f"{type(schema).__name__}: the Avro schema written for it is not valid: {error}"
            ) from None
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
                pair = (
                    Interpreter(self.raw_model, flags, self.naming),
                    Interpreter(self.raw_many_model, flags, self.naming),
                )
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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
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
        """The same schema as ``roastedavro.avro.Schema`` (canonical form, fingerprints)."""
        return self._plan().schema

    # -- compiling ----------------------------------------------------------

    def _label(self) -> str:
        return f"{type(self).__module__}.{type(self).__qualname__}"

    def compile_to_string(self, flags: CompileFlags | None = None) -> str:
        """The Cython source that ``compile`` builds."""
        plan = self._plan()
        return generate_module(
            plan.root, plan.records, self._label(), (flags or CompileFlags()).build_key(), plan.fingerprint
        ).source

    def compile(self, flags: CompileFlags | None = None, *, build: str = "here") -> CompiledSchema:
        """Generate, build (or load from the cache) and attach the codec.

        ``build`` says where a codec missing from the compile cache is built:
        ``"here"`` (the default), ``"child"`` (a child Python process) or
        ``"never"`` (raise ``roastedavro.errors.NotCompiledError``).
        """
        flags = flags or CompileFlags()
        # "never" does not wait for a build under way in another thread
        if not self._roasted_lock.acquire(blocking=build != "never"):
            raise NotCompiledError(f"{self._label()} is being compiled by another thread")
        try:
            plan = self._plan()
            generated = generate_module(
                plan.root, plan.records, self._label(), flags.build_key(), plan.fingerprint
            )
            codec = compiler.load_codec(
                generated, flags, plan.fingerprint, build=build, label=f"the CompiledSchema {self._label()}"
            )
            self._bind_entry_points(codec, flags)
            self._roasted_flags = flags
            self._roasted_codec = codec
            self._roasted_uncompiled = None
        finally:
            self._roasted_lock.release()
        return self

    @property
    def tier(self) -> str | None:
        """What serves ``dump_compiled`` and ``load_compiled``:
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
            # the instance's entry points from now on (as _bind_entry_points)
            self.dump_compiled = uncompiled.dump  # type: ignore[method-assign]
            self.load_compiled = uncompiled.load  # type: ignore[method-assign]

    def _bind_entry_points(self, codec: Any, flags: CompileFlags) -> None:
        plan = self._plan()
        load_reasons = [
            (where, what) for where, what in plan.load_reasons if flags.validate or what not in VALIDATION
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
        self.dump_compiled = codec.dump  # type: ignore[method-assign]
        self.load_compiled = codec.load  # type: ignore[method-assign]

    # -- dump and load ------------------------------------------------------

    def dump_compiled(self, obj: Any, many: bool | None = None) -> bytes:
        """Avro binary of ``obj``: ``fastavro.schemaless_writer(avro_schema(), dump(obj))``.

        ``many=True`` writes a list of records as one Avro array. Raises
        ``marshmallow.ValidationError`` naming the field path when a value
        cannot be written. Compiles the schema on first use; where it cannot
        be compiled (see ``tier``), writes the same bytes through
        marshmallow's ``dump`` and tier 0.
        """
        self._attach()
        return self.dump_compiled(obj, many)

    def load_compiled(self, data: Any, many: bool | None = None, writer_schema: Any = None) -> Any:
        """The loaded value of Avro binary ``data``, as marshmallow's ``load`` returns it.

        ``writer_schema`` (an Avro schema as dict, JSON text or
        ``roastedavro.avro.Schema``, or another CompiledSchema) reads data
        written with another version of the schema: the bytes are
        rearranged into this schema's (fields moved, dropped, defaults
        added; see docs/evolution.md), or where they need
        converting resolved by the pair's AvroCodec, then loaded. Malformed bytes raise ``roastedavro.DecodeError``
        with the offset; a writer schema whose data this schema cannot read
        raises ``roastedavro.SchemaResolutionError``. Compiles the schema
        on first use; where it cannot be compiled (see ``tier``), tier 0
        reads the bytes and marshmallow's ``load`` makes the same result.
        """
        self._attach()
        return self.load_compiled(data, many, writer_schema)

    # -- container files ------------------------------------------------------

    def write_file(self, fo: BinaryIO, objs: Iterable[Any], codec: str = "null", **options: Any) -> None:
        """Write ``objs`` to ``fo`` as an Avro object container file of
        ``avro_schema``, each record as ``dump_compiled`` writes it
        (validation and hooks included), a block at a time.

        ``codec`` and the options are ``roastedavro.container.FileWriter``'s
        (``sync_interval``, ``metadata``, ``sync_marker``, ``codec_compression_level``).
        """
        from roastedavro.container import FileWriter

        writer = FileWriter(
            fo, self.avro_model, codec, encode_block=partial(_block_of_records, self), **options
        )
        writer.write_many(objs)
        writer.close()

    def read_file(self, fo: BinaryIO, **options: Any) -> Iterator[Any]:
        """The records of an Avro container file, each as ``load_compiled``
        returns it, a block at a time. A file written with another version
        of the schema is read by resolution (``writer_schema``). The options
        are ``roastedavro.container.FileReader``'s (``max_block_size``,
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
                raise ContainerError(
                    f"its records cannot be read: {error.reason}", block.offset, block.number
                ) from None
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
            unroundable = any(
                _unroundable(self, plan.root, item, plan.decimal_checks) is not None
                for item in (_items(obj) if many else [obj])
            )
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
            datum: Any
            try:
                if many:
                    datum = each_in_path(partial(record_dump_datum, plan.root), dumped)
                else:
                    datum = record_dump_datum(plan.root, dumped)
            except ValidationError as error:
                raise ValidationError(
                    _renamed(error.messages, plan.root, many, standing_in=not plan.dump_reasons)
                ) from None
        except RecursionError:
            raise _too_deep("dump", self._roasted_codec is None) from None
        try:
            return array.dump(datum) if many else one.dump(datum)
        except DatumError as error:
            messages: Any = [_datum_message(plan.root, datum, error.path, many) or error.reason]
            for part in reversed(_attribute_path(plan.root, error.path, many)):
                messages = {part: messages}
            raise ValidationError(messages) from None

    def _load_with_marshmallow(
        self, data: Any, many: bool, flags: CompileFlags | None = None, checked: bool = False
    ) -> Any:
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
        # (decimal_scan is set where the plan reads decimals)
        if (
            not checked
            and plan.reads_decimals
            and plan.decimal_scan.maybe_wide(  # type: ignore[union-attr]
                raw, many
            )
        ):
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


# what a writer schema given to load_compiled may be
writer_pairs.CompiledSchema = CompiledSchema


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
            raise ValidationError(
                {
                    "_schema": [
                        "Expected a single record, got a list; pass many=True to write a list of records."
                    ]
                }
            )
        return self.schema._dump_uncompiled(obj, bool(many), self.flags)

    def load(self, data: Any, many: bool | None = None, writer_schema: Any = None) -> Any:
        if many is None:
            many = self.many
        if writer_schema is not None:
            data = _pair_for(
                self.schema._plan().schema,
                self.flags,
                self.codecs,
                writer_schema,
                bool(many),
                compile="never",
            )[0].transcode(data)
        return self.schema._load_with_marshmallow(data, bool(many), self.flags)


_told_no_compiler = False


def _tell_no_compiler(label: str) -> None:
    global _told_no_compiler
    if not _told_no_compiler:
        _told_no_compiler = True
        log.warning(
            "CompiledSchema %s and others are served without compiling (marshmallow's "
            "dump and load, tier 0 for the bytes): %s",
            label,
            compiler.compiler_missing(),
        )


def _block_of_records(schema: CompiledSchema, objs: list) -> bytes:
    """Records as a container block holds them: many=True's Avro array
    without its count and its end."""
    data = schema.dump_compiled(objs, True)
    if not objs:
        return b""
    return data[len(encode_long(len(objs))) : -1]


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


def _too_deep(direction: str, uncompiled: bool = False) -> ValidationError:
    # marshmallow nests a Python call chain per record level: data nested
    # within the codec's max_depth may still exceed Python's recursion limit
    # there. That is a ValidationError, never a RecursionError.
    why = (
        "which serves this schema while it is not compiled"
        if uncompiled
        else "which this schema needs (hooks or a failed validation)"
    )
    return ValidationError(
        {
            "_schema": [
                f"Records are nested too deeply for marshmallow's {direction}, {why}; Python's "
                f"recursion limit is {sys.getrecursionlimit()}."
            ]
        }
    )
