"""Marshmallow schemas reading data written with an earlier (or later) version.

``load_compiled(data, writer_schema=...)`` must return what marshmallow's own
``load`` returns for the record the writer's data resolves to; the resolved
record comes from fastavro's resolving reader (the pairs here are ones where
fastavro and Java agree), so no side of the comparison is ours.
"""

from __future__ import annotations

import io
from decimal import Decimal

import fastavro
import pytest
from marshmallow import fields

from roastedavro import CompiledSchema, DecodeError, SchemaResolutionError


class LineV1(CompiledSchema):
    class Meta:
        avro_name = "Line"  # one record, two versions

    sku = fields.String(required=True)
    quantity = fields.Integer(required=True)


class OrderV1(CompiledSchema):
    class Meta:
        avro_name = "Order"  # one record, two versions

    id = fields.Integer(required=True)
    customer = fields.String(required=True)
    obsolete = fields.String(required=True)
    lines = fields.List(fields.Nested(LineV1), required=True)


class LineV2(CompiledSchema):
    class Meta:
        avro_name = "Line"  # one record, two versions

    sku = fields.String(required=True)
    quantity = fields.Float(required=True)  # long -> double
    note = fields.String(load_default="-")  # new, with a default


class OrderV2(CompiledSchema):
    class Meta:
        avro_name = "Order"  # one record, two versions

    id = fields.Integer(required=True)
    customer = fields.String(required=True)
    priority = fields.Integer(load_default=3)  # new, with a default
    lines = fields.List(fields.Nested(LineV2), required=True)


ORDERS = [
    {"id": 1, "customer": "ada", "obsolete": "x", "lines": []},
    {
        "id": 2**40,
        "customer": "",
        "obsolete": "",
        "lines": [{"sku": "a", "quantity": 3}, {"sku": "b", "quantity": -1}],
    },
]


def resolved_by_fastavro(data: bytes, writer: dict, reader: dict):
    return fastavro.schemaless_reader(
        io.BytesIO(data), fastavro.parse_schema(writer), fastavro.parse_schema(reader)
    )


@pytest.mark.parametrize("order", ORDERS)
def test_reads_an_earlier_version_as_marshmallow_loads_it(order):
    v1, v2 = OrderV1(), OrderV2()
    data = v1.dump_compiled(order)
    expected = v2.load(resolved_by_fastavro(data, v1.avro_schema(), v2.avro_schema()))
    assert v2.load_compiled(data, writer_schema=v1.avro_schema()) == expected
    # the writer's schema may be given as its CompiledSchema, class or instance
    assert v2.load_compiled(data, writer_schema=OrderV1) == expected
    assert v2.load_compiled(data, writer_schema=v1) == expected
    # the reader's own data still loads as before
    assert v2.load_compiled(v2.dump_compiled(expected)) == expected


def test_many_records_of_an_earlier_version():
    v1, v2 = OrderV1(many=True), OrderV2(many=True)
    data = v1.dump_compiled(ORDERS)
    many_v1 = {"type": "array", "items": OrderV1().avro_schema()}
    many_v2 = {"type": "array", "items": OrderV2().avro_schema()}
    expected = v2.load(resolved_by_fastavro(data, many_v1, many_v2))
    assert v2.load_compiled(data, writer_schema=OrderV1) == expected


def test_a_writer_the_schema_cannot_read():
    # version 1 has no priority default to fall back on: reading version 2's
    # data is fine (priority is skipped), but v1's required "obsolete" field
    # has no default, so v1 cannot read v2's data
    v1, v2 = OrderV1(), OrderV2()
    data = v2.dump_compiled({"id": 1, "customer": "c", "lines": []})
    with pytest.raises(SchemaResolutionError) as raised:
        v1.load_compiled(data, writer_schema=OrderV2)
    assert "obsolete" in str(raised.value)


def test_malformed_bytes_of_the_writer():
    v1, v2 = OrderV1(), OrderV2()
    data = v1.dump_compiled(ORDERS[1])
    with pytest.raises(DecodeError):
        v2.load_compiled(data[:-1], writer_schema=OrderV1)


