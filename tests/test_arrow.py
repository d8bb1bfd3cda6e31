"""roastedavro.arrow: Avro container files <-> pyarrow tables.

fastavro writes the input files and reads the output files; pyarrow's own
types are the oracle of the mapping (docs/arrow.md's table). Few schemas,
varied data: the codecs are served by tier 0 here (nothing is compiled).
"""

from __future__ import annotations

import datetime
import io
import uuid
from decimal import Decimal

import fastavro
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

from arrow_values import fastavro_records, has_nan, served_by_tier0  # noqa: E402, F401 (a fixture)
from avro_strategies import datums, in_tuple_notation, record_schemas  # noqa: E402
from roastedavro.arrow import arrow_schema, iter_batches, read_table, write_table  # noqa: E402
from roastedavro.arrow._columns import column_reader  # noqa: E402
from roastedavro.avro import parse_schema  # noqa: E402
from roastedavro.container import ContainerError, FileReader, block_reader  # noqa: E402
from roastedavro.errors import DatumError, DecodeError, SchemaError, SchemaResolutionError  # noqa: E402

UTC = datetime.timezone.utc


# read and written through tier 0 (arrow_values.served_by_tier0)
pytestmark = pytest.mark.usefixtures("served_by_tier0")


POINT = {
    "type": "record",
    "name": "Point",
    "fields": [{"name": "x", "type": "long"}, {"name": "y", "type": "double"}],
}

