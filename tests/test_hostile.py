"""Hostile bytes and values: bounded time and memory, clean errors.

The generic path (fields whose values go through fastavro) has the compiled
path's limits; items that take no bytes are paid for from a per-message
budget; decimals are checked against their precision before conversion;
errors always print.
"""

import collections
import collections.abc
import decimal
import io
import random
import struct
import threading
import time

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from marshmallow import ValidationError, fields, post_dump

from roastedavro import CompiledSchema, CompileFlags, DecodeError
from roastedavro._runtime import GenericType, check_generic
from roastedavro._support import _decimal_of_int, decimal_from_bytes

CHAIN = {"type": "record", "name": "Link", "fields": [{"name": "next", "type": ["null", "Link"]}]}


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
    money = fields.Raw(
        metadata={"avro": {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2}}
    )
    computed = fields.Function(
        lambda obj: [[1, 2], [3]],
        metadata={"avro": {"type": "array", "items": {"type": "array", "items": "long"}}},
    )


class ZeroSize(CompiledSchema):
    empties = fields.List(fields.Nested(Empty))
    nulls = fields.List(fields.Constant(None))


class Money(CompiledSchema):
    price = fields.Decimal(places=2, metadata={"precision": 10})
    wide = fields.Decimal(places=4, metadata={"precision": 60})
    fixed = fields.Decimal(
        metadata={
            "avro": {
                "type": "fixed",
                "name": "money8",
                "size": 8,
                "logicalType": "decimal",
                "precision": 12,
                "scale": 2,
            }
        }
    )


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


def links(value) -> int:
    """How many records a chain holds (counted without recursion)."""
    count = 0
    while value is not None:
        value, count = value["next"], count + 1
    return count


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
    started = time.perf_counter()
    with pytest.raises(DecodeError, match=r"more digits than decimal\(6, 2\)") as caught:
        generic.load_compiled(data)
    assert caught.value.offset == 2
    assert time.perf_counter() - started < 1


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
    for price, wide, fixed_value in ((10**10, 1, 1), (-(10**10), 1, 1), (1, 10**60, 1), (1, 1, 10**12)):
        data = decimal_field(price) + decimal_field(wide) + fixed_value.to_bytes(8, "big", signed=True)
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


# -- the generic path: the C stack, any container, every check --------------------


def test_generic_path_depth_is_bounded_by_the_c_stack():
    # max_depth may be 10,000. A declared type is compiled code now, whose
    # record functions need little stack: 9,000 levels work on the main
    # thread. Where a thread's stack has less room (1 MB), the limit is
    # lowered to what it holds: a clean error, never an overflow.
    class Deep(CompiledSchema):
        chain = fields.Raw(metadata={"avro": CHAIN})

    deep = Deep().compile(CompileFlags(max_depth=10_000))
    encoded = b"\x02" * 9_000 + b"\x00"
    outcomes = []

    def run(must_succeed):
        for attempt in ("load", "dump"):
            try:
                if attempt == "load":
                    assert links(deep.load_compiled(encoded)["chain"]) == 9_001
                else:
                    assert deep.dump_compiled({"chain": chain(9_001)}) == encoded
                outcomes.append(f"{attempt} ok")
            except (DecodeError, ValidationError) as error:
                assert not must_succeed and "C stack has room for" in str(error), error
                outcomes.append(f"{attempt} refused")
        data = deep.dump_compiled({"chain": chain(100)})
        assert deep.load_compiled(data) == {"chain": chain(100)}

    run(must_succeed=True)
    threading.stack_size(1 << 20)
    try:
        thread = threading.Thread(target=run, args=(False,))
        thread.start()
        thread.join()
    finally:
        threading.stack_size(0)
    assert outcomes[:2] == ["load ok", "dump ok"] and len(outcomes) == 4


class Items(collections.abc.Sequence):
    """A user sequence: fastavro writes it as an array."""

    def __init__(self, *items):
        self.items = list(items)

    def __getitem__(self, index):
        return self.items[index]

    def __len__(self):
        return len(self.items)


TREE = {
    "type": "record",
    "name": "Tree",
    "fields": [{"name": "children", "type": {"type": "array", "items": "Tree"}}],
}


class Forest(CompiledSchema):
    tree = fields.Raw(metadata={"avro": TREE})


def fastavro_of(schema, record):
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema.avro_schema()), record)
    return out.getvalue()


