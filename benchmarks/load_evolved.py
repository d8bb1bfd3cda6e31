"""A marshmallow schema reading data written with an older version of it:
``load_compiled(data, writer_schema=...)`` in every form the writer schema
can be given, against a plain ``load_compiled`` and the pair's ``AvroCodec``.

    python -m benchmarks.load_evolved            # 15 interleaved repeats
    python -m benchmarks.load_evolved --quick    # 5

Writes benchmarks/results/load_evolved.json and load_evolved.md (``--out``
for another folder).

The case: a 4-field order (``OrderV1``: id, sku, quantity, price); the
reader, ``OrderV2``, adds a field with a default (``note``). The messages are
fastavro's ``schemaless_writer`` output with V1's Avro schema. Contenders,
each reading every message:

- ``load_compiled`` with ``writer_schema`` given as the V1 class, a V1
  instance, V1's Avro dict, its JSON text and its parsed
  :class:`roastedavro.avro.Schema` (each the same object on every call, as a
  service holds it), read by the pair's one-pass codec (roastedavro.evolved);
- the same two forms read by the Rearranger (what serves the pair before
  its one-pass codec is built: the ``hot`` policy's first calls);
- ``load_compiled`` of V2's own bytes (no resolution; the floor);
- ``AvroCodec(v2, writer_schema=v1).load`` (the pair's Avro-level reader,
  without marshmallow's semantics).

A second case, a nested record changed: ``PurchaseV1``'s ``customer``
record (name, tier, country) is read as ``PurchaseV2``'s (country, since
with a default, name: tier dropped, the others moved), by the pair's
one-pass codec (whose reader of the customer follows the writer's layout),
by the Rearranger, and by the pair's ``AvroCodec``; each must give
marshmallow's load of fastavro's resolved values (the AvroCodec: fastavro's).

A third case, numbers promoted: ``MeasureV1`` writes an int, another int and
a float that ``MeasureV2`` reads as a long, a double and a double, by the
pair's one-pass codec (each promoted as Java's resolving decoder does, then
read by the field's own code), by the Rearranger (each number converted in
the bytes; what serves the pair until the one-pass codec is built), read by
the pair's ``AvroCodec`` and written again (what served such pairs before
the Rearranger converted numbers), and by the pair's ``AvroCodec``; the
values are exact, so fastavro's are Java's.

A fourth case, an enum renumbered: ``SwatchV2`` orders the symbols of
``SwatchV1``'s colour enum otherwise and adds one; a plain and a nullable
field of it are read by the pair's one-pass codec (each index renumbered,
then read by the field's own code), by the Rearranger, read by the pair's
``AvroCodec`` and written again, and by the pair's ``AvroCodec``.

A fifth case, that enum inside an array (``PaletteV1``/``PaletteV2``: 0 to
7 colours), which the field's own code cannot read from the writer's bytes:
the one-pass codec (the Rearranger moves the array into the schema's bytes,
the field's code reads them, in the same call), the Rearranger alone (until
the one-pass codec is built), read and written again (before), and the
pair's ``AvroCodec``.

Every contender is called through a one-line lambda (the keyword argument
needs one; the others get one too, so the call costs the same).

Each must give fastavro's values for the same bytes (V2's default filled in)
before it is timed. Timing is benchmarks/avro_codecs.py's: one process, GC
off, a loop calibrated to ~30 ms, repeats interleaved in a rotating order,
the median in ns per message.
"""

from __future__ import annotations

import argparse
import enum
import io
import json
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
if not __package__:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(HERE.parent))

from marshmallow import fields  # noqa: E402

import fastavro  # noqa: E402
from benchmarks.avro_codecs import measure_case  # noqa: E402
from benchmarks.run import cpu_and_commit, save_report  # noqa: E402
from roastedavro import AvroCodec, CompiledSchema  # noqa: E402
from roastedavro.avro import parse_schema  # noqa: E402


class OrderV1(CompiledSchema):
    id = fields.Integer(required=True)
    sku = fields.String(required=True)
    quantity = fields.Integer(required=True)
    price = fields.Float(required=True)


class OrderV2(OrderV1):
    note = fields.String(load_default="none", dump_default="none")


