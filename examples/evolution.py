"""Schema evolution with .avsc files: data written with version 1, read with version 2.

schemas/shop.Order.avsc is version 1 of the order; schemas/v2/shop.Order.avsc
adds a currency and a postcode (with defaults), a CANCELLED status, widens
quantities to long and renames notes to remarks (the old name an alias).
Run: python examples/evolution.py
"""

import datetime
import io
import time
import uuid
from decimal import Decimal
from pathlib import Path

import fastavro

import roastedavro.fastavro as dropin
from roastedavro import AvroCodec, DecodeError, check_compatibility, check_mode
from roastedavro.avro import load_schema

SCHEMAS = Path(__file__).resolve().parent / "schemas"
v1 = load_schema(SCHEMAS / "shop.Order.avsc")
v2 = load_schema(SCHEMAS / "v2" / "shop.Order.avsc")

order = {
    "id": uuid.UUID("6f1c9a6e-3a51-4c2e-9d8e-0b4a0e7c2f11"),
    "placed": datetime.datetime(2026, 11, 23, 9, 30, tzinfo=datetime.timezone.utc),
    "status": "PAID",
    "ship_to": {"street": "Storgata 1", "city": "Oslo", "country": "NO"},
    "lines": [{"sku": "COFFEE-1KG", "quantity": 2, "price": Decimal("249.00")}],
    "payment": {"due_days": 30},
    "notes": {"gift": "yes"},
}

# a producer still on version 1 writes the order
data = AvroCodec(v1).dump(order)

# a consumer on version 2 reads it: the pair is compiled once, then each
# read costs what reading version 2's own data costs
consumer = AvroCodec(v2, writer_schema=v1)
read = consumer.load(data)
print("version 2 reads version 1's order:")
for key, value in read.items():
    print(f"  {key}: {value!r}")

# the same through the fastavro drop-in, and fastavro's own answer
v1_dict, v2_dict = v1.to_dict(), v2.to_dict()
ours = dropin.schemaless_reader(io.BytesIO(data), v1_dict, v2_dict)
theirs = fastavro.schemaless_reader(
    io.BytesIO(data), fastavro.parse_schema(v1_dict), fastavro.parse_schema(v2_dict)
)
print("reads what fastavro reads:", ours == read == theirs)

# compatibility as a schema registry checks it (Java's SchemaCompatibility)
print("v2 reads v1 (BACKWARD):", check_mode(v2, [v1], "BACKWARD").compatible)
forward = check_compatibility(reader=v1, writer=v2)
print("v1 reads v2 (FORWARD):", forward.compatible)
for reason in forward.incompatibilities:
    print("  ", reason)

# a consumer still on version 1 cannot read version 2's quantities (long to
# int): an order's lines fail as they are read (an order without lines
# reads, as in Java)
try:
    AvroCodec(v1, writer_schema=v2).load(consumer.dump(read))  # version 2's bytes
except DecodeError as error:
    print("version 1 cannot read version 2:", error)


def per_datum(function, repeat=5, number=5_000):
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for _ in range(number):
            function()
        best = min(best, (time.perf_counter() - started) / number)
    return best * 1e6


parsed_v1, parsed_v2 = fastavro.parse_schema(v1_dict), fastavro.parse_schema(v2_dict)
ours_us = per_datum(lambda: consumer.load(data))
fastavro_us = per_datum(lambda: fastavro.schemaless_reader(io.BytesIO(data), parsed_v1, parsed_v2))
print(
    f"reading v1 data as v2: roastedavro {ours_us:.2f} us, fastavro {fastavro_us:.2f} us "
    f"({fastavro_us / ours_us:.1f}x)"
)
