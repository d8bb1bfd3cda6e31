"""fastavro's container file functions over roastedavro's container files.

``writer`` writes the bytes fastavro writes for the same records, schema,
codec, metadata, sync marker and sync interval: fastavro's header (the
schema as given, ``json.dumps``'d without fastavro's hints; the metadata
map in fastavro's order), its blocks (each ends with the record that brings
its data to ``sync_interval`` bytes or more) and its compressors (deflate
with the three bytes fastavro leaves after the raw stream). Records are
written by the compiled codec, many per call. A stream that fastavro
appends to (seekable, not at its start) is appended to, with the file's
schema, codec and sync marker.

``reader`` and ``block_reader`` have fastavro's attributes in fastavro's
forms, and raise what fastavro raises: fastavro's ``SchemaResolutionError``
for data the reader's schema cannot read, ``UnicodeDecodeError`` for text
that is not UTF-8, ``EOFError`` for a file cut short (each also a
``roastedavro.container.ContainerError`` naming the block and offset).
"""

from __future__ import annotations

import io
import json
import os
import re
import warnings
import zlib
from typing import Any, BinaryIO, Callable, Iterable, Iterator

from roastedavro._datum import encode_long
from roastedavro.avro.types import Schema
from roastedavro.container import (
    CODECS,
    MAGIC,
    SYNC_SIZE,
    ContainerError,
    FileEndedError,
    FileReader,
    FileWriter,
    Header,
    _Codec,
    _check_frames,
    _cramjam,
    _lz4_block,
    _read_header,
    _Source,
)
from roastedavro.container import Block as _StoredBlock
from roastedavro.errors import DatumError, DecodeError
from roastedavro.errors import SchemaResolutionError as _RoastedResolutionError
from roastedavro.errors import (
    IndexDecodeError,
    LengthDecodeError,
    TextDecodeError,
    TruncatedError,
    UnreadableDatumError,
)
from roastedavro.fastavro._logical import Plan, logical_plan
from roastedavro.fastavro._codecs import _named_codec, codec_for, fastavro_pair
from roastedavro.fastavro._models import SchemaResolutionError, as_model
from roastedavro.fastavro._writing import fastavro_error, strict_codec, validation_error, without_tuples
from roastedavro.fastavro.schema import _fastavro_parse_schema

__all__ = ["writer", "Writer", "reader", "block_reader", "Block", "fastavro_form", "resolution_error"]

#: fastavro's hints in its parsed form, never written to a file
_HINTS = ("__fastavro_parsed", "__named_schemas")


# -- errors ---------------------------------------------------------------------


def _restore(kind: type[BaseException], attributes: dict) -> BaseException:
    error = kind.__new__(kind)
    for name, value in attributes.items():
        setattr(error, name, value)
    return error


class _Typed:
    """A container error that is also the kind fastavro raises: made from
    the ContainerError's message, block and offset."""

    _UNICODE = ("encoding", "object", "start", "end")
    # a ContainerError's (the classes are ContainerErrors too)
    args: tuple[Any, ...]
    offset: int
    block: int | None
    reason: str

    @classmethod
    def of(cls, error: ContainerError, **attributes: Any) -> Any:
        typed = cls.__new__(cls)
        typed.args = error.args
        typed.offset, typed.block = error.offset, error.block
        for name, value in attributes.items():
            setattr(typed, name, value)
        typed.reason = error.reason
        return typed

    def __str__(self) -> str:
        return self.args[0] if self.args else ""

    def __reduce__(self) -> tuple[Any, ...]:
        attributes = dict(self.__dict__, args=self.args, reason=self.reason)
        if isinstance(self, UnicodeDecodeError):
            attributes.update((name, getattr(self, name)) for name in self._UNICODE)
        return (_restore, (type(self), attributes))


class TruncatedFileError(_Typed, FileEndedError, TruncatedError):
    """A file whose header, block or record ends before it does: also an
    ``EOFError``, as fastavro says it."""


class InvalidTextError(_Typed, ContainerError, TextDecodeError):
    """A string or map key in a block that is not UTF-8: also a
    ``UnicodeDecodeError``, as fastavro raises it."""


class NegativeLengthError(_Typed, ContainerError, LengthDecodeError):
    """A negative length in a block: also the ``EOFError`` fastavro raises."""


