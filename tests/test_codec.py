"""AvroCodec against its oracles: fastavro 1.13.1 for the datum conventions
(the bytes ``schemaless_writer`` writes, the values ``schemaless_reader``
returns), the Avro specification (and Java Avro 1.12) where fastavro has no
answer or a wrong one.

Each schema is compiled once per module (fixtures); the tests vary datums.
"""

from __future__ import annotations

import collections
import datetime
import decimal
import io
import json
import math
import struct
import threading
import types
import uuid
from collections.abc import Mapping

import fastavro
import pytest

from thread_stacks import current_stack_size
from roastedavro import avrojson
from roastedavro.codec import AvroCodec, Duration
from roastedavro.errors import DatumError, DecodeError
from roastedavro.flags import CompileFlags

D = decimal.Decimal
UTC = datetime.timezone.utc


def fastavro_dump(schema, datum) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), datum)
    return out.getvalue()


def fastavro_load(schema, data: bytes):
    return fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(schema), None)


def same(a, b) -> bool:
    """Equal values of equal types, NaN equal to NaN (values as read back)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, datetime.datetime):
        return a == b and a.tzinfo == b.tzinfo
    if isinstance(a, D):
        return a.as_tuple() == b.as_tuple()
    return a == b


def check_like_fastavro(codec, schema, datum):
    """Our bytes are fastavro's, and reading them gives what fastavro reads."""
    data = codec.dump(datum)
    assert data == fastavro_dump(schema, datum)
    loaded = codec.load(data)
    assert same(loaded, fastavro_load(schema, data)), (loaded, fastavro_load(schema, data))
    return data


# -- primitives and records ---------------------------------------------------------

PRIMITIVES = {
    "type": "record",
    "name": "Primitives",
    "namespace": "test",
    "fields": [
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "by", "type": "bytes"},
        {"name": "n", "type": "null"},
        {
            "name": "e",
            "type": {"type": "enum", "name": "Suit", "symbols": ["SPADES", "HEARTS", "DIAMONDS", "CLUBS"]},
        },
        {"name": "fx", "type": {"type": "fixed", "name": "Four", "size": 4}},
    ],
}


def primitives(**values):
    datum = {
        "b": True,
        "i": 1,
        "l": 2,
        "f": 1.5,
        "d": 2.5,
        "s": "x",
        "by": b"y",
        "n": None,
        "e": "HEARTS",
        "fx": b"abcd",
    }
    datum.update(values)
    return datum


@pytest.fixture(scope="module")
def primitives_codec():
    return AvroCodec(PRIMITIVES)


@pytest.mark.parametrize(
    "values",
    [
        {},
        {
            "b": False,
            "i": 0,
            "l": 0,
            "f": 0.0,
            "d": -0.0,
            "s": "",
            "by": b"",
            "e": "SPADES",
            "fx": b"\x00\x00\x00\x00",
        },
        {"i": 2**31 - 1, "l": 2**63 - 1, "f": 3.4028234663852886e38, "d": 1.7976931348623157e308},
        {"i": -(2**31), "l": -(2**63), "f": -1e-45, "d": 5e-324},
        {"i": 63, "l": 64, "e": "CLUBS"},
        {"i": -64, "l": -65, "s": "h\u00e9llo w\u00f6rld \u4e16\u754c \U0001f600"},
        {"f": float("inf"), "d": float("-inf")},
        {"f": float("nan"), "d": float("nan")},
        {"f": 0.1, "d": 0.1},  # float narrows to the nearest 32-bit float, as fastavro
        {"s": "a" * 300, "by": bytes(range(256)) * 3},
    ],
)
def test_primitives_as_fastavro(primitives_codec, values):
    check_like_fastavro(primitives_codec, PRIMITIVES, primitives(**values))


@pytest.mark.parametrize(
    "values",
    [
        # conversions fastavro makes, and so do we
        {"i": True, "l": False},  # bools are ints
        {"f": 3, "d": -7},  # ints for floats
        {"d": "1.25", "f": "NaN"},  # a record's float fields: float(value)
        {"d": D("2.5"), "f": D("0.5")},
        {"by": bytearray(b"xyz"), "fx": bytearray(b"wxyz")},
        {"by": memoryview(b"xyz")},
        {"i": 2.0, "l": -3.0},  # floats without a fraction
    ],
)
def test_conversions_as_fastavro(primitives_codec, values):
    check_like_fastavro(primitives_codec, PRIMITIVES, primitives(**values))


class Text(str):
    pass


class Frozen(Mapping):
    def __init__(self, data):
        self._data = dict(data)

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)


@pytest.mark.parametrize(
    "datum",
    [
        collections.OrderedDict(primitives()),
        Frozen(primitives()),
        types.MappingProxyType(primitives()),
        primitives(s=Text("sub"), e=Text("CLUBS")),
        primitives(extra="ignored", more=[1, 2]),  # keys the schema lacks are left out
    ],
)
def test_record_datums_as_fastavro(primitives_codec, datum):
    check_like_fastavro(primitives_codec, PRIMITIVES, datum)


@pytest.mark.parametrize(
    "values, path, message",
    [
        ({"i": 2**31}, ("i",), "out of range for Avro int"),
        ({"i": -(2**31) - 1}, ("i",), "out of range for Avro int"),
        ({"l": 2**63}, ("l",), "out of range for Avro long"),
        ({"i": 1.5}, ("i",), "expected an int, got float 1.5"),
        ({"l": "5"}, ("l",), "expected an int, got str"),
        ({"l": None}, ("l",), "expected an int, got NoneType"),
        ({"f": 1e39}, ("f",), "out of range for Avro float"),
        ({"d": "abc"}, ("d",), "expected a number"),
        ({"d": None}, ("d",), "expected a number"),
        ({"b": 2}, ("b",), "expected a bool"),
        ({"b": None}, ("b",), "expected a bool"),
        ({"b": "yes"}, ("b",), "expected a bool"),
        ({"s": b"bytes"}, ("s",), "expected a str, got bytes"),
        ({"s": None}, ("s",), "expected a str"),
        ({"s": "\ud800"}, ("s",), "UTF-8"),
        ({"by": "text"}, ("by",), "expected bytes, got str"),
        ({"by": 5}, ("by",), "expected bytes, got int"),
        ({"n": 0}, ("n",), "expected None"),
        ({"e": "JOKER"}, ("e",), "'JOKER' is not a symbol of the enum"),
        ({"e": 1}, ("e",), "is not a symbol"),
        ({"e": ["SPADES"]}, ("e",), "is not a symbol"),
        ({"fx": b"abc"}, ("fx",), "expected 4 bytes for a fixed(4), got 3"),
        ({"fx": "abcd"}, ("fx",), "expected bytes, got str"),
    ],
)
def test_bad_values(primitives_codec, values, path, message):
    with pytest.raises(DatumError) as caught:
        primitives_codec.dump(primitives(**values))
    assert caught.value.path == path
    assert message in str(caught.value)
    assert str(caught.value).startswith(f"{path[0]}: ")
    # a ValueError and a TypeError, as fastavro raises either
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, TypeError)


def test_a_missing_field_without_default(primitives_codec):
    datum = primitives()
    del datum["l"]
    with pytest.raises(DatumError, match=r"^l: no value and no default for the field$"):
        primitives_codec.dump(datum)
    with pytest.raises(ValueError, match="no value and no default for l"):
        fastavro_dump(PRIMITIVES, datum)


@pytest.mark.parametrize("datum", [None, [("b", True)], "record", 5, object()])
def test_records_are_mappings(primitives_codec, datum):
    with pytest.raises(DatumError, match="expected a dict"):
        primitives_codec.dump(datum)


