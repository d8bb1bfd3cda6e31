"""Property-based tests: compiled codecs against marshmallow + fastavro.

The oracles, for every record ``obj`` that fits a schema:

1. ``dump_compiled(obj)`` is byte for byte ``fastavro.schemaless_writer`` of
   marshmallow's ``dump(obj)`` with ``avro_schema()``;
2. ``load_compiled(dump_compiled(obj))`` is marshmallow's
   ``load(dump(obj))`` -- compared strictly: same types, same key order,
   NaN equal to NaN and 0.0 distinct from -0.0.

Compiling is slow (seconds per schema, cached on disk by source), so the
random-schema tests draw few schemas and many records for each one.
"""

from __future__ import annotations

import copy
import decimal
import itertools
import math
import struct
from dataclasses import dataclass, field as dc_field
from types import MappingProxyType, SimpleNamespace
from typing import Any

import fastavro
import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st
from marshmallow import Schema, ValidationError, fields, validate

from conftest import fastavro_bytes, fastavro_read
from roastedavro import CompiledSchema, DecodeError
from fuzzing import examples

# ---------------------------------------------------------------------------
# comparing results
# ---------------------------------------------------------------------------


def assert_same(actual, expected, path="$"):
    """Equality that also checks exact types, dict key order, NaN and -0.0."""
    assert type(actual) is type(expected), (
        f"{path}: {type(actual).__name__} {actual!r} != {type(expected).__name__} {expected!r}"
    )
    if isinstance(expected, dict):
        assert list(actual) == list(expected), f"{path}: keys {list(actual)} != {list(expected)}"
        for key in expected:
            assert_same(actual[key], expected[key], f"{path}[{key!r}]")
    elif isinstance(expected, list):
        assert len(actual) == len(expected), f"{path}: length {len(actual)} != {len(expected)}"
        for index, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{path}[{index}]")
    elif isinstance(expected, float):
        if math.isnan(expected):
            assert math.isnan(actual), f"{path}: {actual!r} != nan"
        else:
            assert actual == expected and math.copysign(1, actual) == math.copysign(1, expected), (
                f"{path}: {actual!r} != {expected!r}"
            )
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"


def messages_of(call):
    with pytest.raises(ValidationError) as info:
        call()
    return info.value.messages


def check_oracles(schema, obj):
    """Both oracles for one record, plus the buffer types load accepts."""
    original = copy.deepcopy(obj)
    dumped = schema.dump(obj)
    expected_bytes = fastavro_bytes(schema, dumped)
    data = schema.dump_compiled(obj)
    assert type(data) is bytes
    assert data == expected_bytes, (obj, dumped)
    assert_same(obj, original)  # dump_compiled left its input alone
    expected = schema.load(dumped)
    assert_same(schema.load_compiled(data), expected)
    assert_same(schema.load_compiled(bytearray(data)), expected)
    assert_same(schema.load_compiled(memoryview(data)), expected)
    return data


def check_many(schema, objs):
    original = copy.deepcopy(objs)
    dumped = schema.dump(objs, many=True)
    data = schema.dump_compiled(objs, many=True)
    assert data == fastavro_bytes(schema, dumped, many=True)
    assert_same(objs, original)
    assert_same(schema.load_compiled(data, many=True), schema.load(dumped, many=True))
    return data


# ---------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
# around every varint length boundary (zig-zag: 63/-64 fit one byte)
LONG_EDGES = [
    INT64_MIN,
    INT64_MAX,
    0,
    -1,
    1,
    63,
    64,
    -64,
    -65,
    8191,
    8192,
    -8192,
    -8193,
    INT64_MIN + 1,
    INT64_MAX - 1,
    2**31,
    -(2**31) - 1,
    INT32_MIN,
    INT32_MAX,
]
INT_EDGES = [
    INT32_MIN,
    INT32_MAX,
    0,
    -1,
    1,
    63,
    64,
    -64,
    -65,
    8191,
    8192,
    -8192,
    -8193,
    INT32_MIN + 1,
    INT32_MAX - 1,
]

