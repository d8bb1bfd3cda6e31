"""Every marshmallow field class compiles: each row of docs/marshmallow.md's table.

fastavro, given the Python values, is the byte-level oracle; load results
follow marshmallow's load (or, for the rows the mapping defines, fastavro's
reading of the logical type).
"""

import datetime as dt
import decimal
import enum
import importlib.metadata
import ipaddress
import uuid
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from conftest import fastavro_bytes, fastavro_read
from marshmallow import Schema, ValidationError, fields

from roastedavro import CompileError, CompiledSchema

MARSHMALLOW_4 = int(importlib.metadata.version("marshmallow").split(".")[0]) >= 4
UTC = dt.timezone.utc
PLUS_0530 = dt.timezone(dt.timedelta(hours=5, minutes=30))
MINUS_08 = dt.timezone(dt.timedelta(hours=-8))


def compiled(**attrs):
    return type("Row", (CompiledSchema,), attrs)().compile()


def field_type(schema, name="x"):
    return next(f["type"] for f in schema.avro_schema()["fields"] if f["name"] == name)


def roundtrip(schema, record, oracle_record=None):
    data = schema.dump_compiled(record)
    assert data == fastavro_bytes(schema, oracle_record if oracle_record is not None else record)
    return schema.load_compiled(data)


# -- dates and times ------------------------------------------------------------

DATETIMES = [
    dt.datetime(2024, 3, 1, 12, 30, 45, 123456, tzinfo=UTC),
    dt.datetime(2024, 3, 1, 12, 30, 45, 123456, tzinfo=PLUS_0530),
    dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=MINUS_08),
    dt.datetime(1970, 1, 1, tzinfo=UTC),
    dt.datetime(1, 1, 2, tzinfo=UTC),
    dt.datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=UTC),
    dt.datetime(1900, 2, 28, 0, 0, 0, 1, tzinfo=PLUS_0530),
]


@pytest.fixture(scope="module")
def timestamps():
    return compiled(x=fields.DateTime(), millis=fields.DateTime(metadata={"avro": "timestamp-millis"}))


@pytest.mark.parametrize("value", DATETIMES)
def test_datetime_is_timestamp_micros(timestamps, value):
    assert field_type(timestamps) == {"type": "long", "logicalType": "timestamp-micros"}
    loaded = roundtrip(timestamps, {"x": value, "millis": value})
    assert loaded["x"] == value and loaded["x"].tzinfo is UTC
    millis = fastavro_read(timestamps, timestamps.dump_compiled({"x": value, "millis": value}))["millis"]
    assert loaded["millis"] == millis


def test_naive_datetime_value_is_taken_as_utc(timestamps):
    naive = dt.datetime(2001, 9, 9, 1, 46, 40, 5)
    loaded = roundtrip(
        timestamps,
        {"x": naive, "millis": naive},
        {"x": naive.replace(tzinfo=UTC), "millis": naive.replace(tzinfo=UTC)},
    )
    assert loaded["x"] == naive.replace(tzinfo=UTC)


def test_other_values_convert_as_marshmallow_does(timestamps):
    # a datetime subclass goes through the field's own dump form and back
    class Stamp(dt.datetime):
        pass

    value = Stamp(2020, 5, 17, 8, 30, tzinfo=PLUS_0530)
    loaded = roundtrip(
        timestamps,
        {"x": value, "millis": DATETIMES[0]},
        {"x": dt.datetime(2020, 5, 17, 3, 0, tzinfo=UTC), "millis": DATETIMES[0]},
    )
    assert loaded["x"] == value
    for wrong in ("yesterday", dt.date(2020, 5, 17), 1700000000):
        with pytest.raises(ValidationError) as error:
            timestamps.dump_compiled({"x": wrong, "millis": DATETIMES[0]})
        assert error.value.messages == {"x": ["Not a valid datetime."]}


