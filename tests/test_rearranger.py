"""Rearranger: another writer's bytes as the reader's, where resolution only
moves bytes (fields reordered, dropped, added from defaults; records inside
arrays, maps and unions; renumbered union branches; int to long, string to
bytes; numbers promoted and enums renumbered, converted one value at a
time).

The oracle is reading with the pair's resolving reader (tier 0's, itself
checked against Java in test_tier0_resolve.py) and writing the values in the
reader's schema: the rearranged bytes must be those bytes exactly, for
evolution pairs drawn as producers change schemas; its errors are the
resolving reader's, with the same offsets (values copied as written inside a
conversion included: strings, map keys, logical types). One difference is
deliberate: a promoted int past 32 bits is refused, as the writer's own
reader and the one-pass codecs refuse it, where the resolving readers read
it as a long. Only pairs the reader cannot read at all get no Rearranger
(None).
"""

import io

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from avro_strategies import assert_same, datums
from evolution import schema_pairs
from pair_checks import assert_same_decode_error
from roastedavro import CompileFlags, DecodeError, SchemaResolutionError
from roastedavro.errors import DatumError
from roastedavro._tier0 import Interpreter, Rearranger, ResolvingInterpreter
from roastedavro.avro import parse_schema
from test_resolution_properties import has_values


def written(schema, datum) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), datum)
    return out.getvalue()


ORDER_V1 = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "sku", "type": "string"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "quantity", "type": "int"},
        {
            "name": "line",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Line",
                    "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}],
                },
            ],
        },
        {"name": "lines", "type": {"type": "array", "items": "Line"}},
        {"name": "by_key", "type": {"type": "map", "values": "Line"}},
    ],
}
# reordered, tags dropped, note and extra added, quantity int -> long, sku
# string -> bytes, Line's fields reordered with one added
ORDER_V2 = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "note", "type": "string", "default": "none"},
        {"name": "quantity", "type": "long"},
        {"name": "id", "type": "long"},
        {"name": "sku", "type": "bytes"},
        {
            "name": "line",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Line",
                    "fields": [
                        {"name": "b", "type": "string"},
                        {"name": "c", "type": "int", "default": 7},
                        {"name": "a", "type": "long"},
                    ],
                },
            ],
        },
        {"name": "lines", "type": {"type": "array", "items": "Line"}},
        {"name": "by_key", "type": {"type": "map", "values": "Line"}},
        {"name": "extra", "type": ["null", "long"], "default": None},
    ],
}
ORDER = {
    "id": 5,
    "sku": "abc",
    "tags": ["x", "y"],
    "quantity": 3,
    "line": {"a": 1, "b": "q"},
    "lines": [{"a": 2, "b": "r"}, {"a": 3, "b": "s"}],
    "by_key": {"k": {"a": 4, "b": "t"}},
}


def oracle(writer, reader, data, flags=None) -> bytes:
    values = ResolvingInterpreter(writer, reader, flags).load(data)
    return Interpreter(reader, flags).dump(values)


def test_an_evolved_order_is_rearranged_as_the_values_are_written():
    writer, reader = parse_schema(ORDER_V1), parse_schema(ORDER_V2)
    rearranger = Rearranger.build(writer, reader)
    assert rearranger is not None
    data = written(ORDER_V1, ORDER)
    assert rearranger.transcode(data) == oracle(writer, reader, data)
    # and the reader's bytes read back as fastavro resolves them
    resolved = fastavro.schemaless_reader(
        io.BytesIO(data), fastavro.parse_schema(ORDER_V1), fastavro.parse_schema(ORDER_V2)
    )
    assert (
        fastavro.schemaless_reader(
            io.BytesIO(rearranger.transcode(data)), fastavro.parse_schema(ORDER_V2), None
        )
        == resolved
    )


