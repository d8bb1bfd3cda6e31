"""fastavro's naming options (return_record_name and its override,
return_named_type and its override) read by tier 0, against fastavro 1.13's
own reader: the same values, (name, value) pairs, names, for writer schemas
alone and with a reader schema; the drop-in's schemaless_reader and the
Kafka deserializer use these readers. Hostile bytes: DecodeError with the
offset, as tier 0 gives it."""

from __future__ import annotations

import io
import json
import itertools
import sys
from pathlib import Path

import fastavro
import pytest
from hypothesis import HealthCheck, Phase, assume, given, note, settings, strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from avro_strategies import assert_same, avro_schemas, datums  # noqa: E402
from evolution import evolved_pairs  # noqa: E402
from test_resolution_properties import has_values  # noqa: E402

import roastedavro.fastavro as dropin  # noqa: E402
from roastedavro._tier0 import Interpreter, ResolvingInterpreter, union_names  # noqa: E402
from roastedavro.avro import parse_schema  # noqa: E402
from roastedavro.errors import DecodeError  # noqa: E402

OPTIONS = (
    "return_record_name",
    "return_record_name_override",
    "return_named_type",
    "return_named_type_override",
)
#: every combination of the four options, the empty one included
COMBINATIONS = list(itertools.product((False, True), repeat=4))


def fastavro_bytes(schema, datum) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), datum)
    return out.getvalue()


def theirs(data, writer, reader, naming):
    return fastavro.schemaless_reader(
        io.BytesIO(data),
        fastavro.parse_schema(writer),
        None if reader is None else fastavro.parse_schema(reader),
        **dict(zip(OPTIONS, naming)),
    )


def in_key_order(value):
    """The value with every dict's keys sorted."""
    if isinstance(value, dict):
        return {key: in_key_order(value[key]) for key in sorted(value)}
    if isinstance(value, (list, tuple)):
        return type(value)(in_key_order(item) for item in value)
    return value


# a union of each kind fastavro's rules tell apart: a record defined in it, a
# reference to a type defined before (an enum's: fastavro counts it as a
# record), an error, a fixed, several records, a single named type
SCHEMA = {
    "type": "record",
    "name": "Root",
    "namespace": "n",
    "fields": [
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
        {"name": "ref", "type": ["null", "E"]},
        {
            "name": "err",
            "type": [
                "null",
                {"type": "error", "name": "Oops", "fields": [{"name": "why", "type": "string"}]},
            ],
        },
        {
            "name": "one",
            "type": ["null", {"type": "record", "name": "One", "fields": [{"name": "x", "type": "int"}]}],
        },
        {
            "name": "two",
            "type": [
                {
                    "type": "record",
                    "name": "Two",
                    "namespace": "m",
                    "fields": [{"name": "y", "type": ["null", "long"]}],
                },
                "string",
                "n.One",
                {"type": "fixed", "name": "F", "size": 2},
            ],
        },
        {"name": "items", "type": {"type": "array", "items": ["null", "n.One", "m.Two"]}},
        {"name": "by", "type": {"type": "map", "values": ["n.F", "E", "int"]}},
    ],
}
MODEL = parse_schema(SCHEMA)
DATA = [
    {
        "e": "A",
        "ref": "B",
        "err": {"why": "w"},
        "one": {"x": 1},
        "two": {"y": 5},
        "items": [None, {"x": 2}, {"y": None}],
        "by": {"a": b"ab", "b": "A", "c": 3},
    },
    {"e": "B", "ref": None, "err": None, "one": None, "two": "text", "items": [], "by": {}},
    {
        "e": "A",
        "ref": "A",
        "err": None,
        "one": {"x": -1},
        "two": ("n.One", {"x": 7}),
        "items": [{"x": 1}],
        "by": {"f": b"zz"},
    },
    {"e": "A", "ref": None, "err": None, "one": None, "two": b"qq", "items": [], "by": {}},
]
INTERPRETERS = {naming: Interpreter(MODEL, None, naming) for naming in COMBINATIONS}


@pytest.mark.parametrize("naming", COMBINATIONS, ids=lambda n: "".join("01"[o] for o in n))
def test_each_option_reads_as_fastavro_reads(naming):
    for datum in DATA:
        data = fastavro_bytes(SCHEMA, datum)
        expected = theirs(data, SCHEMA, None, naming)
        assert_same(INTERPRETERS[naming].load(data), expected)
        # the drop-in, with the schema as fastavro parsed it and as given
        for schema in (fastavro.parse_schema(SCHEMA), SCHEMA):
            assert_same(
                dropin.schemaless_reader(io.BytesIO(data), schema, **dict(zip(OPTIONS, naming))), expected
            )


