"""The compile cache: integrity, stale build folders, concurrency, tracebacks, installation.

Most tests run Python in a subprocess, as a later run of a program would: a
damaged cached module must never be loaded (loading one kills the process).
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from marshmallow import fields

import roastedavro
from roastedavro import CompileError, CompiledSchema, building, codecache, compiler

PACKAGE_DIR = Path(roastedavro.__file__).resolve().parent
REPOSITORY = Path(__file__).resolve().parent.parent  # the checkout the tests run from

SCRIPT = """
    import json, sys
    from marshmallow import fields
    from roastedavro import CompiledSchema, compiler
    class Sturdy(CompiledSchema):
        name = fields.String()
        count = fields.Integer()
        tags = fields.List(fields.String())
    record = {"name": "x", "count": 3, "tags": ["a", "b"]}
    schema = Sturdy().compile()
    assert schema.load_compiled(schema.dump_compiled(record)) == record
    module = next(iter(compiler._loaded.values()))
    print(json.dumps({"built": "cc" in compiler.last_timing, "module": module.__file__}))
"""


def run_python(code, cache, cwd, **env):
    environment = dict(os.environ, ROASTEDAVRO_CACHE_DIR=str(cache), **env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=environment,
        capture_output=True,
        text=True,
        cwd=str(cwd),
        timeout=300,
    )


def report(completed):
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def the_module(cache):
    (module,) = cache.glob("roastedavro_codec_*" + compiler.EXT_SUFFIX)
    return module


def dead_pid():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def make_old(path):
    past = time.time() - codecache.STALE_AFTER - 60
    os.utime(path, (past, past))


@pytest.fixture(scope="module")
def built_cache(tmp_path_factory):
    """A cache holding SCRIPT's module, built once; tests work on copies."""
    root = tmp_path_factory.mktemp("built")
    cache = root / "cache"
    first = report(run_python(SCRIPT, cache, root))
    assert first["built"]
    module = the_module(cache)
    digest = codecache._digest_path(module)
    assert digest.read_text().split() == [sha256(module), module.name]
    return cache


