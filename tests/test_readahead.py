"""zstandard files read with their blocks decompressed ahead by a worker
thread (roastedavro.readahead): the same records in the same order as
fastavro reads, damage still named at its block with the blocks around it
kept, memory bounded for hostile frames, and no thread left behind.

The files hold enough blocks for several of the worker's groups (a group
aims at 1 MiB of output), so the damage tested lands in the worker's part.
"""

from __future__ import annotations

import io
import os
import json
import threading
import time
import tracemalloc

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roastedavro import readahead
from roastedavro._datum import encode_long
from roastedavro.container import ContainerError, FileReader, write_file

pytest.importorskip("cramjam", reason="zstandard is read through cramjam (the codecs extra)")

SCHEMA = {
    "type": "record",
    "name": "Row",
    "fields": [{"name": "i", "type": "long"}, {"name": "text", "type": "string"}],
}
SYNC = bytes(range(16))
ROWS = 40_000  # about 4.5 MB: several groups of 1 MiB


def rows(count: int = ROWS) -> list[dict]:
    return [{"i": i, "text": f"row {i} " + "abcdefghij"[i % 10] * (60 + i % 70)} for i in range(count)]


@pytest.fixture(scope="module")
def zstd_file() -> bytes:
    out = io.BytesIO()
    write_file(out, SCHEMA, rows(), "zstandard", sync_interval=16_000)
    return out.getvalue()


def stored_blocks(data: bytes) -> tuple[bytes, list]:
    """The file's header bytes and its blocks as stored."""
    blocks = list(FileReader(io.BytesIO(data)).blocks())
    return data[: blocks[0].offset], blocks


def rebuilt(head: bytes, blocks: list[tuple[int, bytes]], sync: bytes) -> bytes:
    return head + b"".join(encode_long(c) + encode_long(len(d)) + d + sync for c, d in blocks)


@pytest.fixture
def worker_calls(monkeypatch) -> list:
    """The groups the worker decompressed (their sizes in blocks)."""
    calls: list = []
    original = readahead._worker

    def counted(frames, group, started):
        result = original(frames, group, started)
        calls.append(len(result) if result is not None else None)
        return result

    monkeypatch.setattr(readahead, "_worker", counted)
    return calls


def test_the_records_and_their_order_are_fastavros(zstd_file, worker_calls):
    got = list(FileReader(io.BytesIO(zstd_file)))
    assert got == list(fastavro.reader(io.BytesIO(zstd_file)))
    assert got == rows()
    # the worker decompressed groups of many blocks in one call each
    assert len(worker_calls) >= 3 and all(calls and calls > 10 for calls in worker_calls)


def test_arrow_reads_the_same_table_as_from_the_null_codec(zstd_file, worker_calls):
    arrow = pytest.importorskip("roastedavro.arrow", reason="roastedavro.arrow needs pyarrow")
    plain = io.BytesIO()
    write_file(plain, SCHEMA, rows(), "null")
    plain.seek(0)
    assert arrow.read_table(io.BytesIO(zstd_file)).equals(arrow.read_table(plain))
    batches = list(arrow.iter_batches(io.BytesIO(zstd_file), batch_size=7_000))
    assert [len(b) for b in batches] == [7_000] * 5 + [5_000]
    assert worker_calls


def test_bad_data_in_a_later_group_is_its_blocks_error_and_skip_keeps_the_rest(zstd_file):
    head, blocks = stored_blocks(zstd_file)
    sync = FileReader(io.BytesIO(zstd_file)).sync_marker
    damaged = len(blocks) * 2 // 3  # well past the first (caller's) group
    datas = [(b.count, bytes(b.data)) for b in blocks]
    count, body = datas[damaged]
    datas[damaged] = (count, body[:40] + bytes(b ^ 0x5A for b in body[40:80]) + body[80:])
    broken = rebuilt(head, datas, sync)
    reader = FileReader(io.BytesIO(broken))
    got: list = []
    with pytest.raises(ContainerError) as raised:
        for record in reader:
            got.append(record)
    assert raised.value.block == damaged and raised.value.offset == blocks[damaged].offset
    before = sum(b.count for b in blocks[:damaged])
    assert got == rows()[:before]  # every record before the damaged block, in order
    skipping = FileReader(io.BytesIO(broken), on_damage="skip")
    kept = list(skipping)
    assert [s.block for s in skipping.skipped] == [damaged]
    assert kept == rows()[:before] + rows()[before + count :]