COLOURS = {"type": "enum", "name": "Colour", "symbols": ["RED", "GREEN", "BLUE"]}
# reordered, BLUE dropped (no default): a written BLUE cannot be read
COLOURS_V2 = {"type": "enum", "name": "Colour", "symbols": ["GREEN", "RED"]}


@pytest.mark.parametrize(
    "writer_type, reader_type, values",
    [
        ("int", "double", [0, -1, 2**31 - 1, -(2**31)]),
        ("int", "float", [0, 16_777_217, -(2**31)]),  # rounded to the nearest float
        ("long", "float", [2**63 - 1, -(2**53) - 1, 3]),
        ("long", "double", [2**53 + 1, -(2**63)]),
        ("float", "double", [0.1, -2.5, float("inf")]),
        ("bytes", "string", [b"", b"abc", "é".encode()]),
        (COLOURS, COLOURS_V2, ["RED", "GREEN"]),
        (["null", "string"], "string", ["x", ""]),
        ("int", ["null", "string", "long"], [5, -7]),
        (
            {"type": "array", "items": COLOURS},
            {"type": "array", "items": COLOURS_V2},
            [[], ["GREEN", "RED"] * 70],
        ),
        ({"type": "map", "values": "int"}, {"type": "map", "values": "double"}, [{}, {"a": 1, "b": -3}]),
        (
            ["null", "int", COLOURS, "string"],
            ["null", COLOURS_V2, "double", "string"],
            [None, 3, "RED", "s"],
        ),
    ],
    ids=[
        "int-to-double",
        "int-to-float",
        "long-to-float",
        "long-to-double",
        "float-to-double",
        "bytes-to-string",
        "enum-remapped",
        "union-to-branch",
        "value-into-wider-union",
        "enums-remapped-in-an-array",
        "numbers-promoted-in-a-map",
        "promoted-and-remapped-in-a-wide-union",
    ],
)
def test_pairs_whose_bytes_need_converting_are_converted_as_resolution_reads_them(
    writer_type, reader_type, values
):
    def record(kind):
        return {"type": "record", "name": "R", "fields": [{"name": "f", "type": kind}]}

    writer, reader = parse_schema(record(writer_type)), parse_schema(record(reader_type))
    rearranger = Rearranger.build(writer, reader)
    assert rearranger is not None
    for value in values:
        raw = written(record(writer_type), {"f": value})
        got = rearranger.transcode(raw)
        assert got == oracle(writer, reader, raw)
        # and the converted bytes read back as the resolved values
        assert_same(Interpreter(reader).load(got), ResolvingInterpreter(writer, reader).load(raw))


@pytest.mark.parametrize(
    "writer_type, reader_type, value, data",
    [
        (COLOURS, COLOURS_V2, "BLUE", None),  # a symbol the reader lacks
        (["null", "string"], "string", None, None),  # a branch the reader cannot read
        ({"type": "array", "items": COLOURS}, {"type": "array", "items": COLOURS_V2}, ["RED", "BLUE"], None),
        ("bytes", "string", None, b"\x04\xff\xfe"),  # not UTF-8
        # values copied as written inside a conversion are checked as the
        # reader reads them, at the writer's offsets (no error is left for
        # whoever reads the rearranged bytes)
        (["null", "string"], "string", None, b"\x02\x04\xff\xfe"),
        (
            {"type": "map", "values": "int"},
            {"type": "map", "values": "long"},
            None,
            b"\x02\x04\xff\xfe\x00\x00",
        ),
        (
            ["null", "int"],
            {"type": "int", "logicalType": "date"},
            2**31 - 1,  # days: past the year 9999
            None,
        ),
    ],
    ids=[
        "enum-symbol-unknown",
        "union-branch-unreadable",
        "in-an-array",
        "not-utf8",
        "copied-string-not-utf8",
        "copied-map-key-not-utf8",
        "copied-date-out-of-range",
    ],
)
def test_data_the_reader_cannot_read_fails_as_the_resolving_reader_fails(
    writer_type, reader_type, value, data
):
    def record(kind):
        return {"type": "record", "name": "R", "fields": [{"name": "f", "type": kind}]}

    writer, reader = parse_schema(record(writer_type)), parse_schema(record(reader_type))
    raw = data if data is not None else written(record(writer_type), {"f": value})
    assert_same_decode_error(
        lambda: ResolvingInterpreter(writer, reader).load(raw),
        lambda: Rearranger.build(writer, reader).transcode(raw),
    )


