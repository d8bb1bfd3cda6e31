"""Container files that are damaged or hostile: every damage a ContainerError
naming the block and offset, nothing appended after damage lost silently,
memory bounded by max_block_size and the block, and the item budget held
across a file's blocks.

The hostile files are built by hand here; fastavro and Java (avro-tools) read
the files that should be whole.
"""

from __future__ import annotations

import io
import json
import tracemalloc

import fastavro
import pytest

import java_tools
from roastedavro._datum import encode_long
from roastedavro.container import ContainerError, FileReader, append, block_reader, write_file
from roastedavro.flags import CompileFlags

CODECS = ["null", "deflate", "bzip2", "xz", "snappy", "zstandard"]
SYNC = bytes(range(16))
LONGS = {"type": "record", "name": "R", "fields": [{"name": "i", "type": "long"}]}
EMPTY = {"type": "record", "name": "E", "fields": []}
NULLS = {"type": "record", "name": "N", "fields": [{"name": "n", "type": {"type": "array", "items": "null"}}]}
avro_tools = java_tools.avro_tools


def header(schema, codec="null", sync=SYNC) -> bytes:
    entries = {"avro.schema": json.dumps(schema).encode(), "avro.codec": codec.encode()}
    out = [b"Obj\x01", encode_long(len(entries))]
    for key, value in entries.items():
        out += [encode_long(len(key)), key.encode(), encode_long(len(value)), value]
    return b"".join(out) + b"\x00" + sync


def block(count: int, data: bytes, sync=SYNC) -> bytes:
    return encode_long(count) + encode_long(len(data)) + data + sync


def longs_file(count=300, codec="null", sync_interval=100) -> bytes:
    out = io.BytesIO()
    write_file(out, LONGS, [{"i": i} for i in range(count)], codec, sync_interval=sync_interval)
    return out.getvalue()


def peak(function):
    """What ``function`` returns and the peak of Python allocations during it."""
    tracemalloc.start()
    try:
        result = function()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# -- the item budget holds per file ------------------------------------------------


def test_empty_records_are_paid_for_across_blocks():
    # 36 blocks of a million empty records each: 816 bytes. Each block alone
    # is within a message's budget (0 bytes + item_allowance); the file is not
    data = header(EMPTY) + block(1_000_000, b"") * 36
    assert len(data) < 875
    with pytest.raises(ContainerError) as raised:
        sum(1 for _ in FileReader(io.BytesIO(data)))
    assert raised.value.block == 1 and "item budget" in str(raised.value)
    assert "item_allowance (1000000)" in str(raised.value)


def test_budget_counts_bytes_read_plus_the_allowance():
    flags = CompileFlags(item_allowance=1000)
    # empty records within the allowance, over several blocks, read (Java
    # writes such blocks: a count and 0 bytes)
    data = header(EMPTY) + block(400, b"") * 2 + block(200, b"")
    assert len(list(FileReader(io.BytesIO(data), flags=flags))) == 1000
    assert sum(1 for _ in fastavro.reader(io.BytesIO(data))) == 1000
    with pytest.raises(ContainerError, match="item budget") as raised:
        list(FileReader(io.BytesIO(data + block(1, b"")), flags=flags))
    assert raised.value.block == 3
    # arrays of nulls: each block's bytes add to the budget, its items take from it
    record = encode_long(300) + b"\x00"  # one array of 300 nulls: 3 bytes
    nulls = header(NULLS) + block(1, record) * 3
    assert [len(r["n"]) for r in FileReader(io.BytesIO(nulls), flags=flags)] == [300] * 3
    with pytest.raises(ContainerError, match="item budget") as raised:
        list(FileReader(io.BytesIO(nulls + block(1, record)), flags=flags))
    assert raised.value.block == 3


def test_written_file_of_many_empty_records_reads():
    # fastavro (as Java) ends a block at a size in bytes: empty records make
    # one block of a count and 0 bytes
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(EMPTY), [{}] * 200_000)
    blocks = list(block_reader(io.BytesIO(out.getvalue())))
    assert [(b.count, b.size) for b in blocks] == [(200_000, 0)]
    assert sum(1 for _ in FileReader(io.BytesIO(out.getvalue()))) == 200_000


# -- skip mode and appending to damaged files ------------------------------------