DEFAULTS = {
    "type": "record",
    "name": "Defaults",
    "fields": [
        {"name": "id", "type": "int"},
        {"name": "b", "type": "boolean", "default": True},
        {"name": "i", "type": "int", "default": -3},
        {"name": "l", "type": "long", "default": 2**40},
        {"name": "f", "type": "float", "default": 1.5},
        {"name": "d", "type": "double", "default": 7},
        {"name": "s", "type": "string", "default": "caf\u00e9"},
        {
            "name": "e",
            "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]},
            "default": "GREEN",
        },
        {"name": "a", "type": {"type": "array", "items": "int"}, "default": [1, 2]},
        {"name": "m", "type": {"type": "map", "values": "string"}, "default": {"k": "v"}},
        {"name": "u", "type": ["null", "string"], "default": None},
        {"name": "u2", "type": ["string", "null"], "default": "first"},
        {
            "name": "r",
            "type": {
                "type": "record",
                "name": "Inner",
                "fields": [{"name": "x", "type": "int"}, {"name": "y", "type": "string", "default": "why"}],
            },
            "default": {"x": 9},
        },
        {"name": "nullable", "type": ["null", "long"]},  # missing and no default: null
    ],
}


@pytest.fixture(scope="module")
def defaults_codec():
    return AvroCodec(DEFAULTS)


def test_missing_fields_take_their_defaults_as_fastavro(defaults_codec):
    # fastavro writes the JSON default through the field's type: the same bytes
    data = defaults_codec.dump({"id": 1})
    assert data == fastavro_dump(DEFAULTS, {"id": 1, "r": {"x": 9, "y": "why"}})
    assert defaults_codec.load(data) == {
        "id": 1,
        "b": True,
        "i": -3,
        "l": 2**40,
        "f": 1.5,
        "d": 7.0,
        "s": "caf\u00e9",
        "e": "GREEN",
        "a": [1, 2],
        "m": {"k": "v"},
        "u": None,
        "u2": "first",
        "r": {"x": 9, "y": "why"},
        "nullable": None,
    }


def test_given_values_override_defaults(defaults_codec):
    datum = {
        "id": 1,
        "b": False,
        "i": 4,
        "l": 5,
        "f": 2.5,
        "d": 3.5,
        "s": "t",
        "e": "RED",
        "a": [],
        "m": {},
        "u": "text",
        "u2": None,
        "r": {"x": 1, "y": "z"},
        "nullable": 8,
    }
    check_like_fastavro(defaults_codec, DEFAULTS, datum)


def test_an_explicit_none_is_not_a_missing_value(defaults_codec):
    with pytest.raises(DatumError, match=r"^i: expected an int, got NoneType"):
        defaults_codec.dump({"id": 1, "i": None})


BYTES_DEFAULTS = {
    "type": "record",
    "name": "BytesDefaults",
    "fields": [
        {"name": "raw", "type": "bytes", "default": "\u00ff\u0000a"},
        {"name": "four", "type": {"type": "fixed", "name": "F4", "size": 4}, "default": "\u00e9tat"},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2},
            "default": "\u0001\u0000",
        },
        {"name": "either", "type": ["bytes", "null"], "default": "\u0080"},
    ],
}


def test_bytes_defaults_follow_the_specification(java):
    # Code points 0-255, one byte each (fastavro cannot write these defaults:
    # it passes the JSON string to its bytes writer). Java encodes the same.
    codec = AvroCodec(BYTES_DEFAULTS)
    expected = b"\x06\xff\x00a" + b"\xe9tat" + b"\x04\x01\x00" + b"\x00\x02\x80"
    assert codec.dump({}) == expected
    assert java.roundtrip(BYTES_DEFAULTS, expected).data == expected
    assert codec.load(expected) == {
        "raw": b"\xff\x00a",
        "four": b"\xe9tat",
        "amount": D("2.56"),
        "either": b"\x80",
    }
    with pytest.raises(TypeError):
        fastavro_dump(BYTES_DEFAULTS, {})


# -- decoding errors -------------------------------------------------------------------


def test_every_truncation_is_a_decode_error(primitives_codec):
    data = primitives_codec.dump(primitives(s="text", by=b"\x00\x01"))
    for end in range(len(data)):
        with pytest.raises(DecodeError) as caught:
            primitives_codec.load(data[:end])
        assert 0 <= caught.value.offset <= end


def test_trailing_bytes(primitives_codec):
    data = primitives_codec.dump(primitives())
    with pytest.raises(DecodeError, match="2 trailing bytes") as caught:
        primitives_codec.load(data + b"\x00\x00")
    assert caught.value.offset == len(data)


def test_loads_bytes_likes(primitives_codec):
    data = primitives_codec.dump(primitives())
    expected = primitives_codec.load(data)
    assert primitives_codec.load(bytearray(data)) == expected
    assert primitives_codec.load(memoryview(data)) == expected
    with pytest.raises(TypeError):
        primitives_codec.load("text")


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda data: b"\x02" + data[1:], "invalid boolean byte 0x02"),
        (lambda data: data[:1] + b"\x80\x80\x80\x80\x10" + data[2:], "out of range for Avro int"),
    ],
)
def test_malformed_values(primitives_codec, change, message):
    data = primitives_codec.dump(primitives(i=1))
    with pytest.raises(DecodeError, match=message):
        primitives_codec.load(change(data))


def test_bad_utf8_and_enum_index():
    schema = {
        "type": "record",
        "name": "Text",
        "fields": [
            {"name": "s", "type": "string"},
            {"name": "e", "type": {"type": "enum", "name": "AB", "symbols": ["A", "B"]}},
        ],
    }
    codec = AvroCodec(schema)
    with pytest.raises(DecodeError, match="invalid UTF-8") as caught:
        codec.load(b"\x06ab\xff\x00")
    assert caught.value.offset == 3
    with pytest.raises(DecodeError, match=r"index 2 out of range \(expected 0..1\)"):
        codec.load(b"\x02a\x04")
    with pytest.raises(DecodeError, match="index -1 out of range"):
        codec.load(b"\x02a\x01")
    with pytest.raises(DecodeError, match="negative length"):
        codec.load(b"\x01")
    with pytest.raises(DecodeError, match="length 50 exceeds"):
        codec.load(b"\x64ab")


# -- arrays and maps ---------------------------------------------------------------------

COLLECTIONS = {
    "type": "record",
    "name": "Collections",
    "fields": [
        {"name": "ints", "type": {"type": "array", "items": "int"}},
        {"name": "names", "type": {"type": "map", "values": "string"}},
        {"name": "matrix", "type": {"type": "array", "items": {"type": "array", "items": "double"}}},
        {
            "name": "index",
            "type": {"type": "map", "values": {"type": "array", "items": {"type": "map", "values": "long"}}},
        },
        {
            "name": "points",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Point",
                    "fields": [{"name": "x", "type": "int"}, {"name": "y", "type": "int"}],
                },
            },
        },
        {"name": "nulls", "type": {"type": "array", "items": "null"}},
    ],
}


def collections_datum(**values):
    datum = {
        "ints": [1, 2, 3],
        "names": {"a": "x", "b": "y"},
        "matrix": [[1.0], [], [2.5, 3.5]],
        "index": {"k": [{"n": 1}, {}], "l": []},
        "points": [{"x": 1, "y": 2}],
        "nulls": [None, None],
    }
    datum.update(values)
    return datum


@pytest.fixture(scope="module")
def collections_codec():
    return AvroCodec(COLLECTIONS)


@pytest.mark.parametrize(
    "values",
    [
        {},
        {"ints": [], "names": {}, "matrix": [], "index": {}, "points": [], "nulls": []},
        {"ints": list(range(-500, 500)), "names": {str(n): "v" * n for n in range(100)}},
        {"index": {"\u00e9\u4e16": [{"a": 2**63 - 1, "b": -(2**63)}] * 3}},
        {"points": [{"x": n, "y": -n} for n in range(70)]},
    ],
)
def test_collections_as_fastavro(collections_codec, values):
    check_like_fastavro(collections_codec, COLLECTIONS, collections_datum(**values))