longs = st.one_of(st.sampled_from(LONG_EDGES), st.integers(INT64_MIN, INT64_MAX))
ints32 = st.one_of(st.sampled_from(INT_EDGES), st.integers(INT32_MIN, INT32_MAX))
finite_floats = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, -1.5, 5e-324, 1.7976931348623157e308, 2.2250738585072014e-308]),
    st.floats(allow_nan=False, allow_infinity=False),
)
special_floats = st.sampled_from(
    [math.nan, -math.nan, math.inf, -math.inf, struct.unpack("<d", b"\x01\x00\x00\x00\x00\x00\xf8\x7f")[0]]
)
any_floats = st.one_of(finite_floats, special_floats, st.floats())
texts = st.one_of(
    st.sampled_from(["", "a", "é", "日本語", "\U0001f600", "\x00", "a\x00b", "x" * 300]),
    st.text(max_size=20),
)
map_keys = st.one_of(st.sampled_from(["", "k", "ключ", "\U0001f511"]), st.text(max_size=6))


# ---------------------------------------------------------------------------
# random schemas: a spec tree, the classes built from it, records fitting it
# ---------------------------------------------------------------------------


@dataclass
class ValueSpec:
    kind: str  # string int long double bool list dict nested nested_many
    allow_none: bool = False
    allow_nan: bool = False  # double
    inner: Any = None  # ValueSpec (list, dict) or RecordSpec (nested*)
    plain_keys: bool = False  # dict: no keys= field


@dataclass
class FieldSpec:
    name: str
    data_key: str | None
    value: ValueSpec
    load_default: Any = None
    has_load_default: bool = False
    dump_default: Any = None
    has_dump_default: bool = False


@dataclass
class RecordSpec:
    name: str
    fields: list[FieldSpec]
    compiled: bool = True  # CompiledSchema or plain marshmallow Schema (as a nested schema)
    cls: type | None = dc_field(default=None, repr=False)


_counter = itertools.count()

# Field names that shadow a schema's own attributes cannot be declared.
FORBIDDEN_NAMES = set(dir(CompiledSchema)) | set(vars(CompiledSchema()))
# Names the code generator uses itself, Cython/Python keywords and builtins:
# a field may well be called any of these.
TRICKY_NAMES = [
    "self",
    "obj",
    "objs",
    "w",
    "r",
    "record",
    "depth",
    "source",
    "data",
    "error",
    "field_no",
    "view",
    "acquired",
    "result",
    "count",
    "index",
    "item",
    "MISSING",
    "PATH_NONE",
    "PATH_INDEX",
    "DumpError",
    "LoadFallback",
    "part0",
    "index0",
    "key0",
    "part1",
    "index1",
    "key1",
    "int",
    "long",
    "float",
    "double",
    "object",
    "bint",
    "char",
    "cdef",
    "struct",
    "class",
    "def",
    "None",
    "True",
    "lambda",
    "import",
    "list",
    "dict",
    "str",
    "type",
    "len",
    "value",
    "null",
    "string",
    "boolean",
    "array",
    "map",
    "bytes",
    "enum",
    "fixed",
    "a_count",
    "a_item",
    "a_items",
    "a_value",
    "a_key",
    "a_map",
    "a_number",
    "write_long",
    "read_long",
    "max_depth",
    "max_items",
    "isfinite",
    "cython",
    "marshmallow",
    "_",
    "__x",
]
avro_names = st.one_of(
    st.sampled_from(TRICKY_NAMES),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True),
)
field_names = avro_names.filter(lambda n: n not in FORBIDDEN_NAMES and not n.startswith("__"))

SCALARS = ["string", "long", "int", "double", "bool"]


