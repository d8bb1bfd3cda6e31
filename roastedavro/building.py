"""Building a codec module: its cache key, Cython, the C compiler, and the
module installed into the cache (see codecache).

Cython's compiler keeps global state and reports through sys.stderr: one
Cython run at a time per process. A large source is given to Cython in
another process, whose memory goes with it before the C compiler starts.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import importlib.machinery
import importlib.util
import io
import json
import os
import re
import sys
import sysconfig
import threading
import time
from pathlib import Path

from roastedavro import __version__
from roastedavro.buildenv import EXT_SUFFIX, _compiler_command
from roastedavro.codecache import (
    _build_lock,
    _discard,
    _fsync,
    _install,
    _intact,
    _own_bytes,
    _remove_stale_builds,
    _unwritable,
)
from roastedavro.errors import CompileError
from roastedavro.flags import CompileFlags

# shlex, shutil, signal, subprocess and tempfile are imported where a build
# needs them: a process served by the interpreter or by stored codecs never
# does (they cost it about 2 MB)

PACKAGE_DIR = Path(__file__).resolve().parent
# one Cython run at a time per process
_cython_lock = threading.Lock()

#: timings of the last build or load in this process, for reports
last_timing: dict[str, float] = {}

#: whether this process is a build process (buildserver.serve_build), which
#: may fork (it runs no other thread)
_serving = False
#: the file descriptors of a build process's pipes to its parent, which its
#: forked copies close
_private_fds: tuple[int, ...] = ()


@functools.lru_cache(maxsize=None)
def _runtime_fingerprint() -> str:
    # the declarations codecs compile against, and the built runtime they
    # link to at import: a runtime rebuilt from changed sources never meets
    # a codec built for the old one
    # (importing roastedavro checked that the runtime is built)
    from roastedavro import _runtime

    digest = hashlib.sha256()
    for path in (PACKAGE_DIR / "_runtime.pxd", PACKAGE_DIR / "_runtime.pyx", Path(_runtime.__file__)):
        digest.update(path.read_bytes())
    return digest.hexdigest()


@functools.lru_cache(maxsize=None)
def _cython_version() -> str:
    """Cython's version, read from its Shadow.py when Cython is not imported:
    a process that only looks codecs up in the cache does not import Cython
    (a few MB) for it."""
    module = sys.modules.get("Cython")
    if module is None:
        spec = importlib.util.find_spec("Cython")
        if spec is not None and spec.submodule_search_locations:
            shadow = Path(list(spec.submodule_search_locations)[0]) / "Shadow.py"
            with contextlib.suppress(OSError, UnicodeDecodeError):
                found = re.search(
                    r"""^__version__ = ["']([^"']+)["']$""", shadow.read_text(encoding="utf-8"), re.M
                )
                if found:
                    return found.group(1)
        import Cython as module
    return module.__version__  # type: ignore[union-attr]  # imported just above where it was not


def build_key(source: str, flags: CompileFlags) -> str:
    digest = hashlib.sha256()
    for part in (
        source,
        __version__,
        _runtime_fingerprint(),
        _cython_version(),
        sys.version,
        sysconfig.get_platform(),
        EXT_SUFFIX,
        flags.build_key(),
        os.environ.get("CC", ""),
    ):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


@functools.lru_cache(maxsize=None)
def _runtime_sources_fingerprint() -> str:
    digest = hashlib.sha256()
    for path in (PACKAGE_DIR / "_runtime.pxd", PACKAGE_DIR / "_runtime.pyx"):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def aot_key(source: str, flags: CompileFlags) -> str:
    """What a precompiled module (``roastedavro build``) must match to be
    loaded: the generated source (the schema and the generator's output),
    roastedavro's version, the runtime's sources, the interpreter's ABI and
    platform, and the build flags. Cython's version and the exact Python
    build do not matter once the C is compiled."""
    digest = hashlib.sha256()
    for part in (
        source,
        __version__,
        _runtime_sources_fingerprint(),
        EXT_SUFFIX,
        sysconfig.get_platform(),
        flags.build_key(),
    ):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def source_filename(name: str) -> str:
    """The file name tracebacks and ``linecache`` give the module ``name``'s source."""
    return f"{name}.pyx"


def source_key(source: str) -> str:
    """What the C that Cython makes of ``source`` depends on: the source,
    roastedavro's version, the runtime's declarations and Cython's version,
    and no interpreter. It names the module (``cache_names``), so that the
    C, which spells the module's name, is the same for every Python and is
    kept in the cache for all of them (a second Python runs only the C
    compiler)."""
    digest = hashlib.sha256()
    for part in (source, __version__, _runtime_sources_fingerprint(), _cython_version()):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def _module_name(key: str, fingerprint: str | None) -> str:
    if fingerprint and re.fullmatch(r"[0-9a-f]{16}", fingerprint):
        return f"roastedavro_codec_{fingerprint}_{key[:20]}"
    return f"roastedavro_codec_{key}"


def cache_names(
    source: str, flags: CompileFlags, fingerprint: str | None, key: str | None = None
) -> tuple[str, str]:
    """The module's name (from ``source_key``) and its file's name in the
    cache: the name, the start of the ``build_key`` (this interpreter, the
    flags, the compiler; ``key`` where the caller has it already) and the
    interpreter's extension suffix."""
    name = _module_name(source_key(source), fingerprint)
    return name, f"{name}.{(key or build_key(source, flags))[:12]}{EXT_SUFFIX}"


def c_cache_file(directory: Path, name: str) -> Path:
    """Where the cache keeps the C of the module ``name`` (gzip-compressed)."""
    return directory / f"{name}.c.gz"


def _build_cached(source: str, name: str, directory: Path, target: Path, flags: CompileFlags) -> None:
    with _build_lock(directory, name):
        # another process may have built it while this one waited
        if not _intact(target):
            _discard(target)
            _build(source, name, directory, target, flags)


def _ended(code: int) -> str:
    """How a process with exit code ``code`` (negative: a signal) ended."""
    if code >= 0:
        return f"exit status {code}"
    import signal

    try:
        return f"killed by signal {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"


def _build(source: str, name: str, directory: Path, target: Path, flags: CompileFlags) -> None:
    import shutil
    import tempfile

    command = _compiler_command()  # a missing compiler fails before Cython runs
    _remove_stale_builds(directory)
    try:
        workdir = Path(tempfile.mkdtemp(prefix=f"{name}.build-{os.getpid()}.", dir=directory))
    except OSError as error:
        raise _unwritable(directory, error) from None
    try:
        pyx = workdir / f"{name}.pyx"
        pyx.write_text(source, encoding="utf-8")
        started = time.perf_counter()
        c_file = None if flags.annotate else _cached_c(directory, name, workdir)
        reused = c_file is not None
        if c_file is None:
            c_file = _cythonize_apart(pyx, name, flags)
        cythonized = time.perf_counter()
        built = _compile_c(command, c_file, workdir / f"{name}{EXT_SUFFIX}", flags)
        compiled = time.perf_counter()
        last_timing.update(cython=cythonized - started, cc=compiled - cythonized)
        if reused:
            last_timing["c_cached"] = 1.0
        else:  # kept once it compiled: a failed build leaves nothing behind
            _keep_c(c_file, directory, name, workdir)
        # the source stays beside the module for reading; tracebacks take it
        # from linecache
        os.replace(pyx, directory / pyx.name)
        if flags.annotate:
            html = workdir / f"{name}.html"
            if html.exists():
                os.replace(html, directory / html.name)
        _install(built, target, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


# -- the C kept for other interpreters ------------------------------------------
#
# The C that Cython writes for a module depends on the source and on Cython,
# not on the interpreter that will load it (it is what an sdist ships), and
# Cython's run is about half of a small module's build. The cache keeps it
# beside the modules, compressed (a tenth of its size), so that another
# Python (another virtual environment, another leg of a test matrix, a wheel
# built for the next interpreter) runs only the C compiler. It is installed
# by a rename (never seen half-written) and read through gzip's CRC-32: a
# damaged copy is discarded and Cython runs again.


def _cached_c(directory: Path, name: str, workdir: Path) -> Path | None:
    """The cached C of module ``name``, written into ``workdir``; None when
    the cache has none or a damaged one (which is removed)."""
    import gzip
    import zlib

    kept = c_cache_file(directory, name)
    try:
        # the user's own regular file, as a cached module must be
        compressed = _own_bytes(kept)
        if compressed is None:
            raise OSError("not the user's own file")
        data = gzip.decompress(compressed)
        if not data:  # gzip reads an empty file as empty data: no C is empty
            raise OSError("empty")
    except FileNotFoundError:
        return None
    except (OSError, EOFError, zlib.error):
        with contextlib.suppress(OSError):
            kept.unlink()
        return None
    c_file = workdir / f"{name}.c"
    c_file.write_bytes(data)
    with contextlib.suppress(OSError):
        os.utime(kept)  # used: evicted last (codecache._bound_cache)
    return c_file


def _keep_c(c_file: Path, directory: Path, name: str, workdir: Path) -> None:
    """Keeps ``c_file`` in the cache for other interpreters; a cache that
    cannot take it (full disk) only loses the saving."""
    import gzip

    staged = workdir / f"{name}.c.gz"
    try:
        staged.write_bytes(gzip.compress(c_file.read_bytes(), compresslevel=1, mtime=0))
        _fsync(staged)  # on disk before its name is, as a module is (codecache._install)
        os.replace(staged, c_cache_file(directory, name))
    except OSError:
        with contextlib.suppress(OSError):
            staged.unlink()


@contextlib.contextmanager
def _source_named(filename: str):
    # Cython names the source in tracebacks by its path relative to the
    # current folder when it lies below it (here: the temporary build folder,
    # gone after the build), else by the module name. Every build names it
    # `filename`, whatever the current folder.
    from Cython.Compiler import Main

    setup = getattr(Main, "setup_source_object", None)
    if setup is None:  # pragma: no cover - other Cython versions
        yield
        return

    def setup_named(*args, **kwargs):
        compilation_source = setup(*args, **kwargs)
        description = getattr(compilation_source, "source_desc", None)
        if hasattr(description, "file_path"):
            description.file_path = filename
        return compilation_source

    Main.setup_source_object = setup_named
    try:
        yield
    finally:
        Main.setup_source_object = setup


def _cython_options(c_file: Path, flags: CompileFlags):
    from Cython.Compiler.Main import CompilationOptions, default_options

    return CompilationOptions(
        default_options,
        include_path=[str(PACKAGE_DIR.parent)],
        output_file=str(c_file),
        language_level=3,
        annotate=flags.annotate,
        timestamps=False,
        c_line_in_traceback=False,
        # no copy of the .pyx around every statement: half the C file's
        # bytes, about a quarter of the C compiler's time on wide records
        # (tracebacks show the .pyx lines themselves)
        compiler_directives={"emit_code_comments": False},
    )


# what a module cimports, in order: "cimport a.b" and "from a.b cimport ..." at
# the start of a line
_CIMPORT = re.compile(r"^(?:cimport\s+([\w.]+)|from\s+([\w.]+)\s+cimport\b)", re.MULTILINE)
# preloaded Contexts by what the module cimports (a few: one per generator)
_pristine: dict[tuple[str, ...], object] = {}
_PRISTINE_MAX = 8


def _pristine_context(source: str, flags: CompileFlags):
    """A Cython Context that has loaded the .pxd files ``source`` cimports, in
    the order it cimports them, and compiled nothing: what a fresh Context has
    after those cimports, so a module compiled with it (once: compiling
    changes a Context: see _reused_context) is the C a fresh Context gives,
    byte for byte. Made once per list of cimports; None when Cython cannot
    load them (the build then says why)."""
    cimports = tuple(first or second for first, second in _CIMPORT.findall(source))
    if cimports in _pristine:
        return _pristine[cimports]
    context = None
    try:
        from Cython.Compiler import Errors
        from Cython.Compiler.Main import Context

        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            try:
                context = Context.from_options(_cython_options(Path("preload.c"), flags))
                for module in cimports:
                    context.find_module(module, pos=None, need_pxd=1)
            except Exception:  # noqa: BLE001 - a build without a preloaded Context reports it
                context = None
            finally:
                Errors.reset()
    except ImportError:
        pass
    if len(_pristine) < _PRISTINE_MAX:
        _pristine[cimports] = context
    return context


def _reused_context(source: str, flags: CompileFlags):
    """A Context for one build in this process: a copy of the pristine
    Context of the module's cimports. Cython does not copy its scopes
    (Scope.__deepcopy__ gives the scope itself), so the .pxd files parsed
    once serve every build (Cython's step of a small module 0.30 -> 0.17 s,
    the copy about 0.05 s of it); the table of modules and the pxd trees
    are the copy's own, so a module compiled leaves nothing in the next
    one's Context. The C is the C a fresh Context gives, byte for byte
    (tests/test_build_worker.py).
    None where there is no pristine Context: a fresh one then."""
    import copy

    pristine = _pristine_context(source, flags)
    if pristine is None:
        return None
    try:
        return copy.deepcopy(pristine)
    except RecursionError:  # pragma: no cover - a Context deeper than the interpreter allows
        return None


#: a Cython Context with the module's cimports already loaded, for one build
#: (set only in a build process's forked child: see _fork_build)
_preloaded_context = None


def _cythonize(pyx: Path, name: str, flags: CompileFlags, collect: bool = True, reuse: bool = True) -> Path:
    """The C of module ``name`` from ``pyx``. ``reuse``: with a copy of the
    pristine Context of its cimports (where no preloaded one is set), as
    every build after a process's first (a process that builds once needs
    none)."""
    try:
        from Cython.Compiler import Errors
        from Cython.Compiler.Main import compile_single
    except ImportError:
        raise CompileError(
            "Cython is needed to compile schemas but is not installed: pip install cython"
        ) from None
    c_file = pyx.with_suffix(".c")
    options = _cython_options(c_file, flags)
    report = io.StringIO()
    with (
        _cython_lock,
        _source_named(source_filename(name)),
        _collector_paused(collect),
        contextlib.redirect_stderr(report),
        contextlib.redirect_stdout(report),
    ):
        try:
            context = _preloaded_context
            if context is None and reuse:
                context = _reused_context(pyx.read_text(encoding="utf-8"), flags)
            result = compile_single(str(pyx), options, full_module_name=name, context=context)
            failed = result.num_errors > 0
        except Errors.CompileError as error:
            failed = True
            report.write(str(error))
        finally:
            Errors.reset()
    if failed or not c_file.exists():
        raise CompileError(f"Cython could not compile the generated module:\n{report.getvalue()}")
    return c_file


@functools.lru_cache(maxsize=8)
def _is_gcc(command: tuple) -> bool:
    """Whether the C compiler is gcc (whose --param options clang refuses)."""
    import subprocess

    try:
        done = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return "Free Software Foundation" in done.stdout


@contextlib.contextmanager
def _collector_paused(collect: bool = True):
    # Cython's tree of a module (millions of objects) lives until the C is
    # written, and Python's cycle collector would walk it again and again:
    # 40 % of Cython's time on a 3,462-field schema. Its cycles are
    # collected once, after (not by a process that ends with the build, nor
    # where the collector was off).
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
            if collect:
                gc.collect()


#: C files larger than this are compiled at -Og (_OG_ARGS) where the
#: default -O1 was asked for (a 3,462-field schema's module in 32 s instead
#: of 67-80 s; modules below it keep -O1 until the whole benchmark has been
#: measured at -Og), and by gcc with its own garbage collector run more
#: often (gcc sizes its heap by the machine's memory): that module peaks at
#: 0.7 GB instead of 1.0 GB
_LARGE_C_FILE = 4 << 20
_LARGE_C_OPTIMIZE = "-Og"
#: what -Og stands for here: -Og with the passes a loop over values needs
#: (without them a dump of an array of booleans is 20-25 % slower than at
#: -O1; with them it runs alike), which cost no time that shows
_OG_ARGS = (
    "-Og",
    "-fif-conversion",
    "-fif-conversion2",
    "-ftree-sra",
    "-fssa-phiopt",
    "-ftree-pta",
    "-ftree-dse",
    "-fmove-loop-invariants",
    "-ftree-bit-ccp",
)
_LARGE_C_FLAGS = ("--param", "ggc-min-expand=20", "--param", "ggc-min-heapsize=32768")


#: sources larger than this are given to Cython in another process (see
#: _cythonize_apart)
_LARGE_SOURCE = 1 << 20


def _cythonize_in_new_process(pyx: Path, name: str, flags: CompileFlags) -> Path:
    """_cythonize run by a new Python process (isolated: -P, in the build
    folder) with this process's module path, checked to find this very
    roastedavro (whose runtime the module's key names)."""
    import dataclasses
    import subprocess

    script = (
        "import json, os, sys\n"
        "request = json.loads(sys.stdin.read())\n"
        "sys.path[:] = request['path']\n"
        "from pathlib import Path\n"
        "from roastedavro import building\n"
        "from roastedavro.errors import CompileError\n"
        "from roastedavro.flags import CompileFlags\n"
        "if str(building.PACKAGE_DIR) != request['package']:\n"
        "    sys.stderr.write(f'another roastedavro was found: {building.PACKAGE_DIR}')\n"
        "    sys.stderr.flush()\n"
        "    os._exit(4)\n"
        "try:\n"
        "    building._cythonize(Path(request['pyx']), request['name'],\n"
        "                        CompileFlags(**request['flags']), collect=False, reuse=False)\n"
        "except CompileError as error:\n"
        "    sys.stderr.write(str(error))\n"
        "    sys.stderr.flush()\n"
        "    os._exit(3)\n"
        "sys.stdout.flush()\n"
        "os._exit(0)\n"
    )
    cwd = os.getcwd()
    request = json.dumps(
        {
            # this process's current folder stands for its '' entry
            "path": [entry or cwd for entry in sys.path],
            "package": str(PACKAGE_DIR),
            "pyx": str(pyx),
            "name": name,
            "flags": dataclasses.asdict(flags),
        }
    )
    try:
        done = subprocess.run(
            [sys.executable, "-P", "-c", script],
            input=request.encode(),
            capture_output=True,
            cwd=str(pyx.parent),
        )
    except OSError:  # no process can be started: here
        return _cythonize(pyx, name, flags)
    errors = done.stderr.decode(errors="replace").strip()
    if done.returncode == 3:
        raise CompileError(errors)
    c_file = pyx.with_suffix(".c")
    if done.returncode != 0 or not c_file.exists():
        raise CompileError(f"Cython failed in its process ({_ended(done.returncode)}):\n{errors[-2000:]}")
    return c_file


def _cythonize_apart(pyx: Path, name: str, flags: CompileFlags) -> Path:
    """_cythonize, for a large source in another process: Cython's tree of a
    3,462-field schema leaves 0.4 GB that Python's allocator keeps
    (fragmented) after it is freed, which the C compiler would add to. A
    build process forks a copy of itself (it runs no other thread); any
    other process (build="here") starts a new Python, whose start-up costs
    a second of a build of a minute. Either ends before the C compiler starts."""
    if pyx.stat().st_size <= _LARGE_SOURCE:
        return _cythonize(pyx, name, flags)
    if not (_serving and hasattr(os, "fork")):
        return _cythonize_in_new_process(pyx, name, flags)
    readable, writable = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no memory or processes left for a copy: here
        os.close(readable)
        os.close(writable)
        return _cythonize(pyx, name, flags)
    if pid == 0:  # pragma: no cover - the forked copy; its outcome is checked below
        try:
            os.close(readable)
            for fd in _private_fds:  # the pipes to the parent: not held past its build process
                with contextlib.suppress(OSError):
                    os.close(fd)
            try:
                _cythonize(pyx, name, flags, collect=False)
                message = b""
            except CompileError as error:
                message = str(error).encode()
            except BaseException as error:  # noqa: BLE001 - reported to the parent
                message = f"Cython failed: {error!r}".encode()
            with os.fdopen(writable, "wb") as out:
                out.write(message)
        finally:
            os._exit(0)
    os.close(writable)
    try:
        with os.fdopen(readable, "rb") as replies:
            message = replies.read()
    finally:
        _, status = os.waitpid(pid, 0)
    if message:
        raise CompileError(message.decode(errors="replace"))
    c_file = pyx.with_suffix(".c")
    if status != 0 or not c_file.exists():
        raise CompileError(f"Cython crashed ({_ended(os.waitstatus_to_exitcode(status))})")
    return c_file


def _compile_c(command: list[str], c_file: Path, output: Path, flags: CompileFlags) -> Path:
    includes = {sysconfig.get_path("include"), sysconfig.get_path("platinclude")}
    # -pipe: no temporary assembly file between the compiler's stages (about
    # a tenth of a small module's build)
    large = c_file.stat().st_size > _LARGE_C_FILE
    optimize = _LARGE_C_OPTIMIZE if large and flags.optimize == "-O1" else flags.optimize
    args = [
        *(_OG_ARGS if optimize == "-Og" else (optimize,)),
        "-g0",
        "-pipe",
        "-fPIC",
        "-fno-semantic-interposition",
        "-fwrapv",
        "-fno-strict-aliasing",
        "-DNDEBUG",
        "-w",
        *(f"-I{path}" for path in sorted(includes) if path),
    ]
    if large and _is_gcc(tuple(command)):
        args += _LARGE_C_FLAGS
    if sys.platform == "darwin":
        args += ["-bundle", "-undefined", "dynamic_lookup"]
    else:
        args += ["-shared"]
    args += [str(c_file), "-o", str(output)]
    import subprocess

    try:
        completed = subprocess.run(command + args, capture_output=True, text=True)
    except OSError as error:
        raise CompileError(
            f"the C compiler {' '.join(command)!r} cannot be run ({error.strerror or error}). "
            "Install gcc or clang, or set CC to your compiler"
        ) from None
    if completed.returncode != 0:
        raise CompileError(
            f"the C compiler failed ({' '.join(command)}, exit {completed.returncode}):\n"
            f"{completed.stderr.strip()}"
        )
    return output