ALL = {
    "type": "record",
    "name": "All",
    "namespace": "test.arrow",
    "fields": [
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "by", "type": "bytes"},
        {"name": "n", "type": "null"},
        {"name": "date", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tmillis", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "tmicros", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "tsmillis", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "tsmicros", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "tsnanos", "type": {"type": "long", "logicalType": "timestamp-nanos"}},
        {"name": "ltsmillis", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "ltsmicros", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "ltsnanos", "type": {"type": "long", "logicalType": "local-timestamp-nanos"}},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {
            "name": "decf",
            "type": {
                "type": "fixed",
                "name": "D8",
                "size": 8,
                "logicalType": "decimal",
                "precision": 10,
                "scale": 3,
            },
        },
        {"name": "dec40", "type": {"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 5}},
        {
            "name": "dec40f",
            "type": {
                "type": "fixed",
                "name": "D20",
                "size": 20,
                "logicalType": "decimal",
                "precision": 40,
                "scale": 0,
            },
        },
        {"name": "fx", "type": {"type": "fixed", "name": "F4", "size": 4}},
        {"name": "dur", "type": {"type": "fixed", "name": "Dur", "size": 12, "logicalType": "duration"}},
        {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "opt", "type": ["null", "string"], "default": None},
        {"name": "opt_last", "type": ["long", "null"]},
        {"name": "u3", "type": ["int", "string", POINT]},
        {"name": "unull", "type": ["null", "boolean", "bytes"]},
        {
            "name": "inner",
            "type": {
                "type": "record",
                "name": "Inner",
                "fields": [
                    {"name": "p", "type": "Point"},
                    {"name": "tags", "type": {"type": "array", "items": "string"}},
                ],
            },
        },
        {"name": "pts", "type": {"type": "array", "items": "Point"}},
        {"name": "m", "type": {"type": "map", "values": "long"}},
        {"name": "mrec", "type": {"type": "map", "values": ["null", "Point"]}},
        {"name": "opt_rec", "type": ["null", "Point"]},
        {"name": "arr_opt", "type": {"type": "array", "items": ["null", "int"]}},
    ],
}

DEC40 = Decimal("12345678901234567890123456789012345.67891")  # 40 digits


def record(k: int) -> dict:
    point = {"x": k, "y": k / 4}
    return {
        "b": k % 2 == 0,
        "i": -(2**31) + k if k % 5 == 0 else k,
        "l": 2**62 + k,
        "f": k + 0.5,
        "d": k / 3,
        "s": f"s{k}é",
        "by": bytes([k % 256]) * (k % 4),
        "n": None,
        "date": datetime.date(2024, 2, 29) + datetime.timedelta(days=k),
        "tmillis": datetime.time(12, 30, 15, (k % 1000) * 1000),
        "tmicros": datetime.time(23, 59, 59, k % 1000000),
        "tsmillis": datetime.datetime(2021, 6, 1, 8, 0, 0, (k % 1000) * 1000, tzinfo=UTC),
        "tsmicros": datetime.datetime(1969, 12, 31, 23, 59, 59, k % 1000000, tzinfo=UTC),
        "tsnanos": 1_700_000_000_123_456_789 + k,
        "ltsmillis": datetime.datetime(2000, 1, 1, 0, 0, 0, (k % 1000) * 1000),
        "ltsmicros": datetime.datetime(2030, 1, 1, 0, 0, 0, k % 1000000),
        "ltsnanos": -5 - k,
        "id": uuid.UUID(int=k * 7919),
        "dec": Decimal(k) / 100 - Decimal("1.5"),
        "decf": Decimal(-k) / 1000,
        "dec40": DEC40 if k % 2 else -DEC40 + k,
        "dec40f": Decimal(10**39 + k),
        "fx": k.to_bytes(4, "big"),
        "dur": (k.to_bytes(4, "little") * 3),
        "e": ["RED", "GREEN", "BLUE"][k % 3],
        "opt": None if k % 3 == 0 else f"o{k}",
        "opt_last": None if k % 2 else k,
        "u3": [k, f"u{k}", point][k % 3],
        "unull": [None, k % 2 == 0, b"\x00\xff"][k % 3],
        "inner": {"p": point, "tags": [f"t{j}" for j in range(k % 3)]},
        "pts": [point] * (k % 3),
        "m": {f"k{j}": j for j in range(k % 4)},
        "mrec": {"a": None, "b": point} if k % 2 else {},
        "opt_rec": None if k % 2 else point,
        "arr_opt": [None, k][: k % 3],
    }


def expected(rec: dict) -> dict:
    """A fastavro record as read_table's to_pylist() gives it (docs/arrow.md)."""
    out = dict(rec)
    out["id"] = str(rec["id"])
    out["m"] = list(rec["m"].items())
    out["mrec"] = list(rec["mrec"].items())
    out.pop("tsnanos")  # compared as ints (to_pylist of ns timestamps needs pandas)
    out.pop("ltsnanos")
    return out


def avro_file(schema: dict, records: list, codec: str = "null", **options) -> io.BytesIO:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, codec=codec, **options)
    out.seek(0)
    return out


RECORDS = [record(k) for k in range(40)]


def installed(codec: str) -> bool:
    try:
        avro_file(POINT, [{"x": 1, "y": 2.0}], codec)
    except (ValueError, ImportError, KeyError):
        return False
    return True


@pytest.mark.parametrize("codec", ["null", "deflate", "bzip2", "xz", "snappy", "zstandard", "lz4"])
def test_every_type_reads_as_fastavro_reads_it(codec):
    if not installed(codec):
        pytest.skip(f"{codec} is not installed")
    source = avro_file(ALL, RECORDS, codec, sync_interval=2000)
    table = read_table(source)
    assert table.num_rows == len(RECORDS)
    oracle = fastavro_records(source.getvalue())
    assert [row for row in table.drop_columns(["tsnanos", "ltsnanos"]).to_pylist()] == [
        expected(r) for r in oracle
    ]
    for name in ("tsnanos", "ltsnanos"):
        assert table.column(name).cast(pa.int64()).to_pylist() == [r[name] for r in oracle]


def test_the_arrow_types_are_the_documented_ones():
    point = pa.struct([pa.field("x", pa.int64(), False), pa.field("y", pa.float64(), False)])
    types = {
        "b": pa.bool_(),
        "i": pa.int32(),
        "l": pa.int64(),
        "f": pa.float32(),
        "d": pa.float64(),
        "s": pa.string(),
        "by": pa.binary(),
        "n": pa.null(),
        "date": pa.date32(),
        "tmillis": pa.time32("ms"),
        "tmicros": pa.time64("us"),
        "tsmillis": pa.timestamp("ms", tz="UTC"),
        "tsmicros": pa.timestamp("us", tz="UTC"),
        "tsnanos": pa.timestamp("ns", tz="UTC"),
        "ltsmillis": pa.timestamp("ms"),
        "ltsmicros": pa.timestamp("us"),
        "ltsnanos": pa.timestamp("ns"),
        "id": pa.string(),
        "dec": pa.decimal128(10, 2),
        "decf": pa.decimal128(10, 3),
        "dec40": pa.decimal256(40, 5),
        "dec40f": pa.decimal256(40, 0),
        "fx": pa.binary(4),
        "dur": pa.binary(12),
        "e": pa.dictionary(pa.int32(), pa.string()),
        "opt": pa.string(),
        "opt_last": pa.int64(),
        "u3": pa.dense_union(
            [
                pa.field("int", pa.int32()),
                pa.field("string", pa.string()),
                pa.field("test.arrow.Point", point),
            ],
            [0, 1, 2],
        ),
        "unull": pa.dense_union(
            [pa.field("null", pa.null()), pa.field("boolean", pa.bool_()), pa.field("bytes", pa.binary())],
            [0, 1, 2],
        ),
        "inner": pa.struct(
            [
                pa.field("p", point, False),
                pa.field("tags", pa.list_(pa.field("item", pa.string(), False)), False),
            ]
        ),
        "pts": pa.list_(pa.field("item", point, False)),
        "m": pa.map_(pa.field("key", pa.string(), False), pa.field("value", pa.int64(), False)),
        "mrec": pa.map_(pa.field("key", pa.string(), False), pa.field("value", point, True)),
        "opt_rec": point,
        "arr_opt": pa.list_(pa.field("item", pa.int32(), True)),
    }
    schema = arrow_schema(ALL)
    assert schema.names == list(types)
    for field in schema:
        assert field.type == types[field.name], field.name
        assert field.nullable == (field.name in ("n", "opt", "opt_last", "opt_rec")), field.name
    # the enum's dictionary keeps the symbols' order, every symbol included
    table = read_table(avro_file(ALL, RECORDS[:1]))
    assert table.column("e").chunk(0).dictionary.to_pylist() == ["RED", "GREEN", "BLUE"]
    assert table.schema == schema


def test_a_recursive_type_has_no_arrow_schema():
    node = {
        "type": "record",
        "name": "Node",
        "fields": [{"name": "value", "type": "int"}, {"name": "next", "type": ["null", "Node"]}],
    }
    with pytest.raises(SchemaError, match="Node contains itself"):
        arrow_schema(node)
    with pytest.raises(SchemaError, match="Node contains itself"):
        read_table(avro_file(node, [{"value": 1, "next": None}]))


def test_a_file_of_other_values_than_records_is_no_table():
    with pytest.raises(SchemaError, match="not a record"):
        read_table(avro_file({"type": "array", "items": "int"}, [[1]]))
    with pytest.raises(SchemaError, match="not a record"):
        arrow_schema("long")


def test_batches_of_batch_size_rows_across_blocks():
    points = [{"x": k, "y": k / 2} for k in range(1000)]
    source = avro_file(POINT, points, sync_interval=100)  # many small blocks
    batches = list(iter_batches(source, batch_size=300))
    assert [batch.num_rows for batch in batches] == [300, 300, 300, 100]
    assert pa.Table.from_batches(batches).to_pylist() == points
    source.seek(0)
    assert [b.num_rows for b in iter_batches(source)] == [1000]
    source.seek(0)
    assert [b.num_rows for b in iter_batches(source, batch_size=7)] == [7] * 142 + [6]
    with pytest.raises(ValueError, match="batch_size"):
        next(iter_batches(avro_file(POINT, points[:1]), batch_size=0))


def test_a_batch_cut_within_a_block_is_the_columns_own_buffers_not_a_copy():
    # a batch is cut as soon as the columns hold batch_size rows, within a
    # block: nothing is concatenated, so Arrow's memory pool is not used
    named = {
        "type": "record",
        "name": "Named",
        "fields": [{"name": "x", "type": "long"}, {"name": "name", "type": ["null", "string"]}],
    }
    rows = [{"x": k, "name": None if k % 7 == 0 else f"v{k}"} for k in range(5000)]
    source = avro_file(named, rows, sync_interval=100)
    before = pa.total_allocated_bytes()
    batches = list(iter_batches(source, batch_size=333))
    assert pa.total_allocated_bytes() == before
    assert [batch.num_rows for batch in batches] == [333] * 15 + [5]
    assert pa.Table.from_batches(batches).to_pylist() == rows


def test_the_columns_must_be_emptied_by_the_batch_they_fill():
    decoder, _ = column_reader(parse_schema(POINT), None)
    decoder.cut_every(2, lambda: None)
    data = io.BytesIO()
    fastavro.schemaless_writer(data, fastavro.parse_schema(POINT), {"x": 1, "y": 0.5})
    with pytest.raises(ValueError, match="on_full left 2 rows"):
        decoder.load_block_within(data.getvalue() * 3, 3, 100)
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        decoder.cut_every(0, lambda: None)


def test_start_and_end_read_the_blocks_that_start_in_a_byte_range():
    points = [{"x": k, "y": k / 2} for k in range(1000)]
    data = avro_file(POINT, points, sync_interval=100).getvalue()
    pieces = [
        read_table(io.BytesIO(data), start=start, end=start + 700, columns=["y"])
        for start in range(0, len(data), 700)
    ]
    assert pa.concat_tables(pieces).column("y").to_pylist() == [p["y"] for p in points]
    assert any(piece.num_rows == 0 for piece in pieces)  # a range with no block start
    assert [b.num_rows for b in iter_batches(io.BytesIO(data), start=len(data))] == []


def test_an_empty_file_is_an_empty_table_of_the_schema():
    table = read_table(avro_file(ALL, []))
    assert table.num_rows == 0 and table.schema == arrow_schema(ALL)
    table = read_table(avro_file(ALL, []), columns=["e", "i"])
    assert table.schema.names == ["e", "i"]


def _bad_text() -> bytes:
    """A file whose string field ``b`` holds bytes that are not UTF-8."""
    schema = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "a", "type": "long"},
            {"name": "bb", "type": "bytes"},
            {"name": "s", "type": "string"},
        ],
    }
    data = avro_file(schema, [{"a": k, "bb": b"\xff\xfe", "s": f"s{k}"} for k in range(5)]).getvalue()
    written, edited = b'{"name": "bb", "type": "bytes"}', b'{"name": "b", "type": "string"}'
    assert data.count(written) == 1 and len(written) == len(edited)
    return data.replace(written, edited)  # as long: the header stays whole


