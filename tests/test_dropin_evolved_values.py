"""The drop-in reads a writer's data as a reader schema's values as fastavro
1.13 does where the two schemas' logical types differ: fastavro converts by
the writer's logical type and looks at none of the reader's (a long read as
a timestamp-millis stays an int, a date read as an int stays a date, a
string read as a decimal is bytes), and promotes an int to a float without
rounding it to 32 bits. roastedavro's own AvroCodec reads as Java does.

fastavro itself is the oracle: every value and every error type below is
compared with what it returns or raises for the same bytes."""

from __future__ import annotations

import datetime
import decimal
import io
import itertools
import uuid

import fastavro
import pytest
from hypothesis import HealthCheck, Phase, example, given, note, settings
from hypothesis import strategies as st

import roastedavro.fastavro as dropin
from roastedavro.codec import AvroCodec
from roastedavro.errors import DecodeError

UTC = datetime.timezone.utc

# a leaf type of each encoding and logical type, with a value of it
LEAVES = {
    "int": ({"type": "int"}, 19000),
    "date": ({"type": "int", "logicalType": "date"}, datetime.date(2022, 1, 1)),
    "time-millis": ({"type": "int", "logicalType": "time-millis"}, datetime.time(1, 2, 3)),
    "long": ({"type": "long"}, 1_700_000_000_000),
    "timestamp-millis": (
        {"type": "long", "logicalType": "timestamp-millis"},
        datetime.datetime(2023, 1, 1, tzinfo=UTC),
    ),
    "timestamp-micros": (
        {"type": "long", "logicalType": "timestamp-micros"},
        datetime.datetime(2023, 1, 1, 0, 0, 0, 7, tzinfo=UTC),
    ),
    "local-timestamp-millis": (
        {"type": "long", "logicalType": "local-timestamp-millis"},
        datetime.datetime(2023, 1, 1),
    ),
    "time-micros": ({"type": "long", "logicalType": "time-micros"}, datetime.time(1, 2, 3, 4)),
    "float": ({"type": "float"}, 1.5),
    "double": ({"type": "double"}, 2.5),
    "string": ({"type": "string"}, "0"),
    "uuid": ({"type": "string", "logicalType": "uuid"}, uuid.UUID(int=5)),
    "bytes": ({"type": "bytes"}, b"0"),
    "decimal(5,1)": (
        {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 1},
        decimal.Decimal("4.8"),
    ),
    "decimal(6,2)": (
        {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2},
        decimal.Decimal("4.81"),
    ),
    "fixed decimal": (
        {"type": "fixed", "name": "F", "size": 4, "logicalType": "decimal", "precision": 5, "scale": 1},
        decimal.Decimal("4.8"),
    ),
    "fixed": ({"type": "fixed", "name": "F", "size": 4}, b"abcd"),
}


# logical types roastedavro reads but fastavro 1.13 does not convert: fastavro
# reads their underlying values, with a reader schema too
UNCONVERTED = {
    "timestamp-nanos": ({"type": "long", "logicalType": "timestamp-nanos"}, 123_456_789),
    "local-timestamp-nanos": ({"type": "long", "logicalType": "local-timestamp-nanos"}, 5),
    "uuid on fixed": ({"type": "fixed", "name": "F", "size": 16, "logicalType": "uuid"}, b"0123456789abcdef"),
    "duration": (
        {"type": "fixed", "name": "F", "size": 12, "logicalType": "duration"},
        b"\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00",
    ),
    "big-decimal": ({"type": "bytes", "logicalType": "big-decimal"}, b"\x02\x01\x00"),
}
UNCONVERTED_READERS = {
    "timestamp-nanos": [
        "long",
        "double",
        "float",
        ["null", "double"],
        {"type": "long", "logicalType": "timestamp-millis"},
    ],
    "local-timestamp-nanos": ["long", "double"],
    "uuid on fixed": [{"type": "fixed", "name": "F", "size": 16}],
    "duration": [{"type": "fixed", "name": "F", "size": 12}],
    "big-decimal": ["bytes", "string"],
}


def record(leaf, wrap=lambda t: t):
    return {"type": "record", "name": "R", "fields": [{"name": "f", "type": wrap(leaf)}]}


def outcome(read):
    """A read's value with the types of its leaves, or its error's type."""
    try:
        value = read()
    except Exception as error:  # noqa: BLE001 - the error type is what is compared
        return ("error", type(error))
    return ("value", value, _types(value))


