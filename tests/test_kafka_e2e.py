"""roastedavro.kafka through a real Kafka broker (4.3.1, KRaft) and a real
Confluent-compatible registry (Apicurio 3.0.9, /apis/ccompat/v7), both started
by scripts/services/services.py on 127.0.0.1 (tests/services.py).

The oracle is confluent-kafka 2.16's own AvroSerializer/AvroDeserializer.
"""

from __future__ import annotations

import datetime
import os
import json
import random
import socket
import threading
import time
import uuid
from decimal import Decimal

import pytest

pytest.importorskip("confluent_kafka.schema_registry.avro", reason="confluent-kafka is not installed")

from confluent_kafka import Consumer, DeserializingConsumer, SerializingProducer  # noqa: E402
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.avro import (  # noqa: E402
    AvroDeserializer as ConfluentDeserializer,
    AvroSerializer as ConfluentSerializer,
)
from confluent_kafka.serialization import (  # noqa: E402
    MessageField,
    SerializationContext,
    SerializationError,
)

from roastedavro.background import BackgroundCompiler  # noqa: E402
from roastedavro.kafka import (  # noqa: E402
    COMPILED,
    FALLBACK,
    AvroDeserializer,
    AvroSerializer,
    RegistryWatcher,
    wire_header,
    wire_schema_id,
)
from test_kafka import TRADE, TRADE_V2  # noqa: E402


MESSAGES = 20_000


def trades(count: int, seed: int = 1):
    rng = random.Random(seed)
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    for number in range(count):
        yield {
            "id": number,
            "symbol": rng.choice(["ACME", "INITECH", "UMBRELLA", "Ünïcode"]),
            "price": Decimal(rng.randrange(1, 10**9)).scaleb(-4),
            "quantity": rng.randrange(-5, 10**6),
            "side": rng.choice(["BUY", "SELL"]),
            "at": start + datetime.timedelta(microseconds=rng.randrange(10**13)),
            "trader": rng.choice([None, uuid.UUID(int=rng.getrandbits(128))]),
            "venue": rng.choice([b"XNAS", b"XLON"]),
            "tags": [rng.choice("abc") * rng.randrange(4) for _ in range(rng.randrange(3))],
            "fees": {f"f{k}": rng.random() for k in range(rng.randrange(3))},
        }


def produce(bootstrap, topic, values, serializer):
    producer = SerializingProducer(
        {"bootstrap.servers": bootstrap, "linger.ms": 5, "value.serializer": serializer}
    )
    for number, value in enumerate(values):
        producer.produce(topic, value=value)
        if number % 1000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0


def consume(bootstrap, topic, count, deserializer=None, timeout=60.0):
    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": f"g-{uuid.uuid4().hex}",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    }
    consumer = (
        DeserializingConsumer(dict(conf, **{"value.deserializer": deserializer}))
        if deserializer is not None
        else Consumer(conf)
    )
    consumer.subscribe([topic])
    values, deadline = [], time.monotonic() + timeout
    try:
        while len(values) < count and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None:
                continue
            assert message.error() is None, message.error()
            values.append(message.value())
    finally:
        consumer.close()
    assert len(values) == count, f"consumed {len(values)} of {count} messages"
    return values


def ctx(topic):
    return SerializationContext(topic, MessageField.VALUE)


@pytest.fixture
def client(schema_registry):
    return SchemaRegistryClient({"url": schema_registry.url})


def test_tens_of_thousands_of_messages_equal_confluents_bytes(kafka_broker, client, kafka_topic):
    sent = list(trades(MESSAGES))
    ours = AvroSerializer(client, TRADE)
    produce(kafka_broker.bootstrap, kafka_topic, sent, ours)
    raw = consume(kafka_broker.bootstrap, kafka_topic, MESSAGES)
    # confluent-kafka's serializer finds the same subject and id in the registry
    theirs = ConfluentSerializer(client, json.dumps(TRADE), conf={"subject.name.strategy.type": "TOPIC"})
    assert [theirs(value, ctx(kafka_topic)) for value in sent] == raw
    assert len({wire_schema_id(message) for message in raw}) == 1
    # and reads each of ours as our deserializer does
    their_reader, our_reader = ConfluentDeserializer(client), AvroDeserializer(client)
    for message, value in zip(raw, sent):
        assert our_reader(message, ctx(kafka_topic)) == their_reader(message, ctx(kafka_topic)) == value


def test_consuming_with_our_deserializer_what_confluent_produced(kafka_broker, client, kafka_topic):
    sent = list(trades(5_000, seed=2))
    produce(
        kafka_broker.bootstrap,
        kafka_topic,
        sent,
        ConfluentSerializer(client, json.dumps(TRADE), conf={"subject.name.strategy.type": "TOPIC"}),
    )
    ours = AvroDeserializer(client)
    assert consume(kafka_broker.bootstrap, kafka_topic, len(sent), ours) == sent
    assert sum(ours.stats.values()) == len(sent)


