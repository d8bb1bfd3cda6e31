"""Schemas, seeds and the outcome check of the compiled-code fuzz target.

Shared by ``fuzz_compiled.py`` (atheris over an instrumented build, long runs),
``replay_stats.py`` (time and memory per input of a corpus) and
``tests/test_fuzz_short.py`` (seeded mutations in the normal test run). Needs
neither atheris nor clang.

An input is one selector byte (``data[0] % len(TARGETS)`` picks the schema)
followed by the bytes to load. Allowed outcomes: a value, ``DecodeError``
(with an offset inside the input) or marshmallow's ``ValidationError``. A
value must dump again, and the dumped bytes must load to the same value
(floats compared bit for bit, NaNs as NaN; types, key order and decimal
exponents included) and dump to the same bytes. Anything else raises.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import math
import random
import struct
import sys
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from marshmallow import ValidationError, fields, validate

from roastedavro import CompiledSchema, DecodeError

D = decimal.Decimal
UTC = datetime.timezone.utc


class Finding(AssertionError):
    """An outcome the target does not allow (other than an exception or a crash)."""


# -- zero-size items: nothing on the wire per item ---------------------------------------


class Empty(CompiledSchema):
    pass


class ZeroSize(CompiledSchema):
    nulls = fields.List(fields.Constant(None))  # array of null
    empties = fields.List(fields.Nested(Empty))  # array of empty records
    empty_many = fields.Nested(Empty, many=True)
    null_map = fields.Dict(keys=fields.String(), values=fields.Constant(None))
    nested_nulls = fields.List(fields.List(fields.Constant(None)))
    raw_nulls = fields.Raw(metadata={"avro": {"type": "array", "items": "null"}})  # generic path
    tag = fields.Constant("zero")


# -- decimals: bytes and fixed, small and 38 digits ---------------------------------------


def fixed_decimal(name, size, precision, places, **kwargs):
    return fields.Decimal(
        places=places,
        metadata={
            "avro": {
                "type": "fixed",
                "name": name,
                "size": size,
                "logicalType": "decimal",
                "precision": precision,
            }
        },
        **kwargs,
    )


class Decimals(CompiledSchema):
    small = fields.Decimal(places=2, metadata={"precision": 9})
    wide = fields.Decimal(places=10, metadata={"precision": 38})
    whole = fields.Decimal(places=0, metadata={"precision": 38})
    fixed_small = fixed_decimal("cents", 4, 9, 2)
    fixed_wide = fixed_decimal("wide", 16, 38, 20)
    maybe = fields.Decimal(places=4, allow_none=True, metadata={"precision": 18})
    listed = fields.List(fields.Decimal(places=3, metadata={"precision": 20}))
    bounded = fields.Decimal(places=1, metadata={"precision": 6}, validate=validate.Range(min=0))
    generic = fields.Raw(
        metadata={"avro": {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 4}}
    )


# -- recursion -----------------------------------------------------------------------------


class Node(CompiledSchema):
    value = fields.Integer()
    children = fields.List(fields.Nested(lambda: Node()))
    next = fields.Nested(lambda: Node(), allow_none=True)
    named = fields.Dict(keys=fields.String(), values=fields.Nested(lambda: Node()))


# -- unions: nullable fields of every kind, nullable nested -------------------------------


class Leaf(CompiledSchema):
    name = fields.String()
    score = fields.Float(allow_none=True, allow_nan=True)


class Unions(CompiledSchema):
    big = fields.Integer(allow_none=True)
    small = fields.Integer(allow_none=True, metadata={"avro": "int"})
    text = fields.String(allow_none=True)
    real = fields.Float(allow_none=True, allow_nan=True)
    real32 = fields.Float(allow_none=True, allow_nan=True, metadata={"avro": "float"})
    strict = fields.Float(allow_none=True)  # NaN and infinities: ValidationError
    flag = fields.Boolean(allow_none=True)
    leaf = fields.Nested(Leaf, allow_none=True)
    leaves = fields.List(fields.Nested(Leaf, allow_none=True), allow_none=True)
    day = fields.Date(allow_none=True)
    at = fields.DateTime(allow_none=True)
    at_millis = fields.DateTime(allow_none=True, metadata={"avro": "timestamp-millis"})
    naive = fields.NaiveDateTime(allow_none=True)
    clock = fields.Time(allow_none=True)
    span = fields.TimeDelta(allow_none=True)
    uid = fields.UUID(allow_none=True)
    uid_fixed = fields.UUID(allow_none=True, metadata={"avro": "fixed"})
    blob = fields.Raw(allow_none=True, metadata={"avro": "bytes"})
    defaulted = fields.Integer(allow_none=True, load_default=5, dump_default=5)  # [long, null]
    address = fields.IP(allow_none=True)
    mail = fields.Email(allow_none=True)


# -- enums and maps ------------------------------------------------------------------------


class Color(enum.Enum):
    RED = 1
    GREEN = 2
    BLUE = 3


class Size(enum.Enum):
    S = "s"
    M = "m"
    L = "l"


class EnumsMaps(CompiledSchema):
    color = fields.Enum(Color)
    size = fields.Enum(Size, by_value=True)
    maybe = fields.Enum(Color, allow_none=True)
    colors = fields.List(fields.Enum(Color))
    counts = fields.Dict(keys=fields.String(), values=fields.Integer(validate=validate.Range(-1000, 1000)))
    nested = fields.Dict(
        keys=fields.String(), values=fields.Dict(keys=fields.String(), values=fields.Float(allow_none=True))
    )
    lists = fields.Dict(keys=fields.String(), values=fields.List(fields.String()))
    pair = fields.Tuple((fields.Enum(Color), fields.String()))


# -- the generic path: Raw, Function and Method through fastavro ---------------------------

LINK = {
    "type": "record",
    "name": "Link",
    "fields": [
        {"name": "v", "type": "long"},
        {"name": "next", "type": ["null", "Link"]},
    ],
}
PAIR = {
    "type": "record",
    "name": "Pair",
    "fields": [
        {"name": "k", "type": "string"},
        {"name": "v", "type": ["null", "double"]},
    ],
}


class Generic(CompiledSchema):
    array = fields.Raw(metadata={"avro": {"type": "array", "items": ["null", "long", "string"]}})
    map = fields.Raw(metadata={"avro": {"type": "map", "values": {"type": "array", "items": "double"}}})
    link = fields.Raw(metadata={"avro": LINK})  # a recursive record, through fastavro
    union = fields.Raw(allow_none=True, metadata={"avro": ["null", "long", "string", PAIR]})
    symbol = fields.Raw(metadata={"avro": {"type": "enum", "name": "Sym", "symbols": ["A", "B", "C"]}})
    tree = fields.Raw(metadata={"avro": {"type": "map", "values": {"type": "map", "values": "boolean"}}})
    computed = fields.Function(
        serialize=lambda obj: obj.get("computed"),
        deserialize=lambda value: value,
        metadata={"avro": {"type": "map", "values": "long"}},
    )
    method = fields.Method(
        "get_method",
        "load_method",
        allow_none=True,
        metadata={"avro": ["null", {"type": "array", "items": "string"}]},
    )
    dump_only = fields.Function(lambda obj: 7, metadata={"avro": "long"})  # read and skipped on load

    def get_method(self, obj):
        return obj.get("method")

    def load_method(self, value):
        return value


@dataclass
class Target:
    name: str
    schema_class: type
    many: bool
    values: Callable[[random.Random], list]
    schema: Any = field(default=None, repr=False)

    def compiled(self):
        if self.schema is None:
            self.schema = self.schema_class().compile()
        return self.schema


# -- valid values, for seeds ---------------------------------------------------------------


def _text(rng, limit=8):
    return "".join(rng.choice("abcé✓ z0") for _ in range(rng.randint(0, limit)))


def _zero(rng):
    n = rng.choice([0, 1, 3, 100])
    return {
        "nulls": [None] * n,
        "empties": [{}] * rng.randint(0, 5),
        "empty_many": [{}] * rng.randint(0, 5),
        "null_map": {_text(rng): None for _ in range(rng.randint(0, 3))},
        "nested_nulls": [[None] * rng.randint(0, 3) for _ in range(rng.randint(0, 3))],
        "raw_nulls": [None] * rng.randint(0, 4),
        "tag": "zero",
    }


def _decimal(rng, places, precision):
    digits = rng.randint(1, precision)
    unscaled = rng.randint(0, 10**digits - 1) * rng.choice([1, -1])
    return D(unscaled).scaleb(-places)


def _decimals(rng):
    return {
        "small": _decimal(rng, 2, 9),
        "wide": _decimal(rng, 10, 38),
        "whole": _decimal(rng, 0, 38),
        "fixed_small": _decimal(rng, 2, 9),
        "fixed_wide": _decimal(rng, 20, 38),
        "maybe": rng.choice([None, _decimal(rng, 4, 18)]),
        "listed": [_decimal(rng, 3, 20) for _ in range(rng.randint(0, 4))],
        "bounded": abs(_decimal(rng, 1, 6)),
        "generic": _decimal(rng, 4, 38),
    }


def _node(rng, depth=0):
    deeper = depth < 4
    return {
        "value": rng.randint(-(2**63), 2**63 - 1),
        "children": [_node(rng, depth + 1) for _ in range(rng.randint(0, 2) if deeper else 0)],
        "next": _node(rng, depth + 1) if deeper and rng.random() < 0.4 else None,
        "named": {_text(rng, 3): _node(rng, depth + 1) for _ in range(rng.randint(0, 1) if deeper else 0)},
    }


def _chain(depth):
    node = None
    for i in range(depth):
        node = {"value": i, "children": [], "next": node, "named": {}}
    return node


def _nodes(rng):
    if rng.random() < 0.2:
        return _chain(rng.choice([10, 100, 400]))
    return _node(rng)


def _maybe(rng, make):
    return None if rng.random() < 0.3 else make()


def _unions(rng):
    def real():
        return rng.choice([0.0, -0.0, 1.5, math.inf, -math.inf, math.nan, rng.uniform(-1e300, 1e300)])

    return {
        "big": _maybe(rng, lambda: rng.randint(-(2**63), 2**63 - 1)),
        "small": _maybe(rng, lambda: rng.randint(-(2**31), 2**31 - 1)),
        "text": _maybe(rng, lambda: _text(rng, 20)),
        "real": _maybe(rng, real),
        "real32": _maybe(rng, lambda: struct.unpack("<f", struct.pack("<f", rng.uniform(-1e30, 1e30)))[0]),
        "strict": _maybe(rng, lambda: rng.uniform(-1e300, 1e300)),
        "flag": _maybe(rng, lambda: rng.random() < 0.5),
        "leaf": _maybe(rng, lambda: {"name": _text(rng), "score": _maybe(rng, real)}),
        "leaves": _maybe(
            rng,
            lambda: [
                _maybe(rng, lambda: {"name": _text(rng), "score": None}) for _ in range(rng.randint(0, 3))
            ],
        ),
        "day": _maybe(
            rng, lambda: datetime.date(rng.randint(1, 9999), rng.randint(1, 12), rng.randint(1, 28))
        ),
        "at": _maybe(
            rng,
            lambda: datetime.datetime(
                rng.randint(1, 9999), 1, 2, 3, 4, 5, rng.randint(0, 999999), tzinfo=UTC
            ),
        ),
        "at_millis": _maybe(
            rng, lambda: datetime.datetime(rng.randint(1, 9999), 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
        ),
        "naive": _maybe(rng, lambda: datetime.datetime(rng.randint(1, 9999), 12, 31, 23, 59, 59, 999999)),
        "clock": _maybe(rng, lambda: datetime.time(rng.randint(0, 23), 59, 59, rng.randint(0, 999999))),
        "span": _maybe(rng, lambda: datetime.timedelta(microseconds=rng.randint(-(2**62), 2**62))),
        "uid": _maybe(rng, lambda: uuid.UUID(int=rng.getrandbits(128))),
        "uid_fixed": _maybe(rng, lambda: uuid.UUID(int=rng.getrandbits(128))),
        "blob": _maybe(rng, lambda: rng.randbytes(rng.randint(0, 12))),
        "defaulted": _maybe(rng, lambda: rng.randint(-9, 9)),
        "address": _maybe(
            rng,
            lambda: rng.choice(
                [__import__("ipaddress").ip_address("10.0.0.1"), __import__("ipaddress").ip_address("::1")]
            ),
        ),
        "mail": _maybe(rng, lambda: "a@example.com"),
    }


def _enums_maps(rng):
    return {
        "color": rng.choice(list(Color)),
        "size": rng.choice(list(Size)),
        "maybe": _maybe(rng, lambda: rng.choice(list(Color))),
        "colors": [rng.choice(list(Color)) for _ in range(rng.randint(0, 5))],
        "counts": {_text(rng): rng.randint(-1000, 1000) for _ in range(rng.randint(0, 4))},
        "nested": {
            _text(rng): {_text(rng): _maybe(rng, rng.random) for _ in range(rng.randint(0, 2))}
            for _ in range(rng.randint(0, 3))
        },
        "lists": {
            _text(rng): [_text(rng) for _ in range(rng.randint(0, 3))] for _ in range(rng.randint(0, 2))
        },
        "pair": (rng.choice(list(Color)), _text(rng)),
    }


def _link(depth):
    link = None
    for i in range(depth):
        link = {"v": i, "next": link}
    return link


def _generic(rng):
    return {
        "array": [rng.choice([None, rng.randint(-99, 99), _text(rng)]) for _ in range(rng.randint(0, 5))],
        "map": {
            _text(rng): [rng.random() for _ in range(rng.randint(0, 3))] for _ in range(rng.randint(0, 3))
        },
        "link": _link(rng.choice([1, 2, 5, 50])),
        "union": rng.choice(
            [None, rng.randint(-5, 5), _text(rng), {"k": _text(rng), "v": _maybe(rng, rng.random)}]
        ),
        "symbol": rng.choice("ABC"),
        "tree": {
            _text(rng): {_text(rng): rng.random() < 0.5 for _ in range(rng.randint(0, 2))}
            for _ in range(rng.randint(0, 2))
        },
        "computed": {_text(rng): rng.randint(-9, 9) for _ in range(rng.randint(0, 3))},
        "method": _maybe(rng, lambda: [_text(rng) for _ in range(rng.randint(0, 3))]),
    }


def _many(make, most):
    return lambda rng: [make(rng) for _ in range(rng.randint(0, most))]


TARGETS = [
    Target("zero_size", ZeroSize, False, _zero),
    Target("decimals", Decimals, False, _decimals),
    Target("recursion", Node, False, _nodes),
    Target("unions", Unions, False, _unions),
    Target("enums_maps", EnumsMaps, False, _enums_maps),
    Target("generic", Generic, False, _generic),
    Target("unions_many", Unions, True, _many(_unions, 3)),
    Target("recursion_many", Node, True, _many(_node, 3)),
    Target("zero_size_many", ZeroSize, True, _many(_zero, 3)),
]


def compile_all() -> None:
    for target in TARGETS:
        target.compiled()


def pick(data: bytes) -> tuple[Target, bytes]:
    if not data:
        return TARGETS[0], b""
    return TARGETS[data[0] % len(TARGETS)], data[1:]


def seeds(count_per_target: int = 12, seed: int = 0):
    """Valid encodings: (target name, input bytes with its selector byte)."""
    rng = random.Random(seed)
    for index, target in enumerate(TARGETS):
        schema = target.compiled()
        for _ in range(count_per_target):
            value = target.values(rng)
            data = schema.dump_compiled(value, many=target.many)
            yield target.name, bytes([index]) + data


# -- the check ---------------------------------------------------------------------------


def canonical(value) -> str:
    """A comparable form: ``repr``, in C for containers of builtins. Types (True and 1,
    1 and 1.0, lists and tuples), key order, floats to the bit (-0.0; NaNs as NaN),
    decimal exponents and time zones all show in it. Values nest up to max_depth
    records deep, a few C-level calls each: the recursion limit is raised meanwhile."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        return repr(value)
    finally:
        sys.setrecursionlimit(limit)


