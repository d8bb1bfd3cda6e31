"""Avro's JSON encoding (roastedavro.avrojson) against Java Avro 1.12's
JsonEncoder and JsonDecoder, AvroCodec's binary and fastavro's json_writer.

For every datum: the JSON we write, parsed, equals the JSON Java's
JsonEncoder writes for the datum it reads from AvroCodec's bytes (JSON
values are compared, not text: Java writes 1.0E300 and escapes differently;
floats are compared as 32-bit floats where the schema says float, as JDK 17's
Float.toString is not always the shortest decimal); Java's JsonDecoder reads
our JSON as AvroCodec's bytes; and we read Java's JSON as AvroCodec reads the
bytes.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import io
import json
import math
import struct
import types
import uuid

import fastavro
import pytest
from fastavro.io.json_encoder import AvroJSONEncoder
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

import avro_strategies
import evolution
from test_resolution_properties import has_values
from roastedavro import AvroCodec
from roastedavro.avro import Array, Enum, Fixed, Map, Primitive, Record, Union, parse_schema
from roastedavro.avrojson import AvroJSON, JSONDecodeError, from_json, to_json
from roastedavro.codec import Duration
from roastedavro.errors import DatumError, DecodeError, SchemaError, SchemaResolutionError
from roastedavro.fastavro.json import json_reader, json_writer
from fuzzing import examples

UTC = datetime.timezone.utc

EVERYTHING = {
    "type": "record",
    "name": "Everything",
    "namespace": "json.test",
    "fields": [
        {"name": "null", "type": "null"},
        {"name": "boolean", "type": "boolean"},
        {"name": "int", "type": "int"},
        {"name": "long", "type": "long"},
        {"name": "float", "type": "float"},
        {"name": "double", "type": "double"},
        {"name": "bytes", "type": "bytes"},
        {"name": "string", "type": "string"},
        {"name": "fixed", "type": {"type": "fixed", "name": "F3", "size": 3}},
        {
            "name": "suit",
            "type": {
                "type": "enum",
                "name": "Suit",
                "symbols": ["SPADES", "HEARTS", "CLUBS"],
                "default": "SPADES",
            },
        },
        {"name": "longs", "type": {"type": "array", "items": "long"}},
        {"name": "scores", "type": {"type": "map", "values": "double"}},
        # logical types
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {
            "name": "amount",
            "type": {
                "type": "fixed",
                "name": "F8",
                "size": 8,
                "logicalType": "decimal",
                "precision": 18,
                "scale": 4,
            },
        },
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "raw_id", "type": {"type": "fixed", "name": "U16", "size": 16, "logicalType": "uuid"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "t_ms", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "t_us", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "ts_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "ts_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "ts_ns", "type": {"type": "long", "logicalType": "timestamp-nanos"}},
        {"name": "lts_ms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "lts_us", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "lts_ns", "type": {"type": "long", "logicalType": "local-timestamp-nanos"}},
        {"name": "big", "type": {"type": "bytes", "logicalType": "big-decimal"}},
        {"name": "span", "type": {"type": "fixed", "name": "D12", "size": 12, "logicalType": "duration"}},
        # unions of each kind
        {"name": "optional", "type": ["null", "string"]},
        {"name": "number", "type": ["int", "long", "float", "double"]},
        {"name": "scalar", "type": ["null", "boolean", "bytes", "string"]},
        {
            "name": "named",
            "type": [
                "null",
                "Suit",
                "F3",
                {
                    "type": "record",
                    "name": "Point",
                    "fields": [{"name": "x", "type": "double"}, {"name": "y", "type": "double"}],
                },
            ],
        },
        {
            "name": "shape",
            "type": [
                "Point",
                {
                    "type": "record",
                    "name": "Circle",
                    "namespace": "geo",
                    "fields": [
                        {"name": "center", "type": "json.test.Point"},
                        {"name": "radius", "type": "float"},
                    ],
                },
                {"type": "map", "values": "int"},
            ],
        },
        {
            "name": "collection",
            "type": ["null", {"type": "array", "items": "int"}, {"type": "map", "values": "string"}],
        },
        {
            "name": "when",
            "type": [
                "null",
                {"type": "long", "logicalType": "timestamp-micros"},
                {"type": "int", "logicalType": "date"},
                {"type": "string", "logicalType": "uuid"},
                {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2},
            ],
        },
        # recursion
        {
            "name": "tree",
            "type": {
                "type": "record",
                "name": "Node",
                "fields": [
                    {"name": "label", "type": "string"},
                    {"name": "children", "type": {"type": "array", "items": "Node"}},
                ],
            },
        },
        {
            "name": "list",
            "type": {
                "type": "record",
                "name": "LongList",
                "fields": [{"name": "value", "type": "long"}, {"name": "next", "type": ["null", "LongList"]}],
            },
        },
        # defaults (written for a datum without the field)
        {"name": "d_union", "type": ["int", "null"], "default": 5},
        {"name": "d_point", "type": "Point", "default": {"x": 1.5, "y": -2}},
        {"name": "d_bytes", "type": "bytes", "default": "\u00ff\u0000a"},
        {"name": "d_float", "type": "float", "default": 0.1},
        {
            "name": "d_items",
            "type": {"type": "array", "items": ["null", "string", "Suit"]},
            "default": [None, "a", "CLUBS"],
        },
        {"name": "d_suit", "type": ["Suit", "null"], "default": "HEARTS"},
    ],
}


def everything(n: int, **changes) -> dict:
    datum = {
        "null": None,
        "boolean": n % 2 == 0,
        "int": [-(2**31), 2**31 - 1, 0, 7][n % 4],
        "long": [-(2**63), 2**63 - 1, -1, 10**12][n % 4],
        "float": [1.5, -0.0, 0.1, 3.4028234663852886e38, 1e-45][n % 5],
        "double": [-0.0, 1e300, 0.1, 5e-324, 2.5][n % 5],
        "bytes": bytes(range(n, 256, 37)),
        "string": ["", "ü€😀", 'a"b\\c\n\x00\x7f', "x"][n % 4],
        "fixed": bytes([n, 0, 255]),
        "suit": ["SPADES", "HEARTS", "CLUBS"][n % 3],
        "longs": list(range(-n, n * 3, 5)),
        "scores": {f"k{i}": i / 4 for i in range(n % 3)},
        "price": decimal.Decimal(f"{'-' if n % 2 else ''}{n * 1234}.{n:02d}"),
        "amount": decimal.Decimal(f"-{n}9876543210.1234") if n % 2 else decimal.Decimal("0.0000"),
        "id": uuid.UUID(int=n * 2**100 + 12345),
        "raw_id": uuid.UUID(int=2**128 - 1 - n),
        "day": datetime.date(1 + n * 400, 1 + n % 12, 28),
        "t_ms": datetime.time(n % 24, 59, 58, 999000),
        "t_us": datetime.time(23, n % 60, 0, 123456),
        "ts_ms": datetime.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
        "ts_us": datetime.datetime(2000 + 4 * n, 2, 29 - n % 2, 12, 0, 0, n, tzinfo=UTC),
        "ts_ns": 1_700_000_000_123_456_789 * (-1) ** n,
        "lts_ms": datetime.datetime(9999, 12, 31, 23, 59, 59, 999000),
        "lts_us": datetime.datetime(1, 1, 1, 0, 0, 0, n),
        "lts_ns": n * 10**17,
        "big": decimal.Decimal(f"-{n}.{'7' * (n * 9)}E{n - 20}"),
        "span": Duration(n, 2**32 - 1, 86_400_000),
        "optional": None if n % 2 else f"opt{n}",
        "number": [5, 2**40, 1.5, 2**70, -(2**31) - 1, -0.0][n % 6],
        "scalar": [None, True, b"\x00\xff", "text", ("bytes", b"tuple"), ("string", "named")][n % 6],
        "named": [
            None,
            "HEARTS",
            b"abc",
            {"x": 1.0, "y": 2.0},
            ("json.test.Suit", "CLUBS"),
            ("json.test.F3", b"xyz"),
        ][n % 6],
        "shape": [
            {"x": 1.5, "y": 2.5},
            {"x": 1, "y": 2},
            {"center": {"x": 0.0, "y": 0.0}, "radius": 2.0},
            {"a": 1},
            ("json.test.Point", {"x": 3, "y": 4}),
            {"-type": "geo.Circle", "center": {"x": 1.0, "y": 1.0}, "radius": 0.5},
        ][n % 6],
        "collection": [None, [1, 2, 3], {"a": "b"}, [], {}][n % 5],
        "when": [
            None,
            datetime.datetime(2024, 2, 29, tzinfo=UTC),
            datetime.date(2024, 2, 29),
            uuid.UUID(int=n),
            decimal.Decimal("-9999.99"),
            "2024-03-01",
        ][n % 6],
        "tree": {
            "label": "root",
            "children": [
                {"label": f"c{i}", "children": [{"label": "leaf", "children": []}] * (i % 2)}
                for i in range(n % 3)
            ],
        },
        "list": {"value": n, "next": {"value": n + 1, "next": None} if n % 2 else None},
        "d_union": None,
        "d_point": {"x": 0.5, "y": 0.25},
        "d_bytes": b"",
        "d_float": 2.5,
        "d_items": ["x", None, "SPADES"],
        "d_suit": None,
    }
    datum.update(changes)
    for key in [key for key, value in changes.items() if value is _DROP]:
        del datum[key]
    return datum


class _Drop:
    """A field left out of a datum (a stable repr: test ids must not hold addresses)."""

    def __repr__(self) -> str:
        return "DROP"


_DROP = _Drop()
DEFAULTED = ("d_union", "d_point", "d_bytes", "d_float", "d_items", "d_suit")
EVERYTHING_DATA = (
    [everything(n) for n in range(12)]
    + [everything(3, **{key: _DROP for key in DEFAULTED})]
    + [
        everything(4, float=math.nan, double=math.inf, number=-math.inf, d_float=math.nan),
        everything(5, float=-math.inf, double=math.nan, number=math.nan),
        # a naive datetime for a timestamp is local time, a str date is converted
        everything(6, ts_us=datetime.datetime(2020, 5, 5, 5, 5, 5), day="2020-02-02", optional=_DROP),
    ]
)

ROOT_UNION = [
    "null",
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "bytes",
    "string",
    {"type": "fixed", "name": "F2", "namespace": "u", "size": 2},
    {"type": "enum", "name": "E", "namespace": "u", "symbols": ["X", "Y"]},
    {"type": "record", "name": "A", "namespace": "u", "fields": [{"name": "a", "type": "int"}]},
    {
        "type": "record",
        "name": "B",
        "namespace": "u",
        "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}],
    },
    {"type": "map", "values": "long"},
    {"type": "array", "items": ["null", "u.E", "string"]},
]
ROOT_UNION_DATA = [
    None,
    True,
    False,
    1,
    -(2**31),
    2**31,
    2**63 - 1,
    2**63,
    -(2**80),
    0.5,
    math.nan,
    b"xy",
    b"",
    "X",
    ("u.E", "Y"),
    ("u.F2", b"ab"),
    ("string", "Y"),
    {"a": 1},
    {"a": 1, "b": "x"},
    {"a": 1, "c": "x"},
    ("u.A", {"a": 2}),
    {"-type": "u.A", "a": 3},
    {"x": 2**40},
    {},
    [],
    ["X", None, "Z"],
    ("long", 3),
    ("float", 2.5),
    ("double", 2.5),
    ("null", None),
    2**64,
    ("float", 0.1),
]

SCHEMAS = {"everything": EVERYTHING, "root union": ROOT_UNION}
DATA = {"everything": EVERYTHING_DATA, "root union": ROOT_UNION_DATA}


@pytest.fixture(scope="module")
def codecs():
    return {name: (AvroCodec(schema), AvroJSON(schema)) for name, schema in SCHEMAS.items()}


# -- comparing JSON values ----------------------------------------------------------------


def _f32(number: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", number))[0]
    except OverflowError:
        return math.copysign(math.inf, number)


def normalized(schema, avro, value):
    """A JSON value with the numbers of float types as 32-bit floats."""
    avro = schema.deref(avro)
    if isinstance(avro, Primitive):
        if avro.name == "float" and isinstance(value, (int, float)) and avro.logical is None:
            return _f32(value)
        return value
    if isinstance(avro, Union):
        if value is None:
            return None
        ((name, inner),) = value.items()
        for branch in avro.branches:
            if getattr(schema.deref(branch), "name", None) == name or schema.deref(branch).type_name == name:
                return {name: normalized(schema, branch, inner)}
        raise AssertionError(f"no branch {name!r}")
    if isinstance(avro, Record):
        assert list(value) == [field.name for field in avro.fields]
        return {field.name: normalized(schema, field.type, value[field.name]) for field in avro.fields}
    if isinstance(avro, Array):
        return [normalized(schema, avro.items, item) for item in value]
    if isinstance(avro, Map):
        return {key: normalized(schema, avro.values, item) for key, item in value.items()}
    assert isinstance(avro, (Enum, Fixed))
    return value


def no_such_number(name):
    raise AssertionError(f"{name} is not JSON")


def assert_like_java(java, schema_json, codec, converter, data):
    """Our JSON == Java's JSON of AvroCodec's bytes; Java reads our JSON as those
    bytes; we read Java's JSON as AvroCodec reads the bytes. Returns our texts."""
    schema = converter.schema
    encoded = [codec.dump(datum) for datum in data]
    ours = [converter.to_json(datum) for datum in data]
    trips = java.roundtrip_each((schema_json, binary) for binary in encoded)
    javas_bytes = java.encode_json_each((schema_json, text) for text in ours)
    for datum, binary, text, trip, back in zip(data, encoded, ours, trips, javas_bytes):
        assert trip.trailing == 0 and trip.data == binary
        json.loads(text, parse_constant=no_such_number)  # JSON has no NaN, Infinity
        # Java's JsonEncoder writes nothing at all for a record without fields at the root
        javas_text = trip.json if trip.json or text != "{}" else "{}"
        ours_value, javas_value = json.loads(text), json.loads(javas_text)
        assert normalized(schema, schema.root, ours_value) == normalized(schema, schema.root, javas_value), (
            datum,
            text,
            trip.json,
        )
        if back != binary:
            # JSON's "NaN" has no sign or payload: Java reads it as the canonical NaN
            assert "NaN" in text, (datum, text)
            avro_strategies.assert_same(codec.load(back), codec.load(binary))
        avro_strategies.assert_same(converter.from_json(javas_text), codec.load(binary))
        avro_strategies.assert_same(converter.from_json_value(ours_value), codec.load(binary))
    return ours


