"""Replays fuzz corpora through the compiled-code target and reports cost per input.

    python tests/fuzz/replay_stats.py CORPUS_DIR [MORE_DIRS ...] [--json OUT.json]

Every input goes through compiled_targets.check (load, and for a value: dump,
reload, compare, dump again), as in the fuzzer; an input with another outcome
is listed and makes the exit status 1. Then each input's load_compiled alone
(what a service decoding hostile bytes pays) is timed and measured. Reported:
the number of inputs and their outcomes, the slowest load (its time and its
time per byte), the highest time per byte (over all inputs, and over inputs of
256 bytes or more, where a call's fixed cost no longer dominates), the largest
memory one load needed (tracemalloc's peak during the call above what was
allocated before it: Python objects and the codecs' buffers, which come from
Python's allocators), and the same two maxima for the whole check. Times are
the best of 3 runs, so a busy machine does not inflate them.

Runs on the regular build (the numbers users see) or, after sourcing the
instrumented build's env.sh, on that one.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import pathlib
import resource
import sys
import time
import tracemalloc

os.environ.pop("LD_PRELOAD", None)  # codecs may be compiled here: not under a preloaded sanitizer
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import compiled_targets  # noqa: E402

REPEATS = 3
LONG = 256


def inputs(folders):
    for folder in folders:
        for path in sorted(pathlib.Path(folder).iterdir()):
            if path.is_file():
                yield path


def load(data: bytes) -> None:
    target, payload = compiled_targets.pick(data)
    try:
        target.compiled().load_compiled(payload, many=target.many)
    except (compiled_targets.DecodeError, compiled_targets.ValidationError):
        pass


def best_time(run, data: bytes) -> float:
    best = None
    for _ in range(REPEATS):
        started = time.perf_counter()
        run(data)
        elapsed = time.perf_counter() - started
        best = elapsed if best is None else min(best, elapsed)
    return best


def peak_memory(run, data: bytes) -> int:
    gc.collect()
    tracemalloc.reset_peak()
    before, _ = tracemalloc.get_traced_memory()
    try:
        run(data)
    except Exception:
        pass
    _, peak = tracemalloc.get_traced_memory()
    return peak - before


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--json", help="also write the summary to this file")
    args = parser.parse_args()

    compiled_targets.compile_all()
    paths = list(inputs(args.folders))
    outcomes = collections.Counter()
    per_target = collections.Counter()
    findings = []
    rows = []
    started = time.perf_counter()
    for path in paths:
        data = path.read_bytes()
        target = compiled_targets.pick(data)[0].name
        per_target[target] += 1
        try:
            outcome = compiled_targets.check(data)
        except Exception as error:  # a finding: report it, keep going
            findings.append({"input": str(path), "error": f"{type(error).__name__}: {error}"[:500]})
            continue
        outcomes[outcome] += 1
        rows.append(
            {
                "input": str(path),
                "target": target,
                "bytes": len(data),
                "outcome": outcome,
                "seconds": best_time(load, data),
                "check_seconds": best_time(compiled_targets.check, data),
            }
        )
    timing_wall = time.perf_counter() - started

    tracemalloc.start()
    for row in rows:
        data = pathlib.Path(row["input"]).read_bytes()
        row["peak_bytes"] = peak_memory(load, data)
        row["check_peak_bytes"] = peak_memory(compiled_targets.check, data)
    tracemalloc.stop()

    def per_byte(row):
        return row["seconds"] / max(1, row["bytes"])

    slowest = max(rows, key=lambda r: r["seconds"])
    slowest_check = max(rows, key=lambda r: r["check_seconds"])
    largest_check = max(rows, key=lambda r: r["check_peak_bytes"])
    worst_per_byte = max(rows, key=per_byte)
    long_rows = [r for r in rows if r["bytes"] >= LONG]
    worst_long = max(long_rows, key=per_byte) if long_rows else None
    largest = max(rows, key=lambda r: r["peak_bytes"])
    largest_ratio = max(rows, key=lambda r: r["peak_bytes"] / max(1, r["bytes"]))
    summary = {
        "inputs": len(paths),
        "outcomes": dict(outcomes),
        "per_target": dict(per_target),
        "findings": findings,
        "bytes_total": sum(r["bytes"] for r in rows),
        "bytes_max": max(r["bytes"] for r in rows),
        "slowest": {**slowest, "seconds_per_byte": per_byte(slowest)},
        "max_seconds_per_byte": {**worst_per_byte, "seconds_per_byte": per_byte(worst_per_byte)},
        f"max_seconds_per_byte_{LONG}_bytes_or_more": worst_long
        and {**worst_long, "seconds_per_byte": per_byte(worst_long)},
        "largest_memory": largest,
        "slowest_check": slowest_check,
        "largest_check_memory": largest_check,
        "largest_memory_per_byte": {
            **largest_ratio,
            "peak_per_byte": largest_ratio["peak_bytes"] / max(1, largest_ratio["bytes"]),
        },
        "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "timing_wall_seconds": timing_wall,
        "instrumented": os.environ.get("ROASTEDAVRO_FUZZ_INSTRUMENTED", "no"),
    }

    def show(label, row, extra=""):
        print(
            f"{label}: {row['seconds'] * 1e6:,.1f} us for {row['bytes']} bytes "
            f"({row['seconds'] / max(1, row['bytes']) * 1e9:,.1f} ns/byte), "
            f"{row['target']} -> {row['outcome']}{extra}  [{row['input']}]"
        )

    print(
        f"inputs: {summary['inputs']} ({summary['bytes_total']:,} bytes, largest {summary['bytes_max']:,}); "
        f"outcomes: {dict(outcomes)}; findings: {len(findings)}"
    )
    print(f"per target: {dict(per_target)}")
    show("slowest input", slowest)
    show("max time per byte", worst_per_byte)
    if worst_long:
        show(f"max time per byte, inputs of {LONG}+ bytes", worst_long)
    print(
        f"largest memory per input: {largest['peak_bytes']:,} bytes (tracemalloc peak) for "
        f"{largest['bytes']} bytes, {largest['target']} [{largest['input']}]"
    )
    print(
        f"largest memory per input byte: {largest_ratio['peak_bytes'] / max(1, largest_ratio['bytes']):,.0f} "
        f"({largest_ratio['peak_bytes']:,} bytes for {largest_ratio['bytes']}) [{largest_ratio['input']}]"
    )
    print(
        f"whole check (load, dump, reload, compare, dump): slowest {slowest_check['check_seconds'] * 1e3:,.2f} ms "
        f"for {slowest_check['bytes']} bytes [{slowest_check['input']}]; largest memory "
        f"{largest_check['check_peak_bytes']:,} bytes for {largest_check['bytes']} bytes [{largest_check['input']}]"
    )
    print(
        f"process max RSS: {summary['max_rss_kib'] / 1024:,.1f} MiB; instrumented: {summary['instrumented']}"
    )
    for finding in findings:
        print(f"FINDING {finding['input']}: {finding['error']}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(summary, indent=2, default=str))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
