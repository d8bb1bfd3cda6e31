"""What the parts of Avro JSON share: the error types, the constants, and
numbers as JSON has them."""

from __future__ import annotations

import datetime
import decimal
import math
import struct
import uuid
from typing import Any, Callable

from roastedavro._datum import (
    INT_RANGE,
    LONG_RANGE,
    UNIT_MICROS,
    UNIT_MILLIS,
    UNIT_NANOS,
    Duration,
    double_datum,
    shown,
)
from roastedavro.avro.types import Array, AvroType, Enum, Fixed, Map, Record, Union
from roastedavro.errors import DatumError

_MISSING = object()
_NO_DEFAULT = object()
_INT_LOW, _INT_HIGH = INT_RANGE
_LONG_LOW, _LONG_HIGH = LONG_RANGE
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_LOCAL_EPOCH = datetime.datetime(1970, 1, 1)
_DATE_EPOCH = datetime.date(1970, 1, 1)
_MICROS_PER_DAY = 86_400_000_000
# datetime's years 1-9999 in days from 1970-01-01 (as the binary reader checks them)
_FIRST_DAY, _LAST_DAY = -719162, 2932896
_TIMESTAMPS = {
    "timestamp-millis": (UNIT_MILLIS, False),
    "timestamp-micros": (UNIT_MICROS, False),
    "timestamp-nanos": (UNIT_NANOS, False),
    "local-timestamp-millis": (UNIT_MILLIS, True),
    "local-timestamp-micros": (UNIT_MICROS, True),
    "local-timestamp-nanos": (UNIT_NANOS, True),
}
#: the exact Python type of each of the generated union dispatch's tests
_PYTHON_TYPES = {
    "None": type(None),
    "str": str,
    "int": int,
    "float": float,
    "dict": dict,
    "list": list,
    "bool": bool,
    "bytes": bytes,
    "datetime": datetime.datetime,
    "date": datetime.date,
    "time": datetime.time,
    "Decimal": decimal.Decimal,
    "UUID": uuid.UUID,
    "Duration": Duration,
}
_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_FLOAT32 = struct.Struct("<f")
_UINT32 = struct.Struct("<I")
_FLT_MAX = 3.4028234663852886e38
# halfway between the largest float and 2**128: above it a float is infinite
_FLT_OVERFLOW_MIDPOINT = 2.0**128 - 2.0**103


class JSONDecodeError(ValueError):
    """JSON that is not a value of the schema in Avro's JSON encoding (or not
    JSON at all). ``path`` names the field, index or key, outermost first, as
    ``roastedavro.errors.DatumError``'s does; ``reason`` is the message
    without it."""

    __module__ = "roastedavro.avrojson"  # where users import it from

    def __init__(self, message: str, path: tuple = ()):
        where = _path_text(tuple(path))
        super().__init__(f"{where}: {message}" if where else message)
        self.reason = message
        self.path = tuple(path)

    def __reduce__(self):
        return (type(self), (self.reason, self.path))


def _path_text(path: tuple) -> str:
    shown_parts = DatumError.SHOWN_PARTS

    def text(parts):
        return "".join(f"[{part!r}]" if not isinstance(part, str) else f".{part}" for part in parts)

    if len(path) > shown_parts:
        half = shown_parts // 2
        return (text(path[:half]) + f" ...({len(path) - 2 * half} more)... " + text(path[-half:])).lstrip(".")
    return text(path).lstrip(".")


class _ByKind:
    """A builder of one function per Avro type: ``of`` calls the method named
    for the type's kind (``record``, ``union``, ``array``, ``map``, ``enum``,
    ``fixed``, else ``primitive``, which also gets ``extra``)."""

    schema: Any

    def of(self, avro: AvroType, *extra: Any) -> Callable:
        avro = self.schema.deref(avro)
        if isinstance(avro, Record):
            return self.record(avro)
        if isinstance(avro, Union):
            return self.union(avro)
        if isinstance(avro, Array):
            return self.array(avro)
        if isinstance(avro, Map):
            return self.map(avro)
        if isinstance(avro, Enum):
            return self.enum(avro)
        if isinstance(avro, Fixed):
            return self.fixed(avro)
        return self.primitive(avro, *extra)


