"""The schema model and parser (roastedavro.avro) against independent oracles.

- random valid schemas (tests/avro_strategies.py): the full JSON parses back
  to an equal Schema; the Parsing Canonical Form equals fastavro's and the
  specification's rules applied here independently; fingerprints equal
  fastavro's (CRC-64-AVRO) and hashlib's (MD5, SHA-256); every name and
  reference means what the specification's rules say;
- the canonical forms and fingerprints the Avro project publishes
  (share/test/data/schema-tests.txt);
- a table of namespace and reference cases;
- load_schema over a folder of .avsc files and parse_schemas.
"""

from __future__ import annotations

import hashlib
import json

import fastavro
import pytest
from fastavro.schema import fingerprint as fastavro_fingerprint
from fastavro.schema import to_parsing_canonical_form
from hypothesis import HealthCheck, given, note, settings

import avro_strategies as S
from roastedavro.avro import (
    NO_DEFAULT,
    Array,
    Enum,
    Fixed,
    Logical,
    Map,
    NamedRef,
    Primitive,
    Record,
    Schema,
    Union,
)
from roastedavro.avro.parse import load_schema, parse_schema, parse_schemas
from roastedavro.errors import SchemaError
from schema_cases import AVRO_NORMALIZATION_VECTORS

# ---------------------------------------------------------------------------
# oracles
# ---------------------------------------------------------------------------


def spec_canonical_form(schema) -> str:
    """The specification's Parsing Canonical Form, from its rules: [PRIMITIVES]
    simple names, [FULLNAMES], [STRIP] all but name, type, fields, symbols,
    items, values, size, [ORDER] in that order, [STRINGS] without escapes but
    JSON's, [INTEGERS] plain, [WHITESPACE] none. An error is written as a
    record (its type for a reader), as Java does."""
    resolver = S.Resolver()
    written: set[str] = set()

    def quote(text):
        return json.dumps(text, ensure_ascii=False)

    def write(node, namespace):
        if isinstance(node, str):
            if node in S.PRIMITIVES:
                return quote(node)
            return quote(resolver.reference(node, namespace).full)
        if isinstance(node, list):
            return "[" + ",".join(write(branch, namespace) for branch in node) + "]"
        kind = node["type"]
        if kind in S.PRIMITIVES:
            return quote(kind)
        if kind == "array":
            return '{"type":"array","items":' + write(node["items"], namespace) + "}"
        if kind == "map":
            return '{"type":"map","values":' + write(node["values"], namespace) + "}"
        if kind not in ("record", "error", "enum", "fixed"):
            return write(kind, namespace)
        full = resolver.full_name(node, namespace)
        if full in written:
            return quote(full)
        written.add(full)
        resolver.resolve({**node, "fields": []} if "fields" in node else node, namespace)
        head = '{"name":' + quote(full)
        if kind == "enum":
            return head + ',"type":"enum","symbols":[' + ",".join(map(quote, node["symbols"])) + "]}"
        if kind == "fixed":
            return head + f',"type":"fixed","size":{int(node["size"])}' + "}"
        inner = S.namespace_of(full)
        fields = ",".join(
            '{"name":' + quote(f["name"]) + ',"type":' + write(f["type"], inner) + "}" for f in node["fields"]
        )
        return head + ',"type":"record","fields":[' + fields + "]}"

    return write(schema, None)


def fastavro_crc64(canonical: str) -> int:
    # fastavro gives the 8 bytes little-endian, as single-object encoding writes them
    return int.from_bytes(bytes.fromhex(fastavro_fingerprint(canonical, "CRC-64-AVRO")), "little")


