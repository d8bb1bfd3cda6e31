"""The speed of a very large schema's compiled codec at the C compiler's two
levels: ``-O1``, and ``-Og``, which ``roastedavro.building`` uses for C files
over ``_LARGE_C_FILE`` (4 MB) to keep the build under a minute and 1 GB.

    python -m benchmarks.large_schema_speed PATH.avsc --rounds 3 --repeats 7

Method. The two builds share a source and so a cache key: each is measured
in processes of its own, with a codec cache of its own (the first round
builds, the later ones load it), the two in turn for ``--rounds``. Each
process builds (or loads) the codec, ``-Og`` as roastedavro builds the
file, or ``-O1`` with the large-file rule switched off, and times its
``dump`` and ``load`` interleaved with tier 0's (benchmarks.avro_codecs'
timing: median ns per datum over ``--repeats`` rounds, GC off). The table
gives the median over the rounds, and the codec's time over tier 0's in
the same process, which cancels most of the noise between processes.

The datum: for a schema whose root is a union (Apache Avro's
``large_schema.avsc`` is a union of 122 types), the record branch with the
most fields in all, in fastavro's ``(name, record)`` notation; every field
takes its simplest value (null where a union allows it, else the first
branch; 0, empty strings, arrays and maps, an enum's first symbol, zero
bytes for a fixed). Both codecs must write fastavro's bytes and read back
fastavro's values before they are timed.

Writes benchmarks/results/large_schema_speed.json and .md (``--out``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if not __package__:
    sys.path.insert(0, str(HERE.parent))


def simplest(schema, avro, seen: frozenset = frozenset()):
    """The simplest value of ``avro`` (see the docstring)."""
    from roastedavro.avro.types import Array, Enum, Fixed, Map, Primitive, Record, Union

    avro = schema.deref(avro)
    if isinstance(avro, Union):
        branches = [schema.deref(branch) for branch in avro.branches]
        for branch in branches:
            if isinstance(branch, Primitive) and branch.name == "null":
                return None
        return simplest(schema, branches[0], seen)
    if isinstance(avro, Record):
        if avro.name in seen:
            raise ValueError(f"{avro.name} contains itself without a way out")
        return {field.name: simplest(schema, field.type, seen | {avro.name}) for field in avro.fields}
    if isinstance(avro, Array):
        return []
    if isinstance(avro, Map):
        return {}
    if isinstance(avro, Enum):
        return avro.symbols[0]
    if isinstance(avro, Fixed):
        return bytes(avro.size)
    return {
        "null": None,
        "boolean": False,
        "int": 0,
        "long": 0,
        "float": 0.0,
        "double": 0.0,
        "bytes": b"",
        "string": "",
    }[avro.name]


def field_count(value) -> int:
    if isinstance(value, dict):
        return len(value) + sum(field_count(item) for item in value.values())
    return 0


def the_datum(schema):
    """The datum to time, and a word on which it is."""
    from roastedavro.avro.types import Record, Union

    root = schema.deref(schema.root)
    if not isinstance(root, Union):
        return simplest(schema, root), "the root record"
    best = None
    for branch in root.branches:
        record = schema.deref(branch)
        if isinstance(record, Record):
            value = simplest(schema, record)
            if best is None or field_count(value) > field_count(best[1]):
                best = (record.name, value)
    return best, f"the union's record {best[0]} ({field_count(best[1]):,} fields with its nested records)"


def worker(schema_path: Path, level: str, repeats: int) -> dict:
    """In this process: the codec built (or found in the cache) at ``level``,
    and tier 0, timed interleaved; their ns per datum."""
    import fastavro

    from benchmarks.avro_codecs import measure_case
    from benchmarks.contenders import Contender
    from roastedavro import AvroCodec, building
    from roastedavro.avro import load_schema

    if level == "-O1":
        building._LARGE_C_FILE = 1 << 62  # the large-file rule off
    schema = load_schema(str(schema_path))
    datum, which = the_datum(schema)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(json.loads(schema_path.read_text())), datum)
    expected = out.getvalue()
    started = time.perf_counter()
    codec = AvroCodec(schema, compile="eager")
    build_s = time.perf_counter() - started
    contenders = {}
    for label, each in ((level, codec), ("tier 0", AvroCodec(schema, compile="never"))):
        data = each.dump(datum)
        if data != expected:
            raise AssertionError(f"{label}: not fastavro's bytes")
        if each.load(data) != fastavro.schemaless_reader(
            io.BytesIO(data), fastavro.parse_schema(json.loads(schema_path.read_text()))
        ):
            raise AssertionError(f"{label}: not fastavro's value read back")
        contenders[label] = Contender(label, each.dump, [datum], each.load, [data])
    timings = measure_case(contenders, repeats, 20e6)
    return {
        "level": level,
        "which": which,
        "bytes": len(expected),
        "build_s": build_s,
        "cc_s": building.last_timing.get("cc"),
        "ns": {label: {op: t[op]["ns"] for op in ("dump", "load")} for label, t in timings.items()},
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("schema", type=Path)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.schema, args.worker, args.repeats)))
        return {}
    import statistics
    import subprocess

    from benchmarks.run import cpu_and_commit, save_report

    caches = {level: tempfile.mkdtemp(prefix="roastedavro-large-speed-") for level in LEVELS}
    runs: dict[str, list[dict]] = {level: [] for level in LEVELS}
    for round_number in range(args.rounds):
        for level in LEVELS if round_number % 2 == 0 else LEVELS[::-1]:
            env = dict(os.environ, ROASTEDAVRO_CACHE_DIR=caches[level])
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "benchmarks.large_schema_speed",
                    str(args.schema.resolve()),
                    f"--worker={level}",
                    "--repeats",
                    str(args.repeats),
                ],
                cwd=HERE.parent,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            runs[level].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(
                f"round {round_number + 1} {level}: built in {runs[level][-1]['build_s']:.1f} s", flush=True
            )
    first = runs[LEVELS[0]][0]

    def median(level, who, op):
        return statistics.median(run["ns"][who][op] for run in runs[level])

    def relative(level, op):
        # each process's codec over its own tier 0: the processes' noise cancels
        return statistics.median(run["ns"][level][op] / run["ns"]["tier 0"][op] for run in runs[level])

    cpu, commit = cpu_and_commit()
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": commit,
        "schema": args.schema.name,
        "datum": first["which"],
        "bytes": first["bytes"],
        "repeats": args.repeats,
        "rounds": args.rounds,
        "build": {
            level: {
                "build_s": round(runs[level][0]["build_s"], 1),
                "cc_s": round(runs[level][0]["cc_s"] or 0, 1),
            }
            for level in LEVELS
        },
        "ns": {
            level: {op: round(median(level, level, op), 1) for op in ("dump", "load")} for level in LEVELS
        },
        "over_tier0": {
            level: {op: round(relative(level, op), 3) for op in ("dump", "load")} for level in LEVELS
        },
    }
    lines = [
        f"# {args.schema.name}: compiled speed at -Og and -O1",
        "",
        f"{report['date']}, commit {commit}, {args.rounds} rounds of a fresh process per "
        f"build (in turn), {args.repeats} interleaved repeats each, median ns per datum; "
        f"the datum: {first['which']}, {first['bytes']:,} bytes "
        "(`python -m benchmarks.large_schema_speed`; its docstring: the method). "
        "Time over tier 0's: the codec's ns over tier 0's in the same process.",
        "",
        "| build | first build s (C compiler s) | dump ns | over tier 0 | load ns | over tier 0 |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for level in LEVELS:
        build, ns, over = report["build"][level], report["ns"][level], report["over_tier0"][level]
        lines.append(
            f"| {level} | {build['build_s']} ({build['cc_s']}) | {ns['dump']:,.0f} | "
            f"{over['dump']:.2f} | {ns['load']:,.0f} | {over['load']:.2f} |"
        )
    lines.append("")
    save_report(args.out, "large_schema_speed", report, lines)
    return report


LEVELS = ("-Og", "-O1")


if __name__ == "__main__":
    main()
