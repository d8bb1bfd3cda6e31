"""Defects that changed data or trusted too much: precompiled-codec packages
with malformed manifests, decimals beyond their precision, union branches
that lose part of a value."""

from __future__ import annotations

import json
import sys
import warnings

import pytest

from roastedavro import AvroCodec, precompiled

# -- precompiled-codec packages -------------------------------------------------------

SIMPLE = {
    "type": "record",
    "name": "hardening.Simple",
    "fields": [{"name": "a", "type": "long"}, {"name": "b", "type": "string"}],
}


def _fake_package(site, name, manifest):
    """An installed distribution declaring ``name`` in the codecs entry point group."""
    package = site / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / precompiled.MANIFEST).write_text(json.dumps(manifest))
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{precompiled.GROUP}]\n{name} = {name}\n")


def _manifest(**entry):
    from roastedavro import __version__
    from roastedavro.compiler import EXT_SUFFIX

    return {
        "format": precompiled.FORMAT,
        "roastedavro": __version__,
        "ext_suffix": EXT_SUFFIX,
        "codecs": {"k" * 64: entry},
    }


@pytest.mark.parametrize(
    "entry",
    [
        {"module": "broken_codecs.m", "file": "m.so"},  # no sha256
        {"module": "broken_codecs.m", "file": "m.so", "sha256": 12},
        {"file": "m.so", "sha256": "0" * 64},
        {"module": "broken_codecs.m", "file": "../../m.so", "sha256": "0" * 64},
        "not an object",
    ],
)
def test_a_malformed_precompiled_package_is_ignored_with_a_warning(tmp_path, monkeypatch, entry):
    manifest = _manifest(**entry) if isinstance(entry, dict) else dict(_manifest(), codecs={"k": entry})
    _fake_package(tmp_path, "broken_codecs", manifest)
    monkeypatch.syspath_prepend(str(tmp_path))
    precompiled.refresh()
    try:
        with pytest.warns(precompiled.PrecompiledWarning, match="'broken_codecs'"):
            assert precompiled.lookup("k" * 64) is None  # what every codec asks first
        codec = AvroCodec(SIMPLE)  # an unrelated schema keeps working
        assert codec.load(codec.dump({"a": 1, "b": "x"})) == {"a": 1, "b": "x"}
        assert precompiled.packages()["broken_codecs"]["usable"] is False
    finally:
        monkeypatch.undo()
        precompiled.refresh()
        sys.modules.pop("broken_codecs", None)


def test_a_plain_module_in_the_codecs_group_is_ignored_saying_so(tmp_path, monkeypatch):
    (tmp_path / "lonely_codecs.py").write_text("")
    info = tmp_path / "lonely_codecs-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lonely_codecs\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{precompiled.GROUP}]\nlonely_codecs = lonely_codecs\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    precompiled.refresh()
    try:
        with pytest.warns(precompiled.PrecompiledWarning, match="'lonely_codecs'.*a module, not a package"):
            assert precompiled.lookup("k" * 64) is None
    finally:
        monkeypatch.undo()
        precompiled.refresh()
        sys.modules.pop("lonely_codecs", None)