def copy_cache(built_cache, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(built_cache, cache)
    return cache


def test_cached_module_loads_without_building(built_cache, tmp_path):
    cache = copy_cache(built_cache, tmp_path)
    before = sorted(p.name for p in cache.iterdir())
    assert report(run_python(SCRIPT, cache, tmp_path))["built"] is False
    assert sorted(p.name for p in cache.iterdir()) == before


def truncate(module):
    data = module.read_bytes()
    module.write_bytes(data[: len(data) // 3])


def flip_bytes(module):
    data = bytearray(module.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(b ^ 0xFF for b in data[middle : middle + 64])
    module.write_bytes(bytes(data))


def not_a_module(module):
    module.write_bytes(b"\x7fELF" + bytes(4096))


def delete_digest(module):
    codecache._digest_path(module).unlink()


def wrong_digest(module):
    codecache._digest_path(module).write_text("0" * 64 + "  " + module.name + "\n")


def empty_digest(module):
    codecache._digest_path(module).write_bytes(b"")


@pytest.mark.parametrize(
    "damage", [truncate, flip_bytes, not_a_module, delete_digest, wrong_digest, empty_digest]
)
def test_damaged_cache_entry_is_rebuilt_not_loaded(built_cache, tmp_path, damage):
    cache = copy_cache(built_cache, tmp_path)
    module = the_module(cache)
    good = module.read_bytes()
    damage(module)
    # a build folder a killed process left behind, removed by this build
    stale = cache / f"{module.name.split('.')[0]}.build-{dead_pid()}.k1ll3d00"
    stale.mkdir()
    (stale / "half.c").write_text("/* killed here */")
    make_old(stale)

    result = report(run_python(SCRIPT, cache, tmp_path))

    assert result["built"] is True
    assert Path(result["module"]) == module
    assert len(module.read_bytes()) == len(good)
    assert codecache._digest_path(module).read_text().split() == [sha256(module), module.name]
    assert not stale.exists()
    assert sorted(p.name for p in cache.iterdir()) == sorted(p.name for p in built_cache.iterdir())
    # and the next run loads it
    assert report(run_python(SCRIPT, cache, tmp_path))["built"] is False


def test_intact_checks_module_against_its_digest(built_cache, tmp_path):
    cache = copy_cache(built_cache, tmp_path)
    module = the_module(cache)
    assert compiler._intact(module)
    flip_bytes(module)
    assert not compiler._intact(module)
    assert not compiler._intact(cache / "missing.so")


@pytest.mark.parametrize("start", ["empty", "damaged"])
def test_concurrent_processes_compile_the_same_schema(built_cache, tmp_path, start):
    if start == "empty":
        cache = tmp_path / "cache"
    else:
        cache = copy_cache(built_cache, tmp_path)
        truncate(the_module(cache))
    go = tmp_path / "go"
    waiting = textwrap.dedent(f"""
        import os, time
        while not os.path.exists({str(go)!r}):
            time.sleep(0.005)
    """) + textwrap.dedent(SCRIPT)
    environment = dict(os.environ, ROASTEDAVRO_CACHE_DIR=str(cache))
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", waiting],
            env=environment,
            cwd=str(tmp_path),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    time.sleep(0.5)
    go.touch()
    results = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    # one process builds; the others wait for it and load its module
    assert sum(result["built"] for result in results) == 1
    module = the_module(cache)
    assert compiler._intact(module)
    # the module (named "<module>.<build key>.<suffix>"), its digest, its
    # source and the C kept for other interpreters, and nothing else
    name = module.name.split(".", 1)[0]
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        [module.name, module.name + ".sha256", name + ".pyx", name + ".c.gz"]
    )


def test_stale_build_folders_are_removed(tmp_path):
    prefix = "roastedavro_codec_" + "0123456789abcdef" * 2
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        folders = {
            "dead, old": (f"{prefix}.build-{dead_pid()}.abc_1234", True, False),
            "dead, recent": (f"{prefix}.build-{dead_pid()}.abc_5678", False, True),
            "alive, old": (f"{prefix}.build-{sleeper.pid}.abc_9012", True, True),
            "this process, old": (f"{prefix}.build-{os.getpid()}.abc_3456", True, True),
            "older version, old": (f"{prefix}.k2j3h4g5", True, False),
            "older version, recent": (f"{prefix}.x9y8z7w6", False, True),
            "someone else's, old": ("notes", True, True),
        }
        for name, old, _ in folders.values():
            (tmp_path / name).mkdir()
            (tmp_path / name / "part.c").write_text("")
            if old:
                make_old(tmp_path / name)
        old_file = tmp_path / f"{prefix}.build-{dead_pid()}.notadir"
        old_file.write_text("")
        make_old(old_file)

        codecache._remove_stale_builds(tmp_path)

        for what, (name, _, kept) in folders.items():
            assert (tmp_path / name).exists() == kept, what
        assert old_file.exists()
    finally:
        sleeper.kill()
        sleeper.wait()
    codecache._remove_stale_builds(tmp_path / "missing")  # no cache yet: nothing to do


def test_build_folder_names_the_building_process(tmp_path, monkeypatch):
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path))
    seen = []

    def cythonize(pyx, name, flags):
        seen.append(pyx.parent.name)
        raise CompileError("stop here")

    monkeypatch.setattr(building, "_cythonize", cythonize)

    class Named(CompiledSchema):
        named_field = fields.Integer()

    with pytest.raises(CompileError, match="stop here"):
        Named().compile()
    (folder,) = seen
    match = codecache._BUILD_FOLDER.match(folder)
    assert match and int(match["pid"]) == os.getpid()
    assert list(tmp_path.iterdir()) == []  # the folder and the lock file are gone


MISSING_CC = """
    import json
    from marshmallow import fields
    from roastedavro import CompiledSchema, CompileError, compiler
    class NeedsCompiler(CompiledSchema):
        x = fields.Integer()
    try:
        NeedsCompiler().compile()
    except CompileError as error:
        print(json.dumps({"error": str(error), "cython_ran": "cython" in compiler.last_timing}))
"""


def test_missing_compiler_named_by_cc_is_a_compile_error(tmp_path):
    cache = tmp_path / "cache"
    result = report(run_python(MISSING_CC, cache, tmp_path, CC="/nonexistent/cc"))
    assert "CC='/nonexistent/cc'" in result["error"]
    assert "no C compiler found" in result["error"]
    assert result["cython_ran"] is False  # found out before running Cython
    assert not cache.exists() or list(cache.iterdir()) == []


@pytest.mark.parametrize(
    "value, message",
    [
        ('gcc "-DX=1', "CC='gcc \"-DX=1' is not a valid command"),
        ("{not_executable}", "CC='{not_executable}'"),
    ],
)
def test_unusable_cc_is_a_compile_error(tmp_path, monkeypatch, value, message):
    not_executable = tmp_path / "cc"
    not_executable.write_text("#!/bin/sh\n")
    not_executable.chmod(0o644)
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", value.format(not_executable=not_executable))

    class Unbuildable(CompiledSchema):
        unbuildable = fields.Integer()

    with pytest.raises(CompileError) as error:
        Unbuildable().compile()
    assert message.format(not_executable=not_executable) in str(error.value)


TRACEBACK = """
    import json, linecache, traceback
    from marshmallow import fields
    from roastedavro import CompiledSchema, compiler

    class Exploding(fields.Integer):
        def _serialize(self, value, attr, obj, **kwargs):
            raise RuntimeError("boom")

    class Traced(CompiledSchema):
        level = fields.Integer()
        exploding = Exploding()

    schema = Traced().compile()
    source = schema.compile_to_string().splitlines()

    def generated_frames():
        try:
            schema.dump_compiled({"level": 1, "exploding": 2})
        except RuntimeError as error:
            text = "".join(traceback.format_exception(error))
            frames = [frame for frame in traceback.extract_tb(error.__traceback__)
                      if frame.filename.startswith("roastedavro_codec_")]
            return text, [[frame.filename, frame.lineno, frame.line, source[frame.lineno - 1].strip()]
                          for frame in frames]

    text, frames = generated_frames()
    linecache.clearcache()  # as some tools do: the module's loader still has the source
    text_after_clear, frames_after_clear = generated_frames()
    module = next(iter(compiler._loaded.values()))
    print(json.dumps({"built": "cc" in compiler.last_timing, "text": text, "frames": frames,
                      "frames_after_clear": frames_after_clear, "module": module.__name__}))
"""


def test_tracebacks_show_generated_lines(tmp_path):
    # the cache below the current folder: Cython would name the source by its
    # path in the temporary build folder
    results = [report(run_python(TRACEBACK, "cache", tmp_path)) for _ in range(2)]
    assert [result["built"] for result in results] == [True, False]  # built, then cached
    for result in results:
        assert result["frames"], result["text"]
        assert result["frames_after_clear"] == result["frames"]
        for filename, lineno, line, generated in result["frames"]:
            assert filename == result["module"] + ".pyx"
            assert line and line == generated
            assert f'File "{filename}", line {lineno}' in result["text"]
            assert f"\n    {line}\n" in result["text"]


RUNTIME = """
    import sys
    # an editable install's finder would supply the runtime: run as a plain
    # checkout does
    sys.meta_path[:] = [finder for finder in sys.meta_path
                        if "__editable__" not in getattr(finder, "__module__", "")]
    from marshmallow import fields
    try:
        import roastedavro
        class NoRuntime(roastedavro.CompiledSchema):
            x = fields.Integer()
        NoRuntime().compile()
    except ImportError as error:
        print("ImportError:", error)
"""


def test_source_tree_without_runtime_says_how_to_build_it(tmp_path):
    tree = tmp_path / "checkout"
    shutil.copytree(
        PACKAGE_DIR,
        tree / "roastedavro",
        ignore=shutil.ignore_patterns("*.so", "*.pyd", "*.c", "*.html", "__pycache__"),
    )
    completed = run_python(RUNTIME, tmp_path / "cache", tree)
    assert completed.returncode == 0, completed.stderr
    message = completed.stdout.strip()
    assert message.startswith(
        f"ImportError: roastedavro's C runtime (roastedavro._runtime) "
        f"cannot be imported from {tree / 'roastedavro'}: "
    )
    assert "pip install ." in message and "pip install -e ." in message
    assert "run it from another folder" in message


def test_building_the_package_leaves_the_source_tree_as_it_was(tmp_path):
    if not (REPOSITORY / "setup.py").exists() or not (REPOSITORY / "roastedavro").is_dir():
        pytest.skip("not a source checkout")
    pytest.importorskip("setuptools")
    pytest.importorskip("Cython")
    tree = tmp_path / "checkout"
    tree.mkdir()
    for name in ("setup.py", "setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(REPOSITORY / name, tree / name)
    shutil.copytree(
        REPOSITORY / "roastedavro",
        tree / "roastedavro",
        ignore=shutil.ignore_patterns("*.so", "*.pyd", "*.c", "*.html", "__pycache__"),
    )
    before = sorted(str(p.relative_to(tree)) for p in tree.rglob("*"))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    # the build's layout without the C compiler's work: Cython runs, the
    # compiler and linker are no-ops
    environment = dict(
        os.environ, CC="true", LDSHARED="true", TMPDIR=str(temporary), PYTHONDONTWRITEBYTECODE="1"
    )
    completed = subprocess.run(
        [sys.executable, "setup.py", "-q", "build", "egg_info"],
        cwd=tree,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    assert sorted(str(p.relative_to(tree)) for p in tree.rglob("*")) == before
    assert list(temporary.iterdir()) == []  # the scratch folder is gone too


def world_writable(cache):
    os.chmod(cache, 0o777)


def group_writable(cache):
    os.chmod(cache, 0o770)


def owned_by_another_user(cache):
    # the tests may run as root: any other id will do
    os.chown(cache, os.geteuid() + 4242, -1)
    os.chmod(cache, 0o755)


@pytest.mark.skipif(os.name != "posix", reason="owners and modes are POSIX's")
@pytest.mark.parametrize("expose", [world_writable, group_writable, owned_by_another_user])
def test_a_cache_folder_others_control_is_never_loaded_from(built_cache, tmp_path, expose):
    # an intact module with its matching digest, in a folder someone else could
    # have planted it in: not loaded (compiling is forbidden, so nothing else is)
    cache = copy_cache(built_cache, tmp_path)
    if expose is owned_by_another_user and os.geteuid() != 0:
        pytest.skip("changing a folder's owner needs root")
    expose(cache)
    completed = run_python(SCRIPT, cache, tmp_path, ROASTEDAVRO_COMPILE="never")
    assert completed.returncode != 0
    assert "NotCompiledError" in completed.stderr
    assert "CacheFolderWarning" in completed.stderr and str(cache) in completed.stderr
    assert "is not used" in completed.stderr


@pytest.mark.skipif(os.name != "posix", reason="owners and modes are POSIX's")
@pytest.mark.parametrize(
    "which, expose", [("module", "world"), ("digest", "group"), ("module", "another-user")]
)
def test_a_cached_file_others_can_write_is_rebuilt_not_loaded(built_cache, tmp_path, which, expose):
    # the folder is private, but one of its files is not: a module and a
    # matching digest could have been swapped in through it
    cache = copy_cache(built_cache, tmp_path)
    os.chmod(cache, 0o700)
    module = the_module(cache)
    path = module if which == "module" else codecache._digest_path(module)
    if expose == "world":
        os.chmod(path, 0o666)
    elif expose == "group":
        os.chmod(path, 0o664)
    else:
        if os.geteuid() != 0:
            pytest.skip("changing a file's owner needs root")
        os.chown(path, os.geteuid() + 4242, -1)
    completed = run_python(SCRIPT, cache, tmp_path, ROASTEDAVRO_COMPILE="never")
    assert completed.returncode != 0 and "NotCompiledError" in completed.stderr
    assert report(run_python(SCRIPT, cache, tmp_path))["built"] is True
    status = path.stat()
    assert status.st_uid == os.geteuid() and status.st_mode & 0o022 == 0
    assert report(run_python(SCRIPT, cache, tmp_path))["built"] is False


@pytest.mark.skipif(os.name != "posix", reason="owners and modes are POSIX's")
def test_a_bypassed_cache_folder_still_gets_a_working_codec(built_cache, tmp_path):
    cache = copy_cache(built_cache, tmp_path)
    world_writable(cache)
    before = sorted(p.name for p in cache.iterdir())
    completed = run_python(SCRIPT, cache, tmp_path)
    out = report(completed)
    assert out["built"] is True  # built anew in a private folder, not loaded from the cache
    assert not out["module"].startswith(str(cache))
    assert "others can write to it (mode 777)" in completed.stderr
    assert sorted(p.name for p in cache.iterdir()) == before


def test_a_private_cache_folder_is_trusted(tmp_path):
    cache = tmp_path / "new" / "cache"
    assert compiler._unsafe(cache) is None  # created private to the user
    assert cache.stat().st_mode & 0o077 == 0


ANOTHER_BUILD = "import sys\nsys.version += ' (another build of this Python)'\n" + textwrap.dedent(
    SCRIPT
).replace(
    '"built": "cc" in compiler.last_timing',
    '"built": "cc" in compiler.last_timing, "c_cached": "c_cached" in compiler.last_timing, '
    '"cython": "Cython" in sys.modules',
)


def test_another_interpreter_takes_the_c_from_the_cache_and_runs_only_the_c_compiler(tmp_path):
    # what another Python (another virtual environment, the next leg of a test
    # matrix) finds: a module built by the first is not its own (its build key
    # names the interpreter), but the C is, and Cython is not even imported
    cache = tmp_path / "cache"
    first = report(run_python(SCRIPT, cache, tmp_path))
    assert first["built"]
    (kept,) = cache.glob("*.c.gz")
    second = report(run_python(ANOTHER_BUILD, cache, tmp_path))
    assert second["built"] and second["c_cached"] and not second["cython"]
    assert second["module"] != first["module"]
    # one module name (the C spells it), a file for each interpreter
    assert (
        Path(second["module"]).name.split(".")[0]
        == Path(first["module"]).name.split(".")[0]
        == kept.name[:-5]
    )
    assert sorted(cache.glob("*" + compiler.EXT_SUFFIX)) == sorted(
        [Path(first["module"]), Path(second["module"])]
    )


@pytest.mark.parametrize("damage", ["truncated", "emptied", "flipped", "not gzip", "writable by others"])
def test_a_damaged_kept_c_is_discarded_and_cython_runs_again(tmp_path, damage):
    cache = tmp_path / "cache"
    report(run_python(SCRIPT, cache, tmp_path))
    (kept,) = cache.glob("*.c.gz")
    data = kept.read_bytes()
    if damage == "truncated":
        kept.write_bytes(data[: len(data) // 2])
    elif damage == "emptied":  # what a crash can leave of a file renamed before it reached the disk
        kept.write_bytes(b"")
    elif damage == "flipped":  # in the compressed body: gzip's CRC-32 tells
        middle = len(data) // 2
        kept.write_bytes(data[:middle] + bytes([data[middle] ^ 0x10]) + data[middle + 1 :])
    elif damage == "not gzip":
        kept.write_bytes(b"int broken;\n")
    else:  # whole, but anyone could have swapped it
        kept.chmod(0o666)
    second = report(run_python(ANOTHER_BUILD, cache, tmp_path))
    # the script checked the rebuilt module's round trip
    assert second["built"] and not second["c_cached"] and second["cython"]
    assert kept.read_bytes() == data and kept.stat().st_mode & 0o022 == 0  # kept again, whole
