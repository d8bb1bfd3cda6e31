"""Schema resolution: how data written with one schema is read with another.

``resolve`` walks a writer's and a reader's schema together, by the
rules of the Avro 1.12 specification's "Schema Resolution", and decides
where the specification leaves room as Java's ``Resolver`` does (Java's
reader is the reference): the writer's names are first renamed by the
reader's aliases, records are matched field by field without comparing
their names, enums and fixed compare simple names, a writer's value goes to
the first reader union branch of its own type (a record's by full name, then
by structure) before any promotion, and a writer union whose branches equal
the reader's branch for branch maps them one to one.

A reader's schema parsed with ``dialect="fastavro"`` (the fastavro drop-in's)
is resolved by fastavro's rules where they are stricter: a writer's record,
enum or fixed is read only as a reader's type of the same simple name, or
one whose aliases list the writer's full or simple name (Java and the
specification do not compare records' names).

The result is a plain plan, nothing read yet: code generation compiles it
once per pair (one function per pair of records). As in Java, a part that
cannot be read is an ``Unreadable`` node rather than an exception:
``Resolution.check`` raises a SchemaResolutionError for the first one
that every datum reaches; those under a writer union's branch are left for
the data to reach (reading such a branch is then an error of that datum).
"""

from __future__ import annotations

from roastedavro._record import field as _field, record
from typing import Any, Iterator, cast

from roastedavro.avro.types import (
    Array,
    AvroType,
    Enum,
    Field,
    Fixed,
    Map,
    Primitive,
    Record,
    Schema,
    Union,
    describe,
)
from roastedavro.errors import SchemaResolutionError

__all__ = [
    "Container",
    "EnumMap",
    "FieldStep",
    "Promote",
    "Read",
    "ReaderUnion",
    "RecordPlan",
    "RecordRef",
    "Resolution",
    "Unreadable",
    "WriterUnion",
    "resolve",
]

# the promotions of the specification: writer type -> reader types
PROMOTIONS = {
    "int": ("long", "float", "double"),
    "long": ("float", "double"),
    "float": ("double",),
    "string": ("bytes",),
    "bytes": ("string",),
}
# promotions whose bytes the reader's type reads as they are (varints, lengths)
_SAME_ENCODING = {("int", "long"), ("string", "bytes"), ("bytes", "string")}
# Java's choice of a reader union branch by promotion, in the branches' order
_UNION_PROMOTIONS = {
    "int": ("long", "double", "float"),
    "long": ("double", "float"),
    "float": ("double",),
    "string": ("bytes",),
    "bytes": ("string",),
}
_NAMED = ("record", "enum", "fixed")


# -- the plan ------------------------------------------------------------------


class Plan:
    """A node of a resolution plan: how one writer value becomes a reader value."""

    writer: AvroType
    reader: AvroType


@record(frozen=True, eq=False)
class Read(Plan):
    """The reader's type reads the writer's bytes as they are: the same
    primitive or fixed, or a promotion that keeps the encoding (int to
    long, string to bytes, bytes to string). The reader's logical type, if
    any, converts the value."""

    writer: AvroType
    reader: AvroType


@record(frozen=True, eq=False)
class Promote(Plan):
    """A number read as the writer's type, converted to the reader's:
    int or long to float or double, float to double."""

    writer: Primitive
    reader: Primitive


@record(frozen=True, eq=False)
class EnumMap(Plan):
    """The writer's symbol index to the reader's symbol: ``symbols[i]`` is
    the reader's symbol for the writer's i-th (its default where it lacks
    the symbol), or None where the reader has neither."""

    writer: Enum
    reader: Enum
    symbols: tuple
    writer_path: str

    def unknown_messages(self) -> tuple:
        """Per writer symbol, the error of reading it where the reader has
        neither it nor a default (else None): fastavro's words at the end,
        which its users match."""
        return tuple(
            None
            if symbol is not None
            else f"{self.writer_path or self.writer.name}: the writer's symbol {written!r} is not a "
            f"symbol of the reader's enum {self.reader.name}, which has no default "
            f"({written} not found in reader symbol list {self.reader.name}, known "
            f"symbols: {list(self.reader.symbols)!r})"
            for written, symbol in zip(self.writer.symbols, self.symbols)
        )

    def indexes(self) -> tuple:
        """Per writer symbol, the reader's index of the symbol it is read
        as, or -1 (see unknown_messages)."""
        position = {symbol: index for index, symbol in enumerate(self.reader.symbols)}
        return tuple(-1 if symbol is None else position[symbol] for symbol in self.symbols)


