"""Benchmark cases for plain Avro codecs: an Avro schema (a dict) and seeded datums.

Datums follow fastavro's conventions, so that fastavro writes them as they
are: records are dicts, enum values their symbol, ``uuid`` a ``UUID``,
decimals ``Decimal``, ``date``/``time-*``/``timestamp-*`` the ``datetime``
types (timestamps aware, in UTC), a union value is chosen among the branches
by fastavro's own rules (no ``-type`` keys or tuples are needed here).

Groups:

- ``classic``: the set used to compare Python Avro libraries (benchmarks/schemas.py,
  through ``CompiledSchema().avro_schema()`` and its records with enum members
  turned into symbols);
- ``realistic``: ``event``, ``trade``, ``telemetry`` and ``order``, written here;
- ``more`` (not run by default): market_tick, wide records, arrays of 1,000,
  timestamp and uuid records from benchmarks/schemas.py.

``AvroCase.datums()`` returns the same list on every call: ``batch`` datums
drawn from one ``random.Random(seed)``, so a timed call covers several union
branches, optional fields set and unset, and different sizes.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import random
import struct
import uuid
from typing import Any, Callable

from benchmarks import schemas as classic_schemas
from benchmarks.contenders import avro_values
from benchmarks.schemas import CITIES, SYMBOLS, ident, text, word

GROUPS = ("classic", "realistic", "more")
DEFAULT_GROUPS = ("classic", "realistic")
#: datums per case unless the case says otherwise
BATCH = 100


@dataclasses.dataclass(frozen=True)
class AvroCase:
    name: str
    group: str
    schema: dict
    make_datum: Callable[[random.Random], Any]
    seed: int
    description: str
    batch: int = BATCH

    def datums(self) -> list:
        rng = random.Random(self.seed)
        return [self.make_datum(rng) for _ in range(self.batch)]


CASES: dict[str, AvroCase] = {}


def register(name: str, group: str, schema: dict, make_datum, description: str, batch: int = BATCH) -> None:
    CASES[name] = AvroCase(name, group, schema, make_datum, sum(map(ord, name)) * 7919, description, batch)


# -- the classic set and the others from benchmarks/schemas.py ----------------------

#: the wide record of 500 fields is left out: its codecs take minutes to compile
MORE = (
    "market_tick",
    "wide_10",
    "wide_50",
    "array_1000_long",
    "array_1000_record",
    "timestamp_micros",
    "uuid",
)
#: datums per timed call for the cases whose datums are large
SMALL_BATCH = {"wide_50": 20, "array_1000_long": 5, "array_1000_record": 3}


def _from_marshmallow(case: classic_schemas.Case) -> None:
    def make_datum(rng: random.Random, make_record=case.make_record) -> Any:
        return avro_values(make_record(rng))

    group = "classic" if case.group == "classic" else "more"
    register(
        case.name,
        group,
        case.schema().avro_schema(),
        make_datum,
        case.description,
        SMALL_BATCH.get(case.name, BATCH),
    )


for _case in classic_schemas.cases():
    if _case.group == "classic" or _case.name in MORE:
        _from_marshmallow(_case)


# -- value helpers ----------------------------------------------------------------------

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(2024, 1, 1, tzinfo=UTC)


def maybe(rng: random.Random, probability: float, make: Callable[[], Any]) -> Any:
    """``make()`` with the given probability, else None (an optional field)."""
    return make() if rng.random() < probability else None


def a_uuid(rng: random.Random) -> uuid.UUID:
    return uuid.UUID(int=rng.getrandbits(128), version=4)


def timestamp_ms(rng: random.Random) -> datetime.datetime:
    return EPOCH + datetime.timedelta(milliseconds=rng.randint(0, 400 * 86_400_000))


def timestamp_us(rng: random.Random) -> datetime.datetime:
    return EPOCH + datetime.timedelta(microseconds=rng.randint(0, 400 * 86_400 * 10**6))


def decimal_places(rng: random.Random, places: int, digits: int) -> decimal.Decimal:
    """A decimal with exactly ``places`` digits after the point and at most ``digits`` in all."""
    return decimal.Decimal(rng.randint(-(10**digits) + 1, 10**digits - 1)).scaleb(-places)


def positive_decimal(rng: random.Random, places: int, digits: int) -> decimal.Decimal:
    return abs(decimal_places(rng, places, digits)) or decimal.Decimal(1).scaleb(-places)


def float32(value: float) -> float:
    """``value`` rounded to what an Avro float holds (so a round trip gives it back)."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def decimal_type(precision: int, scale: int) -> dict:
    return {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale}