def test_generic_path_checks_any_container_on_dump(generic):
    # OrderedDict, user sequences: fastavro recurses into them as into dicts
    # and lists (an OrderedDict chain used to overflow the C stack)
    ordered = None
    for _ in range(10_000):
        ordered = collections.OrderedDict(next=ordered)
    # a mapping that is not a dict is checked against the union in Python
    with pytest.raises(ValidationError, match="more than 500 levels|nested too deeply"):
        generic.dump_compiled(good(chain=ordered))
    forest = Forest()
    items = Items()
    items.items.append({"children": items})
    with pytest.raises(ValidationError, match="contains itself") as caught:
        forest.dump_compiled({"tree": {"children": items}})
    assert list(caught.value.messages) == ["tree"]
    record = {"tree": {"children": Items({"children": Items()}, {"children": []})}}
    expected = {"tree": {"children": [{"children": []}, {"children": []}]}}
    assert forest.dump_compiled(record) == fastavro_of(forest, expected)
    assert forest.load_compiled(forest.dump_compiled(record)) == expected


def test_deep_generic_value_on_marshmallows_dump_path_is_a_validation_error():
    # post_dump: marshmallow's dump output goes to fastavro as it is
    class Hooked(CompiledSchema):
        chain = fields.Raw(metadata={"avro": CHAIN})

        @post_dump
        def unchanged(self, data, **kwargs):
            return data

    hooked = Hooked()
    with pytest.raises(ValidationError, match="more than 500 levels") as caught:
        hooked.dump_compiled({"chain": chain(10_000)})
    assert list(caught.value.messages) == ["chain"]
    cyclic = {"next": None}
    cyclic["next"] = cyclic
    with pytest.raises(ValidationError, match="contains itself"):
        hooked.dump_compiled({"chain": cyclic})
    assert hooked.dump_compiled({"chain": chain(3)}) == fastavro_of(hooked, {"chain": chain(3)})


class GenericDecimals(CompiledSchema):
    small = fields.Raw(
        metadata={"avro": {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 1}}
    )
    fixed = fields.Raw(
        metadata={
            "avro": {
                "type": "fixed",
                "name": "f8",
                "size": 8,
                "logicalType": "decimal",
                "precision": 4,
                "scale": 0,
            }
        }
    )
    wide = fields.Raw(
        metadata={
            "avro": {
                "type": "fixed",
                "name": "f40",
                "size": 40,
                "logicalType": "decimal",
                "precision": 50,
                "scale": 0,
            }
        }
    )


def generic_decimals(small: int, fixed: int, wide: int) -> bytes:
    raw = small.to_bytes((abs(small).bit_length() + 8) // 8, "big", signed=True)
    return (
        varint(len(raw)) + raw + fixed.to_bytes(8, "big", signed=True) + wide.to_bytes(40, "big", signed=True)
    )


def test_generic_path_decimals_past_their_precision_are_decode_errors():
    # fastavro rounds them, silently: 127 as decimal(2, 1) loaded as 1.3E+1
    schema = GenericDecimals()
    for small, fixed, wide in ((99, 9999, 10**50 - 1), (-99, -9999, 1 - 10**50), (0, 0, 0), (5, -1, 12345)):
        data = generic_decimals(small, fixed, wide)
        loaded = schema.load_compiled(data)
        assert loaded == {
            "small": decimal.Decimal(small).scaleb(-1),
            "fixed": decimal.Decimal(fixed),
            "wide": decimal.Decimal(wide),
        }
        assert loaded == fastavro.schemaless_reader(
            io.BytesIO(data), fastavro.parse_schema(schema.avro_schema()), None
        )
    for values, offset in (
        ((100, 1, 1), 0),
        ((-127, 1, 1), 0),
        ((1, 10_000, 1), 2),
        ((1, -10_000, 1), 2),
        ((1, 1, 10**50), 10),
        ((1, 1, -(10**50)), 10),
    ):
        with pytest.raises(DecodeError, match=r"more digits than decimal\(") as caught:
            schema.load_compiled(generic_decimals(*values))
        assert caught.value.offset == offset


class Texts(CompiledSchema):
    words = fields.Raw(metadata={"avro": {"type": "map", "values": "string"}})


TEXTS = Texts()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=12) | st.text(max_size=6).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_generic_path_utf8_is_checked_as_python_checks_it(text):
    # the map's one value at offset 4: count, key length, "k", value length
    data = b"\x02\x02k" + varint(len(text)) + text + b"\x00"
    try:
        expected = text.decode("utf-8")
    except UnicodeDecodeError as error:
        with pytest.raises(DecodeError, match="invalid UTF-8") as caught:
            TEXTS.load_compiled(data)
        assert caught.value.offset == 4 + error.start
    else:
        assert TEXTS.load_compiled(data) == {"words": {"k": expected}}


