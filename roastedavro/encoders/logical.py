"""Encoders for Avro's logical types: dates and times, decimals, UUIDs.

Values of the exact Python type (datetime, date, time, timedelta, Decimal,
UUID) go straight to C-level conversions in the runtime; others are
converted as marshmallow would (the field's dump form, read back by the
field), so a date given to a DateTime field becomes midnight and a UUID
string becomes a UUID.
"""

from __future__ import annotations

import datetime
import decimal
import importlib.metadata
import math
import uuid

from marshmallow import fields

from roastedavro._support import (
    aware_datetime,
    coerce,
    decimal_bytes,
    decimal_from_bytes,
    naive_datetime,
    serialize_value,
    utc_datetime,
)
from roastedavro.errors import DumpError
from roastedavro.encoders.base import Encoder
from roastedavro.names import MAX_SIZE, NAME_RULE, is_name

# marshmallow 4's fields load their own Python values (a datetime for a
# DateTime); marshmallow 3's want the text form
LOADS_OBJECTS = int(importlib.metadata.version("marshmallow").split(".")[0]) >= 4

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1)
MICROSECOND = datetime.timedelta(microseconds=1)


def logical_name(override):
    """``"timestamp-millis"`` or ``{"type": "long", "logicalType": "timestamp-millis"}``."""
    if isinstance(override, dict):
        return override.get("logicalType")
    return override


class LogicalEncoder(Encoder):
    """A logical type over an Avro primitive, chosen by its logicalType name."""

    #: logicalType name -> the Avro primitive underneath
    primitives: dict[str, str] = {}

    def choose_avro_type(self, override):
        return super().choose_avro_type(logical_name(override))

    def avro_type(self, names):
        return {"type": self.primitives[self.avro], "logicalType": self.avro}

    def input_from_object(self, value):
        """marshmallow 3 wants text: the field's own dump form of the value."""
        return value if LOADS_OBJECTS else self.field._serialize(value, self.field.name, None)

    def read_object(self, raw):
        """The Python value the runtime's reader returns for ``raw``."""
        raise NotImplementedError

    def load_input(self, raw):
        return self.input_from_object(self.read_object(raw))

    def loaded_value(self, datum):
        # the compiled reader returns the runtime's object as it is (a
        # subclass's own _deserialize runs on it); marshmallow 3's text form
        # read back would be another spelling of it (a '+0000' time zone)
        if self.custom_deserialize:
            return super().loaded_value(datum)
        return self.read_object(datum)


class DateTimeEncoder(LogicalEncoder):
    """DateTime: naive values are taken as UTC; loads aware UTC datetimes."""

    field_class = fields.DateTime
    avro_types = ("timestamp-micros", "timestamp-millis")
    primitives = {
        "timestamp-micros": "long",
        "timestamp-millis": "long",
        "local-timestamp-micros": "long",
        "local-timestamp-millis": "long",
    }
    kind = "TIMESTAMP_UTC"
    python_type = datetime.datetime

    @property
    def unit(self) -> int:
        return 1000 if self.avro.endswith("millis") else 1

    def emit_write(self, fn, value):
        self.emit_coerce(fn, value, "DATETIME")
        field = fn.bind(self.field, "field")
        fn.line(f"write_timestamp_value(w, {value}, {field}, obj, {self.kind}, {self.unit})")

    def emit_read(self, fn, target):
        aware = "False" if self.kind == "TIMESTAMP_LOCAL" else "True"
        fn.line(f"{target} = read_timestamp(r, {self.unit}, {aware})")
        self.emit_deserialize(fn, target)

    def read_object(self, raw):
        value = EPOCH + datetime.timedelta(microseconds=raw * self.unit)
        if self.kind != "TIMESTAMP_LOCAL":
            value = value.replace(tzinfo=UTC)
        return value

    def dump_datum(self, dumped):
        # the same normalisation as the runtime's write_timestamp_value
        moment = self.object_from_dump(dumped, datetime.datetime)
        if self.kind == "TIMESTAMP_LOCAL":
            if moment.tzinfo is not None:
                moment = naive_datetime(self.field, moment)
        elif moment.tzinfo is None:
            if self.kind == "TIMESTAMP_AWARE":
                moment = aware_datetime(self.field, moment)
        else:
            moment = utc_datetime(moment)
        return (moment.replace(tzinfo=None) - EPOCH) // MICROSECOND // self.unit