def test_evolution_through_the_registry(kafka_broker, client, kafka_topic):
    subject = f"{kafka_topic}-value"
    client.set_compatibility(subject_name=subject, level="BACKWARD")
    v1 = list(trades(3_000, seed=3))
    produce(kafka_broker.bootstrap, kafka_topic, v1, AvroSerializer(client, TRADE))
    # v2 registers under BACKWARD: it reads v1's data
    v2_datum = dict(v1[0], quantity=2**40, desk="fx")
    del v2_datum["tags"]
    produce(kafka_broker.bootstrap, kafka_topic, [v2_datum], AvroSerializer(client, TRADE_V2))
    assert client.get_versions(subject) == [1, 2]
    raw = consume(kafka_broker.bootstrap, kafka_topic, len(v1) + 1)
    ours = AvroDeserializer(client, TRADE_V2)
    theirs = ConfluentDeserializer(client, json.dumps(TRADE_V2))
    for message in raw:
        assert ours(message, ctx(kafka_topic)) == theirs(message, ctx(kafka_topic))
    assert ours(raw[0], ctx(kafka_topic))["desk"] == "main"
    assert ours(raw[-1], ctx(kafka_topic))["desk"] == "fx"
    # a v3 the registry refuses (a new field without a default) never gets an id
    v3 = dict(TRADE_V2, fields=TRADE_V2["fields"] + [{"name": "required_new", "type": "int"}])
    with pytest.raises(SerializationError, match=subject):
        AvroSerializer(client, v3, compiler=None)(dict(v2_datum, required_new=1), ctx(kafka_topic))


def wide_schema(fields: int) -> dict:
    kinds = [
        "long",
        "string",
        "double",
        ["null", "string"],
        {"type": "long", "logicalType": "timestamp-micros"},
        "boolean",
    ]
    return {
        "type": "record",
        "name": f"Wide{uuid.uuid4().hex[:10]}",
        "namespace": "kafka.e2e",
        "fields": [{"name": f"f{n}", "type": kinds[n % len(kinds)]} for n in range(fields)],
    }


def wide_value(schema: dict, seed: int) -> dict:
    at = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    sample = {"long": seed, "string": f"s{seed}", "double": seed / 3, "boolean": seed % 2 == 0}
    value = {}
    for field in schema["fields"]:
        kind = field["type"]
        value[field["name"]] = (
            sample[kind] if isinstance(kind, str) else None if isinstance(kind, list) else at
        )
    return value


def test_an_unseen_large_schema_is_read_at_once_and_compiled_later(
    kafka_broker, client, kafka_topic, tmp_path, monkeypatch
):
    # an empty compile cache and a schema no process has seen
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path))
    schema = wide_schema(400)
    values = [wide_value(schema, n) for n in range(500)]
    produce(
        kafka_broker.bootstrap,
        kafka_topic,
        values,
        ConfluentSerializer(client, json.dumps(schema), conf={"subject.name.strategy.type": "TOPIC"}),
    )
    raw = consume(kafka_broker.bootstrap, kafka_topic, len(values))
    swapped = []
    reader = AvroDeserializer(
        client,
        compiler=BackgroundCompiler(),
        on_compiled=lambda what, error: swapped.append((time.monotonic(), error)),
    )
    started = time.monotonic()
    first = reader(raw[0], ctx(kafka_topic))
    first_done = time.monotonic()
    assert first == values[0]
    # the requirement itself: a registry fetch and fastavro, no compile
    assert first_done - started < 1.0
    assert reader.path(wire_schema_id(raw[0])) == FALLBACK
    # messages go on while the codec builds in a child process
    for message, value in zip(raw, values):
        assert reader(message, ctx(kafka_topic)) == value
    assert reader.wait_compiled(300)
    assert swapped and swapped[0][1] is None and swapped[0][0] > first_done
    assert reader.path(wire_schema_id(raw[0])) == COMPILED
    for message, value in zip(raw, values):
        assert reader(message, ctx(kafka_topic)) == value
    assert reader.stats[COMPILED] == len(values)
    assert reader.stats[FALLBACK] == len(values) + 1