def same(ours, theirs) -> bool:
    """The same value and leaf types, or an error that is fastavro's type
    (the drop-in's may be a subclass: a TextDecodeError is also the
    UnicodeDecodeError fastavro raises)."""
    if ours[0] == theirs[0] == "error":
        return issubclass(ours[1], theirs[1])
    return ours == theirs


def _types(value):
    if isinstance(value, dict):
        # a list: the keys' order is compared too (fastavro's: the fields
        # read in the writer's order, then the reader's defaults)
        return [(key, _types(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_types(item) for item in value]
    return type(value).__name__


def schemaless(module, data, writer, reader, **options):
    return outcome(
        lambda: module.schemaless_reader(
            io.BytesIO(data), module.parse_schema(writer), module.parse_schema(reader), **options
        )
    )


PAIRS = [(w, r) for w, r in itertools.product(LEAVES, LEAVES) if w != r]


@pytest.mark.parametrize("writer_name, reader_name", PAIRS)
def test_each_pair_of_leaves_reads_as_fastavro_reads(writer_name, reader_name):
    (writer_leaf, value), (reader_leaf, _) = LEAVES[writer_name], LEAVES[reader_name]
    writer, reader = record(writer_leaf), record(reader_leaf)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(writer), {"f": value})
    data = out.getvalue()
    expected = schemaless(fastavro, data, writer, reader)
    assert same(schemaless(dropin, data, writer, reader), expected)
    # the naming options take the same rule
    assert same(
        schemaless(dropin, data, writer, reader, return_record_name=True),
        schemaless(fastavro, data, writer, reader, return_record_name=True),
    )
    # a reader union picks the branch, and the writer's logical type still converts
    in_union = record(reader_leaf, lambda t: ["null", t])
    assert same(schemaless(dropin, data, writer, in_union), schemaless(fastavro, data, writer, in_union))


@pytest.mark.parametrize(
    "writer_name, reader_name",
    [
        ("long", "timestamp-millis"),
        ("timestamp-millis", "long"),
        ("int", "date"),
        ("string", "uuid"),
        ("string", "decimal(5,1)"),
        ("decimal(5,1)", "decimal(6,2)"),
        ("fixed", "fixed decimal"),
        ("date", "double"),
        ("long", "float"),
    ],
)
def test_files_and_json_read_as_fastavro_reads(writer_name, reader_name):
    (writer_leaf, value), (reader_leaf, _) = LEAVES[writer_name], LEAVES[reader_name]
    writer, reader = record(writer_leaf), record(reader_leaf)
    records = [{"f": value}] * 3
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(writer), records)
    data = out.getvalue()
    assert same(
        outcome(lambda: list(dropin.reader(io.BytesIO(data), dropin.parse_schema(reader)))),
        outcome(lambda: list(fastavro.reader(io.BytesIO(data), fastavro.parse_schema(reader)))),
    )
    blocks = [record for block in dropin.block_reader(io.BytesIO(data), reader) for record in block]
    assert same(
        outcome(lambda: blocks),
        outcome(
            lambda: [record for block in fastavro.block_reader(io.BytesIO(data), reader) for record in block]
        ),
    )
    text = io.StringIO()
    fastavro.json_writer(text, fastavro.parse_schema(writer), records)

    def json_records(module):
        return list(module.json_reader(io.StringIO(text.getvalue()), writer, reader))

    assert same(outcome(lambda: json_records(dropin)), outcome(lambda: json_records(fastavro)))


@pytest.mark.parametrize(
    "writer_name, reader_leaf",
    [(name, reader) for name, readers in UNCONVERTED_READERS.items() for reader in readers],
)
def test_logical_types_fastavro_does_not_convert_read_as_their_values(writer_name, reader_leaf):
    writer_leaf, value = UNCONVERTED[writer_name]
    writer, reader = record(writer_leaf), record(reader_leaf)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(writer), {"f": value})
    data = out.getvalue()
    assert same(schemaless(dropin, data, writer, reader), schemaless(fastavro, data, writer, reader))


