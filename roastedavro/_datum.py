"""Python datums as fastavro takes and gives them, off the compiled fast paths.

AvroCodec writes and reads the values ``fastavro.schemaless_writer`` takes and
``schemaless_reader`` returns. Generated code writes values of the exact
Python type its Avro type needs inline; this module handles the rest:

- the conversions fastavro makes: a float or double field of a record given
  an int or a numeric string (fastavro calls ``float()`` on it), a mapping
  that is not a dict, a tuple or other iterable for an array, bytearray and
  memoryview for bytes, a str subclass, an ISO date string for a date;
- the union branch fastavro's ``write_union`` chooses when the type of a
  value alone does not decide it (:class:`UnionChooser`);
- field defaults, written as their schema JSON says (:func:`encode_default`);
- the logical types fastavro 1.13 does not know, as the specification
  defines them: ``big-decimal`` (a Decimal), ``duration`` (a
  :class:`Duration`), ``uuid`` on ``fixed(16)`` (a UUID), and
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

import array
import dataclasses
import datetime
import decimal
import math
import numbers
import operator
import reprlib
import struct
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from roastedavro._support import _EXACT, _decimal_of_int, fits_precision
from roastedavro.avro.types import (
    Array, AvroType, Enum, Fixed, Map, NamedRef, Primitive, Record, Schema, Union,
)
from roastedavro.errors import DumpError, SchemaError

INT_RANGE = (-(2**31), 2**31 - 1)
LONG_RANGE = (-(2**63), 2**63 - 1)
_UINT32 = 2**32 - 1
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_ONE_MICROSECOND = datetime.timedelta(microseconds=1)
_DAYS_SHIFT = datetime.date(1970, 1, 1).toordinal()
_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60


@dataclasses.dataclass(frozen=True)
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
        raise DumpError(f"Number out of range for Avro {kind} (-{bound} .. {bound}-1): "
                        f"{shown(number)}.")
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
    if value is not None and not isinstance(value, (str, bytes, bytearray)) and (
            hasattr(kind, "__float__") or hasattr(kind, "__index__")):
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
        return bool(value)    # numpy's booleans, as fastavro takes them
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
        raise DumpError(f"{shown(value)} is not a symbol of the enum "
                        f"({shown(', '.join(indexes))})")
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
            raise DumpError(f"the {len(encoded)} bytes given for a decimal({precision}, {scale}) "
                            f"hold an unscaled value of more than {precision} digits")
        return encoded
    if not isinstance(value, decimal.Decimal):
        raise refused("a Decimal", value)
    if not value.is_finite():
        raise DumpError(f"{value} cannot be written as an Avro decimal")
    sign, digits, exponent = value.as_tuple()
    where = f"decimal({precision}, {scale})"
    if len(digits) > precision:
        raise DumpError(f"{value} has {len(digits)} digits, more than the precision of {where}")
    if exponent + scale < 0:
        raise DumpError(f"{value} has more decimal places than the scale of {where}; "
                        "it would be rounded")
    nonzero = any(digits)
    # digits counted before any power of ten is computed
    if nonzero and len(digits) + exponent + scale > precision:
        raise DumpError(f"{value} has more digits than the precision of {where} allows "
                        f"at scale {scale}")
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
            raise DumpError(f"the {len(encoded)} bytes given for a big-decimal are not one: "
                            f"{problem} (its bytes are the unscaled value's two's complement as "
                            f"Avro bytes, then the scale as an Avro int)")
        return encoded
    if not isinstance(value, decimal.Decimal):
        raise refused("a Decimal", value)
    if not value.is_finite():
        raise DumpError(f"{value} cannot be written as an Avro big-decimal")
    sign, digits, exponent = value.as_tuple()
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
    length = _zigzag(data, 0)
    if length is None:
        return "no length of the unscaled value"
    length, position = length
    if length <= 0:
        return "the unscaled value is empty" if length == 0 else "a negative length"
    if length > len(data) - position:
        return f"the unscaled value's {length} bytes run past the end"
    scale = _zigzag(data, position + length)
    if scale is None:
        return "no scale after the unscaled value"
    scale, position = scale
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


# -- unions: fastavro's choice of branch -------------------------------------------

# fastavro's LOGICAL_WRITERS, keyed as fastavro keys them ("long-timestamp-millis")
_PREPARED = {
    ("long", "timestamp-millis"), ("long", "timestamp-micros"),
    ("long", "local-timestamp-millis"), ("long", "local-timestamp-micros"),
    ("int", "date"), ("bytes", "decimal"), ("fixed", "decimal"), ("string", "uuid"),
    ("int", "time-millis"), ("long", "time-micros"),
}


_TIMESTAMPS_READ = ("timestamp-millis", "timestamp-micros", "local-timestamp-millis",
                    "local-timestamp-micros")


def reads_as(avro: AvroType) -> str | None:
    """The Python type AvroCodec reads a (dereferenced) branch's values as, by
    the names ``avrogen._TYPE_TESTS`` uses ("int", "datetime", "Decimal"...)."""
    logical = getattr(avro, "logical", None)
    name = logical.name if logical is not None else None
    if isinstance(avro, Primitive):
        kind = avro.name
        if kind == "null":
            return "None"
        if kind == "boolean":
            return "bool"
        if kind == "int":
            return {"date": "date", "time-millis": "time"}.get(name, "int")
        if kind == "long":
            if name in _TIMESTAMPS_READ:
                return "datetime"
            return "time" if name == "time-micros" else "int"  # nanos: ints
        if kind in ("float", "double"):
            return "float"
        if kind == "bytes":
            return "Decimal" if name in ("decimal", "big-decimal") else "bytes"
        return "UUID" if name == "uuid" else "str"
    if isinstance(avro, Fixed):
        return {"decimal": "Decimal", "uuid": "UUID", "duration": "Duration"}.get(name, "bytes")
    if isinstance(avro, Enum):
        return "str"
    if isinstance(avro, Array):
        return "list"
    if isinstance(avro, (Map, Record)):
        return "dict"
    return None


def kind_of(datum: Any) -> str | None:
    """A datum's Python type by the names of :func:`reads_as` (subclasses as
    their base), or None for values whose branch only validation decides."""
    if datum is None:
        return "None"
    if isinstance(datum, bool):
        return "bool"
    if isinstance(datum, numbers.Integral):
        return "int"
    if isinstance(datum, float):
        return "float"
    if isinstance(datum, str):
        return "str"
    if isinstance(datum, (bytes, bytearray)):
        return "bytes"
    if isinstance(datum, datetime.datetime):
        return "datetime"
    if isinstance(datum, datetime.date):
        return "date"
    if isinstance(datum, datetime.time):
        return "time"
    if isinstance(datum, decimal.Decimal):
        return "Decimal"
    if isinstance(datum, uuid.UUID):
        return "UUID"
    if isinstance(datum, Duration):
        return "Duration"
    return None


def always_exact(kind: str, avro: AvroType) -> bool:
    """Whether every value of ``kind`` that ``avro`` (reading ``kind``) accepts
    reads back equal: not so for a float in a float, a time in time-millis."""
    logical = getattr(avro, "logical", None)
    if kind == "float":
        return not (isinstance(avro, Primitive) and avro.name == "float")
    if kind == "time":
        return logical is None or logical.name != "time-millis"
    return True


def _exact(datum: Any, kind: str, avro: AvroType) -> bool:
    """Whether ``datum`` (of ``kind``, accepted by ``avro``, which reads
    ``kind``) reads back equal."""
    if always_exact(kind, avro):
        return True
    if kind == "float":
        try:
            return math.isnan(datum) or struct.unpack("<f", struct.pack("<f", datum))[0] == datum
        except (OverflowError, struct.error):
            return False
    return datum.microsecond % 1000 == 0  # a time in time-millis


class UnionChooser:
    """The branch of a union a datum is written as.

    ``(name, value)`` tuples name the branch. Otherwise the most specific
    branch that represents the value exactly: among the branches that accept
    the datum and read back its own Python type (``reads_as``), the first
    whose reading is equal to it (a double before a float), else the first of
    them. A ``datetime`` is a ``date`` to Python, but a timestamp branch reads
    it back, and an int written as a date, a time or a float does not come
    back as an int. Only where no branch reads the datum's type (and for
    dicts, lists and other values), fastavro's ``write_union`` decides: the
    first branch whose validation (fastavro's ``_validate``, logical types
    converted first) accepts the datum, except that among records the one
    sharing most field names with the datum wins, and a float branch gives
    way to a later double. fastavro itself always takes its own choice, and
    so writes a datetime in ``["null", date, timestamp-millis]`` as a date,
    and 2**60 + 1 in ``["float", "long"]`` as a float. Used when the datum's
    exact type does not decide the branch (see ``avrogen._UnionPlan``).
    """

    def __init__(self, union: Union, schema: Schema):
        self.branches = union.branches
        self.schema = schema
        self.text = "[" + ", ".join(branch_name(b) for b in union.branches) + "]"
        #: fastavro's tuple notation: a branch's name -> its index (the first
        #: of a name, as a scan in order finds it)
        self.by_name: dict[str, int] = {}
        for index, branch in enumerate(union.branches):
            self.by_name.setdefault(branch_name(branch), index)

    def choose(self, datum: Any) -> tuple:
        """(branch index, the value to write)."""
        try:
            return self._choose(datum)
        except DumpError:
            raise
        except (TypeError, ValueError, ArithmeticError, AttributeError, LookupError) as error:
            # a value whose own methods fail while it is compared or measured
            raise DumpError(f"{describe(datum)} cannot be checked against the union "
                            f"{self.text}: {error}") from None
        except RecursionError:
            # validation recurses in Python: a value that contains itself
            raise DumpError(f"the {type(datum).__name__} is nested too deeply for Python's "
                            f"recursion limit, or contains itself: it cannot be checked against "
                            f"the union {self.text}") from None

    def _choose(self, datum: Any) -> tuple:
        branches = self.branches
        if isinstance(datum, tuple):
            if len(datum) != 2:
                raise DumpError(f"a tuple in a union names its branch: (name, value), not "
                                f"{shown(datum)}")
            name, datum = datum
            try:
                index = self.by_name.get(name)
            except TypeError:    # a name that cannot be hashed names no branch
                index = None
            if index is None:
                raise DumpError(f"the union {self.text} has no branch named {shown(name)}")
            if name == "null" and datum is not None:
                # fastavro writes nothing for it: the value would be lost
                raise refused("None for an Avro null", datum)
            return index, datum
        chosen = self._same_kind(datum)
        if chosen >= 0:
            return chosen, datum
        deref = self.schema.deref
        best, most_fields, could_be_float = -1, -1, False
        for index, branch in enumerate(branches):
            if could_be_float:
                if isinstance(branch, Primitive) and branch.name == "double":
                    best = index
                    break
                continue
            if not accepts(datum, branch, self.schema):
                continue
            definition = deref(branch)
            if isinstance(definition, Record) and definition.kind == "record":
                names = {field.name for field in definition.fields}
                count = len(names.intersection(datum))
                if count > most_fields:
                    best, most_fields = index, count
            elif isinstance(definition, Primitive) and definition.name == "float":
                best, could_be_float = index, True
            else:
                best = index
                break
        if best < 0:
            raise DumpError(f"{describe(datum)} matches no branch of the union {self.text}")
        return best, datum

    def _same_kind(self, datum: Any) -> int:
        """The branch that reads back the datum's own type and value, else the
        first that reads back its type; -1: none does (or a dict, a list)."""
        kind = kind_of(datum)
        if kind is None:
            return -1
        first = -1
        for index, branch in enumerate(self.branches):
            definition = self.schema.deref(branch)
            if reads_as(definition) != kind:
                continue
            try:
                if not accepts(datum, definition, self.schema):
                    continue
            except DumpError:
                continue  # e.g. a decimal this branch cannot hold: maybe another can
            if kind == "float" and isinstance(definition, Primitive) and definition.name == "double":
                return index  # fastavro's preference too: exact, and after any float
            if first < 0:
                first = index
            if kind != "float" and _exact(datum, kind, definition):
                return index
        return first


def branch_name(avro: AvroType) -> str:
    """The name fastavro's tuple notation uses for a union branch."""
    if isinstance(avro, (NamedRef, Record, Enum, Fixed)):
        return avro.name
    return avro.type_name


