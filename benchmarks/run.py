"""roastedavro against fastavro, Apache avro, cerializer, marshmallow+fastavro and msgspec.

    python -m benchmarks            # full run: several minutes
    python -m benchmarks --quick    # fewer repeats, 100k-iteration memory check, a few compiles
    python -m benchmarks --cases int,market_tick --skip-compile-cost --skip-memory

Writes benchmarks/results/results.json, results.md and chart.png.

Method. All contenders run in ONE process. For each case every contender is
set up once (see benchmarks/contenders.py) and checked: every Avro writer must
produce roastedavro's bytes and every Avro reader must decode them to the same
values; a failing or disagreeing direction is excluded and reported. Each
measurement is a timed loop of N calls, N calibrated per contender and
direction so one loop takes ~20-50 ms (GC disabled during the loop, as in
timeit). Repeats are interleaved round-robin: each repeat runs every contender
once, in a rotating order, so machine drift hits all of them alike. The
reported figure is the median over repeats, in ns per record. Speedups are
relative to fastavro (fastavro ns / contender ns: above 1 is faster); the
geometric means are over the classic set, and separately over the wide and
array cases.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from itertools import repeat
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
if not __package__:  # run as a script (python benchmarks/run.py): make `benchmarks` importable
    sys.path.insert(0, str(ROOT))

QUICK_COMPILE_CASES = ("int", "str", "market_tick", "nested", "wide_50")


def generic_path(schema) -> bool:
    """Whether the generated codec writes or reads any value through the generic
    (marshmallow + fastavro per value) path."""
    return bool(re.search(r"\b(write|read)_generic\(", schema.compile_to_string()))


# -- timing -------------------------------------------------------------------------


def timed_loop(fn, arg, n: int) -> int:
    """ns taken by ``n`` calls of ``fn(arg)``, with the GC off (as timeit does)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        calls = repeat(None, n)
        started = time.perf_counter_ns()
        for _ in calls:
            fn(arg)
        return time.perf_counter_ns() - started
    finally:
        if enabled:
            gc.enable()


def calibrate(fn, arg, target_ns: float) -> int:
    """The number of calls that makes one loop last about ``target_ns`` (also warms up)."""
    n = 1
    while True:
        elapsed = max(timed_loop(fn, arg, n), 1)
        if elapsed >= target_ns / 4 or n >= 1 << 26:
            return max(1, round(n * target_ns / elapsed))
        n *= 10 if elapsed < target_ns / 100 else 2


def measure_case(contenders: dict, repeats: int, target_ns: float) -> dict:
    """Median ns per call for each contender and direction, repeats interleaved round-robin."""
    jobs = []  # (contender, op, fn, arg)
    for name, contender in contenders.items():
        if contender.dump_excluded is None:
            jobs.append((name, "dump", contender.dump, contender.dump_input))
        if contender.load_excluded is None:
            jobs.append((name, "load", contender.load, contender.load_input))
    calls = {(name, op): calibrate(fn, arg, target_ns) for name, op, fn, arg in jobs}
    samples: dict[tuple[str, str], list[float]] = {key: [] for key in calls}
    gc.collect()
    for index in range(repeats):
        # rotate the order so no contender always runs first (or right after another)
        shift = index % len(jobs) if jobs else 0
        for name, op, fn, arg in jobs[shift:] + jobs[:shift]:
            n = calls[name, op]
            samples[name, op].append(timed_loop(fn, arg, n) / n)
    results: dict[str, dict] = {}
    for (name, op), values in samples.items():
        median = statistics.median(values)
        results.setdefault(name, {})[op] = {
            "ns": median,
            "min_ns": min(values),
            "max_ns": max(values),
            "spread": (max(values) - min(values)) / median if median else 0.0,
            "calls_per_loop": calls[name, op],
            "samples_ns": [round(v, 2) for v in values],
        }
    return results


# -- memory ---------------------------------------------------------------------------


