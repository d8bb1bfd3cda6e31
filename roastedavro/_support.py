"""Python-level helpers that generated codecs call off their fast paths.

Nothing here runs for a value that already has the exact Python type its
Avro type needs; these functions handle conversions through marshmallow
and turn failures into the library's errors.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Mapping
from typing import Any

from roastedavro.errors import DumpError

_TYPE_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _validation_error() -> Any:
    # marshmallow's ValidationError, imported when first needed (an except
    # clause is evaluated only when an exception is raised): codecs of plain
    # Avro schemas never import marshmallow
    from marshmallow import ValidationError

    return ValidationError


def serialize_value(field, value, obj, expected: type):
    """Convert ``value`` with the field's own ``_serialize``, as marshmallow's dump does."""
    try:
        result = field._serialize(value, field.name, obj)
    except _validation_error() as error:
        raise DumpError(error.messages) from None
    except (TypeError, ValueError, ArithmeticError, AttributeError):
        # ArithmeticError: OverflowError, and decimal's signals (a Decimal
        # field quantizing a value past its context's precision)
        message = field.error_messages.get("invalid") or f"Not a valid {_TYPE_NAMES[expected]}."
        raise DumpError(message) from None
    if type(result) is expected:
        return result
    if result is None:
        raise DumpError(field.error_messages["null"])
    if expected is bool:
        # marshmallow 4's Boolean dumps values unchanged and fastavro writes
        # their truth value; marshmallow 3 has already made a bool
        return bool(result)
    if isinstance(result, expected) and not (expected is int and isinstance(result, bool)):
        return expected(result)
    raise DumpError(f"Not a valid {_TYPE_NAMES.get(expected, expected.__name__)}.")


def as_list(value):
    """What marshmallow's List iterates over: any iterable."""
    try:
        return list(value)
    except TypeError:
        raise DumpError("Not a valid list.") from None


def as_dict(value):
    """What marshmallow's Dict reads: anything with ``items()``."""
    if isinstance(value, Mapping) or hasattr(value, "items"):
        try:
            return dict(value.items())
        except (TypeError, ValueError):
            pass
    raise DumpError("Not a valid mapping type.")


#: what the deserialize helpers return for a value marshmallow's load refuses:
#: the generated reader then flags the record, and marshmallow reports the error
INVALID = object()


def deserialize_value(field, value):
    """Run a user field subclass's own ``_deserialize`` on a decoded value."""
    try:
        return field._deserialize(value, field.name, None)
    except _validation_error():
        return INVALID


#: path parts nested as marshmallow nests them; deeper ones are joined into
#: one key, so that printing the error never exhausts Python's recursion limit
MAX_NESTED_PATH = 50


def validation_error(error: DumpError) -> Exception:
    """The marshmallow ValidationError for an error raised in a codec.

    The path was collected innermost first; marshmallow nests messages by
    field name, then list index or map key. Past MAX_NESTED_PATH levels
    (data nested hundreds of levels deep, or a value that contains itself)
    the innermost parts become one dotted key.
    """
    messages = error.messages
    path = error.path
    if len(path) > MAX_NESTED_PATH:
        inner = path[: len(path) - MAX_NESTED_PATH + 1]
        messages = {".".join(str(part) for part in reversed(inner)): messages}
        path = path[len(inner) :]
    for part in path:
        messages = {part: messages}
    return _validation_error()(messages)


def formatted(message, **values):
    """A marshmallow error message with its placeholders filled; messages
    may also be lists or dicts, which are reported as they are."""
    if isinstance(message, str):
        try:
            return message.format(**values)
        except (KeyError, IndexError, ValueError):
            return message
    return message


def coerce(field, value, obj, expected: type):
    """A value for a logical type, from one of another Python type.

    As marshmallow would: the field's dump form (``_serialize``), read back
    by the field (``_deserialize``). A date becomes midnight for a DateTime,
    a UUID string becomes a UUID, and so on.
    """
    try:
        result = field._deserialize(field._serialize(value, field.name, obj), field.name, None)
    except _validation_error() as error:
        raise DumpError(error.messages) from None
    except (TypeError, ValueError, AttributeError, ArithmeticError):
        result = None
    if not isinstance(result, expected) or (
        expected is datetime.date and isinstance(result, datetime.datetime)
    ):
        message = field.error_messages.get("invalid") or f"Not a valid {expected.__name__}."
        obj_type = getattr(field, "OBJ_TYPE", expected.__name__)
        raise DumpError(formatted(message, obj_type=obj_type, input=value))
    return _exact(result, expected)


