"""Python datums as fastavro takes and gives them, off the compiled fast paths.

AvroCodec writes and reads the values ``fastavro.schemaless_writer`` takes and
``schemaless_reader`` returns. Generated code writes values of the exact
Python type its Avro type needs inline; this module handles the rest:

- the conversions fastavro makes: a float or double field of a record given
  an int or a numeric string (fastavro calls ``float()`` on it), a mapping
  that is not a dict, a tuple or other iterable for an array, bytearray and
  memoryview for bytes, a str subclass, an ISO date string for a date;
- the union branch fastavro's ``write_union`` chooses when the type of a
  value alone does not decide it (``UnionChooser``);
- field defaults, written as their schema JSON says (``encode_default``);
- the logical types fastavro 1.13 does not know, as the specification
  defines them: ``big-decimal`` (a Decimal), ``duration`` (a
  ``Duration``), ``uuid`` on ``fixed(16)`` (a UUID), and
  ``timestamp-nanos`` / ``local-timestamp-nanos`` (an int of nanoseconds, as
  fastavro reads them; a datetime is also written).

Where fastavro would write bytes that do not hold the value, the value is
refused instead, with a DumpError that the codec reports as a DatumError
naming its path: a float with a fraction for an int or long (fastavro
truncates it), an int outside the int range (fastavro writes it anyway, and
readers fail or misread it), a float too large for a 32-bit float (fastavro
writes infinity), a value other than True or False for a boolean (fastavro
writes its truth value), a value other than None for null (fastavro writes
nothing), a decimal whose scaled value has more digits than its precision,
or -0 on a fixed decimal (fastavro writes -1 unit of the scale), a string
that is not a UUID for a uuid, a str or a mapping for an array (fastavro
writes its characters or keys), a value named as the null branch of a union
that is not None.

Unions: the generated code decides the branch by the value's exact type
where fastavro's choice is the same for every value of that type, and
otherwise replicates fastavro's validation (in generated code for dicts
among records and maps, here for the rest). Where a single branch takes a
type (one record for dicts, one array for lists), the value is written as
that branch without being validated first, so a value fastavro would refuse
there is either refused by the branch's writer or, where that writer
converts it (a numeric string for a record's double field, 2.0 for an int),
written. Defaults are written as the specification says (a union's default
in its first branch that fits it), where fastavro would pick a double over
an earlier float for a number.
"""

from __future__ import annotations

import datetime
import decimal
import math
import operator
import reprlib
import struct
import time
import uuid
from collections.abc import Mapping
from typing import Any

from roastedavro._record import record
from roastedavro._support import _EXACT, _decimal_of_int, fits_precision
from roastedavro.errors import DumpError

INT_RANGE = (-(2**31), 2**31 - 1)
LONG_RANGE = (-(2**63), 2**63 - 1)
_UINT32 = 2**32 - 1
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_ONE_MICROSECOND = datetime.timedelta(microseconds=1)
_DAYS_SHIFT = datetime.date(1970, 1, 1).toordinal()
_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60


@record(frozen=True)
class Duration:
    """An Avro ``duration``: months, days and milliseconds, each 0 .. 2**32-1.

    The specification's three little-endian unsigned 32-bit ints in a
    ``fixed(12)``; the parts are independent (a month is not a number of days).
    """

    months: int = 0
    days: int = 0
    milliseconds: int = 0


def shown(value: Any) -> str:
    """A short repr for an error message, whatever the value's own repr does
    (past 4300 digits an int has none at all)."""
    if isinstance(value, int) and value.bit_length() > 128:
        return f"<an int of {value.bit_length()} bits>"
    try:
        return _short.repr(value)
    except Exception:
        return f"<a {type(value).__name__}>"


def describe(value: Any) -> str:
    """A value for an error message: its type and a short repr."""
    return f"{type(value).__name__} {shown(value)}"


def refused(expected: str, value: Any) -> DumpError:
    return DumpError(f"expected {expected}, got {describe(value)}")


# -- primitives ----------------------------------------------------------------


