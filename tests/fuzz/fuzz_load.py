"""Coverage-guided fuzzing of load_compiled with atheris (long runs, on demand).

    pip install atheris
    python tests/fuzz/fuzz_load.py -max_total_time=600 -rss_limit_mb=2048

Every input must decode to a value or raise roastedavro.DecodeError (or
marshmallow's ValidationError for a decoded value marshmallow refuses).
Anything else (another exception, a crash, a hang, runaway memory) is a
finding: atheris stops and saves the input.
"""

import datetime
import decimal
import enum
import random
import sys

import atheris

with atheris.instrument_imports():
    from marshmallow import ValidationError, fields, post_load, validate, validates_schema

    from roastedavro import CompiledSchema, DecodeError


class Side(enum.Enum):
    BUY = "b"
    SELL = "s"


class Leg(CompiledSchema):
    price = fields.Decimal(places=4, metadata={"precision": 18}, validate=validate.Range(min=-(10**6)))
    side = fields.Enum(Side)
    at = fields.DateTime()

    @post_load
    def make(self, data, **kwargs):
        return (data["side"], data["price"], data["at"])


class Order(CompiledSchema):
    id = fields.UUID()
    symbol = fields.String(validate=validate.Length(max=12))
    legs = fields.List(fields.Nested(Leg))
    attrs = fields.Dict(keys=fields.String(), values=fields.Float(allow_none=True))
    parent = fields.Nested(lambda: Order(), allow_none=True)
    day = fields.Date(allow_none=True)
    pair = fields.Tuple((fields.Integer(validate=validate.Range(-100, 100)), fields.Boolean()))

    @validates_schema
    def no_parent_for_empty(self, data, **kwargs):
        if not data["legs"] and data["parent"] is not None:
            raise ValidationError("an order without legs has no parent")


SCHEMA = Order().compile()


def seeds():
    rng = random.Random(0)
    for _ in range(20):
        yield SCHEMA.dump_compiled(
            {
                "id": "12345678-1234-5678-1234-567812345678",
                "symbol": "AAPL" * rng.randint(0, 3),
                "legs": [
                    {
                        "price": decimal.Decimal(rng.randint(-(10**8), 10**8)).scaleb(-4),
                        "side": rng.choice(list(Side)),
                        "at": datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc),
                    }
                    for _ in range(rng.randint(0, 3))
                ],
                "attrs": {str(i): rng.choice([None, rng.random()]) for i in range(rng.randint(0, 3))},
                "parent": None,
                "day": rng.choice([None, datetime.date(1969, 7, 20)]),
                "pair": (rng.randint(-5, 5), True),
            }
        )


def test_one_input(data: bytes) -> None:
    try:
        SCHEMA.load_compiled(data)
    except (DecodeError, ValidationError):
        pass


if __name__ == "__main__":
    if "--write-seeds" in sys.argv:
        import pathlib

        folder = pathlib.Path(sys.argv[-1])
        folder.mkdir(parents=True, exist_ok=True)
        for i, seed in enumerate(seeds()):
            (folder / f"seed{i}").write_bytes(seed)
        sys.exit(0)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