def test_a_damaged_frame_in_a_later_group_comes_after_the_records_before_it(zstd_file):
    head, blocks = stored_blocks(zstd_file)
    sync = FileReader(io.BytesIO(zstd_file)).sync_marker
    damaged = len(blocks) - 3
    cut = len(head) + sum(b.stored for b in blocks[:damaged])
    broken = bytearray(zstd_file)
    # the damaged block's sync marker
    broken[cut + blocks[damaged].stored - 16 : cut + blocks[damaged].stored] = bytes(16)
    got: list = []
    with pytest.raises(ContainerError, match="sync marker") as raised:
        for record in FileReader(io.BytesIO(bytes(broken))):
            got.append(record)
    assert raised.value.block == damaged
    assert got == rows()[: sum(b.count for b in blocks[:damaged])]
    assert sync != bytes(16)


def test_frames_that_do_not_declare_their_size_still_read(zstd_file, worker_calls):
    zstd = pytest.importorskip("backports.zstd", reason="backports.zstd writes streamed frames")
    head, blocks = stored_blocks(zstd_file)
    sync = FileReader(io.BytesIO(zstd_file)).sync_marker
    reader = FileReader(io.BytesIO(zstd_file))
    datas = []
    for stored in blocks:
        compressor = zstd.ZstdCompressor()
        plain = bytes(reader.decompress(stored))
        # given in two parts, a streamed frame does not know its size
        frame = compressor.compress(plain[:100]) + compressor.compress(plain[100:], compressor.FLUSH_FRAME)
        # (the frame header's size flag 0 without a single segment: no content size)
        assert frame[:4] == b"\x28\xb5\x2f\xfd" and frame[4] >> 6 == 0 and not frame[4] & 0x20
        datas.append((stored.count, frame))
    streamed = rebuilt(head, datas, sync)
    assert list(FileReader(io.BytesIO(streamed))) == rows()
    # the worker's call declined them, and the rest were read on the caller's thread
    assert worker_calls == [None]


def test_frames_declaring_large_outputs_are_not_allocated_together():
    # 300 frames of 100 bytes, each declaring 3 MB (what such a frame may
    # give) and holding garbage: one call for a group of them would first
    # allocate their sum (hundreds of MB)
    declared = 3_000_000
    frame = b"\x28\xb5\x2f\xfd" + bytes([0x80 | 0x20]) + declared.to_bytes(4, "little") + b"\x07" * 91
    entries = {"avro.schema": json.dumps(SCHEMA).encode(), "avro.codec": b"zstandard"}
    head = [b"Obj\x01", encode_long(len(entries))]
    for key, value in entries.items():
        head += [encode_long(len(key)), key.encode(), encode_long(len(value)), value]
    data = rebuilt(b"".join(head) + b"\x00" + SYNC, [(1, frame)] * 300, SYNC)
    reader = FileReader(io.BytesIO(data), on_damage="skip")
    tracemalloc.start()
    try:
        assert list(reader) == []
        most = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(reader.skipped) == 300
    # two groups of at most 4 MiB, and a block decompressed alone
    assert most < 4 * 4 * 1024 * 1024, most


def test_a_reader_left_early_leaves_no_thread(zstd_file):
    def readahead_threads() -> list:
        return [t for t in threading.enumerate() if t.name.startswith("roastedavro-readahead")]

    records = iter(FileReader(io.BytesIO(zstd_file)))
    for _ in range(12_000):  # past the first group: the worker has started
        next(records)
    assert readahead_threads()
    records.close()  # type: ignore[attr-defined]
    deadline = time.monotonic() + 5
    while readahead_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not readahead_threads()


