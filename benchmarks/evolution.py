"""Schema evolution: reading old data with a newer reader schema, against fastavro.

    python -m benchmarks.evolution                    # full: 15 interleaved repeats
    python -m benchmarks.evolution --quick            # 3 repeats
    python -m benchmarks.evolution --cases event,order,skip_big_array
    python -m benchmarks.evolution --groups classic,realistic

Writes benchmarks/results/evolution.json and evolution.md.

The cases are those of benchmarks/avro_schemas.py (all groups by default)
whose root is a record with at least two fields. The data is fastavro's
``schemaless_writer`` output with the case's schema (the writer schema); the
reader schema is the writer's record without its last field and with two
added fields with defaults, ``added_note: ["null", "string"] = null`` and
``added_count: long = 0`` (renamed if the writer has a field of that name).
So every datum is resolved: one writer field skipped, two defaults filled in.

One more case, ``skip_big_array``: a writer record ``{id: long, history:
array<long>}`` with 1,000 items per array, read by a reader record with only
``id``: what skipping a large field costs, in time and in Python allocations
(tracemalloc, see ``allocations``).

Contenders, each reading the same messages:

- ``fastavro`` (the baseline): ``fastavro.schemaless_reader(fo, writer, reader)``,
  both schemas parsed once by ``fastavro.parse_schema``, from one BytesIO per
  message (rewound), as in benchmarks/avro_codecs.py;
- ``AvroCodec``: ``roastedavro.AvroCodec(reader, writer_schema=writer).load(data)``
  on the bytes;
- ``roastedavro.fastavro``: the drop-in, ``schemaless_reader(fo, writer, reader)``
  with both schemas parsed by its ``parse_schema``, on a BytesIO as fastavro.

Before timing, fastavro reads every message with both schemas (the reference
values); each contender must read every message to the same values with the
same Python types (``strict_difference``), else it is reported and not timed
on that case. Timing is benchmarks/avro_codecs.py's ``measure_case``: one
process, a loop of N passes over the batch calibrated to ~30 ms, GC off,
repeats interleaved round-robin in a rotating order, the median in ns per
datum; ratio = fastavro ns / contender ns; geometric means over the cases.
"""

from __future__ import annotations

import argparse
import copy
import gc
import io
import json
import os
import platform
import random
import sys
import time
import tracemalloc
from array import array
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
if not __package__:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(ROOT))

import fastavro  # noqa: E402

from benchmarks.avro_codecs import measure_case, ratios  # noqa: E402
from benchmarks.avro_schemas import GROUPS, AvroCase  # noqa: E402
from benchmarks.avro_schemas import cases as select_cases  # noqa: E402
from benchmarks.contenders import (  # noqa: E402
    Contender,
    _short,
    _sources,
    _stream_reader,
    fastavro_reference,
    strict_difference,
)
from benchmarks.run import cpu_and_commit, fmt_ns, fmt_x, geomean  # noqa: E402

BASELINE = "fastavro"
NAMES = ("fastavro", "AvroCodec", "roastedavro.fastavro")
NOT_TIMED_DUMP = "not measured: this benchmark reads only"
ADDED = (
    {"name": "added_note", "type": ["null", "string"], "default": None},
    {"name": "added_count", "type": "long", "default": 0},
)
SKIP_CASE = "skip_big_array"
SKIP_GROUP = "skip"


# -- the reader schemas -------------------------------------------------------------


def evolves(schema: Any) -> bool:
    """Whether the case's schema is a record with at least two fields."""
    return isinstance(schema, dict) and schema.get("type") == "record" and len(schema.get("fields", ())) >= 2


