"""read_table with a reader schema: another writer's records straight into
Arrow buffers (tier 0's Rearranger turns each block into the reader's bytes,
the reader schema's column reader decodes them).

Oracles: fastavro's reader with the same reader schema (the values), and the
resolving interpreter's records built into columns (the table, types and
union branches included: that path is checked against Java elsewhere).
"""

from __future__ import annotations

import datetime
import io
from decimal import Decimal

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

import roastedavro.arrow as arrow_module  # noqa: E402
from arrow_values import (  # noqa: E402
    has_nan,
    oracle_rows,
    project,
    served_by_tier0,  # noqa: F401 (a fixture)
    table_rows,
)
from avro_strategies import datums  # noqa: E402
from evolution import evolved_pairs  # noqa: E402
from roastedavro.arrow import _columns, read_table  # noqa: E402
from roastedavro.container import ContainerError  # noqa: E402
from roastedavro.errors import SchemaError, SchemaResolutionError  # noqa: E402
from test_resolution_properties import has_values  # noqa: E402

pytestmark = pytest.mark.usefixtures("served_by_tier0")


def container(schema, records, codec="null", sync_interval=16000) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, codec=codec, sync_interval=sync_interval)
    return out.getvalue()


def fastavro_read(data: bytes, reader_schema) -> list:
    return list(fastavro.reader(io.BytesIO(data), reader_schema=fastavro.parse_schema(reader_schema)))


class Paths:
    """read_table through the buffers (counting the blocks rearranged) and
    through the resolving interpreter's values."""

    def __init__(self, monkeypatch):
        self.monkeypatch = monkeypatch
        self.blocks = 0
        original = _columns._Rearranged.load_block_within

        def counted(reader, data, count, allowance):
            self.blocks += 1
            return original(reader, data, count, allowance)

        monkeypatch.setattr(_columns._Rearranged, "load_block_within", counted)

    def buffers(self, data: bytes, reader_schema, **options):
        return read_table(io.BytesIO(data), reader_schema=reader_schema, **options)

    def values(self, data: bytes, reader_schema, **options):
        with self.monkeypatch.context() as patch:
            patch.setattr(arrow_module, "resolving_column_reader", lambda *args: None)
            return read_table(io.BytesIO(data), reader_schema=reader_schema, **options)


@pytest.fixture
def paths(monkeypatch):
    return Paths(monkeypatch)


ITEM_V1 = {
    "type": "record",
    "name": "Item",
    "fields": [
        {"name": "sku", "type": "string"},
        {"name": "qty", "type": "int"},
        {"name": "unit", "type": {"type": "enum", "name": "Unit", "symbols": ["EACH", "KG", "LITRE"]}},
    ],
}
ORDER_V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "int"},
        {"name": "note", "type": "string"},
        {"name": "price", "type": "float"},
        {"name": "total", "type": "long"},
        {"name": "raw", "type": "string"},
        {"name": "items", "type": {"type": "array", "items": ITEM_V1}},
        {"name": "by_code", "type": {"type": "map", "values": "shop.Item"}},
        {"name": "maybe", "type": ["null", "int"]},
        {"name": "choice", "type": ["int", "string"]},
        {"name": "plain", "type": "long"},
        {"name": "dropped", "type": {"type": "array", "items": "string"}},
    ],
}
# what a later producer reads the same data as: fields moved, dropped and
# added from defaults of every kind; numbers promoted; an enum's symbols
# renumbered with a default; union branches renumbered; a value become a union
ORDER_V2 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "total", "type": "double"},
        {
            "name": "items",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Item",
                    "fields": [
                        {
                            "name": "unit",
                            "type": {
                                "type": "enum",
                                "name": "Unit",
                                "symbols": ["LITRE", "EACH", "BOX"],
                                "default": "BOX",
                            },
                        },
                        {"name": "qty", "type": "long"},
                        {"name": "sku", "type": "bytes"},
                        {"name": "discount", "type": "float", "default": 0.5},
                    ],
                },
            },
        },
        {"name": "id", "type": "long"},
        {"name": "price", "type": "double"},
        {"name": "raw", "type": "bytes"},
        {"name": "note", "type": "string"},
        {"name": "by_code", "type": {"type": "map", "values": "shop.Item"}},
        {"name": "maybe", "type": ["int", "null"]},
        {"name": "choice", "type": ["string", "null", "long"]},
        {"name": "plain", "type": ["null", "string", "long"]},
        {"name": "flag", "type": "boolean", "default": True},
        {"name": "tags", "type": {"type": "array", "items": "string"}, "default": ["a", "b"]},
        {"name": "attrs", "type": {"type": "map", "values": "int"}, "default": {"k": 3}},
        {
            "name": "where",
            "type": {
                "type": "record",
                "name": "Where",
                "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": ["null", "int"]}],
            },
            "default": {"city": "Oslo", "zip": None},
        },
        {"name": "code", "type": {"type": "fixed", "name": "Code", "size": 2}, "default": "\u00ab\u00cd"},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
            "default": "\u0004\u00d2",
        },
        {"name": "day", "type": {"type": "int", "logicalType": "date"}, "default": 19000},
        {"name": "opt", "type": ["null", "string"], "default": None},
    ],
}


