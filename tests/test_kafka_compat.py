"""roastedavro.kafka as a drop-in for confluent-kafka 2.16's Avro serializers:
the same signatures (positionally and by keyword), the same argument errors,
``return_record_name``, and the same values; and the uncompiled path (before
a codec is built, and for good under ``ROASTEDAVRO_COMPILE=never``) held to
the compiled codecs' bounds: no message reaches fastavro unchecked.

The oracle is confluent-kafka's own AvroSerializer/AvroDeserializer (fastavro
inside) with its in-memory registry client (``mock://``).
"""

from __future__ import annotations

import inspect
import json
import tracemalloc
import uuid

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from marshmallow import fields

pytest.importorskip("confluent_kafka.schema_registry.avro", reason="confluent-kafka is not installed")

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.avro import (  # noqa: E402
    AvroDeserializer as ConfluentDeserializer,
    AvroSerializer as ConfluentSerializer,
)
from confluent_kafka.schema_registry.rule_registry import RuleRegistry  # noqa: E402
from confluent_kafka.serialization import (  # noqa: E402
    MessageField,
    SerializationContext,
    SerializationError,
)

from avro_strategies import assert_same  # noqa: E402
from roastedavro import AvroCodec, CompiledSchema, CompileFlags, DecodeError  # noqa: E402
from roastedavro.avro import parse_schema  # noqa: E402
from roastedavro.kafka import (  # noqa: E402
    COMPILED,
    FALLBACK,
    AvroDeserializer,
    AvroSerializer,
    serde,
    wire_header,
)

TOPIC = {"subject.name.strategy.type": "TOPIC"}  # confluent-kafka 2.16 defaults to ASSOCIATED


def ctx(topic="t"):
    return SerializationContext(topic, MessageField.VALUE)


def new_registry():
    return SchemaRegistryClient.new_client({"url": f"mock://{uuid.uuid4().hex}"})


