"""Typed marshmallow defaults: a load_default/dump_default is the deserialized
value (an enum member, a Decimal, an aware datetime, a date, a UUID), and
the generated Avro schema carries it as the Avro value the field's writer
writes for it.

Oracles: marshmallow's own ``load``/``dump`` (what a reader of data without
the field must return), fastavro (its logical writers and readers, and its
resolving reader), Java Avro 1.12's ``GenericDatumReader(writer, reader)``
filling the default in, and roastedavro's model parser. The compiled
schemas are built once per module; the conversion itself is checked on
random values without compiling (``avro_schema()`` only visits the fields).
"""

from __future__ import annotations

import datetime as dt
import enum
import io
import ipaddress
import types
import uuid
from decimal import Decimal

import fastavro
import fastavro.read
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import Schema, fields, post_dump

from roastedavro import AvroCodec, CompiledSchema, CompileError, SchemaResolutionError
from roastedavro.avro import parse_schema
from roastedavro.visitor import without_logical_types

UTC = dt.timezone.utc


class Status(enum.Enum):
    NEW = "new"
    OLD = "old"


class Line(Schema):
    sku = fields.String(required=True)
    at = fields.DateTime(required=True)
    qty = fields.Integer(allow_none=True)


class Item(Schema):
    """Plucked by the Pluck fields: load returns {"s": member} or {"day": date}."""

    s = fields.Enum(Status, required=True)
    d = fields.Date(required=True, attribute="day")
    at = fields.DateTime(required=True)


def _today():
    return dt.date(2024, 2, 29)


LINE = {"sku": "x", "at": dt.datetime(2021, 3, 4, 5, 6, 7, 8, tzinfo=UTC), "qty": 2}
LINE2 = {"sku": "", "at": dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), "qty": None}

#: every field class with a logical type (and the structures holding them),
#: each with a typed default
TYPED_FIELDS = {
    "status": fields.Enum(Status, load_default=Status.OLD),
    "status_value": fields.Enum(Status, by_value=True, load_default=Status.NEW),
    "price": fields.Decimal(places=2, metadata={"precision": 10}, load_default=Decimal("-12.50")),
    "price_text": fields.Decimal(
        places=2, as_string=True, metadata={"precision": 6}, load_default=Decimal("0.00")
    ),
    "price_fixed": fields.Decimal(
        places=2,
        load_default=Decimal("3.14"),
        metadata={
            "avro": {"type": "fixed", "name": "Money", "size": 8, "logicalType": "decimal", "precision": 12}
        },
    ),
    "when": fields.DateTime(load_default=dt.datetime(2020, 1, 1, 12, 30, 0, 123456, tzinfo=UTC)),
    "when_millis": fields.DateTime(
        metadata={"avro": "timestamp-millis"},
        load_default=dt.datetime(1960, 1, 1, 0, 0, 0, 123000, tzinfo=UTC),
    ),
    "aware": fields.AwareDateTime(
        load_default=dt.datetime(1999, 5, 6, 7, 8, 9, tzinfo=dt.timezone(dt.timedelta(hours=-5)))
    ),
    "naive": fields.NaiveDateTime(load_default=dt.datetime(1999, 12, 31, 23, 59, 59, 999999)),
    "naive_millis": fields.NaiveDateTime(
        metadata={"avro": "local-timestamp-millis"}, load_default=dt.datetime(2001, 2, 3, 4, 5, 6, 7000)
    ),
    "day": fields.Date(load_default=dt.date(1900, 3, 1)),
    "at": fields.Time(load_default=dt.time(23, 59, 59, 999999)),
    "at_millis": fields.Time(metadata={"avro": "time-millis"}, load_default=dt.time(0, 0, 1, 5000)),
    "span": fields.TimeDelta(load_default=dt.timedelta(days=-3, seconds=5, microseconds=7)),
    "ident": fields.UUID(load_default=uuid.UUID("12345678-1234-5678-1234-567812345678")),
    "ident_fixed": fields.UUID(metadata={"avro": "fixed"}, load_default=uuid.UUID(int=2**127 + 255)),
    "maybe_day": fields.Date(allow_none=True, load_default=dt.date(2020, 2, 29)),
    "no_day": fields.Date(allow_none=True, load_default=None),
    "host": fields.IP(load_default=ipaddress.ip_address("::1")),
    "days": fields.List(fields.Date(), load_default=[dt.date(2020, 1, 1), dt.date(1969, 12, 31)]),
    "prices": fields.Dict(
        keys=fields.String(),
        values=fields.Decimal(places=1, metadata={"precision": 4}),
        load_default={"a": Decimal("1.5"), "b": Decimal("-0.1")},
    ),
    "pair": fields.Tuple(
        (fields.Date(), fields.Enum(Status)), load_default=(dt.date(2000, 1, 1), Status.NEW)
    ),
    "line": fields.Nested(Line, load_default=LINE),
    "lines": fields.Nested(Line, many=True, load_default=[LINE, LINE2]),
    "secret": fields.Date(load_only=True, load_default=dt.date(2010, 10, 10)),
    # a Pluck's default is what its load returns: the nested record as a dict
    "plucked": fields.Pluck(Item, "s", load_default={"s": Status.OLD}),
    "plucked_day": fields.Pluck(Item, "d", load_default={"day": dt.date(1969, 7, 20)}),
    "plucked_at": fields.Pluck(Item, "at", load_default={"at": dt.datetime(2000, 1, 1, tzinfo=UTC)}),
    "plucked_many": fields.Pluck(Item, "s", many=True, load_default=[{"s": Status.OLD}, {"s": Status.NEW}]),
    # a map's Enum keys are written as the members' names
    "by_status": fields.Dict(
        keys=fields.Enum(Status), values=fields.Date(), load_default={Status.OLD: dt.date(2001, 1, 1)}
    ),
    # a declared Avro type (fastavro's conventions): its logical type's value
    "raw_when": fields.Raw(
        metadata={"avro": {"type": "long", "logicalType": "timestamp-micros"}},
        load_default=dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC),
    ),
}
#: only a dump_default: the Avro default comes from it
DUMP_DEFAULT = dt.date(2021, 1, 1)