def test_generic_path_checks_indexes_booleans_ints_and_counts():
    class Misc(CompiledSchema):
        value = fields.Raw(
            metadata={
                "avro": {
                    "type": "record",
                    "name": "MiscValue",
                    "fields": [
                        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
                        {"name": "u", "type": ["null", "int"]},
                        {"name": "b", "type": "boolean"},
                        {"name": "d", "type": {"type": "array", "items": "double"}},
                        {"name": "k", "type": {"type": "map", "values": "null"}},
                    ],
                }
            }
        )

    misc = Misc()
    record = {"value": {"e": "B", "u": 7, "b": True, "d": [0.5], "k": {"x": None}}}
    data = misc.dump_compiled(record)
    # enum, union branch, int, boolean, array (count, double, end), map (count, key, end)
    assert data == b"\x02\x02\x0e\x01\x02" + struct.pack("<d", 0.5) + b"\x00\x02\x02x\x00"
    assert misc.load_compiled(data) == record
    cases = [
        (b"\x04" + data[1:], 0, "index 2 out of range"),
        (data[:1] + b"\x06" + data[2:], 1, "index 3 out of range"),
        (data[:2] + varint(2**31) + data[3:], 2, "out of range for Avro int"),
        (data[:3] + b"\x02" + data[4:], 3, "invalid boolean"),
        (data[:4] + varint(1000) + data[5:], 4, "needs at least 8000 bytes"),
        (data[:14] + varint(10) + data[15:], 14, "needs at least 10 bytes"),
        (data[:15] + b"\x06" + data[16:], 15, "length 3 exceeds the 2 bytes that remain"),
    ]
    for bad, offset, message in cases:
        with pytest.raises(DecodeError, match=message) as caught:
            misc.load_compiled(bad)
        assert caught.value.offset == offset, message


def test_check_generic_checks_a_whole_message():
    avro = GenericType(CHAIN)
    data = b"\x02" * 9 + b"\x00"
    assert fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(CHAIN)) == chain(10)
    check_generic(data, avro)
    with pytest.raises(DecodeError, match="nested more than 5 levels"):
        check_generic(data, avro, max_depth=5)
    with pytest.raises(DecodeError, match="trailing"):
        check_generic(data + b"\x00", avro)
    nulls = GenericType({"type": "array", "items": "null"})
    with pytest.raises(DecodeError, match="item_allowance"):
        check_generic(varint(10**6) + b"\x00", nulls, item_allowance=1000)


def test_over_budget_error_says_which_limit_and_how_to_raise_it(zero_size):
    data = varint(2_000_000) + b"\x00\x00"
    with pytest.raises(DecodeError) as caught:
        zero_size.load_compiled(data)
    assert "item budget exceeded" in caught.value.reason
    assert f"({len(data)} + 1000000 here)" in caught.value.reason
    assert "larger item_allowance" in caught.value.reason


# -- decimals of any length: never quadratic, never a decimal signal --------------