def test_skip_mode_reads_every_whole_block_after_a_damaged_size():
    data = bytearray(longs_file())
    blocks = list(block_reader(io.BytesIO(bytes(data))))
    # as fastavro cuts them: 82, 50, 50, 50, 50 and 18 records
    assert [block.count for block in blocks] == [82, 50, 50, 50, 50, 18]
    damaged = blocks[1]
    # the size grows to take in the next blocks: they are whole and are read
    size_at = damaged.offset + len(encode_long(damaged.count))
    grown = encode_long(damaged.size + 300)
    assert len(grown) == len(encode_long(damaged.size))
    data[size_at : size_at + len(grown)] = grown
    with pytest.raises(ContainerError) as raised:
        list(FileReader(io.BytesIO(bytes(data))))
    assert raised.value.block == 1
    reader = FileReader(io.BytesIO(bytes(data)), on_damage="skip")
    ids = [record["i"] for record in reader]
    lost = set(range(blocks[0].count, blocks[0].count + blocks[1].count))
    assert ids == [i for i in range(300) if i not in lost]
    assert [(s.block, s.resumed) for s in reader.skipped] == [(1, blocks[2].offset)]


def test_skip_mode_after_a_cut_short_block_that_others_appended_to():
    # fastavro appends to a file whose last block was cut short (it does not
    # check): the first appended block starts inside the cut block's claimed
    # bytes, with no marker before it, and is lost, but not silently; every
    # block after it is read
    data = longs_file()
    blocks = list(block_reader(io.BytesIO(data)))
    out = io.BytesIO(data[:-30])
    out.seek(0, io.SEEK_END)
    fastavro.writer(out, None, [{"i": 1000 + i} for i in range(300)], sync_interval=100)
    reader = FileReader(io.BytesIO(out.getvalue()), on_damage="skip")
    ids = [record["i"] for record in reader]
    alone = io.BytesIO()
    fastavro.writer(alone, LONGS, [{"i": 1000 + i} for i in range(300)], sync_interval=100)
    first_appended = next(fastavro.block_reader(io.BytesIO(alone.getvalue()))).num_records
    whole = sum(b.count for b in blocks[:-1])
    assert 0 < first_appended < 300
    assert ids == list(range(whole)) + list(range(1000 + first_appended, 1300))
    assert [s.block for s in reader.skipped] == [len(blocks) - 1]


@pytest.mark.parametrize("cut", [1, 10, 17, 30, 60])
def test_appending_to_a_cut_short_file_is_an_error(tmp_path, cut):
    path = tmp_path / "cut.avro"
    data = longs_file()
    path.write_bytes(data[:-cut])
    # the block that the cut falls in
    cut_block = max(
        block.number for block in block_reader(io.BytesIO(data)) if block.offset < len(data) - cut
    )
    with open(path, "a+b") as fo, pytest.raises(ContainerError) as raised:
        append(fo, [{"i": 1000}])
    assert raised.value.block == cut_block
    assert "cannot append to a damaged file" in str(raised.value)
    assert "repair=True" in str(raised.value)
    assert path.read_bytes() == data[:-cut]  # nothing written
    with open(path, "a+b") as fo, pytest.raises(ContainerError):
        write_file(fo, LONGS, [{"i": 1000}])  # fastavro's way to append


@pytest.mark.parametrize("codec", CODECS)
def test_repair_truncates_to_the_last_whole_block(tmp_path, avro_tools, codec):
    path = tmp_path / "cut.avro"
    data = longs_file(codec=codec)
    last = list(block_reader(io.BytesIO(data)))[-1]
    path.write_bytes(data[:-30])
    with open(path, "a+b") as fo:
        append(fo, [{"i": 1000 + i} for i in range(10)], repair=True)
    expected = [{"i": i} for i in range(300 - last.count)] + [{"i": 1000 + i} for i in range(10)]
    with open(path, "rb") as fo:
        assert list(FileReader(fo)) == expected
    with open(path, "rb") as fo:
        assert list(fastavro.reader(fo)) == expected
    assert [json.loads(line) for line in avro_tools.tojson(path)] == expected


