"""The column writer of write_table: a table's rows written as Avro records
straight from its Arrow buffers (roastedavro._columnwriter), without a
Python object per value.

``row_writer(schema, arrow)`` plans, once per table, how each Avro type is
read from its column's Arrow type; ``RowSource.bind(batch)`` points the
plan at a batch's buffers. It gives None where a pair of types needs the
library's Python values instead (big-decimals, a wide union from a
column that is not an Arrow union, a decimal of another scale...):
write_table then writes the rows as dicts (roastedavro.arrow._values).
"""

from __future__ import annotations

import struct
from typing import Any, Callable, Iterator

import pyarrow as pa

from roastedavro import _columnwriter as c
from roastedavro._defaults import encode_default
from roastedavro.arrow._types import TIMESTAMPS, branch_label, logical_name, nullable_parts
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

# Source kinds (the enum of roastedavro/_columnwriter.pyx)
(
    NULL,
    BOOLEAN,
    INT,
    FLOAT32,
    FLOAT64,
    BINARY,
    FIXED,
    ENUM,
    STRUCT,
    LIST,
    MAP,
    UNION,
    CONST,
    DECIMAL,
    UUID_TEXT,
    UUID_RAW,
) = range(16)

#: the Arrow type an int-based logical type's values are cast to (its unit)
_TIMES = {"time-millis": pa.time32("ms"), "time-micros": pa.time64("us"), "date": pa.date32()}


class _Unsupported(Exception):
    """A pair of types written through Python values instead."""


def _integer(kind: pa.DataType) -> tuple[int, bool] | None:
    """(width, signed) of an Arrow integer type, else None."""
    if pa.types.is_integer(kind):
        return kind.bit_width // 8, pa.types.is_signed_integer(kind)
    return None


class _Node:
    """One Source and how it is bound to its array: ``prepare`` turns the
    column's array into the layout the Source reads (a cast, a dictionary
    encoding), ``children`` take their arrays from it."""

    def __init__(
        self,
        source: Any,
        prepare: Callable[[pa.Array, str], pa.Array] | None = None,
        children: list[tuple[Callable[[pa.Array], pa.Array], _Node]] = (),  # type: ignore[assignment]
        symbols: dict[str, int] | None = None,
    ):
        self.source = source
        self.prepare = prepare
        self.children = list(children)
        self.symbols = symbols  # an enum's: symbol -> index

    def bind(self, array: pa.Array, path: str) -> None:
        if self.prepare is not None:
            array = self.prepare(array, path)
        if self.symbols is not None:
            dictionary = array.dictionary.to_pylist()
            table = struct.pack(f"<{len(dictionary)}i", *(self.symbols.get(s, -1) for s in dictionary))
            self.source.bind(array, table, dictionary)
        else:
            self.source.bind(array)
        for take, child in self.children:
            child.bind(take(array), path)


def _cast(kind: pa.DataType) -> Callable[[pa.Array, str], pa.Array]:
    def prepare(array: pa.Array, path: str) -> pa.Array:
        if array.type == kind:
            return array
        try:
            return array.cast(kind)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
            raise ValueError(f"{path}: {error}") from None

    return prepare


def _storage(array: pa.Array, path: str) -> pa.Array:
    return array.storage  # an extension type's values, as stored


def _dictionary(array: pa.Array, path: str) -> pa.Array:
    return array if pa.types.is_dictionary(array.type) else array.dictionary_encode()


