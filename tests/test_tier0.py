"""Tier 0, the interpreter of plain Avro schemas (roastedavro._tier0), against
the compiled AvroCodec and fastavro 1.13.1.

For random schemas (tests/avro_strategies.py) and values of each, the
interpreter writes the compiled codec's bytes (fastavro's) and reads them to
fastavro's values; values the codec refuses it refuses with the same
DatumError; damaged and truncated bytes give the compiled codec's value or its
DecodeError, at the same offset. Hostile bytes (huge counts, deep nesting,
zero-size items past the budget) and max_depth on both paths are checked
against the compiled codec too.

Compiling a schema costs about a second: the compiled codecs are few and
shared; the interpreter (built in milliseconds) also runs on many more schemas
against fastavro alone.
"""

from __future__ import annotations

import io
import json
import struct

import fastavro
import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from avro_strategies import as_read, assert_same, avro_schemas, datums, in_tuple_notation
from roastedavro import AvroCodec
from roastedavro._tier0 import Interpreter, ResolvingInterpreter
from roastedavro.avro import parse_schema
from roastedavro.errors import DatumError, DecodeError
from roastedavro.flags import CompileFlags
from fuzzing import examples

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

COMPILING = settings(
    max_examples=examples(40),
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
DATUMS_PER_SCHEMA = 10

_codecs: dict = {}


def pair(schema, flags: CompileFlags | None = None):
    """The compiled codec object of a schema and its interpreter (each once)."""
    key = (json.dumps(schema, sort_keys=True), flags)
    if key not in _codecs:
        codec = AvroCodec(schema, flags)
        _codecs[key] = (codec._codec, Interpreter(codec.schema, codec.flags))
    return _codecs[key]


def fastavro_write(parsed, datum) -> bytes:
    out = io.BytesIO()
    try:
        fastavro.schemaless_writer(out, parsed, datum)
    except ValueError:
        # a "-type" mark inside another union's value, which fastavro's
        # validation does not know: the same branches in its tuple notation
        if in_tuple_notation(datum) == datum:
            raise
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, in_tuple_notation(datum))
    return out.getvalue()


def fastavro_read(parsed, data: bytes):
    return fastavro.schemaless_reader(io.BytesIO(data), parsed, None)


def outcome(call, *args):
    """What a call returns, or the type and text of the error it raises."""
    try:
        return "value", call(*args)
    except (DatumError, DecodeError) as error:
        offset = getattr(error, "offset", None)
        return type(error).__name__, str(error), offset


def assert_same_outcome(tier0, compiled):
    assert tier0[0] == compiled[0], (tier0, compiled)
    if tier0[0] == "value":
        assert_same(tier0[1], compiled[1])
    else:
        assert tier0 == compiled


# ---------------------------------------------------------------------------
# values that are not the schema's: a part of a valid datum replaced
# ---------------------------------------------------------------------------

_WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**31 - 2, max_value=2**64),
    st.floats(),
    st.text(max_size=3),
    st.binary(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.tuples(st.text(max_size=3)),
    st.just(object()),
)


@st.composite
def damaged_datums(draw, datum):
    """``datum`` with one value inside it (or itself) replaced by another."""
    if isinstance(datum, dict) and datum and draw(st.integers(0, 3)):
        key = draw(st.sampled_from(sorted(datum, key=repr)))
        copy = dict(datum)
        if draw(st.integers(0, 4)) == 0:
            del copy[key]
        else:
            copy[key] = draw(damaged_datums(datum[key]))
        return copy
    if isinstance(datum, list) and datum and draw(st.integers(0, 3)):
        at = draw(st.integers(0, len(datum) - 1))
        copy = list(datum)
        copy[at] = draw(damaged_datums(datum[at]))
        return copy
    return draw(_WRONG)


@st.composite
def damaged_bytes(draw, data: bytes) -> bytes:
    """Bytes changed in one place: replaced, flipped, inserted, removed, appended."""
    kinds = ["append", "insert"] + (["replace", "flip", "remove"] if data else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "append":
        return data + draw(st.binary(min_size=1, max_size=4))
    at = draw(st.integers(0, len(data) - (kind != "insert")))
    if kind == "insert":
        return data[:at] + draw(st.binary(min_size=1, max_size=2)) + data[at:]
    if kind == "remove":
        return data[:at] + data[at + 1 :]
    if kind == "flip":
        return data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1 :]
    return data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1 :]