def test_every_form_of_the_writer_schema_reads_the_same_and_is_remembered():
    import json

    from roastedavro.avro import parse_schema

    v1, v2 = OrderV1(), OrderV2()
    data = v1.dump_compiled(ORDERS[1])
    expected = v2.load(resolved_by_fastavro(data, v1.avro_schema(), v2.avro_schema()))
    as_dict = v1.avro_schema()
    forms = [OrderV1, v1, as_dict, json.dumps(as_dict), parse_schema(as_dict)]
    for form in forms * 2:  # the second time from what the first one kept
        assert v2.load_compiled(data, writer_schema=form) == expected
    v2.load_compiled(data, writer_schema=as_dict)
    pairs = v2.load_compiled.__self__.pairs.args[2]
    assert pairs.find(as_dict, False) is not None and pairs.find(OrderV1, False) is not None
    assert pairs.find(as_dict, True) is None  # many=True is an array's pair


def test_a_writer_dict_changed_in_place_is_read_by_its_new_content():
    # the same dict object, a field dropped between calls: the pair kept for
    # its first content must not read data written with its second
    v2 = OrderV2()
    writer = OrderV1().avro_schema()
    first = OrderV1().dump_compiled(ORDERS[1])
    assert v2.load_compiled(first, writer_schema=writer)["id"] == 2**40
    writer["fields"] = [f for f in writer["fields"] if f["name"] != "obsolete"]
    data = io.BytesIO()
    fastavro.schemaless_writer(
        data, fastavro.parse_schema(writer), {k: v for k, v in ORDERS[1].items() if k != "obsolete"}
    )
    expected = v2.load(resolved_by_fastavro(data.getvalue(), writer, v2.avro_schema()))
    assert v2.load_compiled(data.getvalue(), writer_schema=writer) == expected


def test_a_writer_dict_changed_deep_inside_is_read_by_its_new_content():
    # a nested field's type changed in place, the dict called with again and
    # again: the pair kept for the first content must not be used after
    v2 = OrderV2()
    writer = OrderV1().avro_schema()
    first = OrderV1().dump_compiled(ORDERS[1])
    for _ in range(3):
        assert v2.load_compiled(first, writer_schema=writer)["id"] == 2**40
    obsolete = next(f for f in writer["fields"] if f["name"] == "obsolete")
    obsolete["type"] = {"type": "array", "items": "long"}
    record = {**ORDERS[1], "obsolete": [1, 2, 3]}
    data = io.BytesIO()
    fastavro.schemaless_writer(data, fastavro.parse_schema(writer), record)
    expected = v2.load(resolved_by_fastavro(data.getvalue(), writer, v2.avro_schema()))
    for _ in range(3):
        assert v2.load_compiled(data.getvalue(), writer_schema=writer) == expected


def test_a_writer_dict_changed_and_changed_back_is_checked_cheaply_again():
    v2 = OrderV2()
    writer = OrderV1().avro_schema()
    data = OrderV1().dump_compiled(ORDERS[1])
    expected = v2.load_compiled(data, writer_schema=writer)
    pairs = v2.load_compiled.__self__.pairs.args[2]
    key = ("dict", id(writer), False)
    assert pairs.given[key][1].matches(writer)
    name = writer["fields"][0]["name"]
    writer["fields"][0]["name"] = "renamed"
    writer["fields"][0]["name"] = name  # an equal schema, the same objects
    assert not pairs.given[key][1].matches(writer)
    assert v2.load_compiled(data, writer_schema=writer) == expected
    assert pairs.given[key][1].matches(writer)  # the kept pair's check is cheap again


def test_a_writer_dict_without_a_shape_is_compared_and_never_shaped_again(monkeypatch):
    from roastedavro import writer_pairs

    v2 = OrderV2()
    writer = OrderV1().avro_schema()
    writer["x-origin"] = ("billing", 1)  # a custom property no JSON gives: no SchemaShape
    data = OrderV1().dump_compiled(ORDERS[1])
    expected = v2.load_compiled(data, writer_schema=writer)
    pairs = v2.load_compiled.__self__.pairs.args[2]
    assert pairs.given[("dict", id(writer), False)][1] is None
    shaped, original = [], writer_pairs.SchemaShape

    class Counting:
        @staticmethod
        def of(schema):
            shaped.append(schema)
            return original.of(schema)

    monkeypatch.setattr(writer_pairs, "SchemaShape", Counting)
    for _ in range(3):
        assert v2.load_compiled(data, writer_schema=writer) == expected
    writer["fields"] = [f for f in writer["fields"] if f["name"] != "obsolete"]
    assert pairs.find(writer, False) is None  # a change is still seen
    assert shaped == []


