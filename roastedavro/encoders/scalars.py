"""Encoders for marshmallow's scalar fields: String, Integer, Float, Boolean."""

from __future__ import annotations

from marshmallow import fields

from roastedavro.encoders.base import Encoder


class StringEncoder(Encoder):
    field_class = fields.String
    avro_types = ("string",)

    def emit_write(self, fn, value):
        self.emit_write_value(fn, value, "write_str_value", str)

    def emit_read(self, fn, target):
        fn.line(f"{target} = read_str(r)")
        self.emit_deserialize(fn, target)


class IntegerEncoder(Encoder):
    field_class = fields.Integer
    avro_types = ("long", "int")

    def __init__(self, field, visitor, path):
        super().__init__(field, visitor, path)
        if getattr(field, "as_string", False):
            raise self.error(
                "as_string=True dumps text; declare a String field, or keep the "
                "number on the wire without as_string"
            )

    def emit_write(self, fn, value):
        writer = "write_int_value" if self.avro == "int" else "write_long_value"
        self.emit_write_value(fn, value, writer, int)

    def emit_read(self, fn, target):
        read = "read_int(r)" if self.avro == "int" else "read_long(r)"
        fn.line(f"{target} = {read}")
        self.emit_deserialize(fn, target)


class FloatEncoder(Encoder):
    field_class = fields.Float
    avro_types = ("double", "float")

    def __init__(self, field, visitor, path):
        super().__init__(field, visitor, path)
        if getattr(field, "as_string", False):
            raise self.error("as_string=True dumps text; declare a String field instead")

    @property
    def min_size(self):
        return 4 if self.avro == "float" else 8

    def emit_write(self, fn, value):
        writer = "write_float_value" if self.avro == "float" else "write_double_value"
        self.emit_write_value(fn, value, writer, float)

    def emit_read(self, fn, target):
        number = fn.c_local("double", "number")
        read = "read_float" if self.avro == "float" else "read_double"
        fn.line(f"{number} = {read}(r)")
        if not self.field.allow_nan:
            # marshmallow's load refuses these; it reports the error
            fn.line(f"if not isfinite({number}):")
            fn.line("    r.invalid = 1")
        fn.line(f"{target} = {number}")
        self.emit_deserialize(fn, target)


class BooleanEncoder(Encoder):
    field_class = fields.Boolean
    avro_types = ("boolean",)

    def emit_write(self, fn, value):
        self.emit_write_value(fn, value, "write_boolean_value", bool)

    def dump_datum(self, dumped):
        # marshmallow 4's Boolean dumps values unchanged; the writer writes
        # their truth value (roastedavro._support.serialize_value)
        return dumped if dumped is None or type(dumped) is bool else bool(dumped)

    def default_datum(self, value):
        # a default is the value load returns, so not converted: the schema
        # refuses one that is not a boolean
        return value

    def emit_read(self, fn, target):
        fn.line(f"{target} = read_boolean(r)")
        self.emit_deserialize(fn, target)


class NumberEncoder(FloatEncoder):
    """marshmallow 3's concrete ``Number`` field (a float); abstract in marshmallow 4."""

    field_class = fields.Number  # type: ignore[assignment]  # Float's base class

    def emit_read(self, fn, target):
        # Number has no allow_nan: marshmallow loads NaN as it is
        read = "read_float" if self.avro == "float" else "read_double"
        fn.line(f"{target} = {read}(r)")
        self.emit_deserialize(fn, target)
