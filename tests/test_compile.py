"""Code generation, the disk cache, concurrency and compile-time errors."""

import io
import os
import subprocess
import sys
import textwrap
import threading

import fastavro
import pytest
from marshmallow import fields

from roastedavro import CompileError, CompiledSchema, compiler
from roastedavro.flags import CompileFlags
from conftest import build_avro_codec, fastavro_bytes


class Quote(CompiledSchema):
    symbol = fields.String()
    bid = fields.Float()
    ask = fields.Float(allow_none=True)
    levels = fields.List(fields.Integer())


def test_field_names_cannot_shadow_generated_or_runtime_names():
    names = [
        "write_long",
        "obj",
        "self",
        "w",
        "r",
        "record",
        "depth",
        "int",
        "MISSING",
        "convert",
        "part0",
        "index0",
        "key0",
        "error",
        "source",
        "field_no",
        "cdef",
    ]
    attrs = {name: fields.List(fields.Integer()) for name in names}
    schema = type("Shadowing", (CompiledSchema,), attrs)()
    record = {name: [i] for i, name in enumerate(names)}
    assert schema.load_compiled(schema.dump_compiled(record)) == record


def test_record_names_cannot_collide_with_generated_or_runtime_names():
    # records named like the helpers their functions sit beside: write_long,
    # read_str, dump_one, load_many, the codec's own attributes
    names = [
        "write",
        "read",
        "str",
        "long_value",
        "generic",
        "one",
        "many",
        "records",
        "Codec",
        "self",
        "max_depth",
        "load_hooks",
        "dump",
        "load",
        "value",
    ]
    attrs = {}
    for name in names:
        inner = type(
            f"R_{name}",
            (CompiledSchema,),
            {"x": fields.Integer(), "Meta": type("Meta", (), {"avro_name": name})},
        )
        attrs[f"f_{name}"] = fields.Nested(inner)
    schema = type("Colliding", (CompiledSchema,), attrs)()
    record = {f"f_{name}": {"x": i} for i, name in enumerate(names)}
    data = schema.dump_compiled(record)
    assert data == fastavro_bytes(schema, record)
    assert schema.load_compiled(data) == record


def test_a_record_cannot_take_a_primitive_type_name():
    # the specification: primitive names are defined in no namespace
    inner = type(
        "R_long", (CompiledSchema,), {"x": fields.Integer(), "Meta": type("Meta", (), {"avro_name": "long"})}
    )
    schema = type("Holder", (CompiledSchema,), {"inner": fields.Nested(inner)})()
    with pytest.raises(CompileError, match="'long' is an Avro primitive type name"):
        schema.compile()


def test_source_is_deterministic_and_readable():
    source = Quote().compile_to_string()
    assert source == Quote().compile_to_string()
    assert source.startswith("# Avro codec for test_compile.Quote")
    assert "cdef int write_Quote(self, Writer* w, object obj, int depth) except -1:" in source
    assert "cdef dict read_Quote(self, Reader* r, int depth):" in source
    assert "# ask: null | double" in source
    # no hash-based names in the source
    assert "0x" not in source and "roastedavro_codec_" not in source


def run_python(code, cache):
    env = dict(os.environ, ROASTEDAVRO_CACHE_DIR=str(cache))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        cwd=str(cache.parent),
        timeout=300,
    )


SCRIPT = """
    from marshmallow import fields
    from roastedavro import CompiledSchema, compiler
    class Cached(CompiledSchema):
        a = fields.Integer()
        b = fields.String()
    s = Cached().compile()
    assert s.load_compiled(s.dump_compiled({"a": 1, "b": "x"})) == {"a": 1, "b": "x"}
    print(sorted(compiler.last_timing))
"""


