"""Python datums to JSON values in Avro's JSON encoding, one writer per
schema node; defaults as JSON."""

from __future__ import annotations

import copy
import datetime
import math
from typing import Any, Callable

from roastedavro._datum import (
    UNIT_MICROS,
    UNIT_MILLIS,
    array_datum,
    big_decimal_bytes,
    boolean_datum,
    bytes_datum,
    date_datum,
    decimal_bytes,
    duration_bytes,
    enum_index,
    fixed_datum,
    long_datum,
    map_datum,
    map_key,
    missing_field,
    record_datum,
    shown,
    string_datum,
    timestamp_datum,
    uuid_bytes,
    uuid_text,
)
from roastedavro._defaults import _encode, _NotThisType
from roastedavro._unionrule import UnionChooser, accepts, branch_name
from roastedavro.avro.types import (
    Array,
    AvroType,
    Enum,
    Fixed,
    Map,
    Primitive,
    Record,
    Schema,
    Union,
)
from roastedavro.avrojson._common import (
    _INT_HIGH,
    _INT_LOW,
    _LONG_HIGH,
    _LONG_LOW,
    _MISSING,
    _NO_DEFAULT,
    _PYTHON_TYPES,
    _TIMESTAMPS,
    _ByKind,
    _double_datum,
    _double_json,
    _float32,
    _float_json,
)
from roastedavro.avroplan import _TYPE_TESTS, _UnionPlan
from roastedavro.errors import DumpError, SchemaError

# -- writing ------------------------------------------------------------------------------


def _float_writer(lenient: bool, single: bool, bare: bool) -> Callable:
    # bare: NaN and the infinities stay floats, which json.dumps writes as
    # the tokens NaN, Infinity and -Infinity (fastavro's JSON, not JSON)
    if single:

        def write_float(value):
            number = value if type(value) is float else _double_datum(value, lenient)
            narrowed = _float32(number)
            if math.isinf(narrowed) and not math.isinf(number):
                raise DumpError("Number out of range for Avro float (32-bit IEEE 754).")
            return narrowed if bare and not math.isfinite(narrowed) else _float_json(narrowed)

        return write_float

    def write_double(value):
        number = value if type(value) is float else _double_datum(value, lenient)
        return number if bare else _double_json(number)

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
            micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
            return micros // 1000 if unit == UNIT_MILLIS else micros
        return long_datum(value, bits)

    return write_time


class _Writers(_ByKind):
    """The function that writes each type's datums as JSON values."""

    def __init__(self, schema: Schema, wrap: bool, bare_constants: bool = False):
        self.schema = schema
        self.wrap = wrap
        self.bare_constants = bare_constants
        self.records: dict[str, Callable] = {}

    def primitive(self, avro: Primitive, lenient: bool = False) -> Callable:
        logical = avro.logical
        name = logical.name if logical is not None else None
        if name in _TIMESTAMPS:
            unit, local = _TIMESTAMPS[name]
            return lambda value: timestamp_datum(value, unit, local)
        if name == "date":
            return lambda value: (
                value if type(value) is int and _INT_LOW <= value <= _INT_HIGH else date_datum(value)
            )
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
            return _float_writer(lenient, kind == "float", self.bare_constants)
        return {
            "null": _write_null,
            "boolean": _write_boolean,
            "int": _write_int,
            "long": _write_long,
            "string": _write_string,
            "bytes": _write_bytes,
        }[kind]

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
                            out[name] = (
                                copy.deepcopy(default) if isinstance(default, (dict, list)) else default
                            )
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
            lenient = (
                isinstance(definition, Primitive)
                and definition.name in ("float", "double")
                and definition.logical is None
            )
            default = (
                default_json(field.type, field.default, self.schema, self.wrap, f"{avro.name}.{field.name}")
                if field.has_default
                else _NO_DEFAULT
            )
            nullable = (
                isinstance(definition, Union)
                and any(
                    isinstance(branch, Primitive) and branch.name == "null" for branch in definition.branches
                )
            ) or (isinstance(definition, Primitive) and definition.name == "null")
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
        writers = [
            None if isinstance(definition, Primitive) and definition.name == "null" else self.of(branch)
            for branch, definition in zip(avro.branches, plan.branches)
        ]
        wrap = self.wrap
        static: dict[type, int] = {}
        by_size = None
        dict_branches = None
        for python_name in _TYPE_TESTS:
            python_type = _PYTHON_TYPES.get(python_name)
            if python_type is None:
                continue
            if python_name == "dict" and len(plan.dict_branches()) > 1:
                dict_branches = [
                    (
                        index,
                        plan.branches[index],
                        [field.name for field in plan.branches[index].fields]
                        # an "error" is taken outright, as fastavro does
                        if isinstance(plan.branches[index], Record) and plan.branches[index].kind == "record"
                        else None,
                    )
                    for index in plan.dict_branches()
                ]
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
                    size = (
                        0 if _INT_LOW <= value <= _INT_HIGH else 1 if _LONG_LOW <= value <= _LONG_HIGH else 2
                    )
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


def default_json(avro: AvroType, value: Any, schema: Schema, wrap: bool = True, where: str = "") -> Any:
    """A field default (schema JSON) in Avro's JSON encoding: a union's
    default in the first branch it fits (as the binary writer writes it),
    wrapped in its branch's name; a float as the 32-bit float it is."""
    try:
        return _default_json(avro, value, schema, wrap)
    except _NotThisType as error:
        raise SchemaError(
            f"the default {shown(value)} is not a valid value of its type ({error})", where
        ) from None


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
        return {
            field.name: _default_json(
                field.type, value[field.name] if field.name in value else field.default, schema, wrap
            )
            for field in avro.fields
        }
    return value  # enum symbols, fixed as code points