class Old(CompiledSchema):
    class Meta:
        avro_name = "Shop"  # one record, two versions

    a = fields.Integer(required=True)


Typed = type(
    "Typed",
    (CompiledSchema,),
    {
        "Meta": type("Meta", (), {"avro_name": "Shop"}),
        "a": fields.Integer(required=True),
        **TYPED_FIELDS,
        "dump_day": fields.Date(dump_default=DUMP_DEFAULT),
    },
)


@pytest.fixture(scope="module")
def typed():
    return Typed()


@pytest.fixture(scope="module")
def old_data():
    return Old().dump_compiled({"a": 1})


def field_type(schema: dict, name: str):
    return next(f for f in schema["fields"] if f["name"] == name)


def expected_values() -> dict:
    """marshmallow's load of a record without the fields, plus the field
    whose Avro default is its dump_default."""
    values = Typed().load({"a": 1})
    assert set(values) == {"a", *TYPED_FIELDS}
    return {**values, "dump_day": DUMP_DEFAULT}


def fastavro_form(values: dict) -> dict:
    """The values as fastavro's writer takes them: enum symbols, the values
    of by_value enums, the tuple as its record, bytes for the fixed uuid
    (fastavro 1.13 knows uuid on string only), text for the IP, the
    TimeDelta's microseconds."""
    out = dict(values)
    out["span"] = values["span"] // dt.timedelta(microseconds=1)
    out["status"] = values["status"].name
    out["status_value"] = values["status_value"].value
    out["pair"] = {"item0": values["pair"][0], "item1": values["pair"][1].name}
    out["ident_fixed"] = values["ident_fixed"].bytes
    out["host"] = str(values["host"])
    out["plucked"] = values["plucked"]["s"].name
    out["plucked_day"] = values["plucked_day"]["day"]
    out["plucked_at"] = values["plucked_at"]["at"]
    out["plucked_many"] = [item["s"].name for item in values["plucked_many"]]
    out["by_status"] = {key.name: day for key, day in values["by_status"].items()}
    return out


