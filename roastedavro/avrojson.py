"""Avro's JSON encoding (the specification's "JSON Encoding"), as Java's
JsonEncoder and JsonDecoder write and read it.

``AvroJSON(schema)`` is built once per schema; ``to_json_value(datum)`` gives
the datum as JSON values (dict, list, str, int, float, bool, None) for
``json.dumps``, ``from_json_value(value)`` reads ``json.loads`` output back.
Datums are AvroCodec's (fastavro's conventions: records as dicts, enums as
str, bytes and fixed as bytes, logical types as Python values).

The encoding, as Java 1.12's JsonEncoder writes it (GenericDatumWriter
without logical type conversions):

- a union's null as JSON null, any other branch as ``{"<branch>": value}``,
  the branch named by its full name for records, enums and fixed, by its type
  name otherwise (``"string"``, ``"array"``, ``"long"`` for a timestamp). The
  branch a Python value is written as is the one AvroCodec writes it as (the
  same dispatch on exact types, then fastavro's validation:
  ``roastedavro._datum.UnionChooser``), so JSON and binary agree;
- bytes and fixed as strings of the code points U+0000..U+00FF, one per byte;
- float and double NaN and infinities as the strings ``"NaN"``,
  ``"Infinity"`` and ``"-Infinity"`` (as Java writes them; JSON has no such
  numbers; a NaN's sign and payload are lost, as in Java); a float as the
  shortest decimal that is the same 32-bit float;
- logical types as their underlying type's value: a decimal as the bytes of
  its two's complement unscaled value, a uuid as its string, a date as days,
  times and timestamps as ints of their unit, a duration as its 12 bytes;
- enums as their symbols, records as objects in field order, maps as
  objects, arrays as lists.

Straight between binary and JSON, without Python datums (what the command
line's ``tojson``, ``fromjson`` and ``cat`` use): ``binary_to_json_values(data,
count)`` writes each union's value under the branch the bytes hold, and
``json_value_to_binary(value)`` writes the branch the JSON names, so
``{"float": 1.5}`` stays a float and a record stays the record the bytes or
the JSON name, where the datum path chooses the branch again from the Python
value (the first record branch a dict fits, a float's first float-like
branch). A logical type's value is its underlying type's on this path, as
Java writes it; JSON read is checked as ``from_json_value`` checks it. With a
``reader_schema``, ``binary_to_json_values`` resolves the writer's bytes to
the reader's JSON values by ``roastedavro.avro.resolve``'s plan, a reader
union's value under the branch resolution chose, as Java's resolving reader
and JsonEncoder print it.

A value that cannot be written raises :class:`roastedavro.errors.DatumError`
naming its path, with AvroCodec's message for it. JSON that does not match
the schema raises :class:`JSONDecodeError` (a ValueError) naming its path.

Reading is as Java's JsonDecoder (``from_json`` refuses the bare ``NaN``,
``Infinity`` and ``-Infinity`` Python's json module would take: they are not
JSON), with these differences: a record field the
JSON object lacks takes the field's default (Java 1.12's JsonDecoder refuses
it; fastavro's json_reader takes the default; ``defaults=False`` refuses it
as Java does); a union object with more than one key, a byte string with a
code point above U+00FF and a string that is not valid Unicode (a lone
surrogate) are refused (Java reads the first key, and "?" for such
characters). As Java: keys the record does not have are ignored, a field may
be given by one of its aliases, an int or long may be written as a number
with a zero fraction (``1.0``), a float or double as any number or one of the
three strings above (``from_json`` reads numbers as Decimals, so a float is
rounded once from the decimal text, as Java rounds it). Values read are
AvroCodec's: a float rounded to 32 bits, a timestamp as an aware UTC datetime
(naive for local timestamps), and so on; a value outside what AvroCodec reads
(a date outside the years 1-9999, a time of day past midnight, a decimal with
more digits than its precision) is an error, as AvroCodec's DecodeError is.

Nesting is bounded by Python's recursion limit (a few hundred levels of
records), where AvroCodec's is ``CompileFlags.max_depth``: past it writing
raises DatumError and reading JSONDecodeError.
"""

from __future__ import annotations

import copy
import datetime
import decimal
import json
import math
import struct
import uuid
from typing import Any, Callable

from roastedavro._datum import (
    INT_RANGE, LONG_RANGE, UNIT_MICROS, UNIT_MILLIS, UNIT_NANOS, Duration, UnionChooser,
    _encode, _NotThisType, accepts, array_datum, big_decimal_bytes, big_decimal_value,
    boolean_datum, branch_name, bytes_datum, date_datum, datum_error, decimal_bytes,
    double_datum, duration_bytes, encode_long, enum_index, fixed_datum, long_datum, map_datum,
    map_key, missing_field, record_datum, shown, string_datum, timestamp_datum, uuid_bytes,
    uuid_text,
)
from roastedavro._support import decimal_from_bytes
from roastedavro.avro.resolve import (
    Container as _Container, EnumMap as _EnumMap, Promote as _Promote, ReaderUnion as _ReaderUnion,
    RecordRef as _RecordRef, Unreadable as _Unreadable, WriterUnion as _WriterUnion,
    resolve as _resolve,
)
from roastedavro.avro.parse import parse_schema
from roastedavro.avro.types import (
    Array, AvroType, Enum, Fixed, Map, Primitive, Record, Schema, Union,
)
from roastedavro.avroplan import _TYPE_TESTS, _UnionPlan
from roastedavro.errors import DatumError, DecodeError, DumpError, SchemaError

__all__ = ["AvroJSON", "JSONDecodeError", "to_json", "from_json"]

_MISSING = object()
_NO_DEFAULT = object()
_INT_LOW, _INT_HIGH = INT_RANGE
_LONG_LOW, _LONG_HIGH = LONG_RANGE
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_LOCAL_EPOCH = datetime.datetime(1970, 1, 1)
_DATE_EPOCH = datetime.date(1970, 1, 1)
_MICROS_PER_DAY = 86_400_000_000
# datetime's years 1-9999 in days from 1970-01-01 (as the binary reader checks them)
_FIRST_DAY, _LAST_DAY = -719162, 2932896
_TIMESTAMPS = {
    "timestamp-millis": (UNIT_MILLIS, False), "timestamp-micros": (UNIT_MICROS, False),
    "timestamp-nanos": (UNIT_NANOS, False), "local-timestamp-millis": (UNIT_MILLIS, True),
    "local-timestamp-micros": (UNIT_MICROS, True), "local-timestamp-nanos": (UNIT_NANOS, True),
}
#: the exact Python type of each of the generated union dispatch's tests
_PYTHON_TYPES = {
    "None": type(None), "str": str, "int": int, "float": float, "dict": dict, "list": list,
    "bool": bool, "bytes": bytes, "datetime": datetime.datetime, "date": datetime.date,
    "time": datetime.time, "Decimal": decimal.Decimal, "UUID": uuid.UUID, "Duration": Duration,
}
_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_FLOAT32 = struct.Struct("<f")
_UINT32 = struct.Struct("<I")
_FLT_MAX = 3.4028234663852886e38
# halfway between the largest float and 2**128: above it a float is infinite
_FLT_OVERFLOW_MIDPOINT = 2.0**128 - 2.0**103


class JSONDecodeError(ValueError):
    """JSON that is not a value of the schema in Avro's JSON encoding (or not
    JSON at all). ``path`` names the field, index or key, outermost first, as
    :class:`roastedavro.errors.DatumError`'s does; ``reason`` is the message
    without it."""

    def __init__(self, message: str, path: tuple = ()):
        where = _path_text(tuple(path))
        super().__init__(f"{where}: {message}" if where else message)
        self.reason = message
        self.path = tuple(path)

    def __reduce__(self):
        return (type(self), (self.reason, self.path))


def _path_text(path: tuple) -> str:
    shown_parts = DatumError.SHOWN_PARTS

    def text(parts):
        return "".join(f"[{part!r}]" if not isinstance(part, str) else f".{part}"
                       for part in parts)
    if len(path) > shown_parts:
        half = shown_parts // 2
        return (text(path[:half]) + f" ...({len(path) - 2 * half} more)... "
                + text(path[-half:])).lstrip(".")
    return text(path).lstrip(".")


