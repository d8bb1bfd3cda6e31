"""The column reader of read_table: a schema's records decoded straight into
Arrow buffers (roastedavro._columns), then made into arrays without a
Python object per value.

``column_reader(schema, flags)`` gives a BlockReader and its root Column
where every type in the schema has such a column; None where one does not
(big-decimals, whose Arrow values are converted from the library's
Python values: read_table then builds the columns from the
records, roastedavro.arrow._build). ``resolving_column_reader(writer,
reader, flags)`` reads another writer's records as the reader schema's:
tier 0's Rearranger turns each block into the reader's bytes, which the
reader schema's column reader decodes.
"""

from __future__ import annotations

from typing import Any, Callable

import pyarrow as pa

from roastedavro import _columns as c
from roastedavro._tier0 import Rearranger
from roastedavro.arrow._types import TIMESTAMPS, arrow_type, branch_label, logical_name, nullable_parts
from roastedavro.avro.types import (
    Array,
    AvroType,
    Enum,
    Fixed,
    Map,
    NamedRef,
    Primitive,
    Record,
    Schema,
    Union,
)
from roastedavro.avroplan import _MinSizes
from roastedavro.flags import CompileFlags

# Column kinds (the enum of roastedavro/_columns.pyx)
(
    NULL,
    BOOLEAN,
    INT32,
    INT64,
    FLOAT32,
    FLOAT64,
    STRING,
    BINARY,
    FIXED,
    ENUM,
    STRUCT,
    LIST,
    MAP,
    UNION,
    DECIMAL,
    UUID,
) = range(16)

_PLAIN = {
    "null": NULL,
    "boolean": BOOLEAN,
    "int": INT32,
    "long": INT64,
    "float": FLOAT32,
    "double": FLOAT64,
    "string": STRING,
    "bytes": BINARY,
}
#: logical types whose Arrow values are the Avro ones as stored (a date's
#: days, a timestamp's units)
_AS_STORED = {"date", "time-millis", "time-micros", *TIMESTAMPS}


class _Unsupported(Exception):
    """A type read_table builds from Python values instead."""


class Plan:
    """One column: its Column, Arrow type, and (an enum's) symbols."""

    def __init__(self, column: Any, kind: pa.DataType, children: list[Plan], symbols: Any = None):
        self.column = column
        self.type = kind
        self.children = children
        self.symbols = symbols


