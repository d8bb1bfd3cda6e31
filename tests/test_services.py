"""The Kafka broker and schema registry fixtures (tests/services.py) work."""

import io
import json
import struct
import time

import fastavro
import pytest


SCHEMA = {
    "type": "record",
    "name": "Ping",
    "namespace": "roastedavro.test",
    "fields": [{"name": "n", "type": "long"}, {"name": "text", "type": "string"}],
}


def test_registry_speaks_confluent(schema_registry, kafka_topic):
    subject = f"{kafka_topic}-value"
    registered = schema_registry.request(
        "POST", f"/subjects/{subject}/versions", {"schema": json.dumps(SCHEMA), "schemaType": "AVRO"}
    )
    # the same schema in other whitespace keeps its id, as with Confluent's registry
    again = schema_registry.request(
        "POST", f"/subjects/{subject}/versions", {"schema": json.dumps(SCHEMA, indent=2)}
    )
    assert again["id"] == registered["id"]
    latest = schema_registry.request("GET", f"/subjects/{subject}/versions/latest")
    assert (latest["id"], latest["version"]) == (registered["id"], 1)
    assert schema_registry.request("GET", "/config")["compatibilityLevel"] == "BACKWARD"


def test_kafka_round_trip_with_registered_schema(services, kafka_topic):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    registry = SchemaRegistryClient({"url": services.registry.url})
    schema_id = registry.register_schema(f"{kafka_topic}-value", Schema(json.dumps(SCHEMA), "AVRO"))
    parsed = fastavro.parse_schema(SCHEMA)
    sent = []
    for n in range(3):
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, {"n": n, "text": f"ping {n}"})
        sent.append(struct.pack(">bI", 0, schema_id) + out.getvalue())  # Confluent's framing

    producer = confluent_kafka.Producer({"bootstrap.servers": services.kafka.bootstrap})
    for value in sent:
        producer.produce(kafka_topic, value=value)
    assert producer.flush(30) == 0

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": services.kafka.bootstrap,
            "group.id": kafka_topic,
            "auto.offset.reset": "earliest",
        }
    )
    received = []
    try:
        consumer.subscribe([kafka_topic])
        deadline = time.monotonic() + 60
        while len(received) < len(sent) and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and not message.error():
                received.append(message.value())
    finally:
        consumer.close()
    assert received == sent
    _, wire_id = struct.unpack(">bI", received[0][:5])
    assert json.loads(registry.get_schema(wire_id).schema_str) == SCHEMA
    assert fastavro.schemaless_reader(io.BytesIO(received[2][5:]), parsed, None) == {"n": 2, "text": "ping 2"}


def test_kafka_cluster_ids_never_start_with_a_dash():
    # one random id in 64 starts with "-", which kafka-storage's parser takes for an option
    from services import servers

    draws = iter([b"\xf8" + bytes(15), b"\xf8" + bytes(15), b"\x01" * 16])
    cluster_id = servers.kafka_cluster_id(lambda: next(draws))
    assert cluster_id == "AQEBAQEBAQEBAQEBAQEBAQ"
    assert all(not servers.kafka_cluster_id().startswith("-") for _ in range(2000))
