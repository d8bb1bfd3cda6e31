"""``fastavro.utils``: fastavro's own helpers (``generate_one``,
``generate_many``, ``anonymize_schema``), which make schemas and records
and move no bytes."""

from __future__ import annotations

from roastedavro.fastavro._submodule import forwarder

__getattr__ = forwarder("roastedavro.fastavro.utils", "fastavro.utils", {})