def fastavro_bytes(schema: dict, values: dict) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), fastavro_form(values))
    return out.getvalue()


# -- the schema ------------------------------------------------------------


def test_the_avro_schema_carries_each_default(typed):
    avro = typed.avro_schema()
    parse_schema(avro)  # the model parser checks every default against its type
    fastavro.parse_schema(avro)
    for name in [*TYPED_FIELDS, "dump_day"]:
        assert "default" in field_type(avro, name), name
    default = {f["name"]: f.get("default") for f in avro["fields"]}
    assert default["status"] == "OLD"
    assert default["status_value"] == "new"
    assert default["when"] == 1577881800123456
    assert default["when_millis"] == -315619199877
    assert default["day"] == -25508
    assert default["ident"] == "12345678-1234-5678-1234-567812345678"
    assert default["price"] == b"\xfb\x1e".decode("latin-1")  # -1250, two's complement
    assert default["price_fixed"] == (314).to_bytes(8, "big", signed=True).decode("latin-1")
    assert default["host"] == "::1"
    assert default["raw_when"] == 1_000_000
    assert default["dump_day"] == (DUMP_DEFAULT - dt.date(1970, 1, 1)).days
    # the plucked field's own conversion
    assert default["plucked"] == "OLD"
    assert default["plucked_day"] == -165
    assert default["plucked_at"] == 946684800000000
    assert default["plucked_many"] == ["OLD", "NEW"]
    assert default["by_status"] == {"OLD": 11323}
    # allow_none: a non-null default goes in the union's first branch, None in null's
    assert field_type(avro, "maybe_day")["type"] == [{"type": "int", "logicalType": "date"}, "null"]
    assert field_type(avro, "no_day")["type"] == ["null", {"type": "int", "logicalType": "date"}]
    assert default["no_day"] is None


# -- reading data without the fields (schema evolution) --------------------


def test_load_compiled_of_an_older_writer_returns_marshmallows_defaults(typed, old_data):
    expected = expected_values()
    loaded = typed.load_compiled(old_data, writer_schema=Old)
    assert loaded == expected
    for name, value in expected.items():
        assert type(loaded[name]) is type(value), name
    # the values are the reader's own: a second read is equal, not shared state
    assert typed.load_compiled(old_data, writer_schema=Old().avro_schema()) == expected


def test_fastavro_reads_the_defaults_as_marshmallow_loads_them(typed, old_data):
    """fastavro's resolving reader returns a logical type's default as its
    JSON; its logical readers convert it to what marshmallow's load returns."""
    avro = typed.avro_schema()
    raw = fastavro.schemaless_reader(
        io.BytesIO(old_data), fastavro.parse_schema(Old().avro_schema()), fastavro.parse_schema(avro)
    )
    expected = expected_values()
    for name in (
        "price",
        "price_text",
        "price_fixed",
        "when",
        "when_millis",
        "aware",
        "naive",
        "naive_millis",
        "day",
        "at",
        "at_millis",
        "ident",
        "dump_day",
        "raw_when",
    ):
        avro_type = field_type(avro, name)["type"]
        value = raw[name]
        if avro_type["type"] in ("bytes", "fixed"):
            value = value.encode("latin-1")  # JSON code points 0-255, one per byte
        reader = fastavro.read.LOGICAL_READERS[f"{avro_type['type']}-{avro_type['logicalType']}"]
        assert reader(value, avro_type, avro_type) == expected[name], name
    assert raw["status"] == expected["status"].name
    assert raw["status_value"] == expected["status_value"].value
    assert raw["span"] == expected["span"] // dt.timedelta(microseconds=1)
    assert raw["no_day"] is None
    assert uuid.UUID(bytes=raw["ident_fixed"].encode("latin-1")) == expected["ident_fixed"]


