"""Parsing Canonical Form, fingerprints, and the full JSON of a schema.

The canonical form is the specification's "Parsing Canonical Form for
Schemas", written as Java's ``SchemaNormalization.toParsingForm`` writes it:
only the attributes that matter for reading (type, name, fields, symbols,
items, values, size), full names, no whitespace. Its fingerprints are the
schema's identity in single-object encoding, container files and registries.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from roastedavro.avro.types import (
    Array, AvroType, Enum, Fixed, Map, NamedRef, NamedType, Primitive, Record, Schema, Union,
)

#: the CRC-64-AVRO polynomial's empty fingerprint (the specification's EMPTY)
EMPTY64 = 0xC15D213AA4D7A795


def _crc64_table() -> list[int]:
    table = []
    for byte in range(256):
        fp = byte
        for _ in range(8):
            fp = (fp >> 1) ^ (EMPTY64 & -(fp & 1))
        table.append(fp)
    return table


_CRC64_TABLE = _crc64_table()

ALGORITHMS = ("CRC-64-AVRO", "MD5", "SHA-256")
_HASHLIB = {"MD5": "md5", "SHA-256": "sha256"}


def crc64_avro(data: bytes) -> int:
    """The 64-bit Rabin fingerprint of the specification (unsigned)."""
    fp = EMPTY64
    table = _CRC64_TABLE
    for byte in data:
        fp = (fp >> 8) ^ table[(fp ^ byte) & 0xFF]
    return fp


def fingerprint(canonical_form: str, algorithm: str = "CRC-64-AVRO") -> Any:
    """``CRC-64-AVRO`` -> int (Java's fingerprint64 as unsigned); ``MD5`` and
    ``SHA-256`` -> bytes. Case and dashes in the name do not matter."""
    key = algorithm.upper().replace("_", "-")
    key = {"SHA256": "SHA-256", "CRC64-AVRO": "CRC-64-AVRO", "CRC-64": "CRC-64-AVRO"}.get(key, key)
    data = canonical_form.encode("utf-8")
    if key == "CRC-64-AVRO":
        return crc64_avro(data)
    if key in _HASHLIB:
        return hashlib.new(_HASHLIB[key], data).digest()
    raise ValueError(f"unknown fingerprint algorithm {algorithm!r} (one of {', '.join(ALGORITHMS)})")


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def parsing_canonical_form(schema: Schema) -> str:
    out: list[str] = []
    seen: set[str] = set()

    def write(avro: AvroType) -> None:
        if isinstance(avro, NamedRef):
            if avro.name in seen:
                out.append(_quote(avro.name))
                return
            avro = schema.named[avro.name]
        if isinstance(avro, Primitive):
            out.append(_quote(avro.name))
        elif isinstance(avro, NamedType):
            if avro.name in seen:
                out.append(_quote(avro.name))
                return
            seen.add(avro.name)
            out.append('{"name":' + _quote(avro.name))
            if isinstance(avro, Record):
                # an error is a record to a reader
                out.append(',"type":"record","fields":[')
                for number, field in enumerate(avro.fields):
                    if number:
                        out.append(",")
                    out.append('{"name":' + _quote(field.name) + ',"type":')
                    write(field.type)
                    out.append("}")
                out.append("]}")
            elif isinstance(avro, Enum):
                out.append(',"type":"enum","symbols":['
                           + ",".join(_quote(symbol) for symbol in avro.symbols) + "]}")
            elif isinstance(avro, Fixed):
                out.append(f',"type":"fixed","size":{avro.size}}}')
        elif isinstance(avro, Array):
            out.append('{"type":"array","items":')
            write(avro.items)
            out.append("}")
        elif isinstance(avro, Map):
            out.append('{"type":"map","values":')
            write(avro.values)
            out.append("}")
        elif isinstance(avro, Union):
            out.append("[")
            for number, branch in enumerate(avro.branches):
                if number:
                    out.append(",")
                write(branch)
            out.append("]")
        else:  # pragma: no cover - the model has no other types
            raise TypeError(f"not an Avro type: {avro!r}")

    write(schema.root)
    return "".join(out)


def to_json_value(schema: Schema) -> Any:
    """The full schema as JSON values: every attribute and property kept, each
    named type defined once (where it first appears) and named afterwards;
    names relative to the enclosing namespace, as Java's ``Schema.toString``."""
    seen: set[str] = set()

    def logical(avro, node: dict) -> None:
        if avro.logical is not None:
            node["logicalType"] = avro.logical.name
            if avro.logical.precision is not None:
                node["precision"] = avro.logical.precision
                node["scale"] = avro.logical.scale

    def name_for(full: str, enclosing: str | None) -> str:
        namespace, _, name = full.rpartition(".")
        return name if (namespace or None) == enclosing else full

    def convert(avro: AvroType, enclosing: str | None) -> Any:
        if isinstance(avro, NamedRef):
            if avro.name in seen:
                return name_for(avro.name, enclosing)
            avro = schema.named[avro.name]
        if isinstance(avro, Primitive):
            if avro.logical is None and not avro.props:
                return avro.name
            node: dict[str, Any] = {"type": avro.name}
            logical(avro, node)
            node.update(avro.props)
            return node
        if isinstance(avro, NamedType):
            if avro.name in seen:
                return name_for(avro.name, enclosing)
            seen.add(avro.name)
            namespace, _, name = avro.name.rpartition(".")
            node = {"type": avro.type_name, "name": name}
            if (namespace or None) != enclosing:
                node["namespace"] = namespace
            own = namespace or None
            if avro.doc is not None:  # type: ignore[attr-defined]
                node["doc"] = avro.doc  # type: ignore[attr-defined]
            if isinstance(avro, Record):
                fields = []
                for field in avro.fields:
                    item: dict[str, Any] = {"name": field.name, "type": convert(field.type, own)}
                    if field.doc is not None:
                        item["doc"] = field.doc
                    if field.has_default:
                        item["default"] = field.default
                    if field.order != "ascending":
                        item["order"] = field.order
                    if field.aliases:
                        item["aliases"] = list(field.aliases)
                    item.update(field.props)
                    fields.append(item)
                node["fields"] = fields
            elif isinstance(avro, Enum):
                node["symbols"] = list(avro.symbols)
                if avro.default is not None:
                    node["default"] = avro.default
            elif isinstance(avro, Fixed):
                node["size"] = avro.size
                logical(avro, node)
            aliases = avro.aliases  # type: ignore[attr-defined]
            if aliases:
                node["aliases"] = [name_for(alias, own) for alias in aliases]
            node.update(avro.props)  # type: ignore[attr-defined]
            return node
        if isinstance(avro, Array):
            return {"type": "array", "items": convert(avro.items, enclosing), **dict(avro.props)}
        if isinstance(avro, Map):
            return {"type": "map", "values": convert(avro.values, enclosing), **dict(avro.props)}
        if isinstance(avro, Union):
            return [convert(branch, enclosing) for branch in avro.branches]
        raise TypeError(f"not an Avro type: {avro!r}")  # pragma: no cover

    return convert(schema.root, None)
