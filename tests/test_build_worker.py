"""The build process behind build="child": one warm child Python process per
process, reused by later builds, replaced when it dies or the environment
that matters changes, and never outliving its parent."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from io import BytesIO
from pathlib import Path

import fastavro
import pytest

from roastedavro import CompileError, building, buildserver, compiler
from roastedavro.avro.parse import parse_schema
from roastedavro.avrogen import generate_avro_module
from roastedavro.background import BackgroundCompiler
from roastedavro.codec import AvroCodec, _compiled
from roastedavro.flags import CompileFlags
from conftest import build_avro_codec

FLAGS = CompileFlags()


def record_schema(name, size=4):
    kinds = ["long", "string", "double", "boolean", "bytes"]
    return {
        "type": "record",
        "name": name,
        "fields": [
            {"name": f"f{i}", "type": ["null", kinds[i % 5]] if i % 2 else kinds[i % 5]} for i in range(size)
        ],
    }


def a_record(size=4):
    values = {"long": -(2**40), "string": "ünï", "double": 2.5, "boolean": True, "bytes": b"\0\xff"}
    kinds = ["long", "string", "double", "boolean", "bytes"]
    return {f"f{i}": values[kinds[i % 5]] for i in range(size)}


def fastavro_bytes(schema, record):
    out = BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), record)
    return out.getvalue()


def running(pid):
    """Whether ``pid`` is a live process (a zombie has exited)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in status)
    except FileNotFoundError:
        return False


def wait_until(condition, seconds=30.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ROASTEDAVRO_COMPILE", raising=False)
    yield tmp_path / "cache"
    buildserver._workers.stop()


def test_builds_reuse_one_warm_process_and_the_codecs_work():
    first, second = record_schema("WorkerFirst"), record_schema("WorkerSecond", 6)
    # a background build, as the "hot" policy makes it
    future = BackgroundCompiler().submit(
        "first", lambda build: _compiled(parse_schema(first), FLAGS, build=build)
    )
    codec = future.result(timeout=300)
    (pid,) = compiler.build_workers()
    assert pid != os.getpid() and running(pid)
    assert codec.dump(a_record()) == fastavro_bytes(first, a_record())
    # an eager build in a child: the same process builds it
    eager = AvroCodec(second, compile="eager", build="child")
    assert eager.tier == "compiled"
    assert compiler.build_workers() == [pid]
    assert "cython" in compiler.last_timing and "cc" in compiler.last_timing
    data = eager.dump(a_record(6))
    assert data == fastavro_bytes(second, a_record(6))
    assert eager.load(data) == fastavro.schemaless_reader(BytesIO(data), fastavro.parse_schema(second), None)


def test_a_failed_build_reports_its_error_and_the_process_serves_on():
    with pytest.raises(CompileError, match=r"(?s)Cython could not compile.*Expected '\)'"):
        compiler.load("def f(:\n    pass\n", FLAGS, build="child")
    (pid,) = compiler.build_workers()
    source = generate_avro_module(parse_schema(record_schema("AfterFailure"))).source
    module = compiler.load(source, FLAGS, build="child")
    assert module.__file__.endswith(compiler.EXT_SUFFIX)
    assert compiler.build_workers() == [pid]


@pytest.mark.parametrize("forked", [False, True], ids=["first-build", "forked-build"])
def test_a_killed_build_process_is_a_compile_error_and_the_next_build_starts_another(forked):
    if forked:  # a process's later builds run in forked copies of it
        with pytest.raises(CompileError):
            compiler.load("def f(:\n    pass\n", FLAGS, build="child")
    schema = parse_schema(record_schema(f"KilledMidway{forked}"))
    generated = generate_avro_module(schema)
    outcome = {}

    def build():
        try:
            outcome["module"] = compiler.load(generated.source, FLAGS, build="child")
        except Exception as error:  # noqa: BLE001 - the test looks at it
            outcome["error"] = error

    thread = threading.Thread(target=build)
    thread.start()
    assert wait_until(lambda: buildserver._workers._busy)
    (worker,) = buildserver._workers._busy
    os.kill(worker.pid, signal.SIGKILL)
    thread.join(120)
    assert not thread.is_alive()
    error = outcome.get("error")
    assert isinstance(error, CompileError), outcome
    assert f"pid {worker.pid}" in str(error) and "SIGKILL" in str(error)
    assert compiler.build_workers() == []
    module = compiler.load(generated.source, FLAGS, build="child")
    (pid,) = compiler.build_workers()
    assert pid != worker.pid
    codec = module.Codec(generated.bindings, FLAGS.max_depth, FLAGS.max_items, FLAGS.item_allowance)
    assert codec.load(codec.dump(a_record())) == a_record()


def test_a_changed_compiler_starts_a_new_process_and_its_error_arrives(tmp_path, monkeypatch):
    with pytest.raises(CompileError):
        compiler.load("def f(:\n    pass\n", FLAGS, build="child")
    (before,) = compiler.build_workers()
    failing = tmp_path / "failing-cc"
    failing.write_text("#!/bin/sh\necho 'the failing compiler says no' >&2\nexit 3\n")
    failing.chmod(0o755)
    monkeypatch.setenv("CC", str(failing))
    source = generate_avro_module(parse_schema(record_schema("OtherCompiler"))).source
    with pytest.raises(CompileError, match=r"(?s)exit 3.*the failing compiler says no"):
        compiler.load(source, FLAGS, build="child")
    (after,) = compiler.build_workers()
    assert after != before
    assert wait_until(lambda: not running(before), 10)  # the old one was retired
    monkeypatch.delenv("CC")
    compiler.load(source, FLAGS, build="child")
    (again,) = compiler.build_workers()
    assert again not in (before, after)


def test_the_build_process_exits_with_its_parent(tmp_path):
    # the parent ends without any clean-up (os._exit): its pipe closing is
    # what ends the build process
    code = textwrap.dedent("""
        import os, sys
        from roastedavro import CompileError, compiler
        from roastedavro.flags import CompileFlags
        try:
            compiler.load("def f(:\\n    pass\\n", CompileFlags(), build="child")
        except CompileError:
            pass
        print(compiler.build_workers()[0], flush=True)
        os._exit(0)
    """)
    env = dict(os.environ, ROASTEDAVRO_CACHE_DIR=str(tmp_path / "cache"))
    # not from the repository root: an installed package must not meet its source tree
    completed = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert completed.returncode == 0, completed.stderr
    pid = int(completed.stdout.split()[-1])
    assert wait_until(lambda: not running(pid), 15)


def marshmallow_source():
    from marshmallow import fields

    from roastedavro import CompiledSchema
    from roastedavro.codegen import generate_module

    class Inner(CompiledSchema):
        when = fields.DateTime()

    class Order(CompiledSchema):
        name = fields.String()
        count = fields.Integer()
        price = fields.Decimal(places=2, metadata={"precision": 9})
        tags = fields.Dict(keys=fields.String(), values=fields.Float())
        inner = fields.Nested(Inner)

    schema = Order()
    plan = schema._plan()
    return generate_module(
        plan.root, plan.records, schema._label(), FLAGS.build_key(), plan.fingerprint
    ).source


def resolving_source():
    from roastedavro.resolvegen import generate_resolving_module

    writer = parse_schema(
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}],
        }
    )
    reader = parse_schema(
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "a", "type": "long"}, {"name": "c", "type": "string", "default": "x"}],
        }
    )
    return generate_resolving_module(writer, reader).source


