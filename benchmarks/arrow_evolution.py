"""Reading Avro files into Arrow tables with a reader schema (schema evolution).

    python -m benchmarks.arrow_evolution                    # 300,000 records, 5 rounds, ~4 min
    python -m benchmarks.arrow_evolution --records 100000 --repeats 3

The files are benchmarks/arrow_tables.py's ``flat`` and ``nested`` records
(all different), written once by fastavro (null codec) into a temporary
folder. Each is read with a reader schema a later version of the producer
would have:

- ``flat``: ``count`` int read as long, ``score`` double kept, ``name`` read
  as bytes, ``note`` dropped, the enum's symbols reordered with one added,
  the fields in another order, two fields added from defaults (a string and
  an array of ints);
- ``nested``: the items' ``price`` dropped and a ``discount`` float added,
  ``quantity`` read as long, the customer's address fields swapped, the map's
  longs read as doubles, a field added from a default record.

Contenders, each reading the whole file into a ``pyarrow.Table``:

- ``roastedavro``: ``roastedavro.arrow.read_table(path, reader_schema=reader)``
  (each block rearranged as the reader's bytes by tier 0, then decoded into
  Arrow buffers);
- ``roastedavro values``: the same call with the buffer path switched off
  (the resolving interpreter's records, then built into columns: what
  read_table did before);
- ``fastavro`` (the baseline): ``pa.Table.from_pylist(list(fastavro.reader(f,
  reader_schema=reader)), schema=arrow_schema(reader))``;
- ``as written``: ``read_table(path)`` without a reader schema, the cost of
  reading the same file with no evolution, for scale.

One process; every round runs each contender once per case, in an order
rotated by one each round; ``gc.collect()`` before each run. The figure is
the median of the rounds (records/s, and the ratio over fastavro's). The
tables are checked once before timing: roastedavro's two paths give equal
tables. Writes benchmarks/results/arrow_evolution.json and .md.
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
if not __package__:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(ROOT))

import fastavro  # noqa: E402
import pyarrow as pa  # noqa: E402

import roastedavro.arrow as ra  # noqa: E402
from benchmarks.arrow_tables import FLAT, NESTED, make_batch, timed  # noqa: E402
from benchmarks.container_files import rotated  # noqa: E402
from benchmarks.run import cpu_and_commit  # noqa: E402

FLAT_READER = {
    "type": "record",
    "name": "Flat",
    "namespace": "bench",
    "fields": [
        {
            "name": "kind",
            "type": {"type": "enum", "name": "Kind", "symbols": ["BUY", "RETURN", "VIEW", "CLICK", "GIFT"]},
        },
        {"name": "id", "type": "long"},
        {"name": "name", "type": "bytes"},
        {"name": "count", "type": "long"},
        {"name": "score", "type": "double"},
        {"name": "active", "type": "boolean"},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "source", "type": "string", "default": "web"},
        {"name": "flags", "type": {"type": "array", "items": "int"}, "default": [1, 2]},
    ],
}
NESTED_READER = {
    "type": "record",
    "name": "Order",
    "namespace": "bench",
    "fields": [
        {"name": "id", "type": "long"},
        {
            "name": "items",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Item",
                    "fields": [
                        {"name": "quantity", "type": "long"},
                        {"name": "sku", "type": "string"},
                        {"name": "discount", "type": "float", "default": 0.0},
                    ],
                },
            },
        },
        {
            "name": "customer",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Customer",
                    "fields": [
                        {"name": "name", "type": "string"},
                        {"name": "tier", "type": "int"},
                        {
                            "name": "address",
                            "type": {
                                "type": "record",
                                "name": "Address",
                                "fields": [
                                    {"name": "zip", "type": "string"},
                                    {"name": "city", "type": "string"},
                                ],
                            },
                        },
                    ],
                },
            ],
            "default": None,
        },
        {"name": "counters", "type": {"type": "map", "values": "double"}},
        {
            "name": "origin",
            "type": {
                "type": "record",
                "name": "Origin",
                "fields": [{"name": "system", "type": "string"}, {"name": "version", "type": "int"}],
            },
            "default": {"system": "legacy", "version": 1},
        },
    ],
}
CASES = {"flat": (FLAT, FLAT_READER), "nested": (NESTED, NESTED_READER)}
CONTENDERS = ("roastedavro", "roastedavro values", "fastavro", "as written")


def values_path(path: str, reader: dict) -> pa.Table:
    """read_table with the buffer path switched off (the records as values)."""
    original = ra.resolving_column_reader
    ra.resolving_column_reader = lambda *args: None  # type: ignore[assignment]
    try:
        return ra.read_table(path, reader_schema=reader)
    finally:
        ra.resolving_column_reader = original  # type: ignore[assignment]


def calls(reader: dict) -> dict[str, Callable[[str], pa.Table]]:
    target = ra.arrow_schema(reader)
    parsed = fastavro.parse_schema(reader)

    def fastavro_read(path: str) -> pa.Table:
        with open(path, "rb") as fo:
            return pa.Table.from_pylist(list(fastavro.reader(fo, reader_schema=parsed)), schema=target)

    return {
        "roastedavro": lambda path: ra.read_table(path, reader_schema=reader),
        "roastedavro values": lambda path: values_path(path, reader),
        "fastavro": fastavro_read,
        "as written": ra.read_table,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    seconds: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="arrow-evolution-") as folder:
        paths = {}
        for case, (writer, reader) in CASES.items():
            paths[case] = str(Path(folder) / f"{case}.avro")
            with open(paths[case], "wb") as fo:
                fastavro.writer(fo, fastavro.parse_schema(writer), make_batch(case, args.records))
            buffers = ra.read_table(paths[case], reader_schema=reader)
            if not buffers.equals(values_path(paths[case], reader)):
                raise SystemExit(f"{case}: the buffer path and the values path read different tables")
            seconds[case] = {name: [] for name in CONTENDERS}
        for round_ in range(args.repeats):
            for case, (_, reader) in CASES.items():
                contenders = calls(reader)
                for name in rotated(list(CONTENDERS), round_):
                    seconds[case][name].append(timed(contenders[name], paths[case]))
            print(f"round {round_ + 1}/{args.repeats} done", file=sys.stderr)
    cpu, commit = cpu_and_commit()
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "python": sys.version.split()[0],
        "cpu": cpu,
        "commit": commit,
        "records": args.records,
        "repeats": args.repeats,
        "cases": {
            case: {
                name: {"median_s": statistics.median(times), "best_s": min(times)}
                for name, times in by_name.items()
            }
            for case, by_name in seconds.items()
        },
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "arrow_evolution.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "arrow_evolution.md").write_text(markdown(report))
    print(markdown(report))
    return report


def markdown(report: dict) -> str:
    out = io.StringIO()
    out.write("# Avro into Arrow with a reader schema\n\n")
    out.write(
        f"{report['date']}, Python {report['python']}, commit {report['commit']}, {report['cpu']}; "
        f"{report['records']:,} records per file (null codec), median of {report['repeats']} interleaved "
        f"rounds (`python -m benchmarks.arrow_evolution`; its docstring: the schemas and the method).\n\n"
    )
    out.write("| case | contender | records/s | × fastavro |\n| --- | --- | ---: | ---: |\n")
    for case, by_name in report["cases"].items():
        base = by_name["fastavro"]["median_s"]
        for name, figures in by_name.items():
            rate = report["records"] / figures["median_s"]
            out.write(f"| {case} | {name} | {rate:,.0f} | {base / figures['median_s']:.1f}× |\n")
    return out.getvalue()


if __name__ == "__main__":
    main()
