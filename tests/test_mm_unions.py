"""Fields with a declared Avro type (Raw, Function, Method) on the compiled path.

They are written and read by AvroCodec's generated code, so any Avro type
works, unions of several records included, with fastavro's conventions: the
branch fastavro chooses, "-type" and tuple notation naming a branch. The
oracle is fastavro's schemaless encoding of marshmallow's dump output, and
marshmallow's own load of what fastavro reads.
"""

import datetime as dt
import decimal
import threading
import uuid

import pytest
from conftest import fastavro_bytes, fastavro_read
from marshmallow import ValidationError, fields

from thread_stacks import current_stack_size
from roastedavro import CompiledSchema, CompileFlags, DecodeError

UTC = dt.timezone.utc

POINT = {
    "type": "record",
    "name": "Point",
    "fields": [{"name": "x", "type": "long"}, {"name": "y", "type": "long"}],
}
POINT3 = {
    "type": "record",
    "name": "Point3",
    "fields": [{"name": "x", "type": "long"}, {"name": "y", "type": "long"}, {"name": "z", "type": "long"}],
}
# null, primitives and two records: which branch is fastavro's choice
CHOICE = ["null", "boolean", "long", "double", "string", "bytes", POINT, POINT3]
# unions inside records inside an array, with an enum and a map
SHAPE = {
    "type": "record",
    "name": "Shape",
    "fields": [
        {"name": "label", "type": "string"},
        {"name": "tag", "type": ["null", "string", "long"]},
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}},
        {
            "name": "corners",
            "type": {
                "type": "array",
                "items": [
                    {"type": "record", "name": "Corner", "fields": [{"name": "x", "type": "double"}]},
                    {
                        "type": "record",
                        "name": "Labelled",
                        "fields": [{"name": "x", "type": "double"}, {"name": "name", "type": "string"}],
                    },
                ],
            },
        },
        {"name": "extra", "type": {"type": "map", "values": ["null", "long", "string"]}, "default": {}},
    ],
}
SHAPES = {"type": "array", "items": SHAPE}
# a record and a map in one union: a dict's branch as fastavro's validation says
RECORD_OR_MAP = [
    "null",
    {
        "type": "record",
        "name": "Pair",
        "fields": [{"name": "left", "type": "long"}, {"name": "right", "type": "long"}],
    },
    {"type": "map", "values": "string"},
]
MOMENT = [
    "null",
    {"type": "long", "logicalType": "timestamp-millis"},
    {"type": "int", "logicalType": "date"},
    {"type": "string", "logicalType": "uuid"},
    {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
]
NODE = {
    "type": "record",
    "name": "Node",
    "fields": [
        {"name": "value", "type": "long"},
        {"name": "children", "type": {"type": "array", "items": "Node"}},
        {"name": "next", "type": ["null", "Node"]},
    ],
}
NUMBERS = {"type": "array", "items": ["null", "int", "string"]}


class Declared(CompiledSchema):
    class Meta:
        avro_namespace = "shop"

    # allow_none: marshmallow's load takes None (the declared type says how it is written)
    choice = fields.Raw(allow_none=True, metadata={"avro": CHOICE})
    shapes = fields.Raw(metadata={"avro": SHAPES})
    pair = fields.Raw(allow_none=True, metadata={"avro": RECORD_OR_MAP})
    moment = fields.Raw(allow_none=True, metadata={"avro": MOMENT})
    tree = fields.Raw(metadata={"avro": NODE})
    # the same declared type twice: one set of generated functions
    numbers = fields.Raw(metadata={"avro": NUMBERS})
    more_numbers = fields.Raw(metadata={"avro": NUMBERS})
    maybe = fields.Raw(allow_none=True, metadata={"avro": ["null", "string", "long"]})
    strict = fields.Raw(metadata={"avro": ["string", "null"]})
    computed = fields.Function(
        lambda obj: obj.get("source"),
        allow_none=True,
        deserialize=lambda value: ["loaded", value],
        metadata={"avro": ["null", "long", "string", POINT3.copy() | {"name": "Point3b"}]},
    )
    described = fields.Method(
        "describe",
        "parse",
        metadata={"avro": ["null", {"type": "array", "items": "string"}, {"type": "map", "values": "long"}]},
    )

    def describe(self, obj):
        choice = obj["choice"]
        return [type(choice).__name__] if not isinstance(choice, dict) else {"keys": len(choice)}

    def parse(self, value):
        return {"parsed": value}


@pytest.fixture(scope="module")
def declared():
    return Declared().compile()


def leaf(value):
    return {"value": value, "children": [], "next": None}


BASE = {
    "choice": None,
    "shapes": [],
    "pair": None,
    "moment": None,
    "tree": leaf(1),
    "numbers": [],
    "more_numbers": [1, None, "two"],
    "maybe": None,
    "strict": "s",
}


def check(schema, **change):
    """The record's bytes are fastavro's, its load marshmallow's."""
    record = {**BASE, **change}
    data = schema.dump_compiled(record)
    assert data == fastavro_bytes(schema, schema.dump(record))
    assert schema.load_compiled(data) == schema.load(fastavro_read(schema, data))
    return data


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -1,
        2**40,
        2**63 - 1,
        2**70,
        -(2**70),
        1.5,
        float("inf"),
        "",
        "text",
        "\u00e9\U0001f600",
        b"",
        b"\x00\xff",
        {"x": 1, "y": 2},  # Point
        {"x": 1, "y": 2, "z": 3},  # Point3: more of its fields
        {"-type": "shop.Point", "x": 1, "y": 2, "z": 3},  # named: Point after all
        {"-type": "shop.Point3", "x": 1, "y": 2, "z": 3},
        ("shop.Point3", {"x": 4, "y": 5, "z": 6}),  # tuple notation
        ("shop.Point", {"x": 4, "y": 5}),
        ("string", "named"),
        ("long", 7),
    ],
)
def test_union_branch_is_fastavros_choice(declared, value):
    check(declared, choice=value)


