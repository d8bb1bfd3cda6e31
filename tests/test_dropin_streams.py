"""roastedavro.fastavro.schemaless_reader on every kind of stream, against fastavro.

Consecutive datums read from a BytesIO, a real file (buffered and not), a pipe
(buffered and not), a read()-only object that cannot seek and one that gives a
few bytes per read() give fastavro's values and leave the stream where
fastavro leaves it, with and without a reader schema and fastavro's naming
options. Hostile bytes (counts and lengths the bytes do not back, nesting past
max_depth) end in a DecodeError on every path, with small memory, and no
stream is asked for more bytes than have arrived (read(n) with a huge n
allocates n in CPython's files).
"""

from __future__ import annotations

import copy
import decimal
import gzip
import io
import os
import threading
import tracemalloc
from decimal import Decimal

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import roastedavro.fastavro as dropin
from roastedavro import _dropin
from roastedavro.errors import DecodeError

from avro_strategies import as_read, assert_same, datums
from fuzzing import examples

pytest.importorskip("roastedavro.codec", reason="AvroCodec not available")

ITEM = {
    "type": "record",
    "name": "Item",
    "namespace": "shop",
    "fields": [
        {"name": "sku", "type": "string"},
        {"name": "qty", "type": "int"},
        {"name": "flags", "type": {"type": "array", "items": "boolean"}},
    ],
}
MIX = {
    "type": "record",
    "name": "Mix",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "ratio", "type": "float"},
        {"name": "score", "type": "double"},
        {"name": "blob", "type": "bytes"},
        {"name": "code", "type": {"type": "fixed", "name": "Code", "size": 3}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}},
        {"name": "items", "type": {"type": "array", "items": ITEM}},
        {"name": "nulls", "type": {"type": "array", "items": "null"}},
        {"name": "attrs", "type": {"type": "map", "values": ["null", "long", "string"]}},
        {
            "name": "choice",
            "type": [
                "null",
                "shop.Item",
                {"type": "record", "name": "Other", "fields": [{"name": "x", "type": "double"}]},
            ],
        },
        {"name": "next", "type": ["null", "Mix"]},
    ],
}
# a reader schema: a field left out, one added with a default, int promoted to long
READER = copy.deepcopy(MIX)
READER["fields"] = [field for field in READER["fields"] if field["name"] != "blob"] + [
    {"name": "added", "type": "string", "default": "none"}
]
READER["fields"][0] = {"name": "id", "type": "double"}

WRITER_PARSED = fastavro.parse_schema(copy.deepcopy(MIX))
READER_PARSED = fastavro.parse_schema(copy.deepcopy(READER))

LIST = {"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"]}]}
NULLS = {"type": "array", "items": "null"}


# ---------------------------------------------------------------- streams --


class ReadOnly:
    """Cannot seek, has only read(): a socket-like object. Records the sizes asked."""

    def __init__(self, data: bytes, most: int | None = None):
        self.source = io.BytesIO(data)
        self.most = most
        self.asked: list[int] = []

    def read(self, n: int = -1) -> bytes:
        self.asked.append(n)
        if self.most is not None and (n < 0 or n > self.most):
            n = self.most  # a few bytes per call, as a socket may give
        return self.source.read(n)

    def seekable(self) -> bool:
        return False

    def tell(self) -> int:
        return self.source.tell()

    def close(self) -> None:
        pass


def os_pipe(data: bytes, buffered: bool):
    """The read end of a real pipe holding ``data`` (written by a thread)."""
    read_end, write_end = os.pipe()

    def write():
        try:
            with open(write_end, "wb") as out:
                out.write(data)
        except BrokenPipeError:
            pass  # the reader stopped at an error and closed its end

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return os.fdopen(read_end, "rb", buffering=-1 if buffered else 0)


STREAMS = [
    "bytesio",
    "bytesio-written",
    "bytesio-methods",
    "file",
    "file-unbuffered",
    "pipe",
    "pipe-unbuffered",
    "read-only",
    "trickle",
    "gzip",
]


@pytest.fixture(autouse=True)
def bytesio_read_in_place():
    # "bytesio-methods" turns the in-place reading of a BytesIO off for a test
    yield
    _dropin.bytesio_in_place(True)