def test_second_process_loads_from_cache_without_building(tmp_path):
    cache = tmp_path / "cache"
    first = run_python(SCRIPT, cache)
    assert first.returncode == 0, first.stderr
    assert "'cython'" in first.stdout and "'cc'" in first.stdout
    second = run_python(SCRIPT, cache)
    assert second.returncode == 0, second.stderr
    assert "'cython'" not in second.stdout and "'cc'" not in second.stdout
    built = sorted(p.name for p in cache.iterdir())
    assert len([p for p in built if p.endswith(".pyx")]) == 1
    assert not [p for p in built if ".tmp" in p or p.endswith(".c")]
    # nothing was written where the processes ran
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]


def test_concurrent_processes_compile_the_same_schema(tmp_path):
    cache = tmp_path / "cache"
    env = dict(os.environ, ROASTEDAVRO_CACHE_DIR=str(cache))
    # cwd outside the repository: `python -c` imports from the current folder
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(SCRIPT)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=str(tmp_path),
        )
        for _ in range(3)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    assert len(list(cache.glob("*.pyx"))) == 1


def test_concurrent_threads_share_one_build(tmp_path, monkeypatch):
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path))

    class Threaded(CompiledSchema):
        x = fields.Integer()
        y = fields.List(fields.String())

    schemas = [Threaded() for _ in range(6)]
    errors = []

    def work(schema):
        try:
            for i in range(200):
                assert schema.load_compiled(schema.dump_compiled({"x": i, "y": [str(i)]})) == {
                    "x": i,
                    "y": [str(i)],
                }
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(s,)) for s in schemas]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(list(tmp_path.glob("*.so"))) == 1


def test_missing_c_compiler_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", "/nonexistent/cc")

    class NoCompiler(CompiledSchema):
        x = fields.Integer()

    with pytest.raises(CompileError, match="no C compiler found.*/nonexistent/cc"):
        NoCompiler().compile()
    assert list(tmp_path.iterdir()) == []  # nothing half-built stays


def test_missing_cython_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path))
    monkeypatch.setitem(sys.modules, "Cython.Compiler.Main", None)  # import fails

    class NoCython(CompiledSchema):
        x = fields.Integer()
        y = fields.Integer()

    with pytest.raises(CompileError, match="Cython is needed.*pip install cython"):
        NoCython().compile()
    assert [p for p in tmp_path.iterdir() if not p.name.endswith(".pyx")] == []


def test_failing_c_compiler_shows_its_message(tmp_path, monkeypatch):
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", "gcc -DBOGUS=1 -include /nonexistent/header.h")

    class BadCompiler(CompiledSchema):
        x = fields.Integer()

    with pytest.raises(CompileError, match="C compiler failed.*nonexistent/header.h"):
        BadCompiler().compile()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "attrs, message",
    [
        ({"x": fields.Integer(data_key="bad-name")}, "'bad-name' is not a valid Avro field name"),
        ({"x": fields.Integer(dump_default="abc")}, "default 'abc' is not a valid Avro long"),
        ({"x": fields.Float(metadata={"avro": "long"})}, "metadata avro='long'"),
        ({"x": fields.Dict(keys=fields.String())}, "declare values="),
        ({"x": fields.Dict(keys=fields.Integer(), values=fields.Integer())}, "Avro map keys are strings"),
        ({"x": fields.Integer(as_string=True)}, "as_string"),
        ({"x": fields.Raw()}, "no encoder is registered"),
        ({"x": fields.Integer(load_only=True)}, "load_only"),
    ],
)
def test_compile_errors_name_the_field(attrs, message):
    schema_class = type("Broken", (CompiledSchema,), attrs)
    with pytest.raises(CompileError, match="field 'x'") as error:
        schema_class().avro_schema()
    assert message in str(error.value)


def test_invalid_record_name():
    class Named(CompiledSchema):
        class Meta:
            avro_name = "not valid"

        x = fields.Integer()

    with pytest.raises(CompileError, match="not a valid Avro record name"):
        Named().avro_schema()