UUID = {"type": "string", "logicalType": "uuid"}
TIMESTAMP_MILLIS = {"type": "long", "logicalType": "timestamp-millis"}
TIMESTAMP_MICROS = {"type": "long", "logicalType": "timestamp-micros"}
DATE = {"type": "int", "logicalType": "date"}
TIME_MILLIS = {"type": "int", "logicalType": "time-millis"}


# -- event: a clickstream / app event ------------------------------------------------------

EVENT_KINDS = ["PAGE_VIEW", "CLICK", "ADD_TO_CART", "PURCHASE", "SEARCH", "SCROLL", "ERROR"]

EVENT = {
    "type": "record",
    "name": "AppEvent",
    "namespace": "bench.events",
    "doc": "One event from a web or mobile client.",
    "fields": [
        {"name": "event_id", "type": UUID},
        {"name": "occurred_at", "type": TIMESTAMP_MILLIS},
        {"name": "received_at", "type": ["null", TIMESTAMP_MICROS], "default": None},
        {"name": "kind", "type": {"type": "enum", "name": "EventKind", "symbols": EVENT_KINDS}},
        {
            "name": "platform",
            "type": {
                "type": "enum",
                "name": "Platform",
                "symbols": ["WEB", "IOS", "ANDROID"],
                "default": "WEB",
            },
        },
        {"name": "user_id", "type": ["null", "string"], "default": None},
        {"name": "session_id", "type": "string"},
        {"name": "sequence", "type": "int"},
        {"name": "page", "type": ["null", "string"], "default": None},
        {"name": "referrer", "type": ["null", "string"], "default": None},
        {"name": "attributes", "type": {"type": "map", "values": "string"}},
        {
            "name": "payload",
            "default": None,
            "type": [
                "null",
                "string",
                "long",
                "double",
                "boolean",
                {
                    "type": "record",
                    "name": "Click",
                    "fields": [
                        {"name": "element_id", "type": "string"},
                        {"name": "x", "type": "int"},
                        {"name": "y", "type": "int"},
                        {
                            "name": "button",
                            "type": {
                                "type": "enum",
                                "name": "Button",
                                "symbols": ["LEFT", "MIDDLE", "RIGHT"],
                            },
                        },
                    ],
                },
                {
                    "type": "record",
                    "name": "Purchase",
                    "fields": [
                        {"name": "order_id", "type": "string"},
                        {"name": "sku", "type": "string"},
                        {"name": "quantity", "type": "int"},
                        {"name": "unit_price_cents", "type": "long"},
                        {"name": "currency", "type": "string"},
                        {"name": "coupon", "type": ["null", "string"], "default": None},
                    ],
                },
            ],
        },
        {"name": "duration_ms", "type": ["null", "int"], "default": None},
        {"name": "is_bot", "type": "boolean", "default": False},
    ],
}

PAGES = ("/", "/search", "/cart", "/checkout", "/account", "/product/{}", "/category/{}")


