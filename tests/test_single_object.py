"""Single-object encoding (the specification's "Single object encoding") and SchemaStore.

A message is the marker C3 01, the CRC-64-AVRO fingerprint of the schema's
Parsing Canonical Form as 8 little-endian bytes, then the datum's binary
encoding. Checked against the specification's layout, fastavro's
fingerprint of its own canonical form, and Java's BinaryMessageDecoder.
"""

from __future__ import annotations

import fastavro.schema
import pytest

from roastedavro import AvroCodec, SchemaStore
from roastedavro.avro import crc64_avro
from roastedavro.codec import SingleObjectError
from roastedavro.errors import DecodeError

ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}
# the same canonical form (logical types and defaults are not part of it): the same fingerprint
ORDER_RAW = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "note", "type": ["null", "string"]},
        {"name": "at", "type": "long"},
    ],
}
POINT = {
    "type": "record",
    "name": "Point",
    "fields": [{"name": "x", "type": "int"}, {"name": "y", "type": "int"}],
}
NAMES = {"type": "array", "items": "string"}


@pytest.fixture(scope="module")
def order():
    return AvroCodec(ORDER)


@pytest.fixture(scope="module")
def point():
    return AvroCodec(POINT)


@pytest.fixture(scope="module")
def names():
    return AvroCodec(NAMES)


@pytest.mark.parametrize("schema", [ORDER, POINT, NAMES])
def test_the_header_is_the_specifications(schema):
    codec = AvroCodec(schema)
    canonical = fastavro.schema.to_parsing_canonical_form(schema)
    assert codec.schema.canonical_form() == canonical
    # fastavro gives the fingerprint as the hex of its little-endian bytes
    assert codec.fingerprint.to_bytes(8, "little").hex() == fastavro.schema.fingerprint(
        canonical, "CRC-64-AVRO"
    )
    assert codec.fingerprint == crc64_avro(canonical.encode())
    datum = (
        {"id": 7, "note": "n", "at": 5}
        if schema is ORDER
        else ({"x": 1, "y": -1} if schema is POINT else ["a", "b"])
    )
    message = codec.dump_single(datum)
    assert message[:2] == b"\xc3\x01"
    assert message[2:10] == codec.fingerprint.to_bytes(8, "little")
    assert message[10:] == codec.dump(datum)
    assert codec.load_single(message) == codec.load(message[10:])


def test_java_reads_our_messages_and_writes_the_same(java, order, point, names):
    messages = [
        (ORDER, order.dump_single({"id": 2**40, "at": -1})),
        (POINT, point.dump_single({"x": 3, "y": 4})),
        (NAMES, names.dump_single([])),
    ]
    for (schema, message), answer in zip(messages, java.roundtrip_single_each(messages)):
        assert answer.data == message
        assert answer.trailing == 0


def test_bytes_likes(point):
    message = point.dump_single({"x": 1, "y": 2})
    for data in (bytearray(message), memoryview(message), memoryview(b"xx" + message)[2:]):
        assert point.load_single(data) == {"x": 1, "y": 2}


@pytest.mark.parametrize(
    "data, offset, message",
    [
        (b"", 0, "0 bytes, shorter than its 10-byte header"),
        (b"\xc3\x01\x00", 3, "3 bytes, shorter"),
        (b"\xc3\x02" + bytes(8), 0, "it starts with c3 02, not the marker c3 01"),
        (b"Obj\x01" + bytes(8), 0, "it starts with 4f 62"),
    ],
)
def test_not_a_single_object_message(point, data, offset, message):
    for reader in (point.load_single, SchemaStore([point]).load_single):
        with pytest.raises(SingleObjectError, match=message) as caught:
            reader(data)
        assert caught.value.offset == offset
        assert isinstance(caught.value, DecodeError)


def test_a_message_of_another_schema(order, point):
    message = order.dump_single({"id": 1, "at": 0})
    with pytest.raises(SingleObjectError) as caught:
        point.load_single(message)
    assert caught.value.fingerprint == order.fingerprint
    assert f"0x{order.fingerprint:016x}" in str(caught.value)
    assert f"0x{point.fingerprint:016x}" in str(caught.value)
    assert caught.value.offset == 2


def test_the_datum_after_the_header_is_checked(point):
    message = point.dump_single({"x": 1, "y": 2})
    with pytest.raises(DecodeError, match="1 trailing bytes") as caught:
        point.load_single(message + b"\x00")
    assert caught.value.offset == len(message)
    with pytest.raises(DecodeError) as caught:
        point.load_single(message[:-1])
    assert not isinstance(caught.value, SingleObjectError)


def test_a_store_reads_the_schema_a_message_names(order, point, names):
    store = SchemaStore([ORDER, point])
    assert store.add(NAMES).fingerprint == names.fingerprint
    assert len(store) == 3 and set(codec.fingerprint for codec in store) == {
        order.fingerprint,
        point.fingerprint,
        names.fingerprint,
    }
    assert store.lookup(point.fingerprint) is point
    assert store.lookup(point.fingerprint.to_bytes(8, "little")) is point
    assert store.lookup(12345) is None
    assert point.fingerprint in store and 12345 not in store
    for codec, datum in ((order, {"id": 1, "note": "x", "at": 2}), (point, {"x": 5, "y": 6}), (names, ["n"])):
        assert store.load_single(codec.dump_single(datum)) == codec.load(codec.dump(datum))


def test_a_store_refuses_unknown_fingerprints(point):
    store = SchemaStore([POINT])
    unknown = b"\xc3\x01" + (0x0123456789ABCDEF).to_bytes(8, "little") + b"\x02\x04"
    with pytest.raises(
        SingleObjectError, match="no schema in the store has the message's fingerprint 0x0123456789abcdef"
    ) as caught:
        store.load_single(unknown)
    assert caught.value.fingerprint == 0x0123456789ABCDEF


def test_one_fingerprint_one_schema(order):
    store = SchemaStore([order])
    assert store.add(ORDER) is order  # the same schema again
    raw = AvroCodec(ORDER_RAW)
    assert raw.fingerprint == order.fingerprint
    with pytest.raises(ValueError, match="already has a different schema with fingerprint"):
        store.add(raw)
    assert store.lookup(order.fingerprint) is order