def evolved_reader(writer: dict) -> tuple[dict, dict]:
    """The reader record: the writer's fields but the last, then the two added fields
    (with a suffix if the writer has a field of that name); and what changed."""
    reader = copy.deepcopy(writer)
    dropped = reader["fields"].pop()
    taken = {field["name"] for field in writer["fields"]}
    added = []
    for field in ADDED:
        field = dict(field)
        base, suffix = field["name"], 2
        while field["name"] in taken:
            field["name"] = f"{base}_{suffix}"
            suffix += 1
        taken.add(field["name"])
        reader["fields"].append(field)
        added.append(field)
    return reader, {
        "dropped": dropped["name"],
        "added": [f["name"] for f in added],
        "defaults": {f["name"]: f["default"] for f in added},
    }


BIG = {
    "type": "record",
    "name": "Big",
    "namespace": "bench.evolution",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "history", "type": {"type": "array", "items": "long"}},
    ],
}
BIG_READER = {
    "type": "record",
    "name": "Big",
    "namespace": "bench.evolution",
    "fields": [
        {"name": "id", "type": "long"},
    ],
}
BIG_ITEMS = 1000


def _big(rng: random.Random) -> dict:
    # longs of 1 to 9 bytes as varints, mostly 4-5 (ids, timestamps in seconds, counters)
    bits = (6, 13, 20, 27, 31, 31, 31, 34, 41, 48, 62)
    return {
        "id": rng.randint(1, 10**12),
        "history": [rng.getrandbits(rng.choice(bits)) * rng.choice((1, -1)) for _ in range(BIG_ITEMS)],
    }


SKIP = AvroCase(
    SKIP_CASE,
    SKIP_GROUP,
    BIG,
    _big,
    sum(map(ord, SKIP_CASE)) * 7919,
    f"writer {{id: long, history: array<long>}} with {BIG_ITEMS:,} items, "
    "reader {id: long}: the array is skipped",
    batch=10,
)


# -- contenders -----------------------------------------------------------------------


def make_fastavro(writer: dict, reader: dict, messages: list[bytes]) -> Contender:
    parsed_writer, parsed_reader = fastavro.parse_schema(writer), fastavro.parse_schema(reader)
    read = fastavro.schemaless_reader
    return Contender(
        "fastavro",
        dump_excluded=NOT_TIMED_DUMP,
        load=_stream_reader(lambda source: read(source, parsed_writer, parsed_reader)),
        load_input=_sources(messages),
    )


def make_avrocodec(writer: dict, reader: dict, messages: list[bytes]) -> Contender:
    from roastedavro import AvroCodec

    codec = AvroCodec(reader, writer_schema=writer, compile="eager")
    return Contender("AvroCodec", dump_excluded=NOT_TIMED_DUMP, load=codec.load, load_input=list(messages))


def make_drop_in(writer: dict, reader: dict, messages: list[bytes]) -> Contender:
    # the drop-in, called as code written for fastavro calls it
    import roastedavro.fastavro as drop_in

    parsed_writer, parsed_reader = drop_in.parse_schema(writer), drop_in.parse_schema(reader)
    read = drop_in.schemaless_reader
    read(io.BytesIO(messages[0]), parsed_writer, parsed_reader)  # compiles (or loads) the codec
    return Contender(
        "roastedavro.fastavro",
        dump_excluded=NOT_TIMED_DUMP,
        load=_stream_reader(lambda source: read(source, parsed_writer, parsed_reader)),
        load_input=_sources(messages),
    )


FACTORIES = {"fastavro": make_fastavro, "AvroCodec": make_avrocodec, "roastedavro.fastavro": make_drop_in}


def check_loads(contender: Contender, values: list) -> str | None:
    """Why ``contender`` does not read every message to fastavro's value (None if it does)."""
    for index, (source, want) in enumerate(zip(contender.load_input, values)):
        try:
            got = contender.load(source)
        except Exception as error:  # noqa: BLE001 - report, don't crash
            return f"message {index}: load raised {_short(error)}"
        difference = strict_difference(got, want)
        if difference:
            return f"message {index}: value differs from fastavro's: {difference}"
    return None


