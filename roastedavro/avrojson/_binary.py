"""Avro binary to and from JSON values without Python datums between (a
container block's records to JSON lines, and back), resolved to a reader's
schema where one is given."""

from __future__ import annotations

import copy
import decimal
import struct
from typing import Any, Callable

from roastedavro._datum import encode_long, shown
from roastedavro._unionrule import branch_name
from roastedavro.avro.resolve import (
    Container as _Container,
)
from roastedavro.avro.resolve import (
    EnumMap as _EnumMap,
)
from roastedavro.avro.resolve import (
    Promote as _Promote,
)
from roastedavro.avro.resolve import (
    ReaderUnion as _ReaderUnion,
)
from roastedavro.avro.resolve import (
    RecordRef as _RecordRef,
)
from roastedavro.avro.resolve import (
    Unreadable as _Unreadable,
)
from roastedavro.avro.resolve import (
    WriterUnion as _WriterUnion,
)
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
    _FLOAT32,
    _INT_HIGH,
    _INT_LOW,
    _MISSING,
    _NO_DEFAULT,
    _ByKind,
    _decimal_float32,
    _double_json,
    _float_json,
    _json_kind,
    _Mismatch,
)
from roastedavro.avrojson._reading import (
    _read_boolean,
    _read_bytes,
    _read_double,
    _read_float,
    _read_int,
    _read_long,
    _read_null,
    _read_string,
    _Readers,
)
from roastedavro.avrojson._writing import default_json

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
            return 1  # a recursive record is reached through a union, array or map
        return sum(_min_size(field.type, schema, seen | {avro.name}) for field in avro.fields)
    return 1  # enum, array, map, union: at least one varint


class _BinaryToJSON(_ByKind):
    """For each type, ``read(data, position) -> (JSON value, position after it)``.
    ``budget[0]``: the array and map items that may still be read."""

    def __init__(self, schema: Schema, budget: list):
        self.schema = schema
        self.budget = budget
        self.records: dict[str, Callable] = {}

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
                    raise _BadBinary(
                        f"a string that is not valid UTF-8 ({error.reason})", start + error.start
                    ) from None
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
                raise _BadBinary(f"enum index {index} is not one of {avro.name}'s {count} symbols", position)
            return symbols[index], end

        return read_enum

    def array(self, avro: Array | Map) -> Callable:
        return self.collection(avro)

    map = array

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
                    size, position = _binary_long(data, position)  # the block's size: unused
                if count * smallest > len(data) - position:
                    raise _BadBinary(f"a block of {count} items, more than the data holds", at)
                budget[0] -= count
                if budget[0] < 0:
                    raise _BadBinary(
                        f"item budget exceeded: a block of {count} items, more than "
                        "the data's length plus the item allowance",
                        at,
                    )
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

        self.records[avro.name] = read_record  # before the fields: records may recurse
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
                raise _BadBinary(f"union branch {index} is not one of the union's {count}", position)
            branch = branches[index]
            if branch is None:
                return None, end
            value, end = branch[1](data, end)
            return {branch[0]: value}, end

        return read_union


