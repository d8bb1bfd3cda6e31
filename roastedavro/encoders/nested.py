"""Nested schemas: Avro named records, written by one function per record."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from marshmallow import fields
from marshmallow.decorators import PRE_DUMP

from roastedavro.encoders.base import Encoder
from roastedavro.encoders.collections import each_in_path, emit_array_read, emit_array_write
from roastedavro.hooks import LoadHooks, PreDump, hook_tags
from roastedavro.plans import record_default_datum, record_dump_datum, record_load_input


class RecordValueEncoder(Encoder):
    """One value of a record type: a call to that record's function.

    Not registered for a field class; the visitor makes one for every
    Nested field (and for each item of ``Nested(..., many=True)``).
    """

    def __init__(self, field, visitor, path, record):
        self.record = record
        super().__init__(field, visitor, path)

    def choose_avro_type(self, override):
        return self.record.full_name

    def avro_type(self, names):
        return names.record(self.record)

    @property
    def min_size(self):
        return self.record.min_size()

    def load_input(self, raw):
        return record_load_input(self.record, raw)

    def dump_datum(self, dumped):
        return record_dump_datum(self.record, dumped)

    def default_datum(self, value):
        return record_default_datum(self.record, value, self.path)

    def emit_write(self, fn, value):
        fn.line(f"self.write_{self.record.ident}(w, {value}, depth + 1)")

    def emit_read(self, fn, target):
        fn.line(f"{target} = self.{fn.record_reader(self.record)}(r, depth + 1)")


class NestedEncoder(Encoder):
    field_class = fields.Nested

    @classmethod
    def specialized(cls, field):
        from roastedavro.encoders.unions import OneOfSchemaEncoder, is_one_of_schema

        return OneOfSchemaEncoder if is_one_of_schema(field.schema) else cls

    def __init__(self, field, visitor, path):
        self.field = field
        self.path = path
        if field.metadata.get("avro") is not None:
            raise self.error("a nested schema is always an Avro record; remove metadata 'avro'")
        record = visitor.visit_record(field.schema, path, visitor.current_namespace)
        self.item = RecordValueEncoder(field, visitor, path, record)
        self.items = visitor.plain_value(self.item)
        self.many = bool(field.many)
        # marshmallow loads a nested value with the nested schema's load:
        # its @validates, @validates_schema and post_load run on the value
        self.load_hooks = LoadHooks(field.schema)
        self.pre_dump = PRE_DUMP in hook_tags(field.schema)
        super().__init__(field, visitor, path)

    def choose_avro_type(self, override):
        return "array" if self.many else self.item.avro

    @property
    def min_size(self):
        return 1 if self.many else self.item.min_size

    def avro_type(self, names):
        record = self.item.avro_type(names)
        return {"type": "array", "items": record} if self.many else record

    def describe(self):
        return f"array<{self.item.record.full_name}>" if self.many else self.item.record.full_name

    def load_input(self, raw):
        if self.many:
            return [self.item.load_input(item) for item in raw]
        return self.item.load_input(raw)

    def dump_datum(self, dumped):
        if self.many:
            return each_in_path(self.item.dump_datum, dumped)
        return self.item.dump_datum(dumped)

    def default_datum(self, value):
        if self.pre_dump:
            # as the writer does, before the records are written
            value = PreDump(self.field.schema)(value, self.many)
        if not self.many:
            return self.item.default_datum(value)
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise self.error(f"the default {value!r} is not a list (many=True)")
        return [self.item.default_datum(item) for item in value]

    def emit_write(self, fn, value):
        if self.pre_dump:
            hooks = fn.bind(PreDump(self.field.schema), "pre_dump")
            fn.line(f"{value} = {hooks}({value}, {self.many})")
        if self.many:
            emit_array_write(fn, value, self.items)
        else:
            self.item.emit_write(fn, value)

    def emit_read(self, fn, target):
        if not self.load_hooks or fn.discarding:
            self._emit_records_read(fn, target)
            return
        # the loaded value goes through the nested schema's hooks before it
        # is stored: a local, not a dict item read back
        value = target if target.isidentifier() else fn.c_local("object", "loaded")
        self._emit_records_read(fn, value)
        hooks = fn.bind(self.load_hooks, "load_hooks")
        # not on a record already known to be invalid: its values may be
        # placeholders, and marshmallow's load builds the error anyway
        fn.line("if not r.invalid:")
        fn.line(f"    {value} = {hooks}({value}, {self.many}, self.validate)")
        fn.line(f"    if {value} is INVALID:")
        fn.line("        r.invalid = 1")
        if value != target:
            fn.line(f"{target} = {value}")

    def _emit_records_read(self, fn, target):
        if self.many:
            emit_array_read(fn, target, self.items)
        else:
            self.item.emit_read(fn, target)