def test_java_fills_in_the_bytes_the_writer_writes(java, typed, old_data):
    """Java's reading of the old data, written back in the new schema, is the
    bytes of marshmallow's default values as fastavro and the compiled
    writer write them; roastedavro's resolving AvroCodec reads the same."""
    avro = typed.avro_schema()
    expected = expected_values()
    ours = typed.dump_compiled(expected)
    assert ours == fastavro_bytes(avro, expected)
    [answer] = java.resolve_each([(Old().avro_schema(), avro, old_data)])
    assert answer.data == ours
    codec = AvroCodec(avro, writer_schema=Old().avro_schema())
    assert AvroCodec(avro).dump(codec.load(old_data)) == ours


# -- writing values that are missing ---------------------------------------


def test_a_missing_value_is_written_as_its_default(typed):
    expected = expected_values()
    assert typed.dump_compiled({"a": 1}) == typed.dump_compiled(expected)


def test_marshmallows_dump_of_what_load_compiled_returns(typed, old_data):
    loaded = typed.load_compiled(old_data, writer_schema=Old)
    dumped = typed.dump(loaded)
    expected = typed.dump(Typed().load({"a": 1}) | {"dump_day": DUMP_DEFAULT})
    # an Avro timestamp holds no time zone: the -05:00 default reads back as
    # the same instant in UTC, as any aware datetime written and read does
    assert loaded["aware"].tzinfo is UTC
    assert dumped.pop("aware") == "1999-05-06T12:08:09+00:00"
    assert expected.pop("aware") == "1999-05-06T07:08:09-05:00"
    assert dumped == expected


class TypedPostDump(Typed):
    """Dumps through marshmallow (post_dump): each missing field's Avro value
    comes from the default's converted value, as in the compiled writer."""

    @post_dump
    def unchanged(self, data, **kwargs):
        return data


def test_the_path_through_marshmallows_dump_writes_the_same_defaults(typed):
    assert TypedPostDump().dump_compiled({"a": 1}) == typed.dump_compiled({"a": 1})


# -- callables and errors (no compilation) ----------------------------------


def test_callable_defaults_are_not_in_the_avro_schema():
    class Callables(CompiledSchema):
        class Meta:
            avro_name = "Shop"

        a = fields.Integer(required=True)
        made = fields.Date(load_default=_today)
        stamped = fields.Date(load_default=_today, dump_default=dt.date(2000, 1, 1))

    avro = Callables().avro_schema()
    assert "default" not in field_type(avro, "made")
    # a callable load_default: the constant dump_default is the Avro default
    assert field_type(avro, "stamped")["default"] == 10957
    with pytest.raises(SchemaResolutionError, match="made"):
        Callables().load_compiled(Old().dump_compiled({"a": 1}), writer_schema=Old)


