"""Arrow tables' Python values and fastavro's, made comparable (tests/test_arrow*.py).

``read_table(...).to_pylist()`` and fastavro's records (``fastavro.reader``, or
``fastavro.json_reader`` over Java's ``tojson`` lines) hold the same Avro values in
a few different Python representations. :func:`table_rows` and :func:`oracle_rows`
bring both to one form, driven by the Avro schema, and change nothing else:

* map: Arrow's list of ``(key, value)`` tuples becomes a dict, as fastavro's is
  (so the entries' order is not compared: Java reads a map into a HashMap and
  prints it in hash order);
* timestamp-nanos, local-timestamp-nanos: fastavro's values are the stored ints;
  the table's ns columns are cast to int64 before ``to_pylist`` (a union's child,
  which cannot be cast, comes as pandas' ``Timestamp``: its ``value``), so no
  value goes through pandas' range, whose lowest int64 is NaT;
* uuid: fastavro's ``UUID`` (or, on a fixed(16), its 16 bytes: fastavro 1.13 does
  not convert those) becomes its canonical text, which the table holds;
* float: the value rounded to float32. A float read from the binary encoding
  already is one; one read from Avro JSON (Java prints a float's shortest
  decimal, ``1.1``) is the nearest double of that text, which is not;
* a union's value is compared in the first branch it fits (the table's dense
  union gives the value alone in ``to_pylist``, as fastavro does; a double of
  float32's range in ``["float", "double"]`` is so compared as a float, on both
  sides alike).

Everything else is compared as it comes: enums as their symbols (the table's
dictionary decoded), fixed and bytes as bytes, decimals as ``Decimal`` (equal by
value), dates, times and timestamps as ``datetime`` values (an aware one equals
another of the same instant), records as dicts.
"""

from __future__ import annotations

import datetime
import io
import math
import struct
import uuid
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pytest

NANOS = ("timestamp-nanos", "local-timestamp-nanos")
FLOAT32_MAX = 3.4028234663852886e38
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


@pytest.fixture(scope="module")
def served_by_tier0():
    """The module's codecs served by tier 0 (``from arrow_values import
    served_by_tier0`` and an autouse fixture asking for it): tests/conftest.py
    compiles every codec first (eager), and these tests read and write files
    of many schemas as an ordinary process's first files are, where
    compiling each would take seconds."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ROASTEDAVRO_COMPILE", "hot")
        yield


def fastavro_records(data: bytes) -> list:
    """A container file's records as fastavro reads them."""
    return list(fastavro.reader(io.BytesIO(data)))


