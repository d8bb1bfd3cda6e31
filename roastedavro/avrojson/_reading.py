"""JSON values in Avro's JSON encoding to Python datums, one reader per
schema node."""

from __future__ import annotations

import datetime
import decimal
import struct
import uuid
from typing import Callable

from roastedavro._datum import (
    INT_RANGE,
    LONG_RANGE,
    UNIT_MICROS,
    UNIT_MILLIS,
    UNIT_NANOS,
    Duration,
    big_decimal_value,
    shown,
)
from roastedavro._support import decimal_from_bytes
from roastedavro._unionrule import branch_name
from roastedavro.avro.types import (
    Array,
    Enum,
    Fixed,
    Map,
    Primitive,
    Record,
    Schema,
    Union,
)
from roastedavro.avrojson._common import (
    _DATE_EPOCH,
    _EPOCH,
    _FIRST_DAY,
    _INT_HIGH,
    _INT_LOW,
    _LAST_DAY,
    _LOCAL_EPOCH,
    _MICROS_PER_DAY,
    _MISSING,
    _NO_DEFAULT,
    _TIMESTAMPS,
    _ByKind,
    _decimal_float32,
    _float32,
    _json_kind,
    _json_number,
    _Mismatch,
)
from roastedavro.avrojson._writing import default_json

# -- reading -------------------------------------------------------------------------------


def _read_null(value):
    if value is not None:
        raise _Mismatch(f"expected null, got {_json_kind(value)}")
    return None


def _read_boolean(value):
    if value is True or value is False:
        return value
    raise _Mismatch(f"expected true or false, got {_json_kind(value)}")


def _integer_reader(bits: int) -> Callable:
    low, high = INT_RANGE if bits == 32 else LONG_RANGE
    what = "an int" if bits == 32 else "a long"

    def read_integer(value):
        kind = type(value)
        if kind is int:
            if low <= value <= high:
                return value
        elif kind is float and value.is_integer():  # 1.0, 1e3: as Java
            if low <= value <= high:
                return int(value)
        elif kind is decimal.Decimal and value.is_finite() and value == value.to_integral_value():
            if low <= value <= high:
                return int(value)
        else:
            raise _Mismatch(f"expected {what}, got {_json_kind(value)}")
        raise _Mismatch(f"{shown(value)} is out of range for {what}")

    return read_integer


_read_int = _integer_reader(32)
_read_long = _integer_reader(64)


def _read_float(value):
    if type(value) is decimal.Decimal:
        return _decimal_float32(value)
    return _float32(_json_number(value, "a float"))


def _read_double(value):
    return _json_number(value, "a double")


def _read_float_wide(value):
    # a float as the double its JSON text gives (fastavro's JSON reader)
    return float(_json_number(value, "a float"))


def _read_string(value):
    if type(value) is not str:
        raise _Mismatch(f"expected a string, got {_json_kind(value)}")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            raise _Mismatch(f"not valid Unicode text: {error.reason} (at character {error.start})") from None
    return value


def _read_bytes(value):
    if type(value) is not str:
        raise _Mismatch(f"expected a string of bytes (code points U+0000..U+00FF), got {_json_kind(value)}")
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError as error:
        raise _Mismatch(
            f"a string of bytes has only code points U+0000..U+00FF, not "
            f"U+{ord(value[error.start]):04X} (at character {error.start})"
        ) from None


def _timestamp_reader(unit: int, local: bool) -> Callable:
    if unit == UNIT_NANOS:
        return _read_long  # an int of nanoseconds, as AvroCodec reads it
    epoch = _LOCAL_EPOCH if local else _EPOCH
    per_micro = 1000 if unit == UNIT_MILLIS else 1

    def read_timestamp(value):
        number = _read_long(value)
        micros = number * per_micro
        if not _FIRST_DAY * _MICROS_PER_DAY <= micros < (_LAST_DAY + 1) * _MICROS_PER_DAY:
            raise _Mismatch(f"timestamp {number} is outside the years 1-9999")
        return epoch + datetime.timedelta(microseconds=micros)

    return read_timestamp


