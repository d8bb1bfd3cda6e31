"""roastedavro.fastavro's container files against fastavro's, byte for byte.

* ``writer`` writes the bytes fastavro writes for the same records, schema
  (plain or parsed), codec, compression level, metadata, sync marker and
  sync interval (random schemas and records), appends as fastavro appends,
  and leaves what fastavro leaves when a record cannot be written.
* roastedavro's own ``write_file`` and ``FileWriter`` (records one by one or
  many) end their blocks where fastavro does; ``dump_next`` takes records
  from an iterator up to the sync interval.
* ``reader`` and ``block_reader`` have fastavro's attributes and blocks, and
  raise fastavro's kinds of errors (SchemaResolutionError, UnicodeDecodeError,
  EOFError), naming the block and offset.
* Streams are read no further than the file: a stream that cannot seek
  keeps what follows the file; a seekable one is left after the header.
"""

from __future__ import annotations

import copy
import io
import itertools
import os
import sys

import fastavro
import fastavro.write
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import roastedavro.fastavro as dropin
from roastedavro._tier0 import Interpreter
from roastedavro.avro.parse import parse_schema
from roastedavro.codec import AvroCodec
from roastedavro.container import ContainerError, FileWriter, block_reader, write_file
from roastedavro.errors import DatumError
from roastedavro.flags import CompileFlags

from avro_strategies import assert_same, avro_schemas, datums
from fuzzing import examples

SYNC = b"0123456789abcdef"
CODECS = ["null", "deflate", "bzip2", "xz", "snappy", "zstandard", "lz4"]
ITEM = {
    "type": "record",
    "name": "Item",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}},
        {"name": "price", "type": ["null", "double"]},
    ],
}
ITEMS = [
    {
        "id": i * 7919,
        "name": "n" * (i % 17),
        "tags": ["t"] * (i % 3),
        "kind": "ABC"[i % 3],
        "price": None if i % 4 else i / 8,
    }
    for i in range(700)
]
FEW = settings(
    max_examples=examples(60), deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)


def fastavros(*args, **options) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, *args, **options)
    return out.getvalue()


def ours(*args, **options) -> bytes:
    out = io.BytesIO()
    dropin.writer(out, *args, **options)
    return out.getvalue()


# -- writing: fastavro's bytes --------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("sync_interval", [-1, 0, 1, 50, 999, 16000])
def test_the_bytes_are_fastavros_for_every_codec_and_interval(codec, sync_interval):
    for schema in (ITEM, fastavro.parse_schema(ITEM)):
        options = dict(codec=codec, sync_interval=sync_interval, sync_marker=SYNC)
        assert ours(schema, ITEMS, **options) == fastavros(schema, ITEMS, **options)


@pytest.mark.parametrize(
    "codec,level",
    [("deflate", 1), ("deflate", 9), ("zstandard", 1), ("zstandard", 19), ("bzip2", 1), ("xz", 0)],
)
def test_compression_levels_as_fastavro_takes_them(codec, level):
    options = dict(codec=codec, codec_compression_level=level, sync_marker=SYNC)
    assert ours(ITEM, ITEMS, **options) == fastavros(ITEM, ITEMS, **options)


def test_the_header_is_fastavros_metadata_and_schema_as_given():
    # the caller's metadata first (its order), then avro.codec and avro.schema,
    # a key of the caller's keeping its place; the schema as given, doc and all
    schema = {**ITEM, "doc": "an item", "x-custom": [1, 2]}
    for metadata in (
        None,
        {},
        {"b": "1", "a": "2"},
        {"avro.codec": "x", "k": "v"},
        {"avro.schema": "x", "avro.extra": "y"},
    ):
        options = dict(codec="deflate", sync_marker=SYNC)
        assert ours(schema, ITEMS[:3], metadata=copy.deepcopy(metadata), **options) == fastavros(
            schema, ITEMS[:3], metadata=copy.deepcopy(metadata), **options
        )
    # a name as the schema, and a list of schemas parsed by fastavro
    assert ours("string", ["a", "b"], sync_marker=SYNC) == fastavros("string", ["a", "b"], sync_marker=SYNC)
    union = fastavro.parse_schema([ITEM, {"type": "record", "name": "Other", "fields": []}])
    assert ours(union, ITEMS[:3] + [{}], sync_marker=SYNC) == fastavros(
        union, ITEMS[:3] + [{}], sync_marker=SYNC
    )
    assert b"__fastavro" not in ours(union, [{}], sync_marker=SYNC)


