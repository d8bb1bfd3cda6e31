"""FileReader's start and end: a file split into byte ranges reads each of
its blocks once, in the range its start (just after a sync marker) falls in."""

import io

import fastavro
import pytest

from roastedavro.container import ContainerError, FileReader, block_reader

SCHEMA = {
    "type": "record",
    "name": "Line",
    "fields": [{"name": "n", "type": "int"}, {"name": "text", "type": "string"}],
}
RECORDS = [{"n": n, "text": "x" * (n % 37)} for n in range(2000)]


@pytest.fixture(scope="module")
def data():
    out = io.BytesIO()
    fastavro.writer(out, SCHEMA, RECORDS, sync_interval=400)
    return out.getvalue()


def starts(data):
    return [block.offset for block in block_reader(io.BytesIO(data))]


def read(data, start, end, **options):
    return list(FileReader(io.BytesIO(data), start=start, end=end, **options))


@pytest.mark.parametrize("size", [1, 15, 16, 17, 333, 4096, 10**7])
def test_ranges_of_any_size_read_every_record_once(data, size):
    found = []
    for start in range(0, len(data), size):
        found += read(data, start, start + size)
    assert found == RECORDS


def test_a_range_owns_the_blocks_that_start_in_it(data):
    offsets = starts(data)
    assert len(offsets) > 20
    header = offsets[0]
    second, third = offsets[1], offsets[2]
    reader = FileReader(io.BytesIO(data), start=second, end=third)
    blocks = list(reader.blocks())
    assert [block.offset for block in blocks] == [second]  # a range starting exactly at a block
    assert blocks[0].number == 0  # numbered from the first one read; the offset is the file's
    # a start inside the sync marker before a block, or just after a block's start
    assert [b.offset for b in FileReader(io.BytesIO(data), start=second - 5, end=third).blocks()] == [second]
    assert list(FileReader(io.BytesIO(data), start=second + 1, end=third).blocks()) == []
    # a range with no block start, and one before the first block
    assert read(data, second + 1, third - 1) == []
    assert read(data, 0, header) == []
    assert read(data, 0, header + 1) == list(next(iter(block_reader(io.BytesIO(data)))))
    # ranges at or past the end of the file
    assert read(data, len(data) - 1, len(data) + 100) == []
    assert read(data, len(data) + 100, len(data) + 200) == []
    # a start alone reads to the end; an end alone from the first block
    assert read(data, offsets[-1], None) == list(list(block_reader(io.BytesIO(data)))[-1])
    assert read(data, None, offsets[1]) == read(data, 0, offsets[1])


def test_a_stream_that_cannot_seek_is_read_up_to_the_start(data):
    class Stream:
        def __init__(self, data):
            self.inner = io.BytesIO(data)

        def read(self, size=-1):
            return self.inner.read(size)

    found = []
    for start in range(0, len(data), 3000):
        found += list(FileReader(Stream(data), start=start, end=start + 3000))
    assert found == RECORDS


def test_damage_in_a_range_is_a_container_error_with_the_file_offset(data):
    offsets = starts(data)
    damaged = bytearray(data)
    damaged[offsets[5] + 3 : offsets[6] - 16] = b"\xff" * (offsets[6] - 16 - offsets[5] - 3)
    assert read(bytes(damaged), offsets[6], None)  # after the damage: unaffected
    with pytest.raises(ContainerError) as caught:
        read(bytes(damaged), offsets[4], offsets[6])
    assert caught.value.offset == offsets[5]


@pytest.mark.parametrize("bad", [-1, 1.5, "0", True])
def test_bounds_are_offsets(data, bad):
    with pytest.raises(ValueError, match="offset"):
        FileReader(io.BytesIO(data), start=bad)
    with pytest.raises(ValueError, match="offset"):
        FileReader(io.BytesIO(data), end=bad)