@st.composite
def value_specs(draw, depth, tree):
    """A field's value type; ``tree`` collects the records of one schema tree."""
    choices = list(SCALARS)
    if depth < 3:
        choices += ["list", "dict", "nested", "nested_many"]
    kind = draw(st.sampled_from(choices))
    spec = ValueSpec(kind, allow_none=draw(st.booleans()))
    if kind == "double":
        spec.allow_nan = draw(st.booleans())
    elif kind in ("list", "dict"):
        inner = draw(st.sampled_from(SCALARS + (["nested"] if depth < 2 else [])))
        if inner == "nested":
            spec.inner = ValueSpec(
                "nested", allow_none=draw(st.booleans()), inner=draw(nested_records(depth + 1, tree))
            )
        else:
            spec.inner = draw(value_specs_scalar(inner))
        spec.plain_keys = kind == "dict" and draw(st.booleans())
    elif kind in ("nested", "nested_many"):
        spec.inner = draw(nested_records(depth + 1, tree))
    return spec


@st.composite
def value_specs_scalar(draw, kind):
    spec = ValueSpec(kind, allow_none=draw(st.booleans()))
    if kind == "double":
        spec.allow_nan = draw(st.booleans())
    return spec


@st.composite
def nested_records(draw, depth, tree):
    # Sometimes the same schema class again: one Avro record, written in
    # full the first time and by name afterwards.
    if tree and draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from(tree))
    return draw(record_specs(depth, tree))


SCALAR_DEFAULTS = {
    "string": st.sampled_from(["", "dflt", "é"]),
    "long": st.sampled_from([0, -1, 2**40, INT64_MIN]),
    "int": st.sampled_from([0, 7, INT32_MAX]),
    "double": st.sampled_from([0.0, -2.5, 1e100]),
    "bool": st.booleans(),
}


@st.composite
def record_specs(draw, depth, tree):
    count = draw(st.integers(1, 8 if depth == 0 else 4))
    pool = draw(st.lists(field_names, min_size=2 * count, max_size=2 * count, unique=True))
    names = pool[:count]
    keyed = [draw(st.booleans()) for _ in range(count)]
    taken = {name for name, has_key in zip(names, keyed) if not has_key}
    specs = []
    for name, has_key in zip(names, keyed):
        data_key = None
        if has_key:
            data_key = draw(st.sampled_from(sorted(set(pool) - taken)))
            taken.add(data_key)
        value = draw(value_specs(depth, tree))
        spec = FieldSpec(name, data_key, value)
        # defaults: None for nullable fields, a value for scalars
        choice = draw(st.integers(0, 5))
        if choice == 0 and value.allow_none:
            spec.load_default, spec.has_load_default = None, True
        elif choice == 1 and value.kind in SCALAR_DEFAULTS:
            spec.load_default, spec.has_load_default = draw(SCALAR_DEFAULTS[value.kind]), True
        if value.kind in SCALAR_DEFAULTS and draw(st.integers(0, 3)) == 0:
            spec.dump_default, spec.has_dump_default = draw(SCALAR_DEFAULTS[value.kind]), True
        specs.append(spec)
    record = RecordSpec(f"Gen{next(_counter)}", specs, compiled=depth == 0 or draw(st.booleans()))
    build_class(record)
    tree.append(record)
    return record


def build_value_field(spec: ValueSpec, **kwargs) -> fields.Field:
    kwargs["allow_none"] = spec.allow_none
    if spec.kind == "string":
        return fields.String(**kwargs)
    if spec.kind == "long":
        return fields.Integer(**kwargs)
    if spec.kind == "int":
        return fields.Integer(metadata={"avro": "int"}, **kwargs)
    if spec.kind == "double":
        return fields.Float(allow_nan=spec.allow_nan, **kwargs)
    if spec.kind == "bool":
        return fields.Boolean(**kwargs)
    if spec.kind == "list":
        return fields.List(build_value_field(spec.inner), **kwargs)
    if spec.kind == "dict":
        keys = None if spec.plain_keys else fields.String()
        return fields.Dict(keys=keys, values=build_value_field(spec.inner), **kwargs)
    if spec.kind == "nested":
        return fields.Nested(spec.inner.cls, **kwargs)
    if spec.kind == "nested_many":
        return fields.Nested(spec.inner.cls, many=True, **kwargs)
    raise AssertionError(spec.kind)