@st.composite
def files(draw):
    schema = draw(avro_schemas(max_depth=2))
    records = draw(st.lists(datums(schema, max_depth=2), max_size=25))
    codec = draw(st.sampled_from(CODECS))
    sync_interval = draw(st.sampled_from([0, 1, 5, 40, 300, 16000]))
    return schema, records, codec, sync_interval


@pytest.mark.fuzz
@FEW
@given(files())
def test_random_schemas_and_records_give_fastavros_bytes(case):
    schema, records, codec, sync_interval = case
    options = dict(codec=codec, sync_interval=sync_interval, sync_marker=SYNC, metadata={"origin": "tests"})
    expected = fastavros(copy.deepcopy(schema), copy.deepcopy(records), **options)
    assert ours(copy.deepcopy(schema), copy.deepcopy(records), **options) == expected
    # read back as fastavro reads it (NaN included: equal as values, not as objects)
    assert_same(list(dropin.reader(io.BytesIO(expected))), list(fastavro.reader(io.BytesIO(expected))))


def test_roastedavros_own_writer_ends_blocks_where_fastavro_does():
    for sync_interval in (0, 1, 64, 1000, 16000):
        out = io.BytesIO()
        write_file(out, ITEM, ITEMS, sync_interval=sync_interval)
        counts = [block.count for block in block_reader(io.BytesIO(out.getvalue()))]
        theirs = fastavros(ITEM, ITEMS, sync_interval=sync_interval)
        assert counts == [block.num_records for block in fastavro.block_reader(io.BytesIO(theirs))]


@pytest.mark.parametrize("tier", ["interpreter", "compiled"])
def test_dump_next_takes_values_from_an_iterator_up_to_the_limit(tier):
    schema = {"type": "array", "items": "long"}
    writer = (
        Interpreter(parse_schema(schema), CompileFlags())
        if tier == "interpreter"
        else AvroCodec(schema, compile="eager")._writer()
    )
    values = [[1], [], [1, 2, 3], [4]]  # 3, 1, 5 and 3 bytes
    taken = iter(values)
    assert writer.dump_next(taken, 4) == (b"\x02\x02\x00\x00", 2)
    assert writer.dump_next(taken, 1) == (b"\x06\x02\x04\x06\x00", 1)
    assert writer.dump_next(taken, 0) == (b"\x02\x08\x00", 1)  # at least one value
    assert writer.dump_next(taken, 100) == (b"", 0)  # the end
    assert writer.dump_next(iter(values), 10**9) == (writer.dump_block(values), 4)
    with pytest.raises(TypeError, match="an iterator"):
        writer.dump_next(values, 100)
    # on an error, the values written before it are given back, not lost
    rescued = []
    with pytest.raises(DatumError):
        writer.dump_next(iter([[1], [2, 3], ["x"], [4]]), 100, rescued)
    assert rescued == [(b"\x02\x02\x00\x04\x04\x06\x00", 2)]

    def failing():
        yield [1]
        raise KeyError("the source failed")

    rescued = []
    with pytest.raises(KeyError, match="the source failed"):
        writer.dump_next(failing(), 100, rescued)
    assert rescued == [(b"\x02\x02\x00", 1)]
    with pytest.raises(KeyError):
        writer.dump_next(failing(), 100)


def test_file_writer_ends_blocks_as_fastavro_given_records_one_by_one_or_many():
    def blocks(data):
        return [
            (block.num_records, block.bytes_.getvalue()) for block in fastavro.block_reader(io.BytesIO(data))
        ]

    for sync_interval in (0, 1, 64, 1000, 16000):
        out = io.BytesIO()
        with FileWriter(out, ITEM, sync_interval=sync_interval, sync_marker=SYNC) as writer:
            for record in ITEMS[:150]:
                writer.write(record)
            writer.write_many(iter(ITEMS[150:500]))
            writer.write_many(ITEMS[500:520])
            for record in ITEMS[520:]:
                writer.write(record)
        assert blocks(out.getvalue()) == blocks(fastavros(ITEM, ITEMS, sync_interval=sync_interval))