class AwareDateTimeEncoder(DateTimeEncoder):
    """AwareDateTime: a naive value is an error unless the field has a default_timezone."""

    field_class = fields.AwareDateTime
    kind = "TIMESTAMP_AWARE"


class NaiveDateTimeEncoder(DateTimeEncoder):
    """NaiveDateTime: wall-clock time, Avro's local-timestamp; loads naive datetimes."""

    field_class = fields.NaiveDateTime
    avro_types = ("local-timestamp-micros", "local-timestamp-millis")
    kind = "TIMESTAMP_LOCAL"


class DateEncoder(LogicalEncoder):
    field_class = fields.Date
    avro_types = ("date",)
    primitives = {"date": "int"}
    python_type = datetime.date

    def emit_write(self, fn, value):
        self.emit_coerce(fn, value, "DATE")
        fn.line(f"write_date_value(w, {value}, {fn.bind(self.field, 'field')}, obj)")

    def emit_read(self, fn, target):
        fn.line(f"{target} = read_date(r)")
        self.emit_deserialize(fn, target)

    def read_object(self, raw):
        return EPOCH.date() + datetime.timedelta(days=raw)

    def dump_datum(self, dumped):
        return (self.object_from_dump(dumped, datetime.date) - EPOCH.date()).days


class TimeEncoder(LogicalEncoder):
    field_class = fields.Time
    avro_types = ("time-micros", "time-millis")
    primitives = {"time-micros": "long", "time-millis": "int"}
    python_type = datetime.time

    @property
    def unit(self) -> int:
        return 1000 if self.avro == "time-millis" else 1

    def emit_write(self, fn, value):
        self.emit_coerce(fn, value, "TIME")
        fn.line(f"write_time_value(w, {value}, {fn.bind(self.field, 'field')}, obj, {self.unit})")

    def emit_read(self, fn, target):
        fn.line(f"{target} = read_time(r, {self.unit})")
        self.emit_deserialize(fn, target)

    def read_object(self, raw):
        return (EPOCH + datetime.timedelta(microseconds=raw * self.unit)).time()

    def dump_datum(self, dumped):
        if isinstance(dumped, str):
            # marshmallow 3 dumps an aware time as text with its offset and
            # reads that text back without it: the offset is looked for here
            try:
                spelled = datetime.time.fromisoformat(dumped)
            except ValueError:
                spelled = None
            if spelled is not None and spelled.tzinfo is not None:
                raise DumpError(f"Avro times have no time zone; got {spelled.isoformat()}.")
        time = self.object_from_dump(dumped, datetime.time)
        if time.tzinfo is not None:
            raise DumpError(f"Avro times have no time zone; got {time.isoformat()}.")
        since_midnight = datetime.datetime.combine(EPOCH, time) - EPOCH
        return since_midnight // MICROSECOND // self.unit


class TimeDeltaEncoder(Encoder):
    """TimeDelta as an Avro long of microseconds: loss-free for every timedelta
    within about 292,000 years (the range of a signed 64-bit count)."""

    field_class = fields.TimeDelta
    avro_types = ("long",)
    python_type = datetime.timedelta

    def emit_write(self, fn, value):
        self.emit_coerce(fn, value, "TIMEDELTA")
        fn.line(f"write_timedelta_value(w, {value}, {fn.bind(self.field, 'field')}, obj)")

    def emit_read(self, fn, target):
        fn.line(f"{target} = read_timedelta(r)")
        self.emit_deserialize(fn, target)

    def describe(self):
        return "long (timedelta in microseconds)"

    def load_input(self, raw):
        value = datetime.timedelta(microseconds=raw)
        # marshmallow 3 reads a number of `precision` units (lossy below it)
        return value if LOADS_OBJECTS else self.field._serialize(value, self.field.name, None)

    def loaded_value(self, datum):
        # the compiled reader returns every microsecond, on marshmallow 3 too
        if self.custom_deserialize:
            return super().loaded_value(datum)
        return datetime.timedelta(microseconds=datum)

    def dump_datum(self, dumped):
        micros = self.object_from_dump(dumped, datetime.timedelta) // MICROSECOND
        if not -(2**63) <= micros < 2**63:
            raise DumpError("Too long for a signed 64-bit count of microseconds.")
        return micros