class _Mismatch(Exception):
    """Internal: JSON that does not match; ``path`` innermost first."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
        self.path: list = []


def _parsed(schema: Any) -> Schema:
    return schema if isinstance(schema, Schema) else parse_schema(schema)


class AvroJSON:
    """Avro's JSON encoding of one schema's datums.

    ``schema`` is a parsed :class:`~roastedavro.avro.Schema`, or a dict, list
    or JSON text for ``roastedavro.avro.parse_schema``. With a
    ``reader_schema``, JSON written with ``schema`` is read as the reader's
    datum (schema resolution, through AvroCodec: the JSON is read as
    ``schema``'s datum, written as binary and read back with the reader's
    schema; both codecs are compiled on first use). ``to_json_value`` always
    writes ``schema``'s datums. ``defaults=False`` refuses a record field
    missing from the JSON even where it has a default, as Java's JsonDecoder.
    ``narrow_floats=False`` reads a ``float`` as the double its JSON number
    gives, as fastavro does, rather than rounded to 32 bits as Java does.
    """

    def __init__(self, schema: Any, *, reader_schema: Any = None, defaults: bool = True,
                 narrow_floats: bool = True):
        self.schema: Schema = _parsed(schema)
        self.reader_schema: Schema | None = (_parsed(reader_schema) if reader_schema is not None
                                             else None)
        self.defaults = defaults
        self.narrow_floats = narrow_floats
        # each built on first use: the binary-JSON paths need neither (nor the
        # defaults, which a container file's schema does not check)
        self._write: Callable | None = None
        self._write_bare: Callable | None = None  # union_type=False
        self._read: Callable | None = None
        self._codecs: tuple | None = None
        self._from_binary: Callable | None = None   # built on first use
        self._resolved_from_binary: Callable | None = None
        self._budget = [0]   # items the binary readers may still read, shared by them
        #: what was left of the item budget after the last binary_to_json_values call
        self.items_left: int | None = None
        self._to_binary: Callable | None = None

    # -- writing -----------------------------------------------------------------

    def to_json_value(self, datum: Any, *, union_type: bool = True) -> Any:
        """``datum`` as JSON values in Avro's JSON encoding (``json.dumps`` writes
        them). ``union_type=False`` writes a union's value without the
        ``{"<branch>": ...}`` object around it (as fastavro's
        ``write_union_type=False``; such JSON cannot be read back in general).

        Raises :class:`~roastedavro.errors.DatumError` naming the path of a
        value that cannot be written."""
        if union_type:
            write = self._write
            if write is None:
                write = self._write = _Writers(self.schema, True).of(self.schema.root)
        else:
            write = self._write_bare
            if write is None:
                write = self._write_bare = _Writers(self.schema, False).of(self.schema.root)
        try:
            return write(datum)
        except DumpError as error:
            raise datum_error(error) from None
        except RecursionError:
            raise DatumError(f"the {type(datum).__name__} is nested too deeply for Python's "
                             "recursion limit, or contains itself") from None

    def to_json(self, datum: Any, *, union_type: bool = True, **dumps_options: Any) -> str:
        """``datum`` as JSON text: compact, as Java writes it, unless
        ``dumps_options`` (for ``json.dumps``) say otherwise."""
        dumps_options.setdefault("separators", (",", ":"))
        dumps_options.setdefault("ensure_ascii", False)
        return json.dumps(self.to_json_value(datum, union_type=union_type), **dumps_options)

    # -- reading -----------------------------------------------------------------

    def from_json_value(self, value: Any) -> Any:
        """The datum of JSON values (``json.loads`` output) in Avro's JSON
        encoding; the reader schema's datum if the codec has one. Numbers
        may be Decimals (``json.loads(text, parse_float=Decimal)``, as
        ``from_json`` reads them): a float is then rounded once from the
        decimal, as Java does, where a Python float was rounded to a double
        first. Raises
        :class:`JSONDecodeError` naming the path where the JSON does not match."""
        read = self._read
        if read is None:
            read = self._read = _Readers(self.schema, self.defaults,
                                         self.narrow_floats).of(self.schema.root)
        try:
            datum = read(value)
        except _Mismatch as error:
            raise JSONDecodeError(error.message, tuple(reversed(error.path))) from None
        except RecursionError:
            raise JSONDecodeError("the JSON is nested too deeply for Python's recursion "
                                  "limit") from None
        if self.reader_schema is None:
            return datum
        writer, reader = self._resolving_codecs()
        return reader.load(writer.dump(datum))

    def from_json(self, text: str | bytes) -> Any:
        """The datum of JSON text (one JSON value)."""
        try:
            value = json.loads(text, parse_float=decimal.Decimal, parse_constant=_not_json)
        except RecursionError:
            raise JSONDecodeError("the JSON is nested too deeply for Python's recursion "
                                  "limit") from None
        except ValueError as error:  # json.JSONDecodeError, too many digits, bad UTF-8
            raise JSONDecodeError(f"not valid JSON: {error}") from None
        return self.from_json_value(value)

    # -- straight between binary and JSON ------------------------------------------

    def binary_to_json_values(self, data: bytes, count: int = 1, *,
                              item_allowance: int | None = None) -> list:
        """``count`` datums of ``schema``, one after another in Avro binary (a
        container block's data), as JSON values, without Python datums between:
        a union's value under the branch the bytes hold, a logical type's
        value as its underlying type's (as Java's JsonEncoder writes them).
        With a ``reader_schema``, the reader's values (schema resolution, as
        Java's resolving reader reads them: a reader union's value under the
        branch resolution chose). Raises
        :class:`~roastedavro.errors.DecodeError` with the byte offset (also
        for bytes left over after the last datum), and
        :class:`~roastedavro.errors.SchemaResolutionError` if the reader's
        schema cannot read the writer's.

        The datums and the items of their arrays and maps are paid for from
        a budget of ``len(data) + item_allowance`` (``CompileFlags``'
        ``item_allowance``, 1,000,000, by default), as the compiled codecs
        pay for them: a few bytes announcing billions of nulls or empty
        records are a DecodeError, not billions of values. ``items_left``
        is what was left of it after the call (a container file's next
        block gets it as its ``item_allowance``)."""
        return self._walk_binary(data, count, False, item_allowance)

    def binary_record_ends(self, data: bytes, count: int, *,
                           item_allowance: int | None = None) -> list[int]:
        """Where each of ``count`` datums in ``data`` ends (as
        ``binary_to_json_values`` reads them, checking them the same way)."""
        return self._walk_binary(data, count, True, item_allowance)

    def _walk_binary(self, data: bytes, count: int, ends: bool,
                     item_allowance: int | None) -> list:
        from roastedavro.flags import CompileFlags

        whole = item_allowance is None
        if whole:
            item_allowance = CompileFlags.item_allowance
        budget = self._budget
        budget[0] = len(data) + item_allowance - count
        if budget[0] < 0:
            self.items_left = 0
            # a file's later blocks get what the earlier ones left: say both
            left = ("the item allowance" if whole else
                    f"what is left of the item allowance of {CompileFlags.item_allowance} "
                    f"(CompileFlags.item_allowance) after the earlier blocks")
            raise DecodeError(f"item budget exceeded: {count} datums in {len(data)} bytes, "
                              f"more than their length plus {left} ({item_allowance})", 0)
        if self.reader_schema is not None and not ends:
            read = self._resolved_from_binary
            if read is None:
                resolution = _resolve(self.schema, self.reader_schema)
                resolution.check()   # SchemaResolutionError, as AvroCodec's
                read = self._resolved_from_binary = _ResolvedBinaryToJSON(
                    resolution, budget).of(resolution.root)
        else:
            read = self._from_binary
            if read is None:
                read = self._from_binary = _BinaryToJSON(self.schema, budget).of(
                    self.schema.root)
        out: list = []
        position = 0
        try:
            for _ in range(count):
                value, position = read(data, position)
                out.append(position if ends else value)
        except _BadBinary as error:
            self.items_left = max(0, budget[0])
            raise DecodeError(f"datum {len(out)}: {error.message}", error.position) from None
        except RecursionError:
            self.items_left = max(0, budget[0])
            raise DecodeError(f"datum {len(out)}: nested too deeply for Python's recursion "
                              "limit", position) from None
        self.items_left = budget[0]
        if position != len(data):
            raise DecodeError(f"{len(data) - position} bytes left over after {count} datums",
                              position)
        return out

    def json_value_to_binary(self, value: Any) -> bytes:
        """JSON values (``json.loads`` output) in Avro's JSON encoding as the
        Avro binary of ``schema``'s datum, without a Python datum between: a
        union's value in the branch the JSON names (``{"float": 1.5}`` is a
        float, never a double). Raises :class:`JSONDecodeError` naming the
        path where the JSON does not match."""
        write = self._to_binary
        if write is None:
            write = self._to_binary = _JSONToBinary(self.schema, self.defaults).of(
                self.schema.root)
        out = bytearray()
        try:
            write(value, out)
        except _Mismatch as error:
            raise JSONDecodeError(error.message, tuple(reversed(error.path))) from None
        except RecursionError:
            raise JSONDecodeError("the JSON is nested too deeply for Python's recursion "
                                  "limit") from None
        return bytes(out)

    def _resolving_codecs(self) -> tuple:
        if self._codecs is None:
            from roastedavro.codec import AvroCodec

            self._codecs = (AvroCodec(self.schema),
                            AvroCodec(self.reader_schema, writer_schema=self.schema))
        return self._codecs

    def __repr__(self) -> str:
        if self.reader_schema is not None:
            return f"AvroJSON({self.schema!r}, reader_schema={self.reader_schema!r})"
        return f"AvroJSON({self.schema!r})"


def _not_json(name: str) -> Any:
    """``json.loads``' ``parse_constant``: NaN, Infinity and -Infinity are not JSON
    (Avro's JSON encoding writes them as the strings "NaN", "Infinity", "-Infinity")."""
    raise ValueError(f"{name} is not JSON (a float or double's {name} is the string "
                     f"\"{name}\")")


def to_json(schema: Any, datum: Any, **dumps_options: Any) -> str:
    """``datum`` of ``schema`` as Avro JSON text (``AvroJSON(schema).to_json``)."""
    return AvroJSON(schema).to_json(datum, **dumps_options)


def from_json(schema: Any, text: str | bytes, reader_schema: Any = None) -> Any:
    """The datum of Avro JSON text written with ``schema`` (``AvroJSON(schema,
    reader_schema=...).from_json``)."""
    return AvroJSON(schema, reader_schema=reader_schema).from_json(text)


# -- numbers ---------------------------------------------------------------------------


def _float32(number: float) -> float:
    """A double rounded to the nearest 32-bit float (infinite past its range, as C and Java)."""
    try:
        return _FLOAT32.unpack(_FLOAT32.pack(number))[0]
    except OverflowError:
        return math.copysign(math.inf, number)


def _float32_neighbour(number: float, toward: float) -> float:
    """The 32-bit float next to the (finite, 32-bit) ``number`` in the direction of ``toward``."""
    bits = _UINT32.unpack(_FLOAT32.pack(number))[0]
    if number == 0:
        bits = 0x80000001 if toward < 0 else 1
    elif (toward > number) == (number > 0):
        bits += 1
    else:
        bits -= 1
    return _FLOAT32.unpack(_UINT32.pack(bits))[0]


def _decimal_float32(value: decimal.Decimal) -> float:
    """A JSON number's text (as a Decimal) rounded once to the nearest 32-bit
    float, as Java parses a float: rounding to a double first would round a
    number just off the midpoint of two floats to the midpoint, then to even."""
    number = float(value)  # correctly rounded
    if not math.isfinite(number):
        return number
    narrowed = _float32(number)
    if narrowed == number:
        return narrowed
    if math.isinf(narrowed):
        other = math.copysign(_FLT_MAX, number)
        midpoint = math.copysign(_FLT_OVERFLOW_MIDPOINT, number)
    else:
        other = _float32_neighbour(narrowed, number)
        midpoint = (narrowed + other) / 2  # exact in a double
    if number != midpoint:
        return narrowed
    exact = decimal.Decimal(number)
    if value == exact:
        return narrowed  # a true tie: to even
    return other if (value > exact) == (other > narrowed) else narrowed


def _double_json(number: float) -> Any:
    if math.isfinite(number):
        return number
    return "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")