def test_a_well_formed_manifest_is_indexed(tmp_path, monkeypatch):
    _fake_package(
        tmp_path, "fine_codecs", _manifest(module="fine_codecs.m", file="m.so", sha256="a" * 64, label="x")
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    precompiled.refresh()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", precompiled.PrecompiledWarning)
            found = precompiled.lookup("k" * 64)
        assert found is not None and found.package == "fine_codecs" and found.sha256 == "a" * 64
    finally:
        monkeypatch.undo()
        precompiled.refresh()


# -- decimal defaults ---------------------------------------------------------------------


def _decimal_record(default, kind="bytes", precision=4):
    decimal_type = {"type": kind, "logicalType": "decimal", "precision": precision, "scale": 2}
    if kind == "fixed":
        decimal_type.update(name="hardening.Money", size=8)
    return {
        "type": "record",
        "name": "hardening.Priced",
        "fields": [{"name": "price", "type": decimal_type, "default": default}],
    }


def _code_points(unscaled: int, size: int | None = None) -> str:
    length = size or max(1, (unscaled.bit_length() + 8) // 8)
    return unscaled.to_bytes(length, "big", signed=True).decode("latin-1")


@pytest.mark.parametrize("kind,size", [("bytes", None), ("fixed", 8)])
@pytest.mark.parametrize("unscaled", [10**4, -(10**4), 10**6, 2**63 - 1])
def test_a_decimal_default_with_too_many_digits_is_a_schema_error(kind, size, unscaled):
    from roastedavro.avro import parse_schema
    from roastedavro.errors import SchemaError

    with pytest.raises(SchemaError, match=r"Priced\.price.*decimal\(4, 2\) default has at most 4 digits"):
        parse_schema(_decimal_record(_code_points(unscaled, size), kind))


@pytest.mark.parametrize("unscaled", [9999, -9999, 0, 1234])
def test_a_decimal_default_within_its_precision_parses(unscaled):
    from roastedavro.avro import parse_schema

    parse_schema(_decimal_record(_code_points(unscaled), "bytes"))
    parse_schema(_decimal_record(_code_points(unscaled, 8), "fixed"))


def test_a_decimal_default_in_a_union_is_checked_against_its_branch():
    from roastedavro.avro import parse_schema
    from roastedavro.errors import SchemaError

    schema = _decimal_record(_code_points(10**5))
    schema["fields"][0]["type"] = [schema["fields"][0]["type"], "null"]
    with pytest.raises(SchemaError, match="matches no branch"):
        parse_schema(schema)


def test_a_huge_decimal_default_is_checked_in_proportion_to_its_length():
    from roastedavro.avro import parse_schema
    from roastedavro.errors import SchemaError

    with pytest.raises(SchemaError, match="at most 10 digits"):
        parse_schema(_decimal_record("\x7f" * 1_000_000, precision=10))
    # precision that large: the exact comparison, bounded by the bytes' size
    parse_schema(_decimal_record("\x7f" * 20_000, precision=60_000))


# -- decimals beyond their precision: refused on write, read exactly ---------------------

import decimal  # noqa: E402
import io  # noqa: E402
from decimal import Decimal  # noqa: E402

import fastavro  # noqa: E402
from hypothesis import example, given, settings, strategies as st  # noqa: E402

from roastedavro.errors import DatumError, DecodeError  # noqa: E402

WIDE = {
    "type": "record",
    "name": "hardening.Wide",
    "fields": [
        {"name": "b", "type": {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2}},
        {
            "name": "f",
            "type": {
                "type": "fixed",
                "name": "hardening.Eight",
                "size": 8,
                "logicalType": "decimal",
                "precision": 4,
                "scale": 2,
            },
        },
        {
            "name": "u",
            "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2}],
        },
        {"name": "g", "type": {"type": "bytes", "logicalType": "big-decimal"}},
    ],
}
WIDE_CODEC = AvroCodec(WIDE)


def _two(unscaled: int, size: int | None = None) -> bytes:
    length = size or (unscaled.bit_length() + 8) // 8
    return unscaled.to_bytes(length, "big", signed=True)


def _avro_long(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _avro_bytes(data: bytes) -> bytes:
    return _avro_long(len(data)) + data


def _wide_bytes(b: int, f: int, u: int | None, g: bytes = _avro_bytes(_avro_bytes(b"\x01") + b"\x00")):
    union = b"\x00" if u is None else b"\x02" + _avro_bytes(_two(u))
    return _avro_bytes(_two(b)) + _two(f, 8) + union + g


_UNROUNDED = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def _exact(unscaled: int, scale: int = 2) -> Decimal:
    return Decimal(unscaled).scaleb(-scale, context=_UNROUNDED)


@settings(max_examples=150, deadline=None)
@given(
    b=st.integers(-(2**2040), 2**2040),
    f=st.integers(-(2**63), 2**63 - 1),
    u=st.none() | st.integers(-(2**200), 2**200),
)
def test_plain_avro_reads_a_decimal_beyond_its_precision_exactly(b, f, u):
    data = _wide_bytes(b, f, u)
    expected = {"b": _exact(b), "f": _exact(f), "u": None if u is None else _exact(u), "g": Decimal(1)}
    got = WIDE_CODEC.load(data)
    assert got == expected
    assert [value.as_tuple().exponent for value in (got["b"], got["f"])] == [-2, -2]
    # the fastavro drop-in reads the same, but for the big-decimal: fastavro
    # 1.13 does not convert that logical type, and returns its bytes
    from roastedavro import fastavro as dropin

    assert dropin.schemaless_reader(io.BytesIO(data), WIDE) == dict(expected, g=b"\x02\x01\x00")


@settings(max_examples=100, deadline=None)
@given(unscaled=st.integers(-(2**400), 2**400).filter(lambda n: abs(n) >= 10**4))
def test_a_decimal_beyond_its_precision_is_refused_on_write(unscaled):
    value = _exact(unscaled)
    good = {"b": Decimal("1.00"), "f": Decimal("1.00"), "u": None, "g": Decimal(1)}
    for field in ("b", "f", "u"):
        with pytest.raises(DatumError, match=rf"^{field}: .*precision of decimal\(4, 2\)"):
            WIDE_CODEC.dump(dict(good, **{field: value}))
    # bytes given as they are: the same rule
    with pytest.raises(DatumError, match=r"^b: .*more than 4 digits"):
        WIDE_CODEC.dump(dict(good, b=_two(unscaled)))


def test_a_decimal_longer_than_the_read_bound_is_a_decode_error_before_conversion():
    # 257 bytes: more than decimal(4, 2) needs and more than the 256 read beyond it
    data = _wide_bytes(2**2050, 0, None)
    with pytest.raises(DecodeError, match=r"decimal of 257 bytes.*256 bytes") as caught:
        WIDE_CODEC.load(data)
    assert caught.value.offset == 0
    huge = _avro_bytes(b"\x7f" * 1_000_000) + _two(0, 8) + b"\x00" + _avro_bytes(b"\x02\x01\x00")
    with pytest.raises(DecodeError, match="decimal of 1000000 bytes"):
        WIDE_CODEC.load(huge)


def test_a_container_file_with_a_decimal_beyond_its_precision_reads_exactly(tmp_path):
    # written by fastavro, which writes the bytes it is given
    from roastedavro import container

    records = [
        {"b": _two(123456), "f": _two(99999999, 8), "u": _two(-(10**6)), "g": _avro_bytes(b"\x01") + b"\x00"},
        {"b": _two(1), "f": _two(1, 8), "u": None, "g": _avro_bytes(b"\x01") + b"\x00"},
    ]
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(WIDE), records)
    buffer.seek(0)
    read = list(container.FileReader(buffer))
    assert read == [
        {"b": Decimal("1234.56"), "f": Decimal("999999.99"), "u": Decimal("-10000.00"), "g": Decimal(1)},
        {"b": Decimal("0.01"), "f": Decimal("0.01"), "u": None, "g": Decimal(1)},
    ]


def test_java_reads_a_decimal_beyond_its_precision(java):
    data = _wide_bytes(123456, 99999999, -(10**6))
    trip = java.roundtrip(WIDE, data)
    assert trip.data == data and trip.trailing == 0
    assert WIDE_CODEC.load(data)["b"] == Decimal("1234.56")


@pytest.mark.parametrize(
    "raw,problem",
    [
        (b"", "no length"),
        (b"\x00", "unscaled value is empty"),
        (b"\x01", "negative length"),
        (b"\x06\x01", "run past the end"),
        (b"\x02\x01", "no scale"),
        (b"\x02\x01\x00\x00", "1 bytes after the scale"),
        (b"\x02\x01\x80\x80\x80\x80\x20", "scale does not fit"),
    ],
)
def test_big_decimal_bytes_that_load_would_refuse_are_refused_on_dump(raw, problem):
    good = {"b": Decimal(1), "f": Decimal(1), "u": None}
    with pytest.raises(DatumError, match=rf"^g: .*{problem}"):
        WIDE_CODEC.dump(dict(good, g=raw))


@settings(max_examples=100, deadline=None)
@given(unscaled=st.integers(-(2**300), 2**300), scale=st.integers(-(2**31), 2**31 - 1))
def test_big_decimal_bytes_that_dump_accepts_load_back(unscaled, scale):
    raw = _avro_bytes(_two(unscaled)) + _avro_long(scale)
    good = {"b": Decimal(1), "f": Decimal(1), "u": None}
    loaded = WIDE_CODEC.load(WIDE_CODEC.dump(dict(good, g=raw)))["g"]
    assert loaded == _exact(unscaled, scale)
    assert WIDE_CODEC.load(WIDE_CODEC.dump(dict(good, g=loaded)))["g"] == loaded


def test_a_writer_reader_pair_reads_a_decimal_beyond_its_precision_exactly():
    reader = dict(WIDE, fields=WIDE["fields"] + [{"name": "x", "type": "int", "default": 3}])
    codec = AvroCodec(reader, writer_schema=WIDE)
    assert codec.load(_wide_bytes(123456, -(10**9), 10**7)) == {
        "b": Decimal("1234.56"),
        "f": Decimal("-10000000.00"),
        "u": Decimal("100000.00"),
        "g": Decimal(1),
        "x": 3,
    }
    with pytest.raises(DecodeError, match="decimal of 257 bytes"):
        codec.load(_wide_bytes(2**2050, 0, None))


# -- union branches: the most specific that represents the value exactly ----------------

import datetime as dt  # noqa: E402
import enum  # noqa: E402
import math  # noqa: E402
import struct  # noqa: E402
import uuid  # noqa: E402

UTC = dt.timezone.utc


def _logical(kind, logical, **more):
    return {"type": kind, "logicalType": logical, **more}


BRANCHY = {
    "type": "record",
    "name": "hardening.Branchy",
    "fields": [
        {"name": "a", "type": ["null", _logical("int", "date"), _logical("long", "timestamp-micros")]},
        {"name": "a2", "type": [_logical("int", "date"), _logical("long", "local-timestamp-micros")]},
        {"name": "a3", "type": ["null", _logical("int", "date"), _logical("long", "timestamp-millis")]},
        {"name": "b", "type": ["float", "long"]},
        {"name": "c", "type": ["double", "long", "boolean"]},
        {"name": "d", "type": [_logical("int", "date"), "string"]},
        {"name": "e", "type": [_logical("int", "time-millis"), _logical("long", "time-micros")]},
        {
            "name": "f",
            "type": [
                _logical("bytes", "decimal", precision=4, scale=2),
                _logical("fixed", "decimal", name="hardening.Wider", size=8, precision=12, scale=5),
            ],
        },
        {"name": "g", "type": [_logical("fixed", "uuid", name="hardening.Id", size=16), "bytes"]},
        {"name": "h", "type": [_logical("int", "date"), "long", "double"]},
    ],
}
BRANCHY_CODEC = AvroCodec(BRANCHY)
BRANCHY_PARSED = fastavro.parse_schema(BRANCHY)


class Stamp(dt.datetime):
    """A datetime subclass: its branch is decided in Python, not by exact type."""


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2**40


_aware = st.datetimes(
    min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1), timezones=st.just(UTC)
)
_naive = st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1))
_longs = st.integers(-(2**63), 2**63 - 1)
_dates = st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31))