def check_meaning(schema: Schema, source) -> None:
    """Every type of the parsed model means what the specification's rules,
    applied by tests/avro_strategies.Resolver, say: names, references,
    sizes, symbols, logical types, fields, defaults and orders."""
    root, resolver = S.resolve(source)
    assert set(schema.named) == set(resolver.named)
    seen: set[str] = set()

    def same(model, node):
        if isinstance(node, S.Ref):
            assert isinstance(model, NamedRef) and model.name == node.full, (model, node.full)
            return
        if isinstance(model, NamedRef):
            # a definition here in the source only if it was defined before (not possible)
            raise AssertionError(f"{model} where the source defines {node}")
        if isinstance(node, S.Prim):
            assert isinstance(model, Primitive) and model.name == node.name
            expected = None if node.logical is None else Logical(*node.logical)
            assert model.logical == expected, (model, node)
        elif isinstance(node, S.FixedT):
            assert isinstance(model, Fixed) and (model.name, model.size) == (node.full, node.size)
            assert model.logical == (None if node.logical is None else Logical(*node.logical))
        elif isinstance(node, S.EnumT):
            assert isinstance(model, Enum) and model.name == node.full
            assert (model.symbols, model.default) == (node.symbols, node.default)
        elif isinstance(node, S.RecordT):
            assert isinstance(model, Record) and model.name == node.full
            assert model.kind == node.kind
            assert node.full not in seen
            seen.add(node.full)
            assert [f.name for f in model.fields] == [f.name for f in node.fields]
            for field, expected in zip(model.fields, node.fields):
                assert field.order == expected.order
                if expected.default is S.NO_DEFAULT:
                    assert field.default is NO_DEFAULT
                else:
                    assert field.default == expected.default
                    assert json.dumps(field.default) == json.dumps(expected.default)
                same(field.type, expected.type)
        elif isinstance(node, S.ArrayT):
            assert isinstance(model, Array)
            same(model.items, node.items)
        elif isinstance(node, S.MapT):
            assert isinstance(model, Map)
            same(model.values, node.values)
        elif isinstance(node, S.UnionT):
            assert isinstance(model, Union) and len(model.branches) == len(node.branches)
            for branch, expected in zip(model.branches, node.branches):
                same(branch, expected)
        else:  # pragma: no cover
            raise AssertionError(node)

    same(schema.root, root)


def null_namespace_inside_another(schema: Schema) -> bool:
    """Whether the schema has types both in the null namespace and in others.

    The canonical form writes full names, and a full name without a dot read
    inside a namespaced record takes that namespace: such a canonical form
    does not parse back to the same types (a limit of the specification's
    form, not of the parser)."""
    names = set(schema.named)
    return any("." in name for name in names) and any("." not in name for name in names)


# ---------------------------------------------------------------------------
# random schemas
# ---------------------------------------------------------------------------


@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(source=S.avro_schemas())
def test_random_schemas_against_fastavro_and_the_specification(source):
    schema = parse_schema(source)
    assert parse_schema(json.dumps(source)) == schema
    check_meaning(schema, source)

    # the full JSON keeps everything: it parses back to an equal schema
    again = parse_schema(schema.to_dict())
    assert again == schema
    assert again.to_json() == schema.to_json()
    assert parse_schema(schema.to_json()) == schema
    check_meaning(again, schema.to_dict())

    canonical = schema.canonical_form()
    note(f"canonical form: {canonical}")
    assert canonical == to_parsing_canonical_form(source)
    assert canonical == spec_canonical_form(source)
    assert canonical == again.canonical_form()
    if not null_namespace_inside_another(schema):
        assert parse_schema(canonical).canonical_form() == canonical

    data = canonical.encode("utf-8")
    assert schema.fingerprint("CRC-64-AVRO") == fastavro_crc64(canonical)
    assert schema.fingerprint() == schema.fingerprint("CRC-64-AVRO")
    assert schema.fingerprint_hex == fastavro_fingerprint(canonical, "CRC-64-AVRO")
    assert schema.fingerprint("MD5") == hashlib.md5(data).digest()
    assert schema.fingerprint("SHA-256") == hashlib.sha256(data).digest()
    assert schema.fingerprint("MD5").hex() == fastavro_fingerprint(canonical, "MD5")


# ---------------------------------------------------------------------------
# the Avro project's published canonical forms and fingerprints
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, canonical, signed",
    AVRO_NORMALIZATION_VECTORS,
    ids=[f"vector {number:03}" for number in range(len(AVRO_NORMALIZATION_VECTORS))],
)
def test_avro_normalization_vectors(text, canonical, signed):
    schema = parse_schema(text)
    assert schema.canonical_form() == canonical
    assert spec_canonical_form(json.loads(text)) == canonical
    if signed is not None:
        # Java's fingerprint64 is a signed long; ours is the same 64 bits unsigned
        assert schema.fingerprint("CRC-64-AVRO") == signed % 2**64
        assert fastavro_crc64(canonical) == signed % 2**64