# -- Java ------------------------------------------------------------------------------------


@pytest.mark.java
@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_json_as_javas(java, codecs, name):
    codec, converter = codecs[name]
    assert_like_java(java, SCHEMAS[name], codec, converter, DATA[name])


@pytest.mark.java
def test_java_writes_nan_and_infinities_as_strings(java, codecs):
    codec, converter = codecs["root union"]
    values = [math.nan, math.inf, -math.inf, ("float", math.inf), ("float", math.nan)]
    trips = java.roundtrip_each((ROOT_UNION, codec.dump(value)) for value in values)
    assert [json.loads(trip.json) for trip in trips] == [
        {"double": "NaN"},
        {"double": "Infinity"},
        {"double": "-Infinity"},
        {"float": "Infinity"},
        {"float": "NaN"},
    ]
    assert [converter.to_json_value(value) for value in values] == [json.loads(trip.json) for trip in trips]
    # and reads them back, as Java does; a JSON number that overflows a float is infinite
    texts = ['{"double":"NaN"}', '{"float":"-Infinity"}', '{"float":1e300}', '{"double":1e999}']
    assert_reads_as_java(java, ROOT_UNION, codec, converter, texts)
    assert converter.from_json('{"float":1e300}') == math.inf


def assert_reads_as_java(java, schema, codec, converter, texts):
    for text, binary in zip(texts, java.encode_json_each((schema, text) for text in texts)):
        avro_strategies.assert_same(converter.from_json(text), codec.load(binary))