def test_union_branches_on_the_wire(declared):
    # the branch index leads the value: long is branch 2, Point3 branch 7
    assert declared.dump_compiled({**BASE, "choice": 5}).startswith(b"\x04\x0a")
    assert declared.dump_compiled({**BASE, "choice": {"x": 1, "y": 2, "z": 3}}).startswith(
        b"\x0e\x02\x04\x06"
    )
    assert declared.dump_compiled({**BASE, "choice": 2**70}).startswith(b"\x06")  # double


@pytest.mark.parametrize(
    "value",
    [
        None,
        {"left": 1, "right": 2},
        {"left": "1", "right": "2"},
        {},
        {"a": "b"},
        {"left": "x"},
        ("shop.Pair", {"left": 3, "right": 4}),
        {"-type": "shop.Pair", "left": 1, "right": 2},
    ],
)
def test_record_or_map_as_fastavro_chooses(declared, value):
    check(declared, pair=value)


def test_nested_unions_inside_records_inside_arrays(declared):
    shapes = [
        {"label": "a", "tag": None, "color": "RED", "corners": []},
        {
            "label": "b",
            "tag": "t",
            "color": "GREEN",
            "corners": [
                {"x": 1.5},
                {"x": 2.0, "name": "n"},
                ("shop.Labelled", {"x": 0.0, "name": ""}),
                {"-type": "shop.Corner", "x": 3.0, "name": "ignored"},
            ],
            "extra": {"k": None, "l": 5, "m": "text"},
        },
        {"label": "c", "tag": 2**62, "color": "RED", "corners": [{"x": -1.0}] * 3, "extra": {}},
    ]
    data = check(declared, shapes=shapes)
    loaded = declared.load_compiled(data)["shapes"]
    assert loaded[1]["corners"][1] == {"x": 2.0, "name": "n"}
    assert loaded[0]["extra"] == {}  # the field's default, written for the missing key


@pytest.mark.parametrize(
    "value",
    [
        None,
        dt.datetime(2024, 2, 29, 12, 30, 15, 123000, tzinfo=UTC),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=dt.timezone(dt.timedelta(hours=-8))),
        dt.date(2000, 1, 1),
        uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "2024-01-02",  # text: the date branch, as fastavro validates it
        decimal.Decimal("1234567.89"),
        decimal.Decimal("-0.01"),
        1700000000000,
    ],
)
def test_logical_types_in_unions(declared, value):
    check(declared, moment=value)


def test_text_the_date_branch_cannot_take_is_refused_as_by_fastavro(declared):
    # fastavro's validation takes any str for a date; it then fails to write
    # a uuid's text as one, and so does the compiled writer
    record = {**BASE, "moment": "12345678-1234-5678-1234-567812345678"}
    with pytest.raises(ValueError):
        fastavro_bytes(declared, declared.dump(record))
    with pytest.raises(ValidationError) as caught:
        declared.dump_compiled(record)
    assert list(caught.value.messages) == ["moment"]


