"""The fastavro drop-in reads schemas as fastavro 1.13 does; roastedavro's own
parser keeps the specification's rules.

Real fastavro is the oracle: the drop-in's parse_schema returns what
fastavro's returns, writes the same bytes, gives the same canonical forms
and fingerprints, and refuses what fastavro refuses with fastavro's
exception (which is roastedavro's SchemaError too). The schemas here are
ones fastavro takes and the specification does not (Java reflect names with
``$``, aliases such as ``user-v1``, field names such as ``timestamp-millis``,
a "nan" default, ...): roastedavro's strict parser still refuses each.
"""

from __future__ import annotations

import copy
import io
import json
import math

import fastavro
import fastavro.read
import fastavro.schema
import pytest

import roastedavro.fastavro as dropin
from roastedavro import AvroCodec
from roastedavro.avro import parse_schema
from roastedavro.errors import SchemaError
from roastedavro.fastavro._models import as_model

# (id, schema fastavro takes, a datum fastavro writes)
LENIENT = [
    (
        "reflect-dollar-namespace",
        {
            "type": "record",
            "name": "Text",
            "namespace": "org.apache.avro.mapred.TestReflectJob$",
            "fields": [
                {"name": "text", "type": "string"},
                {
                    "name": "inner",
                    "type": {"type": "record", "name": "Numbers$1", "fields": [{"name": "n", "type": "int"}]},
                },
            ],
        },
        {"text": "a", "inner": {"n": 3}},
    ),
    (
        "alias-with-dash-and-space",
        {
            "type": "record",
            "name": "User",
            "namespace": "User.v1",
            "aliases": ["user-v1", "super user"],
            "fields": [
                {"name": "name", "type": "string"},
                {"name": "country", "type": ["string", "null"], "default": "Argentina"},
            ],
        },
        {"name": "x"},
    ),
    ("aliases-as-a-string", {"type": "enum", "name": "E_new", "aliases": "E", "symbols": ["A", "B"]}, "B"),
    (
        "field-names-fastavro-takes",
        {
            "type": "record",
            "name": "namespace.name",
            "fields": [
                {"name": "timestamp-millis", "type": {"type": "long", "logicalType": "timestamp-millis"}},
                {"name": "37a6259cc0c1dae299a7866489dff0bd", "type": "int"},
                {"name": "ünïcode name", "type": "string"},
            ],
        },
        {"timestamp-millis": 5, "37a6259cc0c1dae299a7866489dff0bd": 1, "ünïcode name": "u"},
    ),
    (
        "nan-default",
        {
            "type": "record",
            "name": "N",
            "fields": [
                {"name": "f", "type": "float", "default": "nan"},
                {"name": "d", "type": "double", "default": "-Infinity"},
            ],
        },
        {},
    ),
    (
        "two-fields-of-one-name",
        {
            "type": "record",
            "name": "Twice",
            "fields": [{"name": "b", "type": "int"}, {"name": "b", "type": "int"}],
        },
        {"b": 3},
    ),
    ("record-without-fields", {"type": "record", "name": "Empty"}, {}),
    ("union-with-a-type-twice", ["int", "string", "int"], 5),
    (
        "named-like-a-primitive",
        {"type": "record", "name": "string", "fields": [{"name": "a", "type": "int"}]},
        {"a": 1},
    ),
    (
        "order-of-another-value",
        {"type": "record", "name": "O", "fields": [{"name": "a", "type": "int", "order": "up"}]},
        {"a": 1},
    ),
]
LENIENT_IDS = [case[0] for case in LENIENT]

# a nested type put in the null namespace by "namespace": "", used again later
NULL_NAMESPACE = {
    "type": "record",
    "name": "Outer",
    "fields": [
        {
            "name": "mid",
            "type": {
                "type": "record",
                "name": "Mid",
                "namespace": "x",
                "fields": [
                    {
                        "name": "inner",
                        "type": {
                            "type": "record",
                            "name": "Inner",
                            "namespace": "",
                            "fields": [{"name": "v", "type": "int"}],
                        },
                    }
                ],
            },
        },
        {"name": "again", "type": "Inner"},
    ],
}