def test_columns_read_only_those_fields_in_their_order():
    source = avro_file(ALL, RECORDS[:10])
    table = read_table(source, columns=["u3", "i", "inner"])
    assert table.schema.names == ["u3", "i", "inner"]
    assert table.to_pylist() == [{"u3": r["u3"], "i": r["i"], "inner": r["inner"]} for r in RECORDS[:10]]
    # a field left out is skipped, not decoded: its bad text is never looked at
    damaged = _bad_text()
    assert read_table(io.BytesIO(damaged), columns=["s", "a"]).to_pylist() == [
        {"s": f"s{k}", "a": k} for k in range(5)
    ]
    with pytest.raises((ContainerError, DecodeError)):
        read_table(io.BytesIO(damaged))
    with pytest.raises(KeyError, match="no column 'nope'"):
        read_table(avro_file(ALL, RECORDS[:1]), columns=["i", "nope"])


def test_a_reader_schema_evolves_the_records_and_columns_project_it():
    writer = {
        "type": "record",
        "name": "Ev",
        "fields": [{"name": "id", "type": "int"}, {"name": "s", "type": "string"}],
    }
    reader = {
        "type": "record",
        "name": "Ev",
        "fields": [
            {"name": "id", "type": "long"},  # promoted
            {"name": "s", "type": "string"},
            {"name": "added", "type": ["null", "string"], "default": None},
            {"name": "count", "type": "int", "default": 7},
        ],
    }
    source = avro_file(writer, [{"id": k, "s": str(k)} for k in range(3)])
    table = read_table(source, reader_schema=reader)
    assert table.schema.field("id").type == pa.int64()
    assert table.to_pylist() == [{"id": k, "s": str(k), "added": None, "count": 7} for k in range(3)]
    source.seek(0)
    assert read_table(source, columns=["count", "id"], reader_schema=reader).to_pylist() == [
        {"count": 7, "id": k} for k in range(3)
    ]


def test_a_damaged_file_is_the_library_s_error():
    data = bytearray(avro_file(POINT, [{"x": k, "y": 1.0} for k in range(100)], "deflate").getvalue())
    header_end = data.index(b"\x00", 40)  # somewhere in the first block's data
    data[header_end + 40] ^= 0xFF
    with pytest.raises(ContainerError) as error:
        read_table(io.BytesIO(bytes(data)))
    assert error.value.block == 0
    with pytest.raises(ContainerError):  # cut short
        read_table(io.BytesIO(bytes(data[: len(data) - 30])))
    # the reader's bounds apply: a block larger than max_block_size decompresses to
    big = avro_file(POINT, [{"x": k, "y": 1.0} for k in range(1000)], "deflate").getvalue()
    with pytest.raises(ContainerError, match="max_block_size"):
        read_table(io.BytesIO(big), max_block_size=1000)
    with pytest.raises(TypeError, match="on_damage"):
        read_table(io.BytesIO(big), on_damage="skip")


