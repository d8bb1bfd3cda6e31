"""Compiled one-pass readers of data written with another version of a
marshmallow schema (``load_compiled(data, writer_schema=...)``).

Where the writer's record differs from the schema's in which fields it has
and in their order (fields added with defaults, dropped, moved), and in
values each field's code can read after a small conversion (a number
promoted, an enum renumbered) or after the pair's Rearranger moved them into
the schema's bytes (anything else resolution reads), a codec of the same
schema is generated whose root reader follows the writer's layout
(codegen.written_reader): each written field read by the schema's own field
code, the dropped ones skipped, the added ones read from their defaults'
bytes. Until it is built (the ``hot`` policy: in the background once the
pair has done enough work; ``eager``: at once), the Rearranger serves the
pair: the writer's bytes moved into the schema's layout, then read.
Other pairs are left to writer_pairs.py (the Rearranger alone, which also
converts promoted numbers and renumbered enums where one pass cannot).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Callable

from roastedavro import compiler, tiers
from roastedavro._defaults import encode_default
from roastedavro._tier0 import Interpreter
from roastedavro.avro.resolve import (
    Container,
    EnumMap,
    Promote,
    Read,
    ReaderUnion,
    RecordRef,
    WriterUnion,
    equivalent,
    resolve,
)
from roastedavro.avro.types import Primitive, Record, Union
from roastedavro.avro.types import Schema as AvroSchema
from roastedavro.avroplan import _MinSizes
from roastedavro.codegen import generate_module
from roastedavro.emitter import FIELDS_PER_FUNCTION
from roastedavro.errors import CompileError
from roastedavro.flags import CompileFlags
from roastedavro.plans import RecordPlan


@dataclasses.dataclass(frozen=True)
class WrittenStep:
    """One step of a record's reader, in the writer's order: read ``field``
    (the schema's field plan) from the data or, where ``default`` is set,
    from its default's bytes; or skip a value (the type at node ``skip_node``
    of ``skip``, the writer's schema's Interpreter). ``nested``: the records
    (idents) in the field's value that the writer laid out otherwise, read
    by their WrittenRecord's reader."""

    writer_name: str
    field: Any = None
    skip: Any = None  # an Interpreter of the writer's schema
    skip_node: int = 0  # the node of the field's type in it
    default: bytes | None = None
    nested: frozenset = frozenset()
    #: a number of the writer's type promoted to the field's before the
    #: field's code reads it: the runtime's PROMOTE_* name, or ""
    promote: str = ""
    #: an enum whose symbols the writer numbers otherwise: per writer
    #: symbol, the reader's index (-1: neither the symbol nor a default),
    #: and the error for each -1 (EnumMap.indexes, unknown_messages)
    remap: tuple = ()
    remap_messages: tuple = ()
    #: for a nullable promoted number or remapped enum, the index of null in
    #: both unions (else -1)
    null_index: int = -1
    #: a value whose bytes need more converting than one number or symbol
    #: (an array of renumbered enums, a union whose branches changed): the
    #: Rearranger's move (WrittenLayout.mover.field_move) that makes this
    #: schema's bytes of it, which the field's own code then reads; else -1
    move: int = -1


@dataclasses.dataclass(frozen=True)
class WrittenRecord:
    """How a nested record of the writer is read as the schema's ``record``."""

    record: RecordPlan
    steps: tuple | None  # None while they are being made


@dataclasses.dataclass(frozen=True)
class WrittenLayout:
    """How a writer's root record is read as the schema's, in one pass."""

    steps: tuple
    #: the fewest bytes a writer's record takes (bounds many=True counts)
    min_size: int
    writer_fingerprint: str
    #: the nested records the writer laid out otherwise, each read by a
    #: reader of its own
    nested: tuple = ()
    #: a writer's record among them may be smaller than the schema's: block
    #: counts in the readers are bounded by 0 bytes per item (the item
    #: budget and max_items still hold)
    loose_counts: bool = False
    #: the pair's Rearranger, which moves the steps' values that have a move
    mover: Any = None