def fastavro_bytes(schema, datum) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(copy.deepcopy(schema)), datum)
    return out.getvalue()


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    return a == b


@pytest.mark.parametrize("schema,datum", [case[1:] for case in LENIENT], ids=LENIENT_IDS)
def test_the_dropin_takes_what_fastavro_takes(schema, datum):
    parsed = dropin.parse_schema(copy.deepcopy(schema))
    assert parsed == fastavro.parse_schema(copy.deepcopy(schema))
    expected = fastavro_bytes(schema, datum)
    for given in (copy.deepcopy(schema), parsed):
        out = io.BytesIO()
        dropin.schemaless_writer(out, given, datum)
        assert out.getvalue() == expected
        if not expected:
            continue  # a datum of no bytes: the stream's end, to the drop-in's reader
        read = dropin.schemaless_reader(io.BytesIO(expected), given)
        assert same(read, fastavro.schemaless_reader(io.BytesIO(expected), parsed))


@pytest.mark.parametrize(
    "schema", [case[1] for case in LENIENT] + [NULL_NAMESPACE], ids=LENIENT_IDS + ["null-namespace"]
)
def test_canonical_forms_and_fingerprints_are_fastavros(schema):
    canonical = fastavro.schema.to_parsing_canonical_form(copy.deepcopy(schema))
    parsed = fastavro.parse_schema(copy.deepcopy(schema))
    for given in (copy.deepcopy(schema), parsed):
        assert dropin.schema.to_parsing_canonical_form(given) == canonical
    for algorithm in ("CRC-64-AVRO", "MD5", "SHA-256", "sha1"):
        assert dropin.schema.fingerprint(canonical, algorithm) == fastavro.schema.fingerprint(
            canonical, algorithm
        )


@pytest.mark.parametrize("schema", [case[1] for case in LENIENT], ids=LENIENT_IDS)
def test_roastedavros_own_parser_keeps_the_specifications_rules(schema):
    with pytest.raises(SchemaError):
        parse_schema(copy.deepcopy(schema))
    # the dialect is an explicit option
    assert parse_schema(copy.deepcopy(schema), dialect="fastavro").dialect == "fastavro"


def test_a_nested_type_in_the_null_namespace_stays_there():
    # fastavro's parsed form drops "namespace"; its names are full names
    parsed = fastavro.parse_schema(copy.deepcopy(NULL_NAMESPACE))
    for given in (copy.deepcopy(NULL_NAMESPACE), parsed):
        model = as_model(given)
        assert set(model.named) == {"Outer", "x.Mid", "Inner"}
    # as the specification (and Java) has it
    assert set(parse_schema(copy.deepcopy(NULL_NAMESPACE)).named) == {"Outer", "x.Mid", "Inner"}
    datum = {"mid": {"inner": {"v": 1}}, "again": {"v": 2}}
    out = io.BytesIO()
    dropin.schemaless_writer(out, parsed, datum)
    assert out.getvalue() == fastavro_bytes(NULL_NAMESPACE, datum)


# schemas fastavro refuses
REFUSED = [
    {"type": "record", "fields": [{"name": "field", "type": "string"}]},
    {"type": "unknown"},
    {"type": "record", "name": "R", "fields": [{"name": "left", "type": "Thinger"}]},
    {"type": "record", "name": "R", "fields": [{"name": "f", "type": "string", "aliases": "foo"}]},
    {"type": "record", "name": "R", "fields": "notalist"},
    {"type": "record", "name": "R", "fields": [{"name": "f", "type": "string", "default": 0}]},
    {"type": "record", "name": "R", "fields": [{"name": "u", "type": ["string", "boolean"], "default": 2}]},
    {"type": "enum", "name": "E", "symbols": ["0nope"]},
    {"type": "enum", "name": "E", "symbols": ["A", "A"]},
    {"type": "enum", "name": "E", "symbols": ["A"], "default": "B"},
    {
        "type": "record",
        "name": "R",
        "fields": [
            {
                "name": "a",
                "type": {
                    "type": "record",
                    "name": "I",
                    "fields": [{"name": "x", "type": {"type": "array", "items": "string"}, "default": 10}],
                },
            }
        ],
    },
    # fastavro's parser fails with a KeyError, a TypeError: those, and SchemaError
    {"type": "fixed", "name": "F"},
    {"type": {"type": "array", "items": "int"}},
]


