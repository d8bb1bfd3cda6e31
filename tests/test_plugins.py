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
    assert payment.avro_schema()["fields"][3]["type"] == ["null", {"type": "fixed", "name": "ipv4", "size": 4}]
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
