"""Field encoders and the registry that maps field classes to them."""

from __future__ import annotations

from roastedavro.encoders.base import Encoder
from roastedavro.encoders.collections import ListEncoder, MappingEncoder
from roastedavro.encoders.fallback import FallbackEncoder
from roastedavro.encoders.nested import NestedEncoder, RecordValueEncoder
from roastedavro.encoders.raw import RawEncoder
from roastedavro.encoders.registry import EncoderRegistry
from roastedavro.encoders.logical import (
    AwareDateTimeEncoder,
    DateEncoder,
    DateTimeEncoder,
    DecimalEncoder,
    IPEncoder,
    IPInterfaceEncoder,
    NaiveDateTimeEncoder,
    TimeDeltaEncoder,
    TimeEncoder,
    UUIDEncoder,
)
from roastedavro.encoders.scalars import (
    BooleanEncoder,
    FloatEncoder,
    IntegerEncoder,
    NumberEncoder,
    StringEncoder,
)
from roastedavro.encoders.unions import OneOfSchemaEncoder, UnionEncoder
from roastedavro.encoders.structural import (
    ConstantEncoder,
    EnumEncoder,
    PluckEncoder,
    TupleEncoder,
)

BUILTIN_ENCODERS = (
    StringEncoder,
    IntegerEncoder,
    FloatEncoder,
    NumberEncoder,
    BooleanEncoder,
    ListEncoder,
    MappingEncoder,
    NestedEncoder,
    DateTimeEncoder,
    AwareDateTimeEncoder,
    NaiveDateTimeEncoder,
    DateEncoder,
    TimeEncoder,
    TimeDeltaEncoder,
    DecimalEncoder,
    UUIDEncoder,
    IPEncoder,
    IPInterfaceEncoder,
    EnumEncoder,
    TupleEncoder,
    PluckEncoder,
    ConstantEncoder,
    RawEncoder,
    UnionEncoder,
)

#: The registry schemas are compiled with. Registering affects schemas
#: compiled afterwards; a compiled codec keeps the encoders it was built with.
default_registry = EncoderRegistry(BUILTIN_ENCODERS)


def register_encoder(encoder: type[Encoder]) -> type[Encoder]:
    """Register ``encoder`` for its ``field_class`` (and that class's subclasses).

    Returns the encoder, so it can be used as a class decorator.
    """
    return default_registry.register(encoder)


__all__ = [
    "BUILTIN_ENCODERS",
    "AwareDateTimeEncoder",
    "ConstantEncoder",
    "DateEncoder",
    "DateTimeEncoder",
    "DecimalEncoder",
    "EnumEncoder",
    "IPEncoder",
    "IPInterfaceEncoder",
    "NaiveDateTimeEncoder",
    "NumberEncoder",
    "OneOfSchemaEncoder",
    "PluckEncoder",
    "RawEncoder",
    "TimeDeltaEncoder",
    "TimeEncoder",
    "TupleEncoder",
    "UUIDEncoder",
    "UnionEncoder",
    "BooleanEncoder",
    "Encoder",
    "EncoderRegistry",
    "FallbackEncoder",
    "FloatEncoder",
    "IntegerEncoder",
    "ListEncoder",
    "MappingEncoder",
    "NestedEncoder",
    "RecordValueEncoder",
    "StringEncoder",
    "default_registry",
    "register_encoder",
]