# ---------------------------------------------------------------------------
# against fastavro alone: many schemas (no compiling)
# ---------------------------------------------------------------------------


@settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_random_schemas_dump_and_load_like_fastavro(data):
    schema = data.draw(avro_schemas(), label="schema")
    parsed = fastavro.parse_schema(schema)
    interpreter = Interpreter(parse_schema(schema))
    for _ in range(10):
        datum = data.draw(datums(schema), label="datum")
        expected = fastavro_write(parsed, datum)
        assert interpreter.dump(datum) == expected
        loaded = interpreter.load(expected)
        assert_same(loaded, fastavro_read(parsed, expected))
        assert_same(loaded, as_read(datum))
        # a strict prefix of an encoding is never one (damaged bytes are
        # compared with the compiled codec below: fastavro rounds decimals
        # beyond their precision, which both read exactly)
        for cut in range(len(expected)):
            with pytest.raises(DecodeError):
                interpreter.load(expected[:cut])


# ---------------------------------------------------------------------------
# against the compiled codec: the same bytes, values and errors
# ---------------------------------------------------------------------------


@pytest.mark.fuzz
@COMPILING
@given(data=st.data())
def test_random_schemas_like_the_compiled_codec(data):
    schema = data.draw(avro_schemas(), label="schema")
    note(f"schema: {json.dumps(schema)}")
    compiled, interpreter = pair(schema)
    parsed = fastavro.parse_schema(schema)
    for _ in range(DATUMS_PER_SCHEMA):
        datum = data.draw(datums(schema), label="datum")
        encoded = interpreter.dump(datum)
        assert encoded == compiled.dump(datum) == fastavro_write(parsed, datum)
        loaded = interpreter.load(encoded)
        assert_same(loaded, compiled.load(encoded))
        assert_same(loaded, fastavro_read(parsed, encoded))
        # the other entry points
        prefixed = interpreter.dump_prefixed(b"\xc3\x01header", datum)
        assert prefixed == compiled.dump_prefixed(b"\xc3\x01header", datum)
        assert_same(interpreter.load_from(prefixed, 8), loaded)
        value, end = interpreter.load_one(encoded + b"\x01\x02", 0)
        assert end == len(encoded)
        assert_same(value, loaded)
        assert interpreter.dump_block([datum, datum]) == compiled.dump_block([datum, datum])
        assert_same(interpreter.load_block(encoded * 3, 3), compiled.load_block(encoded * 3, 3))
        # values the codec refuses: the same error, naming the same path
        wrong = data.draw(damaged_datums(datum), label="wrong datum")
        assert_same_outcome(outcome(interpreter.dump, wrong), outcome(compiled.dump, wrong))
        # damaged bytes: the same value, or the same DecodeError at the same offset
        for cut in range(len(encoded)):
            assert_same_outcome(
                outcome(interpreter.load, encoded[:cut]), outcome(compiled.load, encoded[:cut])
            )
        for _ in range(5):
            damaged = data.draw(damaged_bytes(encoded), label="damaged")
            assert_same_outcome(outcome(interpreter.load, damaged), outcome(compiled.load, damaged))


