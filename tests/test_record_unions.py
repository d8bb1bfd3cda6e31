"""Unions of nested schemas in marshmallow schemas: marshmallow-oneofschema's
OneOfSchema (its type name chooses the branch) and roastedavro.fields.Union
(the object's class chooses), written as Avro unions of records.

Oracles: fastavro's encoding of the same values given in its tuple notation
(built here from the objects, not from our output) and its reading with
return_record_name; marshmallow's own dump and load (OneOfSchema's and the
field's); Java Avro reading the bytes. Compiled and tier 0 give the same.
"""

import dataclasses
import io
import json

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import Schema, ValidationError, fields, post_load, pre_dump, validate
from marshmallow_oneofschema import OneOfSchema

import roastedavro.schema as schema_module
from roastedavro import CompiledSchema, CompileError, DecodeError, compiler
from roastedavro.fields import Union


@dataclasses.dataclass
class Circle:
    radius: float


@dataclasses.dataclass
class Square:
    side: int


@dataclasses.dataclass
class Group:
    name: str
    members: list


class CircleSchema(Schema):
    radius = fields.Float(required=True)

    @post_load
    def make(self, data, **kwargs):
        return Circle(**data)


class SquareSchema(Schema):
    side = fields.Integer(required=True, validate=validate.Range(min=0))

    @post_load
    def make(self, data, **kwargs):
        return Square(**data)


class GroupSchema(Schema):
    name = fields.String(required=True)
    # the union inside one of its own branches: a recursive Avro type
    members = fields.Nested("ShapeSchema", many=True, required=True)

    @post_load
    def make(self, data, **kwargs):
        return Group(**data)


class ShapeSchema(OneOfSchema):
    type_schemas = {"circle": CircleSchema, "square": SquareSchema, "group": GroupSchema}

    def get_obj_type(self, obj):
        return {Circle: "circle", Square: "square", Group: "group"}.get(type(obj))


class Drawing(CompiledSchema):
    title = fields.String(required=True)
    main = fields.Nested(ShapeSchema, allow_none=True, load_default=None)
    shapes = fields.Nested(ShapeSchema, many=True, required=True)
    pick = Union({Square: SquareSchema, Circle: CircleSchema}, required=True)
    picks = fields.List(Union([(Circle, CircleSchema), (Square, SquareSchema)]), required=True)
    maybe = Union({Circle: CircleSchema}, allow_none=True, load_default=None)


RECORD_NAMES = {Circle: "CircleSchema", Square: "SquareSchema", Group: "GroupSchema"}


def datum_of(shape):
    """fastavro's value of a shape, in its tuple notation naming the record."""
    if shape is None:
        return None
    if isinstance(shape, Circle):
        fields_ = {"radius": shape.radius}
    elif isinstance(shape, Square):
        fields_ = {"side": shape.side}
    else:
        fields_ = {"name": shape.name, "members": [datum_of(m) for m in shape.members]}
    return RECORD_NAMES[type(shape)], fields_


def drawing_datum(drawing):
    return {
        "title": drawing["title"],
        "main": datum_of(drawing["main"]),
        "shapes": [datum_of(s) for s in drawing["shapes"]],
        "pick": datum_of(drawing["pick"]),
        "picks": [datum_of(s) for s in drawing["picks"]],
        "maybe": None if drawing["maybe"] is None else datum_of(drawing["maybe"])[1],
    }


def fastavro_bytes(datum):
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(Drawing().avro_schema()), datum)
    return out.getvalue()


circles = st.builds(Circle, st.floats(allow_nan=False, allow_infinity=False, width=64))
squares = st.builds(Square, st.integers(0, 2**40))
leaves = circles | squares
shapes = st.recursive(
    leaves, lambda inner: st.builds(Group, st.text(max_size=5), st.lists(inner, max_size=3)), max_leaves=8
)
drawings = st.fixed_dictionaries(
    {
        "title": st.text(max_size=8),
        "main": st.none() | shapes,
        "shapes": st.lists(shapes, max_size=3),
        "pick": leaves,
        "picks": st.lists(leaves, max_size=3),
        "maybe": st.none() | circles,
    }
)


@pytest.fixture(scope="module")
def drawing():
    schema = Drawing()
    schema.compile()
    return schema


def test_the_avro_schema_is_a_union_of_the_records():
    avro = {f["name"]: f["type"] for f in Drawing().avro_schema()["fields"]}
    main = avro["main"]
    assert main[0] == "null" and [b["name"] for b in main[1:]] == [
        "CircleSchema",
        "SquareSchema",
        "GroupSchema",
    ]
    assert avro["shapes"] == {"type": "array", "items": ["CircleSchema", "SquareSchema", "GroupSchema"]}
    assert avro["pick"] == ["SquareSchema", "CircleSchema"]
    assert avro["picks"] == {"type": "array", "items": ["CircleSchema", "SquareSchema"]}
    assert avro["maybe"] == ["null", "CircleSchema"]
    fields_ = {f["name"]: f for f in Drawing().avro_schema()["fields"]}
    assert fields_["main"]["default"] is None and fields_["maybe"]["default"] is None
    fastavro.parse_schema(Drawing().avro_schema())  # a schema fastavro takes