def test_the_rules_name_the_branches_fastavro_names():
    union = MODEL.named["n.Root"].fields[4].type  # Two, string, One (a reference), F
    assert union_names(union, MODEL, (True, False, False, False)) == ("m.Two", None, "n.One", None)
    assert union_names(union, MODEL, (False, False, True, False)) == ("m.Two", None, "n.One", "n.F")
    ref = MODEL.named["n.Root"].fields[1].type  # null, E (a reference: a "record")
    assert union_names(ref, MODEL, (True, False, False, False)) == (None, "n.E")
    assert union_names(ref, MODEL, (True, True, False, False)) is None
    error = MODEL.named["n.Root"].fields[2].type  # an error: named types only
    assert union_names(error, MODEL, (True, False, False, False)) is None
    assert union_names(error, MODEL, (False, False, True, True)) == (None, "n.Oops")


def test_without_options_the_default_program_reads():
    data = fastavro_bytes(SCHEMA, DATA[0])
    assert_same(Interpreter(MODEL, None, (False,) * 4).load(data), Interpreter(MODEL).load(data))
    with pytest.raises(ValueError, match="four options"):
        Interpreter(MODEL, None, (True,))


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
@given(st.data())
def test_random_schemas_and_data_read_as_fastavro_reads(monkeypatch, data):
    # the drop-in's plain reads here are tier 0's too: a compile per random
    # schema would test nothing this test is about
    monkeypatch.setenv("ROASTEDAVRO_COMPILE", "never")
    schema = data.draw(avro_schemas(max_depth=3))
    try:
        parsed = fastavro.parse_schema(schema)
    except Exception:
        assume(False)
    assume(has_values(schema))
    model = parse_schema(schema)
    datum = data.draw(datums(schema))
    encoded = fastavro_bytes(schema, datum)
    naming = data.draw(st.sampled_from(COMBINATIONS[1:]))
    try:
        expected = theirs(encoded, parsed, None, naming)
    except Exception:
        assume(False)  # what fastavro cannot read back is not a reference
    try:
        Interpreter(model).load(encoded)
    except DecodeError:
        return  # nested past max_depth (checked below on the drop-in)
    assert_same(Interpreter(model, None, naming).load(encoded), expected)
    try:
        dropin.schemaless_reader(io.BytesIO(encoded), parsed)
    except DecodeError:
        # nested past max_depth: refused with the options too
        with pytest.raises(DecodeError):
            dropin.schemaless_reader(io.BytesIO(encoded), parsed, **dict(zip(OPTIONS, naming)))
        return
    except (RecursionError, EOFError):
        # no bytes: the end of a stream to the drop-in, with options or not; a
        # record default that includes itself without end: the drop-in's
        # schema model cannot encode it, with options or not
        return
    assert_same(dropin.schemaless_reader(io.BytesIO(encoded), parsed, **dict(zip(OPTIONS, naming))), expected)


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
@given(st.data())
def test_random_evolved_pairs_read_as_fastavro_reads(data):
    writer, reader = data.draw(evolved_pairs())
    assume(has_values(writer))
    note(f"writer {writer}\nreader {reader}")
    try:
        fastavro.parse_schema(writer), fastavro.parse_schema(reader)
    except Exception:
        assume(False)
    datum = data.draw(datums(writer))
    encoded = fastavro_bytes(writer, datum)
    naming = data.draw(st.sampled_from(COMBINATIONS[1:]))
    try:
        expected = theirs(encoded, writer, reader, naming)
        plain = theirs(encoded, writer, reader, (False,) * 4)
    except Exception:
        assume(False)  # fastavro's own failures (see docs/fastavro.md) are not a reference
    models = parse_schema(writer), parse_schema(reader)
    # where fastavro resolves otherwise than Java (field aliases, a reader
    # union's branch, defaults), the drop-in reads as Java: only where the
    # values agree are the names compared (logical types convert as
    # fastavro converts them, the writer's)
    try:
        assert_same(
            in_key_order(ResolvingInterpreter(*models, fastavro_values=True).load(encoded)),
            in_key_order(plain),
        )
    except AssertionError:
        assume(False)
    except DecodeError as error:
        # a reader's default that is no value of its logical type (a uuid
        # default that is not a UUID): fastavro returns the default's JSON as
        # it stands, roastedavro reads defaults as values of their type and
        # refuses this one (docs/fastavro.md)
        assert "not a valid UUID" in str(error) and '"uuid"' in json.dumps(reader), error
        assume(False)
    # (fastavro puts the reader's defaults after the writer's fields, as JSON
    # has them; Java, in the reader's order, as values of their types)
    assert_same(
        in_key_order(ResolvingInterpreter(*models, None, naming).load(encoded)), in_key_order(expected)
    )


