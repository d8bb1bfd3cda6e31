"""Schema resolution in tier 0 (roastedavro._tier0.ResolvingInterpreter): a
writer's bytes read as a reader's values from the same resolution plan the
compiled resolving codec is generated from, with the same values, errors and
bounds.

The references: the compiled resolving codec (AvroCodec(reader,
writer_schema=writer)) on a few pairs, compiled once each, where every
outcome must be identical (the value, or the DecodeError's text and offset);
Java's GenericDatumReader(writer, reader) on the resolution tests' pairs and on
random evolved pairs (no compiling: Java's value is written in the reader's
schema and read back by tier 0's plain Interpreter); fastavro's resolving
reader where it reads as Java does. The writer's bytes come from fastavro.
"""

from __future__ import annotations

import io
import json

import fastavro
import pytest
from hypothesis import HealthCheck, Phase, assume, given, note, settings
from hypothesis import strategies as st

from avro_strategies import assert_same, datums
from evolution import schema_pairs
from test_resolution import IMPOSSIBLE, PAIRS, field, record, written
from test_resolution_properties import _java_bug, has_values, java_misreads_a_union_default
from test_tier0 import damaged_bytes
from roastedavro.codec import _compiled as compiled_codec
from roastedavro._tier0 import Interpreter, ResolvingInterpreter
from roastedavro.avro import parse_schema
from roastedavro.errors import DecodeError, SchemaResolutionError
from roastedavro.flags import CompileFlags
from roastedavro.resolvegen import generate_resolving_module

#: the names of DecodeError and its kinds (truncated data, bad UTF-8, data the
#: reader's schema cannot read)
DECODE_ERRORS = (
    "DecodeError",
    "TruncatedError",
    "TextDecodeError",
    "UnreadableDatumError",
    "IndexDecodeError",
    "LengthDecodeError",
)

FEW = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)

# -- the pairs compiled (each once) ------------------------------------------------

COLOR = {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}
HUE = {"type": "enum", "name": "Hue", "symbols": ["A", "B", "C"]}
MD5 = {"type": "fixed", "name": "MD5", "size": 4}
LINE = record(
    "Line",
    field("sku", "string"),
    field("qty", "int"),
    field("extra", {"type": "map", "values": ["null", "double"]}),
)
NODE = record("Node", field("value", "int"), field("next", ["null", "Node"]))
GONE = record(
    "Gone",
    field("a", {"type": "array", "items": "long"}),
    field("b", ["null", "Gone"]),
    field("c", "boolean"),
    field("d", "float"),
    field("e", "Color"),
    field("f", MD5),
    field("g", ["null", "string", "bytes", "double"]),
    field("h", "null"),
    field("i", "int"),
    field("j", {"type": "long", "logicalType": "timestamp-millis"}),
)
DECIMAL = {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}