def generated():
    yield from (4, 5)


@pytest.mark.parametrize(
    "values",
    [
        # the iterables and mappings fastavro takes for arrays and maps (made
        # afresh for each writer: a generator is used up)
        lambda: {"ints": (1, 2)},
        lambda: {"ints": generated()},
        lambda: {"ints": {7}},
        lambda: {"ints": range(3)},
        lambda: {"matrix": ((1.0, 2.0), [3.0])},
        lambda: {"names": collections.OrderedDict([("z", "1"), ("a", "2")])},
        lambda: {"names": types.MappingProxyType({"k": "v"})},
        lambda: {"names": {Text("sub"): "key"}},
    ],
)
def test_collection_datums_as_fastavro(collections_codec, values):
    expected = fastavro_dump(COLLECTIONS, collections_datum(**values()))
    assert collections_codec.dump(collections_datum(**values())) == expected


def test_python_arrays_as_fastavro(collections_codec):
    import array

    datum = collections_datum(ints=array.array("i", [5, -6, 7]))
    assert collections_codec.dump(datum) == fastavro_dump(COLLECTIONS, datum)


@pytest.mark.parametrize(
    "values, path, message",
    [
        ({"ints": [1, 2, "x"]}, ("ints", 2), "expected an int"),
        ({"ints": "123"}, ("ints",), "expected a list (or other sequence) for an array, got str"),
        ({"ints": {"a": 1}}, ("ints",), "expected a list"),
        ({"ints": None}, ("ints",), "expected a list"),
        ({"ints": 5}, ("ints",), "expected a list"),
        ({"names": {"a": "x", "b": 2}}, ("names", "b"), "expected a str"),
        ({"names": {"a": "x", 5: "y"}}, ("names", 5), "map keys must be strings, got int 5"),
        ({"names": [("a", "x")]}, ("names",), "expected a dict (or other mapping) for a map"),
        ({"matrix": [[1.0], [2.0, "x"]]}, ("matrix", 1, 1), "expected a number"),
        ({"index": {"k": [{}, {"n": 1.5}]}}, ("index", "k", 1, "n"), "expected an int"),
        ({"points": [{"x": 1, "y": 2}, {"x": 1}]}, ("points", 1, "y"), "no value and no default"),
        ({"points": [{"x": 1, "y": 2}, 7]}, ("points", 1), "expected a dict"),
        ({"nulls": [None, 0]}, ("nulls", 1), "expected None"),
    ],
)
def test_errors_name_the_path(collections_codec, values, path, message):
    with pytest.raises(DatumError) as caught:
        collections_codec.dump(collections_datum(**values))
    assert caught.value.path == path
    assert message in caught.value.reason


def test_error_text():
    error = DatumError("expected an int", ("index", "k", 1, "n"))
    assert str(error) == "index.k[1].n: expected an int"


class Shrinking:
    """An int that empties the list it is in while it is written."""

    def __init__(self, items):
        self.items = items

    def __index__(self):
        self.items.clear()
        return 1


def test_a_list_that_changes_while_written(collections_codec):
    items = [1, 2, 3]
    items.insert(1, Shrinking(items))
    with pytest.raises(DatumError, match="the list changed size"):
        collections_codec.dump(collections_datum(ints=items))


class Growing:
    """A long that adds a key to the map it is in while it is written."""

    def __init__(self, entries):
        self.entries = entries

    def __index__(self):
        self.entries["added"] = 2
        return 1


def growing_map_datum():
    entries = {"n": 0}
    entries["m"] = Growing(entries)
    return collections_datum(index={"k": [entries]})


def test_a_map_that_changes_while_written(collections_codec):
    # the count is out already: the bytes must not promise other entries than follow
    with pytest.raises(DatumError, match=r"index\.k\[0\]: the dict changed size"):
        collections_codec.dump(growing_map_datum())


def _blocks(*blocks) -> bytes:
    """Array blocks as Java writes them when it knows their byte sizes: a
    negative count, the block's size, the items; then 0."""
    out = b""
    for count, payload, sized in blocks:
        if sized:
            out += zigzag(-count) + zigzag(len(payload)) + payload
        else:
            out += zigzag(count) + payload
    return out + b"\x00"


