"""Property tests of AvroCodec against fastavro 1.13.1, on random schemas.

For random valid schemas (tests/avro_strategies.py) and random values of
each:

1. ``AvroCodec(schema).dump(datum)`` is byte for byte what
   ``fastavro.schemaless_writer`` writes;
2. ``AvroCodec.load`` of those bytes is what ``fastavro.schemaless_reader``
   returns, compared strictly (types, key order, decimal exponents, time
   zones, NaN, -0.0);
3. damaged bytes never crash the decoder (see
   :func:`check_damaged_bytes` for the exact claim).

The strategies themselves are checked against fastavro alone first (every
drawn value reads back as drawn), so a failure of 1-3 is AvroCodec's.

Compiling a schema costs seconds, so these tests draw few schemas and many
values for each, and do not shrink.
"""

from __future__ import annotations

import decimal
import io
import json

import fastavro
import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from avro_strategies import as_read, assert_same, avro_schemas, datums
from roastedavro.errors import DecodeError
from fuzzing import examples

try:
    from roastedavro import AvroCodec
except ImportError:  # being written alongside
    AvroCodec = None

needs_codec = pytest.mark.skipif(AvroCodec is None, reason="AvroCodec not available yet")

# No shrinking: each shrink step could compile another schema. A failure
# shows the schema and the values drawn (note()).
COMPILING = settings(
    max_examples=examples(15),
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
DATUMS_PER_SCHEMA = 20

_codecs: dict[str, object] = {}


def codec_for(schema):
    key = json.dumps(schema, sort_keys=True)
    if key not in _codecs:
        _codecs[key] = AvroCodec(schema)
    return _codecs[key]


def fastavro_write(parsed, datum) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, datum)
    return out.getvalue()


# fastavro rounds a decimal with more digits than its precision (its context's
# precision is the schema's); AvroCodec reads the exact value, as Java does. For
# damaged bytes the oracle is fastavro reading the same bytes with an exact
# conversion of this test's own under a logical type name of its own.
_EXACT = "test-exact-decimal"


def _exact_decimal(data, writer_schema, reader_schema):
    unscaled = int.from_bytes(data, "big", signed=True)
    context = decimal.Context(prec=len(str(abs(unscaled))) + 1)
    return decimal.Decimal(unscaled).scaleb(-writer_schema.get("scale", 0), context)


fastavro.read.LOGICAL_READERS[f"bytes-{_EXACT}"] = _exact_decimal
fastavro.read.LOGICAL_READERS[f"fixed-{_EXACT}"] = _exact_decimal


def exact_decimals(schema):
    """A copy of a schema (JSON form) whose decimals fastavro reads exactly."""
    if isinstance(schema, list):
        return [exact_decimals(branch) for branch in schema]
    if not isinstance(schema, dict):
        return schema
    copy = {
        key: exact_decimals(value) if key in ("type", "items", "values") else value
        for key, value in schema.items()
    }
    if "fields" in schema:
        copy["fields"] = [dict(field, type=exact_decimals(field["type"])) for field in schema["fields"]]
    if schema.get("logicalType") == "decimal" and schema.get("type") in ("bytes", "fixed"):
        copy["logicalType"] = _EXACT
    return copy


def fastavro_read(parsed, data: bytes):
    """fastavro's value, and whether it read every byte (it ignores the rest)."""
    buffer = io.BytesIO(data)
    value = fastavro.schemaless_reader(buffer, parsed, None)
    return value, buffer.tell() == len(data)


# ---------------------------------------------------------------------------
# the strategies against fastavro alone (no compiling: many schemas)
# ---------------------------------------------------------------------------


@settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_drawn_values_read_back_through_fastavro(data):
    schema = data.draw(avro_schemas(), label="schema")
    parsed = fastavro.parse_schema(schema)
    for _ in range(10):
        datum = data.draw(datums(schema), label="datum")
        value, whole = fastavro_read(parsed, fastavro_write(parsed, datum))
        assert whole
        assert_same(value, as_read(datum))


# ---------------------------------------------------------------------------
# AvroCodec against fastavro
# ---------------------------------------------------------------------------


