"""load_compiled(data, writer_schema=...) where the writer's numbers are
promoted (int to long, float or double; long to float or double; float to
double): read in one pass by the pair's compiled codec, each promoted value
read as the writer's type, converted as Java converts it, then read by the
schema's own field code. Java Avro 1.12's GenericDatumReader(writer, reader)
is the oracle: what it reads, written in the reader's schema, loads as the
one-pass codec's result."""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import fields

from pair_checks import assert_same_decode_error, loads_as_java_resolves
from roastedavro import CompiledSchema, DecodeError

pytestmark = pytest.mark.java


class PointV1(CompiledSchema):
    class Meta:
        avro_name = "Point"

    x = fields.Integer(metadata={"avro": "int"})
    y = fields.Float(metadata={"avro": "float"})


class PointV2(CompiledSchema):
    class Meta:
        avro_name = "Point"

    y = fields.Float()  # float -> double, moved
    x = fields.Float()  # int -> double


class ReadingV1(CompiledSchema):
    class Meta:
        avro_name = "Reading"

    small = fields.Integer(metadata={"avro": "int"})
    single = fields.Integer(metadata={"avro": "int"})
    whole = fields.Integer()  # long
    wide = fields.Integer()  # long
    ratio = fields.Float(metadata={"avro": "float"})
    dropped = fields.String()
    points = fields.List(fields.Nested(PointV1))


class ReadingV2(CompiledSchema):
    class Meta:
        avro_name = "Reading"

    small = fields.Integer()  # int -> long
    single = fields.Float(metadata={"avro": "float"})  # int -> float
    whole = fields.Float(metadata={"avro": "float"})  # long -> float
    wide = fields.Float()  # long -> double
    ratio = fields.Float()  # float -> double
    added = fields.String(load_default="none")
    points = fields.List(fields.Nested(PointV2))


def float32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


ints = st.integers(-(2**31), 2**31 - 1)
longs = st.integers(-(2**63), 2**63 - 1)
singles = st.floats(width=32, allow_nan=False, allow_infinity=False)
points = st.lists(st.fixed_dictionaries({"x": ints, "y": singles}), max_size=3)
readings = st.fixed_dictionaries(
    {
        "small": ints,
        "single": ints,
        "whole": longs,
        "wide": longs,
        "ratio": singles,
        "dropped": st.text(max_size=5),
        "points": points,
    }
)


@pytest.fixture(scope="module")
def schemas():
    return ReadingV1(), ReadingV2()


class OptionalV1(CompiledSchema):
    class Meta:
        avro_name = "Optional"

    count = fields.Integer(allow_none=True, metadata={"avro": "int"})
    level = fields.Float(allow_none=True, metadata={"avro": "float"})
    total = fields.Integer(allow_none=True)  # ["null", "long"]


class OptionalV2(CompiledSchema):
    class Meta:
        avro_name = "Optional"

    total = fields.Float(allow_none=True, metadata={"avro": "float"})  # long -> float
    count = fields.Integer(allow_none=True)  # int -> long
    level = fields.Float(allow_none=True)  # float -> double


optionals = st.fixed_dictionaries(
    {"count": st.none() | ints, "level": st.none() | singles, "total": st.none() | longs}
)


def test_the_pair_is_read_in_one_pass(schemas):
    v1, v2 = schemas
    data = v1.dump_compiled(
        {
            "small": 1,
            "single": 2,
            "whole": 3,
            "wide": 4,
            "ratio": 0.5,
            "dropped": "d",
            "points": [{"x": 1, "y": 2.5}],
        }
    )
    v2.load_compiled(data, writer_schema=ReadingV1)
    pairs = v2.load_compiled.__self__.pairs.args[2]
    served = list(pairs.by_json.values())
    assert served and all(type(pair).__name__ == "Codec" for pair in served)
    source = served[0].__class__.__module__
    assert source  # a generated module, not the read-and-write fallback


@settings(max_examples=60, deadline=None)
@given(st.lists(readings, min_size=1, max_size=8))
def test_promoted_values_are_javas(java, schemas, records):
    v1, v2 = schemas
    # Java 1.12 checks an array's count against the reader's smallest item
    # (16 bytes for a Point of two doubles), not the writer's (an int and a
    # float: 5), and refuses such data; its arrays here stay empty, and the
    # next test reads them
    records = [{**record, "points": []} for record in records]
    for record, loaded in zip(records, loads_as_java_resolves(java, v1, v2, records, ReadingV1)):
        # Java's casts: a 32-bit float rounded to nearest, a double exact
        assert loaded["single"] == float32(record["single"])
        assert loaded["whole"] == float32(record["whole"])
        assert loaded["wide"] == float(record["wide"])
        assert loaded["small"] == record["small"] and loaded["added"] == "none"