# the nested case: the customer record inside an order changed its layout
# (a field dropped, one added with a default, the rest moved)
class CustomerV1(CompiledSchema):
    class Meta:
        avro_name = "Customer"

    name = fields.String(required=True)
    tier = fields.Integer(required=True)
    country = fields.String(required=True)


class CustomerV2(CompiledSchema):
    class Meta:
        avro_name = "Customer"

    country = fields.String(required=True)
    since = fields.Integer(load_default=0, dump_default=0)
    name = fields.String(required=True)


class PurchaseV1(CompiledSchema):
    class Meta:
        avro_name = "Purchase"

    id = fields.Integer(required=True)
    customer = fields.Nested(CustomerV1, required=True)
    amount = fields.Float(required=True)


class PurchaseV2(CompiledSchema):
    class Meta:
        avro_name = "Purchase"

    id = fields.Integer(required=True)
    customer = fields.Nested(CustomerV2, required=True)
    amount = fields.Float(required=True)


# the promoted case: numbers written narrower than the reader reads them
class MeasureV1(CompiledSchema):
    class Meta:
        avro_name = "Measure"

    id = fields.Integer(required=True, metadata={"avro": "int"})
    sensor = fields.String(required=True)
    count = fields.Integer(required=True, metadata={"avro": "int"})
    value = fields.Float(required=True, metadata={"avro": "float"})


class MeasureV2(CompiledSchema):
    class Meta:
        avro_name = "Measure"

    id = fields.Integer(required=True)  # int -> long
    sensor = fields.String(required=True)
    count = fields.Float(required=True)  # int -> double
    value = fields.Float(required=True)  # float -> double


# the renumbered case: an enum's symbols reordered and one added by the reader
def _written_colour():
    class Colour(enum.Enum):
        RED = "RED"
        GREEN = "GREEN"
        BLUE = "BLUE"

    return Colour


WrittenColour = _written_colour()


class Colour(enum.Enum):
    BLUE = "BLUE"
    WHITE = "WHITE"
    GREEN = "GREEN"
    RED = "RED"


class SwatchV1(CompiledSchema):
    class Meta:
        avro_name = "Swatch"

    id = fields.Integer(required=True)
    colour = fields.Enum(WrittenColour, required=True)
    trim = fields.Enum(WrittenColour, allow_none=True)
    grams = fields.Integer(required=True)


class SwatchV2(CompiledSchema):
    class Meta:
        avro_name = "Swatch"

    id = fields.Integer(required=True)
    colour = fields.Enum(Colour, required=True)
    trim = fields.Enum(Colour, allow_none=True)
    grams = fields.Integer(required=True)


# the palette case: the same renumbered enum inside an array, which the
# field's own code cannot read from the writer's bytes (the one-pass codec
# has the Rearranger move the field's value first)
class PaletteV1(CompiledSchema):
    class Meta:
        avro_name = "Palette"

    id = fields.Integer(required=True)
    colours = fields.List(fields.Enum(WrittenColour), required=True)


class PaletteV2(CompiledSchema):
    class Meta:
        avro_name = "Palette"

    id = fields.Integer(required=True)
    colours = fields.List(fields.Enum(Colour), required=True)


class Contender:
    """What measure_case times: ``load`` over ``load_input`` (no dump side)."""

    dump_excluded = "not measured"
    load_excluded = None

    def __init__(self, load, inputs):
        self.load = load
        self.load_input = inputs


def messages(count: int) -> tuple[list[bytes], list[dict]]:
    records = [{"id": n, "sku": f"SKU-{n % 97}", "quantity": n % 13, "price": n / 8} for n in range(count)]
    return written_by(OrderV1, records), records


def reader_under(policy: str, reader_class, forms: list, message: bytes):
    """A ``reader_class`` instance whose pairs with the writer schemas in
    ``forms`` were made under ``policy`` (``eager``: the one-pass codec
    built at once), each by loading ``message``."""
    reader = reader_class()
    reader.compile()
    before = os.environ.get("ROASTEDAVRO_COMPILE")
    os.environ["ROASTEDAVRO_COMPILE"] = policy
    try:
        for form in forms:
            reader.load_compiled(message, writer_schema=form)
    finally:
        if before is None:
            del os.environ["ROASTEDAVRO_COMPILE"]
        else:
            os.environ["ROASTEDAVRO_COMPILE"] = before
    return reader