class Unseekable(io.RawIOBase):
    """A pipe: read only, no seek."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        chunk = self._data.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)


def test_a_stream_that_cannot_seek_is_read_block_by_block(zstd_file, worker_calls):
    # a pipe's blocks are decoded as they arrive, none held back for a group
    source = Unseekable(zstd_file)
    records = iter(FileReader(source))
    first = next(records)
    assert first == rows(1)[0]
    assert source._data.tell() < 64 * 1024  # not a group's worth of blocks read
    assert [first, *records] == rows()
    assert worker_calls == []


def test_a_frame_cut_across_two_blocks_fails_as_each_block_alone_does(zstd_file):
    # block A holds the first part of a frame; block B the rest, then a whole
    # frame: joined, the two would decode (A's record taking B's bytes)
    def frame(content: bytes) -> bytes:  # one raw block, 4-byte content size
        n = len(content)
        return (
            b"\x28\xb5\x2f\xfd\xa0" + n.to_bytes(4, "little") + (1 | (n << 3)).to_bytes(3, "little") + content
        )

    second = encode_long(4) + b"next"
    fake = b"\x28\xb5\x2f\xfd\xa0" + len(second).to_bytes(4, "little") + b"\xff\xff\xff"
    whole = frame(encode_long(len(fake) + 6) + b"text:" + fake + b"!")
    cut = whole.index(fake)
    head, blocks = stored_blocks(zstd_file)
    sync = FileReader(io.BytesIO(zstd_file)).sync_marker
    datas = [(b.count, bytes(b.data)) for b in blocks] + [(1, whole[:cut]), (1, whole[cut:] + frame(second))]
    hostile = rebuilt(head, datas, sync)
    with pytest.raises(ContainerError, match="cannot be decompressed") as raised:
        list(FileReader(io.BytesIO(hostile)))
    assert raised.value.block == len(blocks)
    skipping = FileReader(io.BytesIO(hostile), on_damage="skip")
    assert list(skipping) == rows()
    assert [s.block for s in skipping.skipped] == [len(blocks), len(blocks) + 1]


def test_a_skipped_block_resumes_at_the_next_block_and_skips_stay_in_order(zstd_file):
    head, blocks = stored_blocks(zstd_file)
    sync = FileReader(io.BytesIO(zstd_file)).sync_marker
    datas = [(b.count, bytes(b.data)) for b in blocks]
    bad = len(blocks) // 2
    count, body = datas[bad]
    datas[bad] = (count, body[:40] + bytes(b ^ 0x5A for b in body[40:80]) + body[80:])
    broken = bytearray(rebuilt(head, datas, sync))
    frame = len(blocks) - 2  # and a later block's sync marker zeroed
    end = len(head) + sum(b.stored for b in blocks[: frame + 1])
    broken[end - 16 : end] = bytes(16)
    reader = FileReader(io.BytesIO(bytes(broken)), on_damage="skip")
    list(reader)
    assert [s.block for s in reader.skipped] == [bad, frame]
    assert reader.skipped[0].resumed == blocks[bad + 1].offset


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_process_forked_while_reading_goes_on_without_the_worker(zstd_file):
    records = iter(FileReader(io.BytesIO(zstd_file)))
    first = [next(records) for _ in range(12_000)]  # the worker has started
    child = os.fork()
    if child == 0:  # the child: the rest of the records, or exit 1
        code = 1  # also where reading raises: the child never goes back to pytest
        try:
            code = 0 if first + list(records) == rows() else 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(child, 9)
        os.waitpid(child, 0)
        pytest.fail("the forked reader hung")
    assert os.waitstatus_to_exitcode(status) == 0
    assert first + list(records) == rows()


# -- the frame header, read as RFC 8878 lays it out ---------------------------------

_SEGMENTS = st.lists(
    st.one_of(
        st.binary(min_size=1, max_size=3000).map(lambda raw: (0, raw)),
        st.tuples(st.integers(0, 255), st.integers(1, 5000)).map(lambda run: (1, bytes([run[0]]) * run[1])),
    ),
    min_size=1,
    max_size=30,
)


def _frame(segments, single: bool, size_flag: int, checksum: bool) -> bytes | None:
    """A zstd frame of raw and RLE blocks, built by hand; None where the
    header cannot say the content's size that way."""
    content = b"".join(data for _, data in segments)
    size = len(content)
    if size_flag == 0:
        if single and size > 255:
            return None
        field = bytes([size]) if single else b""
    elif size_flag == 1:
        if not 256 <= size <= 65791:
            return None
        field = (size - 256).to_bytes(2, "little")
    else:
        field = size.to_bytes(4 if size_flag == 2 else 8, "little")
    descriptor = size_flag << 6 | single << 5 | checksum << 2
    # not single segment: a window descriptor of 128 KiB (exponent 7)
    frame = bytearray(b"\x28\xb5\x2f\xfd" + bytes([descriptor]) + (b"" if single else b"\x38") + field)
    for index, (kind, data) in enumerate(segments):
        last = index == len(segments) - 1
        frame += (len(data) << 3 | kind << 1 | last).to_bytes(3, "little")
        frame += data if kind == 0 else data[:1]
    return bytes(frame + (b"\x01\x02\x03\x04" if checksum else b""))


@settings(max_examples=150, deadline=None)
@given(
    segments=_SEGMENTS,
    single=st.booleans(),
    size_flag=st.integers(0, 3),
    checksum=st.booleans(),
    after=st.binary(max_size=20),
)
def test_the_frame_header_is_read_as_rfc_8878_lays_it_out(segments, single, size_flag, checksum, after):
    import cramjam

    from roastedavro.blockcodecs import _zstd_content_size, _zstd_frame_end

    frame = _frame(segments, single, size_flag, checksum)
    if frame is None:
        return
    content = b"".join(data for _, data in segments)
    if not checksum:  # the frame is one zstd decompresses (the checksum here is no XXH64)
        assert bytes(cramjam.zstd.decompress(frame)) == content
    declared = None if size_flag == 0 and not single else len(content)
    assert _zstd_content_size(frame) == declared
    assert _zstd_frame_end(frame + after) == len(frame)
    assert _zstd_frame_end(memoryview(frame + after)) == len(frame)
    for cut in {0, 4, 5, len(frame) // 2, len(frame) - 1}:
        assert _zstd_frame_end(frame[:cut]) is None
