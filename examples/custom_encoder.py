"""User-defined fields with their own encoders: money as integer cents, and
an IPv4 address as the four bytes of an Avro fixed(4).

Run: python examples/custom_encoder.py
"""

import ipaddress
from decimal import Decimal

from marshmallow import ValidationError, fields

from roastedavro import CompiledSchema, Encoder, register_encoder


class Cents(fields.Field):
    """A Decimal amount of money, dumped as an integer number of cents."""

    def _serialize(self, value, attr, obj, **kwargs):
        if value is None:
            return None
        cents = Decimal(value) * 100
        if cents != cents.to_integral_value():
            raise ValidationError("Amounts have at most two decimal places.")
        return int(cents)

    def _deserialize(self, value, attr, data, **kwargs):
        return Decimal(value) / 100


def cents_to_decimal(cents):
    return Decimal(cents) / 100


@register_encoder
class CentsEncoder(Encoder):
    """Cents as an Avro long (or int, with metadata={"avro": "int"}).

    An encoder says what the field's Avro type is and how a value becomes
    that type's Avro value and back; the Avro type's own generated code
    writes and reads it (range checks and errors included)."""

    field_class = Cents
    avro_types = ("long", "int")

    def emit_to_avro(self, fn, value):
        # the field's own _serialize turns the Decimal into cents (errors
        # become ValidationErrors naming the field)
        field = fn.bind(self.field, "field")  # a Python object the codec holds
        fn.line(f"{value} = convert({field}, {value}, obj, int)")

    def emit_from_avro(self, fn, target):
        from_cents = fn.bind(cents_to_decimal, "from_cents")
        fn.line(f"{target} = {from_cents}({target})")


class IPv4FixedEncoder(Encoder):
    """IPv4 addresses as an Avro fixed(4) named "ipv4": 4 bytes instead of up to 16."""

    field_class = fields.IPv4
    avro_types = ("fixed",)
    min_size = 4

    def avro_type(self, names):
        # a named type: defined at its first use, referenced by name after
        return names.named({"type": "fixed", "name": "ipv4", "size": 4})

    def describe(self):
        return "fixed(4) ipv4"

    def emit_to_avro(self, fn, value):
        field = fn.bind(self.field, "field")
        packed = fn.bind(packed_ipv4, "packed")
        fn.line(f"{value} = {packed}({field}, {value})")

    def emit_from_avro(self, fn, target):
        address = fn.bind(ipaddress.IPv4Address, "address")
        fn.line(f"{target} = {address}({target})")

    def load_input(self, raw):
        return str(ipaddress.IPv4Address(raw))


def packed_ipv4(field, value):
    """The 4 bytes of an address; other values as marshmallow's IPv4 field reads them."""
    if type(value) is not ipaddress.IPv4Address:
        value = field._deserialize(str(value), None, None)
    return value.packed


class Payment(CompiledSchema):
    class Meta:
        # for this schema only; register_encoder would change IPv4 fields everywhere
        avro_encoders = [IPv4FixedEncoder]

    payer = fields.String()
    amount = Cents()
    fee = Cents(allow_none=True, metadata={"avro": "int"})
    client = fields.IPv4(allow_none=True)


def main():
    schema = Payment()
    print(schema.avro_schema())
    data = schema.dump_compiled(
        {
            "payer": "ada",
            "amount": Decimal("12.34"),
            "fee": None,
            "client": ipaddress.IPv4Address("192.0.2.7"),
        }
    )
    print(data)
    print(schema.load_compiled(data))


if __name__ == "__main__":
    main()