def _payload(rng: random.Random, kind: str) -> Any:
    if kind == "CLICK":
        return {
            "element_id": f"btn-{word(rng)}",
            "x": rng.randint(0, 1920),
            "y": rng.randint(0, 4000),
            "button": rng.choice(("LEFT", "LEFT", "LEFT", "RIGHT")),
        }
    if kind == "PURCHASE":
        return {
            "order_id": ident(rng, 16),
            "sku": f"SKU-{rng.randint(10000, 99999)}",
            "quantity": rng.randint(1, 5),
            "unit_price_cents": rng.randint(99, 250_000),
            "currency": rng.choice(("EUR", "USD", "CHF")),
            "coupon": maybe(rng, 0.3, lambda: ident(rng, 8).upper()),
        }
    if kind == "SEARCH":
        return text(rng, rng.randint(1, 4))  # the query: string
    if kind == "SCROLL":
        return rng.uniform(0.0, 1.0)  # depth: double
    if kind == "ADD_TO_CART":
        return rng.randint(10**6, 10**12)  # product id: long
    if kind == "ERROR":
        return rng.random() < 0.5  # fatal or not: boolean
    return None  # PAGE_VIEW


def _event(rng: random.Random) -> dict:
    kind = rng.choice(EVENT_KINDS)
    occurred = timestamp_ms(rng)
    page = rng.choice(PAGES).format(rng.randint(1, 50_000))
    attributes = {
        "locale": rng.choice(("en-GB", "de-CH", "cs-CZ", "pt-BR")),
        "app_version": f"{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}",
    }
    for _ in range(rng.randint(0, 6)):
        attributes[f"utm_{word(rng)}"] = word(rng)
    return {
        "event_id": a_uuid(rng),
        "occurred_at": occurred,
        "received_at": maybe(
            rng, 0.8, lambda: occurred + datetime.timedelta(microseconds=rng.randint(1_000, 3_000_000))
        ),
        "kind": kind,
        "platform": rng.choice(("WEB", "WEB", "IOS", "ANDROID")),
        "user_id": maybe(rng, 0.6, lambda: f"u-{ident(rng, 10)}"),
        "session_id": ident(rng, 24),
        "sequence": rng.randint(0, 500),
        "page": maybe(rng, 0.9, lambda: page),
        "referrer": maybe(rng, 0.4, lambda: f"https://{word(rng)}.example/{word(rng)}"),
        "attributes": attributes,
        "payload": _payload(rng, kind),
        "duration_ms": maybe(rng, 0.5, lambda: rng.randint(0, 120_000)),
        "is_bot": rng.random() < 0.03,
    }


register(
    "event",
    "realistic",
    EVENT,
    _event,
    "app event: uuid, timestamps, 2 enums, optional strings, map<string> of 2-8, "
    "payload union [null, string, long, double, boolean, Click, Purchase]",
)


# -- trade: logical types ------------------------------------------------------------------

TRADE = {
    "type": "record",
    "name": "Trade",
    "namespace": "bench.trading",
    "fields": [
        {"name": "trade_id", "type": UUID},
        {"name": "order_id", "type": ["null", UUID], "default": None},
        {"name": "symbol", "type": "string"},
        {"name": "side", "type": {"type": "enum", "name": "Side", "symbols": ["BUY", "SELL", "SELL_SHORT"]}},
        {"name": "quantity", "type": decimal_type(18, 6)},
        {"name": "price", "type": decimal_type(18, 6)},
        {
            "name": "notional",
            "type": {
                "type": "fixed",
                "name": "Notional",
                "size": 12,
                "logicalType": "decimal",
                "precision": 28,
                "scale": 6,
            },
        },
        {"name": "fee", "type": ["null", decimal_type(18, 6)], "default": None},
        {"name": "executed_at", "type": TIMESTAMP_MICROS},
        {"name": "trade_date", "type": DATE},
        {"name": "settlement_date", "type": ["null", DATE], "default": None},
        {"name": "session_open", "type": TIME_MILLIS},
        {"name": "venue", "type": ["null", "string"], "default": None},
        {"name": "counterparty", "type": ["null", "string"], "default": None},
        {"name": "is_block", "type": "boolean"},
    ],
}


