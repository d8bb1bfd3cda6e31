"""Python-level helpers that generated codecs call off their fast paths.

Nothing here runs for a value that already has the exact Python type its
Avro type needs; these functions handle conversions through marshmallow
and turn failures into the library's errors.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Mapping

from marshmallow import ValidationError

from roastedavro.errors import DumpError

_TYPE_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def serialize_value(field, value, obj, expected: type):
    """Convert ``value`` with the field's own ``_serialize``, as marshmallow's dump does."""
    try:
        result = field._serialize(value, field.name, obj)
    except ValidationError as error:
        raise DumpError(error.messages) from None
    except (TypeError, ValueError, OverflowError, AttributeError):
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
    except ValidationError:
        return INVALID


#: path parts nested as marshmallow nests them; deeper ones are joined into
#: one key, so that printing the error never exhausts Python's recursion limit
MAX_NESTED_PATH = 50


def validation_error(error: DumpError) -> ValidationError:
    """The marshmallow ValidationError for an error raised in a codec.

    The path was collected innermost first; marshmallow nests messages by
    field name, then list index or map key. Past MAX_NESTED_PATH levels
    (data nested hundreds of levels deep, or a value that contains itself)
    the innermost parts become one dotted key.
    """
    messages = error.messages
    path = error.path
    if len(path) > MAX_NESTED_PATH:
        inner = path[:len(path) - MAX_NESTED_PATH + 1]
        messages = {".".join(str(part) for part in reversed(inner)): messages}
        path = path[len(inner):]
    for part in path:
        messages = {part: messages}
    return ValidationError(messages)


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
    except ValidationError as error:
        raise DumpError(error.messages) from None
    except (TypeError, ValueError, AttributeError, OverflowError):
        result = None
    if not isinstance(result, expected) or (
            expected is datetime.date and isinstance(result, datetime.datetime)):
        message = field.error_messages.get("invalid") or f"Not a valid {expected.__name__}."
        obj_type = getattr(field, "OBJ_TYPE", expected.__name__)
        raise DumpError(formatted(message, obj_type=obj_type, input=value))
    return _exact(result, expected)


def _exact(value, expected: type):
    if type(value) is expected:
        return value
    if expected is datetime.datetime:
        return datetime.datetime(value.year, value.month, value.day, value.hour, value.minute,
                                 value.second, value.microsecond, value.tzinfo, fold=value.fold)
    if expected is datetime.date:
        return datetime.date(value.year, value.month, value.day)
    if expected is datetime.time:
        return datetime.time(value.hour, value.minute, value.second, value.microsecond,
                             value.tzinfo, fold=value.fold)
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


_EXACT = decimal.Context(prec=decimal.MAX_PREC, traps=[decimal.Inexact, decimal.InvalidOperation])


def decimal_bytes(field, value, obj, scale: int, precision: int, size: int) -> bytes:
    """The two's complement bytes of a decimal's unscaled value, as fastavro writes them.

    A value that would need rounding to fit the scale, or more digits than
    the precision, is an error: never silently rounded.
    """
    if type(value) is not decimal.Decimal:
        if value is True or value is False or not isinstance(value, (int, float, str, decimal.Decimal)):
            raise DumpError(field.error_messages.get("invalid", "Not a valid number."))
        try:
            value = decimal.Decimal(str(value))
        except decimal.InvalidOperation:
            raise DumpError(field.error_messages.get("invalid", "Not a valid number.")) from None
    if not value.is_finite():
        raise DumpError("Special numeric values (nan or infinity) are not permitted.")
    try:
        quantized = value.quantize(decimal.Decimal(1).scaleb(-scale), context=_EXACT)
        # scaleb in the default context would round past 28 digits
        unscaled = int(quantized.scaleb(scale, context=_EXACT))
    except (decimal.Inexact, decimal.InvalidOperation):
        raise DumpError(f"Has more than {scale} decimal places; it would be rounded.") from None
    if abs(unscaled) >= 10**precision:
        raise DumpError(f"Does not fit decimal({precision}, {scale}): at most "
                        f"{precision - scale} digits before the point.")
    if size:
        try:
            return unscaled.to_bytes(size, "big", signed=True)
        except OverflowError:
            raise DumpError(f"Does not fit in {size} bytes.") from None
    return unscaled.to_bytes((abs(unscaled).bit_length() + 8) // 8, "big", signed=True)


def decimal_from_bytes(encoded: bytes, scale: int, precision: int | None = None):
    """The Decimal of Avro decimal bytes; None when it has more than
    ``precision`` digits (the reader raises the DecodeError)."""
    unscaled = int.from_bytes(encoded, "big", signed=True)
    if precision is not None and unscaled and abs(unscaled).bit_length() > precision * 3.3220:
        return None       # more bits than any precision-digit number has
    try:
        value = decimal.Decimal(unscaled)
        if precision is not None and unscaled and value.adjusted() + 1 > precision:
            return None
        return value.scaleb(-scale, context=_EXACT)
    except decimal.DecimalException:
        return None


def enum_member(field, value, obj):
    """The enum member for a value that is not one: marshmallow's conversion, else an error."""
    enum_class = field.enum
    if isinstance(value, enum_class):
        return value
    raise DumpError(formatted(field.error_messages["unknown"],
        choices=getattr(field, "choices_text", ", ".join(m.name for m in enum_class))))


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
    except ValidationError as error:
        raise DumpError(error.messages) from None
    except (TypeError, ValueError, AttributeError, KeyError) as error:
        raise DumpError(f"Cannot be serialized: {error}") from None


def deserialize_field(field, value):
    try:
        return field.deserialize(value)
    except ValidationError:
        return INVALID


def as_bytes(field, value, obj) -> bytes:
    """bytes from a bytes-like value, after the field's own _serialize."""
    value = field._serialize(value, field.name, obj)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise DumpError("Not valid bytes.")
