"""The binary encoding of a field's default given as schema JSON (as the
specification and Java 1.12 read defaults)."""

from __future__ import annotations

import struct
from typing import Any

from roastedavro._datum import INT_RANGE, LONG_RANGE, encode_long, shown
from roastedavro.avro.types import (
    Array,
    AvroType,
    Enum,
    Fixed,
    Map,
    Primitive,
    Record,
    Schema,
    Union,
)
from roastedavro.errors import SchemaError


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
        raise SchemaError(
            f"the default {shown(value)} is not a valid value of its type ({error})", where
        ) from None


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
                encoded: bytes | None
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
        return (
            encode_long(len(value)) + b"".join(_encode(avro.items, item, schema) for item in value) + b"\x00"
        )
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
