"""The C compiler's optimization level: what ``-Og`` saves in build time and
what it costs in speed, against the default ``-O1``, on every benchmark case.

    python -m benchmarks.optimize_levels                 # every case, 9 repeats
    python -m benchmarks.optimize_levels --repeats 5 --cases wide_50,order

Method. One process, an empty codec cache of its own. Every case's codec is
built twice, ``CompileFlags(optimize="-O1")`` and ``optimize="-Og"`` (which
``roastedavro.compiler`` runs as ``-Og`` plus the eight passes in
``building._OG_ARGS``), in turn, recording the C compiler's seconds of each
build (``compiler.last_timing["cc"]``). Then both codecs' ``dump`` and
``load`` of the case's datums are timed in interleaved rounds (the timing of
``benchmarks.avro_codecs``: median ns per datum over ``--repeats`` rounds, GC
off). Plain Avro cases (``benchmarks/avro_schemas.py``) are ``AvroCodec``s;
marshmallow cases (``benchmarks/schemas.py``) are ``CompiledSchema``s, timed
on ``dump_compiled``/``load_compiled``.

A ratio is the ``-Og`` codec's ns over the ``-O1`` codec's: above 1 is slower.
Writes benchmarks/results/optimize_levels.json and .md (``--out``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if not __package__:
    sys.path.insert(0, str(HERE.parent))

LEVELS = ("-O1", "-Og")


def _avro_codecs(case, flags_by_level):
    from roastedavro import AvroCodec, compiler

    codecs, cc = {}, {}
    for level, flags in flags_by_level.items():
        codec = AvroCodec(case.schema, flags, compile="eager")
        cc[level] = compiler.last_timing.get("cc")
        codecs[level] = (codec.dump, codec.load)
    datums = case.datums()
    messages = [codecs["-O1"][0](datum) for datum in datums]
    return codecs, cc, datums, messages


def _marshmallow_codecs(case, flags_by_level):
    from roastedavro import compiler

    codecs, cc = {}, {}
    for level, flags in flags_by_level.items():
        schema = case.schema().compile(flags)
        cc[level] = compiler.last_timing.get("cc")
        codecs[level] = (schema.dump_compiled, schema.load_compiled)
    datums = [case.record()]
    messages = [codecs["-O1"][0](datum) for datum in datums]
    return codecs, cc, datums, messages


def measure(kind: str, case, repeats: int, target_ns: float) -> dict:
    from benchmarks.avro_codecs import measure_case
    from benchmarks.contenders import Contender
    from roastedavro import CompileFlags

    flags_by_level = {level: CompileFlags(optimize=level) for level in LEVELS}
    make = _avro_codecs if kind == "avro" else _marshmallow_codecs
    codecs, cc, datums, messages = make(case, flags_by_level)
    for level, (dump, load) in codecs.items():
        # both builds write the same bytes and read the same values
        assert [dump(datum) for datum in datums] == messages, (case.name, level)
        assert [load(message) for message in messages] == [codecs["-O1"][1](m) for m in messages]
    contenders = {
        level: Contender(level, dump, datums, load, messages) for level, (dump, load) in codecs.items()
    }
    timings = measure_case(contenders, repeats, target_ns)
    return {
        "kind": kind,
        "case": case.name,
        "cc_s": cc,
        "ns": {level: {op: timings[level][op]["ns"] for op in ("dump", "load")} for level in LEVELS},
        "min_ns": {level: {op: timings[level][op]["min_ns"] for op in ("dump", "load")} for level in LEVELS},
    }


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def report(rows: list[dict], meta: dict) -> str:
    lines = [
        "# -Og against -O1: build time and speed",
        "",
        f"{meta['date']}, {meta['repeats']} interleaved repeats, median ns per datum; "
        f"Python {meta['python']}, {meta['cpus']} CPUs, gcc at the two levels "
        "(`python -m benchmarks.optimize_levels`; its docstring: the method). "
        "Ratio: -Og's ns over -O1's (above 1: -Og is slower). C compiler s: that build's "
        "gcc time.",
        "",
    ]
    for kind, title in (
        ("avro", "Plain Avro schemas (AvroCodec)"),
        ("marshmallow", "marshmallow schemas (CompiledSchema)"),
    ):
        chosen = [row for row in rows if row["kind"] == kind]
        if not chosen:
            continue
        dump = [row["ns"]["-Og"]["dump"] / row["ns"]["-O1"]["dump"] for row in chosen]
        load = [row["ns"]["-Og"]["load"] / row["ns"]["-O1"]["load"] for row in chosen]
        cc = [
            row["cc_s"]["-Og"] / row["cc_s"]["-O1"]
            for row in chosen
            if row["cc_s"]["-O1"] and row["cc_s"]["-Og"]
        ]
        lines += [
            f"## {title}",
            "",
            f"Geometric mean over {len(chosen)} cases: dump {_geomean(dump):.3f}, "
            f"load {_geomean(load):.3f}, C compiler time {_geomean(cc):.3f}. "
            f"Worst: dump {max(dump):.3f}, load {max(load):.3f}.",
            "",
            "| case | C compiler s -O1 | -Og | dump ns -O1 | -Og | ratio | load ns -O1 | -Og | ratio |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for row, d, ld in zip(chosen, dump, load):
            ns = row["ns"]
            lines.append(
                f"| {row['case']} | {row['cc_s']['-O1']:.2f} | {row['cc_s']['-Og']:.2f} | "
                f"{ns['-O1']['dump']:,.0f} | {ns['-Og']['dump']:,.0f} | {d:.3f} | "
                f"{ns['-O1']['load']:,.0f} | {ns['-Og']['load']:,.0f} | {ld:.3f} |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", help="comma-separated case names (default: every case)")
    parser.add_argument("--kinds", default="avro,marshmallow")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--target-ms", type=float, default=20.0)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    os.environ["ROASTEDAVRO_CACHE_DIR"] = tempfile.mkdtemp(prefix="roastedavro-levels-")
    from benchmarks.avro_schemas import CASES as AVRO_CASES
    from benchmarks.schemas import CASES as MM_CASES

    wanted = set(args.cases.split(",")) if args.cases else None
    kinds = args.kinds.split(",")
    jobs = [
        ("avro", case)
        for name, case in AVRO_CASES.items()
        if "avro" in kinds and (wanted is None or name in wanted)
    ]
    jobs += [
        ("marshmallow", case)
        for name, case in MM_CASES.items()
        if "marshmallow" in kinds and (wanted is None or name in wanted)
    ]
    rows = []
    for kind, case in jobs:
        started = time.perf_counter()
        rows.append(measure(kind, case, args.repeats, args.target_ms * 1e6))
        row = rows[-1]
        print(
            f"{kind:11s} {case.name:22s} cc {row['cc_s']['-O1']:.2f}/{row['cc_s']['-Og']:.2f} s  "
            f"dump {row['ns']['-Og']['dump'] / row['ns']['-O1']['dump']:.3f}  "
            f"load {row['ns']['-Og']['load'] / row['ns']['-O1']['load']:.3f}  "
            f"({time.perf_counter() - started:.0f} s)",
            flush=True,
        )
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "repeats": args.repeats,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "optimize_levels.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    (args.out / "optimize_levels.md").write_text(report(rows, meta) + "\n")
    print(report(rows, meta))


if __name__ == "__main__":
    main()