class _Mismatch(Exception):
    """Internal: JSON that does not match; ``path`` innermost first."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
        self.path: list = []


# -- numbers ---------------------------------------------------------------------------


def _float32(number: float) -> float:
    """A double rounded to the nearest 32-bit float (infinite past its range, as C and Java)."""
    try:
        return _FLOAT32.unpack(_FLOAT32.pack(number))[0]
    except OverflowError:
        return math.copysign(math.inf, number)


def _float32_neighbour(number: float, toward: float) -> float:
    """The 32-bit float next to the (finite, 32-bit) ``number`` in the direction of ``toward``."""
    bits = _UINT32.unpack(_FLOAT32.pack(number))[0]
    if number == 0:
        bits = 0x80000001 if toward < 0 else 1
    elif (toward > number) == (number > 0):
        bits += 1
    else:
        bits -= 1
    return _FLOAT32.unpack(_UINT32.pack(bits))[0]


def _decimal_float32(value: decimal.Decimal) -> float:
    """A JSON number's text (as a Decimal) rounded once to the nearest 32-bit
    float, as Java parses a float: rounding to a double first would round a
    number just off the midpoint of two floats to the midpoint, then to even."""
    number = float(value)  # correctly rounded
    if not math.isfinite(number):
        return number
    narrowed = _float32(number)
    if narrowed == number:
        return narrowed
    if math.isinf(narrowed):
        other = math.copysign(_FLT_MAX, number)
        midpoint = math.copysign(_FLT_OVERFLOW_MIDPOINT, number)
    else:
        other = _float32_neighbour(narrowed, number)
        midpoint = (narrowed + other) / 2  # exact in a double
    if number != midpoint:
        return narrowed
    exact = decimal.Decimal(number)
    if value == exact:
        return narrowed  # a true tie: to even
    return other if (value > exact) == (other > narrowed) else narrowed


def _double_json(number: float) -> Any:
    if math.isfinite(number):
        return number
    return "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")


def _float_json(number: float) -> Any:
    """A 32-bit float as the shortest decimal that reads back as the same float
    (rounded from the decimal once, as Java reads it, or through a double)."""
    if not math.isfinite(number):
        return _double_json(number)
    for digits in range(1, 10):
        text = f"{number:.{digits}g}"
        shortest = float(text)
        if _float32(shortest) == number and _decimal_float32(decimal.Decimal(text)) == number:
            return shortest
    return number


def _double_datum(value: Any, lenient: bool) -> float:
    """What the binary writer takes for a float or double (``write_double_datum_slow``)."""
    if type(value) is int:
        try:
            return float(value)
        except OverflowError:
            pass
    return double_datum(value, lenient)


def _json_number(value: Any, what: str) -> float:
    """A float or double read from JSON: a number or one of the three strings."""
    kind = type(value)
    if kind is float:
        return value
    if kind is int:
        try:
            return float(value)
        except OverflowError:
            return math.copysign(math.inf, value)
    if kind is decimal.Decimal:
        return float(value)  # correctly rounded, infinite past the range
    if kind is str:
        special = _SPECIAL_FLOATS.get(value)
        if special is not None:
            return special
    raise _Mismatch(
        f'expected a number for {what} (or "NaN", "Infinity", "-Infinity"), got {_json_kind(value)}'
    )


def _json_kind(value: Any) -> str:
    """A JSON value for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return f"an object {shown(value)}"
    if isinstance(value, list):
        return f"an array {shown(value)}"
    if isinstance(value, str):
        return f"the string {shown(value)}"
    if isinstance(value, decimal.Decimal):
        return f"the number {shown(str(value))[1:-1]}"
    return f"the number {shown(value)}"
