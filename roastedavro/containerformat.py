"""The container file format's parts that reading and writing share: its
constants, its errors, and reading its bytes (a bounded, seek-free source)
and its header. roastedavro.container is the public module."""

from __future__ import annotations

import io
import os
import sys
from typing import Any, BinaryIO

from roastedavro._record import record
from roastedavro.avro.parse import parse_schema
from roastedavro.avro.types import Schema
from roastedavro.errors import DecodeError

MAGIC = b"Obj\x01"
SYNC_SIZE = 16
#: what a block may decompress to, by default (a guard against decompression bombs)
MAX_BLOCK_SIZE = 256 * 1024 * 1024
#: the block size a writer aims at, in bytes of uncompressed data (fastavro's default)
SYNC_INTERVAL = 16000
_READ_CHUNK = 64 * 1024
#: what a read larger than a chunk is gathered by: memory grows with the
#: bytes the file really has, not with the length a damaged file claims
_GATHER_STEP = 1 << 20


class ContainerError(DecodeError):
    """A container file that cannot be read: a bad header, a damaged or
    truncated block, a sync marker that does not match, an unknown codec.
    ``block`` is the block's number (0 for the first; None for the header),
    ``offset`` the file offset where the problem is."""

    def __init__(self, message: str, offset: int, block: int | None = None):
        where = "the header" if block is None else f"block {block}"
        super().__init__(f"{where}: {message}", offset)
        self.block = block

    def __reduce__(self):
        return (_container_error, (self.reason, self.offset, self.block, type(self)))


class MissingSchemaError(ContainerError, KeyError):
    """A header without ``avro.schema``. Also the ``KeyError`` fastavro
    raises for it."""

    __str__ = Exception.__str__  # the message, not KeyError's quoted key


def _container_error(
    reason: str, offset: int, block: int | None, kind: type[ContainerError] | None = None
) -> ContainerError:
    error = (kind or ContainerError).__new__(kind or ContainerError)
    DecodeError.__init__(error, reason, offset)
    error.block = block
    return error


class FileEndedError(ContainerError):
    """A file that ends before its header or a block does (cut short)."""


# -- reading bytes -----------------------------------------------------------------


def _seekable(fo: Any) -> bool:
    """Whether ``fo`` says it can tell and seek: a stream that only reads (a
    socket's or an HTTP body's, an object with nothing but read()) is never
    asked, as fastavro never asks it."""
    seekable = getattr(fo, "seekable", None)
    try:
        return bool(seekable()) if seekable is not None else False
    except (OSError, ValueError):
        return False


