"""Avro container files to and from Arrow tables: ``roastedavro.arrow`` against the other readers.

    python -m benchmarks.arrow_tables                  # full: 1,000,000 records, 3 rounds, ~25 min
    python -m benchmarks.arrow_tables --repeats 5      # the committed run: 5 rounds, ~36 min
    python -m benchmarks.arrow_tables --quick          # 100,000 records, 2 rounds, ~2 min
    python -m benchmarks.arrow_tables --records 300000 # 3 rounds, ~7.5 min
    python -m benchmarks.arrow_tables --cases flat --codecs null

Writes benchmarks/results/arrow_tables.json, arrow_tables.md and
arrow_tables.png (records/s per case, codec and contender, read and write;
``--out`` for another folder).

The files: two record schemas, ``flat`` (8 fields: a long id, an int, a
double, a string, a boolean, ``["null", "string"]``, a timestamp-micros and
an enum of 4 symbols) and ``nested`` (a long id, an array of 0-4 item records,
``["null", Customer]`` with a nested record, a ``map<long>`` of 0-4 entries).
``--records`` (1,000,000; ``--quick`` 100,000) records are drawn from a
seeded generator, all different unless ``--distinct`` N cycles N of them
(cycled records make a codec's work depend on its block size: zstandard
finds whole repeats in a block of 65,536 records that a 16 KB block does
not hold). Each file is
written once per case and codec by fastavro (``fastavro.writer``), outside the
timings, into a temporary folder; every reader reads that file by its path.
Codecs: null and zstandard (zstandard when fastavro can write it here, through
``zstandard`` or ``backports.zstd``).

Reading (path -> ``pyarrow.Table``), each contender reading the whole file:

- ``roastedavro``: ``roastedavro.arrow.read_table(path)``, the schema's codec
  compiled (or found in the cache) before the checks;
- ``fastavro`` (the baseline): ``pa.Table.from_pylist(list(fastavro.reader(f)),
  schema=arrow_schema(avro))``: the records as dicts, then pyarrow's
  conversion with roastedavro's Arrow schema (without it pyarrow infers a
  map's dicts as structs with a field per key ever seen);
- ``polars-avro``: ``polars_avro.read_avro(path).to_arrow()``;
- ``jetliner``: ``jetliner.read_avro(path).to_arrow()``;
- ``polars``: polars' own ``pl.read_avro(path).to_arrow()``.

Writing (``pyarrow.Table`` -> a file in the temporary folder, deleted after
each run), the table being roastedavro's ``read_table`` of the file:

- ``roastedavro``: ``roastedavro.arrow.write_table(table, path, schema=avro, codec=codec)``;
- ``fastavro`` (the baseline): ``fastavro.writer(f, parsed, table.to_pylist(
  maps_as_pydicts="strict"), codec=codec)`` (fastavro needs a map as a dict;
  the schema parsed once);
- ``polars-avro``: ``polars_avro.write_avro(df, path, codec=...)``;
- ``polars``: ``df.write_avro(path, compression=...)`` (uncompressed, snappy or
  deflate only: n/a for zstandard).

The polars writers take a DataFrame made once from the table, outside the
timings (``pl.from_arrow``, the enum's dictionary column cast to a string,
which neither polars writer takes as a Categorical); they write their own
Avro schema derived from the DataFrame, not the file's.

Checks, once, outside the timings: every reader's table must have the
file's row count; then column by column against roastedavro's table, equal
values where the types agree, else equal after casting the contender's
column to roastedavro's type (the type difference is reported), else the
column is reported as differing. ``roastedavro``'s table must equal
fastavro's reading of the same file. Every written file is read back (by
roastedavro's ``read_table``, else by fastavro) and must hold the row count
(and, for the writers given the file's schema, the same table). A contender
that raises (anything, ``BaseException`` included: polars' reader panics on
maps with a ``PanicException`` outside ``Exception``) is reported as
"fails" and not timed in that direction.

Timing: one process, ``--repeats`` rounds (3; ``--quick`` 2); in each round, per case and
codec, every reader reads once, then every writer writes once, in an order
rotated by one each round (the machine is shared and noisy: interleaving
spreads the noise over the contenders). ``gc.collect()`` before each run.
The figure is the median of the rounds: records/s = records / median wall
time; ratio = contender records/s / fastavro's. The best round is kept in
the JSON.

Aims (reported as met or not): reading, roastedavro at least 1.5× the faster
of polars-avro and jetliner, and 20× fastavro; writing, at least
polars-avro's speed.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
if not __package__:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(ROOT))

import fastavro  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402

import roastedavro.arrow as ra  # noqa: E402
from roastedavro.codec import AvroCodec  # noqa: E402
from benchmarks.container_files import fastavro_codec_missing, rotated  # noqa: E402
from benchmarks.contenders import _short  # noqa: E402
from benchmarks.run import cpu_and_commit, fmt_x  # noqa: E402

BASELINE = "fastavro"
OURS = "roastedavro"
READERS = ("roastedavro", "fastavro", "polars-avro", "jetliner", "polars")
WRITERS = ("roastedavro", "fastavro", "polars-avro", "polars")
DIRECTIONS = ("read", "write")
CODECS = ("null", "zstandard")
COLORS = {
    "fastavro": "#8c8c8c",
    "roastedavro": "#7f2704",
    "polars-avro": "#1f78b4",
    "jetliner": "#33a02c",
    "polars": "#a6cee3",
}

KIND = {"type": "enum", "name": "Kind", "symbols": ["CLICK", "VIEW", "BUY", "RETURN"]}
FLAT = {
    "type": "record",
    "name": "Flat",
    "namespace": "bench",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "count", "type": "int"},
        {"name": "score", "type": "double"},
        {"name": "name", "type": "string"},
        {"name": "active", "type": "boolean"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "kind", "type": KIND},
    ],
}
NESTED = {
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
                        {"name": "sku", "type": "string"},
                        {"name": "quantity", "type": "int"},
                        {"name": "price", "type": "double"},
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
                                    {"name": "city", "type": "string"},
                                    {"name": "zip", "type": "string"},
                                ],
                            },
                        },
                    ],
                },
            ],
            "default": None,
        },
        {"name": "counters", "type": {"type": "map", "values": "long"}},
    ],
}
SCHEMAS = {"flat": FLAT, "nested": NESTED}
DESCRIPTIONS = {
    "flat": "8 fields: long, int, double, string, boolean, [null, string], timestamp-micros, enum",
    "nested": "long, array of 0-4 Item records (string, int, double), [null, Customer] "
    "(string, int, a nested Address record), map<string, long> of 0-4 entries",
}
EPOCH = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett"]


def flat_record(rng: random.Random, n: int) -> dict:
    return {
        "id": n * 7919 + rng.randrange(1 << 40),
        "count": rng.randrange(-(1 << 31), 1 << 31),
        "score": rng.random() * 1e6 - 5e5,
        "name": f"{rng.choice(WORDS)}-{rng.randrange(100_000)}",
        "active": rng.random() < 0.5,
        "note": None if rng.random() < 0.4 else " ".join(rng.choices(WORDS, k=rng.randrange(1, 5))),
        "at": EPOCH + datetime.timedelta(microseconds=rng.randrange(10**13)),
        "kind": rng.choice(KIND["symbols"]),
    }


def nested_record(rng: random.Random, n: int) -> dict:
    return {
        "id": n * 104729 + rng.randrange(1 << 40),
        "items": [
            {
                "sku": f"SKU-{rng.randrange(10_000):05d}",
                "quantity": rng.randrange(1, 20),
                "price": rng.random() * 100,
            }
            for _ in range(rng.randrange(5))
        ],
        "customer": None
        if rng.random() < 0.3
        else {
            "name": f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()}",
            "tier": rng.randrange(4),
            "address": {"city": rng.choice(WORDS), "zip": f"{rng.randrange(100_000):05d}"},
        },
        "counters": {
            f"{rng.choice(WORDS)}{k}": rng.randrange(-(1 << 40), 1 << 40) for k in range(rng.randrange(5))
        },
    }


MAKERS: dict[str, Callable[[random.Random, int], dict]] = {"flat": flat_record, "nested": nested_record}


def make_batch(case: str, distinct: int) -> list[dict]:
    rng = random.Random(f"arrow_tables/{case}")
    return [MAKERS[case](rng, n) for n in range(distinct)]


def cycled(batch: list, count: int):
    for index in range(count):
        yield batch[index % len(batch)]


# -- contenders --------------------------------------------------------------------------


def reader_calls(schema: dict) -> dict[str, Callable[[str], pa.Table]]:
    import jetliner
    import polars as pl
    import polars_avro

    target = ra.arrow_schema(schema)

    def fastavro_read(path):
        with open(path, "rb") as fo:
            return pa.Table.from_pylist(list(fastavro.reader(fo)), schema=target)

    return {
        "roastedavro": ra.read_table,
        "fastavro": fastavro_read,
        "polars-avro": lambda path: polars_avro.read_avro(path).to_arrow(),
        "jetliner": lambda path: jetliner.read_avro(path).to_arrow(),
        "polars": lambda path: pl.read_avro(path).to_arrow(),
    }


READ_CALLS = {
    "roastedavro": "roastedavro.arrow.read_table(path)",
    "fastavro": "pa.Table.from_pylist(list(fastavro.reader(f)), schema=arrow_schema(avro))",
    "polars-avro": "polars_avro.read_avro(path).to_arrow()",
    "jetliner": "jetliner.read_avro(path).to_arrow()",
    "polars": "pl.read_avro(path).to_arrow()",
}
WRITE_CALLS = {
    "roastedavro": "roastedavro.arrow.write_table(table, path, schema=avro, codec=codec)",
    "fastavro": 'fastavro.writer(f, parsed, table.to_pylist(maps_as_pydicts="strict"), codec=codec)',
    "polars-avro": "polars_avro.write_avro(df, path, codec=polars_avro.Codec.Zstandard or None)",
    "polars": 'df.write_avro(path, compression="uncompressed")',
}


def polars_frame(table: pa.Table):
    """The DataFrame the polars writers take: dictionary (enum) columns as strings."""
    import polars as pl

    columns = {}
    for field, column in zip(table.schema, table.columns):
        if pa.types.is_dictionary(field.type):
            column = pc.cast(column, field.type.value_type)
        columns[field.name] = column
    return pl.from_arrow(pa.table(columns))


def writer_calls(schema: dict, codec: str, table: pa.Table, frame) -> dict[str, Callable[[str], None] | str]:
    """(path) -> None per writer, or why it cannot write ``codec``."""
    import polars_avro

    parsed = fastavro.parse_schema(schema)

    def fastavro_write(path):
        with open(path, "wb") as fo:
            fastavro.writer(fo, parsed, table.to_pylist(maps_as_pydicts="strict"), codec=codec)

    polars_avro_codec = {"null": None, "zstandard": polars_avro.Codec.Zstandard}[codec]
    calls: dict[str, Callable[[str], None] | str] = {
        "roastedavro": lambda path: ra.write_table(table, path, schema=schema, codec=codec),
        "fastavro": fastavro_write,
        "polars-avro": lambda path: polars_avro.write_avro(frame, path, codec=polars_avro_codec),
    }
    compression = {"null": "uncompressed"}.get(codec)
    if compression is None:
        calls["polars"] = f"write_avro has no {codec} (uncompressed, snappy, deflate only)"
    else:
        calls["polars"] = lambda path: frame.write_avro(path, compression=compression)
    return calls


def attempt(call: Callable, *args) -> tuple[Any, str | None]:
    """call(*args), or None and why it failed: any exception, a Rust panic included."""
    try:
        return call(*args), None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # noqa: BLE001 - pyo3's PanicException is a BaseException
        return None, "fails: " + _short(error)


# -- checks ---------------------------------------------------------------------------------


def compare_tables(got: pa.Table, want: pa.Table) -> tuple[str | None, list[str]]:
    """(why ``got`` does not hold ``want``'s values, or None; the type differences)."""
    if got.num_rows != want.num_rows:
        return f"{got.num_rows:,} rows, not {want.num_rows:,}", []
    notes = []
    names = set(got.column_names)
    for field in want.schema:
        if field.name not in names:
            return f"no column {field.name!r}", notes
        column = got.column(field.name)
        expected = want.column(field.name)
        if column.type != field.type:
            notes.append(f"{field.name}: {column.type} (roastedavro: {field.type})")
            try:
                column = pc.cast(column, field.type)
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as error:  # noqa: BLE001
                try:  # e.g. a map read as a list of structs: compare as Python values
                    same = normalized(column.to_pylist()) == normalized(expected.to_pylist())
                except BaseException:  # noqa: BLE001
                    same = False
                if not same:
                    return f"{field.name}: cannot cast to {field.type} ({_short(error)})", notes
                continue
        if not column.equals(expected):
            if pa.types.is_dictionary(field.type) and pc.cast(column, field.type.value_type).equals(
                pc.cast(expected, field.type.value_type)
            ):
                continue  # the same symbols under another dictionary
            return f"{field.name}: values differ", notes
    extra = sorted(names - set(want.column_names))
    if extra:
        notes.append(f"extra columns {extra}")
    return None, notes


def normalized(value: Any) -> Any:
    """Maps as dicts (a list of {key, value} structs or (key, value) tuples becomes a dict)."""
    if isinstance(value, list):
        if value and all(isinstance(x, tuple) and len(x) == 2 for x in value):
            return {k: normalized(v) for k, v in value}
        if value and all(isinstance(x, dict) and set(x) == {"key", "value"} for x in value):
            return {x["key"]: normalized(x["value"]) for x in value}
        return [normalized(x) for x in value]
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items()}
    return value