def test_a_preloaded_or_reused_context_gives_the_c_a_fresh_one_gives(tmp_path, monkeypatch):
    # a build process compiles each module with a Context that has loaded the
    # module's cimports beforehand, and every process's later builds use a
    # copy of such a Context, whose .pxd scopes the builds before used: the C
    # must be the same, byte for byte, in whatever order modules are built
    sources = {
        "avro": generate_avro_module(parse_schema(record_schema("Preloaded", 7))).source,
        "marshmallow": marshmallow_source(),
        "resolving": resolving_source(),
    }
    monkeypatch.setattr(building, "_pristine", {})

    def c_of(kind: str, how: str) -> str:
        folder = tmp_path / f"{kind}-{how}"
        folder.mkdir()
        pyx = folder / f"the_{kind}_module.pyx"
        pyx.write_text(sources[kind])
        context = building._pristine_context(sources[kind], FLAGS) if how == "preloaded" else None
        assert (context is not None) == (how == "preloaded")
        monkeypatch.setattr(building, "_preloaded_context", context)
        return building._cythonize(pyx, pyx.stem, FLAGS, reuse=how.startswith("reused")).read_text()

    fresh = {kind: c_of(kind, "fresh") for kind in sources}
    for turn, order in enumerate([list(sources), list(reversed(sources))]):
        for kind in order:
            assert c_of(kind, f"reused{turn}") == fresh[kind], (kind, turn)
    # the pristine Contexts were copied, never compiled with
    assert building._pristine
    for context in building._pristine.values():
        assert not [name for name in context.modules if name.startswith("the_")]
    for kind in sources:  # (last: a preloaded Context is compiled with, as in a forked build)
        assert c_of(kind, "preloaded") == fresh[kind], kind


def test_an_idle_build_process_ends(monkeypatch):
    monkeypatch.setattr(buildserver, "BUILD_IDLE_SECONDS", 0.5)
    with pytest.raises(CompileError):
        compiler.load("def f(:\n    pass\n", FLAGS, build="child")
    (pid,) = compiler.build_workers()
    assert wait_until(lambda: not running(pid), 15)
    assert compiler.build_workers() == []