def test_roastedavros_own_codec_reads_by_the_readers_logical_types():
    # as Java: the reader's timestamp-millis converts the long the writer wrote
    writer, reader = record({"type": "long"}), record(LEAVES["timestamp-millis"][0])
    data = AvroCodec(writer).dump({"f": 1_700_000_000_000})
    assert AvroCodec(reader, writer_schema=writer).load(data) == {
        "f": datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    }
    assert dropin.schemaless_reader(io.BytesIO(data), writer, reader) == {"f": 1_700_000_000_000}


def test_an_int_read_as_a_float_is_not_rounded_to_32_bits():
    writer, reader = record({"type": "long"}), record({"type": "float"})
    data = AvroCodec(writer).dump({"f": 2**24 + 1})
    value = dropin.schemaless_reader(io.BytesIO(data), writer, reader)["f"]
    assert (
        value
        == float(2**24 + 1)
        == fastavro.schemaless_reader(
            io.BytesIO(data), fastavro.parse_schema(writer), fastavro.parse_schema(reader)
        )["f"]
    )
    # Java rounds it to the reader's float
    assert AvroCodec(reader, writer_schema=writer).load(data)["f"] == float(2**24)


def test_pairs_whose_logical_types_agree_keep_the_compiled_pair_codec():
    from roastedavro.fastavro._codecs import fastavro_pair

    same = record(LEAVES["timestamp-millis"][0])
    widened = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "f", "type": LEAVES["timestamp-millis"][0]},
            {"name": "g", "type": "string", "default": "x"},
        ],
    }
    assert fastavro_pair(same, widened) is None
    assert fastavro_pair(record({"type": "long"}), widened) is not None


# -- random records of leaves, arrays, maps and unions of them --------------------------

# the leaves a writer's leaf can be read as (same encoding, or a promotion)
_READABLE = {
    "int": ("int", "long", "float", "double"),
    "long": ("long", "float", "double"),
    "float": ("float", "double"),
    "double": ("double",),
    "string": ("string", "bytes"),
    "bytes": ("bytes", "string"),
    "fixed": ("fixed",),
}

_VALUES = {
    "int": st.integers(-(2**31), 2**31 - 1),
    "date": st.dates(datetime.date(1970, 1, 1), datetime.date(2200, 1, 1)),
    "time-millis": st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)),
    "long": st.integers(-(2**63), 2**63 - 1),
    "timestamp-millis": st.datetimes(datetime.datetime(1970, 1, 1), datetime.datetime(2200, 1, 1)).map(
        lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000, tzinfo=UTC)
    ),
    "timestamp-micros": st.datetimes(datetime.datetime(1970, 1, 1), datetime.datetime(2200, 1, 1)).map(
        lambda t: t.replace(tzinfo=UTC)
    ),
    "local-timestamp-millis": st.datetimes(datetime.datetime(1970, 1, 1), datetime.datetime(2200, 1, 1)).map(
        lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)
    ),
    "time-micros": st.times(),
    "float": st.floats(width=32, allow_nan=False),
    "double": st.floats(allow_nan=False),
    "string": st.text(max_size=5),
    "uuid": st.uuids(),
    "bytes": st.binary(max_size=5),
    "decimal(5,1)": st.decimals(-9999, 9999, places=1),
    "decimal(6,2)": st.decimals(-9999, 9999, places=2),
    "fixed decimal": st.decimals(-9999, 9999, places=1),
    "fixed": st.binary(min_size=4, max_size=4),
}


def _encoding(name):
    leaf = LEAVES[name][0]
    return "fixed" if leaf["type"] == "fixed" else leaf["type"]


_WRAPS = {
    "plain": (lambda t: t, lambda v: v),
    "array": (lambda t: {"type": "array", "items": t}, lambda v: [v, v]),
    "map": (lambda t: {"type": "map", "values": t}, lambda v: {"k": v}),
    "nullable": (lambda t: ["null", t], lambda v: v),
}