def _prepare(datum: Any, avro: AvroType) -> Any:
    """fastavro's LOGICAL_WRITERS (and ours for the logical types it lacks)
    as its validation applies them: the datum as the underlying type."""
    logical = getattr(avro, "logical", None)
    if logical is None:
        return datum
    kind = avro.type_name
    name = logical.name
    try:
        if (kind, name) in _PREPARED:
            # only whether the result validates matters: any int for these
            if name in ("timestamp-millis", "timestamp-micros", "local-timestamp-millis",
                        "local-timestamp-micros"):
                if isinstance(datum, datetime.datetime):
                    return 0
            elif name == "date":
                if isinstance(datum, (datetime.date, str)):
                    return date_datum(datum)
            elif name == "decimal":
                if isinstance(datum, decimal.Decimal):
                    return decimal_bytes(datum, logical.scale, logical.precision,
                                         avro.size if kind == "fixed" else 0)
            elif name == "uuid":
                return str(datum) if isinstance(datum, uuid.UUID) else datum
            elif name in ("time-millis", "time-micros"):
                if isinstance(datum, datetime.time):
                    return 0
            return datum
        if name in ("timestamp-nanos", "local-timestamp-nanos"):
            if isinstance(datum, datetime.datetime):
                return 0
        elif name == "big-decimal":
            if isinstance(datum, decimal.Decimal):
                return big_decimal_bytes(datum)
        elif name == "uuid":  # on fixed(16)
            if isinstance(datum, uuid.UUID):
                return datum.bytes
        elif name == "duration":
            if isinstance(datum, Duration):
                return duration_bytes(datum)
    except DumpError:
        # fastavro's own conversions raise out of the validation, and so out
        # of the union; ours for the types it does not know just do not match
        if (kind, name) in _PREPARED:
            raise
        return None
    return datum