def test_aware_datetime():
    schema = compiled(x=fields.AwareDateTime(), y=fields.AwareDateTime(default_timezone=PLUS_0530))
    value = DATETIMES[1]
    assert roundtrip(schema, {"x": value, "y": value})["x"] == value
    naive = dt.datetime(2024, 1, 1, 8, 0)
    with pytest.raises(ValidationError) as error:
        schema.dump_compiled({"x": naive, "y": value})
    assert list(error.value.messages) == ["x"]
    loaded = roundtrip(schema, {"x": value, "y": naive}, {"x": value, "y": naive.replace(tzinfo=PLUS_0530)})
    assert loaded["y"] == naive.replace(tzinfo=PLUS_0530)


def test_naive_datetime_is_local_timestamp():
    schema = compiled(
        x=fields.NaiveDateTime(),
        ms=fields.NaiveDateTime(metadata={"avro": "local-timestamp-millis"}),
        tz=fields.NaiveDateTime(timezone=UTC),
    )
    assert field_type(schema) == {"type": "long", "logicalType": "local-timestamp-micros"}
    value = dt.datetime(1950, 6, 1, 23, 59, 59, 999999)
    loaded = roundtrip(schema, {"x": value, "ms": value, "tz": value})
    assert loaded["x"] == value and loaded["x"].tzinfo is None
    assert loaded["ms"] == value.replace(microsecond=999000)
    with pytest.raises(ValidationError):
        schema.dump_compiled({"x": DATETIMES[1], "ms": value, "tz": value})
    # with a timezone, aware values become wall-clock time there
    loaded = roundtrip(
        schema,
        {"x": value, "ms": value, "tz": DATETIMES[1]},
        {"x": value, "ms": value, "tz": DATETIMES[1].astimezone(UTC).replace(tzinfo=None)},
    )


@pytest.mark.parametrize(
    "value",
    [
        dt.date(1970, 1, 1),
        dt.date(1969, 12, 31),
        dt.date(1, 1, 1),
        dt.date(9999, 12, 31),
        dt.date(2024, 2, 29),
        dt.date(1600, 3, 1),
    ],
)
def test_date(value):
    schema = compiled(x=fields.Date())
    assert field_type(schema) == {"type": "int", "logicalType": "date"}
    assert roundtrip(schema, {"x": value}) == schema.load(schema.dump({"x": value})) == {"x": value}


