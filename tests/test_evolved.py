"""One-pass compiled readers of another version's data (roastedavro.evolved).

Where the writer's record only has other fields, or the same in another
order, ``load_compiled(data, writer_schema=...)`` reads the writer's bytes
with a codec generated for the pair. Its results must be marshmallow's
``load`` of what fastavro's resolving reader makes of the same bytes, and
its errors those of the Rearranger that serves the pair until the codec is
built (tier 0, another engine).
"""

from __future__ import annotations

import io
import json
import math

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import ValidationError, fields, post_load, validate

from roastedavro import CompiledSchema, DecodeError
from roastedavro._runtime import SchemaCodec
from roastedavro._tier0 import Rearranger
from roastedavro.codegen import generate_module
from roastedavro.evolved import written_layout
from roastedavro.flags import CompileFlags


class Address(CompiledSchema):
    street = fields.String(required=True)
    number = fields.Integer(required=True)


class Account(CompiledSchema):
    id = fields.Integer(required=True)
    name = fields.String(required=True, validate=validate.Length(max=40))
    score = fields.Float(required=True)
    tags = fields.List(fields.String(), load_default=[], dump_default=[])
    home = fields.Nested(Address, allow_none=True, load_default=None)
    active = fields.Boolean(load_default=True, dump_default=True)
    secret = fields.String(dump_only=True, dump_default="-")
    level = fields.Integer(load_default=1, dump_default=1)


def reader_avro() -> dict:
    return Account().avro_schema()


def writer_with(reorder=None, drop=(), extra=(), retype=None) -> dict:
    """Account's Avro schema changed as a writer's older or newer version."""
    schema = json.loads(json.dumps(reader_avro()))
    fields_ = [field for field in schema["fields"] if field["name"] not in drop]
    for field in fields_:
        if retype and field["name"] in retype:
            field["type"] = retype[field["name"]]
        field.pop("default", None)  # a writer's defaults play no part
    fields_ += list(extra)
    if reorder:
        fields_ = reorder(fields_)
    schema["fields"] = fields_
    return schema


EXTRA = (
    {
        "name": "history",
        "type": {
            "type": "array",
            "items": {
                "type": "record",
                "name": "Event",
                "fields": [{"name": "at", "type": "long"}, {"name": "what", "type": "string"}],
            },
        },
    },
    {"name": "labels", "type": {"type": "map", "values": ["null", "string", "Event"]}},
    {"name": "colour", "type": {"type": "enum", "name": "Colour", "symbols": ["RED", "BLUE"]}},
    {"name": "digest", "type": {"type": "fixed", "name": "Digest", "size": 4}},
)

#: writer versions, each read in one pass (one module compiled per version)
WRITERS = {
    # fields moved, four the reader lacks skipped (first)
    "moved": writer_with(reorder=lambda fs: fs[-4:] + fs[:-4][::-1], extra=EXTRA),
    # an older version: no tags, home, active, secret or level (defaults)
    "older": writer_with(drop=("tags", "home", "active", "secret", "level")),
    # the nested Address laid out otherwise too: fields moved, one it lacks
    "nested": writer_with(
        reorder=lambda fs: fs[::-1],
        retype={
            "home": [
                "null",
                {
                    "type": "record",
                    "name": "Address",
                    "fields": [
                        {"name": "number", "type": "long"},
                        {"name": "unit", "type": "string"},
                        {"name": "street", "type": "string"},
                    ],
                },
            ]
        },
    ),
}


def writer_value(draw_or_values: dict, schema: dict) -> dict:
    return {field["name"]: draw_or_values[field["name"]] for field in schema["fields"]}


def resolved(data: bytes, writer: dict) -> dict:
    return fastavro.schemaless_reader(
        io.BytesIO(data), fastavro.parse_schema(writer), fastavro.parse_schema(reader_avro())
    )


def written(value: dict, writer: dict) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(writer), value)
    return out.getvalue()


def marshmallow_load(datum: dict):
    # what the reader's schema loads from the resolved record: dump_only
    # fields are not loaded
    datum = {key: value for key, value in datum.items() if key != "secret"}
    return Account().load(datum)


