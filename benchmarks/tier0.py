"""Tier 0 (roastedavro._tier0.Interpreter, no compiler involved) against fastavro,
the compiled AvroCodec, cavro and msgspec, on the plain Avro cases of
benchmarks/avro_schemas.py.

    python -m benchmarks.tier0                      # classic and realistic cases, 7 repeats
    python -m benchmarks.tier0 --repeats 5 --target-ms 10
    python -m benchmarks.tier0 --cases event,trade --contenders "tier 0,cavro"
    python -m benchmarks.tier0 --contenders "tier 0,AvroCodec never,AvroCodec"

Writes benchmarks/results/tier0.md (``--out`` for another folder).

Contenders:

- ``tier 0``: ``Interpreter(parse_schema(schema))``'s ``dump``/``load``;
- ``AvroCodec never`` (not run by default): ``AvroCodec(schema, compile="never")``,
  tier 0 behind the codec a user holds;
- ``AvroCodec``: ``AvroCodec(schema, compile="eager")``, the compiled codec (tier 1);
- ``cavro``: cavro's ``Schema(schema, record_decodes_to_dict=True)``
  ``.binary_encode``/``.binary_decode``, its other options at their defaults
  (logical types on, UUIDs as ``UUID``);
- ``msgspec``: MessagePack with types made from the Avro schema (records as
  ``Struct``s, tagged where a union holds two records; enums as ``Enum``s;
  ``UUID``, ``Decimal``, ``datetime``, ``date``, ``time``; fixed as ``bytes``),
  for scale: it is not Avro, so its bytes are its own and it is checked by a
  round trip (each datum converted to its Struct form, encoded, decoded back
  equal) instead of against fastavro;
- ``fastavro``: ``parse_schema`` once, ``schemaless_writer`` into a reused
  ``BytesIO``, ``schemaless_reader`` from one ``BytesIO`` per message.

Method as benchmarks/avro_codecs.py (its timing functions): one process, every
Avro contender checked against fastavro first (bytes equal to fastavro's for
every datum, values equal to fastavro's with the same Python types; a direction
that differs is reported and not timed), a timed loop is N passes over the
case's batch of datums with the GC off, repeats interleaved round-robin, the
median in ns per datum. Ratios are fastavro's ns over the contender's (above 1
is faster than fastavro), with their geometric mean over the cases.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import enum
import os
import sys
import time
import typing
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
if not __package__:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(HERE.parent))

from benchmarks import contenders as contenders_module  # noqa: E402
from benchmarks.avro_codecs import OPS, measure_case, ratios  # noqa: E402
from benchmarks.avro_schemas import cases as select_cases  # noqa: E402
from benchmarks.run import cpu_and_commit, fmt_ns, fmt_x, geomean  # noqa: E402

TIER0 = "tier 0"
NEVER = "AvroCodec never"
BASELINE = "fastavro"
ALL_NAMES = (TIER0, NEVER, "AvroCodec", "cavro", "msgspec", BASELINE)
DEFAULT_NAMES = (TIER0, "AvroCodec", "cavro", "msgspec", BASELINE)
#: the issue's targets for tier 0 (geometric mean over the plain Avro cases)
TARGET = {"dump": 10.0, "load": 5.0}


# -- contenders -------------------------------------------------------------------------


def make_tier0(case, datums, messages):
    from roastedavro._tier0 import Interpreter
    from roastedavro.avro import parse_schema

    interpreter = Interpreter(parse_schema(case.schema))
    return contenders_module.Contender(TIER0, interpreter.dump, datums, interpreter.load, messages)


def make_avrocodec_never(case, datums, messages):
    from roastedavro import AvroCodec

    codec = AvroCodec(case.schema, compile="never")
    return contenders_module.Contender(NEVER, codec.dump, datums, codec.load, messages)


def make_cavro(case, datums, messages):
    import cavro

    schema = cavro.Schema(case.schema, record_decodes_to_dict=True)
    return contenders_module.Contender("cavro", schema.binary_encode, datums, schema.binary_decode, messages)


class MsgspecTypes:
    """msgspec types for an Avro schema, and the conversion of a datum in
    fastavro's conventions to the values of those types."""

    def __init__(self, schema) -> None:
        self.named: dict[str, typing.Any] = {}  # full and short name -> node
        self.full: dict[str, str] = {}  # full and short name -> full name
        self.types: dict[str, typing.Any] = {}  # full name -> msgspec type
        self.tagged: set[str] = set()  # records in a union with another record
        self._scan(schema, None)
        self.root = self.type_of(schema, None)

    # the names, and which records need a tag
    def _scan(self, node, namespace) -> None:
        if isinstance(node, list):
            records = [self._resolve(b, namespace) for b in node]
            records = [b for b in records if isinstance(b, dict) and b.get("type") == "record"]
            if len(records) > 1:
                self.tagged.update(self._fullname(r, namespace) for r in records)
            for branch in node:
                self._scan(branch, namespace)
        elif isinstance(node, dict):
            kind = node.get("type")
            if kind in ("record", "enum", "fixed"):
                full = self._fullname(node, namespace)
                for key in (full, full.rsplit(".", 1)[-1]):
                    self.named[key], self.full[key] = node, full
                namespace = full.rpartition(".")[0] or None
            if kind == "record":
                for field in node["fields"]:
                    self._scan(field["type"], namespace)
            elif kind == "array":
                self._scan(node["items"], namespace)
            elif kind == "map":
                self._scan(node["values"], namespace)
            elif isinstance(kind, (dict, list)):
                self._scan(kind, namespace)

    @staticmethod
    def _fullname(node: dict, namespace) -> str:
        name = node["name"]
        if "." in name:
            return name
        space = node.get("namespace", namespace)
        return f"{space}.{name}" if space else name

    def _resolve(self, node, namespace):
        if isinstance(node, str) and node in self.named:
            return self.named[node]
        if isinstance(node, dict) and isinstance(node.get("type"), (dict, list)):
            return self._resolve(node["type"], namespace)
        return node

    def type_of(self, node, namespace):
        if isinstance(node, list):
            return typing.Union[tuple(self.type_of(b, namespace) for b in node)]
        if isinstance(node, str):
            if node in self.named:
                return self.types[self.full[node]]
            node = {"type": node}
        kind, logical = node["type"], node.get("logicalType")
        if isinstance(kind, (dict, list)):
            return self.type_of(kind, namespace)
        if logical == "decimal":
            return decimal.Decimal
        if logical == "uuid":
            return uuid.UUID
        if logical == "date":
            return datetime.date
        if logical in ("time-millis", "time-micros"):
            return datetime.time
        if logical in ("timestamp-millis", "timestamp-micros"):
            return datetime.datetime
        simple = {
            "null": type(None),
            "boolean": bool,
            "int": int,
            "long": int,
            "float": float,
            "double": float,
            "string": str,
            "bytes": bytes,
        }
        if kind in simple:
            return simple[kind]
        if kind == "array":
            return list[self.type_of(node["items"], namespace)]
        if kind == "map":
            return dict[str, self.type_of(node["values"], namespace)]
        full = self._fullname(node, namespace)
        short = full.rsplit(".", 1)[-1]
        if kind == "fixed":
            self.types[full] = bytes
        elif kind == "enum":
            self.types[full] = enum.Enum(short, {s: s for s in node["symbols"]})
        elif kind == "record":
            import msgspec

            inner = full.rpartition(".")[0] or None
            fields = [(f["name"], self.type_of(f["type"], inner)) for f in node["fields"]]
            self.types[full] = msgspec.defstruct(short, fields, tag=short if full in self.tagged else None)
        else:
            raise ValueError(f"no msgspec type for {node!r}")
        return self.types[full]

    def value(self, node, datum, namespace=None):
        if isinstance(node, list):
            return self.value(self._branch(node, datum, namespace), datum, namespace)
        node = self._resolve(node, namespace)
        if isinstance(node, str) or not isinstance(node.get("type"), str):
            return datum
        kind = node["type"]
        if kind == "array":
            return [self.value(node["items"], item, namespace) for item in datum]
        if kind == "map":
            return {key: self.value(node["values"], item, namespace) for key, item in datum.items()}
        if kind in ("enum", "record"):
            full = self.full.get(self._fullname(node, namespace)) or self.full[node["name"]]
            if kind == "enum":
                return self.types[full][datum]
            inner = full.rpartition(".")[0] or None
            return self.types[full](
                **{f["name"]: self.value(f["type"], datum[f["name"]], inner) for f in node["fields"]}
            )
        return datum

    def _branch(self, union: list, datum, namespace):
        """The branch fastavro writes ``datum`` in, for the cases here: by
        Python type, and a dict in the record whose fields match its keys best."""
        best, best_score = None, -1
        for branch in union:
            node = self._resolve(branch, namespace)
            kind = node if isinstance(node, str) else node["type"]
            logical = None if isinstance(node, str) else node.get("logicalType")
            if datum is None:
                score = 1 if kind == "null" else -1
            elif isinstance(datum, dict):
                if kind == "record":
                    names = {f["name"] for f in node["fields"]}
                    score = 1 + len(names & set(datum)) - len(set(datum) - names)
                else:
                    score = 0 if kind == "map" else -1
            else:
                wanted = {
                    "boolean": bool,
                    "int": int,
                    "long": int,
                    "float": float,
                    "double": float,
                    "string": str,
                    "bytes": bytes,
                    "enum": str,
                    "fixed": bytes,
                    "array": list,
                }.get(kind)
                if logical == "uuid":
                    wanted = uuid.UUID
                elif logical == "decimal":
                    wanted = decimal.Decimal
                elif logical == "date":
                    wanted = datetime.date
                elif logical in ("time-millis", "time-micros"):
                    wanted = datetime.time
                elif logical in ("timestamp-millis", "timestamp-micros"):
                    wanted = datetime.datetime
                matches = (
                    wanted is not None
                    and isinstance(datum, wanted)
                    and not (wanted is int and isinstance(datum, bool))
                )
                score = 1 if matches else -1
            if score > best_score:
                best, best_score = branch, score
        return best