def read_back(path: str) -> pa.Table:
    table, error = attempt(ra.read_table, path)
    if error is None:
        return table
    with open(path, "rb") as fo:
        return pa.Table.from_pylist(list(fastavro.reader(fo)))


def check_write(name: str, path: str, reference: pa.Table) -> tuple[str | None, list[str]]:
    table = read_back(path)
    if table.num_rows != reference.num_rows:
        return f"file holds {table.num_rows:,} records, not {reference.num_rows:,}", []
    with open(path, "rb") as fo:
        written_schema = fastavro.reader(fo).writer_schema
    if name in ("roastedavro", "fastavro"):
        difference, _ = compare_tables(table, reference)
        return (f"read back: {difference}" if difference else None), []
    difference, notes = compare_tables(table, reference)
    notes = [f"writes its own schema: {json.dumps(written_schema, separators=(',', ':'))[:400]}"] + [
        f"read back {note}" for note in notes
    ]
    if difference:
        notes.append(f"read back by roastedavro, not the table: {difference}")
    return None, notes


# -- timing ---------------------------------------------------------------------------------


def timed(call: Callable, path: str) -> float:
    gc.collect()
    started = time.perf_counter()
    result = call(path)
    elapsed = time.perf_counter() - started
    del result
    return elapsed


def environment(args) -> dict:
    from importlib.metadata import PackageNotFoundError, version

    def installed(package: str) -> str | None:
        try:
            return version(package)
        except PackageNotFoundError:
            return None

    cpu, commit = cpu_and_commit()
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "mode": "quick" if args.quick else "full",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "git_commit": commit,
        "versions": {
            package: installed(package)
            for package in (
                "roastedavro",
                "fastavro",
                "pyarrow",
                "polars",
                "polars-avro",
                "jetliner",
                "backports.zstd",
                "zstandard",
                "cramjam",
            )
        },
        "records": args.records,
        "distinct": args.distinct or args.records,
        "cases": args.cases,
        "codecs": args.codecs,
        "repeats": args.repeats,
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def summarize(seconds: dict, count: int) -> dict:
    """Per case, codec, direction and contender: samples, median, best, records/s, ratio."""
    table: dict = {}
    for key, by_direction in seconds.items():
        table[key] = {}
        for direction, by_name in by_direction.items():
            base = statistics.median(by_name[BASELINE]) if by_name.get(BASELINE) else None
            row = {}
            for name, samples in by_name.items():
                median = statistics.median(samples)
                row[name] = {
                    "seconds": [round(s, 4) for s in samples],
                    "median_s": median,
                    "best_s": min(samples),
                    "records_per_s": count / median,
                    "ratio": base / median if base else None,
                }
            table[key][direction] = row
    return table