def _exact(value, expected: type):
    if type(value) is expected:
        return value
    if expected is datetime.datetime:
        return datetime.datetime(
            value.year,
            value.month,
            value.day,
            value.hour,
            value.minute,
            value.second,
            value.microsecond,
            value.tzinfo,
            fold=value.fold,
        )
    if expected is datetime.date:
        return datetime.date(value.year, value.month, value.day)
    if expected is datetime.time:
        return datetime.time(
            value.hour, value.minute, value.second, value.microsecond, value.tzinfo, fold=value.fold
        )
    if expected is datetime.timedelta:
        return datetime.timedelta(value.days, value.seconds, value.microseconds)
    return expected(str(value)) if expected.__name__ == "UUID" else value


def utc_datetime(value: datetime.datetime) -> datetime.datetime:
    try:
        return value.astimezone(datetime.timezone.utc)
    except (OverflowError, ValueError):
        raise DumpError("Not representable in UTC within the years 1-9999.") from None


def aware_datetime(field, value: datetime.datetime) -> datetime.datetime:
    """A naive value for an AwareDateTime: its default_timezone, else an error."""
    timezone = getattr(field, "default_timezone", None)
    if timezone is None:
        message = field.error_messages.get("invalid_awareness", "Not a valid aware datetime.")
        raise DumpError(formatted(message, awareness="aware", obj_type="datetime"))
    return utc_datetime(value.replace(tzinfo=timezone))


def naive_datetime(field, value: datetime.datetime) -> datetime.datetime:
    """An aware value for a NaiveDateTime: converted to its timezone, else an error."""
    timezone = getattr(field, "timezone", None)
    if timezone is None:
        message = field.error_messages.get("invalid_awareness", "Not a valid naive datetime.")
        raise DumpError(formatted(message, awareness="naive", obj_type="datetime"))
    return value.astimezone(timezone).replace(tzinfo=None)


_EXACT = decimal.Context(
    prec=decimal.MAX_PREC,
    Emax=decimal.MAX_EMAX,
    Emin=decimal.MIN_EMIN,
    traps=[decimal.Inexact, decimal.InvalidOperation],
)

# log2(10) = 3.32192809488736..., bounded with room for float rounding
_LOG2_10_ABOVE = 3.321928094888
_LOG2_10_BELOW = 3.321928094887
_POWERS_OF_TEN: dict[int, int] = {}


def fits_precision(unscaled: int, precision: int) -> bool:
    """|unscaled| < 10**precision, without computing 10**precision unless
    the bit lengths leave it open (then once per precision)."""
    # 10**P has floor(P log2 10) + 1 bits
    bits = abs(unscaled).bit_length()
    if bits < int(precision * _LOG2_10_BELOW):
        return True
    if bits > int(precision * _LOG2_10_ABOVE) + 2:
        return False
    power = _POWERS_OF_TEN.get(precision)
    if power is None:
        power = 10**precision
        if len(_POWERS_OF_TEN) < 64:
            _POWERS_OF_TEN[precision] = power
    return abs(unscaled) < power


def _decimal_of_int(n: int) -> decimal.Decimal:
    """Decimal(n), exactly, in subquadratic time: Decimal(int) converts in
    time quadratic in the digits (a megabyte takes minutes); halves joined
    with decimal's own fast multiplication do not (CPython 3.12's
    _pylong.int_to_decimal does the same)."""
    if n.bit_length() <= 4096:
        return decimal.Decimal(n)
    powers: dict[int, decimal.Decimal] = {}

    def power_of_two(w: int) -> decimal.Decimal:
        result = powers.get(w)
        if result is None:
            if w <= 4096:
                result = decimal.Decimal(1 << w)
            else:
                half = power_of_two(w >> 1)
                result = _EXACT.multiply(half, half)
                if w & 1:
                    result = _EXACT.multiply(result, 2)
            powers[w] = result
        return result

    def convert(n: int, w: int) -> decimal.Decimal:
        if w <= 4096:
            return decimal.Decimal(n)
        low_bits = w >> 1
        high = n >> low_bits
        low = n - (high << low_bits)
        return _EXACT.add(
            convert(low, low_bits), _EXACT.multiply(convert(high, w - low_bits), power_of_two(low_bits))
        )

    value = convert(abs(n), abs(n).bit_length())
    return _EXACT.minus(value) if n < 0 else value


