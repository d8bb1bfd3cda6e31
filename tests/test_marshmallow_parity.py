"""load_compiled raises what marshmallow's load raises: same messages, same valid_data."""

import pytest
from marshmallow import Schema, ValidationError, fields, validate, validates, validates_schema

from roastedavro import CompiledSchema


def must_be_even(value):
    if value % 2:
        raise ValidationError("must be even")


class Inner(Schema):
    code = fields.String(validate=validate.Regexp(r"^[A-Z]{3}$"))


class Everything(CompiledSchema):
    age = fields.Integer(validate=[validate.Range(min=0), validate.Range(max=150)])
    name = fields.String(validate=validate.Length(min=2, max=10))
    side = fields.String(validate=validate.OneOf(["buy", "sell"]))
    email = fields.Email()
    site = fields.Url()
    answer = fields.Integer(validate=validate.Equal(42))
    tags = fields.List(fields.String(), validate=validate.ContainsOnly(["a", "b"]))
    even = fields.Integer(validate=must_be_even)
    inner = fields.Nested(Inner)
    items = fields.List(fields.Nested(Inner))

    @validates("name")
    def no_digits(self, value, **kwargs):
        if any(ch.isdigit() for ch in value):
            raise ValidationError("no digits")

    @validates_schema
    def age_and_name(self, data, **kwargs):
        if data.get("age") == 0 and data.get("name") == "zz":
            raise ValidationError("zz cannot be 0")


GOOD = {
    "age": 30,
    "name": "ada",
    "side": "buy",
    "email": "ada@example.com",
    "site": "https://example.com",
    "answer": 42,
    "tags": ["a"],
    "even": 4,
    "inner": {"code": "ABC"},
    "items": [{"code": "XYZ"}],
}

BAD = [
    {"age": -1},
    {"age": 151},
    {"name": "a"},
    {"name": "abc1"},
    {"side": "hold"},
    {"email": "not an email"},
    {"site": "nope"},
    {"answer": 41},
    {"tags": ["c"]},
    {"even": 3},
    {"inner": {"code": "abc"}},
    {"items": [{"code": "XYZ"}, {"code": "x"}]},
    {"age": 0, "name": "zz"},
    {"age": -5, "name": "q", "side": "x", "items": [{"code": "1"}]},
]


@pytest.fixture(scope="module")
def schema():
    return Everything().compile()


def test_valid_records_load_as_marshmallow_loads_them(schema):
    assert schema.load_compiled(schema.dump_compiled(GOOD)) == schema.load(schema.dump(GOOD))


@pytest.mark.parametrize("change", BAD)
def test_errors_and_valid_data_are_marshmallows(schema, change):
    record = {**GOOD, **change}
    data = schema.dump_compiled(record)
    with pytest.raises(ValidationError) as compiled:
        schema.load_compiled(data)
    with pytest.raises(ValidationError) as reference:
        schema.load(schema.dump(record))
    assert compiled.value.messages == reference.value.messages
    assert compiled.value.valid_data == reference.value.valid_data


def test_many_errors_are_keyed_by_record_index(schema):
    records = [GOOD, {**GOOD, "age": -1}, GOOD, {**GOOD, "side": "x"}]
    data = schema.dump_compiled(records, many=True)
    with pytest.raises(ValidationError) as compiled:
        schema.load_compiled(data, many=True)
    with pytest.raises(ValidationError) as reference:
        schema.load(schema.dump(records, many=True), many=True)
    assert compiled.value.messages == reference.value.messages
    assert compiled.value.valid_data == reference.value.valid_data