def order(k: int) -> dict:
    return {
        "id": k,
        "note": f"note {k} é",
        "price": k / 4,
        "total": 10**12 + k,
        "raw": f"r{k}",
        "items": [
            {"sku": f"s{k}-{j}", "qty": j, "unit": ("EACH", "KG", "LITRE")[(k + j) % 3]} for j in range(k % 4)
        ],
        "by_code": {f"c{j}": {"sku": "m", "qty": -j, "unit": "LITRE"} for j in range(k % 3)},
        "maybe": None if k % 2 else k,
        "choice": k if k % 3 else f"c{k}",
        "plain": -k,
        "dropped": ["x"] * (k % 5),
    }


ORDERS = [order(k) for k in range(300)]


@pytest.mark.parametrize("codec", ["null", "deflate"])
def test_an_evolved_order_reads_as_fastavro_reads_it_through_the_buffers(paths, codec):
    # blocks of about 2 KB: many blocks, batches cut across them
    data = container(ORDER_V1, ORDERS, codec, sync_interval=2000)
    table = paths.buffers(data, ORDER_V2)
    assert paths.blocks > 5
    # fastavro gives a default of a fixed, bytes or logical type as its JSON
    # text (the spec's and Java's value is checked below), the rest as read
    as_read = [
        field["name"] for field in ORDER_V2["fields"] if field["name"] not in ("code", "amount", "day")
    ]
    assert project(table_rows(table, ORDER_V2), as_read) == project(
        oracle_rows(ORDER_V2, fastavro_read(data, ORDER_V2)), as_read
    )
    # the resolving interpreter's values make the same table, union branches and all
    assert table.equals(paths.values(data, ORDER_V2))
    # what the defaults became: the kinds a default can take
    row = table.slice(1, 1).to_pylist()[0]
    assert row["tags"] == ["a", "b"] and row["attrs"] == [("k", 3)] and row["flag"] is True
    assert row["where"] == {"city": "Oslo", "zip": None} and row["code"] == b"\xab\xcd"
    assert row["amount"] == Decimal("12.34") and row["opt"] is None
    assert row["day"] == datetime.date(2022, 1, 8)  # 19000 days after 1970-01-01
    # an int read into ["string", "null", "long"]: the long branch (code 2)
    assert table.column("choice").chunk(0).type_codes.to_pylist()[:3] == [0, 2, 2]
    # the items of orders 1 and 2: KG is not a reader's symbol (the enum's default)
    assert table.column("items").chunk(0).flatten().field("unit").to_pylist()[:3] == ["BOX", "LITRE", "EACH"]


def test_batches_and_columns_of_an_evolved_file(paths):
    data = container(ORDER_V1, ORDERS, sync_interval=3000)
    whole = paths.buffers(data, ORDER_V2)
    batches = list(arrow_module.iter_batches(io.BytesIO(data), batch_size=64, reader_schema=ORDER_V2))
    assert [batch.num_rows for batch in batches] == [64] * 4 + [44]
    assert pa.Table.from_batches(batches).equals(whole)
    columns = ["tags", "id", "choice", "where"]
    projected = paths.buffers(data, ORDER_V2, columns=columns)
    assert projected.column_names == columns
    assert table_rows(projected, ORDER_V2) == project(table_rows(whole, ORDER_V2), columns)
    assert projected.equals(paths.values(data, ORDER_V2, columns=columns))