class _Source:
    """A binary stream read forward, with the offset of every byte.

    Memory follows the bytes the stream has, not the sizes the file claims:
    a large read gathers what arrives a step at a time. Between ``mark()``
    and ``unmark()`` the bytes read are kept, so ``rewind()`` can go back to
    just after the mark (skip mode searches a damaged block's own bytes).

    A stream that cannot seek (a pipe, a socket's) is never read past the
    bytes used, so what follows the file stays the stream's, as fastavro
    leaves it (a buffered stream's varints are parsed from ``peek()``); a
    seekable one is read in chunks and put back with ``settle``."""

    def __init__(self, fo: BinaryIO):
        self.fo = fo
        self.buffer = b""
        self.start = 0  # file offset of buffer[0]
        self.position = 0  # index in buffer
        self._taken: list[bytes] | None = None
        self.seekable = _seekable(fo)
        if self.seekable:
            self.start = fo.tell()
        self._chunk = _READ_CHUNK if self.seekable else 0
        self._peek = None if self.seekable else getattr(fo, "peek", None)

    @property
    def offset(self) -> int:
        return self.start + self.position

    def _fill(self, needed: int) -> bool:
        """At least ``needed`` bytes after position, if the stream has them
        (for small reads: ``needed`` is at most about _READ_CHUNK); no more
        from a stream that cannot seek."""
        while len(self.buffer) - self.position < needed:
            chunk = self.fo.read(max(self._chunk, needed - (len(self.buffer) - self.position)))
            if not chunk:
                return False
            self.start += self.position
            self.buffer = self.buffer[self.position :] + bytes(chunk)
            self.position = 0
        return True

    def at_end(self) -> bool:
        if self._peek is not None and self.position == len(self.buffer):
            return not self._peek(1)  # nothing taken: the varint after is peeked whole
        return not self._fill(1)

    def settle(self) -> None:
        """Put a seekable stream back just after the bytes used (what was
        read ahead is read again when needed)."""
        if self.seekable and self.position < len(self.buffer) and self._taken is None:
            try:
                self.fo.seek(self.offset)
            except (OSError, ValueError):
                return
            self.start, self.buffer, self.position = self.offset, b"", 0

    def mark(self) -> None:
        self._taken = []

    def unmark(self) -> None:
        self._taken = None

    def rewind(self) -> None:
        """Back to the byte after the mark: what was read since is read again."""
        taken = b"".join(self._taken or ())[1:]
        self._taken = None
        rest = self.buffer[self.position :]
        self.start = self.offset - len(taken)
        self.buffer = taken + rest if taken else rest
        self.position = 0

    def read(self, size: int, what: str, block: int | None) -> bytes:
        if size < 0:
            raise ContainerError(f"a negative {what} size", self.offset, block)
        if size > _READ_CHUNK and len(self.buffer) - self.position < size:
            data = self._read_large(size, what, block)
        else:
            if not self._fill(size):
                raise FileEndedError(
                    f"the file ends in the {what}: {size} bytes needed, "
                    f"{len(self.buffer) - self.position} left",
                    self.offset,
                    block,
                )
            data = self.buffer[self.position : self.position + size]
            self.position += size
        if self._taken is not None:
            self._taken.append(data)
        return data

    def take_block(self, sync: bytes, max_size: int) -> tuple[int, bytes] | None:
        """The whole, well-formed block at the offset, taken: its record
        count and data (its frame read in C, its sync marker checked). None,
        nothing taken, for anything else (a damaged or cut-short block, a
        block larger than a chunk, a stream that cannot seek, bytes being
        kept for rewind, the runtime not loaded): the caller reads it the
        careful way, which says what is wrong."""
        # the C reader once the runtime is loaded (decoding loads it): the
        # commands that only walk blocks (count, getmeta) stay light
        runtime = sys.modules.get("roastedavro._runtime")
        if runtime is None or self._taken is not None or not self.seekable:
            return None
        block_frame = runtime.block_frame
        # (a frame's two varints take at most 20 bytes; a file's last few
        # bytes, fewer, are left to the careful way)
        if not self._fill(20) or (frame := block_frame(self.buffer, self.position, max_size)) is None:
            return None
        count, start, end = frame
        if end + SYNC_SIZE > len(self.buffer):
            if end - self.position > _READ_CHUNK or not self._fill(end + SYNC_SIZE - self.position):
                return None
            frame = block_frame(self.buffer, self.position, max_size)  # (the buffer moved)
            if frame is None:
                return None
            count, start, end = frame
        if self.buffer[end : end + SYNC_SIZE] != sync:
            return None
        self.position = end + SYNC_SIZE
        return count, self.buffer[start:end]

    def _read_large(self, size: int, what: str, block: int | None) -> bytes:
        offset = self.offset
        gathered = io.BytesIO()
        gathered.write(memoryview(self.buffer)[self.position :])
        self.buffer, self.position = b"", 0
        got = gathered.tell()
        while got < size:
            chunk = self.fo.read(min(size - got, _GATHER_STEP))
            if not chunk:
                # nothing is consumed: what was gathered can be read again
                self.buffer, self.start = gathered.getvalue(), offset
                raise FileEndedError(
                    f"the file ends in the {what}: {size} bytes needed, {got} left", offset, block
                )
            gathered.write(chunk)
            got += len(chunk)
        self.start = offset + size
        return gathered.getvalue()

    def skip(self, size: int, what: str, block: int | None) -> None:
        """Past ``size`` bytes, seeking over them where the stream can."""
        left = len(self.buffer) - self.position
        if size <= left:
            self.position += size
            return
        offset = self.offset
        if not self.seekable:
            self.read(size, what, block)
            return
        try:
            end = self.fo.seek(0, io.SEEK_END)
            self.fo.seek(min(end, offset + size))
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            self.read(size, what, block)
            return
        self.buffer, self.position, self.start = b"", 0, min(end, offset + size)
        if offset + size > end:
            raise FileEndedError(
                f"the file ends in the {what}: {size} bytes needed, {end - offset} left", offset, block
            )

    def read_long(self, what: str, block: int | None) -> int:
        buffer, position = self.buffer, self.position
        if len(buffer) - position >= 10 and self._taken is None:
            # the common case, a block's frame in the buffer: no refill per byte
            shift = result = 0
            for index in range(position, position + 10):
                byte = buffer[index]
                result |= (byte & 0x7F) << shift
                if byte < 0x80:
                    self.position = index + 1
                    return (result >> 1) ^ -(result & 1)
                shift += 7
            raise ContainerError(
                f"the {what} is not a valid long (more than 10 bytes)", self.start + position, block
            )
        offset = self.offset
        if self._peek is not None and self.position == len(self.buffer):
            # a buffered stream that cannot seek: the varint from the bytes it
            # holds, then exactly its bytes taken (a read per byte otherwise)
            ahead = self._peek(1)
            shift = result = 0
            for index in range(min(10, len(ahead))):
                byte = ahead[index]
                result |= (byte & 0x7F) << shift
                if byte < 0x80:
                    self.read(index + 1, what, block)
                    return (result >> 1) ^ -(result & 1)
                shift += 7
        shift = result = 0
        for count in range(10):
            if not self._fill(1):
                raise FileEndedError(f"the file ends in the {what}", offset, block)
            byte = self.buffer[self.position]
            self.position += 1
            if self._taken is not None:
                self._taken.append(bytes((byte,)))
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return (result >> 1) ^ -(result & 1)
            shift += 7
        raise ContainerError(f"the {what} is not a valid long (more than 10 bytes)", offset, block)

    def find(self, marker: bytes) -> bool:
        """Move just past the next ``marker``; False at the end of the stream."""
        while True:
            index = self.buffer.find(marker, self.position)
            if index >= 0:
                self.position = index + len(marker)
                return True
            # keep a marker's length - 1 of the tail: a marker may straddle chunks
            keep = max(self.position, len(self.buffer) - len(marker) + 1)
            self.start += keep
            self.buffer = self.buffer[keep:]
            self.position = 0
            chunk = self.fo.read(_READ_CHUNK)
            if not chunk:
                return False
            self.buffer += bytes(chunk)