class _Planner:
    def __init__(self, schema: Schema):
        self.schema = schema

    def plan(self, avro: AvroType, kind: pa.DataType) -> _Node:
        avro = self.schema.deref(avro) if isinstance(avro, NamedRef) else avro
        if isinstance(avro, Union):
            nullable = nullable_parts(avro, self.schema)
            if nullable is not None and not pa.types.is_union(kind):
                return self.value(nullable[0], kind, nullable[1])
            return self.union(avro, kind)
        return self.value(avro, kind, -1)

    def union(self, avro: Union, kind: pa.DataType) -> _Node:
        if not pa.types.is_union(kind):
            raise _Unsupported("a union from a column that is not an Arrow union")
        labels = {branch_label(b): i for i, b in enumerate(avro.branches)}
        table = [-1] * 128
        children: list[tuple[Callable, _Node]] = []
        sources: list[Any] = [None] * 128
        for position, code in enumerate(kind.type_codes):
            name = kind.field(position).name
            index = labels.get(name)
            if index is None and kind.num_fields == len(avro.branches):
                index = position  # the branch in the same place (as _values reads it)
            if index is None:
                raise _Unsupported(f"the Arrow union's child {name!r} is no branch")
            node = self.plan(avro.branches[index], kind.field(position).type)
            table[code] = index
            sources[code] = node.source
            children.append((lambda array, position=position: array.field(position), node))
        null_branch = next(
            (i for i, b in enumerate(avro.branches) if isinstance(b, Primitive) and b.name == "null"), -1
        )
        source = c.Source(
            UNION,
            avro.type_name,
            size=null_branch + 1,
            children=sources,
            table=struct.pack("<128i", *table),
        )
        return _Node(source, children=children)

    def value(self, avro: AvroType, kind: pa.DataType, null_index: int) -> _Node:
        what = avro.name if isinstance(avro, (Record, Enum, Fixed)) else avro.type_name
        logical = logical_name(avro)
        if logical == "big-decimal":
            raise _Unsupported(logical)
        if logical == "uuid":
            return self.uuid(avro, kind, null_index)  # type: ignore[arg-type]  # uuid: on string or fixed
        if isinstance(avro, Primitive):
            return self.primitive(avro, kind, null_index, logical)
        if isinstance(avro, Fixed):
            if logical == "decimal":
                return self.decimal(avro, kind, null_index, avro.size)
            if not (pa.types.is_fixed_size_binary(kind) and kind.byte_width == avro.size):
                raise _Unsupported("fixed")
            return _Node(c.Source(FIXED, what, null_index, size=avro.size))
        if isinstance(avro, Enum):
            if pa.types.is_dictionary(kind):
                value_type, integer = kind.value_type, _integer(kind.index_type)
            else:
                value_type, integer = kind, (4, True)  # dictionary_encode()'s int32 indices
            if (
                not (pa.types.is_string(value_type) or pa.types.is_large_string(value_type))
                or integer is None
            ):
                raise _Unsupported("enum")
            width, signed = integer
            source = c.Source(ENUM, what, null_index, width=width, signed=signed)
            return _Node(source, _dictionary, symbols={s: i for i, s in enumerate(avro.symbols)})
        if isinstance(avro, Record):
            if not pa.types.is_struct(kind):
                raise _Unsupported("record")
            return self.record(avro, kind, null_index)
        if isinstance(avro, Array):
            if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)):
                raise _Unsupported("array")
            items = self.plan(avro.items, kind.value_type)
            width = 8 if pa.types.is_large_list(kind) else 4
            source = c.Source(LIST, what, null_index, width=width, children=[items.source])
            return _Node(source, children=[(lambda array: array.values, items)])
        if isinstance(avro, Map):
            if not (pa.types.is_map(kind) and pa.types.is_string(kind.key_type)):
                raise _Unsupported("map")
            keys = _Node(c.Source(BINARY, "string", width=4))
            items = self.plan(avro.values, kind.item_type)
            source = c.Source(MAP, what, null_index, width=4, children=[keys.source, items.source])
            return _Node(
                source, children=[(lambda array: array.keys, keys), (lambda array: array.items, items)]
            )
        raise _Unsupported(what)  # pragma: no cover

    def record(self, avro: Record, kind: pa.StructType, null_index: int) -> _Node:
        names = [kind.field(i).name for i in range(kind.num_fields)]
        children: list[tuple[Callable, _Node]] = []
        sources = []
        for field in avro.fields:
            if field.name in names:
                position = names.index(field.name)
                node = self.plan(field.type, kind.field(position).type)
                children.append((lambda array, position=position: array.field(position), node))
            elif field.has_default:
                constant = encode_default(field.type, field.default, self.schema, field.name)
                node = _Node(c.Source(CONST, "default", constant=constant))
            else:
                raise _Unsupported("a field with no child and no default")  # the writer names it
            sources.append(node.source)
        source = c.Source(
            STRUCT, avro.name, null_index, children=sources, names=[f.name for f in avro.fields]
        )
        return _Node(source, children=children)

    def primitive(self, avro: Primitive, kind: pa.DataType, null_index: int, logical: str | None) -> _Node:
        name, what = avro.name, avro.type_name
        if name == "null":
            if not pa.types.is_null(kind):
                raise _Unsupported("null")
            return _Node(c.Source(NULL, what, null_index))
        if name == "boolean":
            if not pa.types.is_boolean(kind):
                raise _Unsupported("boolean")
            return _Node(c.Source(BOOLEAN, what, null_index))
        if name in ("int", "long"):
            prepare = None
            target = _TIMES.get(logical or "")
            if logical in TIMESTAMPS and pa.types.is_timestamp(kind):
                target = pa.timestamp(TIMESTAMPS[logical][0], tz=kind.tz)
            if target is not None and kind != target and not pa.types.is_integer(kind):
                prepare, kind = _cast(target), target
            if pa.types.is_timestamp(kind) or pa.types.is_time(kind) or pa.types.is_date(kind):
                if kind != target:
                    raise _Unsupported("a time column for another type")
                width, signed = kind.bit_width // 8, True
            else:
                integer = _integer(kind)
                if integer is None:
                    raise _Unsupported("an int from a column of another type")
                width, signed = integer
            return _Node(
                c.Source(INT, what, null_index, width=width, signed=signed, narrow=name == "int"), prepare
            )
        if name in ("float", "double"):
            if not pa.types.is_floating(kind) or pa.types.is_float16(kind):
                raise _Unsupported("a float from a column of another type")
            return _Node(
                c.Source(FLOAT32 if name == "float" else FLOAT64, what, null_index, width=kind.bit_width // 8)
            )
        if name == "bytes" and logical == "decimal":
            return self.decimal(avro, kind, null_index, 0)
        text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
        binary = pa.types.is_binary(kind) or pa.types.is_large_binary(kind)
        if name == "string" and pa.types.is_dictionary(kind) and pa.types.is_string(kind.value_type):
            return _Node(c.Source(BINARY, what, null_index, width=4), _cast(pa.string()))
        if not ((name == "string" and text) or (name == "bytes" and binary)):
            raise _Unsupported(f"{name} from {kind}")
        width = 8 if pa.types.is_large_string(kind) or pa.types.is_large_binary(kind) else 4
        return _Node(c.Source(BINARY, what, null_index, width=width))

    def uuid(self, avro: Primitive | Fixed, kind: pa.DataType, null_index: int) -> _Node:
        """A uuid from text (as the record writer takes it: the usual
        spelling in C, others through uuid.UUID) or from 16 bytes
        (fixed_size_binary(16), Arrow's uuid extension type)."""
        storage, unwrap = kind, None
        if isinstance(kind, pa.BaseExtensionType):
            storage, unwrap = kind.storage_type, _storage
        on_fixed = isinstance(avro, Fixed)
        if pa.types.is_string(storage) or pa.types.is_large_string(storage):
            width = 8 if pa.types.is_large_string(storage) else 4
            source = c.Source(UUID_TEXT, avro.type_name, null_index, width=width, size=16 if on_fixed else 0)
            return _Node(source, unwrap)
        if pa.types.is_fixed_size_binary(storage) and storage.byte_width == 16:
            if on_fixed:
                return _Node(c.Source(FIXED, avro.type_name, null_index, size=16), unwrap)
            return _Node(c.Source(UUID_RAW, avro.type_name, null_index), unwrap)
        raise _Unsupported("a uuid from a column of another type")

    def decimal(self, avro: Primitive | Fixed, kind: pa.DataType, null_index: int, size: int) -> _Node:
        logical = avro.logical
        if not (
            (pa.types.is_decimal128(kind) or pa.types.is_decimal256(kind))
            and kind.scale == logical.scale  # type: ignore[union-attr]
            and kind.precision <= (logical.precision or 0)  # type: ignore[union-attr]
        ):
            raise _Unsupported("a decimal of another scale or precision")
        width = 16 if pa.types.is_decimal128(kind) else 32
        return _Node(c.Source(DECIMAL, avro.type_name, null_index, width=width, size=size))


def checked(array: pa.Array, name: str) -> None:
    """Arrow's full validation of ``array`` (offsets in order and within
    their data, union type ids and offsets, dictionary indices, strings'
    UTF-8), pyarrow's error after the column's name. Faster than
    ``validate(full=True)``, which checks each string's UTF-8 apart: the
    array is validated in full as the same layout with binary in place of
    strings, then each string array's bytes are scanned at once, and only
    one with a byte beyond ASCII is validated by pyarrow."""
    try:
        plain = _without_text(array.type)
        try:
            viewed = array.view(plain) if plain != array.type else array
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError):
            array.validate(full=True)
            return
        try:
            viewed.validate(full=True)
        except pa.ArrowInvalid:
            # the array's own error; or a view pyarrow made wrong (it loses
            # the length of a null-typed child), where the array itself is valid
            array.validate(full=True)
            return
        for text in _texts(array):
            if not c.ascii_values(text, pa.types.is_large_string(text.type)):
                text.validate(full=True)
    except pa.ArrowInvalid as error:
        raise pa.ArrowInvalid(f"{name}: {error}") from None


