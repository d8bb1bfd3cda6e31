"""Avro object container files: the specification's "Object Container Files".

A file is a header (the magic ``Obj\\x01``, a metadata map of bytes holding
``avro.schema`` and ``avro.codec``, a 16-byte sync marker) and blocks: a
count of records, the size of the block's (compressed) data, the data, and
the sync marker again. Each block's records are written and read by the
schema's compiled codec in one call (``dump_next``/``load_block``): no
Python call per record. A block ends with the record that brings its data
to ``sync_interval`` bytes or more, as fastavro and Java end blocks.

Reading streams block by block from any binary file object, seekable or not,
in memory bounded by the largest block (and ``max_block_size`` for what a
block decompresses to). Damage is a ``ContainerError`` naming the
block and its file offset; ``on_damage="skip"`` instead skips a damaged
block, finds the first sync marker after the block's start and goes on,
recording what it skipped. Records and their arrays' and maps' items are paid
for from one budget per file (the bytes read plus ``item_allowance``), and
appending to a damaged file is refused (or, with ``repair=True``, a cut-short
end is truncated first).
"""

from __future__ import annotations

import functools
import io
import os
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Iterable, Iterator

from roastedavro._record import field as _field
from roastedavro._record import record as _value_class
from roastedavro.avro.parse import parse_schema
from roastedavro.avro.types import Schema
from roastedavro.blockcodecs import (
    _CODEC_ERRORS,
    CODECS,
    MissingCodecError,
    _Codec,
    _cramjam,
    _lz4_block,
)
from roastedavro.containerformat import (
    MAGIC,
    MAX_BLOCK_SIZE,
    SYNC_INTERVAL,
    SYNC_SIZE,
    ContainerError,
    FileEndedError,
    Header,
    MissingSchemaError,
    _read_header,
    _Source,
    is_avro,
    read_header,
)
from roastedavro.errors import DecodeError
from roastedavro.flags import CompileFlags
from roastedavro.readahead import decompressed

if TYPE_CHECKING:
    from roastedavro.codec import AvroCodec

# this module is their public home: reprs and pickles name it
for _public in (ContainerError, MissingSchemaError, FileEndedError, Header, MissingCodecError):
    _public.__module__ = __name__

__all__ = [
    "MAGIC",
    "CODECS",
    "Block",
    "ContainerError",
    "FileEndedError",
    "FileReader",
    "FileWriter",
    "Header",
    "MissingCodecError",
    "MissingSchemaError",
    "Skipped",
    "append",
    "block_reader",
    "is_avro",
    "read_header",
    "write_file",
]


def _codec(name: str, block: int | None = None, offset: int = 0) -> _Codec:
    codec = CODECS.get(name)
    if codec is None:
        raise ContainerError(f"unknown codec {name!r}; the codecs are {', '.join(CODECS)}", offset, block)
    return codec


# -- blocks -------------------------------------------------------------------------


@_value_class
class Block:
    """One block of a container file, as stored: ``data`` is the block's
    compressed bytes. Iterating it (or ``records()``) decodes its records."""

    number: int
    offset: int  # file offset of the block's record count
    count: int  # records in the block
    size: int  # bytes of (compressed) data
    data: bytes
    codec: str
    _reader: Any = _field(repr=False, default=None)
    #: the block's bytes in the file: its count, size, data and sync marker
    stored: int = 0

    def records(self) -> list:
        """The block's records, decoded (and decompressed) now."""
        return self._reader._decode(self)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.records())

    # fastavro's names
    @property
    def num_records(self) -> int:
        """fastavro's name of ``count``: the records in the block."""
        return self.count

    @property
    def bytes_(self) -> bytes:
        """fastavro's name of ``data``: the block's bytes as stored."""
        return self.data


@_value_class(frozen=True)
class Skipped:
    """A damaged part of a file that ``on_damage="skip"`` passed over."""

    block: int
    offset: int  # where the damage was found
    resumed: int | None  # where reading went on (after a sync marker), None: the end
    reason: str