def _float_json(number: float) -> Any:
    """A 32-bit float as the shortest decimal that reads back as the same float
    (rounded from the decimal once, as Java reads it, or through a double)."""
    if not math.isfinite(number):
        return _double_json(number)
    for digits in range(1, 10):
        text = f"{number:.{digits}g}"
        shortest = float(text)
        if _float32(shortest) == number and _decimal_float32(decimal.Decimal(text)) == number:
            return shortest
    return number


def _double_datum(value: Any, lenient: bool) -> float:
    """What the binary writer takes for a float or double (``write_double_datum_slow``)."""
    if type(value) is int:
        try:
            return float(value)
        except OverflowError:
            pass
    return double_datum(value, lenient)


def _json_number(value: Any, what: str) -> float:
    """A float or double read from JSON: a number or one of the three strings."""
    kind = type(value)
    if kind is float:
        return value
    if kind is int:
        try:
            return float(value)
        except OverflowError:
            return math.copysign(math.inf, value)
    if kind is decimal.Decimal:
        return float(value)  # correctly rounded, infinite past the range
    if kind is str:
        special = _SPECIAL_FLOATS.get(value)
        if special is not None:
            return special
    raise _Mismatch(f"expected a number for {what} (or \"NaN\", \"Infinity\", \"-Infinity\"), "
                    f"got {_json_kind(value)}")


