"""fastavro's choice of a union's branch for a value (UnionChooser), and
its validation of a value against a type (Validator, accepts): what the
generated code, tier 0 and Avro JSON all follow, so that the same value
takes the same branch everywhere (see roastedavro._datum for the values'
conventions)."""

from __future__ import annotations

import array
import datetime
import decimal
import math
import numbers
import struct
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from roastedavro._datum import (
    INT_RANGE,
    LONG_RANGE,
    Duration,
    big_decimal_bytes,
    date_datum,
    decimal_bytes,
    describe,
    duration_bytes,
    refused,
    shown,
)
from roastedavro.avro.types import (
    Array,
    AvroType,
    Enum,
    Fixed,
    Map,
    NamedRef,
    Primitive,
    Record,
    Schema,
    Union,
)
from roastedavro.errors import DumpError

# fastavro's LOGICAL_WRITERS, keyed as fastavro keys them ("long-timestamp-millis")
_PREPARED = {
    ("long", "timestamp-millis"),
    ("long", "timestamp-micros"),
    ("long", "local-timestamp-millis"),
    ("long", "local-timestamp-micros"),
    ("int", "date"),
    ("bytes", "decimal"),
    ("fixed", "decimal"),
    ("string", "uuid"),
    ("int", "time-millis"),
    ("long", "time-micros"),
}


_TIMESTAMPS_READ = (
    "timestamp-millis",
    "timestamp-micros",
    "local-timestamp-millis",
    "local-timestamp-micros",
)


def reads_as(avro: AvroType) -> str | None:
    """The Python type AvroCodec reads a (dereferenced) branch's values as, by
    the names ``avrogen._TYPE_TESTS`` uses ("int", "datetime", "Decimal"...)."""
    logical = getattr(avro, "logical", None)
    name = logical.name if logical is not None else None
    if isinstance(avro, Primitive):
        kind = avro.name
        if kind == "null":
            return "None"
        if kind == "boolean":
            return "bool"
        if kind == "int":
            # a name of None too
            return {"date": "date", "time-millis": "time"}.get(name, "int")  # type: ignore[arg-type]
        if kind == "long":
            if name in _TIMESTAMPS_READ:
                return "datetime"
            return "time" if name == "time-micros" else "int"  # nanos: ints
        if kind in ("float", "double"):
            return "float"
        if kind == "bytes":
            return "Decimal" if name in ("decimal", "big-decimal") else "bytes"
        return "UUID" if name == "uuid" else "str"
    if isinstance(avro, Fixed):
        return {"decimal": "Decimal", "uuid": "UUID", "duration": "Duration"}.get(name, "bytes")  # type: ignore[arg-type]  # None too
    if isinstance(avro, Enum):
        return "str"
    if isinstance(avro, Array):
        return "list"
    if isinstance(avro, (Map, Record)):
        return "dict"
    return None


def kind_of(datum: Any) -> str | None:
    """A datum's Python type by the names of ``reads_as`` (subclasses as
    their base), or None for values whose branch only validation decides."""
    if datum is None:
        return "None"
    if isinstance(datum, bool):
        return "bool"
    if isinstance(datum, numbers.Integral):
        return "int"
    if isinstance(datum, float):
        return "float"
    if isinstance(datum, str):
        return "str"
    if isinstance(datum, (bytes, bytearray)):
        return "bytes"
    if isinstance(datum, datetime.datetime):
        return "datetime"
    if isinstance(datum, datetime.date):
        return "date"
    if isinstance(datum, datetime.time):
        return "time"
    if isinstance(datum, decimal.Decimal):
        return "Decimal"
    if isinstance(datum, uuid.UUID):
        return "UUID"
    if isinstance(datum, Duration):
        return "Duration"
    return None


def always_exact(kind: str, avro: AvroType) -> bool:
    """Whether every value of ``kind`` that ``avro`` (reading ``kind``) accepts
    reads back equal: not so for a float in a float, a time in time-millis."""
    logical = getattr(avro, "logical", None)
    if kind == "float":
        return not (isinstance(avro, Primitive) and avro.name == "float")
    if kind == "time":
        return logical is None or logical.name != "time-millis"
    return True


def _exact(datum: Any, kind: str, avro: AvroType) -> bool:
    """Whether ``datum`` (of ``kind``, accepted by ``avro``, which reads
    ``kind``) reads back equal."""
    if always_exact(kind, avro):
        return True
    if kind == "float":
        try:
            return math.isnan(datum) or struct.unpack("<f", struct.pack("<f", datum))[0] == datum
        except (OverflowError, struct.error):
            return False
    return datum.microsecond % 1000 == 0  # a time in time-millis


