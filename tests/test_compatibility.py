"""roastedavro.avro.compatibility against Java Avro 1.12's SchemaCompatibility.

1. Hand-written pairs covering every incompatibility type, promotions,
   aliases, unions on either side, recursion, named types used twice (Java's
   memo: duplicates, and the locations of a result's first computation) and
   the enum-default quirk. The expected answers are Java 1.12.2's, written
   out here (so these run without a JVM) and checked against the oracle by
   ``test_the_expected_answers_are_javas``.
2. Random evolutions of random schemas (tests/evolution.py), both ways round:
   the verdict and the list of (type, location, message) equal Java's.
3. check_mode: each registry mode over lists of versions, expected answers
   composed from Java's pairwise verdicts.

The tests that talk to Java are marked ``java`` (tests/java_oracle.py).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, note, settings

from evolution import evolution_chains, schema_pairs
from java_oracle import schema_text
from roastedavro.avro import Array, Field, Primitive, Record, Schema, parse_schema
from roastedavro.avro.compatibility import (
    MODES,
    CompatibilityResult,
    Incompatibility,
    check_compatibility,
    check_mode,
)
from roastedavro.errors import SchemaError

java_test = pytest.mark.java
RANDOM = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def R(name, fields, **more):
    return {"type": "record", "name": name, "fields": fields, **more}


def F(name, avro, **more):
    return {"name": name, "type": avro, **more}


def E(name, symbols, **more):
    return {"type": "enum", "name": name, "symbols": symbols, **more}


def X(name, size):
    return {"type": "fixed", "name": name, "size": size}


def arr(items):
    return {"type": "array", "items": items}


ITEM = R("Item", [F("qty", "int")])
ITEM_S = R("Item", [F("qty", "string")])
ERROR = "error"  # Java throws

# (id, reader, writer, Java's answer: [(type, location, message)] or ERROR)
CASES = [
    # types and promotions
    (
        "int-string",
        "int",
        "string",
        [("TYPE_MISMATCH", "/", "reader type: INT not compatible with writer type: STRING")],
    ),
    (
        "string-int",
        "string",
        "int",
        [("TYPE_MISMATCH", "/", "reader type: STRING not compatible with writer type: INT")],
    ),
    (
        "null-boolean",
        "null",
        "boolean",
        [("TYPE_MISMATCH", "/", "reader type: NULL not compatible with writer type: BOOLEAN")],
    ),
    (
        "array-map",
        arr("int"),
        {"type": "map", "values": "int"},
        [("TYPE_MISMATCH", "/", "reader type: ARRAY not compatible with writer type: MAP")],
    ),
    (
        "record-enum",
        R("A", []),
        E("A", ["X"]),
        [("TYPE_MISMATCH", "/", "reader type: RECORD not compatible with writer type: ENUM")],
    ),
    (
        "fixed-bytes",
        X("F", 2),
        "bytes",
        [("TYPE_MISMATCH", "/", "reader type: FIXED not compatible with writer type: BYTES")],
    ),
    (
        "bytes-fixed",
        "bytes",
        X("F", 2),
        [("TYPE_MISMATCH", "/", "reader type: BYTES not compatible with writer type: FIXED")],
    ),
    ("long-int", "long", "int", []),
    ("float-long", "float", "long", []),
    ("double-float", "double", "float", []),
    ("bytes-string", "bytes", "string", []),
    (
        "int-long",
        "int",
        "long",
        [("TYPE_MISMATCH", "/", "reader type: INT not compatible with writer type: LONG")],
    ),
    (
        "float-double",
        "float",
        "double",
        [("TYPE_MISMATCH", "/", "reader type: FLOAT not compatible with writer type: DOUBLE")],
    ),
    (
        "logical-types-ignored",
        {"type": "int", "logicalType": "date"},
        {"type": "long", "logicalType": "timestamp-millis"},
        [("TYPE_MISMATCH", "/", "reader type: INT not compatible with writer type: LONG")],
    ),
    (
        "decimals-ignored",
        {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2},
        {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 1},
        [],
    ),
    # names
    (
        "name-mismatch",
        R("a.A", [F("x", "int")]),
        R("a.B", [F("x", "long")]),
        [
            ("NAME_MISMATCH", "/name", "expected: a.B"),
            ("TYPE_MISMATCH", "/fields/0/type", "reader type: INT not compatible with writer type: LONG"),
        ],
    ),
    ("simple-names-equal", R("a.Thing", [F("x", "int")]), R("b.Thing", [F("x", "int")]), []),
    ("reader-alias", R("a.New", [F("x", "int")], aliases=["b.Old"]), R("b.Old", [F("x", "int")]), []),
    (
        "reader-alias-in-namespace",
        R("New", [F("x", "int")], namespace="a", aliases=["Old"]),
        R("a.Old", [F("x", "int")]),
        [],
    ),
    (
        "writer-alias-unused",
        R("a.Old", [F("x", "int")]),
        R("a.New", [F("x", "int")], aliases=["a.Old"]),
        [("NAME_MISMATCH", "/name", "expected: a.New")],
    ),
    (
        "error-is-a-record",
        {"type": "error", "name": "A", "fields": [F("x", "int")]},
        R("A", [F("x", "string")]),
        [("TYPE_MISMATCH", "/fields/0/type", "reader type: INT not compatible with writer type: STRING")],
    ),
    # fixed and enums
    (
        "fixed-size-and-name",
        X("F", 3),
        X("G", 4),
        [
            ("NAME_MISMATCH", "/name", "expected: G"),
            ("FIXED_SIZE_MISMATCH", "/size", "expected: 4, found: 3"),
        ],
    ),
    ("fixed-ok", X("n.F", 4), X("m.F", 4), []),
    (
        "enum-missing-symbols",
        E("E", ["A"]),
        E("E", ["c", "B", "A", "a"]),
        [("MISSING_ENUM_SYMBOLS", "/symbols", "[B, a, c]")],
    ),
    ("enum-reader-default", E("E", ["A", "OTHER"], default="OTHER"), E("E", ["A", "B", "C"]), []),
    (
        "enum-name-and-symbols",
        E("E", ["A"]),
        E("G", ["A", "B"]),
        [("NAME_MISMATCH", "/name", "expected: G"), ("MISSING_ENUM_SYMBOLS", "/symbols", "[B]")],
    ),
    # record fields
    (
        "field-missing-default",
        R("R", [F("a", "int"), F("b", "string"), F("c", "long", default=0)]),
        R("R", [F("a", "int")]),
        [("READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/1", "b")],
    ),
    (
        "enum-default-quirk",
        R("n.R", [F("e", E("E", ["X", "Y"], default="X")), F("z", "long")]),
        R("m.R", [F("z", "long")]),
        [("TYPE_MISMATCH", "/fields/0/type", "reader type: ENUM not compatible with writer type: RECORD")],
    ),
    ("enum-field-default", R("R", [F("e", E("E", ["X", "Y"], default="X"), default="Y")]), R("R", []), []),
    (
        "enum-without-default",
        R("R", [F("e", E("E", ["X", "Y"]))]),
        R("R", []),
        [("READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0", "e")],
    ),
    (
        "enum-default-quirk-memo",
        R("R", [F("e", E("E", ["X"], default="X")), F("f", "E")]),
        R("R", []),
        [
            ("TYPE_MISMATCH", "/fields/0/type", "reader type: ENUM not compatible with writer type: RECORD"),
            ("TYPE_MISMATCH", "/fields/0/type", "reader type: ENUM not compatible with writer type: RECORD"),
        ],
    ),
    ("field-alias", R("R", [F("b", "long", aliases=["a"])]), R("R", [F("a", "int")]), []),
    (
        "field-alias-mismatch",
        R("R", [F("b", "int", aliases=["x", "a"])]),
        R("R", [F("a", "string")]),
        [("TYPE_MISMATCH", "/fields/0/type", "reader type: INT not compatible with writer type: STRING")],
    ),
    (
        "field-matches-two",
        R("R", [F("b", "int", aliases=["a", "c"])]),
        R("R", [F("a", "int"), F("c", "int")]),
        ERROR,
    ),
    ("field-alias-of-its-own-name", R("R", [F("a", "int", aliases=["a"])]), R("R", [F("a", "int")]), ERROR),
    (
        "fields-reordered",
        R("R", [F("b", "string"), F("a", "int")]),
        R("R", [F("a", "int"), F("b", "string")]),
        [],
    ),
    (
        "nested-containers",
        R("R", [F("m", arr({"type": "map", "values": "int"}))]),
        R("R", [F("m", arr({"type": "map", "values": "string"}))]),
        [
            (
                "TYPE_MISMATCH",
                "/fields/0/type/items/values",
                "reader type: INT not compatible with writer type: STRING",
            )
        ],
    ),
    (
        "equal-types-in-two-places",
        R("T", [F("a", "int"), F("b", "int")]),
        R("T", [F("a", "string"), F("b", "string")]),
        [
            ("TYPE_MISMATCH", "/fields/0/type", "reader type: INT not compatible with writer type: STRING"),
            ("TYPE_MISMATCH", "/fields/1/type", "reader type: INT not compatible with writer type: STRING"),
        ],
    ),
    # unions
    (
        "union-union",
        ["null", "int"],
        ["null", "string", "int", R("Z", [])],
        [
            ("MISSING_UNION_BRANCH", "/1", "reader union lacking writer type: STRING"),
            ("MISSING_UNION_BRANCH", "/3", "reader union lacking writer type: RECORD"),
        ],
    ),
    ("union-union-promotions", ["null", "double"], ["int", "null", "float"], []),
    (
        "writer-union",
        "long",
        ["int", "string", "null"],
        [
            ("TYPE_MISMATCH", "/1", "reader type: LONG not compatible with writer type: STRING"),
            ("TYPE_MISMATCH", "/2", "reader type: LONG not compatible with writer type: NULL"),
        ],
    ),
    ("writer-union-ok", ["long", "null"], ["int", "null"], []),
    (
        "reader-union",
        ["null", "int"],
        "string",
        [("MISSING_UNION_BRANCH", "/", "reader union lacking writer type: STRING")],
    ),
    ("reader-union-ok", ["null", "string", "long"], "int", []),
    (
        "reader-union-record",
        ["null", R("A", [F("x", "int")])],
        R("A", [F("x", "string")]),
        [("MISSING_UNION_BRANCH", "/", "reader union lacking writer type: RECORD")],
    ),
    (
        "union-union-record",
        ["null", R("A", [F("x", "int")])],
        ["null", R("A", [F("x", "string")])],
        [("MISSING_UNION_BRANCH", "/1", "reader union lacking writer type: RECORD")],
    ),
    # recursion and the memo
    (
        "recursive-ok",
        R("L", [F("v", "long"), F("next", ["null", "L"])]),
        R("L", [F("v", "int"), F("next", ["null", "L"])]),
        [],
    ),
    (
        "recursive-mismatch",
        R("L", [F("next", ["null", "L"]), F("v", "int")]),
        R("L", [F("next", ["null", "L"]), F("v", "string")]),
        [("TYPE_MISMATCH", "/fields/1/type", "reader type: INT not compatible with writer type: STRING")],
    ),
    (
        "recursive-through-array",
        R("T", [F("kids", arr("T")), F("label", "int")]),
        R("T", [F("kids", arr("T")), F("label", "bytes")]),
        [("TYPE_MISMATCH", "/fields/1/type", "reader type: INT not compatible with writer type: BYTES")],
    ),
    # a named type is one Java object: its result is computed once and merged
    # again wherever the pair meets, with the first computation's location
    (
        "named-type-used-three-times",
        R("T", [F("a", ITEM), F("b", "Item"), F("c", arr("Item"))]),
        R("T", [F("a", ITEM_S), F("b", "Item"), F("c", arr("Item"))]),
        [
            (
                "TYPE_MISMATCH",
                "/fields/0/type/fields/0/type",
                "reader type: INT not compatible with writer type: STRING",
            )
        ]
        * 3,
    ),
    # union against union: each writer branch is checked from a fresh location
    (
        "union-fresh-location-reused",
        R("T", [F("u", ["null", ITEM]), F("w", "Item")]),
        R("T", [F("u", ["null", ITEM_S]), F("w", "Item")]),
        [
            ("MISSING_UNION_BRANCH", "/fields/0/type/1", "reader union lacking writer type: RECORD"),
            ("TYPE_MISMATCH", "/fields/0/type", "reader type: INT not compatible with writer type: STRING"),
        ],
    ),
    (
        "reader-union-fresh-location-reused",
        R("T", [F("u", ["null", ITEM]), F("w", "Item")]),
        R("T", [F("u", ITEM_S), F("w", "Item")]),
        [
            ("MISSING_UNION_BRANCH", "/fields/0/type", "reader union lacking writer type: RECORD"),
            ("TYPE_MISMATCH", "/fields/0/type", "reader type: INT not compatible with writer type: STRING"),
        ],
    ),
    (
        "enum-against-record",
        E("E", ["A"], default="A"),
        R("E", []),
        [("TYPE_MISMATCH", "/", "reader type: ENUM not compatible with writer type: RECORD")],
    ),
]


def ours(reader, writer):
    try:
        result = check_compatibility(reader, writer)
    except SchemaError:
        return ERROR
    assert result.compatible == (not result.incompatibilities) == bool(result)
    return [(reason.type, reason.location, reason.message) for reason in result.incompatibilities]


def javas(answer: dict):
    if "error" in answer or not answer.get("ok", True):
        return ERROR
    found = [
        (reason["type"], reason["location"], reason["message"]) for reason in answer["incompatibilities"]
    ]
    assert answer["compatible"] == (not found)
    return found


# -- 1. hand-written cases ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "reader, writer, expected", [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_cases(reader, writer, expected):
    assert ours(reader, writer) == expected


@java_test
def test_the_expected_answers_are_javas(java):
    answers = java.compatibility_each([(reader, writer) for _, reader, writer, _ in CASES])
    assert {name: javas(answer) for (name, *_), answer in zip(CASES, answers)} == {
        name: expected for name, _, _, expected in CASES
    }


@java_test
def test_java_reads_data_of_pairs_the_checker_calls_incompatible(java):
    # the checker judges schemas; a reader fails only on values it cannot take
    enum_writer, enum_reader = E("E", ["A", "B"]), E("E", ["A"])
    cases = [(enum_writer, enum_reader, b"\x00"), (["null", "string"], "null", b"\x00")]
    for writer, reader, _ in cases:
        assert not check_compatibility(reader, writer)
    assert [read.datum for read in java.resolve_each(cases)] == ['"A"', "null"]


def test_incompatibility_types_are_all_covered():
    covered = {reason[0] for *_, expected in CASES if expected != ERROR for reason in expected}
    assert covered == {
        "NAME_MISMATCH",
        "FIXED_SIZE_MISMATCH",
        "MISSING_ENUM_SYMBOLS",
        "READER_FIELD_MISSING_DEFAULT_VALUE",
        "TYPE_MISMATCH",
        "MISSING_UNION_BRANCH",
    }


def test_equal_nodes_are_told_apart_by_position():
    # one Python object in two places is two Java objects (two positions)
    ints, strings = Array(Primitive("int")), Array(Primitive("string"))
    reader = Record("T", (Field("a", ints), Field("b", ints)))
    writer = Record("T", (Field("a", strings), Field("b", strings)))
    result = check_compatibility(Schema(reader, {"T": reader}), Schema(writer, {"T": writer}))
    assert [reason.location for reason in result.incompatibilities] == [
        "/fields/0/type/items",
        "/fields/1/type/items",
    ]


def test_the_readable_paths():
    def paths(reader, writer):
        return [
            (reason.reader_path, reason.writer_path)
            for reason in check_compatibility(reader, writer).incompatibilities
        ]

    cases = {case[0]: case[1:3] for case in CASES}
    assert paths(*cases["name-mismatch"]) == [("a.A", "a.B"), ("a.A.x", "a.B.x")]
    assert paths(*cases["nested-containers"]) == [("R.m[]{}", "R.m[]{}")]
    assert paths(*cases["union-union"]) == [("", "<string>"), ("", "<Z>")]
    assert paths(*cases["field-missing-default"]) == [("R.b", "R")]
    assert paths(*cases["enum-default-quirk"]) == [("n.R.e", "m.R")]
    assert paths(*cases["union-fresh-location-reused"]) == [
        ("T.u", "T.u<Item>"),
        ("T.u<Item>.qty", "T.u<Item>.qty"),
    ]


def test_text_forms():
    result = check_compatibility(
        R("shop.Order", [F("qty", "int"), F("note", "string")]), R("shop.Order", [F("qty", "string")])
    )
    assert not result and not result.compatible
    assert str(result) == (
        "/fields/0/type (shop.Order.qty in the reader, shop.Order.qty in the writer): "
        "reader type: INT not compatible with writer type: STRING\n"
        "/fields/1 (shop.Order.note in the reader, shop.Order in the writer): the reader's field "
        "'note' has no default, and the writer has no field of its name or aliases"
    )
    assert str(check_compatibility("long", ["int", "long"])) == "compatible"
    assert check_compatibility("long", "int") == CompatibilityResult(True, ())
    root = check_compatibility(E("E", ["A"]), E("F", ["A", "B"])).incompatibilities
    assert [str(reason) for reason in root] == [
        "/name (E in the reader, F in the writer): the names differ (expected: F), "
        "and no alias of the reader's is the writer's name",
        "/symbols (E in the reader, F in the writer): the reader's enum lacks the writer's "
        "symbols [B] and has no default",
    ]
    reason = Incompatibility(
        "TYPE_MISMATCH",
        "/",
        "reader type: INT not compatible with writer type: LONG",
        version=2,
        direction="forward",
    )
    assert str(reason) == (
        "previous[2] forward: / (the root in the reader, the root in the "
        "writer): reader type: INT not compatible with writer type: LONG"
    )


def test_the_schemas_may_come_in_any_form():
    reader = R("R", [F("a", "long")])
    writer = R("R", [F("a", "int")])
    for form in (reader, json.dumps(reader), parse_schema(reader)):
        assert check_compatibility(form, json.dumps(writer)).compatible
    assert check_compatibility("long", '"int"').compatible


def test_a_field_matching_two_writer_fields_is_an_error():
    with pytest.raises(SchemaError, match=r"'b' .*matches several fields .*'a', 'c'"):
        check_compatibility(
            R("R", [F("b", "int", aliases=["a", "c"])]), R("R", [F("a", "int"), F("c", "int")])
        )


def test_an_invalid_schema_is_an_error():
    with pytest.raises(SchemaError):
        check_compatibility({"type": "record", "name": "R"}, "int")


def test_schemas_nested_too_deeply_are_an_error():
    def nested(levels):
        deep = "int"
        for _ in range(levels):
            deep = {"type": "array", "items": deep}
        return deep

    # the parser refuses what would not fit Python's recursion limit further on
    with pytest.raises(SchemaError, match="nested more than"):
        check_compatibility(nested(900), nested(900))
    # the deepest schema it takes is checked
    assert check_compatibility(nested(199), nested(199)).compatible


def test_the_location_escapes_json_pointer_characters():
    from roastedavro.avro.compatibility import _Checker, _Node

    node = _Node(Primitive("int"), ("root",), "")
    assert _Checker.found("TYPE_MISMATCH", ["", "a/b", "c~d"], "m", node, node).location == "/a~1b/c~0d"


# -- 2. random evolutions -----------------------------------------------------------------------


@java_test
@settings(RANDOM, max_examples=250)
@given(schema_pairs())
def test_random_evolutions_both_ways_equal_javas_verdicts(java, pair):
    writer, reader = pair
    texts = {"writer": schema_text(writer), "reader": schema_text(reader)}
    note(f"writer: {texts['writer']}\nreader: {texts['reader']}")
    answers = java.batch(
        [
            {"op": "parse", "schema": texts["writer"]},
            {"op": "parse", "schema": texts["reader"]},
            {"op": "compatibility", "reader": texts["reader"], "writer": texts["writer"]},
            {"op": "compatibility", "reader": texts["writer"], "writer": texts["reader"]},
        ]
    )
    # the strategies draw schemas Java takes
    assert answers[0]["ok"] and answers[1]["ok"], answers[:2]
    assert ours(reader, writer) == javas(answers[2])
    assert ours(writer, reader) == javas(answers[3])


# -- 3. registry modes --------------------------------------------------------------------------


def expected_mode(mode: str, verdicts: dict, count: int):
    """The registry's composition of Java's pairwise verdicts:
    verdicts[(index, "backward")] is Java's answer for reader=new, writer=previous[index],
    verdicts[(index, "forward")] for reader=previous[index], writer=new."""
    if mode == "NONE" or count == 0:
        return []
    indexes = range(count) if mode.endswith("_TRANSITIVE") else [count - 1]
    directions = {"BACKWARD": ["backward"], "FORWARD": ["forward"], "FULL": ["backward", "forward"]}[
        mode.replace("_TRANSITIVE", "")
    ]
    found = []
    for index in reversed(indexes):
        for direction in directions:
            answer = javas(verdicts[(index, direction)])
            if answer == ERROR:
                return ERROR
            found += [(index, direction, *reason) for reason in answer]
    return found


def ours_mode(new, previous, mode):
    try:
        result = check_mode(new, previous, mode)
    except SchemaError:
        return ERROR
    assert result.compatible == (not result.incompatibilities)
    return [
        (reason.version, reason.direction, reason.type, reason.location, reason.message)
        for reason in result.incompatibilities
    ]


def java_verdicts(java, new, previous) -> dict:
    keys = [(index, direction) for index in range(len(previous)) for direction in ("backward", "forward")]
    pairs = [
        (new, previous[index]) if direction == "backward" else (previous[index], new)
        for index, direction in keys
    ]
    return dict(zip(keys, java.compatibility_each(pairs)))


# v0 -> v1: b added with a default; v1 -> v2: a (no default) removed, c added with a default;
# v2 -> v3: c narrowed from long to int
V0 = R("R", [F("a", "int")])
V1 = R("R", [F("a", "int"), F("b", "string", default="")])
V2 = R("R", [F("b", "string", default=""), F("c", "long", default=0)])
V3 = R("R", [F("b", "string", default=""), F("c", "int", default=0)])
MODE_CASES = [
    # (new, previous, {mode: expected (version, direction, type, location, message)})
    (
        V2,
        [V0, V1],
        {
            "BACKWARD": [],
            "BACKWARD_TRANSITIVE": [],
            "FORWARD": [(1, "forward", "READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0", "a")],
            "FORWARD_TRANSITIVE": [
                (1, "forward", "READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0", "a"),
                (0, "forward", "READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0", "a"),
            ],
            "FULL": [(1, "forward", "READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0", "a")],
            "FULL_TRANSITIVE": [
                (1, "forward", "READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0", "a"),
                (0, "forward", "READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0", "a"),
            ],
            "NONE": [],
        },
    ),
    (
        V3,
        [V0, V1, V2],
        {
            "BACKWARD": [
                (
                    2,
                    "backward",
                    "TYPE_MISMATCH",
                    "/fields/1/type",
                    "reader type: INT not compatible with writer type: LONG",
                )
            ],
            "BACKWARD_TRANSITIVE": [
                (
                    2,
                    "backward",
                    "TYPE_MISMATCH",
                    "/fields/1/type",
                    "reader type: INT not compatible with writer type: LONG",
                )
            ],
            "FORWARD": [],
            "FORWARD_TRANSITIVE": [
                (1, "forward", "READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0", "a"),
                (0, "forward", "READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0", "a"),
            ],
            "FULL": [
                (
                    2,
                    "backward",
                    "TYPE_MISMATCH",
                    "/fields/1/type",
                    "reader type: INT not compatible with writer type: LONG",
                )
            ],
            "FULL_TRANSITIVE": [
                (
                    2,
                    "backward",
                    "TYPE_MISMATCH",
                    "/fields/1/type",
                    "reader type: INT not compatible with writer type: LONG",
                ),
                (1, "forward", "READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0", "a"),
                (0, "forward", "READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0", "a"),
            ],
            "NONE": [],
        },
    ),
    (V1, [V0], {mode: [] for mode in MODES}),
    (
        V0,
        [V1],
        {
            "BACKWARD": [],
            "BACKWARD_TRANSITIVE": [],
            "FORWARD": [],
            "FORWARD_TRANSITIVE": [],
            "FULL": [],
            "FULL_TRANSITIVE": [],
            "NONE": [],
        },
    ),
    (
        "string",
        ["int"],
        {
            **{
                mode: [
                    (
                        0,
                        "backward",
                        "TYPE_MISMATCH",
                        "/",
                        "reader type: STRING not compatible with writer type: INT",
                    )
                ]
                for mode in ("BACKWARD", "BACKWARD_TRANSITIVE")
            },
            **{
                mode: [
                    (
                        0,
                        "forward",
                        "TYPE_MISMATCH",
                        "/",
                        "reader type: INT not compatible with writer type: STRING",
                    )
                ]
                for mode in ("FORWARD", "FORWARD_TRANSITIVE")
            },
            **{
                mode: [
                    (
                        0,
                        "backward",
                        "TYPE_MISMATCH",
                        "/",
                        "reader type: STRING not compatible with writer type: INT",
                    ),
                    (
                        0,
                        "forward",
                        "TYPE_MISMATCH",
                        "/",
                        "reader type: INT not compatible with writer type: STRING",
                    ),
                ]
                for mode in ("FULL", "FULL_TRANSITIVE")
            },
            "NONE": [],
        },
    ),
]


@pytest.mark.parametrize("number", range(len(MODE_CASES)))
def test_modes(number):
    new, previous, expected = MODE_CASES[number]
    assert {mode: ours_mode(new, previous, mode) for mode in MODES} == expected
    for mode in MODES:
        assert check_mode(new, previous, mode).compatible == (not expected[mode])


@java_test
def test_the_expected_mode_answers_are_composed_from_javas(java):
    for new, previous, expected in MODE_CASES:
        verdicts = java_verdicts(java, new, previous)
        assert {mode: expected_mode(mode, verdicts, len(previous)) for mode in MODES} == expected


def test_modes_without_previous_versions_and_none():
    for mode in MODES:
        assert check_mode("string", [], mode) == CompatibilityResult(True, ())
    assert check_mode("string", ["int", "boolean"], "NONE").compatible


def test_mode_names():
    assert check_mode("long", ["int"], "backward_transitive").compatible
    assert not check_mode("long", ["int"], "Forward").compatible
    with pytest.raises(
        ValueError,
        match="'SIDEWAYS'.*BACKWARD, BACKWARD_TRANSITIVE, FORWARD, "
        "FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE, NONE",
    ):
        check_mode("long", ["int"], "SIDEWAYS")


@java_test
@settings(RANDOM, max_examples=80)
@given(evolution_chains(min_versions=2, max_versions=4))
def test_random_version_chains_in_every_mode(java, versions):
    *previous, new = versions
    note("\n".join(schema_text(version) for version in versions))
    verdicts = java_verdicts(java, new, previous)
    for mode in MODES:
        assert ours_mode(new, previous, mode) == expected_mode(mode, verdicts, len(previous)), mode