def test_a_promoted_int_past_its_range_is_refused_as_the_writer_s_own_reader_refuses_it():
    # the resolving readers read a promoted int as a long; the Rearranger,
    # like the one-pass codec that replaces it, checks it as the int it is
    def record(kind):
        return {"type": "record", "name": "R", "fields": [{"name": "f", "type": kind}]}

    writer, reader = parse_schema(record("int")), parse_schema(record("float"))
    raw = b"\x80\x80\x80\x80\x10"  # 2**31, zig-zagged
    with pytest.raises(DecodeError) as expected:
        Interpreter(writer).load(raw)
    with pytest.raises(DecodeError) as got:
        Rearranger.build(writer, reader).transcode(raw)
    assert (str(got.value), got.value.offset) == (str(expected.value), expected.value.offset)


def test_a_pair_that_cannot_be_read_gets_none():
    writer = parse_schema({"type": "record", "name": "R", "fields": [{"name": "a", "type": "long"}]})
    reader = parse_schema({"type": "record", "name": "R", "fields": [{"name": "b", "type": "long"}]})
    with pytest.raises(SchemaResolutionError):
        ResolvingInterpreter(writer, reader)
    assert Rearranger.build(writer, reader) is None


def test_damaged_bytes_are_a_decode_error_at_their_offset():
    writer, reader = parse_schema(ORDER_V1), parse_schema(ORDER_V2)
    rearranger = Rearranger.build(writer, reader)
    data = written(ORDER_V1, ORDER)
    for cut in range(len(data)):
        with pytest.raises(DecodeError) as raised:
            rearranger.transcode(data[:cut])
        assert 0 <= raised.value.offset <= cut
    with pytest.raises(DecodeError):
        rearranger.transcode(data + b"\x00")  # bytes after the datum
    bad_branch = bytearray(data)
    # id 5 (0x0a), sku "abc", tags [x, y], quantity 3, then the line's branch
    at = len(
        written(
            {"type": "record", "name": "P", "fields": ORDER_V1["fields"][:4]},
            {k: ORDER[k] for k in ("id", "sku", "tags", "quantity")},
        )
    )
    bad_branch[at] = 0x08
    with pytest.raises(DecodeError) as raised:
        rearranger.transcode(bytes(bad_branch))
    assert raised.value.offset == at


