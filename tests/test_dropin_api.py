"""The drop-in's names and signatures are fastavro's: the same parameters
(names, kinds, defaults) for every public function, and fastavro's
submodules importable under ``roastedavro.fastavro`` with the drop-in's
readers and writers in them. fastavro itself is the oracle."""

from __future__ import annotations

import importlib
import io
import inspect

import fastavro
import fastavro.schema
import pytest

import roastedavro.fastavro as dropin

FUNCTIONS = [
    "parse_schema",
    "schemaless_writer",
    "schemaless_reader",
    "writer",
    "reader",
    "block_reader",
    "is_avro",
    "json_writer",
    "json_reader",
]
SCHEMA_FUNCTIONS = [
    "parse_schema",
    "load_schema",
    "load_schema_ordered",
    "fullname",
    "expand_schema",
    "to_parsing_canonical_form",
    "fingerprint",
]


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
    assert write.Writer.__module__ == "roastedavro.fastavro._files"


@pytest.mark.parametrize(
    "module, names",
    [
        ("validation", ["validate", "validate_many", "ValidationError", "ValidationErrorData"]),
        ("utils", ["generate_one", "generate_many", "anonymize_schema"]),
        ("types", ["AvroMessage", "Schema"]),
    ],
)
def test_fastavros_helper_modules_are_fastavros_own(module, names):
    ours = importlib.import_module(f"roastedavro.fastavro.{module}")
    theirs = importlib.import_module(f"fastavro.{module}")
    for name in names:
        assert getattr(ours, name) is getattr(theirs, name)
    with pytest.raises(AttributeError):
        ours.no_such_name  # noqa: B018


def test_schemaless_writers_options_may_be_given_by_position():
    import io

    schema = dropin.parse_schema({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
    for module in (fastavro, dropin):
        with pytest.raises(ValueError):  # strict: a field the schema lacks
            module.schemaless_writer(io.BytesIO(), schema, {"a": 1, "b": 2}, True)


def test_fastavros_block_codec_registry_is_refused_saying_why():
    import roastedavro.fastavro.read as read

    with pytest.raises(AttributeError, match="decompresses blocks itself"):
        read.BLOCK_READERS  # noqa: B018


# -- fastavro.write.Writer: records written one by one ---------------------------------

LOG = {
    "type": "record",
    "name": "Log",
    "namespace": "app",
    "fields": [
        {"name": "n", "type": "long"},
        {"name": "text", "type": "string"},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "level", "type": ["null", "string"], "default": None},
    ],
}


def log_records(start, count):
    import datetime

    at = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    return [
        {
            "n": n,
            "text": "x" * (n % 37),
            "at": at + datetime.timedelta(seconds=n),
            "level": None if n % 3 else "warn",
        }
        for n in range(start, start + count)
    ]


def write_both(steps, codec="null", sync_interval=300, **options):
    """The bytes fastavro's Writer and the drop-in's write for the same steps:
    ("write", record), ("flush",), ("dump",) or ("block", block_index)."""
    from roastedavro.fastavro.write import Writer

    source = io.BytesIO()
    fastavro.writer(source, LOG, log_records(1000, 40), sync_interval=200)
    ended = fastavro.write.Writer(source, None)  # appended: a block of no records
    ended.dump()
    outputs = []
    for module, make in ((fastavro, fastavro.write.Writer), (dropin, Writer)):
        out = io.BytesIO()
        blocks = list(module.block_reader(io.BytesIO(source.getvalue())))
        writer = make(
            out,
            module.parse_schema(LOG),
            codec=codec,
            sync_interval=sync_interval,
            sync_marker=b"S" * 16,
            **options,
        )
        for step in steps:
            if step[0] == "write":
                writer.write(step[1])
            elif step[0] == "block":
                writer.write_block(blocks[step[1]])
            else:
                getattr(writer, step[0])()
        writer.flush()
        outputs.append(out.getvalue())
    return outputs


@pytest.mark.parametrize("codec", ["null", "deflate"])
def test_writer_class_writes_fastavros_bytes(codec):
    steps = [("write", record) for record in log_records(0, 50)]
    steps[7:7] = [("flush",)]
    steps[20:20] = [("block", 1), ("dump",), ("block", 0), ("block", -1)]  # -1: no records
    theirs, ours = write_both(steps, codec=codec)
    assert ours == theirs
    assert [r["n"] for r in dropin.reader(io.BytesIO(ours))] == [
        r["n"] for r in fastavro.reader(io.BytesIO(theirs))
    ]


def test_writer_class_refuses_a_bad_record_and_goes_on():
    from roastedavro.fastavro.write import Writer

    records = log_records(0, 5)
    out = io.BytesIO()
    writer = Writer(out, LOG, sync_marker=b"S" * 16)
    assert writer.schema == fastavro.parse_schema(LOG) and writer.block_count == 0
    writer.write(records[0])
    with pytest.raises(ValueError, match="text"):
        writer.write({**records[1], "text": 5})
    writer.write(records[2])
    assert writer.block_count == 2
    writer.flush()
    assert [r["n"] for r in fastavro.reader(io.BytesIO(out.getvalue()))] == [0, 2]
    # validator=True: fastavro's ValidationError with fastavro's own error list
    checked = Writer(io.BytesIO(), LOG, validator=True)
    with pytest.raises(fastavro.validation.ValidationError) as caught:
        checked.write({**records[1], "text": 5})
    assert "app.Log.text" in str(caught.value.errors)
    # fastavro's strict option: a field the schema lacks
    strict = Writer(io.BytesIO(), LOG, options={"strict": True})
    with pytest.raises(ValueError):
        strict.write({**records[1], "extra": 1})


def test_writer_class_appends_as_fastavro_does():
    from roastedavro.fastavro.write import Writer

    first = io.BytesIO()
    fastavro.writer(first, LOG, log_records(0, 3), sync_marker=b"S" * 16)
    theirs, ours = io.BytesIO(first.getvalue()), io.BytesIO(first.getvalue())
    theirs.seek(0, io.SEEK_END)
    ours.seek(0, io.SEEK_END)
    for out, make in ((theirs, fastavro.write.Writer), (ours, Writer)):
        writer = make(out, None)  # the file's own schema, codec and marker
        for record in log_records(3, 4):
            writer.write(record)
        writer.flush()
    assert ours.getvalue() == theirs.getvalue()


def test_fastavros_submodules_from_the_package_are_the_dropins_in_a_fresh_process():
    # `from roastedavro.fastavro import write` asks the package before the
    # import system: it must not hand out fastavro's own module
    import subprocess
    import sys

    script = (
        "from roastedavro.fastavro import read, write, json_write, validation, io\n"
        "print(write.__name__, read.__name__, json_write.__name__, validation.__name__,"
        " io.__name__)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "roastedavro.fastavro.write",
        "roastedavro.fastavro.read",
        "roastedavro.fastavro.json_write",
        "roastedavro.fastavro.validation",
        "fastavro.io",
    ]
