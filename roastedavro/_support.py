"""Python-level helpers that generated codecs call off their fast paths.

Nothing here runs for a value that already has the exact Python type its
Avro type needs; these functions handle conversions through marshmallow
and turn failures into the library's errors.
"""

from __future__ import annotations

from collections.abc import Mapping

from marshmallow import ValidationError

from roastedavro.errors import DumpError, LoadFallback

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


def deserialize_value(field, value):
    """Run a user field subclass's own ``_deserialize`` on a decoded value."""
    try:
        return field._deserialize(value, field.name, None)
    except ValidationError:
        # let marshmallow's load produce the complete error
        raise LoadFallback() from None


def validation_error(error: DumpError) -> ValidationError:
    """The marshmallow ValidationError for an error raised in a codec.

    The path was collected innermost first; marshmallow nests messages by
    field name, then list index or map key.
    """
    messages = error.messages
    for part in error.path:
        messages = {part: messages}
    return ValidationError(messages)