class Validator:
    """fastavro's validation of one type, for the values the generated checks
    leave to Python (mappings that are not dicts, tuples in unions, decimals)."""

    def __init__(self, avro: AvroType, schema: Schema):
        self.avro = avro
        self.schema = schema

    def __call__(self, datum: Any) -> bool:
        return accepts(datum, self.avro, self.schema)


def accepts(datum: Any, avro: AvroType, schema: Schema) -> bool:
    """fastavro's ``_validate(datum, avro)`` (its Cython build), over our types."""
    if isinstance(avro, NamedRef):
        avro = schema.deref(avro)
    datum = _prepare(datum, avro)
    if isinstance(avro, Primitive):
        kind = avro.name
        if kind == "null":
            return datum is None
        if kind == "boolean":
            return isinstance(datum, bool)
        if kind == "string":
            return isinstance(datum, str)
        if kind in ("int", "long"):
            low, high = INT_RANGE if kind == "int" else LONG_RANGE
            return (isinstance(datum, numbers.Integral) and not isinstance(datum, bool)
                    and low <= datum <= high)
        if kind in ("float", "double"):
            return isinstance(datum, numbers.Real) and not isinstance(datum, bool)
        return isinstance(datum, (bytes, bytearray))  # bytes
    if isinstance(avro, Fixed):
        return isinstance(datum, (bytes, bytearray)) and len(datum) == avro.size
    if isinstance(avro, Enum):
        return datum in avro.symbols
    if isinstance(avro, Array):
        if not isinstance(datum, (Sequence, array.array)) or isinstance(datum, str):
            return False
        return all(accepts(item, avro.items, schema) for item in datum)
    if isinstance(avro, Map):
        if not isinstance(datum, Mapping) or not all(isinstance(key, str) for key in datum):
            return False
        return all(accepts(item, avro.values, schema) for item in datum.values())
    if isinstance(avro, Record):
        if not isinstance(datum, Mapping):
            return False
        if "-type" in datum and datum["-type"] != avro.name:
            return False
        for field in avro.fields:
            value = datum.get(field.name, field.default if field.has_default else None)
            if not accepts(value, field.type, schema):
                return False
        return True
    if isinstance(avro, Union):
        if isinstance(datum, tuple):
            if len(datum) != 2:
                return False
            name, value = datum
            for branch in avro.branches:
                # fastavro's validation names only records; other branches
                # by their schema, so only primitives match a name here
                if isinstance(branch, (Record, NamedRef)):
                    own = branch.name
                elif isinstance(branch, Primitive) and branch.logical is None and not branch.props:
                    own = branch.name
                else:
                    own = None
                if own == name:
                    return accepts(value, branch, schema)
            return False
        return any(accepts(datum, branch, schema) for branch in avro.branches)
    return False