def test_file_writer_keeps_the_records_given_before_an_error():
    def failing():
        yield from ITEMS[:150]
        raise KeyError("the source failed")

    out = io.BytesIO()
    writer = FileWriter(out, ITEM, sync_interval=1000, sync_marker=SYNC)
    with pytest.raises(KeyError):
        writer.write_many(failing())
    with pytest.raises(DatumError):
        writer.write_many(ITEMS[150:170] + [{**ITEMS[0], "id": "not a long"}])
    writer.write_many(ITEMS[170:])
    writer.close()
    assert list(fastavro.reader(io.BytesIO(out.getvalue()))) == ITEMS
    assert [block.num_records for block in fastavro.block_reader(io.BytesIO(out.getvalue()))] == [
        block.num_records
        for block in fastavro.block_reader(io.BytesIO(fastavros(ITEM, ITEMS, sync_interval=1000)))
    ]


def test_records_that_end_in_an_error_leave_fastavros_blocks_before_it():
    def records():
        yield from ITEMS[:300]
        raise KeyError("the source failed")

    theirs, mine = io.BytesIO(), io.BytesIO()
    with pytest.raises(KeyError):
        fastavro.writer(theirs, ITEM, records(), sync_interval=500, sync_marker=SYNC)
    with pytest.raises(KeyError):
        dropin.writer(mine, ITEM, records(), sync_interval=500, sync_marker=SYNC)
    assert mine.getvalue() == theirs.getvalue()


def test_a_record_that_cannot_be_written_leaves_fastavros_blocks_before_it():
    bad = ITEMS[:300] + [{**ITEMS[0], "id": "not a long"}] + ITEMS[300:]
    theirs, mine = io.BytesIO(), io.BytesIO()
    with pytest.raises(TypeError):
        fastavro.writer(theirs, ITEM, bad, sync_interval=500, sync_marker=SYNC)
    with pytest.raises(TypeError) as raised:
        dropin.writer(mine, ITEM, bad, sync_interval=500, sync_marker=SYNC)
    assert "on field id" in str(raised.value)
    assert mine.getvalue() == theirs.getvalue()


def test_writer_refuses_what_fastavro_refuses():
    with pytest.raises(ValueError, match="argument should be an iterable, not dict"):
        dropin.writer(io.BytesIO(), ITEM, ITEMS[0])
    out = io.BytesIO()
    with pytest.raises(ValueError, match="unrecognized codec: lzma"):
        dropin.writer(out, ITEM, ITEMS, codec="lzma")
    assert out.getvalue() == b""
    with pytest.raises(fastavro.validation.ValidationError):
        dropin.writer(io.BytesIO(), ITEM, [{"id": 1}], validator=True)


# -- appending ---------------------------------------------------------------------------


def test_appending_to_a_stream_is_fastavros_byte_for_byte():
    for codec in ("null", "deflate", "snappy"):
        theirs, mine = io.BytesIO(), io.BytesIO()
        for out, write in ((theirs, fastavro.writer), (mine, dropin.writer)):
            write(out, ITEM, ITEMS[:100], codec=codec, sync_interval=300, sync_marker=SYNC)
            # appended with the file's schema, codec and marker: the ones given are not used
            write(
                out,
                {"type": "record", "name": "Other", "fields": [{"name": "id", "type": "long"}]},
                ITEMS[100:],
                codec="xz",
                sync_interval=300,
            )
        assert mine.getvalue() == theirs.getvalue()
        assert list(dropin.reader(io.BytesIO(mine.getvalue()))) == ITEMS


def test_appending_follows_fastavros_rules(tmp_path):
    path = tmp_path / "items.avro"
    with open(path, "wb") as fo:
        dropin.writer(fo, ITEM, ITEMS[:10])
    with open(path, "ab") as fo, pytest.raises(ValueError, match=r"'a\+' mode, not just 'a'"):
        dropin.writer(fo, ITEM, ITEMS[10:20])
    with open(path, "a+b") as fo:
        dropin.writer(fo, None, ITEMS[10:20])
    with open(path, "rb") as fo:
        assert list(fastavro.reader(fo)) == ITEMS[:20]
    # a stream at its start is a new file, written over what it held
    out = io.BytesIO(path.read_bytes())
    dropin.writer(out, "long", list(range(1000)))
    out.seek(0)
    assert list(dropin.reader(out)) == list(range(1000))
    # a stream that cannot seek is written as a new file
    pipe = NoSeekWriter()
    dropin.writer(pipe, ITEM, ITEMS[:5], sync_marker=SYNC)
    assert pipe.data == fastavros(ITEM, ITEMS[:5], sync_marker=SYNC)


class NoSeekWriter:
    def __init__(self):
        self.data = b""

    def write(self, data):
        self.data += bytes(data)

    def flush(self):
        pass


# -- reading: fastavro's attributes, blocks and errors -------------------------------------


