"""Which encoder handles which marshmallow field class.

Dispatch follows ``functools.singledispatch``: the field's exact class first,
then the nearest class in its MRO that has an encoder, then the fallback.
"""

from __future__ import annotations

from typing import Iterable

from marshmallow import fields

from roastedavro.encoders.base import Encoder


class EncoderRegistry:
    def __init__(self, encoders: Iterable[type[Encoder]] = ()) -> None:
        self._by_field_class: dict[type, type[Encoder]] = {}
        for encoder in encoders:
            self.register(encoder)

    def register(self, encoder: type[Encoder]) -> type[Encoder]:
        if not (isinstance(encoder, type) and issubclass(encoder, Encoder)):
            raise TypeError(f"expected an Encoder subclass, got {encoder!r}")
        field_class = encoder.field_class
        if not (isinstance(field_class, type) and issubclass(field_class, fields.Field)):
            raise TypeError(f"{encoder.__name__}.field_class must be a marshmallow Field subclass")
        self._by_field_class[field_class] = encoder
        return encoder

    def lookup(self, field_class: type) -> type[Encoder] | None:
        for klass in field_class.__mro__:
            encoder = self._by_field_class.get(klass)
            if encoder is not None:
                return encoder
        return None

    def copy(self) -> EncoderRegistry:
        clone = EncoderRegistry()
        clone._by_field_class = dict(self._by_field_class)
        return clone

    def __contains__(self, field_class: type) -> bool:
        return field_class in self._by_field_class