class _Planner:
    def __init__(self, schema: Schema):
        self.schema = schema
        self.sizes = _MinSizes(schema)

    def skipped(self, avro: AvroType) -> Plan:
        """A column not asked for: its values skipped, not decoded."""
        avro = self.schema.deref(avro) if isinstance(avro, NamedRef) else avro
        null_index, children, size, min_size = -1, [], 0, 0
        if isinstance(avro, Union):
            nullable = nullable_parts(avro, self.schema)
            if nullable is None:
                children = [self.skipped(b) for b in avro.branches]
                column = c.Column(
                    UNION, size=len(children), children=[p.column for p in children], keep=False
                )
                return Plan(column, pa.null(), children)
            avro, null_index = nullable
        if isinstance(avro, Primitive):
            kind = _PLAIN[avro.name]
        elif isinstance(avro, (Fixed, Enum)):
            kind, size = (FIXED, avro.size) if isinstance(avro, Fixed) else (ENUM, len(avro.symbols))
        elif isinstance(avro, Record):
            kind, children = STRUCT, [self.skipped(field.type) for field in avro.fields]
        elif isinstance(avro, Array):
            kind, children, min_size = LIST, [self.skipped(avro.items)], self.sizes.of(avro.items)
        else:  # a map
            assert isinstance(avro, Map)
            kind, min_size = MAP, 1 + self.sizes.of(avro.values)
            children = [Plan(c.Column(STRING, keep=False), pa.null(), []), self.skipped(avro.values)]
        column = c.Column(
            kind, null_index, size=size, min_size=min_size, children=[p.column for p in children], keep=False
        )
        return Plan(column, pa.null(), children)

    def plan(self, avro: AvroType, path: str) -> Plan:
        avro = self.schema.deref(avro) if isinstance(avro, NamedRef) else avro
        if isinstance(avro, Union):
            nullable = nullable_parts(avro, self.schema)
            if nullable is not None:
                return self.value(nullable[0], nullable[1], path)
            children = [self.plan(b, f"{path}<{branch_label(b)}>") for b in avro.branches]
            column = c.Column(UNION, size=len(children), children=[p.column for p in children])
            return Plan(column, arrow_type(avro, self.schema), children)
        return self.value(avro, -1, path)

    def value(self, avro: AvroType, null_index: int, path: str) -> Plan:
        kind = arrow_type(avro, self.schema)
        logical = logical_name(avro)
        if logical == "decimal":
            size = avro.size if isinstance(avro, Fixed) else 0
            width = 16 if pa.types.is_decimal128(kind) else 32
            column = c.Column(
                DECIMAL, null_index, size=size, precision=kind.precision, width=width, path=path
            )
            return Plan(column, kind, [])
        if logical == "uuid":
            column = c.Column(UUID, null_index, size=16 if isinstance(avro, Fixed) else 0)
            return Plan(column, kind, [])
        if logical is not None and logical not in _AS_STORED and logical != "duration":
            raise _Unsupported(logical)
        if isinstance(avro, Primitive):
            return Plan(c.Column(_PLAIN[avro.name], null_index), kind, [])
        if isinstance(avro, Fixed):
            return Plan(c.Column(FIXED, null_index, size=avro.size), kind, [])
        if isinstance(avro, Enum):
            symbols = pa.array(avro.symbols, pa.string())
            return Plan(c.Column(ENUM, null_index, size=len(avro.symbols)), kind, [], symbols)
        if isinstance(avro, Record):
            children = [
                self.plan(field.type, f"{path}.{field.name}" if path else field.name) for field in avro.fields
            ]
            return Plan(c.Column(STRUCT, null_index, children=[p.column for p in children]), kind, children)
        if isinstance(avro, Array):
            items = self.plan(avro.items, f"{path}[]")
            column = c.Column(LIST, null_index, min_size=self.sizes.of(avro.items), children=[items.column])
            return Plan(column, kind, [items])
        if isinstance(avro, Map):
            keys = Plan(c.Column(STRING), pa.string(), [])
            values = self.plan(avro.values, f"{path}{{}}")
            column = c.Column(
                MAP,
                null_index,
                min_size=1 + self.sizes.of(avro.values),
                children=[keys.column, values.column],
            )
            return Plan(column, kind, [keys, values])
        raise _Unsupported(type(avro).__name__)  # pragma: no cover


def column_reader(
    schema: Schema, flags: CompileFlags | None, columns: list[str] | None = None
) -> tuple[Any, Plan] | None:
    """A BlockReader of ``schema``'s records (a record type) and the plan
    of its root column, or None where a type needs the Python values.
    ``columns``: the top-level fields read (the others skipped, not
    decoded); None: all of them."""
    flags = flags or CompileFlags()
    planner = _Planner(schema)
    record = schema.deref(schema.root)
    assert isinstance(record, Record)
    try:
        children = [
            planner.plan(field.type, field.name)
            if columns is None or field.name in columns
            else planner.skipped(field.type)
            for field in record.fields
        ]
    except _Unsupported:
        return None
    root = Plan(c.Column(STRUCT, children=[p.column for p in children]), arrow_type(record, schema), children)
    if columns is not None:
        root.type = pa.struct(
            [root.type.field(field.name) for field in record.fields if field.name in columns]
        )
    reader = c.BlockReader(root.column, planner.sizes.of(schema.root), flags.max_depth, flags.max_items)
    return reader, root


#: the column reader's item allowance over bytes the Rearranger wrote
_UNBOUNDED = 1 << 62