def test_fingerprint_algorithm_names():
    schema = parse_schema('"int"')
    assert schema.fingerprint("CRC-64-AVRO") == 8247732601305521295
    assert schema.fingerprint_hex == "8f5c393f1ad57572"
    assert schema.fingerprint("MD5") == hashlib.md5(b'"int"').digest()
    assert schema.fingerprint("SHA-256") == hashlib.sha256(b'"int"').digest()
    with pytest.raises(ValueError, match="CRC-64-AVRO"):
        schema.fingerprint("CRC-32")


# ---------------------------------------------------------------------------
# names, namespaces and references
# ---------------------------------------------------------------------------


def record(name, fields, **attributes):
    return {"type": "record", "name": name, "fields": fields, **attributes}


def field(name, type_, **attributes):
    return {"name": name, "type": type_, **attributes}


def fixed(name, size=1, **attributes):
    return {"type": "fixed", "name": name, "size": size, **attributes}


def enum(name, symbols=("A",), **attributes):
    return {"type": "enum", "name": name, "symbols": list(symbols), **attributes}


def field_type(schema: Schema, *path: str):
    """The type of a field, following records by field name from the root."""
    avro = schema.root
    for name in path:
        avro = schema.deref(avro).field(name).type
    return avro


# (id, schema, the full names it defines, {field path: the full name it refers to,
#  directly or as the last branch of a union},
#  whether the specification's rules alone resolve it)
NAME_CASES = [
    (
        "the specification's example",
        {
            "type": "record",
            "name": "Example",
            "fields": [
                field("inheritNull", enum("Simple", ["a", "b"])),
                field("explicitNamespace", fixed("Simple", 12, namespace="explicit")),
                field(
                    "fullName",
                    record(
                        "a.full.Name",
                        [field("inheritNamespace", enum("Understanding", ["d", "e"]))],
                        namespace="ignored",
                    ),
                ),
            ],
        },
        {"Example", "Simple", "explicit.Simple", "a.full.Name", "a.full.Understanding"},
        {},
    ),
    (
        "inherited namespace",
        record(
            "R", [field("e", enum("E")), field("r", record("In", [field("f", fixed("F"))]))], namespace="a.b"
        ),
        {"a.b.R", "a.b.E", "a.b.In", "a.b.F"},
        {},
    ),
    (
        "a dotted name ignores the namespace and gives its own to nested types",
        record("x.y.R", [field("e", enum("E"))], namespace="ignored"),
        {"x.y.R", "x.y.E"},
        {},
    ),
    (
        "a nested namespace replaces the enclosing one",
        record(
            "R",
            [field("in", record("In", [field("e", enum("E"))], namespace="c")), field("e2", enum("E"))],
            namespace="a",
        ),
        {"a.R", "c.In", "c.E", "a.E"},
        {},
    ),
    (
        "the null namespace inside a namespace",
        record(
            "R",
            [
                field("f", fixed("F", namespace="")),
                field("in", record("In", [field("g", fixed("G"))], namespace="")),
            ],
            namespace="a",
        ),
        {"a.R", "F", "In", "G"},
        {},
    ),
    (
        "short and full references in the namespace",
        record(
            "R",
            [
                field("e", enum("E")),
                field("short", "E"),
                field("full", "a.E"),
                field("inside", {"type": "array", "items": "E"}),
            ],
            namespace="a",
        ),
        {"a.R", "a.E"},
        {("short",): "a.E", ("full",): "a.E"},
    ),
    (
        "references from another namespace need the full name",
        record(
            "R",
            [
                field("e", enum("E")),
                field(
                    "in",
                    record(
                        "In",
                        [
                            field("back", "a.E"),
                            field("self", ["null", "In"]),
                            field("outer", ["null", "a.R"]),
                        ],
                        namespace="b",
                    ),
                ),
            ],
            namespace="a",
        ),
        {"a.R", "a.E", "b.In"},
        {("in", "back"): "a.E", ("in", "outer"): "a.R"},
    ),
    (
        "a short name means the enclosing namespace's type first",
        record(
            "R",
            [field("plain", fixed("F", namespace="")), field("mine", fixed("F", 2)), field("ref", "F")],
            namespace="a",
        ),
        {"a.R", "F", "a.F"},
        {("ref",): "a.F"},
    ),
    # Java's rule where the specification has none: a short name that the
    # enclosing namespace does not define is looked up in the null namespace
    (
        "a short name falls back to the null namespace (Java)",
        record("R", [field("plain", fixed("F", namespace="")), field("ref", "F")], namespace="a"),
        {"a.R", "F"},
        {("ref",): "F"},
        False,
    ),
    (
        "a record refers to itself by short and full name",
        record(
            "Node",
            [field("next", ["null", "Node"]), field("kids", {"type": "array", "items": "a.Node"})],
            namespace="a",
        ),
        {"a.Node"},
        {("next",): "a.Node"},
    ),
    (
        "primitive names are never namespaced",
        record("R", [field("i", "int"), field("s", {"type": "string"})], namespace="a"),
        {"a.R"},
        {},
    ),
]


