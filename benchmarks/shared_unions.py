"""Long unions generated once per module (called where they occur) against the
same unions written out in place, in one process.

    python -m benchmarks.shared_unions            # 15 interleaved repeats
    python -m benchmarks.shared_unions --quick    # 5
    python -m benchmarks.shared_unions --large path/to/large_schema.avsc

Writes benchmarks/results/shared_unions.json and shared_unions.md (``--out``
for another folder).

A union of two records or more, or of five branches or more, is generated
once per module (``roastedavro.avrogen``'s ``shared_union``). This measures
what the call costs where such unions occur: the benchmark's plain Avro cases
that have one (``event``, ``order``) and ``drawing``, a record using one
union of three records four times (a field, array items, map values, a
nested record's field). Both codecs of a case are compiled from their own
source (in place: the generator's ``shared_union`` answering None) and
loaded side by side; each must write fastavro's bytes and read fastavro's
values before it is timed. Timing is benchmarks/avro_codecs.py's
``measure_case``: GC off, loops calibrated to ~30 ms, repeats interleaved in
a rotating order, the median ns per datum.

``--large`` also generates (not compiles) a large schema both ways and
reports the source's size, and compiles the shared form once, reporting
Cython's and the C compiler's seconds and the peak RSS of the process tree.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import platform
import resource
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
if not __package__:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(HERE.parent))

import fastavro  # noqa: E402

from benchmarks.avro_codecs import measure_case  # noqa: E402
from benchmarks.run import cpu_and_commit, save_report  # noqa: E402
from benchmarks.avro_schemas import CASES  # noqa: E402
from benchmarks.contenders import Contender  # noqa: E402
from roastedavro import avrogen, compiler  # noqa: E402
from roastedavro.avro import load_schema, parse_schema  # noqa: E402
from roastedavro.flags import CompileFlags  # noqa: E402


def _record(name, *fields):
    return {
        "type": "record",
        "name": name,
        "fields": [{"name": field, "type": kind} for field, kind in fields],
    }


DRAWING = {
    "type": "record",
    "name": "Drawing",
    "fields": [
        {
            "name": "main",
            "type": [
                "null",
                _record("Circle", ("r", "double")),
                _record("Square", ("side", "double"), ("filled", "boolean")),
                _record("Label", ("text", "string"), ("size", "int")),
            ],
        },
        {"name": "others", "type": {"type": "array", "items": ["null", "Circle", "Square", "Label"]}},
        {"name": "named", "type": {"type": "map", "values": ["null", "Circle", "Square", "Label"]}},
        {"name": "layer", "type": _record("Layer", ("top", ["null", "Circle", "Square", "Label"]))},
    ],
}


def drawing_datums(count: int = 100) -> list:
    shapes = [None, {"r": 1.5}, {"side": 2.0, "filled": True}, {"text": "t", "size": 3}]
    return [
        {
            "main": shapes[n % 4],
            "others": [shapes[(n + k) % 4] for k in range(n % 5)],
            "named": {f"k{k}": shapes[(n * k) % 4] for k in range(n % 3)},
            "layer": {"top": shapes[(n + 1) % 4]},
        }
        for n in range(count)
    ]


@contextlib.contextmanager
def unions_in_place():
    """The generator writing every union where it occurs (as before sharing)."""
    original = avrogen._Generator.shared_union
    avrogen._Generator.shared_union = lambda self, union: None
    try:
        yield
    finally:
        avrogen._Generator.shared_union = original


def compiled(schema: dict, in_place: bool):
    """The compiled codec of ``schema``'s module, as AvroCodec builds it, and its source size."""
    flags = CompileFlags()
    model = parse_schema(schema)
    with unions_in_place() if in_place else contextlib.nullcontext():
        generated = avrogen.generate_avro_module(model)
    return compiler.load_codec(generated, flags, f"{model.fingerprint():016x}"), len(generated.source)


def fastavro_reference(schema: dict, datums: list) -> tuple[list[bytes], list]:
    parsed = fastavro.parse_schema(schema)
    messages = []
    for datum in datums:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, datum)
        messages.append(out.getvalue())
    return messages, [fastavro.schemaless_reader(io.BytesIO(m), parsed) for m in messages]