@pytest.mark.parametrize("codec", CODECS)
def test_reader_attributes_are_fastavros(codec):
    data = fastavros(ITEM, ITEMS[:50], codec=codec, metadata={"k": "v"})
    for reader_schema in (None, ITEM, fastavro.parse_schema(ITEM)):
        theirs = fastavro.reader(io.BytesIO(data), reader_schema)
        mine = dropin.reader(io.BytesIO(data), reader_schema)
        for name in ("writer_schema", "reader_schema", "metadata", "codec", "_schema", "_header"):
            assert getattr(mine, name) == getattr(theirs, name), name
        with pytest.warns(DeprecationWarning):
            assert mine.schema == mine._schema
        # one iterator: next() and for go on from each other
        assert next(mine) == next(theirs)
        assert list(mine) == list(theirs)


def test_a_long_schema_reads_back_in_fastavros_form():
    schema = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "a", "type": {"type": "long"}},
            {"name": "b", "type": {"type": "string", "logicalType": "uuid"}},
        ],
    }
    data = fastavros(schema, [])
    assert dropin.reader(io.BytesIO(data)).writer_schema == fastavro.reader(io.BytesIO(data)).writer_schema


@pytest.mark.parametrize("codec", ["null", "deflate", "zstandard", "lz4"])
def test_blocks_are_fastavros(codec):
    data = fastavros(ITEM, ITEMS, codec=codec, sync_interval=2000)
    theirs = list(fastavro.block_reader(io.BytesIO(data), ITEM))
    mine = list(dropin.block_reader(io.BytesIO(data), ITEM))
    assert len(mine) == len(theirs) > 3
    for block, expected in zip(mine, theirs):
        for name in ("num_records", "offset", "size", "codec", "writer_schema", "reader_schema"):
            assert getattr(block, name) == getattr(expected, name), name
        assert block.bytes_.getvalue() == expected.bytes_.getvalue()
        assert list(block) == list(expected)
    # fastavro's Writer.write_block takes them (bytes_ is a BytesIO of the data)
    out = io.BytesIO()
    concatenated = fastavro.write.Writer(out, ITEM, codec="deflate")
    for block in mine + mine:
        concatenated.write_block(block)
    concatenated.flush()
    assert list(dropin.reader(io.BytesIO(out.getvalue()))) == ITEMS + ITEMS


ENUM_ABC = {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}


def test_unreadable_data_is_fastavros_schema_resolution_error():
    data = fastavros(ENUM_ABC, ["A", "C"])
    reader = dropin.reader(io.BytesIO(data), {**ENUM_ABC, "symbols": ["A", "B"]})
    with pytest.raises(
        fastavro.read.SchemaResolutionError,
        match=r"C not found in reader symbol list E, known symbols: \['A', 'B'\]",
    ) as raised:
        list(reader)
    assert isinstance(raised.value, ContainerError) and raised.value.block == 0
    # a union's branch the reader has not
    data = fastavros(["int", "float"], [1, 1.5])
    with pytest.raises(fastavro.read.SchemaResolutionError):
        list(dropin.reader(io.BytesIO(data), "int"))
    # a pair that cannot be read at all: when the records are read, as fastavro
    reader = dropin.reader(io.BytesIO(fastavros("string", ["x"])), "int")
    with pytest.raises(fastavro.read.SchemaResolutionError):
        list(reader)
    empty = dropin.reader(io.BytesIO(fastavros("string", [])), "int")
    assert list(empty) == list(fastavro.reader(io.BytesIO(fastavros("string", [])), "int"))


def test_text_that_is_not_utf8_is_a_unicode_decode_error():
    data = fastavros("bytes", [b"ok", "かわいい".encode("cp932")])
    with pytest.raises(UnicodeDecodeError) as raised:
        list(dropin.reader(io.BytesIO(data), "string"))
    assert isinstance(raised.value, ContainerError) and "block 0" in str(raised.value)
    assert raised.value.object == "かわいい".encode("cp932")
    with pytest.raises(UnicodeDecodeError):
        list(fastavro.reader(io.BytesIO(data), "string"))


def test_records_cut_short_are_an_eof_error():
    # a block that claims more records than its data holds
    data = bytearray(fastavros("long", [1, 2, 3], sync_marker=SYNC))
    count_at = data.index(SYNC) + len(SYNC)
    assert data[count_at] == 6
    data[count_at] = 8
    for read in (dropin.reader, fastavro.reader):
        with pytest.raises(EOFError):
            list(read(io.BytesIO(bytes(data))))
    # a file cut in a block
    data = fastavros("long", list(range(100)), sync_marker=SYNC)
    with pytest.raises(EOFError) as raised:
        list(dropin.reader(io.BytesIO(data[:-30])))
    assert isinstance(raised.value, ContainerError) and raised.value.block == 0