NULLABLE_INT = ["null", "int"]
AMBIGUOUS = {
    "type": "record",
    "name": "Ambiguous",
    "namespace": "u",
    "fields": [
        {
            "name": "records",
            "type": [
                "null",
                {"type": "record", "name": "A", "fields": [{"name": "x", "type": NULLABLE_INT}]},
                {
                    "type": "record",
                    "name": "B",
                    "namespace": "v",
                    "fields": [
                        {"name": "x", "type": NULLABLE_INT},
                        {"name": "y", "type": ["null", "string"]},
                    ],
                },
                {"type": "record", "name": "Empty", "fields": []},
            ],
        },
        {
            "name": "map_or_record",
            "type": [
                {"type": "map", "values": NULLABLE_INT},
                {"type": "record", "name": "C", "fields": [{"name": "x", "type": NULLABLE_INT}]},
            ],
        },
        {"name": "numbers", "type": ["int", "long", "float", "double"]},
        {"name": "float_first", "type": ["float", "string", "double"]},
        {"name": "text", "type": ["string", {"type": "enum", "name": "E", "symbols": ["A", "B"]}]},
        {
            "name": "symbols",
            "type": [
                {"type": "enum", "name": "E1", "symbols": ["A", "B"]},
                {"type": "enum", "name": "E2", "symbols": ["B", "C"]},
            ],
        },
        {"name": "raw", "type": ["bytes", {"type": "fixed", "name": "F4", "size": 4}]},
        {
            "name": "fixed",
            "type": [
                {"type": "fixed", "name": "G4", "size": 4},
                {"type": "fixed", "name": "H4", "size": 4},
                {"type": "fixed", "name": "Two", "size": 2},
            ],
        },
        {"name": "dates", "type": [{"type": "int", "logicalType": "date"}, "long", "string"]},
        {"name": "times", "type": [{"type": "long", "logicalType": "timestamp-micros"}, "int"]},
        {
            "name": "decimals",
            "type": [
                {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2},
                {
                    "type": "fixed",
                    "name": "D8",
                    "size": 8,
                    "logicalType": "decimal",
                    "precision": 10,
                    "scale": 2,
                },
            ],
        },
        {"name": "uuid_or_bytes", "type": [{"type": "string", "logicalType": "uuid"}, "bytes"]},
    ],
}


@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(datum=datums(AMBIGUOUS))
def test_unions_the_value_decides_like_the_compiled_codec(datum):
    compiled, interpreter = pair(AMBIGUOUS)
    encoded = interpreter.dump(datum)
    assert encoded == compiled.dump(datum) == fastavro_write(fastavro.parse_schema(AMBIGUOUS), datum)
    assert_same(interpreter.load(encoded), compiled.load(encoded))


@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_wrong_values_in_unions_the_value_decides_like_the_compiled_codec(data):
    compiled, interpreter = pair(AMBIGUOUS)
    wrong = data.draw(damaged_datums(data.draw(datums(AMBIGUOUS))))
    assert_same_outcome(outcome(interpreter.dump, wrong), outcome(compiled.dump, wrong))


# ---------------------------------------------------------------------------
# hostile bytes and bounds
# ---------------------------------------------------------------------------

NODE = {
    "type": "record",
    "name": "Node",
    "fields": [
        {"name": "value", "type": "long"},
        {"name": "next", "type": ["null", "Node"]},
        {"name": "children", "type": {"type": "array", "items": "Node"}},
    ],
}
ZEROS = {
    "type": "record",
    "name": "Zeros",
    "fields": [
        {"name": "nulls", "type": {"type": "array", "items": "null"}},
        {
            "name": "empties",
            "type": {"type": "map", "values": {"type": "record", "name": "Empty", "fields": []}},
        },
    ],
}
SMALL = CompileFlags(max_depth=20, item_allowance=100, max_items=1000)


def chain(depth: int) -> dict:
    value = {"value": 0, "next": None, "children": []}
    for _ in range(depth):
        value = {"value": 0, "next": value, "children": []}
    return value


def chain_bytes(depth: int) -> bytes:
    # each level: value 0, branch 1 (the next Node), ..., no children; the
    # innermost: value 0, null, no children
    return b"\x00\x02" * depth + b"\x00\x00\x00" + b"\x00" * depth


def same_error(schema, flags, call, *args):
    compiled, interpreter = pair(schema, flags)
    tier0 = outcome(getattr(interpreter, call), *args)
    expected = outcome(getattr(compiled, call), *args)
    assert tier0 == expected, (tier0, expected)
    return tier0


@pytest.mark.parametrize("flags", [None, SMALL])
def test_max_depth_is_honoured_on_dump_like_the_compiled_codec(flags):
    depth = (flags or CompileFlags()).max_depth
    assert same_error(NODE, flags, "dump", chain(depth))[0] == "value"
    error = same_error(NODE, flags, "dump", chain(depth + 1))
    assert error[0] == "DatumError" and "max_depth" in error[1]


@pytest.mark.parametrize("flags", [None, SMALL])
def test_max_depth_is_honoured_on_load_like_the_compiled_codec(flags):
    depth = (flags or CompileFlags()).max_depth
    _, interpreter = pair(NODE, flags)
    assert interpreter.load(chain_bytes(depth)) == interpreter.load(interpreter.dump(chain(depth)))
    error = same_error(NODE, flags, "load", chain_bytes(depth + 1))
    assert error[0] in DECODE_ERRORS and "max_depth" in error[1]


