"""Plain Avro schemas (.avsc files), no marshmallow: AvroCodec and the fastavro drop-in.

schemas/shop.Order.avsc uses shop.Address, defined in its own file beside it.
Run: python examples/plain_avro.py
"""

import datetime
import io
import time
import uuid
from decimal import Decimal
from pathlib import Path

import fastavro

import roastedavro.fastavro as dropin
from roastedavro import AvroCodec
from roastedavro.avro import load_schema

SCHEMAS = Path(__file__).resolve().parent / "schemas"

order = {
    "id": uuid.UUID("6f1c9a6e-3a51-4c2e-9d8e-0b4a0e7c2f11"),
    "placed": datetime.datetime(2026, 11, 23, 9, 30, tzinfo=datetime.timezone.utc),
    "status": "PAID",
    "ship_to": {"street": "Storgata 1", "city": "Oslo"},  # country: its default
    "lines": [
        {"sku": "COFFEE-1KG", "quantity": 2, "price": Decimal("249.00")},
        {"sku": "FILTER-100", "quantity": 1, "price": Decimal("39.90")},
    ],
    "payment": {"due_days": 30},  # the Invoice branch
}


def per_datum(function, repeat=5, number=5_000):
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for _ in range(number):
            function()
        best = min(best, (time.perf_counter() - started) / number)
    return best * 1e6


def main():
    schema = load_schema(SCHEMAS / "shop.Order.avsc")  # finds shop.Address.avsc by name
    print("canonical form:", schema.canonical_form()[:100], "...")
    print(f"fingerprint:    {schema.fingerprint():#018x} (CRC-64-AVRO)")

    codec = AvroCodec(schema)  # served at once by tier 0
    data = codec.dump(order)
    parsed = fastavro.parse_schema(schema.to_dict())
    expected = io.BytesIO()
    fastavro.schemaless_writer(expected, parsed, order)
    print("bytes equal to fastavro's:", data == expected.getvalue())
    loaded = codec.load(data)
    print("loads what fastavro loads:", loaded == fastavro.schemaless_reader(io.BytesIO(data), parsed))

    # code written for fastavro, with one import changed
    out = io.BytesIO()
    dropin.schemaless_writer(out, parsed, order)
    assert out.getvalue() == data

    theirs_dump = per_datum(lambda: fastavro.schemaless_writer(io.BytesIO(), parsed, order))
    theirs_load = per_datum(lambda: fastavro.schemaless_reader(io.BytesIO(data), parsed))
    for step in ("first", "compiled"):
        if step == "compiled":
            codec.compile()  # built once, then cached on disk
        assert codec.load(codec.dump(order)) == loaded
        ours_dump = per_datum(lambda: codec.dump(order))
        ours_load = per_datum(lambda: codec.load(data))
        # tier 0 ("interpreter") first, unless the compiled codec was found in the cache
        print(
            f"{codec.tier:>11} dump: {ours_dump:.2f} us against fastavro's {theirs_dump:.2f} us "
            f"({theirs_dump / ours_dump:.1f}x)"
        )
        print(
            f"{codec.tier:>11} load: {ours_load:.2f} us against fastavro's {theirs_load:.2f} us "
            f"({theirs_load / ours_load:.1f}x)"
        )


if __name__ == "__main__":
    main()