class BadIndexError(_Typed, ContainerError, IndexDecodeError):
    """A union branch or enum symbol index a block's schema lacks: also the
    ``IndexError`` fastavro raises."""


class UnreadableDataError(_Typed, ContainerError, SchemaResolutionError):
    """Data that the reader's schema cannot read (a union branch or an enum
    symbol the reader has not): fastavro's SchemaResolutionError (and the
    drop-in's), with the block and offset."""


_NO_DEFAULT = re.compile(
    r"the reader's field '(?P<field>[^']*)' has no default, and the "
    r"writer's record (?P<record>\S+) has no field"
)


def resolution_error(error: _RoastedResolutionError) -> Exception:
    """roastedavro's SchemaResolutionError as the drop-in's (fastavro's too),
    with fastavro's words where its users match them."""
    reason = error.reason
    missing = _NO_DEFAULT.match(reason)
    if missing is not None:
        reason += f" (No default value for field {missing['field']} in {missing['record']})"
    converted = SchemaResolutionError(reason, error.writer_path, error.reader_path)
    converted.__cause__ = None
    return converted


# -- the schema's forms ------------------------------------------------------------


def fastavro_form(schema: Any, *, force: bool = True, ignore_default_error: bool = False) -> Any:
    """fastavro's reader form of a schema (``parse_schema(..., _write_hint=False)``:
    no hints added, written as given; ``force=False``: a schema fastavro
    parsed already is kept as it is); a schema fastavro refuses (Java's
    reflect names with ``$``) stays as it is."""
    if isinstance(schema, Schema):
        schema = schema.to_dict()
    try:
        return _fastavro_parse_schema(
            schema, _write_hint=False, _force=force, _ignore_default_error=ignore_default_error
        )
    except Exception:  # fastavro's errors are of several kinds
        return schema


def _without_hints(schema: Any) -> Any:
    """The schema as fastavro writes it to a file's header: its hints left
    out, at the top (and in a list's schemas), as fastavro leaves them out."""
    if isinstance(schema, dict):
        return {key: value for key, value in schema.items() if key not in _HINTS}
    if isinstance(schema, list):
        return [_without_hints(item) if isinstance(item, dict) else item for item in schema]
    return schema


# -- writing ------------------------------------------------------------------------


def _deflate(level: int | None) -> Callable[[bytes], bytes]:
    # fastavro's: zlib's stream without its 2-byte header and last byte
    # (3 bytes of the Adler-32 follow the raw deflate data; readers stop
    # at the stream's end)
    if level is None:
        return lambda data: zlib.compress(data)[2:-1]
    return lambda data: zlib.compress(data, level)[2:-1]


def _compressor(codec: str, level: int | None) -> Callable[[bytes], bytes] | None:
    """fastavro's compressor of a codec (a missing library says so now);
    None for null (the data as it is)."""
    if codec == "null":
        return None
    if codec == "deflate":
        return _deflate(level)
    if codec == "bzip2":
        import bz2

        return bz2.compress  # fastavro's level: the default, whatever is given
    if codec == "xz":
        import lzma

        return lzma.compress
    if codec in ("snappy", "zstandard"):
        _cramjam(codec, None, 0)
    elif codec == "lz4":
        _lz4_block()
    encode = CODECS[codec].encode
    return lambda data: encode(data, level)


def _header_bytes(metadata: dict, sync: bytes) -> bytes:
    """fastavro's header: the magic, the metadata map, the sync marker."""
    out = [MAGIC]
    if metadata:
        out.append(encode_long(len(metadata)))
        for key, value in metadata.items():
            # str keys and values, as fastavro takes them (its errors' types)
            if not isinstance(key, str):
                raise TypeError(f"metadata keys must be string, not {type(key).__name__} {key!r}")
            if not isinstance(value, str):
                raise AttributeError(
                    f"metadata values must be str (their UTF-8 is written), "
                    f"not {type(value).__name__}: the value of {key!r}"
                )
            key, value = key.encode("utf-8"), value.encode("utf-8")
            out += [encode_long(len(key)), key, encode_long(len(value)), value]
    out += [b"\x00", sync]
    return b"".join(out)