@pytest.fixture(scope="module")
def account():
    schema = Account()
    for writer in WRITERS.values():
        schema.load_compiled(written(sample(writer), writer), writer_schema=json.dumps(writer))
    return schema


def rearranging(schema_class):
    """A compiled schema whose pairs are served by the Rearranger alone (as
    before a pair's one-pass codec is built)."""
    schema = schema_class()
    schema.compile()
    schema.load_compiled.__self__.pairs.args[2].codec = None
    return schema


@pytest.fixture(scope="module")
def rearranged():
    schema = rearranging(Account)
    for writer in WRITERS.values():
        schema.load_compiled(written(sample(writer), writer), writer_schema=json.dumps(writer))
    return schema


def served_by(schema, writer):
    return schema.load_compiled.__self__.pairs(json.dumps(writer), False)[0]


def sample(writer: dict) -> dict:
    values = {
        "id": 7,
        "name": "ada",
        "score": 2.5,
        "tags": ["a", "b"],
        "home": {"street": "Main", "number": 3, "unit": "4b"},
        "active": False,
        "secret": "s",
        "level": 4,
        "history": [{"at": 1, "what": "open"}],
        "labels": {"x": None, "y": "z", "e": {"at": 2, "what": "w"}},
        "colour": "BLUE",
        "digest": b"abcd",
    }
    return writer_value(values, writer)


def test_each_version_is_read_by_its_own_compiled_codec(account, rearranged):
    for writer in WRITERS.values():
        assert isinstance(served_by(account, writer), SchemaCodec)
        assert isinstance(served_by(rearranged, writer), Rearranger)


@pytest.mark.parametrize("version", sorted(WRITERS))
def test_reads_as_marshmallow_loads_what_fastavro_resolves(account, rearranged, version):
    writer = WRITERS[version]
    data = written(sample(writer), writer)
    expected = marshmallow_load(resolved(data, writer))
    assert account.load_compiled(data, writer_schema=json.dumps(writer)) == expected
    assert rearranged.load_compiled(data, writer_schema=json.dumps(writer)) == expected
    # every form of the writer's schema comes to the same codec
    assert account.load_compiled(data, writer_schema=writer) == expected


def test_defaults_are_new_objects_each_time(account):
    writer = WRITERS["older"]
    data = written(sample(writer), writer)
    first = account.load_compiled(data, writer_schema=json.dumps(writer))
    first["tags"].append("changed")
    second = account.load_compiled(data, writer_schema=json.dumps(writer))
    assert second["tags"] == [] and second["level"] == 1 and second["active"] is True


strings = st.text(max_size=8)
records = st.fixed_dictionaries(
    {
        "id": st.integers(-(2**31), 2**31 - 1),
        "name": st.text(max_size=45),
        "score": st.floats(allow_nan=True),
        "tags": st.lists(strings, max_size=3),
        "home": st.none()
        | st.fixed_dictionaries(
            {"street": strings, "unit": strings, "number": st.integers(-(2**63), 2**63 - 1)}
        ),
        "active": st.booleans(),
        "secret": strings,
        "level": st.integers(-(2**63), 2**63 - 1),
        "history": st.lists(
            st.fixed_dictionaries({"at": st.integers(-(2**63), 2**63 - 1), "what": strings}), max_size=2
        ),
        "labels": st.dictionaries(strings, st.none() | strings, max_size=2),
        "colour": st.sampled_from(["RED", "BLUE"]),
        "digest": st.binary(min_size=4, max_size=4),
    }
)


def outcome(load, data, many=False):
    try:
        return ("value", repr(load(data, many)))
    except ValidationError as error:
        return ("invalid", error.messages, repr(error.valid_data))
    except DecodeError as error:
        return ("malformed", error.reason, error.offset)


