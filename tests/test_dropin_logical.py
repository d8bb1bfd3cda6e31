"""fastavro's custom logical types (LOGICAL_WRITERS / LOGICAL_READERS) in the
drop-in: the same bytes, JSON and values as fastavro itself."""

from __future__ import annotations

import io
import json

import fastavro
import pytest

import roastedavro.fastavro as dropin
from roastedavro.fastavro._models import SchemaParseError


class Point:
    def __init__(self, x: int, y: int):
        self.x, self.y = x, y

    def __eq__(self, other):
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)

    def __repr__(self):
        return f"Point({self.x}, {self.y})"


def prepare_point(datum, schema):
    assert schema["logicalType"] == "point"
    return {"x": datum.x, "y": datum.y} if isinstance(datum, Point) else datum


def read_point(datum, writer_schema, reader_schema):
    return Point(datum["x"], datum["y"])


def prepare_json(datum, schema):
    return json.dumps(datum, sort_keys=True) if isinstance(datum, (dict, list)) else datum


def read_json(datum, writer_schema, reader_schema):
    return json.loads(datum)


REGISTERED = {"record-point": (prepare_point, read_point), "string-json-text": (prepare_json, read_json)}


@pytest.fixture
def registered():
    for key, (prepare, read) in REGISTERED.items():
        fastavro.write.LOGICAL_WRITERS[key] = prepare
        fastavro.read.LOGICAL_READERS[key] = read
    yield
    for key in REGISTERED:
        fastavro.write.LOGICAL_WRITERS.pop(key, None)
        fastavro.read.LOGICAL_READERS.pop(key, None)


POINT = {
    "type": "record",
    "name": "Point",
    "namespace": "geo",
    "logicalType": "point",
    "fields": [{"name": "x", "type": "int"}, {"name": "y", "type": "int"}],
}
JSON_TEXT = {"type": "string", "logicalType": "json-text"}


