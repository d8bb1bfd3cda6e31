"""Time to the first record of an unseen schema: from ``AvroCodec(schema)`` to the
first datum's bytes, in a process that has already imported roastedavro.

    python -m benchmarks.first_record                 # 20 fresh schemas per case
    python -m benchmarks.first_record --rounds 5 --cases wide_500
    python -m benchmarks.first_record --profile       # cProfile of wide_500's parse and program

Writes benchmarks/results/first_record.md (``--out`` for another folder).

Method. The process imports roastedavro and makes one other codec first (a
10-field record, dumped and loaded), so imports and first-call set-up are
paid before anything is timed. Each round takes every case's schema under a
fresh top-level record name (unseen by the process and by the on-disk codec
cache: ``<name>_<random hex>``) and times, one after the other:

- ``AvroCodec(schema).dump(datum)`` with the default policy (``hot``: tier 0 at
  once; the lookup of a cached compiled codec runs in the background and is
  waited for, untimed, before the next measurement);
- the same with ``compile="never"`` (tier 0; a cached codec is looked up on
  the caller's thread);
- the split, on another fresh name: ``roastedavro.avro.parse_schema(schema)``,
  ``roastedavro._tier0.Interpreter(parsed)`` (the tier-0 program) and its first
  ``dump(datum)``.

Every first record's bytes are checked equal to fastavro's. Figures are the
minimum and the median over the rounds, in ms, with the GC on (as in a
program). The cases: the wide records of benchmarks/schemas.py (10, 50 and
500 fields of mixed types, half nullable, through ``CompiledSchema.avro_schema()``)
and the realistic ``event`` and ``order`` of benchmarks/avro_schemas.py.
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import io
import os
import pstats
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
if not __package__:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(HERE.parent))

CASES = ("wide_10", "wide_50", "wide_500", "event", "order")
#: the issue's aim for a 500-field schema, in ms
AIM_MS = 5.0
COLUMNS = ("AvroCodec", "AvroCodec never", "parse", "program", "first dump")


def case_schemas(names) -> dict[str, tuple[dict, object]]:
    """Each case's Avro schema and one datum (fastavro's conventions)."""
    from benchmarks import avro_schemas
    from benchmarks import schemas as classic
    from benchmarks.contenders import avro_values

    wide = {case.name: case for case in classic.cases() if case.group == "wide"}
    found = {}
    for name in names:
        if name in wide:
            case = wide[name]
            found[name] = (
                case.schema().avro_schema(),
                avro_values(case.make_record(random.Random(len(name)))),
            )
        else:
            case = avro_schemas.CASES[name]
            found[name] = (case.schema, case.datums()[0])
    return found


def fresh(schema: dict) -> dict:
    """``schema`` under a record name nothing has seen."""
    renamed = copy.deepcopy(schema)
    renamed["name"] = f"{schema['name']}_{uuid.uuid4().hex[:12]}"
    return renamed


def fastavro_bytes(schema: dict, datum) -> bytes:
    import fastavro

    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), datum)
    return out.getvalue()


def settle(codec) -> None:
    """Waits for a codec's background work (the cache lookup) to finish."""
    engine = getattr(codec, "_read_engine", None)
    future = getattr(engine, "future", None)
    if future is not None:
        future.exception(timeout=120)


def measure(schema: dict, datum) -> dict[str, float]:
    """One round on one case: ms per column."""
    from roastedavro import AvroCodec
    from roastedavro._tier0 import Interpreter
    from roastedavro.avro import parse_schema

    times: dict[str, float] = {}
    for column, policy in (("AvroCodec", None), ("AvroCodec never", "never")):
        unseen = fresh(schema)
        expected = fastavro_bytes(unseen, datum)
        started = time.perf_counter_ns()
        codec = AvroCodec(unseen) if policy is None else AvroCodec(unseen, compile=policy)
        data = codec.dump(datum)
        times[column] = (time.perf_counter_ns() - started) / 1e6
        if data != expected:
            raise AssertionError(f"{column}: the first record's bytes differ from fastavro's")
        if codec.tier != "interpreter":
            raise AssertionError(f"{column}: served by {codec.tier}, not tier 0 (a cached codec?)")
        settle(codec)
    unseen = fresh(schema)
    expected = fastavro_bytes(unseen, datum)
    t0 = time.perf_counter_ns()
    parsed = parse_schema(unseen)
    t1 = time.perf_counter_ns()
    interpreter = Interpreter(parsed)
    t2 = time.perf_counter_ns()
    data = interpreter.dump(datum)
    t3 = time.perf_counter_ns()
    if data != expected:
        raise AssertionError("tier 0's first record's bytes differ from fastavro's")
    times.update({"parse": (t1 - t0) / 1e6, "program": (t2 - t1) / 1e6, "first dump": (t3 - t2) / 1e6})
    return times