@pytest.mark.parametrize("value", [dt.time(0, 0), dt.time(23, 59, 59, 999999), dt.time(12, 0, 0, 1)])
def test_time(value):
    schema = compiled(x=fields.Time(), ms=fields.Time(metadata={"avro": "time-millis"}))
    assert field_type(schema, "ms") == {"type": "int", "logicalType": "time-millis"}
    loaded = roundtrip(schema, {"x": value, "ms": value})
    assert loaded["x"] == value
    assert loaded["ms"] == value.replace(microsecond=value.microsecond // 1000 * 1000)
    with pytest.raises(ValidationError, match="no time zone"):
        schema.dump_compiled({"x": dt.time(1, 0, tzinfo=UTC), "ms": value})


@pytest.mark.parametrize(
    "value",
    [
        dt.timedelta(0),
        dt.timedelta(microseconds=-1),
        dt.timedelta(days=-3, seconds=5, microseconds=7),
        dt.timedelta(microseconds=2**63 - 1),
        dt.timedelta(microseconds=-(2**63)),
        dt.timedelta(days=106751990, seconds=86399, microseconds=999999),
    ],
)
def test_timedelta_is_loss_free_microseconds(value):
    schema = compiled(x=fields.TimeDelta())
    assert field_type(schema) == "long"
    micros = value // dt.timedelta(microseconds=1)
    assert roundtrip(schema, {"x": value}, {"x": micros}) == {"x": value}


def test_timedelta_out_of_range():
    schema = compiled(x=fields.TimeDelta())
    for value in (
        dt.timedelta(days=200_000_000),
        dt.timedelta(microseconds=2**63),
        dt.timedelta(microseconds=-(2**63) - 1),
    ):
        with pytest.raises(ValidationError, match="out of range"):
            schema.dump_compiled({"x": value})


# -- decimals -------------------------------------------------------------------


@pytest.fixture(scope="module")
def money():
    return compiled(
        x=fields.Decimal(places=2, metadata={"precision": 10}),
        big=fields.Decimal(places=10, metadata={"precision": 38}),
        fixed=fields.Decimal(
            places=4,
            metadata={
                "avro": {
                    "type": "fixed",
                    "name": "money",
                    "size": 8,
                    "logicalType": "decimal",
                    "precision": 18,
                }
            },
        ),
    )


@pytest.mark.parametrize(
    "value",
    ["0", "-0.01", "12.34", "99999999.99", "-99999999.99", "1.5", "7", "-128", "127", "128", "-1.28", "0.00"],
)
def test_decimal(money, value):
    assert field_type(money) == {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}
    record = {"x": Decimal(value), "big": Decimal(value), "fixed": Decimal(value)}
    oracle = {
        "x": Decimal(value).quantize(Decimal("0.01")),
        "big": Decimal(value).quantize(Decimal("1e-10")),
        "fixed": Decimal(value).quantize(Decimal("1e-4")),
    }
    loaded = roundtrip(money, record, oracle)
    assert loaded == {"x": Decimal(value), "big": Decimal(value), "fixed": Decimal(value)}
    assert loaded == money.load(money.dump(record))


def test_decimal_large_precision(money):
    value = Decimal("-1234567890123456789012345678.0123456789")
    record = {"x": Decimal(1), "big": value, "fixed": Decimal("99999999999999.9999")}
    assert roundtrip(money, record)["big"] == value


@pytest.mark.parametrize(
    "value, message",
    [
        ("1.005", "more than 2 decimal places"),
        ("100000000", "does not fit decimal(10, 2)"),
        ("NaN", "Special numeric values"),
        ("Infinity", "Special numeric values"),
    ],
)
def test_decimal_is_never_rounded(money, value, message):
    with pytest.raises(ValidationError) as error:
        money.dump_compiled({"x": Decimal(value), "big": Decimal(0), "fixed": Decimal(0)})
    assert message.lower() in str(error.value.messages["x"]).lower()


def test_decimal_needs_scale_and_precision():
    with pytest.raises(CompileError, match="needs a scale and a precision"):
        compiled(x=fields.Decimal())
    with pytest.raises(CompileError, match="needs a scale and a precision"):
        compiled(x=fields.Decimal(places=2))
    with pytest.raises(CompileError, match="holds at most 2 digits"):
        compiled(
            x=fields.Decimal(
                places=0,
                metadata={
                    "avro": {
                        "type": "fixed",
                        "name": "tiny",
                        "size": 1,
                        "logicalType": "decimal",
                        "precision": 3,
                    }
                },
            )
        )


# -- UUIDs, enums, text ------------------------------------------------------------


def test_uuid_objects_and_strings():
    schema = compiled(x=fields.UUID(), f=fields.UUID(metadata={"avro": "fixed"}))
    assert field_type(schema) == {"type": "string", "logicalType": "uuid"}
    value = uuid.UUID("12345678-1234-5678-1234-567812345678")
    data = schema.dump_compiled({"x": value, "f": value})
    avro = schema.avro_schema()
    assert avro["fields"][1]["type"]["size"] == 16
    expected_tail = value.bytes
    assert data == fastavro_bytes(schema, {"x": value, "f": expected_tail})
    assert schema.load_compiled(data) == {"x": value, "f": value}
    assert schema.dump_compiled({"x": str(value), "f": str(value).upper()}) == data
    with pytest.raises(ValidationError):
        schema.dump_compiled({"x": "not-a-uuid", "f": value})


class Color(enum.Enum):
    RED = "r"
    GREEN = "g"


class Size(enum.Enum):
    S = 1
    M = 2


def test_enum_by_name_and_by_value():
    schema = compiled(
        x=fields.Enum(Color),
        v=fields.Enum(Color, by_value=True),
        n=fields.Enum(Size, by_value=True),
        again=fields.Enum(Color, allow_none=True),
    )
    assert field_type(schema) == {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}
    assert field_type(schema, "v") == "string" and field_type(schema, "n") == "long"
    assert field_type(schema, "again") == ["null", "Color"]  # a named type, used again
    record = {"x": Color.GREEN, "v": Color.RED, "n": Size.M, "again": None}
    loaded = roundtrip(schema, record, {"x": "GREEN", "v": "r", "n": 2, "again": None})
    assert loaded == record == schema.load(schema.dump(record))


def test_values_outside_the_enum():
    schema = compiled(x=fields.Enum(Color))
    with pytest.raises(ValidationError) as error:
        schema.dump_compiled({"x": "RED"})
    assert error.value.messages == {"x": ["Must be one of: RED, GREEN."]}
    with pytest.raises(ValidationError):
        schema.dump_compiled({"x": Size.S})


@pytest.mark.parametrize(
    "field, value",
    [
        (fields.Email(), "ada@example.com"),
        (fields.Url(), "https://example.com/a?b=c"),
        (fields.IP(), ipaddress.ip_address("2001:db8::1")),
        (fields.IPv4(), ipaddress.IPv4Address("10.1.2.3")),
        (fields.IPv6(), ipaddress.IPv6Address("::1")),
        (fields.IPInterface(), ipaddress.ip_interface("10.0.0.1/8")),
        (fields.IPv4Interface(), ipaddress.IPv4Interface("192.168.1.7/24")),
        (fields.IPv6Interface(), ipaddress.IPv6Interface("fe80::1/64")),
    ],
)
def test_text_fields_are_strings_loaded_as_marshmallow_loads_them(field, value):
    schema = compiled(x=field)
    assert field_type(schema) == "string"
    loaded = roundtrip(schema, {"x": value}, schema.dump({"x": value}))
    assert loaded == schema.load(schema.dump({"x": value})) == {"x": value}


def test_invalid_text_is_marshmallows_error():
    schema = compiled(x=fields.IPv4())
    with pytest.raises(ValidationError) as error:
        schema.dump_compiled({"x": "999.1.1.1"})
    assert list(error.value.messages) == ["x"]


# -- tuples, plucks, constants ----------------------------------------------------


def test_tuple_is_a_record_of_positional_fields():
    schema = compiled(x=fields.Tuple((fields.Integer(), fields.String(allow_none=True), fields.Date())))
    avro = field_type(schema)
    assert avro["type"] == "record" and [f["name"] for f in avro["fields"]] == ["item0", "item1", "item2"]
    value = (5, None, dt.date(2000, 1, 1))
    loaded = roundtrip(schema, {"x": value}, {"x": {"item0": 5, "item1": None, "item2": dt.date(2000, 1, 1)}})
    assert loaded == schema.load(schema.dump({"x": value})) == {"x": value}
    assert schema.dump_compiled({"x": [5, None, dt.date(2000, 1, 1)]}) == schema.dump_compiled({"x": value})
    with pytest.raises(ValidationError) as error:
        schema.dump_compiled({"x": (5, "a")})
    assert error.value.messages == {"x": ["Length must be 3."]}
    with pytest.raises(ValidationError) as error:
        schema.dump_compiled({"x": ("five", "a", dt.date(2000, 1, 1))})
    assert error.value.messages == {"x": {0: ["Not a valid integer."]}}


class Author(Schema):
    id = fields.Integer()
    name = fields.String()


def test_pluck():
    schema = compiled(author=fields.Pluck(Author, "id"), names=fields.Pluck(Author, "name", many=True))
    assert field_type(schema, "author") == "long"
    assert field_type(schema, "names") == {"type": "array", "items": "string"}
    record = {"author": {"id": 7, "name": "x"}, "names": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]}
    loaded = roundtrip(schema, record, schema.dump(record))
    assert (
        loaded
        == schema.load(schema.dump(record))
        == {"author": {"id": 7}, "names": [{"name": "a"}, {"name": "b"}]}
    )