def _block_data(data: bytes) -> bytes:
    """The decompressed data of a file's blocks, one after another."""
    out = b""
    for block in block_reader(io.BytesIO(data)):
        out += bytes(block._reader.decompress(block))
    return out


@pytest.mark.parametrize("codec", ["null", "deflate"])
def test_avro_arrow_avro_gives_the_same_bytes(codec):
    source = avro_file(ALL, RECORDS, codec)
    table = read_table(source)
    out = io.BytesIO()
    write_table(table, out, ALL, codec=codec)
    original, written = fastavro_records(source.getvalue()), fastavro_records(out.getvalue())
    assert written == original
    assert _block_data(out.getvalue()) == _block_data(source.getvalue())
    parsed = fastavro.parse_schema(ALL)
    for before, after in zip(original, written):
        one, two = io.BytesIO(), io.BytesIO()
        fastavro.schemaless_writer(one, parsed, before)
        fastavro.schemaless_writer(two, parsed, after)
        assert one.getvalue() == two.getvalue()
    assert fastavro.reader(io.BytesIO(out.getvalue())).metadata["avro.codec"] == codec


def test_the_compiled_codec_gives_the_same_table_and_bytes(monkeypatch):
    # the one schema compiled here (a few seconds): the rest run on tier 0
    monkeypatch.setenv("ROASTEDAVRO_COMPILE", "eager")
    source = avro_file(ALL, RECORDS, "deflate")
    table = read_table(source)
    oracle = fastavro_records(source.getvalue())
    assert table.drop_columns(["tsnanos", "ltsnanos"]).to_pylist() == [expected(r) for r in oracle]
    out = io.BytesIO()
    write_table(table, out, ALL, codec="deflate")
    assert _block_data(out.getvalue()) == _block_data(source.getvalue())


def test_write_table_with_a_schema_checks_its_columns():
    table = pa.table({"x": pa.array([1, 2], pa.int64()), "y": [0.5, 1.5]})
    out = io.BytesIO()
    write_table(table, out, POINT)
    assert fastavro_records(out.getvalue()) == [{"x": 1, "y": 0.5}, {"x": 2, "y": 1.5}]
    with pytest.raises(ValueError, match="field 'y' has no column"):
        write_table(table.select(["x"]), io.BytesIO(), POINT)
    with pytest.raises(ValueError, match="column 'z' is no field"):
        write_table(table.append_column("z", pa.array([1, 2])), io.BytesIO(), POINT)
    # a field with a default needs no column
    with_default = {**POINT, "fields": [*POINT["fields"], {"name": "z", "type": "int", "default": 3}]}
    out = io.BytesIO()
    write_table(table, out, with_default)
    assert fastavro_records(out.getvalue())[0] == {"x": 1, "y": 0.5, "z": 3}


def test_write_table_derives_an_avro_schema_from_the_arrow_one(tmp_path):
    moment = datetime.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=UTC)
    table = pa.table(
        {
            "i8": pa.array([1, None], pa.int8()),
            "u32": pa.array([2**32 - 1, 0], pa.uint32()),
            "f": pa.array([1.5, 2.5], pa.float32()),
            "s": pa.array(["a", "b"], pa.large_string()),
            "bin": pa.array([b"x", b""], pa.binary()),
            "fx": pa.array([b"ab", b"cd"], pa.binary(2)),
            "dec": pa.array([Decimal("1.23"), Decimal("-4.56")], pa.decimal128(5, 2)),
            "day": pa.array([datetime.date(2020, 1, 1), None], pa.date32()),
            "ts": pa.array([moment, moment], pa.timestamp("ms", tz="UTC")),
            "local": pa.array([datetime.datetime(2020, 1, 1), None], pa.timestamp("us")),
            "t": pa.array([datetime.time(1, 2, 3, 4000), None], pa.time32("ms")),
            "color": pa.array(["red", "blue"]).dictionary_encode(),
            "tags": pa.array([["a"], []], pa.list_(pa.string())),
            "attrs": pa.array([[("k", 1)], []], pa.map_(pa.string(), pa.int64())),
            "point": pa.array(
                [{"x": 1, "y": 2.0}, None], pa.struct([("x", pa.int64()), ("y", pa.float64())])
            ),
        }
    )
    path = tmp_path / "derived.avro"
    write_table(table, str(path), codec="deflate")
    with open(path, "rb") as fo:
        reader = fastavro.reader(fo)
        fields = {f["name"]: f["type"] for f in reader.writer_schema["fields"]}
        rows = list(reader)
    assert (
        fields["i8"] == ["null", "int"]
        and fields["u32"] == ["null", "long"]
        and fields["f"] == ["null", "float"]
    )
    assert fields["dec"][1] == {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2}
    assert fields["fx"][1] == {"type": "fixed", "name": "fx", "size": 2}
    assert fields["ts"][1] == {"type": "long", "logicalType": "timestamp-millis"}
    assert fields["local"][1] == {"type": "long", "logicalType": "local-timestamp-micros"}
    assert fields["color"][1] == {"type": "enum", "name": "color", "symbols": ["red", "blue"]}
    assert fields["point"][1]["type"] == "record" and fields["point"][1]["name"] == "point"
    assert rows[0] == {
        "i8": 1,
        "u32": 2**32 - 1,
        "f": 1.5,
        "s": "a",
        "bin": b"x",
        "fx": b"ab",
        "dec": Decimal("1.23"),
        "day": datetime.date(2020, 1, 1),
        "ts": moment,
        "local": datetime.datetime(2020, 1, 1),
        "t": datetime.time(1, 2, 3, 4000),
        "color": "red",
        "tags": ["a"],
        "attrs": {"k": 1},
        "point": {"x": 1, "y": 2.0},
    }
    assert rows[1]["i8"] is None and rows[1]["point"] is None and rows[1]["color"] == "blue"
    # read back: the same table, but for the types Avro holds more widely
    back = read_table(str(path))
    assert back.column("color").to_pylist() == ["red", "blue"]
    assert back.column("tags").to_pylist() == [["a"], []]
    assert back.column("point").to_pylist() == [{"x": 1, "y": 2.0}, None]