def test_bounds_hold_while_rearranging():
    nested = {
        "type": "record",
        "name": "Node",
        "fields": [{"name": "next", "type": ["null", "Node"]}, {"name": "v", "type": "int"}],
    }
    evolved = {
        "type": "record",
        "name": "Node",
        "fields": [{"name": "v", "type": "long"}, {"name": "next", "type": ["null", "Node"]}],
    }
    datum = None
    for value in range(40):
        datum = {"next": datum, "v": value}
    data = written(nested, datum)
    shallow = CompileFlags(max_depth=10)
    rearranger = Rearranger.build(parse_schema(nested), parse_schema(evolved), shallow)
    with pytest.raises(DecodeError, match="nested more than 10"):
        rearranger.transcode(data)
    deep = Rearranger.build(parse_schema(nested), parse_schema(evolved))
    assert deep.transcode(data) == oracle(parse_schema(nested), parse_schema(evolved), data)
    many = {"type": "array", "items": "null"}
    huge = b"\xfe\xff\xff\xff\x0f" + b"\x00"  # 2**31 - 1 nulls, announced in 6 bytes
    arranged = Rearranger.build(
        parse_schema({"type": "array", "items": "null"}),
        parse_schema({"type": "array", "items": ["null", "int"]}),
    )
    with pytest.raises(DecodeError):
        arranged.transcode(huge)
    del many


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_evolved_pairs_rearrange_to_the_resolved_values_bytes(data):
    writer_json, reader_json = data.draw(schema_pairs(), label="pair")
    try:
        writer, reader = parse_schema(writer_json), parse_schema(reader_json)
    except Exception:  # noqa: BLE001 - a pair our parser refuses is tested elsewhere
        return
    if not has_values(writer_json):
        return
    rearranger = Rearranger.build(writer, reader)
    if rearranger is None:
        return
    for datum in data.draw(st.lists(datums(writer_json), min_size=1, max_size=4), label="datums"):
        raw = written(writer_json, datum)
        try:
            expected = oracle(writer, reader, raw)
        except (DecodeError, SchemaResolutionError):
            # bytes the reader refuses (a string that is not UTF-8): refused
            # by the rearranging or by the reader's read of its output
            with pytest.raises(DecodeError):
                Interpreter(reader).load(rearranger.transcode(raw))
            continue
        except DatumError:
            # values the reader reads but would not write (a string's bytes
            # read as a decimal past its precision): the moved bytes read as
            # the same values
            assert Interpreter(reader).load(rearranger.transcode(raw)) == ResolvingInterpreter(
                writer, reader
            ).load(raw)
            continue
        got = rearranger.transcode(raw)
        if got != expected:
            # one value, several encodings: a decimal's bytes (b"" and b"\x00"
            # are both 0), or a reader union with two branches that take it (0
            # as "long" or as "int"; writing the value again picks the first,
            # the moved bytes keep the branch resolution chose): the moved
            # bytes read as the resolved values, types and all
            assert_same(Interpreter(reader).load(got), ResolvingInterpreter(writer, reader).load(raw))
            continue


def test_a_branch_two_reader_branches_take_keeps_the_branch_resolution_chose():
    # an int read into ["long", "null", "int"]: resolution takes the int
    # branch (the exact type), which writing the value 0 again would not
    writer_json = {"type": "record", "name": "Rec", "fields": [{"name": "added", "type": ["null", "int"]}]}
    reader_json = {
        "type": "record",
        "name": "Rec",
        "fields": [{"name": "added3", "type": ["long", "null", "int"], "aliases": ["added"]}],
    }
    writer, reader = parse_schema(writer_json), parse_schema(reader_json)
    raw = written(writer_json, {"added": 0})
    got = Rearranger.build(writer, reader).transcode(raw)
    assert got == b"\x04\x00"  # branch 2 (int), 0
    assert Interpreter(reader).load(got) == ResolvingInterpreter(writer, reader).load(raw)


def test_a_recursive_pair_with_fields_reordered_is_moved_field_by_field():
    # B holds an A; A's x and y swap places. A checked as "copyable" while A
    # itself was being checked would be copied in the writer's order.
    def schema(order):
        return {
            "type": "record",
            "name": "A",
            "fields": [
                {
                    "name": "b",
                    "type": {"type": "record", "name": "B", "fields": [{"name": "a", "type": ["null", "A"]}]},
                },
                *({"name": name, "type": "int"} for name in order),
            ],
        }

    writer_json, reader_json = schema("xy"), schema("yx")
    data = written(writer_json, {"b": {"a": {"b": {"a": None}, "x": 1, "y": 2}}, "x": 3, "y": 4})
    writer, reader = parse_schema(writer_json), parse_schema(reader_json)
    assert Rearranger.build(writer, reader).transcode(data) == oracle(writer, reader, data)


