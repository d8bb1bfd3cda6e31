"""Invalid schemas: each is a SchemaError whose message says where and which rule.

ERROR_CASES gives, for each invalid schema, the ``path`` the error must
name (exactly) and words its message must contain (case-insensitive): the
rule broken and the offending value. tests/schema_cases.py (the table shared
with the Java oracle tests) gives more schemas with the verdict they must
get.
"""

from __future__ import annotations

import json

import pytest

from roastedavro.avro.parse import parse_schema
from roastedavro.errors import SchemaError
from schema_cases import CASES


def record(fields, name="R", **attributes):
    return {"type": "record", "name": name, "fields": fields, **attributes}


def field(name, type_, **attributes):
    return {"name": name, "type": type_, **attributes}


def fixed(name="X", size=2, **attributes):
    return {"type": "fixed", "name": name, "size": size, **attributes}


def enum(symbols, name="E", **attributes):
    return {"type": "enum", "name": name, "symbols": symbols, **attributes}


ARRAY_OF_INT = {"type": "array", "items": "int"}

# (id, schema, path, words of the message)
ERROR_CASES = [
    # -- the forms of a schema ------------------------------------------------------------
    ("number as schema", 5, "schema", ["a type name, a JSON object or a list", "5"]),
    ("null as schema", None, "schema", ["a type name, a JSON object or a list", "null"]),
    ("no type", {"name": "R"}, "schema", ['no "type"']),
    ("type is a number", {"type": 5}, "schema", ['"type" must be a type name', "5"]),
    ("type is an object", {"type": {"type": "int"}}, "schema", ['"type" must be a type name']),
    ("unknown type name", {"type": "integer"}, "schema", ["'integer'", "not a defined type"]),
    ("unknown bare name", "Foo", "schema", ["'Foo'", "not a defined type"]),
    ("record without an object", "record", "schema", ["'record'", "needs a JSON object"]),
    ("empty text", "", "schema", ["empty"]),
    ("not JSON", '{"type": ', "", ["not valid JSON"]),
    ("array without items", {"type": "array"}, "schema", ["an array needs", "items"]),
    ("map without values", {"type": "map"}, "schema", ["a map needs", "values"]),
    # -- names ------------------------------------------------------------------------------
    ("name starting with a digit", record([], name="1abc"), "1abc", ["'1abc'", "not a valid Avro name"]),
    ("name with a dash", record([], name="my-rec"), "my-rec", ["'my-rec'", "not a valid Avro name"]),
    ("empty name", record([], name=""), "schema", ["''", "not a valid Avro name"]),
    ("full name with an empty part", record([], name="a..b"), "a..b", ["'a..b'", "not a valid"]),
    ("full name ending with a dot", record([], name="a.b."), "a.b.", ["'a.b.'", "not a valid"]),
    ("namespace with a dash", record([], namespace="a-b"), "a-b.R", ["namespace", "'a-b'", "not a valid"]),
    ("namespace is a number", record([], namespace=5), "R", ["namespace", "5", "not a string"]),
    ("name is a number", record([], name=5), "schema", ["name", "5", "not a string"]),
    ("missing name", {"type": "record", "fields": []}, "schema", ["record", 'needs a "name"']),
    ("missing enum name", {"type": "enum", "symbols": ["A"]}, "schema", ["enum", 'needs a "name"']),
    ("missing fixed name", {"type": "fixed", "size": 1}, "schema", ["fixed", 'needs a "name"']),
    ("record named int", record([], name="int"), "int", ["'int'", "primitive type name"]),
    (
        "primitive name in a namespace",
        record([], name="a.string"),
        "a.string",
        ["'string'", "primitive type name"],
    ),
    ("type alias starting with a digit", record([], aliases=["1x"]), "R", ["alias", "'1x'", "not a valid"]),
    ("aliases is a string", record([], aliases="x"), "R", ['"aliases" must be a list', '"x"']),
    ("alias is a number", fixed(aliases=[1]), "X", ['"aliases" must be a list']),
    # -- definitions and references -----------------------------------------------------------
    (
        "a name defined twice",
        record([field("a", fixed()), field("b", enum(["A"], name="X"))]),
        "R.b",
        ["'X'", "already defined"],
    ),
    ("a record defines itself again", record([field("a", record([]))]), "R.a", ["'R'", "already defined"]),
    ("unknown reference", record([field("a", "Nope")]), "R.a", ["'Nope'", "not a defined type"]),
    (
        "unknown full reference",
        record([field("a", "x.Nope")], namespace="q"),
        "q.R.a",
        ["'x.Nope'", "not a defined type"],
    ),
    (
        "reference before the definition",
        record([field("a", "Later"), field("b", fixed("Later"))]),
        "R.a",
        ["'Later'", "defined before they are used"],
    ),
    (
        "reference to another namespace by short name",
        record([field("f", fixed(namespace="m")), field("g", "X")], namespace="n"),
        "n.R.g",
        ["'X'", "not a defined type"],
    ),
    ("unknown map values", record([field("m", {"type": "map", "values": "Nope"})]), "R.m.values", ["'Nope'"]),
    (
        "unknown array items in a union",
        record([field("u", ["null", {"type": "array", "items": "Nope"}])]),
        "R.u[1].items",
        ["'Nope'"],
    ),
    # -- records and fields ---------------------------------------------------------------
    ("missing fields", {"type": "record", "name": "R"}, "R", ["'R'", 'no "fields"']),
    (
        "fields is an object",
        {"type": "record", "name": "R", "fields": {"a": "int"}},
        "R",
        ['"fields" must be a list'],
    ),
    ("field is not an object", record(["int"]), "R", ["field 0", "JSON object", '"int"']),
    ("field without a name", record([{"type": "int"}]), "R", ["field 0", '"name"']),
    ("field name is a number", record([{"name": 3, "type": "int"}]), "R", ["field 0", '"name"', "string"]),
    ("field name with a dash", record([field("a-b", "int")]), "R.a-b", ["'a-b'", "not a valid field name"]),
    ("field without a type", record([{"name": "a"}]), "R.a", ['no "type"']),
    ("two fields with one name", record([field("a", "int"), field("a", "long")]), "R", ["two fields", "'a'"]),
    ("unknown order", record([field("a", "int", order="up")]), "R.a", ['"order"', "ascending", '"up"']),
    ("order is a number", record([field("a", "int", order=1)]), "R.a", ['"order"', "ascending"]),
    (
        "a field deep inside",
        record([field("a", {"type": "array", "items": record([field("b", "int", default="x")], name="In")})]),
        "R.a.items.b",
        ["default", '"x"', "int"],
    ),
    # -- enums and fixed ----------------------------------------------------------------------
    ("enum symbol starting with a digit", enum(["A", "1B"]), "E", ["symbol", "'1B'", "not a valid"]),
    ("enum symbol is a number", enum([1]), "E", ["symbol", "1", "not a valid"]),
    ("enum symbol twice", enum(["A", "A"]), "E", ["symbol", "'A'", "twice"]),
    ("enum symbols is a string", enum("A"), "E", ['"symbols"', "list"]),
    ("enum without symbols", {"type": "enum", "name": "E"}, "E", ['"symbols"']),
    (
        "enum default not a symbol",
        enum(["A"], default="B"),
        "E",
        ["default", '"B"', "not one of its symbols"],
    ),
    ("enum default is a list", enum(["A"], default=["A"]), "E", ["default", "not one of its symbols"]),
    ("enum default is an object", enum(["A"], default={"A": 1}), "E", ["default", "not one of its symbols"]),
    ("negative fixed size", fixed(size=-1), "X", ['"size"', "non-negative integer", "-1"]),
    ("fixed size is a float", fixed(size=1.5), "X", ['"size"', "non-negative integer", "1.5"]),
    ("fixed size is a string", fixed(size="4"), "X", ['"size"', "non-negative integer", '"4"']),
    ("fixed size is a boolean", fixed(size=True), "X", ['"size"', "non-negative integer", "true"]),
    ("fixed without a size", {"type": "fixed", "name": "X"}, "X", ['"size"']),
    ("fixed size above 2**31 - 1", fixed(size=2**31), "X", ["2147483648", "2**31 - 1"]),
    # -- unions ----------------------------------------------------------------------------
    (
        "union of two arrays",
        ["null", ARRAY_OF_INT, {"type": "array", "items": "long"}],
        "schema",
        ["'array' twice", "branches 1 and 2"],
    ),
    (
        "union of two maps",
        record([field("u", [{"type": "map", "values": "int"}, {"type": "map", "values": "long"}])]),
        "R.u",
        ["'map' twice", "branches 0 and 1"],
    ),
    ("union with a primitive twice", ["int", "int"], "schema", ["'int' twice"]),
    (
        "union with a primitive and its logical type",
        ["int", {"type": "int", "logicalType": "date"}],
        "schema",
        ["'int' twice"],
    ),
    ("union with a name twice", [fixed(), "X"], "schema", ["'X' twice"]),
    (
        "union in a union",
        record([field("u", ["null", ["int", "string"]])]),
        "R.u[1]",
        ["union", "cannot hold another union"],
    ),
    # -- defaults --------------------------------------------------------------------------
    (
        "int default is a string",
        record([field("a", "int", default="x")]),
        "R.a",
        ["default", '"x"', "int", "integer"],
    ),
    ("int default with a fraction", record([field("a", "int", default=1.5)]), "R.a", ["default", "1.5"]),
    (
        "int default above 2**31 - 1",
        record([field("a", "int", default=2**31)]),
        "R.a",
        ["2147483648", "2147483647"],
    ),
    (
        "long default above 2**63 - 1",
        record([field("a", "long", default=2**63)]),
        "R.a",
        ["a long default", "9223372036854775808"],
    ),
    (
        "boolean default as a string",
        record([field("a", "boolean", default="true")]),
        "R.a",
        ["default", '"true"', "true or false"],
    ),
    ("null default that is not null", record([field("a", "null", default=0)]), "R.a", ["default", "null"]),
    (
        "string default is a number",
        record([field("a", "string", default=5)]),
        "R.a",
        ["default", "5", "string"],
    ),
    (
        "float default is a string",
        record([field("a", "float", default="NaN")]),
        "R.a",
        ["default", '"NaN"', "number"],
    ),
    (
        "double default is a boolean",
        record([field("a", "double", default=True)]),
        "R.a",
        ["default", "true", "number"],
    ),
    (
        "bytes default beyond code point 255",
        record([field("a", "bytes", default="\u0100")]),
        "R.a",
        ["default", "0-255"],
    ),
    (
        "fixed default of the wrong size",
        record([field("a", fixed(size=2), default="a")]),
        "R.a",
        ["default", "2 bytes"],
    ),
    (
        "enum default that is no symbol",
        record([field("a", enum(["A"]), default="B")]),
        "R.a",
        ["default", '"B"', "symbols"],
    ),
    (
        "array default with a bad item",
        record([field("a", ARRAY_OF_INT, default=["x"])]),
        "R.a",
        ["default", "item", "int"],
    ),
    (
        "array default is an object",
        record([field("a", ARRAY_OF_INT, default={})]),
        "R.a",
        ["default", "list"],
    ),
    (
        "map default with a bad value",
        record([field("a", {"type": "map", "values": "int"}, default={"k": "x"})]),
        "R.a",
        ["default", "'k'", "int"],
    ),
    (
        "record default missing a field",
        record([field("a", record([field("x", "int")], name="In"), default={})]),
        "R.a",
        ["default", "'x'", "no value and no default"],
    ),
    (
        "union default matching no branch",
        record([field("a", ["null", "int"], default="x")]),
        "R.a",
        ["default", '"x"', "no branch"],
    ),
]


