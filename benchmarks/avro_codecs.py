"""Plain Avro codecs on dict datums: roastedavro.AvroCodec and roastedavro.fastavro
against fastavro, cerializer and spavro.

    python -m benchmarks.avro_codecs                  # full: 15 interleaved repeats
    python -m benchmarks.avro_codecs --quick          # 3 repeats
    python -m benchmarks.avro_codecs --cases event,trade --contenders AvroCodec,fastavro
    python -m benchmarks.avro_codecs --groups all     # also market_tick, wide, arrays, ...

Writes benchmarks/results/avro_codecs.json and avro_codecs.md.

Method (as benchmarks/run.py). All contenders run in ONE process. For each
case (benchmarks/avro_schemas.py: an Avro schema and a batch of seeded datums
in fastavro's conventions) every contender is set up once
(benchmarks/contenders.py, ``SCHEMA_FACTORIES``) and checked: its bytes must
equal fastavro's for every datum, and it must read every fastavro message to
fastavro's values with the same Python types; a direction that fails or
differs is reported and not timed. A timed loop makes N passes over the batch
(one call per datum), N calibrated so that a loop takes ~30 ms, with the GC
off. Repeats are interleaved round-robin in a rotating order, so drift on the
shared machine hits every contender alike. The figure is the median over
repeats in ns per datum; ratios are fastavro ns / contender ns (above 1 is
faster than fastavro); the geometric means are over the cases a contender was
timed on.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
from itertools import repeat
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
if not __package__:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(ROOT))

from benchmarks.run import cpu_and_commit, fmt_ns, fmt_x, geomean  # noqa: E402

BASELINE = "fastavro"
OPS = ("dump", "load")
#: timed beside the stream contenders: their BytesIO steps alone (see per_call)
STEPS = "BytesIO steps"
DROP_IN = "roastedavro.fastavro"


# -- timing -------------------------------------------------------------------------


def timed_batch(fn, inputs: list, n: int) -> int:
    """ns taken by ``n`` passes of ``fn(x)`` over ``inputs``, with the GC off (as timeit)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        started = time.perf_counter_ns()
        for _ in repeat(None, n):
            for item in inputs:
                fn(item)
        return time.perf_counter_ns() - started
    finally:
        if enabled:
            gc.enable()


def calibrate(fn, inputs: list, target_ns: float) -> int:
    """Passes that make one loop last about ``target_ns`` (also warms up)."""
    n = 1
    while True:
        elapsed = max(timed_batch(fn, inputs, n), 1)
        if elapsed >= target_ns / 4 or n >= 1 << 24:
            return max(1, round(n * target_ns / elapsed))
        n *= 10 if elapsed < target_ns / 100 else 2


def measure_case(contenders: dict, repeats: int, target_ns: float) -> dict:
    """Median ns per datum for each contender and direction, repeats interleaved round-robin."""
    jobs = []
    for name, contender in contenders.items():
        if contender.dump_excluded is None:
            jobs.append((name, "dump", contender.dump, contender.dump_input))
        if contender.load_excluded is None:
            jobs.append((name, "load", contender.load, contender.load_input))
    passes = {(name, op): calibrate(fn, inputs, target_ns) for name, op, fn, inputs in jobs}
    samples: dict[tuple[str, str], list[float]] = {key: [] for key in passes}
    gc.collect()
    for index in range(repeats):
        shift = index % len(jobs) if jobs else 0
        for name, op, fn, inputs in jobs[shift:] + jobs[:shift]:
            n = passes[name, op]
            samples[name, op].append(timed_batch(fn, inputs, n) / (n * len(inputs)))
    results: dict[str, dict] = {}
    for (name, op), values in samples.items():
        median = statistics.median(values)
        results.setdefault(name, {})[op] = {
            "ns": median,
            "min_ns": min(values),
            "max_ns": max(values),
            "spread": (max(values) - min(values)) / median if median else 0.0,
            "passes_per_loop": passes[name, op],
            "samples_ns": [round(v, 2) for v in values],
        }
    return results


def ratios(timings: dict, op: str) -> dict[str, float]:
    base = timings.get(BASELINE, {}).get(op)
    if not base:
        return {}
    return {name: base["ns"] / ops[op]["ns"] for name, ops in timings.items() if op in ops and name != STEPS}


