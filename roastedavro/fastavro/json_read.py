"""``fastavro.json_read``: ``json_reader`` is the drop-in's."""

from __future__ import annotations

from roastedavro.fastavro.json import json_reader  # noqa: F401
from roastedavro.fastavro._submodule import forwarder

__getattr__ = forwarder("roastedavro.fastavro.json_read", "fastavro.json_read", {})