@settings(max_examples=150, deadline=None)
@given(value=drawings)
def test_bytes_and_values_are_the_oracles(drawing, value):
    data = drawing.dump_compiled(value)
    datum = drawing_datum(value)
    assert data == fastavro_bytes(datum)
    read = fastavro.schemaless_reader(
        io.BytesIO(data),
        fastavro.parse_schema(drawing.avro_schema()),
        None,
        return_record_name=True,
        return_record_name_override=True,
    )
    assert read == datum  # each union value read as (record name, fields)
    loaded = drawing.load_compiled(data)
    assert loaded == drawing.load(drawing.dump(value)) == value


def test_marshmallows_own_forms(drawing):
    value = {
        "title": "t",
        "main": Circle(1.0),
        "shapes": [Square(2)],
        "pick": Circle(3.0),
        "picks": [],
        "maybe": None,
    }
    dumped = drawing.dump(value)
    # OneOfSchema's form: the type name beside the fields; the Union's: the record name
    assert dumped["main"] == {"type": "circle", "radius": 1.0}
    assert dumped["pick"] == {"CircleSchema": {"radius": 3.0}}
    assert drawing.load(dumped) == value


def test_many_records_at_once(drawing):
    values = [
        {
            "title": str(n),
            "main": None,
            "shapes": [Group("g", [Circle(n)])],
            "pick": Square(n),
            "picks": [Circle(0.5)],
            "maybe": Circle(2.0),
        }
        for n in range(3)
    ]
    data = drawing.dump_compiled(values, many=True)
    assert drawing.load_compiled(data, many=True) == values


@pytest.mark.parametrize(
    "value, field, messages",
    [
        (Circle(1.0), "shapes", {"shapes": ["Not a valid list."]}),
        ("a string", "main", {"main": ["Unknown object class: str"]}),
        (
            3,
            "pick",
            {
                "pick": [
                    "Cannot write a value of type int: it is none of this union's classes (Square, Circle)."
                ]
            },
        ),
        (None, "pick", {"pick": ["Field may not be null."]}),
        (Group("g", [3]), "main", {"main": {"members": {0: ["Unknown object class: int"]}}}),
    ],
    ids=["list-expected", "no-type-name", "no-class", "null", "inside-a-group"],
)
def test_values_no_branch_takes_are_refused_at_their_path(drawing, value, field, messages):
    base = {"title": "t", "main": None, "shapes": [], "pick": Square(1), "picks": [], "maybe": None}
    with pytest.raises(ValidationError) as raised:
        drawing.dump_compiled({**base, field: value})
    assert raised.value.messages == messages


def test_an_unknown_object_class_has_oneofschemas_message(drawing):
    class Unnamed(ShapeSchema):
        def get_obj_type(self, obj):
            return None if isinstance(obj, Square) else super().get_obj_type(obj)

    class Holder(CompiledSchema):
        shape = fields.Nested(Unnamed)

    holder = Holder()
    with pytest.raises(ValidationError) as raised:
        holder.dump_compiled({"shape": Square(1)})
    assert raised.value.messages == {"shape": ["Unknown object class: Square"]}
    # marshmallow-oneofschema returns the same message (as a value, not an error)
    assert Holder().dump({"shape": Square(1)})["shape"][1] == {"_schema": "Unknown object class: Square"}


def test_a_branch_index_out_of_range_is_a_decode_error(drawing):
    data = drawing.dump_compiled(
        {"title": "", "main": Circle(1.0), "shapes": [], "pick": Square(1), "picks": [], "maybe": None}
    )
    # title "" (0x00), then main's branch: 4 is past null, Circle, Square, Group
    damaged = data[:1] + b"\x08" + data[2:]
    with pytest.raises(DecodeError) as raised:
        drawing.load_compiled(damaged)
    assert raised.value.offset == 1


def test_a_branch_schemas_validation_and_hooks_run(drawing):
    data = fastavro_bytes(
        {
            "title": "",
            "main": ("SquareSchema", {"side": -1}),
            "shapes": [],
            "pick": ("SquareSchema", {"side": 1}),
            "picks": [],
            "maybe": None,
        }
    )
    with pytest.raises(ValidationError) as raised:
        drawing.load_compiled(data)
    with pytest.raises(ValidationError) as marshmallows:
        drawing.load(
            drawing.dump(
                {"title": "", "main": Square(-1), "shapes": [], "pick": Square(1), "picks": [], "maybe": None}
            )
        )
    assert raised.value.messages == marshmallows.value.messages
    assert raised.value.messages == {"main": {"side": ["Must be greater than or equal to 0."]}}