def zigzag(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def test_reads_any_block_layout():
    schema = {"type": "array", "items": "int"}
    codec = AvroCodec(schema)
    data = _blocks((2, zigzag(1) + zigzag(-2), True), (1, zigzag(300), False), (3, zigzag(4) * 3, True))
    assert codec.load(data) == fastavro_load(schema, data) == [1, -2, 300, 4, 4, 4]
    assert codec.dump([1, -2]) == fastavro_dump(schema, [1, -2]) == b"\x04\x02\x03\x00"
    assert codec.dump([]) == b"\x00"


def test_counts_are_checked_before_anything_is_read(collections_codec):
    # an array announcing a million ints in a few bytes: refused at once
    huge = zigzag(10**6)
    with pytest.raises(DecodeError, match="needs at least"):
        collections_codec.load(huge + b"\x02")
    # items of no bytes (nulls) are paid for from the message's item budget
    data = collections_codec.dump(collections_datum(nulls=[]))
    tail = len(zigzag(0))  # the nulls array is last: an empty one is one 0 byte
    many_nulls = data[:-tail] + zigzag(10**7) + b"\x00"
    with pytest.raises(DecodeError, match="item budget exceeded"):
        collections_codec.load(many_nulls)
    within = data[:-tail] + zigzag(1000) + b"\x00"
    assert collections_codec.load(within)["nulls"] == [None] * 1000
    small = AvroCodec(COLLECTIONS, CompileFlags(max_items=10))
    with pytest.raises(DecodeError, match="limit of 10 items per block"):
        small.load(within)
    with pytest.raises(DecodeError, match="item budget exceeded"):
        AvroCodec(COLLECTIONS, CompileFlags(item_allowance=10)).load(within)


def test_a_negative_block_count_at_the_minimum():
    codec = AvroCodec({"type": "array", "items": "int"})
    with pytest.raises(DecodeError, match="invalid block count"):
        codec.load(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")


# -- unions ---------------------------------------------------------------------------


def _record(name, *fields):
    return {"type": "record", "name": name, "fields": [{"name": n, "type": t} for n, t in fields]}


UNIONS = {
    "type": "record",
    "name": "Unions",
    "namespace": "u",
    "fields": [
        {"name": "null_str", "type": ["null", "string"]},
        {"name": "str_null", "type": ["string", "null"]},
        {"name": "numbers", "type": ["null", "int", "long", "double"]},
        {"name": "long_int", "type": ["long", "int"]},
        {"name": "float_double", "type": ["float", "double"]},
        {"name": "float_only", "type": ["null", "float"]},
        {"name": "int_float", "type": ["int", "float"]},
        {"name": "bool_int", "type": ["boolean", "int"]},
        {"name": "record", "type": ["null", _record("One", ("x", "int"))]},
        {
            "name": "records",
            "type": [
                _record("A", ("a", ["null", "int"]), ("shared", "int")),
                _record("B", ("b", ["null", "int"]), ("shared", "int")),
            ],
        },
        {"name": "record_map", "type": [_record("C", ("x", "int")), {"type": "map", "values": "int"}]},
        {"name": "map_record", "type": [{"type": "map", "values": "int"}, "C"]},
        {"name": "array", "type": ["null", {"type": "array", "items": "int"}]},
        {"name": "enum_str", "type": [{"type": "enum", "name": "Side", "symbols": ["L", "R"]}, "string"]},
        {"name": "str_enum", "type": ["string", "Side"]},
        {"name": "fixed_bytes", "type": [{"type": "fixed", "name": "Two", "size": 2}, "bytes"]},
        {"name": "bytes_fixed", "type": ["bytes", "Two"]},
        {
            "name": "timestamp",
            "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}, "string"],
        },
        {"name": "date_str", "type": [{"type": "int", "logicalType": "date"}, "string"]},
        {
            "name": "decimal",
            "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2}],
        },
        {"name": "uuid", "type": ["null", {"type": "string", "logicalType": "uuid"}]},
        {
            "name": "everything",
            "type": ["null", "boolean", "int", "long", "float", "double", "bytes", "string"],
        },
    ],
}


def unions_datum(**values):
    datum = {
        "null_str": None,
        "str_null": "s",
        "numbers": 1,
        "long_int": 1,
        "float_double": 1.5,
        "float_only": None,
        "int_float": 1,
        "bool_int": True,
        "record": None,
        "records": {"a": 1, "shared": 2},
        "record_map": {"x": 1},
        "map_record": {},
        "array": None,
        "enum_str": "L",
        "str_enum": "L",
        "fixed_bytes": b"ab",
        "bytes_fixed": b"ab",
        "timestamp": None,
        "date_str": 5,
        "decimal": None,
        "uuid": None,
        "everything": None,
    }
    datum.update(values)
    return datum


@pytest.fixture(scope="module")
def unions_codec():
    return AvroCodec(UNIONS)


@pytest.mark.parametrize(
    "values",
    [
        {"null_str": "text", "str_null": None},
        {"numbers": None},
        {"numbers": 2**31 - 1},
        {"numbers": 2**31},
        {"numbers": -(2**63)},
        {"numbers": 2**63},  # too large for a long: the double
        {"numbers": 2.5},
        {"long_int": 5},
        {"long_int": -(2**40)},
        {"float_double": 2.5},
        {"float_double": 7},  # a later double wins over a float
        {"float_only": 0.25},
        {"float_only": 3},
        {"int_float": 2**40},
        {"int_float": 0.5},
        {"bool_int": False},
        {"bool_int": 1},
        {"record": {"x": 5}},
        {"record": collections.OrderedDict(x=6)},
        {"records": {"b": 1, "shared": 2}},  # most fields in common: B
        {"records": {"shared": 2}},  # a tie: the first
        {"records": {"b": None, "a": None, "shared": 3}},
        {"record_map": {"x": 1}},  # fastavro: a later map beats a record
        {"record_map": {"x": 1, "y": "z"}},  # not a map of ints: the record
        {"record_map": {}},
        {"map_record": {"x": 1}},
        {"array": [1, 2]},
        {"array": []},
        {"enum_str": "R"},
        {"enum_str": "other"},  # a symbol: the enum, else the string
        {"str_enum": "R"},
        {"fixed_bytes": b"xyz"},
        {"fixed_bytes": b""},
        {"fixed_bytes": bytearray(b"cd")},
        {"bytes_fixed": b"cd"},
        {"timestamp": datetime.datetime(2020, 5, 17, 1, 2, 3, tzinfo=UTC)},
        {"timestamp": 1589677323000},
        {"timestamp": "later"},
        {"date_str": datetime.date(2021, 1, 2)},
        {"date_str": datetime.datetime(2021, 1, 2, 3, 4)},
        {"decimal": D("123.45")},
        {"decimal": D("-0.01")},
        {"uuid": uuid.UUID(int=7)},
        {"uuid": "00000000-0000-0000-0000-000000000007"},
        {"everything": True},
        {"everything": 5},
        {"everything": 2**50},
        {"everything": 1.5},
        {"everything": b"b"},
        {"everything": "s"},
        {"everything": bytearray(b"ba")},
    ],
)
def test_branches_as_fastavro_chooses_them(unions_codec, values):
    check_like_fastavro(unions_codec, UNIONS, unions_datum(**values))


@pytest.mark.parametrize(
    "values,branch",
    [
        # fastavro writes an ISO date string as a date: it reads back as a date
        ({"date_str": "2021-01-02"}, "string"),
        # no branch reads an int back: fastavro's choice, the date
        ({"date_str": 5}, "int"),
    ],
)
def test_branches_that_keep_the_value_where_fastavro_changes_it(unions_codec, values, branch):
    datum = unions_datum(**values)
    data = unions_codec.dump(datum)
    key, value = next(iter(values.items()))
    back = unions_codec.load(data)
    if branch == "int":  # [date, string] has no int branch: fastavro's choice, a date
        assert data == fastavro_dump(UNIONS, datum)
        assert back[key] == datetime.date(1970, 1, 6)
        return
    assert data != fastavro_dump(UNIONS, datum)
    assert type(back[key]) is type(value) and back[key] == value
    assert json.loads(avrojson.to_json(UNIONS, datum))[key] == {branch: value}


@pytest.mark.parametrize(
    "values",
    [
        # fastavro's tuple notation names the branch
        {"records": ("u.B", {"shared": 2})},
        {"records": ("u.A", {"b": 1, "shared": 2})},
        {"long_int": ("int", 5)},
        {"everything": ("long", 1)},
        {"everything": ("float", 1.5)},
        {"everything": ("null", None)},
        {"record_map": ("u.C", {"x": 1})},
        {"record_map": ("map", {"x": 1})},
        {"str_enum": ("u.Side", "R")},
        {"fixed_bytes": ("bytes", b"ab")},
        # ... and so does a "-type" key in a record's dict
        {"records": {"-type": "u.A", "b": 1, "shared": 2}},
        {"records": {"-type": "u.B", "a": 1, "shared": 2}},
    ],
)
def test_named_branches_as_fastavro(unions_codec, values):
    datum = unions_datum(**values)
    assert unions_codec.dump(datum) == fastavro_dump(UNIONS, datum)


EVENTS = {
    "type": "record",
    "name": "Envelope",
    "namespace": "ev",
    "fields": [
        {
            "name": "events",
            "type": {
                "type": "array",
                "items": [
                    _record(
                        "Click",
                        ("x", "int"),
                        ("y", "int"),
                        ("at", {"type": "long", "logicalType": "timestamp-millis"}),
                        ("meta", ["null", "string", "long"]),
                    ),
                    {
                        "type": "record",
                        "name": "Purchase",
                        "fields": [
                            {"name": "sku", "type": "string"},
                            {
                                "name": "lines",
                                "type": {
                                    "type": "array",
                                    "items": _record("Line", ("qty", "int"), ("price", "double")),
                                },
                            },
                            {
                                "name": "kind",
                                "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]},
                                "default": "A",
                            },
                        ],
                    },
                    {
                        "type": "record",
                        "name": "Note",
                        "fields": [
                            {"name": "text", "type": "string"},
                            {"name": "tags", "type": {"type": "map", "values": "string"}, "default": {}},
                            # fastavro validates a missing field's JSON default: this one never passes
                            {"name": "raw", "type": "bytes", "default": "\u00ff"},
                        ],
                    },
                    {"type": "map", "values": "string"},
                ],
            },
        }
    ],
}
CLICK = {"x": 1, "y": 2, "at": datetime.datetime(2024, 1, 1, tzinfo=UTC), "meta": None}


@pytest.fixture(scope="module")
def events_codec():
    return AvroCodec(EVENTS)


@pytest.mark.parametrize(
    "event",
    [
        CLICK,
        dict(CLICK, at=5, meta=("long", 7)),
        dict(CLICK, meta="m"),
        {"sku": "s", "lines": [{"qty": 1, "price": 2.5}, {"qty": 2, "price": 3}]},
        {"sku": "s", "lines": (), "kind": "B"},
        {"text": "t", "tags": {"a": "b"}, "raw": b"r"},
        {"text": "t", "raw": bytearray(b"r")},
        {"text": "t"},  # not a Note (its raw default): the map
        {"sku": "s", "text": "t"},  # no record: the map
        dict(CLICK, sku="s", lines=[]),  # Click and Purchase: Click has more fields
        {"x": 1, "y": 2, "at": 3, "meta": None, "sku": "s", "lines": [], "kind": "A"},
        {"-type": "ev.Purchase", "sku": "s", "lines": [], "x": 1, "y": 2, "at": 3, "meta": None},
        {"sku": "s", "lines": [{"qty": 2**31, "price": 1.0}]},  # not a Purchase: no branch
        {"x": 1, "y": 2, "at": "soon"},
        {"sku": "s", "lines": [{"qty": 1, "price": "1.5"}]},  # fastavro validates before float()
        {"text": "t", "tags": {"k": 5}, "raw": b""},
        collections.OrderedDict(sku="s", lines=[]),  # not a dict: validated in Python
    ],
)
def test_records_and_maps_in_a_union_as_fastavro(events_codec, event):
    datum = {"events": [CLICK, event, event]}
    try:
        expected = fastavro_dump(EVENTS, datum)
    except (ValueError, TypeError):
        with pytest.raises(DatumError, match="matches no branch") as caught:
            events_codec.dump(datum)
        assert caught.value.path == ("events", 1)
        return
    assert events_codec.dump(datum) == expected
    assert same(events_codec.load(expected), fastavro_load(EVENTS, expected))


CHAIN = {
    "type": "record",
    "name": "Chain",
    "fields": [{"name": "next", "type": ["null", _record("End", ("v", "int")), "Chain"]}],
}


def test_validating_a_datum_that_contains_itself():
    # a union of two records: fastavro's choice validates the whole value
    codec = AvroCodec(CHAIN)
    check_like_fastavro(codec, CHAIN, {"next": {"next": {"next": {"v": 1}}}})
    looped = {"next": None}
    looped["next"] = looped
    with pytest.raises(DatumError, match="nested more than 500 levels"):
        codec.dump(looped)
    mapping = collections.OrderedDict(next=None)  # validated in Python
    mapping["next"] = mapping
    with pytest.raises(DatumError, match="nested too deeply"):
        codec.dump({"next": mapping})


@pytest.mark.parametrize(
    "values, message",
    [
        ({"numbers": "one"}, "str 'one' matches no branch of the union [null, int, long, double]"),
        ({"null_str": 5}, "matches no branch"),
        ({"numbers": True}, "bool True matches no branch"),  # bools are no numbers in unions
        ({"records": {"shared": "2"}}, "matches no branch"),
        ({"records": ("u.Z", {})}, "the union [u.A, u.B] has no branch named 'u.Z'"),
        ({"records": ("u.A", {}, 3)}, "a tuple in a union names its branch"),
        ({"records": (["u.A"], {})}, "the union [u.A, u.B] has no branch named ['u.A']"),
        ({"record": {"x": "5"}}, "expected an int"),
        ({"fixed_bytes": "ab"}, "matches no branch"),
    ],
)
def test_values_of_no_branch(unions_codec, values, message):
    field = next(iter(values))
    with pytest.raises(DatumError) as caught:
        unions_codec.dump(unions_datum(**values))
    assert caught.value.path[0] == field
    assert message in caught.value.reason
    with pytest.raises((ValueError, TypeError)):
        fastavro_dump(UNIONS, unions_datum(**values))


class Unequal:
    """A value that cannot be compared."""

    def __eq__(self, other):
        raise TypeError("no comparisons")

    __hash__ = object.__hash__


def test_a_value_that_fails_while_its_branch_is_chosen(unions_codec):
    with pytest.raises(DatumError, match="cannot be checked against the union") as caught:
        unions_codec.dump(unions_datum(enum_str=Unequal()))
    assert caught.value.path == ("enum_str",)


def test_union_values_read_back(unions_codec):
    datum = unions_datum(records={"b": 1, "shared": 2}, numbers=2**40, everything=b"x")
    loaded = unions_codec.load(unions_codec.dump(datum))
    assert loaded["records"] == {"b": 1, "shared": 2}
    assert loaded["numbers"] == 2**40 and loaded["everything"] == b"x"


def test_union_index_out_of_range(unions_codec):
    data = bytearray(unions_codec.dump(unions_datum()))
    data[0] = 4  # null_str is first: branch 2 of 2
    with pytest.raises(DecodeError, match=r"index 2 out of range \(expected 0..1\)") as caught:
        unions_codec.load(bytes(data))
    assert caught.value.offset == 0


ROOT_UNION = [
    "null",
    "string",
    {"type": "record", "name": "Leaf", "fields": [{"name": "v", "type": ["null", "Leaf"]}]},
]


@pytest.mark.parametrize("datum", [None, "s", {"v": None}, {"v": {"v": {"v": None}}}])
def test_a_union_at_the_root(datum):
    check_like_fastavro(AvroCodec(ROOT_UNION), ROOT_UNION, datum)


# -- where fastavro writes bytes that do not hold the value ------------------------------

DECIMAL_4_2 = {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2}
DEVIATIONS = {
    "type": "record",
    "name": "Deviations",
    "fields": [
        {"name": "i", "type": "int", "default": 0},
        {"name": "f", "type": "float", "default": 0},
        {"name": "nf", "type": ["null", "float"], "default": None},
        {"name": "b", "type": "boolean", "default": False},
        {"name": "n", "type": "null", "default": None},
        {"name": "nu", "type": ["null", "string"], "default": None},
        {"name": "a", "type": {"type": "array", "items": "string"}, "default": []},
        {
            "name": "u",
            "type": {"type": "string", "logicalType": "uuid"},
            "default": "00000000-0000-0000-0000-000000000000",
        },
        {"name": "d", "type": DECIMAL_4_2, "default": "\u0000"},
    ],
}


@pytest.mark.parametrize(
    "field, datum, fastavro_writes, message",
    [
        ("i", 1.5, b"\x02", "expected an int, got float 1.5"),  # truncated
        ("i", 2**40, b"\x80\x80\x80\x80\x80\x40", "out of range for Avro int"),  # not an int
        ("f", 1e39, b"\x00\x00\x80\x7f", "out of range for Avro float"),  # infinity
        ("nf", 1e39, b"\x02\x00\x00\x80\x7f", "out of range for Avro float"),
        ("b", "no", b"\x01", "expected a bool"),  # its truth value
        ("b", None, b"\x00", "expected a bool"),
        ("n", 5, b"", "expected None"),  # nothing at all
        ("nu", ("null", 5), b"\x00", "expected None for an Avro null"),
        (
            "a",
            "ab",
            b"\x04\x02a\x02b\x00",  # its characters
            "expected a list (or other sequence) for an array, got str",
        ),
        ("a", {"k": 1}, b"\x02\x02k\x00", "expected a list"),  # its keys
        ("u", "not-a-uuid", b"\x14not-a-uuid", "expected a UUID"),
        # a decimal's scaled digits beyond its precision: 1E+5 and 123.4 at scale 2
        ("d", D("1E+5"), b"\x08\x00\x98\x96\x80", "more digits than the precision of decimal(4, 2)"),
        ("d", D("123.4"), b"\x04\x30\x34", "more digits than the precision"),
    ],
)
def test_refused_where_fastavro_writes_something_else(field, datum, fastavro_writes, message):
    field_type = next(f["type"] for f in DEVIATIONS["fields"] if f["name"] == field)
    assert fastavro_dump(field_type, datum) == fastavro_writes
    with pytest.raises(DatumError) as caught:
        AvroCodec(DEVIATIONS).dump({field: datum})
    assert caught.value.path == (field,)
    assert message in caught.value.reason


def test_negative_zero_on_a_fixed_decimal():
    # fastavro writes -0 as ff fe (-0.02 here); it is zero
    schema = {
        "type": "fixed",
        "name": "Money",
        "size": 2,
        "logicalType": "decimal",
        "precision": 4,
        "scale": 2,
    }
    assert fastavro_dump(schema, D("-0")) == b"\xff\xfe"
    codec = AvroCodec(schema)
    assert codec.dump(D("-0")) == codec.dump(D("0")) == b"\x00\x00"
    assert codec.load(b"\x00\x00") == D("0.00")


# -- logical types ---------------------------------------------------------------------


def _logical(base, name, **more):
    return {"type": base, "logicalType": name, **more}


LOGICAL = {
    "type": "record",
    "name": "Logical",
    "fields": [
        {"name": "ts_ms", "type": _logical("long", "timestamp-millis")},
        {"name": "ts_us", "type": _logical("long", "timestamp-micros")},
        {"name": "lts_ms", "type": _logical("long", "local-timestamp-millis")},
        {"name": "lts_us", "type": _logical("long", "local-timestamp-micros")},
        {"name": "day", "type": _logical("int", "date")},
        {"name": "t_ms", "type": _logical("int", "time-millis")},
        {"name": "t_us", "type": _logical("long", "time-micros")},
        {"name": "dec", "type": _logical("bytes", "decimal", precision=10, scale=3)},
        {
            "name": "dec_fixed",
            "type": {
                "type": "fixed",
                "name": "Money",
                "size": 8,
                "logicalType": "decimal",
                "precision": 18,
                "scale": 4,
            },
        },
        {"name": "dec_wide", "type": _logical("bytes", "decimal", precision=60, scale=10)},
        {
            "name": "dec_wide_fixed",
            "type": {
                "type": "fixed",
                "name": "Wide",
                "size": 30,
                "logicalType": "decimal",
                "precision": 60,
                "scale": 0,
            },
        },
        {"name": "id", "type": _logical("string", "uuid")},
    ],
}

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)


def logical_datum(**values):
    moment = datetime.datetime(2024, 2, 29, 23, 59, 58, 123456, tzinfo=UTC)
    datum = {
        "ts_ms": moment,
        "ts_us": moment,
        "lts_ms": moment.replace(tzinfo=None),
        "lts_us": moment.replace(tzinfo=None),
        "day": moment.date(),
        "t_ms": moment.time(),
        "t_us": moment.time(),
        "dec": D("1234567.891"),
        "dec_fixed": D("-12345678901234.5678"),
        "dec_wide": D("1" * 50 + ".0123456789"),
        "dec_wide_fixed": D("-" + "9" * 60),
        "id": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    }
    datum.update(values)
    return datum


@pytest.fixture(scope="module")
def logical_codec():
    return AvroCodec(LOGICAL)


class MyDateTime(datetime.datetime):
    pass


IST = datetime.timezone(datetime.timedelta(hours=5, minutes=30))


@pytest.mark.parametrize(
    "values",
    [
        {},
        {"ts_ms": EPOCH, "ts_us": EPOCH, "lts_ms": EPOCH, "lts_us": EPOCH},
        # before 1970 a part of a millisecond rounds down, as fastavro
        {"ts_ms": datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)},
        {"ts_ms": datetime.datetime(1, 1, 1, tzinfo=UTC), "ts_us": datetime.datetime(1, 1, 1, tzinfo=UTC)},
        {"ts_ms": datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)},
        # other time zones: the same instant in UTC; local timestamps keep the wall clock
        {
            "ts_ms": datetime.datetime(2024, 1, 1, 5, 30, tzinfo=IST),
            "ts_us": datetime.datetime(2024, 1, 1, 5, 30, 0, 7, tzinfo=IST),
            "lts_ms": datetime.datetime(2024, 1, 1, 5, 30, tzinfo=IST),
            "lts_us": datetime.datetime(2024, 1, 1, 5, 30, tzinfo=IST),
        },
        # naive datetimes are local time for timestamps (C's mktime), as fastavro
        {"ts_ms": datetime.datetime(2024, 7, 1, 12), "ts_us": datetime.datetime(1960, 7, 1, 12, 0, 0, 5)},
        {"ts_ms": MyDateTime(2024, 7, 1, 12, tzinfo=UTC), "lts_us": MyDateTime(2024, 7, 1, 12)},
        # ints are written as they are
        {"ts_ms": 1, "ts_us": -1, "lts_ms": 2**40, "lts_us": 0, "day": -5, "t_ms": 3, "t_us": 4},
        {"day": datetime.date(1, 1, 1)},
        {"day": datetime.date(9999, 12, 31)},
        {"day": datetime.datetime(2020, 2, 2, 23, 59)},  # a datetime's date
        {"day": "2020-02-02"},  # an ISO date string
        {"t_ms": datetime.time(23, 59, 59, 999999), "t_us": datetime.time(0, 0)},
        {"t_ms": datetime.time(1, 2, 3, 4567, tzinfo=IST), "t_us": datetime.time(1, 2, tzinfo=IST)},
        {"dec": D("0"), "dec_fixed": D("0"), "dec_wide": D("0"), "dec_wide_fixed": D("0")},
        {"dec": D("-0.001"), "dec_fixed": D("0.0001"), "dec_wide": D("-1E-10")},
        {"dec": D("9999999.999"), "dec_fixed": D("99999999999999.9999")},
        {"dec": D("-9999999.999"), "dec_fixed": D("-99999999999999.9999")},
        {"dec": D("-1.28"), "dec_fixed": D("-0.0128"), "dec_wide_fixed": D("9" * 60)},
        {"dec": D("12.5"), "dec_fixed": D("7")},  # fewer places than the scale
        {"dec": D("1E+2"), "dec_wide": D("1.5E+20")},  # exponents
        {"dec": b"\x01\x00", "dec_fixed": b"\x00" * 7 + b"\x05"},  # bytes written as they are
        {"id": uuid.UUID(int=0)},
        {"id": uuid.UUID(int=2**128 - 1)},
        {"id": "12345678-1234-5678-1234-567812345678"},  # strings as they are
        {"id": "{12345678-1234-5678-1234-567812345678}"},
        {"id": "12345678123456781234567812345678"},
    ],
)
def test_logical_types_as_fastavro(logical_codec, values):
    check_like_fastavro(logical_codec, LOGICAL, logical_datum(**values))


