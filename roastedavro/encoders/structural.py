"""Enum, Tuple, Pluck and Constant: fields built from other Avro types."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping

import fastavro
from marshmallow import ValidationError, fields, missing

from roastedavro._runtime import GenericType
from roastedavro.errors import CompileError
from roastedavro.names import AVRO_NAME, identifier
from roastedavro.encoders.base import Encoder, _message_text
from roastedavro.encoders.collections import each_in_path, emit_array_read, emit_array_write, in_path

# the Avro type of a Python constant, and the runtime calls for it
PRIMITIVE_OF = {type(None): "null", bool: "boolean", int: "long", float: "double", str: "string"}
READ_PRIMITIVE = {
    "null": None,
    "boolean": "read_boolean(r)",
    "long": "read_long(r)",
    "double": "read_double(r)",
    "string": "read_str(r)",
}
WRITE_PRIMITIVE = {
    "boolean": "write_boolean_value",
    "long": "write_long_value",
    "double": "write_double_value",
    "string": "write_str_value",
}


class EnumEncoder(Encoder):
    """Enum as an Avro enum of the member names; ``by_value`` as the values' type."""

    field_class = fields.Enum

    def choose_avro_type(self, override):
        enum_class = self.field.enum
        self.members = tuple(enum_class)
        self.by_value = bool(getattr(self.field, "by_value", False))
        if override is not None:
            raise self.error("an Enum's Avro type follows from its members; remove metadata 'avro'")
        if not self.by_value:
            names = [member.name for member in self.members]
            bad = [name for name in names if not AVRO_NAME.match(name)]
            if bad:
                raise self.error(f"member names {bad} are not valid Avro enum symbols; use by_value=True")
            if not AVRO_NAME.match(enum_class.__name__):
                raise self.error(f"{enum_class.__name__!r} is not a valid Avro enum name")
            self.full_name = self.visitor.claim_name(enum_class.__name__, enum_class, self.path)
            self.namespace = self.visitor.current_namespace
            return "enum"
        kinds = {PRIMITIVE_OF.get(type(member.value)) for member in self.members}
        if len(kinds) != 1 or None in kinds or "null" in kinds:
            raise self.error(
                "by_value needs members whose values are all str, all int, all float or all bool"
            )
        return kinds.pop()

    def avro_type(self, names):
        if self.by_value:
            return self.avro
        definition = {
            "type": "enum",
            "name": self.field.enum.__name__,
            "symbols": [member.name for member in self.members],
        }
        if self.namespace:
            definition["namespace"] = self.namespace
        return names.named(definition)

    def describe(self):
        if self.by_value:
            return f"{self.avro} (values of {self.field.enum.__name__})"
        return f"enum {self.field.enum.__name__}"

    def emit_write(self, fn, value):
        field = fn.bind(self.field, "field")
        if self.by_value:
            values = fn.bind({member: member.value for member in self.members}, "values")
            fn.line(f"{value} = enum_value({values}, {field}, {value}, obj)")
            fn.line(f"{WRITE_PRIMITIVE[self.avro]}(w, {value}, {field}, obj)")
        else:
            indexes = fn.bind({member: i for i, member in enumerate(self.members)}, "indexes")
            members = fn.bind(self.members, "members")
            fn.line(f"write_enum_value(w, {value}, {field}, obj, {members}, {indexes})")

    def emit_read(self, fn, target):
        if self.by_value:
            members = fn.bind({member.value: member for member in self.members}, "members")
            fn.line(f"{target} = {READ_PRIMITIVE[self.avro]}")
            fn.line(f"{target} = {members}.get({target})")
            # a value outside the enum: marshmallow's load reports it
            fn.line(f"if {target} is None:")
            fn.line("    r.invalid = 1")
        else:
            members = fn.bind(self.members, "members")
            fn.line(f"{target} = read_enum(r, {members})")

    def load_input(self, raw):
        return raw

    def default_datum(self, value):
        # the writer takes members only: a name or value is not converted
        if not isinstance(value, self.field.enum):
            members = ", ".join(f"{self.field.enum.__name__}.{m.name}" for m in self.members)
            raise self.error(
                f"the default {value!r} is not a member of {self.field.enum.__name__}: "
                f"a default is the value load returns, one of {members}"
            )
        return value.value if self.by_value else value.name