def test_a_branch_schemas_pre_dump_runs_for_its_own_objects():
    class Doubled(SquareSchema):
        @pre_dump
        def double(self, obj, **kwargs):
            return Square(obj.side * 2)

    class Shapes(OneOfSchema):
        type_schemas = {"square": Doubled, "circle": CircleSchema}

        def get_obj_type(self, obj):
            return type(obj).__name__.lower()

    class Holder(CompiledSchema):
        shape = fields.Nested(Shapes)

    holder = Holder()
    for shape, expected in ((Square(3), Square(6)), (Circle(1.5), Circle(1.5))):
        data = holder.dump_compiled({"shape": shape})
        assert holder.load_compiled(data) == holder.load(holder.dump({"shape": shape})) == {"shape": expected}


def test_older_data_without_the_nullable_unions_reads_none(drawing):
    class Older(CompiledSchema):
        title = fields.String(required=True)
        shapes = fields.Nested(ShapeSchema, many=True, required=True)
        pick = Union({Square: SquareSchema, Circle: CircleSchema}, required=True)
        picks = fields.List(Union([(Circle, CircleSchema), (Square, SquareSchema)]), required=True)

        class Meta:
            avro_name = "Drawing"

    value = {"title": "old", "shapes": [Group("g", [Square(2)])], "pick": Circle(1.0), "picks": [Square(4)]}
    written = Older().dump_compiled(value)
    assert drawing.load_compiled(written, writer_schema=Older) == {**value, "main": None, "maybe": None}


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: type("Kept", (ShapeSchema,), {"type_field_remove": False}),
            "type_field_remove=False cannot be written",
        ),
        (lambda: type("Empty", (OneOfSchema,), {"type_schemas": {}}), "type_schemas is empty"),
        (
            lambda: type(
                "Clash",
                (OneOfSchema,),
                {"type_schemas": {"t": type("Typed", (Schema,), {"type": fields.String()})}},
            ),
            "has a field written as 'type'",
        ),
    ],
    ids=["type-field-kept", "no-schemas", "type-field-clash"],
)
def test_oneofschemas_that_cannot_be_written_are_compile_errors(make, message):
    one_of = make()
    holder = type("Holder", (CompiledSchema,), {"shape": fields.Nested(one_of)})
    with pytest.raises(CompileError, match=message) as raised:
        holder().compile_to_string()
    assert "'shape'" in str(raised.value)


def test_union_declarations_that_cannot_be_written():
    class Other(Schema):
        radius = fields.Float()

        class Meta:
            avro_name = "CircleSchema"

    with pytest.raises(CompileError, match="both be named 'CircleSchema'"):
        type(
            "H", (CompiledSchema,), {"u": Union({Circle: CircleSchema, Square: Other})}
        )().compile_to_string()
    with pytest.raises(CompileError, match="takes no default but None"):
        type(
            "H", (CompiledSchema,), {"u": Union({Circle: CircleSchema}, load_default=Circle(1.0))}
        )().compile_to_string()
    with pytest.raises(ValueError, match="must be a marshmallow Schema"):
        Union({Circle: dict})
    with pytest.raises(ValueError, match="at least one"):
        Union({})


def test_marshmallows_load_of_a_union_value_it_does_not_know():
    field_holder = type("H", (Schema,), {"u": Union({Circle: CircleSchema})})()
    with pytest.raises(ValidationError) as raised:
        field_holder.load({"u": {"Nope": {}}})
    assert raised.value.messages == {"u": ["'Nope' is not one of this union's records."]}
    with pytest.raises(ValidationError) as raised:
        field_holder.load({"u": [1]})
    assert raised.value.messages == {"u": ["Not a union value: a dict of one record name and its fields."]}


