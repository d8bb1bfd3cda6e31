"""How long a cold compile takes, and how fast the compiled code runs.

    python -m benchmarks.compile_time                      # ~5 min
    python -m benchmarks.compile_time --against ../old     # also a checkout of another version
    python -m benchmarks.compile_time --cases int,wide_50 --rounds 2

Compile time: every round runs each case in two fresh processes, each with an
empty ``ROASTEDAVRO_CACHE_DIR`` (``compile_probe.py``):

- "cold process": the schema is the first thing compiled, so Cython's own
  start-up (importing its compiler, building its lexer: about a second here)
  is part of it, as for a service's first compile or a child-process build;
- "warm process": another schema was compiled first in the same process, as
  for every later compile in a service and in ``roastedavro build``'s
  workers.

Each is split into code generation, Cython and the C compiler. The figure is
the best round (these machines are shared: the best round is the one least
disturbed).

Compiled speed: dump_compiled and load_compiled of each case's record, in a
fresh process per round, ns per call (best of nine timed loops), and the
speedup over fastavro's schemaless writer and reader timed in the same
process, interleaved (the median over rounds).

With ``--against PATH`` (a checkout with its runtime built, e.g. ``git
worktree add ../old <commit> && cd ../old && python setup.py build_ext
--inplace``) every measurement is also taken with that tree's roastedavro,
interleaved round by round with this one's, and the table shows both.

Writes benchmarks/results/compile_time.json and compile_time.md.

``--worker`` measures the build process behind ``build="child"`` (background
and ``hot`` compiles) instead, in this process: each case as a marshmallow
schema and as its plain Avro schema, built by a new build process ("cold":
Python's and Cython's start-up included) and by one that has built another
schema of the same kind before ("warm"), each into an empty cache; the source is generated
beforehand. Prints a table; writes nothing.

    python -m benchmarks.compile_time --worker --cases wide_10,wide_50 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
DEFAULT_CASES = ("int", "wide_10", "wide_50", "wide_500")
#: compiled first in a "warm process" (a case not measured)
WARMUP_CASE = "long"

_SPEED_CODE = """
import json, sys, timeit
from benchmarks.contenders import make_fastavro
from benchmarks.schemas import CASES
case = CASES[sys.argv[1]]
schema = case.schema().compile()
record = case.record()
data = schema.dump_compiled(record)
assert schema.load_compiled(data) == schema.load(schema.dump(record))
fastavro = make_fastavro(case, schema, record, data)
assert fastavro.dump(fastavro.dump_input) == data
calls = {"dump": (schema.dump_compiled, record), "load": (schema.load_compiled, data),
         "fastavro_dump": (fastavro.dump, fastavro.dump_input),
         "fastavro_load": (fastavro.load, fastavro.load_input)}
numbers = {name: max(1, int(0.02 / max(min(timeit.repeat(lambda: call(arg), number=1, repeat=5)), 1e-7)))
           for name, (call, arg) in calls.items()}
best = dict.fromkeys(calls, float("inf"))
for _ in range(9):  # interleaved: each round times every call once
    for name, (call, arg) in calls.items():
        best[name] = min(best[name], timeit.timeit(lambda: call(arg), number=numbers[name]) / numbers[name])
print(json.dumps({"dump_ns": best["dump"] * 1e9, "load_ns": best["load"] * 1e9,
                  "dump_x": best["fastavro_dump"] / best["dump"],
                  "load_x": best["fastavro_load"] / best["load"]}))