def test_constant_is_written_as_its_value():
    schema = compiled(kind=fields.Constant("order"), version=fields.Constant(3), flag=fields.Constant(None))
    assert [f["type"] for f in schema.avro_schema()["fields"]] == ["string", "long", "null"]
    loaded = roundtrip(schema, {"kind": "ignored"}, {"kind": "order", "version": 3, "flag": None})
    assert loaded == {"kind": "order", "version": 3, "flag": None}
    if MARSHMALLOW_4:  # marshmallow 3 refuses to load its own Constant(None)
        assert loaded == schema.load(schema.dump({}))


# -- the fallback -------------------------------------------------------------------


def test_raw_function_and_method_with_an_avro_type():
    class Fallbacks(CompiledSchema):
        raw = fields.Raw(metadata={"avro": {"type": "map", "values": "long"}})
        total = fields.Function(lambda obj: sum(obj["raw"].values()), metadata={"avro": "long"})
        label = fields.Method("make_label", metadata={"avro": ["null", "string"]})
        parsed = fields.Function(
            serialize=lambda obj: str(obj["raw"]["a"]),
            deserialize=lambda value: int(value),
            metadata={"avro": "string"},
        )

        def make_label(self, obj):
            return f"{len(obj['raw'])} items"

    schema = Fallbacks()
    record = {"raw": {"a": 1, "b": 2}}
    data = schema.dump_compiled(record)
    assert data == fastavro_bytes(schema, schema.dump(record))
    # Function and Method without deserialize are dump_only: on the wire, not loaded
    assert schema.load_compiled(data) == {"raw": {"a": 1, "b": 2}, "parsed": 1}
    with pytest.raises(ValidationError) as error:
        schema.dump_compiled({"raw": {"a": "x"}})
    assert list(error.value.messages) == ["total"] or "raw" in error.value.messages


