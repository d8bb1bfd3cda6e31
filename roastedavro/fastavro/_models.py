"""Schemas as fastavro takes them, to roastedavro's model and compiled codecs.

fastavro's ``parse_schema`` returns a dict in which every use of a named type
holds its whole definition again, marked ``__fastavro_parsed``. The model
wants each named type defined once, so repeated definitions become names
again before parsing. Codecs are cached by the schema object (a dict lookup
per call) and by the schema's JSON text (one compile per distinct schema).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from roastedavro.avro.parse import parse_schema as parse_model
from roastedavro.avro.types import Schema

_NAMED = ("record", "error", "enum", "fixed")
#: codecs by id() of the schema object the caller passed, or of the writer's
#: and reader's schema objects: (schema, reader or None, codec). The objects
#: are held, so their ids cannot be reused while the entry lives
BY_OBJECT: dict[Any, tuple[Any, Any, Any]] = {}
_BY_TEXT: dict[tuple, Any] = {}
_OBJECTS_KEPT = 1024
_lock = threading.Lock()


def as_model(schema: Any) -> Schema:
    """The model of a schema given as fastavro accepts it: a dict, list or
    type name, parsed by fastavro or not, or a model ``Schema``."""
    if isinstance(schema, Schema):
        return schema
    return parse_model(defined_once(schema))


def defined_once(schema: Any) -> Any:
    """A copy of fastavro's expanded form with each named type defined once."""
    seen: set[str] = set()

    def walk(node: Any, namespace: str | None) -> Any:
        if isinstance(node, list):
            return [walk(item, namespace) for item in node]
        if not isinstance(node, dict):
            return node
        node = {key: value for key, value in node.items() if not key.startswith("__fastavro")
                and key != "__named_schemas"}
        kind = node.get("type")
        if set(node) == {"type"} and isinstance(kind, (str, list, dict)):
            # fastavro takes {"type": X} for X itself (Java's parser does not)
            return walk(kind, namespace)
        if kind in _NAMED and isinstance(node.get("name"), str):
            name = node["name"]
            own = node.get("namespace", namespace) if "." not in name else name.rpartition(".")[0]
            full = name if "." in name else (f"{own}.{name}" if own else name)
            if full in seen:
                return full
            seen.add(full)
            inner = full.rpartition(".")[0] or None
            if kind in ("record", "error") and isinstance(node.get("fields"), list):
                node["fields"] = [
                    {**field, "type": walk(field["type"], inner)}
                    if isinstance(field, dict) and "type" in field else field
                    for field in node["fields"]]
            return node
        if kind == "array" and "items" in node:
            node["items"] = walk(node["items"], namespace)
        elif kind == "map" and "values" in node:
            node["values"] = walk(node["values"], namespace)
        elif isinstance(kind, (dict, list)):
            node["type"] = walk(kind, namespace)
        return node

    return walk(schema, None)


def codec_for(schema: Any, reader: Any = None):
    """The compiled AvroCodec for a schema (reading with ``reader``'s schema,
    if given): a lookup after the first call."""
    key = id(schema) if reader is None else (id(schema), id(reader))
    entry = BY_OBJECT.get(key)
    if entry is not None and entry[0] is schema and entry[1] is reader:
        return entry[2]
    from roastedavro.codec import AvroCodec

    model = as_model(schema)
    reader_model = as_model(reader) if reader is not None else None
    text = (model.to_json(), reader_model.to_json() if reader is not None else None)
    with _lock:
        codec = _BY_TEXT.get(text)
        if codec is None:
            if reader_model is None:
                codec = AvroCodec(model)
            else:
                codec = AvroCodec(reader_model, writer_schema=model)
            _BY_TEXT[text] = codec
        if not isinstance(schema, (str, Schema)) or not isinstance(reader, (str, Schema, type(None))):
            # dicts are not hashable: remember the objects themselves, LRU-bounded
            BY_OBJECT[key] = (schema, reader, codec)
            if len(BY_OBJECT) > _OBJECTS_KEPT:
                # the oldest entry goes (dicts keep insertion order)
                del BY_OBJECT[next(iter(BY_OBJECT))]
    return codec


def generic_for(schema: Any):
    """The runtime's node table of a writer's schema (a GenericType), over
    which a datum's bytes are walked from a stream with the codecs' limits:
    a lookup after the first call."""
    key = ("generic", id(schema))
    entry = BY_OBJECT.get(key)
    if entry is not None and entry[0] is schema:
        return entry[2]
    from roastedavro._runtime import GenericType

    generic = GenericType(schema.to_dict() if isinstance(schema, Schema) else schema)
    with _lock:
        BY_OBJECT[key] = (schema, None, generic)
        if len(BY_OBJECT) > _OBJECTS_KEPT:
            del BY_OBJECT[next(iter(BY_OBJECT))]
    return generic


def schema_text(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True)
