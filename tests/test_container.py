"""Avro object container files: written and read against fastavro's files.

fastavro's writer and reader are the oracle here (Java's avro-tools reads and
writes files in tests/test_container_java.py): files we write must read in
fastavro to the records written, for every codec fastavro has, and files
fastavro writes must read here to what fastavro reads.
"""

from __future__ import annotations

import datetime
import io
import sys
from decimal import Decimal

import fastavro
import pytest

import roastedavro.fastavro as dropin
from roastedavro.container import (
    ContainerError,
    FileReader,
    MissingCodecError,
    append,
    block_reader,
    is_avro,
    write_file,
)

SCHEMA = {
    "type": "record",
    "name": "Reading",
    "namespace": "sensors",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "station", "type": "string"},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "value", "type": ["null", "double"]},
        {"name": "level", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}
UTC = datetime.timezone.utc
RECORDS = [
    {
        "id": number,
        "station": f"st-{number % 17}",
        "at": datetime.datetime(2026, 1, 1, tzinfo=UTC) + datetime.timedelta(seconds=number),
        "value": None if number % 5 == 0 else number / 4,
        "level": Decimal(number % 1000) / 100,
        "tags": ["a"] * (number % 3),
    }
    for number in range(3000)
]
FASTAVRO_CODECS = ["null", "deflate", "bzip2", "xz", "snappy"]  # fastavro 1.13 reads these here
CODECS = FASTAVRO_CODECS + ["zstandard"]


def ours(records=RECORDS, codec="null", **options) -> bytes:
    out = io.BytesIO()
    write_file(out, SCHEMA, records, codec, **options)
    return out.getvalue()


def theirs(records=RECORDS, codec="null", **options) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(SCHEMA), records, codec=codec, **options)
    return out.getvalue()


@pytest.mark.parametrize("codec", FASTAVRO_CODECS)
def test_fastavro_reads_our_files(codec):
    data = ours(codec=codec, sync_interval=4000)
    assert list(fastavro.reader(io.BytesIO(data))) == RECORDS
    assert sum(1 for _ in fastavro.block_reader(io.BytesIO(data))) > 5  # several blocks


@pytest.mark.parametrize("codec", FASTAVRO_CODECS)
def test_we_read_fastavros_files(codec):
    data = theirs(codec=codec, sync_interval=4000)
    assert list(FileReader(io.BytesIO(data))) == list(fastavro.reader(io.BytesIO(data)))
    # the drop-in under fastavro's names
    reader = dropin.reader(io.BytesIO(data))
    assert list(reader) == RECORDS
    assert reader.codec == codec and reader.writer_schema["name"] == "sensors.Reading"


@pytest.mark.parametrize("codec", CODECS)
def test_round_trip_every_codec(codec):
    data = ours(codec=codec, sync_interval=1000)
    reader = FileReader(io.BytesIO(data))
    assert reader.codec == codec
    assert list(reader) == RECORDS


def test_metadata_and_header():
    data = ours(metadata={"created-by": "tests"})
    assert dropin.reader(io.BytesIO(data)).metadata["created-by"] == "tests"
    assert fastavro.reader(io.BytesIO(data)).metadata["created-by"] == "tests"
    # metadata values are bytes (fastavro reads only UTF-8 ones)
    raw = ours(metadata={"raw": b"\x00\xff"})
    assert FileReader(io.BytesIO(raw)).metadata["raw"] == b"\x00\xff"
    with pytest.raises(ValueError, match="reserved"):
        ours(metadata={"avro.mine": "x"})
    assert is_avro(io.BytesIO(data)) and dropin.is_avro(io.BytesIO(data))
    assert not is_avro(io.BytesIO(b"PK\x03\x04"))


def test_append_keeps_schema_codec_and_marker(tmp_path):
    path = tmp_path / "readings.avro"
    with open(path, "wb") as fo:
        write_file(fo, SCHEMA, RECORDS[:1000], "deflate")
    header = path.read_bytes()[:200]
    with open(path, "a+b") as fo:
        append(fo, RECORDS[1000:2000])
    with open(path, "a+b") as fo:
        dropin.writer(fo, SCHEMA, RECORDS[2000:])  # fastavro's way to append
    assert path.read_bytes()[:200] == header
    with open(path, "rb") as fo:
        assert list(fastavro.reader(fo)) == RECORDS
    with open(path, "a+b") as fo, pytest.raises(ValueError, match="another schema"):
        write_file(fo, {"type": "record", "name": "Other", "fields": []}, [{}])


