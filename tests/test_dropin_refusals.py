"""Values fastavro writes by changing them, which the drop-in refuses: a
float with a fraction in an int (fastavro truncates it), anything in a
boolean (fastavro writes its truth value: None becomes false), an int
beyond an Avro int's range (fastavro writes bytes no Avro reader accepts
as an int), a string that is not a UUID in a uuid field, a value in a null
field. Each is checked against fastavro itself: fastavro accepts it and
reads back something else than what was given, or bytes a reader by the
specification refuses; the drop-in raises a DatumError (a ValueError)
naming the field. Numbers no int or long can hold
raise fastavro's OverflowError type on both."""

from __future__ import annotations

import datetime
import io
import math

import fastavro
import fastavro.validation
import pytest

import roastedavro.fastavro as dropin
from roastedavro.errors import DatumError


def record(avro_type):
    return {"type": "record", "name": "R", "fields": [{"name": "f", "type": avro_type}]}


UUID = {"type": "string", "logicalType": "uuid"}


@pytest.mark.parametrize(
    "avro_type, value",
    [
        ("int", 1.5),
        ("long", -2.25),
        ({"type": "int", "logicalType": "date"}, 19000.5),
        ("boolean", None),
        ("boolean", "no"),
        ("boolean", 2),
        ("null", 0),
        # fastavro reads these back as given, but its bytes are not the schema's:
        # a reader by the specification refuses them (checked below)
        ("int", 2**31),
        (UUID, "order-123"),
    ],
)
def test_fastavro_writes_a_changed_value_and_the_dropin_refuses_it(avro_type, value):
    schema = record(avro_type)
    written = io.BytesIO()
    fastavro.schemaless_writer(written, fastavro.parse_schema(schema), {"f": value})
    written.seek(0)
    try:
        back = fastavro.schemaless_reader(written, fastavro.parse_schema(schema))["f"]
    except Exception:  # noqa: BLE001 - fastavro cannot read its own bytes back
        back = "unreadable"
    if back == value and type(back) is type(value):
        from roastedavro import AvroCodec, DecodeError

        with pytest.raises(DecodeError):
            AvroCodec(schema).load(written.getvalue())
    else:
        assert back == "unreadable" or back != value or type(back) is not type(value)
    with pytest.raises(DatumError, match="on field f") as caught:
        dropin.schemaless_writer(io.BytesIO(), dropin.parse_schema(schema), {"f": value})
    assert isinstance(caught.value, ValueError)
    with pytest.raises(DatumError):
        dropin.writer(io.BytesIO(), dropin.parse_schema(schema), [{"f": value}])


@pytest.mark.parametrize(
    "avro_type, value",
    [
        ("long", 2**63),
        ("long", -(2**63) - 1),
        ("long", math.inf),
        ("int", -math.inf),
    ],
)
def test_numbers_no_int_or_long_holds_are_overflow_errors_on_both(avro_type, value):
    schema = record(avro_type)
    with pytest.raises(OverflowError):
        fastavro.schemaless_writer(io.BytesIO(), fastavro.parse_schema(schema), {"f": value})
    with pytest.raises(OverflowError) as caught:
        dropin.schemaless_writer(io.BytesIO(), dropin.parse_schema(schema), {"f": value})
    assert isinstance(caught.value, DatumError) and "on field f" in str(caught.value)
    with pytest.raises(OverflowError):
        dropin.writer(io.BytesIO(), dropin.parse_schema(schema), [{"f": value}])


@pytest.mark.parametrize(
    "metadata, error",
    [
        ({"k": 5}, AttributeError),
        ({"k": b"bytes"}, AttributeError),
        ({5: "v"}, TypeError),
    ],
)
def test_metadata_is_str_keys_and_values_as_in_fastavro(metadata, error):
    for module in (fastavro, dropin):
        out = io.BytesIO()
        with pytest.raises(error):
            module.writer(out, {"type": "int"}, [1], metadata=metadata)
    # nothing of the file is written by the drop-in
    assert out.getvalue() == b""


@pytest.mark.parametrize("policy", ["never", "eager"])
@pytest.mark.parametrize(
    "data, offset",
    [
        (b"\x04\x00", 0),  # union index 2
        (b"\x00\x02", 1),
    ],
)  # enum index 1
def test_an_index_the_schema_lacks_is_fastavros_index_error(monkeypatch, policy, data, offset):
    from roastedavro import DecodeError

    monkeypatch.setenv("ROASTEDAVRO_COMPILE", policy)
    schema = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "u", "type": ["null", "int"]},
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A"]}},
        ],
    }
    with pytest.raises(IndexError):
        fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(schema))
    with pytest.raises(IndexError) as caught:
        dropin.schemaless_reader(io.BytesIO(data), dropin.parse_schema(schema))
    assert isinstance(caught.value, DecodeError) and caught.value.offset == offset


NESTED = {
    "type": "record",
    "name": "R",
    "namespace": "ns",
    "fields": [
        {"name": "a", "type": "int"},
        {
            "name": "b",
            "type": {"type": "record", "name": "In", "fields": [{"name": "c", "type": ["null", "string"]}]},
        },
    ],
}
GOOD = {"a": 1, "b": {"c": None}}


