"""What ``import roastedavro.fastavro`` loads of fastavro: its schema parser
and exception types alone, the rest when it is used (each case in a fresh
process, since the tests' own process has fastavro imported)."""

import os
import subprocess
import sys
import tempfile
import textwrap


def run(code: str) -> str:
    # the interpreter serves (the tests' own policy would compile each codec);
    # run from another folder, so the installed package is imported, not the
    # source tree
    env = {**os.environ, "ROASTEDAVRO_COMPILE": "never"}
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=folder,
        )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_fastavro_is_not_imported_for_schemas_and_data():
    out = run("""
        import io, sys
        import roastedavro.fastavro as fa
        parsed = fa.parse_schema({"type": "record", "name": "R", "fields": [
            {"name": "a", "type": "long"},
            {"name": "t", "type": {"type": "long", "logicalType": "timestamp-micros"}}]})
        buffer = io.BytesIO()
        fa.schemaless_writer(buffer, parsed, {"a": 1, "t": 2})
        buffer.seek(0)
        assert fa.schemaless_reader(buffer, parsed)["a"] == 1
        try:
            fa.parse_schema({"type": "record", "name": "R", "fields": [{"name": "a", "type": "X"}]})
        except Exception as error:
            print(type(error).__mro__[2].__module__)
        print("fastavro" in sys.modules, "numpy" in sys.modules)
    """)
    assert out.split() == ["fastavro._schema_common", "False", "False"]


def test_fastavro_imported_later_shares_the_classes_and_registries():
    out = run("""
        import io
        import roastedavro.fastavro as fa
        parsed = fa.parse_schema({"type": "record", "name": "R", "fields": [
            {"name": "a", "type": {"type": "long", "logicalType": "tenfold"}}]})
        buffer = io.BytesIO()
        fa.schemaless_writer(buffer, parsed, {"a": 1})     # the codec is made and kept
        import fastavro, fastavro.read, fastavro.write
        from roastedavro.fastavro import SchemaResolutionError, schema, _writing
        assert issubclass(SchemaResolutionError, fastavro.read.SchemaResolutionError)
        assert issubclass(schema.SchemaParseError, fastavro.schema.SchemaParseException)
        assert issubclass(_writing.ValidationError, fastavro.validation.ValidationError)
        fastavro.write.LOGICAL_WRITERS["long-tenfold"] = lambda datum, *_: datum * 10
        buffer = io.BytesIO()
        fa.schemaless_writer(buffer, parsed, {"a": 1})
        print(buffer.getvalue().hex())
        check = io.BytesIO()
        fastavro.schemaless_writer(check, fastavro.parse_schema(parsed), {"a": 1})
        print(check.getvalue().hex())
        print(fa.validate is fastavro.validate)
    """)
    ours, theirs, same = out.split()
    assert ours == theirs == "14" and same == "True"
