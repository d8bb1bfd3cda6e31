"""A schema dict changed in place between calls: fastavro reads the dict on
every call, so the drop-in's codecs, kept by the schema object's identity,
must notice the change rather than write or read with what the dict used to
say (which would silently drop or misread a field). fastavro is the oracle."""

from __future__ import annotations

import io

import fastavro
import pytest

import roastedavro.fastavro as dropin


def record_schema():
    return {"type": "record", "name": "R", "fields": [{"name": "a", "type": "long"}]}


def grow(schema):
    schema["fields"].append({"name": "b", "type": "string", "default": "d"})


def retype(schema):
    schema["fields"][0]["type"] = "string"


RECORDS = {grow: {"a": 1, "b": "xyz"}, retype: {"a": "text"}}


def dump(module, schema, record, **options):
    out = io.BytesIO()
    module.schemaless_writer(out, schema, record, **options)
    return out.getvalue()


@pytest.mark.parametrize("change", [grow, retype])
@pytest.mark.parametrize("options", [{}, {"strict": True}])
def test_a_writer_sees_a_schema_changed_in_place(change, options):
    schema = record_schema()
    for _ in range(2):  # the second call from what the first kept
        assert dump(dropin, schema, {"a": 1}, **options) == dump(fastavro, schema, {"a": 1})
    change(schema)
    record = RECORDS[change]
    for _ in range(2):
        assert dump(dropin, schema, record, **options) == dump(fastavro, schema, record)


@pytest.mark.parametrize("change", [grow, retype])
@pytest.mark.parametrize("options", [{}, {"return_record_name": True}, {"handle_unicode_errors": "replace"}])
def test_a_reader_sees_a_schema_changed_in_place(change, options):
    schema = record_schema()
    first = dump(fastavro, schema, {"a": 1})
    for _ in range(2):
        assert dropin.schemaless_reader(io.BytesIO(first), schema, **options) == {"a": 1}
    change(schema)
    data = dump(fastavro, schema, RECORDS[change])
    expected = fastavro.schemaless_reader(io.BytesIO(data), schema, **options)
    for _ in range(2):
        assert dropin.schemaless_reader(io.BytesIO(data), schema, **options) == expected


def test_a_reader_schema_changed_in_place_is_seen():
    writer = record_schema()
    grow(writer)
    reader = record_schema()
    data = dump(fastavro, writer, {"a": 5, "b": "q"})
    for _ in range(2):
        assert dropin.schemaless_reader(io.BytesIO(data), writer, reader) == {"a": 5}
    reader["fields"].append({"name": "c", "type": "int", "default": 7})
    expected = fastavro.schemaless_reader(io.BytesIO(data), writer, reader)
    assert expected == {"a": 5, "c": 7}
    for _ in range(2):
        assert dropin.schemaless_reader(io.BytesIO(data), writer, reader) == expected


def test_a_parsed_schema_changed_in_place_is_seen():
    # fastavro's parse_schema output is a dict too; users keep it and call with it
    parsed = dropin.parse_schema(record_schema())
    assert dump(dropin, parsed, {"a": 1}) == b"\x02"
    parsed["fields"].append({"name": "b", "type": "string"})
    assert dump(dropin, parsed, {"a": 1, "b": "xyz"}) == dump(fastavro, parsed, {"a": 1, "b": "xyz"})


def test_files_see_a_schema_changed_in_place():
    schema = record_schema()
    first = io.BytesIO()
    dropin.writer(first, schema, [{"a": 1}])
    grow(schema)
    ours, theirs = io.BytesIO(), io.BytesIO()
    dropin.writer(ours, schema, [RECORDS[grow]], sync_marker=b"0" * 16)
    fastavro.writer(theirs, schema, [RECORDS[grow]], sync_marker=b"0" * 16)
    assert ours.getvalue() == theirs.getvalue()
    assert list(dropin.reader(io.BytesIO(theirs.getvalue()), schema)) == [RECORDS[grow]]


def test_an_unchanged_schema_is_served_by_the_codec_kept_for_it():
    from roastedavro.fastavro import _models

    schema = record_schema()
    dump(dropin, schema, {"a": 1})
    entry = _models.BY_OBJECT[id(schema)]
    dump(dropin, schema, {"a": 2})
    assert _models.BY_OBJECT[id(schema)] is entry
    grow(schema)
    dump(dropin, schema, RECORDS[grow])
    assert _models.BY_OBJECT[id(schema)] is not entry


def test_a_schema_changed_while_its_codec_is_built_is_seen_at_the_next_call():
    # another thread changing the dict while the first call builds its codec,
    # stood in for by a codec_for that changes it after building
    from roastedavro import _dropin
    from roastedavro.fastavro import _codecs, _models

    schema = record_schema()
    built = _codecs.codec_for

    def changing_while_built(given, reader=None):
        codec = built(given, reader)
        retype(schema)
        return codec

    others = (
        dropin._pair_codec,
        dropin._dump_with_options,
        dropin._read_named,
        dropin._read_datum,
        dropin.fastavro_error,
        dropin.DatumResolutionError.of,
    )
    _dropin.bind(_models.BY_OBJECT, changing_while_built, *others)
    try:
        dump(dropin, schema, {"a": 1})
    finally:
        _dropin.bind(_models.BY_OBJECT, built, *others)
    assert dump(dropin, schema, {"a": "xyz"}) == dump(fastavro, schema, {"a": "xyz"})