def _appendable(fo: Any) -> bool:
    """fastavro's rule: a seekable stream not at its start holds a file to
    append to; one that cannot be read ('ab') is fastavro's ValueError."""
    seekable = getattr(fo, "seekable", None)
    if seekable is None or not seekable() or fo.tell() == 0:
        return False
    if getattr(fo, "name", "") == "<stdout>":
        return False  # a terminal's stdout may say it seeks
    readable = getattr(fo, "readable", None)
    if readable is not None and readable():
        return True
    raise ValueError("When appending to an avro file you must use the 'a+' mode, not just 'a'")


def _encoder(
    schema: Any, strict: bool, strict_allow_default: bool
) -> Callable[[Iterator[Any], int, list], tuple[bytes, int]]:
    """encode_next of the records' codec (fastavro's strict checks in the
    interpreter, tier 0, when asked for)."""
    if strict or strict_allow_default:
        return strict_codec(schema, strict, strict_allow_default).dump_next
    # the codec itself: fastavro's custom logical types were applied to the records before
    codec = codec_for(schema)
    codec = getattr(codec, "plain", codec)

    def encode_next(records: Iterator[Any], limit: int, rescued: list) -> tuple[bytes, int]:
        # the codec's current engine: it moves to the compiled codec when ready
        return codec._writer().dump_next(records, limit, rescued)

    return encode_next


def _open_blocks(
    fo: BinaryIO,
    schema: Any,
    codec: str,
    sync_interval: int,
    metadata: dict | None,
    sync_marker: bytes | None,
    level: int | None,
    strict: bool,
    strict_allow_default: bool,
) -> tuple[FileWriter, Any]:
    """The block writer of a new file (its header written) or of the file
    ``fo`` holds (appended to, as fastavro appends: the file's own schema,
    codec and sync marker), and the schema the records are written in."""
    options: dict[str, Any] = dict(sync_interval=sync_interval)
    if _appendable(fo):
        fo.seek(0)
        source = _Source(fo)
        header = _read_header(source, dialect="fastavro")
        _check_frames(fo, source, header, False)
        fo.seek(0, io.SEEK_END)
        schema = header.schema  # the file's, as fastavro appends
    else:
        if schema is None:
            raise ValueError("a schema is needed to write a new file (None is for appending)")
        model = as_model(schema)
        if codec not in CODECS:
            raise ValueError(f"unrecognized codec: {codec}")
        sync = sync_marker or os.urandom(SYNC_SIZE)
        if len(sync) != SYNC_SIZE:
            raise ValueError(f"a sync marker has {SYNC_SIZE} bytes, not {len(sync)}")
        # fastavro's order: the caller's metadata, then avro.codec, then avro.schema
        meta = dict(metadata or {})
        meta["avro.codec"] = codec
        meta["avro.schema"] = (
            model.to_json() if isinstance(schema, Schema) else json.dumps(_without_hints(schema))
        )
        compress = _compressor(codec, level)
        data = _header_bytes(meta, sync)
        header = Header(model, codec, {}, sync, len(data))
        options["compress"] = compress
        fo.write(data)
    if "compress" not in options:
        options["compress"] = _compressor(header.codec, level)
    blocks = FileWriter(
        fo,
        None,
        header.codec,
        _header=header,
        encode_next=_encoder(schema, strict, strict_allow_default),
        **options,
    )
    return blocks, schema


def writer(
    fo: BinaryIO,
    schema: Any,
    records: Iterable[Any],
    codec: str = "null",
    sync_interval: int = 16000,
    metadata: dict | None = None,
    validator: Any = None,
    sync_marker: bytes | None = None,
    codec_compression_level: int | None = None,
    *,
    strict: bool = False,
    strict_allow_default: bool = False,
    disable_tuple_notation: bool = False,
) -> None:
    """Write ``records`` as an Avro container file (fastavro's ``writer``):
    the bytes fastavro writes. A stream that is seekable and not at its start
    (a file opened ``"a+b"``, a BytesIO written to) is appended to with the
    file's own schema, codec and sync marker, as fastavro appends (the
    ``schema`` given is not used); a file whose blocks are damaged is
    refused (appended records would be lost to readers). ``strict`` and
    ``strict_allow_default`` are checked as fastavro checks them;
    ``validator=True`` makes a record that cannot be written a ValidationError."""
    if isinstance(records, dict):
        # a common mistake, with an unhelpful error otherwise (fastavro's words)
        raise ValueError('"records" argument should be an iterable, not dict')
    if type(fo).__name__ == "AvroJSONEncoder" and hasattr(fo, "_write_union_type"):
        from roastedavro.fastavro.json import json_writer

        return json_writer(
            fo._fo,  # type: ignore[attr-defined]
            schema,
            records,
            write_union_type=fo._write_union_type,
            validator=bool(validator),
            strict=strict,
            strict_allow_default=strict_allow_default,
            disable_tuple_notation=disable_tuple_notation,
        )
    blocks, schema = _open_blocks(
        fo,
        schema,
        codec,
        sync_interval,
        metadata,
        sync_marker,
        codec_compression_level,
        strict,
        strict_allow_default,
    )
    if disable_tuple_notation:
        records = (without_tuples(record) for record in records)
    plan = logical_plan(schema)
    if plan is not None:
        records = (plan.prepare(record) for record in records)
    drawn = _Drawn(records) if validator else records
    try:
        blocks.write_many(drawn)
        blocks.close()
    except DatumError as error:
        if validator:
            # the records are encoded as they are drawn: the last one failed
            # a _Drawn where there is a validator
            raise validation_error(error, schema, drawn.last) from None  # type: ignore[attr-defined]
        raise fastavro_error(error, DatumError) from None


