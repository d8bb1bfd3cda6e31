"""Schemas as fastavro takes them, to roastedavro's model and compiled codecs.

fastavro's ``parse_schema`` returns a dict in which every use of a named type
holds its whole definition again, marked ``__fastavro_parsed``. The model
wants each named type defined once, so repeated definitions become names
again before parsing. Codecs are cached by the schema object (a dict lookup
per call) and by the schema's JSON text (one compile per distinct schema).

Schemas are read as fastavro reads them: fastavro's own ``parse_schema``
refuses what it refuses (its exceptions, which are roastedavro's
SchemaError too), then roastedavro's parser builds the model with its
``dialect="fastavro"``, which takes what fastavro takes.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from roastedavro import _fastavro_parts
from roastedavro._runtime import schema_shape

from roastedavro.avro.parse import parse_schema as parse_model
from roastedavro.avro.types import PRIMITIVE_TYPES, Schema
from roastedavro.errors import SchemaError, UnreadableDatumError
from roastedavro.errors import SchemaResolutionError as _SchemaResolutionError

if TYPE_CHECKING:
    from roastedavro._runtime import GenericType

# fastavro's own parser, the module fastavro.schema uses (never a name that
# may have been replaced by the drop-in's), and its errors, without the rest
# of fastavro (roastedavro._fastavro_parts)
_fastavro_parse = _fastavro_parts.parse_schema
_fastavro_schema: Any = _fastavro_parts.module("_schema_common")

_NAMED = ("record", "error", "enum", "fixed")
#: codecs by id() of the schema object the caller passed, or of the writer's
#: and reader's schema objects: (schema, reader or None, codec, the
#: schema's shape, the reader's). The objects are held, so their ids cannot
#: be reused while the entry lives; the shapes show that dicts and lists
#: have not been changed in place since (see unchanged())
BY_OBJECT: dict[Any, tuple[Any, Any, Any, Any, Any]] = {}
_OBJECTS_KEPT = 1024
_lock = threading.Lock()


def unchanged(shape: Any, schema: Any) -> bool:
    """Whether a schema kept by its identity with ``shape`` (its
    ``schema_shape`` when it was met) is still what it was: a dict or list
    changed in place since is not."""
    return shape is None or shape.matches(schema)


class SchemaParseError(SchemaError, _fastavro_schema.SchemaParseException):
    """A schema fastavro refuses (its message), or one it takes that the
    drop-in cannot serve: both fastavro's SchemaParseException and
    roastedavro's SchemaError."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.reason, self.path))


class UnknownTypeError(SchemaError, _fastavro_schema.UnknownType):
    """A name that no type defined before its use: both fastavro's UnknownType
    (``name`` is the full name fastavro looked for) and roastedavro's
    SchemaError (the message says where)."""

    def __init__(self, name: str, message: str = "", path: str = ""):
        SchemaError.__init__(self, message or f"{name!r} is not a defined type", path)
        self.name = name

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.name, self.reason, self.path))


class _Unreadable(SchemaError):
    """A schema fastavro's parser fails on with a Python error (a KeyError
    for a fixed without "size", a TypeError for {"type": {...}}): that
    error's type, and roastedavro's SchemaError with a message that says so."""

    def __str__(self) -> str:
        return self.args[0] if self.args else ""


_UNREADABLE: dict[type[Exception], type[Exception]] = {
    kind: type(f"Schema{kind.__name__}", (_Unreadable, kind), {"__module__": __name__})
    for kind in (TypeError, KeyError, AttributeError, IndexError)
}
globals().update({kind.__name__: kind for kind in _UNREADABLE.values()})  # picklable


# fastavro.read's, from the module it takes it from (not the whole of fastavro)
_FastavroResolutionError: Any = _fastavro_parts.module("_read_common").SchemaResolutionError


class SchemaResolutionError(_SchemaResolutionError, _FastavroResolutionError):
    """A writer's and reader's schema whose data cannot be read across: both
    roastedavro's SchemaResolutionError and fastavro's, so code that catches
    fastavro's keeps working."""


SchemaResolutionError.__module__ = "roastedavro.fastavro"  # where users import it from


class DatumResolutionError(UnreadableDatumError, SchemaResolutionError):
    """A datum that the reader's schema cannot read (a writer's union branch
    or enum symbol the reader has not): roastedavro's UnreadableDatumError
    (a DecodeError with the offset) and fastavro's SchemaResolutionError,
    which fastavro raises for it."""

    def __init__(self, reason: str, offset: int):
        # DecodeError's message; the bases' __init__s would each add their own
        Exception.__init__(self, f"{reason} (at byte offset {offset})")
        self.reason, self.offset = reason, offset
        self.writer_path = self.reader_path = ""

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.reason, self.offset))

    @classmethod
    def of(cls, error: UnreadableDatumError) -> "DatumResolutionError":
        return cls(error.reason, error.offset)


DatumResolutionError.__module__ = "roastedavro.fastavro"