def build(case: AvroCase, reader: dict, changes: dict) -> tuple[dict[str, Contender], dict]:
    """The messages, fastavro's resolved values and the checked contenders of one case."""
    datums = case.datums()
    messages, plain_values = fastavro_reference(case.schema, datums)
    parsed_writer, parsed_reader = fastavro.parse_schema(case.schema), fastavro.parse_schema(reader)
    values = [fastavro.schemaless_reader(io.BytesIO(m), parsed_writer, parsed_reader) for m in messages]
    # fastavro itself, against what resolution must give: the writer-only reading
    # without the dropped field, with the defaults of the added ones
    baseline_note = None
    reader_names = [field["name"] for field in reader["fields"]]
    for index, (plain, resolved) in enumerate(zip(plain_values, values)):
        expected = {
            name: plain[name] if name in plain else changes["defaults"][name] for name in reader_names
        }
        difference = strict_difference(resolved, expected)
        if difference:
            baseline_note = (
                f"message {index}: fastavro's resolved value differs from its "
                f"writer-only reading with the reader's fields: {difference}"
            )
            break
    contenders: dict[str, Contender] = {}
    for name in NAMES:
        started = time.perf_counter()
        try:
            contender = FACTORIES[name](case.schema, reader, messages)
        except Exception as error:  # noqa: BLE001 - report, don't crash
            contender = Contender(
                name, dump_excluded=NOT_TIMED_DUMP, load_excluded=f"setup failed: {_short(error)}"
            )
        contender.setup_s = time.perf_counter() - started
        if contender.load_excluded is None and name != BASELINE:
            contender.load_excluded = check_loads(contender, values)
        contenders[name] = contender
    return contenders, {"messages": messages, "values": values, "baseline_note": baseline_note}


# -- allocations ----------------------------------------------------------------------


def _traced_calls(load, inputs: list, calls: int) -> tuple[array, int]:
    """Per call, tracemalloc's peak during the call over the traced memory before it;
    and the growth of traced memory over all the calls (every result kept alive)."""
    results: list = [None] * calls  # allocated before tracing starts:
    peaks = array("q", bytes(8 * calls))  # storing into them allocates nothing
    # CPython keeps up to 80 freed dicts and lists for reuse; take them, so that every
    # result dict or list below is a new allocation
    hoard = [{"k": [index]} for index in range(200)]
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    get, reset = tracemalloc.get_traced_memory, tracemalloc.reset_peak
    size = len(inputs)
    tracemalloc.start()
    try:
        start_current = get()[0]
        for index in range(calls):
            item = inputs[index % size]
            before = get()[0]
            reset()
            results[index] = load(item)
            peaks[index] = get()[1] - before
        growth = get()[0] - start_current
    finally:
        tracemalloc.stop()
        if enabled:
            gc.enable()
    del hoard, results
    return peaks, growth


def allocations(load, inputs: list, calls: int) -> dict:
    """Python memory per ``load`` call, by tracemalloc, over ``calls`` calls (cycling
    through ``inputs``) after a warm-up, every result kept alive, the GC off.

    ``peak_bytes``: the mean over the calls of (tracemalloc's peak during the call,
    reset just before it, - the traced memory just before it): the most extra memory
    held at once during a call, the result included. ``retained_bytes``: the growth of
    traced memory over all the calls / calls: what a call's result holds.
    ``transient_bytes``: peak - retained, memory taken during a call and freed before
    it returns (e.g. a list of an array's ints that is then dropped). The same loop
    around a function that allocates nothing gives the method's own figures
    (``overhead``: the int holding the memory before the call), subtracted.
    """
    for item in inputs * 3:
        load(item)
    overhead_peaks, overhead_growth = _traced_calls(_nothing, inputs, calls)
    peaks, growth = _traced_calls(load, inputs, calls)
    overhead_peak = sum(overhead_peaks) / calls
    peak = sum(peaks) / calls - overhead_peak
    retained = (growth - overhead_growth) / calls
    return {
        "calls": calls,
        "peak_bytes": round(peak, 1),
        "max_peak_bytes": max(peaks) - min(overhead_peaks),
        "retained_bytes": round(retained, 1),
        "transient_bytes": round(peak - retained, 1),
        "overhead": {"peak_bytes": overhead_peak, "growth_bytes": overhead_growth},
    }