@pytest.fixture(scope="module")
def uncompiled(drawing, tmp_path_factory):
    """A Drawing that cannot be compiled (never, nothing cached): marshmallow's
    dump and load, tier 0's bytes; it stays so once attached."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv(compiler.CACHE_ENV, str(tmp_path_factory.mktemp("empty-cache")))
        monkeypatch.setattr(compiler, "_loaded", {})
        monkeypatch.setattr(schema_module, "_told_no_compiler", False)
        monkeypatch.setenv(compiler.COMPILE_ENV, "never")
        schema = Drawing()
        schema.dump_compiled(
            {"title": "", "main": None, "shapes": [], "pick": Square(1), "picks": [], "maybe": None}
        )
    assert schema.tier == "interpreter"
    return schema


@settings(max_examples=40, deadline=None)
@given(value=drawings)
def test_tier0_gives_the_compiled_codecs_bytes_and_values(drawing, uncompiled, value):
    data = drawing.dump_compiled(value)
    assert uncompiled.dump_compiled(value) == data
    assert uncompiled.load_compiled(data) == drawing.load_compiled(data) == value


def test_tier0_refuses_what_the_compiled_codec_refuses(drawing, uncompiled):
    base = {"title": "t", "main": None, "shapes": [], "pick": Square(1), "picks": [], "maybe": None}
    for field, value in (("main", "a string"), ("pick", 3), ("shapes", [Group("g", [3])])):
        errors = []
        for schema in (drawing, uncompiled):
            with pytest.raises(ValidationError) as raised:
                schema.dump_compiled({**base, field: value})
            errors.append(raised.value.messages)
        assert errors[0] == errors[1]


@pytest.mark.java
def test_java_reads_the_bytes_as_written(drawing, java):
    values = [
        {
            "title": "java",
            "main": Group("g", [Circle(0.25), Group("h", [Square(5)])]),
            "shapes": [Square(1), Circle(-2.5)],
            "pick": Circle(9.0),
            "picks": [Square(3)],
            "maybe": Circle(1.0),
        },
        {"title": "", "main": None, "shapes": [], "pick": Square(0), "picks": [], "maybe": None},
    ]
    written = [drawing.dump_compiled(value) for value in values]
    trips = java.roundtrip_each((drawing.avro_schema(), data) for data in written)
    for data, trip in zip(written, trips):
        assert trip.data == data and trip.trailing == 0
    first = json.loads(trips[0].json)
    # Avro's JSON names a union's branch: Java read the branch we wrote
    assert first["main"] == {
        "GroupSchema": {
            "name": "g",
            "members": [
                {"CircleSchema": {"radius": 0.25}},
                {"GroupSchema": {"name": "h", "members": [{"SquareSchema": {"side": 5}}]}},
            ],
        }
    }
    assert first["pick"] == {"CircleSchema": {"radius": 9.0}}
    assert first["maybe"] == {"CircleSchema": {"radius": 1.0}}


@dataclasses.dataclass
class Celsius:
    value: float


@dataclasses.dataclass
class Fahrenheit:
    value: float


class CelsiusSchema(Schema):
    value = fields.Float(required=True)

    @post_load
    def make(self, data, **kwargs):
        return Celsius(**data)


class FahrenheitSchema(Schema):
    value = fields.Float(required=True)

    @post_load
    def make(self, data, **kwargs):
        return Fahrenheit(**data)


class Reading(CompiledSchema):
    # two records with the same fields: only the branch tells them apart
    temperature = Union({Celsius: CelsiusSchema, Fahrenheit: FahrenheitSchema}, required=True)
    n = fields.Float(required=True)


@pytest.mark.parametrize("n_type", ["int", "double"])
def test_another_writers_data_keeps_the_branch_it_was_written_in(n_type):
    reading = Reading()
    writer = {**reading.avro_schema()}
    writer["fields"] = [dict(f) for f in writer["fields"]]
    writer["fields"][1]["type"] = n_type  # int -> double: promoted by the pair's one-pass codec
    out = io.BytesIO()
    fastavro.schemaless_writer(
        out, fastavro.parse_schema(writer), {"temperature": ("FahrenheitSchema", {"value": 451.0}), "n": 1}
    )
    assert reading.load_compiled(out.getvalue(), writer_schema=writer) == {
        "temperature": Fahrenheit(451.0),
        "n": 1.0,
    }


def test_two_type_names_of_one_schema_share_its_branch():
    class Boxes(OneOfSchema):
        type_schemas = {"square": SquareSchema, "box": SquareSchema}

        def get_obj_type(self, obj):
            return "box"

    class Holder(CompiledSchema):
        shape = fields.Nested(Boxes)

    holder = Holder()
    assert [b["name"] for b in holder.avro_schema()["fields"][0]["type"]] == ["SquareSchema"]
    data = holder.dump_compiled({"shape": Square(2)})
    assert holder.load_compiled(data) == {"shape": Square(2)}
    # marshmallow's own dump output (the uncompiled path) maps either name to the branch
    encoder = holder._plan().root.fields[0].value.encoder
    assert encoder.dump_datum({"side": 2, "type": "box"}) == ("SquareSchema", {"side": 2})
    assert encoder.dump_datum({"side": 2, "type": "square"}) == ("SquareSchema", {"side": 2})


def test_a_missing_value_of_a_union_that_allows_none_is_null(drawing, uncompiled):
    value = {"title": "t", "shapes": [], "pick": Square(1), "picks": []}  # no main, no maybe
    data = drawing.dump_compiled(value)
    assert uncompiled.dump_compiled(value) == data
    assert drawing.load_compiled(data) == {**value, "main": None, "maybe": None}