@settings(max_examples=60, deadline=None)
@given(st.lists(readings, min_size=1, max_size=8))
def test_promoted_values_in_nested_records_are_the_pairs_avro_codecs(schemas, records):
    # the pair's AvroCodec reads by the same rules (held to Java's in
    # test_resolution.py); marshmallow's load of its values is the answer
    from roastedavro import AvroCodec

    v1, v2 = schemas
    pair = AvroCodec(v2.avro_schema(), writer_schema=v1.avro_schema())
    for record in records:
        data = v1.dump_compiled(record)
        loaded = v2.load_compiled(data, writer_schema=ReadingV1)
        assert loaded == v2.load(pair.load(data))
        assert [point["x"] for point in loaded["points"]] == [float(point["x"]) for point in record["points"]]
        assert [point["y"] for point in loaded["points"]] == [point["y"] for point in record["points"]]


@settings(max_examples=60, deadline=None)
@given(st.lists(optionals, min_size=1, max_size=8))
def test_nullable_promoted_values_are_javas(java, records):
    v1, v2 = OptionalV1(), OptionalV2()
    for record, loaded in zip(records, loads_as_java_resolves(java, v1, v2, records, OptionalV1)):
        assert loaded["count"] == record["count"] and loaded["level"] == record["level"]
        assert loaded["total"] == (None if record["total"] is None else float32(record["total"]))
    served = list(v2.load_compiled.__self__.pairs.args[2].by_json.values())
    assert [type(pair).__name__ for pair in served] == ["Codec"]


def test_a_nullable_promotion_checks_the_writers_branch_index():
    v1, v2 = OptionalV1(), OptionalV2()
    data = bytearray(v1.dump_compiled({"count": 1, "level": None, "total": None}))
    data[0] = 4  # branch 2 of a 2-branch union
    with pytest.raises(DecodeError) as raised:
        v2.load_compiled(bytes(data), writer_schema=OptionalV1)
    assert raised.value.offset == 0


def test_many_records_are_read_in_one_pass_too(java, schemas):
    v1, v2 = schemas
    records = [
        {
            "small": n,
            "single": 2**24 + n,
            "whole": 2**60 + n,
            "wide": -n,
            "ratio": 0.1,
            "dropped": "",
            "points": [],
        }
        for n in range(5)
    ]
    data = v1.dump_compiled(records, many=True)
    loaded = v2.load_compiled(data, many=True, writer_schema=ReadingV1)
    assert loaded == [
        v2.load_compiled(v1.dump_compiled(record), writer_schema=ReadingV1) for record in records
    ]
    assert loaded[1]["single"] == float32(2**24 + 1) == 2.0**24


def test_a_writer_int_past_32_bits_is_a_decode_error_at_its_offset(schemas):
    v1, v2 = schemas
    data = v1.dump_compiled(
        {"small": 0, "single": 0, "whole": 0, "wide": 0, "ratio": 0.0, "dropped": "", "points": []}
    )
    # the first field, an int, written as a varint of 2**40 (zig-zag 2**41)
    bad = bytes([0x80, 0x80, 0x80, 0x80, 0x80, 0x40]) + data[1:]
    with pytest.raises(DecodeError) as raised:
        v2.load_compiled(bad, writer_schema=ReadingV1)
    assert raised.value.offset == 0


def test_a_value_the_reader_refuses_is_marshmallows_error(schemas):
    # a long past float's range read as a float: Java's cast gives a finite
    # float (2**63 fits), so it loads; NaN cannot come from an integer
    v1, v2 = schemas
    record = {
        "small": 0,
        "single": 0,
        "whole": 2**63 - 1,
        "wide": 0,
        "ratio": 0.0,
        "dropped": "",
        "points": [],
    }
    loaded = v2.load_compiled(v1.dump_compiled(record), writer_schema=ReadingV1)
    assert math.isfinite(loaded["whole"]) and loaded["whole"] == float32(2**63 - 1)


