"""Hostile bytes and values: bounded time and memory, clean errors.

The generic path (fields whose values go through fastavro) has the compiled
path's limits; items that take no bytes are paid for from a per-message
budget; decimals are checked against their precision before conversion;
errors always print.
"""

import io
import time

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from marshmallow import ValidationError, fields

from roastedavro import CompiledSchema, CompileFlags, DecodeError

CHAIN = {"type": "record", "name": "Link",
         "fields": [{"name": "next", "type": ["null", "Link"]}]}


def varint(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


class Empty(CompiledSchema):
    pass


class Generic(CompiledSchema):
    chain = fields.Raw(allow_none=True, metadata={"avro": CHAIN})
    nulls = fields.Raw(metadata={"avro": {"type": "array", "items": "null"}})
    money = fields.Raw(metadata={"avro": {"type": "bytes", "logicalType": "decimal",
                                          "precision": 6, "scale": 2}})
    computed = fields.Function(lambda obj: [[1, 2], [3]],
                               metadata={"avro": {"type": "array",
                                                  "items": {"type": "array", "items": "long"}}})


class ZeroSize(CompiledSchema):
    empties = fields.List(fields.Nested(Empty))
    nulls = fields.List(fields.Constant(None))


class Money(CompiledSchema):
    price = fields.Decimal(places=2, metadata={"precision": 10})
    wide = fields.Decimal(places=4, metadata={"precision": 60})
    fixed = fields.Decimal(metadata={"avro": {"type": "fixed", "name": "money8", "size": 8,
                                              "logicalType": "decimal", "precision": 12,
                                              "scale": 2}})


class Node(CompiledSchema):
    value = fields.Integer()
    next = fields.Nested(lambda: Node(), allow_none=True)


@pytest.fixture(scope="module")
def generic():
    return Generic().compile()


@pytest.fixture(scope="module")
def zero_size():
    return ZeroSize().compile()


@pytest.fixture(scope="module")
def money():
    return Money().compile()


def chain(depth: int):
    value = None
    for _ in range(depth):
        value = {"next": value}
    return value


GOOD = {"chain": chain(3), "nulls": [None] * 4, "money": None}


def good(**change):
    import decimal

    return {**GOOD, "money": decimal.Decimal("12.34"), **change}


def generic_bytes(chain_bytes: bytes, rest: bytes = b"\x00\x02\x04\x00\x00") -> bytes:
    # chain (union branch 1 + the chain), nulls [], money 0, computed []
    return b"\x02" + chain_bytes + rest


# -- the generic path -----------------------------------------------------------

def test_generic_path_round_trips_as_fastavro(generic):
    record = good()
    data = generic.dump_compiled(record)
    avro = fastavro.parse_schema(generic.avro_schema())
    expected = io.BytesIO()
    fastavro.schemaless_writer(expected, avro, {**record, "computed": [[1, 2], [3]]})
    assert data == expected.getvalue()
    assert generic.load_compiled(data)["chain"] == record["chain"]


def test_generic_path_deep_bytes_are_a_decode_error(generic):
    # 100 KB of nested records used to overflow fastavro's C stack
    data = generic_bytes(b"\x02" * 100_000 + b"\x00")
    with pytest.raises(DecodeError, match="nested more than 500 levels") as caught:
        generic.load_compiled(data)
    assert caught.value.offset > 0


def test_generic_path_within_depth_loads(generic):
    data = generic.dump_compiled(good(chain=chain(400)))
    assert generic.load_compiled(data)["chain"] == chain(400)


def test_generic_path_deep_value_is_a_validation_error(generic):
    with pytest.raises(ValidationError) as caught:
        generic.dump_compiled(good(chain=chain(10_000)))
    assert "chain" in caught.value.messages
    assert "max_depth" in str(caught.value)


def test_generic_path_cyclic_value_is_a_validation_error(generic):
    cyclic = {"next": None}
    cyclic["next"] = cyclic
    with pytest.raises(ValidationError, match="contains itself"):
        generic.dump_compiled(good(chain=cyclic))


def test_generic_path_huge_count_of_nulls_is_a_decode_error(generic):
    # 11 bytes that used to ask fastavro for a billion-item list
    data = b"\x00" + varint(10**9) + b"\x00" + b"\x00\x00"
    started = time.perf_counter()
    with pytest.raises(DecodeError, match="limit of 100000000 items|item_allowance"):
        generic.load_compiled(data)
    assert time.perf_counter() - started < 5
    # under max_items, the budget refuses it
    data = b"\x00" + varint(50_000_000) + b"\x00" + b"\x00\x00"
    with pytest.raises(DecodeError, match="item_allowance"):
        generic.load_compiled(data)


def test_generic_path_long_decimal_is_refused_before_conversion(generic):
    # 1 MB of decimal bytes took fastavro minutes; decimal(6, 2) holds 3 bytes
    data = b"\x00\x00" + varint(1_000_000) + b"\x01" * 1_000_000 + b"\x00"
    with pytest.raises(DecodeError, match="more digits than its precision"):
        generic.load_compiled(data)


# -- zero-size items and the per-message budget ----------------------------------

def test_zero_size_items_within_budget_load(zero_size):
    record = {"empties": [{}] * 1000, "nulls": [None] * 1000}
    data = zero_size.dump_compiled(record)
    assert len(data) < 10
    assert zero_size.load_compiled(data) == record


@pytest.mark.parametrize("count", [10**8, 2**62])
def test_zero_size_items_past_budget_are_a_decode_error(zero_size, count):
    data = varint(count) + b"\x00\x00"
    with pytest.raises(DecodeError, match="item_allowance|limit of 100000000 items"):
        zero_size.load_compiled(data)


def test_budget_counts_every_block_and_collection(zero_size):
    # many blocks of 600,000 items each: together past the allowance
    block = varint(600_000)
    with pytest.raises(DecodeError, match="item_allowance"):
        zero_size.load_compiled(block * 2 + b"\x00\x00")
    with pytest.raises(DecodeError, match="item_allowance"):
        zero_size.load_compiled(block + b"\x00" + block + b"\x00")


def test_budget_covers_many_records():
    with pytest.raises(DecodeError, match="item_allowance"):
        Empty().load_compiled(varint(10**8) + b"\x00", many=True)


def test_item_allowance_is_configurable():
    schema = ZeroSize().compile(CompileFlags(item_allowance=10))
    assert schema.load_compiled(b"\x14\x00\x00") == {"empties": [{}] * 10, "nulls": []}
    with pytest.raises(DecodeError, match="item_allowance"):
        schema.load_compiled(b"\x28\x00\x00")


# -- decimals ---------------------------------------------------------------------

def decimal_field(unscaled: int) -> bytes:
    raw = unscaled.to_bytes((abs(unscaled).bit_length() + 8) // 8, "big", signed=True)
    return varint(len(raw)) + raw


def test_decimal_with_more_digits_than_precision_is_a_decode_error(money):
    fixed = (12345).to_bytes(8, "big", signed=True)
    ok = decimal_field(10**10 - 1) + decimal_field(1) + fixed
    assert str(money.load_compiled(ok)["price"]) == "99999999.99"
    for price, wide, fixed_value in ((10**10, 1, 1), (-(10**10), 1, 1), (1, 10**60, 1),
                                     (1, 1, 10**12)):
        data = (decimal_field(price) + decimal_field(wide)
                + fixed_value.to_bytes(8, "big", signed=True))
        with pytest.raises(DecodeError, match=r"more digits than decimal\("):
            money.load_compiled(data)


def test_long_decimal_bytes_are_refused_before_conversion(money):
    data = varint(1_000_000) + b"\x01" * 1_000_000
    started = time.perf_counter()
    with pytest.raises(DecodeError, match="more digits") as caught:
        money.load_compiled(data)
    assert caught.value.offset == 0
    assert time.perf_counter() - started < 5


# -- errors always print ------------------------------------------------------------

def test_deep_and_cyclic_values_give_printable_errors():
    node = Node().compile(CompileFlags(max_depth=10_000))
    deep = None
    for i in range(10_005):
        deep = {"value": i, "next": deep}
    with pytest.raises(ValidationError) as caught:
        node.dump_compiled(deep)
    assert "nested more than 10000 levels" in str(caught.value)
    cyclic = {"value": 1}
    cyclic["next"] = cyclic
    with pytest.raises(ValidationError) as caught:
        node.dump_compiled(cyclic)
    assert "nested more than" in str(caught.value)


def test_non_contiguous_memoryview_is_a_type_error(zero_size):
    data = zero_size.dump_compiled({"empties": [{}], "nulls": []})
    spread = bytearray()
    for byte in data:
        spread += bytes([byte, 0])
    strided = memoryview(bytes(spread))[::2]
    with pytest.raises(TypeError, match="contiguous"):
        zero_size.load_compiled(strided)
    assert zero_size.load_compiled(memoryview(data)) == {"empties": [{}], "nulls": []}


# -- any bytes: a value or a clean error, quickly -------------------------------------

@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=64))
def test_random_bytes_give_a_value_or_a_clean_error(generic, zero_size, data):
    for schema in (generic, zero_size):
        started = time.perf_counter()
        try:
            schema.load_compiled(data)
        except (DecodeError, ValidationError):
            pass
        assert time.perf_counter() - started < 2