@pytest.mark.java
def test_numbers_java_reads(java, codecs):
    """Java takes 1.0 and 1e3 for an int or long, any number for a float or double."""
    codec, converter = codecs["root union"]
    texts = [
        '{"int":1.0}',
        '{"long":1e3}',
        '{"double":1}',
        '{"float":0.1}',
        '{"long":-0.0}',
        '{"float":3.4028235677973366e38}',
        '{"double":123456789012345678901234567890}',
    ]
    assert_reads_as_java(java, ROOT_UNION, codec, converter, texts)
    assert converter.from_json('{"float":0.1}') == _f32(0.1)


class Text(str):
    pass


class Suit(str, enum.Enum):
    HEARTS = "HEARTS"


CONVERTED = [  # values AvroCodec converts (as fastavro does), field by field
    {"bytes": bytearray(b"ab")},
    {"bytes": memoryview(b"cd")},
    {"longs": (1, 2)},
    {"longs": range(3)},
    {"scores": types.MappingProxyType({"a": 1, "b": 2**70})},
    {"double": "1.5"},
    {"float": "-2.5"},
    {"double": 7},
    {"float": decimal.Decimal("0.5")},
    {"string": Text("sub")},
    {"suit": Suit.HEARTS},
    {"suit": Text("CLUBS")},
    {"int": True},
    {"long": decimal.Decimal(12)},
    {"price": b"\x00\x01"},
    {"day": datetime.datetime(2020, 1, 2, 3)},
    {"ts_ms": 123},
    {"ts_us": datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=5)))},
    {"lts_us": datetime.datetime(2020, 1, 1, tzinfo=UTC)},
    {"raw_id": b"\x01" * 16},
    {"span": b"\x02" * 12},
    {"id": "00000000-0000-0000-0000-00000000000A"},
    {"t_ms": 5},
    {"amount": b"\xff" * 8},
    {"optional": Text("x")},
    {"when": 5},
    {"tree": types.MappingProxyType({"label": "x", "children": ()})},
]


@pytest.mark.java
def test_values_avrocodec_converts(java, codecs):
    codec, converter = codecs["everything"]
    data = [everything(2, **changes) for changes in CONVERTED]
    texts = [converter.to_json(datum) for datum in data]
    for datum, text, binary in zip(data, texts, java.encode_json_each((EVERYTHING, text) for text in texts)):
        assert binary == codec.dump(datum), (datum, text)
    assert converter.to_json_value(types.MappingProxyType(data[0])) == json.loads(texts[0])


# random schemas and datums; few schemas (each is compiled), many datums each