"""


def _run(tree: Path, args: list[str], cache: str) -> dict:
    env = dict(os.environ, ROASTEDAVRO_CACHE_DIR=cache, PYTHONPATH=str(tree))
    # from outside any checkout: PYTHONPATH decides which roastedavro is imported
    completed = subprocess.run(
        [sys.executable, *args],
        cwd=tempfile.gettempdir(),
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if completed.returncode != 0:
        tail = (completed.stderr or completed.stdout).strip().splitlines()[-3:]
        raise RuntimeError(" | ".join(tail))
    return json.loads(completed.stdout.strip().splitlines()[-1])


def _compile(tree: Path, case: str, warm: bool) -> dict:
    cache = tempfile.mkdtemp(prefix="roastedavro-compile-time-")
    try:
        # this tree's probe, whichever tree's roastedavro it measures
        args = [str(HERE / "compile_probe.py"), case]
        if warm:
            args += ["--warm-with", WARMUP_CASE]
        result = _run(tree, args, cache)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    codegen = result["compile_s"] - (result["cython_s"] or 0) - (result["cc_s"] or 0)
    return {
        "total_s": result["compile_s"],
        "cython_s": result["cython_s"],
        "cc_s": result["cc_s"],
        "other_s": codegen,
    }


def _speed(tree: Path, case: str, cache: str) -> dict:
    return _run(tree, ["-c", _SPEED_CODE, case], cache)


def _best(samples: list[dict]) -> dict:
    best = min(samples, key=lambda sample: sample.get("total_s", sample.get("dump_ns")))
    if "dump_ns" in best:
        # the rounds' best times, and the median of their ratios over fastavro
        # (measured in the same process, interleaved: less exposed to a noisy round)
        return {
            "dump_ns": min(s["dump_ns"] for s in samples),
            "load_ns": min(s["load_ns"] for s in samples),
            "dump_x": statistics.median(s["dump_x"] for s in samples),
            "load_x": statistics.median(s["load_x"] for s in samples),
        }
    return best


def measure(trees: dict[str, Path], cases: list[str], rounds: int, log, compile_time: bool = True) -> dict:
    samples: dict = {
        label: {case: {"cold": [], "warm": [], "speed": []} for case in cases} for label in trees
    }
    caches = {label: tempfile.mkdtemp(prefix="roastedavro-speed-") for label in trees}
    try:
        for round_number in range(1, rounds + 1):
            for case in cases:
                for label, tree in trees.items():
                    for kind in ("cold", "warm") if compile_time else ():
                        sample = _compile(tree, case, warm=kind == "warm")
                        samples[label][case][kind].append(sample)
                        log(
                            f"round {round_number} {label:8s} {case:10s} {kind} "
                            f"{sample['total_s']:6.2f} s (Cython {sample['cython_s']:.2f} s, "
                            f"C compiler {sample['cc_s']:.2f} s)"
                        )
                    speed = _speed(tree, case, caches[label])
                    samples[label][case]["speed"].append(speed)
                    log(
                        f"round {round_number} {label:8s} {case:10s} dump {speed['dump_ns']:9.0f} ns "
                        f"({speed['dump_x']:.1f}x fastavro)  load {speed['load_ns']:9.0f} ns "
                        f"({speed['load_x']:.1f}x fastavro)"
                    )
    finally:
        for cache in caches.values():
            shutil.rmtree(cache, ignore_errors=True)
    return {
        label: {
            case: {kind: _best(values) for kind, values in by_kind.items() if values}
            for case, by_kind in by_case.items()
        }
        for label, by_case in samples.items()
    }


def _fields(case: str) -> str:
    from benchmarks.schemas import CASES

    return str(len(CASES[case].schema().fields))


def markdown(results: dict, rounds: int) -> str:
    labels = list(results)
    cases = list(results[labels[0]])
    lines = [
        f"Best of {rounds} rounds, each a fresh process with an empty cache; "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}.",
        "",
    ]
    lines += [
        "| schema | fields | version | cold process s | (Cython / C compiler) | "
        "warm process s | (Cython / C compiler) | dump ns (× fastavro) | load ns (× fastavro) |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for case in cases:
        for label in labels:
            entry = results[label][case]
            cold, warm, speed = entry["cold"], entry["warm"], entry["speed"]
            lines.append(
                f"| {case} | {_fields(case)} | {label} | {cold['total_s']:.2f} | "
                f"{cold['cython_s']:.2f} / {cold['cc_s']:.2f} | {warm['total_s']:.2f} | "
                f"{warm['cython_s']:.2f} / {warm['cc_s']:.2f} | "
                f"{speed['dump_ns']:,.0f} ({speed['dump_x']:.1f}×) | "
                f"{speed['load_ns']:,.0f} ({speed['load_x']:.1f}×) |"
            )
    return "\n".join(lines) + "\n"


def _worker_sources(case: str) -> dict:
    from roastedavro.avro.parse import parse_schema
    from roastedavro.avrogen import generate_avro_module
    from roastedavro.codegen import generate_module
    from roastedavro.flags import CompileFlags

    from benchmarks.schemas import CASES

    schema = CASES[case].schema()
    plan = schema._plan()
    marshmallow = generate_module(
        plan.root, plan.records, schema._label(), CompileFlags().build_key(), plan.fingerprint
    ).source
    avro = parse_schema(schema.avro_schema())
    return {
        "marshmallow": (marshmallow, plan.fingerprint),
        "avro": (generate_avro_module(avro).source, f"{avro.fingerprint():016x}"),
    }


def worker_times(
    cases: list[str], rounds: int, log, kinds: tuple[str, ...] = ("marshmallow", "avro")
) -> dict:
    """Seconds per build="child" build, cold and warm build process (best round)."""
    import time

    from roastedavro import buildserver, compiler
    from roastedavro.flags import CompileFlags

    flags = CompileFlags()
    warm_ups = _worker_sources(WARMUP_CASE)
    best: dict = {}
    for round_number in range(1, rounds + 1):
        for case in cases:
            for kind, (source, fingerprint) in _worker_sources(case).items():
                if kind not in kinds:
                    continue
                for state in ("cold", "warm"):
                    buildserver._workers.stop()
                    cache = Path(tempfile.mkdtemp(prefix="roastedavro-worker-"))
                    try:
                        if state == "warm":  # another schema of the same kind first
                            warm_up, warm_print = warm_ups[kind]
                            buildserver._build_in_child(warm_up, flags, warm_print, cache)
                            time.sleep(1.0)  # idle between builds, as a service's is
                        compiler.last_timing.clear()
                        started = time.perf_counter()
                        buildserver._build_in_child(source, flags, fingerprint, cache)
                        total = time.perf_counter() - started
                    finally:
                        shutil.rmtree(cache, ignore_errors=True)
                    sample = {
                        "total_s": total,
                        "cython_s": compiler.last_timing.get("cython", 0.0),
                        "cc_s": compiler.last_timing.get("cc", 0.0),
                    }
                    log(
                        f"round {round_number} {case:10s} {kind:11s} {state} {total:6.2f} s "
                        f"(Cython {sample['cython_s']:.2f} s, C compiler {sample['cc_s']:.2f} s)"
                    )
                    key = (case, kind, state)
                    if key not in best or total < best[key]["total_s"]:
                        best[key] = sample
    buildserver._workers.stop()
    return best


def worker_markdown(best: dict, rounds: int) -> str:
    lines = [
        f'build="child" builds, best of {rounds} rounds; {os.cpu_count()} cores, '
        f"Python {platform.python_version()}.",
        "",
        "| schema | fields | kind | new build process s | (Cython / C compiler) | "
        "warm build process s | (Cython / C compiler) |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for (case, kind, state), cold in best.items():
        if state != "cold":
            continue
        warm = best[(case, kind, "warm")]
        lines.append(
            f"| {case} | {_fields(case)} | {kind} | {cold['total_s']:.2f} | "
            f"{cold['cython_s']:.2f} / {cold['cc_s']:.2f} | {warm['total_s']:.2f} | "
            f"{warm['cython_s']:.2f} / {warm['cc_s']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def speed_markdown(results: dict, this: str, other: str, rounds: int) -> str:
    """Both trees' compiled speed per case, and this tree's change."""
    commit = (
        subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or "unknown"
    )
    lines = [
        f"# Compiled speed, {this} against {other}",
        "",
        f"Python {platform.python_version()}, {this} = commit {commit} (and its working tree), "
        f"{rounds} rounds interleaved tree by tree, each a fresh process per case (median over "
        "rounds of the best of nine timed loops; `python -m benchmarks.compile_time --speed-only "
        "--against PATH`). ns per call of dump_compiled and load_compiled of each case's "
        "CompiledSchema; a change within about ±5% is this machine's noise.",
        "",
        f"| case | dump {other} | dump {this} | change | load {other} | load {this} | change |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for case, entry in results[this].items():
        mine, theirs = entry["speed"], results[other][case]["speed"]
        lines.append(
            f"| {case} | {theirs['dump_ns']:,.0f} | {mine['dump_ns']:,.0f} | "
            f"{(mine['dump_ns'] / theirs['dump_ns'] - 1) * 100:+.1f}% | {theirs['load_ns']:,.0f} | "
            f"{mine['load_ns']:,.0f} | {(mine['load_ns'] / theirs['load_ns'] - 1) * 100:+.1f}% |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(DEFAULT_CASES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout, measured interleaved")
    parser.add_argument("--label", default="this", help="this tree's label in the table")
    parser.add_argument("--against-label", default="other")
    parser.add_argument(
        "--speed-only",
        action="store_true",
        help="only the compiled code's speed (prints its table, writes nothing)",
    )
    parser.add_argument("--kinds", default="marshmallow,avro", help="with --worker")
    parser.add_argument(
        "--worker",
        action="store_true",
        help='builds by the build process behind build="child", cold and warm',
    )
    args = parser.parse_args(argv)
    if args.worker:
        cases = [case.strip() for case in args.cases.split(",") if case.strip()]
        best = worker_times(
            cases, args.rounds, lambda line: print(line, flush=True), tuple(args.kinds.split(","))
        )
        print(worker_markdown(best, args.rounds))
        return
    trees = {args.label: ROOT}
    if args.against is not None:
        trees[args.against_label] = args.against.resolve()
    cases = [case.strip() for case in args.cases.split(",") if case.strip()]
    results = measure(
        trees, cases, args.rounds, lambda line: print(line, flush=True), compile_time=not args.speed_only
    )
    if args.speed_only:
        for label, by_case in results.items():
            for case, entry in by_case.items():
                speed = entry["speed"]
                print(
                    f"{label:10s} {case:12s} dump {speed['dump_ns']:9.0f} ns ({speed['dump_x']:.1f}x)"
                    f"  load {speed['load_ns']:9.0f} ns ({speed['load_x']:.1f}x)"
                )
        if args.against is not None:
            # the compiled code of two versions, case by case: speed_against.md
            RESULTS.mkdir(exist_ok=True)
            table = speed_markdown(results, args.label, args.against_label, args.rounds)
            (RESULTS / "speed_against.md").write_text(table)
            print(table)
        return
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "compile_time.json").write_text(
        json.dumps(
            {
                "rounds": args.rounds,
                "results": results,
                "trees": {label: str(tree) for label, tree in trees.items()},
            },
            indent=2,
        )
        + "\n"
    )
    table = markdown(results, args.rounds)
    (RESULTS / "compile_time.md").write_text(table)
    print(table)


if __name__ == "__main__":
    if not __package__:
        sys.path.insert(0, str(ROOT))
    main()
