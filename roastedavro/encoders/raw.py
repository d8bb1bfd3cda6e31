"""Raw: whatever the value is, written as the Avro type metadata names.

Primitive and plain fixed types are written and read in C with the field's
own conversions; any other Avro type (unions, records, logical types, ...)
goes through AvroCodec's generated code, as for fields without an encoder.
"""

from __future__ import annotations

from marshmallow import fields

from roastedavro.encoders.fallback import FallbackEncoder
from roastedavro.names import min_encoded_size

# Avro primitive -> (runtime writer, reader expression)
DIRECT = {
    "bytes": ("write_bytes_value", "read_bytes(r)"),
    "string": ("write_str_value", "read_str(r)"),
    "long": ("write_long_value", "read_long(r)"),
    "int": ("write_int_value", "read_int(r)"),
    "double": ("write_double_value", "read_double(r)"),
    "float": ("write_float_value", "read_float(r)"),
    "boolean": ("write_boolean_value", "read_boolean(r)"),
}


class RawEncoder(FallbackEncoder):
    field_class = fields.Raw
    never_null = False
    accepts_none = False

    def choose_avro_type(self, override):
        avro = super().choose_avro_type(override)
        self.fixed_size = 0
        if isinstance(avro, dict) and avro.get("type") == "fixed" and "logicalType" not in avro:
            self.fixed_size = avro["size"]
        self.direct = avro if isinstance(avro, str) and avro in DIRECT else None
        if self.direct is None and not self.fixed_size:
            # any other Avro type: AvroCodec's code, null included
            self.never_null = self.accepts_none = True
        return avro

    @property
    def min_size(self):
        return min_encoded_size(self.avro)

    def avro_type(self, names):
        return names.named(self.avro) if self.fixed_size else self.avro

    def describe(self):
        if self.fixed_size:
            return f"fixed({self.fixed_size}) {self.avro['name']}"
        return self.direct or super().describe()

    def fetch(self, fn, dump_key):
        return None if (self.direct or self.fixed_size) else super().fetch(fn, dump_key)

    def emit_write(self, fn, value):
        field = fn.bind(self.field, "field")
        if self.fixed_size:
            size = fn.int(self.fixed_size, "fixed size")
            fn.line(f"write_fixed_value(w, {value}, {field}, obj, {size})")
        elif self.direct:
            fn.line(f"{DIRECT[self.direct][0]}(w, {value}, {field}, obj)")
        else:
            super().emit_write(fn, value)

    def emit_read(self, fn, target):
        if self.fixed_size:
            fn.line(f"{target} = read_fixed(r, {fn.int(self.fixed_size, 'fixed size')})")
        elif self.direct:
            fn.line(f"{target} = {DIRECT[self.direct][1]}")
        else:
            super().emit_read(fn, target)
        if self.direct or self.fixed_size:
            self.emit_deserialize(fn, target)