def test_naive_timestamps_in_another_time_zone(logical_codec, monkeypatch):
    import time

    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        for moment in (
            datetime.datetime(2024, 7, 1, 12, 0, 0, 1500),
            datetime.datetime(2024, 1, 1),
            datetime.datetime(1950, 3, 3, 3, 3),
        ):
            datum = logical_datum(ts_ms=moment, ts_us=moment, lts_ms=moment)
            check_like_fastavro(logical_codec, LOGICAL, datum)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


@pytest.mark.parametrize(
    "values, path, message",
    [
        ({"ts_ms": datetime.date(2020, 1, 1)}, ("ts_ms",), "expected an int, got date"),
        ({"ts_ms": "2020-01-01T00:00:00"}, ("ts_ms",), "expected an int, got str"),
        ({"day": "yesterday"}, ("day",), "expected a date, got str 'yesterday'"),
        ({"day": 2**31}, ("day",), "out of range for Avro int"),
        ({"t_ms": 1.5}, ("t_ms",), "expected an int"),
        ({"dec": D("1.2345")}, ("dec",), "more decimal places than the scale of decimal(10, 3)"),
        ({"dec": D("12345678.9")}, ("dec",), "more digits than the precision of decimal(10, 3)"),
        ({"dec": D("1.230000000000")}, ("dec",), "13 digits, more than the precision"),
        ({"dec": D("NaN")}, ("dec",), "cannot be written as an Avro decimal"),
        ({"dec": D("-Infinity")}, ("dec",), "cannot be written"),
        ({"dec": 1.5}, ("dec",), "expected a Decimal, got float"),
        ({"dec": 5}, ("dec",), "expected a Decimal, got int"),
        ({"dec_fixed": b"\x00"}, ("dec_fixed",), "expected 8 bytes for a fixed(8), got 1"),
        ({"id": 5}, ("id",), "expected a UUID, got int"),
        ({"id": "1234"}, ("id",), "expected a UUID, got str"),
    ],
)
def test_bad_logical_values(logical_codec, values, path, message):
    with pytest.raises(DatumError) as caught:
        logical_codec.dump(logical_datum(**values))
    assert caught.value.path == path
    assert message in caught.value.reason