class Writer:
    """fastavro's ``Writer``: a container file written a record at a time.
    ``write(record)`` encodes the record at once (a record that cannot be
    written raises there, and the file goes on without it); a block ends with
    the record that brings it to ``sync_interval`` bytes, as in ``writer``,
    so the same records make fastavro's bytes. ``flush()`` writes the
    records so far as a block and flushes ``fo``; ``dump()`` writes the
    block without flushing ``fo``; ``write_block(block)`` copies a
    ``block_reader`` block's records (compressed with this file's codec).
    A stream fastavro appends to is appended to, as ``writer`` does.
    ``options`` are fastavro's: ``strict``, ``strict_allow_default``,
    ``disable_tuple_notation``."""

    def __init__(
        self,
        fo: BinaryIO,
        schema: Any,
        codec: str = "null",
        sync_interval: int = 16000,
        metadata: dict | None = None,
        validator: bool = False,
        sync_marker: bytes = b"",
        compression_level: int | None = None,
        options: dict | None = None,
    ):
        options = options or {}
        strict = bool(options.get("strict"))
        allow_default = bool(options.get("strict_allow_default"))
        self._blocks, self._schema = _open_blocks(
            fo,
            schema,
            codec,
            sync_interval,
            metadata,
            sync_marker or None,
            compression_level,
            strict,
            allow_default,
        )
        # one record at a time: the codec's dump (tier 0, then the compiled
        # codec when it is ready: its dump is looked up at each call)
        if strict or allow_default:
            self._encoding = strict_codec(self._schema, strict, allow_default)
        else:
            encoding = codec_for(self._schema)
            self._encoding = getattr(encoding, "plain", encoding)
        self._plan = logical_plan(self._schema)
        self._tuples = bool(options.get("disable_tuple_notation"))
        self.validator = validator
        self.fo = fo
        self.sync_interval = sync_interval
        self.compression_level = compression_level
        self.sync_marker = self._blocks.sync_marker
        self.options = options

    @property
    def schema(self) -> Any:
        """The schema as fastavro's ``parse_schema`` gives it, hints included
        (the file's, when appending)."""
        schema = self._schema
        if isinstance(schema, Schema):
            schema = schema.to_dict()
        try:
            return _fastavro_parse_schema(schema)
        except Exception:  # fastavro refuses it (Java's reflect names with $)
            return schema

    @property
    def block_count(self) -> int:
        """Records written since the last block ended."""
        return self._blocks._count

    def write(self, record: Any) -> None:
        given = record
        if self._tuples:
            record = without_tuples(record)
        if self._plan is not None:
            record = self._plan.prepare(record)
        try:
            data = self._encoding.dump(record)
        except DatumError as error:
            if self.validator:
                raise validation_error(error, self._schema, given) from None
            raise fastavro_error(error, DatumError) from None
        self._blocks.add_encoded(data)

    def write_block(self, block: Block) -> None:
        # the records before it end their own block, as in fastavro
        self._blocks.write_encoded_block(block.bytes_.getvalue(), block.num_records)

    def dump(self) -> None:
        # as fastavro's: a block even of no records
        self._blocks._write_block(empty=True)

    def flush(self) -> None:
        self._blocks.flush()