@st.composite
def evolved_records(draw):
    """A writer record of leaves (in arrays, maps and unions), a reader that
    reads each leaf as another leaf of its encoding or a promotion, and a
    datum of the writer."""
    writer_fields, reader_fields, datum = [], [], {}
    for number in range(draw(st.integers(1, 5))):
        written = draw(st.sampled_from(sorted(LEAVES)))
        readable = [name for name in sorted(LEAVES) if _encoding(name) in _READABLE[_encoding(written)]]
        read = draw(st.sampled_from(readable))
        wrap, value_of = _WRAPS[draw(st.sampled_from(sorted(_WRAPS)))]
        leaves = [dict(LEAVES[written][0]), dict(LEAVES[read][0])]
        for leaf in leaves:
            if leaf["type"] == "fixed":
                leaf["name"] = f"F{number}"  # one fixed per field, named once
        name = f"f{number}"
        writer_fields.append({"name": name, "type": wrap(leaves[0])})
        reader_fields.append({"name": name, "type": wrap(leaves[1])})
        datum[name] = value_of(draw(_VALUES[written]))
    # the reader may reorder, drop and add fields (with defaults)
    reader_fields = draw(st.permutations(reader_fields))
    reader_fields = [field for field in reader_fields if draw(st.integers(0, 5))]
    for number in range(draw(st.integers(0, 2))):
        reader_fields.insert(
            draw(st.integers(0, len(reader_fields))),
            {"name": f"added{number}", "type": "int", "default": number},
        )
    return (
        {"type": "record", "name": "R", "fields": writer_fields},
        {"type": "record", "name": "R", "fields": reader_fields},
        datum,
    )


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
@given(evolved_records())
@example(
    (  # bytes that are not UTF-8 read as a uuid string: fastavro's UnicodeDecodeError
        {"type": "record", "name": "R", "fields": [{"name": "f0", "type": ["null", "bytes"]}]},
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "f0", "type": ["null", {"type": "string", "logicalType": "uuid"}]}],
        },
        {"f0": b"i\xae\xe3"},
    )
)
def test_random_evolved_records_read_as_fastavro_reads(monkeypatch, case):
    # the pairs whose values agree are read by tier 0 here, not compiled one
    # by one (tests/test_tier0_oracles.py holds tier 0 to the compiled codecs)
    monkeypatch.setenv("ROASTEDAVRO_COMPILE", "never")
    writer, reader, datum = case
    note(f"writer {writer}\nreader {reader}\ndatum {datum}")
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(writer), datum)
    data = out.getvalue()
    assert same(schemaless(dropin, data, writer, reader), schemaless(fastavro, data, writer, reader))


ENUM_V2 = {
    "type": "record",
    "name": "R",
    "fields": [{"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}}],
}
ENUM_V1 = {
    "type": "record",
    "name": "R",
    "fields": [{"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A"]}}],
}
OPTIONAL = {"type": "record", "name": "R", "fields": [{"name": "e", "type": ["null", "long"]}]}
REQUIRED = {"type": "record", "name": "R", "fields": [{"name": "e", "type": "long"}]}


@pytest.mark.parametrize(
    "writer, reader, datum",
    [
        (ENUM_V2, ENUM_V1, {"e": "B"}),  # a symbol the reader's enum lacks, no default
        (OPTIONAL, REQUIRED, {"e": None}),  # a writer's branch the reader cannot read
    ],
)
@pytest.mark.parametrize("options", [{}, {"return_record_name": True}, {"handle_unicode_errors": "replace"}])
def test_data_the_reader_cannot_read_is_fastavros_schema_resolution_error(writer, reader, datum, options):
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(writer), datum)
    data = out.getvalue()
    with pytest.raises(fastavro.read.SchemaResolutionError):
        fastavro.schemaless_reader(io.BytesIO(data), writer, reader, **options)
    with pytest.raises(fastavro.read.SchemaResolutionError) as caught:
        dropin.schemaless_reader(io.BytesIO(data), writer, reader, **options)
    # and roastedavro's DecodeError, with the offset
    assert isinstance(caught.value, DecodeError) and 0 <= caught.value.offset <= len(data)
    assert isinstance(caught.value, dropin.SchemaResolutionError)


def test_json_data_the_reader_cannot_read_is_fastavros_schema_resolution_error():
    text = io.StringIO()
    fastavro.json_writer(text, fastavro.parse_schema(ENUM_V2), [{"e": "B"}])
    for module in (fastavro, dropin):
        with pytest.raises(fastavro.read.SchemaResolutionError):
            list(module.json_reader(io.StringIO(text.getvalue()), ENUM_V2, ENUM_V1))


def test_the_logical_types_fastavro_converts_are_fastavros_own(tmp_path):
    """The drop-in's list of the logical types fastavro converts on read is
    fastavro's LOGICAL_READERS (keys "<type>-<logical type>"), as a fresh
    process has it: tests in this process register custom ones."""
    import json
    import subprocess
    import sys

    from roastedavro._tier0 import _FASTAVRO_LOGICAL

    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, fastavro.read as r, fastavro.write as w; "
            "print(json.dumps([sorted(r.LOGICAL_READERS), sorted(w.LOGICAL_WRITERS)]))",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    readers, writers = json.loads(shown)
    assert {f"{kind}-{name}" for kind, name in _FASTAVRO_LOGICAL} == set(readers) == set(writers)


