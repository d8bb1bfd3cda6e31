"""The benchmark cases: one roastedavro schema, one msgspec Struct and one record each.

Every case is a record of a few fields of one kind (the classic set used to
compare Python Avro libraries), plus a market tick, wide records and large
arrays. ``Case.record()`` builds the same record on every call (a seeded
``random.Random``), with the Python values a marshmallow user dumps: ``Enum``
members, ``Decimal``, ``date``, ``time``, aware ``datetime``, ``UUID``, ``bytes``.

Groups: ``classic`` (the geometric mean compares libraries on these),
``market`` (market_tick), ``wide`` (10, 50, 500 mixed fields), ``array``
(1,000 items) and ``extra`` (logical types outside the classic set).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import random
import string
import uuid
from typing import Any, Callable, Optional

import msgspec
from marshmallow import fields

from roastedavro import CompiledSchema

NAMESPACE = "bench"

GROUPS = ("classic", "market", "wide", "array", "logical", "extra")


@dataclasses.dataclass
class Case:
    name: str
    group: str
    schema: type[CompiledSchema]
    struct: type[msgspec.Struct]
    make_record: Callable[[random.Random], dict]
    seed: int
    description: str
    #: fields declared as fields.Raw with an Avro type; roastedavro versions
    #: without a Raw encoder write these through the generic path (marshmallow's
    #: own serialize + fastavro per value). run.py detects which path is used.
    raw_fields: tuple[str, ...] = ()

    def record(self) -> dict:
        """The benchmark record (deterministic)."""
        return self.make_record(random.Random(self.seed))

    def struct_value(self, record: dict | None = None) -> msgspec.Struct:
        """The record as the msgspec Struct (nested Structs, same Python values)."""
        return msgspec.convert(self.record() if record is None else record, self.struct)


CASES: dict[str, Case] = {}


def case(name: str, group: str, struct, make_record, description: str, raw_fields=()):
    """Register the decorated CompiledSchema as benchmark case ``name``."""

    def register(schema_class):
        CASES[name] = Case(
            name,
            group,
            schema_class,
            struct,
            make_record,
            seed=sum(map(ord, name)) * 7919,
            description=description,
            raw_fields=tuple(raw_fields),
        )
        return schema_class

    return register


# -- value helpers ------------------------------------------------------------

WORDS = (
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
)
CITIES = ("Zürich", "Praha", "São Paulo", "London", "New York", "Kraków", "Tokyo", "Oslo")
SYMBOLS = ("AAPL", "MSFT", "NVDA", "AMZN", "GOOGL", "META", "TSLA", "BRK.B", "JPM", "V")


def word(rng: random.Random) -> str:
    return rng.choice(WORDS)


def text(rng: random.Random, words: int) -> str:
    return " ".join(word(rng) for _ in range(words))


def ident(rng: random.Random, size: int = 12) -> str:
    return "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(size))


def blob(rng: random.Random, size: int) -> bytes:
    return bytes(rng.getrandbits(8) for _ in range(size))


def int32(rng: random.Random) -> int:
    # a realistic spread of varint sizes: small counters and full-range values
    return rng.choice((rng.randint(0, 127), rng.randint(-50_000, 50_000), rng.randint(-(2**31), 2**31 - 1)))


def int64(rng: random.Random) -> int:
    return rng.choice(
        (rng.randint(0, 10_000), rng.randint(-(2**40), 2**40), rng.randint(-(2**63), 2**63 - 1))
    )


def money(rng: random.Random, places: int, digits: int) -> decimal.Decimal:
    return decimal.Decimal(rng.randint(-(10**digits) + 1, 10**digits - 1)).scaleb(-places)


def a_date(rng: random.Random) -> datetime.date:
    return datetime.date(2000, 1, 1) + datetime.timedelta(days=rng.randint(0, 12_000))


def a_time(rng: random.Random) -> datetime.time:
    return datetime.time(rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59), rng.randint(0, 999_999))


def a_timestamp(rng: random.Random) -> datetime.datetime:
    return datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(
        microseconds=rng.randint(0, 5 * 365 * 86_400 * 10**6)
    )


def avro_int(**kwargs) -> fields.Integer:
    return fields.Integer(metadata={"avro": "int"}, **kwargs)


def avro_bytes(**kwargs) -> fields.Raw:
    return fields.Raw(metadata={"avro": "bytes"}, **kwargs)


def avro_fixed(name: str, size: int, **kwargs) -> fields.Raw:
    return fields.Raw(metadata={"avro": {"type": "fixed", "name": name, "size": size}}, **kwargs)


def meta(name: str):
    return type("Meta", (), {"avro_name": name, "avro_namespace": NAMESPACE})


# -- enums (member names are the Avro symbols; values equal names for msgspec) --


class Side(enum.Enum):
    BUY = "BUY"
    SELL = "SELL"


class OrderStatus(enum.Enum):
    NEW = "NEW"
    PARTIALLY_FILLED = "PARTIALLY_FILLED"
    FILLED = "FILLED"
    CANCELED = "CANCELED"
    REJECTED = "REJECTED"


class Venue(enum.Enum):
    XNAS = "XNAS"
    XNYS = "XNYS"
    ARCX = "ARCX"
    BATS = "BATS"
    IEXG = "IEXG"
    EDGX = "EDGX"


# -- the classic set ------------------------------------------------------------


class IntStruct(msgspec.Struct):
    quantity: int
    delta: int
    checksum: int


@case(
    "int",
    "classic",
    IntStruct,
    lambda rng: {
        "quantity": rng.randint(0, 127),
        "delta": rng.randint(-50_000, 50_000),
        "checksum": rng.randint(-(2**31), 2**31 - 1),
    },
    "3 x int (1-, 3- and 5-byte varints)",
)
class IntSchema(CompiledSchema):
    Meta = meta("IntRecord")
    quantity = avro_int(required=True)
    delta = avro_int(required=True)
    checksum = avro_int(required=True)


class LongStruct(msgspec.Struct):
    id: int
    created_us: int
    count: int


@case(
    "long",
    "classic",
    LongStruct,
    lambda rng: {
        "id": rng.randint(2**40, 2**62),
        "created_us": 1_700_000_000_000_000 + rng.randint(0, 10**12),
        "count": rng.randint(0, 1000),
    },
    "3 x long",
)
class LongSchema(CompiledSchema):
    Meta = meta("LongRecord")
    id = fields.Integer(required=True)
    created_us = fields.Integer(required=True)
    count = fields.Integer(required=True)


class DoubleStruct(msgspec.Struct):
    lat: float
    lon: float
    value: float


@case(
    "double",
    "classic",
    DoubleStruct,
    lambda rng: {
        "lat": rng.uniform(-90, 90),
        "lon": rng.uniform(-180, 180),
        "value": rng.lognormvariate(3, 2),
    },
    "3 x double",
)
class DoubleSchema(CompiledSchema):
    Meta = meta("DoubleRecord")
    lat = fields.Float(required=True)
    lon = fields.Float(required=True)
    value = fields.Float(required=True)


class BooleanStruct(msgspec.Struct):
    active: bool
    verified: bool
    deleted: bool


@case(
    "boolean",
    "classic",
    BooleanStruct,
    lambda rng: {"active": True, "verified": rng.random() < 0.5, "deleted": False},
    "3 x boolean",
)
class BooleanSchema(CompiledSchema):
    Meta = meta("BooleanRecord")
    active = fields.Boolean(required=True)
    verified = fields.Boolean(required=True)
    deleted = fields.Boolean(required=True)


class StrStruct(msgspec.Struct):
    name: str
    city: str
    comment: str


@case(
    "str",
    "classic",
    StrStruct,
    lambda rng: {"name": word(rng).title(), "city": rng.choice(CITIES[:2]), "comment": text(rng, 12)},
    "3 x string (short, non-ASCII, ~80 chars)",
)
class StrSchema(CompiledSchema):
    Meta = meta("StrRecord")
    name = fields.String(required=True)
    city = fields.String(required=True)
    comment = fields.String(required=True)


class BytesStruct(msgspec.Struct):
    payload: bytes
    signature: bytes


@case(
    "bytes",
    "classic",
    BytesStruct,
    lambda rng: {"payload": blob(rng, 64), "signature": blob(rng, 32)},
    "2 x bytes (64 and 32 bytes)",
    raw_fields=("payload", "signature"),
)
class BytesSchema(CompiledSchema):
    Meta = meta("BytesRecord")
    payload = avro_bytes(required=True)
    signature = avro_bytes(required=True)


class EnumStruct(msgspec.Struct):
    side: Side
    status: OrderStatus


@case(
    "enum",
    "classic",
    EnumStruct,
    lambda rng: {"side": rng.choice(list(Side)), "status": rng.choice(list(OrderStatus))},
    "2 x enum (2 and 5 symbols)",
)
class EnumSchema(CompiledSchema):
    Meta = meta("EnumRecord")
    side = fields.Enum(Side, required=True)
    status = fields.Enum(OrderStatus, required=True)


class UnionStruct(msgspec.Struct):
    nickname: Optional[str]
    middle_name: Optional[str]
    referrer: Optional[str]


@case(
    "union",
    "classic",
    UnionStruct,
    lambda rng: {"nickname": word(rng), "middle_name": None, "referrer": ident(rng)},
    '3 x ["null", "string"] (2 strings, 1 null)',
)
class UnionSchema(CompiledSchema):
    Meta = meta("UnionRecord")
    nickname = fields.String(allow_none=True)
    middle_name = fields.String(allow_none=True)
    referrer = fields.String(allow_none=True)


class FixedStruct(msgspec.Struct):
    md5: bytes
    ip6: bytes


@case(
    "fixed",
    "classic",
    FixedStruct,
    lambda rng: {"md5": blob(rng, 16), "ip6": blob(rng, 16)},
    "2 x fixed(16)",
    raw_fields=("md5", "ip6"),
)
class FixedSchema(CompiledSchema):
    Meta = meta("FixedRecord")
    md5 = avro_fixed("md5", 16, required=True)
    ip6 = avro_fixed("ip6", 16, required=True)


class DecimalStruct(msgspec.Struct):
    price: decimal.Decimal
    amount: decimal.Decimal


@case(
    "decimal",
    "classic",
    DecimalStruct,
    lambda rng: {"price": money(rng, 4, 8), "amount": money(rng, 2, 10)},
    "2 x decimal on bytes (18,4) and (12,2)",
)
class DecimalSchema(CompiledSchema):
    Meta = meta("DecimalRecord")
    price = fields.Decimal(places=4, metadata={"precision": 18}, required=True)
    amount = fields.Decimal(places=2, metadata={"precision": 12}, required=True)


class FixedDecimalStruct(msgspec.Struct):
    price: decimal.Decimal
    notional: decimal.Decimal


@case(
    "fixed_decimal",
    "classic",
    FixedDecimalStruct,
    lambda rng: {"price": money(rng, 4, 8), "notional": money(rng, 2, 20)},
    "2 x decimal on fixed: (18,4) in 8 bytes, (30,2) in 16 bytes",
)
class FixedDecimalSchema(CompiledSchema):
    Meta = meta("FixedDecimalRecord")
    price = fields.Decimal(
        places=4,
        required=True,
        metadata={
            "avro": {
                "type": "fixed",
                "name": "dec18_4",
                "size": 8,
                "logicalType": "decimal",
                "precision": 18,
                "scale": 4,
            }
        },
    )
    notional = fields.Decimal(
        places=2,
        required=True,
        metadata={
            "avro": {
                "type": "fixed",
                "name": "dec30_2",
                "size": 16,
                "logicalType": "decimal",
                "precision": 30,
                "scale": 2,
            }
        },
    )


class DateStruct(msgspec.Struct):
    trade_date: datetime.date
    settle_date: datetime.date


@case(
    "date_int",
    "classic",
    DateStruct,
    lambda rng: {"trade_date": a_date(rng), "settle_date": a_date(rng)},
    "2 x int date",
)
class DateSchema(CompiledSchema):
    Meta = meta("DateRecord")
    trade_date = fields.Date(required=True)
    settle_date = fields.Date(required=True)


class TimeStruct(msgspec.Struct):
    opens: datetime.time
    closes: datetime.time


@case(
    "time_micros",
    "classic",
    TimeStruct,
    lambda rng: {"opens": a_time(rng), "closes": a_time(rng)},
    "2 x long time-micros",
)
class TimeSchema(CompiledSchema):
    Meta = meta("TimeRecord")
    opens = fields.Time(required=True)
    closes = fields.Time(required=True)


class ArrayIntStruct(msgspec.Struct):
    values: list[int]


@case(
    "array_int",
    "classic",
    ArrayIntStruct,
    lambda rng: {"values": [int32(rng) for _ in range(20)]},
    "array of 20 int",
)
class ArrayIntSchema(CompiledSchema):
    Meta = meta("ArrayIntRecord")
    values = fields.List(avro_int(), required=True)


class ArrayStrStruct(msgspec.Struct):
    tags: list[str]


@case(
    "array_str",
    "classic",
    ArrayStrStruct,
    lambda rng: {"tags": [word(rng) for _ in range(20)]},
    "array of 20 string",
)
class ArrayStrSchema(CompiledSchema):
    Meta = meta("ArrayStrRecord")
    tags = fields.List(fields.String(), required=True)


class ArrayBoolStruct(msgspec.Struct):
    flags: list[bool]


@case(
    "array_bool",
    "classic",
    ArrayBoolStruct,
    lambda rng: {"flags": [rng.random() < 0.5 for _ in range(20)]},
    "array of 20 boolean",
)
class ArrayBoolSchema(CompiledSchema):
    Meta = meta("ArrayBoolRecord")
    flags = fields.List(fields.Boolean(), required=True)


class ArrayIntStrStruct(msgspec.Struct):
    ids: list[int]
    names: list[str]


@case(
    "array_int_str",
    "classic",
    ArrayIntStrStruct,
    lambda rng: {"ids": [int32(rng) for _ in range(10)], "names": [word(rng) for _ in range(10)]},
    "array of 10 int + array of 10 string",
)
class ArrayIntStrSchema(CompiledSchema):
    Meta = meta("ArrayIntStrRecord")
    ids = fields.List(avro_int(), required=True)
    names = fields.List(fields.String(), required=True)


class MapStrStruct(msgspec.Struct):
    attributes: dict[str, str]


@case(
    "map_str",
    "classic",
    MapStrStruct,
    lambda rng: {"attributes": {f"{word(rng)}_{i}": ident(rng, 8) for i in range(10)}},
    "map of 10 string",
)
class MapStrSchema(CompiledSchema):
    Meta = meta("MapStrRecord")
    attributes = fields.Dict(keys=fields.String(), values=fields.String(), required=True)


class MapIntNullStruct(msgspec.Struct):
    counts: dict[str, Optional[int]]


@case(
    "map_int_null",
    "classic",
    MapIntNullStruct,
    lambda rng: {"counts": {f"{word(rng)}_{i}": (None if i % 3 == 2 else int32(rng)) for i in range(10)}},
    'map of 10 ["null", "int"] (a third null)',
)
class MapIntNullSchema(CompiledSchema):
    Meta = meta("MapIntNullRecord")
    counts = fields.Dict(keys=fields.String(), values=avro_int(allow_none=True), required=True)


class AddressStruct(msgspec.Struct):
    street: str
    city: str
    postcode: str
    country: str


class CustomerStruct(msgspec.Struct):
    id: int
    name: str
    email: str
    address: AddressStruct


class MoneyStruct(msgspec.Struct):
    amount: float
    currency: str


class OrderStruct(msgspec.Struct):
    order_id: int
    customer: CustomerStruct
    attributes: dict[str, str]
    totals: dict[str, MoneyStruct]


class AddressSchema(CompiledSchema):
    Meta = meta("Address")
    street = fields.String(required=True)
    city = fields.String(required=True)
    postcode = fields.String(required=True)
    country = fields.String(required=True)


class CustomerSchema(CompiledSchema):
    Meta = meta("Customer")
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    email = fields.String(required=True)
    address = fields.Nested(AddressSchema, required=True)


class MoneySchema(CompiledSchema):
    Meta = meta("Money")
    amount = fields.Float(required=True)
    currency = fields.String(required=True)


def _order(rng: random.Random) -> dict:
    name = word(rng)
    return {
        "order_id": rng.randint(10**9, 10**12),
        "customer": {
            "id": rng.randint(1, 10**7),
            "name": f"{name.title()} {word(rng).title()}",
            "email": f"{name}@example.com",
            "address": {
                "street": f"{rng.randint(1, 200)} {word(rng).title()} Street",
                "city": rng.choice(CITIES),
                "postcode": ident(rng, 5),
                "country": rng.choice(("CH", "CZ", "BR", "GB", "US")),
            },
        },
        "attributes": {"channel": "web", "campaign": word(rng), "coupon": ident(rng, 8)},
        "totals": {
            kind: {"amount": round(rng.uniform(1, 500), 2), "currency": "EUR"}
            for kind in ("net", "tax", "gross")
        },
    }


@case(
    "nested", "classic", OrderStruct, _order, "record > record > record, a map of string and a map of records"
)
class OrderSchema(CompiledSchema):
    Meta = meta("Order")
    order_id = fields.Integer(required=True)
    customer = fields.Nested(CustomerSchema, required=True)
    attributes = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    totals = fields.Dict(keys=fields.String(), values=fields.Nested(MoneySchema), required=True)


class PointStruct(msgspec.Struct):
    x: float
    y: float
    label: str


class SegmentStruct(msgspec.Struct):
    start: PointStruct
    end: PointStruct


class PointSchema(CompiledSchema):
    Meta = meta("Point")
    x = fields.Float(required=True)
    y = fields.Float(required=True)
    label = fields.String(required=True)


def _point(rng: random.Random) -> dict:
    return {"x": rng.uniform(-1000, 1000), "y": rng.uniform(-1000, 1000), "label": word(rng)}


@case(
    "reference",
    "classic",
    SegmentStruct,
    lambda rng: {"start": _point(rng), "end": _point(rng)},
    "a named record (Point) used twice: defined, then referenced by name",
)
class SegmentSchema(CompiledSchema):
    Meta = meta("Segment")
    start = fields.Nested(PointSchema, required=True)
    end = fields.Nested(PointSchema, required=True)


# -- market tick ----------------------------------------------------------------


class TickStruct(msgspec.Struct):
    symbol: str
    venue: Venue
    price: float
    size: int
    ts: int
    flags: Optional[list[str]]


@case(
    "market_tick",
    "market",
    TickStruct,
    lambda rng: {
        "symbol": rng.choice(SYMBOLS),
        "venue": rng.choice(list(Venue)),
        "price": round(rng.uniform(10, 900), 2),
        "size": rng.choice((100, 200, 300, 57)),
        "ts": 1_700_000_000_000_000_000 + rng.randint(0, 10**15),
        "flags": ["odd_lot", "intermarket_sweep"],
    },
    "symbol, venue enum, price, size, ts, nullable array of flags",
)
class TickSchema(CompiledSchema):
    Meta = meta("MarketTick")
    symbol = fields.String(required=True)
    venue = fields.Enum(Venue, required=True)
    price = fields.Float(required=True)
    size = fields.Integer(required=True)
    ts = fields.Integer(required=True)
    flags = fields.List(fields.String(), allow_none=True)


# -- wide records ---------------------------------------------------------------

# the kinds of a wide record's fields, cycled; every odd field is nullable
WIDE_KINDS = (
    "string",
    "long",
    "double",
    "boolean",
    "int",
    "string",
    "long",
    "double",
    "array_string",
    "map_long",
)
_WIDE_FIELD = {
    "string": (fields.String, str, lambda rng: ident(rng, rng.randint(4, 24))),
    "long": (fields.Integer, int, int64),
    "double": (fields.Float, float, lambda rng: rng.uniform(-1e6, 1e6)),
    "boolean": (fields.Boolean, bool, lambda rng: rng.random() < 0.5),
    "int": (avro_int, int, int32),
    "array_string": (
        lambda **kw: fields.List(fields.String(), **kw),
        list[str],
        lambda rng: [word(rng) for _ in range(3)],
    ),
    "map_long": (
        lambda **kw: fields.Dict(keys=fields.String(), values=fields.Integer(), **kw),
        dict[str, int],
        lambda rng: {word(rng): int64(rng) for _ in range(2)},
    ),
}


def _wide_case(size: int) -> None:
    kinds = [WIDE_KINDS[i % len(WIDE_KINDS)] for i in range(size)]
    names = [f"f{i:03d}_{kind}" for i, kind in enumerate(kinds)]
    attrs: dict[str, Any] = {"Meta": meta(f"Wide{size}")}
    struct_fields = []
    for i, (name, kind) in enumerate(zip(names, kinds)):
        make_field, python_type, _ = _WIDE_FIELD[kind]
        nullable = i % 2 == 1
        attrs[name] = make_field(allow_none=True) if nullable else make_field(required=True)
        struct_fields.append((name, Optional[python_type] if nullable else python_type))

    def make_record(rng: random.Random) -> dict:
        record = {}
        for i, (name, kind) in enumerate(zip(names, kinds)):
            value = _WIDE_FIELD[kind][2](rng)
            # a quarter of the nullable fields are null
            record[name] = None if i % 2 == 1 and rng.random() < 0.25 else value
        return record

    schema_class = type(f"Wide{size}Schema", (CompiledSchema,), attrs)
    schema_class.__module__ = __name__
    globals()[schema_class.__name__] = schema_class
    struct = msgspec.defstruct(f"Wide{size}Struct", struct_fields, module=__name__)
    globals()[struct.__name__] = struct
    case(
        f"wide_{size}",
        "wide",
        struct,
        make_record,
        f"{size} mixed fields (string, long, double, boolean, int, array, map), half nullable",
    )(schema_class)


for _size in (10, 50, 500):
    _wide_case(_size)


# -- arrays of 1,000 --------------------------------------------------------------


class Array1000LongStruct(msgspec.Struct):
    values: list[int]


@case(
    "array_1000_long",
    "array",
    Array1000LongStruct,
    lambda rng: {"values": [int64(rng) for _ in range(1000)]},
    "array of 1,000 long",
)
class Array1000LongSchema(CompiledSchema):
    Meta = meta("Array1000Long")
    values = fields.List(fields.Integer(), required=True)


class ItemStruct(msgspec.Struct):
    id: int
    name: str
    value: float
    active: bool


class Array1000RecordStruct(msgspec.Struct):
    items: list[ItemStruct]


class ItemSchema(CompiledSchema):
    Meta = meta("Item")
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    value = fields.Float(required=True)
    active = fields.Boolean(required=True)


@case(
    "array_1000_record",
    "array",
    Array1000RecordStruct,
    lambda rng: {
        "items": [
            {"id": i, "name": word(rng), "value": rng.uniform(0, 100), "active": rng.random() < 0.9}
            for i in range(1000)
        ]
    },
    "array of 1,000 records (long, string, double, boolean)",
)
class Array1000RecordSchema(CompiledSchema):
    Meta = meta("Array1000Record")
    items = fields.List(fields.Nested(ItemSchema), required=True)


# -- logical-type-heavy: a trade as a trading system keeps it ---------------------


class TradeStruct(msgspec.Struct):
    trade_id: uuid.UUID
    order_id: uuid.UUID
    symbol: str
    side: Side
    status: OrderStatus
    price: decimal.Decimal
    quantity: decimal.Decimal
    executed_at: datetime.datetime
    trade_date: datetime.date
    settle_time: datetime.time


@case(
    "trade",
    "logical",
    TradeStruct,
    lambda rng: {
        "trade_id": uuid.UUID(int=rng.getrandbits(128), version=4),
        "order_id": uuid.UUID(int=rng.getrandbits(128), version=4),
        "symbol": rng.choice(SYMBOLS),
        "side": rng.choice(list(Side)),
        "status": rng.choice(list(OrderStatus)),
        "price": money(rng, 4, 8),
        "quantity": money(rng, 2, 8),
        "executed_at": a_timestamp(rng),
        "trade_date": a_date(rng),
        "settle_time": a_time(rng),
    },
    "2 uuid, 2 decimal, timestamp-micros, date, time-micros, 2 enum, string",
)
class TradeSchema(CompiledSchema):
    Meta = meta("Trade")
    trade_id = fields.UUID(required=True)
    order_id = fields.UUID(required=True)
    symbol = fields.String(required=True)
    side = fields.Enum(Side, required=True)
    status = fields.Enum(OrderStatus, required=True)
    price = fields.Decimal(places=4, metadata={"precision": 18}, required=True)
    quantity = fields.Decimal(places=2, metadata={"precision": 12}, required=True)
    executed_at = fields.DateTime(required=True)
    trade_date = fields.Date(required=True)
    settle_time = fields.Time(required=True)


# -- extras: logical types outside the classic set --------------------------------


class TimestampStruct(msgspec.Struct):
    created: datetime.datetime
    updated: datetime.datetime


@case(
    "timestamp_micros",
    "extra",
    TimestampStruct,
    lambda rng: {"created": a_timestamp(rng), "updated": a_timestamp(rng)},
    "2 x long timestamp-micros (aware UTC datetimes)",
)
class TimestampSchema(CompiledSchema):
    Meta = meta("TimestampRecord")
    created = fields.DateTime(required=True)
    updated = fields.DateTime(required=True)


class UUIDStruct(msgspec.Struct):
    id: uuid.UUID
    trace: uuid.UUID


@case(
    "uuid",
    "extra",
    UUIDStruct,
    lambda rng: {
        "id": uuid.UUID(int=rng.getrandbits(128), version=4),
        "trace": uuid.UUID(int=rng.getrandbits(128), version=4),
    },
    "2 x string uuid",
)
class UUIDSchema(CompiledSchema):
    Meta = meta("UUIDRecord")
    id = fields.UUID(required=True)
    trace = fields.UUID(required=True)


def cases(names: list[str] | None = None, groups: list[str] | None = None) -> list[Case]:
    """The cases to run, in declaration order, filtered by name and group."""
    selected = list(CASES.values())
    if names:
        unknown = set(names) - set(CASES)
        if unknown:
            raise SystemExit(f"unknown case(s): {', '.join(sorted(unknown))}; known: {', '.join(CASES)}")
        selected = [c for c in selected if c.name in names]
    if groups:
        selected = [c for c in selected if c.group in groups]
    return selected