class _Drawn:
    """An iterator of records that remembers the last one drawn."""

    __slots__ = ("records", "last")

    def __init__(self, records: Iterable[Any]):
        self.records = iter(records)
        self.last: Any = None

    def __iter__(self) -> _Drawn:
        return self

    def __next__(self) -> Any:
        self.last = next(self.records)
        return self.last


# -- reading ------------------------------------------------------------------------


class _FileReader(FileReader):
    """fastavro's ``file_reader``: the header's attributes in fastavro's forms."""

    # the file's schema as fastavro takes it (its names; the logical types it
    # does not convert read as their underlying values)
    _dialect = "fastavro"

    def __init__(
        self,
        fo: BinaryIO,
        reader_schema: Any = None,
        return_record_name: bool = False,
        return_record_name_override: bool = False,
        handle_unicode_errors: str = "strict",
        return_named_type: bool = False,
        return_named_type_override: bool = False,
        **options: Any,
    ):
        if type(fo).__name__ == "AvroJSONDecoder":
            raise TypeError(
                "roastedavro.fastavro's reader reads Avro binary files; read Avro "
                "JSON with roastedavro.fastavro.json_reader"
            )
        reader_model = as_model(reader_schema) if reader_schema else None
        try:
            super().__init__(fo, reader_model, **options)
        except FileEndedError as error:
            raise TruncatedFileError.of(
                error, args=(f"cannot read header - is it an avro file? ({error})",)
            ) from None
        except ContainerError as error:
            if error.block is None and "not an Avro container file" in error.reason:
                reason = error.reason.removeprefix("the header: ")
                raise ContainerError(
                    f"cannot read header - is it an avro file? ({reason})", error.offset
                ) from None
            raise
        naming = (
            return_record_name,
            return_record_name_override,
            return_named_type,
            return_named_type_override,
        )
        self._naming = (
            (naming, handle_unicode_errors) if any(naming) or handle_unicode_errors != "strict" else None
        )
        self.options = {
            "return_record_name": return_record_name,
            "return_record_name_override": return_record_name_override,
            "handle_unicode_errors": handle_unicode_errors,
            "return_named_type": return_named_type,
            "return_named_type_override": return_named_type_override,
        }
        header = self.header
        self._header = {"magic": MAGIC, "meta": dict(header.metadata), "sync": header.sync}
        self.metadata = {key: value.decode("utf-8", "replace") for key, value in header.metadata.items()}
        self._schema = json.loads(header.metadata["avro.schema"].decode("utf-8"))
        # fastavro's forms: parse_schema(..., _write_hint=False), as fastavro's reader has them
        self.writer_schema = fastavro_form(self._schema, ignore_default_error=reader_model is not None)
        # fastavro's form of it (the model is FileReader's)
        self.reader_schema = (
            fastavro_form(  # type: ignore[assignment]
                reader_schema, force=False
            )
            if reader_schema
            else None
        )
        self._elements: Iterator | None = None

    @property
    def schema(self) -> Any:
        warnings.warn(
            "The 'schema' attribute is deprecated. Please use 'writer_schema'",
            DeprecationWarning,
            stacklevel=2,
        )
        return self._schema

    def _find_codec(self, name: str) -> _Codec:
        # as fastavro, a codec not known is an error when the blocks are read
        # (its decode None: refused by _check_codec)
        return CODECS.get(name) or _Codec(name, None, None)  # type: ignore[arg-type]

    def _check_codec(self) -> None:
        if self._codec.decode is None:
            raise ContainerError(f"Unrecognized codec: {self.codec}", self.header.size)

    @property
    def avro_codec(self) -> Any:
        """The codec that reads the blocks, made when the first is read
        (as fastavro, a reader's schema that cannot read the file's is an
        error when records are read)."""
        if self._avro_codec is None:
            if self._naming is not None:
                writer, reader = self._models
                # tier 0's reader, where FileReader has an AvroCodec
                self._avro_codec = _named_codec(  # type: ignore[assignment]
                    writer, None if reader is writer else reader, *self._naming
                )
            else:
                try:
                    writer, reader = self._models
                    # fastavro's values where they are not the resolution's
                    named = None if reader is writer else fastavro_pair(writer, reader)
                    if named is not None:
                        self._avro_codec = named  # type: ignore[assignment]  # as above
                        return named
                    return FileReader.avro_codec.fget(self)  # type: ignore[attr-defined]  # a property
                except _RoastedResolutionError as error:
                    if isinstance(error, SchemaResolutionError):
                        raise
                    raise resolution_error(error) from None
        return self._avro_codec

    def _next_block(self) -> _StoredBlock | None:
        try:
            return super()._next_block()
        except FileEndedError as error:
            raise TruncatedFileError.of(error) from None

    def _records_error(
        self, error: DecodeError, block: _StoredBlock, data: bytes | bytearray
    ) -> ContainerError:
        contained = super()._records_error(error, block, data)
        if isinstance(error, UnreadableDatumError):
            return UnreadableDataError.of(contained, writer_path="", reader_path="")
        if isinstance(error, TextDecodeError):
            return InvalidTextError.of(
                contained, encoding="utf-8", object=error.object, start=error.start, end=error.end
            )
        if isinstance(error, TruncatedError):
            return TruncatedFileError.of(contained)
        if isinstance(error, LengthDecodeError):
            return NegativeLengthError.of(contained)
        if isinstance(error, IndexDecodeError):
            return BadIndexError.of(contained)
        return contained

    def _logical_plan(self) -> Plan | None:
        """fastavro's custom logical types in the file's schema, if any (as
        fastavro, with its reader's forms of the schemas)."""
        return logical_plan(self.writer_schema, self.reader_schema)

    def __iter__(self) -> Iterator[Any]:
        if self._elements is None:
            self._elements = self._iterate()
        return self._elements

    def __next__(self) -> Any:
        return next(iter(self))

    def _iterate(self) -> Iterator:
        raise NotImplementedError