def _trade(rng: random.Random) -> dict:
    quantity = positive_decimal(rng, 6, 12)
    price = positive_decimal(rng, 6, 10)
    executed = timestamp_us(rng)
    trade_date = executed.date()
    return {
        "trade_id": a_uuid(rng),
        "order_id": maybe(rng, 0.7, lambda: a_uuid(rng)),
        "symbol": rng.choice(SYMBOLS),
        "side": rng.choice(("BUY", "SELL", "SELL_SHORT")),
        "quantity": quantity,
        "price": price,
        # exactly the product to 6 places, at most 22 + 6 digits
        "notional": (quantity * price).quantize(
            decimal.Decimal("0.000001"), rounding=decimal.ROUND_HALF_EVEN
        ),
        "fee": maybe(rng, 0.6, lambda: positive_decimal(rng, 6, 8)),
        "executed_at": executed,
        "trade_date": trade_date,
        "settlement_date": maybe(rng, 0.8, lambda: trade_date + datetime.timedelta(days=2)),
        "session_open": datetime.time(
            rng.choice((8, 9, 15)), rng.choice((0, 30)), 0, rng.randint(0, 999) * 1000
        ),
        "venue": maybe(rng, 0.9, lambda: rng.choice(("XNAS", "XNYS", "XLON", "XSWX"))),
        "counterparty": maybe(rng, 0.5, lambda: f"CP-{ident(rng, 6).upper()}"),
        "is_block": rng.random() < 0.05,
    }


register(
    "trade",
    "realistic",
    TRADE,
    _trade,
    "trade: 2 uuid, 4 decimals (bytes 18,6 and fixed 12 bytes 28,6), timestamp-micros, "
    "2 dates, time-millis, enum, 5 optional fields",
)


# -- telemetry: large arrays of numbers -------------------------------------------------------

TELEMETRY = {
    "type": "record",
    "name": "TelemetryBatch",
    "namespace": "bench.telemetry",
    "fields": [
        {"name": "device_id", "type": "string"},
        {
            "name": "sensor",
            "type": {
                "type": "enum",
                "name": "SensorKind",
                "symbols": ["TEMPERATURE", "PRESSURE", "VIBRATION", "CURRENT"],
            },
        },
        {"name": "firmware", "type": ["null", "string"], "default": None},
        {"name": "start", "type": TIMESTAMP_MICROS},
        {"name": "interval_us", "type": "long"},
        {"name": "samples", "type": {"type": "array", "items": "double"}},
        {"name": "counters", "type": {"type": "array", "items": "long"}},
        {"name": "tags", "type": {"type": "map", "values": "string"}},
        {
            "name": "location",
            "default": None,
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Location",
                    "fields": [
                        {"name": "lat", "type": "double"},
                        {"name": "lon", "type": "double"},
                        {"name": "altitude_m", "type": "float"},
                    ],
                },
            ],
        },
    ],
}


def _telemetry(rng: random.Random) -> dict:
    level = rng.uniform(-40.0, 120.0)
    samples = []
    for _ in range(1000):
        level += rng.gauss(0.0, 0.25)
        samples.append(level)
    counter = rng.randint(0, 2**40)
    counters = []
    for _ in range(1000):
        counter += rng.choice((0, 1, 1, 2, 17, 1_000, 2**20))  # small and large varint steps
        counters.append(counter)
    return {
        "device_id": f"dev-{ident(rng, 12)}",
        "sensor": rng.choice(("TEMPERATURE", "PRESSURE", "VIBRATION", "CURRENT")),
        "firmware": maybe(rng, 0.7, lambda: f"{rng.randint(1, 4)}.{rng.randint(0, 20)}"),
        "start": timestamp_us(rng),
        "interval_us": rng.choice((1_000, 10_000, 100_000)),
        "samples": samples,
        "counters": counters,
        "tags": {
            "site": rng.choice(CITIES),
            "line": f"L{rng.randint(1, 9)}",
            "unit": rng.choice(("C", "kPa", "mm/s", "A")),
        },
        "location": maybe(
            rng,
            0.8,
            lambda: {
                "lat": rng.uniform(-90, 90),
                "lon": rng.uniform(-180, 180),
                "altitude_m": float32(rng.uniform(0, 3000)),
            },
        ),
    }


register(
    "telemetry",
    "realistic",
    TELEMETRY,
    _telemetry,
    "telemetry batch: 1,000 doubles, 1,000 longs, metadata (enum, timestamp, map, "
    "optional record with a float)",
    batch=4,
)