def build_class(record: RecordSpec) -> type:
    attrs = {}
    for spec in record.fields:
        kwargs = {}
        if spec.data_key is not None:
            kwargs["data_key"] = spec.data_key
        if spec.has_load_default:
            kwargs["load_default"] = spec.load_default
        if spec.has_dump_default:
            kwargs["dump_default"] = spec.dump_default
        attrs[spec.name] = build_value_field(spec.value, **kwargs)
    attrs["__module__"] = __name__
    base = CompiledSchema if record.compiled else Schema
    record.cls = type(record.name, (base,), attrs)
    return record.cls


# Values of other Python types that each field's _serialize converts, as
# marshmallow's dump does (the codec's slow path): drawn now and then.
LOOSE = {
    "string": st.one_of(
        st.integers(),
        st.floats(allow_nan=False),
        st.booleans(),
        st.text(max_size=5).map(lambda t: t.encode("utf-8")),
    ),
    "long": st.one_of(
        st.booleans(),
        st.integers(-(2**53), 2**53).map(float),
        st.integers(-1000, 1000).map(str),
        st.integers(INT64_MIN, INT64_MAX).map(decimal.Decimal),
    ),
    "int": st.one_of(
        st.booleans(), st.integers(INT32_MIN, INT32_MAX).map(float), st.integers(-1000, 1000).map(str)
    ),
    "double": st.one_of(
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
        st.sampled_from([decimal.Decimal("1.1"), decimal.Decimal("-0")]),
    ),
}
# marshmallow 4's Boolean dumps any value unchanged and fastavro writes its
# truth value -- but only outside unions: choosing a union branch, fastavro
# accepts nothing but a bool. So these only go where no union encloses the
# field (the fixed Scalars schema). Only values whose truth value is what
# marshmallow's load makes of them, so that load(dump(obj)) works at all.
LOOSE_BOOLEANS = st.sampled_from(
    [0, 1, 0.0, 1.0, decimal.Decimal(0), decimal.Decimal(1), "yes", "1", "true", "on"]
)


def values_for(spec: ValueSpec):
    if spec.kind == "string":
        strategy = texts
    elif spec.kind == "long":
        strategy = longs
    elif spec.kind == "int":
        strategy = ints32
    elif spec.kind == "double":
        strategy = any_floats if spec.allow_nan else finite_floats
    elif spec.kind == "bool":
        strategy = st.booleans()
    elif spec.kind == "list":
        strategy = st.lists(values_for(spec.inner), max_size=4)
    elif spec.kind == "dict":
        strategy = st.dictionaries(map_keys, values_for(spec.inner), max_size=4)
    elif spec.kind == "nested":
        strategy = records_for(spec.inner)
    elif spec.kind == "nested_many":
        strategy = st.lists(records_for(spec.inner), max_size=3)
    else:
        raise AssertionError(spec.kind)
    if spec.kind in LOOSE:
        strategy = st.one_of(strategy, strategy, strategy, LOOSE[spec.kind])
    if spec.allow_none:
        strategy = st.one_of(st.none(), strategy)
    return strategy


def as_objects(record: RecordSpec, obj: dict) -> SimpleNamespace:
    """The same record as plain objects (attributes instead of keys); maps stay dicts."""
    by_name = {spec.name: spec.value for spec in record.fields}
    return SimpleNamespace(**{name: value_as_objects(by_name[name], value) for name, value in obj.items()})


def value_as_objects(spec: ValueSpec, value):
    if value is None:
        return None
    if spec.kind == "nested":
        return as_objects(spec.inner, value)
    if spec.kind == "nested_many":
        return [as_objects(spec.inner, item) for item in value]
    if spec.kind == "list":
        return [value_as_objects(spec.inner, item) for item in value]
    if spec.kind == "dict":
        return {key: value_as_objects(spec.inner, item) for key, item in value.items()}
    return value


