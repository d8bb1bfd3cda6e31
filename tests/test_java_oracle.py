"""roastedavro against Java Avro 1.12, the reference implementation.

1. Parsing Canonical Form and the CRC-64-AVRO, MD5 and SHA-256 fingerprints
   of a corpus of schemas and of random ones equal Java's
   (SchemaNormalization).
2. parse_schema refuses a schema exactly when Java's Schema.Parser does, but
   where the specification is stricter than Java (listed below, reasons in
   schema_cases.py).
3. Bytes that roastedavro writes are read by Java and written back the same.

All through the session's ``java`` fixture (tests/java_oracle.py): one JVM,
batched requests. Skipped only without java/javac on PATH.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import roastedavro
from roastedavro.avro import Fixed, Primitive, parse_schema, parse_schemas
from roastedavro.errors import SchemaError
from schema_cases import AVRO_NORMALIZATION_VECTORS, CANONICAL_CORPUS, CASES

ALGORITHMS = ("CRC-64-AVRO", "MD5", "SHA-256")
CASES_BY_ID = {case.id: case for case in CASES}


def ours(schema) -> dict:
    return {
        "canonical": schema.canonical_form(),
        **{algorithm: schema.fingerprint(algorithm) for algorithm in ALGORITHMS},
    }


def javas(java, texts: list[str]) -> list[dict]:
    canonical = java.canonical_each(texts)
    return [{"canonical": form, **prints} for form, prints in zip(canonical, java.fingerprints_each(texts))]


# -- 1. canonical forms and fingerprints ------------------------------------------------------


@pytest.fixture(scope="module")
def java_corpus(java):
    return dict(
        zip((name for name, _ in CANONICAL_CORPUS), javas(java, [text for _, text in CANONICAL_CORPUS]))
    )


@pytest.mark.parametrize("name, text", CANONICAL_CORPUS, ids=[name for name, _ in CANONICAL_CORPUS])
def test_canonical_form_and_fingerprints_equal_javas(name, text, java_corpus):
    assert ours(parse_schema(text)) == java_corpus[name]


@pytest.fixture(scope="module")
def java_vectors(java):
    return javas(java, [text for text, _, _ in AVRO_NORMALIZATION_VECTORS])


@pytest.mark.parametrize("number", range(len(AVRO_NORMALIZATION_VECTORS)))
def test_avro_normalization_vectors(number, java_vectors):
    text, canonical, signed = AVRO_NORMALIZATION_VECTORS[number]
    schema = parse_schema(text)
    assert schema.canonical_form() == canonical == java_vectors[number]["canonical"]
    if signed is not None:
        # the vectors print Java's signed long; ours is unsigned
        assert schema.fingerprint("CRC-64-AVRO") == signed % 2**64
    assert ours(schema) == java_vectors[number]


def test_java_reads_our_full_json_as_the_same_schema(java):
    schemas = [parse_schema(text) for _, text in CANONICAL_CORPUS]
    answers = java.parse_each([schema.to_json() for schema in schemas])
    for (name, _), schema, answer in zip(CANONICAL_CORPUS, schemas, answers):
        assert answer["ok"], (name, answer)
    # and what Java reads from it has our canonical form
    assert java.canonical_each([schema.to_json() for schema in schemas]) == [
        schema.canonical_form() for schema in schemas
    ]


try:
    import avro_strategies
except ImportError:  # written alongside; the random tests wait for it
    avro_strategies = None
needs_strategies = pytest.mark.skipif(
    avro_strategies is None, reason="tests/avro_strategies.py not available"
)


def _random_schemas():
    if avro_strategies is None:
        return st.nothing()
    return st.lists(avro_strategies.avro_schemas(), min_size=1, max_size=40)


def java_reads_a_reference_differently(schema) -> bool:
    """True when Java 1.12 resolves a name in ``schema`` (JSON) unlike the specification.

    Java registers a record's name only once its fields are read, and looks a
    short name up in the enclosing namespace first and then in the null
    namespace: inside record a.Node, "Node" is a type Node of the null
    namespace defined before, not the record itself.
    """
    done: set[str] = set()
    unfinished: set[str] = set()

    def full_name(node, namespace):
        name = node["name"]
        if "." in name:
            return name
        own = node["namespace"] if "namespace" in node else namespace
        return f"{own}.{name}" if own else name

    def walk(node, namespace) -> bool:
        if isinstance(node, str):
            return (
                "." not in node and bool(namespace) and f"{namespace}.{node}" in unfinished and node in done
            )
        if isinstance(node, list):
            return any(walk(branch, namespace) for branch in node)
        if not isinstance(node, dict):
            return False
        kind = node.get("type")
        if kind in ("record", "error"):
            full = full_name(node, namespace)
            unfinished.add(full)
            found = any(walk(field["type"], full.rpartition(".")[0] or None) for field in node["fields"])
            unfinished.discard(full)
            done.add(full)
            return found
        if kind in ("enum", "fixed"):
            done.add(full_name(node, namespace))
        elif kind == "array":
            return walk(node["items"], namespace)
        elif kind == "map":
            return walk(node["values"], namespace)
        return False

    return walk(schema, None)


def test_java_reads_a_short_name_inside_its_own_record_as_the_null_namespace_type(java):
    schema = {
        "type": "record",
        "name": "Rec",
        "fields": [
            {"name": "a", "type": {"type": "fixed", "name": "Node", "size": 1}},
            {
                "name": "b",
                "type": {
                    "type": "record",
                    "name": "Node",
                    "namespace": "x",
                    "fields": [{"name": "next", "type": ["null", "Node"]}],
                },
            },
        ],
    }
    assert java_reads_a_reference_differently(schema)
    text = json.dumps(schema)
    # the specification: a short name is in the enclosing namespace, x.Node is the record itself
    assert '"name":"next","type":["null","x.Node"]' in parse_schema(text).canonical_form()
    assert '"name":"next","type":["null","Node"]' in java.canonical(text)


@needs_strategies
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(_random_schemas())
def test_random_schemas_canonical_forms_and_fingerprints(java, schemas):
    texts = [json.dumps(schema) for schema in schemas if not java_reads_a_reference_differently(schema)]
    verdicts = java.parse_each(texts)
    for text, verdict in zip(texts, verdicts):
        assert verdict["ok"], f"Java refuses a schema of the strategy: {verdict['error']}\n{text}"
    assert [ours(parse_schema(text)) for text in texts] == javas(java, texts)


# -- 2. which schemas are accepted --------------------------------------------------------------

# Java 1.12 accepts these, roastedavro refuses them: the specification is stricter (the
# reasons are the cases' ``why``)
SPEC_STRICTER_THAN_JAVA = {
    "comment in JSON",
    "full name starting with a dot",
    "namespace is a number",
    "Unicode letters in a name",
    "CJK field name",
    "Unicode digit in a name",
    "Unicode letters in a namespace",
    "Unicode enum symbol",
    "primitive name in a namespace",
    "reference before the definition",
    "two identical definitions of a name",
    "order in capitals",
    "enum default is a number",
    "float default as a numeric string",
    "enum default not a symbol of the enum",
    "fixed default of the wrong length",
    "bytes default above code point 255",
}
# Java refuses these, roastedavro accepts them: limits of Java's implementation, not rules
JAVA_LIMITS = {
    "size 2**31 - 1",
}
# where parse_schema does not do what the table says yet
PARSER_DISAGREEMENTS: dict[str, str] = {}


def test_case_table_is_consistent():
    assert len(CASES_BY_ID) == len(CASES), "case ids are unique"
    assert {case.id for case in CASES if not case.valid and case.java_accepts} == SPEC_STRICTER_THAN_JAVA
    assert {case.id for case in CASES if case.valid and not case.java_accepts} == JAVA_LIMITS
    for case in CASES:
        assert (case.java is None or case.java == case.valid) or case.why, case.id
        assert case.valid or case.rule, case.id


@pytest.fixture(scope="module")
def java_verdicts(java):
    return dict(zip(CASES_BY_ID, java.parse_each(case.input for case in CASES)))


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_java_verdict_is_the_recorded_one(case, java_verdicts):
    verdict = java_verdicts[case.id]
    assert verdict["ok"] == case.java_accepts, verdict


# where parse_schema keeps a logical type that Java ignores, or the other way round
LOGICAL_DISAGREEMENTS: dict[str, str] = {}


def _marked(cases, disagreements):
    return [
        case
        if case.id not in disagreements
        else pytest.param(case, marks=pytest.mark.xfail(strict=True, reason=disagreements[case.id]))
        for case in cases
    ]


@pytest.mark.parametrize("case", _marked(CASES, PARSER_DISAGREEMENTS), ids=[case.id for case in CASES])
def test_parse_schema_verdict(case):
    if case.valid:
        parse_schema(case.input)
    else:
        with pytest.raises(SchemaError):
            parse_schema(case.input)


def _logical(java_logical):
    return (
        None
        if java_logical is None
        else (java_logical["name"], java_logical.get("precision"), java_logical.get("scale"))
    )


ACCEPTED_BY_BOTH = [
    case for case in CASES if case.valid and case.java_accepts and case.id not in PARSER_DISAGREEMENTS
]


@pytest.mark.parametrize(
    "case", _marked(ACCEPTED_BY_BOTH, LOGICAL_DISAGREEMENTS), ids=[case.id for case in ACCEPTED_BY_BOTH]
)
def test_accepted_schemas_read_as_java_reads_them(case, java, java_verdicts):
    schema = parse_schema(case.source)
    assert ours(schema) == javas(java, [case.source])[0]
    # a logical type is kept exactly when Java keeps it (invalid and unknown ones are ignored)
    root = schema.root
    logical = root.logical if isinstance(root, (Primitive, Fixed)) else None
    expected = _logical(java_verdicts[case.id]["logical"])
    assert (None if logical is None else (logical.name, logical.precision, logical.scale)) == (
        None if expected is None else (expected[0], expected[1], expected[2])
    )


# -- 3. bytes ------------------------------------------------------------------------------------


def _codec_class():
    codec = getattr(roastedavro, "AvroCodec", None)
    if codec is None:
        pytest.skip("AvroCodec not available")
    return codec


EVERYTHING = {
    "type": "record",
    "name": "Everything",
    "namespace": "n",
    "fields": [
        {"name": "null", "type": "null"},
        {"name": "boolean", "type": "boolean"},
        {"name": "int", "type": "int"},
        {"name": "long", "type": "long"},
        {"name": "float", "type": "float"},
        {"name": "double", "type": "double"},
        {"name": "bytes", "type": "bytes"},
        {"name": "string", "type": "string"},
        {"name": "optional", "type": ["null", "string"]},
        {"name": "choice", "type": ["int", "string", "null"]},
        {"name": "longs", "type": {"type": "array", "items": "long"}},
        {"name": "map", "type": {"type": "map", "values": ["null", "int"]}},
        {"name": "suit", "type": {"type": "enum", "name": "Suit", "symbols": ["SPADES", "HEARTS"]}},
        {"name": "fixed", "type": {"type": "fixed", "name": "F", "size": 3}},
        {"name": "named", "type": ["null", "Suit", "F"]},
        {"name": "suits", "type": {"type": "map", "values": {"type": "array", "items": "n.Suit"}}},
        {
            "name": "list",
            "type": {
                "type": "record",
                "name": "LongList",
                "fields": [{"name": "value", "type": "long"}, {"name": "next", "type": ["null", "LongList"]}],
            },
        },
    ],
}
BYTES_SCHEMAS = {
    "Everything": EVERYTHING,
    "long": "long",
    "array of unions": {"type": "array", "items": ["null", "double", "string"]},
}

# (schema, datum as roastedavro takes it, the datum in Avro's JSON encoding)
DATA = [
    (
        "Everything",
        {
            "null": None,
            "boolean": True,
            "int": -(2**31),
            "long": -(2**63),
            "float": 1.5,
            "double": -0.0,
            "bytes": b"\x00\xff",
            "string": "ü€😀",
            "optional": None,
            "choice": 7,
            "longs": [3, 27],
            "map": {"a": 1, "b": None},
            "suit": "HEARTS",
            "fixed": b"abc",
            "named": b"xyz",
            "suits": {"k": ["SPADES", "HEARTS"]},
            "list": {"value": 1, "next": {"value": 2, "next": None}},
        },
        '{"null": null, "boolean": true, "int": -2147483648, "long": -9223372036854775808, "float": 1.5,'
        ' "double": -0.0, "bytes": "\\u0000\\u00ff", "string": "ü€😀", "optional": null,'
        ' "choice": {"int": 7}, "longs": [3, 27], "map": {"a": {"int": 1}, "b": null},'
        ' "suit": "HEARTS", "fixed": "abc", "named": {"n.F": "xyz"}, "suits": {"k": ["SPADES", "HEARTS"]},'
        ' "list": {"value": 1, "next": {"n.LongList": {"value": 2, "next": null}}}}',
    ),
    (
        "Everything",
        {
            "null": None,
            "boolean": False,
            "int": 2**31 - 1,
            "long": 2**63 - 1,
            "float": -0.0,
            "double": 1e300,
            "bytes": b"",
            "string": "",
            "optional": "a",
            "choice": None,
            "longs": [],
            "map": {},
            "suit": "SPADES",
            "fixed": b"\x00\x00\x00",
            "named": "HEARTS",
            "suits": {},
            "list": {"value": 0, "next": None},
        },
        '{"null": null, "boolean": false, "int": 2147483647, "long": 9223372036854775807, "float": -0.0,'
        ' "double": 1e300, "bytes": "", "string": "", "optional": {"string": "a"}, "choice": null,'
        ' "longs": [], "map": {}, "suit": "SPADES", "fixed": "\\u0000\\u0000\\u0000",'
        ' "named": {"n.Suit": "HEARTS"}, "suits": {}, "list": {"value": 0, "next": null}}',
    ),
    ("long", 0, "0"),
    ("long", -65, "-65"),
    ("array of unions", [None, 2.5, "x"], '[null, {"double": 2.5}, {"string": "x"}]'),
    ("array of unions", [], "[]"),
]


@pytest.fixture(scope="module")
def codecs():
    codec_class = _codec_class()
    return {name: codec_class(schema) for name, schema in BYTES_SCHEMAS.items()}


def test_java_reads_and_writes_back_our_bytes(java, codecs):
    written = [codecs[name].dump(datum) for name, datum, _ in DATA]
    expected = java.encode_json_each((BYTES_SCHEMAS[name], text) for name, _, text in DATA)
    trips = java.roundtrip_each((BYTES_SCHEMAS[name], data) for (name, _, _), data in zip(DATA, written))
    for (name, datum, _), data, want, trip in zip(DATA, written, expected, trips):
        assert data == want, (name, datum)
        assert trip.trailing == 0 and trip.data == data, (name, datum, trip)


@needs_strategies
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(st.data())
def test_java_reads_random_datums_we_write(java, codecs, data):
    name = data.draw(st.sampled_from(sorted(BYTES_SCHEMAS)))
    values = data.draw(st.lists(avro_strategies.datums(BYTES_SCHEMAS[name]), min_size=1, max_size=20))
    written = [codecs[name].dump(value) for value in values]
    trips = java.roundtrip_each((BYTES_SCHEMAS[name], encoded) for encoded in written)
    for value, encoded, trip in zip(values, written, trips):
        assert trip.trailing == 0 and trip.data == encoded, (name, value, trip)


def test_java_reads_and_writes_back_our_single_object_messages(java, codecs):
    messages = [codecs[name].dump_single(datum) for name, datum, _ in DATA]
    trips = java.roundtrip_single_each(
        (BYTES_SCHEMAS[name], message) for (name, _, _), message in zip(DATA, messages)
    )
    for (name, datum, _), message, trip in zip(DATA, messages, trips):
        assert trip.trailing == 0 and trip.data == message, (name, datum, trip)


# schemas parsed together, each using the named types of the ones before it
SCHEMA_SETS = {
    "orders": [
        {"type": "fixed", "name": "Id", "namespace": "com.a", "size": 16},
        {"type": "enum", "name": "com.a.Status", "symbols": ["NEW", "DONE"]},
        {
            "type": "record",
            "name": "Order",
            "namespace": "com.a",
            "fields": [
                {"name": "id", "type": "Id"},
                {"name": "status", "type": "com.a.Status"},
                {"name": "parent", "type": ["null", "Order"], "default": None},
            ],
        },
        {
            "type": "record",
            "name": "com.b.Batch",
            "fields": [
                {"name": "orders", "type": {"type": "array", "items": "com.a.Order"}},
                {"name": "first", "type": ["null", "com.a.Id"]},
            ],
        },
        {"type": "array", "items": "com.b.Batch"},
    ],
    "same definition twice": [
        {"type": "fixed", "name": "X", "size": 1},
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "x", "type": {"type": "fixed", "name": "X", "size": 1}}],
        },
    ],
    "a name defined differently": [
        {"type": "fixed", "name": "X", "size": 1},
        {"type": "fixed", "name": "X", "size": 2},
    ],
    "a name used before its schema": [
        {"type": "array", "items": "Y"},
        {"type": "fixed", "name": "Y", "size": 1},
    ],
}
# parse_schemas takes the schemas of a set in any order; Java's one Parser needs them in order
SET_ORDER_FREE = {"a name used before its schema"}


SET_DISAGREEMENTS: dict[str, str] = {}


@pytest.mark.parametrize(
    "name",
    [
        name
        if name not in SET_DISAGREEMENTS
        else pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=SET_DISAGREEMENTS[name]))
        for name in SCHEMA_SETS
    ],
)
def test_schema_sets_read_as_java_reads_them(name, java):
    texts = [json.dumps(schema) for schema in SCHEMA_SETS[name]]
    results = java.parse_many(texts)
    java_accepts = len(results) == len(texts) and all(result["ok"] for result in results)
    if not java_accepts and name not in SET_ORDER_FREE:
        with pytest.raises(SchemaError):
            parse_schemas(texts)
        return
    schemas = parse_schemas(texts)
    if java_accepts:
        # Java writes each schema with the definitions it uses: its canonical form is ours
        assert [schema.canonical_form() for schema in schemas] == java.canonical_each(
            [result["full"] for result in results]
        )
    else:
        assert [schema.canonical_form() for schema in schemas] == java.canonical_each(
            [schema.to_json() for schema in schemas]
        )