class TupleEncoder(Encoder):
    """Tuple as an Avro record whose fields are named item0, item1, ..."""

    field_class = fields.Tuple
    avro_types = ("record",)

    def __init__(self, field, visitor, path):
        super().__init__(field, visitor, path)
        self.items = [
            visitor.visit_value(inner, f"{path}[{i}]") for i, inner in enumerate(field.tuple_fields)
        ]
        stem = identifier(path).strip("_")
        self.name = ("t" + stem if stem[:1].isdigit() else stem) + "_tuple"
        self.namespace = visitor.current_namespace
        visitor.claim_name(self.name, self, path)

    @property
    def min_size(self):
        return sum(item.min_size for item in self.items)

    def avro_type(self, names):
        definition = {
            "type": "record",
            "name": self.name,
            "fields": [
                {"name": f"item{i}", "type": item.avro_type(names)} for i, item in enumerate(self.items)
            ],
        }
        if self.namespace:
            definition["namespace"] = self.namespace
        return names.named(definition)

    def describe(self):
        return f"record {self.name} ({', '.join(item.describe() for item in self.items)})"

    def emit_write(self, fn, value):
        count = len(self.items)
        field = fn.bind(self.field, "field")
        with fn.collection() as level:
            item = level.local("item")
            fn.line(f"if type({value}) is not tuple or len(<tuple>{value}) != {count}:")
            fn.line(f"    {value} = as_tuple({field}, {value}, {count})")
            fn.line(f"{level.part} = PATH_INDEX")
            for i, plan in enumerate(self.items):
                fn.line(f"{level.index} = {i}")
                fn.line(f"{item} = (<tuple>{value})[{i}]")
                with fn.naming(f"{fn.hint}_{i}"):
                    fn.write_value(plan, item)
            fn.line(f"{level.part} = PATH_NONE")

    def emit_read(self, fn, target):
        with fn.collection() as level:
            elements = [level.local(f"element{i}_") for i in range(len(self.items))]
            for i, (plan, element) in enumerate(zip(self.items, elements)):
                with fn.naming(f"{fn.hint}_{i}"):
                    fn.read_value(plan, element)
            fn.line(f"{target} = ({', '.join(elements)}{',' if len(elements) == 1 else ''})")

    def load_input(self, raw):
        return [item.load_input(raw[f"item{i}"]) for i, item in enumerate(self.items)]

    def default_datum(self, value):
        if not isinstance(value, (tuple, list)) or len(value) != len(self.items):
            raise self.error(f"the default {value!r} is not a tuple of {len(self.items)} values")
        return {f"item{i}": item.default_datum(part) for i, (item, part) in enumerate(zip(self.items, value))}

    def dump_datum(self, dumped):
        return {
            f"item{i}": in_path(i, item.dump_datum, value)
            for i, (item, value) in enumerate(zip(self.items, dumped))
        }