def test_logical_values_out_of_python_range(logical_codec):
    data = logical_codec.dump(logical_datum(ts_ms=0))
    start = len(zigzag(0))
    too_late = zigzag(253402300800000)  # 10000-01-01 in milliseconds
    with pytest.raises(DecodeError, match="outside the years 1-9999") as caught:
        logical_codec.load(too_late + data[start:])
    assert caught.value.offset == 0


def test_time_of_day_out_of_range():
    codec = AvroCodec(_logical("int", "time-millis"))
    assert codec.load(zigzag(86399999)) == datetime.time(23, 59, 59, 999000)
    for millis in (86400000, -1):
        with pytest.raises(DecodeError, match="time of day"):
            codec.load(zigzag(millis))


# the logical types fastavro 1.13.1 does not know, by the specification

NEW_LOGICAL = {
    "type": "record",
    "name": "NewLogical",
    "fields": [
        {"name": "ts_ns", "type": _logical("long", "timestamp-nanos")},
        {"name": "lts_ns", "type": _logical("long", "local-timestamp-nanos")},
        {"name": "big", "type": _logical("bytes", "big-decimal")},
        {"name": "span", "type": {"type": "fixed", "name": "Span", "size": 12, "logicalType": "duration"}},
        {"name": "key", "type": {"type": "fixed", "name": "Key", "size": 16, "logicalType": "uuid"}},
    ],
}


