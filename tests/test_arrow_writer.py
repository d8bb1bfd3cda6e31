"""write_table's column writer (roastedavro._columnwriter): Arrow buffers
written as Avro records without Python values. Its bytes are checked
against fastavro's writer on the same records, and against the Python-values
path (already checked against fastavro in test_arrow.py) file for file,
sync marker and block ends included; its errors name the field path."""

from __future__ import annotations

import datetime
import io
import struct
import uuid
from decimal import Decimal

import fastavro
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

import roastedavro.arrow as arrow_module  # noqa: E402
from avro_strategies import datums, in_tuple_notation, record_schemas  # noqa: E402
from roastedavro.arrow import arrow_schema, read_table, write_table  # noqa: E402
from roastedavro.arrow._writer import row_source  # noqa: E402
from roastedavro.avro import parse_schema  # noqa: E402
from roastedavro.errors import DatumError, SchemaError  # noqa: E402
from arrow_values import fastavro_records, has_nan, served_by_tier0  # noqa: E402, F401 (a fixture)
from test_arrow import ALL, RECORDS, _block_data, avro_file  # noqa: E402

MARKER = bytes(range(16))
UTC = datetime.timezone.utc


# read and written through tier 0 (arrow_values.served_by_tier0)
pytestmark = pytest.mark.usefixtures("served_by_tier0")


def record_of(*fields: tuple[str, object]) -> dict:
    return {"type": "record", "name": "R", "fields": [{"name": n, "type": t} for n, t in fields]}


def written(table, schema, **options) -> bytes:
    out = io.BytesIO()
    write_table(table, out, schema, sync_marker=MARKER, **options)
    return out.getvalue()