@record(frozen=True, eq=False)
class Container(Plan):
    """An array's items or a map's values, each resolved by ``element``."""

    writer: Array | Map
    reader: Array | Map
    element: Plan


@record(frozen=True, eq=False)
class RecordRef(Plan):
    """A record read by the plan of its pair: ``Resolution.records[key]``."""

    writer: Record
    reader: Record
    key: tuple


@record(frozen=True, eq=False)
class WriterUnion(Plan):
    """The writer's union: each of its branches has a plan (``branches[i]``)."""

    writer: Union
    reader: AvroType
    branches: tuple


@record(frozen=True, eq=False)
class ReaderUnion(Plan):
    """A writer's non-union value read as the reader's union branch ``index``."""

    writer: AvroType
    reader: Union
    index: int
    plan: Plan


@record(frozen=True, eq=False)
class Unreadable(Plan):
    """A writer's value the reader cannot read (Java's ErrorAction)."""

    writer: AvroType
    reader: AvroType
    reason: str
    writer_path: str
    reader_path: str

    def error(self) -> SchemaResolutionError:
        return SchemaResolutionError(self.reason, self.writer_path, self.reader_path)


@record(frozen=True, eq=False)
class FieldStep:
    """One field of the writer's record, in the writer's order: read into
    the reader's field ``reader`` by ``plan``, or skipped (``reader`` None)."""

    writer: Field
    reader: Field | None
    plan: Plan | None
    writer_path: str


@record(eq=False)
class RecordPlan:
    """A pair of records: the writer's fields in order, then the reader's
    fields the writer lacks, from their defaults. ``error`` is set when the
    reader has a field without default that the writer lacks."""

    writer: Record
    reader: Record
    writer_path: str
    reader_path: str
    steps: list = _field(default_factory=list)
    defaults: list = _field(default_factory=list)
    error: Unreadable | None = None
    #: the order of the record's keys as read: the reader's fields' (Java's),
    #: or in the fastavro dialect fastavro's (the fields read, in the
    #: writer's order, then the defaults, in the reader's)
    order: tuple = ()


@record(eq=False)
class Resolution:
    """The plan for reading ``writer``'s data as ``reader``'s."""

    writer: Schema
    reader: Schema
    root: Plan
    #: (writer full name, reader full name) -> the plan of that pair of records
    records: dict

    def record(self, ref: RecordRef) -> RecordPlan:
        return self.records[ref.key]

    def check(self) -> None:
        """Raise a SchemaResolutionError for the first unreadable part that
        every datum reaches (one that is not under a writer union's branch
        some data may not use). A writer union none of whose branches can be
        read counts as one."""
        for plan in self.unconditional():
            if isinstance(plan, Unreadable):
                raise plan.error()
            if isinstance(plan, RecordRef):
                error = self.record(plan).error
                if error is not None:
                    raise error.error()
            if isinstance(plan, WriterUnion) and all(self.fails(branch) for branch in plan.branches):
                first = plan.branches[0] if plan.branches else None
                reason = "no branch of the writer's union can be read as the reader's type"
                if first is not None:
                    reason += f" (the first: {cast(Unreadable, self.failure(first)).reason})"
                raise SchemaResolutionError(reason, *self._paths(first))

    def fails(self, plan: Plan) -> bool:
        return self.failure(plan) is not None

    def failure(self, plan: Plan) -> Unreadable | None:
        if isinstance(plan, Unreadable):
            return plan
        if isinstance(plan, RecordRef):
            return self.record(plan).error
        return None

    def _paths(self, plan: Plan | None) -> tuple[str, str]:
        failure = self.failure(plan) if plan is not None else None
        return (failure.writer_path, failure.reader_path) if failure else ("", "")

    def unconditional(self) -> Iterator[Plan]:
        """Every plan node every datum reaches (writer union branches and
        array and map items not entered: a datum may not use the branch, an
        array or map may be empty, and Java reads such data; each pair of
        records once)."""
        seen: set = set()
        stack = [self.root]
        while stack:
            plan = stack.pop()
            yield plan
            if isinstance(plan, RecordRef):
                if plan.key in seen:
                    continue
                seen.add(plan.key)
                record = self.record(plan)
                if record.error is None:
                    stack.extend(step.plan for step in reversed(record.steps) if step.plan is not None)
            elif isinstance(plan, ReaderUnion):
                stack.append(plan.plan)

    def reachable_records(self) -> list[RecordPlan]:
        """The pairs of records any datum may reach, in the order they are met."""
        found: dict = {}
        stack = [self.root]
        while stack:
            plan = stack.pop()
            if isinstance(plan, RecordRef):
                if plan.key in found:
                    continue
                record = found[plan.key] = self.record(plan)
                if record.error is None:
                    stack.extend(step.plan for step in reversed(record.steps) if step.plan is not None)
            elif isinstance(plan, Container):
                stack.append(plan.element)
            elif isinstance(plan, ReaderUnion):
                stack.append(plan.plan)
            elif isinstance(plan, WriterUnion):
                stack.extend(reversed(plan.branches))
        return [record for record in found.values() if record.error is None]


