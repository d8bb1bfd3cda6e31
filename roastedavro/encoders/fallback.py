"""The encoder for field classes that have none of their own.

Raw, Function, Method and user fields without a registered encoder compile
when ``metadata={"avro": <Avro type>}`` says what goes on the wire: the value
goes through the field's own marshmallow ``serialize``/``deserialize`` and is
written and read by AvroCodec's generated code for that type (any Avro type,
unions of records included), with fastavro's value conventions: records as
dicts, enums as str, a union's branch chosen as fastavro chooses it, or
named with ``"-type"`` or tuple notation. The field's own serialize and
deserialize cost a Python-level call per value: register an encoder for speed.
"""

from __future__ import annotations

import io
import json

import fastavro

from roastedavro._runtime import check_generic_value
from roastedavro.avro.parse import parse_schema
from roastedavro.encoders.base import Encoder
from roastedavro.errors import SchemaError
from roastedavro.flags import CompileFlags
from roastedavro.names import min_encoded_size
from roastedavro.plans import without_logical_types


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
                "roastedavro.register_encoder (see docs/encoders.md)"
            )
        try:
            #: the declared type as roastedavro's schema model (avro.types.Schema)
            self.declared = parse_schema(override)
        except (SchemaError, TypeError, ValueError) as error:
            raise self.error(f"metadata avro={override!r} is not a valid Avro type: {error}") from None
        return override

    @property
    def min_size(self):
        # 0 for null and for records of only nulls: arrays of them are valid
        return min_encoded_size(self.avro)

    def describe(self):
        from roastedavro.avro.types import describe

        return f"{describe(self.declared.root)} (as AvroCodec writes it)"

    def dump_datum(self, dumped):
        # marshmallow's dump output goes to fastavro's writer as it is: the
        # codec's writer checks its nesting first, and so does this path
        # (at the default max_depth: the encoder does not see the flags)
        check_generic_value(dumped, CompileFlags.max_depth)
        return dumped

    def default_datum(self, value):
        datum = super().default_datum(value)
        if '"logicalType"' not in json.dumps(self.avro):
            return datum
        # a declared logical type takes its Python values (a datetime for a
        # timestamp), with fastavro's conventions, as the writer does: the
        # default is fastavro's Avro value of it, and must read back as itself
        try:
            out = io.BytesIO()
            fastavro.schemaless_writer(out, fastavro.parse_schema(self.avro), value)
            data = out.getvalue()
            datum = fastavro.schemaless_reader(
                io.BytesIO(data), fastavro.parse_schema(without_logical_types(self.avro))
            )
            loaded = fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(self.avro))
        except Exception as error:
            raise self.error(
                f"the default {value!r} cannot be written as {self.describe()}: {error}"
            ) from None
        if loaded != value:
            raise self.error(
                f"the default {value!r} does not read back as itself from "
                f"{self.describe()} (it loads as {loaded!r}); "
                f"write load_default={loaded!r}"
            )
        return datum

    def fetch(self, fn, dump_key):
        # Field.serialize: the field's own lookup (Function and Method compute
        # their value from the object), default and conversion
        return f"serialize_field({fn.bind(self.field, 'field')}, obj)"

    # the value is written and read as the declared type by the Avro type's
    # own code (Encoder.emit_write/emit_read); "-type" and tuple notation name
    # its named types as fastavro does inside the record's namespace

    def emit_from_avro(self, fn, target):
        fn.line(f"{target} = deserialize_field({fn.bind(self.field, 'field')}, {target})")
        fn.flag_invalid(target)