def test_damage_before_whole_blocks_is_not_repaired(tmp_path):
    path = tmp_path / "damaged.avro"
    data = bytearray(longs_file())
    blocks = list(block_reader(io.BytesIO(bytes(data))))
    data[blocks[2].offset] = 0x7F  # a wrong count: its marker is misplaced
    data[blocks[2].offset + 1] ^= 0x40  # and a wrong size
    path.write_bytes(bytes(data))
    for repair in (False, True):
        with open(path, "a+b") as fo, pytest.raises(ContainerError) as raised:
            append(fo, [{"i": 1000}], repair=repair)
        assert raised.value.block == 2 and "on_damage='skip'" in str(raised.value)
    assert path.read_bytes() == bytes(data)


def test_appending_to_a_whole_file_still_works(tmp_path):
    path = tmp_path / "whole.avro"
    path.write_bytes(longs_file(codec="deflate"))
    with open(path, "a+b") as fo:
        append(fo, [{"i": 300 + i} for i in range(50)], sync_interval=100)
    with open(path, "rb") as fo:
        assert [r["i"] for r in fastavro.reader(fo)] == list(range(350))


# -- codecs: claimed sizes, library errors, memory -------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def snappy_bomb() -> bytes:
    # 96 bytes of raw snappy data claiming 256 MiB, then a CRC
    body = _varint(256 * 1024 * 1024) + b"\x00" * 92
    return header(LONGS, "snappy") + block(1, body + b"\x00\x00\x00\x00")


def zstd_bomb() -> bytes:
    # a frame header declaring 256 MiB of content (4-byte size), then garbage
    frame = (
        b"\x28\xb5\x2f\xfd" + bytes([0x80 | 0x20]) + (256 * 1024 * 1024).to_bytes(4, "little") + b"\x00" * 60
    )
    return header(LONGS, "zstandard") + block(1, frame)


@pytest.mark.parametrize("bomb", [snappy_bomb, zstd_bomb])
def test_a_claimed_size_the_data_cannot_give_allocates_nothing(bomb):
    data = bomb() + block(1, b"\x02")  # and a whole block after it... of another codec's data
    raised, most = peak(lambda: pytest.raises(ContainerError, lambda: list(FileReader(io.BytesIO(data)))))
    assert raised.value.block == 0 and "can give" in str(raised.value)
    assert most < 5_000_000
    reader = FileReader(io.BytesIO(data), on_damage="skip")
    records, most = peak(lambda: list(reader))
    assert [s.block for s in reader.skipped][:1] == [0] and most < 5_000_000


