"""``fastavro.types``: fastavro's own type aliases (``Schema``, ``AvroMessage``, ...)."""

from __future__ import annotations

from roastedavro.fastavro._submodule import forwarder

__getattr__ = forwarder("roastedavro.fastavro.types", "fastavro.types", {})