def check(data: bytes) -> str:
    """Loads one input; returns the outcome ("value", "DecodeError", "ValidationError")
    or raises Finding (or whatever unexpected exception the codec raised)."""
    target, payload = pick(data)
    schema = target.compiled()
    try:
        value = schema.load_compiled(payload, many=target.many)
    except DecodeError as error:
        if not 0 <= error.offset <= len(payload):
            raise Finding(
                f"{target.name}: DecodeError offset {error.offset} outside 0..{len(payload)}: {error}"
            ) from error
        return "DecodeError"
    except ValidationError:
        return "ValidationError"
    try:
        again = schema.dump_compiled(value, many=target.many)
    except ValidationError as error:
        raise Finding(f"{target.name}: a decoded value does not dump again: {error.messages!r}") from None
    back = schema.load_compiled(again, many=target.many)
    if canonical(back) != canonical(value):
        raise Finding(f"{target.name}: round trip changed the value:\n{value!r}\n{back!r}")
    if schema.dump_compiled(back, many=target.many) != again:
        raise Finding(f"{target.name}: dumping the reloaded value gives other bytes")
    return "value"


# -- seeded mutations, for the short test and for smoke runs ---------------------------------

INTERESTING = [
    b"\x00",
    b"\x01",
    b"\x02",
    b"\x7f",
    b"\x80\x01",
    b"\xfe\xff\xff\xff\x0f",
    b"\xff\xff\xff\xff\x0f",
    b"\xff" * 9 + b"\x01",
    b"\xff" * 10 + b"\x01",
    b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01",
    b"\xc8\x01",
    b"\x80\xc2\xd7\x2f",
    b"\x80\x84\xaf\x5f",
    b"\x20" + b"\xff" * 16,
]