def per_call(timings: dict, op: str) -> dict[str, float] | None:
    """The libraries' own work: fastavro's and the drop-in's ns with the
    BytesIO's (rewind, truncate, taking the message in, getvalue; rewind)
    taken away, their ratio, and the drop-in's ns beyond AvroCodec's."""
    try:
        steps = timings[STEPS][op]["ns"]
        theirs = timings[BASELINE][op]["ns"] - steps
        ours = timings[DROP_IN][op]["ns"] - steps
    except KeyError:
        return None
    result = {
        "steps_ns": steps,
        "fastavro_ns": theirs,
        "drop_in_ns": ours,
        "net_ratio": theirs / ours if ours > 0 else float("inf"),
    }
    codec = timings.get("AvroCodec", {}).get(op)
    if codec:
        result["over_avrocodec_ns"] = ours - codec["ns"]
    return result


def summarize(results: dict, names: tuple[str, ...]) -> dict:
    groups: dict[str, list[str]] = {"all": list(results)}
    for case_name, result in results.items():
        groups.setdefault(result["group"], []).append(case_name)
    summary = {}
    for group, case_names in groups.items():
        entry: dict[str, Any] = {"cases": case_names}
        for op in OPS:
            entry[op] = {}
            for name in names:
                values = [
                    results[c]["ratio"][op][name]
                    for c in case_names
                    if name in results[c].get("ratio", {}).get(op, {})
                ]
                entry[op][name] = {"geomean_ratio": geomean(values), "cases": len(values)}
        calls = {
            op: [results[c]["per_call"][op] for c in case_names if (results[c].get("per_call") or {}).get(op)]
            for op in OPS
        }
        if any(calls.values()):
            entry["per_call"] = {
                op: {
                    "cases": len(values),
                    "net_ratio": geomean([v["net_ratio"] for v in values]),
                    "over_avrocodec_ns": statistics.median(
                        [v["over_avrocodec_ns"] for v in values if "over_avrocodec_ns" in v] or [0]
                    ),
                }
                for op, values in calls.items()
                if values
            }
        summary[group] = entry
    return summary


# -- environment ------------------------------------------------------------------------


def environment(args, names: tuple[str, ...]) -> dict:
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
        "contenders": list(names),
        "versions": {
            package: installed(package)
            for package in ("roastedavro", "fastavro", "cerializer", "spavro", "Cython")
        },
        "repeats": args.repeats,
        "target_loop_ms": args.target_ms,
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


# -- output --------------------------------------------------------------------------------