class PluckEncoder(Encoder):
    """Pluck as the plucked field's Avro type (an array of it with many=True)."""

    field_class = fields.Pluck

    def __init__(self, field, visitor, path):
        self.field, self.visitor, self.path = field, visitor, path
        nested = field.schema
        visitor.check_schema(nested, path, compiled_hooks=False)
        key = field.field_name
        inner = nested.fields[key]
        self.dump_key = inner.attribute or key
        self.load_key = inner.attribute or key
        self.inner = visitor.visit_value(inner, f"{path}.{key}")
        self.many = bool(field.many)
        if field.allow_none and self.inner.nullable and not self.many:
            raise self.error(
                "both the Pluck and the plucked field allow None; Avro cannot nest one null union in another"
            )
        super().__init__(field, visitor, path)

    def choose_avro_type(self, override):
        if override is not None:
            raise self.error("a Pluck is written as the plucked field's type; remove metadata 'avro'")
        return "array" if self.many else "pluck"

    @property
    def min_size(self):
        return 1 if self.many else self.inner.min_size

    def avro_type(self, names):
        inner = self.inner.avro_type(names)
        return {"type": "array", "items": inner} if self.many else inner

    def describe(self):
        inner = self.inner.describe()
        return f"array<{inner}>" if self.many else inner

    def _emit_one_write(self, fn, value):
        with fn.collection() as level:
            item = level.local("plucked")
            key = fn.literal(self.dump_key)
            fn.line(f"{item} = field_value({value}, value_source({value}), {key}, MISSING)")
            fn.line(f"if {item} is MISSING:")
            message = fn.message(self.inner.encoder.field.error_messages["required"])
            fn.line(f"    raise_dump_error({message})")
            fn.write_value(self.inner, item)

    def emit_write(self, fn, value):
        if self.many:
            plucked = _PluckedItem(self)
            emit_array_write(fn, value, self.visitor.plain_value(plucked))
        else:
            self._emit_one_write(fn, value)

    def _emit_one_read(self, fn, target):
        with fn.collection() as level:
            item = level.local("plucked")
            fn.read_value(self.inner, item)
            fn.line(f"{target} = {{{fn.literal(self.load_key)}: {item}}}")

    def emit_read(self, fn, target):
        if self.many:
            emit_array_read(fn, target, self.visitor.plain_value(_PluckedItem(self)))
        else:
            self._emit_one_read(fn, target)

    def load_input(self, raw):
        if self.many:
            return [self.inner.load_input(item) for item in raw]
        return self.inner.load_input(raw)

    def dump_datum(self, dumped):
        if self.many:
            return each_in_path(self.inner.dump_datum, dumped)
        return self.inner.dump_datum(dumped)

    def _loaded_form(self, value):
        """What load returns for ``value``, given as the plucked value(s) or
        as an object with the attribute: the form to suggest."""
        if self.many and isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping)):
            return [self._loaded_item(item) for item in value]
        return self._loaded_item(value)

    def _loaded_item(self, item):
        try:
            self.inner.default_datum(item)
            return {self.load_key: item}
        except CompileError:
            pass
        plucked = self.inner.encoder.field.get_value(item, self.dump_key)
        return {self.load_key: item if plucked is missing else plucked}

    def _one_default_datum(self, item, whole):
        # as the writer takes it: the plucked field's value from a dict or
        # an object, converted by the plucked field's own default_datum
        plucked = self.inner.encoder.field.get_value(item, self.dump_key)
        if plucked is missing:
            raise self.error(
                f"the default {whole!r} has no value for {self.dump_key!r}: a Pluck's default "
                f"is what load returns, the nested record as a dict (for dump_default, or an "
                f"object with that attribute); give {self._loaded_form(whole)!r}"
            )
        return self.inner.default_datum(plucked)

    def default_datum(self, value):
        """The Avro value of a default given as load returns it: ``{key: value}``
        (a list of them with many=True), or, as dump takes it, an object
        with the attribute; the plucked value is the plucked field's
        default_datum."""
        if not self.many:
            return self._one_default_datum(value, value)
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise self.error(
                f"the default {value!r} is not a list (many=True); write a list of "
                f"{{{self.load_key!r}: value}} dicts"
            )
        return [self._one_default_datum(item, value) for item in value]

    def check_dump_default(self, value):
        self.default_datum(value)

    def load_default_datum(self, value):
        # marshmallow's load({}) returns the load_default as given, and load
        # of the written value returns the nested schema's load: the dict
        listed = self.many and isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping))
        if not all(isinstance(item, Mapping) for item in (value if listed else [value])):
            raise self.error(
                f"the default {value!r} is not what load returns, the nested record as a dict"
                f"{' (a list of them)' if self.many else ''}: write "
                f"load_default={self._loaded_form(value)!r}"
            )
        datum = self.default_datum(value)
        try:
            loaded = self.loaded_value(datum)
        except ValidationError as error:
            raise self.error(
                f"the default {value!r} does not load: {_message_text(error.messages)}"
            ) from None
        if loaded != value or type(loaded) is not type(value):
            raise self.error(
                f"the default {value!r} does not read back as itself (load returns {loaded!r} "
                f"for the value written); write load_default={loaded!r}"
            )
        return datum


class _PluckedItem(Encoder):
    """One item of ``Pluck(..., many=True)``."""

    def __init__(self, pluck: PluckEncoder):
        self.pluck = pluck
        self.field = pluck.field
        self.avro = "pluck"

    @property
    def min_size(self):
        return self.pluck.inner.min_size

    def describe(self):
        return self.pluck.inner.describe()

    def emit_write(self, fn, value):
        self.pluck._emit_one_write(fn, value)

    def emit_read(self, fn, target):
        self.pluck._emit_one_read(fn, target)


class ConstantEncoder(Encoder):
    """Constant: written as its value's Avro type, so other readers see it;
    the value to dump is ignored, and load returns the constant."""

    field_class = fields.Constant
    # the Avro type is the constant's own; the value to dump is ignored
    never_null = True
    accepts_none = True

    def choose_avro_type(self, override):
        constant = self.field.constant
        if override is not None:
            avro = override
        else:
            avro = PRIMITIVE_OF.get(type(constant))
            if avro is None:
                raise self.error(
                    f"cannot infer an Avro type for the constant {constant!r}; "
                    "set metadata={'avro': <Avro type>}"
                )
        try:
            out = io.BytesIO()
            fastavro.schemaless_writer(out, fastavro.parse_schema(avro), constant)
        except Exception as error:
            raise self.error(f"the constant {constant!r} cannot be written as {avro!r}: {error}") from None
        self.encoded = out.getvalue()
        return avro

    @property
    def min_size(self):
        return len(self.encoded)

    def describe(self):
        return f"{self.avro if isinstance(self.avro, str) else 'value'} (constant {self.field.constant!r})"

    def emit_write(self, fn, value):
        encoded = fn.bind(self.encoded, "encoded")
        fn.line(f"write_encoded(w, {encoded})")

    def emit_read(self, fn, target):
        constant = fn.bind(self.field.constant, "constant")
        read = READ_PRIMITIVE.get(self.avro) if isinstance(self.avro, str) else None
        if read is not None:
            fn.line(read)
        elif self.avro != "null":
            avro = fn.bind(GenericType(self.avro), "avro")
            fn.line(f"skip_checked(r, {avro}, self.max_depth, self.max_items)")
        fn.line(f"{target} = {constant}")
