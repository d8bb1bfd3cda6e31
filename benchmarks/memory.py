"""Memory and import time of a script using ``roastedavro.fastavro`` against the
same script using fastavro.

    python -m benchmarks.memory                      # 5 rounds, 100,000 records: ~1 min
    python -m benchmarks.memory --rounds 3 --records 20000
    python -m benchmarks.memory --user-cache         # the user's codec cache, not an empty one

Writes benchmarks/results/memory.json and memory.md (``--out`` for another folder).

Method. Every run is a fresh Python process (started outside the repository)
running one script, ``SCRIPT`` below, with ``import fastavro as fa`` or
``import roastedavro.fastavro as fa``: ``parse_schema`` of three schemas (a
3-field record, a clickstream event with a uuid, timestamps, an enum, a map and
nullable fields, and a record holding an array of 20 longs), then per schema:
``--records`` datums written with ``schemaless_writer`` (each message kept),
every message read back with ``schemaless_reader``, the datums written to a
container file (``writer``, deflate, in a ``BytesIO``) and the file read
(``reader``). The datums are made as they are written (no list of them is
held), so the peak is the library's own plus the messages and the file.

The process reports its own figures: the wall time of the import statement,
its peak RSS (``ru_maxrss``) just after the import and at the end, and the
peak RSS of any process it started and waited for (``RUSAGE_CHILDREN``: a
compile worker); a compile worker still running at the end is reported by
its own peak (``VmHWM``), which ``children`` then includes. Configurations:
fastavro; the drop-in under the default compile policy (``hot``); the drop-in
with ``ROASTEDAVRO_COMPILE=never``. Rounds run every configuration once, in a
rotating order; the table gives the median (and the range) over the rounds.
Every run's output is checked: the messages and files each configuration
writes must be byte for byte fastavro's (a SHA-256 of all of them), and every
record must be read.

roastedavro's bytecode is written first, as pip writes it when it installs
a package (fastavro's is there): modules compiled from source in every run
would cost the drop-in's side MB and tens of ms no installed copy pays.

Unless ``--user-cache``, every drop-in run gets an empty ``ROASTEDAVRO_CACHE_DIR``
(what a first run sees; with a codec in the cache its lookup loads it, which
imports the code generator to compute its key).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if not __package__:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(HERE.parent))

#: what each run executes (argv: the module to import as fa, the records per schema)
SCRIPT = r"""
import hashlib, io, json, os, resource, sys, time

started = time.perf_counter()
if sys.argv[1] == "fastavro":
    import fastavro as fa
else:
    import roastedavro.fastavro as fa
import_ms = (time.perf_counter() - started) * 1000
rss_import = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
N = int(sys.argv[2])

SMALL = {"type": "record", "name": "Small", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": "string"},
    {"name": "score", "type": ["null", "double"]}]}
EVENT = {"type": "record", "name": "Event", "namespace": "bench", "fields": [
    {"name": "event_id", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "kind", "type": {"type": "enum", "name": "Kind",
                              "symbols": ["VIEW", "CLICK", "BUY"]}},
    {"name": "user", "type": ["null", "string"], "default": None},
    {"name": "tags", "type": {"type": "map", "values": "string"}},
    {"name": "amount", "type": ["null", "long", "double"], "default": None}]}
SERIES = {"type": "record", "name": "Series", "fields": [
    {"name": "key", "type": "string"},
    {"name": "values", "type": {"type": "array", "items": "long"}}]}

import datetime, uuid
EPOCH = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
KINDS = ("VIEW", "CLICK", "BUY")


def datums(name):
    for i in range(N):
        if name == "Small":
            yield {"id": i, "name": f"n{i}", "score": None if i % 3 else i / 7}
        elif name == "Event":
            yield {"event_id": uuid.UUID(int=i * 7919 + 1), "at": EPOCH + datetime.timedelta(
                       microseconds=i * 1013), "kind": KINDS[i % 3],
                   "user": None if i % 2 else f"u{i % 97}", "tags": {"page": f"/p{i % 13}"},
                   "amount": (None, i, i / 4)[i % 3]}
        else:
            yield {"key": f"k{i % 101}", "values": list(range(i % 17, i % 17 + 20))}


digest = hashlib.sha256()
read = 0
for schema in (SMALL, EVENT, SERIES):
    parsed = fa.parse_schema(schema)
    messages = []
    for datum in datums(schema["name"]):
        buffer = io.BytesIO()
        fa.schemaless_writer(buffer, parsed, datum)
        messages.append(buffer.getvalue())
    for message in messages:
        fa.schemaless_reader(io.BytesIO(message), parsed)
        read += 1
    digest.update(b"".join(messages))
    del messages
    container = io.BytesIO()
    fa.writer(container, parsed, datums(schema["name"]), codec="deflate", sync_marker=b"0" * 16)
    # the header's metadata is a map: its order may differ, the blocks may not
    digest.update(container.getvalue().split(b"0" * 16, 1)[1])
    container.seek(0)
    read += sum(1 for _ in fa.reader(container))
    del container

workers = []
compiler = sys.modules.get("roastedavro.compiler")
if compiler is not None:
    for pid in compiler.build_workers():
        try:
            with open(f"/proc/{pid}/status") as status:
                hwm = [line for line in status if line.startswith("VmHWM:")]
            workers.append(int(hwm[0].split()[1]))
        except (OSError, IndexError):
            pass
