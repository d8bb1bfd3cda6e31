"""Encoders for List (Avro array) and Dict/Mapping (Avro map).

Both write Avro's block encoding the way fastavro does: one block holding
every item, then the terminating zero (an empty collection is the zero
alone). Reading accepts any block layout, including negative counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from marshmallow import ValidationError, fields

from roastedavro import blocks
from roastedavro._support import serialize_value
from roastedavro.encoders.base import Encoder, _message_text
from roastedavro.errors import DumpError
from roastedavro.validators import has_validation


def in_path(part, convert, value):
    """convert(value), with an error's messages nested under ``part``."""
    try:
        return convert(value)
    except (ValidationError, DumpError) as error:
        raise ValidationError({part: error.messages}) from None


def each_in_path(convert, values) -> list:
    """convert() on every item of a list, an error nested under the item's index."""
    return [in_path(index, convert, value) for index, value in enumerate(values)]


def emit_array_write(fn, value, items):
    """Write the sequence in ``value`` as an Avro array of ``items``."""
    with fn.collection() as level:
        count = level.c_local("Py_ssize_t", "count")
        item = level.local("item")
        fn.line(f"if type({value}) is not list:")
        fn.line(f"    {value} = as_list({value})")
        with (
            blocks.write_items(
                fn,
                f"<list>{value}",
                count,
                item,
                level.part,
                level.index,
                "The list changed size while it was being written.",
            ),
            fn.naming(f"{fn.hint}_item"),
        ):
            fn.write_value(items, item)


def block_locals(level) -> tuple[str, str]:
    """The C locals of a block loop at ``level``: the block's count and the
    position in it (roastedavro.blocks)."""
    return level.c_local("long long", "count"), level.c_local("long long", "position")


def emit_array_read(fn, target, items):
    with fn.collection() as level:
        result = level.c_local("list", "items")
        item = level.local("item")
        with (
            blocks.read_items(fn, result, *block_locals(level), fn.block_min_size(items)),
            fn.naming(f"{fn.hint}_item"),
        ):
            fn.read_value(items, item)
            fn.line(f"put_item({result}, {item})")
        fn.line(f"{target} = {result}")


class ListEncoder(Encoder):
    field_class = fields.List
    avro_types = ("array",)

    def __init__(self, field, visitor, path):
        super().__init__(field, visitor, path)
        self.items = visitor.visit_value(field.inner, f"{path}[]")

    def avro_type(self, names):
        return {"type": "array", "items": self.items.avro_type(names)}

    def describe(self):
        return f"array<{self.items.describe()}>"

    def load_input(self, raw):
        return [self.items.load_input(item) for item in raw]

    def dump_datum(self, dumped):
        return each_in_path(self.items.dump_datum, dumped)

    def default_datum(self, value):
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise self.error(f"the default {value!r} is not a list")
        return [self.items.default_datum(item) for item in value]

    def emit_write(self, fn, value):
        emit_array_write(fn, value, self.items)

    def emit_read(self, fn, target):
        emit_array_read(fn, target, self.items)