class FileReader:
    """The records of a container file, block by block.

    ``reader_schema`` (anything AvroCodec takes) reads the file's records as
    that schema's datums (schema resolution, compiled for the pair).
    ``max_block_size`` bounds what one block may decompress to.
    ``on_damage``: "raise" (a ContainerError naming the block and offset) or
    "skip" (the block is skipped, reading resumes after the first sync
    marker after the block's start, and ``skipped`` lists what was passed
    over). ``flags.item_allowance`` is the file's allowance of records and
    items beyond the bytes read (see ``decode_records``).

    ``start`` and ``end`` split a file into byte ranges: the reader reads
    only the blocks that start (at the byte after a sync marker, the
    header's or a block's) at an offset in ``[start, end)``, so ranges that
    cover a file read each of its blocks exactly once. The header is read
    first; a ``start`` past it is reached by seeking to ``start - 16`` (a
    stream that cannot seek is read up to there) and finding the next sync
    marker. Blocks are then numbered from the first one read (their offsets
    are the file's), and the item budget is the range's.
    """

    #: the rules the file's schema is parsed by (the fastavro drop-in's: "fastavro")
    _dialect = "avro"

    def __init__(
        self,
        fo: BinaryIO,
        reader_schema: Any = None,
        *,
        flags: CompileFlags | None = None,
        max_block_size: int = MAX_BLOCK_SIZE,
        on_damage: str = "raise",
        start: int | None = None,
        end: int | None = None,
    ):
        if on_damage not in ("raise", "skip"):
            raise ValueError(f"on_damage must be 'raise' or 'skip', not {on_damage!r}")
        for name, bound in (("start", start), ("end", end)):
            if bound is not None and (not isinstance(bound, int) or isinstance(bound, bool) or bound < 0):
                raise ValueError(f"{name} must be an offset (an int, 0 or more), not {bound!r}")
        self._source = _Source(fo)
        self.header = _read_header(self._source, max_block_size, self._dialect)
        # the stream is left just after the header, as fastavro leaves it
        self._source.settle()
        self.writer_schema: Schema = self.header.schema
        self.reader_schema: Schema = (
            parse_schema(reader_schema) if reader_schema is not None else self.writer_schema
        )
        # the models the codec is built from (the attributes above may be
        # given other forms by subclasses)
        self._models = (self.writer_schema, self.reader_schema)
        self.codec: str = self.header.codec
        self.metadata: dict[str, bytes] = dict(self.header.metadata)
        self.sync_marker: bytes = self.header.sync
        self.max_block_size = max_block_size
        self.on_damage = on_damage
        self.skipped: list[Skipped] = []
        self._flags = flags
        self._default_flags: CompileFlags | None = None
        self._avro_codec: AvroCodec | None = None
        self._codec = self._find_codec(self.codec)
        self._number = 0
        # what is left of the file's item budget beyond the bytes read (None:
        # the codec's item_allowance, before the first block)
        self._allowance: int | None = None
        self._allowance_before = 0
        self._end = end
        # no block left to read (a start past the file's last sync marker)
        self._finished = False
        if start is not None and start > self.header.size:
            self._finished = not self._seek_block(start)

    def _seek_block(self, start: int) -> bool:
        """To the first block that starts at ``start`` or after: just past
        the first sync marker that ends there or later (False: none does)."""
        source = self._source
        # (a start within a marker's length of the header's end searches from there)
        left = max(0, start - SYNC_SIZE - source.offset)
        # a stream that cannot seek is read a MiB at a time, not gathered whole
        step = left if source.seekable else 1 << 20
        try:
            while left > 0:
                source.skip(min(step, left), "bytes before the range's start", None)
                left -= min(step, left)
        except FileEndedError:
            return False  # the file ends before the range
        return source.find(self.sync_marker)

    def _find_codec(self, name: str) -> _Codec:
        """The codec of the file's ``avro.codec`` (an unknown one is the
        header's ContainerError)."""
        return _codec(name, None, self.header.size)

    def read_as(self, reader_schema: Any) -> None:
        """Reads the records as ``reader_schema`` from the next block on (the
        codec is built for it, or built again if one was)."""
        self.reader_schema = parse_schema(reader_schema)
        self._models = (self.writer_schema, self.reader_schema)
        self._avro_codec = None

    @property
    def avro_codec(self) -> AvroCodec:
        """The compiled codec that reads the blocks (built on first use)."""
        if self._avro_codec is None:
            writer, reader = self._models
            from roastedavro.codec import AvroCodec  # the compiler, only when decoding

            self._avro_codec = AvroCodec(reader, self._flags, writer_schema=writer)
        return self._avro_codec

    @property
    def schema(self) -> Schema:
        """The schema the records are read as (the reader schema, else the
        file's)."""
        return self.reader_schema

    def _next_block(self) -> Block | None:
        source, number = self._source, self._number
        while True:
            if self._finished or source.at_end():
                return None
            if self._end is not None and source.offset >= self._end:
                return None  # the block is the next range's
            offset = source.offset
            if self.on_damage == "skip":
                source.mark()
            else:
                taken = source.take_block(self.sync_marker, 2 * self.max_block_size + 1024)
                if taken is not None:
                    count, data = taken
                    self._number = number + 1
                    return Block(
                        number, offset, count, len(data), data, self.codec, self, source.offset - offset
                    )
            try:
                count, size = _read_frame(source, offset, number)
                if size > 2 * self.max_block_size + 1024:
                    raise ContainerError(
                        f"a block of {size} bytes, more than max_block_size allows", offset, number
                    )
                data = source.read(size, "block's data", number)
                sync_offset = source.offset
                sync = source.read(SYNC_SIZE, "sync marker after the block", number)
                if sync != self.sync_marker:
                    raise ContainerError(
                        f"the sync marker after the block ({sync.hex()}) is not the file's "
                        f"({self.sync_marker.hex()}): the block's count or size is damaged",
                        sync_offset,
                        number,
                    )
            except ContainerError as error:
                self._damaged(error, number)
                number = self._number = number + 1
                continue
            source.unmark()
            self._number = number + 1
            return Block(number, offset, count, size, data, self.codec, self, source.offset - offset)

    def _damaged(self, error: ContainerError, number: int) -> None:
        if self.on_damage != "skip":
            raise error
        # the search starts just after the damaged block's start, not after
        # the bytes its damaged size took: whole blocks in those bytes are read
        self._source.rewind()
        found = self._source.find(self.sync_marker)
        self.skipped.append(
            Skipped(number, error.offset, self._source.offset if found else None, error.reason)
        )

    def decompress(self, block: Block) -> bytes | bytearray:
        """The block's data, decompressed (at most ``max_block_size`` bytes;
        bytes or a bytearray)."""
        try:
            return self._codec.decode(block.data, self.max_block_size)
        except MissingCodecError:
            raise
        except ContainerError as error:
            raise ContainerError(error.reason, block.offset, block.number) from None
        except _CODEC_ERRORS as error:
            raise ContainerError(
                f"the {block.codec} data cannot be decompressed: {error or type(error).__name__}",
                block.offset,
                block.number,
            ) from None

    def decompressed_blocks(self) -> Iterator[tuple[Block, Any]]:
        """Each block with its decompressed data, or the ContainerError
        decompressing it raised, in order: a zstandard file's blocks are
        decompressed one group ahead by a worker thread while the caller
        decodes (roastedavro.readahead; not a stream that cannot seek,
        whose blocks are given as they arrive)."""
        frames = self._codec.decode_frames
        if frames is None or not self._source.seekable:
            # (a pipe's blocks are given as they come, not held for a group)
            return decompressed(self.blocks(), self.decompress)
        limit = self.max_block_size
        return decompressed(
            self.blocks(), self.decompress, lambda group, most: frames([b.data for b in group], limit, most)
        )

    def _decode(self, block: Block, data: Any = None) -> list:
        return self.decode_block(block, data=data)

    def decode_block(self, block: Block, reader: Any = None, data: Any = None) -> list:
        """The block's records, decompressed (unless its ``data`` is given)
        and decoded: by ``reader``
        where given (a tier-0 ``Interpreter`` of the file's schema, or a
        ``ResolvingInterpreter`` of the file's and the reader's, made with
        options the codec has not, such as ``branches=True``), else by the
        codec. Paid for from the file's budget; a ContainerError naming the
        block where its records cannot be read."""
        if data is None:
            data = self.decompress(block)
        elif isinstance(data, Exception):
            raise data
        try:
            return self.decode_records(data, block.count, reader)
        except DecodeError as error:
            raise self._records_error(error, block, data) from None

    def _given_or_default_flags(self) -> CompileFlags:
        # the defaults made once per reader (they read the environment), and
        # kept apart: the codec is still built with the flags given
        if self._flags is not None:
            return self._flags
        if self._default_flags is None:
            self._default_flags = CompileFlags()
        return self._default_flags

    def _records_error(self, error: DecodeError, block: Block, data: bytes | bytearray) -> ContainerError:
        """The ContainerError of a block whose records cannot be read."""
        reason = error.reason
        if reason.startswith("item budget exceeded"):
            # the flags the codec has (or would have: another reader may have read)
            flags = self._given_or_default_flags()
            reason = (
                f"item budget exceeded: a file's blocks may announce at most their length "
                f"in bytes plus CompileFlags.item_allowance ({flags.item_allowance}) records "
                f"and array and map items in all, and this block of {len(data)} bytes "
                f"announces more than its length plus the {self._allowance_before} left; "
                f"read with a larger item_allowance (flags=CompileFlags(item_allowance=...)) "
                f"to accept more"
            )
        return ContainerError(
            f"its records cannot be read: {reason} (at byte {error.offset} of the "
            f"block's {len(data)} bytes of data)",
            block.offset,
            block.number,
        )

    def charge_records(self, block: Block, size: int) -> None:
        """For a decoder of a block's ``size`` bytes of decompressed data
        other than ``decode_records`` (Avro JSON, marshmallow): pay for
        the block's records from the file's budget, as decode_records does
        (records only: that decoder holds their arrays' and maps' items to
        its own budget), or a ContainerError."""
        allowance = self._allowance
        # the flags the codec would be built with: paying for records must
        # not compile a codec that another decoder makes unnecessary
        item_allowance = self._given_or_default_flags().item_allowance
        if allowance is None:
            allowance = item_allowance
        if block.count > size + allowance:
            self._allowance = 0
            raise ContainerError(
                f"item budget exceeded: a file's blocks may announce at most their length in "
                f"bytes plus CompileFlags.item_allowance "
                f"({item_allowance}) records in all, and this block of "
                f"{size} bytes announces {block.count} records with {allowance} of the "
                f"allowance left",
                block.offset,
                block.number,
            )
        self._allowance = size + allowance - block.count

    def decode_records(self, data: bytes | bytearray, count: int, reader: Any = None) -> list:
        """``count`` records from a block's decompressed data (read by
        ``reader`` where given, as decode_block's). Records and the items of
        their arrays and maps are paid for from one budget per file: the
        blocks' bytes so far plus the codec's item_allowance (a block that
        cannot be read spends what is left of the allowance)."""
        if reader is None:
            reader = self.avro_codec._reader
        allowance = self._allowance
        if allowance is None:
            allowance = self._given_or_default_flags().item_allowance
        self._allowance_before, self._allowance = allowance, 0
        records, self._allowance = reader.load_block_within(data, count, allowance)
        return records

    def blocks(self) -> Iterator[Block]:
        """The blocks, as stored (nothing decompressed or decoded)."""
        while True:
            block = self._next_block()
            if block is None:
                return
            yield block

    def __iter__(self) -> Iterator[Any]:
        for block, data in self.decompressed_blocks():
            try:
                records = self._decode(block, data)
            except ContainerError as error:
                if self.on_damage != "skip":
                    raise
                # the block's frame was intact: the next one follows it (the
                # source may be read further ahead); in block order among
                # damaged frames found while reading ahead
                skipped = Skipped(block.number, error.offset, block.offset + block.stored, error.reason)
                place = len(self.skipped)
                while place and self.skipped[place - 1].block > block.number:
                    place -= 1
                self.skipped.insert(place, skipped)
                continue
            yield from records

    # fastavro's reader is an iterator
    def __next__(self) -> Any:
        if not hasattr(self, "_records"):
            self._records = iter(self)
        return next(self._records)


