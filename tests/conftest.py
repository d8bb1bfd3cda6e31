import inspect
import io
import os

# The suite's codecs are compiled at -O0 unless the run asks for a level: the
# C compiler's time halves, and most of the suite's time is compiling its
# schemas. The tests check what the codecs do, which no level changes; the
# shipped default, -O1, is tested by CI's leg that sets ROASTEDAVRO_OPTIMIZE=-O1
# (.ci/run), and tests of the level itself name theirs.
os.environ.setdefault("ROASTEDAVRO_OPTIMIZE", "-O0")

import fastavro
import pytest
from marshmallow import validates_schema

# the session's Java Avro 1.12 oracle (tests/java_oracle.py)
from java_oracle import java  # noqa: F401

# a real Kafka broker and schema registry (tests/services.py)
from services import kafka_broker, kafka_topic, schema_registry, service_pool, services  # noqa: F401

_SERVERS = {"kafka_broker", "schema_registry", "services"}

# The suite's codecs are compiled before their first call unless a test asks
# for another policy: the differential tests check the compiled codecs, and
# tests/test_tier0_*.py run the same tests again on tier 0 (their twins);
# tests/test_tiers.py checks the default policy itself.
os.environ.setdefault("ROASTEDAVRO_COMPILE", "eager")


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    result = yield
    _mark(items)
    if hasattr(config, "workerinput") and config.getvalue("loadgroup"):
        _keep_groups(items)
    return result


def _keep_groups(items):
    # pytest-xdist's loadgroup schedules by the "@group" suffix it gives each
    # item's nodeid; since pytest 9.2 a nodeid is read from Item._id, so the
    # suffix was lost and a file's tests spread over the processes (each
    # compiling the file's schemas again). The suffix is given here too.
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        if mark is None or item.nodeid.rfind("@") > item.nodeid.rfind("]"):
            continue
        suffixed = f"{item.nodeid}@{mark.args[0]}"
        if hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(suffixed)
        else:
            item._nodeid = suffixed


def _mark(items):
    # every test using the oracle is marked java: -m "not java" runs without a JVM
    # and every test of a real broker or registry is marked kafka: -m "not kafka"
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "java" in names:
            item.add_marker(pytest.mark.java)
        if _SERVERS.intersection(names):
            item.add_marker(pytest.mark.kafka)
        # the suite runs on several processes (pytest-xdist, --dist loadgroup):
        # a test file's tests stay together, so its module fixtures compile
        # their schemas once, and the tests of the real broker and registry
        # run in one process, so that one broker and one registry start
        if _SERVERS.intersection(names):
            group = "kafka"
        else:
            group = item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group(group))


# hook option for "the whole list with many=True": marshmallow 4 renamed
# pass_many to pass_collection
WHOLE_LIST = (
    {"pass_collection": True}
    if "pass_collection" in inspect.signature(validates_schema).parameters
    else {"pass_many": True}
)


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


@pytest.fixture
def commands_run(monkeypatch):
    """The argument lists of every subprocess.run in the test, in order (the
    commands still run)."""
    import subprocess

    seen = []
    run = subprocess.run

    def recorded(args, *rest, **kwargs):
        seen.append(list(args))
        return run(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "run", recorded)
    return seen


def build_avro_codec(schema, flags):
    """A plain Avro schema's generated module, built here with ``flags``
    (through the cache roastedavro's environment names), and its codec."""
    from roastedavro import compiler
    from roastedavro.avro import parse_schema
    from roastedavro.avrogen import generate_avro_module

    model = parse_schema(schema)
    generated = generate_avro_module(model)
    return compiler.load_codec(generated, flags, f"{model.fingerprint():016x}"), generated