def test_unions_alike_on_both_sides_are_rearranged():
    # ["null", "string"] unchanged: the resolver pairs the unions branch by branch
    writer = parse_schema(
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "note", "type": ["null", "string"]}, {"name": "gone", "type": "long"}],
        }
    )
    reader = parse_schema(
        {"type": "record", "name": "R", "fields": [{"name": "note", "type": ["null", "string"]}]}
    )
    rearranger = Rearranger.build(writer, reader)
    assert rearranger is not None
    for datum in ({"note": None, "gone": 1}, {"note": "n", "gone": 2}):
        data = written(writer.to_dict(), datum)
        assert rearranger.transcode(data) == oracle(writer, reader, data)


def test_a_rearranger_is_only_made_by_build():
    with pytest.raises(TypeError, match="Rearranger.build"):
        Rearranger()
    with pytest.raises(TypeError, match="Rearranger.build"):
        Rearranger.__new__(Rearranger).transcode(b"\x00")


def test_counts_calls_and_bytes_and_calls_the_watcher_once():
    writer, reader = parse_schema(ORDER_V1), parse_schema(ORDER_V2)
    rearranger = Rearranger.build(writer, reader)
    data = written(ORDER_V1, ORDER)
    fired = []
    rearranger.watch(2 * len(data), lambda: fired.append(rearranger.work))
    rearranger.transcode(data)
    assert (rearranger.calls, rearranger.work, fired) == (1, len(data), [])
    rearranger.transcode(data)
    assert fired == [2 * len(data)]
    rearranger.transcode(data)
    assert (rearranger.calls, rearranger.work, fired) == (3, 3 * len(data), [2 * len(data)])
    with pytest.raises(DecodeError):
        rearranger.transcode(data[:-1])
    assert (rearranger.calls, rearranger.work) == (3, 3 * len(data))  # failed calls do not count
    # a watcher that raises does not fail the call that reached the threshold
    rearranger.watch(rearranger.work + 1, lambda: 1 / 0)
    assert rearranger.transcode(data) == oracle(writer, reader, data)


@pytest.mark.parametrize("text", ["", "0"])
def test_a_string_read_as_a_decimal_keeps_its_bytes(text):
    # string -> bytes moves the bytes as they are; the reader's decimal reads
    # them as resolution does (b"" is 0, as b"\x00" would be; b"0" is 4.8,
    # past the precision: read, not refused; fastavro gives the bytes
    # themselves, its logical types following the writer's schema)
    writer_json = {"type": "record", "name": "Rec", "fields": [{"name": "id", "type": "string"}]}
    reader_json = {
        "type": "record",
        "name": "Rec",
        "fields": [
            {"name": "id", "type": {"type": "bytes", "logicalType": "decimal", "precision": 1, "scale": 1}}
        ],
    }
    writer, reader = parse_schema(writer_json), parse_schema(reader_json)
    raw = written(writer_json, {"id": text})
    moved = Rearranger.build(writer, reader).transcode(raw)
    assert moved == raw
    resolved = fastavro.schemaless_reader(
        io.BytesIO(raw), fastavro.parse_schema(writer_json), fastavro.parse_schema(reader_json)
    )
    assert resolved == {"id": text.encode()}
    assert Interpreter(reader).load(moved) == ResolvingInterpreter(writer, reader).load(raw)


def test_a_pair_copied_whole_still_has_its_fields_moves():
    # one-pass readers ask for a field's move by its pair: a pair whose bytes
    # are the reader's as written is copied whole, and still answers
    schema = parse_schema(
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "a", "type": "long"}, {"name": "s", "type": "string"}],
        }
    )
    rearranger = Rearranger.build(schema, schema)
    assert rearranger.field_move(("R", "R"), 0) >= 0
    assert rearranger.field_move(("R", "R"), 1) >= 0
    with pytest.raises(IndexError):
        rearranger.field_move(("R", "R"), 2)
    data = written(
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "a", "type": "long"}, {"name": "s", "type": "string"}],
        },
        {"a": 1, "s": "x"},
    )
    assert rearranger.transcode(data) == data
