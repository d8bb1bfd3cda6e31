"""``fastavro.json_write``: ``json_writer`` is the drop-in's."""

from __future__ import annotations

from roastedavro.fastavro.json import json_writer  # noqa: F401
from roastedavro.fastavro._submodule import forwarder

__getattr__ = forwarder("roastedavro.fastavro.json_write", "fastavro.json_write", {})