class DecimalEncoder(Encoder):
    """Decimal as Avro's decimal on bytes (or on fixed, by a full override).

    scale is the field's ``places``; precision comes from
    ``metadata={"precision": N}`` or from the override.
    """

    field_class = fields.Decimal
    python_type = decimal.Decimal

    def choose_avro_type(self, override):
        field = self.field
        places = field.places
        scale = None if places is None else -places.as_tuple().exponent
        if isinstance(override, dict):
            avro = dict(override)
            if avro.get("logicalType") != "decimal" or avro.get("type") not in ("bytes", "fixed"):
                raise self.error("metadata avro must be a bytes or fixed decimal type")
            avro.setdefault("scale", scale if scale is not None else 0)
        elif override in (None, "decimal", "bytes"):
            precision = field.metadata.get("precision")
            if precision is None or scale is None:
                lacking = " and ".join(
                    name
                    for name, value in (("places", scale), ("metadata precision", precision))
                    if value is None
                )
                raise self.error(
                    f"an Avro decimal needs a scale and a precision, and this field has no {lacking}: "
                    "declare places=N and metadata={'precision': P} (P digits in all, N after the "
                    "point), or a full metadata={'avro': {...}} decimal type"
                )
            avro = {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale}
        else:
            raise self.error(f"metadata avro={override!r} is not a decimal type")
        precision, scale = avro.get("precision"), avro["scale"]
        # exactly ints (not bools, not strings): they become numbers in the code
        if not (
            type(precision) is int
            and 1 <= precision <= MAX_SIZE
            and type(scale) is int
            and 0 <= scale <= precision
        ):
            raise self.error(
                f"decimal precision {precision!r} and scale {scale!r} are not valid "
                "(need 0 <= scale <= precision, precision >= 1)"
            )
        if places is not None and scale != -places.as_tuple().exponent:
            raise self.error(f"the Avro scale {scale} differs from places={-places.as_tuple().exponent}")
        if avro["type"] == "fixed":
            size = avro.get("size")
            if type(size) is not int or not 1 <= size <= MAX_SIZE:
                raise self.error(f"a fixed decimal needs a positive integer size, not {size!r}")
            # digits of the largest value: exact for any realistic size, and
            # never a huge power of two for a hostile one
            most = (
                len(str(2 ** (8 * size - 1) - 1)) - 1
                if size <= 512
                else math.floor((8 * size - 1) * math.log10(2))
            )
            if precision > most:
                raise self.error(f"fixed({size}) holds at most {most} digits, not precision {precision}")
            if not is_name(avro.get("name")):
                raise self.error(
                    f"a fixed decimal type needs a valid name ({NAME_RULE}), not {avro.get('name')!r}"
                )
            self.full_name = self.visitor.claim_name(
                avro["name"], ("decimal", size, precision, scale), self.path
            )
        self.precision, self.scale = precision, scale
        self.size = avro.get("size", 0) if avro["type"] == "fixed" else 0
        return avro

    @property
    def min_size(self):
        return self.size or 1

    def avro_type(self, names):
        return names.named(self.avro) if self.size else self.avro

    def describe(self):
        kind = f"fixed({self.size})" if self.size else "bytes"
        return f"decimal({self.precision}, {self.scale}) on {kind}"

    def emit_write(self, fn, value):
        field = fn.bind(self.field, "field")
        if self.custom_serialize:
            fn.line(f"{value} = coerce({field}, {value}, obj, DECIMAL)")
        scale, precision, size = self._numbers(fn)
        fn.line(f"write_decimal_value(w, {value}, {field}, obj, {scale}, {precision}, {size})")

    def emit_read(self, fn, target):
        scale, precision, size = self._numbers(fn)
        fn.line(f"{target} = read_decimal(r, {scale}, {precision}, {size})")
        self.emit_deserialize(fn, target)

    def _numbers(self, fn):
        return (
            fn.int(self.scale, "decimal scale"),
            fn.int(self.precision, "decimal precision"),
            fn.int(self.size, "fixed size"),
        )

    def writer_value(self, value):
        # the writer takes ints, floats and strings as they are (decimal_bytes)
        return coerce(self.field, value, None, decimal.Decimal) if self.custom_serialize else value

    def load_input(self, raw):
        return decimal_from_bytes(raw, self.scale)

    def dump_datum(self, dumped):
        return decimal_bytes(self.field, dumped, None, self.scale, self.precision, self.size)