@record(frozen=True)
class Header:
    """A container file's header: its schema, codec, metadata and sync marker;
    ``size`` is the header's length in bytes (the first block's offset)."""

    schema: Schema
    codec: str
    metadata: dict
    sync: bytes
    size: int


def _read_header(source: _Source, max_size: int = MAX_BLOCK_SIZE, dialect: str = "avro") -> Header:
    start = source.offset
    magic = source.read(4, "magic", None) if source._fill(4) else b""
    if magic != MAGIC:
        shown = (magic or source.buffer[source.position : source.position + 4]).hex(" ")
        raise ContainerError(
            f"not an Avro container file: it starts with {shown or 'nothing'}, "
            "not the magic 4f 62 6a 01 (Obj\\x01)",
            start,
        )
    metadata: dict[str, bytes] = {}
    while True:
        count = source.read_long("metadata block count", None)
        if count == 0:
            break
        if count < 0:
            count = -count
            source.read_long("metadata block size", None)
        if count > 1_000_000:
            raise ContainerError(f"a metadata block of {count} entries", source.offset)
        for _ in range(count):
            key = source.read(_entry_size(source, "metadata key", max_size), "metadata key", None)
            value = source.read(_entry_size(source, "metadata value", max_size), "metadata value", None)
            try:
                metadata[key.decode("utf-8")] = value
            except UnicodeDecodeError:
                raise ContainerError("a metadata key that is not UTF-8", source.offset) from None
    sync = source.read(SYNC_SIZE, "sync marker", None)
    if "avro.schema" not in metadata:
        raise MissingSchemaError("no avro.schema in the metadata", source.offset)
    codec = metadata.get("avro.codec", b"null").decode("utf-8", "replace") or "null"
    try:
        # as Java's DataFileReader: names and defaults are not checked
        schema = parse_schema(metadata["avro.schema"].decode("utf-8"), validate=False, dialect=dialect)
        # JSON escapes of lone surrogates (\ud800) parse to text that is not
        # Unicode: no name or value of the schema can be written out
        schema.to_json().encode("utf-8")
    except UnicodeEncodeError as error:
        raise ContainerError(
            f"the file's schema (avro.schema) is not valid: it holds the lone surrogate "
            f"{error.object[error.start : error.end]!a} (a JSON escape that is not a character)",
            source.offset,
        ) from None
    except (UnicodeDecodeError, ValueError, TypeError, RecursionError) as error:
        raise ContainerError(
            f"the file's schema (avro.schema) is not valid: {error}", source.offset
        ) from None
    return Header(schema, codec, metadata, sync, source.offset - start)


def _entry_size(source: _Source, what: str, max_size: int) -> int:
    offset = source.offset
    size = source.read_long(f"{what} length", None)
    if size > max_size:
        raise ContainerError(
            f"a {what} of {size} bytes, more than max_block_size ({max_size}) allows", offset
        )
    return size


def read_header(fo: BinaryIO, max_size: int = MAX_BLOCK_SIZE) -> Header:
    """The header of the container file ``fo`` (read from its current
    position); a metadata key or value may have at most ``max_size`` bytes."""
    return _read_header(_Source(fo), max_size)


def is_avro(path_or_buffer: Any) -> bool:
    """Whether a file (a path, or a binary file object, read from its current
    position and put back) starts with the container file magic."""
    if isinstance(path_or_buffer, (str, os.PathLike)):
        with open(path_or_buffer, "rb") as fo:
            return fo.read(4) == MAGIC
    if not _seekable(path_or_buffer):
        # a stream that cannot seek (a pipe, an object with only read()): as
        # fastavro, the magic's bytes are consumed
        return path_or_buffer.read(4) == MAGIC
    position = path_or_buffer.tell()
    try:
        return path_or_buffer.read(4) == MAGIC
    finally:
        path_or_buffer.seek(position)