def aims(table: dict) -> list[dict]:
    found = []
    for key, by_direction in table.items():
        read, write = by_direction["read"], by_direction["write"]
        ours = read.get(OURS)
        rivals = {n: read[n]["records_per_s"] for n in ("polars-avro", "jetliner") if n in read}
        if ours and rivals:
            rival = max(rivals, key=lambda n: rivals[n])
            ratio = ours["records_per_s"] / rivals[rival]
            found.append(
                {
                    "case": key,
                    "aim": f"read ≥ 1.5× the faster of polars-avro and jetliner ({rival})",
                    "ratio": ratio,
                    "met": ratio >= 1.5,
                }
            )
        if ours and ours["ratio"]:
            found.append(
                {
                    "case": key,
                    "aim": "read ≥ 20× fastavro",
                    "ratio": ours["ratio"],
                    "met": ours["ratio"] >= 20,
                }
            )
        if OURS in write and "polars-avro" in write:
            ratio = write[OURS]["records_per_s"] / write["polars-avro"]["records_per_s"]
            found.append({"case": key, "aim": "write ≥ polars-avro", "ratio": ratio, "met": ratio >= 1})
    return found


# -- report ---------------------------------------------------------------------------------


def fmt_rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def markdown(report: dict) -> str:
    env, table = report["environment"], report["table"]
    count = env["records"]
    command = report["command"]
    lines = [
        "# Avro container files to and from Arrow tables, against fastavro, polars-avro, jetliner and polars",
        "",
        f"{env['date']}, {env['mode']} mode: {count:,} records per file ("
        + ("all different" if env["distinct"] >= count else f"{env['distinct']:,} distinct, cycled")
        + f"), median of {env['repeats']} interleaved rounds. Python {env['python']}, {env['cpu']} "
        f"({env['cpus']} CPUs), {env['platform']}. roastedavro {env['git_commit']}.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in env["versions"].items() if v) + ".",
        f"Load average (1, 5, 15 min) at start {env['loadavg_at_start']}, at end {env.get('loadavg_at_end')}: "
        "the machine is shared, so absolute figures move between runs; rounds are interleaved, so "
        f"ratios move less. Run time {report['elapsed_s']:.0f} s.",
        "",
        f"Regenerate: `{command}` (from the repository root). See the docstring of "
        "benchmarks/arrow_tables.py for the method.",
        "",
    ]
    if count != 1_000_000 and env["mode"] == "full":
        lines += [
            f"Run with `--records {count}` rather than the default 1,000,000: fastavro's rounds "
            "(its writer through `to_pylist` at 15,000-65,000 records/s) make a 1,000,000-record "
            f"run about {report['elapsed_s'] * 1_000_000 / count / 60:.0f} minutes on this machine.",
            "",
        ]
    lines += [
        "The files (written once per case and codec by fastavro, read from a temporary folder):",
        "",
    ]
    for case in env["cases"]:
        lines.append(f"- `{case}`: {DESCRIPTIONS[case]}; {report['file_sizes'].get(case, '')}")
    lines += [
        "",
        "| contender | read (path -> pyarrow.Table) | write (pyarrow.Table -> path) |",
        "| --- | --- | --- |",
    ]
    for name in READERS:
        lines.append(f"| {name} | `{READ_CALLS.get(name, '-')}` | `{WRITE_CALLS.get(name, '-')}` |")
    lines += [
        "",
        "## Records per second (ratio over fastavro)",
        "",
        f"Median of {env['repeats']} rounds; fails: the contender raised (see Checks); n/a: the codec "
        "is not offered; -: no writer.",
        "",
        "| case | codec | direction | " + " | ".join(READERS) + " |",
        "| --- | --- | --- | " + " | ".join("---:" for _ in READERS) + " |",
    ]
    for key in table:
        case, codec = key.split("/")
        for direction in DIRECTIONS:
            row = table[key][direction]
            names = READERS if direction == "read" else WRITERS
            cells = []
            for name in READERS:
                entry = row.get(name)
                excluded = report["excluded"].get(key, {}).get(direction, {}).get(name)
                if name not in names:
                    cells.append("-")
                elif entry is None:
                    cells.append("fails" if excluded and excluded.startswith("fails") else "n/a")
                elif name == BASELINE:
                    cells.append(fmt_rate(entry["records_per_s"]))
                else:
                    cells.append(f"{fmt_rate(entry['records_per_s'])} ({fmt_x(entry['ratio'])})")
            lines.append(f"| {case} | {codec} | {direction} | " + " | ".join(cells) + " |")
    lines += ["", "## Aims", ""]
    for aim in report["aims"]:
        lines.append(
            f"- {aim['case']}: {aim['aim']}: {fmt_x(aim['ratio'])}, {'met' if aim['met'] else 'NOT met'}"
        )
    lines += ["", "## Types: where a contender's table differs from roastedavro's", "", *TYPE_NOTES]
    lines += [
        "",
        "## Best round (records/s)",
        "",
        "| case | codec | direction | " + " | ".join(READERS) + " |",
        "| --- | --- | --- | " + " | ".join("---:" for _ in READERS) + " |",
    ]
    for key in table:
        case, codec = key.split("/")
        for direction in DIRECTIONS:
            row = table[key][direction]
            lines.append(
                f"| {case} | {codec} | {direction} | "
                + " | ".join(fmt_rate(count / row[n]["best_s"]) if n in row else "-" for n in READERS)
                + " |"
            )
    lines += [
        "",
        "## Checks",
        "",
        "Once, outside the timings, on the full files. Reading: every contender's table against "
        "roastedavro's (row count; values column by column, after casting to roastedavro's type "
        "where the types differ; roastedavro's own against fastavro's). Writing: the file read back, "
        "its row count, and for roastedavro and fastavro (given the file's schema) the same table.",
        "",
        "| case | codec | direction | contender | check | notes |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for key, by_direction in report["checks"].items():
        case, codec = key.split("/")
        for direction, by_name in by_direction.items():
            for name, check in by_name.items():
                notes = "; ".join(check["notes"]).replace("|", "\\|") or ""
                verdict = "ok" if check["error"] is None else check["error"].replace("|", "\\|")
                lines.append(f"| {case} | {codec} | {direction} | {name} | {verdict} | {notes} |")
    lines += ["", "![records/s per case and codec](arrow_tables.png)", ""]
    return "\n".join(lines)


TYPE_NOTES = [
    "From the checks below (every table's values equal roastedavro's after a cast to its type):",
    "",
    "- polars-avro, jetliner and polars read strings as `large_string` and arrays as `large_list` "
    "(roastedavro: `string`, `list`), and every nested field as nullable (roastedavro keeps the "
    "Avro type's: a field that is not a union with null is `not null`).",
    "- Enums: all three read a `dictionary<uint32, large_string>` (roastedavro: "
    "`dictionary<int32, string>` whose dictionary is the schema's symbols in order); "
    "fastavro's table, built with roastedavro's Arrow schema, holds the symbols in the order first read.",
    "- Maps: polars-avro reads `map<large_string, int64>`; jetliner a `large_list` of "
    "`struct<key, value>` (a list of pairs, not an Arrow map); polars' `read_avro` panics "
    "(`PanicException: not yet implemented: Avro maps are mapped to MapArrays`).",
    "- timestamp-micros: `timestamp[us, tz=UTC]` in every reader.",
    "- Writing: polars-avro writes its own schema derived from the DataFrame (record "
    '`topLevelRecord`, every field and array item `["null", T]`, the enum as a string), not the '
    "file's; polars' `write_avro` refuses a timestamp with a time zone and a map, and has no "
    "zstandard.",
]


def chart(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = report["table"]
    keys = list(table)
    figure, axes = plt.subplots(1, 2, figsize=(13, 5.4), sharey=True)
    for axis, direction in zip(axes, DIRECTIONS):
        names = READERS if direction == "read" else WRITERS
        width = 0.8 / len(names)
        for index, name in enumerate(names):
            xs, ys, labels = [], [], []
            for position, key in enumerate(keys):
                entry = table[key][direction].get(name)
                if entry is None:
                    continue
                xs.append(position + (index - (len(names) - 1) / 2) * width)
                ys.append(entry["records_per_s"] / 1000)
                labels.append("1×" if name == BASELINE else fmt_x(entry["ratio"]))
            bars = axis.bar(xs, ys, width, label=name, color=COLORS.get(name))
            axis.bar_label(bars, labels, fontsize=7, padding=2, rotation=90)
        axis.set_xticks(range(len(keys)), keys)
        axis.set_yscale("log")
        axis.set_title(
            f"{direction} ({'path -> pyarrow.Table' if direction == 'read' else 'pyarrow.Table -> path'})"
        )
        axis.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("thousand records per second (log scale, higher is better)")
    axes[0].legend(loc="upper right", fontsize=8)
    env = report["environment"]
    figure.suptitle(
        f"Avro files <-> Arrow tables: {env['records']:,} records, median of {env['repeats']}; "
        "label: ratio over fastavro; a missing bar: fails or n/a",
        fontsize=11,
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


# -- main ---------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.arrow_tables", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="100,000 records instead of 1,000,000")
    parser.add_argument("--records", type=int, help="records per file (default 1,000,000; quick 100,000)")
    parser.add_argument(
        "--distinct", type=int, default=0, help="different records, cycled (default 0: all different)"
    )
    parser.add_argument("--cases", default="flat,nested", help="comma-separated: flat, nested (default both)")
    parser.add_argument(
        "--codecs", default=",".join(CODECS), help=f"comma-separated (default {','.join(CODECS)})"
    )
    parser.add_argument("--repeats", type=int, help="interleaved rounds (default 3; quick 2)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="output folder")
    parser.add_argument(
        "--render",
        action="store_true",
        help="rewrite arrow_tables.md and .png from arrow_tables.json in --out",
    )
    args = parser.parse_args(argv)
    if args.records is None:
        args.records = 100_000 if args.quick else 1_000_000
    if args.repeats is None:
        args.repeats = 2 if args.quick else 3
    args.cases = args.cases.split(",")
    args.codecs = args.codecs.split(",")
    for case in args.cases:
        if case not in SCHEMAS:
            parser.error(f"unknown case {case}")
    for codec in args.codecs:
        if codec not in CODECS:
            parser.error(f"unknown codec {codec}")
    return args


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    if args.render:
        report = json.loads((args.out / "arrow_tables.json").read_text())
        (args.out / "arrow_tables.md").write_text(markdown(report))
        chart(report, args.out / "arrow_tables.png")
        return report
    started_all = time.perf_counter()

    def log(message: str) -> None:
        print(message, flush=True)

    env = environment(args)
    codecs = []
    for codec in args.codecs:
        missing = fastavro_codec_missing(codec)
        if missing:
            log(f"{missing}: {codec} left out")
        else:
            codecs.append(codec)
    env["codecs"] = codecs
    log(
        f"arrow tables: {args.records:,} records, cases {', '.join(args.cases)}, codecs {', '.join(codecs)}, "
        f"{args.repeats} rounds; Python {env['python']}, {env['cpu']}"
    )
    seconds: dict = {}
    checks: dict = {}
    excluded: dict = {}
    file_sizes: dict = {}
    with tempfile.TemporaryDirectory(prefix="roastedavro-bench-arrow-") as work:
        files: dict[str, str] = {}
        tables: dict[str, pa.Table] = {}
        frames: dict[str, Any] = {}
        readers: dict[str, dict] = {}
        writers: dict[str, dict] = {}
        for case in args.cases:
            schema = SCHEMAS[case]
            AvroCodec(schema).compile()  # measured compiled: no tier 0, no swap in a run
            batch = make_batch(case, args.distinct or args.records)
            parsed = fastavro.parse_schema(schema)
            sizes = []
            for codec in codecs:
                key = f"{case}/{codec}"
                path = os.path.join(work, f"{case}-{codec}.avro")
                started = time.perf_counter()
                with open(path, "wb") as fo:
                    fastavro.writer(fo, parsed, cycled(batch, args.records), codec=codec)
                sizes.append(f"{codec} {os.path.getsize(path) / 1e6:,.1f} MB")
                log(f"{key}: wrote {os.path.getsize(path):,} bytes in {time.perf_counter() - started:.1f} s")
                files[key] = path
                # checks, outside the timings
                checks[key] = {"read": {}, "write": {}}
                excluded[key] = {"read": {}, "write": {}}
                calls = reader_calls(schema)
                reference, error = attempt(calls[OURS], path)
                if error:
                    raise SystemExit(f"{key}: roastedavro's read_table {error}")
                tables[key] = reference
                frames[key] = polars_frame(reference)
                readers[key] = {}
                for name, call in calls.items():
                    got, error = attempt(call, path)
                    notes: list[str] = []
                    if error is None:
                        if name == OURS:
                            with open(path, "rb") as fo:
                                plain = pa.Table.from_pylist(
                                    list(fastavro.reader(fo)), schema=reference.schema
                                )
                            error, notes = compare_tables(plain, got)
                            error = f"differs from fastavro's: {error}" if error else None
                        else:
                            error, notes = compare_tables(got, reference)
                    del got
                    checks[key]["read"][name] = {"error": error, "notes": notes}
                    if error:
                        excluded[key]["read"][name] = error
                    else:
                        readers[key][name] = call
                    log(
                        f"{key} read  {name:12s} {error or 'ok'}{' (' + '; '.join(notes) + ')' if notes else ''}"
                    )
                writers[key] = {}
                for name, call in writer_calls(schema, codec, reference, frames[key]).items():
                    if isinstance(call, str):
                        checks[key]["write"][name] = {"error": f"n/a: {call}", "notes": []}
                        excluded[key]["write"][name] = f"n/a: {call}"
                        continue
                    out = os.path.join(work, f"out-{name}.avro")
                    _, error = attempt(call, out)
                    notes = []
                    if error is None:
                        error, notes = check_write(name, out, reference)
                    if os.path.exists(out):
                        os.unlink(out)
                    checks[key]["write"][name] = {"error": error, "notes": notes}
                    if error:
                        excluded[key]["write"][name] = error
                    else:
                        writers[key][name] = call
                    log(f"{key} write {name:12s} {error or 'ok'}")
            file_sizes[case] = ", ".join(sizes)
        env["file_sizes"] = file_sizes
        for round_number in range(args.repeats):
            for key, path in files.items():
                seconds.setdefault(key, {"read": {}, "write": {}})
                for name in rotated(list(readers[key]), round_number):
                    seconds[key]["read"].setdefault(name, []).append(timed(readers[key][name], path))
                out = os.path.join(work, "out.avro")
                for name in rotated(list(writers[key]), round_number):
                    seconds[key]["write"].setdefault(name, []).append(timed(writers[key][name], out))
                    os.unlink(out)
                log(
                    f"round {round_number + 1}/{args.repeats} {key:16s} "
                    + "  ".join(
                        f"{d}: "
                        + " ".join(f"{n} {args.records / s[-1]:,.0f}/s" for n, s in seconds[key][d].items())
                        for d in DIRECTIONS
                    )
                )
    table = summarize(seconds, args.records)
    env["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report: dict[str, Any] = {
        "environment": env,
        "command": "python -m benchmarks.arrow_tables"
        + (" " + " ".join(sys.argv[1:]) if sys.argv[1:] else ""),
        "read_calls": READ_CALLS,
        "write_calls": WRITE_CALLS,
        "schemas": {case: SCHEMAS[case] for case in args.cases},
        "file_sizes": file_sizes,
        "table": table,
        "aims": aims(table),
        "checks": checks,
        "excluded": excluded,
    }
    report["elapsed_s"] = round(time.perf_counter() - started_all, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "arrow_tables.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    (args.out / "arrow_tables.md").write_text(markdown(report))
    try:
        chart(report, args.out / "arrow_tables.png")
    except ImportError as error:  # the bench extra's matplotlib
        log(f"no chart: {error} (pip install -e '.[bench]')")
    for key in table:
        for direction in DIRECTIONS:
            row = table[key][direction]
            log(
                f"{key:16s} {direction:5s} "
                + "  ".join(
                    f"{n} {fmt_rate(e['records_per_s'])}/s ({fmt_x(e['ratio'])})" for n, e in row.items()
                )
            )
    for aim in report["aims"]:
        log(f"{aim['case']}: {aim['aim']}: {fmt_x(aim['ratio'])} {'met' if aim['met'] else 'NOT met'}")
    log(
        f"wrote {args.out / 'arrow_tables.json'}, arrow_tables.md and arrow_tables.png in {report['elapsed_s']:.0f} s"
    )
    return report


if __name__ == "__main__":
    main()