@pytest.mark.java
@pytest.mark.fuzz
@settings(
    max_examples=examples(8, 3),
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(schema=avro_strategies.avro_schemas(), data=st.data())
def test_random_schemas_and_datums_as_javas(java, schema, data):
    datums = data.draw(st.lists(avro_strategies.datums(schema), min_size=20, max_size=40))
    assert_like_java(java, schema, AvroCodec(schema), AvroJSON(schema), datums)


# -- defaults, as Java's JsonDecoder does not take them ----------------------------------------

V1 = {
    "type": "record",
    "name": "Reading",
    "namespace": "json.test",
    "fields": [
        {"name": "station", "type": "string", "default": "?"},
        {"name": "temp", "type": "int", "default": -1},
        {"name": "note", "type": ["null", "string"], "default": None},
        {
            "name": "unit",
            "type": {"type": "enum", "name": "Unit", "symbols": ["C", "F", "K"]},
            "default": "C",
        },
        {"name": "raw", "type": {"type": "fixed", "name": "Raw", "size": 2}, "default": "\u00ff\u00fe"},
        {
            "name": "extra",
            "type": {"type": "map", "values": ["long", "null"]},
            "default": {"a": 1, "b": None},
        },
    ],
}
V2 = {
    "type": "record",
    "name": "Reading",
    "namespace": "json.test",
    "fields": [
        {"name": "temperature", "type": "double", "aliases": ["temp"]},
        {"name": "station", "type": "string"},
        {"name": "unit", "type": {"type": "enum", "name": "Unit", "symbols": ["C", "F", "K"]}},
        {"name": "extra", "type": {"type": "map", "values": ["null", "long", "string"]}},
        {"name": "added", "type": {"type": "array", "items": "float"}, "default": [0.5, 1]},
    ],
}


@pytest.fixture(scope="module")
def v1():
    return AvroCodec(V1), AvroJSON(V1)


@pytest.mark.java
def test_missing_fields_take_their_defaults(java, v1):
    codec, converter = v1
    # Java 1.12's JsonDecoder refuses a record without a field, even one with a default
    answer = java.request({"op": "encode_json", "schema": json.dumps(V1), "json": "{}"})
    assert not answer["ok"] and "station" in answer["error"]
    # we take the defaults, as fastavro's json_reader does, and as AvroCodec writes them
    datum = converter.from_json("{}")
    assert datum == {
        "station": "?",
        "temp": -1,
        "note": None,
        "unit": "C",
        "raw": b"\xff\xfe",
        "extra": {"a": 1, "b": None},
    }
    assert codec.dump(datum) == codec.dump({})
    assert converter.to_json_value({}) == {
        "station": "?",
        "temp": -1,
        "note": None,
        "unit": "C",
        "raw": "\u00ff\u00fe",
        "extra": {"a": {"long": 1}, "b": None},
    }
    assert java.encode_json(V1, converter.to_json({})) == codec.dump({})
    # as Java: defaults=False refuses it
    with pytest.raises(JSONDecodeError, match=r"^station: missing field$"):
        AvroJSON(V1, defaults=False).from_json("{}")
    assert AvroJSON(V1, defaults=False).from_json(converter.to_json({})) == datum
    # keys the record does not have are ignored, as Java does
    text = '{"zzz": [1], "temp": 3, "unit": "K"}'
    only_temp = {**V1, "fields": [V1["fields"][1]]}
    assert java.encode_json(only_temp, text) == b"\x06"
    assert converter.from_json(text)["temp"] == 3


@pytest.mark.java
def test_reader_schema(java, v1):
    codec, converter = v1
    datum = {"station": "x", "temp": 21, "note": "n", "unit": "K", "raw": b"ab", "extra": {"k": 2, "l": None}}
    text = converter.to_json(datum)
    resolved = AvroJSON(V1, reader_schema=V2).from_json(text)
    expected = {
        "temperature": 21.0,
        "station": "x",
        "unit": "K",
        "extra": {"k": 2, "l": None},
        "added": [0.5, 1.0],
    }
    avro_strategies.assert_same(resolved, expected)
    assert resolved == AvroCodec(V2, writer_schema=V1).load(codec.dump(datum))
    (trip,) = java.resolve_each([(V1, V2, codec.dump(datum))])
    assert json.loads(trip.json) == AvroJSON(V2).to_json_value(resolved)
    assert from_json(V1, text, reader_schema=V2) == resolved
    # a field given by its alias, as Java's JsonDecoder reads it
    aliased = '{"temp": 3.5, "station": "s", "unit": "C", "extra": {}, "added": []}'
    assert java.encode_json(V2, aliased) == AvroCodec(V2).dump(AvroJSON(V2).from_json(aliased))
    assert AvroJSON(V2).from_json(aliased)["temperature"] == 3.5


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {"int": 2**31},
        {"float": 1e39},
        {"boolean": 2},
        {"string": b"x"},
        {"string": "\ud800"},
        {"fixed": b"ab"},
        {"suit": "DIAMONDS"},
        {"longs": [1, "2"]},
        {"scores": {"a": "x"}},
        {"scores": {1: 2.0}},
        {"price": decimal.Decimal("1.234")},
        {"id": "not a uuid"},
        {"number": "5"},
        {"named": {"x": "1"}},
        {"shape": {"center": {"x": 0.0}, "radius": 1.0}},
        {"tree": {"label": "r", "children": [{"label": "c", "children": [{"label": 5}]}]}},
        {"list": {"value": 1, "next": {"value": 2, "next": {"value": "3"}}}},
        {"int": _DROP},
        {"span": Duration(-1)},
        {"scalar": ("int", 5)},
        {"null": 0},
        {"when": "not a date"},
        {"day": "2020-13-01"},
    ],
    ids=repr,
)
def test_write_errors_are_avrocodecs(codecs, changes):
    codec, converter = codecs["everything"]
    datum = everything(1, **changes)
    with pytest.raises(DatumError) as binary:
        codec.dump(datum)
    with pytest.raises(DatumError) as ours:
        converter.to_json_value(datum)
    assert str(ours.value) == str(binary.value)
    assert ours.value.path == binary.value.path


def test_write_error_paths(codecs):
    _, converter = codecs["everything"]
    with pytest.raises(DatumError) as error:
        converter.to_json_value(everything(2, longs=[1, 2, None]))
    assert error.value.path == ("longs", 2)
    with pytest.raises(DatumError) as error:
        converter.to_json_value(everything(2, scores={"ok": 1.0, "bad": []}))
    assert error.value.path == ("scores", "bad")


@pytest.mark.java
@pytest.mark.parametrize(
    "text, path, message",
    [
        ('{"int": {"int": 1}}', ("int",), "expected an int, got an object"),
        ('{"int": 2147483648}', ("int",), "out of range for an int"),
        ('{"int": 1.5}', ("int",), "expected an int, got the number 1.5"),
        ('{"long": "5"}', ("long",), "expected a long"),
        ('{"boolean": 1}', ("boolean",), "expected true or false"),
        ('{"null": 0}', ("null",), "expected null"),
        ('{"double": "1.5"}', ("double",), "expected a number for a double"),
        ('{"string": 5}', ("string",), "expected a string"),
        ('{"fixed": "ab"}', ("fixed",), "expected 3 bytes for the fixed json.test.F3, got 2"),
        ('{"suit": "DIAMONDS"}', ("suit",), "'DIAMONDS' is not a symbol of the enum json.test.Suit"),
        ('{"longs": [1, "2"]}', ("longs", 1), "expected a long"),
        ('{"scores": {"a": null}}', ("scores", "a"), "expected a number"),
        ('{"optional": "x"}', ("optional",), "expected null or an object naming one branch"),
        ('{"optional": {"int": 5}}', ("optional",), "'int' is not a branch of the union"),
        ('{"named": {"Point": {}}}', ("named",), "'Point' is not a branch"),
        (
            '{"named": {"json.test.Point": {"x": 1}}}',
            ("named", "y"),
            "missing field: no value and no default for y",
        ),
        (
            '{"tree": {"label": "r", "children": [{"label": 5}]}}',
            ("tree", "children", 0, "label"),
            "expected a string",
        ),
        (
            '{"list": {"value": 1, "next": {"json.test.LongList": {"value": 2, "next": {"null": 1}}}}}',
            ("list", "next", "next"),
            "expected null, got the number 1",
        ),
        ('{"shape": []}', ("shape",), "expected null or an object naming one branch"),
    ],
    ids=lambda value: value if isinstance(value, str) and value.startswith("{") else "",
)
def test_read_errors_name_the_path(java, codecs, text, path, message):
    codec, converter = codecs["everything"]
    base = json.loads(converter.to_json(everything(1)))
    value = {**base, **json.loads(text)}
    with pytest.raises(JSONDecodeError) as error:
        converter.from_json_value(value)
    assert error.value.path == path
    assert message in error.value.reason
    assert isinstance(error.value, ValueError)
    # Java's JsonDecoder refuses it too
    answer = java.request({"op": "encode_json", "schema": json.dumps(EVERYTHING), "json": json.dumps(value)})
    assert not answer["ok"], answer