def _without_text(kind: pa.DataType) -> pa.DataType:
    """``kind``'s layout with binary for every string that _texts reaches."""
    if pa.types.is_string(kind):
        return pa.binary()
    if pa.types.is_large_string(kind):
        return pa.large_binary()
    if pa.types.is_struct(kind):
        return pa.struct([field.with_type(_without_text(field.type)) for field in kind])
    if pa.types.is_map(kind):
        return pa.map_(
            kind.key_field.with_type(_without_text(kind.key_type)),
            kind.item_field.with_type(_without_text(kind.item_type)),
            kind.keys_sorted,
        )
    if pa.types.is_list(kind):
        return pa.list_(kind.value_field.with_type(_without_text(kind.value_type)))
    if pa.types.is_large_list(kind):
        return pa.large_list(kind.value_field.with_type(_without_text(kind.value_type)))
    if pa.types.is_union(kind):
        fields = [field.with_type(_without_text(field.type)) for field in kind]
        return pa.union(fields, kind.mode, kind.type_codes)
    return kind


def _texts(array: pa.Array) -> Iterator[pa.Array]:
    """The string arrays in ``array`` that _without_text made binary."""
    kind = array.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        yield array
    elif pa.types.is_struct(kind) or pa.types.is_union(kind):
        for index in range(kind.num_fields):
            yield from _texts(array.field(index))
    elif pa.types.is_map(kind):
        yield from _texts(array.keys)
        yield from _texts(array.items)
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
        yield from _texts(array.values)