# every kind of plan: promotions, string <-> bytes, enum maps (a default, and
# a symbol the reader lacks), writer unions (a branch the reader cannot read),
# reader unions, aliases, arrays and maps of evolved records, a recursive
# pair, writer-only fields of every type skipped, reader-only fields from
# defaults of every kind, logical types
KITCHEN_WRITER = record(
    "Order",
    field("id", "int"),
    field("ratio", "int"),
    field("big", "long"),
    field("f", "float"),
    field("name", "string"),
    field("blob", "bytes"),
    field("color", COLOR),
    field("hue", HUE),
    field("maybe", ["null", "int", "string"]),
    field("plain", "int"),
    field("lines", {"type": "array", "items": LINE}),
    field("by_sku", {"type": "map", "values": "Line"}),
    field("old_name", "string"),
    field("gone", GONE),
    field("gone_fixed", "MD5"),
    field("gone_lines", {"type": "array", "items": "Line"}),
    field("when", {"type": "long", "logicalType": "timestamp-micros"}),
    field("amount", DECIMAL),
    field("node", NODE),
    namespace="shop",
)
KITCHEN_READER = record(
    "Order",
    field(
        "node",
        record(
            "Node",
            field("value", "long"),
            field("next", ["null", "Node"]),
            field("weight", "float", default=0.5),
        ),
    ),
    field("amount", DECIMAL),
    field("when", {"type": "long", "logicalType": "timestamp-micros"}),
    field("new_name", "string", aliases=["old_name"]),
    field(
        "by_sku",
        {
            "type": "map",
            "values": record(
                "Line", field("qty", "long"), field("sku", "bytes"), field("price", "double", default=0.0)
            ),
        },
    ),
    field("lines", {"type": "array", "items": "Line"}),
    field("plain", ["null", "string", "long"]),
    field("maybe", ["null", "long"]),
    field("hue", {"type": "enum", "name": "Hue", "symbols": ["C", "A", "Z"], "default": "Z"}),
    field("color", {"type": "enum", "name": "Color", "symbols": ["BLUE", "RED"]}),
    field("blob", "string"),
    field("name", "bytes"),
    field("f", "double"),
    field("big", "double"),
    field("ratio", "float"),
    field("id", "long"),
    field("note", ["null", "string"], default=None),
    field("count", "int", default=7),
    field("raw", "bytes", default="\u00ff\u0000"),
    field("tags", {"type": "array", "items": "string"}, default=[]),
    field("numbers", {"type": "array", "items": "int"}, default=[1, 2]),
    field("attrs", {"type": "map", "values": "int"}, default={"a": 1}),
    field("empty", {"type": "map", "values": "int"}, default={}),
    field("digest", {"type": "fixed", "name": "Digest", "size": 2}, default="ab"),
    field("line", "Line", default={"qty": 1, "sku": "x"}),
    field("either", ["string", "null"], default="first"),
    field("day", {"type": "int", "logicalType": "date"}, default=3),
    field("price", {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 1}, default="\u0001"),
    field("shade", {"type": "enum", "name": "Shade", "symbols": ["X", "Y"]}, default="Y"),
    namespace="shop",
    aliases=["shop.Older"],
)

# what a benchmark would read: ten fields, one dropped, one added, int -> long
REALISTIC_WRITER = record(
    "Event",
    field("id", "long"),
    field("user", "string"),
    field("kind", "string"),
    field("count", "int"),
    field("score", "double"),
    field("ok", "boolean"),
    field("tags", {"type": "array", "items": "string"}),
    field("attrs", {"type": "map", "values": "string"}),
    field("ref", ["null", "string"]),
    field("legacy", "string"),
)
REALISTIC_READER = record(
    "Event",
    field("id", "long"),
    field("user", "string"),
    field("kind", "string"),
    field("count", "long"),
    field("score", "double"),
    field("ok", "boolean"),
    field("tags", {"type": "array", "items": "string"}),
    field("attrs", {"type": "map", "values": "string"}),
    field("ref", ["null", "string"]),
    field("region", "string", default="eu"),
)

# roots that are not records; a writer union with a branch the reader cannot read
SMALL_PAIRS = [
    ("int", ["null", "double", "long"], [0, 5, -(2**31)]),
    (["int", "long", "string", "null"], ["null", "double"], [1, 2**40, None, "x"]),
    (
        {"type": "array", "items": LINE},
        {
            "type": "array",
            "items": record("Line", field("qty", "long"), field("note", "string", default="n")),
        },
        [[], [{"sku": "a", "qty": 1, "extra": {"k": 1.5, "n": None}}] * 3],
    ),
    (
        COLOR,
        {"type": "enum", "name": "Color", "symbols": ["GREEN"], "default": "GREEN"},
        ["RED", "GREEN", "BLUE"],
    ),
]

_compiled: dict = {}


def both(writer, reader, flags: CompileFlags | None = None):
    """The compiled resolving codec object of a pair and its tier 0 reader (each once)."""
    key = (json.dumps(writer, sort_keys=True), json.dumps(reader, sort_keys=True), flags)
    if key not in _compiled:
        flags = flags or CompileFlags()
        writer, reader = parse_schema(writer), parse_schema(reader)
        # the module AvroCodec compiles for the pair, whichever tier serves it now
        compiled = compiled_codec(reader, flags, writer)
        assert type(compiled).__name__ == "Codec"
        _compiled[key] = (compiled, ResolvingInterpreter(writer, reader, flags))
    return _compiled[key]


