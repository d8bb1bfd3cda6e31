"""Field encoders and the registry that maps field classes to them."""

from __future__ import annotations

from roastedavro.encoders.base import Encoder
from roastedavro.encoders.collections import ListEncoder, MappingEncoder
from roastedavro.encoders.fallback import FallbackEncoder
from roastedavro.encoders.nested import NestedEncoder, RecordValueEncoder
from roastedavro.encoders.registry import EncoderRegistry
from roastedavro.encoders.scalars import (
    BooleanEncoder,
    FloatEncoder,
    IntegerEncoder,
    StringEncoder,
)

BUILTIN_ENCODERS = (
    StringEncoder,
    IntegerEncoder,
    FloatEncoder,
    BooleanEncoder,
    ListEncoder,
    MappingEncoder,
    NestedEncoder,
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