def decimal_bytes(field, value, obj, scale: int, precision: int, size: int) -> bytes:
    """The two's complement bytes of a decimal's unscaled value, as fastavro writes them.

    A value that would need rounding to fit the scale, or more digits than
    the precision, is an error: never silently rounded. Digits are counted
    before any conversion, so no value costs more than its precision allows,
    and no decimal signal escapes.
    """
    invalid = field.error_messages.get("invalid", "Not a valid number.")
    too_big = (
        f"Does not fit decimal({precision}, {scale}): at most {precision - scale} digits before the point."
    )
    if type(value) is not decimal.Decimal:
        if value is True or value is False or not isinstance(value, (int, float, str, decimal.Decimal)):
            raise DumpError(invalid)
        if isinstance(value, int):
            if not fits_precision(int(value), precision):
                raise DumpError(too_big)
            value = _decimal_of_int(int(value))
        else:
            try:
                value = decimal.Decimal(str(value))
            except (decimal.DecimalException, ValueError):
                raise DumpError(invalid) from None
    if not value.is_finite():
        raise DumpError("Special numeric values (nan or infinity) are not permitted.")
    if value and value.adjusted() >= precision - scale:
        raise DumpError(too_big)  # 10**(precision - scale) or more
    try:
        quantized = value.quantize(decimal.Decimal((0, (1,), -scale)), context=_EXACT)
        # scaleb in the default context would round past 28 digits
        unscaled = int(quantized.scaleb(scale, context=_EXACT))
    except decimal.DecimalException:
        raise DumpError(f"Has more than {scale} decimal places; it would be rounded.") from None
    if not fits_precision(unscaled, precision):
        raise DumpError(too_big)
    if size:
        try:
            return unscaled.to_bytes(size, "big", signed=True)
        except OverflowError:
            raise DumpError(f"Does not fit in {size} bytes.") from None
    return unscaled.to_bytes((abs(unscaled).bit_length() + 8) // 8, "big", signed=True)


def decimal_from_bytes(encoded: bytes, scale: int, precision: int | None = None):
    """The Decimal of Avro decimal bytes; None when it has more than
    ``precision`` digits (the reader raises the DecodeError). Time grows
    less than quadratically with the length."""
    unscaled = int.from_bytes(encoded, "big", signed=True)
    if precision is not None and not fits_precision(unscaled, precision):
        return None
    try:
        return _decimal_of_int(unscaled).scaleb(-scale, context=_EXACT)
    except decimal.DecimalException:
        return None


def enum_member(field, value, obj):
    """The enum member for a value that is not one: marshmallow's conversion, else an error."""
    enum_class = field.enum
    if isinstance(value, enum_class):
        return value
    raise DumpError(
        formatted(
            field.error_messages["unknown"],
            choices=getattr(field, "choices_text", ", ".join(m.name for m in enum_class)),
        )
    )


def named_types(parsed_schema) -> dict:
    """Every named type (record, enum, fixed) in a fastavro-parsed schema, by
    the name references use, for the runtime's check of generic-path bytes."""
    named: dict = {}
    stack = [parsed_schema]
    while stack:
        schema = stack.pop()
        if isinstance(schema, list):
            stack.extend(schema)
        elif isinstance(schema, dict):
            if isinstance(schema.get("__named_schemas"), dict):
                named.update(schema["__named_schemas"])
            kind = schema.get("type")
            if kind in ("record", "error", "enum", "fixed") and isinstance(schema.get("name"), str):
                named[schema["name"]] = schema
            if kind in ("record", "error"):
                stack.extend(field.get("type") for field in schema.get("fields", ()))
            elif kind == "array":
                stack.append(schema.get("items"))
            elif kind == "map":
                stack.append(schema.get("values"))
            elif isinstance(kind, (dict, list)):
                stack.append(kind)
    return named


def type_name(parsed_schema) -> str:
    if isinstance(parsed_schema, dict):
        return parsed_schema.get("logicalType") or parsed_schema.get("type", "value")
    return str(parsed_schema)


def as_tuple(field, value, size: int) -> tuple:
    """What marshmallow's Tuple dumps: any sequence with one item per tuple field."""
    try:
        items = tuple(value)
    except TypeError:
        raise DumpError(field.error_messages.get("invalid", "Not a valid tuple.")) from None
    if len(items) != size:
        raise DumpError(f"Length must be {size}.")
    return items


def serialize_field(field, obj):
    """A field's whole marshmallow dump: its own lookup, default and conversion."""
    parent = field.parent
    accessor = getattr(parent, "get_attribute", None)
    try:
        return field.serialize(field.name, obj, accessor=accessor)
    except _validation_error() as error:
        raise DumpError(error.messages) from None
    except (TypeError, ValueError, AttributeError, KeyError, ArithmeticError) as error:
        raise DumpError(f"Cannot be serialized: {error}") from None


def deserialize_field(field, value):
    try:
        return field.deserialize(value)
    except _validation_error():
        return INVALID


def as_bytes(field, value, obj) -> bytes:
    """bytes from a bytes-like value, after the field's own _serialize."""
    value = field._serialize(value, field.name, obj)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise DumpError("Not valid bytes.")