@pytest.fixture(scope="module")
def new_logical_codec():
    return AvroCodec(NEW_LOGICAL)


def big_decimal_bytes(unscaled: int, scale: int) -> bytes:
    """Java's BigDecimalConversion: the unscaled BigInteger.toByteArray() as
    Avro bytes, the scale as an Avro int, all of it as Avro bytes."""
    length = ((unscaled if unscaled >= 0 else ~unscaled).bit_length() + 8) // 8
    inner = zigzag(length) + unscaled.to_bytes(length, "big", signed=True) + zigzag(scale)
    return zigzag(len(inner)) + inner


@pytest.mark.parametrize(
    "big, unscaled, scale",
    [
        (D("123.45"), 12345, 2),
        (D("-1"), -1, 0),
        (D("0.00"), 0, 2),
        (D("1E+3"), 1, -3),
        (D("-128"), -128, 0),
        (D("128"), 128, 0),
        (D("-0.5"), -5, 1),
        (D((0, tuple(map(int, str(2**200))), -30)), 2**200, 30),
    ],
)
def test_big_decimal_as_java_writes_it(new_logical_codec, big, unscaled, scale):
    moment = datetime.datetime(2024, 1, 1, 0, 0, 0, 1, tzinfo=UTC)
    datum = {
        "ts_ns": moment,
        "lts_ns": moment.replace(tzinfo=None),
        "big": big,
        "span": Duration(1, 2, 3),
        "key": uuid.UUID(int=1),
    }
    nanos = 1704067200000001000
    expected = (
        zigzag(nanos) * 2
        + big_decimal_bytes(unscaled, scale)
        + struct.pack("<III", 1, 2, 3)
        + uuid.UUID(int=1).bytes
    )
    data = new_logical_codec.dump(datum)
    assert data == expected
    assert new_logical_codec.load(data) == {
        "ts_ns": nanos,
        "lts_ns": nanos,
        "big": big,
        "span": Duration(1, 2, 3),
        "key": uuid.UUID(int=1),
    }
    assert str(new_logical_codec.load(data)["big"]) == str(big)  # the scale kept
    # fastavro reads the underlying types: the same bytes, raw
    raw = fastavro_load(NEW_LOGICAL, data)
    assert raw["ts_ns"] == nanos and raw["span"] == expected[-28:-16] and raw["key"] == uuid.UUID(int=1).bytes


def test_new_logical_types_take_their_underlying_values(new_logical_codec):
    # ints, bytes: written as they are (fastavro's way with logical types)
    datum = {"ts_ns": -5, "lts_ns": 2**63 - 1, "big": b"\x02\x07\x00", "span": b"x" * 12, "key": b"k" * 16}
    assert new_logical_codec.dump(datum) == fastavro_dump(NEW_LOGICAL, datum)


@pytest.mark.parametrize(
    "values, message",
    [
        ({"ts_ns": datetime.datetime(2300, 1, 1, tzinfo=UTC)}, "out of range for Avro long"),
        ({"big": D("NaN")}, "cannot be written as an Avro big-decimal"),
        ({"big": 1.5}, "expected a Decimal"),
        ({"span": Duration(-1, 0, 0)}, "ints from 0 to 2**32-1"),
        ({"span": Duration(2**32, 0, 0)}, "ints from 0 to 2**32-1"),
        ({"span": datetime.timedelta(days=1)}, "expected a Duration"),
        ({"key": "12345678-1234-5678-1234-567812345678"}, "expected a UUID, got str"),
        ({"key": b"short"}, "expected 16 bytes"),
    ],
)
def test_bad_new_logical_values(new_logical_codec, values, message):
    datum = {"ts_ns": 0, "lts_ns": 0, "big": D(1), "span": Duration(), "key": uuid.UUID(int=0)}
    datum.update(values)
    with pytest.raises(DatumError) as caught:
        new_logical_codec.dump(datum)
    assert caught.value.path == tuple(values)
    assert message in caught.value.reason


def test_malformed_big_decimals(new_logical_codec):
    head = zigzag(0) * 2
    tail = struct.pack("<III", 0, 0, 0) + bytes(16)
    with pytest.raises(DecodeError, match="big-decimal without its unscaled value"):
        new_logical_codec.load(head + b"\x04\x00\x00" + tail)
    with pytest.raises(DecodeError, match="1 bytes after a big-decimal's scale"):
        new_logical_codec.load(head + b"\x08\x02\x05\x00\x00" + tail)
    with pytest.raises(DecodeError):  # the unscaled length runs past the big-decimal
        new_logical_codec.load(head + b"\x04\x08\x05" + tail)


# -- recursion and depth --------------------------------------------------------------

NODE = {
    "type": "record",
    "name": "Node",
    "namespace": "tree",
    "fields": [
        {"name": "value", "type": "int"},
        {"name": "next", "type": ["null", "Node"], "default": None},
        {"name": "children", "type": {"type": "array", "items": "Node"}, "default": []},
    ],
}


def chain(depth: int) -> dict:
    node = {"value": 0, "next": None, "children": []}
    for value in range(1, depth):
        node = {"value": value, "next": node, "children": []}
    return node


def chain_bytes(depth: int) -> bytes:
    """A chain's encoding, built by hand: value, union branch, ..., null, children."""
    out = b""
    for value in range(depth - 1, 0, -1):
        out += zigzag(value) + b"\x02"
    return out + zigzag(0) + b"\x00" + b"\x00" * depth


@pytest.fixture(scope="module")
def node_codec():
    return AvroCodec(NODE)


def test_recursive_records_as_fastavro(node_codec):
    tree = {"value": 1, "next": chain(3), "children": [chain(2), {"value": 5, "children": [chain(4)]}]}
    check_like_fastavro(node_codec, NODE, tree)
    deep = chain(400)
    data = node_codec.dump(deep)
    assert data == fastavro_dump(NODE, deep) == chain_bytes(400)
    assert node_codec.load(data) == deep


