"""roastedavro.kafka against confluent-kafka's own serializers, with
confluent-kafka's in-memory registry client (``mock://``).

The oracle is confluent-kafka 2.16's AvroSerializer/AvroDeserializer (fastavro
inside): our bytes must equal theirs, each side must read the other's, and
evolution must give what their resolving deserializer gives. The real broker
and registry are in test_kafka_e2e.py.
"""

from __future__ import annotations

import datetime
import json
import logging
import uuid
from concurrent.futures import Future
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from marshmallow import fields

pytest.importorskip("confluent_kafka.schema_registry.avro", reason="confluent-kafka is not installed")

from confluent_kafka.schema_registry import (  # noqa: E402
    Schema,
    SchemaReference,
    SchemaRegistryClient,
    record_subject_name_strategy,
    topic_record_subject_name_strategy,
)
from confluent_kafka.schema_registry.avro import (  # noqa: E402
    AvroDeserializer as ConfluentDeserializer,
    AvroSerializer as ConfluentSerializer,
)
from confluent_kafka.serialization import (  # noqa: E402
    MessageField,
    SerializationContext,
    SerializationError,
)

from avro_strategies import as_read, assert_same, datums  # noqa: E402
from roastedavro import AvroCodec, CompiledSchema, DecodeError  # noqa: E402
from roastedavro.kafka import (  # noqa: E402
    COMPILED,
    FALLBACK,
    AvroDeserializer,
    AvroSerializer,
    RegistryWatcher,
    serde,
    wire_header,
    wire_schema_id,
)

TRADE = {
    "type": "record",
    "name": "Trade",
    "namespace": "kafka.test",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "symbol", "type": "string"},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 4}},
        {"name": "quantity", "type": "int"},
        {"name": "side", "type": {"type": "enum", "name": "Side", "symbols": ["BUY", "SELL"]}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "trader", "type": ["null", {"type": "string", "logicalType": "uuid"}], "default": None},
        {"name": "venue", "type": {"type": "fixed", "name": "Mic", "size": 4}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "fees", "type": {"type": "map", "values": "double"}},
    ],
}
TRADE_V2 = {  # drops tags, adds a field with a default, widens quantity
    "type": "record",
    "name": "Trade",
    "namespace": "kafka.test",
    "fields": [f for f in TRADE["fields"] if f["name"] not in ("tags", "quantity")]
    + [
        {"name": "quantity", "type": "long"},
        {"name": "desk", "type": "string", "default": "main"},
    ],
}
A_TRADE = {
    "id": 7,
    "symbol": "ACME",
    "price": Decimal("187.2500"),
    "quantity": 100,
    "side": "SELL",
    "at": datetime.datetime(2026, 11, 23, 9, 30, tzinfo=datetime.timezone.utc),
    "trader": str(uuid.UUID(int=42)),
    "venue": b"XNAS",
    "tags": ["a", "b"],
    "fees": {"x": 0.5},
}
VALUE = MessageField.VALUE


class ManualCompiler:
    """A background compiler that builds only when the test says so."""

    def __init__(self):
        self.jobs: list[tuple[object, Future]] = []

    def submit(self, key, make, what="codec"):
        future = Future()
        self.jobs.append((make, future))
        return future

    def run(self):
        for make, future in self.jobs:
            if not future.done():
                try:
                    future.set_result(make("here"))
                except Exception as error:
                    future.set_exception(error)


@pytest.fixture
def registry():
    return SchemaRegistryClient.new_client({"url": f"mock://{uuid.uuid4().hex}"})


@pytest.fixture
def uncached(monkeypatch):
    """Codecs start on the fallback path even when the compile cache has them."""
    monkeypatch.setattr(serde, "_cached", lambda make: None)


def ctx(topic="trades"):
    return SerializationContext(topic, VALUE)


# -- the wire format and bytes against confluent-kafka ------------------------------