def test_field_without_encoder_or_avro_type_is_a_clear_error():
    class Custom(fields.Field):
        pass

    with pytest.raises(CompileError, match="field 'x' .*metadata={'avro'"):
        compiled(x=Custom())


@pytest.mark.skipif(MARSHMALLOW_4, reason="fields.Number is abstract in marshmallow 4")
def test_marshmallow3_number():
    schema = compiled(x=fields.Number())
    assert field_type(schema) == "double"
    assert roundtrip(schema, {"x": 2.5}) == {"x": 2.5}


def test_every_marshmallow_field_class_is_covered():
    """Each field class marshmallow exports has an encoder or a documented error."""
    from roastedavro.encoders import default_registry

    needs_avro_type = {"Field", "Raw", "Function", "Method"}
    abstract = {"Number"} if MARSHMALLOW_4 else set()
    for name in fields.__all__:
        klass = getattr(fields, name)
        if name in needs_avro_type | abstract:
            continue
        assert default_registry.lookup(klass) is not None, name


def test_hooks_and_validators_with_logical_types():
    from marshmallow import post_load, validate, validates_schema

    class Event(CompiledSchema):
        at = fields.DateTime()
        day = fields.Date()
        took = fields.TimeDelta()
        amount = fields.Decimal(places=2, metadata={"precision": 9}, validate=validate.Range(min=0))
        color = fields.Enum(Color)
        pair = fields.Tuple((fields.Integer(), fields.UUID()))

        @validates_schema
        def at_not_after_day(self, data, **kwargs):
            if data["at"].date() > data["day"]:
                raise ValidationError("at is after day")

        @post_load
        def wrap(self, data, **kwargs):
            return ("event", data)

    schema = Event()
    ident = uuid.uuid4()
    record = {
        "at": DATETIMES[0],
        "day": dt.date(2024, 3, 2),
        "took": dt.timedelta(seconds=3),
        "amount": Decimal("5.25"),
        "color": Color.RED,
        "pair": (1, ident),
    }
    data = schema.dump_compiled(record)
    kind, loaded = schema.load_compiled(data)
    assert kind == "event"
    assert loaded["at"] == DATETIMES[0] and loaded["day"] == dt.date(2024, 3, 2)
    assert loaded["amount"] == Decimal("5.25") and loaded["color"] is Color.RED
    assert loaded["pair"] == (1, ident)
    if MARSHMALLOW_4:  # marshmallow 3 reads TimeDelta in whole seconds here
        assert loaded["took"] == dt.timedelta(seconds=3)

    with pytest.raises(ValidationError) as error:
        schema.load_compiled(schema.dump_compiled({**record, "amount": Decimal("-1")}))
    assert error.value.messages == {"amount": ["Must be greater than or equal to 0."]}
    with pytest.raises(ValidationError) as error:
        schema.load_compiled(schema.dump_compiled({**record, "day": dt.date(2024, 2, 1)}))
    assert error.value.messages == {"_schema": ["at is after day"]}