def test_builds_from_threads_at_once_all_arrive():
    sources = [generate_avro_module(parse_schema(record_schema(f"Threaded{i}"))).source for i in range(3)]
    modules, errors = [], []

    def build(source):
        try:
            modules.append(compiler.load(source, FLAGS, build="child"))
        except Exception as error:  # noqa: BLE001 - the test looks at it
            errors.append(error)

    threads = [threading.Thread(target=build, args=(source,)) for source in sources]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert errors == [] and len({module.__name__ for module in modules}) == 3
    assert 1 <= len(compiler.build_workers()) <= compiler.BUILD_WORKERS


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forked copies need os.fork")
def test_a_large_source_goes_to_cython_in_a_forked_copy(tmp_path):
    # a build process gives a large source to Cython in a copy of itself,
    # which ends (and frees Cython's memory) before the C compiler starts;
    # run in a process of its own, as a build process is (no other thread)
    source = generate_avro_module(
        parse_schema({"type": "record", "name": "Apart", "fields": [{"name": "x", "type": "long"}]})
    ).source
    (tmp_path / "apart.pyx").write_text(source)
    (tmp_path / "broken.pyx").write_text("cdef int f(:\n")
    script = textwrap.dedent("""
        import os, sys
        from pathlib import Path
        from roastedavro import building
        from roastedavro.errors import CompileError
        from roastedavro.flags import CompileFlags
        building._serving = True
        building._LARGE_SOURCE = 0
        folder = Path(sys.argv[1])
        cythonize = building._cythonize
        def recorded(pyx, name, flags, collect=True):
            (folder / "pid").write_text(str(os.getpid()))
            return cythonize(pyx, name, flags, collect)
        building._cythonize = recorded
        c_file = building._cythonize_apart(folder / "apart.pyx", "apart", CompileFlags())
        print(c_file, os.getpid())
        try:
            building._cythonize_apart(folder / "broken.pyx", "broken", CompileFlags())
        except CompileError as error:
            print("refused:", str(error).splitlines()[0])
    """)
    # from another folder: the installed roastedavro, not the source tree
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    first, refused = done.stdout.splitlines()[:2]
    c_file, pid = first.split()
    assert c_file == str(tmp_path / "apart.c") and "PyInit_apart" in Path(c_file).read_text()
    assert int((tmp_path / "pid").read_text()) != int(pid)  # not the build process itself
    assert refused == "refused: Cython could not compile the generated module:"


def test_a_large_c_file_is_compiled_at_og_with_gccs_collector_tighter(tmp_path, monkeypatch, commands_run):
    # what a module of thousands of fields is built with, on a small schema:
    # the codec it gives writes and reads fastavro's bytes and values
    from roastedavro.buildenv import _compiler_command

    command = _compiler_command()
    gcc = building._is_gcc(tuple(command))
    monkeypatch.setattr(building, "_LARGE_C_FILE", 0)
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path))
    schema = {
        "type": "record",
        "name": "Big",
        "fields": [
            {"name": "x", "type": "long"},
            {"name": "flags", "type": {"type": "array", "items": "boolean"}},
            {
                "name": "shape",
                "type": [
                    "null",
                    {"type": "record", "name": "Dot", "fields": [{"name": "r", "type": "double"}]},
                    {
                        "type": "record",
                        "name": "Box",
                        "fields": [{"name": "side", "type": "double"}, {"name": "label", "type": "string"}],
                    },
                ],
            },
        ],
    }
    flags = CompileFlags(optimize="-O1")  # the default level, whatever ROASTEDAVRO_OPTIMIZE says
    codec, _ = build_avro_codec(schema, flags)
    builds = [args for args in commands_run if "-shared" in args or "-bundle" in args]
    assert builds and "-Og" in builds[-1] and "-O1" not in builds[-1]
    assert ("ggc-min-expand=20" in builds[-1]) == gcc
    parsed = fastavro.parse_schema(schema)
    for datum in (
        {"x": -5, "flags": [True, False, True], "shape": None},
        {"x": 2**40, "flags": [], "shape": {"r": 1.5}},
        {"x": 0, "flags": [False], "shape": {"side": 2.0, "label": "b"}},
    ):
        out = BytesIO()
        fastavro.schemaless_writer(out, parsed, datum)
        assert codec.dump(datum) == out.getvalue()
        assert codec.load(out.getvalue()) == fastavro.schemaless_reader(BytesIO(out.getvalue()), parsed)


def test_a_large_source_built_here_goes_to_cython_in_a_new_process(tmp_path, monkeypatch):
    # build="here" in a process that may run threads: a new Python, not a fork
    monkeypatch.setattr(building, "_serving", False)
    monkeypatch.setattr(building, "_LARGE_SOURCE", 0)

    def not_here(*args):
        raise AssertionError("Cython ran in the calling process")

    monkeypatch.setattr(building, "_cythonize", not_here)
    source = generate_avro_module(
        parse_schema({"type": "record", "name": "Apart", "fields": [{"name": "x", "type": "long"}]})
    ).source
    pyx = tmp_path / "apart.pyx"
    pyx.write_text(source)
    c_file = building._cythonize_apart(pyx, "apart", CompileFlags())
    assert c_file == tmp_path / "apart.c" and "PyInit_apart" in c_file.read_text()
    broken = tmp_path / "broken.pyx"
    broken.write_text("cdef int f(:\n")
    with pytest.raises(CompileError, match="Cython could not compile the generated module"):
        building._cythonize_apart(broken, "broken", CompileFlags())