@pytest.mark.java
def test_what_we_refuse_and_java_reads_as_question_marks(java, codecs):
    _, converter = codecs["root union"]
    for text in ['{"bytes": "\\u0100"}', '{"string": "\\ud800"}']:
        assert java.encode_json(ROOT_UNION, text).endswith(b"\x02?")
        with pytest.raises(JSONDecodeError, match="code points U\\+0000..U\\+00FF|not valid Unicode"):
            converter.from_json(text)
    # Java reads the first key of a union object and ignores the rest; we refuse it
    assert java.encode_json(ROOT_UNION, '{"int": 1, "long": 2}') == b"\x04\x02"
    with pytest.raises(JSONDecodeError, match="expected null or an object naming one branch"):
        converter.from_json('{"int": 1, "long": 2}')


def test_read_errors_of_logical_types(codecs):
    _, converter = codecs["everything"]
    base = json.loads(converter.to_json(everything(1)))
    for changes, path, message in [
        ({"day": 2932897}, ("day",), "date 2932897 is outside the years 1-9999"),
        ({"ts_ms": 253402300800000}, ("ts_ms",), "outside the years 1-9999"),
        ({"t_ms": 86400000}, ("t_ms",), "time of day 86400000 out of range"),
        ({"t_us": -1}, ("t_us",), "time of day -1 out of range"),
        ({"price": "\u0001" * 9}, ("price",), "more digits than decimal(10, 2)"),
        ({"id": "xyz"}, ("id",), "not a valid UUID"),
        ({"big": ""}, ("big",), "not an Avro big-decimal"),
        ({"when": {"long": "x"}}, ("when",), "expected a long"),
    ]:
        with pytest.raises(JSONDecodeError) as error:
            converter.from_json_value({**base, **changes})
        assert (error.value.path, message in error.value.reason) == (path, True), error.value
    with pytest.raises(JSONDecodeError, match="^not valid JSON"):
        converter.from_json('{"int": ')


def test_deep_values_are_errors_not_recursion_errors(codecs):
    _, converter = codecs["everything"]
    deep = None
    for value in range(5000):
        deep = {"value": value, "next": deep}
    with pytest.raises(DatumError, match="nested too deeply"):
        converter.to_json_value(everything(1, list=deep))
    text = '{"list": ' + '{"value": 1, "next": {"json.test.LongList": ' * 3000 + "null" + "}}" * 3000
    # Python 3.12's json parser refuses this depth itself ("nested too deeply");
    # 3.13's parses it, and the reader then refuses the record: an error either way
    with pytest.raises(JSONDecodeError, match="nested too deeply|missing field"):
        converter.from_json(text + "}")


# -- the API ----------------------------------------------------------------------------------


def test_schema_forms_and_module_functions(codecs):
    _, converter = codecs["everything"]
    datum = everything(7)
    text = converter.to_json(datum)
    for schema in (EVERYTHING, json.dumps(EVERYTHING), parse_schema(EVERYTHING)):
        assert to_json(schema, datum) == text
        assert from_json(schema, text) == converter.from_json(text)
    assert json.loads(converter.to_json(datum, indent=2)) == json.loads(text)
    assert converter.from_json(text.encode()) == converter.from_json(text)
    pytest.raises(JSONDecodeError, pickle_roundtrip, JSONDecodeError("why", ("a", 1)))


def pickle_roundtrip(error):
    import pickle

    raise pickle.loads(pickle.dumps(error))


def test_union_type_false_writes_bare_values(codecs):
    _, converter = codecs["everything"]
    bare = converter.to_json_value(everything(3), union_type=False)
    assert bare["number"] == 2**70 and bare["named"] == {"x": 1.0, "y": 2.0}
    assert bare["list"] == {"value": 3, "next": {"value": 4, "next": None}}
    assert converter.to_json_value(everything(3))["number"] == {"double": 2.0**70}


# -- roastedavro.fastavro.json against fastavro ---------------------------------------------

# records whose JSON fastavro writes as Java does: no NaN, floats that are 32-bit floats, no
# recursive records (fastavro's JSON writer recurses into them for ever)
FASTAVRO_SCHEMA = {
    **EVERYTHING,
    "fields": [
        field
        for field in EVERYTHING["fields"]
        if field["name"] not in ("ts_ns", "lts_ns", "big", "span", "raw_id", "number", "tree", "list")
    ],
}


def fastavro_records():
    records = []
    for n in range(10):
        record = {
            key: value
            for key, value in everything(n).items()
            if key in {field["name"] for field in FASTAVRO_SCHEMA["fields"]}
        }
        record["float"] = [1.5, -0.0, 0.25, 0.375, 2.0][n % 5]
        record["d_float"] = 0.5
        records.append(record)
    return records


@pytest.mark.parametrize("parsed", [False, True], ids=["plain", "parsed-by-fastavro"])
@pytest.mark.parametrize("write_union_type", [True, False])
def test_json_writer_writes_what_fastavro_writes(parsed, write_union_type):
    schema = fastavro.parse_schema(FASTAVRO_SCHEMA) if parsed else FASTAVRO_SCHEMA
    records = fastavro_records()
    ours, theirs = io.StringIO(), io.StringIO()
    json_writer(ours, schema, records, write_union_type=write_union_type)
    fastavro.json_writer(
        theirs, fastavro.parse_schema(FASTAVRO_SCHEMA), records, write_union_type=write_union_type
    )
    assert ours.getvalue() == theirs.getvalue()
    assert ours.getvalue().count("\n") == len(records) - 1
    if write_union_type:
        read = list(json_reader(io.StringIO(ours.getvalue()), schema))
        assert read == list(fastavro.json_reader(io.StringIO(theirs.getvalue()), FASTAVRO_SCHEMA))
        codec = AvroCodec(FASTAVRO_SCHEMA) if not parsed else None
        if codec is not None:
            assert read == [codec.load(codec.dump(record)) for record in records]


