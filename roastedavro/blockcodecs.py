"""The block codecs of container files (null, deflate, bzip2, xz, snappy,
zstandard and fastavro's lz4): each compresses a block's data and
decompresses it within a size bound (a guard against decompression bombs)."""

from __future__ import annotations

import zlib
from typing import Callable

from roastedavro._record import record


class MissingCodecError(ImportError, ValueError):
    """A codec whose library is not installed (writing or reading). Also a
    ValueError, as fastavro raises it."""


#: what the codecs' libraries raise on bad data (cramjam's and lzma's errors
#: are made ValueErrors where they are called)
_CODEC_ERRORS = (ValueError, OSError, EOFError, zlib.error, OverflowError)


def _cramjam(codec: str, block: int | None, offset: int):
    try:
        import cramjam
    except ImportError:
        raise MissingCodecError(
            f"the {codec} codec is supported but you need to install the cramjam package: "
            "pip install cramjam (or, from roastedavro's source tree, pip install "
            "'.[codecs]')"
        ) from None
    return cramjam


def _lz4_block():
    try:
        import lz4.block
    except ImportError:
        raise MissingCodecError(
            "the lz4 codec is supported but you need to install the lz4 package: pip install "
            "lz4 (a codec of fastavro's, not of the Avro specification)"
        ) from None
    return lz4.block


#: the most an LZ4 block gives per byte (a match's length grows by 255 per byte)
_LZ4_RATIO = 255


def _lz4_encode(data: bytes, level) -> bytes:
    # fastavro's: the uncompressed size (4 bytes, little-endian), then the LZ4 block
    return _lz4_block().compress(data)


def _lz4_decode(data: bytes, limit: int) -> bytes | bytearray:
    block = _lz4_block()
    if len(data) < 4:
        raise ValueError("an lz4 block shorter than its 4-byte size")
    size = int.from_bytes(data[:4], "little")
    if size > limit:
        raise ValueError(f"the lz4 data declares {size} bytes, more than {limit} (max_block_size)")
    most = (len(data) - 4) * _LZ4_RATIO + 16
    if size > most:
        raise ValueError(
            f"the lz4 data declares {size} bytes, more than its "
            f"{len(data) - 4} bytes can give (at most {most})"
        )
    try:
        output = block.decompress(data)
    except block.LZ4BlockError as error:
        raise ValueError(f"bad lz4 data: {error}") from None
    if len(output) != size:
        raise ValueError(f"the lz4 data gives {len(output)} bytes, not the {size} it declares")
    return output


def _bounded(output: bytes | bytearray, limit: int, codec: str) -> bytes | bytearray:
    if len(output) > limit:
        raise ValueError(f"the {codec} data decompresses to more than {limit} bytes (max_block_size)")
    return output


#: what one call of a streaming decompressor may give: what a block
#: decompresses to is gathered a step at a time, so nothing is allocated
#: for output the data does not produce
_STEP = 1 << 20


def _streamed(decompressor, data: bytes, limit: int, codec: str):
    """The output of a zlib, bz2 or lzma decompressor, at most ``limit``
    bytes, gathered in steps (one buffer that grows with what is produced)."""
    chunk = decompressor.decompress(data, min(_STEP, limit + 1))
    if decompressor.eof:
        return _bounded(chunk, limit, codec)
    output = bytearray(chunk)
    while not decompressor.eof:
        if len(output) > limit:
            break
        tail = getattr(decompressor, "unconsumed_tail", b"")
        chunk = decompressor.decompress(tail, min(_STEP, limit + 1 - len(output)))
        if not chunk and not tail and not decompressor.eof:
            # nothing more comes from the data given
            raise ValueError(f"the {codec} data ends before its end")
        output += chunk
    return _bounded(output, limit, codec)


def _deflate_decode(data: bytes, limit: int) -> bytes | bytearray:
    return _streamed(zlib.decompressobj(-15), data, limit, "deflate")


def _deflate_encode(data: bytes, level: int | None) -> bytes:
    compressor = zlib.compressobj(
        level if level is not None else zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15
    )
    return compressor.compress(data) + compressor.flush()


# bz2 and lzma are imported by the files that use them (liblzma and libbz2
# are a few hundred KB of a process that never meets those codecs)


def _bzip2_encode(data: bytes, level: int | None) -> bytes:
    import bz2

    return bz2.compress(data, level or 9)


def _bzip2_decode(data: bytes, limit: int) -> bytes | bytearray:
    import bz2

    return _streamed(bz2.BZ2Decompressor(), data, limit, "bzip2")


def _xz_encode(data: bytes, level: int | None) -> bytes:
    import lzma

    return lzma.compress(data, lzma.FORMAT_XZ, preset=level if level is not None else 6)


