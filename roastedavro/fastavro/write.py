"""``fastavro.write``'s names over roastedavro's engine (``from
roastedavro.fastavro.write import writer``): the writers are the drop-in's;
``LOGICAL_WRITERS`` is fastavro's own registry. fastavro's ``Writer`` class
(records written one by one with ``write``/``flush``) is not provided yet:
``writer(fo, schema, records)`` takes any iterable, a generator included."""

from __future__ import annotations

from roastedavro.fastavro import schemaless_writer, writer  # noqa: F401
from roastedavro.fastavro._submodule import forwarder

__getattr__ = forwarder("roastedavro.fastavro.write", "fastavro.write", {
    "Writer": "fastavro's Writer class is not provided by the drop-in yet; "
              "writer(fo, schema, records) takes any iterable of records, a generator included",
})


def json_writer(*args, **kwargs):
    """fastavro.write's json_writer: roastedavro.fastavro.json_writer."""
    from roastedavro.fastavro.json import json_writer as write

    return write(*args, **kwargs)