def test_raw_primitive_and_fixed_types_are_written_in_c():
    class Blobs(CompiledSchema):
        data = fields.Raw(metadata={"avro": "bytes"})
        digest = fields.Raw(metadata={"avro": {"type": "fixed", "name": "md5", "size": 16}})
        maybe = fields.Raw(allow_none=True, metadata={"avro": "bytes"})
        count = fields.Raw(metadata={"avro": "long"})

    schema = Blobs()
    assert "write_bytes_value(w, value" in schema.compile_to_string()
    assert field_type(schema, "maybe") == ["null", "bytes"]
    record = {"data": b"\x00\xffabc", "digest": bytes(range(16)), "maybe": None, "count": -5}
    assert roundtrip(schema, record) == record
    assert schema.dump_compiled({**record, "data": bytearray(b"\x00\xffabc")}) == schema.dump_compiled(record)
    for wrong, message in (
        ({"digest": b"short"}, "exactly 16 bytes"),
        ({"data": "text"}, "Not valid bytes"),
        ({"count": "many"}, "Not a valid integer"),
    ):
        with pytest.raises(ValidationError) as error:
            schema.dump_compiled({**record, **wrong})
        assert message in str(error.value.messages)


@pytest.mark.parametrize("digits", [1, 9, 17, 18, 19, 25, 37])
def test_decimal_fast_and_slow_paths_agree_with_fastavro(digits):
    schema = compiled(
        x=fields.Decimal(places=3, metadata={"precision": 38}),
        f=fields.Decimal(
            places=3,
            metadata={
                "avro": {
                    "type": "fixed",
                    "name": "wide",
                    "size": 16,
                    "logicalType": "decimal",
                    "precision": 38,
                }
            },
        ),
    )
    exact = decimal.Context(prec=80)
    for sign in ("", "-"):
        for text in (sign + "9" * digits, sign + "1" + "0" * (digits - 1), sign + "0." + "0" * 2 + "1"):
            value = Decimal(text).scaleb(-3, context=exact) if "." not in text else Decimal(text)
            value = value.quantize(Decimal("0.001"), context=exact)
            loaded = roundtrip(schema, {"x": value, "f": value})
            assert loaded == {"x": value, "f": value}
            assert str(loaded["x"]) == str(value)


def test_uuid_strings_on_the_wire_in_other_spellings():
    from roastedavro import DecodeError

    schema = compiled(x=fields.UUID())
    value = uuid.UUID("a8098c1a-f86e-11da-bd1a-00112444be1e")
    for spelling in (str(value).upper(), value.hex, "{%s}" % value, f"urn:uuid:{value}"):
        encoded = spelling.encode()
        assert schema.load_compiled(bytes([len(encoded) * 2]) + encoded) == {"x": value}
    for bad in ("a8098c1a-f86e-11da-bd1a-00112444be1g", "not a uuid", ""):
        encoded = bad.encode()
        with pytest.raises(DecodeError, match="not a valid UUID"):
            schema.load_compiled(bytes([len(encoded) * 2]) + encoded)


def test_root_pre_dump_runs_before_the_compiled_writer():
    from marshmallow import post_dump, pre_dump

    class Stamped(CompiledSchema):
        at = fields.DateTime()
        name = fields.String()

        @pre_dump
        def defaults(self, data, **kwargs):
            return {"at": DATETIMES[0], **data, "name": data["name"].strip()}

    schema = Stamped()
    assert "write_Stamped" in schema.compile_to_string()
    data = schema.dump_compiled({"name": "  ada "})
    assert data == fastavro_bytes(schema, {"at": DATETIMES[0], "name": "ada"})
    many = schema.dump_compiled([{"name": "a"}, {"name": "b "}], many=True)
    assert many == fastavro_bytes(
        schema, [{"at": DATETIMES[0], "name": "a"}, {"at": DATETIMES[0], "name": "b"}], many=True
    )

    class Rewritten(CompiledSchema):
        name = fields.String()

        @post_dump
        def upper(self, data, **kwargs):
            return {**data, "name": data["name"].upper()}

    schema = Rewritten()
    assert schema.dump_compiled({"name": "ada"}) == fastavro_bytes(schema, {"name": "ADA"})