# a record whose fields the reader reorders, drops and adds, inside a union,
# an array and a map of the outer record, which the reader reorders too
_INNER_V1 = {
    "type": "record",
    "name": "Inner",
    "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}, {"name": "c", "type": "long"}],
}
_INNER_V2 = {
    "type": "record",
    "name": "Inner",
    "fields": [
        {"name": "new", "type": "int", "default": 1},
        {"name": "c", "type": "long"},
        {"name": "a", "type": "int"},
    ],
}
ORDER_V1 = {
    "type": "record",
    "name": "Outer",
    "fields": [
        {"name": "x", "type": "int"},
        {"name": "one", "type": ["null", _INNER_V1]},
        {"name": "many", "type": {"type": "array", "items": "Inner"}},
        {"name": "by_key", "type": {"type": "map", "values": "Inner"}},
        {"name": "y", "type": "string"},
    ],
}
ORDER_V2 = {
    "type": "record",
    "name": "Outer",
    "fields": [
        {"name": "y", "type": "string"},
        {"name": "added", "type": "string", "default": "d"},
        {"name": "by_key", "type": {"type": "map", "values": _INNER_V2}},
        {"name": "one", "type": ["null", "Inner"]},
        {"name": "many", "type": {"type": "array", "items": "Inner"}},
        {"name": "renamed", "aliases": ["x"], "type": "int"},
    ],
}
ORDER_DATUM = {
    "x": 1,
    "one": {"a": 2, "b": "s", "c": 3},
    "many": [{"a": 4, "b": "t", "c": 5}] * 2,
    "by_key": {"k": {"a": 6, "b": "u", "c": 7}},
    "y": "z",
}


@pytest.mark.parametrize("policy", ["never", "eager"])
def test_keys_come_in_fastavros_order_where_the_reader_reorders_fields(monkeypatch, policy):
    """fastavro gives a record's keys in the writer's order of the fields
    read, then the reader's added fields: the drop-in gives the same order,
    from tier 0 and from the compiled pair codec alike, on every reading
    path. roastedavro's own AvroCodec gives the reader's order, as Java does."""
    monkeypatch.setenv("ROASTEDAVRO_COMPILE", policy)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(ORDER_V1), ORDER_DATUM)
    data = out.getvalue()
    expected = fastavro.schemaless_reader(io.BytesIO(data), ORDER_V1, ORDER_V2)
    assert list(expected) == ["renamed", "one", "many", "by_key", "y", "added"]
    assert list(expected["one"]) == ["a", "c", "new"]
    ours = dropin.schemaless_reader(
        io.BytesIO(data), dropin.parse_schema(ORDER_V1), dropin.parse_schema(ORDER_V2)
    )
    assert _types(ours) == _types(expected) and ours == expected
    # container files and Avro JSON
    container = io.BytesIO()
    fastavro.writer(container, fastavro.parse_schema(ORDER_V1), [ORDER_DATUM] * 3)
    records = list(dropin.reader(io.BytesIO(container.getvalue()), ORDER_V2))
    assert [_types(record) for record in records] == [_types(expected)] * 3
    text = io.StringIO()
    fastavro.json_writer(text, fastavro.parse_schema(ORDER_V1), [ORDER_DATUM])
    (from_json,) = dropin.json_reader(io.StringIO(text.getvalue()), ORDER_V1, ORDER_V2)
    assert _types(from_json) == _types(expected)
    # roastedavro's own codec: the reader's order
    own = AvroCodec(ORDER_V2, writer_schema=ORDER_V1, compile=policy).load(data)
    assert list(own) == [field["name"] for field in ORDER_V2["fields"]]
    assert list(own["one"]) == ["new", "c", "a"] and own == expected | {"one": own["one"]}


