"""fastavro's handle_unicode_errors read by tier 0: strings and map keys with
invalid UTF-8, decoded with the error handler fastavro is given, give
fastavro 1.13's values, also through a reader schema and with the naming
options; the drop-in's schemaless_reader no longer hands any bytes to
fastavro."""

from __future__ import annotations

import io

import fastavro
import pytest
from hypothesis import given, settings, strategies as st

import roastedavro.fastavro as dropin
from roastedavro._tier0 import Interpreter, ResolvingInterpreter
from roastedavro.avro import parse_schema
from roastedavro.errors import DecodeError

HANDLERS = ["replace", "ignore", "backslashreplace", "surrogateescape"]

RECORD = {
    "type": "record",
    "name": "Note",
    "fields": [
        {"name": "title", "type": "string"},
        {"name": "tags", "type": {"type": "map", "values": "string"}},
        {"name": "lines", "type": {"type": "array", "items": "string"}},
        {"name": "maybe", "type": ["null", "string"]},
    ],
}
#: the same record as another version reads it: a field added with a default,
#: one left out
READER = {
    "type": "record",
    "name": "Note",
    "fields": [
        {"name": "title", "type": "string"},
        {"name": "tags", "type": {"type": "map", "values": "string"}},
        {"name": "maybe", "type": ["null", "string"]},
        {"name": "added", "type": "string", "default": "x"},
    ],
}

#: raw UTF-8 candidates: valid text, bytes no UTF-8 has, cut sequences, surrogates
pieces = st.sampled_from(
    [b"a", b"\xc3\xa9", b"\xff", b"\xfe", b"\xc3", b"\xed\xa0\x80", b"\xe2\x82", b"\xf0\x9f\x98\x80", b"\x80"]
)
raw_text = st.lists(pieces, max_size=6).map(b"".join)


def zigzag(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def text(raw: bytes) -> bytes:
    return zigzag(len(raw)) + raw


def record_bytes(title, tags, lines, maybe) -> bytes:
    out = text(title)
    if tags:
        out += zigzag(len(tags)) + b"".join(text(k) + text(v) for k, v in tags) + b"\x00"
    else:
        out += b"\x00"
    if lines:
        out += zigzag(len(lines)) + b"".join(text(line) for line in lines) + b"\x00"
    else:
        out += b"\x00"
    out += b"\x00" if maybe is None else b"\x02" + text(maybe)
    return out


def fastavro_read(data, schema, reader=None, **options):
    try:
        return fastavro.schemaless_reader(
            io.BytesIO(data),
            fastavro.parse_schema(schema),
            fastavro.parse_schema(reader) if reader else None,
            **options,
        )
    except Exception as error:  # noqa: BLE001 - the oracle's own error
        return ("error", type(error).__name__)


records = st.tuples(
    raw_text,
    st.lists(st.tuples(raw_text, raw_text), max_size=3),
    st.lists(raw_text, max_size=3),
    st.one_of(st.none(), raw_text),
)


@settings(max_examples=150, deadline=None)
@given(records, st.sampled_from(HANDLERS))
def test_strings_and_map_keys_decode_as_fastavro_decodes_them(parts, handler):
    data = record_bytes(*parts)
    expected = fastavro_read(data, RECORD, handle_unicode_errors=handler)
    assert Interpreter(parse_schema(RECORD), None, None, handler).load(data) == expected
    assert dropin.schemaless_reader(io.BytesIO(data), RECORD, handle_unicode_errors=handler) == expected


@settings(max_examples=100, deadline=None)
@given(records, st.sampled_from(HANDLERS))
def test_through_a_reader_schema_and_with_the_naming_options(parts, handler):
    data = record_bytes(*parts)
    expected = fastavro_read(data, RECORD, READER, handle_unicode_errors=handler)
    resolving = ResolvingInterpreter(parse_schema(RECORD), parse_schema(READER), None, None, handler)
    assert resolving.load(data) == expected
    assert (
        dropin.schemaless_reader(io.BytesIO(data), RECORD, READER, handle_unicode_errors=handler) == expected
    )
    named = fastavro_read(data, RECORD, handle_unicode_errors=handler, return_record_name=True)
    assert (
        dropin.schemaless_reader(
            io.BytesIO(data), RECORD, handle_unicode_errors=handler, return_record_name=True
        )
        == named
    )


def test_strict_is_a_decode_error_with_the_offset_and_strict_spelled_out_is_the_default():
    data = record_bytes(b"ok", [(b"k\xff", b"v")], [], None)
    for errors in (None, "strict"):
        with pytest.raises(DecodeError, match="UTF-8") as caught:
            Interpreter(parse_schema(RECORD), None, None, errors).load(data)
        assert caught.value.offset == 6  # the invalid byte: title (3), count (1), length (1), "k"
    with pytest.raises(DecodeError, match="UTF-8"):
        dropin.schemaless_reader(io.BytesIO(data), RECORD, handle_unicode_errors="strict")


def test_an_unknown_handler_is_fastavros_lookup_error_at_the_first_invalid_byte():
    schema = parse_schema("string")
    assert Interpreter(schema, None, None, "no-such-handler").load(text(b"fine")) == "fine"
    with pytest.raises(LookupError):
        Interpreter(schema, None, None, "no-such-handler").load(text(b"\xff"))
    with pytest.raises(LookupError):
        fastavro.schemaless_reader(
            io.BytesIO(text(b"\xff")), "string", handle_unicode_errors="no-such-handler"
        )


def test_a_uuid_that_is_not_one_after_decoding_is_a_value_error_as_in_fastavro():
    schema = {"type": "string", "logicalType": "uuid"}
    data = text(b"\xff" * 4)
    with pytest.raises(ValueError):
        fastavro.schemaless_reader(
            io.BytesIO(data), fastavro.parse_schema(schema), handle_unicode_errors="replace"
        )
    with pytest.raises(DecodeError, match="UUID"):  # a ValueError too
        dropin.schemaless_reader(io.BytesIO(data), schema, handle_unicode_errors="replace")
    good = "12345678-1234-5678-1234-567812345678"
    assert dropin.schemaless_reader(
        io.BytesIO(text(good.encode())), schema, handle_unicode_errors="replace"
    ) == fastavro_read(text(good.encode()), schema, handle_unicode_errors="replace")


def test_the_drop_in_never_hands_bytes_to_fastavro(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("fastavro's reader was called")

    data = record_bytes(b"t\xff", [(b"\xfe", b"v")], [b"\xc3"], b"\x80")
    expected = fastavro_read(data, RECORD, handle_unicode_errors="replace")
    monkeypatch.setattr(fastavro, "schemaless_reader", refuse)
    monkeypatch.setattr(dropin, "_fastavro", None, raising=False)
    assert dropin.schemaless_reader(io.BytesIO(data), RECORD, handle_unicode_errors="replace") == expected