def block_reader(fo: BinaryIO, reader_schema: Any = None, **options: Any) -> Iterator[Block]:
    """The blocks of a container file with their record counts, offsets and
    stored bytes, for splitting work: iterate a block to decode it."""
    return FileReader(fo, reader_schema, **options).blocks()


# -- writing ------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)  # blocks' counts and sizes repeat
def _long_bytes(n: int) -> bytes:
    """An Avro long (a block's count or size), encoded once per value."""
    from roastedavro._datum import encode_long  # (as the header's: writing only)

    return encode_long(n)


def _encode_bytes(value: bytes) -> bytes:
    from roastedavro._datum import encode_long  # (imports marshmallow: not for reading)

    return encode_long(len(value)) + value


def _header_bytes(schema: Schema, codec: str, metadata: dict, sync: bytes) -> bytes:
    entries = {"avro.schema": schema.to_json().encode("utf-8"), "avro.codec": codec.encode()}
    for key, value in metadata.items():
        if key in entries:
            continue
        if key.startswith("avro."):
            raise ValueError(f"metadata key {key!r}: keys starting with 'avro.' are reserved")
        entries[key] = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    from roastedavro._datum import encode_long

    out = [MAGIC, encode_long(len(entries))]
    for key, value in entries.items():
        out += [_encode_bytes(key.encode("utf-8")), _encode_bytes(value)]
    out += [b"\x00", sync]
    return b"".join(out)