class reader(_FileReader):
    """The records of an Avro container file (fastavro's ``reader``): iterate
    it (one iterator: ``next()`` and ``for`` go on from each other).
    ``writer_schema`` and ``reader_schema`` (None when not given) are in
    fastavro's parsed form, ``metadata`` has str values, ``codec`` is the
    codec's name, ``_header`` and ``_schema`` are fastavro's. fastavro's
    naming options and ``handle_unicode_errors`` are read by tier 0, as in
    schemaless_reader. Reading raises what fastavro raises (see the module)."""

    def _iterate(self) -> Iterator[Any]:
        self._check_codec()
        plan = self._logical_plan()
        if plan is None:
            yield from FileReader.__iter__(self)
        else:
            for record in FileReader.__iter__(self):
                yield plan.post(record)


class Block:
    """A block of a container file, as fastavro's ``block_reader`` gives it:
    ``bytes_`` (a BytesIO of its decompressed data), ``num_records``,
    ``codec``, ``writer_schema``, ``reader_schema``, ``offset`` (of its
    record count in the file) and ``size`` (its bytes in the file, sync
    marker included). Iterating it gives its records."""

    def __init__(self, owner: _FileReader, stored: _StoredBlock, data: bytes | bytearray):
        self.bytes_ = io.BytesIO(data)
        self.num_records = stored.count
        self.codec = stored.codec
        self.reader_schema = owner.reader_schema
        self.writer_schema = owner.writer_schema
        self.offset = stored.offset
        self.size = stored.stored
        self.options = owner.options
        self._owner, self._stored, self._data = owner, stored, data

    # roastedavro's Block's names
    @property
    def count(self) -> int:
        return self.num_records

    @property
    def number(self) -> int:
        return self._stored.number

    def __iter__(self) -> Iterator[Any]:
        owner = self._owner
        try:
            records = owner.decode_records(self._data, self.num_records)
        except DecodeError as error:
            raise owner._records_error(error, self._stored, self._data) from None
        plan = owner._logical_plan()
        if plan is not None:
            return (plan.post(record) for record in records)
        return iter(records)

    def __str__(self) -> str:
        return (
            f"Avro block: {len(self._data)} bytes, {self.num_records} records, "
            f"codec: {self.codec}, position {self.offset}+{self.size}"
        )


class block_reader(_FileReader):
    """The blocks of an Avro container file (fastavro's ``block_reader``):
    each a ``Block``, decompressed as it is reached; iterating a block
    gives its records. The attributes are ``reader``'s."""

    def _iterate(self) -> Iterator[Block]:
        self._check_codec()
        for stored, data in self.decompressed_blocks():
            if isinstance(data, Exception):
                raise data
            # a view of a group's buffer: copied, so a kept block holds its own bytes only
            yield Block(self, stored, bytes(data) if isinstance(data, memoryview) else data)
