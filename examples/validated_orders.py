"""Validation and hooks on the compiled path: marshmallow's results and errors, from Avro bytes.

Run: python examples/validated_orders.py
"""

import dataclasses

from marshmallow import ValidationError, fields, post_load, validate, validates_schema

from roastedavro import CompiledSchema, CompileFlags, DecodeError


@dataclasses.dataclass
class Order:
    symbol: str
    side: str
    qty: int
    price: float


class OrderSchema(CompiledSchema):
    symbol = fields.String(validate=validate.Regexp(r"^[A-Z]{1,5}$"))
    side = fields.String(validate=validate.OneOf(["buy", "sell"]))
    qty = fields.Integer(validate=validate.Range(min=1))
    price = fields.Float(validate=validate.Range(min=0, min_inclusive=False))

    @validates_schema
    def notional_limit(self, data, **kwargs):
        if data["qty"] * data["price"] > 1_000_000:
            raise ValidationError("notional above 1,000,000", "qty")

    @post_load
    def make_order(self, data, **kwargs):
        return Order(**data)


def main():
    schema = OrderSchema().compile()
    data = schema.dump_compiled({"symbol": "AAPL", "side": "buy", "qty": 100, "price": 187.25})
    print("loaded:", schema.load_compiled(data))

    # the producer wrote values this schema refuses: marshmallow's own error
    bad = schema.dump_compiled({"symbol": "aapl", "side": "hold", "qty": 10_000, "price": 187.25})
    try:
        schema.load_compiled(bad)
    except ValidationError as error:
        print("refused:", error.messages)
        try:
            schema.load(schema.dump({"symbol": "aapl", "side": "hold", "qty": 10_000, "price": 187.25}))
        except ValidationError as reference:
            print("same as marshmallow's load:", reference.messages == error.messages)

    # bytes that are not an OrderSchema record at all
    try:
        schema.load_compiled(data[:-3])
    except DecodeError as error:
        print("malformed:", error)

    # trusted input: validators skipped, post_load still builds the Order
    trusted = OrderSchema().compile(CompileFlags(validate=False))
    print("trusted:", trusted.load_compiled(bad))


if __name__ == "__main__":
    main()
