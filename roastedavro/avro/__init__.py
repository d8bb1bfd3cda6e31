"""The Avro schema model: types, parsing, canonical form and fingerprints, schema
resolution and compatibility."""

from roastedavro.avro.types import (  # noqa: F401
    NO_DEFAULT, Array, AvroType, Enum, Field, Fixed, Logical, Map, NamedRef, NamedType,
    Primitive, Record, Schema, Union,
)
from roastedavro.avro.canonical import crc64_avro, fingerprint, parsing_canonical_form  # noqa: F401,E402
from roastedavro.avro.parse import load_schema, parse_schema, parse_schemas  # noqa: F401,E402
from roastedavro.avro.compatibility import (  # noqa: F401,E402
    CompatibilityResult, Incompatibility, check_compatibility, check_mode,
)
from roastedavro.avro.resolve import resolve  # noqa: F401,E402

__all__ = [
    "NO_DEFAULT", "Array", "AvroType", "CompatibilityResult", "Enum", "Field", "Fixed",
    "Incompatibility", "Logical", "Map", "NamedRef", "NamedType", "Primitive", "Record", "Schema",
    "Union", "check_compatibility", "check_mode", "crc64_avro", "fingerprint", "load_schema",
    "parse_schema", "parse_schemas", "parsing_canonical_form", "resolve",
]