def _json_kind(value: Any) -> str:
    """A JSON value for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return f"an object {shown(value)}"
    if isinstance(value, list):
        return f"an array {shown(value)}"
    if isinstance(value, str):
        return f"the string {shown(value)}"
    if isinstance(value, decimal.Decimal):
        return f"the number {shown(str(value))[1:-1]}"
    return f"the number {shown(value)}"


# -- writing ------------------------------------------------------------------------------


def _float_writer(lenient: bool, single: bool) -> Callable:
    if single:
        def write_float(value):
            number = value if type(value) is float else _double_datum(value, lenient)
            narrowed = _float32(number)
            if math.isinf(narrowed) and not math.isinf(number):
                raise DumpError("Number out of range for Avro float (32-bit IEEE 754).")
            return _float_json(narrowed)
        return write_float

    def write_double(value):
        return _double_json(value if type(value) is float else _double_datum(value, lenient))
    return write_double


def _write_null(value):
    if value is not None:
        raise DumpError("expected None for an Avro null")
    return None


def _write_boolean(value):
    if value is True or value is False:
        return value
    return boolean_datum(value)


def _write_int(value):
    if type(value) is int and _INT_LOW <= value <= _INT_HIGH:
        return value
    return long_datum(value, 32)


def _write_long(value):
    if type(value) is int and _LONG_LOW <= value <= _LONG_HIGH:
        return value
    return long_datum(value, 64)


def _utf8(value: str) -> str:
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            raise DumpError(f"Not a valid UTF-8 string: {error.reason}.") from None
    return value


def _write_string(value):
    return _utf8(value if type(value) is str else string_datum(value))


def _write_bytes(value):
    return (value if type(value) is bytes else bytes_datum(value)).decode("latin-1")


def _time_writer(unit: int) -> Callable:
    bits = 32 if unit == UNIT_MILLIS else 64

    def write_time(value):
        # as the binary writer: a time (its tzinfo ignored), else an int
        if isinstance(value, datetime.time):
            micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 \
                + value.microsecond
            return micros // 1000 if unit == UNIT_MILLIS else micros
        return long_datum(value, bits)
    return write_time


class _Writers:
    """The function that writes each type's datums as JSON values."""

    def __init__(self, schema: Schema, wrap: bool):
        self.schema = schema
        self.wrap = wrap
        self.records: dict[str, Callable] = {}

    def of(self, avro: AvroType, lenient: bool = False) -> Callable:
        avro = self.schema.deref(avro)
        if isinstance(avro, Record):
            return self.record(avro)
        if isinstance(avro, Union):
            return self.union(avro)
        if isinstance(avro, Array):
            return self.array(avro)
        if isinstance(avro, Map):
            return self.map(avro)
        if isinstance(avro, Enum):
            return self.enum(avro)
        if isinstance(avro, Fixed):
            return self.fixed(avro)
        return self.primitive(avro, lenient)

    def primitive(self, avro: Primitive, lenient: bool) -> Callable:
        logical = avro.logical
        name = logical.name if logical is not None else None
        if name in _TIMESTAMPS:
            unit, local = _TIMESTAMPS[name]
            return lambda value: timestamp_datum(value, unit, local)
        if name == "date":
            return lambda value: value if type(value) is int and _INT_LOW <= value <= _INT_HIGH \
                else date_datum(value)
        if name in ("time-millis", "time-micros"):
            return _time_writer(UNIT_MILLIS if name == "time-millis" else UNIT_MICROS)
        if name == "decimal":
            scale, precision = logical.scale, logical.precision
            return lambda value: decimal_bytes(value, scale, precision, 0).decode("latin-1")
        if name == "big-decimal":
            return lambda value: big_decimal_bytes(value).decode("latin-1")
        if name == "uuid":
            return uuid_text
        kind = avro.name
        if kind in ("float", "double"):
            return _float_writer(lenient, kind == "float")
        return {"null": _write_null, "boolean": _write_boolean, "int": _write_int,
                "long": _write_long, "string": _write_string, "bytes": _write_bytes}[kind]

    def fixed(self, avro: Fixed) -> Callable:
        logical = avro.logical
        name = logical.name if logical is not None else None
        size = avro.size
        if name == "decimal":
            scale, precision = logical.scale, logical.precision
            return lambda value: decimal_bytes(value, scale, precision, size).decode("latin-1")
        if name == "uuid":
            return lambda value: uuid_bytes(value).decode("latin-1")
        if name == "duration":
            return lambda value: duration_bytes(value).decode("latin-1")

        def write_fixed(value):
            if type(value) is not bytes or len(value) != size:
                value = fixed_datum(value, size)
            return value.decode("latin-1")
        return write_fixed

    def enum(self, avro: Enum) -> Callable:
        symbols = avro.symbols
        indexes = {symbol: index for index, symbol in enumerate(symbols)}

        def write_enum(value):
            if type(value) is str and value in indexes:
                return value
            return symbols[enum_index(value, indexes)]
        return write_enum

    def array(self, avro: Array) -> Callable:
        write_item = self.of(avro.items)

        def write_array(value):
            if type(value) is not list:
                value = array_datum(value)
            out = []
            index = 0
            try:
                for index, item in enumerate(value):
                    out.append(write_item(item))
            except DumpError as error:
                error.path.append(index)
                raise
            return out
        return write_array

    def map(self, avro: Map) -> Callable:
        write_item = self.of(avro.values)

        def write_map(value):
            if type(value) is not dict:
                value = map_datum(value)
            out = {}
            for key, item in value.items():
                try:
                    if type(key) is not str:
                        map_key(key)
                        key = str.__str__(key)
                    out[_utf8(key)] = write_item(item)
                except DumpError as error:
                    error.path.append(key)
                    raise
            return out
        return write_map

    def record(self, avro: Record) -> Callable:
        known = self.records.get(avro.name)
        if known is not None:
            return known
        plan: list[tuple] = []

        def write_record(value):
            record = value if type(value) is dict else record_datum(value)
            out = {}
            for name, write, default, nullable in plan:
                item = record.get(name, _MISSING)
                try:
                    if item is _MISSING:
                        if default is not _NO_DEFAULT:
                            out[name] = (copy.deepcopy(default) if isinstance(default, (dict, list))
                                         else default)
                            continue
                        if not nullable:
                            raise missing_field()
                        item = None  # fastavro's rule: a union with null, missing, is null
                    out[name] = write(item)
                except DumpError as error:
                    error.path.append(name)
                    raise
            return out

        self.records[avro.name] = write_record  # before the fields: records may recurse
        for field in avro.fields:
            definition = self.schema.deref(field.type)
            lenient = (isinstance(definition, Primitive) and definition.name in ("float", "double")
                       and definition.logical is None)
            default = (default_json(field.type, field.default, self.schema, self.wrap,
                                    f"{avro.name}.{field.name}")
                       if field.has_default else _NO_DEFAULT)
            nullable = (isinstance(definition, Union) and any(
                isinstance(branch, Primitive) and branch.name == "null"
                for branch in definition.branches)) or (
                isinstance(definition, Primitive) and definition.name == "null")
            plan.append((field.name, self.of(field.type, lenient), default, nullable))
        return write_record

    def union(self, avro: Union) -> Callable:
        """The branch as AvroCodec chooses it (avrogen's write_union): by the
        value's exact type where that decides it, else fastavro's validation."""
        schema = self.schema
        plan = _UnionPlan(avro, schema)
        chooser = UnionChooser(avro, schema)
        choose = chooser.choose
        names = [branch_name(branch) for branch in avro.branches]
        writers = [None if isinstance(definition, Primitive) and definition.name == "null"
                   else self.of(branch)
                   for branch, definition in zip(avro.branches, plan.branches)]
        wrap = self.wrap
        static: dict[type, int] = {}
        by_size = None
        dict_branches = None
        for python_name in _TYPE_TESTS:
            python_type = _PYTHON_TYPES.get(python_name)
            if python_type is None:
                continue
            if python_name == "dict" and len(plan.dict_branches()) > 1:
                dict_branches = [(index, plan.branches[index],
                                  [field.name for field in plan.branches[index].fields]
                                  # an "error" is taken outright, as fastavro does
                                  if isinstance(plan.branches[index], Record)
                                  and plan.branches[index].kind == "record" else None)
                                 for index in plan.dict_branches()]
                continue
            if python_name == "int":
                sizes = plan.for_int()
                if any(index is not None for index in sizes):
                    by_size = sizes
                continue
            index = plan.static(python_name)
            if index is not None:
                static[python_type] = index

        def dict_branch(value):
            # fastavro's choice among records and maps: the record sharing most
            # field names with the dict, unless a map accepts it first
            branch, most = -1, -1
            for index, definition, field_names in dict_branches:
                if not accepts(value, definition, schema):
                    continue
                if field_names is None:
                    return index, value
                count = sum(1 for name in field_names if name in value)
                if count > most:
                    branch, most = index, count
            if branch < 0:
                return choose(value)
            return branch, value

        def write_union(value):
            kind = type(value)
            index = static.get(kind)
            if index is None:
                if kind is int and by_size is not None:
                    size = (0 if _INT_LOW <= value <= _INT_HIGH
                            else 1 if _LONG_LOW <= value <= _LONG_HIGH else 2)
                    index = by_size[size]
                    if index is None:
                        index, value = choose(value)
                elif kind is dict and dict_branches is not None:
                    index, value = dict_branch(value)
                else:
                    index, value = choose(value)
            write = writers[index]
            if write is None:
                return None
            if wrap:
                return {names[index]: write(value)}
            return write(value)
        return write_union


def default_json(avro: AvroType, value: Any, schema: Schema, wrap: bool = True,
                 where: str = "") -> Any:
    """A field default (schema JSON) in Avro's JSON encoding: a union's
    default in the first branch it fits (as the binary writer writes it),
    wrapped in its branch's name; a float as the 32-bit float it is."""
    try:
        return _default_json(avro, value, schema, wrap)
    except _NotThisType as error:
        raise SchemaError(f"the default {shown(value)} is not a valid value of its type "
                          f"({error})", where) from None