_branchy = st.fixed_dictionaries(
    {
        "a": st.none() | _dates | _aware | _aware.map(lambda d: Stamp.fromtimestamp(d.timestamp(), UTC)),
        "a2": _dates | _naive,
        "a3": st.none() | _dates | _aware.map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)),
        "b": _longs | st.floats(width=32, allow_nan=False) | st.sampled_from(list(Level)),
        "c": _longs | st.floats(allow_nan=False) | st.booleans(),
        "d": _dates | st.text(max_size=12) | st.dates().map(dt.date.isoformat),
        "e": st.times(),
        "f": st.decimals(min_value=-99, max_value=99, places=2)
        | st.decimals(min_value=-(10**7) + 1, max_value=10**7 - 1, places=5),
        "g": st.uuids() | st.binary(max_size=20),
        "h": _longs | st.floats(allow_nan=False) | _dates,
    }
)


def _base(value):
    for kind in (bool, int, float, dt.datetime, dt.date, dt.time, Decimal, uuid.UUID, str, bytes):
        if isinstance(value, kind):
            return kind
    return type(value)


def _fastavro_keeps(datum) -> bytes | None:
    """fastavro's bytes for the datum if it reads back every value equal and
    of the same type (else None: it loses something)."""
    buffer = io.BytesIO()
    try:
        fastavro.schemaless_writer(buffer, BRANCHY_PARSED, datum)
    except (ValueError, TypeError, AttributeError, OverflowError, struct.error):
        return None
    try:
        back = fastavro.schemaless_reader(io.BytesIO(buffer.getvalue()), BRANCHY_PARSED)
    except (ValueError, OverflowError):
        return None  # it cannot even read what it wrote
    # and so do we, from its bytes (fastavro reads a uuid on fixed as bytes)
    ours = BRANCHY_CODEC.load(buffer.getvalue())
    same = all(
        type(read[key]) is _base(datum[key]) and read[key] == datum[key]
        for read in (back, ours)
        for key in datum
    )
    return buffer.getvalue() if same else None


