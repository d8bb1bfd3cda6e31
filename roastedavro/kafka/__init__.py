"""Kafka serializers with a Confluent-compatible schema registry.

``AvroSerializer`` and ``AvroDeserializer`` take the arguments of
confluent-kafka's and write and read the same bytes (the Confluent wire
format: a zero byte, the schema id as 4 big-endian bytes, then Avro binary),
through compiled codecs. They never wait for a compile: a schema without a
compiled codec is served at once by the runtime's bounded generic decoder
(the compiled codecs' limits, checked before fastavro reads the bytes) while
the codec builds in a child process, and the codec takes over when it is
ready.
``RegistryWatcher`` compiles new versions of subjects before their
first message.

Needs confluent-kafka (``pip install '.[kafka]'`` from the source tree), whose
``SchemaRegistryClient`` talks to the registry.
"""

try:
    import confluent_kafka  # noqa: F401
    from confluent_kafka.schema_registry import SchemaRegistryClient  # noqa: F401
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"roastedavro.kafka needs confluent-kafka with its schema registry client "
        f"({error}): pip install 'confluent-kafka[avro,schemaregistry]>=2.13,<3' (or, from "
        f"roastedavro's source tree, pip install '.[kafka]')"
    ) from error

from roastedavro.kafka.deserializer import AvroDeserializer  # noqa: E402
from roastedavro.kafka.serde import (  # noqa: E402
    COMPILED,
    FALLBACK,
    RegistryFetchError,
    wire_header,
    wire_schema_id,
)
from roastedavro.kafka.serializer import AvroSerializer  # noqa: E402
from roastedavro.kafka.watcher import RegistryWatcher  # noqa: E402

__all__ = [
    "AvroDeserializer",
    "AvroSerializer",
    "COMPILED",
    "FALLBACK",
    "RegistryFetchError",
    "RegistryWatcher",
    "wire_header",
    "wire_schema_id",
]
