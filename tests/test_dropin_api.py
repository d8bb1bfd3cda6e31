"""The drop-in's names and signatures are fastavro's: the same parameters
(names, kinds, defaults) for every public function, and fastavro's
submodules importable under ``roastedavro.fastavro`` with the drop-in's
readers and writers in them. fastavro itself is the oracle."""

from __future__ import annotations

import importlib
import inspect

import fastavro
import fastavro.schema
import pytest

import roastedavro.fastavro as dropin

FUNCTIONS = ["parse_schema", "schemaless_writer", "schemaless_reader", "writer", "reader",
             "block_reader", "is_avro", "json_writer", "json_reader"]
SCHEMA_FUNCTIONS = ["parse_schema", "load_schema", "load_schema_ordered", "fullname",
                    "expand_schema", "to_parsing_canonical_form", "fingerprint"]


def parameters(function) -> list:
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_each_function_takes_fastavros_parameters(name):
    theirs, ours = parameters(getattr(fastavro, name)), parameters(getattr(dropin, name))
    # the container readers take roastedavro's own options after fastavro's
    if ours and ours[-1][1] is inspect.Parameter.VAR_KEYWORD and theirs[-1:] != ours[-1:]:
        ours = ours[:-1]
    assert ours == theirs


@pytest.mark.parametrize("name", SCHEMA_FUNCTIONS)
def test_each_schema_function_takes_fastavros_parameters(name):
    assert parameters(getattr(dropin.schema, name)) == parameters(getattr(fastavro.schema, name))


def test_fastavros_submodules_import_with_the_dropins_readers_and_writers():
    import roastedavro.fastavro.json_read as json_read
    import roastedavro.fastavro.json_write as json_write
    import roastedavro.fastavro.read as read
    import roastedavro.fastavro.write as write

    assert read.reader is dropin.reader and read.block_reader is dropin.block_reader
    assert read.schemaless_reader is dropin.schemaless_reader
    assert read.SchemaResolutionError is dropin.SchemaResolutionError
    assert issubclass(read.SchemaResolutionError, fastavro.read.SchemaResolutionError)
    assert write.writer is dropin.writer and write.schemaless_writer is dropin.schemaless_writer
    assert json_read.json_reader is dropin.json_reader
    assert json_write.json_writer is dropin.json_writer
    # fastavro's registries and constants are fastavro's own objects
    assert read.LOGICAL_READERS is fastavro.read.LOGICAL_READERS
    assert write.LOGICAL_WRITERS is fastavro.write.LOGICAL_WRITERS
    # a class that would write through fastavro's own writer is refused, saying why
    with pytest.raises(AttributeError, match="writer\\(fo, schema, records\\)"):
        write.Writer    # noqa: B018


@pytest.mark.parametrize("module, names", [
    ("validation", ["validate", "validate_many", "ValidationError", "ValidationErrorData"]),
    ("utils", ["generate_one", "generate_many", "anonymize_schema"]),
    ("types", ["AvroMessage", "Schema"]),
])
def test_fastavros_helper_modules_are_fastavros_own(module, names):
    ours = importlib.import_module(f"roastedavro.fastavro.{module}")
    theirs = importlib.import_module(f"fastavro.{module}")
    for name in names:
        assert getattr(ours, name) is getattr(theirs, name)
    with pytest.raises(AttributeError):
        ours.no_such_name    # noqa: B018


def test_schemaless_writers_options_may_be_given_by_position():
    import io

    schema = dropin.parse_schema({"type": "record", "name": "R",
                                  "fields": [{"name": "a", "type": "int"}]})
    for module in (fastavro, dropin):
        with pytest.raises(ValueError):   # strict: a field the schema lacks
            module.schemaless_writer(io.BytesIO(), schema, {"a": 1, "b": 2}, True)


def test_fastavros_block_codec_registry_is_refused_saying_why():
    import roastedavro.fastavro.read as read

    with pytest.raises(AttributeError, match="decompresses blocks itself"):
        read.BLOCK_READERS    # noqa: B018
