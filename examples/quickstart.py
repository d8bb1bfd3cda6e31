"""roastedavro in one page: declare, compile, dump, load; compare with fastavro.

Run: python examples/quickstart.py
"""

import io
import time

import fastavro
from marshmallow import fields

from roastedavro import CompiledSchema, compiler


class Trade(CompiledSchema):
    class Meta:
        avro_name = "Trade"
        avro_namespace = "markets.v1"

    symbol = fields.String(required=True)
    price = fields.Float()
    size = fields.Integer()
    ts = fields.Integer()
    venue = fields.String(allow_none=True)
    flags = fields.List(fields.String())


def per_record(function, repeat=5, number=20_000):
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for _ in range(number):
            function()
        best = min(best, (time.perf_counter() - started) / number)
    return best * 1e6


def main():
    schema = Trade()
    started = time.perf_counter()
    schema.compile()
    how = "built" if "cc" in compiler.last_timing else "loaded from the cache"
    print(f"compiled in {time.perf_counter() - started:.2f} s ({how})")

    trade = {
        "symbol": "AAPL",
        "price": 187.25,
        "size": 300,
        "ts": 1_700_000_000_123_456,
        "venue": "XNAS",
        "flags": ["odd_lot"],
    }
    data = schema.dump_compiled(trade)
    parsed = fastavro.parse_schema(schema.avro_schema())
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, schema.dump(trade))
    print("roastedavro:", data.hex(" "))
    print("fastavro:   ", out.getvalue().hex(" "))
    print("identical bytes:", data == out.getvalue())
    print("loaded:", schema.load_compiled(data))

    def fastavro_dump():
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, parsed, trade)

    def fastavro_load():
        fastavro.schemaless_reader(io.BytesIO(data), parsed, None)

    timings = {
        "roastedavro dump_compiled": per_record(lambda: schema.dump_compiled(trade)),
        "fastavro schemaless_writer": per_record(fastavro_dump),
        "roastedavro load_compiled": per_record(lambda: schema.load_compiled(data)),
        "fastavro schemaless_reader": per_record(fastavro_load),
    }
    for name, micros in timings.items():
        print(f"{name:28s} {micros:7.3f} µs per record")


if __name__ == "__main__":
    main()