@settings(max_examples=80, deadline=None)
@given(value=records, version=st.sampled_from(sorted(WRITERS)), many=st.booleans())
def test_any_record_reads_as_fastavro_and_marshmallow_say(account, rearranged, value, version, many):
    writer = WRITERS[version]
    if many:
        schema = {"type": "array", "items": writer}
        data = written([writer_value(value, writer)] * 2, schema)
        resolved_many = fastavro.schemaless_reader(
            io.BytesIO(data),
            fastavro.parse_schema(schema),
            fastavro.parse_schema({"type": "array", "items": reader_avro()}),
        )
        datum = [{k: v for k, v in item.items() if k != "secret"} for item in resolved_many]
        expect = ("load", Account(many=True), datum)
    else:
        data = written(writer_value(value, writer), writer)
        datum = {k: v for k, v in resolved(data, writer).items() if k != "secret"}
        expect = ("load", Account(), datum)
    _, reference, datum = expect
    try:
        expected = ("value", repr(reference.load(datum)))
    except ValidationError as error:
        expected = ("invalid", error.messages, repr(error.valid_data))

    def load(schema):
        return lambda data, many: schema.load_compiled(data, many, writer_schema=json.dumps(writer))

    assert outcome(load(account), data, many) == expected
    assert outcome(load(rearranged), data, many) == expected


@settings(max_examples=120, deadline=None)
@given(data=st.data(), version=st.sampled_from(sorted(WRITERS)), many=st.booleans())
def test_damaged_data_fails_as_the_rearranger_says(account, rearranged, data, version, many):
    writer = WRITERS[version]
    value = sample(writer)
    good = written([value] * 2, {"type": "array", "items": writer}) if many else written(value, writer)
    damaged = bytearray(good)
    for index, byte in data.draw(
        st.lists(st.tuples(st.integers(0, len(good) - 1), st.integers(0, 255)), max_size=3)
    ):
        damaged[index] = byte
    damaged = bytes(damaged[: data.draw(st.none() | st.integers(0, len(good)))])

    def load(schema):
        return lambda data, many: schema.load_compiled(data, many, writer_schema=json.dumps(writer))

    one_pass, two_passes = outcome(load(account), damaged, many), outcome(load(rearranged), damaged, many)
    # the same verdict; where the bytes are malformed the offsets may
    # differ: the Rearranger checks their structure first and a string's
    # UTF-8 when it reads the rearranged bytes (its offset is theirs), one
    # pass reports the first fault in the writer's bytes
    assert one_pass[0] == two_passes[0]
    if one_pass[0] != "malformed":
        assert one_pass == two_passes
    else:
        assert 0 <= one_pass[2] <= len(damaged)


def test_truncated_data_names_the_offset_in_the_writers_bytes(account):
    writer = WRITERS["moved"]
    data = written(sample(writer), writer)
    with pytest.raises(DecodeError) as raised:
        account.load_compiled(data[:-2], writer_schema=json.dumps(writer))
    assert raised.value.offset <= len(data) - 2
    with pytest.raises(DecodeError, match="trailing"):
        account.load_compiled(data + b"\x00", writer_schema=json.dumps(writer))


def test_a_value_marshmallow_refuses_is_its_error(account):
    writer = WRITERS["older"]
    value = {**sample(writer), "score": math.nan, "name": "x" * 41}
    data = written(value, writer)
    with pytest.raises(ValidationError) as raised:
        account.load_compiled(data, writer_schema=json.dumps(writer))
    with pytest.raises(ValidationError) as expected:
        marshmallow_load(resolved(data, writer))
    assert raised.value.messages == expected.value.messages


class Hooked(CompiledSchema):
    class Meta:
        avro_name = "Account"

    id = fields.Integer(required=True)
    name = fields.String(required=True)
    level = fields.Integer(load_default=1)

    @post_load
    def make(self, data, **kwargs):
        return ("made", data["id"], data["name"], data["level"])


def test_post_load_runs_on_the_one_pass_result():
    writer = writer_with(drop=("level",))
    schema = Hooked()
    value = sample(writer)
    data = written(value, writer)
    assert schema.load_compiled(data, writer_schema=writer) == ("made", 7, "ada", 1)
    assert isinstance(served_by(schema, writer), SchemaCodec)


