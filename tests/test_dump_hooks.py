"""post_dump and hooks on nested schemas: marshmallow's dump, written as the compiled writer writes.

Such schemas dump through marshmallow (its output is what the hooks
change); the result must be the bytes the compiled writer gives for the
same values, and fastavro's bytes for marshmallow's output.
"""

import datetime as dt
import enum
import ipaddress
import uuid
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import Schema, ValidationError, fields, post_dump, pre_dump

from conftest import WHOLE_LIST, fastavro_bytes
from roastedavro import CompiledSchema

UTC = dt.timezone.utc


class Color(enum.Enum):
    RED = "r"
    GREEN = "g"


class Point(Schema):
    x = fields.Integer()
    at = fields.DateTime()


class Keyed(Schema):
    id = fields.UUID()


def every_field():
    return {
        "s": fields.String(),
        "i": fields.Integer(),
        "f": fields.Float(),
        "b": fields.Boolean(),
        "at": fields.DateTime(),
        "at_ms": fields.DateTime(metadata={"avro": "timestamp-millis"}),
        "aware": fields.AwareDateTime(),
        "naive": fields.NaiveDateTime(),
        "day": fields.Date(),
        "t": fields.Time(),
        "took": fields.TimeDelta(),
        "amount": fields.Decimal(places=2, metadata={"precision": 9}),
        "text_amount": fields.Decimal(places=3, as_string=True, metadata={"precision": 20}),
        "fixed_amount": fields.Decimal(
            places=2,
            metadata={
                "avro": {
                    "type": "fixed",
                    "name": "money",
                    "size": 8,
                    "logicalType": "decimal",
                    "precision": 18,
                    "scale": 2,
                }
            },
        ),
        "u": fields.UUID(),
        "uf": fields.UUID(metadata={"avro": "fixed"}),
        "color": fields.Enum(Color),
        "color_value": fields.Enum(Color, by_value=True),
        "pair": fields.Tuple((fields.Integer(), fields.UUID())),
        "times": fields.List(fields.DateTime()),
        "days": fields.Dict(keys=fields.String(), values=fields.Date()),
        "ip": fields.IP(),
        "blob": fields.Raw(metadata={"avro": "bytes"}),
        "maybe": fields.Date(allow_none=True),
        "const": fields.Constant(5),
        "pluck": fields.Pluck(Keyed, "id"),
        "point": fields.Nested(Point),
        "points": fields.Nested(Point, many=True),
    }


Plain = type("Plain", (CompiledSchema,), every_field())


def identity(self, data, **kwargs):
    return data


Hooked = type("Hooked", (CompiledSchema,), {**every_field(), "keep": post_dump(identity)})

MOMENT = dt.datetime(2024, 3, 1, 12, 30, 15, 123456, tzinfo=UTC)
RECORD = {
    "s": "héllo",
    "i": -7,
    "f": 1.25,
    "b": True,
    "at": MOMENT,
    "at_ms": dt.datetime(1969, 12, 31, 23, 59, 59, 999000),
    "aware": MOMENT.astimezone(dt.timezone(dt.timedelta(hours=-5))),
    "naive": dt.datetime(2000, 1, 1, 0, 0, 1),
    "day": dt.date(1, 1, 1),
    "t": dt.time(23, 59, 59, 999999),
    "took": dt.timedelta(days=-2, seconds=5),
    "amount": Decimal("-12.50"),
    "text_amount": Decimal("0.001"),
    "fixed_amount": Decimal("99.99"),
    "u": uuid.UUID(int=7),
    "uf": uuid.UUID(int=2**128 - 1),
    "color": Color.GREEN,
    "color_value": Color.RED,
    "pair": (3, uuid.UUID(int=9)),
    "times": [MOMENT, MOMENT.replace(year=1900)],
    "days": {"a": dt.date(2024, 2, 29)},
    "ip": ipaddress.ip_address("10.0.0.1"),
    "blob": b"\x00\xff",
    "maybe": None,
    "const": 5,
    "pluck": {"id": uuid.UUID(int=1)},
    "point": {"x": 1, "at": MOMENT},
    "points": [{"x": 2, "at": MOMENT}, {"x": 3, "at": MOMENT}],
}


