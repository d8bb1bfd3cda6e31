"""The plan of a marshmallow schema the visitor makes, and what reads it.

A ``RecordPlan`` per record: its fields (``FieldPlan``), each
written by an encoder (``ValuePlan``), with its Avro name, keys and
defaults. The code generator turns plans into source; the encoders and the
uncompiled path use the helpers below to convert values as the generated
code does. Plans import no encoder, visitor or generator.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from marshmallow import Schema, ValidationError, fields, missing

from roastedavro.errors import CompileError, DumpError

if TYPE_CHECKING:
    from roastedavro.encoders import Encoder

NO_DEFAULT = object()


@dataclasses.dataclass
class ValuePlan:
    """One position where a value is written: an encoder, maybe nullable."""

    encoder: Encoder
    nullable: bool = False
    null_first: bool = True
    #: the field whose validators check this value once it is loaded
    #: (None for the parts of a value: the items of Nested(many=True), ...)
    validated_by: fields.Field | None = None

    def avro_type(self, names: NamedTypes) -> Any:
        inner = self.encoder.avro_type(names)
        if not self.nullable:
            return inner
        return ["null", inner] if self.null_first else [inner, "null"]

    def describe(self) -> str:
        inner = self.encoder.describe()
        if not self.nullable:
            return inner
        return f"null | {inner}" if self.null_first else f"{inner} | null"

    @property
    def min_size(self) -> int:
        return 1 if self.nullable else self.encoder.min_size

    @property
    def takes_null(self) -> bool:
        """Whether null may be written here: a ["null", T] union, or an
        encoder whose own type has null (a union of records: holds_null)."""
        return self.nullable or getattr(self.encoder, "holds_null", False)

    def load_input(self, raw: Any) -> Any:
        return None if raw is None else self.encoder.load_input(raw)

    def dump_datum(self, dumped: Any) -> Any:
        return None if dumped is None else self.encoder.dump_datum(dumped)

    @property
    def null_message(self) -> str:
        return self.encoder.field.error_messages["null"]  # type: ignore[return-value]  # a str

    def default_datum(self, value: Any) -> Any:
        """The Avro value of a default given for this position (see
        ``Encoder.default_datum``); None where null is allowed."""
        if value is None and not self.encoder.accepts_none:
            if self.nullable:
                return None
            raise self.encoder.error("a default of None needs allow_none=True")
        return self.encoder.default_datum(value)


@dataclasses.dataclass
class FieldPlan:
    name: str  # the key in schema.fields
    avro_name: str  # data_key, else name
    dump_key: str  # where dump reads the value: attribute, else name
    load_key: str  # where load puts it: attribute, else name
    field: fields.Field
    value: ValuePlan
    #: the default in the Avro schema, as JSON (bytes as code points 0-255)
    avro_default: Any = NO_DEFAULT
    #: the Python value it was given as (load_default, else dump_default),
    #: and its Avro value as fastavro writes it without logical types
    default_value: Any = NO_DEFAULT
    default_datum: Any = NO_DEFAULT
    dump_default: Any = missing


@dataclasses.dataclass
class RecordPlan:
    schema: Schema
    name: str
    namespace: str | None
    ident: str  # used in generated function names
    fields: list[FieldPlan] = dataclasses.field(default_factory=list)
    _min_size: int | None = None

    @property
    def full_name(self) -> str:
        return f"{self.namespace}.{self.name}" if self.namespace else self.name

    def min_size(self) -> int:
        """The fewest bytes a record takes: the sum of its fields' (0 for a
        record of only nulls and empty records). Recursion in progress
        counts as 0: a conservative lower bound."""
        if self._min_size is None:
            self._min_size = 0
            self._min_size = sum(f.value.min_size for f in self.fields)
        return self._min_size


class NamedTypes:
    """Writes each named type in full the first time, by name afterwards."""

    def __init__(self) -> None:
        self.defined: set[str] = set()

    def named(self, definition: dict) -> Any:
        """An enum or fixed type: its definition once, then its full name."""
        name = definition["name"]
        namespace = definition.get("namespace")
        full_name = f"{namespace}.{name}" if namespace else name
        if full_name in self.defined:
            return full_name
        self.defined.add(full_name)
        return definition

    def record(self, record: RecordPlan) -> Any:
        if record.full_name in self.defined:
            return record.full_name
        self.defined.add(record.full_name)
        avro: dict[str, Any] = {"type": "record", "name": record.name}
        if record.namespace:
            avro["namespace"] = record.namespace
        avro["fields"] = [field_schema(f, self) for f in record.fields]
        return avro


def field_schema(plan: FieldPlan, names: NamedTypes) -> dict:
    avro = {"name": plan.avro_name, "type": plan.value.avro_type(names)}
    if plan.avro_default is not NO_DEFAULT:
        avro["default"] = plan.avro_default
    return avro


def avro_schema(root: RecordPlan) -> dict:
    return NamedTypes().record(root)


def without_logical_types(avro: Any) -> Any:
    """The schema with every logicalType removed: fastavro then decodes raw values."""
    if isinstance(avro, dict):
        return {key: without_logical_types(value) for key, value in avro.items() if key != "logicalType"}
    if isinstance(avro, list):
        return [without_logical_types(item) for item in avro]
    return avro


def record_load_input(record: RecordPlan, raw: dict) -> dict:
    """marshmallow's load input for a record fastavro decoded without logical types."""
    return {
        plan.avro_name: plan.value.load_input(raw[plan.avro_name])
        for plan in record.fields
        if not plan.field.dump_only
    }


