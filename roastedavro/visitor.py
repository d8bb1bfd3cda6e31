"""Walks a schema's fields once and turns them into a plan for code generation.

Each field is dispatched to the encoder registered for its class (exact
class first, then the nearest class in its MRO, then the fallback). Nested
schemas become named Avro records; a schema met again while it is being
visited (a recursive reference) becomes a reference to the same record and
to the same generated function.
"""

from __future__ import annotations

import math
from typing import Any

import fastavro
from marshmallow import Schema, fields, missing

from roastedavro.avro.types import PRIMITIVE_TYPES
from roastedavro.codetext import RESERVED
from roastedavro.encoders import Encoder, EncoderRegistry, FallbackEncoder
from roastedavro.errors import CompileError
from roastedavro.hooks import hook_tags, load_hooks_fallback
from roastedavro.validators import has_validation
from roastedavro.names import FULL_NAME, NAME_RULE, check_avro_type, identifier, is_name
from roastedavro.plans import (  # noqa: F401  (public here too)
    NO_DEFAULT,
    FieldPlan,
    NamedTypes,
    RecordPlan,
    ValuePlan,
    avro_schema,
    field_schema,
    json_default,
    record_default_datum,
    record_dump_datum,
    record_load_input,
    without_logical_types,
)


def meta_option(schema: Schema, name: str, inherited: bool) -> Any:
    """An ``avro_*`` option from the schema's ``class Meta``.

    The record name is not inherited (a subclass is another record); the
    namespace is.
    """
    if inherited:
        return getattr(getattr(schema, "Meta", None), name, None)
    meta = type(schema).__dict__.get("Meta")
    return getattr(meta, name, None) if meta is not None else None