def written_by_values(table, schema, **options) -> bytes:
    """The file the Python-values path writes (the column writer turned off)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(arrow_module, "row_source", lambda schema, arrow: None)
        return written(table, schema, **options)


def assert_column_written(table, schema, **options) -> bytes:
    """The column writer writes ``table``, and the same file as the values path."""
    assert row_source(parse_schema(schema), table.schema) is not None
    data = written(table, schema, **options)
    assert data == written_by_values(table, schema, **options)
    return data


def fastavro_bytes(schema, records) -> bytes:
    parsed = fastavro.parse_schema(schema)
    out = io.BytesIO()
    for one in records:
        fastavro.schemaless_writer(out, parsed, one)
    return out.getvalue()


@pytest.mark.parametrize("codec", ["null", "deflate"])
def test_every_type_read_and_written_again_gives_the_same_bytes(codec):
    records = RECORDS
    source = avro_file(ALL, records, codec, sync_interval=300)
    table = read_table(source)
    data = assert_column_written(table, ALL, codec=codec, sync_interval=300)
    # the oracle: fastavro's bytes for the same records, and its blocks
    assert _block_data(data) == _block_data(source.getvalue()) == fastavro_bytes(ALL, records)
    blocks = [b.num_records for b in fastavro.block_reader(io.BytesIO(data))]
    assert blocks == [b.num_records for b in fastavro.block_reader(io.BytesIO(source.getvalue()))]
    assert len(blocks) > 3


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(st.data())
def test_random_schemas_written_from_their_tables_give_fastavros_bytes(data):
    schema = data.draw(record_schemas(max_depth=2))
    parsed = parse_schema(schema)
    try:
        arrow = arrow_schema(parsed)
    except SchemaError:
        assume(False)  # recursive types, decimals past 76 digits: no Arrow schema
    assume(row_source(parsed, arrow) is not None)
    records = data.draw(st.lists(datums(schema), max_size=6))
    assume(not has_nan(records))
    source = io.BytesIO()
    fastavro.writer(source, schema, [in_tuple_notation(r) for r in records], sync_interval=100)
    table = read_table(io.BytesIO(source.getvalue()))
    out = assert_column_written(table, schema, sync_interval=100)
    assert _block_data(out) == _block_data(source.getvalue())


def test_arrow_integers_of_every_width_and_their_range():
    schema = record_of(("i", "int"), ("l", "long"))
    for kind in (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32()):
        low = -(2 ** (kind.bit_width - 1)) if pa.types.is_signed_integer(kind) else 0
        high = 2 ** (kind.bit_width - (1 if pa.types.is_signed_integer(kind) else 0)) - 1
        values = [low, high, 0] if kind.bit_width < 32 or pa.types.is_signed_integer(kind) else [low, 5, 0]
        if kind == pa.int64():
            values = [-(2**31), 2**31 - 1, 7]
        table = pa.table({"i": pa.array(values, kind), "l": pa.array(values, kind)})
        data = assert_column_written(table, schema)
        assert _block_data(data) == fastavro_bytes(schema, [{"i": v, "l": v} for v in values])
    big = pa.table({"i": pa.array([1], pa.int32()), "l": pa.array([2**64 - 1], pa.uint64())})
    with pytest.raises(DatumError, match=r"^l: Number out of range for Avro long"):
        written(big, schema)
    wide = pa.table({"i": pa.array([1, 2**31], pa.int64()), "l": pa.array([1, 2], pa.int64())})
    with pytest.raises(DatumError, match=r"^i: Number out of range for Avro int .*2147483648"):
        written(wide, schema)
    unsigned = pa.table({"i": pa.array([2**32 - 1], pa.uint32()), "l": pa.array([1], pa.int8())})
    with pytest.raises(DatumError, match="^i: Number out of range"):
        written(unsigned, schema)


def test_errors_name_the_path_into_records_lists_and_maps():
    inner = {"type": "record", "name": "In", "fields": [{"name": "n", "type": "int"}]}
    schema = record_of(("a", {"type": "array", "items": inner}), ("m", {"type": "map", "values": "int"}))
    table = pa.table(
        {
            "a": pa.array([[{"n": 1}], [{"n": 2}, {"n": 2**40}]], pa.list_(pa.struct([("n", pa.int64())]))),
            "m": pa.array([[("k", 1)], [("k", 2)]], pa.map_(pa.string(), pa.int64())),
        }
    )
    with pytest.raises(DatumError) as raised:
        written(table, schema)
    assert raised.value.path == ("a", 1, "n")
    with pytest.raises(DatumError) as by_values:
        written_by_values(table, schema)
    assert by_values.value.path == raised.value.path
    bad_map = table.set_column(
        1, "m", pa.array([[("k", 1)], [("ok", 2), ("bad", 2**40)]], pa.map_(pa.string(), pa.int64()))
    )
    bad_map = bad_map.set_column(0, "a", pa.array([[], []], table.schema.field("a").type))
    with pytest.raises(DatumError) as raised:
        written(bad_map, schema)
    assert raised.value.path == ("m", "bad")


def test_a_deep_error_in_a_later_block_names_its_whole_path():
    # a map of lists of records, the bad value in a block after the first:
    # the path and message are the by-values writer's, and the column writer
    # writes the good table as it does after the error
    item = {"type": "record", "name": "Item", "fields": [{"name": "q", "type": "int"}]}
    schema = record_of(("id", "long"), ("m", {"type": "map", "values": {"type": "array", "items": item}}))
    kind = pa.map_(pa.string(), pa.list_(pa.struct([("q", pa.int64())])))
    good = [[("x", [{"q": n}, {"q": -n}])] for n in range(3000)]
    bad = good[:2500] + [[("x", [{"q": 1}]), ("y", [{"q": 2}, {"q": 3}, {"q": -(2**40)}])]] + good[2501:]
    table = pa.table({"id": pa.array(range(3000), pa.int64()), "m": pa.array(bad, kind)})
    with pytest.raises(DatumError) as raised:
        written(table, schema, sync_interval=1000)
    assert raised.value.path == ("m", "y", 2, "q")
    with pytest.raises(DatumError) as by_values:
        written_by_values(table, schema, sync_interval=1000)
    assert by_values.value.path == raised.value.path
    assert str(by_values.value) == str(raised.value)
    fine = table.set_column(1, "m", pa.array(good, kind))
    assert written(fine, schema, sync_interval=1000) == written_by_values(fine, schema, sync_interval=1000)


def test_a_null_where_the_type_has_none_is_refused_by_name():
    schema = record_of(("s", "string"), ("o", ["null", "string"]))
    table = pa.table({"s": pa.array(["a", None]), "o": pa.array([None, "b"])})
    with pytest.raises(DatumError, match=r"^s: a null where the Avro type \(string\) has no null"):
        written(table, schema)
    with pytest.raises(DatumError, match="^s: "):
        written_by_values(table, schema)
    fine = table.set_column(0, "s", pa.array(["a", "c"]))
    data = assert_column_written(fine, schema)
    assert fastavro_records(data) == [{"s": "a", "o": None}, {"s": "c", "o": "b"}]


def test_enums_from_dictionaries_and_from_strings():
    color = {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}
    schema = record_of(("c", color), ("o", ["null", "Color"]))
    # a dictionary in another order than the symbols, with indices of every width
    for index in (pa.int8(), pa.int16(), pa.int32(), pa.int64()):
        dictionary = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 0], index), ["BLUE", "RED", "GREEN"])
        optional = pa.DictionaryArray.from_arrays(pa.array([None, 2, 1, 0], index), ["BLUE", "RED", "GREEN"])
        data = assert_column_written(pa.table({"c": dictionary, "o": optional}), schema)
        assert fastavro_records(data) == [
            {"c": "BLUE", "o": None},
            {"c": "RED", "o": "GREEN"},
            {"c": "GREEN", "o": "RED"},
            {"c": "BLUE", "o": "BLUE"},
        ]
    plain = pa.table({"c": pa.array(["GREEN", "RED"]), "o": pa.array(["BLUE", None])})
    data = assert_column_written(plain, schema)
    assert fastavro_records(data) == [{"c": "GREEN", "o": "BLUE"}, {"c": "RED", "o": None}]
    unknown = pa.table({"c": pa.array(["GREEN", "PINK"]), "o": pa.array(["BLUE", None])})
    with pytest.raises(DatumError, match=r"^c: 'PINK' is not a symbol of the enum Color"):
        written(unknown, schema)
    # a symbol in the dictionary that no row uses is no error
    unused = pa.DictionaryArray.from_arrays(pa.array([1], pa.int32()), ["PINK", "RED"])
    data = assert_column_written(pa.table({"c": unused, "o": pa.array([None], pa.string())}), schema)
    assert fastavro_records(data) == [{"c": "RED", "o": None}]


def test_times_of_other_units_are_cast_and_not_rounded():
    ts_ms = {"type": "long", "logicalType": "timestamp-millis"}
    ts_us = {"type": "long", "logicalType": "timestamp-micros"}
    date = {"type": "int", "logicalType": "date"}
    t_ms = {"type": "int", "logicalType": "time-millis"}
    schema = record_of(("a", ts_ms), ("b", ts_us), ("d", date), ("t", t_ms))
    moment = datetime.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
    table = pa.table(
        {
            "a": pa.array([moment], pa.timestamp("s" if False else "us", tz="UTC")),
            "b": pa.array([moment], pa.timestamp("ms", tz="UTC")),
            "d": pa.array([datetime.date(2024, 5, 6)], pa.date64()),
            "t": pa.array([datetime.time(7, 8, 9, 123000)], pa.time64("us")),
        }
    )
    data = assert_column_written(table, schema)
    expected = {"a": moment, "b": moment, "d": datetime.date(2024, 5, 6), "t": datetime.time(7, 8, 9, 123000)}
    assert fastavro_records(data) == [expected]
    finer = table.set_column(
        0, "a", pa.array([moment.replace(microsecond=123456)], pa.timestamp("us", tz="UTC"))
    )
    with pytest.raises(ValueError, match="^a: "):
        written(finer, schema)


def test_decimals_are_fastavros_bytes():
    dec = {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 2}
    fixed = {"type": "fixed", "name": "F", "size": 16, "logicalType": "decimal", "precision": 38, "scale": 2}
    small = {"type": "fixed", "name": "S", "size": 3, "logicalType": "decimal", "precision": 6, "scale": 2}
    schema = record_of(("b", dec), ("f", fixed), ("s", ["null", small]))
    edges = [0, 1, -1, 127, 128, -128, -129, 255, -256, 32767, -32768, 10**36 - 1, -(10**36) + 1]
    values = [Decimal(v).scaleb(-2) for v in edges]
    shorts = [Decimal(v % 99999).scaleb(-2) * (1 if v >= 0 else -1) for v in edges]
    table = pa.table(
        {
            "b": pa.array(values, pa.decimal128(38, 2)),
            "f": pa.array(values, pa.decimal128(38, 2)),
            "s": pa.array(shorts, pa.decimal128(6, 2)),
        }
    )
    data = assert_column_written(table, schema)
    records = [{"b": b, "f": f, "s": s} for b, f, s in zip(values, values, shorts)]
    assert _block_data(data) == fastavro_bytes(schema, records)
    assert fastavro_records(data) == records


def test_large_types_slices_and_chunks():
    schema = record_of(
        ("s", "string"),
        ("b", "bytes"),
        ("l", {"type": "array", "items": ["null", "long"]}),
        ("m", {"type": "map", "values": {"type": "array", "items": "string"}}),
    )
    rows = [
        {
            "s": f"é{k}" * (k % 3),
            "b": bytes([k]) * (k % 4),
            "l": [k, None][: k % 3],
            "m": {f"k{j}": [f"v{k}"] * j for j in range(k % 4)},
        }
        for k in range(30)
    ]
    table = pa.table(
        {
            "s": pa.array([r["s"] for r in rows], pa.large_string()),
            "b": pa.array([r["b"] for r in rows], pa.large_binary()),
            "l": pa.array([r["l"] for r in rows], pa.large_list(pa.int64())),
            "m": pa.array([list(r["m"].items()) for r in rows], pa.map_(pa.string(), pa.list_(pa.string()))),
        }
    )
    for start, piece in [
        (7, table.slice(7, 13)),
        (0, pa.concat_tables([table.slice(0, 11), table.slice(11)])),
    ]:
        data = assert_column_written(piece, schema, sync_interval=64)
        assert fastavro_records(data) == rows[start : start + piece.num_rows]
    # a slice of the nested arrays themselves (offsets that do not start at 0)
    nested = pa.table({name: table.column(name).combine_chunks().slice(5, 10) for name in table.column_names})
    assert fastavro_records(assert_column_written(nested, schema)) == rows[5:15]


def test_dense_unions_and_null_records_and_defaults():
    point = {"type": "record", "name": "P", "fields": [{"name": "x", "type": "int"}]}
    schema = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "u", "type": ["null", "string", "long", point]},
            {"name": "p", "type": ["null", "P"]},
            {"name": "d", "type": "string", "default": "here"},
        ],
    }
    union = pa.UnionArray.from_dense(
        pa.array([0, 1, 2, 1, 0], pa.int8()),
        pa.array([0, 0, 0, 1, 1], pa.int32()),
        [
            pa.array(["a", None]),
            pa.array([5, None], pa.int64()),
            pa.array([{"x": 3}], pa.struct([("x", pa.int32())])),
        ],
        ["string", "long", "P"],
    )
    points = pa.array([{"x": 1}, None, {"x": 2}, None, {"x": 4}], pa.struct([("x", pa.int32())]))
    data = assert_column_written(pa.table({"u": union, "p": points}), schema)
    assert fastavro_records(data) == [
        {"u": "a", "p": {"x": 1}, "d": "here"},
        {"u": 5, "p": None, "d": "here"},
        {"u": {"x": 3}, "p": {"x": 2}, "d": "here"},
        {"u": None, "p": None, "d": "here"},
        {"u": None, "p": {"x": 4}, "d": "here"},
    ]
    assert _block_data(data)[:2] == b"\x02\x02"  # the string branch, then "a"'s length


def test_an_empty_table_is_a_file_of_no_records():
    schema = record_of(("x", "long"))
    data = assert_column_written(pa.table({"x": pa.array([], pa.int64())}), schema)
    assert fastavro_records(data) == []


def test_floats_and_doubles_from_either_width():
    schema = record_of(("f", "float"), ("d", "double"))
    table = pa.table({"f": pa.array([1.5, -0.25], pa.float64()), "d": pa.array([1.5, -0.25], pa.float32())})
    data = assert_column_written(table, schema)
    assert _block_data(data) == fastavro_bytes(schema, [{"f": 1.5, "d": 1.5}, {"f": -0.25, "d": -0.25}])
    too_big = table.set_column(0, "f", pa.array([1e300, 1.0]))
    with pytest.raises(DatumError, match="^f: Number out of range for Avro float"):
        written(too_big, schema)


UUID_TEXT = {"type": "string", "logicalType": "uuid"}
UUID_FIXED = {"type": "fixed", "name": "U16", "size": 16, "logicalType": "uuid"}


def test_uuids_from_text_in_every_spelling_and_from_16_bytes():
    ids = [uuid.UUID(int=k * 2**100 + 7 * k + 1) for k in range(5)]
    # the spellings uuid.UUID takes: the usual one (any case), braces, bare hex, a URN
    spelled = [str(ids[0]), str(ids[1]).upper(), "{" + str(ids[2]) + "}", ids[3].hex, ids[4].urn]
    schema = record_of(("s", UUID_TEXT), ("f", UUID_FIXED), ("n", ["null", UUID_TEXT]))
    nullable = [None, spelled[1], None, spelled[3], spelled[0]]
    for text in (pa.string(), pa.large_string()):
        table = pa.table(
            {"s": pa.array(spelled, text), "f": pa.array(spelled, text), "n": pa.array(nullable, text)}
        )
        data = assert_column_written(table, schema)
        # the oracle: fastavro writes a uuid string as given (and, 1.13, a fixed
        # uuid's 16 bytes as given)
        expected = [{"s": s, "f": u.bytes, "n": n} for s, u, n in zip(spelled, ids, nullable)]
        assert _block_data(data) == fastavro_bytes(schema, expected)
    # 16 bytes a value: fixed_size_binary(16) and Arrow's uuid type; on a
    # string, the canonical lower-case text
    raw = [u.bytes for u in ids]
    for kind in (pa.binary(16), pa.uuid()):
        column = pa.array(raw, pa.binary(16))
        if kind != column.type:
            column = pa.ExtensionArray.from_storage(kind, column)
        table = pa.table({"s": column, "f": column, "n": pa.array([None, *raw[1:]], pa.binary(16))})
        data = assert_column_written(table, schema)
        expected = [{"s": str(u), "f": u.bytes, "n": None if k == 0 else str(u)} for k, u in enumerate(ids)]
        assert _block_data(data) == fastavro_bytes(schema, expected)


@pytest.mark.parametrize("bad", ["not a uuid", "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz", ""])
@pytest.mark.parametrize("field", [UUID_TEXT, UUID_FIXED])
def test_text_that_is_no_uuid_is_refused_with_its_path(bad, field):
    schema = record_of(("u", {"type": "array", "items": field}))
    table = pa.table({"u": [[str(uuid.UUID(int=5)), bad]]})
    assert row_source(parse_schema(schema), table.schema) is not None
    with pytest.raises(DatumError, match=r"^u\[1\]: expected a UUID") as error:
        written(table, schema)
    assert error.value.path == ("u", 1)
    # the values path refuses it alike
    with pytest.raises(DatumError, match=r"^u\[1\]: expected a UUID") as error:
        written_by_values(table, schema)
    assert error.value.path == ("u", 1)


def test_a_source_given_children_that_are_no_sources_keeps_its_own():
    # (internal) the children's C array is swapped in only once they are checked
    from roastedavro import _columnwriter as cw

    struct_kind, const_kind = 8, 12
    root = cw.Source(
        struct_kind, "R", children=[cw.Source(const_kind, "default", constant=b"\x02")], names=["a"]
    )
    with pytest.raises(TypeError, match="children are Sources"):
        root.__init__(struct_kind, "R", children=["not a source"], names=["a"])
    others = [cw.Source(const_kind, "other", constant=b"REUSED") for _ in range(200)]
    root.bind(pa.array([1]))
    assert cw.RowWriter(root).encode(0, 1, 1 << 20) == (b"\x02", 1)
    del others


def test_sparse_unions_whole_and_sliced():
    point = {"type": "record", "name": "P", "fields": [{"name": "x", "type": "int"}]}
    schema = record_of(("u", ["null", "string", "long", point]))
    # each child as long as the union; row i takes child type_ids[i]'s value i
    union = pa.UnionArray.from_sparse(
        pa.array([0, 1, 2, 1, 0, 2], pa.int8()),
        [
            pa.array(["a", "x", "y", "z", None, "w"]),
            pa.array([9, 5, 9, None, 9, 9], pa.int64()),
            pa.array(
                [{"x": 0}] * 2 + [{"x": 3}] + [{"x": 0}] * 2 + [{"x": 6}], pa.struct([("x", pa.int32())])
            ),
        ],
        ["string", "long", "P"],
    )
    assert union.type.mode == "sparse"
    want = [{"u": "a"}, {"u": 5}, {"u": {"x": 3}}, {"u": None}, {"u": None}, {"u": {"x": 6}}]
    table = pa.table({"u": union})
    assert row_source(parse_schema(schema), table.schema) is not None
    assert fastavro_records(assert_column_written(table, schema)) == want
    sliced = pa.table({"u": union.slice(2, 3)})
    assert fastavro_records(assert_column_written(sliced, schema)) == want[2:5]


def _strings(offsets: list[int], data: bytes, kind=None) -> pa.Array:
    """A string array made from raw buffers, as a bad producer could hand one over."""
    kind = kind or pa.string()
    width = "q" if kind in (pa.large_string(), pa.large_binary()) else "i"
    buffers = [None, pa.py_buffer(struct.pack(f"<{len(offsets)}{width}", *offsets)), pa.py_buffer(data)]
    return pa.Array.from_buffers(kind, len(offsets) - 1, buffers)


def _dense_union(type_ids: list[int], offsets: list[int]) -> pa.Table:
    """A table of one dense union column ("string" or "long") made from raw buffers."""
    kind = pa.dense_union([pa.field("string", pa.string()), pa.field("long", pa.int64())])
    buffers = [None, pa.py_buffer(bytes(type_ids)), pa.py_buffer(struct.pack(f"<{len(offsets)}i", *offsets))]
    children = [pa.array(["a"]), pa.array([5], pa.int64())]
    return pa.table({"u": pa.UnionArray.from_buffers(kind, len(type_ids), buffers, children=children)})


def _malformed_cases() -> dict[str, tuple[dict, pa.Table]]:
    item = pa.struct([("sku", pa.string())])
    bad_text = _strings([0, 2, 4], b"ok\xff\xfe")
    # "é" is two bytes (c3 a9): whole in the data, split between two values
    split_text = _strings([0, 1, 2], "é".encode())
    return {
        "invalid UTF-8": (record_of(("s", "string")), pa.table({"s": bad_text})),
        "large, invalid UTF-8": (
            record_of(("s", "string")),
            pa.table({"s": _strings([0, 2, 4], b"ok\xff\xfe", pa.large_string())}),
        ),
        "a character split between two values": (record_of(("s", "string")), pa.table({"s": split_text})),
        "an offset past the data": (
            record_of(("s", "string")),
            pa.table({"s": _strings([0, 100, 4], b"okay")}),
        ),
        "offsets going back": (
            record_of(("s", "bytes")),
            pa.table({"s": _strings([0, 3, 1], b"abc", pa.binary())}),
        ),
        "a list past its items": (
            record_of(("l", {"type": "array", "items": "long"})),
            pa.table(
                {
                    "l": pa.ListArray.from_buffers(
                        pa.list_(pa.int64()),
                        2,
                        [None, pa.py_buffer(struct.pack("<3i", 0, 9, 3))],
                        children=[pa.array([1, 2, 3], pa.int64())],
                    )
                }
            ),
        ),
        "invalid UTF-8 in a list of records": (
            record_of(
                (
                    "l",
                    {
                        "type": "array",
                        "items": {
                            "type": "record",
                            "name": "I",
                            "fields": [{"name": "sku", "type": "string"}],
                        },
                    },
                )
            ),
            pa.table(
                {
                    "l": pa.ListArray.from_arrays(
                        pa.array([0, 1, 2], pa.int32()),
                        pa.StructArray.from_arrays([bad_text], fields=list(item)),
                    )
                }
            ),
        ),
        "invalid UTF-8 in a map's keys": (
            record_of(("m", {"type": "map", "values": "long"})),
            pa.table(
                {"m": pa.MapArray.from_arrays(pa.array([0, 2], pa.int32()), bad_text, pa.array([1, 2]))}
            ),
        ),
        "invalid UTF-8 in a union's branch": (
            record_of(("u", ["null", "string", "long"])),
            pa.table(
                {
                    "u": pa.UnionArray.from_dense(
                        pa.array([0, 1, 0], pa.int8()),
                        pa.array([0, 0, 1], pa.int32()),
                        [bad_text, pa.array([5], pa.int64())],
                        ["string", "long"],
                    )
                }
            ),
        ),
        "a dense union's offset past its branch": (
            record_of(("u", ["null", "string", "long"])),
            _dense_union([0, 1], [0, 7]),
        ),
        "a union's type id with no branch": (
            record_of(("u", ["null", "string", "long"])),
            _dense_union([0, 5], [0, 0]),
        ),
    }


MALFORMED = _malformed_cases()


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_arrow_array_is_refused_before_a_byte_is_written(case, tmp_path):
    # buffers a producer got wrong are never read past their ends, nor
    # written as strings that are not UTF-8: the table is refused whole
    schema, table = MALFORMED[case]
    with pytest.raises(pa.ArrowInvalid):
        table.validate(full=True)  # (pyarrow agrees the array is malformed)
    assert row_source(parse_schema(schema), table.schema) is not None
    path = tmp_path / "out.avro"
    # pyarrow's error, after the column's name
    with pytest.raises(pa.ArrowInvalid, match=f"^{table.column_names[0]}: "):
        write_table(table, str(path), schema)
    assert not path.exists()


@pytest.mark.parametrize("text", ["żółw", "日本語", "naïve café", "emoji 🦀", "a" * 40 + "é"])
def test_text_beyond_ascii_is_written_as_fastavro_writes_it(text):
    schema = record_of(("s", "string"), ("m", {"type": "map", "values": "string"}))
    values = [text, "plain", "", text[::-1]]
    table = pa.table(
        {
            "s": pa.array(values),
            "m": pa.array(
                [[(text, text)], [], [("k", "v")], [(text[::-1], "x")]], pa.map_(pa.string(), pa.string())
            ),
        }
    )
    data = assert_column_written(table, schema)
    assert fastavro_records(data) == [
        {"s": s, "m": dict(m)} for s, m in zip(values, table.column("m").to_pylist())
    ]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(st.binary(max_size=40), st.text(max_size=12).map(str.encode)),
        max_size=12,
    ),
    st.booleans(),
)
def test_string_bytes_are_refused_exactly_where_pyarrow_finds_them_invalid(values, large):
    # pyarrow's own full validation is the oracle for which arrays are valid
    kind = pa.large_string() if large else pa.string()
    offsets = [0]
    for value in values:
        offsets.append(offsets[-1] + len(value))
    column = _strings(offsets, b"".join(values), kind)
    table = pa.table({"s": column})
    schema = record_of(("s", "string"))
    try:
        column.validate(full=True)
    except pa.ArrowInvalid:
        with pytest.raises(pa.ArrowInvalid, match="^s: "):
            written(table, schema)
    else:
        want = [{"s": value.decode()} for value in values]
        assert fastavro_records(assert_column_written(table, schema)) == want


@pytest.mark.parametrize("count", [1, 2, 3])
def test_columns_of_nulls_inside_maps_lists_and_records_are_written(count):
    # pyarrow's view of such a column with binary for its strings can lose a
    # null-typed child's length (map<string, null> of one row, as read_table
    # makes it): the column is still validated, by pyarrow, and written
    item = {
        "type": "record",
        "name": "N",
        "fields": [{"name": "n", "type": "null"}, {"name": "s", "type": "string"}],
    }
    schema = record_of(("m", {"type": "map", "values": "null"}), ("l", {"type": "array", "items": item}))
    records = [
        {"m": {"": None, "0": None}, "l": [{"n": None, "s": "é"}, {"n": None, "s": "x"}]},
        {"m": {}, "l": [{"n": None, "s": ""}]},
        {"m": {"k": None}, "l": []},
    ][:count]
    source = io.BytesIO()
    fastavro.writer(source, schema, records, sync_interval=100)
    out = assert_column_written(read_table(io.BytesIO(source.getvalue())), schema, sync_interval=100)
    assert _block_data(out) == _block_data(source.getvalue())
    assert fastavro_records(out) == records