print(json.dumps({
    "import_ms": import_ms,
    "rss_import_kb": rss_import,
    "rss_peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "children_kb": max([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, *workers]),
    "read": read,
    "sha256": digest.hexdigest(),
    "modules": sorted(m for m in ("jinja2", "Cython", "marshmallow", "roastedavro.codegen",
                                  "roastedavro.avrogen", "roastedavro.avrojson",
                                  "importlib.metadata") if m in sys.modules),
}))
"""

#: configuration -> (module imported, ROASTEDAVRO_COMPILE or None)
CONFIGS = {
    "fastavro": ("fastavro", None),
    "roastedavro.fastavro": ("roastedavro.fastavro", None),
    "roastedavro.fastavro never": ("roastedavro.fastavro", "never"),
}


def run_once(config: str, records: int, user_cache: bool, workdir: Path) -> dict:
    module, policy = CONFIGS[config]
    env = dict(os.environ)
    env.pop("ROASTEDAVRO_COMPILE", None)
    if policy is not None:
        env["ROASTEDAVRO_COMPILE"] = policy
    with tempfile.TemporaryDirectory(prefix="roastedavro-memory-cache-") as cache:
        if not user_cache:
            os.chmod(cache, 0o700)
            env["ROASTEDAVRO_CACHE_DIR"] = cache
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, module, str(records)],
            env=env,
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=900,
        )
    if done.returncode != 0:
        raise RuntimeError(f"{config}: the script failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def summary(values: list[float]) -> str:
    return (
        f"{statistics.median(values):,.1f} ({min(values):,.1f}-{max(values):,.1f})"
        if len(values) > 1
        else f"{values[0]:,.1f}"
    )


def markdown(env: dict, runs: dict[str, list[dict]]) -> str:
    lines = [
        "# Memory and import time: a script on fastavro and on roastedavro.fastavro",
        "",
        f"{env['date']}, Python {env['python']}, {env['cpus']} CPUs, commit {env['git_commit']}, "
        f"{env['records']:,} records per schema (3 schemas), {env['rounds']} rounds, "
        f"{'the user codec cache' if env['user_cache'] else 'an empty codec cache per run'}. "
        "Median (min-max) over the rounds; `python -m benchmarks.memory` (its docstring: the method).",
        "",
        "| configuration | import, ms | peak RSS after import, MB | peak RSS, MB | "
        "children's peak RSS, MB | imported |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for config, results in runs.items():
        modules = sorted({m for r in results for m in r["modules"]})
        lines.append(
            f"| {config} | {summary([r['import_ms'] for r in results])} "
            f"| {summary([r['rss_import_kb'] / 1024 for r in results])} "
            f"| {summary([r['rss_peak_kb'] / 1024 for r in results])} "
            f"| {summary([r['children_kb'] / 1024 for r in results])} "
            f"| {', '.join(modules) or '-'} |"
        )
    lines += [
        "",
        "Checks: every configuration wrote fastavro's bytes (messages and container "
        "blocks) and read every record.",
        "",
    ]
    return "\n".join(lines)


def _byte_compiled() -> None:
    """roastedavro's bytecode written, as pip writes it at install (fastavro's
    is): a source tree run with PYTHONDONTWRITEBYTECODE, or edited since its
    last import, would have every run compile modules from source, which
    costs the drop-in's side MB and tens of ms that no installed copy pays."""
    import compileall

    import roastedavro

    compileall.compile_dir(os.path.dirname(roastedavro.__file__), quiet=1)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory", description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000, help="records per schema")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--configs", default=",".join(CONFIGS), help="comma-separated, of: " + ", ".join(CONFIGS)
    )
    parser.add_argument(
        "--user-cache",
        action="store_true",
        help="the user's ROASTEDAVRO_CACHE_DIR instead of an empty one per run",
    )
    parser.add_argument("--out", type=Path, default=HERE / "results", help="output folder")
    args = parser.parse_args(argv)
    configs = [c.strip() for c in args.configs.split(",")]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        parser.error(f"unknown configurations: {', '.join(unknown)}")

    from benchmarks.run import cpu_and_commit

    _byte_compiled()
    cpu, commit = cpu_and_commit()
    env = {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "python": sys.version.split()[0],
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "git_commit": commit,
        "rounds": args.rounds,
        "records": args.records,
        "user_cache": args.user_cache,
    }
    runs: dict[str, list[dict]] = {c: [] for c in configs}
    expected = None
    with tempfile.TemporaryDirectory(prefix="roastedavro-memory-") as workdir:
        for number in range(args.rounds):
            shift = number % len(configs)
            for config in configs[shift:] + configs[:shift]:  # a rotating order
                result = run_once(config, args.records, args.user_cache, Path(workdir))
                if result["read"] != 3 * 2 * args.records:
                    raise RuntimeError(f"{config}: read {result['read']} records")
                if expected is None:
                    expected = result["sha256"]
                elif result["sha256"] != expected:
                    raise RuntimeError(f"{config} wrote other bytes than {configs[0]}")
                runs[config].append(result)
                print(
                    f"round {number + 1} {config:28s} import {result['import_ms']:6.1f} ms  "
                    f"after import {result['rss_import_kb'] / 1024:5.1f} MB  "
                    f"peak {result['rss_peak_kb'] / 1024:5.1f} MB  "
                    f"children {result['children_kb'] / 1024:5.1f} MB  {result['modules']}",
                    flush=True,
                )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "memory.json").write_text(json.dumps({"environment": env, "runs": runs}, indent=1))
    text = markdown(env, runs)
    (args.out / "memory.md").write_text(text)
    print(text)
    print(f"wrote {args.out / 'memory.md'}")
    return {"environment": env, "runs": runs}


if __name__ == "__main__":
    main()
