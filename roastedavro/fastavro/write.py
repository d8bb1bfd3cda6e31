"""``fastavro.write``'s names over roastedavro's engine (``from
roastedavro.fastavro.write import writer, Writer``): the writers, and
fastavro's ``Writer`` class (records written one by one with
``write``/``flush``), are the drop-in's; ``LOGICAL_WRITERS`` is fastavro's
own registry."""

from __future__ import annotations

from roastedavro.fastavro import schemaless_writer, writer  # noqa: F401
from roastedavro.fastavro._files import Writer  # noqa: F401
from typing import Any

from roastedavro.fastavro._submodule import forwarder

__getattr__ = forwarder("roastedavro.fastavro.write", "fastavro.write", {})


def json_writer(*args: Any, **kwargs: Any) -> None:
    """fastavro.write's json_writer: roastedavro.fastavro.json_writer."""
    from roastedavro.fastavro.json import json_writer as write

    return write(*args, **kwargs)