def fastavro_parse(schema: Any, named_schemas: dict | None = None, **options: Any) -> Any:
    """fastavro's ``parse_schema`` of ``schema``; its refusals are raised as
    SchemaParseError and UnknownTypeError, and its TypeError, KeyError ...
    on a malformed schema as subclasses of those and of SchemaError."""
    try:
        return _fastavro_parse(schema, named_schemas, **options)
    except tuple(_UNREADABLE) as error:
        kind = next(kind for kind in _UNREADABLE if isinstance(error, kind))
        message = f"fastavro cannot read the schema ({type(error).__name__}: {error})"
        try:
            parse_model(defined_once(schema), dialect="fastavro")
        except SchemaError as ours:
            message += f": {ours}"
        except Exception:  # noqa: BLE001 - only a better message was sought
            pass
        raise _UNREADABLE[kind](message) from error
    except _fastavro_schema.UnknownType as error:
        name = error.name
        try:  # roastedavro's message says where the name is used
            parse_model(defined_once(schema), dialect="fastavro")
        except SchemaError as ours:
            # (without named_schemas, ours may stop at a name they define)
            if getattr(ours, "name", None) == name:
                raise UnknownTypeError(name, ours.reason, ours.path) from None
        except Exception:  # noqa: BLE001 - only a better message was sought
            pass
        raise UnknownTypeError(
            name, f"{name!r} is not a defined type (named types must be defined before they are used)"
        ) from None
    except _fastavro_schema.SchemaParseException as error:
        raise SchemaParseError(str(error)) from None


def model_of(schema: Any, full_names: bool = False, named: dict | None = None) -> Schema:
    """roastedavro's model of a schema fastavro took; SchemaParseError for
    one the drop-in cannot serve. ``full_names``: ``schema`` is fastavro's
    parse_schema output (every name full); ``named``: fastavro's
    ``named_schemas``, for the names the schema uses but does not define."""
    try:
        return parse_model(defined_once(schema, full_names, named), dialect="fastavro")
    except SchemaError as error:
        raise SchemaParseError(
            f"fastavro takes this schema, but roastedavro cannot serve it: {error.reason}", error.path
        ) from None


def as_model(schema: Any) -> Schema:
    """The model of a schema given as fastavro accepts it: a dict, list or
    type name, parsed by fastavro or not, or a model ``Schema``. A schema
    fastavro refuses raises fastavro's exception (see fastavro_parse)."""
    if isinstance(schema, Schema):
        return schema
    if isinstance(schema, (dict, list)) or (
        isinstance(schema, str) and schema.lstrip()[:1] not in ("{", "[", '"')
    ):
        fastavro_parse(schema, _write_hint=False)
    return model_of(schema)


def defined_once(schema: Any, full_names: bool = False, named: dict | None = None) -> Any:
    """A copy of a schema as fastavro takes it, for roastedavro's parser:
    fastavro's expanded form with each named type defined once, its parsed
    form's names kept as the full names they are (a nested type in the null
    namespace stays there), and the named types its ``__named_schemas`` (or
    ``named``) hold defined where first used.

    ``full_names``: every name in ``schema`` is a full name (fastavro's
    parse_schema output); a dict marked ``__fastavro_parsed`` is taken so
    in any case."""
    seen: set[str] = set()
    table: dict[str, Any] = dict(named or {})

    def walk(node: Any, namespace: str | None, full: bool) -> Any:
        if isinstance(node, list):
            return [walk(item, namespace, full) for item in node]
        if isinstance(node, str):
            if full and node not in seen and node not in PRIMITIVE_TYPES and node in table:
                # defined by another schema (fastavro's named_schemas): here, at its first use
                return walk(table[node], None, True)
            return node
        if not isinstance(node, dict):
            return node
        if "__fastavro_parsed" in node:
            full = True
            known = node.get("__named_schemas")
            if isinstance(known, dict):
                for name, definition in known.items():
                    table.setdefault(name, definition)
        node = {
            key: value
            for key, value in node.items()
            if not key.startswith("__fastavro") and key != "__named_schemas"
        }
        kind = node.get("type")
        if set(node) == {"type"} and isinstance(kind, (str, list, dict)):
            # fastavro takes {"type": X} for X itself (Java's parser does not)
            return walk(kind, namespace, full)
        if kind in _NAMED and isinstance(node.get("name"), str):
            name = node["name"]
            if full and "." not in name:
                # fastavro's parsed form drops "namespace": a name without a
                # dot there is in the null namespace, wherever it is
                node["namespace"] = ""
            own = node.get("namespace", namespace) if "." not in name else name.rpartition(".")[0]
            full_name = name if "." in name else (f"{own}.{name}" if own else name)
            if full_name in seen:
                return full_name
            seen.add(full_name)
            inner = full_name.rpartition(".")[0] or None
            if kind in ("record", "error") and isinstance(node.get("fields"), list):
                node["fields"] = [
                    {**field, "type": walk(field["type"], inner, full)}
                    if isinstance(field, dict) and "type" in field
                    else field
                    for field in node["fields"]
                ]
            return node
        if kind == "array" and "items" in node:
            node["items"] = walk(node["items"], namespace, full)
        elif kind == "map" and "values" in node:
            node["values"] = walk(node["values"], namespace, full)
        elif isinstance(kind, (dict, list)):
            node["type"] = walk(kind, namespace, full)
        return node

    return walk(schema, None, full_names)


def generic_for(schema: Any) -> GenericType:
    """The runtime's node table of a writer's schema (a GenericType), over
    which a datum's bytes are walked from a stream with the codecs' limits:
    a lookup after the first call."""
    key = ("generic", id(schema))
    entry = BY_OBJECT.get(key)
    if entry is not None and entry[0] is schema and unchanged(entry[3], schema):
        return entry[2]
    from roastedavro._runtime import GenericType

    shape = schema_shape(schema)
    generic = GenericType(schema.to_dict() if isinstance(schema, Schema) else schema)
    with _lock:
        BY_OBJECT[key] = (schema, None, generic, shape, None)
        if len(BY_OBJECT) > _OBJECTS_KEPT:
            del BY_OBJECT[next(iter(BY_OBJECT))]
    return generic


def schema_text(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True)