@pytest.mark.parametrize("codec", CODECS)
def test_bad_compressed_data_is_a_container_error_in_every_codec(codec):
    data = bytearray(longs_file(codec=codec, sync_interval=100))
    blocks = list(block_reader(io.BytesIO(bytes(data))))
    damaged = blocks[2]
    start = damaged.offset + len(encode_long(damaged.count)) + len(encode_long(damaged.size))
    # the middle of the compressed data, and its first bytes (headers, lengths)
    for at in (start + damaged.size // 2, start, start + 1):
        broken = bytearray(data)
        broken[at : at + 8] = b"\xff\x00\xfe\x01\x80\x7f\x55\xaa"
        try:
            list(FileReader(io.BytesIO(bytes(broken))))
        except ContainerError as error:
            assert error.block == 2 and error.offset == damaged.offset, (codec, at)
        else:
            assert codec == "null", at  # plain longs: any bytes decode
        reader = FileReader(io.BytesIO(bytes(broken)), on_damage="skip")
        ids = [record["i"] for record in reader]
        if reader.skipped:
            assert [s.block for s in reader.skipped] == [2]
            before = sum(b.count for b in blocks[:2])
            assert ids == list(range(before)) + list(range(before + damaged.count, 300))


def test_the_densest_legitimate_data_still_reads():
    # snappy's and zstandard's best ratios (runs of one byte) are within the bounds
    records = [{"s": "\x00" * 3_000_000}]
    schema = {"type": "record", "name": "S", "fields": [{"name": "s", "type": "string"}]}
    for codec in ("snappy", "zstandard", "deflate", "bzip2", "xz"):
        out = io.BytesIO()
        write_file(out, schema, records, codec)
        assert list(FileReader(io.BytesIO(out.getvalue()))) == records, codec


@pytest.mark.parametrize("codec", CODECS)
def test_peak_memory_is_the_block_and_what_it_decompresses_to(codec):
    size = 8_000_000
    schema = {"type": "record", "name": "S", "fields": [{"name": "s", "type": "bytes"}]}
    payload = bytes(range(256)) * (size // 1024) + b"\x00" * (size - size // 4)
    out = io.BytesIO()
    write_file(
        out,
        schema,
        [{"s": payload}],
        codec,
        codec_compression_level=1 if codec in ("xz", "bzip2", "deflate") else None,
    )
    reader = FileReader(io.BytesIO(out.getvalue()), max_block_size=size + 1000)
    stored = next(reader.blocks())
    data, most = peak(lambda: reader.decompress(stored))
    assert len(data) == len(payload) + len(encode_long(len(payload)))
    # the output once, growing in steps, and the library's own state
    assert most < size * 1.3 + len(stored.data) + 2_000_000, (codec, most)
    with pytest.raises(ContainerError, match="max_block_size"):
        FileReader(io.BytesIO(out.getvalue()), max_block_size=size // 2).decompress(stored)


# -- headers ------------------------------------------------------------------------


def test_a_huge_metadata_length_is_a_container_error(tmp_path):
    data = b"Obj\x01" + encode_long(1) + encode_long(2**62) + b"abc"
    path = tmp_path / "h.avro"
    path.write_bytes(data + b"x" * 1000)
    for source in (io.BytesIO(data), open(path, "rb")):
        with pytest.raises(ContainerError) as raised:
            FileReader(source)
        assert raised.value.block is None and "metadata key" in str(raised.value)
    # a length within max_block_size that the file does not have
    short = b"Obj\x01" + encode_long(1) + encode_long(200_000_000) + b"abc"
    path.write_bytes(short)
    with open(path, "rb") as fo:
        (_, most) = peak(lambda: pytest.raises(ContainerError, FileReader, fo))
    assert most < 5_000_000


def test_a_lone_surrogate_in_the_schema_is_a_container_error():
    schema = {"type": "record", "name": "R", "fields": [{"name": "a\ud800", "type": "int"}]}
    text = json.dumps(schema)  # the escape \ud800, as JSON writes it
    assert "\\ud800" in text
    data = header(schema) + block(1, b"\x02")
    with pytest.raises(ContainerError) as raised:
        FileReader(io.BytesIO(data))
    assert raised.value.block is None and "surrogate" in str(raised.value)


def test_other_decoders_pay_for_records_from_the_same_budget():
    # a decoder that is not decode_records (Avro JSON, marshmallow) charges
    # each block's records before decoding it
    flags = CompileFlags(item_allowance=1000)
    data = header(EMPTY) + block(400, b"") * 3
    reader = FileReader(io.BytesIO(data), flags=flags)
    blocks = list(reader.blocks())
    reader.charge_records(blocks[0], 0)
    reader.charge_records(blocks[1], 0)
    with pytest.raises(ContainerError, match="item budget") as raised:
        reader.charge_records(blocks[2], 0)
    assert raised.value.block == 2 and raised.value.offset == blocks[2].offset
    # bytes pay for records
    reader = FileReader(io.BytesIO(data), flags=flags)
    for stored in reader.blocks():
        reader.charge_records(stored, 300)


def test_a_compiled_schema_reads_a_file_within_the_same_budget():
    # CompiledSchema.read_file decodes blocks through load_compiled, which
    # holds only each block to the message budget: the file's budget is paid too
    from roastedavro import CompiledSchema

    class E(CompiledSchema):
        pass

    schema = E().compile(CompileFlags(item_allowance=1000))
    data = header(EMPTY) + block(600, b"") * 3
    records = schema.read_file(io.BytesIO(data))
    assert [next(records) for _ in range(600)] == [{}] * 600
    with pytest.raises(ContainerError, match="item budget") as raised:
        next(records)
    assert raised.value.block == 1
    assert len(list(schema.read_file(io.BytesIO(header(EMPTY) + block(600, b""))))) == 600


# -- any damage: a ContainerError or records, in both modes ----------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FILES = {codec: longs_file(120, codec, sync_interval=60) for codec in CODECS}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(codec=st.sampled_from(CODECS), data=st.data())
def test_any_damage_is_a_container_error_or_whole_records(codec, data):
    original = FILES[codec]
    size = len(original)
    damaged = bytearray(original)
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["flip", "cut", "splice", "insert"]))
        at = data.draw(st.integers(0, max(0, len(damaged) - 1)))
        if kind == "flip" and damaged:
            damaged[at] ^= data.draw(st.integers(1, 255))
        elif kind == "cut":
            del damaged[at:]
        elif kind == "splice":
            del damaged[at : at + data.draw(st.integers(1, 40))]
        else:
            damaged[at:at] = data.draw(st.binary(min_size=1, max_size=40))
    damaged = bytes(damaged)
    # the codecs with a checksum: damaged data never reads as other values
    # (without one, a flipped byte may be another long)
    checked = codec in ("bzip2", "xz", "snappy")
    try:
        values = [value for r in FileReader(io.BytesIO(damaged)) for value in r.values()]
    except ContainerError as error:
        assert 0 <= error.offset <= max(len(damaged), size)
    else:
        if checked:
            assert all(isinstance(v, int) and 0 <= v < 120 for v in values)
    try:
        reader = FileReader(io.BytesIO(damaged), on_damage="skip")
    except ContainerError as error:
        assert error.block is None  # only the header cannot be skipped
        return
    values = [value for r in reader for value in r.values()]
    if checked:
        assert all(isinstance(v, int) and 0 <= v < 120 for v in values)
    for skipped in reader.skipped:
        assert skipped.resumed is None or skipped.resumed > 0


def _outcome(data: bytes) -> tuple:
    """What reading ``data`` gives: each block's number, offset, count and
    records, then the error's class, block, offset and message (or None)."""
    blocks = []
    try:
        reader = FileReader(io.BytesIO(data))
        for block in reader.blocks():
            blocks.append((block.number, block.offset, block.count, block.size, reader.decode_block(block)))
    except ContainerError as error:
        return blocks, (type(error), error.block, error.offset, str(error))
    return blocks, None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(codec=st.sampled_from(["null", "deflate"]), data=st.data())
def test_a_block_framed_in_c_reads_as_the_careful_reader_reads_it(codec, data):
    # whole blocks are framed in C (_Source.take_block, once the runtime is
    # loaded); anything else it leaves to the careful reader, so the
    # blocks, values and errors are the same as with the careful reader alone
    import roastedavro._runtime  # noqa: F401
    from roastedavro.containerformat import _Source

    damaged = bytearray(FILES[codec])
    for _ in range(data.draw(st.integers(0, 3))):
        at = data.draw(st.integers(0, len(damaged) - 1))
        if data.draw(st.booleans()):
            damaged[at] ^= data.draw(st.integers(1, 255))
        else:
            damaged[at:at] = data.draw(st.binary(min_size=1, max_size=12))
    damaged = bytes(damaged)
    fast = _outcome(damaged)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(_Source, "take_block", lambda self, sync, most: None)
        careful = _outcome(damaged)
    assert fast == careful


def test_a_block_larger_than_a_read_chunk_and_a_file_of_many_are_framed_alike(monkeypatch):
    import roastedavro._runtime  # noqa: F401 (the C framing's)
    from roastedavro.containerformat import _Source

    values = [{"i": i} for i in range(-40000, 40000, 3)]
    one, many = io.BytesIO(), io.BytesIO()
    write_file(one, LONGS, values, "null", sync_interval=200_000)  # one block of more than 64 KB
    write_file(many, LONGS, values, "null", sync_interval=500)
    taken = []
    take = _Source.take_block

    def counted(self, sync, most):
        found = take(self, sync, most)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(_Source, "take_block", counted)
    assert list(FileReader(io.BytesIO(one.getvalue()))) == values
    assert taken == [False]  # (the large block: the careful way)
    taken.clear()
    assert list(FileReader(io.BytesIO(many.getvalue()))) == values
    assert sum(taken) >= len(taken) - 2  # all but the last few bytes' block framed in C


@pytest.mark.parametrize("after", [b"", b"\x00" * 40])
def test_a_block_count_longer_than_ten_bytes_is_named_at_its_offset(after):
    # with and without room for the whole varint in what was read ahead
    start = len(header(LONGS))
    data = header(LONGS) + block(1, b"\x02") + b"\xff" * 11 + after
    with pytest.raises(ContainerError, match="record count is not a valid long") as raised:
        list(FileReader(io.BytesIO(data)))
    assert raised.value.block == 1 and raised.value.offset == start + len(block(1, b"\x02"))