def records_for(record: RecordSpec):
    """Records that fit ``record``: every field present, or missing when it has a dump default."""
    required = {}
    optional = {}
    for spec in record.fields:
        strategy = values_for(spec.value)
        (optional if spec.has_dump_default else required)[spec.name] = strategy
    return st.fixed_dictionaries(required, optional=optional)


@st.composite
def schemas(draw):
    """A CompiledSchema class (in ``.cls``) with up to three levels of nested records."""
    tree: list[RecordSpec] = []  # the records of this schema, for reuse
    return draw(record_specs(0, tree))


# No shrinking: every shrink step would compile another schema. A failure
# shows the schema spec and the records hypothesis drew.
RANDOM_SCHEMA_SETTINGS = settings(
    max_examples=examples(20),
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
RECORDS_PER_SCHEMA = 30


@pytest.mark.fuzz
@RANDOM_SCHEMA_SETTINGS
@given(data=st.data())
def test_random_schemas_match_marshmallow_and_fastavro(data):
    record = data.draw(schemas(), label="schema")
    schema = record.cls()
    note(f"avro schema: {schema.avro_schema()!r}")
    assert schema.avro_schema()["name"] == record.name
    fastavro.parse_schema(schema.avro_schema())  # a valid Avro schema
    schema.compile()
    records = []
    for _ in range(RECORDS_PER_SCHEMA):
        obj = data.draw(records_for(record), label="record")
        data_bytes = check_oracles(schema, obj)
        check_load_leaves_input_alone(schema, data_bytes)
        # the same record as objects, and as a mapping that is not a dict
        objects = as_objects(record, obj)
        assert schema.dump_compiled(objects) == fastavro_bytes(schema, schema.dump(objects)) == data_bytes
        assert schema.dump_compiled(MappingProxyType(obj)) == data_bytes
        records.append(obj)
    # many=True: one Avro array of all of them, and of none
    check_many(schema, records)
    check_many(schema, [])
    # a schema instance created with many=True uses the array form by default
    many_schema = record.cls(many=True)
    assert many_schema.dump_compiled(records) == schema.dump_compiled(records, many=True)
    assert_same(
        many_schema.load_compiled(schema.dump_compiled(records, many=True)),
        schema.load(schema.dump(records, many=True), many=True),
    )


def check_load_leaves_input_alone(schema, data):
    buffer = bytearray(data)
    loaded = schema.load_compiled(buffer)
    assert bytes(buffer) == data
    # the result shares nothing the codec keeps: changing it changes no later load
    snapshot = copy.deepcopy(loaded)
    scribble(loaded)
    assert_same(schema.load_compiled(data), snapshot)


def scribble(value):
    if isinstance(value, dict):
        for key in list(value):
            scribble(value[key])
        value["__scribbled__"] = object()
    elif isinstance(value, list):
        for item in value:
            scribble(item)
        value.append(object())


# ---------------------------------------------------------------------------
# fixed schemas, records drawn by hypothesis
# ---------------------------------------------------------------------------


class Leaf(Schema):  # a plain marshmallow schema used as a nested record
    label = fields.String()
    weight = fields.Float(allow_none=True)


class Middle(CompiledSchema):
    leaf = fields.Nested(Leaf)
    leaves = fields.List(fields.Nested(Leaf))
    maybe_leaf = fields.Nested(Leaf, allow_none=True)
    tags = fields.List(fields.String(), allow_none=True)


class Scalars(CompiledSchema):
    s = fields.String()
    i = fields.Integer()
    f = fields.Float()
    b = fields.Boolean()
    ns = fields.String(allow_none=True)
    ni = fields.Integer(allow_none=True)
    nf = fields.Float(allow_none=True)
    nb = fields.Boolean(allow_none=True)
    i32 = fields.Integer(metadata={"avro": "int"})
    ni32 = fields.Integer(metadata={"avro": "int"}, allow_none=True, data_key="ni32_key")
    nan_ok = fields.Float(allow_nan=True)
    with_default = fields.Integer(allow_none=True, load_default=5)


class Composite(CompiledSchema):
    middle = fields.Nested(Middle)
    middles = fields.Nested(Middle, many=True)
    maybe_middles = fields.Nested(Middle, many=True, allow_none=True)
    counts = fields.Dict(keys=fields.String(), values=fields.Integer(allow_none=True))
    counts32 = fields.Dict(keys=fields.String(), values=fields.Integer(metadata={"avro": "int"}))
    matrix = fields.List(fields.List(fields.Integer()))
    by_name = fields.Dict(
        keys=fields.String(), values=fields.Nested(Leaf, allow_none=True), data_key="byName"
    )
    label = fields.String(dump_default="unnamed")


class Narrow(CompiledSchema):
    single = fields.Float(metadata={"avro": "float"})
    maybe = fields.Float(metadata={"avro": "float"}, allow_none=True, allow_nan=True)
    singles = fields.List(fields.Float(metadata={"avro": "float"}))


@pytest.fixture(scope="module")
def compiled():
    return {cls: cls().compile() for cls in (Scalars, Composite, Narrow)}


def nullable(strategy):
    return st.one_of(st.none(), strategy)


scalars_records = st.fixed_dictionaries(
    {
        "s": st.one_of(texts, LOOSE["string"]),
        "i": st.one_of(longs, LOOSE["long"]),
        "f": st.one_of(finite_floats, LOOSE["double"]),
        "b": st.one_of(st.booleans(), LOOSE_BOOLEANS),
        "ns": nullable(texts),
        "ni": nullable(longs),
        "nf": nullable(finite_floats),
        "nb": nullable(st.booleans()),
        "i32": ints32,
        "ni32": nullable(ints32),
        "nan_ok": any_floats,
        "with_default": nullable(longs),
    }
)
leaf_records = st.fixed_dictionaries({"label": texts, "weight": nullable(finite_floats)})
middle_records = st.fixed_dictionaries(
    {
        "leaf": leaf_records,
        "leaves": st.lists(leaf_records, max_size=3),
        "maybe_leaf": nullable(leaf_records),
        "tags": nullable(st.lists(texts, max_size=3)),
    }
)
composite_records = st.fixed_dictionaries(
    {
        "middle": middle_records,
        "middles": st.lists(middle_records, max_size=3),
        "maybe_middles": nullable(st.lists(middle_records, max_size=2)),
        "counts": st.dictionaries(map_keys, nullable(longs), max_size=5),
        "counts32": st.dictionaries(map_keys, ints32, max_size=5),
        "matrix": st.lists(st.lists(longs, max_size=4), max_size=4),
        "by_name": st.dictionaries(map_keys, nullable(leaf_records), max_size=3),
    },
    optional={"label": texts},
)

FIXED_SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@FIXED_SETTINGS
@given(obj=scalars_records)
def test_scalars(compiled, obj):
    check_oracles(compiled[Scalars], obj)


@FIXED_SETTINGS
@given(obj=composite_records)
def test_composite(compiled, obj):
    check_oracles(compiled[Composite], obj)


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(objs=st.lists(composite_records, max_size=4))
def test_composite_many(compiled, objs):
    check_many(compiled[Composite], objs)


@FIXED_SETTINGS
@given(obj=scalars_records, bad=special_floats)
def test_nan_in_float_without_allow_nan(compiled, obj, bad):
    """Writes fine (marshmallow dumps it); load raises marshmallow's own error."""
    schema = compiled[Scalars]
    obj = dict(obj, f=bad)
    dumped = schema.dump(obj)
    data = schema.dump_compiled(obj)
    assert data == fastavro_bytes(schema, dumped)
    assert messages_of(lambda: schema.load_compiled(data)) == messages_of(lambda: schema.load(dumped))
    good = dict(obj, f=1.0)
    dumped_many = schema.dump([good, obj], many=True)
    data_many = schema.dump_compiled([good, obj], many=True)
    assert data_many == fastavro_bytes(schema, dumped_many, many=True)
    assert messages_of(lambda: schema.load_compiled(data_many, many=True)) == messages_of(
        lambda: schema.load(dumped_many, many=True)
    )


@settings(max_examples=50, deadline=None)
@given(
    obj=scalars_records,
    big=st.one_of(st.integers(max_value=INT32_MIN - 1), st.integers(min_value=INT32_MAX + 1)),
)
def test_int32_out_of_range_is_a_validation_error(compiled, obj, big):
    # fastavro writes such a value as a long varint, which no reader of an
    # Avro int accepts; the compiled codec refuses it with the field's path
    schema = compiled[Scalars]
    assert list(messages_of(lambda: schema.dump_compiled(dict(obj, i32=big)))) == ["i32"]
    # dump errors name the field as the dumped object does (not its data_key)
    assert list(messages_of(lambda: schema.dump_compiled(dict(obj, ni32=big)))) == ["ni32"]
    many = messages_of(lambda: schema.dump_compiled([obj, dict(obj, i32=big)], many=True))
    assert list(many) == [1] and list(many[1]) == ["i32"]


@given(
    obj=scalars_records,
    big=st.one_of(st.integers(max_value=INT64_MIN - 1), st.integers(min_value=INT64_MAX + 1)),
)
@settings(max_examples=50, deadline=None)
def test_int64_out_of_range_is_a_validation_error(compiled, obj, big):
    schema = compiled[Scalars]
    messages = messages_of(lambda: schema.dump_compiled(dict(obj, i=big)))
    assert list(messages) == ["i"]


narrow_values = st.one_of(
    st.floats(width=32, allow_nan=False, allow_infinity=False),
    st.floats(min_value=-3.4e38, max_value=3.4e38),  # rounded to the nearest float32
    st.sampled_from([0.0, -0.0, 1e-45, 1.4e-45, 3.4028234663852886e38, 1e-50]),
)


@FIXED_SETTINGS
@given(
    obj=st.fixed_dictionaries(
        {
            "single": narrow_values,
            "maybe": nullable(st.one_of(narrow_values, st.sampled_from([math.nan, math.inf, -math.inf]))),
            "singles": st.lists(narrow_values, max_size=4),
        }
    )
)
def test_float32_is_written_like_fastavro(compiled, obj):
    """The 32-bit override is lossy: compare with marshmallow on fastavro's reading."""
    schema = compiled[Narrow]
    dumped = schema.dump(obj)
    data = schema.dump_compiled(obj)
    assert data == fastavro_bytes(schema, dumped)
    assert_same(schema.load_compiled(data), schema.load(fastavro_read(schema, data)))


@given(
    obj=st.fixed_dictionaries(
        {"single": st.sampled_from([1e39, -1e300, 3.5e38]), "maybe": st.none(), "singles": st.just([])}
    )
)
@settings(max_examples=5, deadline=None)
def test_float32_overflow_is_a_validation_error(compiled, obj):
    # fastavro silently writes +-inf here; the codec refuses a finite value
    # that would turn into an infinity, naming the field
    schema = compiled[Narrow]
    assert list(messages_of(lambda: schema.dump_compiled(obj))) == ["single"]


@FIXED_SETTINGS
@given(obj=composite_records)
def test_fixed_schemas_never_mutate(compiled, obj):
    schema = compiled[Composite]
    before = copy.deepcopy(obj)
    data = schema.dump_compiled(obj)
    assert_same(obj, before)
    schema.dump_compiled([obj, obj], many=True)
    assert_same(obj, before)
    buffer = bytearray(data)
    first = schema.load_compiled(buffer)
    assert bytes(buffer) == data
    expected = copy.deepcopy(first)
    scribble(first)
    assert_same(schema.load_compiled(data), expected)


@FIXED_SETTINGS
@given(obj=composite_records, cut=st.integers(min_value=1))
def test_truncated_input_is_a_decode_error(compiled, obj, cut):
    schema = compiled[Composite]
    data = schema.dump_compiled(obj)
    short = data[: (cut % len(data))]
    with pytest.raises(DecodeError):
        schema.load_compiled(short)
    with pytest.raises(DecodeError):
        schema.load_compiled(data + b"\x00")


# ---------------------------------------------------------------------------
# field names the generated code uses for itself, and Dict key fields
# ---------------------------------------------------------------------------


class LocalNames(CompiledSchema):
    # Declared before the collections: the writer function keeps these
    # values in locals of the same names as its collection bookkeeping
    # (part<N>/index<N>/key<N>, one set per collection nesting level).
    part0 = fields.String()
    index0 = fields.String(allow_none=True)
    key0 = fields.Integer()
    part1 = fields.String()
    index1 = fields.Float()
    key1 = fields.Boolean()
    xs = fields.List(fields.List(fields.Integer()))
    m = fields.Dict(keys=fields.String(), values=fields.List(fields.String()))


class CaseKey(fields.String):
    """A key field with its own conversions: lower case out, upper case in."""

    def _serialize(self, value, attr, obj, **kwargs):
        return super()._serialize(value, attr, obj, **kwargs).lower()

    def _deserialize(self, value, attr, data, **kwargs):
        return super()._deserialize(value, attr, data, **kwargs).upper()


class KeyFields(CompiledSchema):
    plain = fields.Dict(keys=fields.String(), values=fields.Integer())
    cased = fields.Dict(keys=CaseKey(), values=fields.Integer())
    short = fields.Dict(keys=fields.String(validate=validate.Length(max=3)), values=fields.Integer())


@pytest.fixture(scope="module")
def local_names():
    return LocalNames().compile()


@pytest.fixture(scope="module")
def key_fields():
    return KeyFields().compile()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    obj=st.fixed_dictionaries(
        {
            "part0": texts,
            "index0": nullable(texts),
            "key0": longs,
            "part1": texts,
            "index1": finite_floats,
            "key1": st.booleans(),
            "xs": st.lists(st.lists(longs, max_size=3), max_size=3),
            "m": st.dictionaries(map_keys, st.lists(texts, max_size=3), max_size=3),
        }
    )
)
def test_field_names_used_by_the_generated_code(local_names, obj):
    check_oracles(local_names, obj)