class FileWriter:
    """Writes records to a container file, a block at a time.

    A block ends with the record that brings its data to ``sync_interval``
    bytes or more, as fastavro and Java end it (so the same records make
    the same blocks); its records are written by the compiled codec, many in
    one call, and compressed with ``codec``. ``flush()`` ends the current
    block; ``close()`` (or the ``with`` block) flushes. The file object is
    not closed.

    ``encode_next(records, limit, rescued)`` (default: the codec's
    ``dump_next``) gives the bytes of the records it takes from the iterator
    ``records``, up to the one that reaches ``limit`` bytes or to their end,
    and how many it took; on an error, the bytes and count of those before
    it go to the list ``rescued``. A writer given only
    ``encode_block`` (a list of records to their bytes) ends a block after
    the batch that reaches ``sync_interval``. ``compress`` (bytes to the
    block's stored bytes) replaces the codec's compressor.
    """

    def __init__(
        self,
        fo: BinaryIO,
        schema: Any,
        codec: str = "null",
        *,
        sync_interval: int = SYNC_INTERVAL,
        metadata: dict | None = None,
        sync_marker: bytes | None = None,
        codec_compression_level: int | None = None,
        flags: CompileFlags | None = None,
        _header: Header | None = None,
        encode_block: Callable[[list], bytes] | None = None,
        encode_next: Callable[[Iterator, int, list], tuple[bytes, int]] | None = None,
        compress: Callable[[bytes], bytes] | None = None,
    ):
        self.fo = fo
        self.sync_interval = sync_interval
        self.level = codec_compression_level
        if _header is not None:  # appending: the file's schema, codec and marker
            self.schema, self.codec, self.sync_marker = _header.schema, _header.codec, _header.sync
        else:
            self.schema = parse_schema(schema)
            self.codec = codec
            self.sync_marker = sync_marker if sync_marker is not None else os.urandom(SYNC_SIZE)
            if len(self.sync_marker) != SYNC_SIZE:
                raise ValueError(f"a sync marker has {SYNC_SIZE} bytes, not {len(self.sync_marker)}")
        self._codec = _codec(self.codec)
        # a missing library says so before anything is written
        if self._codec.name in ("snappy", "zstandard"):
            _cramjam(self.codec, None, 0)
        elif self._codec.name == "lz4":
            _lz4_block()
        self._compress = compress
        if encode_block is None and encode_next is None:
            from roastedavro.codec import AvroCodec

            # through the codec at each call: it moves to the compiled
            # codec when that is ready
            avro_codec = AvroCodec(self.schema, flags)

            def encode_next(records: Iterator, limit: int, rescued: list) -> tuple[bytes, int]:
                return avro_codec._writer().dump_next(records, limit, rescued)

        #: list of records -> their Avro binary, one after another
        self.encode_block = encode_block
        self.encode_next = encode_next
        self._pending: list = []
        self._batch = 64  # records encoded per call (grown to a block's worth)
        self._parts: list[bytes] = []
        self._count = 0
        self._size = 0
        if _header is None:
            fo.write(_header_bytes(self.schema, self.codec, metadata or {}, self.sync_marker))

    def write(self, record: Any) -> None:
        """Adds one record; blocks are written as they fill."""
        self._pending.append(record)
        if len(self._pending) >= self._batch:
            self._encode_pending()

    def write_many(self, records: Iterable[Any]) -> None:
        """Adds the records of an iterable, as ``write`` does each."""
        if self.encode_next is not None:
            # the codec takes the records from the iterator itself
            if self._pending:
                self._encode_pending()
            self._encode(iter(records))
            return
        pending = self._pending
        for record in records:
            pending.append(record)
            if len(pending) >= self._batch:
                self._encode_pending()
                pending = self._pending

    def _encode(self, records: Iterator) -> int:
        """Encodes the records to their end, writing each block as soon as
        it is whole (a record that cannot be written leaves the blocks before
        its own in the file, and the records before it in its block to the
        next flush); the bytes encoded."""
        encode_next, interval = self.encode_next, self.sync_interval
        assert encode_next is not None  # called only where the records are encoded by it
        written = 0
        rescued: list = []
        while True:
            try:
                data, count = encode_next(records, interval - self._size, rescued)
            except BaseException:
                if rescued:  # short of the block's end: it goes on from them
                    data, count = rescued[0]
                    self._parts.append(data)
                    self._count += count
                    self._size += len(data)
                raise
            if not count:
                return written
            self._parts.append(data)
            self._count += count
            self._size += len(data)
            written += len(data)
            if self._size < interval:
                return written  # the records ended before the block
            self._write_block()

    def _encode_pending(self) -> None:
        records, self._pending = self._pending, []
        if self.encode_next is not None:
            written = self._encode(iter(records))
        else:
            assert self.encode_block is not None  # one of the two is given (__init__)
            data = self.encode_block(records)
            self._parts.append(data)
            self._count += len(records)
            self._size += len(data)
            written = len(data)
            if self._size >= self.sync_interval:
                self._write_block()
        # aim the next batch at what is left of the block
        per_record = max(1, written // max(1, len(records)))
        left = self.sync_interval - self._size
        self._batch = max(1, min(65536, left // per_record + 1))

    def room(self) -> int:
        """The bytes the current block takes before it reaches
        ``sync_interval`` (records encoded up to the one that reaches it
        end the block as ``write`` would)."""
        return max(1, self.sync_interval - self._size)

    def add_encoded(self, data: bytes, count: int = 1) -> None:
        """Adds ``count`` records already encoded as ``data`` to the current
        block, ending it if it reaches ``sync_interval`` bytes (records given
        to ``write`` and not yet encoded are encoded first, in order)."""
        if self._pending:
            self._encode_pending()
        self._parts.append(data)
        self._count += count
        self._size += len(data)
        if self._size >= self.sync_interval:
            self._write_block()

    def write_encoded_block(self, data: bytes, count: int) -> None:
        """Writes ``count`` records already encoded as ``data`` as a block of
        their own, after the current block ends (a block of no records too,
        as fastavro copies one)."""
        if self._pending:
            self._encode_pending()
        self._write_block()
        self._parts, self._count, self._size = [data], count, len(data)
        self._write_block(empty=True)

    def _write_block(self, empty: bool = False) -> None:
        if not self._count and not empty:
            return
        parts = self._parts
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        if self._compress is not None:
            compressed = self._compress(data)
        elif self._codec.name == "null":
            compressed = data
        else:
            compressed = self._codec.encode(data, self.level)
        # three writes: the block's data is not copied into a joined whole
        write = self.fo.write
        write(_long_bytes(self._count) + _long_bytes(len(compressed)))
        write(compressed)
        write(self.sync_marker)
        self._parts, self._count, self._size = [], 0, 0

    def flush(self) -> None:
        """Write what has been given so far as a block."""
        if self._pending:
            self._encode_pending()
        self._write_block()
        if hasattr(self.fo, "flush"):
            self.fo.flush()

    def close(self) -> None:
        """Writes the last block (the file object stays open: it is the
        caller's)."""
        self.flush()

    def __enter__(self) -> FileWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.close()


def write_file(
    fo: BinaryIO,
    schema: Any,
    records: Iterable[Any],
    codec: str = "null",
    *,
    repair: bool = False,
    **options: Any,
) -> None:
    """Write ``records`` to ``fo`` as a container file; if ``fo`` already holds
    one (opened for reading and writing, e.g. ``"a+b"``), append to it with
    its schema, codec and sync marker.

    Appending first checks the frame of every block (its count, size and
    sync marker, seeking over the data): records appended after damage
    would be lost to readers, so a damaged file is a ``ContainerError``
    naming the damage. ``repair=True`` truncates a file whose last block was
    cut short (a write that did not finish) to its last whole block first;
    damage with a sync marker after it is refused even then."""
    existing = _existing_header(fo)
    if existing is not None:
        header, source = existing
        parsed = parse_schema(schema) if schema is not None else header.schema
        if parsed.canonical_form() != header.schema.canonical_form():
            raise ValueError(
                f"appending records of another schema than the file's ({header.schema.canonical_form()})"
            )
        _check_frames(fo, source, header, repair)
        fo.seek(0, io.SEEK_END)
        options.pop("sync_marker", None)
        options.pop("metadata", None)
        writer = FileWriter(fo, None, header.codec, _header=header, **options)
    else:
        writer = FileWriter(fo, schema, codec, **options)
    writer.write_many(records)
    writer.close()


def append(fo: BinaryIO, records: Iterable[Any], *, repair: bool = False, **options: Any) -> None:
    """Append ``records`` to the container file ``fo`` (opened ``"r+b"`` or
    ``"a+b"``), with its own schema, codec and sync marker; a damaged file is
    a ContainerError (``repair``: see ``write_file``)."""
    if _existing_header(fo) is None:
        raise ContainerError("cannot append: the file is empty", 0)
    fo.seek(0)
    write_file(fo, None, records, repair=repair, **options)


def _existing_header(fo: BinaryIO) -> tuple[Header, _Source] | None:
    """The header of a file being appended to and the source reading on
    after it, or None for a new file."""
    try:
        if not (fo.seekable() and fo.readable()):
            return None
        position = fo.tell()
        fo.seek(0, io.SEEK_END)
        if fo.tell() == 0:
            fo.seek(position)
            return None
        fo.seek(0)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    source = _Source(fo)
    return _read_header(source), source


def _read_frame(source: _Source, offset: int, number: int) -> tuple[int, int]:
    """A block's record count and size in bytes, each checked not negative."""
    count = source.read_long("block's record count", number)
    if count < 0:
        raise ContainerError(f"a negative record count {count}", offset, number)
    size = source.read_long("block's size", number)
    if size < 0:
        raise ContainerError(f"a negative block size {size}", offset, number)
    return count, size


def _check_frames(fo: BinaryIO, source: _Source, header: Header, repair: bool) -> None:
    """Every block after the header whole, or a ContainerError naming the
    first damage (after truncating a cut-short end, with ``repair``)."""
    number, whole_end = 0, source.offset
    while not source.at_end():
        offset = source.offset
        try:
            count, size = _read_frame(source, offset, number)
            source.skip(size, "block's data", number)
            sync_offset = source.offset
            if source.read(SYNC_SIZE, "sync marker after the block", number) != header.sync:
                raise ContainerError(
                    "the sync marker after the block is not the file's: the block's count or size is damaged",
                    sync_offset,
                    number,
                )
        except ContainerError as error:
            damage = error.reason.split(": ", 1)[-1]
            # no sync marker after the damage's start: the file was cut short
            # there (a sync marker after it: whole blocks follow the damage)
            fo.seek(offset + 1)
            cut_short = not _Source(fo).find(header.sync)
            if repair and cut_short:
                fo.seek(whole_end)
                fo.truncate(whole_end)
                return
            advice = (
                f"append with repair=True to truncate the file to its last whole block "
                f"(ending at byte {whole_end}) first"
                if cut_short
                else "blocks follow the damage: read the file with on_damage='skip' and write a new one"
            )
            raise ContainerError(
                f"cannot append to a damaged file: {damage}; {advice}", error.offset, number
            ) from None
        number += 1
        whole_end = source.offset