def mutate(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    """One seeded mutation: truncation, flips, inserted varints, splices, repeats."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(8)
        at = rng.randint(1, max(1, len(buf)))
        if kind == 0 and len(buf) > 1:
            del buf[rng.randint(1, len(buf)) :]
        elif kind == 1 and len(buf) > 1:
            for _ in range(rng.randint(1, 4)):
                i = rng.randrange(1, len(buf))
                buf[i] ^= 1 << rng.randrange(8)
        elif kind == 2 and len(buf) > 1:
            buf[rng.randrange(1, len(buf))] = rng.randrange(256)
        elif kind == 3:
            buf[at:at] = rng.choice(INTERESTING)
        elif kind == 4:
            other = rng.choice(pool)
            start = rng.randrange(len(other))
            buf[at:at] = other[start : start + rng.randint(1, 32)]
        elif kind == 5 and len(buf) > at:
            end = min(len(buf), at + rng.randint(1, 16))
            buf[at:at] = buf[at:end] * rng.randint(1, 20)
        elif kind == 6 and len(buf) > 1:
            start = rng.randrange(1, len(buf))
            del buf[start : start + rng.randint(1, 8)]
        else:
            buf[at:at] = bytes([rng.randrange(256)])
    if rng.random() < 0.1:
        buf[0] = rng.randrange(256)
    return bytes(buf)