# a union of records: the dict's branch is chosen by validating it, which
# recurses into the value before it is written
TREE = {
    "type": "record",
    "name": "Tree",
    "fields": [
        {
            "name": "up",
            "type": [
                "null",
                "Tree",
                {"type": "record", "name": "Leaf", "fields": [{"name": "label", "type": "string"}]},
                {"type": "map", "values": "long"},
            ],
        }
    ],
}


def tree(depth: int) -> dict:
    value = {"up": {"label": "leaf"}}
    for _ in range(depth):
        value = {"up": value}
    return value


@pytest.mark.parametrize("flags", [None, SMALL])
@pytest.mark.parametrize("extra", [-1, 0, 1, 2])
def test_max_depth_while_choosing_a_union_branch_like_the_compiled_codec(flags, extra):
    depth = (flags or CompileFlags()).max_depth
    tier0 = same_error(TREE, flags, "dump", tree(depth + extra))
    if tier0[0] == "value":
        assert_same(pair(TREE, flags)[1].load(tier0[1]), tree(depth + extra))
    else:
        assert "max_depth" in tier0[1]
    if extra > 0:
        assert tier0[0] == "DatumError"


def test_a_value_that_contains_itself_is_a_datum_error():
    value = {"value": 1, "next": None, "children": []}
    value["children"].append(value)
    error = same_error(NODE, None, "dump", value)
    assert error[0] == "DatumError"
    value = {"up": None}
    value["up"] = value
    assert same_error(TREE, None, "dump", value)[0] == "DatumError"


def test_deep_bytes_beyond_the_stack_are_a_decode_error():
    flags = CompileFlags(max_depth=10_000)
    error = same_error(NODE, flags, "load", chain_bytes(10_001))
    assert error[0] in DECODE_ERRORS


@pytest.mark.parametrize(
    "data",
    [
        b"\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # 2**63 - 1 children
        b"\x00\x00\x80\x80\x80\x80\x10\x00",  # 2**31 children, no bytes for them
        b"\x00\x00\x01\x00\x00\x00",  # a block of -1 with a size, then one
        b"\x00\x00\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02",  # a size that overflows
        b"\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00",  # a child cut short
        b"\x00\x04",  # a branch past the union's
        b"\x00\x02\x00",  # truncated inside the branch
    ],
)
def test_hostile_counts_and_branches_like_the_compiled_codec(data):
    assert same_error(NODE, None, "load", data)[0] in DECODE_ERRORS