def warm_up() -> None:
    """Imports and one other codec, made and used, as a running program has."""
    from roastedavro import AvroCodec

    schema = {
        "type": "record",
        "name": f"Warm_{uuid.uuid4().hex[:12]}",
        "fields": [
            {"name": f"f{i}", "type": kind}
            for i, kind in enumerate(
                [
                    "string",
                    "long",
                    "double",
                    "boolean",
                    "int",
                    ["null", "string"],
                    {"type": "array", "items": "string"},
                    {"type": "map", "values": "long"},
                    "bytes",
                    "float",
                ]
            )
        ],
    }
    datum = {
        "f0": "a",
        "f1": 1,
        "f2": 1.5,
        "f3": True,
        "f4": 2,
        "f5": None,
        "f6": ["x"],
        "f7": {"k": 3},
        "f8": b"\x00",
        "f9": 0.5,
    }
    codec = AvroCodec(schema)
    codec.load(codec.dump(datum))
    settle(codec)


def profile(schema: dict, datum, top: int) -> str:
    """cProfile of parse_schema and of Interpreter(...) on a fresh copy of ``schema``."""
    from roastedavro._tier0 import Interpreter
    from roastedavro.avro import parse_schema

    unseen = fresh(schema)
    text = []
    for label, run in (("parse_schema", lambda: parse_schema(unseen)), ("Interpreter(parsed)", None)):
        if run is None:
            parsed = parse_schema(unseen)
            run = lambda parsed=parsed: Interpreter(parsed)  # noqa: E731
        profiler = cProfile.Profile()
        profiler.enable()
        run()
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
        text.append(f"== {label} ==\n{out.getvalue()}")
    return "\n".join(text)


def fmt(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f}"


def markdown(env: dict, results: dict[str, dict[str, list[float]]], fields: dict) -> str:
    lines = [
        "# First record of an unseen schema",
        "",
        f"{env['date']}, {env['rounds']} fresh schemas per case. Python {env['python']}, "
        f"{env['cpu']} ({env['cpus']} CPUs). roastedavro {env['git_commit']}. Load average "
        f"(1, 5, 15 min) at start {env['loadavg_at_start']}, at end {env['loadavg_at_end']}.",
        "",
        f"Regenerate: `python -m benchmarks.first_record --rounds {env['rounds']}`. "
        "ms, minimum / median over the rounds; each round's schema has a fresh record name "
        "(a schema neither the process nor the codec cache has seen), in a process that has "
        "imported roastedavro and made one other codec. *AvroCodec*: `AvroCodec(schema)."
        "dump(datum)` with the default policy (tier 0 at once, the cache lookup in the "
        'background); *never*: `compile="never"` (the cache lookup on the caller\'s thread); '
        "then the parts of tier 0 on its own: `parse_schema`, `Interpreter(parsed)` and its "
        "first `dump`. Every first record's bytes equal fastavro's. The aim is under "
        f"{AIM_MS:g} ms for 500 fields.",
        "",
        "| case | fields | " + " | ".join(COLUMNS) + " |",
        "| --- | ---: | " + " | ".join("---:" for _ in COLUMNS) + " |",
    ]
    for name, columns in results.items():
        lines.append(f"| {name} | {fields[name]} | " + " | ".join(fmt(columns[c]) for c in COLUMNS) + " |")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.first_record", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated, of: " + ", ".join(CASES))
    parser.add_argument("--rounds", type=int, default=20, help="fresh schemas per case")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="print cProfile of parse_schema and Interpreter(...) for wide_500",
    )
    parser.add_argument("--top", type=int, default=25, help="functions per profile")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="output folder")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.cases.split(",")]

    from benchmarks.run import cpu_and_commit

    import roastedavro  # noqa: F401 - the import is not timed

    schemas = case_schemas(names)
    warm_up()
    if args.profile:
        schema, datum = case_schemas(["wide_500"])["wide_500"]
        print(profile(schema, datum, args.top))
        return {}
    cpu, commit = cpu_and_commit()
    env = {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "python": sys.version.split()[0],
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "git_commit": commit,
        "rounds": args.rounds,
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    results: dict[str, dict[str, list[float]]] = {n: {c: [] for c in COLUMNS} for n in names}
    for _ in range(args.rounds):
        for name in names:  # the cases interleaved, round by round
            for column, ms in measure(*schemas[name]).items():
                results[name][column].append(ms)
    env["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    fields = {n: len(schemas[n][0]["fields"]) for n in names}
    print(f"{'case':10s} {'fields':>6s} " + " ".join(f"{c:>16s}" for c in COLUMNS) + "   (ms, min / median)")
    for name, columns in results.items():
        print(f"{name:10s} {fields[name]:6d} " + " ".join(f"{fmt(columns[c]):>16s}" for c in COLUMNS))
    print(f"load average {env['loadavg_at_start']} -> {env['loadavg_at_end']}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "first_record.md").write_text(markdown(env, results, fields))
    print(f"wrote {args.out / 'first_record.md'}")
    return {"environment": env, "results": results}


if __name__ == "__main__":
    main()