# -- defaults ------------------------------------------------------------------------


class _NotThisType(Exception):
    pass


def encode_default(avro: AvroType, value: Any, schema: Schema, where: str = "") -> bytes:
    """The binary encoding of a field default given as schema JSON.

    As the specification has it: bytes and fixed defaults are strings of code
    points 0-255, a union's default belongs to its first branch (or, as Java
    1.12 accepts, to the first branch it fits), logical types take the
    underlying type's JSON. Raises SchemaError for a default that fits no type.
    """
    try:
        return _encode(avro, value, schema)
    except _NotThisType as error:
        raise SchemaError(f"the default {shown(value)} is not a valid value of its type "
                          f"({error})", where) from None


def _encode(avro: AvroType, value: Any, schema: Schema) -> bytes:
    avro = schema.deref(avro)
    if isinstance(avro, Union):
        for index, branch in enumerate(avro.branches):
            try:
                return encode_long(index) + _encode(branch, value, schema)
            except _NotThisType:
                continue
        raise _NotThisType("it fits no branch of the union")
    if isinstance(avro, Primitive):
        kind = avro.name
        if kind == "null":
            if value is None:
                return b""
        elif kind == "boolean":
            if isinstance(value, bool):
                return b"\x01" if value else b"\x00"
        elif kind in ("int", "long"):
            low, high = INT_RANGE if kind == "int" else LONG_RANGE
            if type(value) is int and low <= value <= high:
                return encode_long(value)
        elif kind in ("float", "double"):
            if isinstance(value, str):
                # "NaN", "Infinity" (JSON has no such numbers), "1.5": as
                # fastavro takes them; the strict parser refuses them first
                try:
                    value = float(value)
                except ValueError:
                    pass
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                try:
                    return struct.pack("<f" if kind == "float" else "<d", float(value))
                except (OverflowError, struct.error):
                    pass
        elif kind == "string":
            if isinstance(value, str):
                try:
                    encoded = value.encode("utf-8")
                except UnicodeEncodeError:
                    raise _NotThisType("not valid UTF-8") from None
                return encode_long(len(encoded)) + encoded
        elif kind == "bytes":
            encoded = _latin1(value)
            if encoded is not None:
                return encode_long(len(encoded)) + encoded
        raise _NotThisType(f"not a {kind}")
    if isinstance(avro, Fixed):
        encoded = _latin1(value)
        if encoded is not None and len(encoded) == avro.size:
            return encoded
        raise _NotThisType(f"not {avro.size} bytes")
    if isinstance(avro, Enum):
        if isinstance(value, str) and value in avro.symbols:
            return encode_long(avro.symbols.index(value))
        raise _NotThisType("not a symbol of the enum")
    if isinstance(avro, Array):
        if not isinstance(value, list):
            raise _NotThisType("not a list")
        if not value:
            return b"\x00"
        return encode_long(len(value)) + b"".join(_encode(avro.items, item, schema)
                                              for item in value) + b"\x00"
    if isinstance(avro, Map):
        if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
            raise _NotThisType("not a JSON object")
        if not value:
            return b"\x00"
        parts = [encode_long(len(value))]
        for key, item in value.items():
            key_bytes = key.encode("utf-8", "surrogatepass")
            parts += [encode_long(len(key_bytes)), key_bytes, _encode(avro.values, item, schema)]
        return b"".join(parts) + b"\x00"
    if isinstance(avro, Record):
        if not isinstance(value, dict):
            raise _NotThisType("not a JSON object")
        parts = []
        for field in avro.fields:
            if field.name in value:
                parts.append(_encode(field.type, value[field.name], schema))
            elif field.has_default:
                parts.append(_encode(field.type, field.default, schema))
            else:
                raise _NotThisType(f"no value for field {field.name!r}")
        return b"".join(parts)
    raise _NotThisType("unknown type")


def _latin1(value: Any) -> bytes | None:
    if not isinstance(value, str):
        return None
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return None


def datum_error(error: DumpError):
    """The public error for a DumpError out of generated code (path innermost first)."""
    from roastedavro.errors import DatumError

    messages = error.messages
    if len(messages) == 1 and isinstance(messages[0], str):
        reason = messages[0]
    else:
        reason = str(messages)
    return DatumError(reason, tuple(reversed(error.path)))