@pytest.mark.parametrize(
    "source, names, references, spec",
    [(case + (True,))[1:5] for case in NAME_CASES],
    ids=[case[0] for case in NAME_CASES],
)
def test_names_and_references(source, names, references, spec):
    schema = parse_schema(source)
    assert set(schema.named) == names
    for path, full in references.items():
        avro = field_type(schema, *path)
        if isinstance(avro, Union):  # ["null", reference]
            avro = avro.branches[-1]
        assert avro == NamedRef(full)
    # the full JSON and the canonical form keep the meaning
    assert parse_schema(schema.to_dict()) == schema
    assert set(parse_schema(schema.to_dict()).named) == names
    if spec:
        assert schema.canonical_form() == spec_canonical_form(source)
        assert schema.canonical_form() == to_parsing_canonical_form(source)


def test_primitive_names_inside_namespaces():
    schema = parse_schema(record("R", [field("i", "int")], namespace="a"))
    assert field_type(schema, "i") == Primitive("int")


def test_aliases_are_resolved_in_the_type_namespace():
    schema = parse_schema(
        record(
            "R",
            [field("f", "int", aliases=["g", "h"]), field("e", enum("E", aliases=["Old", "x.Older"]))],
            namespace="a",
            aliases=["R0", "b.R1"],
        )
    )
    assert schema.root.aliases == ("a.R0", "b.R1")
    assert schema.named["a.E"].aliases == ("a.Old", "x.Older")
    assert schema.root.field("f").aliases == ("g", "h")  # field aliases are plain names
    assert parse_schema(schema.to_dict()) == schema


