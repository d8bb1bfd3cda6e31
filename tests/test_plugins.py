"""User encoders registered for user field classes (examples/custom_encoder.py)."""

import ipaddress
import pathlib
import sys
from decimal import Decimal

import pytest
from conftest import fastavro_bytes
from marshmallow import ValidationError, fields

import roastedavro
from roastedavro import CompileError, CompiledSchema
from roastedavro.encoders import EncoderRegistry

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
import custom_encoder  # noqa: E402  (registers CentsEncoder)


@pytest.fixture(scope="module")
def payment():
    return custom_encoder.Payment().compile()


@pytest.mark.parametrize("amount", ["0", "12.34", "-0.01", "92233720368547758.07"])
def test_user_encoder_matches_oracles(payment, amount):
    record = {"payer": "ada", "amount": Decimal(amount), "fee": Decimal("0.5"), "client": None}
    data = payment.dump_compiled(record)
    assert data == fastavro_bytes(payment, payment.dump(record))
    assert payment.load_compiled(data) == payment.load(payment.dump(record))
    assert payment.avro_schema()["fields"][2]["type"] == ["null", "int"]


@pytest.mark.parametrize("client", ["0.0.0.0", "192.0.2.7", "255.255.255.255"])
def test_fixed_ipv4_encoder(payment, client):
    address = ipaddress.IPv4Address(client)
    record = {"payer": "ada", "amount": Decimal(1), "fee": None, "client": address}
    assert payment.avro_schema()["fields"][3]["type"] == [
        "null",
        {"type": "fixed", "name": "ipv4", "size": 4},
    ]
    data = payment.dump_compiled(record)
    assert data == fastavro_bytes(payment, {**payment.dump(record), "client": address.packed})
    assert data.endswith(b"\x02" + address.packed)
    assert payment.load_compiled(data) == payment.load(payment.dump(record))
    assert payment.dump_compiled({**record, "client": client}) == data
    with pytest.raises(ValidationError) as error:
        payment.dump_compiled({**record, "client": "300.1.1.1"})
    assert list(error.value.messages) == ["client"]


def test_user_encoder_errors_name_the_field(payment):
    with pytest.raises(ValidationError) as error:
        payment.dump_compiled({"payer": "ada", "amount": Decimal("1.001"), "fee": None})
    assert error.value.messages == {"amount": ["Amounts have at most two decimal places."]}


def test_example_runs(capsys):
    custom_encoder.main()
    assert "Decimal('12.34')" in capsys.readouterr().out


def test_per_schema_encoders_do_not_leak_into_other_schemas():
    class Celsius(fields.Field):
        pass

    class CelsiusEncoder(roastedavro.encoders.FloatEncoder):
        field_class = Celsius

    class Weather(CompiledSchema):
        class Meta:
            avro_encoders = [CelsiusEncoder]

        temp = Celsius()

    class Other(CompiledSchema):
        temp = Celsius()

    assert Weather().avro_schema()["fields"][0]["type"] == "double"
    with pytest.raises(CompileError, match="no encoder is registered"):
        Other().avro_schema()


def test_registry_dispatch_follows_the_mro():
    registry = EncoderRegistry()
    registry.register(custom_encoder.CentsEncoder)

    class Sub(custom_encoder.Cents):
        pass

    assert registry.lookup(Sub) is custom_encoder.CentsEncoder
    assert registry.lookup(fields.String) is None


def test_registering_something_else_is_an_error():
    with pytest.raises(TypeError):
        roastedavro.register_encoder(object)


# -- the conversion contract: an Avro type and conversions, no write/read code --


class Point(fields.Field):
    """An (x, y) tuple, written as an Avro record of two doubles."""


class PointEncoder(roastedavro.Encoder):
    field_class = Point
    avro_types = ("record",)
    min_size = 16

    def avro_type(self, names):
        return names.named(
            {
                "type": "record",
                "name": "Point",
                "fields": [{"name": "x", "type": "double"}, {"name": "y", "type": "double"}],
            }
        )

    def emit_to_avro(self, fn, value):
        as_record = fn.bind(lambda point: {"x": point[0], "y": point[1]}, "as_record")
        fn.line(f"{value} = {as_record}({value})")

    def emit_from_avro(self, fn, target):
        as_tuple = fn.bind(lambda record: (record["x"], record["y"]), "as_tuple")
        fn.line(f"{target} = {as_tuple}({target})")


class Tags(fields.Field):
    """A list of str, already an Avro array's value: no conversion."""


class TagsEncoder(roastedavro.Encoder):
    field_class = Tags
    avro_types = ({"type": "array", "items": "string"},)
    min_size = 1


class Shape(CompiledSchema):
    class Meta:
        avro_encoders = [PointEncoder, TagsEncoder]

    start = Point()
    end = Point(allow_none=True)
    tags = Tags()


@pytest.fixture(scope="module")
def shape():
    return Shape().compile()


def test_an_encoder_of_conversions_writes_fastavros_bytes(shape):
    import io

    import fastavro

    record = {"start": (1.5, -2.0), "end": None, "tags": ["a", "é"]}
    avro = shape.avro_schema()
    # a named type used twice: defined once, then referenced by name
    assert avro["fields"][0]["type"]["name"] == "Point" and avro["fields"][1]["type"] == ["null", "Point"]
    out = io.BytesIO()
    fastavro.schemaless_writer(
        out, fastavro.parse_schema(avro), {"start": {"x": 1.5, "y": -2.0}, "end": None, "tags": ["a", "é"]}
    )
    data = shape.dump_compiled(record)
    assert data == out.getvalue()
    assert shape.load_compiled(data) == record
    both = {**record, "end": (0.0, 3.25)}
    assert shape.load_compiled(shape.dump_compiled(both)) == both


def test_an_encoder_of_conversions_reports_bad_values_by_field(shape):
    with pytest.raises(ValidationError) as error:
        shape.dump_compiled({"start": (1.0, "north"), "end": None, "tags": []})
    assert list(error.value.messages) == ["start"]
    with pytest.raises(ValidationError) as error:
        shape.dump_compiled({"start": (1.0, 2.0), "end": None, "tags": ["a", 3]})
    assert list(error.value.messages) == ["tags"]


def test_an_encoder_with_its_own_write_and_read_code_still_works():
    # the full contract of earlier releases: emit_write/emit_read
    class OldCentsEncoder(roastedavro.Encoder):
        field_class = custom_encoder.Cents
        avro_types = ("long", "int")

        def emit_write(self, fn, value):
            field = fn.bind(self.field, "field")
            fn.line(f"{value} = convert({field}, {value}, obj, int)")
            fn.line(f"write_long_value(w, {value}, {field}, obj)")

        def emit_read(self, fn, target):
            from_cents = fn.bind(custom_encoder.cents_to_decimal, "from_cents")
            fn.line(f"{target} = {from_cents}(read_long(r))")

    class OldPayment(CompiledSchema):
        class Meta:
            avro_name = "Payment"
            avro_encoders = [OldCentsEncoder]

        payer = fields.String()
        amount = custom_encoder.Cents()

    class NewPayment(OldPayment):
        class Meta:
            avro_name = "Payment"

    record = {"payer": "ada", "amount": Decimal("-12.34")}
    old, new = OldPayment(), NewPayment()
    assert "write_long_value" in old.compile_to_string()
    assert "avro_amount_write" in new.compile_to_string()
    assert old.dump_compiled(record) == new.dump_compiled(record) == fastavro_bytes(new, new.dump(record))
    assert old.load_compiled(old.dump_compiled(record)) == record