def test_header_errors_are_fastavros():
    with pytest.raises(ValueError, match="cannot read header - is it an avro file?"):
        dropin.reader(io.BytesIO(b""))
    with pytest.raises(ValueError):
        dropin.reader(io.BytesIO(b"PK\x03\x04 not avro"))
    data = fastavros(ITEM, ITEMS[:5], codec="deflate")
    unknown = io.BytesIO(data.replace(b"\x0edeflate", b"\x16unsupported"))
    reader = dropin.reader(unknown)  # as fastavro: an error when reading
    assert reader.codec == "unsupported"
    with pytest.raises(ValueError, match="Unrecognized codec"):
        list(reader)


# -- streams ----------------------------------------------------------------------------


class OnlyRead:
    """A stream with nothing but read(n) (a socket's, an HTTP body's)."""

    def __init__(self, data):
        self._data = io.BytesIO(data)

    def read(self, size):
        return self._data.read(size)


def test_a_stream_is_read_no_further_than_the_file():
    data = fastavros(ITEM, ITEMS, codec="deflate", sync_interval=500)
    # (the records are taken one by one: bytes after a file are read as a block)
    stream = OnlyRead(data + b"after the file")
    assert list(itertools.islice(dropin.reader(stream), len(ITEMS))) == ITEMS
    assert stream.read(100) == b"after the file"
    # a pipe (buffered, cannot seek): the bytes after the file stay the pipe's
    assert len(data) < 60_000  # the pipe holds it all
    read_end, write_end = os.pipe()
    os.write(write_end, data + b"tail")
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        assert list(itertools.islice(dropin.reader(pipe), len(ITEMS))) == ITEMS
        assert pipe.read() == b"tail"


def test_a_seekable_stream_is_left_after_the_header_as_fastavro_leaves_it(tmp_path):
    data = fastavros(ITEM, ITEMS, metadata={"k": "v" * 100})
    theirs, mine = io.BytesIO(data), io.BytesIO(data)
    fastavro.reader(theirs)
    dropin.reader(mine)
    assert mine.tell() == theirs.tell() > 0
    path = tmp_path / "items.avro"
    path.write_bytes(data)
    with open(path, "rb") as fo:
        dropin.block_reader(fo)
        assert fo.tell() == theirs.tell()


def test_optional_codecs_missing_say_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "lz4", None)
    monkeypatch.setitem(sys.modules, "lz4.block", None)
    with pytest.raises(ValueError, match="lz4 codec is supported but you need to install"):
        dropin.writer(io.BytesIO(), ITEM, ITEMS, codec="lz4")


@pytest.mark.parametrize(
    "schema, record",
    [
        (
            {
                "type": "record",
                "name": "R",
                "fields": [{"name": "a", "type": "int"}, {"name": "a", "type": "int"}],
            },
            {"a": 1},
        ),
        (
            {"type": "record", "name": "R", "aliases": "old", "fields": [{"name": "a", "type": "int"}]},
            {"a": 1},
        ),
        ({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int", "order": "any"}]}, {"a": 1}),
        (
            {
                "type": "record",
                "name": "R",
                "fields": [
                    {
                        "name": "a",
                        "type": {"type": "fixed", "name": "F", "size": 12, "logicalType": "duration"},
                    }
                ],
            },
            {"a": b"\x01" * 12},
        ),
    ],
)
def test_files_whose_schema_only_fastavro_takes_are_read_as_fastavro_reads_them(schema, record):
    written = io.BytesIO()
    fastavro.writer(written, fastavro.parse_schema(schema, _force=True), [record])
    data = written.getvalue()
    expected = list(fastavro.reader(io.BytesIO(data)))
    assert list(dropin.reader(io.BytesIO(data))) == expected
    assert [list(block) for block in dropin.block_reader(io.BytesIO(data))] == [expected]
    # and appended to by the drop-in's writer
    appended = io.BytesIO(data)
    appended.seek(0, io.SEEK_END)
    dropin.writer(appended, fastavro.parse_schema(schema, _force=True), [record])
    assert list(fastavro.reader(io.BytesIO(appended.getvalue()))) == expected * 2