def outcome(call, *args):
    """What a call returns, or the type, text and offset of its DecodeError."""
    try:
        return "value", call(*args)
    except DecodeError as error:
        return type(error).__name__, str(error), error.offset


def assert_same_outcome(tier0, compiled):
    assert tier0[0] == compiled[0], (tier0, compiled)
    if tier0[0] == "value":
        assert_same(tier0[1], compiled[1])
    else:
        assert tier0 == compiled


def fastavro_resolved(writer, reader, data: bytes):
    return fastavro.schemaless_reader(
        io.BytesIO(data), fastavro.parse_schema(writer), fastavro.parse_schema(reader)
    )


def java_agrees(answer, value, reader_plain, writer, reader, data) -> None:
    """Java's answer for one datum and tier 0's value (or DecodeError)."""
    if _java_bug(answer):
        # Java 1.12.2 checks an array's count against the reader's item size
        assert value == ("value", fastavro_resolved(writer, reader, data))
    elif isinstance(answer, dict) and "Invalid default for field" in str(answer.get("error")):
        # Java 1.12.2 renames the writer's fields by the reader's aliases but
        # keeps the writer's record defaults, which it then refuses under the
        # new names: no reference for the datum
        pass
    elif isinstance(answer, dict):
        assert value[0] in DECODE_ERRORS, (answer, value)
    elif value[0] in DECODE_ERRORS:
        # bytes read as a string must be UTF-8 here, and a uuid string a UUID
        # (Java keeps the raw bytes and text)
        assert "UTF-8" in value[1] or "not a valid UUID" in value[1], value
    else:
        assert_same(value[1], reader_plain.load(answer.data))


# -- against the compiled resolving codec, Java and fastavro ------------------------


