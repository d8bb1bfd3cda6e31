"""Ints past Python's 4,300-digit text limit are refused with the field's path.

Python refuses to turn such an int into text (a bare ValueError), so an error
message that printed it with %d raised that instead of the range error.
"""

import pytest
from marshmallow import ValidationError, fields

from roastedavro import AvroCodec, CompiledSchema
from roastedavro.errors import DatumError

HUGE = 10**5000


class Inner(CompiledSchema):
    n = fields.Integer()


class Holder(CompiledSchema):
    big = fields.Integer()
    small = fields.Integer(metadata={"avro": "int"})
    items = fields.List(fields.Integer())
    table = fields.Dict(keys=fields.String(), values=fields.Integer())
    inner = fields.Nested(Inner)


BASE = {"big": 1, "small": 1, "items": [], "table": {}, "inner": {"n": 1}}


@pytest.fixture(scope="module")
def holder():
    return Holder().compile()


@pytest.mark.parametrize(
    "value", [HUGE, -HUGE, 2**63, -(2**63) - 1], ids=["huge", "-huge", "2**63", "-2**63-1"]
)
@pytest.mark.parametrize(
    "place, path",
    [
        ({"big": None}, ["big"]),
        ({"small": None}, ["small"]),
        ({"items": [1, None]}, ["items", 1]),
        ({"table": {"k": None}}, ["table", "k", "value"]),
        ({"inner": {"n": None}}, ["inner", "n"]),
    ],
)
def test_a_marshmallow_field_names_the_field(holder, value, place, path):
    key, shape = next(iter(place.items()))
    if shape is None:
        shape = value
    elif isinstance(shape, list):
        shape = [value if item is None else item for item in shape]
    elif isinstance(shape, dict):
        shape = {name: value if item is None else item for name, item in shape.items()}
    with pytest.raises(ValidationError) as caught:
        holder.dump_compiled({**BASE, key: shape})
    messages = caught.value.messages
    for step in path:
        assert step in messages, (path, messages)
        messages = messages[step]
    text = " ".join(map(str, messages))
    assert "out of range" in text
    if abs(value) > 2**128:
        assert f"{value.bit_length()} bits" in text


CODEC = AvroCodec(
    {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "long", "type": "long"},
            {"name": "int", "type": "int"},
            {"name": "items", "type": {"type": "array", "items": "long"}},
            {"name": "table", "type": {"type": "map", "values": "int"}},
        ],
    }
)


@pytest.mark.parametrize("value", [HUGE, -HUGE], ids=["huge", "-huge"])
@pytest.mark.parametrize(
    "datum, path",
    [
        (lambda v: {"long": v, "int": 1, "items": [], "table": {}}, "long"),
        (lambda v: {"long": 1, "int": v, "items": [], "table": {}}, "int"),
        (lambda v: {"long": 1, "int": 1, "items": [0, v], "table": {}}, "items[1]"),
        (lambda v: {"long": 1, "int": 1, "items": [], "table": {"k": v}}, "table.k"),
    ],
)
def test_avro_codec_names_the_field(value, datum, path):
    with pytest.raises(DatumError) as caught:
        CODEC.dump(datum(value))
    assert str(caught.value).startswith(path + ":"), str(caught.value)
    assert f"{value.bit_length()} bits" in str(caught.value)
