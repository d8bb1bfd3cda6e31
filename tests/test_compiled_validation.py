"""Validators and load hooks on the compiled path: marshmallow's results, without marshmallow's load.

The oracle is marshmallow's own ``load`` of the same record. Valid records
must load without falling back to marshmallow; invalid ones must raise
marshmallow's exact messages and valid_data.
"""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import (
    Schema,
    ValidationError,
    fields,
    post_load,
    pre_load,
    validate,
    validates,
    validates_schema,
)

from conftest import WHOLE_LIST
from roastedavro import CompileFlags, CompiledSchema


def count_fallbacks(schema):
    """Calls of marshmallow's load made by the codec from now on."""
    codec = schema._roasted_codec
    calls = []
    original = codec.load_with_marshmallow

    def counting(data, many):
        calls.append(many)
        return original(data, many)

    codec.load_with_marshmallow = counting
    return calls


def outcome(load, data, **kwargs):
    try:
        return "ok", load(data, **kwargs)
    except ValidationError as error:
        return "error", error.messages, error.valid_data


def assert_same_as_marshmallow(schema, record, many=False):
    data = schema.dump_compiled(record, many=many)
    compiled = outcome(schema.load_compiled, data, many=many)
    reference = outcome(schema.load, schema.dump(record, many=many), many=many)
    assert compiled == reference
    return compiled


# -- field validators -----------------------------------------------------------


def odd(value):
    return value % 2 == 1  # a plain callable returning False fails


class Validated(CompiledSchema):
    qty = fields.Integer(validate=validate.Range(min=0, max=100, max_inclusive=False))
    price = fields.Float(validate=validate.Range(min=0, min_inclusive=False), allow_none=True)
    code = fields.String(validate=[validate.Length(min=1, max=4), validate.Regexp("^[A-Z]*$")])
    pin = fields.String(validate=validate.Length(equal=4))
    side = fields.String(validate=validate.OneOf(("buy", "sell")))
    kind = fields.String(validate=validate.OneOf({"a", "b"}))
    other = fields.String(validate=validate.NoneOf(["x"]))
    answer = fields.Integer(validate=validate.Equal(42))
    number = fields.Integer(validate=odd)
    tags = fields.List(fields.String(validate=validate.Length(max=3)), validate=validate.Length(max=3))
    scores = fields.Dict(
        keys=fields.String(validate=validate.Length(min=2)),
        values=fields.Integer(validate=validate.Range(min=0)),
    )
    pair = fields.Tuple(
        (fields.Integer(validate=validate.Range(max=9)), fields.String(validate=validate.Length(max=2)))
    )


GOOD = {
    "qty": 5,
    "price": 1.5,
    "code": "AB",
    "pin": "1234",
    "side": "buy",
    "kind": "a",
    "other": "y",
    "answer": 42,
    "number": 3,
    "tags": ["t"],
    "scores": {"ab": 1},
    "pair": (1, "xy"),
}


@pytest.fixture(scope="module")
def validated():
    return Validated().compile()


def test_valid_records_never_fall_back(validated):
    fallbacks = count_fallbacks(validated)
    assert validated._roasted_codec.load_through_marshmallow is False
    assert assert_same_as_marshmallow(validated, GOOD)[0] == "ok"
    assert assert_same_as_marshmallow(validated, [GOOD, GOOD], many=True)[0] == "ok"
    assert fallbacks == []


@pytest.mark.parametrize(
    "change",
    [
        {"qty": -1},
        {"qty": 100},
        {"price": 0.0},
        {"price": None},
        {"code": ""},
        {"code": "ABCDE"},
        {"code": "ab"},
        {"pin": "123"},
        {"side": "hold"},
        {"kind": "c"},
        {"other": "x"},
        {"answer": 41},
        {"number": 2},
        {"tags": ["a", "b", "c", "d"]},
        {"tags": ["long"]},
        {"scores": {"a": 1}},
        {"scores": {"ab": -1}},
        {"pair": (10, "xyz")},
        {"qty": -1, "pin": "", "scores": {"x": -1, "yy": -2}},
    ],
)
def test_each_validator_matches_marshmallow(validated, change):
    assert_same_as_marshmallow(validated, {**GOOD, **change})