def _nothing(item: Any) -> None:
    return None


def allocation_table(
    contenders: dict[str, Contender], writer: dict, messages: list[bytes], calls: int
) -> dict:
    """``allocations`` of each checked contender, and two controls that build the array:
    fastavro and AvroCodec reading the same messages with the writer schema only."""
    from roastedavro import AvroCodec

    table = {}
    for name, contender in contenders.items():
        if contender.load_excluded is None:
            table[name] = allocations(contender.load, contender.load_input, calls)
    parsed = fastavro.parse_schema(writer)
    read = fastavro.schemaless_reader
    table["control: fastavro, writer schema only"] = allocations(
        _stream_reader(lambda source: read(source, parsed, None)), _sources(messages), calls
    )
    table["control: AvroCodec, writer schema only"] = allocations(
        AvroCodec(writer, compile="eager").load, list(messages), calls
    )
    return table


# -- environment ------------------------------------------------------------------------


def environment(args) -> dict:
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
        "contenders": list(NAMES),
        "versions": {package: installed(package) for package in ("roastedavro", "fastavro", "Cython")},
        "repeats": args.repeats,
        "target_loop_ms": args.target_ms,
        "allocation_calls": args.alloc_calls,
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


# -- summary and output ------------------------------------------------------------------


def summarize(results: dict) -> dict:
    """Geometric means of each contender's ratio: over all the schema cases, over
    classic+realistic (benchmarks.avro_codecs' default set), per group, and the skip case."""
    evolved = [n for n, r in results.items() if r.get("group") != SKIP_GROUP]
    groups: dict[str, list[str]] = {"all": evolved}
    default = [n for n in evolved if results[n]["group"] in ("classic", "realistic")]
    if default and len(default) < len(evolved):
        groups["classic+realistic"] = default
    for name in evolved:
        groups.setdefault(results[name]["group"], []).append(name)
    skipped = [n for n, r in results.items() if r.get("group") == SKIP_GROUP]
    if skipped:
        groups[SKIP_GROUP] = skipped
    summary = {}
    for group, names in groups.items():
        entry: dict[str, Any] = {"cases": names}
        for contender in NAMES:
            values = [
                results[n]["ratio"][contender] for n in names if contender in results[n].get("ratio", {})
            ]
            entry[contender] = {"geomean_ratio": geomean(values), "cases": len(values)}
        summary[group] = entry
    return summary