def _read_date(value):
    days = _read_int(value)
    if not _FIRST_DAY <= days <= _LAST_DAY:
        raise _Mismatch(f"date {days} is outside the years 1-9999")
    return _DATE_EPOCH + datetime.timedelta(days=days)


def _time_reader(unit: int) -> Callable:
    read = _read_int if unit == UNIT_MILLIS else _read_long
    per_micro = 1000 if unit == UNIT_MILLIS else 1

    def read_time(value):
        number = read(value)
        if not 0 <= number * per_micro < _MICROS_PER_DAY:
            raise _Mismatch(f"time of day {number} out of range")
        micros = number * per_micro
        seconds, micro = divmod(micros, 1_000_000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return datetime.time(hour, minute, second, micro)

    return read_time


def _decimal_reader(scale: int, precision: int, read: Callable, fixed: bool) -> Callable:
    # as the binary reader: bytes longer than the precision needs are refused
    # before any conversion
    longest = (int(precision * 3.3220) + 1 + 8) // 8

    def read_decimal(value):
        data = read(value)
        result = None if not fixed and len(data) > longest else decimal_from_bytes(data, scale, precision)
        if result is None:
            raise _Mismatch(f"decimal value has more digits than decimal({precision}, {scale}) allows")
        return result

    return read_decimal


def _read_uuid(value):
    text = _read_string(value)
    try:
        return uuid.UUID(text)
    except ValueError:
        raise _Mismatch(f"not a valid UUID: {shown(text)}") from None


def _read_varint(data: bytes, position: int) -> tuple[int, int]:
    """An Avro long (zigzag varint) at ``position``: (value, position after it)."""
    result, shift = 0, 0
    while True:
        if position >= len(data) or shift > 63:
            raise _Mismatch("a big-decimal's bytes are not an Avro big-decimal")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return (result >> 1) ^ -(result & 1), position


def _read_big_decimal(value):
    # Java's encoding: the unscaled value as Avro bytes, then the scale as an Avro int
    data = _read_bytes(value)
    length, position = _read_varint(data, 0)
    if length <= 0 or position + length > len(data):
        raise _Mismatch("a big-decimal's bytes are not an Avro big-decimal")
    unscaled = data[position : position + length]
    scale, position = _read_varint(data, position + length)
    if position != len(data) or not _INT_LOW <= scale <= _INT_HIGH:
        raise _Mismatch("a big-decimal's bytes are not an Avro big-decimal")
    return big_decimal_value(unscaled, scale)


class _Readers(_ByKind):
    """The function that reads each type's JSON values as datums."""

    def __init__(self, schema: Schema, defaults: bool, narrow_floats: bool = True):
        self.schema = schema
        self.defaults = defaults
        self.narrow_floats = narrow_floats
        self.records: dict[str, Callable] = {}

    def primitive(self, avro: Primitive) -> Callable:
        logical = avro.logical
        name = logical.name if logical is not None else None
        if name in _TIMESTAMPS:
            return _timestamp_reader(*_TIMESTAMPS[name])
        if name == "date":
            return _read_date
        if name in ("time-millis", "time-micros"):
            return _time_reader(UNIT_MILLIS if name == "time-millis" else UNIT_MICROS)
        if name == "decimal":
            return _decimal_reader(logical.scale, logical.precision, _read_bytes, False)
        if name == "big-decimal":
            return _read_big_decimal
        if name == "uuid":
            return _read_uuid
        return {
            "null": _read_null,
            "boolean": _read_boolean,
            "int": _read_int,
            "long": _read_long,
            "float": _read_float if self.narrow_floats else _read_float_wide,
            "double": _read_double,
            "string": _read_string,
            "bytes": _read_bytes,
        }[avro.name]

    def fixed(self, avro: Fixed) -> Callable:
        size = avro.size
        full_name = avro.name

        def read_fixed(value):
            data = _read_bytes(value)
            if len(data) != size:
                raise _Mismatch(f"expected {size} bytes for the fixed {full_name}, got {len(data)}")
            return data

        logical = avro.logical
        name = logical.name if logical is not None else None
        if name == "decimal":
            return _decimal_reader(logical.scale, logical.precision, read_fixed, True)
        if name == "uuid":
            return lambda value: uuid.UUID(bytes=read_fixed(value))
        if name == "duration":
            return lambda value: Duration(*struct.unpack("<III", read_fixed(value)))
        return read_fixed

    def enum(self, avro: Enum) -> Callable:
        symbols = frozenset(avro.symbols)
        full_name = avro.name

        def read_enum(value):
            if type(value) is str and value in symbols:
                return value
            if type(value) is str:
                raise _Mismatch(f"{shown(value)} is not a symbol of the enum {full_name}")
            raise _Mismatch(f"expected a symbol of the enum {full_name}, got {_json_kind(value)}")

        return read_enum

    def array(self, avro: Array) -> Callable:
        read_item = self.of(avro.items)

        def read_array(value):
            if type(value) is not list:
                raise _Mismatch(f"expected an array, got {_json_kind(value)}")
            out = []
            index = 0
            try:
                for index, item in enumerate(value):
                    out.append(read_item(item))
            except _Mismatch as error:
                error.path.append(index)
                raise
            return out

        return read_array

    def map(self, avro: Map) -> Callable:
        read_item = self.of(avro.values)

        def read_map(value):
            if type(value) is not dict:
                raise _Mismatch(f"expected an object (a map), got {_json_kind(value)}")
            out = {}
            for key, item in value.items():
                try:
                    out[_read_string(key)] = read_item(item)
                except _Mismatch as error:
                    error.path.append(key)
                    raise
            return out

        return read_map

    def record(self, avro: Record) -> Callable:
        known = self.records.get(avro.name)
        if known is not None:
            return known
        plan: list[tuple] = []
        full_name = avro.name

        def read_record(value):
            if type(value) is not dict:
                raise _Mismatch(f"expected an object (a {full_name} record), got {_json_kind(value)}")
            out = {}
            for name, aliases, read, default in plan:
                item = value.get(name, _MISSING)
                if item is _MISSING:
                    for alias in aliases:
                        item = value.get(alias, _MISSING)
                        if item is not _MISSING:
                            break
                try:
                    if item is _MISSING:
                        if default is _NO_DEFAULT:
                            raise _Mismatch(
                                f"missing field: no value and no default for {name}"
                                if self.defaults
                                else "missing field"
                            )
                        item = default
                    out[name] = read(item)
                except _Mismatch as error:
                    error.path.append(name)
                    raise
            return out

        self.records[avro.name] = read_record  # before the fields: records may recurse
        for field in avro.fields:
            if field.has_default and self.defaults:
                default = default_json(
                    field.type, field.default, self.schema, True, f"{avro.name}.{field.name}"
                )
            else:
                default = _NO_DEFAULT
            plan.append((field.name, field.aliases, self.of(field.type), default))
        return read_record

    def union(self, avro: Union) -> Callable:
        branches: dict[str, Callable | None] = {}
        for branch in avro.branches:
            definition = self.schema.deref(branch)
            if isinstance(definition, Primitive) and definition.name == "null":
                branches[branch_name(branch)] = None
            else:
                branches[branch_name(branch)] = self.of(branch)
        text = "[" + ", ".join(branches) + "]"
        has_null = "null" in branches

        def read_union(value):
            if value is None:
                if has_null:
                    return None
                raise _Mismatch(f"null is not a branch of the union {text}")
            if type(value) is dict and len(value) == 1:
                for name, inner in value.items():
                    if name not in branches:
                        raise _Mismatch(f"{shown(name)} is not a branch of the union {text}")
                    read = branches[name]
                    return _read_null(inner) if read is None else read(inner)
            raise _Mismatch(
                f"expected null or an object naming one branch of the union {text}, got {_json_kind(value)}"
            )

        return read_union