@settings(max_examples=300, deadline=None)
@given(
    qty=st.integers(-3, 103),
    price=st.one_of(st.none(), st.floats(-1, 1, allow_nan=False)),
    code=st.text("ABab", max_size=6),
    pin=st.text("0123", max_size=6),
    side=st.sampled_from(["buy", "sell", "hold", ""]),
    tags=st.lists(st.text("ab", max_size=4), max_size=5),
    scores=st.dictionaries(st.text("xy", max_size=3), st.integers(-2, 2), max_size=3),
    pair=st.tuples(st.integers(5, 12), st.text("z", max_size=3)),
)
def test_random_records_match_marshmallow(validated, qty, price, code, pin, side, tags, scores, pair):
    record = {
        **GOOD,
        "qty": qty,
        "price": price,
        "code": code,
        "pin": pin,
        "side": side,
        "tags": tags,
        "scores": scores,
        "pair": pair,
    }
    assert_same_as_marshmallow(validated, record)


def test_a_field_class_with_its_own_validation_step():
    class Even(fields.Integer):
        def _validate(self, value):
            super()._validate(value)
            if value % 2:
                raise ValidationError("odd")

    class Numbers(CompiledSchema):
        n = Even(validate=validate.Range(max=10))

    schema = Numbers().compile()
    fallbacks = count_fallbacks(schema)
    assert assert_same_as_marshmallow(schema, {"n": 4}) == ("ok", {"n": 4})
    assert fallbacks == []
    assert assert_same_as_marshmallow(schema, {"n": 3})[1] == {"n": ["odd"]}
    assert assert_same_as_marshmallow(schema, {"n": 12})[1] == {"n": ["Must be less than or equal to 10."]}


def test_exceptions_other_than_validation_errors_propagate():
    def broken(value):
        raise ZeroDivisionError("validator bug")

    class Broken(CompiledSchema):
        n = fields.Integer(validate=broken)

    schema = Broken()
    with pytest.raises(ZeroDivisionError):
        schema.load_compiled(schema.dump_compiled({"n": 1}))
    with pytest.raises(ZeroDivisionError):
        schema.load({"n": 1})


# -- schema hooks, root and nested ----------------------------------------------


@dataclasses.dataclass
class Leg:
    qty: int
    side: str


class LegSchema(Schema):
    qty = fields.Integer()
    side = fields.String()

    @validates("qty")
    def positive(self, value, **kwargs):
        if value <= 0:
            raise ValidationError("qty must be positive")

    @validates_schema
    def no_big_sells(self, data, **kwargs):
        if data.get("side") == "sell" and data.get("qty", 0) > 100:
            raise ValidationError("sell at most 100", "qty")

    @post_load
    def make(self, data, **kwargs):
        return Leg(**data)


class Bundle(Schema):
    """pass_many hooks: the whole list with Nested(many=True)."""

    qty = fields.Integer()

    @validates_schema(**WHOLE_LIST)
    def not_empty(self, data, many, **kwargs):
        if many and not data:
            raise ValidationError("empty bundle")

    @post_load(**WHOLE_LIST)
    def count(self, data, many, **kwargs):
        return {"many": many, "total": sum(item["qty"] for item in data)} if many else data


@dataclasses.dataclass
class Order:
    id: int
    leg: Leg
    legs: list
    leg_list: list
    bundle: dict
    maybe: Leg | None


class OrderSchema(CompiledSchema):
    id = fields.Integer()
    leg = fields.Nested(LegSchema)
    legs = fields.Nested(LegSchema, many=True)
    leg_list = fields.List(fields.Nested(LegSchema))
    bundle = fields.Nested(Bundle, many=True)
    maybe = fields.Nested(LegSchema, allow_none=True)

    @validates_schema(skip_on_field_errors=False)
    def legs_match(self, data, **kwargs):
        if len(data.get("legs", ())) > 3:
            raise ValidationError("at most 3 legs")

    @post_load
    def make(self, data, **kwargs):
        return Order(**data)