SPECIALS = {
    "type": "record",
    "name": "Specials",
    "fields": [
        {"name": "d", "type": "double"},
        {"name": "f", "type": "float"},
        {"name": "u", "type": ["null", "double"]},
        {"name": "a", "type": {"type": "array", "items": ["float", "string"]}},
    ],
}


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_json_writer_writes_nan_and_infinities_as_fastavro_and_reads_both_forms(value):
    record = {"d": value, "f": -value, "u": value, "a": [value, "NaN"]}
    ours, theirs = io.StringIO(), io.StringIO()
    json_writer(ours, SPECIALS, [record])
    fastavro.json_writer(theirs, fastavro.parse_schema(SPECIALS), [record])
    assert ours.getvalue() == theirs.getvalue()
    assert '"NaN"' in ours.getvalue()  # the string stays a string
    for text in (
        ours.getvalue(),
        java_form := ours.getvalue()
        .replace("-Infinity", '"-Infinity"')
        .replace(" NaN", ' "NaN"')
        .replace(" Infinity", ' "Infinity"'),
    ):
        (read,) = json_reader(io.StringIO(text), SPECIALS)
        assert repr(read) == repr(record), text  # nan == nan by repr
    # fastavro reads the drop-in's text back to the same floats; Java's strings it would not
    (by_fastavro,) = fastavro.json_reader(io.StringIO(ours.getvalue()), SPECIALS)
    assert repr(by_fastavro) == repr(record)
    (java_by_fastavro,) = fastavro.json_reader(io.StringIO(java_form), SPECIALS)
    assert isinstance(java_by_fastavro["d"], str)


def test_bare_constants_codec_reads_its_own_output():
    codec = AvroJSON(SPECIALS, bare_constants=True)
    record = {"d": math.nan, "f": math.inf, "u": -math.inf, "a": [math.nan, "NaN"]}
    text = codec.to_json(record)
    assert "NaN" in text and '"NaN"' in text  # a bare token for the float, the string kept
    assert repr(codec.from_json(text)) == repr(record)
    with pytest.raises(JSONDecodeError):
        AvroJSON(SPECIALS).from_json(text)  # Java's form refuses the bare tokens


# fastavro's JSON writer cannot write a fixed's default, its reader cannot read a map of unions
V0 = {**V1, "fields": [field for field in V1["fields"] if field["name"] not in ("raw", "extra")]}


def test_json_reader_reads_fastavros_defaults_and_blank_lines():
    theirs = io.StringIO()
    fastavro.json_writer(theirs, V0, [{"station": "a", "temp": 1, "note": "n"}, {}])
    text = '{"temp": 7}\n\n' + theirs.getvalue() + "\n"
    ours = json_reader(io.StringIO(text), V0)
    assert ours.writer_schema == fastavro.parse_schema(V0) == ours.reader_schema
    records = list(ours)
    assert records == list(fastavro.json_reader(io.StringIO(text.replace("\n\n", "\n")), V0))
    assert records[0] == {"station": "?", "temp": 7, "note": None, "unit": "C"}
    # with a reader schema
    written = io.StringIO()
    json_writer(written, V1, [{"temp": 7}, {"station": "a", "temp": 1, "extra": {"x": None}}])
    resolved = json_reader(io.StringIO(written.getvalue()), V1, V2)
    assert resolved.reader_schema == fastavro.parse_schema(V2)
    assert [(record["temperature"], record["extra"]) for record in resolved] == [
        (7.0, {"a": 1, "b": None}),
        (1.0, {"x": None}),
    ]


def test_json_reader_errors():
    with pytest.raises(JSONDecodeError, match="^temp: expected an int"):
        list(json_reader(io.StringIO('{"temp": "x"}'), V1))
    with pytest.raises(JSONDecodeError, match="^line 2: not valid JSON"):
        list(json_reader(io.StringIO('{}\n{"temp": '), V1))
    with pytest.raises(DatumError, match="^temp: "):
        json_writer(io.StringIO(), V1, [{"temp": "x"}])


def test_fastavro_specific_options_run_on_our_engine():
    records = [{"station": "a", "temp": 1}]
    for options in ({"validator": True}, {"strict_allow_default": True}, {"disable_tuple_notation": True}):
        ours, theirs = io.StringIO(), io.StringIO()
        json_writer(ours, V0, records, **options)
        fastavro.json_writer(theirs, V0, records, **options)
        assert ours.getvalue() == theirs.getvalue()
    # the type fastavro raises, and roastedavro's path in the message
    with pytest.raises(fastavro.validation.ValidationError, match="temp"):
        json_writer(io.StringIO(), V0, [{"temp": "x"}], validator=True)
    for strict in ({"strict": True}, {"strict_allow_default": True}):
        with pytest.raises(ValueError, match="record contains more fields than the schema specifies: extra"):
            json_writer(io.StringIO(), V0, [{"station": "a", "temp": 1, "extra": 2}], **strict)
        with pytest.raises(ValueError, match="record contains more fields"):
            fastavro.json_writer(io.StringIO(), V0, [{"station": "a", "temp": 1, "extra": 2}], **strict)


def test_custom_encoder_and_decoder_classes_are_refused():
    # fastavro's encoder and decoder classes are driven by fastavro's own
    # writer and reader: the drop-in runs no data through them
    class Encoder(AvroJSONEncoder):
        pass

    from fastavro.io.json_decoder import AvroJSONDecoder

    class Decoder(AvroJSONDecoder):
        pass

    with pytest.raises(TypeError, match="no custom encoder class"):
        json_writer(io.StringIO(), V0, [{"station": "a", "temp": 1}], encoder=Encoder)
    with pytest.raises(TypeError, match="no custom decoder class"):
        json_reader(io.StringIO('{"temp": 3}'), V0, decoder=Decoder)


# -- straight between binary and JSON: the union branch the bytes hold or the JSON names ------