def test_under_the_never_policy_the_same_values_are_read_again_and_written(monkeypatch, schemas):
    monkeypatch.setenv("ROASTEDAVRO_COMPILE", "never")

    class Fresh(ReadingV2):
        class Meta:
            avro_name = "Reading"

    v1 = schemas[0]
    record = {
        "small": -5,
        "single": 2**24 + 1,
        "whole": 2**53 + 1,
        "wide": 2**53 + 1,
        "ratio": 0.1,
        "dropped": "x",
        "points": [{"x": 3, "y": 1.5}],
    }
    data = v1.dump_compiled(record)
    fresh = Fresh()
    assert fresh.load_compiled(data, writer_schema=ReadingV1) == schemas[1].load_compiled(
        data, writer_schema=ReadingV1
    )


def test_under_the_hot_policy_reading_and_writing_serves_until_the_codec_is_built(monkeypatch):
    from roastedavro import tiers

    monkeypatch.setenv("ROASTEDAVRO_COMPILE", "hot")
    # as where nothing was built before (other tests built this pair)
    monkeypatch.setattr(tiers.Engine, "_find", lambda self, where: None)
    monkeypatch.setattr(tiers, "HOT_AFTER", 64)
    started = []
    monkeypatch.setattr(tiers.Engine, "_background", lambda self, make, state: started.append((self, state)))

    class Hot(PointV2):
        class Meta:
            avro_name = "Point"

    v1, hot = PointV1(), Hot()
    hot.compile()
    data = v1.dump_compiled({"x": 3, "y": 1.5})
    for _ in range(2 * 64 // len(data) + 2):
        assert hot.load_compiled(data, writer_schema=PointV1) == {"x": 3.0, "y": 1.5}
    served = list(hot.load_compiled.__self__.pairs.args[2].by_json.values())
    # the Rearranger promotes the numbers in the bytes meanwhile
    assert [type(pair).__name__ for pair in served] == ["Rearranger"]
    (evolved,) = hot.load_compiled.__self__.pairs.args[2].evolved
    # hot once: the one-pass codec's build was asked for once
    assert started.count((evolved.engine, "compiling")) == 1
    monkeypatch.undo()
    evolved.engine.compile()  # what the background does
    assert served[0].replaced_by is not None
    assert hot.load_compiled(data, writer_schema=PointV1) == {"x": 3.0, "y": 1.5}
    served = list(hot.load_compiled.__self__.pairs.args[2].by_json.values())
    assert [type(pair).__name__ for pair in served] == ["Codec"]


class GaugeV1(CompiledSchema):
    """Numbers inside a union of more than null and itself, a value that
    becomes a union, a union read as one of its branches: the field's own
    code cannot read these from the writer's bytes; the pair's Rearranger
    converts them into the schema's bytes first, in the same pass."""

    class Meta:
        avro_name = "Gauge"

    reading = fields.Raw(allow_none=True, metadata={"avro": ["null", "int", "string", "float"]})
    count = fields.Integer(required=True, metadata={"avro": "int"})
    label = fields.String(allow_none=True)  # ["null", "string"]


class GaugeV2(CompiledSchema):
    class Meta:
        avro_name = "Gauge"

    label = fields.String(required=True)  # read as its string branch: a null fails
    reading = fields.Raw(allow_none=True, metadata={"avro": ["null", "string", "double"]})
    count = fields.Raw(allow_none=True, metadata={"avro": ["null", "long"]})


gauges = st.fixed_dictionaries(
    {"reading": st.none() | ints | st.text(max_size=3) | singles, "count": ints, "label": st.text(max_size=3)}
)


@settings(max_examples=60, deadline=None)
@given(st.lists(gauges, min_size=1, max_size=8))
def test_promotions_in_wide_unions_and_values_into_unions_are_javas(java, records):
    v1, v2 = GaugeV1(), GaugeV2()
    for record, loaded in zip(records, loads_as_java_resolves(java, v1, v2, records, GaugeV1)):
        assert loaded["count"] == record["count"] and loaded["label"] == record["label"]
    served = list(v2.load_compiled.__self__.pairs.args[2].by_json.values())
    assert [type(pair).__name__ for pair in served] == ["Codec"]


def test_a_union_branch_the_reader_cannot_read_is_the_pairs_error_at_its_offset():
    from roastedavro import AvroCodec

    v1, v2 = GaugeV1(), GaugeV2()
    data = v1.dump_compiled({"reading": 3, "count": 1, "label": None})
    pair = AvroCodec(v2.avro_schema(), writer_schema=v1.avro_schema())
    error = assert_same_decode_error(
        lambda: pair.load(data), lambda: v2.load_compiled(data, writer_schema=GaugeV1)
    )
    assert error.offset == len(data)  # after the label's branch index, the datum's last byte