LEG = {"qty": 1, "side": "buy"}
ORDER = {
    "id": 7,
    "leg": LEG,
    "legs": [LEG, {"qty": 2, "side": "sell"}],
    "leg_list": [LEG],
    "bundle": [{"qty": 1}, {"qty": 2}],
    "maybe": None,
}


@pytest.fixture(scope="module")
def orders():
    return OrderSchema().compile()


def test_hooks_run_on_the_compiled_result(orders):
    fallbacks = count_fallbacks(orders)
    assert orders._roasted_codec.load_through_marshmallow is False
    status, order = assert_same_as_marshmallow(orders, ORDER)
    assert status == "ok"
    assert order.leg == Leg(1, "buy") and order.legs[1] == Leg(2, "sell")
    assert order.bundle == {"many": True, "total": 3}
    assert assert_same_as_marshmallow(orders, {**ORDER, "maybe": LEG})[1].maybe == Leg(1, "buy")
    assert assert_same_as_marshmallow(orders, [ORDER, ORDER], many=True)[0] == "ok"
    assert fallbacks == []


@pytest.mark.parametrize(
    "change",
    [
        {"leg": {"qty": 0, "side": "buy"}},
        {"leg": {"qty": 101, "side": "sell"}},
        {"legs": [LEG, {"qty": -1, "side": "buy"}]},
        {"legs": [LEG] * 4},
        {"leg_list": [LEG, {"qty": 0, "side": "x"}]},
        {"bundle": []},
        {"maybe": {"qty": 0, "side": "buy"}},
        {"legs": [LEG] * 4, "leg": {"qty": 0, "side": "buy"}},
    ],
)
def test_hook_errors_match_marshmallow(orders, change):
    assert assert_same_as_marshmallow(orders, {**ORDER, **change})[0] == "error"


def test_many_with_errors_in_several_records(orders):
    records = [ORDER, {**ORDER, "leg": {"qty": 0, "side": "buy"}}, {**ORDER, "bundle": []}]
    assert assert_same_as_marshmallow(orders, records, many=True)[0] == "error"


def test_recursive_schema_with_post_load():
    @dataclasses.dataclass
    class Node:
        value: int
        children: list

    class NodeSchema(CompiledSchema):
        value = fields.Integer(validate=validate.Range(min=0))
        children = fields.List(fields.Nested(lambda: NodeSchema()))

        @post_load
        def make(self, data, **kwargs):
            return Node(**data)

    schema = NodeSchema().compile()
    fallbacks = count_fallbacks(schema)
    tree = {
        "value": 1,
        "children": [{"value": 2, "children": []}, {"value": 3, "children": [{"value": 4, "children": []}]}],
    }
    status, node = assert_same_as_marshmallow(schema, tree)
    assert node.children[1].children[0] == Node(4, [])
    assert fallbacks == []
    bad = {"value": 1, "children": [{"value": -2, "children": []}]}
    assert assert_same_as_marshmallow(schema, bad)[0] == "error"


def test_post_load_raising_validation_error():
    class Strict(CompiledSchema):
        n = fields.Integer()

        @post_load
        def check(self, data, **kwargs):
            if data["n"] == 13:
                raise ValidationError("unlucky")
            return data["n"]

    schema = Strict().compile()
    assert assert_same_as_marshmallow(schema, {"n": 1}) == ("ok", 1)
    assert assert_same_as_marshmallow(schema, {"n": 13})[1] == {"_schema": ["unlucky"]}