@pytest.mark.parametrize(
    "change, served",
    [
        ({"retype": {"score": "long"}}, "one pass"),  # a long promoted to a double
        (
            {
                "retype": {
                    "home": [
                        "null",
                        {
                            "type": "record",
                            "name": "Address",
                            "fields": [
                                {"name": "number", "type": "long"},
                                {"name": "street", "type": "string"},
                            ],
                        },
                    ]
                }
            },
            "one pass",
        ),  # a nested record's fields moved
        (
            {
                "retype": {
                    "home": [
                        "null",
                        {
                            "type": "record",
                            "name": "Address",
                            "fields": [
                                {"name": "number", "type": "int"},
                                {"name": "street", "type": "string"},
                            ],
                        },
                    ]
                }
            },
            "one pass",
        ),  # a nested int read as a long
        (
            {
                "retype": {
                    "home": [
                        {
                            "type": "record",
                            "name": "Address",
                            "fields": [
                                {"name": "number", "type": "long"},
                                {"name": "street", "type": "string"},
                            ],
                        },
                        "null",
                    ]
                }
            },
            "one pass, moved",
        ),  # the union's branches swapped: the Rearranger moves the field's value
        (
            {
                "retype": {"level": "long", "name": "string"},
                "drop": ("active",),
                "reorder": lambda fs: fs[::-1],
            },
            "one pass",
        ),
    ],
)
def test_which_pairs_are_read_in_one_pass(change, served):
    from roastedavro.avro import parse_schema

    writer = writer_with(**change)
    schema = Account()
    schema.compile()
    plan = schema._plan()
    layout = written_layout(plan.root, plan.records, plan.schema, parse_schema(writer), CompileFlags())
    assert (layout is not None) == (served == "one pass")
    # with the pair's Rearranger, the values the field's own code cannot
    # read are moved into this schema's bytes first
    mover = Rearranger.build(parse_schema(writer), plan.schema)
    moved = written_layout(plan.root, plan.records, plan.schema, parse_schema(writer), CompileFlags(), mover)
    assert (moved is not None) == served.startswith("one pass")
    assert (moved is not None and any(step.move >= 0 for step in moved.steps)) == (
        served == "one pass, moved"
    )
    pair = served_by(schema, writer)
    assert isinstance(pair, SchemaCodec) == served.startswith("one pass")
    assert isinstance(pair, Rearranger) == (served == "rearranged")
    data = written(sample(writer), writer)
    assert schema.load_compiled(data, writer_schema=writer) == marshmallow_load(resolved(data, writer))


def test_the_generated_reader_skips_reads_and_fills_defaults():
    from roastedavro.avro import parse_schema

    plan = Account()._plan()
    layout = written_layout(
        plan.root,
        plan.records,
        plan.schema,
        parse_schema(writer_with(drop=("level",), extra=EXTRA)),
        CompileFlags(),
    )
    source = generate_module(plan.root, plan.records, "Account", "", plan.fingerprint, written=layout).source
    pair = source[source.index("cdef dict read_Account_written") :]
    assert "history: not read" in pair and "digest: not read" in pair
    # the four fields it lacks are skipped by one interpreter of the writer's schema
    assert pair.count("self.bound.writer_types.skip_at(r, ") == 4
    assert "writer_types_2" not in source
    assert "level: not written, read from its default" in pair
    assert "return self.read_Account_written(r, depth)" in source
    # the schema's own source is unchanged by the pair
    assert "read_Account_written" not in Account().compile_to_string()


def test_under_the_hot_policy_the_compiled_codec_replaces_the_rearranger(monkeypatch):
    from roastedavro import tiers

    monkeypatch.setenv("ROASTEDAVRO_COMPILE", "hot")
    # as where nothing was built before (the account fixture built this pair)
    monkeypatch.setattr(tiers.Engine, "_find", lambda self, where: None)
    schema = Account()
    schema.compile()
    writer = WRITERS["older"]
    data = written(sample(writer), writer)
    text = json.dumps(writer)
    first = schema.load_compiled(data, writer_schema=text)
    rearranger = served_by(schema, writer)
    assert isinstance(rearranger, Rearranger) and rearranger.calls == 1
    pairs = schema.load_compiled.__self__.pairs.args[2]
    (evolved,) = [pair for pair in pairs.evolved if pair.rearranger is rearranger]
    evolved.engine.compile()  # what crossing HOT_AFTER starts in the background
    assert isinstance(served_by(schema, writer), SchemaCodec)
    # the writer schema object kept by the codec is served by the new codec
    assert schema.load_compiled(data, writer_schema=text) == first
    assert rearranger.calls == 1
    # and so is anyone still holding the Rearranger (a call under way when
    # the codec was installed, a pair not yet stored)
    assert rearranger.replaced_by is served_by(schema, writer)