def fastavros_error(schema) -> Exception:
    try:
        fastavro.parse_schema(copy.deepcopy(schema))
    except Exception as error:  # noqa: BLE001 - the oracle's, whatever it is
        return error
    raise AssertionError("fastavro takes it")


@pytest.mark.parametrize("schema", REFUSED)
def test_the_dropin_refuses_what_fastavro_refuses_with_its_exception(schema):
    expected = fastavros_error(schema)
    calls = [
        lambda: dropin.parse_schema(copy.deepcopy(schema)),
        lambda: dropin.schemaless_writer(io.BytesIO(), copy.deepcopy(schema), {}),
        lambda: dropin.schema.to_parsing_canonical_form(copy.deepcopy(schema)),
    ]
    for call in calls:
        with pytest.raises(type(expected)) as caught:
            call()
        # roastedavro's error too
        assert isinstance(caught.value, SchemaError)
        if isinstance(expected, fastavro.schema.UnknownType):
            assert caught.value.name == expected.name
        else:
            assert str(expected) in str(caught.value)


def test_an_unknown_name_says_where_it_is_used():
    schema = {"type": "record", "name": "R", "fields": [{"name": "left", "type": "Thinger"}]}
    with pytest.raises(fastavro.schema.UnknownType, match="R.left.*'Thinger' is not a defined"):
        dropin.parse_schema(schema)


def test_named_schemas_hold_the_names_other_schemas_define():
    location = {"name": "Location", "type": "record", "fields": [{"name": "city", "type": "long"}]}
    weather = {"name": "Weather", "type": "record", "fields": [{"name": "of", "type": "Location"}]}
    named: dict = {}
    dropin.parse_schema(copy.deepcopy(location), named)
    parsed = dropin.parse_schema(copy.deepcopy(weather), named)
    theirs: dict = {}
    fastavro.parse_schema(copy.deepcopy(location), theirs)
    assert parsed == fastavro.parse_schema(copy.deepcopy(weather), theirs)
    out = io.BytesIO()
    dropin.schemaless_writer(out, parsed, {"of": {"city": 7}})
    assert out.getvalue() == fastavro_bytes(location, {"city": 7})
    assert dropin.schemaless_reader(io.BytesIO(out.getvalue()), parsed) == {"of": {"city": 7}}
    with pytest.raises(fastavro.schema.UnknownType):
        dropin.parse_schema(copy.deepcopy(weather))
    # a union must define a name before it uses it
    with pytest.raises(fastavro.schema.UnknownType):
        dropin.parse_schema([copy.deepcopy(weather), copy.deepcopy(location)])
    assert dropin.parse_schema([copy.deepcopy(location), copy.deepcopy(weather)]) == fastavro.parse_schema(
        [copy.deepcopy(location), copy.deepcopy(weather)]
    )


def test_a_default_fastavro_takes_but_cannot_write_is_no_default():
    # parsed as fastavro lets it (_ignore_default_error), the int's null
    # default cannot be written: a record without the field is an error
    schema = {
        "type": "record",
        "name": "Test",
        "namespace": "test",
        "fields": [{"name": "field1", "type": "int", "default": None}],
    }
    parsed = dropin.parse_schema(copy.deepcopy(schema), _ignore_default_error=True)
    out = io.BytesIO()
    dropin.schemaless_writer(out, parsed, {"field1": 5})
    assert out.getvalue() == b"\x0a"
    with pytest.raises(ValueError):
        dropin.schemaless_writer(io.BytesIO(), parsed, {})
    # the schema's JSON keeps it
    assert as_model(parsed).to_dict()["fields"][0]["default"] is None
    reader = {
        "type": "record",
        "name": "Test",
        "namespace": "test",
        "fields": [{"name": "field1", "type": "int", "default": 0}],
    }
    assert dropin.schemaless_reader(io.BytesIO(b"\x0a"), parsed, reader) == {"field1": 5}