def test_a_bytesio_is_read_in_place_on_supported_pythons():
    # CPython 3.11-3.13's BytesIO layout, checked at import (else its methods)
    assert _dropin.bytesio_in_place() is True


def open_stream(kind: str, data: bytes, tmp_path):
    if kind == "bytesio":
        return io.BytesIO(data)
    if kind == "bytesio-written":
        # written to, so its buffer is its own and larger than the stream:
        # bytes past the stream's end (here the data again) are not the stream's
        fo = io.BytesIO()
        fo.write(data + data)
        fo.truncate(len(data))
        fo.seek(0)
        return fo
    if kind == "bytesio-methods":
        # BytesIO read through tell/read/seek, as where its layout is unknown
        _dropin.bytesio_in_place(False)
        return io.BytesIO(data)
    if kind in ("file", "file-unbuffered"):
        path = tmp_path / "data.bin"
        path.write_bytes(data)
        return open(path, "rb", buffering=-1 if kind == "file" else 0)
    if kind == "gzip":
        path = tmp_path / "data.bin.gz"
        with gzip.open(path, "wb") as out:
            out.write(data)
        return gzip.open(path, "rb")
    if kind in ("pipe", "pipe-unbuffered"):
        return os_pipe(data, kind == "pipe")
    if kind == "read-only":
        return ReadOnly(data)
    return ReadOnly(data, most=3)


def position(fo) -> int | None:
    if isinstance(fo, ReadOnly) or fo.seekable():
        return fo.tell()
    return None  # a pipe: checked by reading on to the end


OPTIONS = {
    "plain": ({}, False),
    "reader": ({}, True),
    "record-name": ({"return_record_name": True}, False),
    "record-name-reader": ({"return_record_name": True, "return_named_type": True}, True),
    "named-type-override": ({"return_named_type_override": True}, False),
}


def read_all(read, fo, options, with_reader):
    """Every datum with the stream's position after it, until EOFError."""
    reader = READER_PARSED if with_reader else None
    out = []
    while True:
        try:
            value = read(fo, WRITER_PARSED, reader, **options)
        except EOFError:
            return out
        out.append((value, position(fo)))


# ------------------------------------------------- values and positions --


@pytest.mark.parametrize("kind", STREAMS)
@pytest.mark.parametrize("option", list(OPTIONS))
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(values=st.lists(datums(MIX, max_depth=2), min_size=0, max_size=4))
def test_consecutive_datums_match_fastavro(kind, option, values, tmp_path):
    out = io.BytesIO()
    for value in values:
        fastavro.schemaless_writer(out, WRITER_PARSED, value)
    data = out.getvalue()
    options, with_reader = OPTIONS[option]
    expected = read_all(fastavro.schemaless_reader, io.BytesIO(data), options, with_reader)
    assert len(expected) == len(values)
    fo = open_stream(kind, data, tmp_path)
    try:
        got = read_all(dropin.schemaless_reader, fo, options, with_reader)
    finally:
        fo.close()
    assert len(got) == len(expected)
    for index, ((ours, at), (theirs, theirs_at)) in enumerate(zip(got, expected)):
        assert_same(ours, theirs)
        assert at is None or at == theirs_at
        if not options and not with_reader:
            assert_same(ours, as_read(values[index]))


def fastavro_bytes(value) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, WRITER_PARSED, value)
    return out.getvalue()


def large_mix(n: int) -> dict:
    return {
        "id": n,
        "name": "n" * (n * 1000),
        "ratio": 0.5,
        "score": -1.25,
        "blob": bytes(range(256)) * n,
        "code": b"abc",
        "kind": "B",
        "items": [{"sku": f"s{i}", "qty": i, "flags": [True, False] * (i % 3)} for i in range(n * 50)],
        "nulls": [None] * n,
        "attrs": {f"k{i}": i for i in range(n)},
        "choice": {"x": 2.5},
        "next": None,
    }


