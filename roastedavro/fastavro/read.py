"""``fastavro.read``'s names over roastedavro's engine (``from
roastedavro.fastavro.read import reader``, as ``from fastavro.read import
reader``): the readers are the drop-in's; constants and registries
(``LOGICAL_READERS``, ``MAGIC``, ...) are fastavro's own."""

from __future__ import annotations

from roastedavro.fastavro import (  # noqa: F401
    SchemaResolutionError,
    block_reader,
    is_avro,
    reader,
    schemaless_reader,
)
from typing import TYPE_CHECKING, Any

from roastedavro.fastavro._submodule import forwarder

if TYPE_CHECKING:
    from roastedavro.fastavro.json import json_reader as json_reader_type

__getattr__ = forwarder(
    "roastedavro.fastavro.read",
    "fastavro.read",
    {
        "iter_avro": "an old name of reader(); use reader",
        "BLOCK_READERS": "the drop-in decompresses blocks itself (null, deflate, bzip2, xz, "
        "snappy, zstandard, lz4); a codec registered in fastavro's BLOCK_READERS "
        "would not be used",
    },
)


def json_reader(*args: Any, **kwargs: Any) -> json_reader_type:
    """fastavro.read's json_reader: roastedavro.fastavro.json_reader."""
    from roastedavro.fastavro.json import json_reader as read

    return read(*args, **kwargs)