def json_default(datum: Any) -> Any:
    """An Avro value (as fastavro writes it) as the JSON of a schema default:
    bytes and fixed as strings of code points 0-255, one per byte."""
    if isinstance(datum, bytes):
        return datum.decode("latin-1")
    if isinstance(datum, dict):
        return {key: json_default(value) for key, value in datum.items()}
    if isinstance(datum, list):
        return [json_default(value) for value in datum]
    return datum


def record_default_datum(record: RecordPlan, obj: Any, path: str) -> dict:
    """The Avro record for a default given to a Nested field (a dict, or an
    object with the attributes): each field's value converted as its writer
    converts it; a value the default leaves out is the field's own default,
    else null where the field allows it, as the writer fills it in."""
    datum = {}
    for plan in record.fields:
        value = missing if plan.field.load_only else plan.field.get_value(obj, plan.dump_key)
        if value is missing:
            if plan.dump_default is not missing and not callable(plan.dump_default):
                value = plan.dump_default
            elif plan.dump_default is missing and plan.default_value is not NO_DEFAULT:
                value = plan.default_value
            elif plan.dump_default is missing and plan.value.takes_null:
                value = None
            else:
                raise CompileError(
                    f"field {path!r}: the default {obj!r} has no value for {plan.dump_key!r} "
                    "(and that field has no constant default); give one"
                )
        datum[plan.avro_name] = plan.value.default_datum(value)
    return datum


def record_dump_datum(record: RecordPlan, dumped: dict) -> dict:
    """The Avro record fastavro writes (without logical types) for marshmallow's dump output.

    A field the output leaves out (load_only, or no value and no default)
    is written as the compiled writer writes it: its default, else null.
    """
    datum = {}
    for plan in record.fields:
        key = plan.avro_name
        try:
            if key in dumped:
                datum[key] = plan.value.dump_datum(dumped[key])
            elif plan.dump_default is not missing:
                default = plan.dump_default() if callable(plan.dump_default) else plan.dump_default
                datum[key] = plan.value.dump_datum(plan.field._serialize(default, plan.name, None))
            elif plan.default_datum is not NO_DEFAULT:
                datum[key] = plan.default_datum
            elif plan.value.takes_null:
                datum[key] = None
            else:
                raise ValidationError(plan.field.error_messages["required"])
        except (ValidationError, DumpError) as error:
            raise ValidationError({key: error.messages}) from None
    return datum
