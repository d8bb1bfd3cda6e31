import io

import fastavro
import pytest


def fastavro_bytes(schema, dumped, many=False):
    """The oracle: fastavro's schemaless encoding of marshmallow's dump output."""
    avro = schema.avro_schema()
    if many:
        avro = {"type": "array", "items": avro}
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(avro), dumped)
    return out.getvalue()


def fastavro_read(schema, data):
    return fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(schema.avro_schema()), None)


@pytest.fixture
def oracle():
    return fastavro_bytes