def test_recursion_through_a_declared_record(declared):
    tree = leaf(0)
    for depth in range(1, 60):
        tree = {
            "value": depth,
            "children": [leaf(-depth), tree],
            "next": {"value": 2**40, "children": [], "next": leaf(depth)},
        }
    check(declared, tree=tree)


def test_function_and_method_fields(declared):
    # Function and Method compute their value from the object; their own
    # deserialize runs on the value read
    for source in (None, 5, "five", {"x": 1, "y": 2, "z": 3}, {"x": 1, "y": 2}):
        record = {**BASE, "choice": source, "source": source}
        if isinstance(source, dict) and "z" not in source:
            # Point is no branch of computed's union: the field's path in the error
            with pytest.raises(ValidationError) as caught:
                declared.dump_compiled(record)
            assert list(caught.value.messages) == ["computed"]
            continue
        data = check(declared, choice=source, source=source)
        loaded = declared.load_compiled(data)
        # marshmallow's Function loads None as None, without its deserialize
        assert loaded["computed"] == (None if source is None else ["loaded", source])
        assert loaded["described"] == {"parsed": declared.describe(record)}


def test_allow_none_and_a_declared_null(declared):
    # the declared union says where null goes: no second null branch around it
    types = {f["name"]: f["type"] for f in declared.avro_schema()["fields"]}
    assert types["maybe"] == ["null", "string", "long"]
    assert types["strict"] == ["string", "null"]
    for maybe in (None, "text", 3):
        check(declared, maybe=maybe)
    # without allow_none a null is written (marshmallow's dump gives None), but
    # marshmallow's load refuses it, and so does load_compiled
    data = declared.dump_compiled({**BASE, "strict": None})
    assert data == fastavro_bytes(declared, declared.dump({**BASE, "strict": None}))
    with pytest.raises(ValidationError) as expected:
        declared.load(fastavro_read(declared, data))
    with pytest.raises(ValidationError) as caught:
        declared.load_compiled(data)
    assert caught.value.messages == expected.value.messages == {"strict": ["Field may not be null."]}


@pytest.mark.parametrize(
    "change, path, phrase",
    [
        ({"choice": [1]}, ["choice"], "list [1] matches no branch of the union [null, boolean"),
        ({"choice": ("shop.Nothing", 1)}, ["choice"], "no branch named 'shop.Nothing'"),
        ({"choice": ("shop.Point", {"x": "1", "y": 2})}, ["choice", "x"], "expected an int"),
        (
            {
                "shapes": [
                    {"label": "a", "tag": None, "color": "RED", "corners": []},
                    {"label": "b", "tag": 1.5, "color": "RED", "corners": []},
                ]
            },
            ["shapes", 1, "tag"],
            "float 1.5 matches no branch of the union [null, string, long]",
        ),
        (
            {"shapes": [{"label": "b", "tag": None, "color": "BLUE", "corners": []}]},
            ["shapes", 0, "color"],
            "'BLUE'",
        ),
        (
            {"shapes": [{"label": "a", "color": "RED", "corners": [{"x": "1"}]}]},
            ["shapes", 0, "corners", 0],
            "matches no branch of the union [shop.Corner, shop.Labelled]",
        ),
        (
            {"shapes": [{"label": "a", "color": "RED", "corners": [], "extra": {"k": 1.5}}]},
            ["shapes", 0, "extra", "k"],
            "matches no branch of the union [null, long, string]",
        ),
        ({"numbers": [None, 2**31]}, ["numbers", 1], "matches no branch"),
        (
            {"tree": {"value": 1, "children": [leaf(2), {"value": 3, "next": None}]}},
            ["tree", "children", 1, "children"],
            "no value and no default",
        ),
    ],
)
def test_errors_name_the_field_path(declared, change, path, phrase):
    # marshmallow's layout: messages nested by field name, then index or key
    with pytest.raises(ValidationError) as caught:
        declared.dump_compiled({**BASE, **change})
    messages = caught.value.messages
    for part in path:
        assert list(messages) == [part]
        messages = messages[part]
    assert len(messages) == 1 and phrase in messages[0], messages