class Proxy:
    """A TCP forwarder on 127.0.0.1 that can be cut, as a registry outage."""

    def __init__(self, port: int):
        self.target = port
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.connections: list[socket.socket] = []
        self.open = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            if not self.open:
                client.close()
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target))
            self.connections += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.close()
                except OSError:
                    pass

    def cut(self):
        self.open = False
        self.server.close()
        for connection in self.connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def test_a_registry_outage_stops_only_unknown_ids(kafka_broker, schema_registry, client, kafka_topic):
    proxy = Proxy(schema_registry.port)
    through_proxy = SchemaRegistryClient(
        {
            "url": schema_registry.url.replace(f":{schema_registry.port}/", f":{proxy.port}/"),
            "max.retries": 2,
            "retries.wait.ms": 10,
            "retries.max.wait.ms": 50,
        }
    )
    sent = list(trades(200, seed=4))
    produce(kafka_broker.bootstrap, kafka_topic, sent, AvroSerializer(client, TRADE))
    raw = consume(kafka_broker.bootstrap, kafka_topic, len(sent))
    reader = AvroDeserializer(through_proxy)
    assert reader(raw[0], ctx(kafka_topic)) == sent[0]
    writer = AvroSerializer(through_proxy, TRADE)
    writer(sent[0], ctx(kafka_topic))
    proxy.cut()
    # cached schemas: both directions go on
    assert [reader(message, ctx(kafka_topic)) for message in raw] == sent
    assert writer(sent[1], ctx(kafka_topic)) == raw[1]
    # an id the deserializer has not fetched: a clear error after the client's retries
    other = client.register_schema(f"{kafka_topic}-other", Schema(json.dumps(TRADE_V2), "AVRO"))
    with pytest.raises(SerializationError, match=f"schema id {other} cannot be fetched"):
        reader(wire_header(other) + raw[0][5:], ctx(kafka_topic))


def test_the_watcher_compiles_a_new_version_before_its_first_message(
    kafka_broker, client, kafka_topic, tmp_path, monkeypatch
):
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path))
    subject = f"{kafka_topic}-value"
    schema = wide_schema(30)
    reader = AvroDeserializer(client, compiler=BackgroundCompiler())
    with RegistryWatcher(client, [subject], [reader], interval=0.2) as watcher:
        schema_id = client.register_schema(subject, Schema(json.dumps(schema), "AVRO"))
        deadline = time.monotonic() + 30
        while schema_id not in watcher.schema_ids and time.monotonic() < deadline:
            time.sleep(0.05)
        assert schema_id in watcher.schema_ids
        assert reader.wait_compiled(300)
    assert reader.path(schema_id) == COMPILED
    values = [wide_value(schema, n) for n in range(50)]
    produce(
        kafka_broker.bootstrap,
        kafka_topic,
        values,
        ConfluentSerializer(client, json.dumps(schema), conf={"subject.name.strategy.type": "TOPIC"}),
    )
    assert consume(kafka_broker.bootstrap, kafka_topic, len(values), reader) == values
    assert reader.stats == {COMPILED: len(values)}


CHECK_PRECOMPILED = """
import json, sys
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.serialization import MessageField, SerializationContext
from roastedavro.kafka import AvroDeserializer
url, topic, reader, messages = sys.argv[1], sys.argv[2], sys.argv[3], json.load(sys.stdin)
deserializer = AvroDeserializer(SchemaRegistryClient({"url": url}), json.load(open(reader)))
values = [deserializer(bytes.fromhex(m), SerializationContext(topic, MessageField.VALUE))
          for m in messages]
print(json.dumps({"stats": {k: v for k, v in deserializer.stats.items() if v}, "desks": sorted({v["desk"] for v in values})}))
"""


def test_a_wheel_built_from_registry_subjects_serves_from_the_first_message(
    schema_registry, client, kafka_topic, tmp_path
):
    import subprocess
    import sys

    subject = f"{kafka_topic}-value"
    v1_message = AvroSerializer(client, TRADE, compiler=None)(next(trades(1)), ctx(kafka_topic))
    v2_datum = dict(next(trades(1)), desk="fx", quantity=5)
    del v2_datum["tags"]
    v2_message = AvroSerializer(client, TRADE_V2, compiler=None)(v2_datum, ctx(kafka_topic))
    reader = tmp_path / "reader.avsc"
    reader.write_text(json.dumps(TRADE_V2))
    env = dict(os.environ, ROASTEDAVRO_CACHE_DIR=str(tmp_path / "build-cache"))
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "roastedavro",
            "build",
            "--package",
            "trade_codecs",
            "--output",
            str(tmp_path / "dist"),
            "--registry",
            schema_registry.url,
            "--subject",
            subject,
            "--reader",
            str(reader),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=tmp_path,
    )  # not the checkout, whose roastedavro/ has no built runtime
    assert built.returncode == 0, built.stderr
    assert "built 3 codecs" in built.stderr  # v1, v2, and v1 read as v2
    wheel = built.stdout.strip()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(tmp_path / "site"),
            wheel,
        ],
        check=True,
        timeout=300,
    )
    (tmp_path / "cache").mkdir()
    checked = subprocess.run(
        [sys.executable, "-c", CHECK_PRECOMPILED, schema_registry.url, kafka_topic, str(reader)],
        input=json.dumps([v1_message.hex(), v2_message.hex()]),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=dict(
            os.environ,
            PYTHONPATH=str(tmp_path / "site"),
            ROASTEDAVRO_CACHE_DIR=str(tmp_path / "cache"),
            ROASTEDAVRO_COMPILE="never",
        ),
    )
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout) == {"stats": {COMPILED: 2}, "desks": ["fx", "main"]}
    assert list((tmp_path / "cache").iterdir()) == []
