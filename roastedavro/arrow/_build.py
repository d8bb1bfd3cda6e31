"""Decoded Avro values -> Arrow arrays, a column at a time.

``build(avro, values)`` turns the values the library's reader returns for
one Avro type (a column, or a nested part of one) into an Arrow array of
``arrow_type(avro)``, recursing into records, arrays, maps and unions.
``None`` is a null everywhere: the value of a nullable type, and every
value under a null record, array or map.
"""

from __future__ import annotations

import decimal

import pyarrow as pa

from roastedavro._datum import Duration, duration_bytes
from roastedavro._unionrule import UnionChooser
from roastedavro.arrow._types import arrow_type, branch_label, logical_name, nullable_branch
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


class Builder:
    """Builds the Arrow arrays of one schema's values (its union choosers kept)."""

    def __init__(self, schema: Schema):
        self.schema = schema
        self._choosers: dict[int, UnionChooser] = {}
        self._types: dict[int, pa.DataType] = {}

    def arrow(self, avro: AvroType) -> pa.DataType:
        kind = self._types.get(id(avro))
        if kind is None:
            kind = self._types[id(avro)] = arrow_type(avro, self.schema)
        return kind

    def build(self, avro: AvroType, values: list, path: str) -> pa.Array:
        """An Arrow array of ``values`` (each ``avro``'s, or None)."""
        avro = self.schema.deref(avro) if isinstance(avro, NamedRef) else avro
        if isinstance(avro, Record):
            return self._record(avro, values, path)
        if isinstance(avro, Array):
            return self._array(avro, values, path)
        if isinstance(avro, Map):
            return self._map(avro, values, path)
        if isinstance(avro, Union):
            branch = nullable_branch(avro)
            if branch is not None:
                return self.build(branch, values, path)
            return self._union(avro, values, path)
        if isinstance(avro, Enum):
            indexes = {symbol: i for i, symbol in enumerate(avro.symbols)}
            codes = pa.array([None if v is None else indexes[v] for v in values], pa.int32())
            return pa.DictionaryArray.from_arrays(codes, pa.array(avro.symbols, pa.string()))
        return self._scalar(avro, values, path)

    def _scalar(self, avro: AvroType, values: list, path: str) -> pa.Array:
        kind = self.arrow(avro)
        logical = logical_name(avro)
        if logical == "uuid":
            values = [None if v is None else str(v) for v in values]
        elif logical == "duration" and isinstance(avro, Fixed):
            values = [duration_bytes(v) if isinstance(v, Duration) else v for v in values]
        elif logical == "big-decimal":
            values = [str(v) if isinstance(v, decimal.Decimal) else v for v in values]
        try:
            return pa.array(values, kind)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as error:
            raise ValueError(f"{path or 'the value'}: cannot be held as Arrow's {kind}: {error}") from None

    def _record(self, avro: Record, values: list, path: str) -> pa.Array:
        mask = [v is None for v in values]
        kind = self.arrow(avro)
        fields = [kind.field(i) for i in range(kind.num_fields)]
        children = []
        for field, arrow in zip(avro.fields, fields):
            name = field.name
            # under a null record: a null where the child's field is nullable,
            # else a zero value the record's validity hides (as pyarrow fills
            # it; Parquet's writer refuses nulls in a non-nullable field)
            hidden = None if arrow.nullable else self.zero(field.type)
            column = [hidden if v is None else v[name] for v in values]
            children.append(self.build(field.type, column, f"{path}.{name}" if path else name))
        if not avro.fields:
            return pa.StructArray.from_arrays([], fields=[], mask=pa.array(mask, pa.bool_()))
        return pa.StructArray.from_arrays(
            children, fields=fields, mask=pa.array(mask, pa.bool_()) if any(mask) else None
        )

    def zero(self, avro: AvroType) -> object:
        """A value of ``avro`` the builder takes, of zeros (or the first symbol)."""
        avro = self.schema.deref(avro) if isinstance(avro, NamedRef) else avro
        if isinstance(avro, Record):
            return {field.name: self.zero(field.type) for field in avro.fields}
        if isinstance(avro, Array):
            return []
        if isinstance(avro, Map):
            return {}
        if isinstance(avro, Enum):
            return avro.symbols[0]
        if isinstance(avro, Union):
            return None  # a null in its first branch (the union's children are nullable)
        logical = logical_name(avro)
        if logical == "uuid":
            return ""  # as the column reader leaves it (hidden by the record's validity)
        if logical in ("decimal", "big-decimal"):
            return decimal.Decimal(0)
        if isinstance(avro, Fixed):
            return bytes(avro.size)
        assert isinstance(avro, Primitive)
        return {"boolean": False, "float": 0.0, "double": 0.0, "string": "", "bytes": b""}.get(avro.name, 0)

    def _offsets(self, values: list) -> tuple[pa.Array, pa.Array | None, list]:
        offsets, mask, end = [0], [], 0
        flat: list = []
        for v in values:
            if v is None:
                mask.append(True)
            else:
                mask.append(False)
                flat.extend(v.items() if isinstance(v, dict) else v)
                end = len(flat)
            offsets.append(end)
        nulls = pa.array(mask, pa.bool_()) if any(mask) else None
        return pa.array(offsets, pa.int32()), nulls, flat

    def _array(self, avro: Array, values: list, path: str) -> pa.Array:
        offsets, mask, flat = self._offsets(values)
        items = self.build(avro.items, flat, f"{path}[]")
        return pa.ListArray.from_arrays(offsets, items, type=self.arrow(avro), mask=mask)

    def _map(self, avro: Map, values: list, path: str) -> pa.Array:
        offsets, mask, flat = self._offsets(values)
        keys = pa.array([k for k, _ in flat], pa.string())
        items = self.build(avro.values, [v for _, v in flat], f"{path}{{}}")
        return pa.MapArray.from_arrays(offsets, keys, items, type=self.arrow(avro), mask=mask)

    def _union(self, avro: Union, values: list, path: str) -> pa.Array:
        chooser = self._choosers.get(id(avro))
        if chooser is None:
            chooser = self._choosers[id(avro)] = UnionChooser(avro, self.schema)
        branches = avro.branches
        null = next(
            (i for i, b in enumerate(branches) if isinstance(b, Primitive) and b.name == "null"), None
        )
        parts: list[list] = [[] for _ in branches]
        types, offsets = [], []
        for v in values:
            if v is None:
                # the null branch, or (under a null record) a null in the first branch
                index = null if null is not None else 0
                value = None
            elif type(v) is tuple:
                # read with its branch (read_table's branch reader): kept as written
                index, value = v
            else:
                index, value = chooser.choose(v)
            types.append(index)
            offsets.append(len(parts[index]))
            parts[index].append(value)
        children = [
            pa.nulls(len(part)) if i == null else self.build(b, part, f"{path}<{branch_label(b)}>")
            for i, (b, part) in enumerate(zip(branches, parts))
        ]
        return pa.UnionArray.from_dense(
            pa.array(types, pa.int8()),
            pa.array(offsets, pa.int32()),
            children,
            [branch_label(b) for b in branches],
            list(range(len(branches))),
        )