class _JSONToBinary(_ByKind):
    """For each type, ``write(value, out: bytearray)``: JSON values (Avro's JSON
    encoding) appended to ``out`` as the type's binary encoding, a union's value
    as the branch the JSON names. Checked as ``from_json_value`` checks them."""

    def __init__(self, schema: Schema, defaults: bool):
        self.schema = schema
        self.defaults = defaults
        self.readers = _Readers(schema, defaults)
        self.records: dict[str, Callable] = {}

    def primitive(self, avro: Primitive) -> Callable:
        kind = avro.name
        write = self._plain(kind)
        if avro.logical is None:
            return write
        check = self.readers.primitive(avro)  # a logical value's checks (ranges, precision)

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
        check = self.readers.fixed(avro)  # the size, and a logical value's checks

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

    def array(self, avro: Array | Map) -> Callable:
        return self.collection(avro)

    map = array

    def collection(self, avro: Array | Map) -> Callable:
        is_map = isinstance(avro, Map)
        write_item = self.of(avro.values if is_map else avro.items)
        write_key = self._plain("string")

        def write_collection(value, out):
            if type(value) is not (dict if is_map else list):
                raise _Mismatch(
                    f"expected {'an object (a map)' if is_map else 'an array'}, got {_json_kind(value)}"
                )
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
                raise _Mismatch(f"expected an object (a {full_name} record), got {_json_kind(value)}")
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
                            raise _Mismatch(
                                f"missing field: no value and no default for {name}"
                                if self.defaults
                                else "missing field"
                            )
                        item = default
                    write(item, out)
                except _Mismatch as error:
                    error.path.append(name)
                    raise

        self.records[avro.name] = write_record  # before the fields: records may recurse
        for field in avro.fields:
            if field.has_default and self.defaults:
                default = default_json(
                    field.type, field.default, self.schema, True, f"{avro.name}.{field.name}"
                )
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
            raise _Mismatch(
                f"expected null or an object naming one branch of the union {text}, got {_json_kind(value)}"
            )

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
        self.plain = _BinaryToJSON(resolution.writer, budget)  # the writer's values, as they are
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
                raise _BadBinary(f"the reader's schema cannot read this value: {reason}", position)

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

        def bytes_as_string(data, position):  # ("bytes", "string")
            value, end = read(data, position)
            try:
                return value.encode("latin-1").decode("utf-8"), end
            except UnicodeDecodeError as error:
                raise _BadBinary(
                    f"bytes read as a string are not valid UTF-8 ({error.reason})", position
                ) from None

        return bytes_as_string

    def promote(self, plan: Any) -> Callable:
        source = self.writer.deref(plan.writer).name
        target = self.reader.deref(plan.reader).name
        if source == "float":  # to double: the 32-bit value itself, not its shortest decimal

            def float_as_double(data, position):
                if position + 4 > len(data):
                    raise _BadBinary("the data ends inside a float", position)
                return _double_json(_FLOAT32.unpack_from(data, position)[0]), position + 4

            return float_as_double
        read = self.plain.of(plan.writer)  # int or long
        if target == "float":

            def integer_as_float(data, position):
                value, end = read(data, position)
                return _float_json(_decimal_float32(decimal.Decimal(value))), end  # rounded once

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
                raise _BadBinary(f"enum index {index} is not one of the writer's {count} symbols", position)
            symbol = symbols[index]
            if symbol is None:
                raise _BadBinary(
                    f"the writer's symbol {writer_symbols[index]!r} is not the "
                    "reader's, and the reader's enum has no default",
                    position,
                )
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
                    raise _BadBinary(
                        f"item budget exceeded: a block of {count} items, more than "
                        "the data's length plus the item allowance",
                        at,
                    )
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

        self.records[ref.key] = read_record  # before the fields: records may recurse
        if record.error is not None:
            reason = record.error.reason

            def unreadable(data, position):
                raise _BadBinary(f"the reader's schema cannot read this record: {reason}", position)

            self.records[ref.key] = unreadable
            return unreadable
        for step in record.steps:
            if step.reader is None:
                steps.append((None, self.plain.of(step.writer.type)))  # read past it
            else:
                steps.append((step.reader.name, self.of(step.plan)))
        for field in record.defaults:
            defaults.append(
                (
                    field.name,
                    default_json(field.type, field.default, self.reader, True, f"{reader.name}.{field.name}"),
                )
            )
        return read_record

    def writer_union(self, plan: Any) -> Callable:
        reader = self.reader.deref(plan.reader)
        branches = []
        for index, branch in enumerate(plan.branches):
            read = self.of(branch)
            name = None
            if isinstance(reader, Union) and not isinstance(branch, (_ReaderUnion, _Unreadable)):
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
                raise _BadBinary(f"union branch {index} is not one of the union's {count}", position)
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