def _long(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@pytest.mark.parametrize("flags", [None, SMALL])
@pytest.mark.parametrize("count", [10, 99, 100, 101, 1_000_001, 2**40])
@pytest.mark.parametrize("where", ["nulls", "empties", "both"])
def test_zero_size_items_past_the_allowance_like_the_compiled_codec(flags, count, where):
    nulls = _long(count) + b"\x00" if where in ("nulls", "both") else b"\x00"
    entries = _long(count) + b"\x02k" * min(count, 200) + b"\x00" if where != "nulls" else b"\x00"
    result = same_error(ZEROS, flags, "load", nulls + entries)
    allowance = (flags or CompileFlags()).item_allowance
    if count > allowance + 200 * 2 + 4:
        assert result[0] in DECODE_ERRORS


def test_load_block_budget_and_errors_like_the_compiled_codec():
    compiled, interpreter = pair(ZEROS, SMALL)
    data = b"\x14\x00\x00" * 3  # three records: ten nulls, no entries
    for count in (-1, 0, 1, 2, 3, 4, 1000):
        for allowance in (0, 5, 100):
            tier0 = outcome(interpreter.load_block_within, data, count, allowance)
            expected = outcome(compiled.load_block_within, data, count, allowance)
            assert tier0 == expected


@pytest.mark.parametrize("data,start", [(b"\x00\x00\x00\x00", 5), (b"", 0), (b"\x02", -1)])
def test_load_from_a_start_outside_the_data(data, start):
    assert same_error(NODE, None, "load_from", data, start)[0] in DECODE_ERRORS
    assert same_error(NODE, None, "load_one", data, start)[0] in DECODE_ERRORS


@settings(
    max_examples=3,
    deadline=None,
    database=None,
    phases=[Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(values=st.lists(datums(AMBIGUOUS), min_size=40, max_size=40))
def test_threads_sharing_an_interpreter_get_the_compiled_codecs_results(values):
    import threading

    compiled, interpreter = pair(AMBIGUOUS)
    expected = [compiled.dump(value) for value in values]
    failures = []

    def work():
        for _ in range(50):
            for value, encoded in zip(values, expected):
                if interpreter.dump(value) != encoded:
                    failures.append(("dump", value))
                try:
                    assert_same(interpreter.load(encoded), compiled.load(encoded))
                except AssertionError as error:  # NaN compares unequal: assert_same
                    failures.append(("load", encoded, error))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


def test_an_interpreter_takes_a_parsed_schema():
    with pytest.raises(TypeError, match="parsed schema"):
        Interpreter({"type": "long"})
    assert Interpreter(parse_schema({"type": "long"})).load(b"\x03") == -2


# a record wider than one generated function (codegen.FIELDS_PER_FUNCTION)
WIDE = {
    "type": "record",
    "name": "Wide",
    "fields": [
        {
            "name": f"f{number}",
            "type": ["long", ["null", "string"], "double", {"type": "array", "items": "int"}][number % 4],
            **({"default": None} if number % 4 == 1 else {}),
        }
        for number in range(130)
    ],
}


@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_wide_records_like_the_compiled_codec(data):
    compiled, interpreter = pair(WIDE)
    datum = data.draw(datums(WIDE))
    if data.draw(st.booleans()):  # the fields in another order
        datum = dict(data.draw(st.permutations(list(datum.items()))))
    encoded = interpreter.dump(datum)
    assert encoded == compiled.dump(datum)
    assert_same(interpreter.load(encoded), compiled.load(encoded))
    wrong = data.draw(damaged_datums(datum))
    assert_same_outcome(outcome(interpreter.dump, wrong), outcome(compiled.dump, wrong))


@pytest.mark.parametrize("data", [b"\x01\x00", b"\xff\xff", b"\x00\x09", b"\x00"])
def test_decimals_beyond_their_precision_read_as_the_compiled_codec_reads_them(data):
    # exactly, as Java does (fastavro rounds them to the precision)
    schema = {
        "type": "fixed",
        "name": "Small",
        "size": 2,
        "logicalType": "decimal",
        "precision": 1,
        "scale": 0,
    }
    compiled, interpreter = pair(schema)
    assert_same_outcome(outcome(interpreter.load, data), outcome(compiled.load, data))


def test_a_wide_records_plain_fields_share_their_nodes_and_unions_their_dispatch():
    # the program's size (what building it costs) follows the distinct types,
    # not the fields: a plain primitive's node and an equal union's dispatch
    # are shared; the values are fastavro's all the same
    from roastedavro._tier0 import _Program

    kinds = [
        "int",
        "string",
        "double",
        ["null", "string"],
        ["null", "long"],
        {"type": "long", "logicalType": "timestamp-millis"},
    ]
    schema = {
        "type": "record",
        "name": "Wide",
        "fields": [{"name": f"f{number}", "type": kinds[number % len(kinds)]} for number in range(120)],
    }
    program = _Program(parse_schema(schema))
    # the record, its 3 plain types as fields (double: lenient), the unions'
    # null and long (their string is the fields'), a timestamp and a union per use
    assert len(program.nodes) == 1 + 3 + 2 + 20 + 40
    assert len(program.unions) == 2
    datum = {
        f"f{number}": [7, "s", 1.5, None, 5, 1_700_000_000_000][number % len(kinds)] for number in range(120)
    }
    datum = {
        key: (None if number % 2 else "t") if number % len(kinds) == 3 else value
        for number, (key, value) in enumerate(datum.items())
    }
    encoded = io.BytesIO()
    fastavro.schemaless_writer(encoded, fastavro.parse_schema(schema), datum)
    interpreter = Interpreter(parse_schema(schema))
    assert interpreter.dump(datum) == encoded.getvalue()
    assert_same(
        interpreter.load(encoded.getvalue()),
        fastavro.schemaless_reader(io.BytesIO(encoded.getvalue()), fastavro.parse_schema(schema)),
    )


def test_a_small_thread_stack_takes_records_nested_700_levels_deep():
    # each union level is handled in its record's frames (no frame of its own),
    # and a record's writer has no try block (a failing field's name is added
    # by a function of its own): on a 256 KiB thread stack tier 0 writes and
    # reads past the default max_depth (dump ran out at 383 levels, then 607;
    # load at 703)
    import threading

    from thread_stacks import current_stack_size

    schema = {
        "type": "record",
        "name": "Link",
        "fields": [{"name": "v", "type": "int"}, {"name": "next", "type": ["null", "Link"]}],
    }
    interpreter = Interpreter(parse_schema(schema), CompileFlags(max_depth=10_000))
    datum = None
    for number in range(700):
        datum = {"v": 0, "next": datum}
    data = b"\x00\x02" * 699 + b"\x00\x00"
    got, results = [], []

    def run():
        got.append(current_stack_size())
        for call in (lambda: interpreter.dump(datum), lambda: interpreter.load(data)):
            try:
                results.append(call())
            except (DatumError, DecodeError) as error:
                results.append(error)

    size = threading.stack_size(256 * 1024)
    try:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(size)
    if got[0] is not None and got[0] > 256 * 1024:
        pytest.skip(f"the thread was given a cached stack of {got[0]} bytes, not 256 KiB")
    assert results[0] == data
    assert results[1] == datum
    # through arrays (a list's writer has no try block either): 319 levels before
    tree = Interpreter(
        parse_schema(
            {
                "type": "record",
                "name": "Tree",
                "fields": [{"name": "kids", "type": {"type": "array", "items": "Tree"}}],
            }
        ),
        CompileFlags(max_depth=10_000),
    )
    value = {"kids": []}
    for _ in range(399):
        value = {"kids": [value]}
    written = []
    thread = threading.Thread(target=lambda: written.append(tree.dump(value)))
    size = threading.stack_size(256 * 1024)
    try:
        thread.start()
        thread.join()
    finally:
        threading.stack_size(size)
    assert written and tree.load(written[0]) == value


@settings(
    max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
@given(avro_schemas(max_depth=4))
def test_the_programs_min_sizes_are_the_generators(schema):
    # tier 0 computes each record's fewest bytes once, after the records it
    # holds (avrogen's settle by iteration): the same figures, so item counts
    # are refused at the same counts as the compiled codec's
    from roastedavro import avrogen
    from roastedavro._tier0 import _Sizes

    model = parse_schema(schema)
    theirs, ours = avrogen._MinSizes(model), _Sizes(model)
    assert ours.records == theirs.records
    for avro in model.walk():
        assert ours.of(avro) == theirs.of(avro)


def test_branches_reads_each_union_value_with_the_branch_it_was_written_in():
    # the union index is the datum's first byte (zig-zagged): read back as written
    union = ["null", "string", "int", "long", {"type": "array", "items": ["float", "double"]}]
    schema = parse_schema({"type": "record", "name": "B", "fields": [{"name": "u", "type": union}]})
    cases = [
        (b"\x00", (0, None)),
        (b"\x02\x02x", (1, "x")),
        (b"\x04\x0a", (2, 5)),
        (b"\x06\x0a", (3, 5)),
        (b"\x08\x02\x02" + struct.pack("<d", 1.5) + b"\x00", (4, [(1, 1.5)])),
    ]
    reader = Interpreter(schema, branches=True)
    for data, value in cases:
        assert reader.load(data) == {"u": value}
    # a null and one type: the value says its branch, as without the option
    nullable = parse_schema(
        {"type": "record", "name": "N", "fields": [{"name": "n", "type": ["null", "long"]}]}
    )
    assert Interpreter(nullable, branches=True).load(b"\x02\x0a") == {"n": 5}
    # resolution: the reader's branch the writer's is read as
    reversed_union = parse_schema(
        {"type": "record", "name": "B", "fields": [{"name": "u", "type": ["long", "int", "string", "null"]}]}
    )
    resolving = ResolvingInterpreter(schema, reversed_union, branches=True)
    assert resolving.load(b"\x06\x0a") == {"u": (0, 5)}
    assert resolving.load(b"\x04\x0a") == {"u": (1, 5)}
    assert resolving.load(b"\x00") == {"u": (3, None)}
    with pytest.raises(ValueError, match="not both"):
        Interpreter(schema, naming=(True, False, False, False), branches=True)