def _default_json(avro: AvroType, value: Any, schema: Schema, wrap: bool) -> Any:
    _encode(avro, value, schema)  # the binary writer's check: raises _NotThisType
    avro = schema.deref(avro)
    if isinstance(avro, Union):
        for branch in avro.branches:
            try:
                inner = _default_json(branch, value, schema, wrap)
            except _NotThisType:
                continue
            if isinstance(branch, Primitive) and branch.name == "null":
                return None
            return {branch_name(branch): inner} if wrap else inner
        raise _NotThisType("it fits no branch of the union")
    if isinstance(avro, Primitive):
        if avro.name == "float":
            return _float_json(_float32(float(value)))
        if avro.name == "double":
            return _double_json(float(value))
        return value
    if isinstance(avro, Array):
        return [_default_json(avro.items, item, schema, wrap) for item in value]
    if isinstance(avro, Map):
        return {key: _default_json(avro.values, item, schema, wrap) for key, item in value.items()}
    if isinstance(avro, Record):
        return {field.name: _default_json(field.type, value[field.name] if field.name in value
                                          else field.default, schema, wrap)
                for field in avro.fields}
    return value  # enum symbols, fixed as code points


# -- reading -------------------------------------------------------------------------------


def _read_null(value):
    if value is not None:
        raise _Mismatch(f"expected null, got {_json_kind(value)}")
    return None


def _read_boolean(value):
    if value is True or value is False:
        return value
    raise _Mismatch(f"expected true or false, got {_json_kind(value)}")


def _integer_reader(bits: int) -> Callable:
    low, high = INT_RANGE if bits == 32 else LONG_RANGE
    what = "an int" if bits == 32 else "a long"

    def read_integer(value):
        kind = type(value)
        if kind is int:
            if low <= value <= high:
                return value
        elif kind is float and value.is_integer():  # 1.0, 1e3: as Java
            if low <= value <= high:
                return int(value)
        elif (kind is decimal.Decimal and value.is_finite()
              and value == value.to_integral_value()):
            if low <= value <= high:
                return int(value)
        else:
            raise _Mismatch(f"expected {what}, got {_json_kind(value)}")
        raise _Mismatch(f"{shown(value)} is out of range for {what}")
    return read_integer


_read_int = _integer_reader(32)
_read_long = _integer_reader(64)


def _read_float(value):
    if type(value) is decimal.Decimal:
        return _decimal_float32(value)
    return _float32(_json_number(value, "a float"))


def _read_double(value):
    return _json_number(value, "a double")


def _read_float_wide(value):
    # a float as the double its JSON text gives (fastavro's JSON reader)
    return float(_json_number(value, "a float"))


def _read_string(value):
    if type(value) is not str:
        raise _Mismatch(f"expected a string, got {_json_kind(value)}")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            raise _Mismatch(f"not valid Unicode text: {error.reason} "
                            f"(at character {error.start})") from None
    return value


def _read_bytes(value):
    if type(value) is not str:
        raise _Mismatch(f"expected a string of bytes (code points U+0000..U+00FF), got "
                        f"{_json_kind(value)}")
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError as error:
        raise _Mismatch(f"a string of bytes has only code points U+0000..U+00FF, not "
                        f"U+{ord(value[error.start]):04X} (at character {error.start})") from None


def _timestamp_reader(unit: int, local: bool) -> Callable:
    if unit == UNIT_NANOS:
        return _read_long  # an int of nanoseconds, as AvroCodec reads it
    epoch = _LOCAL_EPOCH if local else _EPOCH
    per_micro = 1000 if unit == UNIT_MILLIS else 1

    def read_timestamp(value):
        number = _read_long(value)
        micros = number * per_micro
        if not _FIRST_DAY * _MICROS_PER_DAY <= micros < (_LAST_DAY + 1) * _MICROS_PER_DAY:
            raise _Mismatch(f"timestamp {number} is outside the years 1-9999")
        return epoch + datetime.timedelta(microseconds=micros)
    return read_timestamp


def _read_date(value):
    days = _read_int(value)
    if not _FIRST_DAY <= days <= _LAST_DAY:
        raise _Mismatch(f"date {days} is outside the years 1-9999")
    return _DATE_EPOCH + datetime.timedelta(days=days)