def test_wire_header():
    assert wire_header(1) == b"\x00\x00\x00\x00\x01"
    assert wire_header(2**32 - 1) == b"\x00\xff\xff\xff\xff"
    assert wire_schema_id(b"\x00\x00\x01\x00\x00rest") == 65536
    with pytest.raises(ValueError):
        wire_header(2**32)
    with pytest.raises(SerializationError, match="magic byte"):
        wire_schema_id(b"\x01\x00\x00\x00\x01")
    with pytest.raises(SerializationError, match="shorter than"):
        wire_schema_id(b"\x00\x00")


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(datum=datums(TRADE))
def test_bytes_equal_confluent_and_both_read_each_other(datum):
    registry = _shared_registry()
    theirs = ConfluentSerializer(registry, json.dumps(TRADE))
    ours = _shared_serializer(registry)
    expected = theirs(datum, ctx())
    assert ours(datum, ctx()) == expected
    assert ours.stats[COMPILED] >= 1
    read_ours = _shared_deserializer(registry)(expected, ctx())
    read_theirs = ConfluentDeserializer(registry)(expected, ctx())
    assert_same(read_ours, read_theirs)
    assert_same(read_ours, as_read(datum))


_SHARED: dict = {}


def _shared_registry():
    if "registry" not in _SHARED:
        _SHARED["registry"] = SchemaRegistryClient.new_client({"url": "mock://shared"})
    return _SHARED["registry"]


def _shared_serializer(registry):
    if "ser" not in _SHARED:
        AvroCodec(TRADE, compile="eager")  # compiled once, before the first message
        _SHARED["ser"] = AvroSerializer(registry, json.dumps(TRADE), compiler=None)
    return _SHARED["ser"]


def _shared_deserializer(registry):
    if "de" not in _SHARED:
        _SHARED["de"] = AvroDeserializer(registry, compiler=None)
    return _SHARED["de"]


def test_fallback_then_compiled_give_the_same_values_and_the_swap_is_counted(registry, uncached):
    compiler = ManualCompiler()
    finished = []
    ours = AvroSerializer(
        registry, TRADE, compiler=compiler, on_compiled=lambda what, error: finished.append((what, error))
    )
    reader = AvroDeserializer(registry, compiler=compiler)
    theirs = ConfluentSerializer(registry, json.dumps(TRADE))
    message = ours(A_TRADE, ctx())
    assert message == theirs(A_TRADE, ctx())
    assert ours.stats == {FALLBACK: 1}
    before = reader(message, ctx())
    schema_id = wire_schema_id(message)
    assert reader.path(schema_id) == FALLBACK
    assert reader.path(schema_id + 1) is None
    prepared = reader.prepare(schema_id)
    assert isinstance(prepared, Future) and not prepared.done()  # what prepare() promises
    compiler.run()
    assert reader.path(schema_id) == COMPILED
    assert prepared.done() and prepared.exception() is None
    assert [error for _, error in finished] == [None]
    assert ours(A_TRADE, ctx()) == message
    after = reader(message, ctx())
    assert_same(after, before)
    assert_same(after, ConfluentDeserializer(registry)(message, ctx()))
    assert reader.stats == {FALLBACK: 1, COMPILED: 1}
    assert ours.stats == {FALLBACK: 1, COMPILED: 1}
    assert reader.wait_compiled(0) and ours.wait_compiled(0)


def test_a_codec_in_the_cache_is_used_from_the_first_message(registry):
    AvroCodec(TRADE, compile="eager")  # built (or found in the cache) beforehand
    compiler = ManualCompiler()
    ours = AvroSerializer(registry, TRADE, compiler=compiler)
    reader = AvroDeserializer(registry, compiler=compiler)
    message = ours(A_TRADE, ctx())
    reader(message, ctx())
    assert ours.stats == {COMPILED: 1} and reader.stats == {COMPILED: 1}
    assert compiler.jobs == []


