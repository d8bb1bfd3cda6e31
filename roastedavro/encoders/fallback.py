"""What the visitor uses for a field class no encoder is registered for."""

from __future__ import annotations

from roastedavro.encoders.base import Encoder


class FallbackEncoder(Encoder):
    def choose_avro_type(self, override):
        raise self.error(
            "no encoder is registered for this field class. Register one with "
            "roastedavro.register_encoder(YourEncoder) (see Encoder in the README)"
        )
