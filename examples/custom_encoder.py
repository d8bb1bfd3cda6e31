"""A user-defined field with its own encoder: money as integer cents on the wire.

Run: python examples/custom_encoder.py
"""

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
    """Cents as an Avro long (or int, with metadata={"avro": "int"})."""

    field_class = Cents
    avro_types = ("long", "int")

    def emit_write(self, fn, value):
        field = fn.bind(self.field, "field")
        # the field's own _serialize turns the Decimal into cents (errors
        # become ValidationErrors naming the field); then a C-level write
        fn.line(f"{value} = convert({field}, {value}, obj, int)")
        writer = "write_int_value" if self.avro == "int" else "write_long_value"
        fn.line(f"{writer}(w, {value}, {field}, obj)")

    def emit_read(self, fn, target):
        from_cents = fn.bind(cents_to_decimal, "from_cents")
        read = "read_int" if self.avro == "int" else "read_long"
        fn.line(f"{target} = {from_cents}({read}(r))")


class Payment(CompiledSchema):
    payer = fields.String()
    amount = Cents()
    fee = Cents(allow_none=True, metadata={"avro": "int"})


def main():
    schema = Payment()
    print(schema.avro_schema())
    data = schema.dump_compiled({"payer": "ada", "amount": Decimal("12.34"), "fee": None})
    print(data)
    print(schema.load_compiled(data))


if __name__ == "__main__":
    main()