def written_layout(
    root: RecordPlan,
    records: list[RecordPlan],
    reader: AvroSchema,
    writer: AvroSchema,
    flags: CompileFlags,
    mover: Any = None,
) -> WrittenLayout | None:
    """The layout of a one-pass reader of ``writer``'s records as ``root``'s
    (whose Avro schema is ``reader``; ``records``: the schema's record
    plans), or None where one pass cannot read them with the schema's own
    field code: a root that is not a record, a shared field whose bytes
    differ in ways the steps do not convert (a field's number promoted, int
    to long included, and a field's enum renumbered are converted; without
    ``mover``, the pair's Rearranger, a value that became a union or
    changed its branches, a remapped enum inside an array, map or union is
    not; with it, such a value is moved into this schema's bytes first), a
    field name the writer repeats, a record wider than one generated
    function. Nested records may differ as the root does (fields moved,
    dropped, added). Resolution errors are the caller's (it checked the
    pair first)."""
    writer_root, reader_root = writer.deref(writer.root), reader.deref(reader.root)
    if not isinstance(writer_root, Record) or not isinstance(reader_root, Record):
        return None
    resolution = resolve(writer, reader)
    if not isinstance(resolution.root, RecordRef):
        return None
    planner = _Planner(resolution, records, flags, mover)
    # the root's own reader also reads it where it is nested in itself
    planner.writers[root.ident] = writer_root.name
    planner.reader_names[root.ident] = reader_root.name
    steps = planner.record_steps(resolution.root, root)
    if steps is None or not planner.one_writer_each():
        return None
    nested = tuple(layout for layout in planner.nested.values() if layout.record is not root)
    return WrittenLayout(
        steps,
        _MinSizes(writer).of(writer_root),
        writer.fingerprint_hex,
        nested,
        loose_counts=bool(nested) and planner.smaller_records(),
        mover=mover if planner.moves else None,
    )