ERRORS = [
    (fields.Enum(Status, load_default="NEW"), r"not a member of Status.*Status\.NEW, Status\.OLD"),
    (fields.Enum(Status, by_value=True, load_default="new"), r"not a member of Status"),
    (
        fields.DateTime(load_default=dt.datetime(2020, 1, 1)),
        r"'x' \(DateTime\).*does not read back.*write load_default=datetime\.datetime\(2020, 1, 1, 0, 0, "
        r"tzinfo=datetime\.timezone\.utc\)",
    ),
    (
        fields.DateTime(
            metadata={"avro": "timestamp-millis"},
            load_default=dt.datetime(2020, 1, 1, 0, 0, 0, 1500, tzinfo=UTC),
        ),
        r"write load_default=datetime\.datetime\(2020, 1, 1, 0, 0, 0, 1000, tzinfo=",
    ),
    (
        fields.Time(metadata={"avro": "time-millis"}, load_default=dt.time(1, 2, 3, 4)),
        r"write load_default=datetime\.time\(1, 2, 3\)",
    ),
    (fields.Time(load_default=dt.time(1, tzinfo=UTC)), r"no time zone.*a datetime\.time"),
    (fields.AwareDateTime(load_default=dt.datetime(2020, 1, 1)), r"aware datetime"),
    (fields.NaiveDateTime(load_default=dt.datetime(2020, 1, 1, tzinfo=UTC)), r"naive datetime"),
    (fields.Date(load_default="2020-01-01"), r"'x' \(Date\).*a datetime\.date"),
    (
        fields.Decimal(places=2, metadata={"precision": 10}, load_default=Decimal("0.005")),
        r"would be rounded.*a decimal\.Decimal",
    ),
    (
        fields.Decimal(places=2, metadata={"precision": 3}, load_default=Decimal("100")),
        r"Does not fit decimal\(3, 2\)",
    ),
    (
        fields.Decimal(places=2, load_default=Decimal("0.00")),
        r"no metadata precision: declare places=N and metadata=\{'precision': P\}",
    ),
    (fields.TimeDelta(load_default=dt.timedelta(days=999_999_999)), r"64-bit count of microseconds"),
    (
        fields.Raw(
            metadata={"avro": {"type": "long", "logicalType": "timestamp-millis"}},
            load_default=dt.datetime(2020, 1, 1, 0, 0, 0, 5, tzinfo=UTC),
        ),
        r"'x' \(Raw\).*write load_default=datetime\.datetime\(2020, 1, 1, 0, 0, tzinfo=",
    ),
    (fields.UUID(load_default="not a uuid"), r"Not a valid UUID.*a uuid\.UUID"),
    (fields.List(fields.Date(), load_default=["2020-01-01"]), r"'x\[\]' \(Date\)"),
    (fields.Nested(Line, load_default={"sku": "x"}), r"no value for 'at'"),
    # a Pluck's default is the dict its load returns, not the plucked value
    (
        fields.Pluck(Item, "s", load_default=Status.OLD),
        r"'x' \(Pluck\).*not what load returns.*write load_default=\{'s': <Status\.OLD: 'old'>\}",
    ),
    (
        fields.Pluck(Item, "d", load_default=dt.date(2001, 1, 1)),
        r"write load_default=\{'day': datetime\.date\(2001, 1, 1\)\}",
    ),
    (
        fields.Pluck(Item, "s", many=True, load_default=[Status.OLD]),
        r"write load_default=\[\{'s': <Status\.OLD: 'old'>\}\]",
    ),
    (fields.Pluck(Item, "s", many=True, load_default={"s": Status.OLD}), r"not a list \(many=True\)"),
    (
        fields.Pluck(Item, "s", load_default={"s": Status.OLD, "day": dt.date(2001, 1, 1)}),
        r"does not read back as itself.*write load_default=\{'s': <Status\.OLD: 'old'>\}",
    ),
    (
        fields.Pluck(Item, "s", load_default=types.SimpleNamespace(s=Status.OLD)),
        r"not what load returns.*write load_default=\{'s': <Status\.OLD: 'old'>\}",
    ),
    (fields.Pluck(Item, "d", load_default={"day": "2001-01-01"}), r"'x\.d' \(Date\).*a datetime\.date"),
    (fields.Pluck(Item, "s", dump_default=Status.NEW), r"no value for 's'.*give \{'s': <Status\.NEW"),
    (
        fields.Pluck(Item, "s", load_default={"s": Status.OLD}, dump_default=Status.NEW),
        r"no value for 's'.*give \{'s': <Status\.NEW",
    ),
    (
        fields.Dict(keys=fields.Enum(Status), values=fields.Integer(), load_default={"OLD": 1}),
        r"key 'OLD' is not a member of Status",
    ),
]