class RowSource:
    """A table's rows as Avro records: ``bind`` a batch, then ``encode``."""

    def __init__(self, root: _Node, columns: list[tuple[str, _Node]]):
        self.root = root
        self.columns = columns
        self.writer = c.RowWriter(root.source)

    def bind(self, batch: pa.RecordBatch) -> None:
        # the buffers are read as Arrow lays them out, so they are checked first
        batch.validate()
        for name, node in self.columns:
            column = batch.column(name)
            checked(column, name)
            node.bind(column, name)

    def encode(self, start: int, stop: int, limit: int) -> tuple[bytes, int]:
        return self.writer.encode(start, stop, limit)


def row_source(schema: Schema, arrow: pa.Schema) -> RowSource | None:
    """A RowSource writing ``schema``'s records (a record type) from a
    table of ``arrow``'s columns, or None where a pair of types is written
    through Python values."""
    record = schema.deref(schema.root)
    assert isinstance(record, Record)
    planner = _Planner(schema)
    columns: list[tuple[str, _Node]] = []
    sources = []
    try:
        for field in record.fields:
            if field.name in arrow.names:
                node = planner.plan(field.type, arrow.field(field.name).type)
                columns.append((field.name, node))
            else:
                constant = encode_default(field.type, field.default, schema, field.name)
                node = _Node(c.Source(CONST, "default", constant=constant))
            sources.append(node.source)
    except _Unsupported:
        return None
    root = c.Source(STRUCT, record.type_name, children=sources, names=[f.name for f in record.fields])
    return RowSource(_Node(root), columns)
