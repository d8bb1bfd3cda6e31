"""A long union (of several records, or of many branches) is generated once
per module and called wherever it occurs: its functions (write, read, skip,
and fastavro's validation) are not written out again at every field, array
or map that has it. The bytes, values, errors and paths stay fastavro's.
"""

from __future__ import annotations

import io
import re

import fastavro
import pytest

from roastedavro.avro import parse_schema
from roastedavro.avrogen import generate_avro_module
from roastedavro.codec import AvroCodec
from roastedavro.errors import DatumError, DecodeError


def _record(name, *fields):
    return {
        "type": "record",
        "name": name,
        "fields": [{"name": field, "type": kind} for field, kind in fields],
    }


SHAPES = [
    "null",
    _record("Circle", ("r", "double")),
    _record("Square", ("side", "double"), ("filled", "boolean")),
    _record("Label", ("text", "string"), ("side", "double")),
]
# twelve branches, no record: shared for its length
SCALARS = [
    "null",
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "string",
    "bytes",
    {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]},
    {"type": "fixed", "name": "Hash", "size": 4},
    {"type": "enum", "name": "Shade", "symbols": ["DARK", "LIGHT"]},
    {"type": "fixed", "name": "Id", "size": 8},
]
#: the same union after its named types are defined
SCALARS_BY_NAME = SCALARS[:8] + ["Color", "Hash", "Shade", "Id"]

DRAWING = {
    "type": "record",
    "name": "Drawing",
    "namespace": "shared",
    "fields": [
        {"name": "main", "type": SHAPES},
        {"name": "others", "type": {"type": "array", "items": ["null", "Circle", "Square", "Label"]}},
        {"name": "named", "type": {"type": "map", "values": ["null", "Circle", "Square", "Label"]}},
        {"name": "scalar", "type": SCALARS},
        {"name": "scalars", "type": {"type": "array", "items": SCALARS_BY_NAME}},
        {
            "name": "layer",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Layer",
                    "fields": [
                        {"name": "top", "type": ["null", "Circle", "Square", "Label"]},
                        {"name": "value", "type": SCALARS_BY_NAME},
                    ],
                },
            ],
            "default": None,
        },
    ],
}

DRAWINGS = [
    {"main": None, "others": [], "named": {}, "scalar": None, "scalars": []},
    {
        "main": {"r": 1.5},
        "others": [{"side": 2.0, "filled": True}, {"text": "t", "side": 1.0}, None, {"r": 3}],
        "named": {"a": {"r": 0.5}, "b": None, "c": {"side": 1.0, "filled": False}},
        "scalar": 5,
        "scalars": [True, 2**40, 1.25, "s", b"b", None, -1, "RED", "DARK", b"12345678"],
        "layer": {"top": {"text": "x", "side": 2.5}, "value": "v"},
    },
    # a dict both Square and Label accept: the one sharing more keys with it
    {
        "main": {"side": 1.0, "filled": True, "text": "both"},
        "others": [],
        "named": {},
        "scalar": 2**31,
        "scalars": [],
        "layer": None,
    },
]


def fastavro_dump(schema, datum) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), datum)
    return out.getvalue()


def fastavro_load(schema, data: bytes):
    return fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(schema))


@pytest.fixture(scope="module")
def drawing():
    return AvroCodec(DRAWING, compile="eager")


@pytest.mark.parametrize("datum", DRAWINGS)
def test_bytes_and_values_are_fastavros(drawing, datum):
    data = drawing.dump(datum)
    assert data == fastavro_dump(DRAWING, datum)
    assert drawing.load(data) == fastavro_load(DRAWING, data)