def test_collections_of_different_numbers_in_one_record_keep_their_types():
    # an array of doubles and a map of longs share the loop variable's name at
    # one nesting level; undeclared, Cython inferred it a double and the map's
    # longs loaded as floats (found by tests/test_properties.py)
    from marshmallow import fields as mm_fields

    from roastedavro import CompiledSchema

    class Mixed(CompiledSchema):
        ratios = mm_fields.List(mm_fields.Float())
        counts = mm_fields.Dict(keys=mm_fields.String(), values=mm_fields.Integer())
        sizes = mm_fields.List(mm_fields.Integer())

    schema = Mixed()
    record = {"ratios": [1.5], "counts": {"a": 64}, "sizes": [2**40]}
    loaded = schema.load_compiled(schema.dump_compiled(record))
    assert loaded == schema.load(schema.dump(record))
    assert type(loaded["counts"]["a"]) is int and type(loaded["sizes"][0]) is int


# -- map keys from an Enum field ------------------------------------------------


class Hue(enum.Enum):
    RED = "red"
    GREEN = "green"
    BLUE = "blue"


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


@pytest.fixture(scope="module")
def enum_keys():
    return compiled(
        by_name=fields.Dict(keys=fields.Enum(Hue), values=fields.Integer()),
        by_value=fields.Dict(keys=fields.Enum(Hue, by_value=True), values=fields.Enum(Level)),
        int_members=fields.Dict(keys=fields.Enum(Level), values=fields.String()),
    )


@settings(max_examples=80, deadline=None)
@given(
    st.dictionaries(st.sampled_from(Hue), st.integers(-(2**63), 2**63 - 1)),
    st.dictionaries(st.sampled_from(Hue), st.sampled_from(Level)),
    st.dictionaries(st.sampled_from(Level), st.text()),
)
def test_enum_map_keys_dump_and_load_as_marshmallow_does(enum_keys, by_name, by_value, int_members):
    """Avro map keys are strings: an Enum key dumps as the member's name (its
    value with by_value) and loads back as the member."""
    record = {"by_name": by_name, "by_value": by_value, "int_members": int_members}
    dumped = enum_keys.dump(record)
    assert all(type(key) is str for mapping in dumped.values() for key in mapping)
    oracle = {**dumped, "by_value": {key: Level[name] for key, name in dumped["by_value"].items()}}
    data = enum_keys.dump_compiled(record)
    assert data == fastavro_bytes(
        enum_keys,
        {
            name: {key: (value.name if isinstance(value, Level) else value) for key, value in mapping.items()}
            for name, mapping in oracle.items()
        },
    )
    assert enum_keys.load_compiled(data) == enum_keys.load(dumped) == record


def test_an_unknown_enum_map_key_is_marshmallows_error(enum_keys):
    data = fastavro_bytes(
        enum_keys, {"by_name": {"PURPLE": 1}, "by_value": {"red": "LOW"}, "int_members": {}}
    )
    with pytest.raises(ValidationError) as compiled_error:
        enum_keys.load_compiled(data)
    with pytest.raises(ValidationError) as marshmallow_error:
        enum_keys.load({"by_name": {"PURPLE": 1}, "by_value": {"red": "LOW"}, "int_members": {}})
    assert (
        compiled_error.value.messages
        == marshmallow_error.value.messages
        == {"by_name": {"PURPLE": {"key": ["Must be one of: RED, GREEN, BLUE."]}}}
    )
    # a key that is not a member cannot be dumped (marshmallow raises AttributeError)
    with pytest.raises(ValidationError) as error:
        enum_keys.dump_compiled({"by_name": {"RED": 1}, "by_value": {}, "int_members": {}})
    assert list(error.value.messages["by_name"]["RED"]) == ["key"]


def test_enum_map_keys_with_values_that_are_not_str_are_a_compile_error():
    schema = type(
        "Row",
        (CompiledSchema,),
        {"x": fields.Dict(keys=fields.Enum(Level, by_value=True), values=fields.Integer())},
    )
    with pytest.raises(
        CompileError,
        match=r"'x' \(Dict\).*map keys are strings.*Enum\(Level, "
        r"by_value=\.\.\.\) dumps values that are not all str",
    ):
        schema().avro_schema()