class _Planner:
    """The steps of each record pair a one-pass reader follows."""

    def __init__(self, resolution, records: list[RecordPlan], flags: CompileFlags, mover: Any = None):
        self.resolution = resolution
        self.mover = mover
        self.moves = 0  # steps that the mover serves
        self.writer, self.reader = resolution.writer, resolution.reader
        self.by_name = {record.full_name: record for record in records}
        self.flags = flags
        self.skipper: Interpreter | None = None  # the writer's schema, whose nodes skip the fields dropped
        #: the schema record's ident -> its WrittenRecord (the steps are
        #: None while they are being planned: a record that contains itself)
        self.nested: dict[str, WrittenRecord] = {}
        #: the schema record's ident -> the writer's record read as it, and
        #: the schema record's full name
        self.writers: dict[str, str] = {}
        self.reader_names: dict[str, str] = {}
        #: (pair key, writer field position) of the fields the mover serves
        self.moved: set[tuple] = set()

    def one_writer_each(self) -> bool:
        """Whether no record the planned readers follow is also read from
        another writer record (a writer's two records read as one of the
        schema's: the reader of one layout would read the other's bytes)."""
        planned = {self.reader_names[ident]: writer for ident, writer in self.writers.items()}
        reached = self.reached_pairs()
        return all(
            planned.get(reader, writer) == writer
            for writer, reader in self.resolution.records
            if (writer, reader) in reached
        )

    def reached_pairs(self) -> set:
        """The record pairs the generated code reads: from the root, through
        every field it reads itself. A moved value is not among them: its
        bytes are in the schema's own layout, read by the schema's own readers."""
        reached: set = set()
        pending = [self.resolution.root]
        while pending:
            plan = pending.pop()
            if isinstance(plan, RecordRef):
                if plan.key in reached:
                    continue
                reached.add(plan.key)
                for position, step in enumerate(self.resolution.record(plan).steps):
                    if step.reader is not None and (plan.key, position) not in self.moved:
                        pending.append(step.plan)
            elif isinstance(plan, Container):
                pending.append(plan.element)
            elif isinstance(plan, WriterUnion):
                pending.extend(plan.branches)
            elif isinstance(plan, ReaderUnion):
                pending.append(plan.plan)
        return reached

    def smaller_records(self) -> bool:
        """Whether a writer's record the planned readers follow can take
        fewer bytes than the schema's record it is read as (then the
        schema's smallest sizes no longer bound a block's item count)."""
        sizes = _MinSizes(self.writer)
        by_ident = {record.ident: record for record in self.by_name.values()}
        return any(
            sizes.of(self.writer.named[writer]) < by_ident[ident].min_size()
            for ident, writer in self.writers.items()
        )

    def record_steps(self, ref: RecordRef, plan: RecordPlan) -> tuple | None:
        record = self.resolution.record(ref)
        writer_record = self.writer.deref(ref.writer)
        if record.error is not None or max(len(writer_record.fields), len(plan.fields)) > FIELDS_PER_FUNCTION:
            return None
        plans = {field.avro_name: field for field in plan.fields}
        steps = []
        read = set()
        # the steps are the writer's fields, in its order
        for position, step in enumerate(record.steps):
            if step.reader is None:
                # skipped with the Rearranger's checks (strings are not decoded)
                if self.skipper is None:
                    self.skipper = Interpreter(self.writer, self.flags)
                node = self.skipper.field_node(writer_record.name, position)
                steps.append(WrittenStep(step.writer.name, skip=self.skipper, skip_node=node))
                continue
            field = plans.get(step.reader.name)
            # the same bytes, or nested records that only moved fields, or a
            # number promoted (its writer's value read and converted first,
            # then read by the field's own code). A field name a (fastavro
            # dialect) writer repeats is left to the Rearranger: its first
            # value is the one read.
            if field is None or step.reader.name in read:
                return None
            read.add(step.reader.name)
            promote, null_index = _promotion(self.writer, self.reader, step.plan)
            if promote:
                steps.append(
                    WrittenStep(step.writer.name, field=field, promote=promote, null_index=null_index)
                )
                continue
            remap, null_index = _remapping(self.writer, self.reader, step.plan)
            if remap is not None:
                steps.append(
                    WrittenStep(
                        step.writer.name,
                        field=field,
                        remap=remap.indexes(),
                        remap_messages=remap.unknown_messages(),
                        null_index=null_index,
                    )
                )
                continue
            planned = (dict(self.writers), dict(self.reader_names), dict(self.nested), set(self.moved))
            nested = self.movable(step.plan)
            if nested is None:
                # the records planned while trying are forgotten (some may
                # have no steps, or refer to one that has none): the mover
                # moves the whole value, nested records and all
                self.writers, self.reader_names, self.nested, self.moved = planned
                move = self.move(ref, position)
                if move < 0:
                    return None
                self.moves += 1
                self.moved.add((ref.key, position))
                steps.append(WrittenStep(step.writer.name, field=field, move=move))
                continue
            steps.append(WrittenStep(step.writer.name, field=field, nested=frozenset(nested)))
        for field in record.defaults:
            field_plan = plans.get(field.name)
            if field_plan is None:
                return None
            if field_plan.field.dump_only:
                continue  # nothing to load, nothing on the wire
            encoded = encode_default(field.type, field.default, self.reader, f"{plan.full_name}.{field.name}")
            steps.append(WrittenStep(field.name, field=field_plan, default=encoded))
        return tuple(steps)

    def move(self, ref: RecordRef, position: int) -> int:
        """The mover's move of the writer's field at ``position`` of the pair
        ``ref``, or -1 (no mover, or a field it does not read)."""
        if self.mover is None:
            return -1
        try:
            return self.mover.field_move(ref.key, position)
        except (KeyError, IndexError):
            return -1

    def movable(self, plan) -> set | None:
        """The schema records (idents) within a field's value whose writer's
        layout its reader must follow, or None where the value's bytes need
        more than records read in another order (see written_layout)."""
        if equivalent(self.writer, self.reader, plan.writer, plan.reader):
            return set()
        if isinstance(plan, Read):
            return set() if _string_as_bytes(self.writer, self.reader, plan) else None
        if isinstance(plan, EnumMap):
            # symbols only added at the end: the writer's indexes are the reader's
            return None if _renumbers(plan) else set()
        if isinstance(plan, Container):
            return self.movable(plan.element)
        if isinstance(plan, WriterUnion):
            # the same branches in the same order: the index read is the branch
            reader = self.reader.deref(plan.reader)
            if not isinstance(reader, Union) or len(reader.branches) != len(plan.branches):
                return None
            found = set()
            for index, branch in enumerate(plan.branches):
                inner = (
                    self.movable(branch.plan)
                    if (isinstance(branch, ReaderUnion) and branch.index == index)
                    else None
                )
                if inner is None:
                    return None
                found |= inner
            return found
        if isinstance(plan, RecordRef):
            return self.moved_record(plan)
        return None

    def moved_record(self, ref: RecordRef) -> set | None:
        reader_record = self.reader.deref(ref.reader)
        writer_record = self.writer.deref(ref.writer)
        plan = self.by_name.get(reader_record.name)
        if plan is None:
            return None
        if plan.ident in self.writers:
            # one writer record per schema record (its reader is one function)
            return {plan.ident} if self.writers[plan.ident] == writer_record.name else None
        self.writers[plan.ident] = writer_record.name
        self.reader_names[plan.ident] = reader_record.name
        self.nested[plan.ident] = WrittenRecord(plan, None)
        steps = self.record_steps(ref, plan)
        if steps is None:
            return None
        self.nested[plan.ident] = WrittenRecord(plan, steps)
        return {plan.ident}


