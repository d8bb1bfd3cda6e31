"""Bad input gets a clear error: ValidationError with the field path on dump,
DecodeError with the byte offset on load. Never a crash or garbage bytes."""

import pytest
from conftest import fastavro_bytes
from marshmallow import ValidationError, fields

from roastedavro import CompiledSchema, DecodeError
from roastedavro.codegen import NO_VALUE


class Point(CompiledSchema):
    x = fields.Integer(metadata={"avro": "int"})
    label = fields.String()


class Shape(CompiledSchema):
    id = fields.Integer(required=True)
    name = fields.String()
    points = fields.List(fields.Nested(Point))
    weights = fields.Dict(keys=fields.String(), values=fields.Float())
    matrix = fields.List(fields.List(fields.Integer()))
    ok = fields.Boolean(allow_none=True)
    origin = fields.Nested(Point, allow_none=True)


@pytest.fixture(scope="module")
def shape():
    return Shape().compile()


GOOD = {
    "id": 1,
    "name": "tri",
    "points": [{"x": 1, "label": "a"}, {"x": -2, "label": "b"}],
    "weights": {"w": 0.5},
    "matrix": [[1, 2], [3]],
    "ok": None,
    "origin": {"x": 0, "label": ""},
}


def test_missing_required_field_is_marshmallows_message(shape):
    record = dict(GOOD)
    del record["id"]
    assert dump_error(shape, record) == {"id": ["Missing data for required field."]}


def test_missing_collection_says_what_avro_needs(shape):
    record = dict(GOOD)
    del record["matrix"]
    message = dump_error(shape, record)["matrix"][0]
    assert "dump_default" in message and "allow_none=True" in message


def test_list_given_without_many_says_so(shape):
    messages = dump_error(shape, [GOOD, GOOD])
    assert messages == {
        "_schema": ["Expected a single record, got a list; pass many=True to write a list of records."]
    }
    assert shape.load_compiled(shape.dump_compiled([GOOD], many=True), many=True)[0]["id"] == 1


def test_codec_methods_have_signatures(shape):
    import inspect

    assert str(inspect.signature(shape.dump_compiled)) == "(obj, many=None)"
    assert str(inspect.signature(shape.load_compiled)) == "(data, many=None, writer_schema=None)"


def dump_error(schema, record):
    with pytest.raises(ValidationError) as error:
        schema.dump_compiled(record)
    return error.value.messages


@pytest.mark.parametrize(
    "change, messages",
    [
        ({"id": "seven"}, {"id": ["Not a valid integer."]}),
        ({"id": None}, {"id": ["Field may not be null."]}),
        (
            {"id": 2**63},
            {"id": ["Number out of range for Avro long (-2**63 .. 2**63-1): 9223372036854775808."]},
        ),
        (
            {"id": -(2**63) - 1},
            {"id": ["Number out of range for Avro long (-2**63 .. 2**63-1): -9223372036854775809."]},
        ),
        (
            {"points": [{"x": 1, "label": "a"}, {"x": 2**31, "label": "b"}]},
            {"points": {1: {"x": ["Number out of range for Avro int (-2**31 .. 2**31-1): 2147483648."]}}},
        ),
        # not required, no default, not nullable: marshmallow's dump leaves
        # it out, which an Avro record cannot; the message says what to do
        ({"points": [{"x": 1}]}, {"points": {0: {"label": [NO_VALUE]}}}),
        ({"weights": {"w": "heavy"}}, {"weights": {"w": {"value": ["Not a valid number."]}}}),
        ({"matrix": [[1], [2, "x"]]}, {"matrix": {1: {1: ["Not a valid integer."]}}}),
        ({"matrix": 5}, {"matrix": ["Not a valid list."]}),
        ({"weights": [1, 2]}, {"weights": ["Not a valid mapping type."]}),
        ({"origin": {"x": "far", "label": "o"}}, {"origin": {"x": ["Not a valid integer."]}}),
        ({"name": "\ud800"}, {"name": ["Not a valid UTF-8 string: surrogates not allowed."]}),
    ],
)
def test_dump_errors_name_the_field_path(shape, change, messages):
    assert dump_error(shape, {**GOOD, **change}) == messages