def _xz_decode(data: bytes, limit: int) -> bytes | bytearray:
    import lzma

    try:
        return _streamed(lzma.LZMADecompressor(lzma.FORMAT_XZ), data, limit, "xz")
    except lzma.LZMAError as error:
        raise ValueError(str(error) or "LZMAError") from None


#: the most a byte of raw snappy data can give: a copy with a 2-byte offset
#: is 3 bytes and gives at most 64 (literals give what they hold, a copy
#: with a 1-byte offset at most 11 from 2 bytes, one with a 4-byte offset
#: at most 64 from 5)
_SNAPPY_RATIO = (64, 3)
#: the most a zstandard block gives (128 KiB) and the fewest bytes it takes
#: (a 3-byte header and the one byte of a run)
_ZSTD_BLOCK_OUTPUT, _ZSTD_BLOCK_INPUT = 128 * 1024, 4


def _snappy_length(body) -> tuple[int, int]:
    """The uncompressed length raw snappy data declares (a varint of at most
    32 bits) and the length of that varint."""
    value = shift = 0
    for index in range(min(5, len(body))):
        byte = body[index]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, index + 1
        shift += 7
    raise ValueError("the snappy data does not start with a valid length")


def _snappy_decode(data: bytes, limit: int, cramjam) -> bytes | bytearray:
    # the block is raw snappy data, then the CRC-32 of the uncompressed data
    # (4 bytes, big-endian), as the specification says
    if len(data) < 5:
        raise ValueError("a snappy block shorter than its length and 4-byte checksum")
    body, checksum = memoryview(data)[:-4], int.from_bytes(data[-4:], "big")
    size, used = _snappy_length(body)
    if size > limit:
        raise ValueError(f"the snappy data declares {size} bytes, more than {limit} (max_block_size)")
    most = (len(body) - used) * _SNAPPY_RATIO[0] // _SNAPPY_RATIO[1]
    if size > most:
        raise ValueError(
            f"the snappy data declares {size} bytes, more than its "
            f"{len(body) - used} bytes can give (at most {most})"
        )
    output = bytearray(size)
    try:
        written = cramjam.snappy.decompress_raw_into(body, output)
    except cramjam.DecompressionError as error:
        raise ValueError(f"bad snappy data: {error}") from None
    if written != size:
        raise ValueError(f"the snappy data gives {written} bytes, not the {size} it declares")
    if zlib.crc32(output) != checksum:
        raise ValueError("the snappy block's CRC-32 does not match its data")
    return output


def _zstd_frame_header(data) -> tuple[int | None, int, bool] | None:
    """What the zstd frame header that starts ``data`` says (RFC 8878): the
    content size it declares (None where it declares none or is cut short),
    where the frame's blocks start, and whether a checksum ends the frame;
    None where ``data`` starts no frame."""
    if len(data) < 5 or data[:4] != b"\x28\xb5\x2f\xfd":
        return None
    descriptor = data[4]
    size_flag, single = descriptor >> 6, (descriptor >> 5) & 1
    position = 5 + (0 if single else 1) + (0, 1, 2, 4)[descriptor & 3]
    width = (1 if single else 0, 2, 4, 8)[size_flag]
    declared = None
    if width and len(data) >= position + width:
        declared = int.from_bytes(data[position : position + width], "little")
        declared += 256 if width == 2 else 0
    return declared, position + width, bool((descriptor >> 2) & 1)


def _zstd_content_size(data) -> int | None:
    """The content size a zstd frame header declares, or None."""
    header = _zstd_frame_header(data)
    return None if header is None else header[0]