NESTED = {
    "type": "record",
    "name": "Outer",
    "fields": [
        {"name": "k", "type": "int"},
        {
            "name": "r",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "In",
                    "fields": [
                        {"name": "u", "type": ["int", "string"]},
                        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
                        {"name": "m", "type": {"type": "map", "values": "int"}},
                        {"name": "a", "type": {"type": "array", "items": "int"}},
                        {"name": "empty", "type": {"type": "record", "name": "Empty", "fields": []}},
                    ],
                },
            ],
        },
        {"name": "lu", "type": {"type": "array", "items": ["int", "string", "null"]}},
    ],
}


def test_slices_and_chunks_of_a_table_are_written_as_their_rows():
    # a null record holding a union, an enum, a map, an array and an empty record
    rows = [
        {
            "k": k,
            "r": None
            if k % 2
            else {
                "u": k if k % 3 else "x",
                "e": "AB"[k % 4 // 2],
                "m": {"a": k},
                "a": [k] * (k % 3),
                "empty": {},
            },
            "lu": [k, "s", None][: k % 4],
        }
        for k in range(12)
    ]
    table = read_table(avro_file(NESTED, rows))
    assert table.to_pylist()[:2] == [
        {"k": 0, "r": {"u": "x", "e": "A", "m": [("a", 0)], "a": [], "empty": {}}, "lu": []},
        {"k": 1, "r": None, "lu": [1]},
    ]
    for start, piece in [(3, table.slice(3, 6)), (0, pa.concat_tables([table.slice(0, 5), table.slice(5)]))]:
        for written in (piece, piece.combine_chunks()):
            out = io.BytesIO()
            write_table(written, out, NESTED)
            assert fastavro_records(out.getvalue()) == rows[start : start + piece.num_rows]


def test_what_cannot_be_written_or_read_is_named():
    source = avro_file(POINT, [{"x": 1, "y": 2.0}])
    unreadable = {"type": "record", "name": "Point", "fields": [{"name": "z", "type": "string"}]}
    with pytest.raises(SchemaResolutionError, match="'z' has no default"):
        read_table(source, reader_schema=unreadable)
    with pytest.raises(SchemaError, match="'my col' is not a valid field name"):
        write_table(pa.table({"my col": [1]}), io.BytesIO())
    with pytest.raises(SchemaError, match="h: Avro has no type for Arrow's halffloat"):
        write_table(pa.table({"h": pa.array([1], pa.float16())}), io.BytesIO())
    with pytest.raises(DatumError, match="x"):
        write_table(pa.table({"x": ["not a long"], "y": [1.0]}), io.BytesIO(), POINT)


def test_a_decimal_with_more_digits_than_its_precision_is_refused_not_rounded():
    wide = {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 2}
    schema = {"type": "record", "name": "Dec", "fields": [{"name": "amount", "type": wide}]}
    data = avro_file(schema, [{"amount": Decimal("1234567890123.45")}]).getvalue()
    written, edited = b'"precision": 20', b'"precision": 10'
    assert data.count(written) == 1
    # the library reads the 15 digits exactly; decimal128(10, 2) cannot hold them
    with pytest.raises(ValueError, match="amount: cannot be held as Arrow's decimal128"):
        read_table(io.BytesIO(data.replace(written, edited)))


def test_decimals_read_into_buffers_are_fastavros_values_and_bounded_by_precision():
    # bytes of every length, fixed wider than Arrow's 16 bytes (sign-extended),
    # 256-bit decimals; the largest magnitude of the precision reads, one more refuses
    fixed20 = {
        "type": "fixed",
        "name": "F20",
        "size": 20,
        "logicalType": "decimal",
        "precision": 38,
        "scale": 3,
    }
    schema = {
        "type": "record",
        "name": "Decs",
        "fields": [
            {"name": "b", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
            {"name": "f", "type": ["null", fixed20]},
            {"name": "w", "type": {"type": "bytes", "logicalType": "decimal", "precision": 60, "scale": 0}},
        ],
    }
    unscaled = [0, 1, -1, 127, 128, -128, -129, 255, -256, 10**9 - 1, -(10**9) + 1]
    rows = [
        {
            "b": Decimal(v).scaleb(-2),
            "f": None if k % 4 == 3 else Decimal(v * 10**28 + k).scaleb(-3),
            "w": Decimal(v * 10**50 - k),
        }
        for k, v in enumerate(unscaled)
    ]
    source = avro_file(schema, rows)
    assert column_reader(parse_schema(schema), None) is not None
    table = read_table(source)
    assert table.to_pylist() == rows == fastavro_records(source.getvalue())
    assert table.schema.field("w").type == pa.decimal256(60, 0)
    edge = {**schema, "fields": schema["fields"][:1]}
    assert read_table(avro_file(edge, [{"b": Decimal(10**9 - 1).scaleb(-2)}])).column("b")[
        0
    ].as_py() == Decimal("9999999.99")
    # one more digit than the precision, as a writer that ignored it would write it
    over = avro_file(
        {**edge, "fields": [{"name": "b", "type": {**edge["fields"][0]["type"], "precision": 10}}]},
        [{"b": Decimal(10**9).scaleb(-2)}],
    ).getvalue()
    over = over.replace(b'"precision": 10', b'"precision":  9')  # the header keeps its length
    with pytest.raises(ValueError, match="^b: cannot be held as Arrow's decimal128"):
        read_table(io.BytesIO(over))


def test_a_dense_union_keeps_its_branch_when_written():
    # a long that fits an int: only the Arrow union's type code says it is a long
    union = pa.UnionArray.from_dense(
        pa.array([0, 1, 1], pa.int8()),
        pa.array([0, 0, 1], pa.int32()),
        [pa.array(["a"]), pa.array([5, 6], pa.int64())],
        ["string", "long"],
    )
    schema = {"type": "record", "name": "U", "fields": [{"name": "u", "type": ["string", "int", "long"]}]}
    out = io.BytesIO()
    write_table(pa.table({"u": union}), out, schema)
    assert _block_data(out.getvalue()) == b"\x00\x02a" + b"\x04\x0a" + b"\x04\x0c"


def test_uuid_on_fixed_and_big_decimal_read_as_text_and_back():
    schema = {
        "type": "record",
        "name": "T",
        "fields": [
            {"name": "id", "type": {"type": "fixed", "name": "U16", "size": 16, "logicalType": "uuid"}},
            {"name": "big", "type": {"type": "bytes", "logicalType": "big-decimal"}},
        ],
    }
    ids = [uuid.UUID(int=k * 2**100 + k) for k in range(3)]
    # fastavro 1.13 does not convert these logical types: their bytes are written
    rows = [
        {"id": ids[k].bytes, "big": b"\x02\x7b" + bytes([k * 2])}  # unscaled 123, scale k: zigzag varint
        for k in range(3)
    ]
    source = avro_file(schema, rows)
    table = read_table(source)
    assert table.schema.field("id").type == pa.string() and table.schema.field("big").type == pa.string()
    assert table.to_pylist() == [{"id": str(ids[k]), "big": str(Decimal(123).scaleb(-k))} for k in range(3)]
    out = io.BytesIO()
    write_table(table, out, schema)
    assert _block_data(out.getvalue()) == _block_data(source.getvalue())


def test_urls_open_through_fsspec(tmp_path):
    try:
        import fsspec  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install fsspec"):
            read_table("s3://bucket/file.avro")
        return
    url = f"file://{tmp_path}/x.avro"
    write_table(pa.table({"x": pa.array([1], pa.int64()), "y": [2.0]}), url, POINT)
    assert read_table(url).to_pylist() == [{"x": 1, "y": 2.0}]


def test_a_failed_write_leaves_no_partial_file(tmp_path):
    # the second batch holds a value an Avro int cannot: the file is not
    # left with the header and the first block, and a file already there
    # stays as it was
    schema = {"type": "record", "name": "I", "fields": [{"name": "i", "type": "int"}]}
    good = pa.table({"i": pa.array([1, 2], pa.int64())})
    bad = pa.Table.from_batches(
        [*good.to_batches(), *pa.table({"i": pa.array([2**40], pa.int64())}).to_batches()]
    )
    target = tmp_path / "out.avro"
    with pytest.raises(DatumError):
        write_table(bad, target, schema)
    assert list(tmp_path.iterdir()) == []
    write_table(good, target, schema)
    before = target.read_bytes()
    with pytest.raises(DatumError):
        write_table(bad, str(target), schema, sync_interval=1)
    assert target.read_bytes() == before
    assert list(tmp_path.iterdir()) == [target]
    assert fastavro_records(before) == [{"i": 1}, {"i": 2}]
    # through a URL the same
    pytest.importorskip("fsspec")
    with pytest.raises(DatumError):
        write_table(bad, f"file://{tmp_path}/url.avro", schema)
    assert list(tmp_path.iterdir()) == [target]
    # a file object stays the caller's: what was written is there, it is not closed
    out = io.BytesIO()
    with pytest.raises(DatumError):
        write_table(bad, out, schema, sync_interval=1)
    assert not out.closed and out.getvalue().startswith(b"Obj\x01")


def test_a_union_value_keeps_the_branch_it_was_written_in():
    # 5 written in the long branch of ["string", "int", "long"] (the byte
    # fastavro writes for the int branch changed to the long's): a chooser
    # would put it back in the int branch; the table keeps the long one
    schema = {
        "type": "record",
        "name": "U",
        "fields": [
            {"name": "u", "type": ["string", "int", "long"]},
            {"name": "many", "type": {"type": "array", "items": ["float", "double"]}},
        ],
    }
    data = avro_file(schema, [{"u": 5, "many": [1.5]}]).getvalue()
    written = b"\x02\x0a\x02\x02"  # the int branch, 5, an array of one item in the double branch
    assert data.count(written) == 1
    in_long = data.replace(written, b"\x04\x0a\x02\x02")  # the long branch
    assert fastavro_records(in_long) == [{"u": 5, "many": [1.5]}]
    table = read_table(io.BytesIO(in_long))
    assert table.column("u").chunk(0).type_codes.to_pylist() == [2]
    assert table.column("many").chunk(0).values.type_codes.to_pylist() == [1]
    out = io.BytesIO()
    write_table(table, out, schema)
    assert _block_data(out.getvalue()) == _block_data(in_long)
    # read as a reader schema's union: the reader's branch the writer's is read as
    reader = {
        "type": "record",
        "name": "U",
        "fields": [
            {"name": "u", "type": ["long", "int", "string"]},
            {"name": "many", "type": {"type": "array", "items": ["double", "float"]}},
        ],
    }
    evolved = read_table(io.BytesIO(in_long), reader_schema=reader)
    assert evolved.column("u").chunk(0).type_codes.to_pylist() == [0]
    assert evolved.column("many").chunk(0).values.type_codes.to_pylist() == [0]
    assert evolved.to_pylist() == [{"u": 5, "many": [1.5]}]


# every type whose Arrow values are the Avro ones as stored: read straight
# into Arrow buffers (decimals and uuids are converted from Python values)
AS_STORED = {
    **ALL,
    "fields": [f for f in ALL["fields"] if f["name"] not in ("id", "dec", "decf", "dec40", "dec40f")],
}


def as_stored(rec: dict) -> dict:
    return {f["name"]: rec[f["name"]] for f in AS_STORED["fields"]}


def test_types_as_stored_are_read_straight_into_arrow_buffers():
    assert column_reader(parse_schema(AS_STORED), None) is not None
    assert column_reader(parse_schema(ALL), None) is not None
    big = {
        "type": "record",
        "name": "B",
        "fields": [{"name": "b", "type": {"type": "bytes", "logicalType": "big-decimal"}}],
    }
    assert column_reader(parse_schema(big), None) is None  # its Arrow text is the Decimal's
    records = [as_stored(record(k)) for k in range(300)]
    source = avro_file(AS_STORED, records, "deflate", sync_interval=3000)
    table = read_table(source)
    oracle = fastavro_records(source.getvalue())
    wanted = [expected({**rec, "id": None}) for rec in oracle]
    for row in wanted:
        row.pop("id")
    assert table.drop_columns(["tsnanos", "ltsnanos"]).to_pylist() == wanted
    assert table.column("tsnanos").cast(pa.int64()).to_pylist() == [rec["tsnanos"] for rec in oracle]
    # the same table the records' Python values make (a reader schema, even
    # the writer's own, reads them so)
    source.seek(0)
    assert table.equals(read_table(source, reader_schema=AS_STORED))
    # columns asked for, in their order; the others skipped
    source.seek(0)
    picked = read_table(source, columns=["u3", "b", "mrec"])
    assert picked.column_names == ["u3", "b", "mrec"]
    assert picked.equals(table.select(["u3", "b", "mrec"]))
    # batches cut across blocks, and the same bytes written back
    source.seek(0)
    sizes = [batch.num_rows for batch in iter_batches(source, batch_size=70)]
    assert sizes == [70, 70, 70, 70, 20]
    out = io.BytesIO()
    write_table(table, out, AS_STORED, codec="deflate")
    assert _block_data(out.getvalue()) == _block_data(source.getvalue())


def test_uuids_read_into_buffers_are_the_record_readers_text():
    fixed = {"type": "fixed", "name": "U16", "size": 16, "logicalType": "uuid"}
    schema = {
        "type": "record",
        "name": "Ids",
        "fields": [
            {"name": "s", "type": {"type": "string", "logicalType": "uuid"}},
            {"name": "f", "type": ["null", fixed]},
        ],
    }
    ids = [uuid.UUID(int=k * 0x1234567890ABCDEF1234567890ABCDEF % 2**128) for k in range(6)]
    # the canonical text in either case, and other spellings uuid.UUID takes
    texts = [str(ids[0]), str(ids[1]).upper(), "{" + str(ids[2]) + "}", ids[3].hex, ids[4].urn, str(ids[5])]
    rows = [{"s": text, "f": None if k % 3 == 2 else ids[k].bytes} for k, text in enumerate(texts)]
    data = avro_file(schema, rows).getvalue()  # fastavro writes the text as given
    assert column_reader(parse_schema(schema), None) is not None
    table = read_table(io.BytesIO(data))
    assert table.column("s").to_pylist() == [str(i) for i in ids]
    assert table.column("f").to_pylist() == [None if k % 3 == 2 else str(ids[k]) for k in range(6)]
    assert table.equals(read_table(io.BytesIO(data), reader_schema=schema))
    assert table.column("s").to_pylist() == [str(r["s"]) for r in fastavro_records(data)]
    # text that is no uuid: the record reader's error, at the same offset
    bad = avro_file(schema, [{"s": "not-a-uuid", "f": None}]).getvalue()
    with pytest.raises(ContainerError) as by_columns:
        read_table(io.BytesIO(bad))
    with pytest.raises(ContainerError) as by_records:
        list(FileReader(io.BytesIO(bad)))
    assert "not a valid UUID" in str(by_columns.value)
    assert str(by_columns.value) == str(by_records.value)


def test_bytes_read_into_arrow_buffers_are_checked_as_the_records_reader_checks_them():
    schema = {"type": "record", "name": "T", "fields": [{"name": "s", "type": "string"}]}
    data = avro_file(schema, [{"s": "ok"}, {"s": "xy"}]).getvalue()
    bad = data.replace(b"\x04xy", b"\x04\xffy")
    with pytest.raises(ContainerError) as ours:
        read_table(io.BytesIO(bad))
    with pytest.raises(ContainerError) as records:
        list(FileReader(io.BytesIO(bad)))
    assert (str(ours.value), ours.value.offset) == (str(records.value), records.value.offset)
    assert "invalid UTF-8" in str(ours.value)
    # a block that ends before its records do
    cut = data.replace(b"\x04\x0c\x04ok\x04xy", b"\x04\x0c\x04ok\x0cxy")
    with pytest.raises(ContainerError) as ours:
        read_table(io.BytesIO(cut))
    with pytest.raises(ContainerError) as records:
        list(FileReader(io.BytesIO(cut)))
    assert str(ours.value) == str(records.value)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(st.data())
def test_random_schemas_read_into_buffers_equal_the_tables_of_their_python_values(data):
    schema = data.draw(record_schemas(max_depth=2))
    parsed = parse_schema(schema)
    try:
        arrow_schema(parsed)
    except SchemaError:
        assume(False)  # recursive types, decimals past 76 digits: no Arrow schema
    assume(column_reader(parsed, None) is not None)
    records = data.draw(st.lists(datums(schema), max_size=6))
    assume(not has_nan(records))
    source = io.BytesIO()
    # the schema as drawn in the header (fastavro writes its parsed form, which
    # may define a named type more than once)
    fastavro.writer(source, schema, [in_tuple_notation(r) for r in records], sync_interval=200)
    source.seek(0)
    table = read_table(source)
    source.seek(0)
    assert table.equals(read_table(source, reader_schema=schema))
    assert table.num_rows == len(records)


def test_to_pandas_and_to_polars_hold_the_tables_columns():
    pd = pytest.importorskip("pandas", reason="to_pandas needs pandas")
    from roastedavro.arrow import to_pandas, to_polars

    source = avro_file(POINT, [{"x": k, "y": k / 2} for k in range(5)])
    frame = to_pandas(source)
    assert list(frame["x"]) == [0, 1, 2, 3, 4]
    assert isinstance(frame["y"].dtype, pd.ArrowDtype)
    source.seek(0)
    assert list(to_pandas(source, columns=["y"]).columns) == ["y"]
    pl = pytest.importorskip("polars", reason="to_polars needs polars")
    source.seek(0)
    polars_frame = to_polars(source)
    assert isinstance(polars_frame, pl.DataFrame)
    assert polars_frame["y"].to_list() == [0.0, 0.5, 1.0, 1.5, 2.0]


def test_damaged_bytes_read_into_buffers_are_errors_never_crashes():
    # bytes changed at random past the header: each read gives a table or the
    # library's error (a crash would end the test process)
    import random

    records = [as_stored(record(k)) for k in range(60)]
    data = avro_file(AS_STORED, records, sync_interval=1500).getvalue()
    header = len(avro_file(AS_STORED, []).getvalue())
    draw = random.Random(20261128)
    for _ in range(400):
        damaged = bytearray(data)
        for _ in range(draw.randint(1, 4)):
            damaged[draw.randrange(header, len(damaged))] = draw.randrange(256)
        try:
            read_table(io.BytesIO(bytes(damaged)))
        except (ContainerError, DecodeError):
            pass


@pytest.mark.parametrize("reader_schema", [None, ALL], ids=["buffers", "python-values"])
def test_a_null_records_fields_that_are_not_nullable_hold_valid_zeros(reader_schema):
    # as in the tables pyarrow builds: the record's validity hides them, and
    # Parquet's writer (which refuses nulls in a non-nullable field) takes the
    # table (a reader schema, even the writer's own, reads through Python values)
    pq = pytest.importorskip("pyarrow.parquet")
    table = read_table(avro_file(ALL, RECORDS), columns=["opt_rec", "inner"], reader_schema=reader_schema)
    records = table.column("opt_rec").combine_chunks()
    assert records.null_count == 20
    assert [records.field(i).null_count for i in range(2)] == [0, 0]
    assert records.field(0).to_pylist()[1] == 0  # record 1 is null: x is a zero under it
    out = io.BytesIO()
    pq.write_table(table, out)
    assert pq.read_table(out).equals(table)


def test_validity_starts_at_the_first_null_of_each_batch():
    # a column's validity is kept from its first null on (the values before
    # it valid); every batch starts without one
    schema = {
        "type": "record",
        "name": "V",
        "fields": [
            {"name": "s", "type": ["null", "string"]},
            {
                "name": "r",
                "type": ["null", {"type": "record", "name": "In", "fields": [{"name": "x", "type": "int"}]}],
            },
        ],
    }
    records = [
        {"s": None if k in (70, 71, 150) else f"s{k}", "r": None if k == 199 else {"x": k}}
        for k in range(200)
    ]
    source = avro_file(schema, records, sync_interval=500)
    batches = list(iter_batches(source, batch_size=64))
    assert [b.num_rows for b in batches] == [64, 64, 64, 8]
    assert [b.column(0).null_count for b in batches] == [0, 2, 1, 0]
    assert [b.column(1).null_count for b in batches] == [0, 0, 0, 1]
    assert [row for b in batches for row in b.to_pylist()] == records
    for batch in batches:
        batch.validate(full=True)


def test_a_column_given_children_that_are_no_columns_keeps_its_own():
    # (internal) the children's C array is swapped in only once they are checked
    from roastedavro import _columns as cc

    struct_kind, int64_kind = 10, 3
    root = cc.Column(struct_kind, children=[cc.Column(int64_kind)])  # the child held by root alone
    with pytest.raises(TypeError, match="children are Columns"):
        root.__init__(struct_kind, children=["not a column"])
    others = [cc.Column(int64_kind) for _ in range(200)]  # where a freed child's memory would go
    cc.BlockReader(root, 1, 64, 1 << 20).load_block_within(b"\x54", 1, 0)
    assert [other.length for other in others] == [0] * 200  # 42 went into root's own child


def test_a_list_or_map_column_without_its_children_is_refused():
    # (internal) a list's item column and a map's key and value columns are
    # read from the C array without a check per item
    from roastedavro import _columns as cc

    list_kind, map_kind, string_kind = 11, 12, 6
    with pytest.raises(ValueError, match="with 0 children"):
        cc.Column(list_kind)
    with pytest.raises(ValueError, match="with 1 children"):
        cc.Column(map_kind, children=[cc.Column(string_kind)])
    assert cc.Column(map_kind, children=[cc.Column(string_kind), cc.Column(string_kind)]).kind == map_kind


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    values=st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), max_size=70),
    batch_size=st.integers(1, 30),
)
def test_validity_bitmaps_for_any_pattern_of_nulls(values, batch_size):
    # the bitmap is packed eight flags at a time, then the tail one by one
    schema = {"type": "record", "name": "N", "fields": [{"name": "x", "type": ["null", "long"]}]}
    source = avro_file(schema, [{"x": v} for v in values], sync_interval=64)
    batches = list(iter_batches(source, batch_size=batch_size))
    got = [row["x"] for batch in batches for row in batch.to_pylist()]
    assert got == values
    for batch in batches:
        batch.validate(full=True)
        column = batch.column(0)
        assert column.null_count == sum(v is None for v in column.to_pylist())