def markdown(report: dict, names: tuple[str, ...]) -> str:
    env, results, summary = report["environment"], report["cases"], report["summary"]
    shown = [n for n in names if n != BASELINE]
    lines = [
        "# Plain Avro codecs: roastedavro.AvroCodec against fastavro, cerializer and spavro",
        "",
        f"{env['date']}, {env['mode']} mode ({env['repeats']} interleaved repeats, "
        f"~{env['target_loop_ms']} ms per timed loop, median). Python {env['python']}, "
        f"{env['cpu']} ({env['cpus']} CPUs), {env['platform']}. roastedavro {env['git_commit']}.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in env["versions"].items()) + ".",
        f"Load average (1, 5, 15 min) at start {env.get('loadavg_at_start')}, at end "
        f"{env.get('loadavg_at_end')}: the machine is shared, so absolute ns move between "
        "runs; repeats are interleaved, so ratios move less.",
        "",
        "Regenerate: `python -m benchmarks.avro_codecs` (full) or `--quick`. Datums are dicts "
        "in fastavro's conventions (benchmarks/avro_schemas.py); every case times a batch of "
        "different datums (column *datums*) and reports ns per datum. Ratio = fastavro ns / "
        "contender ns (above 1: faster than fastavro). n/a: not timed, see Checks.",
        "",
        "## Summary: geometric mean of the ratio over fastavro",
        "",
        "| cases | " + " | ".join(f"{n} dump | {n} load" for n in shown) + " |",
        "| --- | " + " | ".join("---: | ---:" for _ in shown) + " |",
    ]
    for group, entry in summary.items():
        cells = []
        for name in shown:
            for op in OPS:
                per = entry[op][name]
                partial = "" if per["cases"] in (0, len(entry["cases"])) else f" ({per['cases']})"
                cells.append(fmt_x(per["geomean_ratio"]) + partial)
        lines.append(f"| {group} ({len(entry['cases'])}) | " + " | ".join(cells) + " |")
    lines += [
        "",
        "A number in parentheses after a geometric mean: the cases it covers, when "
        "fewer than the group (the rest were n/a).",
        "",
    ]
    if any("per_call" in entry for entry in summary.values()):
        lines += [
            f"## {DROP_IN} per call: net of the BytesIO steps",
            "",
            "fastavro and the drop-in are timed as user code calls them: `schemaless_writer(out, "
            "parsed, datum)` into one BytesIO rewound and truncated before and read with "
            "`getvalue()` after, `schemaless_reader(source, parsed, None)` from a BytesIO "
            f"rewound before. Those steps, with the stream taking in the message's bytes "
            f"(`out.write(message)`), timed alone in the same interleaved rounds (*{STEPS}*), "
            "are taken away from both here: the ratio of the libraries' own work, and the "
            "drop-in's ns beyond AvroCodec's (median over the cases).",
            "",
            "| cases | net ratio dump | net ratio load | over AvroCodec dump, ns | over AvroCodec load, ns |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for group, entry in summary.items():
            calls = entry.get("per_call", {})
            cells = [fmt_x(calls[op]["net_ratio"]) if op in calls else "n/a" for op in OPS]
            cells += [f"{calls[op]['over_avrocodec_ns']:.0f}" if op in calls else "n/a" for op in OPS]
            lines.append(f"| {group} ({len(entry['cases'])}) | " + " | ".join(cells) + " |")
        lines.append("")

    for op in OPS:
        lines += [
            f"## {op}: ns per datum (ratio over fastavro)",
            "",
            "| case | datums | bytes | " + " | ".join(names) + " |",
            "| --- | ---: | ---: | " + " | ".join("---:" for _ in names) + " |",
        ]
        for case_name, result in results.items():
            if "timings" not in result:
                lines.append(f"| {case_name} | | | " + " | ".join("error" for _ in names) + " |")
                continue
            cells = []
            for name in names:
                timing = result["timings"].get(name, {}).get(op)
                if timing is None:
                    cells.append("n/a")
                elif name == BASELINE:
                    cells.append(fmt_ns(timing["ns"]))
                else:
                    cells.append(f"{fmt_ns(timing['ns'])} ({fmt_x(result['ratio'][op][name])})")
            lines.append(
                f"| {case_name} | {result['datums']} | {result['mean_bytes']:,.0f} | "
                + " | ".join(cells)
                + " |"
            )
        lines.append("")

    lines += [
        "## Setup",
        "",
        "Seconds to set up each contender in the benchmark process (parsing, and for "
        "AvroCodec and cerializer compiling; an AvroCodec found in the on-disk cache is "
        "not compiled again, cerializer keeps Cython's inline cache in ~/.cython).",
        "",
        "| case | " + " | ".join(names) + " |",
        "| --- | " + " | ".join("---:" for _ in names) + " |",
    ]
    for case_name, result in results.items():
        setup = result.get("setup_s", {})
        lines.append(
            f"| {case_name} | "
            + " | ".join(f"{setup[n]:.2f}" if setup.get(n) is not None else "" for n in names)
            + " |"
        )
    lines.append("")

    lines += [
        "## Checks",
        "",
        "Before timing, every datum is written by fastavro (the reference bytes) and read "
        "back by fastavro (the reference values). Each contender must write the same bytes "
        "and read each message to the same values with the same Python types (a `str` "
        "is not a `UUID`, `1` is not `True`, `Decimal('1.50')` is not `Decimal('1.5')`).",
        "",
    ]
    excluded = []
    for case_name, result in results.items():
        if "error" in result:
            excluded.append(f"- **{case_name}**: {result['error']}")
        for name, checks in result.get("checks", {}).items():
            if checks.get("dump") and checks["dump"] == checks.get("load"):
                excluded.append(f"- {case_name} / {name} dump and load: n/a, {checks['dump']}")
                continue
            for op in OPS:
                if checks.get(op):
                    excluded.append(f"- {case_name} / {name} {op}: n/a, {checks[op]}")
    lines += excluded or ["Every contender agrees with fastavro on every case."]
    lines += [
        "",
        "Contender setup: AvroCodec `AvroCodec(schema).dump(datum)` / `.load(bytes)`; "
        "roastedavro.fastavro and fastavro: `parse_schema` once, then `schemaless_writer` "
        "/ `schemaless_reader(fo, parsed, None)`; cerializer `Cerializer(...)."
        "serialize_into` / `deserialize_from`; spavro `fast_binary.get_writer` / "
        "`get_reader` of the parsed schema (what its DatumWriter/DatumReader call). "
        "Stream-based contenders write into one reused BytesIO (rewound, truncated, "
        "`getvalue()`) and read from one BytesIO per message (rewound); AvroCodec takes "
        "and returns bytes.",
        "",
    ]
    return "\n".join(lines)


# -- main ----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.avro_codecs", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 15")
    parser.add_argument("--cases", help="comma-separated case names")
    parser.add_argument(
        "--groups", help="comma-separated groups: classic, realistic, more, all (default classic,realistic)"
    )
    parser.add_argument(
        "--contenders", help="comma-separated contenders (default: all; fastavro is always included)"
    )
    parser.add_argument("--repeats", type=int, help="interleaved repeats (default 15, quick 3)")
    parser.add_argument(
        "--target-ms", type=float, default=30.0, help="target duration of one timed loop (default 30 ms)"
    )
    parser.add_argument(
        "--cerializer-max-fields",
        type=int,
        default=100,
        help="skip cerializer for records with more top-level fields",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="output folder")
    args = parser.parse_args(argv)
    if args.repeats is None:
        args.repeats = 3 if args.quick else 15
    return args


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    started_all = time.perf_counter()

    def log(message: str) -> None:
        print(message, flush=True)

    from benchmarks import contenders as contenders_module
    from benchmarks.avro_schemas import cases as select_cases

    contenders_module.CERIALIZER_MAX_FIELDS = args.cerializer_max_fields
    names = contenders_module.SCHEMA_CONTENDERS
    if args.contenders:
        wanted = set(args.contenders.split(",")) | {BASELINE}
        unknown = wanted - set(names)
        if unknown:
            raise SystemExit(f"unknown contender(s) {sorted(unknown)}; known: {', '.join(names)}")
        names = tuple(n for n in names if n in wanted)
    selected = select_cases(
        args.cases.split(",") if args.cases else None, args.groups.split(",") if args.groups else None
    )
    env = environment(args, names)
    log(
        f"plain Avro codecs: {env['mode']} mode, {len(selected)} cases, {args.repeats} repeats, "
        f"{', '.join(names)}; Python {env['python']}, {env['cpu']}"
    )
    target_ns = args.target_ms * 1e6

    results: dict[str, dict] = {}
    for case in selected:
        entry: dict[str, Any] = {"group": case.group, "description": case.description}
        results[case.name] = entry
        case_started = time.perf_counter()
        try:
            contenders, reference = contenders_module.build_for_schema(case, names)
        except Exception as error:  # noqa: BLE001 - report the case, continue with the others
            entry["error"] = f"fastavro reference failed: {type(error).__name__}: {error}"[:500]
            log(f"{case.name:18s} ERROR {entry['error']}")
            continue
        messages = reference["messages"]
        entry["datums"] = len(messages)
        entry["mean_bytes"] = sum(map(len, messages)) / len(messages)
        entry["setup_s"] = {n: c.setup_s for n, c in contenders.items()}
        entry["checks"] = {
            n: {"dump": c.dump_excluded, "load": c.load_excluded, "notes": c.notes}
            for n, c in contenders.items()
        }
        if BASELINE in contenders and DROP_IN in contenders:
            contenders[STEPS] = contenders_module.bytesio_steps(messages)
        timings = measure_case(contenders, args.repeats, target_ns)
        entry["timings"] = timings
        entry["ratio"] = {op: ratios(timings, op) for op in OPS}
        entry["per_call"] = {op: per_call(timings, op) for op in OPS}
        parts = []
        for op in OPS:
            base = timings.get(BASELINE, {}).get(op, {}).get("ns")
            row = " ".join(f"{n}={fmt_x(r)}" for n, r in entry["ratio"][op].items() if n != BASELINE)
            parts.append(f"{op} fastavro {fmt_ns(base)} ns, {row}")
        excluded = [f"{n} {op}" for n, c in entry["checks"].items() for op in OPS if c[op]]
        log(
            f"{case.name:18s} "
            + " | ".join(parts)
            + f"  [{time.perf_counter() - case_started:.0f} s]"
            + (f"  n/a: {', '.join(excluded)}" if excluded else "")
        )

    env["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report: dict[str, Any] = {"environment": env, "cases": results, "summary": summarize(results, names)}
    report["elapsed_s"] = round(time.perf_counter() - started_all, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "avro_codecs.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    (args.out / "avro_codecs.md").write_text(markdown(report, names))
    for group, entry in report["summary"].items():
        log(
            f"geomean ratio over fastavro ({group}, {len(entry['cases'])} cases): "
            + "; ".join(
                f"{op} "
                + " ".join(f"{n}={fmt_x(entry[op][n]['geomean_ratio'])}" for n in names if n != BASELINE)
                for op in OPS
            )
        )
    log(f"wrote {args.out / 'avro_codecs.json'} and avro_codecs.md in {report['elapsed_s']:.0f} s")
    return report


if __name__ == "__main__":
    main()