def _zstd_decode(data: bytes, limit: int, cramjam) -> bytes | bytearray:
    declared = _zstd_content_size(data)
    if declared is not None and declared > limit:
        raise ValueError(f"the zstandard data declares {declared} bytes, more than {limit} (max_block_size)")
    most = (len(data) // _ZSTD_BLOCK_INPUT + 1) * _ZSTD_BLOCK_OUTPUT
    if declared is not None and declared > most:
        raise ValueError(
            f"the zstandard data declares {declared} bytes, more than its "
            f"{len(data)} bytes can give (at most {most})"
        )
    # into a buffer of the declared size, or one that grows up to the limit:
    # a frame that does not fit is an error, so memory stays bounded
    ceiling = min(limit, most)
    capacity = declared if declared is not None else min(ceiling, max(64 * 1024, 8 * len(data)))
    while True:
        output = bytearray(capacity)
        try:
            written = cramjam.zstd.decompress_into(data, output)
        except cramjam.DecompressionError as error:
            full = "whole buffer" in str(error)
            del output
            if full and capacity < ceiling:
                # more than declared (frames after the first) or than guessed
                declared = None
                capacity = min(ceiling, capacity * 4)
                continue
            if full:
                raise ValueError(
                    f"the zstandard data decompresses to more than {capacity} bytes (max_block_size)"
                ) from None
            raise ValueError(f"bad zstandard data: {error}") from None
        del output[written:]
        return output


def _zstd_frame_end(data, header: tuple[int | None, int, bool] | None = None) -> int | None:
    """Where the zstd frame that starts ``data`` ends, by its header (or the
    ``header`` _zstd_frame_header gave), block headers and checksum (RFC
    8878), or None where it is no frame or runs past the data."""
    if header is None:
        header = _zstd_frame_header(data)
        if header is None:
            return None
    _, position, checksum = header
    size = len(data)
    while True:
        if position + 3 > size:
            return None
        block = data[position] | data[position + 1] << 8 | data[position + 2] << 16
        kind = (block >> 1) & 3
        if kind == 3:  # reserved
            return None
        # raw and compressed blocks hold their size's bytes, a run one byte
        position += 3 + (1 if kind == 1 else block >> 3)
        if block & 1:  # the last block
            break
    position += 4 if checksum else 0
    return position if position <= size else None


def _zstd_decode_frames(datas: list, limit: int, most: int, cramjam) -> list | None:
    """The first blocks' data decompressed in one call (the GIL released
    for all of them: roastedavro.readahead's worker), as views of one
    buffer: as many blocks as their frames declare at most ``most`` bytes
    for (one at least). None where the first block's frame does not declare
    its size, declares more than ``limit`` or its bytes can give, or the data
    does not decompress to the sizes declared: each block is decoded alone
    then, for its own error."""
    sizes: list[int] = []
    for data in datas:
        header = _zstd_frame_header(data)
        # each block exactly one frame: joined, a frame cut across two
        # blocks would decode, which alone each block does not
        if header is None or _zstd_frame_end(data, header) != len(data):
            break
        declared = header[0]
        if (
            declared is None
            or declared > limit
            or declared > (len(data) // _ZSTD_BLOCK_INPUT + 1) * _ZSTD_BLOCK_OUTPUT
        ):
            break
        if sizes and sum(sizes) + declared > most:
            break
        sizes.append(declared)
    if not sizes:
        return None
    output = bytearray(sum(sizes))
    try:
        # concatenated frames decompress to their outputs, concatenated
        written = cramjam.zstd.decompress_into(b"".join(datas[: len(sizes)]), output)
    except cramjam.DecompressionError:
        return None
    if written != len(output):
        return None
    views, start, whole = [], 0, memoryview(output)
    for size in sizes:
        views.append(whole[start : start + size])
        start += size
    return views


@record(frozen=True)
class _Codec:
    name: str
    encode: Callable[[bytes, int | None], bytes]
    #: the data decompressed: bytes or a bytearray
    decode: Callable[[bytes, int], bytes | bytearray]
    #: the first of several blocks' data (at most a given output) decompressed
    #: in one call that releases the GIL, as views of one buffer, or None
    #: where they must be decoded one by one
    decode_frames: Callable[[list, int, int], list | None] | None = None


def _cramjam_codec(name: str, encode, decode, decode_frames=None) -> _Codec:
    def encoding(data, level):
        return encode(data, level, _cramjam(name, None, 0))

    def decoding(data, limit):
        return decode(data, limit, _cramjam(name, None, 0))

    def decoding_frames(datas, limit, most):
        return decode_frames(datas, limit, most, _cramjam(name, None, 0))

    return _Codec(name, encoding, decoding, decoding_frames if decode_frames else None)


def _snappy_encode(data: bytes, level, cramjam) -> bytes:
    return bytes(cramjam.snappy.compress_raw(data)) + zlib.crc32(data).to_bytes(4, "big")


def _zstd_encode(data: bytes, level, cramjam) -> bytes:
    return bytes(cramjam.zstd.compress(data, level) if level is not None else cramjam.zstd.compress(data))


#: the codecs of the specification (and Java's), by their names in ``avro.codec``
CODECS: dict[str, _Codec] = {
    "null": _Codec("null", lambda data, level: data, lambda data, limit: _bounded(data, limit, "null")),
    "deflate": _Codec("deflate", _deflate_encode, _deflate_decode),
    "bzip2": _Codec("bzip2", _bzip2_encode, _bzip2_decode),
    "xz": _Codec("xz", _xz_encode, _xz_decode),
    "snappy": _cramjam_codec("snappy", _snappy_encode, _snappy_decode),
    "zstandard": _cramjam_codec("zstandard", _zstd_encode, _zstd_decode, _zstd_decode_frames),
    # fastavro's, read and written as fastavro does
    "lz4": _Codec("lz4", _lz4_encode, _lz4_decode),
}