@pytest.mark.parametrize("kind", STREAMS)
@pytest.mark.parametrize("option", ["plain", "record-name"])
def test_datums_larger_than_any_buffer_match_fastavro(kind, option, tmp_path):
    # past a BufferedReader's 8 KiB and the first chunk, up to megabytes
    values = [large_mix(n) for n in (0, 3, 40, 1, 1200, 2)]
    data = b"".join(fastavro_bytes(value) for value in values)
    assert len(data) > 2_000_000
    options, with_reader = OPTIONS[option]
    expected = read_all(fastavro.schemaless_reader, io.BytesIO(data), options, with_reader)
    fo = open_stream(kind if kind != "trickle" else "read-only", data, tmp_path)
    try:
        assert read_all(dropin.schemaless_reader, fo, options, with_reader) == [
            (value, None if position(fo) is None else at) for value, at in expected
        ]
    finally:
        fo.close()


@pytest.mark.parametrize("kind", STREAMS)
def test_end_of_stream_is_eoferror_and_a_cut_datum_a_decode_error(kind, tmp_path):
    whole = fastavro_bytes(large_mix(2))
    for cut in (1, 7, len(whole) // 2, len(whole) - 1):
        fo = open_stream(kind, whole + whole[:cut], tmp_path)
        try:
            assert dropin.schemaless_reader(fo, WRITER_PARSED) == large_mix(2)
            with pytest.raises(DecodeError):
                dropin.schemaless_reader(fo, WRITER_PARSED)
        finally:
            fo.close()
    fo = open_stream(kind, whole, tmp_path)
    try:
        dropin.schemaless_reader(fo, WRITER_PARSED, return_record_name=True)
        with pytest.raises(EOFError):
            dropin.schemaless_reader(fo, WRITER_PARSED, return_record_name=True)
    finally:
        fo.close()


@pytest.mark.parametrize("in_place", [True, False])
def test_a_bytesio_ends_where_its_stream_ends_not_its_buffer(in_place):
    # the buffer still holds the rest of a datum past the stream's end (a
    # truncate within the allocation keeps it): that datum is cut short
    whole = fastavro_bytes(large_mix(2))
    _dropin.bytesio_in_place(in_place)
    for cut in (1, len(whole) // 2, len(whole) - 1):
        fo = io.BytesIO()
        fo.write(whole + whole)
        fo.truncate(len(whole) + cut)
        fo.seek(0)
        assert dropin.schemaless_reader(fo, WRITER_PARSED) == large_mix(2)
        with pytest.raises(EOFError):
            fastavro.schemaless_reader(io.BytesIO(whole[:cut]), WRITER_PARSED)
        # (not fo.getvalue(): it would shrink the buffer to the stream)
        with pytest.raises(DecodeError):
            dropin.schemaless_reader(fo, WRITER_PARSED)


@pytest.mark.parametrize("errors", ["replace", "ignore"])
@pytest.mark.parametrize("kind", ["bytesio", "read-only", "file"])
def test_unicode_options_are_fastavros_and_strict_is_a_decode_error(errors, kind, tmp_path):
    data = b"\x08a\xffb\xc3" + fastavro_bytes_of("string", "ok")
    theirs = io.BytesIO(data)
    expected = [fastavro.schemaless_reader(theirs, "string", handle_unicode_errors=errors) for _ in range(2)]
    fo = open_stream(kind, data, tmp_path)
    try:
        assert [
            dropin.schemaless_reader(fo, "string", handle_unicode_errors=errors) for _ in range(2)
        ] == expected
    finally:
        fo.close()
    with pytest.raises(DecodeError, match="UTF-8"):
        dropin.schemaless_reader(ReadOnly(data), "string")
    with pytest.raises(DecodeError, match="UTF-8"):
        dropin.schemaless_reader(ReadOnly(data), "string", return_record_name=True)


def fastavro_bytes_of(schema, value) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema, value)
    return out.getvalue()


# ----------------------------------------------------------- hostile bytes --


def varint(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


BOMBS = {
    # an array of null claiming 2**40 items: 6 bytes
    "nulls-2**40": (NULLS, varint(2**40), []),
    # 2**62 items, and a string claiming 2**62 bytes, as a 16-byte message
    "nulls-2**62": (NULLS, varint(2**62) + b"\x00" * 6, []),
    "string-2**62": ("string", varint(2**62) + b"abcdef", ""),
    "bytes-2**40": ("bytes", varint(2**40) + bytes(10), b""),
    # within a block's limit but past the item budget (2 million items, 5 bytes)
    "nulls-over-budget": (NULLS, varint(2_000_000) + b"\x00", []),
    # many blocks of a million items each
    "null-blocks": (NULLS, (varint(1_000_000) * 40) + b"\x00", []),
    # a record nested 100,000 levels deep (max_depth is 500)
    "deep": (LIST, b"\x02" * 100_000 + b"\x00", {"next": None}),
    # a map claiming 2**62 entries
    "map-2**62": ({"type": "map", "values": "null"}, varint(2**62) + b"\x02a", {}),
    "bad-index": (["null", "string"], b"\x7f", None),
}


@pytest.mark.parametrize("kind", STREAMS)
@pytest.mark.parametrize("option", ["plain", "record-name"])
@pytest.mark.parametrize("bomb", list(BOMBS))
def test_hostile_bytes_end_in_a_decode_error_with_small_memory(bomb, option, kind, tmp_path):
    schema, data, sample = BOMBS[bomb]
    options = {"return_record_name": True} if option == "record-name" else {}
    # the codec is compiled before measuring
    assert (
        dropin.schemaless_reader(io.BytesIO(fastavro_bytes_of(schema, sample)), schema, **options) == sample
    )
    fo = open_stream(kind, data, tmp_path)
    tracemalloc.start()
    try:
        with pytest.raises(DecodeError):
            dropin.schemaless_reader(fo, schema, **options)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        fo.close()
    # nothing is sized by a claimed count or length: at most the bytes read
    # and, before the item budget ends a load, a list of the budget's items
    # (the message's length plus the million-item allowance, 8 bytes each)
    assert peak < 8 * (len(data) + 1_000_000) + 1_000_000, peak
    if isinstance(fo, ReadOnly):
        assert max(fo.asked) <= 65536, fo.asked


@pytest.mark.parametrize("kind", ["read-only", "pipe", "file"])
def test_a_huge_length_is_read_in_bounded_chunks_as_bytes_arrive(kind, tmp_path):
    # a string that claims 2**62 bytes, followed by 300 KB: reading stops at
    # the end of the stream, each read asks for at most what has arrived (64 KiB at first)
    data = varint(2**62) + b"x" * 300_000
    fo = open_stream(kind, data, tmp_path)
    try:
        with pytest.raises(DecodeError, match="truncated"):
            dropin.schemaless_reader(fo, "string", return_record_name=True)
    finally:
        fo.close()
    fo = ReadOnly(data)
    with pytest.raises(DecodeError, match="truncated"):
        dropin.schemaless_reader(fo, "string")
    asked = [n for n in fo.asked if n > 1]
    assert asked[0] == 65536 and all(b <= 2 * a for a, b in zip(asked, asked[1:])), asked
    assert max(asked) < 2 * len(data)


@pytest.mark.parametrize("kind", STREAMS)
def test_items_within_the_budget_read_as_fastavro(kind, tmp_path):
    # 900,000 nulls in 4 bytes: within the million-item allowance
    data = varint(900_000) + b"\x00" + varint(3) + b"\x00"
    fo = open_stream(kind, data, tmp_path)
    try:
        assert dropin.schemaless_reader(fo, NULLS) == [None] * 900_000
        assert dropin.schemaless_reader(fo, NULLS, return_record_name=True) == [None] * 3
        with pytest.raises(EOFError):
            dropin.schemaless_reader(fo, NULLS)
    finally:
        fo.close()


def test_depth_limit_is_the_codecs_on_every_path():
    # 400 levels read (under max_depth 500), as fastavro reads them
    data = b"\x02" * 400 + b"\x00"
    for options in ({}, {"return_record_name": True}):
        expected = fastavro.schemaless_reader(io.BytesIO(data), LIST, **options)
        for fo in (io.BytesIO(data), ReadOnly(data)):
            assert dropin.schemaless_reader(fo, LIST, **options) == expected
        with pytest.raises(DecodeError, match="nested"):
            dropin.schemaless_reader(ReadOnly(b"\x02" * 600 + b"\x00"), LIST, **options)


NAMING_OPTIONS = [
    {"return_record_name": True},
    {"return_record_name_override": True},
    {"return_named_type": True},
    {"return_named_type_override": True},
    {"handle_unicode_errors": "replace"},
    {"return_record_name": True, "handle_unicode_errors": "ignore"},
]


@pytest.mark.parametrize("kind", ["bytesio", "read-only"])
def test_a_decimal_past_its_precision_is_exact_never_rounded(kind, tmp_path):
    schema = {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2}
    data = fastavro_bytes_of("bytes", (99999).to_bytes(3, "big"))  # 999.99: five digits
    assert str(fastavro.schemaless_reader(io.BytesIO(data), schema)) == "1000"  # fastavro rounds
    assert str(dropin.schemaless_reader(open_stream(kind, data, tmp_path), schema)) == "999.99"
    for options in NAMING_OPTIONS:
        assert str(fastavro.schemaless_reader(io.BytesIO(data), schema, **options)) == "1000"
        fo = open_stream(kind, data, tmp_path)
        assert str(dropin.schemaless_reader(fo, schema, **options)) == "999.99"
        assert fo.read() == b""


def _decimal_schemas(precision: int, scale: int, size: int, namespace: str):
    """A writer's schema with decimals on bytes and fixed in a record, a
    union (beside a plain fixed of the same size), an array, a map and a
    single-record union; the same schema without the logical types, to
    write raw unscaled bytes with; and a reader's schema that adds a field."""
    dec = {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale}
    fix = {
        "type": "fixed",
        "name": "Fix",
        "size": size,
        "logicalType": "decimal",
        "precision": precision,
        "scale": scale,
    }
    price = {"type": "record", "name": "Price", "fields": [{"name": "amount", "type": dec}]}
    fields = [
        {"name": "a", "type": dec},
        {"name": "u", "type": ["null", dec, price, fix, {"type": "fixed", "name": "Plain", "size": size}]},
        {"name": "arr", "type": {"type": "array", "items": ["null", "Fix"]}},
        {"name": "m", "type": {"type": "map", "values": "Price"}},
        {"name": "one", "type": ["null", "Price"]},
    ]
    writer = {"type": "record", "name": "Top", "namespace": namespace, "fields": fields}

    def raw(node):
        if isinstance(node, list):
            return [raw(item) for item in node]
        if isinstance(node, dict):
            return {key: raw(value) for key, value in node.items() if key != "logicalType"}
        return node

    # (fastavro 1.13 cannot read a union with return_record_name where the
    # writer's branch names a type the reader's defines: the same order here)
    reader = copy.deepcopy(writer)
    reader["fields"].insert(0, {"name": "extra", "type": "int", "default": 7})
    return dropin.parse_schema(writer), raw(writer), dropin.parse_schema(reader)


#: (precision, scale, fixed size): a fixed's size holds 1000 times the precision
DECIMAL_CASES = [
    (4, 2, 4, "p4"),
    (1, 0, 2, "p1"),
    (20, 7, 11, "p20"),
    (38, 38, 18, "p38"),
    (45, 3, 21, "p45"),
]
DECIMAL_SCHEMAS = [(case, *_decimal_schemas(*case)) for case in DECIMAL_CASES]


def _decimals(value) -> list:
    """The Decimals in a value, in order."""
    if isinstance(value, Decimal):
        return [value]
    if isinstance(value, dict):
        value = [value[key] for key in sorted(value)]
    if isinstance(value, (list, tuple)):
        return [found for item in value for found in _decimals(item)]
    return []


def _masked(value):
    """A value with its Decimals and bytes as one mark: its structure and names."""
    if isinstance(value, (Decimal, bytes)):
        return "<digits>"
    if isinstance(value, dict):
        return {key: _masked(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_masked(item) for item in value)
    return value


@st.composite
def decimal_datums(draw):
    index = draw(st.integers(0, len(DECIMAL_SCHEMAS) - 1))
    (precision, scale, size, ns), parsed, raw, reader = DECIMAL_SCHEMAS[index]
    beyond = draw(st.booleans())
    # within the precision, or up to 1000 times past it (the fixed's size holds it)
    limit = 10 ** (precision + 3) if beyond else 10**precision - 1
    unscaled = st.integers(-limit, limit)

    def as_bytes():
        n = draw(unscaled)
        return n.to_bytes((n.bit_length() + 8) // 8, "big", signed=True)

    def as_fixed():
        return draw(unscaled).to_bytes(size, "big", signed=True)

    branch = draw(st.sampled_from(["null", "bytes", "Price", "Fix", "Plain"]))
    union = {
        "null": lambda: None,
        "bytes": as_bytes,
        "Price": lambda: (f"{ns}.Price", {"amount": as_bytes()}),
        "Fix": lambda: (f"{ns}.Fix", as_fixed()),
        "Plain": lambda: (f"{ns}.Plain", draw(st.binary(min_size=size, max_size=size))),
    }[branch]()
    datum = {
        "a": as_bytes(),
        "u": union,
        "arr": [
            (f"{ns}.Fix", as_fixed()) if draw(st.booleans()) else None for _ in range(draw(st.integers(0, 3)))
        ],
        "m": {f"k{i}": {"amount": as_bytes()} for i in range(draw(st.integers(0, 3)))},
        "one": {"amount": as_bytes()} if draw(st.booleans()) else None,
    }
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(raw), datum)
    return index, beyond, out.getvalue()


@pytest.mark.fuzz
@settings(max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=decimal_datums(), options=st.sampled_from(NAMING_OPTIONS), with_reader=st.booleans())
def test_decimals_with_naming_options_are_exact_as_on_the_plain_path(case, options, with_reader):
    index, beyond, data = case
    _, parsed, raw, reader = DECIMAL_SCHEMAS[index]
    reader = reader if with_reader else None
    ours = dropin.schemaless_reader(io.BytesIO(data), parsed, reader, **options)
    plain = dropin.schemaless_reader(io.BytesIO(data), parsed, reader)
    # the exact values the plain path reads, in the same places
    assert _decimals(ours) == _decimals(plain)
    assert [str(value) for value in _decimals(ours)] == [str(v) for v in _decimals(plain)]
    # fastavro's structure and names, with fastavro's options
    theirs_raw = fastavro.schemaless_reader(
        io.BytesIO(data),
        fastavro.parse_schema(raw),
        reader and fastavro.parse_schema(_raw_of(reader)),
        **options,
    )
    assert _masked(ours) == _masked(theirs_raw)
    if not beyond:
        # within the precision, fastavro's own values are the oracle
        theirs = fastavro.schemaless_reader(io.BytesIO(data), parsed, reader, **options)
        assert ours == theirs


def _raw_of(node):
    if isinstance(node, list):
        return [_raw_of(item) for item in node]
    if isinstance(node, dict):
        return {
            key: _raw_of(value)
            for key, value in node.items()
            if key != "logicalType" and not key.startswith("__")
        }
    return node


@pytest.mark.parametrize("options", NAMING_OPTIONS)
def test_oversized_decimal_bytes_are_refused_at_their_offset_before_conversion(options):
    # 300 bytes for decimal(4, 2): longer than both its precision needs and
    # 256 bytes; refused where the plain path refuses it, at the same offset
    _, parsed, raw, _ = DECIMAL_SCHEMAS[0]
    datum = {"a": b"\x01", "u": None, "arr": [], "m": {"k": {"amount": b"\x01" * 300}}, "one": None}
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(raw), datum)
    data = out.getvalue()
    with pytest.raises(DecodeError, match="300 bytes") as plain:
        dropin.schemaless_reader(io.BytesIO(data), parsed)
    with pytest.raises(DecodeError, match="300 bytes") as named:
        dropin.schemaless_reader(io.BytesIO(data), parsed, **options)
    assert named.value.offset == plain.value.offset == 7  # the length's varint
    # 256 bytes past the precision are read, exactly
    datum["m"]["k"]["amount"] = b"\x01" * 256
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(raw), datum)
    value = dropin.schemaless_reader(io.BytesIO(out.getvalue()), parsed, **options)
    assert value["m"]["k"]["amount"] == Decimal(int.from_bytes(b"\x01" * 256, "big")).scaleb(
        -2, context=decimal.Context(prec=decimal.MAX_PREC)
    )


def test_two_fixed_of_one_size_in_a_union_are_told_apart_without_naming_options():
    # the branch index decides, also when the value does not say its type
    _, parsed, raw, _ = DECIMAL_SCHEMAS[0]
    for branch, expected in (("p4.Fix", Decimal("83886.07")), ("p4.Plain", b"\x00\x7f\xff\xff")):
        datum = {"a": b"", "u": (branch, b"\x00\x7f\xff\xff"), "arr": [], "m": {}, "one": None}
        out = io.BytesIO()
        fastavro.schemaless_writer(out, fastavro.parse_schema(raw), datum)
        value = dropin.schemaless_reader(io.BytesIO(out.getvalue()), parsed, handle_unicode_errors="replace")
        assert value["u"] == expected and value["a"] == Decimal("0.00")


def test_with_naming_options_the_writers_decimal_applies_as_in_fastavro():
    # fastavro converts by the writer's logical type and scale, whatever the
    # reader's says; the naming-option path keeps that rule, exactly
    wide = {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 4}
    narrow = {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2}
    for unscaled, exact in ((1234, True), (99999, False)):
        data = fastavro_bytes_of("bytes", unscaled.to_bytes(3, "big"))
        for writer, reader in ((wide, narrow), (narrow, wide), (wide, "bytes"), ("bytes", wide)):
            ours = dropin.schemaless_reader(io.BytesIO(data), writer, reader, return_record_name=True)
            theirs = fastavro.schemaless_reader(io.BytesIO(data), writer, reader, return_record_name=True)
            if writer == "bytes":
                assert ours == theirs == unscaled.to_bytes(3, "big")
            elif exact or writer is wide:
                assert ours == theirs == Decimal(unscaled).scaleb(-writer["scale"])
            else:
                # 999.99 in decimal(4, 2): fastavro rounds it, we do not
                assert (ours, theirs) == (Decimal("999.99"), Decimal("1000"))


class OnlyRead:
    """An object with read() and nothing else: fastavro needs no more."""

    def __init__(self, data: bytes):
        self._source = io.BytesIO(data)

    def read(self, n: int = -1) -> bytes:
        return self._source.read(n)


def test_an_object_with_only_read_is_read_as_fastavro_reads_it():
    values = [{"n": i, "s": "x" * i} for i in range(0, 300, 7)]
    schema = {
        "type": "record",
        "name": "Bare",
        "fields": [{"name": "n", "type": "long"}, {"name": "s", "type": "string"}],
    }
    out = io.BytesIO()
    for value in values:
        fastavro.schemaless_writer(out, fastavro.parse_schema(schema), value)
    data = out.getvalue()
    for options in ({}, {"return_record_name": True}):
        ours, theirs = OnlyRead(data), OnlyRead(data)
        parsed = dropin.parse_schema(schema)
        read_ours = [dropin.schemaless_reader(ours, parsed, **options) for _ in values]
        read_theirs = [
            fastavro.schemaless_reader(theirs, fastavro.parse_schema(schema), **options) for _ in values
        ]
        assert read_ours == read_theirs == values
        # both left at the end
        assert ours.read() == theirs.read() == b""
        with pytest.raises(EOFError):
            dropin.schemaless_reader(ours, parsed, **options)
    with pytest.raises(DecodeError):
        dropin.schemaless_reader(OnlyRead(b"\x02"), parsed)  # cut short
    with pytest.raises(DecodeError):
        dropin.schemaless_reader(OnlyRead(b"\x0b" + b"\x80" * 4 + b"\x40"), NULLS)  # a varint bomb


def test_is_avro_takes_an_object_with_only_read():
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema({"type": "record", "name": "R", "fields": []}), [{}])
    assert dropin.is_avro(OnlyRead(out.getvalue())) is fastavro.is_avro(OnlyRead(out.getvalue()))
    assert dropin.is_avro(OnlyRead(b"Obj")) is fastavro.is_avro(OnlyRead(b"Obj")) is False