class UnionChooser:
    """The branch of a union a datum is written as.

    ``(name, value)`` tuples name the branch. Otherwise the most specific
    branch that represents the value exactly: among the branches that accept
    the datum and read back its own Python type (``reads_as``), the first
    whose reading is equal to it (a double before a float), else the first of
    them. A ``datetime`` is a ``date`` to Python, but a timestamp branch reads
    it back, and an int written as a date, a time or a float does not come
    back as an int. Only where no branch reads the datum's type (and for
    dicts, lists and other values), fastavro's ``write_union`` decides: the
    first branch whose validation (fastavro's ``_validate``, logical types
    converted first) accepts the datum, except that among records the one
    sharing most field names with the datum wins, and a float branch gives
    way to a later double. fastavro itself always takes its own choice, and
    so writes a datetime in ``["null", date, timestamp-millis]`` as a date,
    and 2**60 + 1 in ``["float", "long"]`` as a float. Used when the datum's
    exact type does not decide the branch (see ``avrogen._UnionPlan``).
    """

    def __init__(self, union: Union, schema: Schema):
        self.branches = union.branches
        self.schema = schema
        self.text = "[" + ", ".join(branch_name(b) for b in union.branches) + "]"
        #: fastavro's tuple notation: a branch's name -> its index (the first
        #: of a name, as a scan in order finds it)
        self.by_name: dict[str, int] = {}
        for index, branch in enumerate(union.branches):
            self.by_name.setdefault(branch_name(branch), index)

    def choose(self, datum: Any) -> tuple:
        """(branch index, the value to write)."""
        try:
            return self._choose(datum)
        except DumpError:
            raise
        except (TypeError, ValueError, ArithmeticError, AttributeError, LookupError) as error:
            # a value whose own methods fail while it is compared or measured
            raise DumpError(
                f"{describe(datum)} cannot be checked against the union {self.text}: {error}"
            ) from None
        except RecursionError:
            # validation recurses in Python: a value that contains itself
            raise DumpError(
                f"the {type(datum).__name__} is nested too deeply for Python's "
                f"recursion limit, or contains itself: it cannot be checked against "
                f"the union {self.text}"
            ) from None

    def _choose(self, datum: Any) -> tuple:
        branches = self.branches
        if isinstance(datum, tuple):
            if len(datum) != 2:
                raise DumpError(f"a tuple in a union names its branch: (name, value), not {shown(datum)}")
            name, datum = datum
            try:
                index = self.by_name.get(name)
            except TypeError:  # a name that cannot be hashed names no branch
                index = None
            if index is None:
                raise DumpError(f"the union {self.text} has no branch named {shown(name)}")
            if name == "null" and datum is not None:
                # fastavro writes nothing for it: the value would be lost
                raise refused("None for an Avro null", datum)
            return index, datum
        chosen = self._same_kind(datum)
        if chosen >= 0:
            return chosen, datum
        deref = self.schema.deref
        best, most_fields, could_be_float = -1, -1, False
        for index, branch in enumerate(branches):
            if could_be_float:
                if isinstance(branch, Primitive) and branch.name == "double":
                    best = index
                    break
                continue
            if not accepts(datum, branch, self.schema):
                continue
            definition = deref(branch)
            if isinstance(definition, Record) and definition.kind == "record":
                names = {field.name for field in definition.fields}
                count = len(names.intersection(datum))
                if count > most_fields:
                    best, most_fields = index, count
            elif isinstance(definition, Primitive) and definition.name == "float":
                best, could_be_float = index, True
            else:
                best = index
                break
        if best < 0:
            raise DumpError(f"{describe(datum)} matches no branch of the union {self.text}")
        return best, datum

    def _same_kind(self, datum: Any) -> int:
        """The branch that reads back the datum's own type and value, else the
        first that reads back its type; -1: none does (or a dict, a list)."""
        kind = kind_of(datum)
        if kind is None:
            return -1
        first = -1
        for index, branch in enumerate(self.branches):
            definition = self.schema.deref(branch)
            if reads_as(definition) != kind:
                continue
            try:
                if not accepts(datum, definition, self.schema):
                    continue
            except DumpError:
                continue  # e.g. a decimal this branch cannot hold: maybe another can
            if kind == "float" and isinstance(definition, Primitive) and definition.name == "double":
                return index  # fastavro's preference too: exact, and after any float
            if first < 0:
                first = index
            if kind != "float" and _exact(datum, kind, definition):
                return index
        return first


def branch_name(avro: AvroType) -> str:
    """The name fastavro's tuple notation uses for a union branch."""
    if isinstance(avro, (NamedRef, Record, Enum, Fixed)):
        return avro.name
    return avro.type_name