@settings(max_examples=200, deadline=None)
@given(datum=_branchy)
@example(
    datum={
        "a": None,
        "a2": dt.date(2020, 1, 1),
        "a3": None,
        "b": 1,
        "c": True,
        "d": "",
        "e": dt.time(1, 2, 3, 4000),
        "f": Decimal("0.00000"),
        "g": b"x" * 16,
        "h": 1.0,
    }
)
def test_a_union_value_reads_back_equal_and_of_its_type(datum):
    data = BRANCHY_CODEC.dump(datum)
    back = BRANCHY_CODEC.load(data)
    for key, value in datum.items():
        assert type(back[key]) is _base(value), (key, value, back[key])
        if isinstance(value, float) and math.isnan(value):
            continue
        assert back[key] == value, (key, value, back[key])
    # where fastavro keeps every value, its bytes are ours
    expected = _fastavro_keeps(datum)
    if expected is not None:
        assert data == expected


def test_a_datetime_goes_to_the_timestamp_branch_not_the_date_branch(java):
    moment = dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
    datum = {
        "a": moment,
        "a2": moment.replace(tzinfo=None),
        "a3": moment,
        "b": 1,
        "c": 1,
        "d": dt.date(2020, 1, 1),
        "e": dt.time(1, 2, 3, 4),
        "f": Decimal("1.5"),
        "g": b"",
        "h": 2**40,
    }
    data = BRANCHY_CODEC.dump(datum)
    assert BRANCHY_CODEC.load(data) == datum
    # fastavro writes the datetime as a date (its time lost): the difference is deliberate
    lost = fastavro.schemaless_reader(io.BytesIO(_fastavro_bytes(datum)), BRANCHY_PARSED)
    assert lost["a3"] == dt.date(2024, 5, 6)
    # Java reads the branch written: a long timestamp, the int 1 as a long, 2**40 as a long
    trip = java.roundtrip(BRANCHY, data)
    assert trip.data == data
    as_json = json.loads(trip.json)
    assert list(as_json["a3"]) == ["long"] and as_json["a3"]["long"] == 1714979289123
    assert list(as_json["b"]) == ["long"] and list(as_json["h"]) == ["long"]
    assert list(as_json["e"]) == ["long"]  # 4 microseconds: time-micros