def test_a_symbol_the_reader_lacks_is_the_resolving_reader_s_error_with_its_block(paths):
    strict = {
        "type": "record",
        "name": "Item",
        "fields": [
            {"name": "unit", "type": {"type": "enum", "name": "Unit", "symbols": ["EACH", "LITRE"]}},
        ],
    }
    records = [{"sku": "s", "qty": 1, "unit": "EACH"}] * 200 + [{"sku": "s", "qty": 1, "unit": "KG"}]
    data = container(ITEM_V1, records, sync_interval=500)
    with pytest.raises(ContainerError) as buffers:
        paths.buffers(data, strict)
    with pytest.raises(ContainerError) as values:
        paths.values(data, strict)
    assert str(buffers.value) == str(values.value)
    assert "KG" in str(buffers.value) and buffers.value.block > 0
    # a pair that cannot be read at all is refused before any block
    with pytest.raises(SchemaResolutionError, match="'extra' has no default"):
        paths.buffers(data, {**strict, "fields": [*strict["fields"], {"name": "extra", "type": "int"}]})


def test_many_items_after_a_dropped_field_are_no_false_budget_error(paths):
    # the writer's 3 MB string pays for 2 million null items; the reader drops
    # it, so the reader's bytes alone could not
    writer = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "big", "type": "string"},
            {"name": "nothing", "type": {"type": "array", "items": "null"}},
        ],
    }
    reader = {"type": "record", "name": "R", "fields": [writer["fields"][1]]}
    data = container(writer, [{"big": "x" * 3_000_000, "nothing": [None] * 2_000_000}])
    table = paths.buffers(data, reader)
    assert paths.blocks == 1
    assert table.column("nothing").chunk(0).value_lengths().to_pylist() == [2_000_000]


def test_items_a_reader_default_adds_are_not_paid_for_by_the_file(paths):
    # 3,000 records of 1 byte each, read with a default of 1,000 nulls each:
    # 3,000,000 items of no bytes that the file never announced
    writer = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}
    nulls = {"type": "array", "items": "null"}
    reader = {
        "type": "record",
        "name": "R",
        "fields": [*writer["fields"], {"name": "n", "type": nulls, "default": [None] * 1000}],
    }
    data = container(writer, [{"a": k % 50} for k in range(3000)])
    table = paths.buffers(data, reader)
    assert paths.blocks == 1 and table.num_rows == 3000
    assert table.column("n").chunk(0).value_lengths().to_pylist() == [1000] * 3000
    assert table.equals(paths.values(data, reader))


def test_a_reader_whose_types_need_python_values_still_reads(paths):
    # a big-decimal's Arrow value (its text) is made from the Python value
    big = {"type": "bytes", "logicalType": "big-decimal"}
    writer = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "a", "type": "int"}, {"name": "big", "type": big}],
    }
    reader = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "big", "type": big}, {"name": "a", "type": "long"}],
    }
    # fastavro 1.13 writes a big-decimal's bytes as given: unscaled 123, then the scale k
    data = container(writer, [{"a": k, "big": b"\x02\x7b" + bytes([k * 2])} for k in range(3)])
    table = paths.buffers(data, reader)
    assert table.to_pylist() == [{"big": str(Decimal(123).scaleb(-k)), "a": k} for k in range(3)]
    assert table.schema.field("a").type == pa.int64()
    assert paths.blocks == 0


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_evolved_pairs_read_into_the_same_table_through_buffers_and_values(data):
    writer, reader = data.draw(evolved_pairs(max_steps=3), label="pair")
    if not has_values(writer):
        return
    records = data.draw(st.lists(datums(writer), min_size=1, max_size=6), label="records")
    try:
        raw = container(writer, records, sync_interval=200)
    except (ValueError, TypeError):
        return  # a datum fastavro does not write as drawn (a union's branch it cannot tell)
    with pytest.MonkeyPatch.context() as patch:
        got = Paths(patch)
        try:
            table = got.buffers(raw, reader)
        except SchemaError:
            # no Arrow type (a recursive record): refused alike
            with pytest.raises(SchemaError):
                got.values(raw, reader)
            return
        except (ContainerError, ValueError) as error:
            # what the reader cannot read or Arrow cannot hold: the same error
            with pytest.raises(type(error)) as other:
                got.values(raw, reader)
            assert str(other.value) == str(error)
            return
        expected = got.values(raw, reader)
    if not has_nan(records):
        assert table.equals(expected)
    else:
        assert table.schema.equals(expected.schema) and table.num_rows == expected.num_rows