def contenders(data: list[bytes]) -> dict[str, Contender]:
    writer_class, writer = OrderV1, OrderV1()
    writer.compile()
    as_dict = writer.avro_schema()
    as_text = json.dumps(as_dict)
    as_model = parse_schema(as_dict)
    forms = [writer_class, writer, as_dict, as_text, as_model]
    one_pass = reader_under("eager", OrderV2, forms, messages(1)[0][0]).load_compiled
    # the Rearranger alone: this reader's pairs get no one-pass codec (under
    # any policy a cached one would be found and serve them)
    rearranging = OrderV2()
    rearranging.compile()
    rearranging.load_compiled.__self__.pairs.args[2].codec = None
    rearranged = rearranging.load_compiled
    own = [OrderV2().dump_compiled(one_pass(message, writer_schema=as_dict)) for message in data]
    pair = AvroCodec(OrderV2().avro_schema(), writer_schema=as_dict, compile="eager")
    return {
        "writer as class": Contender(lambda m: one_pass(m, writer_schema=writer_class), data),
        "writer as instance": Contender(lambda m: one_pass(m, writer_schema=writer), data),
        "writer as dict": Contender(lambda m: one_pass(m, writer_schema=as_dict), data),
        "writer as JSON text": Contender(lambda m: one_pass(m, writer_schema=as_text), data),
        "writer as parsed Schema": Contender(lambda m: one_pass(m, writer_schema=as_model), data),
        "rearranged, writer as class": Contender(lambda m: rearranged(m, writer_schema=writer_class), data),
        "rearranged, writer as dict": Contender(lambda m: rearranged(m, writer_schema=as_dict), data),
        "load_compiled, no writer schema": Contender(lambda m: one_pass(m), own),
        # called through a lambda as the others are (the harness calls each
        # contender with one argument; a keyword needs the lambda)
        "AvroCodec pair .load": Contender(lambda m: pair.load(m), data),
    }


def written_by(writer_class, records: list[dict]) -> list[bytes]:
    """fastavro's bytes of ``records`` in ``writer_class``'s Avro schema."""
    parsed = fastavro.parse_schema(writer_class().avro_schema())
    out = []
    for record in records:
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, parsed, record)
        out.append(buffer.getvalue())
    return out


def nested_messages(count: int) -> list[bytes]:
    return written_by(
        PurchaseV1,
        [
            {"id": n, "customer": {"name": f"c{n % 31}", "tier": n % 3, "country": "NL"}, "amount": n / 4}
            for n in range(count)
        ],
    )


def promoted_messages(count: int) -> list[bytes]:
    return written_by(
        MeasureV1, [{"id": n * 1000, "sensor": f"s{n % 7}", "count": n, "value": n / 8} for n in range(count)]
    )


def read_and_written_again(writer_class, reader_class):
    """What served pairs whose bytes need converting before the Rearranger
    converted them: the writer's bytes read by the pair's AvroCodec, written
    by the reader's, then read by ``load_compiled``."""
    reader = reader_class()
    reader.compile()
    resolving = AvroCodec(
        reader_class().avro_schema(), writer_schema=writer_class().avro_schema(), compile="eager"
    )
    plain = AvroCodec(reader_class().avro_schema(), compile="eager")
    load, resolve, dump = reader.load_compiled, resolving.load, plain.dump
    return lambda m: load(dump(resolve(m)))


