"""The Avro schema model: types, parsing, canonical form and fingerprints."""

from roastedavro.avro.types import (  # noqa: F401
    NO_DEFAULT, Array, AvroType, Enum, Field, Fixed, Logical, Map, NamedRef, NamedType,
    Primitive, Record, Schema, Union,
)