@pytest.fixture(scope="module")
def schemas():
    return Plain().compile(), Hooked().compile()


def test_post_dump_gives_the_compiled_writers_bytes(schemas):
    plain, hooked = schemas
    assert hooked._roasted_codec.dump_through_marshmallow
    assert not plain._roasted_codec.dump_through_marshmallow
    assert hooked.dump_compiled(RECORD) == plain.dump_compiled(RECORD)
    records = [RECORD, {**RECORD, "maybe": dt.date(2020, 1, 2), "times": []}]
    assert hooked.dump_compiled(records, many=True) == plain.dump_compiled(records, many=True)
    assert hooked.load_compiled(hooked.dump_compiled(RECORD)) == plain.load_compiled(
        plain.dump_compiled(RECORD)
    )


@settings(max_examples=200, deadline=None)
@given(
    at=st.datetimes(
        min_value=dt.datetime(1, 1, 2),
        max_value=dt.datetime(9999, 12, 30),
        timezones=st.sampled_from([UTC, dt.timezone(dt.timedelta(hours=3))]),
    ),
    naive=st.datetimes(),
    day=st.dates(),
    t=st.times(),
    seconds=st.integers(-(10**9), 10**9),
    cents=st.integers(-(10**7) + 1, 10**7 - 1),
    ident=st.uuids(),
)
def test_random_values_give_the_same_bytes(schemas, at, naive, day, t, seconds, cents, ident):
    plain, hooked = schemas
    record = {
        **RECORD,
        "at": at,
        "aware": at,
        "times": [at],
        "naive": naive,
        "day": day,
        "days": {"k": day},
        "t": t,
        "took": dt.timedelta(seconds=seconds),
        "amount": Decimal(cents).scaleb(-2),
        "u": ident,
        "uf": ident,
        "pair": (1, ident),
    }
    assert hooked.dump_compiled(record) == plain.dump_compiled(record)


class Inner(Schema):
    n = fields.Integer()
    at = fields.DateTime()

    @pre_dump
    def double(self, obj, **kwargs):
        return {**obj, "n": obj["n"] * 2}

    @post_dump
    def plus_one(self, data, **kwargs):
        return {**data, "n": data["n"] + 1}


class Outer(CompiledSchema):
    inner = fields.Nested(Inner)
    inners = fields.List(fields.Nested(Inner))

    @post_dump
    def shout(self, data, **kwargs):
        return {**data, "inners": data["inners"][::-1]}


def test_nested_hooks_run_as_marshmallows_dump_runs_them():
    schema = Outer()
    obj = {"inner": {"n": 1, "at": MOMENT}, "inners": [{"n": 2, "at": MOMENT}, {"n": 3, "at": MOMENT}]}
    expected = {"inner": {"n": 3, "at": MOMENT}, "inners": [{"n": 7, "at": MOMENT}, {"n": 5, "at": MOMENT}]}
    assert schema.dump_compiled(obj) == fastavro_bytes(schema, expected)
    assert schema.load_compiled(schema.dump_compiled(obj)) == expected


def test_a_post_dump_output_that_cannot_be_written_names_the_field():
    class Broken(CompiledSchema):
        at = fields.DateTime()
        items = fields.List(fields.Date())

        @post_dump
        def spoil(self, data, **kwargs):
            return {**data, "items": ["2024-01-01", "not a date"]}

    schema = Broken()
    with pytest.raises(ValidationError) as error:
        schema.dump_compiled({"at": MOMENT, "items": []})
    assert error.value.messages == {"items": {1: ["Not a valid date."]}}

    class Dropped(CompiledSchema):
        n = fields.Integer()

        @post_dump
        def drop(self, data, **kwargs):
            return {}

    with pytest.raises(ValidationError) as error:
        Dropped().dump_compiled({"n": 1})
    assert error.value.messages == {"n": ["Missing data for required field."]}