@pytest.mark.parametrize("name", sorted(UNCONVERTED))
@pytest.mark.parametrize("policy", ["never", "eager"])
def test_logical_types_fastavro_does_not_convert_are_their_values_without_a_reader(monkeypatch, name, policy):
    """Without a reader's schema too, the drop-in reads and writes the
    logical types fastavro 1.13 does not convert as their underlying values:
    the same bytes, values and types as fastavro's, in binary, files and
    Avro JSON (roastedavro's own AvroCodec converts them)."""
    monkeypatch.setenv("ROASTEDAVRO_COMPILE", policy)
    leaf, value = UNCONVERTED[name]
    schema = record(leaf)
    ours, theirs = io.BytesIO(), io.BytesIO()
    dropin.schemaless_writer(ours, dropin.parse_schema(schema), {"f": value})
    fastavro.schemaless_writer(theirs, fastavro.parse_schema(schema), {"f": value})
    assert ours.getvalue() == theirs.getvalue()
    data = theirs.getvalue()
    expected = outcome(lambda: fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(schema)))
    assert expected == ("value", {"f": value}, [("f", type(value).__name__)])
    assert (
        outcome(lambda: dropin.schemaless_reader(io.BytesIO(data), dropin.parse_schema(schema))) == expected
    )
    container = io.BytesIO()
    fastavro.writer(container, fastavro.parse_schema(schema), [{"f": value}])
    assert [_types(r) for r in dropin.reader(io.BytesIO(container.getvalue()))] == [expected[2]]
    text = io.StringIO()
    fastavro.json_writer(text, fastavro.parse_schema(schema), [{"f": value}])
    (from_json,) = dropin.json_reader(io.StringIO(text.getvalue()), schema)
    assert _types(from_json) == expected[2] and from_json == {"f": value}
    if "nanos" not in name:  # converted there (nanoseconds stay ints: datetime has none)
        assert type(AvroCodec(schema).load(data)["f"]) is not type(value)


@pytest.mark.parametrize(
    "writer, reader, data",
    [
        # a writer repeating a field: the reader's field is read once, from the first
        (
            {
                "type": "record",
                "name": "R",
                "fields": [
                    {"name": "a", "type": "int"},
                    {"name": "b", "type": "int"},
                    {"name": "a", "type": "int"},
                ],
            },
            {
                "type": "record",
                "name": "R",
                "fields": [
                    {"name": "a", "type": "int"},
                    {"name": "b", "type": "int"},
                    {"name": "c", "type": "int", "default": 9},
                ],
            },
            b"\x02\x04\x06",
        ),
        # a reader's field of the writer's field's own name before one aliasing it
        (
            {
                "type": "record",
                "name": "R",
                "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "int"}],
            },
            {
                "type": "record",
                "name": "R",
                "fields": [
                    {"name": "a", "type": "int"},
                    {"name": "b", "type": "int", "aliases": ["a"], "default": 0},
                ],
            },
            b"\x02\x04",
        ),
    ],
)
@pytest.mark.parametrize("policy", ["never", "eager"])
def test_fields_are_matched_by_fastavros_rules(monkeypatch, writer, reader, data, policy):
    monkeypatch.setenv("ROASTEDAVRO_COMPILE", policy)
    expected = fastavro.schemaless_reader(
        io.BytesIO(data), fastavro.parse_schema(writer, _force=True), fastavro.parse_schema(reader)
    )
    got = dropin.schemaless_reader(io.BytesIO(data), dropin.parse_schema(writer), dropin.parse_schema(reader))
    assert _types(got) == _types(expected) and got == expected


def test_a_model_of_the_specifications_rules_does_not_change_the_dicts_values():
    """A roastedavro Schema parsed by the specification's rules converts a
    uuid on fixed; the equal dict schema, given to the drop-in afterwards,
    still reads fastavro's bytes (the caches tell the two apart)."""
    from roastedavro.avro import parse_schema

    schema = record({"type": "fixed", "name": "U", "size": 16, "logicalType": "uuid"})
    data = bytes(range(16))
    model = parse_schema(schema)
    assert isinstance(dropin.schemaless_reader(io.BytesIO(data), model)["f"], uuid.UUID)
    assert (
        dropin.schemaless_reader(io.BytesIO(data), schema)
        == {"f": data}
        == fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(schema))
    )
    reader = record({"type": "fixed", "name": "U", "size": 16, "logicalType": "uuid"})
    assert dropin.schemaless_reader(io.BytesIO(data), model, parse_schema(reader))["f"] != data
    assert dropin.schemaless_reader(io.BytesIO(data), schema, reader) == {"f": data}