BRANCHES = {
    "type": "record",
    "name": "Change",
    "namespace": "db",
    "fields": [
        # two records of the same shape: only the branch index tells them apart
        {
            "name": "op",
            "type": [
                {"type": "record", "name": "Create", "fields": [{"name": "id", "type": "long"}]},
                {"type": "record", "name": "Delete", "fields": [{"name": "id", "type": "long"}]},
            ],
        },
        {"name": "number", "type": ["null", "float", "double"]},
        {"name": "count", "type": ["int", "long"]},
        {"name": "payload", "type": ["bytes", "string"]},
        {"name": "numbers", "type": {"type": "array", "items": ["double", "float"]}},
        {"name": "by_key", "type": {"type": "map", "values": ["long", "int", "null"]}},
        {
            "name": "when",
            "type": [
                "null",
                {"type": "int", "logicalType": "date"},
                {"type": "long", "logicalType": "timestamp-millis"},
            ],
        },
    ],
}
# fastavro's tuple notation names the branch each value is written in
BRANCH_DATA = [
    {
        "op": ("db.Delete", {"id": 1}),
        "number": ("float", 1.5),
        "count": ("long", 1),
        "payload": ("string", "abc"),
        "numbers": [("float", 0.5), ("double", 0.5)],
        "by_key": {"a": ("int", 7), "b": ("long", 7), "c": None},
        "when": ("long", 86_400_000),
    },
    {
        "op": ("db.Create", {"id": 2}),
        "number": ("double", 1.5),
        "count": ("int", 1),
        "payload": ("bytes", b"abc"),
        "numbers": [],
        "by_key": {},
        "when": ("int", 1),
    },
    {
        "op": ("db.Delete", {"id": -3}),
        "number": None,
        "count": ("long", -1),
        "payload": ("bytes", b"\x00\xff"),
        "numbers": [("float", math.inf), ("double", math.nan)],
        "by_key": {"\u00e9": ("long", 2**40)},
        "when": None,
    },
    {
        "op": ("db.Create", {"id": 2**62}),
        "number": ("float", 0.1),
        "count": ("long", 2**31),
        "payload": ("string", "\u00ff\U0001f600"),
        "numbers": [("double", 0.1)],
        "by_key": {},
        "when": ("int", -719162),
    },
]


def fastavro_bytes(schema, datum) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), datum)
    return out.getvalue()


@pytest.mark.java
def test_binary_and_json_keep_the_union_branch_as_java(java):
    converter = AvroJSON(BRANCHES)
    schema = converter.schema
    encoded = [fastavro_bytes(BRANCHES, datum) for datum in BRANCH_DATA]
    values = converter.binary_to_json_values(b"".join(encoded), len(encoded))
    trips = java.roundtrip_each((BRANCHES, binary) for binary in encoded)
    texts = [json.dumps(value, ensure_ascii=False) for value in values]
    javas_bytes = java.encode_json_each((BRANCHES, text) for text in texts)
    for datum, binary, value, text, trip, back in zip(
        BRANCH_DATA, encoded, values, texts, trips, javas_bytes
    ):
        assert trip.data == binary
        # the branch the bytes hold, as Java's JsonEncoder writes it
        assert normalized(schema, schema.root, value) == normalized(
            schema, schema.root, json.loads(trip.json)
        ), (datum, text, trip.json)
        # and back: the branch the JSON names (Java reads ours to the same bytes)
        ours = converter.json_value_to_binary(json.loads(text, parse_float=decimal.Decimal))
        assert ours == binary == back
        assert converter.json_value_to_binary(json.loads(trip.json, parse_float=decimal.Decimal)) == binary
    assert values[0]["op"] == {"db.Delete": {"id": 1}}
    assert values[0]["number"] == {"float": 1.5} and values[1]["number"] == {"double": 1.5}
    assert values[0]["count"] == {"long": 1} and values[1]["count"] == {"int": 1}
    assert values[0]["payload"] == {"string": "abc"} and values[1]["payload"] == {"bytes": "abc"}
    # the datum path chooses the branch from the Python value: the first record, the float
    datum = AvroCodec(BRANCHES).load(encoded[0])
    assert converter.to_json_value(datum)["op"] == {"db.Create": {"id": 1}}