def test_skip_on_field_errors():
    class Checked(CompiledSchema):
        a = fields.Integer(validate=validate.Range(min=0))
        b = fields.Integer()

        @validates_schema  # skip_on_field_errors=True by default
        def skipped(self, data, **kwargs):
            raise ValidationError("skipped on field errors")

        @validates_schema(skip_on_field_errors=False)
        def always(self, data, **kwargs):
            if data.get("b") == 0:
                raise ValidationError("b is zero")

    schema = Checked().compile()
    assert assert_same_as_marshmallow(schema, {"a": -1, "b": 0})[1] == {
        "a": ["Must be greater than or equal to 0."],
        "_schema": ["b is zero"],
    }
    assert assert_same_as_marshmallow(schema, {"a": 1, "b": 1})[1] == {"_schema": ["skipped on field errors"]}


# -- what still loads through marshmallow ---------------------------------------


def test_pre_load_and_pass_original_load_through_marshmallow():
    class Rewritten(CompiledSchema):
        name = fields.String()

        @pre_load
        def lower(self, data, **kwargs):
            return {**data, "name": data["name"].lower()}

    class Original(CompiledSchema):
        name = fields.String()

        @post_load(pass_original=True)
        def keep(self, data, original, **kwargs):
            return (data, original)

    for cls in (Rewritten, Original):
        schema = cls().compile()
        assert schema._roasted_codec.load_through_marshmallow is True
        assert assert_same_as_marshmallow(schema, {"name": "ADA"})[0] == "ok"


def test_validate_false_skips_compiled_validators_and_hooks_but_not_post_load(orders):
    trusted = OrderSchema().compile(CompileFlags(validate=False))
    fallbacks = count_fallbacks(trusted)
    record = {**ORDER, "leg": {"qty": 0, "side": "buy"}, "legs": [LEG] * 4}
    order = trusted.load_compiled(trusted.dump_compiled(record))
    assert order.leg == Leg(0, "buy") and len(order.legs) == 4
    assert fallbacks == []
    checked = Validated().compile(CompileFlags(validate=False))
    assert checked.load_compiled(checked.dump_compiled({**GOOD, "qty": -1}))["qty"] == -1


def test_hooks_get_marshmallows_arguments_and_run_once_on_success():
    calls = []

    class Recorded(CompiledSchema):
        price = fields.Float(data_key="px", attribute="cost")
        qty = fields.Integer()

        @validates("price")
        def price_ok(self, value, **kwargs):
            calls.append(("validates", value, kwargs))

        @validates_schema(**WHOLE_LIST)
        def all_records(self, data, **kwargs):
            calls.append(("validates_schema many", len(data) if kwargs["many"] else data, kwargs))

        @validates_schema
        def each_record(self, data, **kwargs):
            calls.append(("validates_schema", dict(data), kwargs))

        @post_load(**WHOLE_LIST)
        def collection(self, data, **kwargs):
            calls.append(("post_load many", kwargs))
            return data

        @post_load
        def each(self, data, **kwargs):
            calls.append(("post_load", dict(data), kwargs))
            return data

    schema = Recorded(partial=("qty",)).compile()
    fallbacks = count_fallbacks(schema)
    for many, value in ((False, {"cost": 1.5, "qty": 2}), (True, [{"cost": 1.5, "qty": 2}] * 2)):
        calls.clear()
        compiled = schema.load_compiled(schema.dump_compiled(value, many=many), many=many)
        compiled_calls = list(calls)
        calls.clear()
        assert compiled == schema.load(schema.dump(value, many=many), many=many)
        assert compiled_calls == calls
    assert fallbacks == []


def test_validates_returning_missing_and_only_exclude():
    class Pruned(CompiledSchema):
        a = fields.Integer()
        b = fields.Integer()

        @validates("a")
        def drop_zero(self, value, **kwargs):
            from marshmallow import missing

            return missing if value == 0 else value

        @validates("b")
        def b_small(self, value, **kwargs):
            if value > 9:
                raise ValidationError("b too big")

    for schema in (Pruned(), Pruned(exclude=("b",)), Pruned(only=("a",))):
        for record in ({"a": 0, "b": 1}, {"a": 1, "b": 10}, {"a": 2, "b": 3}):
            record = {k: v for k, v in record.items() if k in schema.fields}
            assert_same_as_marshmallow(schema, record)


