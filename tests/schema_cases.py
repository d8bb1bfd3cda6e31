"""Schemas as data, for the parser's tests and for comparisons with Java Avro 1.12.

CASES: schemas roastedavro must accept or refuse. ``valid`` is roastedavro's
verdict, which is the specification's; ``java`` is Java 1.12's
(``Schema.Parser`` with its defaults) where it differs from that, with
``why``. tests/test_java_oracle.py checks both verdicts against the running
Java library, so the table is a record of what Java does too. ``rule`` says in
a few words what is wrong with a refused schema, for tests of the messages.

CANONICAL_CORPUS: valid schemas, as JSON text, whose Parsing Canonical Form
and fingerprints are compared with Java's: the specification's examples, the
reference implementation's normalization vectors, fastavro's canonical-form
cases, and schemas with namespaces, nested and referenced named types,
aliases, docs, logical types, custom properties and escapes.

AVRO_NORMALIZATION_VECTORS: inputs with the canonical forms and CRC-64-AVRO
fingerprints published by the Avro project (share/test/data/schema-tests.txt),
an oracle that does not need Java.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any


@dataclasses.dataclass(frozen=True)
class SchemaCase:
    id: str
    #: the schema as a JSON value (None when ``text`` gives it)
    schema: Any = None
    #: the schema as JSON text, for what a JSON value cannot show
    text: str | None = None
    #: roastedavro's verdict: True when the schema must parse
    valid: bool = True
    #: Java 1.12's verdict where it differs from ``valid`` (None: the same)
    java: bool | None = None
    #: what is wrong with a refused schema
    rule: str = ""
    #: why roastedavro and Java differ on this schema
    why: str = ""

    @property
    def source(self) -> str:
        return self.text if self.text is not None else json.dumps(self.schema, ensure_ascii=False)

    @property
    def input(self) -> Any:
        """What to give parse_schema (and the Java oracle): JSON text, or the JSON value where a
        str would read as a bare type name rather than as JSON."""
        if self.text is not None:
            return self.text
        return json.dumps(self.schema) if isinstance(self.schema, str) else self.schema

    @property
    def java_accepts(self) -> bool:
        return self.valid if self.java is None else self.java


def ok(id: str, schema: Any = None, *, text: str | None = None, **known: Any) -> SchemaCase:
    return SchemaCase(id, schema, text, True, **known)


def bad(id: str, schema: Any = None, rule: str = "", *, text: str | None = None, **known: Any) -> SchemaCase:
    return SchemaCase(id, schema, text, False, rule=rule, **known)


def record(fields: list, name: str = "R", **attributes: Any) -> dict:
    return {"type": "record", "name": name, "fields": fields, **attributes}


def field(type_: Any, name: str = "f", **attributes: Any) -> dict:
    return {"name": name, "type": type_, **attributes}


def fixed(name: str = "X", size: int = 2, **attributes: Any) -> dict:
    return {"type": "fixed", "name": name, "size": size, **attributes}


def enum(symbols: list, name: str = "E", **attributes: Any) -> dict:
    return {"type": "enum", "name": name, "symbols": symbols, **attributes}


def decimal(type_: str = "bytes", **attributes: Any) -> dict:
    return {"type": type_, "logicalType": "decimal", **attributes}


# Java 1.12 accepts these; the specification does not
SPEC_JSON = "the specification's schemas are JSON"
SPEC_NAMES = (
    "the specification's names are [A-Za-z_][A-Za-z0-9_]*; Java's default validator takes "
    "any Unicode letter or digit"
)
SPEC_DEFAULTS = (
    "the specification's table of default values; Java only checks that the default is a JSON string"
)
SPEC_ONCE = "the specification: a schema may not contain multiple definitions of a fullname"

CASES: list[SchemaCase] = [
    # -- primitives and the forms of a schema ---------------------------------------------
    *[
        ok(f"primitive {name}", name)
        for name in ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
    ],
    *[ok(f"primitive object {name}", {"type": name}) for name in ("null", "int", "string")],
    ok("primitive with custom properties", {"type": "long", "connect.name": "x", "nested": {"a": [1, None]}}),
    ok("name on a primitive is a property", {"type": "int", "name": "X"}),
    bad("number as schema", 1, "a schema is a name, an object or a list"),
    bad("null as schema", None, "a schema is a name, an object or a list"),
    bad("boolean as schema", True, "a schema is a name, an object or a list"),
    bad("no type", {"name": "R"}, "no type"),
    bad("type is a number", {"type": 5}, "type must be a name"),
    bad("type is an object", {"type": {"type": "int"}}, "type must be a name"),
    bad("unknown type", {"type": "foo"}, "unknown type"),
    bad("type union as a name", {"type": "union"}, "unknown type"),
    bad("unknown name", "Foo", "unknown name"),
    bad("empty text", text="", rule="no schema"),
    bad("blank text", text="  \n", rule="no schema"),
    bad("not JSON", text='{"type":', rule="not JSON"),
    bad("single quotes", text="{'type': 'int'}", rule="not JSON"),
    bad("leading zero", text='{"type": "fixed", "name": "X", "size": 015}', rule="not JSON"),
    bad("content after the schema", text='"int" x', rule="not JSON"),
    bad("second JSON value after the schema", text='{"type": "int"} {}', rule="not JSON"),
    bad(
        "NaN literal",
        text='{"type": "record", "name": "R", "fields": [{"name": "f", "type": "double", "default": NaN}]}',
        rule="not JSON",
    ),
    bad("comment in JSON", text='/* a comment */ "int"', rule="not JSON", java=True, why=SPEC_JSON),
    ok("duplicate keys: the last one counts", text='{"type": "int", "type": "long"}'),
    ok(
        "escapes in names and docs",
        text='{"type": "record", "name": "\\u0041BC", "doc": "\\u0000\\"\\\\\\n\\ud83d\\ude00", '
        '"fields": [{"name": "\\u0078", "type": "int"}]}',
    ),
    # -- names and namespaces -------------------------------------------------------------
    ok("name with namespace", record([], namespace="a.b")),
    ok("full name beats namespace", record([], name="a.b.R", namespace="ignored.x")),
    ok("empty namespace", record([], namespace="")),
    ok("names that are Java keywords", record([field("int", "for")], name="class", namespace="public.int")),
    ok("names of complex types", record([field(enum(["A"], name="array"), "record")], name="record")),
    ok("error is a record", {"type": "error", "name": "E", "fields": [field("string", "message")]}),
    ok("underscores", record([field("int", "_")], name="_", namespace="_a._b")),
    bad("name starting with a digit", record([], name="1R"), "invalid name"),
    bad("name with a dash", record([], name="a-b"), "invalid name"),
    bad("name with a space", record([], name="a b"), "invalid name"),
    bad("empty name", record([], name=""), "invalid name"),
    bad("name is a number", record([], name=5), "invalid name"),
    bad("missing name", {"type": "record", "fields": []}, "no name"),
    bad("namespace with an empty part", record([], namespace="a..b"), "invalid namespace"),
    bad("namespace starting with a dot", record([], namespace=".a"), "invalid namespace"),
    bad("namespace ending with a dot", record([], namespace="a."), "invalid namespace"),
    bad("namespace part starting with a digit", record([], namespace="a.1b"), "invalid namespace"),
    bad("full name with an empty part", record([], name="a..R"), "invalid namespace"),
    bad(
        "full name starting with a dot",
        record([], name=".R"),
        "invalid name",
        java=True,
        why='Java reads ".R" as R in the null namespace; the specification\'s full names have no empty part',
    ),
    bad(
        "namespace is a number",
        record([], namespace=5),
        "invalid namespace",
        java=True,
        why="Java ignores a namespace that is not a string; the specification's namespace is a string",
    ),
    bad("field name starting with a digit", record([field("int", "1f")]), "invalid name"),
    bad("field name is a number", record([{"name": 1, "type": "int"}]), "invalid name"),
    bad("missing field name", record([{"type": "int"}]), "no name"),
    bad("Unicode letters in a name", record([], name="Größe"), "invalid name", java=True, why=SPEC_NAMES),
    bad("CJK field name", record([field("int", "名前")]), "invalid name", java=True, why=SPEC_NAMES),
    bad("Unicode digit in a name", record([], name="a\u0663"), "invalid name", java=True, why=SPEC_NAMES),
    bad(
        "Unicode letters in a namespace",
        record([], namespace="ça.va"),
        "invalid namespace",
        java=True,
        why=SPEC_NAMES,
    ),
    bad("Unicode enum symbol", enum(["Ä"]), "invalid symbol", java=True, why=SPEC_NAMES),
    bad("letter outside the BMP", record([], name="\U0001d49c"), "invalid name"),
    bad("record named after a primitive", record([], name="int"), "primitive name"),
    bad("fixed named after a primitive", fixed(name="string"), "primitive name"),
    bad(
        "primitive name in a namespace",
        record([], name="string", namespace="a"),
        "primitive name",
        java=True,
        why="the specification: primitive type names may not be defined in any namespace; "
        "Java refuses them only without a namespace",
    ),
    # -- definitions and references -------------------------------------------------------
    ok("recursive record", record([field("long", "value"), field(["null", "R"], "next")])),
    ok(
        "short reference in the namespace",
        record([field(fixed()), field("X", "g"), field("n.X", "h")], namespace="n"),
    ),
    ok(
        "reference to the null namespace from inside a namespace",
        record([field(fixed()), field(record([field("X", "x")], name="S", namespace="q"), "g")]),
    ),
    ok(
        "type defined in the null namespace inside a namespace",
        record([field(fixed(namespace="")), field("X", "g")], namespace="n"),
    ),
    ok(
        "nested named types inherit the namespace",
        record(
            [field({"type": "array", "items": enum(["A"])}), field({"type": "map", "values": "E"}, "g")],
            namespace="a.b",
        ),
    ),
    bad(
        "reference to a name in another namespace",
        record([field(fixed(namespace="m")), field("X", "g")], namespace="n"),
        "unknown name",
    ),
    bad(
        "reference before the definition",
        record([field("B"), field(fixed(name="B", size=1), "g")]),
        "unknown name",
        java=True,
        why="the specification: a name must be defined before it is used; Java 1.12 resolves names "
        "after the whole schema is read",
    ),
    bad(
        "reference as a type object",
        record([field(fixed()), field({"type": "X"}, "g")]),
        "type must be a type name",
        java=False,
        why='Java: "type" in an object must be a primitive or complex type, not a defined name',
    ),
    bad("two definitions of a name", record([field(fixed()), field(fixed(size=3), "g")]), "defined twice"),
    bad(
        "two identical definitions of a name",
        record([field(fixed()), field(fixed(), "g")]),
        "defined twice",
        java=True,
        why=SPEC_ONCE,
    ),
    bad("record redefines itself", record([field(record([]))]), "defined twice"),
    bad(
        "fixed named after a primitive and used",
        record([field(fixed(name="int", size=1)), field("int", "g")]),
        "primitive name",
    ),
    # -- records and fields ---------------------------------------------------------------
    ok("empty record", record([])),
    ok(
        "docs, aliases, order and properties",
        record(
            [
                field("int", doc="the f", aliases=["g", "h"], order="descending", custom=True),
                field("string", "s", order="ignore"),
            ],
            doc="a record",
            aliases=["Old", "x.y.Older"],
            namespace="n",
            custom={"k": "v"},
        ),
    ),
    ok("doc that is not a string is ignored", record([], doc=5)),
    ok("logicalType on a field, not its type", record([field("long", logicalType="timestamp-millis")])),
    ok("field alias equal to another field's name", record([field("int"), field("int", "g", aliases=["f"])])),
    bad("missing fields", {"type": "record", "name": "R"}, "no fields"),
    bad("fields is an object", record({}), "fields must be a list"),
    bad("missing field type", record([{"name": "f"}]), "no type"),
    bad("field is not an object", record(["int"]), "field must be an object"),
    bad("two fields with one name", record([field("int"), field("long")]), "duplicate field"),
    bad("unknown order", record([field("int", order="up")]), "bad order"),
    bad("order is a number", record([field("int", order=1)]), "bad order"),
    bad(
        "order in capitals",
        record([field("int", order="ASCENDING")]),
        "bad order",
        java=True,
        why="Java upper-cases the order before looking it up; the specification's values are lower case",
    ),
    bad("aliases is a string", record([], aliases="x"), "aliases must be a list"),
    bad("alias is a number", record([], aliases=[1]), "aliases must be a list"),
    # the specification takes any string as an alias; Java checks the aliases of named types as names
    bad("type alias starting with a digit", record([], aliases=["1x"]), "invalid alias"),
    bad("fixed alias with a dash", fixed(aliases=["a-b"]), "invalid alias"),
    ok("field alias starting with a digit", record([field("int", aliases=["1x"])]), java=True),
    # -- enums and fixed -------------------------------------------------------------------
    ok("enum", enum(["SPADES", "HEARTS", "DIAMONDS", "CLUBS"], name="Suit")),
    ok("enum with a default", enum(["A", "B"], default="B")),
    ok("enum with no symbols", enum([])),
    bad("missing symbols", {"type": "enum", "name": "E"}, "no symbols"),
    bad("symbols is a string", enum("A"), "symbols must be a list"),
    bad("symbol is a number", enum([1]), "invalid symbol"),
    bad("symbol starting with a digit", enum(["1A"]), "invalid symbol"),
    bad("empty symbol", enum([""]), "invalid symbol"),
    bad("symbol twice", enum(["A", "A"]), "duplicate symbol"),
    bad("enum default not a symbol", enum(["A"], default="B"), "default not a symbol"),
    bad(
        "enum default is a number",
        enum(["A"], default=1),
        "default not a symbol",
        java=True,
        why="Java ignores an enum default that is not a string",
    ),
    bad("missing enum name", {"type": "enum", "symbols": ["A"]}, "no name"),
    ok("fixed", fixed(name="md5", size=16)),
    ok("fixed of size 0", fixed(size=0)),
    bad("missing size", {"type": "fixed", "name": "X"}, "bad size"),
    bad("negative size", fixed(size=-1), "bad size"),
    bad("size is a float", fixed(size=1.0), "bad size"),
    bad("size is a string", fixed(size="1"), "bad size"),
    bad("size above 2**31 - 1", fixed(size=2**31), "bad size"),
    ok(
        "size 2**31 - 1",
        fixed(size=2**31 - 1),
        java=False,
        why="Java refuses sizes above 2**31 - 9, the largest array its virtual machine allocates",
    ),
    bad("missing fixed name", {"type": "fixed", "size": 1}, "no name"),
    # -- arrays, maps and unions ------------------------------------------------------------
    ok("array with a default property", {"type": "array", "items": "string", "default": []}),
    ok("map", {"type": "map", "values": "long", "default": {}}),
    ok(
        "array of unions of arrays",
        {"type": "array", "items": ["null", {"type": "array", "items": ["int", "null"]}]},
    ),
    bad("missing items", {"type": "array"}, "no items"),
    bad("missing values", {"type": "map"}, "no values"),
    ok("union", ["null", "string"]),
    ok("empty union", []),
    ok("union of named types", [enum(["X"], name="A"), fixed(name="B", size=1), record([], name="C")]),
    bad(
        "union of two arrays",
        [{"type": "array", "items": "int"}, {"type": "array", "items": "long"}],
        "duplicate in union",
    ),
    bad(
        "union of two maps",
        [{"type": "map", "values": "int"}, {"type": "map", "values": "long"}],
        "duplicate in union",
    ),
    bad("union with a primitive twice", ["int", "int"], "duplicate in union"),
    bad(
        "union with a primitive and its logical type",
        ["int", {"type": "int", "logicalType": "date"}],
        "duplicate in union",
    ),
    bad("union with a name twice", [fixed(), "X"], "duplicate in union"),
    bad("union in a union", ["null", ["int"]], "union in union"),
    # -- defaults -------------------------------------------------------------------------
    ok(
        "defaults of every type",
        record(
            [
                field("null", "n", default=None),
                field("boolean", "b", default=True),
                field("int", "i", default=-(2**31)),
                field("long", "l", default=2**63 - 1),
                field("float", "fl", default=1),
                field("double", "d", default=1.5e300),
                field("bytes", "by", default="\u00ff\u0000"),
                field("string", "s", default="ü"),
                field(fixed(size=2), "fx", default="ab"),
                field(enum(["A", "B"]), "e", default="B"),
                field({"type": "array", "items": "int"}, "a", default=[1, 2]),
                field({"type": "map", "values": ["null", "int"]}, "m", default={"k": 1, "z": None}),
                field(
                    record([field("int", "a"), field("int", "b", default=2)], name="S"), "r", default={"a": 1}
                ),
                field("E", "e2", default="A"),
            ]
        ),
    ),
    ok("union default matching the first branch", record([field(["null", "string"], default=None)])),
    ok("union default matching a later branch", record([field(["null", "string"], default="a")])),
    ok("null default for a union with null last", record([field(["string", "null"], default=None)])),
    ok("default for a named branch", record([field(["null", enum(["A"])], default="A")])),
    ok(
        "record default with an unknown key",
        record([field(record([field("int", "a")], name="S"), default={"a": 1, "z": 2})]),
    ),
    bad("union default matching no branch", record([field(["null", "string"], default=1)]), "bad default"),
    bad("int default with a fraction", record([field("int", default=1.5)]), "bad default"),
    bad("int default written as a float", record([field("int", default=1.0)]), "bad default"),
    bad("int default above 2**31 - 1", record([field("int", default=2**31)]), "bad default"),
    bad("long default above 2**63 - 1", record([field("long", default=2**63)]), "bad default"),
    bad("boolean default as a string", record([field("boolean", default="true")]), "bad default"),
    bad("null default for an int", record([field("int", default=None)]), "bad default"),
    bad("zero default for null", record([field("null", default=0)]), "bad default"),
    bad("string default is a number", record([field("string", default=1)]), "bad default"),
    bad(
        "array default with a bad item",
        record([field({"type": "array", "items": "int"}, default=["a"])]),
        "bad default",
    ),
    bad(
        "map default is a list", record([field({"type": "map", "values": "int"}, default=[])]), "bad default"
    ),
    bad(
        "record default missing a field",
        record([field(record([field("int", "a")], name="S"), default={})]),
        "bad default",
    ),
    bad("double default text that is no number", record([field("double", default="abc")]), "bad default"),
    bad(
        "float default as a numeric string",
        record([field("float", default="NaN")]),
        "bad default",
        java=True,
        why="Java parses a string default of a float or double as a number; the "
        "specification's float and double defaults are JSON numbers",
    ),
    bad(
        "enum default not a symbol of the enum",
        record([field(enum(["A"]), default="Z")]),
        "bad default",
        java=True,
        why=SPEC_DEFAULTS,
    ),
    bad(
        "fixed default of the wrong length",
        record([field(fixed(size=2), default="a")]),
        "bad default",
        java=True,
        why=SPEC_DEFAULTS,
    ),
    bad(
        "bytes default above code point 255",
        record([field("bytes", default="\u0100")]),
        "bad default",
        java=True,
        why=SPEC_DEFAULTS,
    ),
    # -- logical types: invalid or unknown ones are ignored, by Java and the specification --
    ok("decimal on bytes", decimal(precision=4, scale=2)),
    ok("decimal without scale", decimal(precision=4)),
    ok("decimal on fixed at its largest precision", decimal("fixed", name="D", size=4, precision=9)),
    ok("decimal on fixed above its precision", decimal("fixed", name="D", size=4, precision=10)),
    ok("decimal precision 0", decimal(precision=0)),
    ok("decimal negative precision", decimal(precision=-1)),
    ok("decimal negative scale", decimal(precision=4, scale=-1)),
    ok("decimal scale above precision", decimal(precision=4, scale=5)),
    ok("decimal precision as a float", decimal(precision=4.0)),
    ok("decimal precision as a string", decimal(precision="4")),
    ok("decimal precision above 2**31 - 1", decimal(precision=2**31)),
    ok("decimal without precision", decimal()),
    ok("decimal on an int", decimal("int", precision=4)),
    ok("big-decimal", {"type": "bytes", "logicalType": "big-decimal"}),
    ok("uuid on string", {"type": "string", "logicalType": "uuid"}),
    ok("uuid on fixed 16", fixed(name="U", size=16, logicalType="uuid")),
    ok("uuid on fixed 15", fixed(name="U", size=15, logicalType="uuid")),
    ok("duration", fixed(name="D", size=12, logicalType="duration")),
    ok("duration on fixed 11", fixed(name="D", size=11, logicalType="duration")),
    *[
        ok(f"{name} on {base}", {"type": base, "logicalType": name})
        for name, base in (
            ("date", "int"),
            ("time-millis", "int"),
            ("time-micros", "long"),
            ("timestamp-millis", "long"),
            ("timestamp-micros", "long"),
            ("timestamp-nanos", "long"),
            ("local-timestamp-millis", "long"),
            ("local-timestamp-micros", "long"),
            ("local-timestamp-nanos", "long"),
            ("date", "string"),
            ("time-micros", "int"),
            ("timestamp-millis", "int"),
        )
    ],
    ok("unknown logical type", {"type": "int", "logicalType": "foo"}),
    ok("logicalType is a number", {"type": "int", "logicalType": 5}),
]


def _j(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


LONG_LIST = {
    "type": "record",
    "name": "LongList",
    "aliases": ["LinkedLongs"],
    "fields": [{"name": "value", "type": "long"}, {"name": "next", "type": ["null", "LongList"]}],
}
HANDSHAKE_REQUEST = {
    "type": "record",
    "name": "HandshakeRequest",
    "namespace": "org.apache.avro.ipc",
    "fields": [
        {"name": "clientHash", "type": {"type": "fixed", "name": "MD5", "size": 16}},
        {"name": "clientProtocol", "type": ["null", "string"]},
        {"name": "serverHash", "type": "MD5"},
        {"name": "meta", "type": ["null", {"type": "map", "values": "bytes"}]},
    ],
}
HANDSHAKE_RESPONSE = {
    "type": "record",
    "name": "HandshakeResponse",
    "namespace": "org.apache.avro.ipc",
    "fields": [
        {
            "name": "match",
            "type": {"type": "enum", "name": "HandshakeMatch", "symbols": ["BOTH", "CLIENT", "NONE"]},
        },
        {"name": "serverProtocol", "type": ["null", "string"]},
        {"name": "serverHash", "type": ["null", {"type": "fixed", "name": "MD5", "size": 16}]},
        {"name": "meta", "type": ["null", {"type": "map", "values": "bytes"}]},
    ],
}
NAMES_EXAMPLE = {
    "type": "record",
    "name": "Example",
    "doc": "the specification's example of full names",
    "fields": [
        {"name": "inheritNull", "type": {"type": "enum", "name": "Simple", "symbols": ["a", "b"]}},
        {
            "name": "explicitNamespace",
            "type": {"type": "fixed", "name": "Simple", "namespace": "explicit", "size": 12},
        },
        {
            "name": "fullName",
            "type": {
                "type": "record",
                "name": "a.full.Name",
                "namespace": "ignored",
                "fields": [
                    {
                        "name": "inheritNamespace",
                        "type": {"type": "enum", "name": "Understanding", "symbols": ["d", "e"]},
                    }
                ],
            },
        },
    ],
}
INTEROP = {
    "type": "record",
    "name": "Interop",
    "namespace": "org.apache.avro",
    "fields": [
        {"name": "intField", "type": "int"},
        {"name": "longField", "type": "long"},
        {"name": "stringField", "type": "string"},
        {"name": "boolField", "type": "boolean"},
        {"name": "floatField", "type": "float"},
        {"name": "doubleField", "type": "double"},
        {"name": "bytesField", "type": "bytes"},
        {"name": "nullField", "type": "null"},
        {"name": "arrayField", "type": {"type": "array", "items": "double"}},
        {
            "name": "mapField",
            "type": {
                "type": "map",
                "values": {"name": "Foo", "type": "record", "fields": [{"name": "label", "type": "string"}]},
            },
        },
        {"name": "unionField", "type": ["boolean", "double", {"type": "array", "items": "bytes"}]},
        {"name": "enumField", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}},
        {"name": "fixedField", "type": {"type": "fixed", "name": "MD5", "size": 16}},
        {
            "name": "recordField",
            "type": {
                "type": "record",
                "name": "Node",
                "fields": [
                    {"name": "label", "type": "string"},
                    {"name": "children", "type": {"type": "array", "items": "Node"}},
                ],
            },
        },
    ],
}

CANONICAL_CORPUS: list[tuple[str, str]] = [
    # the specification's examples
    *[
        (f"spec primitive {name}", _j(name))
        for name in ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
    ],
    ("spec string object", _j({"type": "string"})),
    ("spec LongList", _j(LONG_LIST)),
    ("spec Suit", _j({"type": "enum", "name": "Suit", "symbols": ["SPADES", "HEARTS", "DIAMONDS", "CLUBS"]})),
    ("spec array", _j({"type": "array", "items": "string", "default": []})),
    ("spec map", _j({"type": "map", "values": "long", "default": {}})),
    ("spec union", _j(["null", "string"])),
    ("spec fixed", _j({"type": "fixed", "size": 16, "name": "md5"})),
    ("spec names example", _j(NAMES_EXAMPLE)),
    (
        "spec record test",
        _j(
            {
                "type": "record",
                "name": "test",
                "fields": [{"name": "a", "type": "long"}, {"name": "b", "type": "string"}],
            }
        ),
    ),
    ("spec enum Foo", _j({"type": "enum", "name": "Foo", "symbols": ["A", "B", "C", "D"]})),
    ("spec array of long", _j({"type": "array", "items": "long"})),
    (
        "spec file header",
        _j(
            {
                "type": "record",
                "name": "org.apache.avro.file.Header",
                "fields": [
                    {"name": "magic", "type": {"type": "fixed", "name": "Magic", "size": 4}},
                    {"name": "meta", "type": {"type": "map", "values": "bytes"}},
                    {"name": "sync", "type": {"type": "fixed", "name": "Sync", "size": 16}},
                ],
            }
        ),
    ),
    (
        "spec data block",
        _j(
            {
                "type": "record",
                "name": "org.apache.avro.file.DataBlock",
                "fields": [
                    {"name": "count", "type": "long"},
                    {"name": "data", "type": "bytes"},
                    {"name": "sync", "type": {"type": "fixed", "name": "Sync", "size": 16}},
                ],
            }
        ),
    ),
    ("spec HandshakeRequest", _j(HANDSHAKE_REQUEST)),
    ("spec HandshakeResponse", _j(HANDSHAKE_RESPONSE)),
    ("spec decimal", _j({"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2})),
    ("spec uuid string", _j({"type": "string", "logicalType": "uuid"})),
    ("spec uuid fixed", _j({"type": "fixed", "size": 16, "logicalType": "uuid", "name": "u"})),
    ("spec date", _j({"type": "int", "logicalType": "date"})),
    # fastavro's canonical-form cases (tests/test_canonical_form.py)
    (
        "fastavro enum in array",
        _j({"type": "array", "items": {"type": "enum", "name": "Test", "symbols": ["A", "B"]}}),
    ),
    (
        "fastavro enum in map",
        _j({"type": "map", "values": {"type": "enum", "name": "Test", "symbols": ["A", "B"]}}),
    ),
    ("fastavro union", _j(["string", "null", "long"])),
    ("fastavro error", _j({"type": "error", "name": "Test", "fields": [{"name": "f", "type": "long"}]})),
    (
        "fastavro Node",
        _j(
            {
                "type": "record",
                "name": "Node",
                "fields": [
                    {"name": "label", "type": "string"},
                    {"name": "children", "type": {"type": "array", "items": "Node"}},
                ],
            }
        ),
    ),
    (
        "fastavro Lisp",
        _j(
            {
                "type": "record",
                "name": "Lisp",
                "fields": [
                    {
                        "name": "value",
                        "type": [
                            "null",
                            "string",
                            {
                                "type": "record",
                                "name": "Cons",
                                "fields": [{"name": "car", "type": "Lisp"}, {"name": "cdr", "type": "Lisp"}],
                            },
                        ],
                    }
                ],
            }
        ),
    ),
    ("fastavro Interop", _j(INTEROP)),
    (
        "fastavro ipAddr",
        _j(
            {
                "type": "record",
                "name": "ipAddr",
                "fields": [
                    {
                        "name": "addr",
                        "type": [
                            {"name": "IPv6", "type": "fixed", "size": 16},
                            {"name": "IPv4", "type": "fixed", "size": 4},
                        ],
                    }
                ],
            }
        ),
    ),
    (
        "fastavro docs",
        _j(
            {
                "type": "record",
                "name": "TestDoc",
                "doc": "Doc string",
                "fields": [{"name": "name", "type": "string", "doc": "Doc String"}],
            }
        ),
    ),
    ("fastavro empty namespace", _j({"namespace": "", "name": "N", "type": "record", "fields": []})),
    # namespaces, nesting and references
    (
        "nested namespaces",
        _j(
            {
                "type": "record",
                "name": "Outer",
                "namespace": "a.b",
                "fields": [
                    {
                        "name": "inner",
                        "type": {
                            "type": "record",
                            "name": "Inner",
                            "namespace": "c",
                            "fields": [
                                {"name": "deep", "type": {"type": "enum", "name": "Deep", "symbols": ["X"]}},
                                {"name": "back", "type": ["null", "a.b.Outer"]},
                            ],
                        },
                    },
                    {"name": "again", "type": "c.Inner"},
                    {"name": "deep2", "type": "c.Deep"},
                    {"name": "nullns", "type": {"type": "fixed", "name": "N", "namespace": "", "size": 1}},
                    {"name": "nullref", "type": "N"},
                ],
            }
        ),
    ),
    (
        "named types in arrays, maps and unions",
        _j(
            {
                "type": "record",
                "name": "R",
                "namespace": "x",
                "fields": [
                    {
                        "name": "a",
                        "type": {"type": "array", "items": {"type": "fixed", "name": "F", "size": 3}},
                    },
                    {
                        "name": "m",
                        "type": {
                            "type": "map",
                            "values": ["null", "F", {"type": "enum", "name": "E", "symbols": ["P"]}],
                        },
                    },
                    {"name": "u", "type": ["E", {"type": "array", "items": "x.F"}]},
                ],
            }
        ),
    ),
    (
        "aliases everywhere",
        _j(
            {
                "type": "record",
                "name": "R",
                "aliases": ["Old", "o.Older"],
                "fields": [
                    {
                        "name": "f",
                        "type": {"type": "enum", "name": "E", "aliases": ["E0"], "symbols": ["A"]},
                        "aliases": ["f0", "f1"],
                    },
                    {"name": "g", "type": {"type": "fixed", "name": "F", "aliases": ["F0"], "size": 1}},
                ],
            }
        ),
    ),
    (
        "docs and orders",
        _j(
            {
                "type": "record",
                "name": "R",
                "doc": "r",
                "fields": [
                    {"name": "f", "type": "int", "doc": "f", "order": "descending", "default": 3},
                    {
                        "name": "g",
                        "type": {"type": "map", "values": "int"},
                        "order": "ignore",
                        "default": {"a": 1},
                    },
                ],
            }
        ),
    ),
    (
        "logical types",
        _j(
            {
                "type": "record",
                "name": "L",
                "fields": [
                    {
                        "name": "d",
                        "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 3},
                    },
                    {
                        "name": "df",
                        "type": {
                            "type": "fixed",
                            "name": "DF",
                            "size": 8,
                            "logicalType": "decimal",
                            "precision": 18,
                            "scale": 0,
                        },
                    },
                    {"name": "bd", "type": {"type": "bytes", "logicalType": "big-decimal"}},
                    {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
                    {"name": "dt", "type": {"type": "int", "logicalType": "date"}},
                    {"name": "tm", "type": {"type": "int", "logicalType": "time-millis"}},
                    {"name": "tu", "type": {"type": "long", "logicalType": "time-micros"}},
                    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-nanos"}},
                    {"name": "lt", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
                    {
                        "name": "du",
                        "type": {"type": "fixed", "name": "Du", "size": 12, "logicalType": "duration"},
                    },
                    {
                        "name": "bad",
                        "type": {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 3},
                    },
                    {"name": "unknown", "type": {"type": "string", "logicalType": "iso-8601"}},
                ],
            }
        ),
    ),
    (
        "custom properties",
        _j(
            {
                "type": "record",
                "name": "P",
                "java-class": "x.Y",
                "meta": {"a": [1, 2.5, None]},
                "fields": [
                    {
                        "name": "f",
                        "type": {"type": "string", "avro.java.string": "String"},
                        "field-prop": [True],
                    }
                ],
            }
        ),
    ),
    (
        "Unicode in docs and properties",
        _j({"type": "enum", "name": "E", "doc": "Größe — 名前 😀", "symbols": ["A"], "note": "\u00e9\u0000"}),
    ),
    (
        "escapes",
        '{"type":"record","name":"\\u0052","namespace":"\\u006e\\u0073","doc":"\\"\\\\\\/\\b\\f\\n\\r\\t",'
        '"fields":[{"name":"\\u0066","type":{"type":"\\u0065num","name":"E","symbols":["\\u0041"]}}]}',
    ),
    ("whitespace", ' \n\t{ "type" : "fixed" , "name" : "W" ,\r\n "size" : 7 } \n'),
    (
        "deep nesting",
        _j(
            {
                "type": "array",
                "items": {
                    "type": "map",
                    "values": {
                        "type": "array",
                        "items": {
                            "type": "map",
                            "values": ["null", {"type": "array", "items": {"type": "map", "values": "int"}}],
                        },
                    },
                },
            }
        ),
    ),
    (
        "enum default and empty record",
        _j(
            {
                "type": "record",
                "name": "Z",
                "fields": [
                    {
                        "name": "e",
                        "type": {"type": "enum", "name": "E", "symbols": ["A", "B"], "default": "A"},
                    },
                    {"name": "empty", "type": {"type": "record", "name": "Empty", "fields": []}},
                ],
            }
        ),
    ),
    (
        "names of complex types",
        _j(
            {
                "type": "record",
                "name": "record",
                "namespace": "map",
                "fields": [{"name": "array", "type": {"type": "enum", "name": "enum", "symbols": ["fixed"]}}],
            }
        ),
    ),
]

# (input text, canonical form, signed CRC-64-AVRO fingerprint or None), from the Avro project's
# share/test/data/schema-tests.txt
AVRO_NORMALIZATION_VECTORS: list[tuple[str, str, int | None]] = [
    ('"null"', '"null"', 7195948357588979594),
    ('{"type":"null"}', '"null"', None),
    ('"boolean"', '"boolean"', -6970731678124411036),
    ('{"type":"boolean"}', '"boolean"', None),
    ('"int"', '"int"', 8247732601305521295),
    ('{"type":"int"}', '"int"', None),
    ('"long"', '"long"', -3434872931120570953),
    ('{"type":"long"}', '"long"', None),
    ('"float"', '"float"', 5583340709985441680),
    ('{"type":"float"}', '"float"', None),
    ('"double"', '"double"', -8181574048448539266),
    ('{"type":"double"}', '"double"', None),
    ('"bytes"', '"bytes"', 5746618253357095269),
    ('{"type":"bytes"}', '"bytes"', None),
    ('"string"', '"string"', -8142146995180207161),
    ('{"type":"string"}', '"string"', None),
    ("[  ]", "[]", -1241056759729112623),
    ('[ "int"  ]', '["int"]', -5232228896498058493),
    ('[ "int" , {"type":"boolean"} ]', '["int","boolean"]', 5392556393470105090),
    (
        '{"fields":[], "type":"record", "name":"foo"}',
        '{"name":"foo","type":"record","fields":[]}',
        -4824392279771201922,
    ),
    (
        '{"fields":[], "type":"record", "name":"foo", "namespace":"x.y"}',
        '{"name":"x.y.foo","type":"record","fields":[]}',
        5916914534497305771,
    ),
    (
        '{"fields":[], "type":"record", "name":"a.b.foo", "namespace":"x.y"}',
        '{"name":"a.b.foo","type":"record","fields":[]}',
        -4616218487480524110,
    ),
    (
        '{"fields":[], "type":"record", "name":"foo", "doc":"Useful info"}',
        '{"name":"foo","type":"record","fields":[]}',
        -4824392279771201922,
    ),
    (
        '{"fields":[], "type":"record", "name":"foo", "aliases":["foo","bar"]}',
        '{"name":"foo","type":"record","fields":[]}',
        -4824392279771201922,
    ),
    (
        '{"fields":[], "type":"record", "name":"foo", "doc":"foo", "aliases":["foo","bar"]}',
        '{"name":"foo","type":"record","fields":[]}',
        -4824392279771201922,
    ),
    (
        '{"fields":[{"type":{"type":"boolean"}, "name":"f1"}], "type":"record", "name":"foo"}',
        '{"name":"foo","type":"record","fields":[{"name":"f1","type":"boolean"}]}',
        7843277075252814651,
    ),
    # the published input has "default":"true", which is no boolean: Java 1.12 refuses it
    (
        '{ "fields":[{"type":"boolean", "aliases":[], "name":"f1", "default":true},\n'
        '            {"order":"descending","name":"f2","doc":"Hello","type":"int"}],\n'
        '  "type":"record", "name":"foo"\n}',
        '{"name":"foo","type":"record","fields":[{"name":"f1","type":"boolean"},{"name":"f2","type":"int"}]}',
        -4860222112080293046,
    ),
    (
        '{"type":"enum", "name":"foo", "symbols":["A1"]}',
        '{"name":"foo","type":"enum","symbols":["A1"]}',
        -6342190197741309591,
    ),
    (
        '{"namespace":"x.y.z", "type":"enum", "name":"foo", "doc":"foo bar", "symbols":["A1", "A2"]}',
        '{"name":"x.y.z.foo","type":"enum","symbols":["A1","A2"]}',
        -4448647247586288245,
    ),
    (
        '{"name":"foo","type":"fixed","size":15}',
        '{"name":"foo","type":"fixed","size":15}',
        1756455273707447556,
    ),
    (
        '{"namespace":"x.y.z", "type":"fixed", "name":"foo", "doc":"foo bar", "size":32}',
        '{"name":"x.y.z.foo","type":"fixed","size":32}',
        -3064184465700546786,
    ),
    ('{ "items":{"type":"null"}, "type":"array"}', '{"type":"array","items":"null"}', -589620603366471059),
    ('{ "values":"string", "type":"map"}', '{"type":"map","values":"string"}', -8732877298790414990),
    (
        '  {"name":"PigValue","type":"record",\n'
        '   "fields":[{"name":"value", "type":["null", "int", "long", "PigValue"]}]}',
        '{"name":"PigValue","type":"record","fields":[{"name":"value","type":["null","int","long","PigValue"]}]}',
        -1759257747318642341,
    ),
]