def test_each_long_union_is_generated_once(drawing):
    source = generate_avro_module(parse_schema(DRAWING)).source
    writers = re.findall(r"cdef int (write_union\d+)\(", source)
    # the shapes union (three records) and the scalars union (twelve branches)
    assert len(writers) == 2, writers
    for name in writers:
        kind = name.replace("write_", "")
        for prefix in ("read_", "accepts_"):
            assert len(re.findall(rf"cdef \w+ {prefix}{kind}\(", source)) == 1
    calls = {name: source.count(f"self.{name}(") for name in writers}
    assert sorted(calls.values()) == [3, 4], calls  # shapes: main, others, named, layer.top
    # its chooser is bound once per union, not once per occurrence
    assert len(set(re.findall(r"self\.(const_union\d+)", source))) <= 4


def test_the_code_grows_by_a_call_per_occurrence_not_by_the_unions_size():
    records = [_record(f"R{n}", *[(f"f{n}_{k}", "long") for k in range(n % 4 + 1)]) for n in range(20)]
    union = ["null", *records]

    def schema(occurrences):
        fields = [{"name": "u0", "type": union}]
        fields += [
            {"name": f"u{n}", "type": ["null", *(f"R{k}" for k in range(20))]} for n in range(1, occurrences)
        ]
        return {"type": "record", "name": "Many", "fields": fields}

    few = len(generate_avro_module(parse_schema(schema(2))).source)
    many = len(generate_avro_module(parse_schema(schema(12))).source)
    # ten more fields of a 21-branch union: a few lines each
    assert (many - few) / 10 < 1500, (few, many)


def test_a_value_no_branch_takes_has_the_path_of_where_it_is(drawing):
    datum = dict(DRAWINGS[1], others=[{"r": 1.0}, {"side": "wide"}])
    with pytest.raises(DatumError, match="matches no branch") as caught:
        drawing.dump(datum)
    assert caught.value.path == ("others", 1)
    with pytest.raises((ValueError, TypeError)):
        fastavro_dump(DRAWING, datum)
    datum = dict(DRAWINGS[1], named={"a": {"r": 1.0}, "b": {"r": "round"}})
    with pytest.raises(DatumError, match="matches no branch") as caught:
        drawing.dump(datum)
    assert caught.value.path == ("named", "b")
    datum = dict(DRAWINGS[1], layer={"top": None, "value": object()})
    with pytest.raises(DatumError, match="matches no branch") as caught:
        drawing.dump(datum)
    assert caught.value.path == ("layer", "value")


def test_a_reader_schema_resolves_the_shared_unions_as_fastavro():
    reader = {
        "type": "record",
        "name": "Drawing",
        "namespace": "shared",
        "fields": [
            # the writer's long union, read as a union with one branch fewer and
            # a promoted field: a Label the reader has no branch for is an error
            {
                "name": "main",
                "type": [
                    "null",
                    _record("Circle", ("r", "double")),
                    _record("Square", ("side", "double"), ("filled", "boolean")),
                ],
            },
            {"name": "scalar", "type": SCALARS[:2] + SCALARS[3:]},
            {
                "name": "scalars",
                "type": {"type": "array", "items": SCALARS_BY_NAME[:2] + SCALARS_BY_NAME[3:]},
            },
        ],
    }
    pair = AvroCodec(reader, writer_schema=DRAWING, compile="eager")
    parsed_writer, parsed_reader = fastavro.parse_schema(DRAWING), fastavro.parse_schema(reader)
    # no bytes in the scalar unions: fastavro reads a written bytes branch as the
    # reader's string (the first branch it promotes to), Java as its bytes
    # (an exact match first), which this codec follows
    scalars = [True, 2**40, 1.25, "s", None, -1, "RED", "DARK"]
    datums = [
        DRAWINGS[0],
        dict(DRAWINGS[1], scalars=scalars),
        dict(DRAWINGS[2], main={"side": 1.0, "filled": True}),
    ]
    for datum in datums:
        data = fastavro_dump(DRAWING, datum)
        expected = fastavro.schemaless_reader(io.BytesIO(data), parsed_writer, parsed_reader)
        # "others", "named" and "layer" are skipped: the writer's shared unions' skippers
        assert pair.load(data) == expected
        with pytest.raises(DecodeError):
            pair.load(data[:-1])