def test_flags_are_checked():
    with pytest.raises(ValueError):
        CompileFlags(optimize="-O9")
    with pytest.raises(ValueError):
        CompileFlags(max_depth=0)


def test_the_optimisation_level_of_flags_that_name_none_comes_from_roastedavro_optimize(monkeypatch):
    monkeypatch.setenv("ROASTEDAVRO_OPTIMIZE", "-O2")
    assert CompileFlags().optimize == "-O2"
    assert CompileFlags(optimize="-Os").optimize == "-Os"  # a level named wins
    monkeypatch.setenv("ROASTEDAVRO_OPTIMIZE", " ")
    assert CompileFlags().optimize == "-O1"
    monkeypatch.delenv("ROASTEDAVRO_OPTIMIZE")
    assert CompileFlags().optimize == "-O1"
    monkeypatch.setenv("ROASTEDAVRO_OPTIMIZE", "fast")
    with pytest.raises(ValueError, match="ROASTEDAVRO_OPTIMIZE must be one of -O0 .* not 'fast'"):
        CompileFlags()


def test_a_codec_is_compiled_at_the_level_roastedavro_optimize_names(tmp_path, monkeypatch, commands_run):
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ROASTEDAVRO_OPTIMIZE", "-Os")
    schema = {"type": "record", "name": "Levelled", "fields": [{"name": "n", "type": "long"}]}
    flags = CompileFlags()
    codec, generated = build_avro_codec(schema, flags)
    builds = [args for args in commands_run if "-shared" in args or "-bundle" in args]
    assert builds and "-Os" in builds[-1] and not {"-O0", "-O1", "-Og"} & set(builds[-1])
    # a module of another level is another module
    assert compiler.build_key(generated.source, flags) != compiler.build_key(
        generated.source, CompileFlags(optimize="-O1")
    )
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), {"n": -3})
    assert codec.dump({"n": -3}) == out.getvalue()
    assert codec.load(out.getvalue()) == {"n": -3}


def test_the_cli_refuses_a_bad_roastedavro_optimize_in_one_line(monkeypatch, capsys):
    from roastedavro import cli

    monkeypatch.setenv("ROASTEDAVRO_OPTIMIZE", "-O9")
    assert cli.main(["getschema", "no-such-file.avro"]) == 1
    error = capsys.readouterr().err
    assert error.strip() == (
        "roastedavro getschema: ROASTEDAVRO_OPTIMIZE must be one of -O0 -Og -O1 -O2 -O3 -Os, not '-O9'"
    )
    monkeypatch.delenv("ROASTEDAVRO_OPTIMIZE")
    assert cli.main(["build", "x.avsc", "--package", "p", "--output", "out", "--optimize=-O7"]) == 1
    assert "optimize must be one of -O0 -Og -O1 -O2 -O3 -Os, not '-O7'" in capsys.readouterr().err


def test_cache_key_covers_source_and_flags():
    source = Quote().compile_to_string()
    assert compiler.build_key(source, CompileFlags()) != compiler.build_key(source + "\n", CompileFlags())
    assert compiler.build_key(source, CompileFlags()) != compiler.build_key(
        source, CompileFlags(optimize="-O2")
    )
    # runtime-only options do not rebuild
    assert compiler.build_key(source, CompileFlags()) == compiler.build_key(source, CompileFlags(max_depth=9))


def test_the_schema_model_and_fingerprint_name_the_codec():
    import fastavro
    import fastavro.schema

    schema = Quote()
    model = schema.avro_model
    canonical = fastavro.schema.to_parsing_canonical_form(fastavro.parse_schema(schema.avro_schema()))
    assert model.canonical_form() == canonical
    assert model.fingerprint_hex == fastavro.schema.fingerprint(canonical, "CRC-64-AVRO")
    source = schema.compile_to_string()
    assert f"of its Parsing Canonical Form): {model.fingerprint_hex}\n" in source