def test_logical_types_only_when_valid():
    def logical(node):
        avro = parse_schema(node).root
        return avro.logical

    assert logical({"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2}) == Logical(
        "decimal", 4, 2
    )
    assert logical({"type": "bytes", "logicalType": "decimal", "precision": 4}) == Logical("decimal", 4, 0)
    # invalid or unknown: ignored, the type is its underlying type (the specification, Java)
    for node in (
        {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 3},
        {"type": "bytes", "logicalType": "decimal", "precision": 0},
        {"type": "bytes", "logicalType": "decimal"},
        {"type": "bytes", "logicalType": "decimal", "precision": 4.0},
        {"type": "string", "logicalType": "date"},
        {"type": "int", "logicalType": "timestamp-millis"},
        {"type": "int", "logicalType": "x-custom"},
        {"type": "fixed", "name": "F", "size": 2, "logicalType": "decimal", "precision": 5},
        {"type": "fixed", "name": "U", "size": 15, "logicalType": "uuid"},
    ):
        assert logical(node) is None, node
    # a fixed of n bytes holds floor(log10(2**(8n-1) - 1)) digits
    for size in range(1, 20):
        most = S.max_decimal_precision(size)
        assert logical(fixed("F", size, logicalType="decimal", precision=most)) == Logical("decimal", most, 0)
        assert logical(fixed("F", size, logicalType="decimal", precision=most + 1)) is None


# ---------------------------------------------------------------------------
# files and sets of schemas
# ---------------------------------------------------------------------------

BASE = fixed("Hash", 4, namespace="com.acme")
COLOR = enum("Color", ["RED", "GREEN"], namespace="com.acme")
USER = record(
    "User",
    [
        field("id", "com.acme.Hash"),
        field("color", "Color"),
        field("friends", {"type": "array", "items": "User"}),
        field("backup", ["null", "Hash"]),
    ],
    namespace="com.acme",
)


def write_avsc(folder, name, schema):
    (folder / f"{name}.avsc").write_text(json.dumps(schema), encoding="utf-8")


def test_load_schema_of_files_that_refer_to_each_other(tmp_path):
    write_avsc(tmp_path, "com.acme.Hash", BASE)
    write_avsc(tmp_path, "com.acme.Color", COLOR)
    write_avsc(tmp_path, "com.acme.User", USER)
    schema = load_schema(tmp_path / "com.acme.User.avsc")
    assert set(schema.named) == {"com.acme.User", "com.acme.Hash", "com.acme.Color"}
    # the used types are defined at their first use, as if written there
    expected = fastavro.schema.load_schema(str(tmp_path / "com.acme.User.avsc"))
    assert schema.canonical_form() == to_parsing_canonical_form(expected)
    assert schema.canonical_form() == (
        '{"name":"com.acme.User","type":"record","fields":['
        '{"name":"id","type":{"name":"com.acme.Hash","type":"fixed","size":4}},'
        '{"name":"color","type":{"name":"com.acme.Color","type":"enum","symbols":["RED","GREEN"]}},'
        '{"name":"friends","type":{"type":"array","items":"com.acme.User"}},'
        '{"name":"backup","type":["null","com.acme.Hash"]}]}'
    )
    assert parse_schema(schema.to_json()) == schema


def test_load_schema_of_a_missing_file(tmp_path):
    write_avsc(tmp_path, "com.acme.User", USER)
    with pytest.raises(SchemaError, match=r"com\.acme\.Hash") as info:
        load_schema(tmp_path / "com.acme.User.avsc")
    assert "com.acme.Hash.avsc" in str(info.value)


def test_load_schema_of_files_that_refer_to_each_other_in_a_circle(tmp_path):
    write_avsc(tmp_path, "p.A", record("A", [field("b", "p.B")], namespace="p"))
    write_avsc(tmp_path, "p.B", record("B", [field("a", ["null", "p.A"])], namespace="p"))
    with pytest.raises(SchemaError, match="itself"):
        load_schema(tmp_path / "p.A.avsc")


def test_load_schema_of_a_file_that_is_not_json(tmp_path):
    (tmp_path / "bad.avsc").write_text('{"type": "record",', encoding="utf-8")
    with pytest.raises(SchemaError, match="JSON") as info:
        load_schema(tmp_path / "bad.avsc")
    assert "bad.avsc" in str(info.value)


def test_parse_schemas_in_any_order_gives_them_back_in_order():
    user, base, color = parse_schemas([USER, BASE, json.dumps(COLOR)])
    assert (user.root.name, base.root.name, color.root.name) == (
        "com.acme.User",
        "com.acme.Hash",
        "com.acme.Color",
    )
    assert user.named["com.acme.Hash"] == base.root
    assert user.named["com.acme.Color"] == color.root
    assert base.canonical_form() == '{"name":"com.acme.Hash","type":"fixed","size":4}'
    # the same as parsing them with the dependencies first
    ordered = parse_schemas([BASE, COLOR, USER])
    assert [s.canonical_form() for s in ordered] == [
        base.canonical_form(),
        color.canonical_form(),
        user.canonical_form(),
    ]


def test_parse_schemas_refuses_unknown_and_conflicting_names():
    with pytest.raises(SchemaError, match="Color"):
        parse_schemas([USER, BASE])
    with pytest.raises(SchemaError, match="com.acme.Hash"):
        parse_schemas([BASE, fixed("Hash", 8, namespace="com.acme")])