# -- order: nested records, unions of records, decimals ---------------------------------------

AMOUNT = decimal_type(12, 2)
ORDER_STATUSES = ["PENDING", "PAID", "SHIPPED", "DELIVERED", "CANCELLED", "REFUNDED"]

ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "bench.shop",
    "fields": [
        {"name": "order_id", "type": UUID},
        {"name": "order_number", "type": "long"},
        {"name": "created_at", "type": TIMESTAMP_MILLIS},
        {"name": "status", "type": {"type": "enum", "name": "OrderStatus", "symbols": ORDER_STATUSES}},
        {
            "name": "customer",
            "type": {
                "type": "record",
                "name": "Customer",
                "fields": [
                    {"name": "customer_id", "type": "long"},
                    {"name": "name", "type": "string"},
                    {"name": "email", "type": "string"},
                    {"name": "phone", "type": ["null", "string"], "default": None},
                    {
                        "name": "tier",
                        "type": {"type": "enum", "name": "Tier", "symbols": ["STANDARD", "SILVER", "GOLD"]},
                    },
                ],
            },
        },
        {
            "name": "shipping_address",
            "default": None,
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Address",
                    "fields": [
                        {"name": "line1", "type": "string"},
                        {"name": "line2", "type": ["null", "string"], "default": None},
                        {"name": "city", "type": "string"},
                        {"name": "postcode", "type": "string"},
                        {"name": "region", "type": ["null", "string"], "default": None},
                        {"name": "country", "type": "string"},
                    ],
                },
            ],
        },
        {"name": "billing_address", "type": ["null", "Address"], "default": None},
        {
            "name": "lines",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "OrderLine",
                    "fields": [
                        {"name": "sku", "type": "string"},
                        {"name": "description", "type": "string"},
                        {"name": "quantity", "type": "int"},
                        {"name": "unit_price", "type": AMOUNT},
                        {"name": "discount", "type": ["null", AMOUNT], "default": None},
                        {"name": "line_total", "type": AMOUNT},
                    ],
                },
            },
        },
        {
            "name": "payment",
            "type": [
                {
                    "type": "record",
                    "name": "CardPayment",
                    "fields": [
                        {
                            "name": "brand",
                            "type": {
                                "type": "enum",
                                "name": "CardBrand",
                                "symbols": ["VISA", "MASTERCARD", "AMEX"],
                            },
                        },
                        {"name": "last4", "type": "string"},
                        {"name": "auth_code", "type": "string"},
                        {"name": "amount", "type": AMOUNT},
                    ],
                },
                {
                    "type": "record",
                    "name": "BankTransfer",
                    "fields": [
                        {"name": "iban", "type": "string"},
                        {"name": "bic", "type": ["null", "string"], "default": None},
                        {"name": "reference", "type": "string"},
                        {"name": "amount", "type": AMOUNT},
                    ],
                },
                {
                    "type": "record",
                    "name": "Voucher",
                    "fields": [
                        {"name": "code", "type": "string"},
                        {"name": "expires", "type": DATE},
                        {"name": "amount", "type": AMOUNT},
                    ],
                },
            ],
        },
        {"name": "subtotal", "type": AMOUNT},
        {"name": "tax", "type": AMOUNT},
        {"name": "total", "type": AMOUNT},
        {"name": "currency", "type": "string"},
        {"name": "notes", "type": ["null", "string"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}

CENT = decimal.Decimal("0.01")


def _address(rng: random.Random) -> dict:
    return {
        "line1": f"{rng.randint(1, 300)} {word(rng).title()} Street",
        "line2": maybe(rng, 0.3, lambda: f"Flat {rng.randint(1, 40)}"),
        "city": rng.choice(CITIES),
        "postcode": ident(rng, 5).upper(),
        "region": maybe(rng, 0.4, lambda: word(rng).title()),
        "country": rng.choice(("CH", "CZ", "BR", "GB", "US", "NO")),
    }


def _payment(rng: random.Random, amount: decimal.Decimal) -> dict:
    kind = rng.choice(("card", "card", "card", "bank", "voucher"))
    if kind == "card":
        return {
            "brand": rng.choice(("VISA", "MASTERCARD", "AMEX")),
            "last4": f"{rng.randint(0, 9999):04d}",
            "auth_code": ident(rng, 6).upper(),
            "amount": amount,
        }
    if kind == "bank":
        return {
            "iban": f"CH{rng.randint(10, 99)}{rng.randint(10**16, 10**17 - 1)}",
            "bic": maybe(rng, 0.5, lambda: ident(rng, 8).upper()),
            "reference": f"INV-{rng.randint(10**5, 10**6)}",
            "amount": amount,
        }
    return {
        "code": ident(rng, 10).upper(),
        "expires": datetime.date(2025, 1, 1) + datetime.timedelta(days=rng.randint(0, 700)),
        "amount": amount,
    }


def _order(rng: random.Random) -> dict:
    lines = []
    for _ in range(rng.randint(1, 8)):
        quantity = rng.randint(1, 6)
        unit = positive_decimal(rng, 2, 6)
        discount = maybe(rng, 0.25, lambda: (unit * quantity * decimal.Decimal("0.1")).quantize(CENT))
        lines.append(
            {
                "sku": f"SKU-{rng.randint(10000, 99999)}",
                "description": text(rng, 3),
                "quantity": quantity,
                "unit_price": unit,
                "discount": discount,
                "line_total": unit * quantity - (discount or 0),
            }
        )
    subtotal = sum((line["line_total"] for line in lines), decimal.Decimal("0.00"))
    tax = (subtotal * decimal.Decimal("0.081")).quantize(CENT)
    name = word(rng)
    shipping = maybe(rng, 0.85, lambda: _address(rng))
    return {
        "order_id": a_uuid(rng),
        "order_number": rng.randint(10**6, 10**10),
        "created_at": timestamp_ms(rng),
        "status": rng.choice(ORDER_STATUSES),
        "customer": {
            "customer_id": rng.randint(1, 10**8),
            "name": f"{name.title()} {word(rng).title()}",
            "email": f"{name}.{ident(rng, 4)}@example.com",
            "phone": maybe(rng, 0.5, lambda: f"+41 {rng.randint(10**8, 10**9 - 1)}"),
            "tier": rng.choice(("STANDARD", "STANDARD", "SILVER", "GOLD")),
        },
        "shipping_address": shipping,
        "billing_address": shipping if rng.random() < 0.5 else maybe(rng, 0.5, lambda: _address(rng)),
        "lines": lines,
        "payment": _payment(rng, subtotal + tax),
        "subtotal": subtotal,
        "tax": tax,
        "total": subtotal + tax,
        "currency": rng.choice(("CHF", "EUR", "CZK")),
        "notes": maybe(rng, 0.2, lambda: text(rng, 8)),
        "tags": [word(rng) for _ in range(rng.randint(0, 4))],
    }


register(
    "order",
    "realistic",
    ORDER,
    _order,
    "order: customer record, [null, Address] twice (named, then by reference), "
    "1-8 line records, payment union [CardPayment, BankTransfer, Voucher], decimals",
    batch=50,
)


def cases(names: list[str] | None = None, groups: list[str] | None = None) -> list[AvroCase]:
    """The cases to run, in declaration order: by name, else by group (default: classic and realistic)."""
    if names:
        unknown = set(names) - set(CASES)
        if unknown:
            raise SystemExit(f"unknown case(s): {', '.join(sorted(unknown))}; known: {', '.join(CASES)}")
        return [c for c in CASES.values() if c.name in names]
    wanted = set(groups or DEFAULT_GROUPS)
    if "all" in wanted:
        wanted = set(GROUPS)
    unknown = wanted - set(GROUPS)
    if unknown:
        raise SystemExit(f"unknown group(s): {', '.join(sorted(unknown))}; known: {', '.join(GROUPS)}, all")
    return [c for c in CASES.values() if c.group in wanted]