def current_rss_kib() -> int:
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def peak_rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _dump_load(schema, record, n: int) -> None:
    dump, load = schema.dump_compiled, schema.load_compiled
    for _ in repeat(None, n):
        load(dump(record))


def memory_flat_check(schema, record, checkpoints: list[int]) -> dict:
    """RSS and tracemalloc after each checkpoint of dump+load iterations.

    Two passes: one plain (RSS: catches C-level leaks), one under tracemalloc
    (Python object leaks; slower). Each starts after a 10,000-iteration warm-up.
    """
    result: dict[str, Any] = {"iterations": checkpoints}
    gc.collect()
    _dump_load(schema, record, 10_000)
    gc.collect()
    base = current_rss_kib()
    rss = []
    done = 0
    started = time.perf_counter()
    for target in checkpoints:
        _dump_load(schema, record, target - done)
        done = target
        gc.collect()
        rss.append(
            {
                "iterations": target,
                "rss_kib": current_rss_kib(),
                "growth_kib": current_rss_kib() - base,
                "elapsed_s": round(time.perf_counter() - started, 2),
            }
        )
    result["rss_baseline_kib"] = base
    result["rss"] = rss

    tracemalloc.start()
    try:
        _dump_load(schema, record, 10_000)
        gc.collect()
        traced_base = tracemalloc.get_traced_memory()[0]
        traced = []
        done = 0
        for target in checkpoints:
            _dump_load(schema, record, target - done)
            done = target
            gc.collect()
            current, peak = tracemalloc.get_traced_memory()
            traced.append(
                {
                    "iterations": target,
                    "traced_bytes": current,
                    "growth_bytes": current - traced_base,
                    "peak_bytes": peak,
                }
            )
        result["tracemalloc_baseline_bytes"] = traced_base
        result["tracemalloc"] = traced
    finally:
        tracemalloc.stop()
    last_rss, last_traced = rss[-1], traced[-1]
    # flat: no more than 1 MiB of RSS and 64 KiB of traced memory over the whole run
    result["flat"] = last_rss["growth_kib"] <= 1024 and last_traced["growth_bytes"] <= 65536
    return result