#: the runtime's promotion of a writer's number to a reader's (Java's)
_PROMOTIONS = {
    ("int", "long"): "PROMOTE_INT_LONG",
    ("int", "float"): "PROMOTE_INT_FLOAT",
    ("int", "double"): "PROMOTE_INT_DOUBLE",
    ("long", "float"): "PROMOTE_LONG_FLOAT",
    ("long", "double"): "PROMOTE_LONG_DOUBLE",
    ("float", "double"): "PROMOTE_FLOAT_DOUBLE",
}


def _promotion(writer: AvroSchema, reader: AvroSchema, plan) -> tuple[str, int]:
    """The runtime's PROMOTE_* name where a field's plan promotes a number
    (int to long, which Read plans too, included), else ""; and where the
    number is nullable in both schemas (["null", int] read as ["null",
    "double"], the branches in the same order), the index of null, else -1."""
    if isinstance(plan, (Read, Promote)):
        written, wanted = writer.deref(plan.writer), reader.deref(plan.reader)
        if isinstance(written, Primitive) and isinstance(wanted, Primitive):
            return _PROMOTIONS.get((written.name, wanted.name), ""), -1
        return "", -1
    null_index, inner = _nullable(writer, reader, plan)
    if inner is None:
        return "", -1
    kind, nested_null = _promotion(writer, reader, inner)
    return (kind, null_index) if kind and nested_null == -1 else ("", -1)


