"""fastavro's writer options and error wording, on roastedavro's engine.

``strict`` and ``strict_allow_default`` are checked by the interpreter (tier
0) as it writes, with fastavro's messages; ``disable_tuple_notation`` turns
tuples into lists first (with the notation off a tuple can only be a
sequence); ``validator=True`` raises fastavro's ``ValidationError`` type.
A value that cannot be written keeps roastedavro's message and path and gets
the phrases fastavro's users match: ``on field <name>``, ``no value and no
default for <name>``, ``must be string``.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, TypeVar, overload

from roastedavro import _fastavro_parts

from roastedavro.errors import DatumError
from roastedavro._runtime import schema_shape
from roastedavro.fastavro._models import as_model, unchanged
from roastedavro.flags import CompileFlags

if TYPE_CHECKING:
    from roastedavro._tier0 import Interpreter

_FLAGS = CompileFlags()
# fastavro.validation's, from the module it takes them from
_FastavroValidationError: Any = _fastavro_parts.module("_validate_common").ValidationError
ValidationErrorData = _fastavro_parts.module("_validate_common").ValidationErrorData


class ValidationError(DatumError, _FastavroValidationError):
    """A record that fails ``validator=True``: roastedavro's DatumError (path
    and reason) and fastavro's ValidationError (``errors``)."""

    def __init__(self, message: str, path: tuple = (), datum: Any = None):
        DatumError.__init__(self, message, path)
        field = ".".join(str(part) for part in path)
        self.errors = (ValidationErrorData(datum, None, field or None),)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.reason, self.path))


def validation_error(error: DatumError, schema: Any, record: Any) -> ValidationError:
    """The ValidationError of ``validator=True`` for a record roastedavro's
    writer refused: its ``errors`` are those fastavro's own validator gives
    for the record (every failing place, with the datum, the schema and the
    field's full name), where it finds any; the record is only validated,
    never written, by fastavro."""
    converted = fastavro_error(error, ValidationError)
    try:
        from fastavro.validation import validate

        validate(record, _fastavro_parts.parse_schema(schema), raise_errors=True)
    except _FastavroValidationError as theirs:
        converted.errors = theirs.errors
    except Exception:  # noqa: BLE001 - a value fastavro's validator cannot even look at
        pass
    return converted


class ChangedSizeError(DatumError, RuntimeError):
    """A dict that changed size while it was written (a value's conversion
    ran code that added or removed keys): also the RuntimeError that
    fastavro's dict iteration raises."""


class NumberRangeError(DatumError, OverflowError):
    """A number an Avro int or long cannot hold (an int beyond its range, an
    infinite float): also the OverflowError fastavro raises for a long."""


_Error = TypeVar("_Error", bound=DatumError)


@overload
def fastavro_error(error: DatumError) -> DatumError: ...


@overload
def fastavro_error(error: DatumError, kind: type[_Error]) -> _Error: ...


def fastavro_error(error: DatumError, kind: type[DatumError] = DatumError) -> DatumError:
    """``error`` worded as fastavro words it, where its users match words."""
    if kind is DatumError and error.reason.startswith("the dict changed size"):
        kind = ChangedSizeError
    elif kind is DatumError and (
        error.reason.startswith("Number out of range")
        or error.reason.endswith(("got float inf", "got float -inf"))
    ):
        kind = NumberRangeError
    fields = [part for part in error.path if isinstance(part, str)]
    field = fields[-1] if fields else ""
    reason = error.reason
    if reason == "no value and no default for the field":
        reason = f"no value and no default for {field}"
    elif reason.startswith("expected a str,"):
        reason = f"must be string: {reason[len('expected a str, ') :]}"
    if field and not reason.startswith(("record contains", "Field ")):
        reason = f"{reason} on field {field}"
    converted = kind(reason, error.path)
    converted.__cause__ = None
    return converted


def without_tuples(value: Any, depth: int = 0) -> Any:
    """A copy of ``value`` with its tuples as lists (fastavro's
    disable_tuple_notation: a tuple is a sequence, never (branch, value))."""
    if depth > _FLAGS.max_depth:
        raise DatumError(
            f"values are nested more than {_FLAGS.max_depth} levels deep (CompileFlags.max_depth)"
        )
    kind = type(value)
    if kind is tuple or kind is list:
        return [without_tuples(item, depth + 1) for item in value]
    if kind is dict:
        return {key: without_tuples(item, depth + 1) for key, item in value.items()}
    return value


_STRICT: dict[Any, tuple[Any, Any, Any]] = {}
_STRICT_BY_TEXT: dict[Any, Any] = {}
_KEPT = 256
_lock = threading.Lock()


def strict_codec(schema: Any, strict: bool, strict_allow_default: bool) -> Interpreter:
    """The interpreter writing ``schema`` with fastavro's strict checks: one
    per (schema, option), a lookup after the first call."""
    from roastedavro._tier0 import Interpreter

    level = 1 if strict else 2
    key = (id(schema), level)
    entry = _STRICT.get(key)
    if entry is not None and entry[0] is schema and unchanged(entry[2], schema):
        return entry[1]
    shape = schema_shape(schema)
    model = as_model(schema)
    text = (model.to_json(), model.dialect, level)
    with _lock:
        codec = _STRICT_BY_TEXT.get(text)
    if codec is None:
        codec = Interpreter(model, _FLAGS, strict=level)
    with _lock:
        codec = _STRICT_BY_TEXT.setdefault(text, codec)
        _STRICT[key] = (schema, codec, shape)
        for cache in (_STRICT, _STRICT_BY_TEXT):
            if len(cache) > _KEPT:
                del cache[next(iter(cache))]  # the oldest
    return codec