def test_map_keys_convert_like_marshmallow_or_fail_clearly(shape):
    record = {**GOOD, "weights": {3: 1.0}}  # String keys: 3 dumps as "3"
    assert shape.dump_compiled(record) == fastavro_bytes(shape, shape.dump(record))

    class Untyped(CompiledSchema):
        values = fields.Dict(values=fields.Integer())

    assert dump_error(Untyped(), {"values": {3: 1}}) == {
        "values": {3: {"key": ["Map keys must be strings."]}}
    }


def test_missing_required_value(shape):
    record = dict(GOOD)
    del record["id"]
    assert dump_error(shape, record) == {"id": ["Missing data for required field."]}


def test_error_in_many_names_the_record_index(shape):
    with pytest.raises(ValidationError) as error:
        shape.dump_compiled([GOOD, {**GOOD, "id": "x"}], many=True)
    assert error.value.messages == {1: {"id": ["Not a valid integer."]}}


def test_large_records_grow_the_buffer(shape):
    record = {
        **GOOD,
        "points": [{"x": i, "label": "p" * (i % 50)} for i in range(5000)],
        "name": "n" * 100_000,
    }
    assert shape.dump_compiled(record) == fastavro_bytes(shape, shape.dump(record))


# -- hostile bytes ------------------------------------------------------------


def decode_error(schema, data):
    with pytest.raises(DecodeError) as error:
        schema.load_compiled(data)
    assert isinstance(error.value, ValueError)
    assert f"at byte offset {error.value.offset}" in str(error.value)
    return error.value


def test_every_truncation_is_a_decode_error(shape):
    data = shape.dump_compiled(GOOD)
    for end in range(len(data)):
        error = decode_error(shape, data[:end])
        assert 0 <= error.offset <= end


def test_trailing_bytes(shape):
    data = shape.dump_compiled(GOOD)
    error = decode_error(shape, data + b"\x00\x01")
    assert error.offset == len(data)
    assert "2 trailing bytes" in str(error)


class Small(CompiledSchema):
    n = fields.Integer()
    s = fields.String(allow_none=True)
    items = fields.List(fields.Integer())
    flag = fields.Boolean()


def test_malformed_values():
    small = Small()
    cases = {
        b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01": (0, "varint"),  # 11-byte varint
        b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02": (0, "varint"),  # 10th byte too big
        b"\x02\x04": (1, "index 2 out of range"),  # union branch 2
        b"\x02\x01": (1, "index -1 out of range"),
        b"\x02\x02\x01": (2, "negative length"),
        b"\x02\x02\x10ab": (2, "exceeds"),  # length past the end
        b"\x02\x02\x04\xff\xfe": (3, "invalid UTF-8"),  # the bad byte
        b"\x02\x00\xfe\xff\xff\xff\x0f": (2, "items"),  # huge block count
        b"\x02\x00\x00\x07": (3, "invalid boolean"),
    }
    for data, (offset, text) in cases.items():
        error = decode_error(small, data)
        assert text in str(error), (data, str(error))
        assert error.offset == offset, (data, error.offset)


def test_negative_block_counts_are_read():
    small = Small()
    # items as one block of -2 items with its byte size, then the end
    data = b"\x02\x00" + b"\x03" + b"\x04" + b"\x02\x04" + b"\x00" + b"\x01"
    assert small.load_compiled(data) == {"n": 1, "s": None, "items": [1, 2], "flag": True}


def test_collection_limit():
    from roastedavro import CompileFlags

    small = Small().compile(CompileFlags(max_items=3))
    ok = small.dump_compiled({"n": 1, "s": None, "items": [1, 2, 3], "flag": True})
    assert small.load_compiled(ok)["items"] == [1, 2, 3]
    too_many = small.dump_compiled({"n": 1, "s": None, "items": [1, 2, 3, 4], "flag": True})
    assert "exceeds the limit of 3" in str(decode_error(small, too_many))