def test_reader_schema_resolves_each_record():
    reader_schema = {
        **SCHEMA,
        "fields": SCHEMA["fields"][:2] + [{"name": "unit", "type": "string", "default": "C"}],
    }
    data = ours()
    expected = [{"id": r["id"], "station": r["station"], "unit": "C"} for r in RECORDS]
    assert list(FileReader(io.BytesIO(data), reader_schema)) == expected
    assert list(dropin.reader(io.BytesIO(data), reader_schema)) == expected


def test_block_reader_splits_work():
    data = ours(codec="deflate", sync_interval=2000)
    blocks = list(block_reader(io.BytesIO(data)))
    theirs_blocks = list(fastavro.block_reader(io.BytesIO(data)))
    assert [block.count for block in blocks] == [block.num_records for block in theirs_blocks]
    assert sum(block.count for block in blocks) == len(RECORDS)
    # each block's offset points at its record count; its records decode on their own
    records = []
    for block in blocks:
        assert data[block.offset + len(data[block.offset : block.offset + 10]) - 10 :]  # in the file
        records += list(block)
    assert records == RECORDS
    assert [b.offset for b in blocks] == sorted(b.offset for b in blocks)


class OneWay(io.RawIOBase):
    """A stream that can only be read forward, a few bytes at a time."""

    def __init__(self, data: bytes):
        self.data, self.position = data, 0

    def readable(self):
        return True

    def readinto(self, buffer):
        size = min(len(buffer), 7, len(self.data) - self.position)
        buffer[:size] = self.data[self.position : self.position + size]
        self.position += size
        return size


def test_non_seekable_streams():
    data = ours(codec="deflate", sync_interval=3000)
    assert list(FileReader(OneWay(data))) == RECORDS


# -- damage -------------------------------------------------------------------


def test_not_a_container_file():
    with pytest.raises(ContainerError) as raised:
        FileReader(io.BytesIO(b"PK\x03\x04 not avro"))
    assert raised.value.block is None and raised.value.offset == 0
    assert "magic" in str(raised.value)
    with pytest.raises(ContainerError):
        FileReader(io.BytesIO(b""))


def test_unknown_codec():
    data = ours(codec="deflate").replace(b"\x0edeflate", b"\x0edeflat3", 1)
    with pytest.raises(ContainerError, match="unknown codec 'deflat3'"):
        FileReader(io.BytesIO(data))


def test_every_truncation_is_an_error_or_a_whole_block():
    data = ours(RECORDS[:60], codec="deflate", sync_interval=300)
    ends = {block.offset for block in block_reader(io.BytesIO(data))} | {len(data)}
    for cut in range(len(data)):
        try:
            records = list(FileReader(io.BytesIO(data[:cut])))
        except ContainerError as error:
            assert error.offset <= cut
            continue
        # only a file cut exactly between blocks reads, to the blocks it has
        assert cut in ends, cut
        assert records == RECORDS[: len(records)]


def test_damaged_sync_marker_names_block_and_offset():
    data = bytearray(ours(codec="null", sync_interval=2000))
    blocks = list(block_reader(io.BytesIO(bytes(data))))
    second = blocks[1]
    marker_at = second.offset + len(dropin_long(second.count)) + len(dropin_long(second.size)) + second.size
    data[marker_at] ^= 0xFF
    with pytest.raises(ContainerError) as raised:
        list(FileReader(io.BytesIO(bytes(data))))
    assert raised.value.block == 1 and raised.value.offset == marker_at
    assert "sync marker" in str(raised.value)


def dropin_long(value: int) -> bytes:
    from roastedavro._datum import encode_long

    return encode_long(value)


def test_damaged_block_is_skipped_on_request():
    data = bytearray(ours(codec="deflate", sync_interval=2000))
    blocks = list(block_reader(io.BytesIO(bytes(data))))
    damaged = blocks[2]
    start = damaged.offset + 6
    data[start : start + 20] = b"\xff" * 20  # inside the compressed data
    with pytest.raises(ContainerError) as raised:
        list(FileReader(io.BytesIO(bytes(data))))
    assert raised.value.block == 2
    reader = FileReader(io.BytesIO(bytes(data)), on_damage="skip")
    records = list(reader)
    lost = set(range(len(RECORDS))) - {record["id"] for record in records}
    assert len(lost) == damaged.count
    assert [skipped.block for skipped in reader.skipped] == [2]


def test_damaged_count_is_skipped_to_the_next_marker():
    data = bytearray(ours(codec="null", sync_interval=2000))
    blocks = list(block_reader(io.BytesIO(bytes(data))))
    data[blocks[1].offset] = 0x7F  # a different count: the marker after it is misplaced
    reader = FileReader(io.BytesIO(bytes(data)), on_damage="skip")
    records = list(reader)
    assert reader.skipped and reader.skipped[0].block == 1
    assert records[: blocks[0].count] == RECORDS[: blocks[0].count]
    assert records[-1] == RECORDS[-1]