def leak_sweep(schema, record, per_call_ns: float, budget_s: float) -> dict:
    """A shorter leak check for one case: growth per dump+load under tracemalloc and in RSS."""
    n = int(min(200_000, max(2_000, budget_s * 1e9 / max(per_call_ns, 1.0) / 3)))
    gc.collect()
    _dump_load(schema, record, max(1, n // 10))
    tracemalloc.start()
    try:
        _dump_load(schema, record, max(1, n // 10))
        gc.collect()
        rss0, traced0 = current_rss_kib(), tracemalloc.get_traced_memory()[0]
        _dump_load(schema, record, n)
        gc.collect()
        rss1, traced1 = current_rss_kib(), tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    per_iteration = (traced1 - traced0) / n
    return {
        "iterations": n,
        "traced_growth_bytes": traced1 - traced0,
        "traced_bytes_per_iteration": per_iteration,
        "rss_growth_kib": rss1 - rss0,
        "suspect": per_iteration >= 1.0 and traced1 - traced0 > 65536,
    }


# -- compile cost ----------------------------------------------------------------------


def _probe(name: str, cache: str) -> dict:
    env = dict(os.environ, ROASTEDAVRO_CACHE_DIR=cache)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.compile_probe", name],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if completed.returncode != 0:
        tail = (completed.stderr or completed.stdout).strip().splitlines()[-3:]
        raise RuntimeError(" | ".join(tail))
    return json.loads(completed.stdout.strip().splitlines()[-1])


def compile_cost(names: list[str], log) -> dict:
    """Cold compile (fresh cache folder, fresh process) and cached load (fresh process) per case."""
    results = {}
    for name in names:
        cache = tempfile.mkdtemp(prefix="roastedavro-bench-cache-")
        try:
            cold = _probe(name, cache)
            cached = _probe(name, cache)
            results[name] = {
                "cold_s": cold["compile_s"],
                "cold_built": cold["built"],
                "cython_s": cold["cython_s"],
                "cc_s": cold["cc_s"],
                "cold_max_rss_kib": cold["max_rss_kib"],
                "cached_s": cached["compile_s"],
                "cached_built": cached["built"],
                "cached_max_rss_kib": cached["max_rss_kib"],
                "in_memory_recompile_s": cached["in_memory_recompile_s"],
            }
            log(
                f"  {name:20s} cold {cold['compile_s']:6.2f} s (cython {cold['cython_s'] or 0:.2f} s, "
                f"cc {cold['cc_s'] or 0:.2f} s)   cached {cached['compile_s'] * 1e3:7.1f} ms   "
                f"codegen only {cached['in_memory_recompile_s'] * 1e3:6.1f} ms"
            )
        except Exception as error:  # noqa: BLE001
            results[name] = {"error": str(error)[:400]}
            log(f"  {name:20s} FAILED: {str(error)[:200]}")
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    return results


# -- summaries -------------------------------------------------------------------------


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def speedups(timings: dict, op: str, baseline: str) -> dict[str, float]:
    """fastavro ns / contender ns for each contender measured in this direction."""
    base = timings.get(baseline, {}).get(op)
    if not base:
        return {}
    return {name: base["ns"] / ops[op]["ns"] for name, ops in timings.items() if op in ops}


def summarize(results: dict, contenders: tuple[str, ...], baseline: str) -> dict:
    groups = {
        "classic": [n for n, r in results.items() if r.get("group") == "classic"],
        "wide": [n for n, r in results.items() if r.get("group") == "wide"],
        "array": [n for n, r in results.items() if r.get("group") == "array"],
        "logical": [n for n, r in results.items() if r.get("group") == "logical"],
        "wide+array": [n for n, r in results.items() if r.get("group") in ("wide", "array")],
        "all": list(results),
    }
    summary: dict[str, Any] = {}
    for group, names in groups.items():
        entry = {}
        for op in ("dump", "load"):
            per = {}
            for contender in contenders:
                values = [
                    results[n]["speedup"][op][contender]
                    for n in names
                    if contender in results[n].get("speedup", {}).get(op, {})
                ]
                per[contender] = {"geomean_speedup": geomean(values), "cases": len(values)}
            entry[op] = per
        entry["cases"] = names
        summary[group] = entry
    tick = results.get("market_tick", {}).get("timings", {})
    if "roastedavro" in tick and "msgspec" in tick:
        summary["market_tick_vs_msgspec"] = {
            op: {
                "roastedavro_ns": tick["roastedavro"][op]["ns"],
                "msgspec_ns": tick["msgspec"][op]["ns"],
                "msgspec_over_roastedavro": tick["msgspec"][op]["ns"] / tick["roastedavro"][op]["ns"],
            }
            for op in ("dump", "load")
            if op in tick["roastedavro"] and op in tick["msgspec"]
        }
    return summary


# -- environment ------------------------------------------------------------------------


def cpu_and_commit() -> tuple[str, str | None]:
    """The CPU's model name, and the short git commit of the checkout (noting uncommitted
    changes under roastedavro/; None if git cannot be run)."""
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "roastedavro"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        commit += " (roastedavro/ has uncommitted changes)" if dirty else ""
    except OSError:
        commit = None
    return cpu, commit


def save_report(out: Path, stem: str, report: dict, lines: list[str]) -> None:
    """Writes ``<stem>.json`` and ``<stem>.md`` to ``out`` and prints the table."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    (out / f"{stem}.md").write_text("\n".join(lines))
    print("\n".join(lines))


def environment(args) -> dict:
    import Cython
    import fastavro
    import msgspec

    import roastedavro

    def version(module: str) -> str | None:
        try:
            from importlib.metadata import version as v

            return v(module)
        except Exception:  # noqa: BLE001
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
            "roastedavro": roastedavro.__version__,
            "fastavro": fastavro.__version__,
            "avro": version("avro"),
            "cerializer": version("cerializer"),
            "msgspec": msgspec.__version__,
            "marshmallow": version("marshmallow"),
            "Cython": Cython.__version__,
        },
        "repeats": args.repeats,
        "target_loop_ms": args.target_ms,
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


# -- output --------------------------------------------------------------------------------


def fmt_ns(value: float | None) -> str:
    if value is None:
        return "n/a"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}"


def fmt_x(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.2f}×" if value < 10 else f"{value:.1f}×"


def markdown(report: dict, contenders: tuple[str, ...]) -> str:
    env, results, summary = report["environment"], report["cases"], report["summary"]
    lines = [
        "# roastedavro benchmarks",
        "",
        f"{env['date']}, {env['mode']} mode ({env['repeats']} interleaved repeats, "
        f"~{env['target_loop_ms']} ms per timed loop, median). Python {env['python']}, "
        f"{env['cpu']} ({env['cpus']} CPUs), {env['platform']}. roastedavro {env['git_commit']}.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in env["versions"].items()) + ".",
        f"Load average (1, 5, 15 min) at start {env.get('loadavg_at_start')}, at end "
        f"{env.get('loadavg_at_end')}: other work on the machine slows every contender alike "
        "(repeats are interleaved), but absolute ns move between runs.",
        "",
        "Regenerate: `python -m benchmarks` (full) or `python -m benchmarks --quick`.",
        "ns per record (lower is better); speedup = fastavro ns / roastedavro ns (higher is "
        "better). n/a: not timed, see Checks. `*`: roastedavro writes these cases' fields "
        "through its generic path (marshmallow serialize + fastavro per value; see Checks).",
        "",
    ]
    for op in ("dump", "load"):
        lines += [
            f"## {op}",
            "",
            "| schema | " + " | ".join(f"{c} {op} ns" for c in contenders) + " | roastedavro vs fastavro |",
            "| --- | " + " | ".join("---:" for _ in contenders) + " | ---: |",
        ]
        for name, result in results.items():
            if "timings" not in result:
                lines.append(f"| {name} | " + " | ".join("error" for _ in contenders) + " | n/a |")
                continue
            timings = result["timings"]
            cells = [fmt_ns(timings.get(c, {}).get(op, {}).get("ns")) for c in contenders]
            mark = "*" if result.get("generic_path") else ""
            ratio = result["speedup"].get(op, {}).get("roastedavro")
            lines.append(f"| {name}{mark} | " + " | ".join(cells) + f" | **{fmt_x(ratio)}** |")
        for group, label in (
            ("classic", "geomean speedup vs fastavro, classic set"),
            ("wide", "geomean speedup vs fastavro, wide"),
            ("array", "geomean speedup vs fastavro, arrays"),
            ("logical", "geomean speedup vs fastavro, logical types"),
            ("all", "geomean speedup vs fastavro, all cases"),
        ):
            per = summary[group][op]
            cells = [
                fmt_x(per[c]["geomean_speedup"])
                + ("" if per[c]["cases"] in (0, len(summary[group]["cases"])) else f" ({per[c]['cases']})")
                for c in contenders
            ]
            lines.append(
                f"| *{label}* | "
                + " | ".join(cells)
                + f" | **{fmt_x(per['roastedavro']['geomean_speedup'])}** |"
            )
        lines.append("")
    lines.append(
        "Numbers in parentheses after a geometric mean: the cases it covers, when "
        "fewer than the group (the rest were n/a)."
    )
    lines.append("")
    tick = summary.get("market_tick_vs_msgspec")
    if tick:
        lines += [
            "## market_tick: roastedavro (Avro) vs msgspec (MessagePack + Struct)",
            "",
            "| | roastedavro ns | msgspec ns | msgspec / roastedavro |",
            "| --- | ---: | ---: | ---: |",
        ]
        for op, entry in tick.items():
            lines.append(
                f"| {op} | {fmt_ns(entry['roastedavro_ns'])} | {fmt_ns(entry['msgspec_ns'])} "
                f"| {entry['msgspec_over_roastedavro']:.2f} |"
            )
        lines += ["", "Above 1: roastedavro is faster.", ""]

    memory = report.get("memory")
    if memory:
        lines += [
            "## Memory",
            "",
            f"Peak RSS of the benchmark process (getrusage ru_maxrss; every contender "
            f"loaded, Cython's compiler imported): {memory['peak_rss_kib'] / 1024:.1f} MiB "
            f"(after the timing runs: {memory['peak_rss_after_timing_kib'] / 1024:.1f} MiB). "
            'A process that only loads cached roastedavro codecs: see "peak RSS cached" '
            "under Compile cost.",
            "",
        ]
        flat = memory.get("flat_check")
        if flat:
            lines += [
                "Flat-memory check, roastedavro dump_compiled + load_compiled of market_tick "
                "(after a 10,000-iteration warm-up; RSS pass, then a tracemalloc pass):",
                "",
                "| iterations | RSS | RSS growth | tracemalloc traced | traced growth |",
                "| ---: | ---: | ---: | ---: | ---: |",
            ]
            for rss, traced in zip(flat["rss"], flat["tracemalloc"]):
                lines.append(
                    f"| {rss['iterations']:,} | {rss['rss_kib'] / 1024:.1f} MiB | "
                    f"{rss['growth_kib']:+,} KiB | {traced['traced_bytes']:,} B | "
                    f"{traced['growth_bytes']:+,} B |"
                )
            lines += [
                "",
                f"Flat: **{'yes' if flat['flat'] else 'NO'}** (at most 1 MiB RSS and "
                "64 KiB traced growth over the run).",
                "",
            ]
        sweep = memory.get("leak_sweep")
        if sweep:
            suspects = [n for n, s in sweep.items() if s.get("suspect")]
            lines += [
                "Leak sweep (every case, dump+load under tracemalloc): "
                + (f"**growth in {', '.join(suspects)}**" if suspects else "no case grows")
                + "; per case in results.json.",
                "",
            ]

    compile_results = report.get("compile")
    if compile_results:
        lines += [
            "## Compile cost",
            "",
            "Cold: `compile()` in a fresh process with an empty `ROASTEDAVRO_CACHE_DIR` "
            "(code generation, Cython, C compiler, import). Cached: `compile()` in another "
            "fresh process with that cache (code generation + import of the cached module). "
            "Codegen only: a second instance's `compile()` in the same process.",
            "",
            "| schema | cold s | Cython s | cc s | cached ms | codegen only ms | peak RSS cold | peak RSS cached |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for name, entry in compile_results.items():
            if "error" in entry:
                lines.append(f"| {name} | error: {entry['error'][:80]} | | | | | | |")
                continue
            lines.append(
                f"| {name} | {entry['cold_s']:.2f} | {entry['cython_s'] or 0:.2f} | "
                f"{entry['cc_s'] or 0:.2f} | {entry['cached_s'] * 1e3:.1f} | "
                f"{entry['in_memory_recompile_s'] * 1e3:.1f} | {entry['cold_max_rss_kib'] / 1024:.0f} MiB | "
                f"{entry['cached_max_rss_kib'] / 1024:.0f} MiB |"
            )
        lines.append("")

    lines += [
        "## Checks",
        "",
        "Before timing, each Avro writer's bytes are compared with roastedavro's and each "
        "reader's decoded values with roastedavro's `load_compiled` result.",
        "",
    ]
    excluded = []
    for name, result in results.items():
        if "error" in result:
            excluded.append(f"- **{name}**: {result['error']}")
        for contender, checks in result.get("checks", {}).items():
            if checks.get("dump") and checks.get("dump") == checks.get("load"):
                excluded.append(f"- {name} / {contender} dump and load: n/a, {checks['dump']}")
            else:
                for op in ("dump", "load"):
                    if checks.get(op):
                        excluded.append(f"- {name} / {contender} {op}: n/a, {checks[op]}")
            for note in checks.get("notes", []):
                if contender != "msgspec":
                    excluded.append(f"- {name} / {contender}: {note}")
    lines += excluded or ["All contenders agree on every case."]
    generic = [n for n, r in results.items() if r.get("generic_path")]
    raw = [f"{n} ({', '.join(r['raw_fields'])})" for n, r in results.items() if r.get("raw_fields")]
    lines += [
        "",
        "Cases whose roastedavro codec uses the generic path (a value goes through "
        "marshmallow's serialize/deserialize and fastavro, detected in the generated code): "
        + (", ".join(generic) if generic else "none")
        + ". Cases with fields.Raw fields "
        "(Avro bytes/fixed): " + (", ".join(raw) if raw else "none") + ".",
    ]
    lines += [
        "",
        "Contender setup: roastedavro `dump_compiled`/`load_compiled`; fastavro "
        "`schemaless_writer`/`schemaless_reader` with a parsed schema; avro "
        "`DatumWriter`/`DatumReader` with `BinaryEncoder`/`BinaryDecoder`; cerializer "
        "`serialize_into`/`deserialize_from`; marshmallow+fastavro `schema.dump` then "
        "fastavro, fastavro then `schema.load`; msgspec `msgpack.Encoder().encode` / "
        "`msgpack.Decoder(Struct).decode`. Stream-based libraries reuse one output BytesIO "
        "(rewound, truncated, `getvalue()`) and one input BytesIO holding the message "
        "(rewound); roastedavro and msgspec take and return bytes. Avro writers other than "
        "roastedavro and marshmallow+fastavro get enum symbols as strings.",
        "",
    ]
    return "\n".join(lines)


def chart(report: dict, contenders: tuple[str, ...], baseline: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = {n: r for n, r in report["cases"].items() if "speedup" in r}
    names = list(results)
    shown = [c for c in contenders if c != baseline]
    colors = {
        "roastedavro": "#c0392b",
        "avro": "#7f8c8d",
        "cerializer": "#2980b9",
        "marshmallow+fastavro": "#8e44ad",
        "msgspec": "#27ae60",
    }
    fig, axes = plt.subplots(2, 1, figsize=(max(12, 0.62 * len(names) + 3), 10), sharex=True)
    width = 0.8 / len(shown)
    for ax, op in zip(axes, ("dump", "load")):
        for index, contender in enumerate(shown):
            xs, ys = [], []
            for position, name in enumerate(names):
                value = results[name]["speedup"].get(op, {}).get(contender)
                if value:
                    xs.append(position - 0.4 + width * (index + 0.5))
                    ys.append(value)
            ax.bar(xs, ys, width, label=contender, color=colors.get(contender))
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_ylabel(f"{op}: speedup vs {baseline} (×, log)")
        ax.grid(axis="y", which="both", alpha=0.3)
        ax.set_title(f"{op} ({baseline} = 1, higher is faster)", fontsize=10)
        # separators between groups (classic | market | wide | array | logical | extra)
        for position in range(1, len(names)):
            if results[names[position]]["group"] != results[names[position - 1]]["group"]:
                ax.axvline(position - 0.5, color="grey", linewidth=0.8, linestyle=":")
    axes[1].set_xticks(range(len(names)))
    axes[1].set_xticklabels(names, rotation=60, ha="right")
    axes[1].set_xlim(-0.6, len(names) - 0.4)
    handles, labels = axes[0].get_legend_handles_labels()
    env = report["environment"]
    fig.suptitle(
        f"roastedavro benchmarks: speedup vs {baseline} per record ({env['mode']} mode, "
        f"Python {env['python']}, {env['cpu']})",
        fontsize=11,
    )
    fig.legend(
        handles,
        labels,
        ncol=len(shown),
        loc="upper center",
        bbox_to_anchor=(0.5, 0.965),
        fontsize=9,
        frameon=False,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# -- main ----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="3 repeats, 100k-iteration memory check, compile cost of a few cases",
    )
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument("--groups", help="comma-separated groups: classic,market,wide,array,logical,extra")
    parser.add_argument(
        "--contenders",
        help="comma-separated contenders (default: all; roastedavro and fastavro are always included)",
    )
    parser.add_argument("--repeats", type=int, help="interleaved repeats (default 15, quick 3)")
    parser.add_argument(
        "--target-ms", type=float, default=30.0, help="target duration of one timed loop (default 30 ms)"
    )
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-compile-cost", action="store_true")
    parser.add_argument(
        "--compile-all", action="store_true", help="compile cost of every case in --quick mode too"
    )
    parser.add_argument(
        "--cerializer-max-fields",
        type=int,
        default=100,
        help="skip cerializer for records with more top-level fields (its "
        "compile time explodes with width; default 100)",
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
    from benchmarks.schemas import cases as select_cases

    contenders_module.CERIALIZER_MAX_FIELDS = args.cerializer_max_fields
    names = contenders_module.CONTENDERS
    if args.contenders:
        wanted = set(args.contenders.split(",")) | {"roastedavro", contenders_module.BASELINE}
        unknown = wanted - set(names)
        if unknown:
            raise SystemExit(f"unknown contender(s) {sorted(unknown)}; known: {', '.join(names)}")
        names = tuple(n for n in names if n in wanted)
    selected = select_cases(
        args.cases.split(",") if args.cases else None, args.groups.split(",") if args.groups else None
    )
    env = environment(args)
    log(
        f"roastedavro benchmarks: {env['mode']} mode, {len(selected)} cases, "
        f"{args.repeats} repeats, Python {env['python']}, {env['cpu']}"
    )
    target_ns = args.target_ms * 1e6

    results: dict[str, dict] = {}
    schemas: dict[str, Any] = {}
    for case in selected:
        entry: dict[str, Any] = {
            "group": case.group,
            "description": case.description,
            "raw_fields": list(case.raw_fields),
        }
        results[case.name] = entry
        case_started = time.perf_counter()
        try:
            schema = case.schema()
            schema.compile()
            contenders, reference = contenders_module.build(case, schema, names)
        except Exception as error:  # noqa: BLE001 - report the case, continue with the others
            entry["error"] = f"roastedavro failed: {type(error).__name__}: {error}"[:500]
            log(f"{case.name:20s} ERROR {entry['error']}")
            continue
        schemas[case.name] = (schema, reference["record"])
        entry["generic_path"] = generic_path(schema)
        entry["avro_bytes"] = len(reference["data"])
        entry["checks"] = {
            n: {"dump": c.dump_excluded, "load": c.load_excluded, "notes": c.notes}
            for n, c in contenders.items()
        }
        timings = measure_case(contenders, args.repeats, target_ns)
        entry["timings"] = timings
        entry["speedup"] = {op: speedups(timings, op, contenders_module.BASELINE) for op in ("dump", "load")}
        ra = timings.get("roastedavro", {})
        fa = timings.get("fastavro", {})
        excluded = [f"{n} {op}" for n, c in entry["checks"].items() for op in ("dump", "load") if c[op]]
        log(
            f"{case.name:20s} dump {fmt_ns(ra.get('dump', {}).get('ns')):>10} ns "
            f"(fastavro {fmt_ns(fa.get('dump', {}).get('ns')):>10}, "
            f"{fmt_x(entry['speedup']['dump'].get('roastedavro')):>7})   "
            f"load {fmt_ns(ra.get('load', {}).get('ns')):>10} ns "
            f"(fastavro {fmt_ns(fa.get('load', {}).get('ns')):>10}, "
            f"{fmt_x(entry['speedup']['load'].get('roastedavro')):>7})   "
            f"[{time.perf_counter() - case_started:.0f} s]"
            + (f"  n/a: {', '.join(excluded)}" if excluded else "")
        )

    report: dict[str, Any] = {"environment": env, "cases": results}
    memory: dict[str, Any] = {"peak_rss_after_timing_kib": peak_rss_kib()}
    if not args.skip_memory and "market_tick" in schemas:
        checkpoints = [100_000] if args.quick else [100_000, 1_000_000]
        log(f"memory: market_tick dump+load x {', '.join(f'{c:,}' for c in checkpoints)} ...")
        schema, record = schemas["market_tick"]
        flat = memory_flat_check(schema, record, checkpoints)
        memory["flat_check"] = flat
        for rss, traced in zip(flat["rss"], flat["tracemalloc"]):
            log(
                f"  after {rss['iterations']:>9,}: RSS {rss['rss_kib'] / 1024:7.1f} MiB "
                f"({rss['growth_kib']:+,} KiB since warm-up), tracemalloc {traced['traced_bytes']:,} B "
                f"({traced['growth_bytes']:+,} B)"
            )
        log(f"  flat: {'yes' if flat['flat'] else 'NO'}")
    if not args.skip_memory and schemas:
        log("memory: leak sweep over every case ...")
        sweep = {}
        for name, (schema, record) in schemas.items():
            timings = results[name]["timings"].get("roastedavro", {})
            per_call = sum(timings.get(op, {}).get("ns", 1000) for op in ("dump", "load"))
            sweep[name] = leak_sweep(schema, record, per_call, 0.15 if args.quick else 0.4)
            if sweep[name]["suspect"]:
                log(
                    f"  {name}: traced memory grows {sweep[name]['traced_bytes_per_iteration']:.1f} "
                    f"B per dump+load"
                )
        memory["leak_sweep"] = sweep
        log(f"  suspects: {[n for n, s in sweep.items() if s['suspect']] or 'none'}")
    memory["peak_rss_kib"] = peak_rss_kib()
    report["memory"] = memory
    log(f"peak RSS: {memory['peak_rss_kib'] / 1024:.1f} MiB")

    if not args.skip_compile_cost:
        compile_names = [c.name for c in selected]
        if args.quick and not args.compile_all:
            compile_names = [n for n in compile_names if n in QUICK_COMPILE_CASES] or compile_names[:3]
        log(f"compile cost ({len(compile_names)} cases, fresh processes) ...")
        report["compile"] = compile_cost(compile_names, log)

    report["summary"] = summarize(results, names, contenders_module.BASELINE)
    report["elapsed_s"] = round(time.perf_counter() - started_all, 1)
    env["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    (args.out / "results.md").write_text(markdown(report, names))
    try:
        chart(report, names, contenders_module.BASELINE, args.out / "chart.png")
    except Exception as error:  # noqa: BLE001
        log(f"chart failed: {error}")

    for group in ("classic", "wide", "array", "logical"):
        per = report["summary"][group]
        if per["cases"]:
            log(
                f"geomean speedup vs fastavro ({group}): "
                + ", ".join(
                    f"{op} "
                    + " ".join(
                        f"{c}={fmt_x(per[op][c]['geomean_speedup'])}" for c in names if c != "fastavro"
                    )
                    for op in ("dump", "load")
                )
            )
    tick = report["summary"].get("market_tick_vs_msgspec")
    if tick:
        log(
            "market_tick msgspec ns / roastedavro ns: "
            + ", ".join(f"{op} {e['msgspec_over_roastedavro']:.2f}" for op, e in tick.items())
        )
    log(f"wrote {args.out / 'results.json'}, results.md, chart.png in {report['elapsed_s']:.0f} s")
    return report


if __name__ == "__main__":
    main()
