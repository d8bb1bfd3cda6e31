"""The Avro <-> Arrow type mapping (docs/arrow.md has it as a table).

``arrow_type`` maps an Avro type to the Arrow type its column holds;
``derive_avro`` maps an Arrow schema to the Avro schema ``write_table``
writes when it is given none. Arrow has no recursive types: a named type
used inside itself is a SchemaError naming it.
"""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa

from roastedavro.avro.types import (
    Array,
    AvroType,
    Enum,
    Fixed,
    Map,
    NamedRef,
    NamedType,
    Primitive,
    Record,
    Schema,
    Union,
)
from roastedavro.errors import SchemaError

_PRIMITIVES = {
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}

#: timestamp logical types: (Arrow unit, time zone)
TIMESTAMPS = {
    "timestamp-millis": ("ms", "UTC"),
    "timestamp-micros": ("us", "UTC"),
    "timestamp-nanos": ("ns", "UTC"),
    "local-timestamp-millis": ("ms", None),
    "local-timestamp-micros": ("us", None),
    "local-timestamp-nanos": ("ns", None),
}

#: the largest precision of Arrow's decimal256
MAX_DECIMAL_PRECISION = 76


def logical_name(avro: AvroType) -> str | None:
    """The logical type's name of a Primitive or Fixed, else None."""
    logical = getattr(avro, "logical", None)
    return logical.name if logical is not None else None


def nullable_branch(union: Union) -> AvroType | None:
    """T of ``["null", T]`` or ``[T, "null"]``, else None."""
    branches = union.branches
    if len(branches) != 2:
        return None
    first, second = branches
    if isinstance(first, Primitive) and first.name == "null":
        return second
    if isinstance(second, Primitive) and second.name == "null":
        return first
    return None


def nullable_parts(union: Union, schema: Schema) -> tuple[AvroType, int] | None:
    """(T, the null branch's index) of ``["null", T]`` or ``[T, "null"]``,
    T's named type looked up; None for any other union."""
    branch = nullable_branch(union)
    if branch is None:
        return None
    null_index = 0 if isinstance(union.branches[0], Primitive) and union.branches[0].name == "null" else 1
    return (schema.deref(branch) if isinstance(branch, NamedRef) else branch), null_index


def branch_label(avro: AvroType) -> str:
    """A union branch's name: a named type's full name, else its type's name."""
    if isinstance(avro, (NamedRef, NamedType)):
        return avro.name
    return avro.type_name


def arrow_field(name: str, avro: AvroType, schema: Schema, within: tuple[str, ...] = ()) -> pa.Field:
    """The Arrow field of a value of ``avro`` named ``name``: nullable for
    ``null`` and the nullable unions."""
    nullable = False
    if isinstance(avro, Union) and nullable_branch(avro) is not None:
        nullable = True
    elif isinstance(avro, Primitive) and avro.name == "null":
        nullable = True
    return pa.field(name, arrow_type(avro, schema, within), nullable=nullable)