def _time_reader(unit: int) -> Callable:
    read = _read_int if unit == UNIT_MILLIS else _read_long
    per_micro = 1000 if unit == UNIT_MILLIS else 1

    def read_time(value):
        number = read(value)
        if not 0 <= number * per_micro < _MICROS_PER_DAY:
            raise _Mismatch(f"time of day {number} out of range")
        micros = number * per_micro
        seconds, micro = divmod(micros, 1_000_000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return datetime.time(hour, minute, second, micro)
    return read_time


def _decimal_reader(scale: int, precision: int, read: Callable, fixed: bool) -> Callable:
    # as the binary reader: bytes longer than the precision needs are refused
    # before any conversion
    longest = (int(precision * 3.3220) + 1 + 8) // 8

    def read_decimal(value):
        data = read(value)
        result = (None if not fixed and len(data) > longest
                  else decimal_from_bytes(data, scale, precision))
        if result is None:
            raise _Mismatch(f"decimal value has more digits than decimal({precision}, {scale}) "
                            "allows")
        return result
    return read_decimal


def _read_uuid(value):
    text = _read_string(value)
    try:
        return uuid.UUID(text)
    except ValueError:
        raise _Mismatch(f"not a valid UUID: {shown(text)}") from None


def _read_varint(data: bytes, position: int) -> tuple[int, int]:
    """An Avro long (zigzag varint) at ``position``: (value, position after it)."""
    result, shift = 0, 0
    while True:
        if position >= len(data) or shift > 63:
            raise _Mismatch("a big-decimal's bytes are not an Avro big-decimal")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return (result >> 1) ^ -(result & 1), position


def _read_big_decimal(value):
    # Java's encoding: the unscaled value as Avro bytes, then the scale as an Avro int
    data = _read_bytes(value)
    length, position = _read_varint(data, 0)
    if length <= 0 or position + length > len(data):
        raise _Mismatch("a big-decimal's bytes are not an Avro big-decimal")
    unscaled = data[position:position + length]
    scale, position = _read_varint(data, position + length)
    if position != len(data) or not _INT_LOW <= scale <= _INT_HIGH:
        raise _Mismatch("a big-decimal's bytes are not an Avro big-decimal")
    return big_decimal_value(unscaled, scale)


class _Readers:
    """The function that reads each type's JSON values as datums."""

    def __init__(self, schema: Schema, defaults: bool, narrow_floats: bool = True):
        self.schema = schema
        self.defaults = defaults
        self.narrow_floats = narrow_floats
        self.records: dict[str, Callable] = {}

    def of(self, avro: AvroType) -> Callable:
        avro = self.schema.deref(avro)
        if isinstance(avro, Record):
            return self.record(avro)
        if isinstance(avro, Union):
            return self.union(avro)
        if isinstance(avro, Array):
            return self.array(avro)
        if isinstance(avro, Map):
            return self.map(avro)
        if isinstance(avro, Enum):
            return self.enum(avro)
        if isinstance(avro, Fixed):
            return self.fixed(avro)
        return self.primitive(avro)

    def primitive(self, avro: Primitive) -> Callable:
        logical = avro.logical
        name = logical.name if logical is not None else None
        if name in _TIMESTAMPS:
            return _timestamp_reader(*_TIMESTAMPS[name])
        if name == "date":
            return _read_date
        if name in ("time-millis", "time-micros"):
            return _time_reader(UNIT_MILLIS if name == "time-millis" else UNIT_MICROS)
        if name == "decimal":
            return _decimal_reader(logical.scale, logical.precision, _read_bytes, False)
        if name == "big-decimal":
            return _read_big_decimal
        if name == "uuid":
            return _read_uuid
        return {"null": _read_null, "boolean": _read_boolean, "int": _read_int, "long": _read_long,
                "float": _read_float if self.narrow_floats else _read_float_wide,
                "double": _read_double,
                "string": _read_string, "bytes": _read_bytes}[avro.name]

    def fixed(self, avro: Fixed) -> Callable:
        size = avro.size
        full_name = avro.name

        def read_fixed(value):
            data = _read_bytes(value)
            if len(data) != size:
                raise _Mismatch(f"expected {size} bytes for the fixed {full_name}, "
                                f"got {len(data)}")
            return data

        logical = avro.logical
        name = logical.name if logical is not None else None
        if name == "decimal":
            return _decimal_reader(logical.scale, logical.precision, read_fixed, True)
        if name == "uuid":
            return lambda value: uuid.UUID(bytes=read_fixed(value))
        if name == "duration":
            return lambda value: Duration(*struct.unpack("<III", read_fixed(value)))
        return read_fixed

    def enum(self, avro: Enum) -> Callable:
        symbols = frozenset(avro.symbols)
        full_name = avro.name

        def read_enum(value):
            if type(value) is str and value in symbols:
                return value
            if type(value) is str:
                raise _Mismatch(f"{shown(value)} is not a symbol of the enum {full_name}")
            raise _Mismatch(f"expected a symbol of the enum {full_name}, got {_json_kind(value)}")
        return read_enum

    def array(self, avro: Array) -> Callable:
        read_item = self.of(avro.items)

        def read_array(value):
            if type(value) is not list:
                raise _Mismatch(f"expected an array, got {_json_kind(value)}")
            out = []
            index = 0
            try:
                for index, item in enumerate(value):
                    out.append(read_item(item))
            except _Mismatch as error:
                error.path.append(index)
                raise
            return out
        return read_array

    def map(self, avro: Map) -> Callable:
        read_item = self.of(avro.values)

        def read_map(value):
            if type(value) is not dict:
                raise _Mismatch(f"expected an object (a map), got {_json_kind(value)}")
            out = {}
            for key, item in value.items():
                try:
                    out[_read_string(key)] = read_item(item)
                except _Mismatch as error:
                    error.path.append(key)
                    raise
            return out
        return read_map

    def record(self, avro: Record) -> Callable:
        known = self.records.get(avro.name)
        if known is not None:
            return known
        plan: list[tuple] = []
        full_name = avro.name

        def read_record(value):
            if type(value) is not dict:
                raise _Mismatch(f"expected an object (a {full_name} record), got "
                                f"{_json_kind(value)}")
            out = {}
            for name, aliases, read, default in plan:
                item = value.get(name, _MISSING)
                if item is _MISSING:
                    for alias in aliases:
                        item = value.get(alias, _MISSING)
                        if item is not _MISSING:
                            break
                try:
                    if item is _MISSING:
                        if default is _NO_DEFAULT:
                            raise _Mismatch(f"missing field: no value and no default for {name}" if
                                            self.defaults else "missing field")
                        item = default
                    out[name] = read(item)
                except _Mismatch as error:
                    error.path.append(name)
                    raise
            return out

        self.records[avro.name] = read_record  # before the fields: records may recurse
        for field in avro.fields:
            if field.has_default and self.defaults:
                default = default_json(field.type, field.default, self.schema, True,
                                       f"{avro.name}.{field.name}")
            else:
                default = _NO_DEFAULT
            plan.append((field.name, field.aliases, self.of(field.type), default))
        return read_record

    def union(self, avro: Union) -> Callable:
        branches: dict[str, Callable | None] = {}
        for branch in avro.branches:
            definition = self.schema.deref(branch)
            if isinstance(definition, Primitive) and definition.name == "null":
                branches[branch_name(branch)] = None
            else:
                branches[branch_name(branch)] = self.of(branch)
        text = "[" + ", ".join(branches) + "]"
        has_null = "null" in branches

        def read_union(value):
            if value is None:
                if has_null:
                    return None
                raise _Mismatch(f"null is not a branch of the union {text}")
            if type(value) is dict and len(value) == 1:
                for name, inner in value.items():
                    if name not in branches:
                        raise _Mismatch(f"{shown(name)} is not a branch of the union {text}")
                    read = branches[name]
                    return _read_null(inner) if read is None else read(inner)
            raise _Mismatch(f"expected null or an object naming one branch of the union {text}, "
                            f"got {_json_kind(value)}")
        return read_union


# -- binary <-> JSON, without datums -------------------------------------------------------
#
# The command line's paths: a union's branch is the one the bytes hold (binary
# to JSON) or the one the JSON names (JSON to binary), never one chosen again
# from a Python value; a logical type's value is its underlying type's, as Java
# writes it.

_DOUBLE = struct.Struct("<d")


class _BadBinary(Exception):
    """Internal: bytes that are not the schema's encoding; ``position`` where found."""

    def __init__(self, message: str, position: int):
        super().__init__(message)
        self.message = message
        self.position = position


def _binary_long(data: bytes, position: int) -> tuple[int, int]:
    """A zigzag varint at ``position``: (value, position after it)."""
    start = position
    result = shift = 0
    while True:
        if position >= len(data):
            raise _BadBinary("the data ends inside a long", start)
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return (result >> 1) ^ -(result & 1), position
        shift += 7
        if shift > 63:
            raise _BadBinary("a long of more than 10 bytes", start)


def _min_size(avro: AvroType, schema: Schema, seen: frozenset = frozenset()) -> int:
    """The fewest bytes a value of the type takes."""
    avro = schema.deref(avro)
    if isinstance(avro, Primitive):
        return {"null": 0, "float": 4, "double": 8}.get(avro.name, 1)
    if isinstance(avro, Fixed):
        return avro.size
    if isinstance(avro, Record):
        if avro.name in seen:
            return 1   # a recursive record is reached through a union, array or map
        return sum(_min_size(field.type, schema, seen | {avro.name}) for field in avro.fields)
    return 1   # enum, array, map, union: at least one varint


class _BinaryToJSON:
    """For each type, ``read(data, position) -> (JSON value, position after it)``.
    ``budget[0]``: the array and map items that may still be read."""

    def __init__(self, schema: Schema, budget: list):
        self.schema = schema
        self.budget = budget
        self.records: dict[str, Callable] = {}

    def of(self, avro: AvroType) -> Callable:
        avro = self.schema.deref(avro)
        if isinstance(avro, Record):
            return self.record(avro)
        if isinstance(avro, Union):
            return self.union(avro)
        if isinstance(avro, (Array, Map)):
            return self.collection(avro)
        if isinstance(avro, Enum):
            return self.enum(avro)
        if isinstance(avro, Fixed):
            return self.fixed(avro)
        return self.primitive(avro)

    def primitive(self, avro: Primitive) -> Callable:
        kind = avro.name
        if kind == "null":
            return lambda data, position: (None, position)
        if kind == "boolean":
            def read_boolean(data, position):
                if position >= len(data):
                    raise _BadBinary("the data ends inside a boolean", position)
                byte = data[position]
                if byte > 1:
                    raise _BadBinary(f"a boolean byte {byte} (not 0 or 1)", position)
                return byte == 1, position + 1
            return read_boolean
        if kind == "int":
            def read_int(data, position):
                value, end = _binary_long(data, position)
                if not _INT_LOW <= value <= _INT_HIGH:
                    raise _BadBinary(f"{value} is out of range for an int", position)
                return value, end
            return read_int
        if kind == "long":
            return _binary_long
        if kind in ("float", "double"):
            unpack = (_FLOAT32 if kind == "float" else _DOUBLE).unpack_from
            size = 4 if kind == "float" else 8
            to_json = _float_json if kind == "float" else _double_json

            def read_number(data, position):
                if position + size > len(data):
                    raise _BadBinary(f"the data ends inside a {kind}", position)
                return to_json(unpack(data, position)[0]), position + size
            return read_number
        text = kind == "string"

        def read_bytes(data, position):
            length, start = _binary_long(data, position)
            if length < 0:
                raise _BadBinary(f"a negative length {length}", position)
            end = start + length
            if end > len(data):
                raise _BadBinary(f"a length of {length} bytes past the end of the data", position)
            if text:
                try:
                    return str(data[start:end], "utf-8"), end
                except UnicodeDecodeError as error:
                    raise _BadBinary(f"a string that is not valid UTF-8 ({error.reason})",
                                     start + error.start) from None
            return str(data[start:end], "latin-1"), end
        return read_bytes

    def fixed(self, avro: Fixed) -> Callable:
        size = avro.size

        def read_fixed(data, position):
            end = position + size
            if end > len(data):
                raise _BadBinary(f"the data ends inside a fixed of {size} bytes", position)
            return str(data[position:end], "latin-1"), end
        return read_fixed

    def enum(self, avro: Enum) -> Callable:
        symbols = avro.symbols
        count = len(symbols)

        def read_enum(data, position):
            index, end = _binary_long(data, position)
            if not 0 <= index < count:
                raise _BadBinary(f"enum index {index} is not one of {avro.name}'s {count} symbols",
                                 position)
            return symbols[index], end
        return read_enum

    def collection(self, avro: Array | Map) -> Callable:
        is_map = isinstance(avro, Map)
        read_item = self.of(avro.values if is_map else avro.items)
        read_key = self.primitive(Primitive("string"))
        smallest = _min_size(avro.values if is_map else avro.items, self.schema) + is_map
        budget = self.budget

        def read_collection(data, position):
            out: Any = {} if is_map else []
            while True:
                at = position
                count, position = _binary_long(data, position)
                if count == 0:
                    return out, position
                if count < 0:
                    count = -count
                    size, position = _binary_long(data, position)   # the block's size: unused
                if count * smallest > len(data) - position:
                    raise _BadBinary(f"a block of {count} items, more than the data holds", at)
                budget[0] -= count
                if budget[0] < 0:
                    raise _BadBinary(f"item budget exceeded: a block of {count} items, more than "
                                     "the data's length plus the item allowance", at)
                if is_map:
                    for _ in range(count):
                        key, position = read_key(data, position)
                        out[key], position = read_item(data, position)
                else:
                    for _ in range(count):
                        item, position = read_item(data, position)
                        out.append(item)
        return read_collection

    def record(self, avro: Record) -> Callable:
        known = self.records.get(avro.name)
        if known is not None:
            return known
        plan: list[tuple] = []

        def read_record(data, position):
            out = {}
            for name, read in plan:
                out[name], position = read(data, position)
            return out, position

        self.records[avro.name] = read_record   # before the fields: records may recurse
        for field in avro.fields:
            plan.append((field.name, self.of(field.type)))
        return read_record

    def union(self, avro: Union) -> Callable:
        branches = []
        for branch in avro.branches:
            definition = self.schema.deref(branch)
            if isinstance(definition, Primitive) and definition.name == "null":
                branches.append(None)
            else:
                branches.append((branch_name(branch), self.of(branch)))
        count = len(branches)

        def read_union(data, position):
            index, end = _binary_long(data, position)
            if not 0 <= index < count:
                raise _BadBinary(f"union branch {index} is not one of the union's {count}",
                                 position)
            branch = branches[index]
            if branch is None:
                return None, end
            value, end = branch[1](data, end)
            return {branch[0]: value}, end
        return read_union


class _JSONToBinary:
    """For each type, ``write(value, out: bytearray)``: JSON values (Avro's JSON
    encoding) appended to ``out`` as the type's binary encoding, a union's value
    as the branch the JSON names. Checked as ``from_json_value`` checks them."""

    def __init__(self, schema: Schema, defaults: bool):
        self.schema = schema
        self.defaults = defaults
        self.readers = _Readers(schema, defaults)
        self.records: dict[str, Callable] = {}

    def of(self, avro: AvroType) -> Callable:
        avro = self.schema.deref(avro)
        if isinstance(avro, Record):
            return self.record(avro)
        if isinstance(avro, Union):
            return self.union(avro)
        if isinstance(avro, (Array, Map)):
            return self.collection(avro)
        if isinstance(avro, Enum):
            return self.enum(avro)
        if isinstance(avro, Fixed):
            return self.fixed(avro)
        return self.primitive(avro)

    def primitive(self, avro: Primitive) -> Callable:
        kind = avro.name
        write = self._plain(kind)
        if avro.logical is None:
            return write
        check = self.readers.primitive(avro)   # a logical value's checks (ranges, precision)

        def write_logical(value, out):
            check(value)
            write(value, out)
        return write_logical

    @staticmethod
    def _plain(kind: str) -> Callable:
        if kind == "null":
            def write_null(value, out):
                _read_null(value)
            return write_null
        if kind == "boolean":
            def write_boolean(value, out):
                out.append(1 if _read_boolean(value) else 0)
            return write_boolean
        if kind in ("int", "long"):
            read = _read_int if kind == "int" else _read_long

            def write_integer(value, out):
                out += encode_long(read(value))
            return write_integer
        if kind == "float":
            def write_float(value, out):
                out += _FLOAT32.pack(_read_float(value))
            return write_float
        if kind == "double":
            def write_double(value, out):
                out += _DOUBLE.pack(_read_double(value))
            return write_double
        if kind == "string":
            def write_string(value, out):
                data = _read_string(value).encode("utf-8")
                out += encode_long(len(data))
                out += data
            return write_string

        def write_bytes(value, out):
            data = _read_bytes(value)
            out += encode_long(len(data))
            out += data
        return write_bytes

    def fixed(self, avro: Fixed) -> Callable:
        check = self.readers.fixed(avro)   # the size, and a logical value's checks

        def write_fixed(value, out):
            check(value)
            out += _read_bytes(value)
        return write_fixed

    def enum(self, avro: Enum) -> Callable:
        check = self.readers.enum(avro)
        indexes = {symbol: index for index, symbol in enumerate(avro.symbols)}

        def write_enum(value, out):
            out += encode_long(indexes[check(value)])
        return write_enum

    def collection(self, avro: Array | Map) -> Callable:
        is_map = isinstance(avro, Map)
        write_item = self.of(avro.values if is_map else avro.items)
        write_key = self._plain("string")

        def write_collection(value, out):
            if type(value) is not (dict if is_map else list):
                raise _Mismatch(f"expected {'an object (a map)' if is_map else 'an array'}, "
                                f"got {_json_kind(value)}")
            if value:
                out += encode_long(len(value))
                if is_map:
                    for key, item in value.items():
                        try:
                            write_key(key, out)
                            write_item(item, out)
                        except _Mismatch as error:
                            error.path.append(key)
                            raise
                else:
                    index = 0
                    try:
                        for index, item in enumerate(value):
                            write_item(item, out)
                    except _Mismatch as error:
                        error.path.append(index)
                        raise
            out.append(0)
        return write_collection

    def record(self, avro: Record) -> Callable:
        known = self.records.get(avro.name)
        if known is not None:
            return known
        plan: list[tuple] = []
        full_name = avro.name

        def write_record(value, out):
            if type(value) is not dict:
                raise _Mismatch(f"expected an object (a {full_name} record), got "
                                f"{_json_kind(value)}")
            for name, aliases, write, default in plan:
                item = value.get(name, _MISSING)
                if item is _MISSING:
                    for alias in aliases:
                        item = value.get(alias, _MISSING)
                        if item is not _MISSING:
                            break
                try:
                    if item is _MISSING:
                        if default is _NO_DEFAULT:
                            raise _Mismatch(f"missing field: no value and no default for {name}" if
                                            self.defaults else "missing field")
                        item = default
                    write(item, out)
                except _Mismatch as error:
                    error.path.append(name)
                    raise

        self.records[avro.name] = write_record   # before the fields: records may recurse
        for field in avro.fields:
            if field.has_default and self.defaults:
                default = default_json(field.type, field.default, self.schema, True,
                                       f"{avro.name}.{field.name}")
            else:
                default = _NO_DEFAULT
            plan.append((field.name, field.aliases, self.of(field.type), default))
        return write_record

    def union(self, avro: Union) -> Callable:
        branches: dict[str, tuple] = {}
        null_index = None
        for index, branch in enumerate(avro.branches):
            definition = self.schema.deref(branch)
            if isinstance(definition, Primitive) and definition.name == "null":
                null_index = index
                branches["null"] = (encode_long(index), _plain_null)
            else:
                branches[branch_name(branch)] = (encode_long(index), self.of(branch))
        text = "[" + ", ".join(branches) + "]"
        null_prefix = encode_long(null_index) if null_index is not None else None

        def write_union(value, out):
            if value is None:
                if null_prefix is None:
                    raise _Mismatch(f"null is not a branch of the union {text}")
                out += null_prefix
                return
            if type(value) is dict and len(value) == 1:
                for name, inner in value.items():
                    branch = branches.get(name)
                    if branch is None:
                        raise _Mismatch(f"{shown(name)} is not a branch of the union {text}")
                    out += branch[0]
                    branch[1](inner, out)
                    return
            raise _Mismatch(f"expected null or an object naming one branch of the union {text}, "
                            f"got {_json_kind(value)}")
        return write_union


def _plain_null(value, out):
    _read_null(value)


class _ResolvedBinaryToJSON:
    """For each node of a resolution plan (``roastedavro.avro.resolve``),
    ``read(data, position) -> (reader's JSON value, position after it)``:
    the writer's bytes read as the reader's value, a reader union's value
    under the branch resolution chose (as Java writes what its resolving
    reader read)."""

    def __init__(self, resolution: Any, budget: list):
        self.resolution = resolution
        self.writer = resolution.writer
        self.reader = resolution.reader
        self.budget = budget
        self.plain = _BinaryToJSON(resolution.writer, budget)   # the writer's values, as they are
        self.records: dict[tuple, Callable] = {}

    def of(self, plan: Any) -> Callable:
        if isinstance(plan, _RecordRef):
            return self.record(plan)
        if isinstance(plan, _WriterUnion):
            return self.writer_union(plan)
        if isinstance(plan, _ReaderUnion):
            return self.reader_union(plan)
        if isinstance(plan, _Container):
            return self.container(plan)
        if isinstance(plan, _EnumMap):
            return self.enum(plan)
        if isinstance(plan, _Promote):
            return self.promote(plan)
        if isinstance(plan, _Unreadable):
            reason = plan.reason

            def unreadable(data, position):
                raise _BadBinary(f"the reader's schema cannot read this value: {reason}",
                                 position)
            return unreadable
        return self.read(plan)

    def read(self, plan: Any) -> Callable:
        writer, reader = self.writer.deref(plan.writer), self.reader.deref(plan.reader)
        read = self.plain.of(writer)
        kinds = (getattr(writer, "name", None), getattr(reader, "name", None))
        if not isinstance(writer, Primitive) or kinds[0] == kinds[1] or kinds == ("int", "long"):
            return read
        if kinds == ("string", "bytes"):
            def string_as_bytes(data, position):
                value, end = read(data, position)
                return value.encode("utf-8").decode("latin-1"), end
            return string_as_bytes

        def bytes_as_string(data, position):   # ("bytes", "string")
            value, end = read(data, position)
            try:
                return value.encode("latin-1").decode("utf-8"), end
            except UnicodeDecodeError as error:
                raise _BadBinary(f"bytes read as a string are not valid UTF-8 ({error.reason})",
                                 position) from None
        return bytes_as_string

    def promote(self, plan: Any) -> Callable:
        source = self.writer.deref(plan.writer).name
        target = self.reader.deref(plan.reader).name
        if source == "float":   # to double: the 32-bit value itself, not its shortest decimal
            def float_as_double(data, position):
                if position + 4 > len(data):
                    raise _BadBinary("the data ends inside a float", position)
                return _double_json(_FLOAT32.unpack_from(data, position)[0]), position + 4
            return float_as_double
        read = self.plain.of(plan.writer)   # int or long
        if target == "float":
            def integer_as_float(data, position):
                value, end = read(data, position)
                return _float_json(_decimal_float32(decimal.Decimal(value))), end   # rounded once
            return integer_as_float

        def integer_as_double(data, position):
            value, end = read(data, position)
            return float(value), end
        return integer_as_double

    def enum(self, plan: Any) -> Callable:
        writer_symbols = self.writer.deref(plan.writer).symbols
        symbols = plan.symbols
        count = len(symbols)

        def read_enum(data, position):
            index, end = _binary_long(data, position)
            if not 0 <= index < count:
                raise _BadBinary(f"enum index {index} is not one of the writer's {count} symbols",
                                 position)
            symbol = symbols[index]
            if symbol is None:
                raise _BadBinary(f"the writer's symbol {writer_symbols[index]!r} is not the "
                                 "reader's, and the reader's enum has no default", position)
            return symbol, end
        return read_enum

    def container(self, plan: Any) -> Callable:
        writer = self.writer.deref(plan.writer)
        is_map = isinstance(writer, Map)
        element = writer.values if is_map else writer.items
        read_item = self.of(plan.element)
        read_key = self.plain.primitive(Primitive("string"))
        smallest = _min_size(element, self.writer) + is_map
        budget = self.budget

        def read_collection(data, position):
            out: Any = {} if is_map else []
            while True:
                at = position
                count, position = _binary_long(data, position)
                if count == 0:
                    return out, position
                if count < 0:
                    count = -count
                    _, position = _binary_long(data, position)
                if count * smallest > len(data) - position:
                    raise _BadBinary(f"a block of {count} items, more than the data holds", at)
                budget[0] -= count
                if budget[0] < 0:
                    raise _BadBinary(f"item budget exceeded: a block of {count} items, more than "
                                     "the data's length plus the item allowance", at)
                for _ in range(count):
                    if is_map:
                        key, position = read_key(data, position)
                        out[key], position = read_item(data, position)
                    else:
                        item, position = read_item(data, position)
                        out.append(item)
        return read_collection

    def record(self, ref: Any) -> Callable:
        known = self.records.get(ref.key)
        if known is not None:
            return known
        record = self.resolution.record(ref)
        reader = record.reader
        steps: list[tuple] = []
        defaults: list[tuple] = []
        order = [field.name for field in reader.fields]

        def read_record(data, position):
            values = {}
            for name, read in steps:
                value, position = read(data, position)
                if name is not None:
                    values[name] = value
            for name, value in defaults:
                values[name] = copy.deepcopy(value)
            return {name: values[name] for name in order}, position

        self.records[ref.key] = read_record   # before the fields: records may recurse
        if record.error is not None:
            reason = record.error.reason

            def unreadable(data, position):
                raise _BadBinary(f"the reader's schema cannot read this record: {reason}",
                                 position)
            self.records[ref.key] = unreadable
            return unreadable
        for step in record.steps:
            if step.reader is None:
                steps.append((None, self.plain.of(step.writer.type)))   # read past it
            else:
                steps.append((step.reader.name, self.of(step.plan)))
        for field in record.defaults:
            defaults.append((field.name, default_json(field.type, field.default, self.reader,
                                                      True, f"{reader.name}.{field.name}")))
        return read_record

    def writer_union(self, plan: Any) -> Callable:
        reader = self.reader.deref(plan.reader)
        branches = []
        for index, branch in enumerate(plan.branches):
            read = self.of(branch)
            name = None
            if isinstance(reader, Union) and not isinstance(
                    branch, (_ReaderUnion, _Unreadable)):
                # unions of the same branches map branch to branch
                target = reader.branches[index]
                definition = self.reader.deref(target)
                if not (isinstance(definition, Primitive) and definition.name == "null"):
                    name = branch_name(target)
            branches.append((name, read))
        count = len(branches)

        def read_union(data, position):
            index, end = _binary_long(data, position)
            if not 0 <= index < count:
                raise _BadBinary(f"union branch {index} is not one of the union's {count}",
                                 position)
            name, read = branches[index]
            value, end = read(data, end)
            return ({name: value} if name is not None else value), end
        return read_union

    def reader_union(self, plan: Any) -> Callable:
        target = self.reader.deref(plan.reader).branches[plan.index]
        definition = self.reader.deref(target)
        read = self.of(plan.plan)
        if isinstance(definition, Primitive) and definition.name == "null":
            return read
        name = branch_name(target)

        def read_branch(data, position):
            value, end = read(data, position)
            return {name: value}, end
        return read_branch