def markdown(report: dict) -> str:
    env, results, summary = report["environment"], report["cases"], report["summary"]
    shown = [n for n in NAMES if n != BASELINE]
    lines = [
        "# Schema evolution: reading with a newer reader schema, against fastavro",
        "",
        f"{env['date']}, {env['mode']} mode ({env['repeats']} interleaved repeats, "
        f"~{env['target_loop_ms']} ms per timed loop, median). Python {env['python']}, "
        f"{env['cpu']} ({env['cpus']} CPUs), {env['platform']}. roastedavro {env['git_commit']}.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in env["versions"].items()) + ".",
        f"Load average (1, 5, 15 min) at start {env.get('loadavg_at_start')}, at end "
        f"{env.get('loadavg_at_end')}: the machine is shared, so absolute ns move between "
        "runs; repeats are interleaved, so ratios move less.",
        "",
        f"Regenerate: `python -m benchmarks.evolution` (full) or `--quick`. The data of each "
        "case (benchmarks/avro_schemas.py, every record with at least two fields) is written "
        "by fastavro with the case's schema; it is read with a reader schema that drops the "
        'writer\'s last field and adds `added_note: ["null", "string"] = null` and '
        "`added_count: long = 0`. `skip_big_array`: a writer `{id: long, history: "
        f"array<long>}}` ({BIG_ITEMS:,} items) read by a reader `{{id: long}}`. ns per datum "
        "(a timed call goes over a batch of different datums); ratio = fastavro ns / "
        "contender ns (above 1: faster than fastavro). n/a: not timed, see Checks.",
        "",
        "Contenders: fastavro `schemaless_reader(BytesIO, parsed_writer, parsed_reader)` "
        "(both parsed once); AvroCodec `AvroCodec(reader, writer_schema=writer).load(bytes)`; "
        "roastedavro.fastavro `schemaless_reader(BytesIO, writer, reader)` with both schemas "
        "parsed by its `parse_schema`. The BytesIO readers read from one BytesIO per message, "
        "rewound per call.",
        "",
        "## Summary: geometric mean of the ratio over fastavro",
        "",
        "| cases | " + " | ".join(shown) + " |",
        "| --- | " + " | ".join("---:" for _ in shown) + " |",
    ]
    for group, entry in summary.items():
        cells = []
        for name in shown:
            per = entry[name]
            partial = "" if per["cases"] in (0, len(entry["cases"])) else f" ({per['cases']})"
            cells.append(fmt_x(per["geomean_ratio"]) + partial)
        label = "all schema cases" if group == "all" else group
        lines.append(f"| {label} ({len(entry['cases'])}) | " + " | ".join(cells) + " |")
    lines += [
        "",
        "A number in parentheses after a geometric mean: the cases it covers, when "
        "fewer than the group (the rest were n/a). `skip` is not part of `all`.",
        "",
        "## Load with resolution: ns per datum (ratio over fastavro)",
        "",
        "| case | group | datums | bytes | dropped | " + " | ".join(NAMES) + " |",
        "| --- | --- | ---: | ---: | --- | " + " | ".join("---:" for _ in NAMES) + " |",
    ]
    for case_name, result in results.items():
        if "timings" not in result:
            lines.append(
                f"| {case_name} | {result.get('group', '')} | | | | "
                + " | ".join("error" for _ in NAMES)
                + " |"
            )
            continue
        cells = []
        for name in NAMES:
            timing = result["timings"].get(name, {}).get("load")
            if timing is None:
                cells.append("n/a")
            elif name == BASELINE:
                cells.append(fmt_ns(timing["ns"]))
            else:
                cells.append(f"{fmt_ns(timing['ns'])} ({fmt_x(result['ratio'][name])})")
        lines.append(
            f"| {case_name} | {result['group']} | {result['datums']} | "
            f"{result['mean_bytes']:,.0f} | `{result['changes']['dropped']}` | " + " | ".join(cells) + " |"
        )
    lines.append("")

    skip = results.get(SKIP_CASE, {})
    if skip.get("allocations"):
        lines += [
            f"## {SKIP_CASE}: Python memory per call",
            "",
            "Measured with tracemalloc (the GC off, after a warm-up, every result kept "
            f"alive), over {env['allocation_calls']:,} calls cycling through the "
            f"{skip['datums']} messages. *peak*: the mean over the calls of (tracemalloc's "
            "peak during the call, reset just before it, - the traced memory just before "
            "it): the most extra memory held at once during a call, its result included. "
            "*retained*: growth of traced memory over all the calls / calls: what the "
            "result holds. *transient*: peak - retained, memory taken during the call and "
            "freed before it returns (a list of the 1,000 ints, had it been built and "
            "dropped, would count here). tracemalloc sees live memory only: an object "
            "freed before the next one of its size is allocated reuses the same block, so "
            "a per-item temporary counts once, not 1,000 times. The two controls read the "
            "same messages with the writer schema only, building the array (what the "
            "method shows when the 1,000 ints are built). Before tracing, 200 dicts and "
            "lists are taken (and kept) so that CPython's free lists of dicts and lists are "
            "empty and every result is a new allocation; the same loop around a function "
            "that allocates nothing gives the method's own bytes, subtracted. For scale, "
            f"`sys.getsizeof` of a result dict and its `id` int: {skip.get('result_size')} "
            "bytes.",
            "",
            "| reader | peak bytes | retained bytes | transient bytes | largest peak |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for name, numbers in skip["allocations"].items():
            lines.append(
                f"| {name} | {numbers['peak_bytes']:,.0f} | "
                f"{numbers['retained_bytes']:,.0f} | {numbers['transient_bytes']:,.0f} "
                f"| {numbers['max_peak_bytes']:,} |"
            )
        lines.append("")

    lines += [
        "## Setup",
        "",
        "Seconds to set up each contender in the benchmark process (parsing; AvroCodec "
        "and roastedavro.fastavro also compile the resolving codec for the pair, or load "
        "it from the on-disk cache, ROASTEDAVRO_CACHE_DIR; the drop-in's setup includes "
        "one read).",
        "",
        "| case | added | " + " | ".join(NAMES) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in NAMES) + " |",
    ]
    for case_name, result in results.items():
        setup = result.get("setup_s", {})
        added = ", ".join(f"`{n}`" for n in result.get("changes", {}).get("added", []))
        lines.append(
            f"| {case_name} | {added} | "
            + " | ".join(f"{setup[n]:.2f}" if setup.get(n) is not None else "" for n in NAMES)
            + " |"
        )
    lines.append("")

    lines += [
        "## Checks",
        "",
        "Before timing, fastavro reads every message with the writer and reader schemas "
        "(the reference values). Each contender must read every message to the same "
        "values with the same Python types (a `str` is not a `UUID`, `1` is not `True`, "
        "`Decimal('1.50')` is not `Decimal('1.5')`), else it is not timed on that case. "
        "fastavro's resolved values are also checked against its writer-only reading "
        "restricted to the reader's fields, with the defaults of the added fields.",
        "",
    ]
    notes = []
    for case_name, result in results.items():
        if "error" in result:
            notes.append(f"- **{case_name}**: {result['error']}")
        if result.get("baseline_note"):
            notes.append(f"- {case_name} / fastavro: {result['baseline_note']}")
        for name, reason in result.get("checks", {}).items():
            if reason:
                notes.append(f"- {case_name} / {name}: n/a, {reason}")
    lines += notes or ["Every contender reads every message of every case to fastavro's values."]
    if report.get("not_applicable"):
        lines += [
            "",
            "Not run (root not a record of at least two fields): "
            + ", ".join(report["not_applicable"])
            + ".",
        ]
    lines.append("")
    return "\n".join(lines)