small_ints = st.integers(-3, 3)


@settings(max_examples=100, deadline=None)
@given(plain=st.dictionaries(st.one_of(small_ints, small_ints.map(str)), small_ints, max_size=6))
def test_dict_keys_that_dump_to_the_same_string(key_fields, plain):
    # String keys converts 1 and "1" alike: marshmallow's dump has one entry
    check_oracles(key_fields, {"plain": plain, "cased": {}, "short": {}})


@settings(max_examples=100, deadline=None)
@given(cased=st.dictionaries(st.sampled_from(["a", "A", "b", "B", "Ab", ""]), small_ints, max_size=4))
def test_dict_key_field_serialize_on_dump(key_fields, cased):
    schema = key_fields
    obj = {"plain": {}, "cased": cased, "short": {}}
    assert schema.dump_compiled(obj) == fastavro_bytes(schema, schema.dump(obj))


@settings(max_examples=100, deadline=None)
@given(cased=st.dictionaries(st.sampled_from(["a", "b", "ab", ""]), small_ints, max_size=4))
def test_dict_key_field_deserialize_on_load(key_fields, cased):
    # the bytes as fastavro writes them, so only load is under test
    schema = key_fields
    dumped = schema.dump({"plain": {}, "cased": cased, "short": {}})
    assert_same(schema.load_compiled(fastavro_bytes(schema, dumped)), schema.load(dumped))


@settings(max_examples=100, deadline=None)
@given(short=st.dictionaries(st.text(max_size=6), small_ints, max_size=4))
def test_dict_key_field_validators_on_load(key_fields, short):
    schema = key_fields
    obj = {"plain": {}, "cased": {}, "short": short}
    dumped = schema.dump(obj)
    data = schema.dump_compiled(obj)
    assert data == fastavro_bytes(schema, dumped)
    try:
        expected = schema.load(dumped)
    except ValidationError as error:
        assert messages_of(lambda: schema.load_compiled(data)) == error.messages
    else:
        assert_same(schema.load_compiled(data), expected)
