"""Consume shop orders from Kafka with roastedavro's deserializer, as schema version 2.

    python examples/kafka_consumer.py --bootstrap 127.0.0.1:9092 \
        --registry http://127.0.0.1:8081 --topic orders --count 10000

Each message names the schema it was written with (version 1, by
kafka_producer.py); the deserializer fetches it from the registry and reads
the order as schemas/v2/shop.Order.avsc (a currency with a default, notes
renamed remarks, ...). A writer schema met for the first time is read by
fastavro at once while its codec for the (writer, reader) pair compiles in a
child process; the output shows how many orders each path read.
Defaults come from KAFKA_BOOTSTRAP and SCHEMA_REGISTRY_URL.
"""

import argparse
import os
import time
import uuid
from pathlib import Path

from confluent_kafka import DeserializingConsumer
from confluent_kafka.schema_registry import SchemaRegistryClient

from roastedavro.avro import load_schema
from roastedavro.kafka import AvroDeserializer

SCHEMAS = Path(__file__).resolve().parent / "schemas"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default=os.environ.get("KAFKA_BOOTSTRAP", "127.0.0.1:9092"))
    parser.add_argument("--registry", default=os.environ.get("SCHEMA_REGISTRY_URL", "http://127.0.0.1:8081"))
    parser.add_argument("--topic", default="orders")
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()

    registry = SchemaRegistryClient({"url": args.registry})
    deserializer = AvroDeserializer(registry, load_schema(SCHEMAS / "v2" / "shop.Order.avsc"))
    consumer = DeserializingConsumer(
        {
            "bootstrap.servers": args.bootstrap,
            "group.id": f"orders-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest",
            "value.deserializer": deserializer,
        }
    )
    consumer.subscribe([args.topic])
    read, first, currencies = 0, None, set()
    started = time.perf_counter()
    deadline = time.monotonic() + args.timeout
    try:
        while read < args.count and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None:
                continue
            if message.error():
                raise SystemExit(f"consumer error: {message.error()}")
            order = message.value()
            first = first or order
            currencies.add(order["currency"])
            read += 1
    finally:
        consumer.close()
    elapsed = time.perf_counter() - started
    print(f"consumed {read} orders from {args.topic!r} in {elapsed:.2f} s")
    if first is not None:
        print(
            f"read as version 2: currency {sorted(currencies)}, remarks {first['remarks']!r}, "
            f"status {first['status']}"
        )
    print(f"deserialized by path: {dict(deserializer.stats)}")
    return 0 if read == args.count else 1


if __name__ == "__main__":
    raise SystemExit(main())