def long_datum(value: Any, bits: int) -> int:
    """An int or long from a value that is not an exact int.

    bool and other integers (anything with ``__index__``) as fastavro; a float
    or Decimal only when it has no fraction (fastavro truncates it).
    """
    try:
        number = operator.index(value)
    except TypeError:
        if isinstance(value, (float, decimal.Decimal)) and _integral(value):
            number = int(value)
        else:
            raise refused("an int", value) from None
    low, high = INT_RANGE if bits == 32 else LONG_RANGE
    if not low <= number <= high:
        kind, bound = ("int", "2**31") if bits == 32 else ("long", "2**63")
        raise DumpError(f"Number out of range for Avro {kind} (-{bound} .. {bound}-1): {shown(number)}.")
    return number


def _integral(value: float | decimal.Decimal) -> bool:
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer()
    return value.is_finite() and value == value.to_integral_value()


def double_datum(value: Any, lenient: bool) -> float:
    """A float or double from a value that is not an exact float.

    ``lenient``: a record's float or double field, where fastavro calls
    ``float()`` on the value (so "1.5" and "NaN" are numbers there);
    elsewhere a number as C's conversion takes it (ints, objects with
    ``__float__`` or ``__index__``), never a string.
    """
    if lenient and isinstance(value, (str, bytes, bytearray)):
        try:
            return float(value)
        except ValueError:
            raise refused("a number", value) from None
    kind = type(value)
    if (
        value is not None
        and not isinstance(value, (str, bytes, bytearray))
        and (hasattr(kind, "__float__") or hasattr(kind, "__index__"))
    ):
        try:
            return float(value)
        except OverflowError:
            raise DumpError(f"Number out of range for an Avro double: {shown(value)}.") from None
        except (TypeError, ValueError):
            pass
    raise refused("a number", value)


def boolean_datum(value: Any) -> bool:
    # 0 and 1 as ints; fastavro writes the truth value of anything
    if type(value) is int and value in (0, 1):
        return value == 1
    kind = type(value)
    if kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_"):
        return bool(value)  # numpy's booleans, as fastavro takes them
    raise refused("a bool", value)


def string_datum(value: Any) -> str:
    if isinstance(value, str):
        return str.__str__(value)
    raise refused("a str", value)


def bytes_datum(value: Any) -> bytes:
    """bytes from any bytes-like value (bytearray, memoryview, ...), as fastavro."""
    if isinstance(value, (str, int)) or value is None:
        raise refused("bytes", value)
    try:
        return bytes(memoryview(value))
    except TypeError:
        raise refused("bytes", value) from None


def fixed_datum(value: Any, size: int) -> bytes:
    data = bytes_datum(value)
    if len(data) != size:
        raise DumpError(f"expected {size} bytes for a fixed({size}), got {len(data)}")
    return data


def enum_index(value: Any, indexes: dict) -> int:
    """A symbol's index: by hash (a str subclass, a str-valued Enum member),
    else by equality as fastavro's ``symbols.index(value)``."""
    try:
        index = indexes.get(value)
    except TypeError:  # unhashable
        index = None
    if index is None:
        for symbol, position in indexes.items():
            if value == symbol:
                return position
        raise DumpError(f"{shown(value)} is not a symbol of the enum ({shown(', '.join(indexes))})")
    return index


def record_datum(value: Any) -> dict:
    if isinstance(value, Mapping):
        return dict(value)
    raise refused("a dict (or other mapping) for a record", value)


def array_datum(value: Any) -> list:
    """A list of the items of any iterable but a str, bytes or mapping (whose
    characters, bytes or keys fastavro would write)."""
    if isinstance(value, (str, bytes, bytearray, memoryview, Mapping)) or value is None:
        raise refused("a list (or other sequence) for an array", value)
    try:
        return list(value)
    except TypeError:
        raise refused("a list (or other sequence) for an array", value) from None


def map_datum(value: Any) -> dict:
    if isinstance(value, Mapping):
        return dict(value)
    raise refused("a dict (or other mapping) for a map", value)