def make_msgspec(case, datums):
    """msgspec, checked by a round trip (its bytes are MessagePack, not Avro)."""
    import msgspec

    contender = contenders_module.Contender("msgspec")
    try:
        types = MsgspecTypes(case.schema)
        values = [types.value(case.schema, datum) for datum in datums]
        encoder = msgspec.msgpack.Encoder()
        decoder = msgspec.msgpack.Decoder(types.root)
        encoded = [encoder.encode(value) for value in values]
    except Exception as error:  # noqa: BLE001 - report, don't crash
        reason = f"setup failed: {contenders_module._short(error)}"
        contender.dump_excluded = contender.load_excluded = reason
        return contender
    contender.dump, contender.dump_input = encoder.encode, values
    contender.load, contender.load_input = decoder.decode, encoded
    for index, (value, message) in enumerate(zip(values, encoded)):
        try:
            back = decoder.decode(message)
        except Exception as error:  # noqa: BLE001
            contender.load_excluded = f"message {index}: decode raised {contenders_module._short(error)}"
            break
        if back != value:
            contender.load_excluded = f"message {index}: the round trip differs: {back!r}"[:300]
            break
    contender.notes.append(f"MessagePack, {sum(map(len, encoded)) / len(encoded):.1f} bytes per datum")
    return contender