def run_case(name: str, schema: dict, datums: list, repeats: int) -> dict:
    messages, values = fastavro_reference(schema, datums)
    contenders, sizes = {}, {}
    for label, in_place in (("in place", True), ("shared", False)):
        codec, sizes[label] = compiled(schema, in_place)
        if [codec.dump(d) for d in datums] != messages:
            raise AssertionError(f"{name}, unions {label}: not fastavro's bytes")
        if [codec.load(m) for m in messages] != values:
            raise AssertionError(f"{name}, unions {label}: not fastavro's values")
        contenders[label] = Contender(label, codec.dump, datums, codec.load, messages)
    timings = measure_case(contenders, repeats, 30e6)
    return {
        "sizes": sizes,
        **{label: {op: round(t[op]["ns"], 1) for op in ("dump", "load")} for label, t in timings.items()},
    }


def large(path: Path) -> dict:
    model = load_schema(path)
    sizes = {}
    for label, in_place in (("in place", True), ("shared", False)):
        with unions_in_place() if in_place else contextlib.nullcontext():
            started = time.perf_counter()
            generated = avrogen.generate_avro_module(model)
            sizes[label] = {
                "chars": len(generated.source),
                "lines": generated.source.count("\n"),
                "bindings": len(generated.bindings),
                "generate_s": round(time.perf_counter() - started, 2),
            }
    # one compile of the shared form, in a child with an empty cache
    script = (
        "import json, sys, time; from roastedavro import compiler; "
        "from roastedavro.avro import load_schema; from roastedavro.codec import AvroCodec; "
        "t = time.perf_counter(); AvroCodec(load_schema(sys.argv[1]), compile='eager', "
        "build='here'); print(json.dumps({'total_s': time.perf_counter() - t, "
        "**compiler.last_timing}))"
    )
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        done = subprocess.run(
            [sys.executable, "-c", script, str(path)],
            capture_output=True,
            text=True,
            env={**__import__("os").environ, "ROASTEDAVRO_CACHE_DIR": cache},
        )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    build = json.loads(done.stdout.splitlines()[-1])
    build["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    return {
        "source": sizes,
        "build": {k: round(v, 2) if isinstance(v, float) else v for k, v in build.items()},
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 repeats instead of 15")
    parser.add_argument("--large", type=Path, help="a large .avsc to generate and compile")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    repeats = 5 if args.quick else 15
    cases = {name: (CASES[name].schema, CASES[name].datums()) for name in ("event", "order")}
    cases["drawing"] = (DRAWING, drawing_datums())
    results = {name: run_case(name, schema, datums, repeats) for name, (schema, datums) in cases.items()}
    commit = cpu_and_commit()[1] or "unknown"
    report = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "commit": commit,
        "repeats": repeats,
        "cases": results,
    }
    lines = [
        "# Long unions: generated once per module, or in place",
        "",
        f"{report['date']}, Python {report['python']}, commit {commit}, {repeats} interleaved "
        "repeats, median ns per datum (`python -m benchmarks.shared_unions`; its docstring: "
        "the method).",
        "",
        "| case | dump in place | dump shared | load in place | load shared | source in place "
        "| source shared |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, result in results.items():
        lines.append(
            f"| {name} | {result['in place']['dump']:,.0f} | {result['shared']['dump']:,.0f} "
            f"| {result['in place']['load']:,.0f} | {result['shared']['load']:,.0f} "
            f"| {result['sizes']['in place']:,} | {result['sizes']['shared']:,} |"
        )
    if args.large is not None:
        report["large"] = large(args.large)
        source, build = report["large"]["source"], report["large"]["build"]
        lines += [
            "",
            f"`{args.large.name}`: source in place {source['in place']['chars']:,} "
            f"characters ({source['in place']['lines']:,} lines, "
            f"{source['in place']['bindings']:,} bound constants), shared "
            f"{source['shared']['chars']:,} ({source['shared']['lines']:,} lines, "
            f"{source['shared']['bindings']:,}); the shared form built in "
            f"{build['total_s']} s (Cython {build.get('cython')} s, C compiler "
            f"{build.get('cc')} s), peak RSS {build['peak_rss_mb']:,} MB.",
        ]
    lines.append("")
    save_report(args.out, "shared_unions", report, lines)
    return report


if __name__ == "__main__":
    main()