def _prepare(datum: Any, avro: AvroType) -> Any:
    """fastavro's LOGICAL_WRITERS (and ours for the logical types it lacks)
    as its validation applies them: the datum as the underlying type."""
    logical = getattr(avro, "logical", None)
    if logical is None:
        return datum
    kind = avro.type_name
    name = logical.name
    try:
        if (kind, name) in _PREPARED:
            # only whether the result validates matters: any int for these
            if name in (
                "timestamp-millis",
                "timestamp-micros",
                "local-timestamp-millis",
                "local-timestamp-micros",
            ):
                if isinstance(datum, datetime.datetime):
                    return 0
            elif name == "date":
                if isinstance(datum, (datetime.date, str)):
                    return date_datum(datum)
            elif name == "decimal":
                if isinstance(datum, decimal.Decimal):
                    size = avro.size if kind == "fixed" else 0  # type: ignore[attr-defined]
                    return decimal_bytes(datum, logical.scale, logical.precision, size)
            elif name == "uuid":
                return str(datum) if isinstance(datum, uuid.UUID) else datum
            elif name in ("time-millis", "time-micros"):
                if isinstance(datum, datetime.time):
                    return 0
            return datum
        if name in ("timestamp-nanos", "local-timestamp-nanos"):
            if isinstance(datum, datetime.datetime):
                return 0
        elif name == "big-decimal":
            if isinstance(datum, decimal.Decimal):
                return big_decimal_bytes(datum)
        elif name == "uuid":  # on fixed(16)
            if isinstance(datum, uuid.UUID):
                return datum.bytes
        elif name == "duration":
            if isinstance(datum, Duration):
                return duration_bytes(datum)
    except DumpError:
        # fastavro's own conversions raise out of the validation, and so out
        # of the union; ours for the types it does not know just do not match
        if (kind, name) in _PREPARED:
            raise
        return None
    return datum


class Validator:
    """fastavro's validation of one type, for the values the generated checks
    leave to Python (mappings that are not dicts, tuples in unions, decimals)."""

    def __init__(self, avro: AvroType, schema: Schema):
        self.avro = avro
        self.schema = schema

    def __call__(self, datum: Any) -> bool:
        return accepts(datum, self.avro, self.schema)


def accepts(datum: Any, avro: AvroType, schema: Schema) -> bool:
    """fastavro's ``_validate(datum, avro)`` (its Cython build), over our types."""
    if isinstance(avro, NamedRef):
        avro = schema.deref(avro)
    datum = _prepare(datum, avro)
    if isinstance(avro, Primitive):
        kind = avro.name
        if kind == "null":
            return datum is None
        if kind == "boolean":
            return isinstance(datum, bool)
        if kind == "string":
            return isinstance(datum, str)
        if kind in ("int", "long"):
            low, high = INT_RANGE if kind == "int" else LONG_RANGE
            if not isinstance(datum, numbers.Integral) or isinstance(datum, bool):
                return False
            return low <= datum <= high  # type: ignore[operator]  # an Integral compares with ints
        if kind in ("float", "double"):
            return isinstance(datum, numbers.Real) and not isinstance(datum, bool)
        return isinstance(datum, (bytes, bytearray))  # bytes
    if isinstance(avro, Fixed):
        return isinstance(datum, (bytes, bytearray)) and len(datum) == avro.size
    if isinstance(avro, Enum):
        return datum in avro.symbols
    if isinstance(avro, Array):
        if not isinstance(datum, (Sequence, array.array)) or isinstance(datum, str):
            return False
        return all(accepts(item, avro.items, schema) for item in datum)
    if isinstance(avro, Map):
        if not isinstance(datum, Mapping) or not all(isinstance(key, str) for key in datum):
            return False
        return all(accepts(item, avro.values, schema) for item in datum.values())
    if isinstance(avro, Record):
        if not isinstance(datum, Mapping):
            return False
        if "-type" in datum and datum["-type"] != avro.name:
            return False
        for field in avro.fields:
            value = datum.get(field.name, field.default if field.has_default else None)
            if not accepts(value, field.type, schema):
                return False
        return True
    if isinstance(avro, Union):
        if isinstance(datum, tuple):
            if len(datum) != 2:
                return False
            name, value = datum
            for branch in avro.branches:
                # fastavro's validation names only records; other branches
                # by their schema, so only primitives match a name here
                if isinstance(branch, (Record, NamedRef)):
                    own = branch.name
                elif isinstance(branch, Primitive) and branch.logical is None and not branch.props:
                    own = branch.name
                else:
                    own = None
                if own == name:
                    return accepts(value, branch, schema)
            return False
        return any(accepts(datum, branch, schema) for branch in avro.branches)
    return False
