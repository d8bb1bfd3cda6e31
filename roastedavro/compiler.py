"""Builds generated Cython source into an extension module, with a disk cache.

The cache key covers everything that changes the binary: the generated
source, the runtime's declarations, roastedavro's, Cython's and Python's
versions, the platform and the build flags. A cached module is loaded
without running Cython or the C compiler. Modules are built in a private
temporary folder and moved into the cache with one atomic rename, so
concurrent builds (threads or processes) never see a half-written file and
a failed build leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import io
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path
from types import ModuleType

from roastedavro import __version__
from roastedavro.errors import CompileError
from roastedavro.flags import CompileFlags

PACKAGE_DIR = Path(__file__).resolve().parent
CACHE_ENV = "ROASTEDAVRO_CACHE_DIR"
EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"

_loaded: dict[str, ModuleType] = {}
_key_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()
# Cython's compiler keeps global state and reports through sys.stderr:
# one Cython run at a time per process.
_cython_lock = threading.Lock()

#: timings of the last build or load in this process, for reports
last_timing: dict[str, float] = {}


def cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("roastedavro", appauthor=False))


@functools.lru_cache(maxsize=None)
def _runtime_fingerprint() -> str:
    # the declarations codecs compile against, and the built runtime they
    # link to at import: a runtime rebuilt from changed sources never meets
    # a codec built for the old one
    from roastedavro import _runtime

    digest = hashlib.sha256()
    for path in (PACKAGE_DIR / "_runtime.pxd", PACKAGE_DIR / "_runtime.pyx", Path(_runtime.__file__)):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def build_key(source: str, flags: CompileFlags) -> str:
    import Cython

    digest = hashlib.sha256()
    for part in (
        source,
        __version__,
        _runtime_fingerprint(),
        Cython.__version__,
        sys.version,
        sysconfig.get_platform(),
        EXT_SUFFIX,
        flags.build_key(),
        os.environ.get("CC", ""),
    ):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def load(source: str, flags: CompileFlags) -> ModuleType:
    """The extension module for ``source``: from memory, the disk cache, or built."""
    key = build_key(source, flags)
    module = _loaded.get(key)
    if module is not None:
        return module
    with _locks_guard:
        lock = _key_locks.setdefault(key, threading.Lock())
    with lock:
        module = _loaded.get(key)
        if module is not None:
            return module
        name = f"roastedavro_codec_{key}"
        directory = cache_dir()
        target = directory / f"{name}{EXT_SUFFIX}"
        started = time.perf_counter()
        if target.exists():
            last_timing.clear()
        else:
            _build(source, name, directory, target, flags)
        loaded_at = time.perf_counter()
        module = _import(name, target)
        last_timing["load"] = time.perf_counter() - loaded_at
        last_timing["total"] = time.perf_counter() - started
        _loaded[key] = module
        return module


def _import(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(source: str, name: str, directory: Path, target: Path, flags: CompileFlags) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        workdir = Path(tempfile.mkdtemp(prefix=f"{name}.", dir=directory))
    except OSError as error:
        raise CompileError(
            f"cannot write to the module cache {directory} ({error}); "
            f"set {CACHE_ENV} to a writable folder"
        ) from None
    try:
        pyx = workdir / f"{name}.pyx"
        pyx.write_text(source, encoding="utf-8")
        started = time.perf_counter()
        c_file = _cythonize(pyx, name, flags)
        cythonized = time.perf_counter()
        built = _compile_c(c_file, workdir / f"{name}{EXT_SUFFIX}", flags)
        compiled = time.perf_counter()
        last_timing.update(cython=cythonized - started, cc=compiled - cythonized)
        # the source stays beside the module so tracebacks can show it
        os.replace(pyx, directory / pyx.name)
        if flags.annotate:
            html = workdir / f"{name}.html"
            if html.exists():
                os.replace(html, directory / html.name)
        os.replace(built, target)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _cythonize(pyx: Path, name: str, flags: CompileFlags) -> Path:
    try:
        from Cython.Compiler import Errors
        from Cython.Compiler.Main import CompilationOptions, compile_single, default_options
    except ImportError:
        raise CompileError(
            "Cython is needed to compile schemas but is not installed: pip install cython"
        ) from None
    c_file = pyx.with_suffix(".c")
    options = CompilationOptions(
        default_options,
        include_path=[str(PACKAGE_DIR.parent)],
        output_file=str(c_file),
        language_level=3,
        annotate=flags.annotate,
        timestamps=False,
        c_line_in_traceback=False,
    )
    report = io.StringIO()
    with _cython_lock, contextlib.redirect_stderr(report), contextlib.redirect_stdout(report):
        try:
            result = compile_single(str(pyx), options, full_module_name=name)
            failed = result.num_errors > 0
        except Errors.CompileError as error:
            failed = True
            report.write(str(error))
        finally:
            Errors.reset()
    if failed or not c_file.exists():
        raise CompileError(f"Cython could not compile the generated module:\n{report.getvalue()}")
    return c_file


def _compiler_command() -> list[str]:
    configured = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shlex.split(configured)


def _compile_c(c_file: Path, output: Path, flags: CompileFlags) -> Path:
    command = _compiler_command()
    includes = {sysconfig.get_path("include"), sysconfig.get_path("platinclude")}
    args = [
        flags.optimize, "-g0", "-fPIC", "-fno-semantic-interposition", "-fwrapv", "-fno-strict-aliasing", "-DNDEBUG",
        "-w", *(f"-I{path}" for path in sorted(includes) if path),
    ]
    if sys.platform == "darwin":
        args += ["-bundle", "-undefined", "dynamic_lookup"]
    else:
        args += ["-shared"]
    args += [str(c_file), "-o", str(output)]
    try:
        completed = subprocess.run(command + args, capture_output=True, text=True)
    except FileNotFoundError:
        raise CompileError(
            f"no C compiler found: {command[0]!r} is not installed or not on PATH. "
            "Install gcc or clang, or set CC to your compiler"
        ) from None
    if completed.returncode != 0:
        raise CompileError(
            f"the C compiler failed ({' '.join(command)}, exit {completed.returncode}):\n"
            f"{completed.stderr.strip()}"
        )
    return output