def test_with_a_reader_union_the_names_are_the_readers():
    writer = {
        "type": "record",
        "name": "W",
        "fields": [
            {
                "name": "u",
                "type": [
                    "null",
                    {"type": "record", "name": "a.Old", "fields": [{"name": "x", "type": "int"}]},
                ],
            }
        ],
    }
    reader = {
        "type": "record",
        "name": "W",
        "fields": [
            {
                "name": "u",
                "type": [
                    "null",
                    {
                        "type": "record",
                        "name": "b.New",
                        "aliases": ["a.Old"],
                        "fields": [{"name": "x", "type": "long"}],
                    },
                ],
            }
        ],
    }
    data = fastavro_bytes(writer, {"u": {"x": 3}})
    naming = (True, False, False, False)
    expected = theirs(data, writer, reader, naming)
    assert expected == {"u": ("b.New", {"x": 3})}
    ours = ResolvingInterpreter(parse_schema(writer), parse_schema(reader), None, naming)
    assert_same(ours.load(data), expected)
    assert_same(dropin.schemaless_reader(io.BytesIO(data), writer, reader, return_record_name=True), expected)


def test_hostile_bytes_are_a_decode_error_with_the_offset():
    interpreter = INTERPRETERS[(True, False, True, False)]
    good = fastavro_bytes(SCHEMA, DATA[0])
    # a union index past the branches, a count of a billion items, bytes cut short
    bad_index = good[:2] + b"\x08" + good[3:]
    with pytest.raises(DecodeError) as caught:
        interpreter.load(bad_index)
    assert caught.value.offset == 2
    items = b"\x00\x00\x00\x00\x02\x02" + b"\x80\x80\x80\x80\x08"
    with pytest.raises(DecodeError):
        interpreter.load(items)
    for cut in range(len(good)):
        with pytest.raises(DecodeError):
            interpreter.load(good[:cut])


# -- container files: the drop-in's reader and block_reader take the options too --

FILE_SCHEMA = {
    "type": "record",
    "name": "Entry",
    "namespace": "files",
    "fields": [
        {"name": "note", "type": "string"},
        {
            "name": "u",
            "type": [
                "null",
                {"type": "record", "name": "A", "fields": [{"name": "s", "type": "string"}]},
                {"type": "record", "name": "B", "fields": [{"name": "n", "type": "long"}]},
                {"type": "enum", "name": "E", "symbols": ["X", "Y"]},
            ],
        },
        {"name": "tags", "type": {"type": "map", "values": "string"}},
    ],
}
FILE_RECORDS = [
    {"note": "plain", "u": None, "tags": {}},
    {"note": "qqqq", "u": {"s": "qqqq"}, "tags": {"qqqq": "v"}},
    {"note": "n", "u": {"n": 3}, "tags": {"k": "qqqq"}},
    {"note": "e", "u": "Y", "tags": {}},
] * 30


def options_file(damage_text: bool) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, FILE_SCHEMA, FILE_RECORDS, sync_interval=200)
    data = out.getvalue()
    # invalid UTF-8 in strings, a union's record's string and map keys and values
    return data.replace(b"qqqq", b"q\xffq\xc3") if damage_text else data


@pytest.mark.parametrize("damage_text", [False, True])
@pytest.mark.parametrize(
    "options",
    [
        {"return_record_name": True},
        {"return_record_name": True, "return_record_name_override": True},
        {"return_named_type": True},
        {"return_named_type": True, "return_named_type_override": True},
        {"handle_unicode_errors": "replace"},
        {"handle_unicode_errors": "ignore", "return_named_type": True},
    ],
    ids=repr,
)
def test_the_drop_ins_file_readers_take_fastavros_options(options, damage_text):
    data = options_file(damage_text)
    strict = options.get("handle_unicode_errors", "strict") == "strict"
    if damage_text and strict:
        with pytest.raises(Exception):
            list(fastavro.reader(io.BytesIO(data), **options))
        with pytest.raises(Exception, match="UTF-8"):
            list(dropin.reader(io.BytesIO(data), **options))
        return
    expected = list(fastavro.reader(io.BytesIO(data), **options))
    assert list(dropin.reader(io.BytesIO(data), **options)) == expected
    blocks = [list(block) for block in fastavro.block_reader(io.BytesIO(data), **options)]
    assert len(blocks) > 1
    assert [list(block) for block in dropin.block_reader(io.BytesIO(data), **options)] == blocks
    # with a reader schema: a field added with a default
    newer = {
        **FILE_SCHEMA,
        "fields": FILE_SCHEMA["fields"] + [{"name": "added", "type": "long", "default": 7}],
    }
    expected = list(fastavro.reader(io.BytesIO(data), newer, **options))
    assert list(dropin.reader(io.BytesIO(data), newer, **options)) == expected