class MappingEncoder(Encoder):
    """Dict and any other Mapping field whose keys are strings."""

    field_class = fields.Mapping
    avro_types = ("map",)

    def __init__(self, field, visitor, path):
        super().__init__(field, visitor, path)
        if field.value_field is None:
            raise self.error("declare values=<field> so the Avro map has a value type")
        keys = field.key_field
        if isinstance(keys, fields.Enum):
            # dumped as the member's name, or its value with by_value; loaded
            # back as the member, as marshmallow's Dict does
            by_value = getattr(keys, "by_value", False)
            if by_value and not all(type(member.value) is str for member in keys.enum):
                raise self.error(
                    f"Avro map keys are strings; keys=Enum({keys.enum.__name__}, by_value=...) "
                    "dumps values that are not all str: use the member names (no by_value) "
                    "or str values"
                )
        elif keys is not None and not isinstance(keys, fields.String):
            raise self.error(
                f"Avro map keys are strings; keys={type(keys).__name__}() cannot be written "
                "(keys may be String or Enum fields)"
            )
        self.keys = keys
        # a key field with its own conversions runs them for every key
        self.convert_keys = keys is not None and type(keys)._serialize is not fields.String._serialize
        self.deserialize_keys = keys is not None and (
            type(keys)._deserialize is not fields.String._deserialize
        )
        self.validated_keys = keys is not None and has_validation(keys)
        self.values = visitor.visit_value(field.value_field, f"{path}{{}}")
        self.mapping_type = getattr(field, "mapping_type", dict)

    def avro_type(self, names):
        return {"type": "map", "values": self.values.avro_type(names)}

    def describe(self):
        return f"map<{self.values.describe()}>"

    def load_input(self, raw):
        return {key: self.values.load_input(item) for key, item in raw.items()}

    def dump_datum(self, dumped):
        return {key: in_path(key, self.values.dump_datum, item) for key, item in dumped.items()}

    def default_datum(self, value):
        if not isinstance(value, Mapping):
            raise self.error(f"the default {value!r} is not a mapping")
        if not self.convert_keys:
            if not all(type(key) is str for key in value):
                raise self.error(f"the default {value!r} is not a mapping with str keys")
            return {key: self.values.default_datum(item) for key, item in value.items()}
        # keys converted as the writer converts them (with_str_keys)
        datum = {}
        for key, item in value.items():
            if isinstance(self.keys, fields.Enum) and not isinstance(key, self.keys.enum):
                raise self.error(
                    f"the default's key {key!r} is not a member of "
                    f"{self.keys.enum.__name__}: a default is the value load "
                    "returns, its keys members"
                )
            try:
                text = serialize_value(self.keys, key, None, str)
            except DumpError as error:
                raise self.error(
                    f"the default's key {key!r} cannot be written as a map key: "
                    f"{_message_text(error.messages)}"
                ) from None
            datum[text] = self.values.default_datum(item)
        return datum

    def emit_write(self, fn, value):
        keys = "None" if self.keys is None else fn.bind(self.keys, "keys")
        with fn.collection() as level:
            count = level.c_local("Py_ssize_t", "count")
            position = level.c_local("Py_ssize_t", "position")
            key_ref = level.c_local("PyObject*", "key_ref")
            item_ref = level.c_local("PyObject*", "item_ref")
            item = level.local("item")
            fn.line(f"if type({value}) is not dict:")
            fn.line(f"    {value} = as_dict({value})")
            # keys that are not all exact str are converted first, as
            # marshmallow does: two keys may become one
            always = "True" if self.convert_keys else "False"
            fn.line(f"{value} = with_str_keys(<dict>{value}, {keys}, obj, {always})")
            with (
                blocks.write_entries(
                    fn,
                    f"<dict>{value}",
                    count,
                    position,
                    (key_ref, item_ref),
                    level.key,
                    item,
                    level.part,
                    level.index,
                    False,
                    "The mapping changed size while it was being written.",
                ),
                fn.naming(f"{fn.hint}_value"),
            ):
                fn.write_value(self.values, item)

    def emit_read(self, fn, target):
        with fn.collection() as level:
            result = level.c_local("dict", "map")
            item = level.local("item")
            with (
                blocks.read_entries(
                    fn, result, *block_locals(level), level.key, fn.block_min_size(self.values)
                ),
                fn.naming(f"{fn.hint}_value"),
            ):
                if self.deserialize_keys:
                    keys = fn.bind(self.keys, "keys")
                    fn.line(f"{level.key} = deserialize_value({keys}, {level.key})")
                    fn.flag_invalid(level.key)
                if self.validated_keys:
                    fn.check_value(self.keys, level.key)
                fn.read_value(self.values, item)
                fn.line(f"{result}[{level.key}] = {item}")
            if self.mapping_type is dict:
                fn.line(f"{target} = {result}")
            else:
                mapping_type = fn.bind(self.mapping_type, "mapping_type")
                fn.line(f"{target} = {mapping_type}({result})")
