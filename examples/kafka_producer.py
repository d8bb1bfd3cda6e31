"""Produce shop orders to Kafka with roastedavro's serializer (schema version 1).

    python examples/kafka_producer.py --bootstrap 127.0.0.1:9092 \
        --registry http://127.0.0.1:8081 --topic orders --count 10000

The serializer registers schemas/shop.Order.avsc under the subject
"<topic>-value" and writes each order in the Confluent wire format (a zero
byte, the schema id, Avro binary): what confluent-kafka's AvroSerializer
writes. Its first orders go through fastavro while the codec compiles in a
child process; the compiled codec takes over when it is ready.
Defaults come from KAFKA_BOOTSTRAP and SCHEMA_REGISTRY_URL.
"""

import argparse
import datetime
import os
import random
import time
import uuid
from decimal import Decimal
from pathlib import Path

from confluent_kafka import SerializingProducer
from confluent_kafka.schema_registry import SchemaRegistryClient

from roastedavro.avro import load_schema
from roastedavro.kafka import AvroSerializer

SCHEMAS = Path(__file__).resolve().parent / "schemas"


def orders(count, seed=7):
    rng = random.Random(seed)
    placed = datetime.datetime(2026, 11, 23, 9, 0, tzinfo=datetime.timezone.utc)
    for number in range(count):
        yield {
            "id": uuid.UUID(int=rng.getrandbits(128)),
            "placed": placed + datetime.timedelta(seconds=number),
            "status": rng.choice(["NEW", "PAID", "SHIPPED"]),
            "ship_to": rng.choice([None, {"street": "Storgata 1", "city": "Oslo", "country": "NO"}]),
            "lines": [
                {
                    "sku": f"SKU-{rng.randrange(100)}",
                    "quantity": rng.randrange(1, 5),
                    "price": Decimal(rng.randrange(100, 100000)).scaleb(-2),
                }
                for _ in range(rng.randrange(1, 4))
            ],
            "payment": rng.choice([{"last4": "4242"}, {"due_days": 30}]),
            "notes": {"gift": "yes"} if number % 10 == 0 else {},
        }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default=os.environ.get("KAFKA_BOOTSTRAP", "127.0.0.1:9092"))
    parser.add_argument("--registry", default=os.environ.get("SCHEMA_REGISTRY_URL", "http://127.0.0.1:8081"))
    parser.add_argument("--topic", default="orders")
    parser.add_argument("--count", type=int, default=10_000)
    args = parser.parse_args()

    registry = SchemaRegistryClient({"url": args.registry})
    serializer = AvroSerializer(registry, load_schema(SCHEMAS / "shop.Order.avsc"))
    producer = SerializingProducer(
        {"bootstrap.servers": args.bootstrap, "linger.ms": 5, "value.serializer": serializer}
    )
    started = time.perf_counter()
    for number, order in enumerate(orders(args.count)):
        producer.produce(args.topic, value=order)
        if number % 1000 == 0:
            producer.poll(0)
    left = producer.flush(60)
    elapsed = time.perf_counter() - started
    print(f"produced {args.count - left} orders (schema version 1) to {args.topic!r} in {elapsed:.2f} s")
    print(f"serialized by path: {dict(serializer.stats)}")
    return 1 if left else 0


if __name__ == "__main__":
    raise SystemExit(main())
