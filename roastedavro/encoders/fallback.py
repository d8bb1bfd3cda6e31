"""The encoder for field classes that have none of their own.

Raw, Function, Method and user fields without a registered encoder compile
when ``metadata={"avro": <Avro type>}`` says what goes on the wire: the value
goes through the field's own marshmallow ``serialize``/``deserialize`` and is
written and read by fastavro for that type. Correct for any Avro type, but a
Python-level call per value: register an encoder for speed.
"""

from __future__ import annotations

from roastedavro._runtime import GenericType, check_generic_value
from roastedavro.encoders.base import Encoder
from roastedavro.flags import CompileFlags
from roastedavro.names import min_encoded_size


class FallbackEncoder(Encoder):
    # the Avro type is exactly the one given, null or not
    never_null = True
    accepts_none = True
    # emit_read calls the field's own deserialize, validators included
    validates_itself = True

    def choose_avro_type(self, override):
        if override is None:
            raise self.error(
                "no encoder is registered for this field class. Say what goes on the wire "
                "with metadata={'avro': <Avro type>} (the value then goes through the "
                "field's own serialize/deserialize), or register an encoder with "
                "roastedavro.register_encoder (see Encoder in the README)"
            )
        try:
            self.generic = GenericType(override)
        except Exception as error:
            raise self.error(f"metadata avro={override!r} is not a valid Avro type: {error}")
        return override

    @property
    def min_size(self):
        # 0 for null and for records of only nulls: arrays of them are valid
        return min_encoded_size(self.avro)

    def describe(self):
        return f"{super().describe()} (through marshmallow and fastavro)"

    def dump_datum(self, dumped):
        # marshmallow's dump output goes to fastavro's writer as it is: the
        # codec's writer checks its nesting first, and so does this path
        # (at the default max_depth: the encoder does not see the flags)
        check_generic_value(dumped, CompileFlags.max_depth)
        return dumped

    def fetch(self, fn, dump_key):
        # Field.serialize: the field's own lookup (Function and Method compute
        # their value from the object), default and conversion
        return f"serialize_field({fn.bind(self.field, 'field')}, obj)"

    def emit_write(self, fn, value):
        fn.line(f"write_generic(w, {value}, {fn.bind(self.generic, 'avro')}, self.max_depth)")

    def emit_read(self, fn, target):
        avro = fn.bind(self.generic, "avro")
        fn.line(f"{target} = read_generic(r, {avro}, self.max_depth, self.max_items)")
        fn.line(f"{target} = deserialize_field({fn.bind(self.field, 'field')}, {target})")
        fn.flag_invalid(target)