def arrow_type(avro: AvroType, schema: Schema, within: tuple[str, ...] = ()) -> pa.DataType:
    """The Arrow type of ``avro``'s values (``within``: the named types
    enclosing it, to find recursion)."""
    if isinstance(avro, NamedRef):
        if avro.name in within:
            raise SchemaError(
                f"the type {avro.name} contains itself: Arrow has no recursive types, "
                f"so it has no Arrow schema",
                avro.name,
            )
        avro = schema.named[avro.name]
    if isinstance(avro, NamedType):
        within = (*within, avro.name)
    logical = logical_name(avro)
    if isinstance(avro, Primitive):
        if logical in ("decimal",) and avro.name == "bytes":
            return _decimal(avro)
        if logical == "big-decimal" and avro.name == "bytes":
            return pa.string()
        if avro.name == "string" and logical == "uuid":
            return pa.string()
        if avro.name == "int" and logical == "date":
            return pa.date32()
        if avro.name == "int" and logical == "time-millis":
            return pa.time32("ms")
        if avro.name == "long" and logical == "time-micros":
            return pa.time64("us")
        if avro.name == "long" and logical in TIMESTAMPS:
            unit, zone = TIMESTAMPS[logical]
            return pa.timestamp(unit, tz=zone)
        return _PRIMITIVES[avro.name]
    if isinstance(avro, Fixed):
        if logical == "decimal":
            return _decimal(avro)
        if logical == "uuid" and avro.size == 16:
            return pa.string()
        return pa.binary(avro.size)
    if isinstance(avro, Enum):
        return pa.dictionary(pa.int32(), pa.string())
    if isinstance(avro, Record):
        return pa.struct([arrow_field(field.name, field.type, schema, within) for field in avro.fields])
    if isinstance(avro, Array):
        return pa.list_(arrow_field("item", avro.items, schema, within))
    if isinstance(avro, Map):
        values = arrow_field("value", avro.values, schema, within)
        return pa.map_(pa.field("key", pa.string(), nullable=False), values)
    if isinstance(avro, Union):
        branch = nullable_branch(avro)
        if branch is not None:
            return arrow_type(branch, schema, within)
        # a dense union's children are nullable (pyarrow's from_dense makes them so)
        children = [pa.field(branch_label(b), arrow_type(b, schema, within)) for b in avro.branches]
        return pa.dense_union(children, list(range(len(children))))
    raise SchemaError(f"no Arrow type for {avro!r}")  # pragma: no cover


def _decimal(avro: Primitive | Fixed) -> pa.DataType:
    precision, scale = avro.logical.precision, avro.logical.scale  # type: ignore[union-attr]
    if precision is None or precision > MAX_DECIMAL_PRECISION:
        raise SchemaError(
            f"a decimal of precision {precision}: Arrow's decimals hold at most "
            f"{MAX_DECIMAL_PRECISION} digits"
        )
    scale = scale or 0
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)


def arrow_schema_of(schema: Schema) -> pa.Schema:
    """The Arrow schema of a file of ``schema``'s records (its fields the columns)."""
    root = schema.deref(schema.root)
    if not (isinstance(root, Record) and root.kind == "record"):
        raise SchemaError(
            f"an Arrow table holds records: the schema's type is {root.type_name}, not a record"
        )
    return pa.schema([arrow_field(f.name, f.type, schema, (root.name,)) for f in root.fields])


# -- Arrow -> Avro (write_table without a schema) ---------------------------------------