def test_long_decimal_within_a_large_precision_converts_in_subquadratic_time():
    # Decimal(int) of a megabyte's integer takes minutes; the runtime's
    # conversion joins halves with decimal's fast multiplication
    class Huge(CompiledSchema):
        amount = fields.Decimal(places=2, metadata={"precision": 3_000_000})

    raw = random.Random(7).randbytes(1_000_000)
    started = time.perf_counter()
    loaded = Huge().load_compiled(varint(len(raw)) + raw)["amount"]
    assert time.perf_counter() - started < 10
    unscaled = int.from_bytes(raw, "big", signed=True)
    assert loaded.as_tuple().exponent == -2 and loaded.is_signed() == (unscaled < 0)
    exact = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
    last_digits = exact.remainder(exact.scaleb(exact.abs(loaded), 2), decimal.Decimal(10**30))
    assert int(last_digits) == abs(unscaled) % 10**30
    digits = loaded.adjusted() + 3
    assert 10 ** (digits - 1) <= abs(unscaled) < 10**digits
    for bits in (100, 4096, 4097, 9000, 50_000, 123_457):
        for sign in (1, -1):
            value = sign * random.Random(bits).getrandbits(bits)
            assert str(_decimal_of_int(value)) == str(decimal.Decimal(value))
            raw = value.to_bytes((bits + 8) // 8, "big", signed=True)
            assert decimal_from_bytes(raw, 3) == exact.scaleb(decimal.Decimal(value), -3)


def test_decimal_dump_never_lets_a_decimal_signal_or_value_error_escape():
    class Price(CompiledSchema):
        price = fields.Decimal(places=2, metadata={"precision": 10})

    price = Price().compile()
    for value, message in (
        (10**5000, "Does not fit"),
        ("1e999999999", "Does not fit"),
        (decimal.Decimal("1e999999999"), "Does not fit"),
        (decimal.Decimal("1e-999999999"), "decimal places"),
        (decimal.Decimal("1." + "0" * 100_000 + "1"), "decimal places"),
        (decimal.Decimal("100000000"), "Does not fit"),
    ):
        started = time.perf_counter()
        with pytest.raises(ValidationError, match=message):
            price.dump_compiled({"price": value})
        assert time.perf_counter() - started < 1
    assert price.load_compiled(price.dump_compiled({"price": 10**7})) == {
        "price": decimal.Decimal("10000000.00")
    }


def test_a_field_whose_own_serialize_raises_a_decimal_signal_is_a_validation_error():
    # marshmallow's Decimal quantizes in the default 28-digit context:
    # 1E+30 to two places raises decimal.InvalidOperation inside _serialize
    class Amount(fields.Decimal):
        def _serialize(self, value, attr, obj, **kwargs):
            return super()._serialize(value, attr, obj, **kwargs)

    class Ledger(CompiledSchema):
        amount = Amount(places=2, metadata={"precision": 40})

    with pytest.raises(ValidationError) as caught:
        Ledger().dump_compiled({"amount": decimal.Decimal("1e30")})
    assert list(caught.value.messages) == ["amount"]


# -- messages of any type ------------------------------------------------------------


def test_non_string_error_messages_are_raised_as_they_are():
    class Coded(CompiledSchema):
        count = fields.Integer(required=True, error_messages={"required": {"code": 7}})
        names = fields.List(fields.String(error_messages={"null": ["no", "nulls"]}))

    coded = Coded()
    with pytest.raises(ValidationError) as caught:
        coded.dump_compiled({"names": []})
    assert caught.value.messages == {"count": {"code": 7}}
    with pytest.raises(ValidationError) as caught:
        coded.dump_compiled({"count": 1, "names": ["a", None]})
    assert caught.value.messages == {"names": {1: ["no", "nulls"]}}
    assert str(caught.value)


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


class Zeros(CompiledSchema):
    """Items that take no bytes, on the compiled and the generic path."""

    generic_nulls = fields.Raw(
        metadata={
            "avro": {
                "type": "array",
                "items": {"type": "record", "name": "Z", "fields": [{"name": "n", "type": "null"}]},
            }
        }
    )
    generic_map = fields.Raw(
        metadata={"avro": {"type": "map", "values": ["null", {"type": "array", "items": "null"}]}}
    )
    tree = fields.Raw(allow_none=True, metadata={"avro": ["null", TREE]})
    empties = fields.List(fields.Nested(Empty))
    consts = fields.List(fields.Constant(None))
    amount = fields.Decimal(places=2, metadata={"precision": 6})


ZERO_RECORDS = [
    {
        "generic_nulls": [],
        "generic_map": {},
        "tree": None,
        "empties": [],
        "consts": [],
        "amount": decimal.Decimal("0.00"),
    },
    {
        "generic_nulls": [{"n": None}] * 3,
        "generic_map": {"a": None, "b": [None, None]},
        "tree": {"children": [{"children": []}, {"children": [{"children": []}]}]},
        "empties": [{}] * 5,
        "consts": [None] * 4,
        "amount": decimal.Decimal("-9999.99"),
    },
]


def mutate(data: bytes, operations) -> bytes:
    data = bytearray(data)
    for operation, position, value in operations:
        position = position % (len(data) + 1)
        if operation == "flip" and data:
            data[position % len(data)] ^= 1 << (value % 8)
        elif operation == "insert":
            data[position:position] = varint(value)
        elif operation == "delete":
            del data[position : position + 1 + value % 4]
        elif operation == "duplicate":
            data[position:position] = data[position : position + 1 + value % 8]
    return bytes(data)


OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["flip", "insert", "delete", "duplicate"]),
        st.integers(0, 10**6),
        st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(0, 300)),
    ),
    max_size=4,
)


@pytest.fixture(scope="module")
def zeros():
    # a small allowance keeps the worst message small: memory is checked too
    return Zeros().compile(CompileFlags(item_allowance=20_000))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(ZERO_RECORDS))), OPERATIONS, st.booleans())
def test_mutated_messages_give_a_value_or_a_clean_error_in_bounded_time_and_memory(
    zeros, index, operations, many
):
    import tracemalloc

    record = ZERO_RECORDS[index]
    data = mutate(zeros.dump_compiled([record, record] if many else record, many=many), operations)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        loaded = zeros.load_compiled(data, many=many)
    except (DecodeError, ValidationError):
        loaded = None
    finally:
        elapsed = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert elapsed < 2
    # at most (length + 20,000) items of a few hundred bytes each
    assert peak < 64 * 1024 * 1024
    if loaded is not None:
        # nothing lost: what loaded dumps to bytes that load to the same value
        again = zeros.dump_compiled(loaded, many=many)
        assert zeros.load_compiled(again, many=many) == loaded


def test_limits_are_checked_when_flags_are_made():
    for bad in (
        {"max_depth": 0},
        {"max_depth": 10_001},
        {"max_items": 0},
        {"max_items": 2**64},
        {"item_allowance": -1},
        {"item_allowance": 2**63},
    ):
        with pytest.raises(ValueError):
            CompileFlags(**bad)