def test_a_new_writer_dict_at_a_reused_address_is_not_taken_for_the_old_one():
    v2 = OrderV2()
    data = OrderV1().dump_compiled(ORDERS[1])
    for _ in range(20):  # new dicts, some at the address of one freed before
        writer = OrderV1().avro_schema()
        assert v2.load_compiled(data, writer_schema=writer)["lines"][1]["quantity"] == -1.0
        del writer
    line_only = {
        "type": "record",
        "name": "Order",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "customer", "type": "string"},
            {"name": "lines", "type": {"type": "array", "items": LineV1().avro_schema()}},
        ],
    }
    short = io.BytesIO()
    fastavro.schemaless_writer(
        short, fastavro.parse_schema(line_only), {"id": 5, "customer": "c", "lines": []}
    )
    assert v2.load_compiled(short.getvalue(), writer_schema=line_only) == v2.load(
        resolved_by_fastavro(short.getvalue(), line_only, v2.avro_schema())
    )


def test_a_writer_schema_laid_out_as_the_readers_is_read_as_it_is():
    # the same record under another class (docs, defaults and logical types
    # aside, the canonical form decides the bytes): nothing to resolve
    class OrderV2Again(CompiledSchema):
        class Meta:
            avro_name = "Order"

        id = fields.Integer(required=True)
        customer = fields.String(required=True, metadata={"doc": "who"})
        priority = fields.Integer(load_default=5)  # another default: not in the bytes
        lines = fields.List(fields.Nested(LineV2), required=True)

    v2 = OrderV2()
    order = {"id": 7, "customer": "c", "priority": 1, "lines": [{"sku": "a", "quantity": 1.5, "note": "n"}]}
    data = v2.dump_compiled(order)
    assert v2.load_compiled(data, writer_schema=OrderV2Again) == v2.load_compiled(data)
    pairs = v2.load_compiled.__self__.pairs.args[2]
    from roastedavro.writer_pairs import _SAME_LAYOUT

    assert pairs.find(OrderV2Again, False) is _SAME_LAYOUT
    with pytest.raises(DecodeError):
        v2.load_compiled(data[:-1], writer_schema=OrderV2Again)


class Priced(CompiledSchema):
    class Meta:
        avro_name = "Priced"

    cost = fields.Decimal(places=2, metadata={"precision": 9})


def test_a_writers_value_past_this_schemas_precision_is_a_decode_error():
    # the writer's decimal(12, 2) holds more digits than the reader's
    # decimal(9, 2): not this schema's data, as when read without a writer schema
    reader = Priced()
    writer = reader.avro_schema()
    writer["fields"][0]["type"]["precision"] = 12
    data = io.BytesIO()
    fastavro.schemaless_writer(data, fastavro.parse_schema(writer), {"cost": Decimal("1234567890.12")})
    with pytest.raises(DecodeError, match=r"more (digits than|than the precision of) decimal\(9, 2\)"):
        reader.load_compiled(data.getvalue(), writer_schema=writer)
    small = io.BytesIO()
    fastavro.schemaless_writer(small, fastavro.parse_schema(writer), {"cost": Decimal("12.50")})
    assert reader.load_compiled(small.getvalue(), writer_schema=writer) == {"cost": Decimal("12.50")}


@pytest.mark.parametrize("kind", [dict, __import__("collections").OrderedDict])
def test_a_writer_schema_changed_in_place_is_read_as_it_is_now(kind):
    class Pair(CompiledSchema):
        class Meta:
            avro_name = "Pair"

        a = fields.Integer(required=True)
        b = fields.Integer(required=True)

    def data(schema):
        out = io.BytesIO()
        fastavro.schemaless_writer(out, fastavro.parse_schema(dict(schema)), {"a": 1, "b": 2})
        return out.getvalue()

    reader = Pair()
    writer = kind(
        type="record", name="Pair", fields=[{"name": "b", "type": "long"}, {"name": "a", "type": "long"}]
    )
    assert reader.load_compiled(data(writer), writer_schema=writer) == {"a": 1, "b": 2}
    writer["fields"].reverse()  # the same object now says a, b
    assert reader.load_compiled(data(writer), writer_schema=writer) == {"a": 1, "b": 2}