FACTORIES = {TIER0: make_tier0, NEVER: make_avrocodec_never, "cavro": make_cavro}


def ratios_of_fastest(timings: dict, op: str) -> dict[str, float]:
    """As avro_codecs.ratios, on each contender's fastest repeat (min ns): on a
    shared machine other work only adds time, so this moves less between runs."""
    base = timings.get(BASELINE, {}).get(op)
    if not base:
        return {}
    return {name: base["min_ns"] / ops[op]["min_ns"] for name, ops in timings.items() if op in ops}


# -- report -----------------------------------------------------------------------------


def summarize(results: dict, names: tuple[str, ...], key: str = "ratio") -> dict:
    groups: dict[str, list[str]] = {}
    for case_name, result in results.items():
        groups.setdefault(result["group"], []).append(case_name)
    groups["all"] = list(results)
    summary = {}
    for group, case_names in groups.items():
        entry: dict = {"cases": case_names}
        for op in OPS:
            entry[op] = {}
            for name in names:
                values = [
                    results[c][key][op][name]
                    for c in case_names
                    if name in results[c].get(key, {}).get(op, {})
                ]
                entry[op][name] = {"geomean_ratio": geomean(values), "cases": len(values)}
        summary[group] = entry
    return summary


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("roastedavro", "fastavro", "cavro", "msgspec", "Cython"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = None
    return found


def summary_table(summary: dict, shown: list[str]) -> list[str]:
    lines = [
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
    return lines + [""]


def markdown(report: dict, names: tuple[str, ...]) -> str:
    env, results, summary = report["environment"], report["cases"], report["summary"]
    shown = [n for n in names if n != BASELINE]
    lines = [
        "# Tier 0 against fastavro, the compiled AvroCodec, cavro and msgspec",
        "",
        f"{env['date']}, {env['repeats']} interleaved repeats, ~{env['target_loop_ms']} ms per "
        f"timed loop, median. Python {env['python']}, {env['cpu']} ({env['cpus']} CPUs). "
        f"roastedavro {env['git_commit']}.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in env["versions"].items()) + ".",
        f"Load average (1, 5, 15 min) at start {env['loadavg_at_start']}, at end "
        f"{env['loadavg_at_end']}: the machine is shared, so absolute ns move between runs; "
        "repeats are interleaved, so ratios move less.",
        "",
        f"Regenerate: `python -m benchmarks.tier0 --repeats {env['repeats']}"
        + (f" --target-ms {env['target_loop_ms']:g}" if env["target_loop_ms"] != 20 else "")
        + "`. Datums are dicts in "
        "fastavro's conventions (benchmarks/avro_schemas.py); every case times a batch of "
        "different datums and reports ns per datum. Ratio = fastavro ns / contender ns (above 1: "
        "faster than fastavro). n/a: not timed, see Checks. The targets for tier 0 are "
        f"{TARGET['dump']:g}× fastavro on dump and {TARGET['load']:g}× on load (geometric mean "
        "over the plain Avro cases).",
        "",
        "## Summary: geometric mean of the ratio over fastavro",
        "",
    ]
    lines += summary_table(summary, shown)
    lines += [
        "A number in parentheses after a geometric mean: the cases it covers, when "
        "fewer than the group (the rest were n/a).",
        "",
        "The same on each contender's fastest repeat (min ns instead of the median; on a "
        "shared machine other work only adds time, so this moves less between runs):",
        "",
    ]
    lines += summary_table(report["summary_min"], shown)
    for op in OPS:
        lines += [
            f"## {op}: ns per datum (ratio over fastavro)",
            "",
            "| case | datums | " + " | ".join(names) + " |",
            "| --- | ---: | " + " | ".join("---:" for _ in names) + " |",
        ]
        for case_name, result in results.items():
            cells = []
            for name in names:
                timing = result["timings"].get(name, {}).get(op)
                if timing is None:
                    cells.append("n/a")
                elif name == BASELINE:
                    cells.append(fmt_ns(timing["ns"]))
                else:
                    cells.append(f"{fmt_ns(timing['ns'])} ({fmt_x(result['ratio'][op][name])})")
            lines.append(f"| {case_name} | {result['datums']} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += [
        "## Checks",
        "",
        "Before timing, every datum is written by fastavro (the reference bytes) and read "
        "back by fastavro (the reference values). Each Avro contender must write the same "
        "bytes and read each message to the same values with the same Python types (a "
        "`str` is not a `UUID`, `Decimal('1.50')` is not `Decimal('1.5')`, a datetime "
        "keeps its UTC offset). msgspec must decode its own encoding of each datum back "
        "to the same Struct values.",
        "",
    ]
    excluded = []
    for case_name, result in results.items():
        for name, checks in result["checks"].items():
            if checks["dump"] and checks["dump"] == checks["load"]:
                excluded.append(f"- {case_name} / {name} dump and load: n/a, {checks['dump']}")
                continue
            for op in OPS:
                if checks[op]:
                    excluded.append(f"- {case_name} / {name} {op}: n/a, {checks[op]}")
    lines += excluded or [
        "Every Avro contender agrees with fastavro on every case, and every msgspec round trip holds."
    ]
    lines.append("")
    sizes = [
        f"{c} {r['msgspec_bytes']:,.0f} ({r['mean_bytes']:,.0f})"
        for c, r in results.items()
        if r.get("msgspec_bytes")
    ]
    if sizes:
        lines += [
            "Bytes per datum, msgspec's MessagePack (Avro's in parentheses): " + "; ".join(sizes) + ".",
            "",
        ]
    return "\n".join(lines)


# -- main -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tier0", description=__doc__.splitlines()[0])
    parser.add_argument("--cases", help="comma-separated case names")
    parser.add_argument("--groups", default="classic,realistic", help="comma-separated groups")
    parser.add_argument(
        "--contenders",
        help="comma-separated, of: "
        + ", ".join(ALL_NAMES)
        + " (default: all but AvroCodec never; fastavro is always included)",
    )
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--target-ms", type=float, default=20.0, help="length of one timed loop")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="output folder")
    args = parser.parse_args(argv)

    names = DEFAULT_NAMES
    if args.contenders:
        wanted = {n.strip() for n in args.contenders.split(",")} | {BASELINE}
        unknown = wanted - set(ALL_NAMES)
        if unknown:
            raise SystemExit(f"unknown contender(s) {sorted(unknown)}; known: {', '.join(ALL_NAMES)}")
        names = tuple(n for n in ALL_NAMES if n in wanted)
    contenders_module.SCHEMA_FACTORIES.update(FACTORIES)
    avro_names = tuple(n for n in names if n != "msgspec")
    selected = select_cases(
        args.cases.split(",") if args.cases else None, args.groups.split(",") if args.groups else None
    )
    cpu, commit = cpu_and_commit()
    env = {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "python": sys.version.split()[0],
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "git_commit": commit,
        "versions": versions(),
        "repeats": args.repeats,
        "target_loop_ms": args.target_ms,
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    started_all = time.perf_counter()
    print(f"{'case':14s} {'op':5s} " + " ".join(f"{name:>15s}" for name in names), flush=True)
    results: dict[str, dict] = {}
    for case in selected:
        started = time.perf_counter()
        built, reference = contenders_module.build_for_schema(case, avro_names)
        if "msgspec" in names:
            built["msgspec"] = make_msgspec(case, reference["datums"])
        built = {name: built[name] for name in names}
        for name, contender in built.items():
            for op, excluded in (("dump", contender.dump_excluded), ("load", contender.load_excluded)):
                if excluded is not None:
                    print(f"{case.name}: {name} {op} not timed: {excluded}")
        timings = measure_case(built, args.repeats, args.target_ms * 1e6)
        messages = reference["messages"]
        results[case.name] = {
            "group": case.group,
            "datums": len(messages),
            "mean_bytes": sum(map(len, messages)) / len(messages),
            "timings": timings,
            "ratio": {op: ratios(timings, op) for op in OPS},
            "ratio_min": {op: ratios_of_fastest(timings, op) for op in OPS},
            "checks": {
                n: {"dump": c.dump_excluded, "load": c.load_excluded, "notes": c.notes}
                for n, c in built.items()
            },
        }
        if "msgspec" in built and built["msgspec"].notes:
            results[case.name]["msgspec_bytes"] = float(built["msgspec"].notes[0].split()[1])
        for op in OPS:
            ratio = results[case.name]["ratio"][op]
            cells = " ".join(
                f"{fmt_ns(timings.get(n, {}).get(op, {}).get('ns')):>8s} {fmt_x(ratio.get(n)):>6s}"
                for n in names
            )
            print(f"{case.name:14s} {op:5s} {cells}", flush=True)
        print(f"    ({time.perf_counter() - started:.1f} s)", flush=True)
    env["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report = {
        "environment": env,
        "cases": results,
        "summary": summarize(results, names),
        "summary_min": summarize(results, names, "ratio_min"),
    }
    for title, key in (("medians", "summary"), ("fastest repeats", "summary_min")):
        print(f"\ngeometric means of the ratios over fastavro, {title}:")
        for group, entry in report[key].items():
            for op in OPS:
                print(
                    f"  {group} ({len(entry['cases'])}), {op}: "
                    + ", ".join(f"{n} {fmt_x(entry[op][n]['geomean_ratio'])}" for n in names if n != BASELINE)
                )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "tier0.md").write_text(markdown(report, names))
    print(
        f"wrote {args.out / 'tier0.md'} in {time.perf_counter() - started_all:.0f} s "
        f"(load average {env['loadavg_at_start']} -> {env['loadavg_at_end']})"
    )
    return report


if __name__ == "__main__":
    main()
