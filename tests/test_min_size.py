"""Item counts are checked against the fewest bytes an item takes.

That size is the sum of a record's fields' sizes, and 0 for nulls, empty
records and records of only such fields: arrays of them are valid and load.
Before, a record's size was min(1, sum), and a null written through the
generic path counted as 1 byte, so arrays of nulls were refused as
truncated while arrays of large records were checked too loosely.
"""

import pytest
from conftest import fastavro_bytes
from marshmallow import fields

from roastedavro import CompiledSchema, DecodeError


class Empty(CompiledSchema):
    pass


class OnlyNulls(CompiledSchema):
    nothing = fields.Raw(allow_none=True, metadata={"avro": "null"})
    constant = fields.Constant(None)


class ThreeDoubles(CompiledSchema):
    a = fields.Float()
    b = fields.Float()
    c = fields.Float()


class Sizes(CompiledSchema):
    points = fields.List(fields.Nested(ThreeDoubles))
    generic = fields.Raw(metadata={"avro": {"type": "array", "items": "null"}})
    empties = fields.List(fields.Nested(Empty))
    pairs = fields.List(
        fields.Tuple((fields.Constant(None), fields.Raw(allow_none=True, metadata={"avro": "null"})))
    )
    only_nulls = fields.List(fields.Nested(OnlyNulls))
    # last, so that no other field's bytes follow the items
    nulls = fields.List(fields.Raw(allow_none=True, metadata={"avro": "null"}))


@pytest.fixture(scope="module")
def sizes():
    return Sizes().compile()


RECORD = {
    "points": [{"a": 1.0, "b": 2.0, "c": 3.0}],
    "generic": [None] * 60,
    "empties": [{}] * 30,
    "pairs": [(None, None)] * 20,
    "only_nulls": [{"nothing": None, "constant": None}] * 40,
    "nulls": [None] * 50,
}


def test_arrays_of_zero_size_items_load(sizes):
    data = sizes.dump_compiled(RECORD)
    assert data == fastavro_bytes(sizes, {**RECORD, "pairs": [{"item0": None, "item1": None}] * 20})
    assert sizes.load_compiled(data) == RECORD


def test_record_size_is_the_sum_of_its_fields(sizes):
    records = {record.name: record for record in Sizes()._plan().records}
    assert records["ThreeDoubles"].min_size() == 24
    assert records["OnlyNulls"].min_size() == 0
    # 10 points claimed with 30 bytes left: refused before any item is read
    data = b"\x14" + bytes(30)
    with pytest.raises(DecodeError, match="needs at least 240 bytes"):
        sizes.load_compiled(data)