class Doubled(Schema):
    n = fields.Integer()
    at = fields.DateTime()

    @pre_dump
    def double(self, obj, **kwargs):
        return {**obj, "n": obj["n"] * 2}


class Totals(Schema):
    n = fields.Integer()

    @pre_dump(**WHOLE_LIST)
    def summed(self, objs, many, **kwargs):
        return [{"n": sum(o["n"] for o in objs)}] if many else objs


class Holder(CompiledSchema):
    one = fields.Nested(Doubled)
    maybe = fields.Nested(Doubled, allow_none=True)
    several = fields.Nested(Doubled, many=True)
    listed = fields.List(fields.Nested(Doubled))
    totals = fields.Nested(Totals, many=True)


def test_nested_pre_dump_runs_inside_the_compiled_writer():
    schema = Holder().compile()
    assert not schema._roasted_codec.dump_through_marshmallow
    obj = {
        "one": {"n": 1, "at": MOMENT},
        "maybe": None,
        "several": [{"n": 2, "at": MOMENT}],
        "listed": [{"n": 3, "at": MOMENT}, {"n": 4, "at": MOMENT}],
        "totals": [{"n": 1}, {"n": 2}],
    }
    expected = {
        "one": {"n": 2, "at": MOMENT},
        "maybe": None,
        "several": [{"n": 4, "at": MOMENT}],
        "listed": [{"n": 6, "at": MOMENT}, {"n": 8, "at": MOMENT}],
        "totals": [{"n": 3}],
    }
    for record in (obj, {**obj, "maybe": {"n": 5, "at": MOMENT}}):
        want = {**expected, "maybe": None if record["maybe"] is None else {"n": 10, "at": MOMENT}}
        assert schema.dump_compiled(record) == fastavro_bytes(schema, want)
        assert schema.load_compiled(schema.dump_compiled(record)) == schema.load(schema.dump(record))


# -- what dumps or loads through marshmallow, and still gives its results --------


def test_dotted_attribute_overridden_get_attribute_and_pluck_hooks():
    from marshmallow import post_load

    class Dotted(CompiledSchema):
        name = fields.String(attribute="meta.name")
        at = fields.DateTime()

    class Upper(CompiledSchema):
        name = fields.String()
        at = fields.DateTime()

        def get_attribute(self, obj, attr, default):
            return obj.get(attr.upper(), default)

    class HookedKey(Schema):
        id = fields.Integer()

        @pre_dump
        def bump(self, obj, **kwargs):
            return {"id": obj["id"] + 1}

        @post_load
        def unwrap(self, data, **kwargs):
            return ("key", data["id"])

    class Plucked(CompiledSchema):
        key = fields.Pluck(HookedKey, "id")
        keys = fields.Pluck(HookedKey, "id", many=True)

    cases = [
        (Dotted(), {"meta": {"name": "ada"}, "at": MOMENT}, {"name": "ada", "at": MOMENT}),
        (Upper(), {"NAME": "ada", "AT": MOMENT}, {"name": "ada", "at": MOMENT}),
        (Plucked(), {"key": {"id": 1}, "keys": [{"id": 2}, {"id": 3}]}, {"key": 2, "keys": [3, 4]}),
    ]
    for schema, obj, written in cases:
        data = schema.dump_compiled(obj)
        assert data == fastavro_bytes(schema, written)
        loaded = schema.load_compiled(data)
        assert loaded == schema.load(
            {k: v.isoformat() if isinstance(v, dt.datetime) else v for k, v in written.items()}
        )
    assert Plucked().load_compiled(Plucked().dump_compiled(cases[2][1])) == {
        "key": ("key", 2),
        "keys": [("key", 3), ("key", 4)],
    }