def map_key(key: Any) -> None:
    if not isinstance(key, str):
        raise DumpError(f"map keys must be strings, got {describe(key)}")


def missing_field() -> DumpError:
    return DumpError("no value and no default for the field")


# -- logical types ---------------------------------------------------------------

#: timestamp units (as _runtime.pxd's UNIT_*)
UNIT_MILLIS, UNIT_MICROS, UNIT_NANOS = 0, 1, 2


def timestamp_datum(value: Any, unit: int, local: bool) -> int:
    """A timestamp in millis, micros or nanos, as fastavro converts a datetime:
    an aware one to UTC, a naive one as local time (``time.mktime``), both
    as wall-clock time for the local-timestamp types. Any other value is an
    int written as it is."""
    if not isinstance(value, datetime.datetime):
        return long_datum(value, 64)
    try:
        if local:
            micros = (value.replace(tzinfo=datetime.timezone.utc) - _EPOCH) // _ONE_MICROSECOND
        elif value.utcoffset() is None:
            micros = int(time.mktime(value.timetuple())) * 1000000 + value.microsecond
        else:
            micros = (value - _EPOCH) // _ONE_MICROSECOND
    except (TypeError, ValueError, OverflowError) as error:
        raise DumpError(f"cannot be written as a timestamp: {error}") from None
    if unit == UNIT_MILLIS:
        return micros // 1000
    return long_datum(micros * 1000 if unit == UNIT_NANOS else micros, 64)


def date_datum(value: Any) -> int:
    """Days since 1970-01-01 from a date string in ISO format (as fastavro),
    or an int written as it is."""
    if isinstance(value, str):
        try:
            return datetime.date.fromisoformat(value).toordinal() - _DAYS_SHIFT
        except ValueError:
            raise refused("a date", value) from None
    if isinstance(value, datetime.date):
        return value.toordinal() - _DAYS_SHIFT
    return long_datum(value, 32)


def decimal_bytes(value: Any, scale: int, precision: int, size: int) -> bytes:
    """The two's complement bytes of a Decimal's unscaled value, as fastavro
    writes them (its length rule for bytes, sign-extended to a fixed's size),
    or bytes given as they are.

    fastavro's errors: more digits than the precision, more places than the
    scale. Also refused: a value whose scaled digits exceed the precision
    (fastavro writes 1E+5 for decimal(4, 2)), NaN and infinities.
    """
    if isinstance(value, (bytes, bytearray, memoryview)):
        encoded = fixed_datum(value, size) if size else bytes(value)
        # as strict as for a Decimal: what a reader checking the precision reads
        if not fits_precision(int.from_bytes(encoded, "big", signed=True), precision):
            raise DumpError(
                f"the {len(encoded)} bytes given for a decimal({precision}, {scale}) "
                f"hold an unscaled value of more than {precision} digits"
            )
        return encoded
    if not isinstance(value, decimal.Decimal):
        raise refused("a Decimal", value)
    if not value.is_finite():
        raise DumpError(f"{value} cannot be written as an Avro decimal")
    exponent: int
    sign, digits, exponent = value.as_tuple()  # type: ignore[assignment]  # finite: an int
    where = f"decimal({precision}, {scale})"
    if len(digits) > precision:
        raise DumpError(f"{value} has {len(digits)} digits, more than the precision of {where}")
    if exponent + scale < 0:
        raise DumpError(f"{value} has more decimal places than the scale of {where}; it would be rounded")
    nonzero = any(digits)
    # digits counted before any power of ten is computed
    if nonzero and len(digits) + exponent + scale > precision:
        raise DumpError(f"{value} has more digits than the precision of {where} allows at scale {scale}")
    unscaled = int(decimal.Decimal((0, digits, exponent + scale))) if nonzero else 0
    if sign:
        unscaled = -unscaled
    if size:
        return unscaled.to_bytes(size, "big", signed=True)
    return unscaled.to_bytes((abs(unscaled).bit_length() + 8) // 8, "big", signed=True)


def uuid_text(value: Any) -> str:
    """A uuid string: a string that is a UUID, written as it is."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, str):
        try:
            uuid.UUID(value)
        except ValueError:
            raise refused("a UUID", value) from None
        return str.__str__(value)
    raise refused("a UUID", value)


def uuid_bytes(value: Any) -> bytes:
    """A uuid on fixed(16): the UUID's 16 bytes (big-endian, as Java), or 16 bytes."""
    if isinstance(value, uuid.UUID):
        return value.bytes
    if isinstance(value, (bytes, bytearray, memoryview)):
        return fixed_datum(value, 16)
    raise refused("a UUID", value)


def encode_long(n: int) -> bytes:
    """An Avro long: zigzag, then a varint."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def big_decimal_bytes(value: Any) -> bytes:
    """A big-decimal's bytes (Java's encoding): the unscaled value's minimal
    two's complement as Avro bytes, then the scale as an Avro int."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        encoded = bytes(value)
        problem = _big_decimal_problem(encoded)
        if problem is not None:
            raise DumpError(
                f"the {len(encoded)} bytes given for a big-decimal are not one: "
                f"{problem} (its bytes are the unscaled value's two's complement as "
                f"Avro bytes, then the scale as an Avro int)"
            )
        return encoded
    if not isinstance(value, decimal.Decimal):
        raise refused("a Decimal", value)
    if not value.is_finite():
        raise DumpError(f"{value} cannot be written as an Avro big-decimal")
    exponent: int
    sign, digits, exponent = value.as_tuple()  # type: ignore[assignment]  # finite: an int
    scale = -exponent
    if not INT_RANGE[0] <= scale <= INT_RANGE[1]:
        raise DumpError(f"{shown(value)}: its scale does not fit an Avro int")
    unscaled = int(decimal.Decimal((sign, digits, 0)))
    length = ((unscaled if unscaled >= 0 else ~unscaled).bit_length() + 8) // 8
    encoded = unscaled.to_bytes(length, "big", signed=True)
    return encode_long(len(encoded)) + encoded + encode_long(scale)