def test_depth_is_bounded_by_max_depth():
    codec = AvroCodec(NODE, CompileFlags(max_depth=20))
    assert codec.load(codec.dump(chain(21))) == chain(21)
    with pytest.raises(DatumError, match="records are nested more than 20 levels deep") as caught:
        codec.dump(chain(22))
    assert caught.value.path == ("next",) * 21
    with pytest.raises(DecodeError, match="records nested more than 20 levels deep"):
        codec.load(chain_bytes(22))
    # skip() walks the schema's node table (the runtime's generic walk)
    with pytest.raises(DecodeError, match="nested more than 20 levels deep"):
        codec._codec.skip(chain_bytes(22))


def test_a_datum_that_contains_itself(node_codec):
    node = {"value": 1, "children": []}
    node["next"] = node
    with pytest.raises(DatumError, match="nested more than 500 levels"):
        node_codec.dump(node)
    looped = {"value": 1, "next": None}
    looped["children"] = [looped]
    with pytest.raises(DatumError, match="nested more than 500 levels"):
        node_codec.dump(looped)


def test_a_small_thread_stack_ends_in_a_clean_error():
    codec = AvroCodec(NODE, CompileFlags(max_depth=10000))
    datum, data = chain(9000), chain_bytes(9000)
    errors = []

    got = []

    def run():
        got.append(current_stack_size())
        for call in (lambda: codec.dump(datum), lambda: codec.load(data), lambda: codec._codec.skip(data)):
            try:
                call()
            except (DatumError, DecodeError) as error:
                errors.append(error)

    size = threading.stack_size(256 * 1024)
    try:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(size)
    if got[0] is not None and got[0] > 256 * 1024:
        # glibc reuses a cached stack of up to about 4 times the size asked for
        pytest.skip(f"the thread was given a cached stack of {got[0]} bytes, not 256 KiB")
    assert [type(error) for error in errors] == [DatumError, DecodeError, DecodeError]
    assert all("C stack" in str(error) for error in errors)


# -- skipping (the runtime's generic walk of the schema's nodes) -------------------------


@pytest.mark.parametrize(
    "codec_name, schema, datum",
    [
        ("primitives_codec", PRIMITIVES, primitives(s="text", by=b"\x00\x01")),
        ("collections_codec", COLLECTIONS, collections_datum()),
        (
            "unions_codec",
            UNIONS,
            unions_datum(records={"b": 1, "shared": 2}, numbers=2**40, array=[1, 2], everything="s"),
        ),
        ("logical_codec", LOGICAL, logical_datum()),
        ("node_codec", NODE, {"value": 1, "next": chain(3), "children": [chain(2)]}),
    ],
)
def test_skipping_checks_what_loading_checks(request, codec_name, schema, datum):
    codec = request.getfixturevalue(codec_name)
    data = codec.dump(datum)
    assert codec._codec.skip(data) is None
    for end in range(len(data)):
        with pytest.raises(DecodeError):
            codec._codec.skip(data[:end])
    with pytest.raises(DecodeError, match="trailing"):
        codec._codec.skip(data + b"\x00")


# -- the codec object and its source --------------------------------------------------


def test_an_equal_schema_reuses_the_compiled_codec(primitives_codec):
    import json

    from roastedavro import compiler
    from roastedavro.avro import parse_schema

    compiler.last_timing.clear()
    again = AvroCodec(json.dumps(PRIMITIVES))
    assert again._codec is primitives_codec._codec
    assert compiler.last_timing == {}  # nothing built or loaded
    assert AvroCodec(parse_schema(PRIMITIVES))._codec is primitives_codec._codec
    other_limits = AvroCodec(PRIMITIVES, CompileFlags(max_depth=7))
    assert other_limits._codec is not primitives_codec._codec
    assert type(other_limits._codec) is type(primitives_codec._codec)  # one module


def test_the_source_names_the_schema(node_codec):
    source = node_codec.compile_to_string()
    assert source.startswith(
        f"# Avro codec for tree.Node (CRC-64-AVRO fingerprint 0x{node_codec.fingerprint:016x}),"
    )
    for function in ("write_tree_Node", "read_tree_Node"):
        assert f"cdef {'int' if function[0] != 'r' else 'dict'} {function}(self" in source
    # no skipper of its own: skip() is the runtime's walk of the schema's nodes
    assert "skip_tree_Node" not in source
    assert "return skip_checked(r, self.bound.skip_type, self.max_depth, self.max_items)" in source
    assert (
        AvroCodec(ROOT_UNION)
        .compile_to_string()
        .startswith("# Avro codec for null | string | Leaf (CRC-64-AVRO")
    )


def test_names_that_make_the_same_identifier():
    # a.b_c and a_b.c are both a_b_c; a record called root meets the root's functions
    schema = {
        "type": "array",
        "items": {
            "type": "record",
            "name": "root",
            "fields": [
                {
                    "name": "one",
                    "type": {"type": "record", "name": "a.b_c", "fields": [{"name": "x", "type": "int"}]},
                },
                {
                    "name": "two",
                    "type": {"type": "record", "name": "a_b.c", "fields": [{"name": "y", "type": "string"}]},
                },
            ],
        },
    }
    codec = AvroCodec(schema)
    source = codec.compile_to_string()
    for function in ("write_root(", "write_root_2(", "write_a_b_c(", "write_a_b_c_2("):
        assert f"cdef int {function}self" in source
    datum = [{"one": {"x": 1}, "two": {"y": "z"}}]
    assert codec.load(codec.dump(datum)) == datum


def test_declaration_text_reaches_the_source_only_as_checked_text():
    # a model built by hand, past the parser's name rules: any text at all
    from roastedavro.avro import Enum, Field, Primitive, Record, Schema

    hostile = 'x"\n    import os  # \\'
    enum = Enum(f"e.{hostile}", symbols=(hostile, "B"))
    record = Record(
        f"r.{hostile}",
        fields=(
            Field(hostile, Primitive("int")),
            Field("e", enum),
            Field("s", Primitive("string"), default=hostile),
        ),
    )
    codec = AvroCodec(Schema(record, {record.name: record, enum.name: enum}))
    datum = {hostile: 5, "e": hostile}
    assert codec.load(codec.dump(datum)) == {hostile: 5, "e": hostile, "s": hostile}
    assert not any(line.lstrip().startswith("import os") for line in codec.compile_to_string().splitlines())


def test_codecs_pickle(primitives_codec):
    import pickle

    again = pickle.loads(pickle.dumps(primitives_codec))
    assert again.schema == primitives_codec.schema and again.flags == primitives_codec.flags
    assert again.dump(primitives()) == primitives_codec.dump(primitives())


@pytest.mark.parametrize(
    "values, path, message",
    [
        ({"i": 10**5000}, ("i",), "out of range for Avro int (-2**31 .. 2**31-1): <an int of 16610 bits>"),
        ({"l": -(10**5000)}, ("l",), "out of range for Avro long"),
        ({"d": 10**5000}, ("d",), "out of range for an Avro double: <an int of 16610 bits>"),
        ({"e": [10**5000]}, ("e",), "is not a symbol of the enum"),
    ],
)
def test_huge_ints_are_reported_not_printed(primitives_codec, values, path, message):
    with pytest.raises(DatumError) as caught:
        primitives_codec.dump(primitives(**values))
    assert caught.value.path == path
    assert message in caught.value.reason


def test_huge_ints_in_unions(unions_codec):
    with pytest.raises(DatumError, match="out of range for an Avro double") as caught:
        unions_codec.dump(unions_datum(numbers=10**5000))
    assert caught.value.path == ("numbers",)
    with pytest.raises(DatumError, match="<an int of 16610 bits> matches no branch"):
        unions_codec.dump(unions_datum(long_int=10**5000))