class SchemaVisitor:
    def __init__(self, registry: EncoderRegistry, fallback: type[Encoder] = FallbackEncoder):
        self.registry = registry
        self.fallback = fallback
        self.records: dict[tuple, RecordPlan] = {}
        self._by_name: dict[str, tuple] = {}
        self._idents: set[str] = set()
        self._namespaces: list[str | None] = []
        # why load runs through marshmallow: (where, what) pairs; what is a
        # hook (pre_load, or a hook of a Pluck's schema) or "dotted attribute"
        self.load_needs_marshmallow: list[tuple[str, str]] = []
        self.dump_needs_marshmallow: list[str] = []
        #: the root schema's own pre_dump hooks run before the compiled writer
        self.root_pre_dump = False
        self.records_checked = 0
        #: a union of several records is declared (encoders/unions.py)
        self.record_unions = False

    # -- records ------------------------------------------------------------

    def visit_record(
        self, schema: Schema, path: str = "", enclosing_namespace: str | None = None
    ) -> RecordPlan:
        # Two uses of one schema class with the same fields are one Avro
        # record; the key also stops recursion at the second visit.
        key = (type(schema), tuple(schema.fields))
        record = self.records.get(key)
        if record is not None:
            return record
        name = meta_option(schema, "avro_name", inherited=False) or type(schema).__name__
        # as in Avro itself, a record without a namespace of its own takes
        # the namespace of the record it is defined in
        namespace = meta_option(schema, "avro_namespace", inherited=True) or enclosing_namespace
        where = path or type(schema).__name__
        if not is_name(name):
            raise CompileError(
                f"{where}: {name!r} is not a valid Avro record name ({NAME_RULE}); set Meta.avro_name"
            )
        if name in PRIMITIVE_TYPES:
            raise CompileError(
                f"{where}: {name!r} is an Avro primitive type name; a record "
                "cannot take it (readers would read it as the primitive). "
                "Set Meta.avro_name"
            )
        if namespace is not None and (type(namespace) is not str or not FULL_NAME.match(namespace)):
            raise CompileError(
                f"{where}: {namespace!r} is not a valid Avro namespace (dot-separated names: {NAME_RULE})"
            )
        record = RecordPlan(schema, name, namespace, self._record_ident(name, namespace))
        if record.full_name in self._by_name:
            raise CompileError(
                f"{where}: two different records would both be named {record.full_name!r} "
                "(the same schema with different fields, or two schemas with one name); "
                "give one of them another Meta.avro_name"
            )
        self._by_name[record.full_name] = key
        self.records[key] = record
        self._namespaces.append(namespace)
        self.check_schema(schema, where)
        avro_names = set()
        for name, field in schema.fields.items():
            plan = self.visit_record_field(name, field, f"{path}.{name}" if path else name)
            if plan.avro_name in avro_names:
                raise CompileError(f"{where}: two fields are written as {plan.avro_name!r}")
            avro_names.add(plan.avro_name)
            record.fields.append(plan)
        self._namespaces.pop()
        return record

    def _record_ident(self, name: str, namespace: str | None) -> str:
        """The name of a record's generated functions (write_<ident>, read_<ident>)."""
        ident = identifier(name)
        if ident in self._idents and namespace:
            ident = identifier(f"{namespace}_{name}")
        base, n = ident, 2
        # never write_long, read_str, ...: the runtime's and skeleton's names
        while (
            ident in self._idents
            or f"write_{ident}" in RESERVED
            or f"read_{ident}" in RESERVED
            or ident in RESERVED
        ):
            ident, n = f"{base}{n}", n + 1  # type: ignore[assignment]  # an identifier too
        self._idents.add(ident)
        return ident

    def check_schema(self, schema: Schema, where: str, compiled_hooks: bool = True) -> None:
        """Note which of the schema's hooks the compiled codec cannot run itself.

        For records, ``@validates``, ``@validates_schema`` and ``post_load``
        run on the compiled result and ``pre_dump`` before the compiled
        writer (see hooks.py); a Pluck's schema keeps them on marshmallow's
        path, and ``post_dump`` always is.
        """
        tags = hook_tags(schema)
        load_tags = tags & {"pre_load", "post_load", "validates", "validates_schema"}
        dump_tags = tags & {"pre_dump", "post_dump"}
        fallback = load_hooks_fallback(schema)
        if fallback:
            self.load_needs_marshmallow.append((where, fallback))
        elif load_tags and not compiled_hooks:
            self.load_needs_marshmallow.extend((where, tag) for tag in sorted(load_tags))
        if dump_tags == {"pre_dump"} and compiled_hooks:
            # the root's run before the writer; a nested schema's, in it
            if not self.records_checked:
                self.root_pre_dump = True
        elif dump_tags:
            self.dump_needs_marshmallow.append(f"{where}: {', '.join(sorted(dump_tags))}")
        self.records_checked += 1
        if type(schema).get_attribute is not Schema.get_attribute:
            self.dump_needs_marshmallow.append(f"{where}: get_attribute")

    # -- fields -------------------------------------------------------------

    def visit_record_field(self, name: str, field: fields.Field, path: str) -> FieldPlan:
        avro_name = field.data_key or name
        if not is_name(avro_name):
            raise CompileError(
                f"field {path!r}: {avro_name!r} is not a valid Avro field name "
                "(letters, digits and _, not starting with a digit); set data_key"
            )
        attribute = field.attribute or name
        value = self.visit_value(field, path)
        plan = FieldPlan(name, avro_name, attribute, attribute, field, value)
        plan.dump_default = field.dump_default
        if "." in attribute:
            # marshmallow nests the loaded value under each part of the path
            self.load_needs_marshmallow.append((path, "dotted attribute"))
        self._set_avro_default(plan, path)
        if field.load_only and not (
            plan.value.takes_null or plan.avro_default is not NO_DEFAULT or plan.dump_default is not missing
        ):
            # marshmallow's dump leaves it out, but every Avro record carries it
            raise CompileError(
                f"field {path!r}: a load_only field is written as its default or null; "
                "give it a load_default or allow_none=True"
            )
        return plan

    def _set_avro_default(self, plan: FieldPlan, path: str) -> None:
        """The field's Avro default, from its load_default (else dump_default).

        Both hold the deserialized value (a datetime, a Decimal, an enum
        member): it is converted to its Avro value as the field's writer
        converts it (``Encoder.default_datum``), so readers of data without
        the field (schema evolution) read back the same value. A callable
        default has no Avro default. A load_default must also be the form
        load returns (``Encoder.load_default_datum``: a Pluck's is the dict),
        since marshmallow's ``load({})`` returns it as given.
        """
        field = plan.field
        default = field.load_default
        loading = True
        if default is missing or callable(default):
            default, loading = field.dump_default, False
        elif (
            field.dump_default is not missing
            and field.dump_default is not None
            and (not callable(field.dump_default))
        ):
            # not the Avro default, but written for a missing value
            plan.value.encoder.check_dump_default(field.dump_default)
        if default is missing or callable(default):
            return
        if default is None:
            if plan.value.encoder.avro == "null":
                plan.avro_default = plan.default_value = plan.default_datum = None
                return
            # a union of records has null as its own first branch (holds_null)
            if not plan.value.takes_null:
                raise CompileError(f"field {path!r}: default None needs allow_none=True")
            plan.avro_default = plan.default_value = plan.default_datum = None
            return
        if isinstance(default, float) and not math.isfinite(default):
            raise CompileError(f"field {path!r}: default {default!r} cannot be written in an Avro schema")
        encoder = plan.value.encoder
        datum = encoder.load_default_datum(default) if loading else encoder.default_datum(default)
        # a non-null default goes in the first branch: [T, "null"]
        plan.value.null_first = False
        branch = without_logical_types(encoder.avro_type(NamedTypes()))
        try:
            valid = fastavro.validation.validate(datum, fastavro.parse_schema(branch), raise_errors=False)
        except Exception:
            valid = False
        if not valid:
            raise CompileError(
                f"field {path!r}: default {default!r} is not a valid Avro {encoder.describe()}"
            )
        plan.avro_default = json_default(datum)
        plan.default_value = default
        plan.default_datum = datum

    def visit_value(self, field: fields.Field, path: str) -> ValuePlan:
        override = field.metadata.get("avro")
        if isinstance(override, (dict, list)):
            # declared Avro types are checked before any encoder sees them
            check_avro_type(override, f"field {path!r}")
        if type(field).serialize is not fields.Field.serialize or (
            type(field).get_value is not fields.Field.get_value
        ):
            self.dump_needs_marshmallow.append(f"{path}: {type(field).__name__}.serialize")
        encoder_class = (self.registry.lookup(type(field)) or self.fallback).specialized(field)
        encoder = encoder_class(field, self, path)
        nullable = bool(field.allow_none) and not getattr(encoder, "never_null", False)
        validated = has_validation(field) and not getattr(encoder, "validates_itself", False)
        return ValuePlan(encoder, nullable=nullable, validated_by=field if validated else None)

    def claim_name(self, name: str, owner: Any, where: str) -> str:
        """Register a named Avro type (enum, fixed) in the current namespace.

        The same owner may use a name again (it becomes a reference); two
        different types with one name are an error.
        """
        namespace = self.current_namespace
        full_name = f"{namespace}.{name}" if namespace else name
        known = self._by_name.get(full_name)
        if known is not None and known != owner:
            raise CompileError(f"field {where!r}: another type is already named {full_name!r}")
        self._by_name[full_name] = owner
        return full_name

    @property
    def current_namespace(self) -> str | None:
        return self._namespaces[-1] if self._namespaces else None

    def plain_value(self, encoder: Encoder) -> ValuePlan:
        return ValuePlan(encoder)
