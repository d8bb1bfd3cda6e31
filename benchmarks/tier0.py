"""Tier 0 (roastedavro._tier0.Interpreter, no compiler involved) against fastavro
and the compiled AvroCodec, on the plain Avro cases of benchmarks/avro_schemas.py.

    python -m benchmarks.tier0                      # the realistic cases, 7 repeats
    python -m benchmarks.tier0 --groups classic,realistic --repeats 5
    python -m benchmarks.tier0 --cases event,trade

Method as benchmarks/avro_codecs.py (its timing functions): one process, every
contender checked against fastavro first (bytes equal to fastavro's for every
datum, values equal to fastavro's with the same types; a direction that
differs is reported and not timed), repeats interleaved round-robin, the
median in ns per datum. Ratios are fastavro's ns over the contender's (above 1
is faster than fastavro), with their geometric mean over the cases.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if not __package__:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(HERE.parent))

from benchmarks import contenders as contenders_module  # noqa: E402
from benchmarks.avro_codecs import measure_case, ratios  # noqa: E402
from benchmarks.avro_schemas import cases as select_cases  # noqa: E402
from benchmarks.run import fmt_ns, fmt_x, geomean  # noqa: E402

TIER0 = "tier 0"
NAMES = (TIER0, "AvroCodec", "fastavro")


def make_tier0(case, datums, messages):
    from roastedavro._tier0 import Interpreter
    from roastedavro.avro import parse_schema

    interpreter = Interpreter(parse_schema(case.schema))
    return contenders_module.Contender(TIER0, interpreter.dump, datums, interpreter.load, messages)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", help="comma-separated case names")
    parser.add_argument("--groups", default="realistic", help="comma-separated groups")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--target-ms", type=float, default=20.0, help="length of one timed loop")
    args = parser.parse_args(argv)

    contenders_module.SCHEMA_FACTORIES[TIER0] = make_tier0
    selected = select_cases(args.cases.split(",") if args.cases else None,
                            args.groups.split(",") if args.groups else None)
    summary: dict[str, dict] = {}
    print(f"{'case':14s} {'op':5s} " + " ".join(f"{name:>12s}" for name in NAMES)
          + f" {'tier0/fa':>9s} {'compiled/t0':>11s}")
    for case in selected:
        started = time.perf_counter()
        built, _ = contenders_module.build_for_schema(case, NAMES)
        for name, contender in built.items():
            for op, excluded in (("dump", contender.dump_excluded), ("load", contender.load_excluded)):
                if excluded is not None:
                    print(f"{case.name}: {name} {op} not timed: {excluded}")
        timings = measure_case(built, args.repeats, args.target_ms * 1e6)
        for op in ("dump", "load"):
            ratio = ratios(timings, op)
            cells = " ".join(f"{fmt_ns(timings.get(name, {}).get(op, {}).get('ns')):>12s}"
                             for name in NAMES)
            compiled_over_tier0 = (ratio["AvroCodec"] / ratio[TIER0]
                                   if TIER0 in ratio and "AvroCodec" in ratio else None)
            print(f"{case.name:14s} {op:5s} {cells} {fmt_x(ratio.get(TIER0)):>9s} "
                  f"{fmt_x(compiled_over_tier0):>11s}")
            summary.setdefault(op, {}).setdefault(case.name, ratio)
        print(f"    ({time.perf_counter() - started:.1f} s)", flush=True)
    print()
    for op in ("dump", "load"):
        by_case = summary.get(op, {})
        means = {name: geomean([ratio.get(name) for ratio in by_case.values()]) for name in NAMES}
        print(f"geometric mean, {op}: " + ", ".join(
            f"{name} {fmt_x(means[name])} fastavro" for name in NAMES if name != "fastavro"))
    return summary


if __name__ == "__main__":
    main()
