"""Dump and load semantics against the oracles: fastavro's bytes, marshmallow's results."""

import copy
import dataclasses
from collections import OrderedDict

import fastavro
import pytest
from conftest import fastavro_bytes, fastavro_read
from marshmallow import Schema, ValidationError, fields, post_load, pre_dump, validates

from roastedavro import CompiledSchema


class Address(CompiledSchema):
    street = fields.String()
    zip = fields.Integer(metadata={"avro": "int"})


class PlainTag(Schema):  # a plain marshmallow schema nested in a compiled one
    label = fields.String()
    weight = fields.Float(allow_none=True)


class Order(CompiledSchema):
    class Meta:
        avro_name = "Order"
        avro_namespace = "shop.v1"

    id = fields.Integer(required=True)
    symbol = fields.String(data_key="ticker")
    price = fields.Float(allow_none=True)
    paid = fields.Boolean()
    tags = fields.List(fields.Nested(PlainTag))
    attrs = fields.Dict(keys=fields.String(), values=fields.Integer(allow_none=True))
    ship_to = fields.Nested(Address, allow_none=True)
    history = fields.Nested(Address, many=True)
    notes = fields.List(fields.String(allow_none=True), allow_none=True)


@pytest.fixture(scope="module")
def order():
    return Order().compile()


RECORD = {
    "id": 7,
    "symbol": "AAPL",
    "price": 187.25,
    "paid": True,
    "tags": [{"label": "x", "weight": None}, {"label": "ünïcødé ✓", "weight": -0.0}],
    "attrs": {"a": 1, "b": None, "": -(2**63)},
    "ship_to": {"street": "Main St", "zip": 2**31 - 1},
    "history": [{"street": "", "zip": -(2**31)}],
    "notes": ["n", None],
}


def check(schema, obj):
    data = schema.dump_compiled(obj)
    assert data == fastavro_bytes(schema, schema.dump(obj))
    assert schema.load_compiled(data) == schema.load(schema.dump(obj))
    return data


def test_avro_schema_follows_declaration_order_names_and_types(order):
    avro = order.avro_schema()
    assert avro["name"] == "Order" and avro["namespace"] == "shop.v1"
    assert [f["name"] for f in avro["fields"]] == [
        "id",
        "ticker",
        "price",
        "paid",
        "tags",
        "attrs",
        "ship_to",
        "history",
        "notes",
    ]
    types = {f["name"]: f["type"] for f in avro["fields"]}
    assert types["id"] == "long"
    assert types["price"] == ["null", "double"]
    assert types["tags"]["items"]["name"] == "PlainTag"
    assert types["ship_to"][1]["name"] == "Address"
    assert types["ship_to"][1]["fields"][1]["type"] == "int"
    assert types["history"] == {"type": "array", "items": "shop.v1.Address"}
    fastavro.parse_schema(avro)  # a valid Avro schema


def test_dict_record_matches_oracles(order):
    check(order, RECORD)


def test_object_with_attributes_matches_dict(order):
    @dataclasses.dataclass
    class Addr:
        street: str
        zip: int

    class Obj:
        pass

    obj = Obj()
    for key, value in RECORD.items():
        setattr(obj, key, value)
    obj.ship_to = Addr("Main St", 5)
    obj.history = [Addr("a", 1), Addr("b", 2)]
    assert check(order, obj) == fastavro_bytes(order, order.dump(obj))


def test_mapping_that_is_not_a_dict(order):
    record = OrderedDict(RECORD)
    record["attrs"] = OrderedDict(RECORD["attrs"])
    check(order, record)


class GrowingInt:
    """An int that adds a key to the dict it is in while it is converted."""

    def __init__(self, entries):
        self.entries = entries

    def __int__(self):
        self.entries["added"] = 2
        return 1

    __index__ = __int__


def test_a_dict_that_changes_while_written_is_an_error(order):
    # marshmallow's own dump fails too (RuntimeError from the dict's
    # iterator); the count is out already, so the bytes would lie
    attrs = {"a": 1}
    attrs["b"] = GrowingInt(attrs)
    with pytest.raises(ValidationError, match="The mapping changed size") as caught:
        order.dump_compiled(dict(RECORD, attrs=attrs))
    assert "attrs" in caught.value.messages


def test_input_is_never_mutated(order):
    record = copy.deepcopy(RECORD)
    data = order.dump_compiled(record)
    assert record == RECORD
    buffer = bytearray(data)
    order.load_compiled(buffer)
    assert bytes(buffer) == data


def test_bytes_like_inputs(order):
    data = order.dump_compiled(RECORD)
    expected = order.load_compiled(data)
    assert order.load_compiled(bytearray(data)) == expected
    assert order.load_compiled(memoryview(data)) == expected
    with pytest.raises(TypeError, match="bytes-like"):
        order.load_compiled("not bytes")


def test_conversions_follow_marshmallow_dump(order):
    record = dict(RECORD, id="42", price=3, paid=1, symbol=12345, notes=("a", "b"))
    data = check(order, record)
    assert order.load_compiled(data)["id"] == 42
    assert order.load_compiled(data)["price"] == 3.0


def test_missing_values_take_defaults_then_null(order):
    # Avro has no "absent": a missing nullable value goes on the wire as null
    # (as fastavro writes it) and so loads as None.
    record = {k: v for k, v in RECORD.items() if k not in ("price", "notes", "ship_to")}
    data = order.dump_compiled(record)
    assert data == fastavro_bytes(order, order.dump(record))
    loaded = order.load_compiled(data)
    assert loaded == order.load(fastavro_read(order, data))
    assert loaded["price"] is None and loaded["ship_to"] is None