@pytest.mark.parametrize(
    "bad",
    [
        {"a": "x", "b": {"c": None}},  # one place
        {"a": 1, "b": {"c": 1}},  # a union: one error per branch
        {"a": 1},  # a missing record
        {"a": 1.5, "b": {"c": None}},  # a value fastavro's writer would truncate
    ],
)
def test_validators_errors_are_fastavros(bad):
    """writer and json_writer with validator=True: fastavro's ValidationError
    with the errors fastavro's validator lists (datum, schema, full field
    name), for the record after good ones."""
    expected = []
    for module in (fastavro, dropin):
        for write in (
            lambda: module.writer(io.BytesIO(), NESTED, [GOOD, bad], validator=True),
            lambda: module.json_writer(io.StringIO(), NESTED, [GOOD, bad], validator=True),
        ):
            with pytest.raises(fastavro.validation.ValidationError) as caught:
                write()
            expected.append(caught.value.errors)
    assert expected[0] and expected == [expected[0]] * 4


@pytest.mark.parametrize("policy", ["never", "eager"])
@pytest.mark.parametrize(
    "avro_type, data, offset",
    [
        ("bytes", b"\x01", 0),
        ("string", b"\x03abc", 0),
        ({"type": "map", "values": "string"}, b"\x02\x05\x02a", 1),
    ],
)  # a key of length -3
def test_a_negative_length_is_fastavros_eof_error(monkeypatch, policy, avro_type, data, offset):
    from roastedavro.errors import DecodeError

    monkeypatch.setenv("ROASTEDAVRO_COMPILE", policy)
    schema = record(avro_type)
    with pytest.raises(EOFError):
        fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(schema))
    with pytest.raises(EOFError) as caught:
        dropin.schemaless_reader(io.BytesIO(data), dropin.parse_schema(schema))
    assert isinstance(caught.value, DecodeError)
    assert "negative length" in str(caught.value) and caught.value.offset == offset


def test_a_header_without_a_schema_is_fastavros_key_error():
    from roastedavro.container import ContainerError

    written = io.BytesIO()
    fastavro.writer(written, record("long"), [{"f": 1}])
    damaged = written.getvalue().replace(b"avro.schema", b"avro.schemX")
    with pytest.raises(KeyError):
        list(fastavro.reader(io.BytesIO(damaged)))
    with pytest.raises(KeyError) as caught:
        list(dropin.reader(io.BytesIO(damaged)))
    assert isinstance(caught.value, ContainerError) and caught.value.block is None
    assert str(caught.value).startswith("the header: no avro.schema in the metadata")


@pytest.mark.parametrize("policy", ["never", "eager"])
@pytest.mark.parametrize(
    "damage, fastavros",
    [
        (b"\x00\x01x", EOFError),  # string length -1
        (b"\x04\x02x", IndexError),
    ],
)  # union index 2
def test_damaged_records_in_a_file_are_fastavros_error_types(monkeypatch, policy, damage, fastavros):
    from roastedavro.container import ContainerError

    monkeypatch.setenv("ROASTEDAVRO_COMPILE", policy)
    schema = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "a", "type": "long"}, {"name": "u", "type": ["string", "long"]}],
    }
    written = io.BytesIO()
    fastavro.writer(written, schema, [{"a": 1, "u": "x"}], sync_marker=b"S" * 16)
    data = written.getvalue()
    assert data.count(b"\x02\x00\x02xSSSS") == 1
    damaged = data.replace(b"\x02\x00\x02xSSSS", b"\x02" + damage + b"SSSS")
    with pytest.raises(fastavros):
        list(fastavro.reader(io.BytesIO(damaged)))
    with pytest.raises(fastavros) as caught:
        list(dropin.reader(io.BytesIO(damaged)))
    assert isinstance(caught.value, ContainerError) and caught.value.block == 0


@pytest.mark.parametrize(
    "avro_type, default, fastavros, typed",
    [
        # the specification: a bytes default is a string of code points 0-255, one per byte
        ("bytes", "\u00ff\u0001", "\u00ff\u0001", b"\xff\x01"),
        ("double", 1, 1, 1.0),
        (
            {"type": "long", "logicalType": "timestamp-millis"},
            7,
            7,
            datetime.datetime(1970, 1, 1, 0, 0, 0, 7000, tzinfo=datetime.timezone.utc),
        ),
        ({"type": "int", "logicalType": "date"}, 3, 3, datetime.date(1970, 1, 4)),
    ],
)
def test_a_field_the_reader_adds_takes_its_default_as_the_avro_value(avro_type, default, fastavros, typed):
    writer = record("int")
    reader = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "f", "type": "int"}, {"name": "g", "type": avro_type, "default": default}],
    }
    data = io.BytesIO()
    fastavro.schemaless_writer(data, fastavro.parse_schema(writer), {"f": 1})
    theirs = fastavro.schemaless_reader(
        io.BytesIO(data.getvalue()), fastavro.parse_schema(writer), fastavro.parse_schema(reader)
    )
    ours = dropin.schemaless_reader(
        io.BytesIO(data.getvalue()), dropin.parse_schema(writer), dropin.parse_schema(reader)
    )
    assert theirs == {"f": 1, "g": fastavros} and type(theirs["g"]) is type(fastavros)
    assert ours == {"f": 1, "g": typed} and type(ours["g"]) is type(typed)
