"""Checks the tests of load_compiled(data, writer_schema=...) share: values
against Java's resolving reader, errors against the pair's own reader."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from roastedavro import DecodeError


def loads_as_java_resolves(java: Any, writer: Any, reader: Any, records: list, writer_schema: Any) -> list:
    """Each record dumped by ``writer`` and loaded by ``reader`` with
    ``writer_schema``: asserted equal to loading what Java 1.12's
    GenericDatumReader(writer's schema, reader's schema) reads from the same
    bytes, written again in the reader's schema. The loaded values, in order."""
    written = [writer.dump_compiled(record) for record in records]
    resolved = java.resolve_each((writer.avro_schema(), reader.avro_schema(), data) for data in written)
    loaded = []
    for data, trip in zip(written, resolved):
        value = reader.load_compiled(data, writer_schema=writer_schema)
        assert value == reader.load_compiled(trip.data)
        loaded.append(value)
    return loaded


def assert_same_decode_error(expected: Callable[[], object], got: Callable[[], object]) -> DecodeError:
    """Both calls raise a DecodeError of the same type, words and offset;
    the second one's error."""
    with pytest.raises(DecodeError) as theirs:
        expected()
    with pytest.raises(DecodeError) as ours:
        got()
    assert (type(ours.value), str(ours.value), ours.value.offset) == (
        type(theirs.value),
        str(theirs.value),
        theirs.value.offset,
    )
    return ours.value