class Defaults(CompiledSchema):
    count = fields.Integer(dump_default=3)
    label = fields.String(load_default="none")
    maybe = fields.Integer(allow_none=True, load_default=5)
    stamp = fields.Float(dump_default=lambda: 1.5)


def test_defaults_are_avro_defaults_and_fill_missing_values():
    schema = Defaults()
    fields_by_name = {f["name"]: f for f in schema.avro_schema()["fields"]}
    assert fields_by_name["count"]["default"] == 3
    assert fields_by_name["label"]["default"] == "none"
    # a non-null default puts the value's type first in the union
    assert fields_by_name["maybe"]["type"] == ["long", "null"]
    assert fields_by_name["maybe"]["default"] == 5
    assert "default" not in fields_by_name["stamp"]  # callables are not representable
    data = schema.dump_compiled({})
    assert data == fastavro_bytes(schema, schema.dump({}))
    assert schema.load_compiled(data) == {"count": 3, "label": "none", "maybe": 5, "stamp": 1.5}


def test_many(order):
    records = [RECORD, dict(RECORD, id=8, attrs={}, tags=[])]
    data = order.dump_compiled(records, many=True)
    assert data == fastavro_bytes(order, order.dump(records, many=True), many=True)
    assert order.load_compiled(data, many=True) == order.load(order.dump(records, many=True), many=True)
    assert order.dump_compiled([], many=True) == b"\x00"
    many_schema = Order(many=True)
    assert many_schema.dump_compiled(records) == data
    assert many_schema.load_compiled(data) == order.load_compiled(data, many=True)


def test_attribute_and_data_key():
    class Renamed(CompiledSchema):
        name = fields.String(attribute="full_name", data_key="fullName")

    schema = Renamed()
    assert schema.avro_schema()["fields"][0]["name"] == "fullName"
    data = schema.dump_compiled({"full_name": "Ada"})
    assert data == fastavro_bytes(schema, schema.dump({"full_name": "Ada"}))
    assert schema.load_compiled(data) == schema.load({"fullName": "Ada"}) == {"full_name": "Ada"}


def test_only_and_exclude_shape_the_record():
    schema = Order(only=("id", "symbol"))
    assert [f["name"] for f in schema.avro_schema()["fields"]] == ["id", "ticker"]
    check(schema, RECORD)


def test_nan_on_load_is_marshmallows_error():
    class Reading(CompiledSchema):
        value = fields.Float()
        free = fields.Float(allow_nan=True)

    schema = Reading()
    data = schema.dump_compiled({"value": float("nan"), "free": float("inf")})
    assert data == fastavro_bytes(schema, {"value": float("nan"), "free": float("inf")})
    with pytest.raises(ValidationError) as compiled:
        schema.load_compiled(data)
    with pytest.raises(ValidationError) as reference:
        schema.load(schema.dump({"value": float("nan"), "free": float("inf")}))
    assert compiled.value.messages == reference.value.messages
    ok = schema.load_compiled(schema.dump_compiled({"value": 1.0, "free": float("inf")}))
    assert ok == {"value": 1.0, "free": float("inf")}


def test_hooks_and_validators_keep_marshmallow_semantics():
    class Hooked(CompiledSchema):
        name = fields.String()
        age = fields.Integer()

        @pre_dump
        def upper(self, data, **kwargs):
            return {**data, "name": data["name"].upper()}

        @validates("age")
        def adult(self, value, **kwargs):
            if value < 18:
                raise ValidationError("too young")

        @post_load
        def make(self, data, **kwargs):
            return ("person", data["name"], data["age"])

    schema = Hooked()
    data = schema.dump_compiled({"name": "ada", "age": 36})
    assert data == fastavro_bytes(schema, schema.dump({"name": "ada", "age": 36}))
    assert schema.load_compiled(data) == ("person", "ADA", 36)
    young = schema.dump_compiled({"name": "bo", "age": 3})
    with pytest.raises(ValidationError) as error:
        schema.load_compiled(young)
    assert error.value.messages == {"age": ["too young"]}


def test_user_field_subclass_with_own_serialize():
    class Upper(fields.String):
        def _serialize(self, value, attr, obj, **kwargs):
            return None if value is None else str(value).upper()

        def _deserialize(self, value, attr, data, **kwargs):
            return value.lower()

    class Shout(CompiledSchema):
        word = Upper()

    schema = Shout()
    data = schema.dump_compiled({"word": "hello"})
    assert data == fastavro_bytes(schema, schema.dump({"word": "hello"}))
    assert schema.load_compiled(data) == schema.load(schema.dump({"word": "hello"})) == {"word": "hello"}


def test_compiles_on_first_use():
    class Lazy(CompiledSchema):
        x = fields.Integer()

    schema = Lazy()
    assert schema.load_compiled(schema.dump_compiled({"x": 1})) == {"x": 1}


def test_validate_false_skips_validators_for_trusted_input():
    from marshmallow import validate as validators

    from roastedavro import CompileFlags

    class Checked(CompiledSchema):
        age = fields.Integer(validate=validators.Range(min=0))

        @validates("age")
        def not_too_old(self, value, **kwargs):
            if value > 150:
                raise ValidationError("too old")

    checked = Checked().compile()
    trusted = Checked().compile(CompileFlags(validate=False))
    data = checked.dump_compiled({"age": -5})
    with pytest.raises(ValidationError) as error:
        checked.load_compiled(data)
    assert error.value.messages == {"age": ["Must be greater than or equal to 0."]}
    assert trusted.load_compiled(data) == {"age": -5}
    assert trusted.load_compiled(trusted.dump_compiled({"age": 200})) == {"age": 200}