# -- main ------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.evolution", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 15")
    parser.add_argument("--cases", help=f"comma-separated case names ({SKIP_CASE} included)")
    parser.add_argument(
        "--groups",
        help="comma-separated groups of benchmarks/avro_schemas.py: "
        f"{', '.join(GROUPS)} (default: all; {SKIP_CASE} always runs unless "
        "--cases leaves it out)",
    )
    parser.add_argument("--repeats", type=int, help="interleaved repeats (default 15, quick 3)")
    parser.add_argument(
        "--target-ms", type=float, default=30.0, help="target duration of one timed loop (default 30 ms)"
    )
    parser.add_argument(
        "--alloc-calls",
        type=int,
        default=1000,
        help=f"calls per contender for the tracemalloc figures of {SKIP_CASE}",
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

    if args.cases:
        wanted = args.cases.split(",")
        schema_names = [n for n in wanted if n != SKIP_CASE]
        selected = select_cases(schema_names) if schema_names else []
        run_skip = SKIP_CASE in wanted
    else:
        selected = select_cases(None, args.groups.split(",") if args.groups else ["all"])
        run_skip = True
    not_applicable = [c.name for c in selected if not evolves(c.schema)]
    selected = [c for c in selected if evolves(c.schema)]
    env = environment(args)
    log(
        f"schema evolution: {env['mode']} mode, {len(selected) + run_skip} cases, "
        f"{args.repeats} repeats, {', '.join(NAMES)}; Python {env['python']}, {env['cpu']}"
    )
    if not_applicable:
        log(f"not run (root not a record of >= 2 fields): {', '.join(not_applicable)}")
    target_ns = args.target_ms * 1e6

    plan = [(case, *evolved_reader(case.schema)) for case in selected]
    if run_skip:
        plan.append((SKIP, BIG_READER, {"dropped": "history", "added": [], "defaults": {}}))
    results: dict[str, dict] = {}
    for case, reader, changes in plan:
        entry: dict[str, Any] = {
            "group": case.group,
            "description": case.description,
            "changes": changes,
            "reader_schema": reader,
        }
        results[case.name] = entry
        case_started = time.perf_counter()
        try:
            contenders, reference = build(case, reader, changes)
        except Exception as error:  # noqa: BLE001 - report the case, continue with the others
            entry["error"] = f"fastavro reference failed: {_short(error)}"
            log(f"{case.name:18s} ERROR {entry['error']}")
            continue
        messages = reference["messages"]
        entry["datums"] = len(messages)
        entry["mean_bytes"] = sum(map(len, messages)) / len(messages)
        entry["baseline_note"] = reference["baseline_note"]
        entry["setup_s"] = {n: c.setup_s for n, c in contenders.items()}
        entry["checks"] = {n: c.load_excluded for n, c in contenders.items()}
        timings = measure_case(contenders, args.repeats, target_ns)
        entry["timings"] = timings
        entry["ratio"] = ratios(timings, "load")
        if case.name == SKIP_CASE:
            entry["allocations"] = allocation_table(contenders, case.schema, messages, args.alloc_calls)
            first = reference["values"][0]
            entry["result_size"] = sys.getsizeof(first) + sum(map(sys.getsizeof, first.values()))
        base = timings.get(BASELINE, {}).get("load", {}).get("ns")
        row = " ".join(f"{n}={fmt_x(r)}" for n, r in entry["ratio"].items() if n != BASELINE)
        excluded = [n for n, reason in entry["checks"].items() if reason]
        log(
            f"{case.name:18s} fastavro {fmt_ns(base)} ns, {row}"
            f"  [{time.perf_counter() - case_started:.0f} s]"
            + (f"  n/a: {', '.join(excluded)}" if excluded else "")
            + ("  (fastavro baseline note)" if reference["baseline_note"] else "")
        )
        for name, numbers in entry.get("allocations", {}).items():
            log(
                f"  {name:40s} peak {numbers['peak_bytes']:8,.0f} B/call, retained "
                f"{numbers['retained_bytes']:8,.0f} B/call, transient "
                f"{numbers['transient_bytes']:8,.0f} B/call"
            )

    env["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report: dict[str, Any] = {
        "environment": env,
        "cases": results,
        "summary": summarize(results),
        "not_applicable": not_applicable,
    }
    report["elapsed_s"] = round(time.perf_counter() - started_all, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "evolution.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    (args.out / "evolution.md").write_text(markdown(report))
    for group, entry in report["summary"].items():
        log(
            f"geomean ratio over fastavro ({group}, {len(entry['cases'])} cases): "
            + " ".join(f"{n}={fmt_x(entry[n]['geomean_ratio'])}" for n in NAMES if n != BASELINE)
        )
    log(f"wrote {args.out / 'evolution.json'} and evolution.md in {report['elapsed_s']:.0f} s")
    return report


if __name__ == "__main__":
    main()