def test_compile_failure_is_logged_and_the_fallback_keeps_working(registry, uncached, caplog):
    from roastedavro.background import BackgroundCompiler

    errors = []

    def failing(build):
        raise RuntimeError("no compiler today")

    compiler = BackgroundCompiler(build="here")
    ours = AvroSerializer(registry, TRADE, compiler=None)
    message = ours(A_TRADE, ctx())
    reader = AvroDeserializer(
        registry, compiler=compiler, on_compiled=lambda what, error: errors.append(error)
    )
    # the slot's compile fails on the background thread
    original = serde._Codec.__init__

    def with_failing_make(self, what, fallback, make, key, compiler_, on_compiled):
        original(self, what, fallback, failing, key, compiler_, on_compiled)

    serde._Codec.__init__ = with_failing_make
    try:
        with caplog.at_level(logging.ERROR, logger="roastedavro.background"):
            first = reader(message, ctx())
            assert reader.wait_compiled(30)
    finally:
        serde._Codec.__init__ = original
    assert [str(error) for error in errors] == ["no compiler today"]
    assert "no compiler today" in caplog.text
    assert reader.path(wire_schema_id(message)) == FALLBACK
    assert_same(reader(message, ctx()), first)
    assert reader.stats == {FALLBACK: 2}


def test_background_builds_in_a_child_process(registry, uncached, tmp_path, monkeypatch):
    # an empty cache: the codec is really built, by the default compiler's child process
    from roastedavro.background import BackgroundCompiler

    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path))
    schema = dict(TRADE, name=f"Child{uuid.uuid4().hex[:8]}", fields=TRADE["fields"][:3])
    datum = {key: A_TRADE[key] for key in ("id", "symbol", "price")}
    compiler = BackgroundCompiler()
    ours = AvroSerializer(registry, schema, compiler=compiler)
    message = ours(datum, ctx())
    assert ours.wait_compiled(120)
    assert ours(datum, ctx()) == message
    assert ours.stats == {FALLBACK: 1, COMPILED: 1}
    assert any(path.name.endswith(".sha256") for path in tmp_path.iterdir())


# -- evolution ----------------------------------------------------------------------


@pytest.mark.parametrize("path", [FALLBACK, COMPILED])
def test_evolution_reads_as_confluent_resolves(registry, path, monkeypatch):
    if path == FALLBACK:
        monkeypatch.setattr(serde, "_cached", lambda make: None)
    else:
        # the pair's codec, built beforehand: resolved as fastavro resolves
        from roastedavro.avro.parse import parse_schema

        AvroCodec(parse_schema(TRADE_V2, dialect="fastavro"), writer_schema=TRADE, compile="eager")
    v1 = ConfluentSerializer(registry, json.dumps(TRADE))
    message = v1(A_TRADE, ctx())
    expected = ConfluentDeserializer(registry, json.dumps(TRADE_V2))(message, ctx())
    reader = AvroDeserializer(registry, TRADE_V2, compiler=None)
    got = reader(message, ctx())
    assert reader.stats == {path: 1}
    # equal values, the keys in confluent-kafka's (fastavro's) order: the
    # fields read in the writer's order, then the reader's defaults
    assert_same(got, expected)
    assert list(got) == list(expected) != [field["name"] for field in TRADE_V2["fields"]]
    assert got["desk"] == "main" and "tags" not in got


def test_a_reader_with_other_logical_types_reads_as_confluent_reads(registry):
    # confluent-kafka reads with fastavro, which converts by the writer's
    # logical types only: a long read as a timestamp-millis stays the long,
    # a date read as a double stays the date
    writer = {
        "type": "record",
        "name": "Stamp",
        "namespace": "kafka.test",
        "fields": [
            {"name": "at", "type": "long"},
            {"name": "day", "type": {"type": "int", "logicalType": "date"}},
            {"name": "count", "type": "long"},
        ],
    }
    reader_schema = {
        "type": "record",
        "name": "Stamp",
        "namespace": "kafka.test",
        "fields": [
            {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "day", "type": "double"},
            {"name": "count", "type": "float"},
        ],
    }
    datum = {"at": 1_700_000_000_000, "day": datetime.date(2022, 1, 1), "count": 2**24 + 1}
    topic = SerializationContext("stamps", MessageField.VALUE)
    message = ConfluentSerializer(registry, json.dumps(writer))(datum, topic)
    expected = ConfluentDeserializer(registry, json.dumps(reader_schema))(message, topic)
    assert expected == {"at": 1_700_000_000_000, "day": datetime.date(2022, 1, 1), "count": float(2**24 + 1)}
    reader = AvroDeserializer(registry, reader_schema, compiler=None)
    assert_same(reader(message, topic), expected)
    # tier 0 reads such a pair for good: the compiled pair reads as Java does
    assert reader.path(wire_schema_id(message)) == FALLBACK
    # logical types alone: the canonical forms are equal, the values are not
    only_logical = dict(
        reader_schema, fields=[*reader_schema["fields"][:2], {"name": "count", "type": "long"}]
    )
    expected = ConfluentDeserializer(registry, json.dumps(only_logical))(message, topic)
    assert expected["at"] == 1_700_000_000_000 and expected["day"] == datetime.date(2022, 1, 1)
    assert_same(AvroDeserializer(registry, only_logical, compiler=None)(message, topic), expected)