# -- resolving -------------------------------------------------------------------


def _kind(avro: AvroType) -> str:
    """Java's Schema.Type of a type: the primitive's name, or record, enum, ..."""
    if isinstance(avro, Primitive):
        return avro.name
    if isinstance(avro, Record):
        return "record"
    return avro.type_name


def _simple(name: str) -> str:
    return name.rpartition(".")[2]


class _Resolver:
    def __init__(self, writer: Schema, reader: Schema):
        self.writer = writer
        self.reader = reader
        # Java applies the reader's aliases to the writer's schema first: a
        # writer's named type whose full name a reader's type lists as an alias
        # takes that type's name, and a writer's field whose (renamed) record
        # has a reader field aliased to its name takes that field's name
        self.renamed: dict[str, str] = {}
        self.field_aliases: dict[str, dict[str, str]] = {}
        for named in reader.named.values():
            for alias in getattr(named, "aliases", ()):
                self.renamed[alias] = named.name
            if isinstance(named, Record):
                for field in named.fields:
                    for alias in field.aliases:
                        self.field_aliases.setdefault(named.name, {})[alias] = field.name
        self.records: dict[tuple, RecordPlan] = {}
        #: fastavro's rules (the reader's schema is of the fastavro dialect)
        self.fastavro = getattr(reader, "dialect", "avro") == "fastavro"

    def names_match(self, writer: Any, reader: Any) -> bool:
        """Whether a writer's named type may be read as a reader's of the same
        kind by name: Java's rule (simple names, after the reader's aliases),
        and in the fastavro dialect also fastavro's (a reader's alias naming
        the writer's full or simple name); records by Java's always."""
        if _simple(self.name(writer)) == reader.simple_name:
            return True
        if not self.fastavro:
            return isinstance(writer, Record)
        simple = _simple(writer.name)
        return any(
            alias == writer.name or _simple(alias) == simple for alias in getattr(reader, "aliases", ())
        )

    def name(self, writer_named: Any) -> str:
        """The writer's full name after the reader's aliases."""
        return self.renamed.get(writer_named.name, writer_named.name)

    def field_name(self, writer_record: Record, field: Field) -> str:
        return self.field_aliases.get(self.name(writer_record), {}).get(field.name, field.name)

    def resolve(self, writer: AvroType, reader: AvroType, wpath: str, rpath: str) -> Plan:
        writer = self.writer.deref(writer)
        reader = self.reader.deref(reader)
        if isinstance(writer, Union):
            return self.writer_union(writer, reader, wpath, rpath)
        kind = _kind(writer)
        if kind == _kind(reader):
            # the same kind: the reader's type is of the writer's type's class
            same: Any = reader
            if isinstance(writer, Primitive):
                return Read(writer, same)
            if isinstance(writer, Fixed):
                if not self.names_match(writer, same):
                    return self.names_differ(writer, same, wpath, rpath)
                if writer.size != same.size:
                    return Unreadable(
                        writer,
                        same,
                        (
                            f"the writer's fixed {writer.name} has {writer.size} bytes, the "
                            f"reader's {same.name} {same.size}"
                        ),
                        wpath,
                        rpath,
                    )
                return Read(writer, same)
            if isinstance(writer, Array):
                return Container(
                    writer, same, self.resolve(writer.items, same.items, wpath + "[]", rpath + "[]")
                )
            if isinstance(writer, Map):
                return Container(
                    writer, same, self.resolve(writer.values, same.values, wpath + "{}", rpath + "{}")
                )
            if isinstance(writer, Enum):
                return self.enum(writer, same, wpath, rpath)
            if not self.names_match(writer, same):
                return self.names_differ(writer, same, wpath, rpath)
            # the one kind left: a record (a union and references are dealt with above)
            return self.record(cast(Record, writer), same, wpath, rpath)
        if isinstance(reader, Union):
            return self.reader_union(writer, reader, wpath, rpath)
        if (
            isinstance(writer, Primitive)
            and isinstance(reader, Primitive)
            and reader.name in PROMOTIONS.get(writer.name, ())
        ):
            if (writer.name, reader.name) in _SAME_ENCODING:
                return Read(writer, reader)
            return Promote(writer, reader)
        return Unreadable(
            writer,
            reader,
            (f"the writer's {describe(writer)} cannot be read as the reader's {describe(reader)}"),
            wpath,
            rpath,
        )

    def names_differ(self, writer: Any, reader: Any, wpath: str, rpath: str) -> Unreadable:
        return Unreadable(
            writer,
            reader,
            (
                f"the writer's {writer.type_name} {writer.name} is not the reader's {reader.name}: "
                f"their names differ and the reader has no alias {writer.name}"
            ),
            wpath,
            rpath,
        )

    def enum(self, writer: Enum, reader: Enum, wpath: str, rpath: str) -> Plan:
        if not self.names_match(writer, reader):
            return self.names_differ(writer, reader, wpath, rpath)
        known = set(reader.symbols)
        symbols = tuple(symbol if symbol in known else reader.default for symbol in writer.symbols)
        return EnumMap(writer, reader, symbols, wpath)

    def record(self, writer: Record, reader: Record, wpath: str, rpath: str) -> RecordRef:
        key = (writer.name, reader.name)
        ref = RecordRef(writer, reader, key)
        if key in self.records:
            return ref
        plan = self.records[key] = RecordPlan(writer, reader, wpath or writer.name, rpath or reader.name)
        # as Java: the records' names are not compared, their fields are
        by_name: dict[str | None, Field] = {field.name: field for field in reader.fields}
        written: set[str | None] = set()
        for field in writer.fields:
            name: str | None
            if self.fastavro:
                # fastavro's rules: a reader's field of the writer's field's
                # own name before one it names as an alias, and each reader's
                # field read once (a later writer's field for it is skipped)
                name = field.name if field.name in by_name else self.field_name(writer, field)
                if name in written:
                    name = None
            else:
                name = self.field_name(writer, field)
            written.add(name)
            wfield = f"{plan.writer_path}.{field.name}"
            target = by_name.get(name)
            if target is None:
                plan.steps.append(FieldStep(field, None, None, wfield))
            else:
                plan.steps.append(
                    FieldStep(
                        field,
                        target,
                        self.resolve(field.type, target.type, wfield, f"{plan.reader_path}.{target.name}"),
                        wfield,
                    )
                )
        for field in reader.fields:
            if field.name in written:
                continue
            if not field.has_default:
                reason = (
                    f"the reader's field {field.name!r} has no default, and the writer's "
                    f"record {writer.name} has no field of that name or of one of its "
                    "aliases"
                )
                if self.fastavro:
                    # fastavro's words, which its users may look for
                    reason = f"No default value for field {field.name} in {reader.name}: {reason}"
                plan.error = Unreadable(
                    writer, reader, reason, plan.writer_path, f"{plan.reader_path}.{field.name}"
                )
                break
            plan.defaults.append(field)
        if self.fastavro:
            read = dict.fromkeys(step.reader.name for step in plan.steps if step.reader is not None)
            plan.order = tuple(read) + tuple(field.name for field in plan.defaults)
        else:
            plan.order = tuple(field.name for field in reader.fields)
        return ref

    def writer_union(self, writer: Union, reader: Any, wpath: str, rpath: str) -> WriterUnion:
        equivalent = self.equivalent(writer, reader, {})
        branches = []
        for index, branch in enumerate(writer.branches):
            branch_path = f"{wpath}<{describe(branch)}>"
            if equivalent:
                target = reader.branches[index]
                branches.append(self.resolve(branch, target, branch_path, f"{rpath}<{describe(target)}>"))
            else:
                branches.append(self.resolve(branch, reader, branch_path, rpath))
        return WriterUnion(writer, reader, tuple(branches))

    def reader_union(self, writer: AvroType, reader: Union, wpath: str, rpath: str) -> Plan:
        index = self.first_match(writer, reader, wpath, rpath)
        if index < 0:
            return Unreadable(
                writer,
                reader,
                (
                    f"no branch of the reader's union {describe(reader)} can read the writer's "
                    f"{describe(writer)}"
                ),
                wpath,
                rpath,
            )
        branch = reader.branches[index]
        return ReaderUnion(
            writer, reader, index, self.resolve(writer, branch, wpath, f"{rpath}<{describe(branch)}>")
        )

    def first_match(self, writer: Any, reader: Union, wpath: str, rpath: str) -> int:
        """Java's choice of the reader's branch: the first of the writer's
        own type (named types by full name; records also by structure,
        preferring the same simple name), then the first promotion."""
        kind = _kind(writer)
        structural = -1
        for index, reader_branch in enumerate(reader.branches):
            branch: Any = self.reader.deref(reader_branch)
            if _kind(branch) != kind:
                continue
            if kind not in _NAMED:
                return index
            name = self.name(writer)
            if name == branch.name:
                return index
            if (
                kind == "record"
                and self.names_match(writer, branch)
                and not self.match_error(self.record(writer, branch, wpath, rpath))
            ):
                if structural < 0 or _simple(name) == branch.simple_name:
                    structural = index
        if structural >= 0:
            return structural
        promotions = _UNION_PROMOTIONS.get(kind, ())
        for index, branch in enumerate(reader.branches):
            if _kind(self.reader.deref(branch)) in promotions:
                return index
        return -1

    def match_error(self, ref: RecordRef) -> bool:
        """Java's test of a structural match: the pair, or one of its fields'
        plans directly, is unreadable."""
        plan = self.records[ref.key]
        if plan.error is not None:
            return True
        for step in plan.steps:
            if isinstance(step.plan, Unreadable):
                return True
            if isinstance(step.plan, RecordRef) and self.records[step.plan.key].error is not None:
                return True
        return False

    def equivalent(self, writer: Any, reader: Any, seen: dict) -> bool:
        """Java's unionEquiv: the same types branch for branch (simple names)."""
        writer = self.writer.deref(writer)
        reader = self.reader.deref(reader)
        kind = _kind(writer)
        if kind != _kind(reader):
            return False
        if kind in _NAMED and _simple(self.name(writer)) != reader.simple_name:
            return False
        if isinstance(writer, Primitive):
            return True
        if isinstance(writer, Array):
            return self.equivalent(writer.items, reader.items, seen)
        if isinstance(writer, Map):
            return self.equivalent(writer.values, reader.values, seen)
        if isinstance(writer, Fixed):
            return writer.size == reader.size
        if isinstance(writer, Enum):
            return writer.symbols == reader.symbols
        if isinstance(writer, Union):
            return len(writer.branches) == len(reader.branches) and all(
                self.equivalent(w, r, seen) for w, r in zip(writer.branches, reader.branches)
            )
        key = (writer.name, reader.name)
        if key not in seen:
            seen[key] = True  # optimistic for recursion, as Java
            if len(writer.fields) != len(reader.fields) or not all(
                self.field_name(writer, w) == r.name and self.equivalent(w.type, r.type, seen)
                for w, r in zip(writer.fields, reader.fields)
            ):
                seen[key] = False
        return seen[key]


def resolve(writer: Schema, reader: Schema) -> Resolution:
    """The plan for reading data written with ``writer`` as ``reader``'s
    values. It never raises for an impossible pair: call ``check()``."""
    resolver = _Resolver(writer, reader)
    root = resolver.resolve(writer.root, reader.root, _root_path(writer), _root_path(reader))
    return Resolution(writer, reader, root, resolver.records)


def _root_path(schema: Schema) -> str:
    root = schema.deref(schema.root)
    return root.name if isinstance(root, Record) else ""


def equivalent(writer: Schema, reader: Schema, writer_type: AvroType, reader_type: AvroType) -> bool:
    """Whether a type of ``writer`` and one of ``reader`` are the same types
    branch for branch, fields in the same order (Java's unionEquiv): the
    reader's type reads the writer's bytes as they are."""
    return _Resolver(writer, reader).equivalent(writer_type, reader_type, {})