def test_malformed_bytes_are_decode_errors_with_the_offset(declared):
    data = declared.dump_compiled({**BASE, "choice": "text"})
    assert data[0] == 8  # branch 4, string
    for bad, offset, message in [
        (b"\x10" + data[1:], 0, "index 8 out of range"),
        (b"\x09" + data[1:], 0, "index -5 out of range"),
        (data[:1] + b"\x7e" + data[2:], 1, "length 63 exceeds"),
        (data[:1] + b"\x7f" + data[2:], 1, "negative length"),
    ]:
        with pytest.raises(DecodeError, match=message) as caught:
            declared.load_compiled(bad)
        assert caught.value.offset == offset
    with pytest.raises(DecodeError):
        declared.load_compiled(data[:-1])


class Chain(CompiledSchema):
    chain = fields.Raw(
        metadata={
            "avro": {
                "type": "record",
                "name": "Link",
                "fields": [
                    {
                        "name": "next",
                        "type": [
                            "null",
                            "Link",
                            {"type": "record", "name": "End", "fields": [{"name": "end", "type": "int"}]},
                        ],
                    }
                ],
            }
        }
    )


def chain(depth):
    value = {"end": 0}
    for _ in range(depth):
        value = {"next": value}
    return value


def chain_bytes(depth):
    # the field's Link, then each inner Link: branch 1; the End: branch 2, int 0
    return b"\x02" * (depth - 1) + b"\x04\x00"


def test_max_depth_bounds_declared_records():
    # records inside the declared type count from the field's record
    schema = Chain().compile(CompileFlags(max_depth=10))
    assert schema.dump_compiled({"chain": chain(9)}) == chain_bytes(9)
    assert chain_bytes(9) == fastavro_bytes(schema, {"chain": chain(9)})
    assert schema.load_compiled(chain_bytes(9)) == {"chain": chain(9)}
    assert fastavro_read(schema, chain_bytes(9)) == {"chain": chain(9)}
    with pytest.raises(ValidationError, match="nested more than 10 levels") as caught:
        schema.dump_compiled({"chain": chain(10)})
    assert list(caught.value.messages) == ["chain"]
    with pytest.raises(DecodeError, match="nested more than 10 levels"):
        schema.load_compiled(chain_bytes(10))
    looped = {"next": None}
    looped["next"] = looped
    with pytest.raises(ValidationError, match="contains itself"):
        schema.dump_compiled({"chain": looped})


def test_compile_to_string_shows_the_fragment_functions():
    source = Declared().compile_to_string()
    # one writer and reader per declared type, named after its first field
    assert "cdef int avro_choice_write(self, Writer* w, object datum, int depth) except -1:" in source
    assert "cdef object avro_choice_read(self, Reader* r, int depth):" in source
    assert "cdef int avro_choice_write_shop_Point3(self, Writer* w, object datum, int depth)" in source
    assert "cdef bint avro_pair_accepts_shop_Pair(self, object datum, int depth)" in source
    assert source.count("_write(self, Writer* w, object datum, int depth)") == 10
    assert "self.avro_numbers_write(w, value, depth)" in source
    assert "avro_more_numbers" not in source
    # readable: the Avro types in comments, the branches by name
    assert "# label: string" in source
    assert "# null | string | long" in source
    assert "write_generic(w" not in source and "read_generic(r" not in source


def test_a_small_thread_stack_ends_in_clean_errors(declared):
    # a thread's stack may be far smaller than max_depth records need
    tree = leaf(0)
    for depth in range(480):
        tree = {"value": depth, "children": [], "next": tree}
    record = {**BASE, "tree": tree}
    data = declared.dump_compiled(record)
    errors = []

    results, got = [], []

    def run():
        got.append(current_stack_size())
        try:
            results.append(declared.dump_compiled(record))
        except ValidationError as error:
            errors.append(error)
        try:
            results.append(declared.load_compiled(data))
        except DecodeError as error:
            errors.append(error)

    size = threading.stack_size(64 * 1024)
    try:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(size)
    if got[0] is not None and got[0] > 64 * 1024:
        # glibc reuses a cached stack of up to about 4 times the size asked
        # for (test_codec's 256 KiB thread leaves one): with that room each
        # call writes or reads the records whole or ends in the clean error,
        # as the optimisation level's frame sizes decide
        assert all("C stack has room for" in str(error) for error in errors)
        assert len(results) + len(errors) == 2
        assert all(result in (data, declared.load_compiled(data)) for result in results)
        pytest.skip(f"the thread was given a cached stack of {got[0]} bytes, not 64 KiB")
    assert [type(error) for error in errors] == [ValidationError, DecodeError]
    assert all("C stack has room for" in str(error) for error in errors)
    assert declared.load_compiled(data) == declared.load(fastavro_read(declared, data))