def varint(n: int) -> bytes:
    """Avro's zig-zag varint of a long."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


class ManualCompiler:
    """A background compiler that never builds: the codec is 'not ready yet'."""

    def __init__(self):
        self.jobs = []

    def submit(self, key, make, what="codec"):
        from concurrent.futures import Future

        future = Future()
        self.jobs.append(future)
        return future


@pytest.fixture
def uncached(monkeypatch):
    """Slots start on the uncompiled path even when the compile cache has the codec."""
    monkeypatch.setattr(serde, "_cached", lambda make: None)


# -- the uncompiled path is bounded ------------------------------------------------

NULLS = {
    "type": "record",
    "name": "Nulls",
    "namespace": "bomb",
    "fields": [{"name": "n", "type": {"type": "array", "items": "null"}}],
}


def _registered(registry, schema, subject="t-value") -> int:
    return registry.register_schema(subject, Schema(json.dumps(schema), "AVRO"))


def test_a_16_byte_bomb_is_a_clean_error_under_compile_never(monkeypatch):
    # a schema no cache holds, and no compiling allowed: the uncompiled path for good
    monkeypatch.setenv("ROASTEDAVRO_COMPILE", "never")
    schema = dict(NULLS, name=f"Nulls{uuid.uuid4().hex[:8]}")
    registry = new_registry()
    schema_id = _registered(registry, schema)
    message = wire_header(schema_id) + varint(2**62) + b"\x00"  # 2^62 nulls announced
    assert len(message) == 16
    errors = []
    reader = AvroDeserializer(registry, on_compiled=lambda what, error: errors.append(error))
    assert reader.prepare(schema_id) is None  # nothing is compiled under never
    assert reader.wait_compiled(60)
    assert reader.path(schema_id) == FALLBACK
    assert errors == []
    tracemalloc.start()
    try:
        with pytest.raises(DecodeError, match="items per block") as raised:
            reader(message, ctx())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert raised.value.offset == 5  # the count, just after the header
    assert peak < 1_000_000
    # a message within the bounds is read
    assert reader(wire_header(schema_id) + varint(3) + b"\x00", ctx()) == {"n": [None] * 3}


def test_zero_size_items_are_held_to_the_messages_item_budget_before_compile(uncached):
    # 5 million nulls in 9 bytes: within max_items, past the budget of
    # len(message) + item_allowance; fastavro alone builds the list
    registry = new_registry()
    schema_id = _registered(registry, NULLS)
    message = wire_header(schema_id) + varint(5_000_000) + b"\x00"
    compiler = ManualCompiler()
    reader = AvroDeserializer(registry, compiler=compiler)
    with pytest.raises(DecodeError, match="item_allowance"):
        reader(message, ctx())
    assert reader.path(schema_id) == FALLBACK and len(compiler.jobs) == 1
    # the allowance is the deserializer's flags', as the compiled codec's
    roomy = AvroDeserializer(registry, compiler=None, flags=CompileFlags(item_allowance=6_000_000))
    assert len(roomy(message, ctx())["n"]) == 5_000_000


LIST = {
    "type": "record",
    "name": "Cell",
    "namespace": "bomb",
    "fields": [{"name": "v", "type": "int"}, {"name": "next", "type": ["null", "Cell"]}],
}


def _nested(depth: int) -> bytes:
    return b"".join(varint(i) + varint(1) for i in range(depth)) + varint(depth) + varint(0)


def test_max_depth_is_the_flags_on_both_paths(uncached):
    registry = new_registry()
    schema_id = _registered(registry, LIST)
    flags = CompileFlags(max_depth=10)
    fallback = AvroDeserializer(registry, compiler=None, flags=flags)
    deep, shallow = wire_header(schema_id) + _nested(30), wire_header(schema_id) + _nested(5)
    with pytest.raises(DecodeError, match="nested more than") as raised:
        fallback(deep, ctx())
    assert raised.value.offset > 5
    value = fallback(shallow, ctx())
    assert fallback.path(schema_id) == FALLBACK
    assert_same(value, ConfluentDeserializer(registry)(shallow, ctx()))
    # the compiled codec with the same flags refuses the same message
    with pytest.raises(DecodeError, match="nested more than"):
        AvroCodec(LIST, flags).load(deep[5:])


TRADE = {
    "type": "record",
    "name": "Trade",
    "namespace": "compat",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "junk", "type": {"type": "array", "items": "null"}},
        {"name": "fees", "type": {"type": "map", "values": "double"}},
    ],
}
TRADE_V2 = {
    "type": "record",
    "name": "Trade",
    "namespace": "compat",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "fees", "type": {"type": "map", "values": "double"}},
        {"name": "desk", "type": "string", "default": "main"},
    ],
}


def test_a_resolving_reader_checks_the_writers_bytes_first(uncached):
    registry = new_registry()
    schema_id = _registered(registry, TRADE)
    reader = AvroDeserializer(registry, TRADE_V2, compiler=None)
    good = ConfluentSerializer(registry, json.dumps(TRADE), conf=TOPIC)(
        {"id": 1, "tags": ["a"], "junk": [None], "fees": {"x": 0.5}}, ctx()
    )
    expected = ConfluentDeserializer(registry, json.dumps(TRADE_V2))(good, ctx())
    assert_same(reader(good, ctx()), expected)
    assert reader.stats == {FALLBACK: 1}
    # the reader skips `junk`: 2^62 nulls that fastavro would skip one by one
    bomb = wire_header(schema_id) + varint(1) + varint(0) + varint(2**62) + varint(0)
    with pytest.raises(DecodeError, match="items per block") as raised:
        reader(bomb, ctx())
    assert raised.value.offset == 7
    with pytest.raises(DecodeError, match="trailing"):
        reader(good + b"\x00", ctx())


class Cart(CompiledSchema):
    class Meta:
        avro_name = "Cart"
        avro_namespace = "compat"

    id = fields.Integer(required=True)
    items = fields.List(fields.String(), required=True)


def test_a_compiled_schema_reader_is_bounded_before_compile(uncached):
    registry = new_registry()
    writer = Cart().avro_schema()
    writer["fields"].append({"name": "junk", "type": {"type": "array", "items": "null"}})
    schema_id = _registered(registry, writer)
    reader = AvroDeserializer(registry, Cart, compiler=None)
    good = wire_header(schema_id) + varint(4) + varint(1) + varint(1) + b"a" + varint(0) + varint(0)
    assert reader(good, ctx()) == Cart().load({"id": 4, "items": ["a"]})
    bomb = wire_header(schema_id) + varint(4) + varint(0) + varint(2**62) + varint(0)
    with pytest.raises(DecodeError, match="items per block"):
        reader(bomb, ctx())
    assert reader.stats == {FALLBACK: 1}


MIXED = {
    "type": "record",
    "name": "Mixed",
    "namespace": "compat",
    "fields": [
        {"name": "a", "type": {"type": "array", "items": ["null", "long", "string"]}},
        {"name": "m", "type": {"type": "map", "values": {"type": "array", "items": "boolean"}}},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["X", "Y"]}},
        {"name": "f", "type": {"type": "fixed", "name": "F", "size": 2}},
    ],
}
_MIXED = {}


def _mixed():
    if not _MIXED:
        registry = new_registry()
        schema_id = _registered(registry, MIXED)
        codec = AvroCodec(MIXED)  # compiled once
        _MIXED.update(
            registry=registry,
            header=wire_header(schema_id),
            codec=codec,
            fallback=AvroDeserializer(registry, compiler=None),
            valid=codec.dump({"a": [None, 3, "x"], "m": {"k": [True]}, "e": "Y", "f": b"ab"}),
        )
        serde_cached = serde._cached
        serde._cached = lambda make: None
        try:
            _MIXED["fallback"].prepare(schema_id)
        finally:
            serde._cached = serde_cached
    return _MIXED


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_mutated_messages_fail_or_read_as_the_compiled_codec_does(data):
    shared = _mixed()
    body = bytearray(shared["valid"])
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(body)))
        action = data.draw(st.sampled_from(["set", "insert", "delete"]))
        if action == "insert" or position == len(body):
            body.insert(position, data.draw(st.integers(0, 255)))
        elif action == "set":
            body[position] = data.draw(st.integers(0, 255))
        else:
            del body[position]
    body = bytes(body)
    try:
        expected = shared["codec"].load(body)
    except DecodeError:
        expected = DecodeError
    reader = shared["fallback"]
    try:
        got = reader(shared["header"] + body, ctx())
    except DecodeError as error:
        assert error.offset >= 5
        got = DecodeError
    if expected is DecodeError or got is DecodeError:
        assert got is expected
    else:
        assert_same(got, expected)
    assert reader.stats[COMPILED] == 0


# -- confluent-kafka's signatures --------------------------------------------------


@pytest.mark.parametrize(
    "ours, theirs", [(AvroSerializer, ConfluentSerializer), (AvroDeserializer, ConfluentDeserializer)]
)
def test_the_signatures_are_confluents(ours, theirs):
    def shape(cls):
        parameters = inspect.signature(cls.__init__).parameters.values()
        return [
            (p.name, p.kind, p.default)
            for p in parameters
            if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        ]

    assert shape(ours) == shape(theirs)


UNION = {
    "type": "record",
    "name": "Event",
    "namespace": "compat",
    "fields": [
        {
            "name": "body",
            "type": [
                "null",
                {"type": "record", "name": "Click", "fields": [{"name": "x", "type": "int"}]},
                {"type": "record", "name": "Scroll", "fields": [{"name": "dy", "type": "double"}]},
            ],
        },
        {"name": "again", "type": ["null", "Click"], "default": None},
    ],
}
EVENTS = [
    {"body": {"x": 3}, "again": {"x": 4}},
    {"body": {"dy": 1.5}, "again": None},
    {"body": None, "again": None},
]


def test_positional_arguments_are_confluents():
    registry = new_registry()
    text = json.dumps(UNION)
    seen = []

    def to_dict(obj, c):
        seen.append("to_dict")
        return obj

    def from_dict(value, c):
        seen.append("from_dict")
        return value

    ours = AvroSerializer(registry, text, to_dict, TOPIC, None, None, compiler=None)
    theirs = ConfluentSerializer(registry, text, to_dict, TOPIC, None, None)
    messages = [ours(event, ctx()) for event in EVENTS]
    assert messages == [theirs(event, ctx()) for event in EVENTS]
    # the fourth positional is return_record_name, the fifth conf
    reader = AvroDeserializer(registry, text, from_dict, True, TOPIC, None, None, compiler=None)
    their_reader = ConfluentDeserializer(registry, text, from_dict, True, TOPIC, None, None)
    for message in messages:
        assert_same(reader(message, ctx()), their_reader(message, ctx()))
    assert reader(messages[0], ctx())["body"] == ("compat.Click", {"x": 3})
    assert seen.count("to_dict") == 2 * len(EVENTS)


def test_keyword_arguments_are_confluents():
    registry = new_registry()
    text = json.dumps(UNION)
    keywords = dict(schema_str=text, to_dict=None, conf=TOPIC, rule_conf={}, rule_registry=RuleRegistry())
    ours = AvroSerializer(registry, compiler=None, **keywords)
    theirs = ConfluentSerializer(registry, **keywords)
    assert ours(EVENTS[0], ctx()) == theirs(EVENTS[0], ctx())
    message = ours(EVENTS[0], ctx())
    for flag in (False, True):
        keywords = dict(
            schema_str=text,
            from_dict=None,
            return_record_name=flag,
            conf=None,
            rule_conf=None,
            rule_registry=None,
        )
        assert_same(
            AvroDeserializer(registry, compiler=None, **keywords)(message, ctx()),
            ConfluentDeserializer(registry, **keywords)(message, ctx()),
        )
    # a registry Schema, a dict, a parsed schema and a CompiledSchema are taken too
    for schema in (Schema(text, "AVRO"), UNION, parse_schema(UNION)):
        # (a parsed schema registers its own JSON text: maybe another id)
        message = AvroSerializer(registry, schema_str=schema, compiler=None)(EVENTS[1], ctx())
        assert message[5:] == theirs(EVENTS[1], ctx())[5:]
        assert ConfluentDeserializer(registry)(message, ctx()) == EVENTS[1]
    assert AvroDeserializer(registry, schema_str=Cart, compiler=None).__class__ is AvroDeserializer


def test_bad_arguments_raise_confluents_exception_types():
    registry = new_registry()
    text = json.dumps(UNION)
    serializer_cases = [
        dict(schema_str=text, to_dict=3),
        dict(schema_str=text, conf={"bogus": 1}),
        dict(schema_str=text, conf={"auto.register.schemas": "yes"}),
        dict(schema_str=text, conf={"use.latest.version": True}),
    ]
    for case in serializer_cases:
        with pytest.raises(Exception) as theirs:
            ConfluentSerializer(registry, **case)
        with pytest.raises(type(theirs.value)):
            AvroSerializer(registry, compiler=None, **case)
    deserializer_cases = [
        dict(schema_str=3.5),
        dict(from_dict=3),
        dict(return_record_name="yes"),
        dict(return_record_name=1),
        dict(conf={"bogus": 1}),
        dict(conf={"use.latest.version": "yes"}),
    ]
    for case in deserializer_cases:
        with pytest.raises(Exception) as theirs:
            ConfluentDeserializer(registry, **case)
        with pytest.raises(type(theirs.value)):
            AvroDeserializer(registry, compiler=None, **case)


def test_without_a_schema_the_serializer_writes_the_registrys():
    registry = new_registry()
    _registered(registry, UNION)
    conf = dict(TOPIC, **{"use.latest.version": True, "auto.register.schemas": False})
    ours = AvroSerializer(registry, None, None, conf, compiler=None)
    theirs = ConfluentSerializer(registry, None, None, conf)
    assert ours(EVENTS[0], ctx()) == theirs(EVENTS[0], ctx())
    with pytest.raises(TypeError, match="use.schema.id or use.latest.version"):
        AvroSerializer(registry)


def test_data_contract_rules_are_refused_not_ignored():
    registry = new_registry()

    class Executor:
        def type(self):
            return "CEL"

        def configure(self, client_conf, rule_conf):
            pass

    rules = RuleRegistry()
    rules.register_executor(Executor())
    with pytest.raises(ValueError, match="data-contract rule"):
        AvroSerializer(registry, UNION, rule_registry=rules, compiler=None)
    with pytest.raises(ValueError, match="data-contract rules"):
        AvroDeserializer(registry, rule_conf={"secret": "x"}, compiler=None)
    with pytest.raises(ValueError, match="return_record_name"):
        AvroDeserializer(registry, Cart, return_record_name=True, compiler=None)


# -- return_record_name ------------------------------------------------------------


@pytest.mark.parametrize("cached", [False, True])
def test_return_record_name_gives_confluents_tuples_on_every_path(cached, monkeypatch):
    registry = new_registry()
    text = json.dumps(UNION)
    if cached:
        AvroCodec(UNION, compile="eager")  # a compiled codec is there: it cannot name the branches
    else:
        monkeypatch.setattr(serde, "_cached", lambda make: None)
    compiler = ManualCompiler()
    ours = AvroDeserializer(registry, return_record_name=True, compiler=compiler)
    theirs = ConfluentDeserializer(registry, return_record_name=True)
    plain = ConfluentDeserializer(registry)
    writer = ConfluentSerializer(registry, text, conf=TOPIC)
    for event in EVENTS:
        message = writer(event, ctx())
        assert_same(ours(message, ctx()), theirs(message, ctx()))
    assert ours(writer(EVENTS[0], ctx()), ctx()) == {
        "body": ("compat.Click", {"x": 3}),
        "again": ("compat.Click", {"x": 4}),
    }
    assert plain(writer(EVENTS[0], ctx()), ctx()) == EVENTS[0]
    assert ours.stats == {FALLBACK: len(EVENTS) + 1} and compiler.jobs == []
    # with a reader schema too
    reader_schema = json.dumps(dict(UNION, fields=UNION["fields"][:1]))
    ours = AvroDeserializer(registry, reader_schema, None, True, compiler=None)
    theirs = ConfluentDeserializer(registry, reader_schema, None, True)
    for event in EVENTS:
        message = writer(event, ctx())
        assert_same(ours(message, ctx()), theirs(message, ctx()))


def test_return_record_name_without_record_unions_stays_compiled():
    registry = new_registry()
    AvroCodec(MIXED, compile="eager")  # in the compile cache
    message = ConfluentSerializer(registry, json.dumps(MIXED), conf=TOPIC)(
        {"a": [None, 3, "x"], "m": {"k": [True]}, "e": "Y", "f": b"ab"}, ctx()
    )
    ours = AvroDeserializer(registry, return_record_name=True, compiler=None)
    assert_same(
        ours(message, ctx()), ConfluentDeserializer(registry, return_record_name=True)(message, ctx())
    )
    assert ours.stats == {COMPILED: 1}


# -- a bytes schema: the value's bytes as they are -----------------------------------


@pytest.mark.parametrize("schema_str", ['"bytes"', '{"type": "bytes"}'])
def test_a_bytes_schema_frames_the_bytes_as_confluent_does(schema_str):
    # confluent-kafka (as Java's serializers) writes no Avro length for a
    # bytes schema; a length would reach their readers as part of the value
    registry = new_registry()
    theirs = ConfluentSerializer(registry, schema_str, conf=TOPIC)
    ours = AvroSerializer(registry, schema_str, compiler=None)
    for value in (b"abc", bytes(range(256)), "text"):
        message = ours(value, ctx())
        assert message == theirs(value, ctx())
        expected = ConfluentDeserializer(registry)(message, ctx())
        assert AvroDeserializer(registry, compiler=None)(message, ctx()) == expected
        assert AvroDeserializer(registry, '"string"', compiler=None)(message, ctx()) == ConfluentDeserializer(
            registry, '"string"'
        )(message, ctx())
    assert ours(bytearray(b"xy"), ctx())[5:] == b"xy"
    # an empty value (which confluent-kafka's reader refuses as too short) reads back
    empty = ours(b"", ctx())
    assert empty == theirs(b"", ctx())
    assert AvroDeserializer(registry, compiler=None)(empty, ctx()) == b""
    with pytest.raises(SerializationError, match="bytes or str, not int"):
        ours(3, ctx())


# -- the serializer's uncompiled path ----------------------------------------------


def test_the_uncompiled_writer_refuses_values_fastavro_would_crash_on(uncached):
    registry = new_registry()
    ours = AvroSerializer(registry, LIST, compiler=None, flags=CompileFlags(max_depth=50))
    theirs = ConfluentSerializer(registry, json.dumps(LIST), conf=TOPIC)
    chain = None
    for i in range(40):
        chain = {"v": i, "next": chain}
    assert ours(chain, ctx()) == theirs(chain, ctx())
    looped = {"v": 1, "next": None}
    looped["next"] = looped  # fastavro's writer recurses until the C stack ends
    deep = None
    for i in range(100_000):
        deep = {"v": i, "next": deep}
    for value in (looped, deep):
        # tier 0's error, as the compiled writer gives it
        with pytest.raises(
            ValueError,
            match=r"records are nested more than 50 levels deep, or the value contains itself \(Co",
        ):
            ours(value, ctx())
    assert ours.stats[COMPILED] == 0


# -- the uncompiled reader's values are fastavro's -----------------------------------

_PROPERTY_REGISTRY = {}


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_random_schemas_read_on_the_uncompiled_path_as_fastavro_reads_them(data):
    # fastavro is what confluent-kafka's deserializer reads with (whose own
    # schema handling refuses some valid schemas, e.g. an alias equal to a name)
    import io

    import fastavro
    from avro_strategies import avro_schemas, datums

    if "registry" not in _PROPERTY_REGISTRY:
        _PROPERTY_REGISTRY["registry"] = new_registry()
    registry = _PROPERTY_REGISTRY["registry"]
    schema = data.draw(avro_schemas(), label="schema")
    datum = data.draw(datums(schema), label="datum")
    parsed = fastavro.parse_schema(schema)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, datum)
    schema_id = registry.register_schema(uuid.uuid4().hex, Schema(json.dumps(schema), "AVRO"))
    message = wire_header(schema_id) + out.getvalue()
    cached = serde._cached
    serde._cached = lambda make: None
    try:
        for flag in (False, True):
            ours = AvroDeserializer(registry, return_record_name=flag, compiler=None)
            got = ours(message, ctx())
            assert ours.stats == {FALLBACK: 1}
            expected = fastavro.schemaless_reader(
                io.BytesIO(out.getvalue()), parsed, None, return_record_name=flag
            )
            if _bare_bytes_schema(schema):
                expected = out.getvalue()  # confluent-kafka's framing: the bytes as they are
            assert_same(got, expected)
    finally:
        serde._cached = cached


def _bare_bytes_schema(schema) -> bool:
    return schema == "bytes" or isinstance(schema, dict) and schema.get("type") == "bytes"


def test_an_unknown_schema_id_raises_what_confluent_kafka_raises():
    # confluent-kafka's deserializer lets the registry client's error through;
    # ours is that error too (and a SerializationError naming the id)
    from confluent_kafka.schema_registry.error import SchemaRegistryError

    registry = new_registry()
    schema = json.dumps({"type": "record", "name": "U", "fields": [{"name": "a", "type": "long"}]})
    message = AvroSerializer(registry, schema, conf=TOPIC)({"a": 1}, ctx())
    unknown = wire_header(4242) + message[5:]
    with pytest.raises(SchemaRegistryError) as theirs:
        ConfluentDeserializer(registry)(unknown, ctx())
    with pytest.raises(SchemaRegistryError) as ours:
        AvroDeserializer(registry)(unknown, ctx())
    assert isinstance(ours.value, SerializationError)
    assert "schema id 4242" in str(ours.value)
    assert (ours.value.http_status_code, ours.value.error_code) == (
        theirs.value.http_status_code,
        theirs.value.error_code,
    )


class Stamp(CompiledSchema):
    at = fields.AwareDateTime(required=True)


def test_the_uncompiled_marshmallow_reader_checks_the_bytes_as_the_compiled_one(uncached):
    # a timestamp past year 9999: the compiled reader's DecodeError, not marshmallow's OverflowError
    registry = new_registry()
    writer = AvroSerializer(registry, Stamp, compiler=None)
    import datetime

    good = writer({"at": datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone.utc)}, ctx())
    far = good[:5] + varint(2**62)
    reader = AvroDeserializer(registry, Stamp, compiler=None)
    assert reader(good, ctx()) == Stamp().load_compiled(good[5:])
    with pytest.raises(DecodeError) as uncompiled:
        reader(far, ctx())
    with pytest.raises(DecodeError) as compiled:
        Stamp().load_compiled(far[5:])
    assert reader.stats[FALLBACK] == 1 and reader.stats[COMPILED] == 0  # the good message
    assert uncompiled.value.reason == compiled.value.reason
    assert uncompiled.value.offset == compiled.value.offset + 5