@pytest.mark.parametrize(
    "schema, path, words", [case[1:] for case in ERROR_CASES], ids=[case[0] for case in ERROR_CASES]
)
def test_invalid_schema_names_where_and_the_rule(schema, path, words):
    with pytest.raises(SchemaError) as info:
        parse_schema(schema)
    error = info.value
    assert error.path == path, str(error)
    message = error.reason.lower()
    missing = [word for word in words if word.lower() not in message]
    assert not missing, f"{str(error)!r} lacks {missing}"
    assert str(error) == (f"{path}: {error.reason}" if path else error.reason)


@pytest.mark.parametrize("schema", [case[1] for case in ERROR_CASES], ids=[case[0] for case in ERROR_CASES])
def test_invalid_schema_as_json_text_is_the_same_error(schema):
    if not isinstance(schema, (dict, list)):
        pytest.skip("text that is not an object or a list is a bare type name")
    with pytest.raises(SchemaError) as from_value:
        parse_schema(schema)
    with pytest.raises(SchemaError) as from_text:
        parse_schema(json.dumps(schema))
    assert str(from_text.value) == str(from_value.value)


def _source(case):
    return case.text if case.text is not None else case.schema


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_verdicts_of_the_shared_table(case):
    """tests/schema_cases.py: accepted or refused as the table says (its ``valid``)."""
    if case.valid:
        schema = parse_schema(_source(case))
        assert parse_schema(schema.to_json()) == schema
    else:
        with pytest.raises(SchemaError) as info:
            parse_schema(_source(case))
        assert info.value.reason, case.id


def test_schemas_nested_too_deep_are_schema_errors():
    from roastedavro.avro.parse import MAX_SCHEMA_DEPTH

    def chain(levels):
        avro = "long"
        for number in range(levels):
            avro = {"type": "record", "name": f"R{number}", "fields": [{"name": "x", "type": avro}]}
        return avro

    parse_schema(chain(MAX_SCHEMA_DEPTH // 2 - 1))  # a record and its field's type: two levels
    for deep in (chain(MAX_SCHEMA_DEPTH), chain(5000)):
        with pytest.raises(SchemaError, match="nested more than"):
            parse_schema(deep)
    text = '{"type": "array", "items": ' * 3000 + '"int"' + "}" * 3000
    with pytest.raises(SchemaError, match="nested more than"):
        parse_schema(text)