def test_validates_on_a_field_that_does_not_exist_raises_marshmallows_error():
    class Typo(CompiledSchema):
        a = fields.Integer()

        @validates("nope")
        def check(self, value, **kwargs):
            pass

    schema = Typo()
    with pytest.raises(ValueError, match="nope"):
        schema.load({"a": 1})
    with pytest.raises(ValueError, match="nope"):
        schema.load_compiled(schema.dump_compiled({"a": 1}))


class Contact(CompiledSchema):
    email = fields.Email()
    also = fields.String(validate=validate.Email(error="bad {input}"))


@pytest.fixture(scope="module")
def contacts():
    return Contact().compile()


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.emails(),
        st.text("ab@.-_ü+", max_size=12),
        st.builds(
            lambda u, d: f"{u}@{d}",
            st.text("a.+ü", max_size=4),
            st.sampled_from(["localhost", "example.com", "ex..com", "bücher.de", "-x.com"]),
        ),
    )
)
def test_email_matches_marshmallow(contacts, address):
    assert_same_as_marshmallow(contacts, {"email": address, "also": address})


def test_the_example_runs(capsys):
    import pathlib
    import runpy

    example = pathlib.Path(__file__).resolve().parents[1] / "examples" / "validated_orders.py"
    runpy.run_path(str(example), run_name="__main__")
    out = capsys.readouterr().out
    assert "loaded: Order(symbol='AAPL'" in out
    assert "same as marshmallow's load: True" in out
    assert "malformed: truncated data" in out
    assert "trusted: Order(symbol='aapl'" in out


def test_dump_only_values_are_neither_validated_nor_hooked_on_load():
    calls = []

    class Audited(Schema):
        n = fields.Integer()

        @post_load
        def seen(self, data, **kwargs):
            calls.append(data)
            return data

    class WithDumpOnly(CompiledSchema):
        a = fields.Integer()
        computed = fields.Integer(dump_only=True, validate=validate.Range(max=0))
        audit = fields.Nested(Audited, dump_only=True)

    schema = WithDumpOnly().compile()
    fallbacks = count_fallbacks(schema)
    data = schema.dump_compiled({"a": 1, "computed": 5, "audit": {"n": 1}})
    assert schema.load_compiled(data) == {"a": 1} == schema.load({"a": 1})
    assert calls == [] and fallbacks == []


def test_validators_on_nested_fields_see_the_hooked_value():
    def two_legs(value):
        if len(value) != 2:
            raise ValidationError("two legs")

    def small(leg):
        if leg.qty >= 50:
            raise ValidationError("too big")

    class Basket(CompiledSchema):
        legs = fields.Nested(LegSchema, many=True, validate=two_legs)
        main = fields.Nested(LegSchema, validate=small)

    schema = Basket().compile()
    fallbacks = count_fallbacks(schema)
    good = {"legs": [LEG, LEG], "main": LEG}
    assert assert_same_as_marshmallow(schema, good)[1]["main"] == Leg(1, "buy")
    assert fallbacks == []
    for change in ({"legs": [LEG]}, {"main": {"qty": 60, "side": "buy"}}):
        assert assert_same_as_marshmallow(schema, {**good, **change})[0] == "error"


def test_a_validator_returning_false_as_the_installed_marshmallow_treats_it():
    # marshmallow 3 fails the value; marshmallow 4 ignores what validators return
    class Odd(CompiledSchema):
        n = fields.Integer(validate=lambda n: n % 2 == 1)

    schema = Odd().compile()
    fallbacks = count_fallbacks(schema)
    assert assert_same_as_marshmallow(schema, {"n": 3}) == ("ok", {"n": 3})
    assert fallbacks == []
    assert_same_as_marshmallow(schema, {"n": 2})