class UUIDEncoder(Encoder):
    """UUID as Avro's uuid on a string, or on fixed(16) with metadata={"avro": "fixed"}."""

    field_class = fields.UUID
    avro_types = ("uuid", "fixed")
    python_type = uuid.UUID

    def choose_avro_type(self, override):
        if isinstance(override, dict):
            if override.get("logicalType") != "uuid":
                raise self.error("metadata avro must be a uuid type")
            override = "fixed" if override.get("type") == "fixed" else "uuid"
        chosen = super().choose_avro_type(override)
        self.fixed = chosen == "fixed"
        self.visitor_namespace = self.visitor.current_namespace
        if self.fixed:
            self.visitor.claim_name("uuid_fixed", "uuid_fixed", self.path)
        return chosen

    @property
    def min_size(self):
        return 16 if self.fixed else 1

    def avro_type(self, names):
        if self.fixed:
            return names.named(
                {
                    "type": "fixed",
                    "name": "uuid_fixed",
                    "size": 16,
                    "logicalType": "uuid",
                    **({"namespace": self.visitor_namespace} if self.visitor_namespace else {}),
                }
            )
        return {"type": "string", "logicalType": "uuid"}

    def describe(self):
        return "uuid on fixed(16)" if self.fixed else "uuid on string"

    def emit_write(self, fn, value):
        self.emit_coerce(fn, value, "UUID")
        fixed = "True" if self.fixed else "False"
        fn.line(f"write_uuid_value(w, {value}, {fn.bind(self.field, 'field')}, obj, {fixed})")

    def emit_read(self, fn, target):
        fixed = "True" if self.fixed else "False"
        fn.line(f"{target} = read_uuid(r, {fixed})")
        self.emit_deserialize(fn, target)

    def load_input(self, raw):
        return str(uuid.UUID(bytes=raw)) if self.fixed else raw

    def dump_datum(self, dumped):
        value = self.object_from_dump(dumped, uuid.UUID)
        return value.bytes if self.fixed else str(value)


class TextEncoder(Encoder):
    """Fields that dump to text and load from it through their own
    conversions: IP addresses and interfaces. Written as Avro strings."""

    avro_types = ("string",)

    def writer_value(self, value):
        return serialize_value(self.field, value, None, str)

    def default_datum(self, value):
        datum = super().default_datum(value)
        # what the reader's deserialize_value gives back
        loaded = self.loaded_value(datum)
        if loaded != value:
            raise self.error(
                f"the default {value!r} does not read back as itself (it loads as "
                f"{loaded!r}); write load_default={loaded!r}"
            )
        return datum

    def emit_write(self, fn, value):
        field = fn.bind(self.field, "field")
        fn.line(f"{value} = convert({field}, {value}, obj, str)")
        fn.line(f"write_str_value(w, {value}, {field}, obj)")

    def emit_read(self, fn, target):
        field = fn.bind(self.field, "field")
        fn.line(f"{target} = read_str(r)")
        fn.line(f"{target} = deserialize_value({field}, {target})")
        fn.flag_invalid(target)


class IPEncoder(TextEncoder):
    field_class = fields.IP


class IPInterfaceEncoder(TextEncoder):
    field_class = fields.IPInterface