def _nullable(writer: AvroSchema, reader: AvroSchema, plan):
    """Where ``plan`` reads ["null", T] (either order) as a reader's union of
    null and T' in the same order: the index of null and T's plan, else
    (-1, None)."""
    if not isinstance(plan, WriterUnion) or len(plan.branches) != 2:
        return -1, None
    wanted = reader.deref(plan.reader)
    if not isinstance(wanted, Union) or len(wanted.branches) != 2:
        return -1, None
    null_index, inner = -1, None
    for index, branch in enumerate(plan.branches):
        if not isinstance(branch, ReaderUnion) or branch.index != index:
            return -1, None
        written = writer.deref(branch.writer)
        if isinstance(written, Primitive) and written.name == "null":
            null_index = index
        else:
            inner = branch.plan
    return (null_index, inner) if null_index != -1 else (-1, None)


def _remapping(writer: AvroSchema, reader: AvroSchema, plan) -> tuple:
    """Where a field's plan reads an enum whose symbols the writer numbers
    otherwise (alone, or nullable in both schemas): its EnumMap and the index
    of null (else -1); else (None, -1)."""
    if isinstance(plan, EnumMap):
        return (plan, -1) if _renumbers(plan) else (None, -1)
    null_index, inner = _nullable(writer, reader, plan)
    if isinstance(inner, EnumMap) and _renumbers(inner):
        return inner, null_index
    return None, -1


def _renumbers(plan: EnumMap) -> bool:
    """Whether a writer's symbol index is not the reader's index of the
    symbol read (else the bytes are read as they are)."""
    return plan.indexes() != tuple(range(len(plan.symbols)))


def _string_as_bytes(writer: AvroSchema, reader: AvroSchema, plan) -> bool:
    """Whether a plan reads a string as bytes, or bytes as a plain string:
    the same encoding, read by the field's own code (a string's is checked
    as UTF-8 as it is read, with the error and offset of the pair's
    AvroCodec)."""
    if not isinstance(plan, Read):
        return False
    written, wanted = writer.deref(plan.writer), reader.deref(plan.reader)
    if not isinstance(written, Primitive) or not isinstance(wanted, Primitive):
        return False
    return (written.name, wanted.name) == ("string", "bytes") or (
        (written.name, wanted.name) == ("bytes", "string") and wanted.logical is None
    )


class EvolvedPair:
    """The codecs serving one writer schema's data for a CompiledSchema:
    the Rearranger at once, the one-pass codec once it is built or found
    (tiers.Engine). ``on_change(old, new)`` is told when the codec replaces
    the Rearranger; ``bind(codec)`` sets a built codec's entry points."""

    def __init__(
        self,
        schema: Any,
        flags: CompileFlags,
        layout: WrittenLayout,
        rearranger: Any,
        bind: Callable[[Any], None],
        on_change: Callable[[Any, Any], None],
    ):
        self.schema = schema
        self.flags = flags
        self.layout = layout
        self.rearranger = rearranger
        self._bind = bind
        self._on_change = on_change
        self.engine = tiers.Engine(self._what, lambda: rearranger, self._build)
        self.engine.subscribe(self)

    def _what(self) -> str:
        return (
            f"the CompiledSchema {self.schema._label()} reading data written with "
            f"{self.layout.writer_fingerprint}"
        )

    def start(self) -> Any:
        """What serves the pair now, under the process's compile policy."""
        try:
            return self.engine.start(tiers.compile_policy(None, default="hot"))
        except CompileError as error:
            # the Rearranger reads the same data; the failure is reported once
            logging.getLogger("roastedavro.evolved").warning(
                "%s is served without its one-pass codec: %s", self._what(), error
            )
            return self.engine._serve_interpreter()

    def _build(self, where: str) -> Any:
        plan = self.schema._plan()
        generated = generate_module(
            plan.root,
            plan.records,
            self.schema._label(),
            self.flags.build_key(),
            plan.fingerprint,
            written=self.layout,
        )
        codec = compiler.load_codec(
            generated,
            self.flags,
            plan.fingerprint,
            build="never" if where == "lookup" else where,
            label=self._what(),
        )
        self._bind(codec)
        return codec

    def _rebind(self) -> None:
        current = self.engine.current
        if current is not self.rearranger:
            self._on_change(self.rearranger, current)