def test_an_int_read_as_a_long_keeps_the_writers_range_check():
    writer = writer_with(retype={"id": "int"})
    schema = Account()
    schema.compile()
    data = bytearray(written(sample(writer), writer))
    data[0:1] = b"\x80\x80\x80\x80\x80\x40"  # 2**40 zig-zagged: no Avro int
    assert isinstance(served_by(schema, writer), SchemaCodec)  # one pass, promoted
    with pytest.raises(DecodeError, match="out of range for Avro int") as raised:
        schema.load_compiled(bytes(data), writer_schema=writer)
    assert raised.value.offset == 0


def test_a_field_name_a_writer_repeats_is_read_once():
    from roastedavro.avro import parse_schema

    writer = writer_with(drop=("tags", "home", "active", "secret", "level"))
    writer["fields"].append({"name": "id", "type": "long"})  # the fastavro dialect allows it
    parsed = parse_schema(writer, dialect="fastavro")
    plan = Account()._plan()
    assert written_layout(plan.root, plan.records, plan.schema, parsed, CompileFlags()) is None
    value = {**sample(writer_with(drop=("tags", "home", "active", "secret", "level"))), "id": 7}
    data = written(value, writer_with(drop=("tags", "home", "active", "secret", "level"))) + b"\x10"
    assert Account().load_compiled(data, writer_schema=parsed)["id"] == 7


# -- nested records laid out otherwise, in records, arrays and maps ------------------


class Member(CompiledSchema):
    name = fields.String(required=True)
    role = fields.String(load_default="dev")  # the writer has none: its default


class Team(CompiledSchema):
    title = fields.String(required=True)
    lead = fields.Nested(Member, required=True)
    members = fields.List(fields.Nested(Member), required=True)
    by_name = fields.Dict(keys=fields.String(), values=fields.Nested(Member), required=True)


#: the writer's Member is smaller than the schema's (no role; age the schema
#: lacks is skipped), and Team's fields come in another order
MEMBER_V1 = {
    "type": "record",
    "name": "Member",
    "fields": [{"name": "age", "type": "int"}, {"name": "name", "type": "string"}],
}
TEAM_V1 = {
    "type": "record",
    "name": "Team",
    "fields": [
        {"name": "members", "type": {"type": "array", "items": MEMBER_V1}},
        {"name": "lead", "type": "Member"},
        {"name": "by_name", "type": {"type": "map", "values": "Member"}},
        {"name": "title", "type": "string"},
    ],
}


def team_reference(data: bytes) -> dict:
    values = fastavro.schemaless_reader(
        io.BytesIO(data), fastavro.parse_schema(TEAM_V1), fastavro.parse_schema(Team().avro_schema())
    )
    return Team().load(values)


@pytest.fixture(scope="module")
def team():
    schema = Team()
    schema.compile()
    value = {"title": "t", "lead": {"age": 1, "name": "a"}, "members": [], "by_name": {}}
    schema.load_compiled(written(value, TEAM_V1), writer_schema=TEAM_V1)
    return schema


members = st.lists(
    st.fixed_dictionaries({"age": st.integers(-(2**31), 2**31 - 1), "name": strings}), max_size=60
)


@settings(max_examples=60, deadline=None)
@given(
    lead=members.filter(bool),
    crew=members,
    by_name=st.dictionaries(strings, members.filter(bool).map(lambda found: found[0]), max_size=3),
    title=strings,
)
def test_nested_records_of_another_layout_are_read_in_one_pass(team, lead, crew, by_name, title):
    value = {"title": title, "lead": lead[0], "members": crew, "by_name": by_name}
    data = written(value, TEAM_V1)
    assert isinstance(served_by(team, TEAM_V1), SchemaCodec)
    assert team.load_compiled(data, writer_schema=TEAM_V1) == team_reference(data)