_INTS = {"int8", "int16", "int32", "uint8", "uint16"}
_LONGS = {"int64", "uint32", "uint64"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_FULL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")


class _Namer:
    """Unique Avro names for the records, enums and fixed types of a derived
    schema: the field path joined by underscores."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        #: a top-level dictionary column's symbols, by its name
        self.symbols: dict[str, list] = {}

    def __call__(self, path: tuple[str, ...]) -> str:
        base = "_".join(path)
        if path and path[0] == "":  # a union's child: its own name, if it is an Avro name
            base = path[-1] if _FULL_NAME.match(path[-1]) else "_".join(path[1:]).replace(".", "_")
        name, number = base, 1
        while name in self.used:
            number += 1
            name = f"{base}_{number}"
        self.used.add(name)
        return name


def derive_avro(arrow: pa.Schema, name: str = "Row", symbols: dict[str, list] | None = None) -> dict:
    """The Avro schema (a dict) of ``arrow``'s rows: see docs/arrow.md for
    the rule. ``name``: the top-level record's name; ``symbols``: the
    dictionaries of top-level dictionary columns of strings, by column."""
    namer = _Namer()
    namer.used.add(name)
    namer.symbols = symbols or {}
    fields = [_derive_field(field, (field.name,), namer) for field in arrow]
    return {"type": "record", "name": name, "fields": fields}


def _derive_field(field: pa.Field, path: tuple[str, ...], namer: _Namer) -> dict:
    avro = _derive(field.type, path, namer, field)
    if field.nullable and avro != "null":
        if isinstance(avro, list):  # a union: null joins its branches
            if "null" not in avro:
                avro = ["null", *avro]
        else:
            avro = ["null", avro]
        return {"name": field.name, "type": avro, "default": None}
    return {"name": field.name, "type": avro}


def _nullable(field: pa.Field, path: tuple[str, ...], namer: _Namer) -> Any:
    avro = _derive(field.type, path, namer, field)
    if field.nullable and avro != "null" and not isinstance(avro, list):
        return ["null", avro]
    return avro


def _derive(kind: pa.DataType, path: tuple[str, ...], namer: _Namer, field: pa.Field | None = None) -> Any:
    t = pa.types
    where = ".".join(path)
    if t.is_null(kind):
        return "null"
    if t.is_boolean(kind):
        return "boolean"
    if t.is_integer(kind):
        return "int" if str(kind) in _INTS else "long"
    if t.is_float32(kind):
        return "float"
    if t.is_float64(kind):
        return "double"
    if t.is_string(kind) or t.is_large_string(kind) or t.is_string_view(kind):
        return "string"
    if t.is_binary(kind) or t.is_large_binary(kind) or t.is_binary_view(kind):
        return "bytes"
    if isinstance(kind, pa.UuidType):
        return {"type": "string", "logicalType": "uuid"}
    if t.is_fixed_size_binary(kind) and not t.is_decimal(kind):
        return {"type": "fixed", "name": namer(path), "size": kind.byte_width}
    if t.is_decimal(kind):
        if kind.precision > MAX_DECIMAL_PRECISION or t.is_decimal32(kind) or t.is_decimal64(kind):
            kind = pa.decimal128(kind.precision, kind.scale)
        return {"type": "bytes", "logicalType": "decimal", "precision": kind.precision, "scale": kind.scale}
    if t.is_date(kind):
        return {"type": "int", "logicalType": "date"}
    if t.is_time32(kind):
        return {"type": "int", "logicalType": "time-millis"}
    if t.is_time64(kind):
        if kind.unit == "ns":
            raise SchemaError(f"{where}: Avro has no time in nanoseconds (time-micros is the finest)")
        return {"type": "long", "logicalType": "time-micros"}
    if t.is_timestamp(kind):
        unit = {"s": "millis", "ms": "millis", "us": "micros", "ns": "nanos"}[kind.unit]
        prefix = "timestamp" if kind.tz is not None else "local-timestamp"
        return {"type": "long", "logicalType": f"{prefix}-{unit}"}
    if t.is_dictionary(kind):
        if t.is_string(kind.value_type) or t.is_large_string(kind.value_type):
            symbols = namer.symbols.get(path[0]) if len(path) == 1 else None
            if symbols is not None and _symbols_valid(symbols):
                return {"type": "enum", "name": namer(path), "symbols": list(symbols)}
            return "string"
        return _derive(kind.value_type, path, namer)
    if t.is_map(kind):
        if not (t.is_string(kind.key_type) or t.is_large_string(kind.key_type)):
            raise SchemaError(f"{where}: Avro maps have string keys, not {kind.key_type}")
        return {"type": "map", "values": _nullable(kind.item_field, (*path, "value"), namer)}
    if t.is_list(kind) or t.is_large_list(kind) or t.is_fixed_size_list(kind) or t.is_list_view(kind):
        return {"type": "array", "items": _nullable(kind.value_field, (*path, "item"), namer)}
    if t.is_struct(kind):
        fields = [
            _derive_field(kind.field(i), (*path, kind.field(i).name), namer) for i in range(kind.num_fields)
        ]
        return {"type": "record", "name": namer(path), "fields": fields}
    if t.is_union(kind):
        branches = []
        for i in range(kind.num_fields):
            child = kind.field(i)
            # a named branch is named as the child, as read_table names it
            branch = _derive(child.type, ("", *path, child.name), namer)
            if isinstance(branch, list):
                raise SchemaError(f"{where}: a union inside a union has no Avro type")
            branches.append(branch)
        return branches
    raise SchemaError(f"{where}: Avro has no type for Arrow's {kind}")


def _symbols_valid(symbols: list) -> bool:
    """Whether a dictionary's values can be an enum's symbols: distinct Avro names."""
    return (
        bool(symbols)
        and len(set(symbols)) == len(symbols)
        and all(isinstance(s, str) and _NAME.match(s) for s in symbols)
    )
