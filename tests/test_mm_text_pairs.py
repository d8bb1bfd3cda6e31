"""load_compiled(data, writer_schema=...) where the writer wrote bytes that
this schema reads as a string (or a string it reads as bytes): the same
encoding, so the pair is read in one pass by the schema's own field code,
which checks a string's UTF-8 as it reads it. Java Avro 1.12 is the oracle
of the values; text that is not UTF-8 is the pair's AvroCodec's error, at
its offset."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import fields

from roastedavro import AvroCodec, CompiledSchema, DecodeError


class NoteV1(CompiledSchema):
    class Meta:
        avro_name = "Note"

    id = fields.Integer(required=True)
    body = fields.Raw(required=True, metadata={"avro": "bytes"})
    tags = fields.List(fields.Raw(metadata={"avro": "bytes"}))
    title = fields.String(required=True)


class NoteV2(CompiledSchema):
    class Meta:
        avro_name = "Note"

    tags = fields.List(fields.String())  # bytes -> string, in an array
    body = fields.String(required=True)  # bytes -> string
    title = fields.Raw(required=True, metadata={"avro": "bytes"})  # string -> bytes
    id = fields.Integer(required=True)
    pinned = fields.Boolean(load_default=False)


def served(schema) -> list[str]:
    return [type(pair).__name__ for pair in schema.load_compiled.__self__.pairs.args[2].by_json.values()]


notes = st.fixed_dictionaries(
    {
        "id": st.integers(-(2**63), 2**63 - 1),
        "body": st.text(max_size=20).map(str.encode),
        "tags": st.lists(st.text(max_size=5).map(str.encode), max_size=3),
        "title": st.text(max_size=10),
    }
)


@pytest.mark.java
@settings(max_examples=60, deadline=None)
@given(st.lists(notes, min_size=1, max_size=8))
def test_text_read_across_bytes_and_strings_is_javas(java, records):
    v1, v2 = NoteV1(), NoteV2()
    written = [v1.dump_compiled(record) for record in records]
    resolved = java.resolve_each((v1.avro_schema(), v2.avro_schema(), data) for data in written)
    for record, data, trip in zip(records, written, resolved):
        loaded = v2.load_compiled(data, writer_schema=NoteV1)
        assert loaded == v2.load_compiled(trip.data)
        assert loaded["body"] == record["body"].decode() and loaded["title"] == record["title"].encode()
    assert served(v2) == ["Codec"]  # one pass, not read and written again


@pytest.mark.parametrize("where", ["body", "tags"])
def test_bytes_that_are_not_utf8_are_the_pairs_error_at_its_offset(where):
    v1, v2 = NoteV1(), NoteV2()
    record = {"id": 1, "body": b"ok", "tags": [b"a"], "title": "t"}
    record[where] = b"\xff\xfe" if where == "body" else [b"a", b"\xc3("]
    data = v1.dump_compiled(record)
    with pytest.raises(DecodeError) as theirs:
        AvroCodec(v2.avro_schema(), writer_schema=v1.avro_schema()).load(data)
    with pytest.raises(DecodeError) as ours:
        v2.load_compiled(data, writer_schema=NoteV1)
    assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)
    assert ours.value.offset == theirs.value.offset
