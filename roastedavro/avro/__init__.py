"""The Avro schema model: types, parsing, canonical form and fingerprints."""

from roastedavro.avro.types import (  # noqa: F401
    NO_DEFAULT, Array, AvroType, Enum, Field, Fixed, Logical, Map, NamedRef, NamedType,
    Primitive, Record, Schema, Union,
)
from roastedavro.avro.canonical import crc64_avro, fingerprint, parsing_canonical_form  # noqa: F401,E402
from roastedavro.avro.parse import load_schema, parse_schema, parse_schemas  # noqa: F401,E402

__all__ = [
    "NO_DEFAULT", "Array", "AvroType", "Enum", "Field", "Fixed", "Logical", "Map", "NamedRef",
    "NamedType", "Primitive", "Record", "Schema", "Union", "crc64_avro", "fingerprint",
    "load_schema", "parse_schema", "parse_schemas", "parsing_canonical_form",
]