def _fastavro_bytes(datum) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, BRANCHY_PARSED, datum)
    return buffer.getvalue()


def test_the_avro_json_encoding_names_the_same_branch():
    from roastedavro import avrojson

    moment = dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
    datum = {
        "a": moment,
        "a2": dt.date(2020, 1, 1),
        "a3": moment,
        "b": 2**60 + 1,
        "c": 3,
        "d": "2020-01-01",
        "e": dt.time(0, 0, 0, 7),
        "f": Decimal("1.23456"),
        "g": b"x",
        "h": 5,
    }
    encoded = json.loads(avrojson.to_json(BRANCHY, datum))
    assert {key: list(value)[0] for key, value in encoded.items() if isinstance(value, dict)} == {
        "a": "long",
        "a2": "int",
        "a3": "long",
        "b": "long",
        "c": "long",
        "d": "string",
        "e": "long",
        "f": "hardening.Wider",
        "g": "bytes",
        "h": "long",
    }


# -- an "error" among records in a union -----------------------------------------------

ERROR_UNIONS = [
    [
        {"type": "null"},
        {"type": "record", "name": "Rec", "fields": []},
        {"type": "error", "name": "Rec1", "fields": []},
    ],
    [
        {"type": "error", "name": "E", "fields": [{"name": "a", "type": "int"}]},
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": ["null", "int"], "default": None}],
        },
    ],
    [
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": ["null", "int"]}],
        },
        {"type": "error", "name": "E", "fields": [{"name": "a", "type": "int"}]},
    ],
]


@pytest.mark.parametrize("schema", ERROR_UNIONS, ids=["empty", "error-first", "error-last"])
def test_an_error_in_a_union_of_records_is_chosen_as_fastavro_chooses_it(schema):
    # fastavro counts shared field names for "record" branches only; an
    # "error" that accepts the dict is taken outright, as a map is
    import io

    import fastavro

    from roastedavro._tier0 import Interpreter
    from roastedavro.avro import parse_schema
    from roastedavro.avrojson import AvroJSON

    codec, interpreter = AvroCodec(schema), Interpreter(parse_schema(schema))
    parsed, transcoder = fastavro.parse_schema(schema), AvroJSON(schema)
    for datum in ({}, {"a": 1}, {"a": 1, "b": 2}):
        out = io.BytesIO()
        try:
            fastavro.schemaless_writer(out, parsed, datum)
        except ValueError:
            continue  # no branch takes it (ours say so with a DatumError: tested elsewhere)
        assert codec.dump(datum) == interpreter.dump(datum) == out.getvalue(), datum
        # Avro JSON names the branch fastavro's bytes hold (fastavro's JSON
        # writer does not take an "error")
        chosen = schema[out.getvalue()[0] >> 1]
        assert list(json.loads(transcoder.to_json(datum))) == [chosen["name"]], datum