@pytest.mark.parametrize("field, message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_a_default_that_cannot_be_written_says_what_to_write(field, message):
    schema = type("Bad", (CompiledSchema,), {"x": field})
    with pytest.raises(CompileError, match=message):
        schema().avro_schema()


def test_the_suggested_default_compiles():
    """The value an error suggests is one the field takes."""
    moment = dt.datetime(2020, 1, 1, 0, 0, 0, 1500, tzinfo=UTC)
    with pytest.raises(CompileError):
        type(
            "Bad",
            (CompiledSchema,),
            {"x": fields.DateTime(metadata={"avro": "timestamp-millis"}, load_default=moment)},
        )().avro_schema()
    fixed = type(
        "Good",
        (CompiledSchema,),
        {
            "x": fields.DateTime(
                metadata={"avro": "timestamp-millis"}, load_default=moment.replace(microsecond=1000)
            )
        },
    )
    assert field_type(fixed().avro_schema(), "x")["default"] == 1577836800001


class Stamps(CompiledSchema):
    when = fields.DateTime(required=True)
    span = fields.TimeDelta(required=True)


def test_the_suggested_default_is_what_load_compiled_returns():
    """The value a 'does not read back' error suggests is the one the compiled
    reader returns, spelled as it returns it (marshmallow 3 reads its own text
    form back with a '+0000' zone, the reader returns timezone.utc); equal
    to marshmallow's load of its dump of the value."""
    naive = dt.datetime(2020, 1, 1, 5, 6, 7, 8)
    field = fields.DateTime()
    loaded = Stamps().load_compiled(Stamps().dump_compiled({"when": naive, "span": dt.timedelta()}))
    assert loaded["when"].tzinfo is UTC
    assert loaded["when"] == field.deserialize(field.serialize("x", {"x": naive.replace(tzinfo=UTC)}))
    with pytest.raises(CompileError) as error:
        type("Bad", (CompiledSchema,), {"x": fields.DateTime(load_default=naive)})().avro_schema()
    assert str(error.value).endswith(f"write load_default={loaded['when']!r}")


def test_a_timedelta_default_keeps_its_microseconds_as_the_reader_does():
    """The compiled reader returns every microsecond of a TimeDelta (on
    marshmallow 3 as well, whose own dump keeps whole precision units): a
    default with microseconds reads back as itself, so it compiles."""
    span = dt.timedelta(days=-3, seconds=5, microseconds=7)
    data = Stamps().dump_compiled({"when": dt.datetime(2020, 1, 1, tzinfo=UTC), "span": span})
    assert Stamps().load_compiled(data)["span"] == span
    field = avro_default(fields.TimeDelta(load_default=span))
    assert field["default"] == span // dt.timedelta(microseconds=1)


# -- the conversion, on random values, against fastavro ---------------------


def avro_default(field: fields.Field):
    schema = type("One", (CompiledSchema,), {"x": field})().avro_schema()
    return field_type(schema, "x")


def fastavro_raw(avro_type, value):
    """The value as fastavro's logical writer writes it, read back raw, as JSON."""
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(avro_type), value)
    raw = fastavro.schemaless_reader(
        io.BytesIO(out.getvalue()), fastavro.parse_schema(without_logical_types(avro_type))
    )
    return raw.decode("latin-1") if isinstance(raw, bytes) else raw


def fastavro_logical(avro_type, default):
    value = default.encode("latin-1") if avro_type["type"] in ("bytes", "fixed") else default
    reader = fastavro.read.LOGICAL_READERS[f"{avro_type['type']}-{avro_type['logicalType']}"]
    return reader(value, avro_type, avro_type)