def _zigzag(data: bytes, position: int) -> tuple[int, int] | None:
    """An Avro long at ``position`` and the position after it, or None."""
    result = shift = 0
    while position < len(data) and shift < 64:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), position
    return None


def _big_decimal_problem(data: bytes) -> str | None:
    """Why raw bytes are not a big-decimal the reader reads back, or None."""
    found = _zigzag(data, 0)
    if found is None:
        return "no length of the unscaled value"
    length, position = found
    if length <= 0:
        return "the unscaled value is empty" if length == 0 else "a negative length"
    if length > len(data) - position:
        return f"the unscaled value's {length} bytes run past the end"
    found = _zigzag(data, position + length)
    if found is None:
        return "no scale after the unscaled value"
    scale, position = found
    if not INT_RANGE[0] <= scale <= INT_RANGE[1]:
        return "the scale does not fit an Avro int"
    if position != len(data):
        return f"{len(data) - position} bytes after the scale"
    return None


def big_decimal_value(unscaled: bytes, scale: int) -> decimal.Decimal:
    return _decimal_of_int(int.from_bytes(unscaled, "big", signed=True)).scaleb(-scale, _EXACT)


def duration_bytes(value: Any) -> bytes:
    if isinstance(value, Duration):
        parts = (value.months, value.days, value.milliseconds)
        if not all(type(part) is int and 0 <= part <= _UINT32 for part in parts):
            raise DumpError(f"{value}: months, days and milliseconds are ints from 0 to 2**32-1")
        return struct.pack("<III", *parts)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return fixed_datum(value, 12)
    raise refused("a Duration", value)


def duration_value(months: int, days: int, milliseconds: int) -> Duration:
    return Duration(months, days, milliseconds)


def datum_error(error: DumpError):
    """The public error for a DumpError out of generated code (path innermost first)."""
    from roastedavro.errors import DatumError

    messages = error.messages
    if len(messages) == 1 and isinstance(messages[0], str):
        reason = messages[0]
    else:
        reason = str(messages)
    return DatumError(reason, tuple(reversed(error.path)))