def shape():
    return {
        "type": "record",
        "name": "Shape",
        "namespace": "geo",
        "fields": [
            {"name": "origin", "type": POINT},
            {"name": "corners", "type": {"type": "array", "items": "geo.Point"}},
            {"name": "label", "type": ["null", JSON_TEXT, "geo.Point"]},
            {"name": "extra", "type": {"type": "map", "values": JSON_TEXT}},
            {"name": "when", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        ],
    }


RECORDS = [
    {
        "origin": Point(1, 2),
        "corners": [Point(3, 4), Point(-5, 6)],
        "label": {"a": [1, 2]},
        "extra": {"k": {"nested": True}},
        "when": 1_700_000_000_000,
    },
    {"origin": Point(0, 0), "corners": [], "label": None, "extra": {}, "when": 0},
    {
        "origin": Point(7, 8),
        "corners": [Point(9, 9)],
        "label": Point(10, 11),
        "extra": {"s": '["already", "text"]'},
        "when": 5,
    },
]


def _schemaless(module, schema, record, reader_schema=None):
    out = io.BytesIO()
    module.schemaless_writer(out, schema, record)
    data = out.getvalue()
    return data, module.schemaless_reader(io.BytesIO(data), schema, reader_schema)


@pytest.mark.parametrize("index", range(len(RECORDS)))
def test_schemaless_record_string_union_array(registered, index):
    schema = shape()
    ours = _schemaless(dropin, schema, RECORDS[index])
    theirs = _schemaless(fastavro, shape(), RECORDS[index])
    assert ours == theirs
    assert isinstance(ours[1]["origin"], Point)
    # the datum given is not changed
    assert isinstance(RECORDS[index]["origin"], Point)


def test_top_level_union_and_string(registered):
    for schema, datum in [
        ([{"type": "float"}, POINT], Point(1, 2)),
        (["float", POINT], 1.5),
        (JSON_TEXT, {"x": [1, None]}),
        (["null", JSON_TEXT], [1, 2]),
        ({"type": "array", "items": ["null", POINT]}, [None, Point(3, 4)]),
    ]:
        assert _schemaless(dropin, schema, datum) == _schemaless(fastavro, schema, datum)


def test_container_files(registered):
    files = []
    for module in (dropin, fastavro):
        out = io.BytesIO()
        module.writer(out, shape(), RECORDS, sync_marker=b"s" * 16)
        out.seek(0)
        files.append((out.getvalue(), list(module.reader(out))))
        out.seek(0)
        files[-1] += ([record for block in module.block_reader(out) for record in block],)
    assert files[0] == files[1]
    assert files[0][1] == files[0][2]
    assert isinstance(files[0][1][2]["label"], Point)


def test_json(registered):
    texts, values = [], []
    for module in (dropin, fastavro):
        out = io.StringIO()
        module.json_writer(out, shape(), RECORDS)
        texts.append(out.getvalue())
        values.append(list(module.json_reader(io.StringIO(out.getvalue()), shape())))
    assert texts[0] == texts[1]
    assert values[0] == values[1]


def test_reader_schema(registered):
    reader = {
        "type": "record",
        "name": "Shape",
        "namespace": "geo",
        "fields": [
            {"name": "start", "aliases": ["origin"], "type": POINT},
            {"name": "label", "type": ["null", JSON_TEXT, "geo.Point"]},
            {"name": "more", "type": "int", "default": 3},
        ],
    }
    for record in RECORDS:
        ours = _schemaless(dropin, shape(), record, reader)
        assert ours == _schemaless(fastavro, shape(), record, reader)
        assert isinstance(ours[1]["start"], Point)


@pytest.mark.parametrize("index", [0, 2])
def test_options_and_naming(registered, index):
    record = RECORDS[index]
    for options in ({"strict": True}, {"disable_tuple_notation": True}, {}):
        outs = []
        for module in (dropin, fastavro):
            out = io.BytesIO()
            module.schemaless_writer(out, shape(), record, **options)
            outs.append(out.getvalue())
        assert outs[0] == outs[1]
    # fastavro's (name, value) for a record in a union, with the reader function applied
    reads = [
        module.schemaless_reader(io.BytesIO(outs[0]), shape(), return_record_name=True)
        for module in (dropin, fastavro)
    ]
    assert reads[0] == reads[1]


def test_registered_after_first_use():
    schema = {"type": "string", "logicalType": "late-json"}
    assert _schemaless(dropin, schema, '{"a": 1}')[1] == '{"a": 1}'
    fastavro.read.LOGICAL_READERS["string-late-json"] = read_json
    try:
        # fastavro sees the key at once, and so does the drop-in
        assert _schemaless(dropin, schema, '{"a": 1}')[1] == {"a": 1}
    finally:
        del fastavro.read.LOGICAL_READERS["string-late-json"]
    assert _schemaless(dropin, schema, '{"a": 1}')[1] == '{"a": 1}'


def test_no_plan_without_custom_types(registered):
    # a schema without a registered custom logical type is served by its codec as it is
    codec = dropin.codec_for({"type": "array", "items": "long"})
    assert type(codec).__name__ == "AvroCodec"


def test_ambiguous_union_is_an_error(registered):
    # an int and a long with a custom type in one union: the value read
    # cannot say which it was, and the drop-in does not guess
    fastavro.read.LOGICAL_READERS["long-counter"] = lambda datum, *schemas: datum * 10
    try:
        schema = ["int", {"type": "long", "logicalType": "counter"}]
        with pytest.raises(SchemaParseError, match="more than one of its branches"):
            _schemaless(dropin, schema, 4)
    finally:
        del fastavro.read.LOGICAL_READERS["long-counter"]


def test_schemas_without_custom_types_unchanged_while_registered(registered):
    # a writer's schema with a default fastavro's parser refuses (read with a
    # reader's schema, as fastavro reads it): no plan, the file reads as before
    writer_schema = fastavro.parse_schema(
        {
            "type": "record",
            "name": "Test",
            "namespace": "test",
            "fields": [{"name": "field1", "type": "int", "default": None}],
        },
        _ignore_default_error=True,
    )
    reader_schema = {
        "type": "record",
        "name": "Test",
        "namespace": "test",
        "fields": [{"name": "field1", "type": "int", "default": 0}],
    }
    out = io.BytesIO()
    dropin.writer(out, writer_schema, [{"field1": 5}])
    out.seek(0)
    assert list(dropin.reader(out, reader_schema)) == [{"field1": 5}]


@pytest.mark.parametrize(
    "params, value",
    [
        ({"precision": 5, "scale": True}, "1.5"),  # fastavro: scale 1 (a bool is an int)
        ({"precision": 5, "scale": False}, "15"),  # scale 0
        ({"precision": True, "scale": 0}, "7"),  # precision 1
    ],
)
def test_a_decimals_precision_or_scale_given_as_a_bool_counts_as_fastavros_int(params, value):
    import decimal

    schema = {"type": "bytes", "logicalType": "decimal", **params}
    datum = decimal.Decimal(value)
    ours, theirs = io.BytesIO(), io.BytesIO()
    dropin.schemaless_writer(ours, dropin.parse_schema(schema), datum)
    fastavro.schemaless_writer(theirs, fastavro.parse_schema(schema), datum)
    assert ours.getvalue() == theirs.getvalue()
    read = dropin.schemaless_reader(io.BytesIO(theirs.getvalue()), dropin.parse_schema(schema))
    expected = fastavro.schemaless_reader(io.BytesIO(theirs.getvalue()), fastavro.parse_schema(schema))
    assert (type(read), read) == (type(expected), expected) == (decimal.Decimal, datum)