class _Rearranged:
    """A block reader of records written with another schema: each block's
    records turned into the reader schema's bytes (resolution as Java's:
    fields moved, dropped and added from their defaults, numbers promoted,
    enums and union branches renumbered; checked as the reader reads them,
    errors at the writer's offsets), then decoded into the reader's
    columns."""

    __slots__ = ("rearranger", "columns")

    def __init__(self, rearranger: Rearranger, columns: Any) -> None:
        self.rearranger = rearranger
        self.columns = columns

    def load_block_within(self, data: Any, count: int, allowance: int) -> tuple[int, int]:
        moved, left = self.rearranger.transcode_block_within(data, count, allowance)
        # the records and their items were paid for from the writer's bytes
        # (the file's budget); the reader's bytes hold those items and the
        # ones its defaults add, as many per record as the reader schema
        # says: not the file's to pay for, nor bounded by the moved bytes'
        # length (items of no bytes, as nulls)
        self.columns.load_block_within(moved, count, _UNBOUNDED)
        return count, left

    def cut_every(self, batch_size: int, on_full: Callable[[], object]) -> None:
        self.columns.cut_every(batch_size, on_full)


def resolving_column_reader(
    writer: Schema, reader: Schema, flags: CompileFlags | None
) -> tuple[Any, Plan] | None:
    """A block reader of ``writer``'s records as ``reader``'s, into the
    columns of ``reader``'s plan; None where the reader's types need the
    Python values or resolution does more than move bytes (the resolving
    interpreter then reads the records)."""
    columnar = column_reader(reader, flags)
    if columnar is None:
        return None
    rearranger = Rearranger.build(writer, reader, flags or CompileFlags())
    if rearranger is None:
        return None
    return _Rearranged(rearranger, columnar[0]), columnar[1]


def finish(plan: Plan) -> pa.Array:
    """The Arrow array of the values read into ``plan``'s column so far,
    which starts again empty (its children's too)."""
    column = plan.column
    length, nulls, validity, values, data = column.buffers()
    kind = column.kind
    valid = pa.py_buffer(validity) if validity is not None else None
    if kind == NULL:
        return pa.nulls(length)
    if kind in (BOOLEAN, INT32, INT64, FLOAT32, FLOAT64, DECIMAL):
        return pa.Array.from_buffers(plan.type, length, [valid, pa.py_buffer(values)], null_count=nulls)
    if kind in (STRING, BINARY, UUID):
        buffers = [valid, pa.py_buffer(values), pa.py_buffer(data)]
        return pa.Array.from_buffers(plan.type, length, buffers, null_count=nulls)
    if kind == FIXED:
        return pa.Array.from_buffers(plan.type, length, [valid, pa.py_buffer(data)], null_count=nulls)
    if kind == ENUM:
        indices = pa.Array.from_buffers(pa.int32(), length, [valid, pa.py_buffer(values)], null_count=nulls)
        return pa.DictionaryArray.from_arrays(indices, plan.symbols)
    children = [finish(child) for child in plan.children if child.column.keep]
    if kind == STRUCT:
        return pa.Array.from_buffers(plan.type, length, [valid], null_count=nulls, children=children)
    if kind == LIST:
        buffers = [valid, pa.py_buffer(values)]
        return pa.Array.from_buffers(plan.type, length, buffers, null_count=nulls, children=children)
    if kind == MAP:
        keys, items = children
        entries_type = pa.struct([plan.type.key_field, plan.type.item_field])
        entries = pa.Array.from_buffers(entries_type, len(keys), [None], null_count=0, children=[keys, items])
        buffers = [valid, pa.py_buffer(values)]
        return pa.Array.from_buffers(plan.type, length, buffers, null_count=nulls, children=[entries])
    # a dense union: its type ids and offsets
    buffers = [None, pa.py_buffer(data), pa.py_buffer(values)]
    return pa.Array.from_buffers(plan.type, length, buffers, null_count=0, children=children)
