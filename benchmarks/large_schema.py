"""The build of one large schema, end to end: seconds (Cython, the C
compiler) and the peak memory of the building processes together.

    python -m benchmarks.large_schema PATH.avsc                  # build="child"
    python -m benchmarks.large_schema PATH.avsc --build here
    python -m benchmarks.large_schema PATH.avsc --against ../old # also another checkout

Apache Avro's ``lang/c++/jsonschemas/large_schema.avsc`` (339 records,
3,462 fields, 2,450 unions) is the case docs/compiling.md quotes. Each build runs
``AvroCodec(schema, compile="eager", build=...)`` in a fresh Python process
with an empty cache. The process tree (that process, its build process,
Cython's copy, the C compiler) is sampled every 0.2 s from ``ps``; the
figure is the largest sum of their resident sizes at one moment, which is
what the machine must have. With ``--against``, the other checkout (its
runtime built) is measured first, then this one, in turn for ``--rounds``.

Writes benchmarks/results/large_schema.json and large_schema.md
(large_schema_here.* with ``--build here``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if not __package__:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(HERE.parent))

from benchmarks.run import cpu_and_commit, save_report  # noqa: E402

_BUILD = (
    "import json, sys, time\n"
    "from roastedavro import compiler\n"
    "from roastedavro.avro import load_schema\n"
    "from roastedavro.codec import AvroCodec\n"
    "started = time.perf_counter()\n"
    "AvroCodec(load_schema(sys.argv[1]), compile='eager', build=sys.argv[2])\n"
    "print(json.dumps({'total_s': time.perf_counter() - started, **compiler.last_timing}))\n"
)


def _tree_rss_kib(root: int) -> int:
    """The summed resident size of ``root`` and its descendants, in KiB."""
    listing = subprocess.run(["ps", "-eo", "pid=,ppid=,rss="], capture_output=True, text=True).stdout
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 3:
            pid, parent, size = map(int, parts)
            children.setdefault(parent, []).append(pid)
            rss[pid] = size
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack += children.get(pid, [])
    return total


def build_once(schema: Path, build: str, tree: Path | None) -> dict:
    env = dict(os.environ)
    if tree is not None:  # another checkout's roastedavro
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as cache:
        env["ROASTEDAVRO_CACHE_DIR"] = cache
        process = subprocess.Popen(
            [sys.executable, "-c", _BUILD, str(schema), build],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=str(tree) if tree is not None else None,
        )
        peak = 0
        while process.poll() is None:
            peak = max(peak, _tree_rss_kib(process.pid))
            time.sleep(0.2)
        out, err = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"the build failed:\n{err}")
    timing = json.loads(out.strip().splitlines()[-1])
    return {
        "total_s": round(timing["total_s"], 1),
        "cython_s": round(timing.get("cython", 0), 1),
        "cc_s": round(timing.get("cc", 0), 1),
        "peak_mb": round(peak / 1024),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("schema", type=Path)
    parser.add_argument("--build", choices=("child", "here"), default="child")
    parser.add_argument("--against", type=Path, help="another checkout, measured in turn")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    trees = ([("other", args.against.resolve())] if args.against else []) + [("this", None)]
    rows = []
    for round_number in range(1, args.rounds + 1):
        for label, tree in trees:
            result = build_once(args.schema.resolve(), args.build, tree)
            rows.append({"round": round_number, "tree": label, **result})
            print(f"round {round_number} {label}: {result}", flush=True)
    cpu, commit = cpu_and_commit()
    report = {"schema": args.schema.name, "build": args.build, "cpu": cpu, "commit": commit, "rows": rows}
    lines = [
        f"# Building {args.schema.name} (build={args.build!r})",
        "",
        "| round | tree | total s | Cython s | C compiler s | peak MB (process tree) |",
        "| ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {row['round']} | {row['tree']} | {row['total_s']} | {row['cython_s']} | "
        f"{row['cc_s']} | {row['peak_mb']:,} |"
        for row in rows
    ]
    lines.append("")
    stem = "large_schema" if args.build == "child" else f"large_schema_{args.build}"
    save_report(args.out, stem, report, lines)
    return report


if __name__ == "__main__":
    main()