def pair_contenders(
    case: str, writer_class, reader_class, data: list[bytes], one_pass: bool = True, again: bool = False
) -> dict[str, Contender]:
    """The pair's one-pass codec (where it has one), the Rearranger that
    serves it until that codec is built (or for good), with ``again`` the
    read-and-written-again path such pairs took before, and the pair's
    AvroCodec, each reading ``data`` with the writer given as its class."""
    found = {}
    if one_pass:
        fast = reader_under("eager", reader_class, [writer_class], data[0]).load_compiled
        found[f"{case}, one pass, writer as class"] = Contender(
            lambda m: fast(m, writer_schema=writer_class), data
        )
    slow = reader_class()
    slow.compile()
    # no codec to build a one-pass reader for: the Rearranger serves the pair
    slow.load_compiled.__self__.pairs.args[2].codec = None
    slow_load = slow.load_compiled
    found[f"{case}, rearranged, writer as class"] = Contender(
        lambda m: slow_load(m, writer_schema=writer_class), data
    )
    if again:
        found[f"{case}, read and written again (before)"] = Contender(
            read_and_written_again(writer_class, reader_class), data
        )
    pair = AvroCodec(
        reader_class().avro_schema(), writer_schema=writer_class().avro_schema(), compile="eager"
    )
    found[f"{case}, AvroCodec pair .load"] = Contender(lambda m: pair.load(m), data)
    return found


def nested_contenders(data: list[bytes]) -> dict[str, Contender]:
    return pair_contenders("nested change", PurchaseV1, PurchaseV2, data)


def promoted_contenders(data: list[bytes]) -> dict[str, Contender]:
    return pair_contenders("promoted", MeasureV1, MeasureV2, data, again=True)


def renumbered_messages(count: int) -> list[bytes]:
    colours = list(WrittenColour)
    return written_by(
        SwatchV1,
        [
            {
                "id": n,
                "colour": colours[n % 3].name,
                "trim": None if n % 2 else colours[(n + 1) % 3].name,
                "grams": n % 500,
            }
            for n in range(count)
        ],
    )


def renumbered_contenders(data: list[bytes]) -> dict[str, Contender]:
    return pair_contenders("renumbered enum", SwatchV1, SwatchV2, data, again=True)


def palette_messages(count: int) -> list[bytes]:
    colours = list(WrittenColour)
    return written_by(
        PaletteV1,
        [{"id": n, "colours": [colours[(n + k) % 3].name for k in range(n % 8)]} for n in range(count)],
    )


def palette_contenders(data: list[bytes]) -> dict[str, Contender]:
    return pair_contenders("enums renumbered in an array", PaletteV1, PaletteV2, data, again=True)


def check_pair(found: dict[str, Contender], writer_class, reader_class) -> None:
    """Each contender gives fastavro's resolved values (marshmallow's load of
    them, but for the AvroCodec). The cases' values are exact (ints within
    2**53, floats to doubles), so fastavro's are Java's."""
    writer = fastavro.parse_schema(writer_class().avro_schema())
    reader = fastavro.parse_schema(reader_class().avro_schema())
    for name, contender in found.items():
        expected = [
            fastavro.schemaless_reader(io.BytesIO(message), writer, reader)
            for message in contender.load_input
        ]
        if "AvroCodec" not in name:
            expected = [reader_class().load(value) for value in expected]
        if [contender.load(message) for message in contender.load_input] != expected:
            raise AssertionError(f"{name}: not marshmallow's load of fastavro's resolved values")