def check_datum(codec, parsed, datum) -> bytes:
    expected = fastavro_write(parsed, datum)
    assert codec.dump(datum) == expected, datum
    loaded = codec.load(expected)
    assert_same(loaded, fastavro_read(parsed, expected)[0])
    assert_same(loaded, as_read(datum))
    return expected


@needs_codec
@pytest.mark.fuzz
@COMPILING
@given(data=st.data())
def test_random_schemas_dump_and_load_like_fastavro(data):
    schema = data.draw(avro_schemas(), label="schema")
    note(f"schema: {json.dumps(schema)}")
    codec, parsed = codec_for(schema), fastavro.parse_schema(schema)
    for _ in range(DATUMS_PER_SCHEMA):
        check_datum(codec, parsed, data.draw(datums(schema), label="datum"))


def check_damaged_bytes(codec, parsed, data: bytes, damaged: bytes) -> None:
    """What ``load`` may do with bytes that are not (or may not be) an encoding:

    - raise DecodeError (any other exception is a crash), or
    - return a value; then fastavro reads the same bytes, all of them, to the
      same value (strictly equal).

    The decoder may refuse bytes fastavro reads (it is stricter: trailing
    bytes, booleans other than 0 and 1, invalid UTF-8, enum indexes out of
    range...), never the other way round with a different value. Decimals
    beyond their precision are read exactly (``parsed`` reads them so).
    """
    try:
        value = codec.load(damaged)
    except DecodeError:
        return
    expected, whole = fastavro_read(parsed, damaged)
    assert whole, f"load read {damaged!r} (from {data!r}), fastavro leaves bytes over"
    assert_same(value, expected)


@st.composite
def damage(draw, data: bytes) -> bytes:
    """Bytes changed in one place: a byte replaced or flipped, inserted, removed, or bytes appended."""
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


@needs_codec
@pytest.mark.fuzz
@settings(COMPILING, max_examples=examples(8))
@given(data=st.data())
def test_truncated_and_damaged_bytes_are_decode_errors_or_read_like_fastavro(data):
    schema = data.draw(avro_schemas(), label="schema")
    note(f"schema: {json.dumps(schema)}")
    codec, parsed = codec_for(schema), fastavro.parse_schema(schema)
    exact = fastavro.parse_schema(exact_decimals(schema))
    for _ in range(5):
        encoded = fastavro_write(parsed, data.draw(datums(schema), label="datum"))
        # a strict prefix of an encoding is never an encoding: decoding it
        # follows the same path as the whole and runs out of bytes
        for cut in range(len(encoded)):
            with pytest.raises(DecodeError):
                codec.load(encoded[:cut])
        for _ in range(10):
            check_damaged_bytes(codec, exact, encoded, data.draw(damage(encoded), label="damaged"))


# ---------------------------------------------------------------------------
# unions where the type of a value alone does not decide the branch
# ---------------------------------------------------------------------------

NULLABLE_INT = ["null", "int"]
AMBIGUOUS = {
    "type": "record",
    "name": "Ambiguous",
    "namespace": "u",
    "fields": [
        # records sharing field names: fastavro takes the one sharing most
        # keys with the dict; datums marks the others with tuples or "-type"
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
        # a map before a record: a dict goes to the map when its values fit
        {
            "name": "map_or_record",
            "type": [
                {"type": "map", "values": NULLABLE_INT},
                {"type": "record", "name": "C", "fields": [{"name": "x", "type": NULLABLE_INT}]},
            ],
        },
        # every number type: ints go to int (long beyond 32 bits), floats to double
        {"name": "numbers", "type": ["int", "long", "float", "double"]},
        {"name": "float_first", "type": ["float", "string", "double"]},
        # strings and enum symbols; bytes and fixed of one size
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
        # logical types sharing an underlying type with a plain branch
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


@pytest.fixture(scope="module")
def ambiguous():
    if AvroCodec is None:
        pytest.skip("AvroCodec not available yet")
    return AvroCodec(AMBIGUOUS), fastavro.parse_schema(AMBIGUOUS)


@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(datum=datums(AMBIGUOUS))
def test_ambiguous_unions_like_fastavro(ambiguous, datum):
    codec, parsed = ambiguous
    check_datum(codec, parsed, datum)