@FEW
@given(data=st.data())
def test_every_kind_of_plan_like_the_compiled_codec_and_java(data, java):
    compiled, tier0 = both(KITCHEN_WRITER, KITCHEN_READER)
    plain = Interpreter(parse_schema(KITCHEN_READER))
    values = data.draw(st.lists(datums(KITCHEN_WRITER), min_size=1, max_size=4), label="datums")
    encoded = [written(KITCHEN_WRITER, value) for value in values]
    answers = java.resolve_each([(KITCHEN_WRITER, KITCHEN_READER, item) for item in encoded])
    for item, answer in zip(encoded, answers):
        got = outcome(tier0.load, item)
        assert_same_outcome(got, outcome(compiled.load, item))
        java_agrees(answer, got, plain, KITCHEN_WRITER, KITCHEN_READER, item)
        # the other entry points
        assert_same_outcome(
            outcome(tier0.load_from, b"\x00\x01" + item, 2),
            outcome(compiled.load_from, b"\x00\x01" + item, 2),
        )
        assert_same_outcome(
            outcome(tier0.load_one, item + b"\x07", 0), outcome(compiled.load_one, item + b"\x07", 0)
        )
        assert_same_outcome(outcome(tier0.load_block, item * 3, 3), outcome(compiled.load_block, item * 3, 3))
        # damaged bytes: the same value, or the same DecodeError at the same offset
        for cut in range(0, len(item), max(1, len(item) // 40)):
            assert_same_outcome(outcome(tier0.load, item[:cut]), outcome(compiled.load, item[:cut]))
        for _ in range(4):
            damaged = data.draw(damaged_bytes(item), label="damaged")
            assert_same_outcome(outcome(tier0.load, damaged), outcome(compiled.load, damaged))


def test_data_that_reaches_an_unreadable_part_fails_as_compiled(java):
    compiled, tier0 = both(KITCHEN_WRITER, KITCHEN_READER)
    datum = KITCHEN_DATUM
    good = written(KITCHEN_WRITER, datum)
    value = tier0.load(good)
    assert_same(value, compiled.load(good))
    # int -> float rounds to a float, enum B -> the default Z, renamed field, defaults
    assert value["ratio"] == 16777216.0 and value["hue"] == "Z" and value["new_name"] == "o"
    assert value["big"] == float(2**53)
    assert value["line"] == {"qty": 1, "sku": b"x", "price": 0.0}
    assert value["node"] == {"value": 1, "next": {"value": 2, "next": None, "weight": 0.5}, "weight": 0.5}
    green = written(KITCHEN_WRITER, {**datum, "color": "GREEN"})
    text = written(KITCHEN_WRITER, {**datum, "maybe": "x"})
    answers = java.resolve_each([(KITCHEN_WRITER, KITCHEN_READER, item) for item in (good, green, text)])
    assert not isinstance(answers[0], dict)
    for item, answer, where in (
        (green, answers[1], "Order.color"),
        (text, answers[2], "Order.maybe<string>"),
    ):
        error = outcome(tier0.load, item)
        assert error[0] in DECODE_ERRORS and where in error[1], error
        assert error == outcome(compiled.load, item)
        assert isinstance(answer, dict)  # Java refuses it too


ADDRESS = record(
    "Address",
    field("zip", "long"),
    field("tags", {"type": "array", "items": "string"}),
    field("old", ["null", "string"]),
)
NARROWED = [
    (
        "narrowed-field",
        record(
            "R",
            field(
                "u",
                [
                    "null",
                    record(
                        "Address",
                        field("zip", "int"),
                        field("tags", {"type": "array", "items": "string"}),
                        field("old", ["null", "string"]),
                    ),
                ],
            ),
        ),
    ),
    (
        "narrowed-items",
        record(
            "R",
            field(
                "u",
                [
                    "null",
                    record(
                        "Address",
                        field("zip", "int"),
                        field("tags", {"type": "array", "items": "int"}),
                        field("old", {"type": "array", "items": "double"}),
                    ),
                ],
            ),
        ),
    ),
]


@pytest.mark.parametrize("reader", [case[1] for case in NARROWED], ids=[case[0] for case in NARROWED])
def test_a_record_the_reader_cannot_read_under_a_writer_union_fails_only_its_datums(reader, java):
    # a field narrowed (long -> int, array items string -> int, a union none
    # of whose branches the reader reads) in an optional record: the pair
    # resolves (nulls are read), each datum that has the record fails, as in
    # Java; the compiled codec compiles (it referenced an unassigned local)
    writer = record("R", field("u", ["null", ADDRESS]))
    compiled, tier0 = both(writer, reader)
    datums_ = [{"u": None}, {"u": {"zip": 1, "tags": [], "old": None}}]
    encoded = [written(writer, datum) for datum in datums_]
    answers = java.resolve_each([(writer, reader, item) for item in encoded])
    got = [outcome(tier0.load, item) for item in encoded]
    assert got == [outcome(compiled.load, item) for item in encoded]
    assert got[0] == ("value", {"u": None}) and not isinstance(answers[0], dict)
    assert got[1][0] in DECODE_ERRORS and "R.u<Address>." in got[1][1] and got[1][2] == 1
    assert isinstance(answers[1], dict)


def test_threads_sharing_a_resolving_interpreter_get_the_compiled_results():
    import threading

    compiled, tier0 = both(KITCHEN_WRITER, KITCHEN_READER)
    encoded = [
        written(
            KITCHEN_WRITER,
            {
                **KITCHEN_DATUM,
                "id": number,
                "lines": [
                    {"sku": str(item), "qty": item, "extra": {"k": None}} for item in range(number % 7)
                ],
            },
        )
        for number in range(40)
    ]
    expected = [compiled.load(item) for item in encoded]
    results: dict = {}

    def work(number):
        results[number] = [[tier0.load(item) for item in encoded] for _ in range(20)]

    threads = [threading.Thread(target=work, args=(number,)) for number in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [0, 1, 2, 3]
    for rounds in results.values():
        for values in rounds:
            assert_same(values, expected)


KITCHEN_DATUM = {
    "id": 1,
    "ratio": 16777217,
    "big": 2**53 + 1,
    "f": 0.1,
    "name": "n",
    "blob": b"b",
    "color": "RED",
    "hue": "B",
    "maybe": 4,
    "plain": 3,
    "lines": [{"sku": "s", "qty": 2, "extra": {"x": None}}],
    "by_sku": {"s": {"sku": "s", "qty": 3, "extra": {}}},
    "old_name": "o",
    "gone": {
        "a": [1, 2],
        "b": {
            "a": [],
            "b": None,
            "c": False,
            "d": 1.0,
            "e": "RED",
            "f": b"abcd",
            "g": "x",
            "h": None,
            "i": 1,
            "j": 5,
        },
        "c": True,
        "d": 2.0,
        "e": "BLUE",
        "f": b"efgh",
        "g": b"y",
        "h": None,
        "i": -1,
        "j": 6,
    },
    "gone_fixed": b"0123",
    "gone_lines": [],
    "when": 1_700_000_000_000_000,
    "amount": b"\x01\x00",
    "node": {"value": 1, "next": {"value": 2, "next": None}},
}


def test_defaults_are_fresh_values_each_time():
    compiled, tier0 = both(KITCHEN_WRITER, KITCHEN_READER)
    data = written(
        KITCHEN_WRITER,
        {
            "id": 1,
            "ratio": 1,
            "big": 1,
            "f": 1.0,
            "name": "",
            "blob": b"",
            "color": "RED",
            "hue": "A",
            "maybe": None,
            "plain": 1,
            "lines": [],
            "by_sku": {},
            "old_name": "",
            "gone": {
                "a": [],
                "b": None,
                "c": True,
                "d": 2.0,
                "e": "BLUE",
                "f": b"efgh",
                "g": None,
                "h": None,
                "i": -1,
                "j": 6,
            },
            "gone_fixed": b"0123",
            "gone_lines": [],
            "when": 0,
            "amount": b"",
            "node": {"value": 1, "next": None},
        },
    )
    first = tier0.load(data)
    for key in ("tags", "numbers", "attrs", "empty"):
        first[key].clear()
    first["line"]["qty"] = 99
    second = tier0.load(data)
    assert_same(second, compiled.load(data))
    assert second["numbers"] == [1, 2] and second["attrs"] == {"a": 1} and second["line"]["qty"] == 1


@pytest.mark.parametrize(
    "writer, reader, values", SMALL_PAIRS, ids=["int-to-union", "union-to-double", "array-root", "enum-root"]
)
def test_roots_that_are_not_records_like_the_compiled_codec_and_java(writer, reader, values, java):
    compiled, tier0 = both(writer, reader)
    plain = Interpreter(parse_schema(reader))
    encoded = [written(writer, value) for value in values]
    answers = java.resolve_each([(writer, reader, item) for item in encoded])
    for item, answer in zip(encoded, answers):
        got = outcome(tier0.load, item)
        assert_same_outcome(got, outcome(compiled.load, item))
        java_agrees(answer, got, plain, writer, reader, item)
        for cut in range(len(item)):
            assert_same_outcome(outcome(tier0.load, item[:cut]), outcome(compiled.load, item[:cut]))
    joined = b"".join(encoded)
    assert_same_outcome(
        outcome(tier0.load_block, joined, len(encoded)), outcome(compiled.load_block, joined, len(encoded))
    )


@settings(
    max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
@given(data=st.binary(max_size=40), which=st.integers(0, len(SMALL_PAIRS) + 1))
def test_hostile_bytes_like_the_compiled_codec(data, which):
    pairs = SMALL_PAIRS + [(KITCHEN_WRITER, KITCHEN_READER, None), (REALISTIC_WRITER, REALISTIC_READER, None)]
    writer, reader, _ = pairs[which]
    compiled, tier0 = both(writer, reader)
    assert_same_outcome(outcome(tier0.load, data), outcome(compiled.load, data))
    for allowance in (0, 3):
        assert_same_outcome(
            outcome(tier0.load_block_within, data, 2, allowance),
            outcome(compiled.load_block_within, data, 2, allowance),
        )


@FEW
@given(data=st.data())
def test_a_realistic_pair_like_the_compiled_codec_fastavro_and_java(data, java):
    compiled, tier0 = both(REALISTIC_WRITER, REALISTIC_READER)
    plain = Interpreter(parse_schema(REALISTIC_READER))
    values = data.draw(st.lists(datums(REALISTIC_WRITER), min_size=1, max_size=5), label="datums")
    encoded = [written(REALISTIC_WRITER, value) for value in values]
    answers = java.resolve_each([(REALISTIC_WRITER, REALISTIC_READER, item) for item in encoded])
    for item, answer in zip(encoded, answers):
        got = outcome(tier0.load, item)
        assert_same_outcome(got, outcome(compiled.load, item))
        assert_same(got[1], fastavro_resolved(REALISTIC_WRITER, REALISTIC_READER, item))
        java_agrees(answer, got, plain, REALISTIC_WRITER, REALISTIC_READER, item)


# -- bounds ------------------------------------------------------------------------

SMALL = CompileFlags(max_depth=6, max_items=50, item_allowance=100)
DEEP_WRITER = record(
    "R",
    field("keep", NODE),
    field(
        "skip",
        record(
            "Skipped", field("next", ["null", "Skipped"]), field("nulls", {"type": "array", "items": "null"})
        ),
    ),
)
DEEP_READER = record(
    "R", field("keep", record("Node", field("value", "long"), field("next", ["null", "Node"])))
)


def _long(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def deep(kept: int, skipped: int, nulls: int = 0) -> bytes:
    """A Node chain of ``kept`` records, then a Skipped chain of ``skipped``
    whose innermost record has an array of ``nulls`` nulls."""
    keep = b"\x02\x02" * (kept - 1) + b"\x02\x00"
    skip = (
        b"\x02" * (skipped - 1)
        + b"\x00"
        + (_long(nulls) + b"\x00" if nulls else b"\x00")
        + b"\x00" * (skipped - 1)
    )
    return keep + skip


@pytest.mark.parametrize("flags", [None, SMALL], ids=["default", "small"])
@pytest.mark.parametrize(
    "kept, skipped, nulls",
    [
        (1, 1, 0),
        (5, 5, 0),
        (6, 1, 0),
        (7, 1, 0),
        (1, 6, 0),
        (1, 7, 0),
        (2, 2, 49),
        (2, 2, 50),
        (2, 2, 51),
        (2, 2, 1_000_001),
        (2, 2, 2**40),
        (501, 1, 0),
        (1, 501, 0),
    ],
)
def test_depth_items_and_budget_while_reading_and_skipping_like_the_compiled_codec(
    flags, kept, skipped, nulls
):
    compiled, tier0 = both(DEEP_WRITER, DEEP_READER, flags)
    data = deep(kept, skipped, nulls)
    tier0_outcome = outcome(tier0.load, data)
    assert_same_outcome(tier0_outcome, outcome(compiled.load, data))
    limits = flags or CompileFlags()
    if kept > limits.max_depth or skipped > limits.max_depth:
        assert tier0_outcome[0] in DECODE_ERRORS and "max_depth" in tier0_outcome[1]
    if nulls > limits.max_items:
        assert tier0_outcome[0] in DECODE_ERRORS
    if nulls <= min(limits.max_items, limits.item_allowance) and max(kept, skipped) <= limits.max_depth:
        assert tier0_outcome[0] == "value"


# a record read into a reader's union at the root (its records one level
# deeper than at a record root), each with a record default read at a level below
UNION_ROOT_READER = [
    "null",
    record(
        "Node",
        field("value", "long"),
        field("next", ["null", "Node"]),
        field("leaf", record("Leaf", field("x", "int")), default={"x": 1}),
    ),
]


@pytest.mark.parametrize("flags", [None, SMALL], ids=["default", "small"])
def test_depth_of_a_union_root_and_of_defaults_like_the_compiled_codec(flags):
    compiled, tier0 = both(NODE, UNION_ROOT_READER, flags)
    limit = (flags or CompileFlags()).max_depth
    outcomes = []
    for length in range(1, 9):
        data = b"\x02\x02" * (length - 1) + b"\x02\x00"
        outcomes.append(outcome(tier0.load, data))
        assert_same_outcome(outcomes[-1], outcome(compiled.load, data))
    # the n-th record is at depth n, its default's Leaf at n + 1
    assert [result[0] for result in outcomes] == [
        "value" if length + 1 <= limit else "DecodeError" for length in range(1, 9)
    ]


def test_skipping_builds_no_python_objects():
    import tracemalloc

    writer = record("R", field("id", "long"), field("history", {"type": "array", "items": "long"}))
    reader = record("R", field("id", "long"))
    tier0 = ResolvingInterpreter(parse_schema(writer), parse_schema(reader))
    data = written(writer, {"id": 1, "history": list(range(10**6, 10**6 + 1000))})
    assert tier0.load(data) == {"id": 1}
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(100):
            tier0.load(data)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    # 100 reads of 1,000 skipped longs: no int objects (28 bytes each) made
    assert sum(stat.size_diff for stat in after.compare_to(before, "filename")) < 28 * 1000


# -- against Java, without compiling ----------------------------------------------


@pytest.fixture(scope="module")
def java_pair_answers(java):
    cases = [
        (writer, reader, written(writer, datum)) for _, writer, reader, values in PAIRS for datum in values
    ]
    return java.resolve_each(cases)


# fastavro reads these otherwise than Java and the compiled codec: an int read
# as a float is not rounded to one, defaults come as their JSON (bytes as text,
# logical types unconverted), records of different names are refused, and a
# string goes to a union's bytes branch before its string branch
FASTAVRO_DIFFERS = {
    "int-to-float",
    "fields-added-with-defaults",
    "records-not-name-checked",
    "union-defaults",
    "exact-branch-before-promotion",
    "record-into-union-by-structure",
}


def test_the_resolution_tests_pairs_read_as_java_and_fastavro_read_them(java_pair_answers):
    answers = iter(java_pair_answers)
    for name, writer, reader, values in PAIRS:
        tier0 = ResolvingInterpreter(parse_schema(writer), parse_schema(reader))
        plain = Interpreter(parse_schema(reader))
        for datum in values:
            data = written(writer, datum)
            got = outcome(tier0.load, data)
            assert got[0] == "value", (name, got)
            java_agrees(next(answers), got, plain, writer, reader, data)
            if name not in FASTAVRO_DIFFERS:
                assert got[1] == fastavro_resolved(writer, reader, data), name
            # a stream of values, one at a time
            value, end = tier0.load_one(data + data, len(data))
            assert end == 2 * len(data) and value == got[1]


@pytest.mark.parametrize(
    "name, writer, reader, text, writer_path, reader_path", IMPOSSIBLE, ids=[case[0] for case in IMPOSSIBLE]
)
def test_impossible_pairs_raise_the_compiled_codecs_error(
    name, writer, reader, text, writer_path, reader_path
):
    # the compiled codec's generator refuses the pair
    with pytest.raises(SchemaResolutionError) as compiled:
        generate_resolving_module(parse_schema(writer), parse_schema(reader))
    with pytest.raises(SchemaResolutionError) as raised:
        ResolvingInterpreter(parse_schema(writer), parse_schema(reader))
    error = raised.value
    assert str(error) == str(compiled.value) and text in str(error)
    assert (error.writer_path, error.reader_path) == (writer_path, reader_path)


@settings(
    max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
@given(data=st.data())
def test_random_evolved_pairs_read_as_java_reads(data, java):
    writer, reader = data.draw(schema_pairs(), label="pair")
    assume(has_values(writer))
    note(f"writer {json.dumps(writer)}\nreader {json.dumps(reader)}")
    values = data.draw(st.lists(datums(writer), min_size=1, max_size=5), label="datums")
    encoded = [written(writer, value) for value in values]
    answers = java.resolve_each([(writer, reader, item) for item in encoded])
    try:
        tier0 = ResolvingInterpreter(parse_schema(writer), parse_schema(reader))
    except SchemaResolutionError as error:
        assert not [answer for answer in answers if not isinstance(answer, dict)], (
            f"Java reads what tier 0 refused: {error}"
        )
        # the compiled codec's generator refuses it alike
        with pytest.raises(SchemaResolutionError) as compiled:
            generate_resolving_module(parse_schema(writer), parse_schema(reader))
        assert str(compiled.value) == str(error)
        return
    plain = Interpreter(parse_schema(reader))
    for item, answer in zip(encoded, answers):
        got = outcome(tier0.load, item)
        if java_misreads_a_union_default(reader) and not _java_bug(answer):
            assert got[0] == "value"  # what Java reads here is not the reference
            continue
        java_agrees(answer, got, plain, writer, reader, item)


@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
@given(data=st.data())
def test_random_evolved_pairs_like_the_compiled_codec(data):
    # few examples: each pair that resolves is compiled (the same ones each run, then cached)
    writer, reader = data.draw(schema_pairs(), label="pair")
    assume(has_values(writer))
    note(f"writer {json.dumps(writer)}\nreader {json.dumps(reader)}")
    try:
        generate_resolving_module(parse_schema(writer), parse_schema(reader))
    except SchemaResolutionError:
        with pytest.raises(SchemaResolutionError):
            ResolvingInterpreter(parse_schema(writer), parse_schema(reader))
        return
    compiled, tier0 = both(writer, reader)
    for _ in range(4):
        item = written(writer, data.draw(datums(writer), label="datum"))
        assert_same_outcome(outcome(tier0.load, item), outcome(compiled.load, item))
        for cut in range(len(item)):
            assert_same_outcome(outcome(tier0.load, item[:cut]), outcome(compiled.load, item[:cut]))
        for _ in range(8):
            damaged = data.draw(damaged_bytes(item), label="damaged")
            assert_same_outcome(outcome(tier0.load, damaged), outcome(compiled.load, damaged))


# -- the interface ------------------------------------------------------------------


def test_counts_calls_and_work_and_calls_the_watcher_once():
    writer, reader = parse_schema(REALISTIC_WRITER), parse_schema(REALISTIC_READER)
    tier0 = ResolvingInterpreter(writer, reader)
    data = written(
        REALISTIC_WRITER,
        {
            "id": 1,
            "user": "u",
            "kind": "k",
            "count": 2,
            "score": 0.5,
            "ok": True,
            "tags": ["a"],
            "attrs": {"k": "v"},
            "ref": None,
            "legacy": "gone",
        },
    )
    fired = []
    tier0.watch(3 * len(data), lambda: fired.append(tier0.work))
    tier0.load(data)
    tier0.load_from(b"\x00" + data, 1)
    assert (tier0.calls, tier0.work, fired) == (2, 2 * len(data), [])
    assert tier0.load_one(data + b"\x00", 0)[1] == len(data)
    assert fired == [3 * len(data)]
    tier0.load_block(data * 2, 2)
    assert (tier0.calls, tier0.work, fired) == (4, 5 * len(data), [3 * len(data)])
    with pytest.raises(DecodeError):
        tier0.load(data[:-1])
    assert tier0.calls == 4  # failed calls are not counted, as an Interpreter's
    assert tier0.schema is reader and tier0.writer_schema is writer


def test_takes_parsed_schemas():
    with pytest.raises(TypeError, match="parsed schemas"):
        ResolvingInterpreter(REALISTIC_WRITER, parse_schema(REALISTIC_READER))
    with pytest.raises(TypeError, match="parsed schemas"):
        ResolvingInterpreter(parse_schema(REALISTIC_WRITER), json.dumps(REALISTIC_READER))
    # a pair only reads: writing is the reader schema's own codec's job
    with pytest.raises(TypeError, match="only reads"):
        ResolvingInterpreter(parse_schema("int"), parse_schema("long")).dump(1)
