"""fastavro.write.Writer against the drop-in's: a container file written a record at a time.

    python -m benchmarks.writer_class                 # 20,000 records, 7 interleaved rounds
    python -m benchmarks.writer_class --records 5000 --repeats 3

Each round writes the same records with ``Writer(fo, parsed).write(record)``
one call per record, then ``flush()``, for fastavro and for
``roastedavro.fastavro.write.Writer`` in turn (the order alternating), into a
fresh BytesIO with the same sync marker; the figure is the best round's ns
per record. Both files must be byte for byte the same (checked every round).
The drop-in's codec is compiled before timing (as a long-running writer's is
after its first records), so no round mixes the interpreter and the compiled
codec. Cases: the 3-field record of benchmarks/memory.py and the clickstream
event of benchmarks/avro_schemas.py.
"""

from __future__ import annotations

import argparse
import io
import random
import time

import fastavro
import fastavro.write

import roastedavro.fastavro as dropin
from roastedavro.fastavro.write import Writer

SMALL = {
    "type": "record",
    "name": "Small",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "score", "type": ["null", "double"]},
    ],
}
SYNC = b"S" * 16


def cases(count: int) -> dict[str, tuple[dict, list]]:
    from benchmarks.avro_schemas import CASES

    event = CASES["event"]
    rng = random.Random(event.seed)
    return {
        "small": (
            SMALL,
            [{"id": n, "name": f"n{n}", "score": None if n % 3 else n / 7} for n in range(count)],
        ),
        "event": (event.schema, [event.make_datum(rng) for _ in range(count)]),
    }


def write_all(make, parsed, records) -> tuple[float, bytes]:
    out = io.BytesIO()
    writer = make(out, parsed, sync_marker=SYNC)
    write = writer.write
    started = time.perf_counter()
    for record in records:
        write(record)
    writer.flush()
    return time.perf_counter() - started, out.getvalue()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.writer_class", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    print("| case | fastavro Writer ns/record | drop-in Writer ns/record | speedup |")
    print("| --- | ---: | ---: | ---: |")
    for name, (schema, records) in cases(args.records).items():
        theirs, ours = fastavro.parse_schema(schema), dropin.parse_schema(schema)
        dropin.codec_for(ours).compile()
        best = {"fastavro": float("inf"), "drop-in": float("inf")}
        contenders = [("fastavro", fastavro.write.Writer, theirs), ("drop-in", Writer, ours)]
        for round_ in range(args.repeats):
            files = {}
            for label, make, parsed in contenders[:: 1 if round_ % 2 else -1]:
                seconds, files[label] = write_all(make, parsed, records)
                best[label] = min(best[label], seconds)
            if files["fastavro"] != files["drop-in"]:
                raise SystemExit(f"{name}: the drop-in's file is not fastavro's")
        per = {label: best[label] / len(records) * 1e9 for label in best}
        print(
            f"| {name} | {per['fastavro']:,.0f} | {per['drop-in']:,.0f} | "
            f"**{per['fastavro'] / per['drop-in']:.1f}×** |"
        )


if __name__ == "__main__":
    main()
