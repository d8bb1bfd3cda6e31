"""What validation and hooks cost on load, and a 1,000,000-iteration leak check with error paths.

    python -m benchmarks.validation            # full: timings + 1,000,000 leak iterations
    python -m benchmarks.validation --quick    # fewer repeats, 100,000 leak iterations

Writes benchmarks/results/validation.json and validation.md.

Timing. One validated order schema (field validators of every common kind,
an @validates method, a @validates_schema method and a post_load that builds
a dataclass) is loaded by, interleaved round-robin in one process:

- ``marshmallow+fastavro``: fastavro decodes, marshmallow's ``load`` validates
  and runs the hooks (what the compiled path replaces);
- ``roastedavro``: ``load_compiled`` with validation (the default);
- ``roastedavro validate=False``: ``CompileFlags(validate=False)``, for
  trusted input (post_load still runs);
- ``fastavro``: decoding alone, no validation or hooks (a floor, not a
  contender).

The same for the schema without hooks (field validators only), and the
error path: a record that fails one validator.

Leaks. Each iteration dumps and loads a valid record, loads a record that
fails validation (ValidationError), loads truncated bytes (DecodeError) and
dumps an object that cannot be written (ValidationError). RSS is sampled
through the whole run, tracemalloc over a shorter run after it.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import io
import json
import statistics
import time
import tracemalloc
from itertools import repeat
from pathlib import Path

import fastavro
from marshmallow import ValidationError, fields, post_load, validate, validates, validates_schema

from benchmarks.run import RESULTS, calibrate, current_rss_kib, environment, timed_loop
from roastedavro import CompiledSchema, CompileFlags, DecodeError


class FieldChecks(CompiledSchema):
    """Field validators only."""

    class Meta:
        avro_name = "ValidatedOrder"

    id = fields.Integer(validate=validate.Range(min=1))
    symbol = fields.String(validate=[validate.Length(min=1, max=12), validate.Regexp(r"^[A-Z.]+$")])
    side = fields.String(validate=validate.OneOf(["buy", "sell"]))
    qty = fields.Integer(validate=validate.Range(min=1, max=1_000_000))
    price = fields.Float(validate=validate.Range(min=0, min_inclusive=False))
    account = fields.Email()
    tags = fields.List(fields.String(validate=validate.Length(max=16)), validate=validate.Length(max=8))


@dataclasses.dataclass
class Order:
    id: int
    symbol: str
    side: str
    qty: int
    price: float
    account: str
    tags: list


class Hooked(FieldChecks):
    """Field validators, @validates, @validates_schema and post_load."""

    class Meta:
        avro_name = "ValidatedOrder"

    @validates("qty")
    def round_lot(self, value, **kwargs):
        if value % 10:
            raise ValidationError("qty must be a multiple of 10")

    @validates_schema
    def notional(self, data, **kwargs):
        if data["qty"] * data["price"] > 10_000_000:
            raise ValidationError("notional above 10,000,000")

    @post_load
    def make(self, data, **kwargs):
        return Order(**data)


RECORD = {
    "id": 42,
    "symbol": "BRK.B",
    "side": "buy",
    "qty": 300,
    "price": 412.5,
    "account": "desk7@example.com",
    "tags": ["algo", "eu"],
}
INVALID = {**RECORD, "side": "hold"}


def contenders(schema_class) -> dict:
    checked = schema_class().compile()
    trusted = schema_class().compile(CompileFlags(validate=False))
    plain = schema_class()
    parsed = fastavro.parse_schema(checked.avro_schema())
    source = io.BytesIO()

    def decode(data, source=source, parsed=parsed, read=fastavro.schemaless_reader):
        source.seek(0)
        source.write(data)
        source.truncate()
        source.seek(0)
        return read(source, parsed, None)

    def marshmallow_load(data, decode=decode, load=plain.load):
        return load(decode(data))

    reference = marshmallow_load(checked.dump_compiled(RECORD))
    for load in (checked.load_compiled, trusted.load_compiled):
        assert load(checked.dump_compiled(RECORD)) == reference
    return {
        "marshmallow+fastavro": marshmallow_load,
        "roastedavro": checked.load_compiled,
        "roastedavro validate=False": trusted.load_compiled,
        "fastavro (decode only)": decode,
    }


def error_contenders(schema_class) -> dict:
    checked = schema_class().compile()
    plain = schema_class()
    parsed = fastavro.parse_schema(checked.avro_schema())

    def marshmallow_load(data):
        try:
            plain.load(fastavro.schemaless_reader(io.BytesIO(data), parsed, None))
        except ValidationError as error:
            return error.messages

    def compiled_load(data):
        try:
            checked.load_compiled(data)
        except ValidationError as error:
            return error.messages

    data = checked.dump_compiled(INVALID)
    assert marshmallow_load(data) == compiled_load(data) == {"side": ["Must be one of: buy, sell."]}
    return {"marshmallow+fastavro": marshmallow_load, "roastedavro": compiled_load}


def measure(functions: dict, data: bytes, repeats: int, target_ns: float) -> dict:
    calls = {name: calibrate(fn, data, target_ns) for name, fn in functions.items()}
    samples: dict[str, list[float]] = {name: [] for name in functions}
    names = list(functions)
    gc.collect()
    for index in range(repeats):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(timed_loop(functions[name], data, calls[name]) / calls[name])
    return {
        name: {"ns": statistics.median(values), "min_ns": min(values), "max_ns": max(values)}
        for name, values in samples.items()
    }


def leak_iterations(schema, valid_data: bytes, invalid_data: bytes, n: int) -> None:
    truncated = valid_data[:-3]
    bad_object = {**RECORD, "qty": "many"}
    dump, load = schema.dump_compiled, schema.load_compiled
    for _ in repeat(None, n):
        load(dump(RECORD))
        try:
            load(invalid_data)
        except ValidationError:
            pass
        try:
            load(truncated)
        except DecodeError:
            pass
        try:
            dump(bad_object)
        except ValidationError:
            pass


def leak_check(iterations: int, traced_iterations: int, log) -> dict:
    schema = Hooked().compile()
    valid_data, invalid_data = schema.dump_compiled(RECORD), schema.dump_compiled(INVALID)
    leak_iterations(schema, valid_data, invalid_data, 10_000)
    gc.collect()
    base = current_rss_kib()
    step = max(iterations // 10, 1)
    rss = []
    started = time.perf_counter()
    for done in range(step, iterations + 1, step):
        leak_iterations(schema, valid_data, invalid_data, step)
        gc.collect()
        rss.append(
            {
                "iterations": done,
                "rss_kib": current_rss_kib(),
                "growth_kib": current_rss_kib() - base,
                "elapsed_s": round(time.perf_counter() - started, 1),
            }
        )
        log(
            f"  {done:>9,} iterations: RSS {rss[-1]['rss_kib'] / 1024:7.1f} MiB "
            f"({rss[-1]['growth_kib']:+,} KiB)"
        )
    tracemalloc.start()
    try:
        leak_iterations(schema, valid_data, invalid_data, 1_000)
        gc.collect()
        traced_base = tracemalloc.get_traced_memory()[0]
        leak_iterations(schema, valid_data, invalid_data, traced_iterations)
        gc.collect()
        traced_growth = tracemalloc.get_traced_memory()[0] - traced_base
    finally:
        tracemalloc.stop()
    log(f"  tracemalloc over {traced_iterations:,} more iterations: {traced_growth:+,} B")
    return {
        "iterations": iterations,
        "operations_per_iteration": 4,
        "rss_baseline_kib": base,
        "rss": rss,
        "traced_iterations": traced_iterations,
        "traced_growth_bytes": traced_growth,
        "flat": rss[-1]["growth_kib"] <= 1024 and traced_growth <= 65536,
    }


def markdown(report: dict) -> str:
    lines = [
        "# Validation and hooks on load",
        "",
        f"Python {report['environment']['python']}, {report['environment']['cpu']}. "
        "Median ns per load, contenders interleaved in one process.",
        "",
    ]
    for title, key in (
        ("Field validators, @validates, @validates_schema, post_load", "hooked"),
        ("Field validators only", "field_checks"),
        ("A record failing one validator (the error path)", "error_path"),
    ):
        timings = report[key]
        base = timings["marshmallow+fastavro"]["ns"]
        lines += [f"## {title}", "", "| | ns per load | vs marshmallow+fastavro |", "|---|---:|---:|"]
        for name, entry in timings.items():
            lines.append(f"| {name} | {entry['ns']:,.0f} | {base / entry['ns']:.1f}x |")
        lines.append("")
    leak = report.get("leaks")
    if leak:
        last = leak["rss"][-1]
        lines += [
            "## Leak check",
            "",
            f"{leak['iterations']:,} iterations, each a dump+load, a load failing validation, "
            f"a load of truncated bytes and a dump of an unwritable object: RSS "
            f"{last['growth_kib']:+,} KiB after warm-up; tracemalloc {leak['traced_growth_bytes']:+,} B "
            f"over {leak['traced_iterations']:,} more. Flat: {'yes' if leak['flat'] else 'NO'}.",
            "",
        ]
    return "\n".join(lines)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.validation", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--iterations", type=int, help="leak-check iterations (default 1,000,000; quick 100,000)"
    )
    parser.add_argument("--skip-leaks", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 15
    iterations = args.iterations or (100_000 if args.quick else 1_000_000)

    def log(message):
        print(message, flush=True)

    env = environment(argparse.Namespace(quick=args.quick, repeats=repeats, target_ms=30.0))
    report = {"environment": env}
    valid = Hooked().compile().dump_compiled(RECORD)
    invalid = Hooked().compile().dump_compiled(INVALID)
    for key, functions, data in (
        ("hooked", contenders(Hooked), valid),
        ("field_checks", contenders(FieldChecks), valid),
        ("error_path", error_contenders(Hooked), invalid),
    ):
        report[key] = measure(functions, data, repeats, 30e6)
        log(f"{key}: " + ", ".join(f"{name} {entry['ns']:,.0f} ns" for name, entry in report[key].items()))
    if not args.skip_leaks:
        log(f"leak check: {iterations:,} iterations with error paths ...")
        report["leaks"] = leak_check(iterations, max(iterations // 10, 10_000), log)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "validation.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    (args.out / "validation.md").write_text(markdown(report))
    log(f"wrote {args.out / 'validation.json'} and validation.md")
    return report


if __name__ == "__main__":
    main()