aware = st.datetimes(
    min_value=dt.datetime(1, 1, 2),
    max_value=dt.datetime(9999, 12, 30),
    timezones=st.sampled_from(
        [UTC, dt.timezone(dt.timedelta(hours=5, minutes=30)), dt.timezone(dt.timedelta(hours=-11))]
    ),
)
LOGICAL_CASES = {
    "timestamp-micros": (lambda v: fields.DateTime(load_default=v), aware),
    "timestamp-millis": (
        lambda v: fields.DateTime(load_default=v, metadata={"avro": "timestamp-millis"}),
        aware.map(lambda v: v.replace(microsecond=v.microsecond // 1000 * 1000)),
    ),
    "aware": (lambda v: fields.AwareDateTime(load_default=v), aware),
    "local-timestamp-micros": (lambda v: fields.NaiveDateTime(load_default=v), st.datetimes()),
    "date": (lambda v: fields.Date(load_default=v), st.dates()),
    "time-micros": (lambda v: fields.Time(load_default=v), st.times()),
    "time-millis": (
        lambda v: fields.Time(load_default=v, metadata={"avro": "time-millis"}),
        st.times().map(lambda v: v.replace(microsecond=v.microsecond // 1000 * 1000)),
    ),
    "decimal": (
        lambda v: fields.Decimal(places=3, metadata={"precision": 12}, load_default=v),
        st.integers(-(10**12) + 1, 10**12 - 1).map(lambda n: Decimal(n).scaleb(-3)),
    ),
    "uuid": (lambda v: fields.UUID(load_default=v), st.uuids()),
}


@pytest.mark.parametrize("case", sorted(LOGICAL_CASES))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_typed_default_is_fastavros_value_of_it(case, data):
    make, values = LOGICAL_CASES[case]
    value = data.draw(values)
    avro_field = avro_default(make(value))
    avro_type = avro_field["type"]
    assert avro_field["default"] == fastavro_raw(avro_type, value)
    assert fastavro_logical(avro_type, avro_field["default"]) == value


@settings(max_examples=60, deadline=None)
@given(
    st.timedeltas(
        min_value=dt.timedelta(microseconds=-(2**63)), max_value=dt.timedelta(microseconds=2**63 - 1)
    ),
    st.booleans(),
)
def test_timedelta_and_enum_defaults(span, by_value):
    assert avro_default(fields.TimeDelta(load_default=span))["default"] == (
        span // dt.timedelta(microseconds=1)
    )
    member = Status.OLD if by_value else Status.NEW
    default = avro_default(fields.Enum(Status, by_value=by_value, load_default=member))["default"]
    assert default == (member.value if by_value else member.name)


def test_a_nested_default_goes_through_the_nested_schemas_pre_dump():
    """The writer runs a nested schema's pre_dump on the value; so does the
    conversion of a default (here it fills in the date the default lacks)."""
    from marshmallow import pre_dump

    class Stamped(Schema):
        day = fields.Date(required=True)

        @pre_dump
        def stamp(self, data, **kwargs):
            return {"day": dt.date(2000, 1, 2), **data}

    schema = type("Holder", (CompiledSchema,), {"x": fields.Nested(Stamped, load_default={})})
    assert field_type(schema().avro_schema(), "x")["default"] == {"day": 10958}


@settings(max_examples=60, deadline=None)
@given(st.dates(), st.sampled_from(Status))
def test_a_plucks_default_is_the_plucked_fields_own(day, member):
    """A Pluck's default goes through the plucked field's conversion."""
    assert (
        avro_default(fields.Pluck(Item, "d", load_default={"day": day}))["default"]
        == (avro_default(fields.Date(load_default=day))["default"])
    )
    assert (
        avro_default(fields.Pluck(Item, "s", many=True, load_default=[{"s": member}] * 2))["default"]
        == [avro_default(fields.Enum(Status, load_default=member))["default"]] * 2
    )


# -- a Pluck's dump_default: dump takes the dict, or an object --------------

MOMENT = dt.datetime(2022, 2, 2, 2, 2, 2, 2, tzinfo=UTC)


class PluckDumps(CompiledSchema):
    class Meta:
        avro_name = "Shop"

    a = fields.Integer(required=True)
    only_dump = fields.Pluck(Item, "s", dump_default={"s": Status.NEW})
    as_object = fields.Pluck(Item, "d", dump_default=types.SimpleNamespace(day=dt.date(2022, 2, 2)))
    both = fields.Pluck(Item, "s", load_default={"s": Status.OLD}, dump_default={"s": Status.NEW})
    many_dump = fields.Pluck(Item, "at", many=True, dump_default=[{"at": MOMENT}])


def test_a_plucks_dump_default_is_written_as_marshmallows_dump_writes_it(old_data):
    schema = PluckDumps()
    dumped = schema.dump({"a": 1})
    assert set(dumped) == {"a", "only_dump", "as_object", "both", "many_dump"}
    # fastavro's logical writers take the date and datetime marshmallow dumped as text
    values = {
        **dumped,
        "as_object": dt.date.fromisoformat(dumped["as_object"]),
        "many_dump": [dt.datetime.fromisoformat(text) for text in dumped["many_dump"]],
    }
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema.avro_schema()), values)
    assert schema.dump_compiled({"a": 1}) == out.getvalue()
    # without the fields, load returns the load_default, else what marshmallow
    # loads from the dump_default as written
    expected = schema.load(dumped) | schema.load({"a": 1})
    assert expected["both"] == {"s": Status.OLD}
    assert schema.load_compiled(old_data, writer_schema=Old) == expected