@pytest.mark.java
@pytest.mark.fuzz
@settings(
    max_examples=examples(10, 3),
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(schema=avro_strategies.avro_schemas(), data=st.data())
def test_random_schemas_transcoded_as_java(java, schema, data):
    datums = data.draw(st.lists(avro_strategies.datums(schema), min_size=5, max_size=20))
    codec, converter = AvroCodec(schema), AvroJSON(schema)
    encoded = [codec.dump(datum) for datum in datums]
    values = converter.binary_to_json_values(b"".join(encoded), len(encoded))
    ends = converter.binary_record_ends(b"".join(encoded), len(encoded))
    assert ends == [sum(len(binary) for binary in encoded[: index + 1]) for index in range(len(encoded))]
    parsed = converter.schema
    for binary, value, trip in zip(
        encoded, values, java.roundtrip_each((schema, binary) for binary in encoded)
    ):
        javas_text = trip.json if trip.json or value != {} else "{}"
        assert normalized(parsed, parsed.root, value) == normalized(
            parsed, parsed.root, json.loads(javas_text)
        )
        back = converter.json_value_to_binary(json.loads(json.dumps(value), parse_float=decimal.Decimal))
        if back != binary:  # JSON's "NaN" has no sign or payload
            assert "NaN" in json.dumps(value)
            avro_strategies.assert_same(codec.load(back), codec.load(binary))


def test_binary_to_json_errors_give_the_offset():
    converter = AvroJSON(BRANCHES)
    binary = fastavro_bytes(BRANCHES, BRANCH_DATA[0])
    with pytest.raises(DecodeError, match="datum 1: .*ends") as error:
        converter.binary_to_json_values(binary + binary[:-3], 2)
    assert error.value.offset >= len(binary)
    with pytest.raises(DecodeError, match="2 bytes left over after 1 datums"):
        converter.binary_to_json_values(binary + b"\x00\x00", 1)
    with pytest.raises(DecodeError, match="union branch 2 is not one of the union's 2") as error:
        converter.binary_to_json_values(b"\x04" + binary[1:], 1)
    assert error.value.offset == 0
    # items that take no bytes are paid for from the item budget: length + allowance
    nulls = AvroJSON({"type": "array", "items": "null"})
    with pytest.raises(DecodeError, match="item budget exceeded"):
        nulls.binary_to_json_values(b"\xfe\xff\xff\xff\xff\xff\xff\xff\x7f\x00", 1)
    # 2 bytes + an allowance of 2 pay for the datum and 3 items, not 4
    assert nulls.binary_to_json_values(b"\x06\x00", 1, item_allowance=2) == [[None] * 3]
    assert nulls.items_left == 0
    with pytest.raises(DecodeError, match="item budget exceeded"):
        nulls.binary_to_json_values(b"\x08\x00", 1, item_allowance=2)
    empty = AvroJSON({"type": "record", "name": "E", "fields": []})
    with pytest.raises(DecodeError, match="item budget exceeded"):
        empty.binary_to_json_values(b"", 36_000_000)
    assert empty.binary_to_json_values(b"", 3, item_allowance=3) == [{}, {}, {}]
    # items that take bytes cannot claim more than the bytes left
    longs = AvroJSON({"type": "array", "items": "long"})
    with pytest.raises(DecodeError, match="more than the data holds"):
        longs.binary_to_json_values(b"\x0a\x02\x02\x02\x00", 1)
    with pytest.raises(DecodeError, match="not valid UTF-8"):
        AvroJSON("string").binary_to_json_values(b"\x02\xff", 1)


def test_json_to_binary_errors_name_the_path():
    converter = AvroJSON(BRANCHES)
    value = json.loads(
        json.dumps(converter.binary_to_json_values(fastavro_bytes(BRANCHES, BRANCH_DATA[0]), 1)[0])
    )
    for change, path, message in [
        ({"count": {"int": 2**31}}, ("count",), "out of range for an int"),
        ({"op": {"Delete": {"id": 1}}}, ("op",), "'Delete' is not a branch"),
        ({"numbers": [{"double": 1}, {"float": "1.5"}]}, ("numbers", 1), "expected a number"),
        ({"by_key": {"k": {"int": 1, "long": 1}}}, ("by_key", "k"), "one branch"),
        ({"when": {"int": 3_000_000}}, ("when",), "outside the years 1-9999"),
    ]:
        with pytest.raises(JSONDecodeError) as error:
            converter.json_value_to_binary({**value, **change})
        assert error.value.path == path and message in error.value.reason, error.value


def test_bare_nan_and_infinity_are_not_json():
    for text in ('{"d": NaN}', '{"d": Infinity}', '{"d": -Infinity}'):
        with pytest.raises(JSONDecodeError, match="not valid JSON: .*is not JSON"):
            from_json({"type": "record", "name": "R", "fields": [{"name": "d", "type": "double"}]}, text)
    assert math.isnan(from_json("double", '"NaN"'))


BRANCHES_READER = {
    "type": "record",
    "name": "Change",
    "namespace": "db",
    "fields": [
        {
            "name": "op",
            "type": [
                {"type": "record", "name": "Delete", "fields": [{"name": "id", "type": "double"}]},
                {"type": "record", "name": "Create", "fields": [{"name": "id", "type": "long"}]},
            ],
        },
        {"name": "number", "type": ["null", "double", "float"]},
        {"name": "count", "type": ["long", "float", "int"]},
        {"name": "payload", "type": ["string", "bytes"]},
        {"name": "numbers", "type": {"type": "array", "items": ["double", "float"]}},
        {"name": "by_key", "type": {"type": "map", "values": ["null", "double"]}},
        {"name": "added", "type": ["null", "string"], "default": None},
    ],
}


@pytest.mark.java
def test_resolved_binary_to_json_keeps_the_resolved_branch_as_java(java):
    converter = AvroJSON(BRANCHES, reader_schema=BRANCHES_READER)
    reader = parse_schema(BRANCHES_READER)
    encoded = [fastavro_bytes(BRANCHES, datum) for datum in BRANCH_DATA]
    values = converter.binary_to_json_values(b"".join(encoded), len(encoded))
    trips = java.resolve_each((BRANCHES, BRANCHES_READER, binary) for binary in encoded)
    for value, trip in zip(values, trips):
        assert normalized(reader, reader.root, value) == normalized(
            reader, reader.root, json.loads(trip.json)
        ), (value, trip.json)
    assert values[0]["op"] == {"db.Delete": {"id": 1.0}}
    assert values[0]["number"] == {"float": 1.5} and values[1]["number"] == {"double": 1.5}
    assert values[0]["count"] == {"long": 1} and values[1]["count"] == {"int": 1}
    assert values[2]["numbers"] == [{"float": "Infinity"}, {"double": "NaN"}]
    assert values[0]["by_key"] == {"a": {"double": 7.0}, "b": {"double": 7.0}, "c": None}
    assert values[0]["added"] is None


@pytest.mark.java
@settings(
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(pair=evolution.evolved_pairs(), data=st.data())
def test_random_evolutions_transcoded_as_java(java, pair, data):
    writer, reader = pair
    assume(has_values(writer))  # a record that must contain itself has none
    try:
        parse_schema(writer), parse_schema(reader)
    except SchemaError:
        assume(False)  # a default the strategies draw that parsing refuses (not this test's)
    datums = data.draw(st.lists(avro_strategies.datums(writer), min_size=3, max_size=10))
    encoded = [fastavro_bytes(writer, datum) for datum in datums]
    converter = AvroJSON(writer, reader_schema=reader)
    try:
        converter.binary_to_json_values(b"", 0)
    except SchemaResolutionError:
        # refused as AvroCodec refuses it (where Java may differ: test_resolution's concern)
        with pytest.raises(SchemaResolutionError):
            AvroCodec(reader, writer_schema=writer)
        return
    parsed = parse_schema(reader)
    for binary, trip in zip(encoded, java.resolve_each((writer, reader, binary) for binary in encoded)):
        if isinstance(trip, dict) and str(trip.get("error", "")).startswith("Collection claims"):
            continue  # Java 1.12.2 checks array counts against the reader's item size
        if isinstance(trip, dict):  # Java cannot read this datum (a branch, a symbol)
            with pytest.raises(DecodeError, match="cannot read|not the reader's"):
                converter.binary_to_json_values(binary, 1)
            continue
        try:
            (value,) = converter.binary_to_json_values(binary, 1)
        except DecodeError as error:
            # bytes read as a string must be UTF-8 here, as AvroCodec reads them
            # (Java keeps the raw bytes): test_resolution_properties' rule
            assert "UTF-8" in str(error), error
            with pytest.raises(DecodeError, match="UTF-8"):
                AvroCodec(reader, writer_schema=writer).load(binary)
            continue
        if trip.json == "" and isinstance(parsed.root, Record) and not parsed.root.fields:
            # Java 1.12's JsonEncoder writes nothing at all for a record without
            # fields (its grammar has no symbol to write); Avro JSON says {}
            assert value == {}
            continue
        assert normalized(parsed, parsed.root, value) == normalized(
            parsed, parsed.root, json.loads(trip.json)
        ), (value, trip.json)


def test_a_5000_digit_int_in_a_dict_schema_is_a_schema_error_naming_the_field():
    for default, shown_as in [
        (10**5000, "<an int of more than"),
        ([1, 10**5000], "<a list holding an int of more than"),
    ]:
        schema = {
            "type": "record",
            "name": "R",
            "fields": [{"name": "x", "type": {"type": "array", "items": "long"}, "default": default}],
        }
        with pytest.raises(SchemaError, match=f"^R.x: the default {shown_as} 4300 digits> is not valid"):
            AvroJSON(schema)
    with pytest.raises(JSONDecodeError, match="not valid JSON"):
        AvroJSON("long").from_json("9" * 5000)


def test_dropin_reads_a_float_as_fastavro_does():
    # fastavro's JSON reader gives the double of the JSON number; AvroJSON
    # (as Java) rounds a float to 32 bits
    schema = {
        "type": "record",
        "name": "F",
        "fields": [{"name": "x", "type": "float"}, {"name": "d", "type": "float", "default": 1.1}],
    }
    text = '{"x": 2.2}'
    theirs = list(fastavro.json_reader(io.StringIO(text), schema))
    ours = list(json_reader(io.StringIO(text), schema))
    assert ours == theirs == [{"x": 2.2, "d": 1.1}]
    assert AvroJSON(schema).from_json(text)["x"] == 2.200000047683716