def record(name, *fields, **extra):
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def test_record_names_must_match_as_fastavro_has_it_while_java_reads_across():
    writer = record("A", {"name": "F", "type": "int"})
    reader = record("B", {"name": "F", "type": "int"})
    data = fastavro_bytes(writer, {"F": 1})
    with pytest.raises(fastavro.read.SchemaResolutionError):
        fastavro.schemaless_reader(io.BytesIO(data), writer, reader)
    with pytest.raises(fastavro.read.SchemaResolutionError, match="names differ"):
        dropin.schemaless_reader(io.BytesIO(data), copy.deepcopy(writer), copy.deepcopy(reader))
    # roastedavro's own resolution is Java's, which does not compare records'
    # names: one process holds both codecs of the pair
    assert AvroCodec(reader, writer_schema=writer).load(data) == {"F": 1}
    with pytest.raises(fastavro.read.SchemaResolutionError):
        dropin.schemaless_reader(io.BytesIO(data), copy.deepcopy(writer), copy.deepcopy(reader))


@pytest.mark.parametrize(
    "writer,reader,datum",
    [
        (
            record("Old", {"name": "a", "type": "int"}),
            record("New", {"name": "a", "type": "int"}, aliases="Old"),
            {"a": 1},
        ),
        (
            {"type": "fixed", "name": "F", "size": 2},
            {"type": "fixed", "name": "G", "size": 2, "aliases": "F"},
            b"ab",
        ),
        (
            {"type": "enum", "name": "a.E", "symbols": ["X"]},
            {"type": "enum", "name": "b.G", "symbols": ["X"], "aliases": ["E"]},
            "X",
        ),
        (
            record("R", {"name": "inner", "type": record("my_record", {"name": "x", "type": "int"})}),
            record(
                "R",
                {
                    "name": "inner",
                    "type": ["null", record("other", {"name": "x", "type": "int"}, aliases=["my_record"])],
                },
            ),
            {"inner": {"x": 4}},
        ),
    ],
    ids=["record-alias-string", "fixed-alias-string", "enum-alias-simple-name", "union-by-alias"],
)
def test_aliases_resolve_as_fastavros(writer, reader, datum):
    data = fastavro_bytes(writer, datum)
    expected = fastavro.schemaless_reader(
        io.BytesIO(data),
        fastavro.parse_schema(copy.deepcopy(writer)),
        fastavro.parse_schema(copy.deepcopy(reader)),
    )
    assert (
        dropin.schemaless_reader(io.BytesIO(data), copy.deepcopy(writer), copy.deepcopy(reader)) == expected
    )


def test_a_missing_field_without_default_says_it_in_fastavros_words():
    writer = record("evtest", {"name": "a", "type": "int"}, namespace="example.avro2")
    reader = record(
        "evtest", {"name": "a", "type": "int"}, {"name": "c", "type": "int"}, namespace="example.avro2"
    )
    with pytest.raises(
        fastavro.read.SchemaResolutionError, match="No default value for field c in example.avro2.evtest"
    ):
        dropin.schemaless_reader(io.BytesIO(b"\x02"), writer, reader)


def test_a_union_in_a_union_is_refused_clearly():
    # fastavro takes one; the specification, Java and roastedavro's codecs do not
    schema = ["null", ["int", "string"]]
    fastavro.parse_schema(copy.deepcopy(schema))
    with pytest.raises(fastavro.schema.SchemaParseException, match="cannot serve it.*union"):
        dropin.parse_schema(copy.deepcopy(schema))


def test_names_that_need_escapes_give_json_canonical_forms():
    # fastavro writes such names unescaped (its form is not JSON then); the
    # drop-in's is the specification's (Java's), JSON with the names escaped
    schema = {"type": "record", "name": 'R"q', "fields": [{"name": "a\\b\n", "type": "int"}]}
    canonical = dropin.schema.to_parsing_canonical_form(copy.deepcopy(schema))
    assert canonical == '{"name":"R\\"q","type":"record","fields":[{"name":"a\\\\b\\n","type":"int"}]}'
    assert json.loads(canonical)["fields"][0]["name"] == "a\\b\n"