def test_many_small_records_of_the_writer_are_not_refused():
    # 200 members of one byte each (a writer's Member with only a name):
    # fewer bytes than 200 of the schema's Member take, which bound the item
    # count where the schema reads its own data
    small = json.loads(json.dumps(TEAM_V1).replace('{"name": "age", "type": "int"}, ', ""))
    schema = Team()
    schema.compile()
    value = {"title": "", "lead": {"name": ""}, "by_name": {}, "members": [{"name": ""}] * 200}
    data = written(value, small)
    plan = schema._plan()
    from roastedavro.avro import parse_schema

    assert written_layout(
        plan.root, plan.records, plan.schema, parse_schema(small), CompileFlags()
    ).loose_counts
    schema.load_compiled(data, writer_schema=small)
    assert isinstance(served_by(schema, small), SchemaCodec)
    loaded = schema.load_compiled(data, writer_schema=small)
    assert loaded["members"] == [{"name": "", "role": "dev"}] * 200
    assert loaded == Team().load(
        fastavro.schemaless_reader(
            io.BytesIO(data), fastavro.parse_schema(small), fastavro.parse_schema(Team().avro_schema())
        )
    )
    with pytest.raises(DecodeError):
        schema.load_compiled(data[:-3], writer_schema=small)


def test_the_nested_reader_is_its_own_function():
    from roastedavro.avro import parse_schema

    plan = Team()._plan()
    layout = written_layout(plan.root, plan.records, plan.schema, parse_schema(TEAM_V1), CompileFlags())
    assert [nested.record.ident for nested in layout.nested] == ["Member"]
    # the writer's Member is no smaller than the schema's: block counts keep their bound
    assert layout.loose_counts is False
    source = generate_module(plan.root, plan.records, "Team", "", plan.fingerprint, written=layout).source
    reader = source[source.index("cdef dict read_Member_written") :]
    assert "age: not read" in reader and "role: not written, read from its default" in reader
    # lead, the members' items and the map's values: each by the writer's layout
    assert source.count("self.read_Member_written(r, depth + 1)") == 3


def test_two_writer_records_read_as_one_are_left_to_the_rearranger():
    # the writer's P and Q are both read as the schema's P (Java's rule: any
    # record reads as any record); one reader of P cannot follow both layouts
    class P(CompiledSchema):
        x = fields.Integer(required=True)
        y = fields.Integer(required=True)

    class Root(CompiledSchema):
        a = fields.Nested(P, required=True)
        b = fields.Nested(P, required=True)

    p = {
        "type": "record",
        "name": "P",
        "fields": [{"name": "x", "type": "long"}, {"name": "y", "type": "long"}],
    }
    q = {
        "type": "record",
        "name": "Q",
        "fields": [{"name": "y", "type": "long"}, {"name": "x", "type": "long"}],
    }
    writer = {
        "type": "record",
        "name": "Root",
        "fields": [{"name": "a", "type": p}, {"name": "b", "type": q}],
    }
    schema = Root()
    schema.compile()
    data = written({"a": {"x": 1, "y": 2}, "b": {"x": 3, "y": 4}}, writer)
    for _ in range(2):
        assert schema.load_compiled(data, writer_schema=writer) == {
            "a": {"x": 1, "y": 2},
            "b": {"x": 3, "y": 4},
        }
    assert isinstance(served_by(schema, writer), Rearranger)


def test_a_dropped_field_name_the_writer_repeats_is_skipped_by_its_own_type():
    from roastedavro.avro import parse_schema

    class R(CompiledSchema):
        a = fields.Integer(required=True)
        b = fields.String(required=True)

    writer = parse_schema(
        {
            "type": "record",
            "name": "R",
            "fields": [
                {"name": "zz", "type": "int"},
                {"name": "a", "type": "long"},
                {"name": "zz", "type": "string"},
                {"name": "b", "type": "string"},
            ],
        },
        dialect="fastavro",
    )
    # zz=5, a=7, zz="hello", b="bee"
    data = bytes([10, 14, 10]) + b"hello" + bytes([6]) + b"bee"
    schema = R()
    schema.compile()
    for _ in range(2):
        assert schema.load_compiled(data, writer_schema=writer) == {"a": 7, "b": "bee"}
    assert isinstance(schema.load_compiled.__self__.pairs(writer, False)[0], SchemaCodec)