UNCONVERTED = {  # logical types fastavro (so confluent-kafka) leaves as plain values
    "type": "record",
    "name": "Plain",
    "namespace": "kafka.test",
    "fields": [
        {"name": "id", "type": {"type": "fixed", "name": "Id", "size": 16, "logicalType": "uuid"}},
        {"name": "wait", "type": {"type": "fixed", "name": "Wait", "size": 12, "logicalType": "duration"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-nanos"}},
        {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-nanos"}},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "big-decimal"}},
    ],
}
UNCONVERTED_DATUM = {
    "id": b"0123456789abcdef",
    "wait": bytes(range(12)),
    "at": 1_700_000_000_123_456_789,
    "local": -5,
    "amount": b"\x02\x05",
}  # not a valid big-decimal: fastavro never looks


@pytest.mark.parametrize("with_reader", [False, True])
def test_logical_types_fastavro_leaves_plain_are_plain_on_both_tiers(registry, uncached, with_reader):
    topic = SerializationContext("plain", MessageField.VALUE)
    compiler = ManualCompiler()
    message = ConfluentSerializer(registry, json.dumps(UNCONVERTED))(UNCONVERTED_DATUM, topic)
    ours = AvroSerializer(registry, UNCONVERTED, compiler=compiler)
    reader_schema = UNCONVERTED if with_reader else None
    reader = AvroDeserializer(registry, reader_schema, compiler=compiler)
    theirs = ConfluentDeserializer(registry, json.dumps(reader_schema) if with_reader else None)
    expected = theirs(message, topic)
    assert expected == UNCONVERTED_DATUM  # confluent-kafka's own values
    for path in (FALLBACK, COMPILED):
        assert ours(UNCONVERTED_DATUM, topic) == message
        got = reader(message, topic)
        assert_same(got, expected)
        assert reader.path(wire_schema_id(message)) == path
        compiler.run()
    assert ours.stats == {FALLBACK: 1, COMPILED: 1}


def test_an_impossible_pair_fails_on_the_first_message(registry):
    message = ConfluentSerializer(registry, json.dumps(TRADE))(A_TRADE, ctx())
    reader_schema = dict(TRADE_V2, fields=TRADE_V2["fields"] + [{"name": "new", "type": "int"}])
    with pytest.raises(SerializationError, match="cannot be read as the reader schema.*new"):
        AvroDeserializer(registry, reader_schema, compiler=None)(message, ctx())


def test_use_latest_version_reads_as_the_subjects_latest(registry):
    message = ConfluentSerializer(registry, json.dumps(TRADE))(A_TRADE, ctx())
    registry.register_schema("trades-value", Schema(json.dumps(TRADE_V2), "AVRO"))
    reader = AvroDeserializer(registry, conf={"use.latest.version": True}, compiler=None)
    expected = ConfluentDeserializer(
        registry, conf={"use.latest.version": True, "subject.name.strategy.type": "TOPIC"}
    )(message, ctx())
    got = reader(message, ctx())
    assert_same(got, expected)  # confluent-kafka's key order too
    assert got["desk"] == "main"


# -- conf keys and subjects ----------------------------------------------------------


@pytest.mark.parametrize(
    "strategy, subject",
    [
        ({}, "trades-value"),
        ({"subject.name.strategy.type": "TOPIC"}, "trades-value"),
        ({"subject.name.strategy.type": "RECORD"}, "kafka.test.Trade"),
        ({"subject.name.strategy.type": "topic_record"}, "trades-kafka.test.Trade"),
        ({"subject.name.strategy": record_subject_name_strategy}, "kafka.test.Trade"),
        ({"subject.name.strategy": topic_record_subject_name_strategy}, "trades-kafka.test.Trade"),
    ],
)
def test_subject_name_strategies_register_where_confluent_does(strategy, subject):
    ours_registry = SchemaRegistryClient.new_client({"url": f"mock://{uuid.uuid4().hex}"})
    theirs_registry = SchemaRegistryClient.new_client({"url": f"mock://{uuid.uuid4().hex}"})
    AvroSerializer(ours_registry, TRADE, conf=strategy, compiler=None)(A_TRADE, ctx())
    conf = dict(strategy) or {"subject.name.strategy.type": "TOPIC"}
    ConfluentSerializer(theirs_registry, json.dumps(TRADE), conf=conf)(A_TRADE, ctx())
    assert ours_registry.get_subjects() == theirs_registry.get_subjects() == [subject]


def test_conf_keys_are_checked():
    registry = SchemaRegistryClient.new_client({"url": "mock://conf"})
    with pytest.raises(ValueError, match="Unrecognized properties: bogus"):
        AvroSerializer(registry, TRADE, conf={"bogus": 1})
    with pytest.raises(ValueError, match="schema.id.serializer .*not supported"):
        AvroSerializer(registry, TRADE, conf={"schema.id.serializer": print})
    with pytest.raises(ValueError, match="auto.register.schemas must be a boolean"):
        AvroSerializer(registry, TRADE, conf={"auto.register.schemas": "yes"})
    with pytest.raises(ValueError, match="both use.latest.version and auto.register"):
        AvroSerializer(registry, TRADE, conf={"use.latest.version": True})
    with pytest.raises(ValueError, match="use.schema.id must be an int"):
        AvroSerializer(registry, TRADE, conf={"use.schema.id": "3"})
    with pytest.raises(ValueError, match="ASSOCIATED.*not supported"):
        AvroSerializer(registry, TRADE, conf={"subject.name.strategy.type": "ASSOCIATED"})
    with pytest.raises(ValueError, match="Unrecognized properties: auto.register.schemas"):
        AvroDeserializer(registry, conf={"auto.register.schemas": True})
    with pytest.raises(ValueError, match="to_dict must be callable"):
        AvroSerializer(registry, TRADE, to_dict=3)
    with pytest.raises(TypeError, match="schema must be"):
        AvroSerializer(registry, 3.5)


def test_auto_register_off_needs_a_registered_schema(registry):
    ours = AvroSerializer(registry, TRADE, conf={"auto.register.schemas": False}, compiler=None)
    with pytest.raises(SerializationError, match="trades-value"):
        ours(A_TRADE, ctx())
    schema_id = registry.register_schema("trades-value", Schema(json.dumps(TRADE), "AVRO"))
    assert wire_schema_id(ours(A_TRADE, ctx())) == schema_id


def test_use_schema_id_and_use_latest_version_write_what_confluent_writes(registry):
    old = registry.register_schema("trades-value", Schema(json.dumps(TRADE), "AVRO"))
    registry.register_schema("trades-value", Schema(json.dumps(TRADE_V2), "AVRO"))
    datum = dict(A_TRADE, desk="fx")
    for conf in (
        {"use.schema.id": old, "auto.register.schemas": False},
        {"use.latest.version": True, "auto.register.schemas": False},
    ):
        theirs = ConfluentSerializer(
            registry, json.dumps(TRADE), conf=dict(conf, **{"subject.name.strategy.type": "TOPIC"})
        )
        ours = AvroSerializer(registry, TRADE, conf=conf, compiler=None)
        assert ours(datum, ctx()) == theirs(datum, ctx())


def test_to_dict_and_from_dict_and_none(registry):
    class Tick:
        def __init__(self, **values):
            self.__dict__.update(values)

    seen = []
    ours = AvroSerializer(
        registry, TRADE, to_dict=lambda obj, c: (seen.append(c), vars(obj))[1], compiler=None
    )
    reader = AvroDeserializer(registry, from_dict=lambda value, c: Tick(**value), compiler=None)
    message = ours(Tick(**A_TRADE), ctx())
    assert seen[0].topic == "trades"
    assert reader(message, ctx()).symbol == "ACME"
    assert ours(None, ctx()) is None and reader(None, ctx()) is None


# -- bad messages and registry failures -----------------------------------------------


@pytest.mark.parametrize("path", [FALLBACK, COMPILED])
def test_malformed_messages_get_clear_errors(registry, path, monkeypatch):
    if path == FALLBACK:
        monkeypatch.setattr(serde, "_cached", lambda make: None)
    else:
        AvroCodec(TRADE, compile="eager")
    message = AvroSerializer(registry, TRADE, compiler=None)(A_TRADE, ctx())
    reader = AvroDeserializer(registry, compiler=None)
    with pytest.raises(SerializationError, match="magic byte"):
        reader(b"\x07" + message[1:], ctx())
    with pytest.raises(SerializationError, match="shorter than"):
        reader(message[:3], ctx())
    for cut in (6, len(message) - 1):
        with pytest.raises(DecodeError) as raised:
            reader(message[:cut], ctx())
        assert 5 <= raised.value.offset <= cut
    with pytest.raises(DecodeError, match="trailing bytes"):
        reader(message + b"\x00", ctx())
    with pytest.raises(SerializationError, match="schema id 999 is not in the schema registry"):
        reader(wire_header(999) + message[5:], ctx())
    assert_same(reader(bytearray(message), ctx()), reader(message, ctx()))


def test_an_unreachable_registry_fails_clearly_and_fast(registry):
    message = AvroSerializer(registry, TRADE, compiler=None)(A_TRADE, ctx())
    reader = AvroDeserializer(registry, compiler=None)
    reader(message, ctx())
    # a client whose registry is gone: cached ids go on, new ids fail clearly
    down = SchemaRegistryClient(
        {"url": "http://127.0.0.1:9", "max.retries": 1, "retries.wait.ms": 1, "retries.max.wait.ms": 2}
    )
    reader._registry = down
    assert reader(message, ctx())["symbol"] == "ACME"
    with pytest.raises(SerializationError, match="schema id 77 cannot be fetched") as first:
        reader(wire_header(77) + message[5:], ctx())
    with pytest.raises(SerializationError) as again:  # within retry_after: no second request
        reader(wire_header(77) + message[5:], ctx())
    assert again.value is first.value


def test_schema_references_are_fetched(registry):
    mic = {"type": "fixed", "name": "Mic", "namespace": "kafka.test", "size": 4}
    registry.register_schema("mic", Schema(json.dumps(mic), "AVRO"))
    order = {
        "type": "record",
        "name": "Order",
        "namespace": "kafka.test",
        "fields": [{"name": "venue", "type": "kafka.test.Mic"}, {"name": "n", "type": "int"}],
    }
    with_reference = Schema(json.dumps(order), "AVRO", [SchemaReference("kafka.test.Mic", "mic", 1)])
    theirs = ConfluentSerializer(registry, with_reference)
    message = theirs({"venue": b"XLON", "n": 3}, ctx())
    assert (
        AvroSerializer(registry, with_reference, compiler=None)({"venue": b"XLON", "n": 3}, ctx()) == message
    )
    assert AvroDeserializer(registry, compiler=None)(message, ctx()) == {"venue": b"XLON", "n": 3}


def test_a_non_avro_schema_is_refused(registry):
    schema_id = registry.register_schema("json-value", Schema('{"type": "object"}', "JSON"))
    with pytest.raises(SerializationError, match="is a JSON schema, not Avro"):
        AvroDeserializer(registry, compiler=None)(wire_header(schema_id) + b"\x00", ctx())


# -- marshmallow schemas ------------------------------------------------------------


class TradeSchema(CompiledSchema):
    class Meta:
        avro_name = "MmTrade"
        avro_namespace = "kafka.test"

    id = fields.Integer(required=True)
    symbol = fields.String(required=True)
    price = fields.Float(required=True)
    at = fields.DateTime(required=True)
    note = fields.String(allow_none=True)


A_MM_TRADE = {
    "id": 1,
    "symbol": "ACME",
    "price": 10.5,
    "at": datetime.datetime(2026, 11, 23, 9, 30, 1, 500, tzinfo=datetime.timezone.utc),
    "note": None,
}


@pytest.mark.parametrize("path", [FALLBACK, COMPILED])
def test_compiled_schema_serializer_and_deserializer(registry, path, monkeypatch):
    if path == FALLBACK:
        monkeypatch.setattr(serde, "_cached", lambda make: None)
    else:
        TradeSchema().compile()
    schema = TradeSchema()
    ours = AvroSerializer(registry, TradeSchema, compiler=None)
    message = ours(A_MM_TRADE, ctx())
    assert ours.stats == {path: 1}
    assert message[5:] == schema.dump_compiled(A_MM_TRADE)
    # confluent-kafka writing the same values with the schema's Avro schema
    theirs = ConfluentSerializer(registry, json.dumps(schema.avro_schema()))
    assert theirs(_fastavro_datum(schema, A_MM_TRADE), ctx()) == message
    reader = AvroDeserializer(registry, TradeSchema, compiler=None)
    loaded = reader(message, ctx())
    assert reader.stats == {path: 1}
    assert loaded == schema.load_compiled(message[5:]) == schema.load(schema.dump(A_MM_TRADE))


def _fastavro_datum(schema, obj):
    from conftest import fastavro_read

    return fastavro_read(schema, schema.dump_compiled(obj))


def test_compiled_schema_reads_another_writer(registry):
    schema = TradeSchema()
    other = schema.avro_schema()
    other["fields"].insert(2, {"name": "venue", "type": "string"})
    message = ConfluentSerializer(registry, json.dumps(other))(
        dict(_fastavro_datum(schema, A_MM_TRADE), venue="XNAS"), ctx()
    )
    expected = schema.load(schema.dump(A_MM_TRADE))
    fallback = AvroDeserializer(registry, TradeSchema, compiler=None)
    serde._cached, cached = (lambda make: None), serde._cached
    try:
        assert fallback(message, ctx()) == expected
    finally:
        serde._cached = cached
    # the pair's codecs built beforehand: the compiled path from the start
    schema.compile()
    AvroCodec(schema.avro_model, writer_schema=other, compile="eager")
    AvroCodec(schema.avro_model, compile="eager")
    compiled = AvroDeserializer(registry, TradeSchema, compiler=None)
    assert compiled(message, ctx()) == expected
    assert fallback.stats == {FALLBACK: 1} and compiled.stats == {COMPILED: 1}


# -- the watcher ----------------------------------------------------------------------


def test_watcher_compiles_new_versions_before_their_first_message(registry, uncached):
    compiler = ManualCompiler()
    reader = AvroDeserializer(registry, compiler=compiler)
    watcher = RegistryWatcher(registry, ["trades-value"], [reader], interval=60)
    assert watcher.poll() == []  # the subject has no version yet
    first = registry.register_schema("trades-value", Schema(json.dumps(TRADE), "AVRO"))
    assert watcher.poll() == [first]
    assert watcher.last_error is None
    second = registry.register_schema("trades-value", Schema(json.dumps(TRADE_V2), "AVRO"))
    assert watcher.poll() == [second]
    assert watcher.poll() == []
    assert len(compiler.jobs) == 2 and reader.path(first) == FALLBACK
    compiler.run()
    assert reader.path(first) == reader.path(second) == COMPILED
    message = AvroSerializer(registry, TRADE, compiler=None)(A_TRADE, ctx())
    reader(message, ctx())
    assert reader.stats == {COMPILED: 1}
    with RegistryWatcher(registry, ["trades-value"], [reader], interval=0.05) as running:
        assert running.schema_ids is not None
    assert not running._thread.is_alive()
    # a registry that is down: logged and kept for the next poll, never raised
    down = SchemaRegistryClient({"url": "http://127.0.0.1:9", "max.retries": 0})
    failing = RegistryWatcher(down, ["trades-value"], [reader])
    assert failing.poll() == [] and failing.last_error is not None


UUID_FIXED = {"type": "fixed", "name": "U", "size": 16, "logicalType": "uuid"}
WITH_UUID = {
    "type": "record",
    "name": "Keyed",
    "namespace": "kafka.test",
    "fields": [{"name": "u", "type": UUID_FIXED}],
}
WITH_UUID_V2 = dict(
    WITH_UUID, fields=[{"name": "u", "type": UUID_FIXED}, {"name": "n", "type": "long", "default": 1}]
)


def test_the_deserializers_view_of_a_reader_is_a_model_of_its_own(registry):
    """The reader's schema, resolved as confluent-kafka's fastavro resolves
    it: a uuid on fixed stays bytes (fastavro does not convert it); and the
    drop-in, asked for the same pair afterwards in the same process, reads
    what fastavro reads too (no cache hands one the other's model)."""
    import io

    import fastavro

    import roastedavro.fastavro as dropin

    datum = {"u": bytes(range(16))}
    message = ConfluentSerializer(registry, json.dumps(WITH_UUID))(datum, ctx())
    expected = ConfluentDeserializer(registry, json.dumps(WITH_UUID_V2))(message, ctx())
    assert expected == {"u": bytes(range(16)), "n": 1}
    assert_same(AvroDeserializer(registry, WITH_UUID_V2, compiler=None)(message, ctx()), expected)
    body = message[5:]
    theirs = fastavro.schemaless_reader(
        io.BytesIO(body), fastavro.parse_schema(WITH_UUID), fastavro.parse_schema(WITH_UUID_V2)
    )
    assert_same(dropin.schemaless_reader(io.BytesIO(body), WITH_UUID, WITH_UUID_V2), theirs)


def test_a_pair_only_fastavros_rules_refuse_is_a_serialization_error_each_time(registry):
    renamed = dict(WITH_UUID_V2, name="Renamed")
    message = ConfluentSerializer(registry, json.dumps(WITH_UUID))({"u": bytes(16)}, ctx())
    with pytest.raises(Exception):  # confluent-kafka's fastavro refuses the names
        ConfluentDeserializer(registry, json.dumps(renamed))(message, ctx())
    reader = AvroDeserializer(registry, renamed, compiler=None)
    for _ in range(2):
        with pytest.raises(SerializationError, match="cannot be read as the reader schema"):
            reader(message, ctx())


def test_build_reader_skips_a_version_the_reader_cannot_read(registry, tmp_path):
    from roastedavro import aot

    subject = "keyed-skip-value"
    registry.register_schema(subject, Schema(json.dumps(WITH_UUID), "AVRO"))
    renamed = tmp_path / "renamed.avsc"
    renamed.write_text(json.dumps(dict(WITH_UUID_V2, name="Renamed")))
    skipped: list = []
    sources = aot.registry_sources("mock://unused", [subject], str(renamed), client=registry, skipped=skipped)
    # the version's own codecs: AvroCodec's, and the Kafka serializers' (fastavro's
    # view: its uuid on fixed is plain bytes there, so the code differs)
    assert [source.label for source in sources] == ["keyed-skip-value version 1 (id 1)"] * 2
    assert sources[0].source != sources[1].source
    assert len(skipped) == 1 and "version 1" in skipped[0][0]
    readable = tmp_path / "v2.avsc"
    readable.write_text(json.dumps(WITH_UUID_V2))
    labels = [
        source.label
        for source in aot.registry_sources("mock://unused", [subject], str(readable), client=registry)
    ]
    assert labels[2:] == [f"keyed-skip-value version 1 (id 1) as {readable}"]