def check(found: dict[str, Contender], records: list[dict]) -> None:
    expected = [dict(record, note="none") for record in records]
    for name, contender in found.items():
        got = [contender.load(message) for message in contender.load_input]
        if got != expected:
            raise AssertionError(f"{name}: not fastavro's values with the reader's default")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 repeats instead of 15")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    data, records = messages(64)
    found = contenders(data)
    check(found, records)
    nested = nested_contenders(nested_messages(64))
    check_pair(nested, PurchaseV1, PurchaseV2)
    promoted = promoted_contenders(promoted_messages(64))
    check_pair(promoted, MeasureV1, MeasureV2)
    renumbered = renumbered_contenders(renumbered_messages(64))
    check_pair(renumbered, SwatchV1, SwatchV2)
    palette = palette_contenders(palette_messages(64))
    check_pair(palette, PaletteV1, PaletteV2)
    repeats = 5 if args.quick else 15
    timings = measure_case(found, repeats, 30e6)
    nested_timings = measure_case(nested, repeats, 30e6)
    promoted_timings = measure_case(promoted, repeats, 30e6)
    renumbered_timings = measure_case(renumbered, repeats, 30e6)
    palette_timings = measure_case(palette, repeats, 30e6)
    floor = timings["AvroCodec pair .load"]["load"]["ns"]
    nested_floor = nested_timings["nested change, AvroCodec pair .load"]["load"]["ns"]
    promoted_floor = promoted_timings["promoted, AvroCodec pair .load"]["load"]["ns"]
    renumbered_floor = renumbered_timings["renumbered enum, AvroCodec pair .load"]["load"]["ns"]
    palette_floor = palette_timings["enums renumbered in an array, AvroCodec pair .load"]["load"]["ns"]
    commit = cpu_and_commit()[1] or "unknown"
    report = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "commit": commit,
        "repeats": 5 if args.quick else 15,
        "ns": {name: round(t["load"]["ns"], 1) for name, t in timings.items()},
        "spread": {name: round(t["load"]["spread"], 3) for name, t in timings.items()},
        "nested_ns": {name: round(t["load"]["ns"], 1) for name, t in nested_timings.items()},
        "nested_spread": {name: round(t["load"]["spread"], 3) for name, t in nested_timings.items()},
        "promoted_ns": {name: round(t["load"]["ns"], 1) for name, t in promoted_timings.items()},
        "promoted_spread": {name: round(t["load"]["spread"], 3) for name, t in promoted_timings.items()},
        "renumbered_ns": {name: round(t["load"]["ns"], 1) for name, t in renumbered_timings.items()},
        "renumbered_spread": {name: round(t["load"]["spread"], 3) for name, t in renumbered_timings.items()},
        "palette_ns": {name: round(t["load"]["ns"], 1) for name, t in palette_timings.items()},
        "palette_spread": {name: round(t["load"]["spread"], 3) for name, t in palette_timings.items()},
    }
    lines = [
        "# load_compiled with a writer schema, in every form it can be given",
        "",
        f"{report['date']}, Python {report['python']}, commit {commit}, {report['repeats']} "
        "interleaved repeats, median ns per message over 64 messages of a 4-field order "
        "(`python -m benchmarks.load_evolved`; its docstring: the method).",
        "",
        "| contender | ns per message | against the pair's AvroCodec load |",
        "| --- | ---: | ---: |",
    ]
    for name, ns in report["ns"].items():
        lines.append(f"| {name} | {ns:,.0f} | {ns / floor:.2f}× |")
    lines += [
        "",
        "A nested record changed: a 3-field purchase whose customer record the reader lays out "
        "otherwise (a field dropped, one added with a default, the others moved), 64 messages, "
        "timed in the same way:",
        "",
        "| contender | ns per message | against the pair's AvroCodec load |",
        "| --- | ---: | ---: |",
    ]
    for name, ns in report["nested_ns"].items():
        lines.append(f"| {name} | {ns:,.0f} | {ns / nested_floor:.2f}× |")
    lines += [
        "",
        "Numbers promoted: a 4-field measure whose reader reads the writer's int as a long, "
        "another int as a double and a float as a double, 64 messages, timed in the same way:",
        "",
        "| contender | ns per message | against the pair's AvroCodec load |",
        "| --- | ---: | ---: |",
    ]
    for name, ns in report["promoted_ns"].items():
        lines.append(f"| {name} | {ns:,.0f} | {ns / promoted_floor:.2f}× |")
    lines += [
        "",
        "An enum renumbered: a 4-field swatch whose reader orders the colour enum's symbols "
        "otherwise and adds one (a plain and a nullable field), 64 messages, timed in the same way:",
        "",
        "| contender | ns per message | against the pair's AvroCodec load |",
        "| --- | ---: | ---: |",
    ]
    for name, ns in report["renumbered_ns"].items():
        lines.append(f"| {name} | {ns:,.0f} | {ns / renumbered_floor:.2f}× |")
    lines += [
        "",
        "Enums renumbered in an array: a palette whose list of colours (0 to 7) uses that enum, "
        "moved into the schema's bytes by the Rearranger within the one-pass codec, 64 messages, "
        "timed in the same way:",
        "",
        "| contender | ns per message | against the pair's AvroCodec load |",
        "| --- | ---: | ---: |",
    ]
    for name, ns in report["palette_ns"].items():
        lines.append(f"| {name} | {ns:,.0f} | {ns / palette_floor:.2f}× |")
    lines.append("")
    save_report(args.out, "load_evolved", report, lines)
    return report


if __name__ == "__main__":
    main()