def has_nan(value: Any) -> bool:
    """A NaN anywhere in ``value`` (tables of NaNs are not equal to themselves)."""
    if isinstance(value, float):
        return value != value
    if isinstance(value, dict):
        return any(has_nan(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(has_nan(v) for v in value)
    return False


def named_types(schema: Any) -> dict[str, Any]:
    """Every named type of ``schema`` by its full name (fastavro's parse)."""
    named: dict[str, Any] = {}
    fastavro.parse_schema(schema, named_schemas=named)
    return named


def table_rows(table: pa.Table, schema: Any) -> list[dict]:
    """The table's rows in the comparable form (``schema``: the file's record schema;
    the table may hold some of its fields, in any order)."""
    for index, field in enumerate(table.schema):
        if _has_ns(field.type):
            table = table.set_column(index, field.name, table.column(index).cast(_ns_as_int64(field.type)))
    return _rows(schema, table.to_pylist())


def oracle_rows(schema: Any, records: list[dict]) -> list[dict]:
    """fastavro's records (binary or JSON reader) in the comparable form."""
    return _rows(schema, records)


def project(rows: list[dict], columns: list[str]) -> list[dict]:
    return [{name: row[name] for name in columns} for row in rows]


def _rows(schema: Any, rows: list[dict]) -> list[dict]:
    named = named_types(schema)
    record = _deref(fastavro.parse_schema(schema), named)
    types = {field["name"]: field["type"] for field in record["fields"]}
    return [{name: canonical(types[name], value, named) for name, value in row.items()} for row in rows]


def _ns_as_int64(arrow_type: pa.DataType) -> pa.DataType:
    """``arrow_type`` with int64 for each ns timestamp (but a union's: see the module's
    docstring), and every field in it nullable: a null record's children may hold
    nulls where their fields are not nullable, which a cast to non-nullable refuses
    (test_arrow_interop.py: an expected failure, as Parquet's writer refuses them)."""
    if pa.types.is_timestamp(arrow_type) and arrow_type.unit == "ns":
        return pa.int64()
    if pa.types.is_struct(arrow_type):
        return pa.struct([pa.field(f.name, _ns_as_int64(f.type)) for f in arrow_type])
    if pa.types.is_map(arrow_type):
        return pa.map_(arrow_type.key_field, pa.field("value", _ns_as_int64(arrow_type.item_type)))
    if pa.types.is_list(arrow_type):
        return pa.list_(pa.field("item", _ns_as_int64(arrow_type.value_type)))
    return arrow_type


def _has_ns(arrow_type: pa.DataType) -> bool:
    if pa.types.is_timestamp(arrow_type):
        return arrow_type.unit == "ns"
    if pa.types.is_struct(arrow_type):
        return any(_has_ns(field.type) for field in arrow_type)
    if pa.types.is_map(arrow_type):
        return _has_ns(arrow_type.item_type)
    if pa.types.is_list(arrow_type):
        return _has_ns(arrow_type.value_type)
    return False


def _deref(schema: Any, named: dict[str, Any]) -> Any:
    while isinstance(schema, str) and schema in named:
        schema = named[schema]
    if isinstance(schema, str):
        return {"type": schema}
    if isinstance(schema, dict) and isinstance(schema.get("type"), (dict, list)):
        return _deref(schema["type"], named)
    return schema


def canonical(schema: Any, value: Any, named: dict[str, Any]) -> Any:
    """``value`` of Avro type ``schema`` (fastavro's or the table's) in the comparable form."""
    schema = _deref(schema, named)
    if isinstance(schema, list):
        for branch in schema:
            if fits(branch, value, named):
                return canonical(branch, value, named)
        raise AssertionError(f"{value!r} fits no branch of {schema!r}")
    if value is None:
        return None
    kind, logical = schema["type"], schema.get("logicalType")
    if logical == "uuid" and kind in ("string", "fixed"):
        if isinstance(value, bytes) and len(value) == 16:
            value = uuid.UUID(bytes=value)
        return str(uuid.UUID(str(value)))
    if logical in NANOS and kind == "long":
        return _nanos(value)
    if kind == "float":
        return struct.unpack("<f", struct.pack("<f", value))[0]
    if kind in ("record", "error"):
        return {
            field["name"]: canonical(field["type"], value[field["name"]], named) for field in schema["fields"]
        }
    if kind == "array":
        return [canonical(schema["items"], item, named) for item in value]
    if kind == "map":
        items = value.items() if isinstance(value, dict) else value
        return {key: canonical(schema["values"], item, named) for key, item in items}
    return value


def _nanos(value: Any) -> int:
    if isinstance(value, int):
        return value
    if hasattr(value, "value"):  # pandas' Timestamp: ns since the epoch (UTC where aware)
        return int(value.value)
    epoch = _EPOCH if value.tzinfo is None else _EPOCH_UTC
    return (value - epoch) // datetime.timedelta(microseconds=1) * 1000


def fits(schema: Any, value: Any, named: dict[str, Any]) -> bool:
    """Whether ``value`` (fastavro's or the table's) is one of Avro type ``schema``'s."""
    schema = _deref(schema, named)
    if isinstance(schema, list):
        return any(fits(branch, value, named) for branch in schema)
    kind, logical = schema["type"], schema.get("logicalType")
    if kind == "null" or value is None:
        return kind == "null" and value is None
    if logical == "decimal":
        return isinstance(value, Decimal)
    if logical == "uuid" and kind in ("string", "fixed"):
        return isinstance(value, (uuid.UUID, str)) or (isinstance(value, bytes) and len(value) == 16)
    if logical == "date" and kind == "int":
        return isinstance(value, datetime.date) and not isinstance(value, datetime.datetime)
    if logical in ("time-millis", "time-micros"):
        return isinstance(value, datetime.time)
    if logical in NANOS and kind == "long":
        return isinstance(value, (int, datetime.datetime)) and not isinstance(value, bool)
    if logical in (
        "timestamp-millis",
        "timestamp-micros",
        "local-timestamp-millis",
        "local-timestamp-micros",
    ):
        return isinstance(value, datetime.datetime)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in ("int", "long"):
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":  # a double past float32's range is no float's
        return isinstance(value, float) and not (math.isfinite(value) and abs(value) > FLOAT32_MAX)
    if kind == "double":
        return isinstance(value, float)
    if kind == "string":
        return isinstance(value, str)
    if kind == "bytes":
        return isinstance(value, bytes)
    if kind == "fixed":
        return isinstance(value, bytes) and len(value) == schema["size"]
    if kind == "enum":
        return value in schema["symbols"]
    if kind == "array":
        return isinstance(value, list) and not any(isinstance(item, tuple) for item in value)
    if kind == "map":  # a dict (fastavro), a list of (key, value) tuples (the table)
        return isinstance(value, dict) or (
            isinstance(value, list) and all(isinstance(item, tuple) and len(item) == 2 for item in value)
        )
    if kind in ("record", "error"):
        return isinstance(value, dict) and set(value) == {field["name"] for field in schema["fields"]}
    raise AssertionError(f"no such Avro type {schema!r}")