def test_decompression_bombs_are_refused():
    zeros = [
        {
            "id": 0,
            "station": "x" * 100_000,
            "at": RECORDS[0]["at"],
            "value": None,
            "level": Decimal(0),
            "tags": [],
        }
    ] * 40
    for codec in CODECS:
        data = ours(zeros, codec=codec, sync_interval=10**8)
        with pytest.raises(ContainerError) as raised:
            list(FileReader(io.BytesIO(data), max_block_size=1_000_000))
        assert "max_block_size" in str(raised.value) and raised.value.block == 0, codec
        assert len(list(FileReader(io.BytesIO(data)))) == 40


def test_a_missing_codec_library_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "cramjam", None)
    # the command that works: cramjam by name, or the extra from the source tree
    # (roastedavro is not published under its name)
    with pytest.raises(MissingCodecError, match=r"pip install cramjam .*pip install '\.\[codecs\]'"):
        ours(codec="snappy")
    data = bytes(ours(codec="null")).replace(b"\x08null", b"\x0csnappy", 1)
    with pytest.raises((MissingCodecError, ContainerError)):
        list(FileReader(io.BytesIO(data)))


# -- marshmallow schemas ---------------------------------------------------------

from marshmallow import ValidationError, fields, post_load, validate  # noqa: E402

from roastedavro import CompiledSchema  # noqa: E402


class Trade(CompiledSchema):
    class Meta:
        avro_name = "Trade"

    symbol = fields.String(required=True, validate=validate.Length(min=1))
    price = fields.Float(required=True)
    size = fields.Integer(required=True)


class TradeV2(CompiledSchema):
    class Meta:
        avro_name = "Trade"

    symbol = fields.String(required=True)
    price = fields.Float(required=True)
    venue = fields.String(load_default="XNAS")

    @post_load
    def upper(self, data, **kwargs):
        return {**data, "symbol": data["symbol"].upper()}


TRADES = [{"symbol": f"s{number % 9}", "price": number / 8, "size": number} for number in range(2000)]


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy"])
def test_marshmallow_schema_writes_and_reads_files(codec):
    schema = Trade()
    out = io.BytesIO()
    schema.write_file(out, TRADES, codec, sync_interval=2000)
    data = out.getvalue()
    # fastavro reads what marshmallow dumps, as dump_compiled writes it
    assert list(fastavro.reader(io.BytesIO(data))) == schema.dump(TRADES, many=True)
    assert list(schema.read_file(io.BytesIO(data))) == schema.load(TRADES, many=True)
    assert len(list(block_reader(io.BytesIO(data)))) > 3


def test_marshmallow_files_validate_and_evolve():
    with pytest.raises(ValidationError) as raised:  # a value that cannot be written
        Trade().write_file(io.BytesIO(), TRADES[:5] + [{"symbol": "x", "size": 1}])
    assert "price" in str(raised.value.messages)
    # loading validates: a file with an empty symbol (written without marshmallow)
    bad = io.BytesIO()
    write_file(bad, Trade().avro_schema(), TRADES[:5] + [{"symbol": "", "price": 1.0, "size": 1}])
    with pytest.raises(ValidationError) as raised:
        list(Trade().read_file(io.BytesIO(bad.getvalue())))
    assert "symbol" in str(raised.value.messages)
    out = io.BytesIO()
    Trade().write_file(out, TRADES[:100])
    # a file of version 1 read by version 2: resolution, then marshmallow's load
    read = list(TradeV2().read_file(io.BytesIO(out.getvalue())))
    expected = TradeV2().load([{"symbol": t["symbol"], "price": t["price"]} for t in TRADES[:100]], many=True)
    assert read == expected and read[0]["venue"] == "XNAS" and read[1]["symbol"] == "S1"


def test_read_as_reads_the_next_blocks_as_another_schema():
    schema = {
        "type": "record",
        "name": "P",
        "fields": [{"name": "x", "type": "long"}, {"name": "y", "type": "string"}],
    }
    out = io.BytesIO()
    fastavro.writer(out, schema, [{"x": k, "y": str(k)} for k in range(4)], sync_interval=1)
    out.seek(0)
    reader = FileReader(out)
    blocks = reader.blocks()
    assert reader.decode_block(next(blocks)) == [{"x": 0, "y": "0"}]
    projected = {"type": "record", "name": "P", "fields": [{"name": "y", "type": "string"}]}
    reader.read_as(projected)
    assert reader.reader_schema.root.fields[0].name == "y"
    assert [r for block in blocks for r in reader.decode_block(block)] == [{"y": "1"}, {"y": "2"}, {"y": "3"}]
