"""Builds generated Cython source into an extension module, with a disk cache.

The cache key covers everything that changes the binary: the generated
source, the runtime's declarations, roastedavro's, Cython's and Python's
versions, the platform and the build flags. A cached module is loaded
without running Cython or the C compiler.

A cached module is machine code loaded into the process, so a damaged one
must never reach the dynamic loader. Each module has a SHA-256 digest
beside it; the module is hashed and compared before it is loaded, and a
module that does not match its digest, or has none, is deleted and built
again. Modules are built in a private temporary folder inside the cache,
synced to disk and moved into place with one atomic rename; the digest is
written the same way, after the module. Building one key is serialized
across threads (a lock) and processes (a lock file): concurrent compiles of
a schema build it once, and a failed or killed build leaves nothing that is
ever loaded. Temporary folders of killed builds are removed by later builds.

A cache folder is trusted only when it belongs to the current user and no
one else can write to it (as pip does for its cache): anyone who can put a
file there can run code in every process that loads a codec from it. Any
other folder is bypassed with a :class:`CacheFolderWarning`; codecs are then
built in a private temporary folder of the process.
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
import linecache
import os
import re
import stat
import struct
import sys
import sysconfig
import threading
import time
from pathlib import Path
from types import ModuleType

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX: threads are still serialized
    fcntl = None

from roastedavro import __version__
from roastedavro.buildenv import (  # noqa: F401  (public here too)
    BUILD_MODES, CACHE_ENV, COMPILE_ENV, COMPILE_MODES, EXT_SUFFIX, CacheFolderWarning, _compiler_command,
    _unsafe, cache_dir, compile_mode, compiler_missing, may_be_stored, trusted_cache_dir,
)
from roastedavro.errors import CompileError, NotCompiledError
from roastedavro.flags import CompileFlags

# shlex, shutil, signal, subprocess and tempfile are imported where a build
# needs them: a process served by the interpreter or by stored codecs never
# does (they cost it about 2 MB)

PACKAGE_DIR = Path(__file__).resolve().parent
CACHE_LIMIT_ENV = "ROASTEDAVRO_CACHE_MAX_MB"
#: the cache's default size bound; least recently used modules go first
DEFAULT_CACHE_LIMIT_MB = 1024
DIGEST_SUFFIX = ".sha256"
#: a build folder untouched for this long, whose process is gone, is removed
STALE_AFTER = 600.0

_loaded: dict[str, ModuleType] = {}
_key_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()
# Cython's compiler keeps global state and reports through sys.stderr:
# one Cython run at a time per process.
_cython_lock = threading.Lock()
# build folders: "<module name>.build-<pid>.<random>"; older versions of
# roastedavro made "<module name>.<random>"
_BUILD_FOLDER = re.compile(
    r"roastedavro_codec_(?:[0-9a-f]{32}|[0-9a-f]{16}_[0-9a-f]{20})\.(?:build-(?P<pid>[0-9]+)\.[a-z0-9_]+|[a-z0-9_]{8})\Z")

#: timings of the last build or load in this process, for reports
last_timing: dict[str, float] = {}


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
                found = re.search(r"""^__version__ = ["']([^"']+)["']$""",
                                  shadow.read_text(encoding="utf-8"), re.M)
                if found:
                    return found.group(1)
        import Cython as module
    return module.__version__


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
    for part in (source, __version__, _runtime_sources_fingerprint(), EXT_SUFFIX,
                 sysconfig.get_platform(), flags.build_key()):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def source_filename(name: str) -> str:
    """The file name tracebacks and ``linecache`` give the module ``name``'s source."""
    return f"{name}.pyx"


def _module_name(key: str, fingerprint: str | None) -> str:
    if fingerprint and re.fullmatch(r"[0-9a-f]{16}", fingerprint):
        return f"roastedavro_codec_{fingerprint}_{key[:20]}"
    return f"roastedavro_codec_{key}"


def load(source: str, flags: CompileFlags, verify=None, fingerprint: str | None = None,
         build: str = "here", label: str | None = None) -> ModuleType:
    """The extension module for ``source``: from memory, an installed package
    of precompiled codecs, the disk cache, or built.

    ``verify()`` runs before a build (not when a module built from the same
    source is loaded) and raises to refuse the source. ``fingerprint`` (the
    schema's CRC-64-AVRO in hex) names the module, so that the cache shows
    which schema each file is for; ``label`` names the schema in errors.

    ``build`` says where a module missing from the cache is built: ``"here"``
    (Cython and the C compiler run in this process), ``"child"`` (in a child
    Python process, started at the first such build and reused by later ones:
    a thread waiting for it holds no GIL, so the rest of the program runs on
    at full speed) or ``"never"`` (raise
    :class:`NotCompiledError`, without waiting for a build another thread
    has under way). ``ROASTEDAVRO_COMPILE=never`` makes every build "never".
    """
    if build not in BUILD_MODES:
        raise ValueError(f"build must be one of {', '.join(BUILD_MODES)}, not {build!r}")
    key = build_key(source, flags)
    module = _loaded.get(key)
    if module is not None:
        return module
    with _locks_guard:
        lock = _key_locks.setdefault(key, threading.Lock())
    if not lock.acquire(blocking=build != "never"):
        raise NotCompiledError(f"the codec is being built by another thread ({_module_name(key, fingerprint)})")
    try:
        module = _loaded.get(key)
        if module is not None:
            return module
        started = time.perf_counter()
        last_timing.clear()
        module = _load_precompiled(source, flags, key)
        if module is None:
            module = _load_cached_or_build(source, flags, verify, fingerprint, build, label, key)
        last_timing["total"] = time.perf_counter() - started
        _loaded[key] = module
        return module
    finally:
        lock.release()


def _load_precompiled(source: str, flags: CompileFlags, key: str) -> ModuleType | None:
    from roastedavro import precompiled

    entry = precompiled.lookup(aot_key(source, flags))
    if entry is None:
        return None
    if not entry.intact():
        raise CompileError(f"the precompiled codec {entry.path} does not match the SHA-256 its "
                           f"package {entry.package!r} records: reinstall that package")
    loaded_at = time.perf_counter()
    module = _import(entry.module, entry.path, source)
    last_timing["load"] = time.perf_counter() - loaded_at
    last_timing["precompiled"] = 1.0
    return module


def _load_cached_or_build(source: str, flags: CompileFlags, verify, fingerprint: str | None,
                          build: str, label: str | None, key: str) -> ModuleType:
    name = _module_name(key, fingerprint)
    directory = trusted_cache_dir()
    target = directory / f"{name}{EXT_SUFFIX}"
    started = time.perf_counter()
    intact = _intact(target)
    last_timing["verify"] = time.perf_counter() - started
    if not intact:
        if compile_mode() == "never":
            what = label or (f"the schema with fingerprint {fingerprint}" if fingerprint else name)
            raise NotCompiledError(
                f"{what}: no precompiled codec is installed and {COMPILE_ENV}=never forbids "
                f"compiling one (nothing was built or cached). Build it where a C compiler is, "
                f"e.g. in CI: roastedavro build --package NAME --output dist/ SOURCE "
                f"(a module:Class or an .avsc file), then pip install the wheel into this "
                f"environment; or set {COMPILE_ENV}=auto")
        if build == "never":
            raise NotCompiledError(f"the codec {name} is not in the module cache {directory}")
        if verify is not None:
            verify()
        if build == "child":
            _build_in_child(source, flags, fingerprint, directory)
            if not _intact(target):
                raise CompileError(f"the child process that built {name} left no intact module")
        else:
            _build_cached(source, name, directory, target, flags)
        _bound_cache(directory, keep=name)
    else:
        _touch(target)
    loaded_at = time.perf_counter()
    module = _import(name, target, source)
    last_timing["load"] = time.perf_counter() - loaded_at
    return module


def _build_cached(source: str, name: str, directory: Path, target: Path, flags: CompileFlags) -> None:
    with _build_lock(directory, name):
        # another process may have built it while this one waited
        if not _intact(target):
            _discard(target)
            _build(source, name, directory, target, flags)


# -- building in a child process -------------------------------------------------
#
# Builds with build="child" go to a build process: a child Python process that
# builds one module per request, the first in itself (paying Cython's start-up,
# about a second, once) and every later one in a forked copy of itself whose
# Cython has the module's cimports loaded (serve_build). Requests (pickled) and
# replies (JSON) are length-prefixed messages on the child's stdin and stdout.
# The child exits when its stdin closes, which happens when this process
# exits, however it exits; it also watches that its parent is alive, and ends
# after BUILD_IDLE_SECONDS without a build.

_CHILD_CODE = "from roastedavro.compiler import _child_main; _child_main()"
#: build processes per process: builds beyond this many wait for one
BUILD_WORKERS = 2
# the environment a build process keeps from its start: a change to any of
# these starts a new one
_WORKER_ENV = ("CC", "PATH", "TMPDIR", "CPATH", "C_INCLUDE_PATH", "LIBRARY_PATH",
               "LD_LIBRARY_PATH", "PYTHONPATH")
_MESSAGE = struct.Struct("!Q")
_MAX_MESSAGE = 1 << 31
#: seconds a build process has to exit once asked to
_STOP_WAIT = 2.0
#: an idle build process ends after this many seconds (it holds Cython's
#: state: about 200 MB)
BUILD_IDLE_SECONDS = 300.0


class _WorkerGone(Exception):
    """The build process ended, or its pipe broke, during a request."""


def _read_exactly(stream, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_message(stream) -> bytes | None:
    """A length-prefixed message from ``stream``, or None at its end."""
    header = _read_exactly(stream, _MESSAGE.size)
    if header is None:
        return None
    (size,) = _MESSAGE.unpack(header)
    if size > _MAX_MESSAGE:
        return None
    return _read_exactly(stream, size)


def _write_message(stream, body: bytes) -> None:
    stream.write(_MESSAGE.pack(len(body)) + body)
    stream.flush()


def _ended(code: int) -> str:
    """How a process with exit code ``code`` (negative: a signal) ended."""
    if code >= 0:
        return f"exit status {code}"
    import signal

    try:
        return f"killed by signal {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"


def _timeout_expired() -> type:
    import subprocess  # imported already by the worker that waits

    return subprocess.TimeoutExpired


class _BuildWorker:
    """One build process; used by one thread at a time (see :class:`_WorkerPool`)."""

    def __init__(self, key: tuple, env: dict, directory: Path):
        import subprocess
        import tempfile

        self.key = key
        # its stderr, read when it dies: a crash's traceback or signal says why
        self._log = tempfile.TemporaryFile()
        try:
            # -P and the cache as the working folder: never a source tree that
            # happens to be the current folder
            self.process = subprocess.Popen(
                [sys.executable, "-P", "-c", _CHILD_CODE], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=self._log, env=env, cwd=directory)
        except OSError as error:
            self._log.close()
            raise CompileError(f"cannot start a Python process to build the codec: {error}") from None
        self.pid = self.process.pid
        self.builds = 0
        self.idle_timer: threading.Timer | None = None

    def alive(self) -> bool:
        return self.process.poll() is None

    def request(self, body: bytes) -> bytes:
        try:
            _write_message(self.process.stdin, body)
            reply = _read_message(self.process.stdout)
        except (OSError, ValueError):
            reply = None
        if reply is None:
            raise _WorkerGone
        self.builds += 1
        return reply

    def why_gone(self) -> str:
        """How the process ended (after a failed request), with its last words."""
        try:
            code = self.process.wait(timeout=_STOP_WAIT)
        except _timeout_expired():
            self.process.kill()
            code = self.process.wait()
        how = _ended(code)
        with contextlib.suppress(OSError, ValueError):
            self._log.seek(0, os.SEEK_END)
            size = self._log.tell()
            self._log.seek(max(0, size - 4000))
            last = self._log.read().decode("utf-8", "replace").strip()
            if last:
                how += f"; it wrote:\n{last}"
        return how

    def stop(self, wait: bool = True) -> None:
        """Ends the process: its stdin closes, so it exits between builds;
        killed if it does not within ``_STOP_WAIT`` seconds (or at once)."""
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError, ValueError):
                stream.close()
        try:
            self.process.wait(timeout=_STOP_WAIT if wait else 0)
        except _timeout_expired():
            self.process.kill()
            with contextlib.suppress(_timeout_expired()):
                self.process.wait(timeout=_STOP_WAIT)
        with contextlib.suppress(OSError, ValueError):
            self._log.close()


class _WorkerPool:
    """The build processes of this process: at most :data:`BUILD_WORKERS`, all
    started with the same environment (``key``); a request with another key
    retires the idle ones, and the busy ones as they finish."""

    def __init__(self):
        self._guard = threading.Condition()
        self._key: tuple | None = None
        self._idle: list[_BuildWorker] = []
        self._busy: set[_BuildWorker] = set()

    def take(self, key: tuple, env: dict, directory: Path) -> _BuildWorker:
        with self._guard:
            while True:
                if key != self._key:
                    for worker in self._idle:
                        worker.stop()
                    self._idle = []
                    self._key = key
                while self._idle:
                    worker = self._idle.pop()
                    if worker.idle_timer is not None:
                        worker.idle_timer.cancel()
                    if worker.alive():
                        self._busy.add(worker)
                        return worker
                    worker.stop(wait=False)
                if sum(1 for worker in self._busy if worker.key == key) < BUILD_WORKERS:
                    worker = _BuildWorker(key, env, directory)
                    self._busy.add(worker)
                    return worker
                self._guard.wait()

    def give_back(self, worker: _BuildWorker, healthy: bool) -> None:
        with self._guard:
            self._busy.discard(worker)
            if healthy and worker.key == self._key and worker.alive():
                self._idle.append(worker)
                worker.idle_timer = threading.Timer(BUILD_IDLE_SECONDS, self._retire, (worker,))
                worker.idle_timer.daemon = True
                worker.idle_timer.start()
            else:
                worker.stop(wait=healthy)
            self._guard.notify_all()

    def _retire(self, worker: _BuildWorker) -> None:
        # its idle timer: ends it if it is still idle (a build cancels the timer)
        with self._guard:
            if worker not in self._idle:
                return
            self._idle.remove(worker)
        worker.stop()

    def pids(self) -> list[int]:
        """The process ids of the live build processes (for tests and reports)."""
        with self._guard:
            return [worker.pid for worker in [*self._idle, *self._busy] if worker.alive()]

    def stop(self) -> None:
        """Ends the idle build processes (busy ones end when their build does)."""
        with self._guard:
            for worker in self._idle:
                worker.stop()
            self._idle = []
            self._key = None

    def _forget(self) -> None:
        # in a child forked from this process: the build processes are the
        # parent's; closing this copy of their pipes keeps them from
        # outliving the parent, and this process starts its own
        self._guard = threading.Condition()
        for worker in [*self._idle, *self._busy]:
            for stream in (worker.process.stdin, worker.process.stdout):
                with contextlib.suppress(OSError, ValueError):
                    stream.close()
        self._idle = []
        self._busy = set()
        self._key = None


_workers = _WorkerPool()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_workers._forget)


def build_workers() -> list[int]:
    """The process ids of this process's build processes (``build="child"``)."""
    return _workers.pids()


def _worker_env(directory: Path) -> tuple[tuple, dict]:
    env = dict(os.environ)
    env[CACHE_ENV] = str(directory)
    # the child imports the same roastedavro, wherever it was imported from
    env["PYTHONPATH"] = os.pathsep.join(
        [str(PACKAGE_DIR.parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    key = (sys.executable, str(directory), *(env.get(name) for name in _WORKER_ENV))
    return key, env


def _build_in_child(source: str, flags: CompileFlags, fingerprint: str | None,
                    directory: Path) -> None:
    """Builds ``source``'s module into the cache ``directory`` in a build process.

    The source was generated and verified here; the child only runs Cython
    and the C compiler, so nothing about the schema is parsed again there.
    """
    import pickle

    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as error:
        raise _unwritable(directory, error) from None
    key, env = _worker_env(directory)
    request = pickle.dumps((source, flags, fingerprint))
    worker = _workers.take(key, env, directory)
    healthy = False
    try:
        reply = worker.request(request)
        healthy = True
    except _WorkerGone:
        raise CompileError(
            f"the build process (pid {worker.pid}) ended during the build ({worker.why_gone()}); "
            f"the next build starts a new one") from None
    finally:
        # a request interrupted halfway (KeyboardInterrupt) leaves a reply
        # behind: that process is not used again
        _workers.give_back(worker, healthy)
    outcome = json.loads(reply)
    last_timing.update(outcome.get("timing", {}))
    if not outcome["ok"]:
        raise CompileError(outcome["error"])


def _warm_up() -> None:
    # what every build needs, imported now: Cython's compiler. The rest of
    # its start-up (lazily imported parts, lexicon, utility code) is paid by
    # the first build, which runs in this process (see _child_main).
    with contextlib.suppress(ImportError):
        from Cython.Compiler import Errors, Main, ModuleNode, Parsing, Pipeline  # noqa: F401


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
    changes a Context) is the C a fresh Context gives, byte for byte. Made
    once per list of cimports; None when Cython cannot load them (the build
    then says why)."""
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


def _build_request(request: bytes, directory: Path) -> dict:
    """Builds one request's module into the cache; its outcome as a reply."""
    import pickle
    import traceback

    last_timing.clear()
    try:
        source, flags, fingerprint = pickle.loads(request)
        name = _module_name(build_key(source, flags), fingerprint)
        _build_cached(source, name, directory, directory / f"{name}{EXT_SUFFIX}", flags)
        return {"ok": True, "timing": dict(last_timing)}
    except CompileError as error:
        return {"ok": False, "error": str(error)}
    except Exception:  # noqa: BLE001 - reported to the parent
        return {"ok": False, "error": f"the build process failed:\n{traceback.format_exc()}"}


def _prepare(request: bytes) -> None:
    """Loads the preloaded Context of the request's cimports, if not yet loaded."""
    import pickle

    with contextlib.suppress(Exception):
        source, flags, _ = pickle.loads(request)
        _pristine_context(source, flags)


def _fork_build(request: bytes, directory: Path, private: tuple[int, ...] = ()) -> dict:
    """Builds one request in a forked copy of this process, with a preloaded
    Context: Cython parses no .pxd file again (about two thirds of its time
    on a small module), and whatever the build changes in Cython's state
    goes with the copy, so every build starts from the same state. The copy
    closes the file descriptors ``private`` (the pipes to the parent): a
    parent waiting for this process sees it end when it ends."""
    import pickle

    global _preloaded_context
    try:
        source, flags, _ = pickle.loads(request)
        context = _pristine_context(source, flags)
    except Exception:  # noqa: BLE001 - _build_request reports it
        context = None
    readable, writable = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no memory or processes left for a copy: build here
        os.close(readable)
        os.close(writable)
        return _build_request(request, directory)
    if pid == 0:  # pragma: no cover - the forked copy; measured by its reply
        try:
            os.close(readable)
            for fd in private:
                with contextlib.suppress(OSError):
                    os.close(fd)
            _preloaded_context = context
            reply = json.dumps(_build_request(request, directory)).encode()
            with os.fdopen(writable, "wb") as out:
                out.write(reply)
        finally:
            os._exit(0)
    os.close(writable)
    with os.fdopen(readable, "rb") as replies:
        reply = replies.read()
    _, status = os.waitpid(pid, 0)
    if reply:
        return json.loads(reply)
    return {"ok": False, "error": f"the build crashed ({_ended(os.waitstatus_to_exitcode(status))})"}


_warm = False
#: whether this process is a build process (serve_build), which may fork
#: (it runs no other thread)
_serving = False
#: the file descriptors of a build process's pipes to its parent, which its
#: forked copies close
_private_fds: tuple[int, ...] = ()


def serve_build(request: bytes, directory: Path, private: tuple[int, ...] = ()) -> dict:
    """Builds a request (the pickled ``(source, flags, fingerprint)``) into the
    cache ``directory`` in a process that serves builds (a build process, a
    worker of ``roastedavro build``); its outcome: ``{"ok": True, "timing":
    ...}`` or ``{"ok": False, "error": message}``.

    The process's first build runs in it, with a fresh Context: it loads
    what Cython loads once per process (its lazily imported parts, lexicon,
    utility code). Every later build is forked off (see :func:`_fork_build`)."""
    global _warm, _serving, _private_fds
    _serving = True
    _private_fds = private
    if _warm and hasattr(os, "fork"):
        return _fork_build(request, directory, private)
    outcome = _build_request(request, directory)
    _warm = True
    return outcome


def _child_main() -> None:
    """The build process: requests on stdin, replies on stdout, until stdin
    closes or the parent is gone."""
    import select
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the parent to handle
    parent = os.getppid()
    requests = os.fdopen(os.dup(0), "rb", buffering=0)
    replies = os.fdopen(os.dup(1), "wb")
    # the compilers this process runs inherit neither pipe, and whatever
    # writes to stdout here lands in stderr, never among the replies
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    _warm_up()
    directory = trusted_cache_dir()
    while True:
        # the parent's pipe closes when it exits; a copy of it kept by a
        # process forked from the parent could keep it open, so the parent
        # is watched too
        while os.name == "posix" and not select.select([requests], [], [], 1.0)[0]:
            if os.getppid() != parent:
                return
        request = _read_message(requests)
        if request is None:
            return  # the parent closed the pipe: it exited or is done with this process
        outcome = serve_build(request, directory, (requests.fileno(), replies.fileno()))
        try:
            _write_message(replies, json.dumps(outcome).encode())
        except OSError:
            return  # the parent is gone
        # between builds: the next build with the same cimports finds its
        # Context loaded
        _prepare(request)


# -- the cache's integrity ------------------------------------------------------


def _digest_path(target: Path) -> Path:
    return target.with_name(target.name + DIGEST_SUFFIX)


def _own_bytes(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a file of the current user's that no one
    else can write (checked on the file read, not on its name), else None."""
    # no symbolic link, and no waiting on a FIFO put in a module's place
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with open(fd, "rb") as file:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            return None
        if os.name == "posix":
            # the folder is private, but a module or digest someone made
            # writable to others (a copy, a umask) could be swapped in pairs
            if status.st_uid != os.geteuid() or status.st_mode & 0o022:
                return None
        return file.read()


def _intact(target: Path) -> bool:
    """Whether ``target`` exists, is the user's own, and matches the digest
    recorded beside it (also the user's own). Anything else is rebuilt."""
    # bytes throughout: no codec to import on the way to a cached module
    try:
        digest = _own_bytes(_digest_path(target))
        module = _own_bytes(target)
        if digest is None or module is None:
            return False
        expected = digest.split()[0]
        actual = hashlib.sha256(module).hexdigest().encode()
    except (OSError, IndexError):
        return False
    return actual == expected


def _discard(target: Path) -> None:
    # the digest first: a module without one is never loaded
    for path in (_digest_path(target), target):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_directory(directory: Path) -> None:
    # makes a rename durable; not every platform or file system can
    with contextlib.suppress(OSError):
        _fsync(directory)


def _install(built: Path, target: Path, scratch: Path) -> None:
    """Moves ``built`` to ``target`` durably, then records its digest beside it."""
    digest = hashlib.sha256(built.read_bytes()).hexdigest()
    _fsync(built)
    os.replace(built, target)
    _fsync_directory(target.parent)
    recorded = scratch / "digest"
    with open(recorded, "w", encoding="ascii") as file:
        file.write(f"{digest}  {target.name}\n")
        file.flush()
        os.fsync(file.fileno())
    os.replace(recorded, _digest_path(target))
    _fsync_directory(target.parent)


def _unwritable(directory: Path, error: OSError) -> CompileError:
    return CompileError(f"cannot write to the module cache {directory} ({error}); "
                        f"set {CACHE_ENV} to a writable folder")


@contextlib.contextmanager
def _build_lock(directory: Path, name: str):
    """Held by one process at a time per module; its lock file is removed on release."""
    path = directory / f"{name}.lock"
    try:
        # private to the user: anyone who can write here can run code in
        # every process that loads a codec from it
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = _lock_file(path) if fcntl is not None else None
    except OSError as error:
        raise _unwritable(directory, error) from None
    try:
        yield
    finally:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)
            os.close(fd)


def _lock_file(path: Path) -> int:
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                current = os.stat(path)
            except FileNotFoundError:
                current = None
        except BaseException:
            os.close(fd)
            raise
        # the previous holder removes the file as it releases it: hold the
        # file that is there now
        if current is not None and os.path.samestat(os.fstat(fd), current):
            return fd
        os.close(fd)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if pid <= 0:
        return False
    if os.name == "nt":  # pragma: no cover - os.kill would end the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _remove_stale_builds(directory: Path) -> None:
    """Removes build folders left by killed processes.

    A folder is stale when it has not changed for ``STALE_AFTER`` seconds and
    the process named in it is not running (folders of older versions name
    none). A build changes its folder every few seconds, and the age guard
    covers caches shared between machines, whose process ids mean nothing here.
    """
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        match = _BUILD_FOLDER.match(entry.name)
        if match is None:
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            if now - entry.stat(follow_symlinks=False).st_mtime < STALE_AFTER:
                continue
        except OSError:
            continue
        if match["pid"] is not None and _alive(int(match["pid"])):
            continue
        import shutil

        shutil.rmtree(entry.path, ignore_errors=True)


# -- the cache's size ---------------------------------------------------------------

_MODULE_FILE = re.compile(r"(roastedavro_codec_[0-9a-f_]+)(?:\..*)?\Z")


def _touch(target: Path) -> None:
    # a use: the least recently used modules are evicted first
    with contextlib.suppress(OSError):
        os.utime(target)


def cache_limit() -> int:
    """The cache's size bound in bytes (``ROASTEDAVRO_CACHE_MAX_MB``, 1024 MB by default)."""
    configured = os.environ.get(CACHE_LIMIT_ENV, "").strip()
    try:
        megabytes = float(configured) if configured else DEFAULT_CACHE_LIMIT_MB
    except ValueError:
        raise CompileError(f"{CACHE_LIMIT_ENV}={configured!r} is not a number of megabytes") from None
    return max(0, int(megabytes * 1024 * 1024))


def _cached_modules(directory: Path) -> dict[str, list[os.DirEntry]]:
    """The cache's files by module: the module, its digest, source and annotation."""
    groups: dict[str, list[os.DirEntry]] = {}
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return groups
    for entry in entries:
        match = _MODULE_FILE.match(entry.name)
        # lock files belong to builds under way
        if match is not None and not entry.name.endswith(".lock") and \
                entry.is_file(follow_symlinks=False):
            groups.setdefault(match[1], []).append(entry)
    return groups


def _last_used(files: list[os.DirEntry]) -> float:
    for entry in files:
        if entry.name.endswith(EXT_SUFFIX):
            with contextlib.suppress(OSError):
                return entry.stat(follow_symlinks=False).st_mtime
    return 0.0


def _size(files: list[os.DirEntry]) -> int:
    total = 0
    for entry in files:
        with contextlib.suppress(OSError):
            total += entry.stat(follow_symlinks=False).st_size
    return total


def _remove_module(files: list[os.DirEntry]) -> None:
    # the digest first: a module without one is never loaded
    for entry in sorted(files, key=lambda e: not e.name.endswith(DIGEST_SUFFIX)):
        with contextlib.suppress(OSError):
            os.unlink(entry.path)


def _bound_cache(directory: Path, keep: str | None = None) -> list[str]:
    """Evicts the least recently used modules until the cache fits its bound.
    A process that has a module loaded keeps using it: only the files go."""
    limit = cache_limit()
    groups = _cached_modules(directory)
    sizes = {name: _size(files) for name, files in groups.items()}
    total = sum(sizes.values())
    evicted = []
    for name in sorted(groups, key=lambda n: _last_used(groups[n])):
        if total <= limit:
            break
        if name == keep:
            continue
        _remove_module(groups[name])
        total -= sizes[name]
        evicted.append(name)
    return evicted


def cache_info() -> dict:
    """The cache's folder, module count, size and bound (``roastedavro cache info``)."""
    directory = cache_dir()
    groups = _cached_modules(directory)
    modules = [files for files in groups.values()
               if any(entry.name.endswith(EXT_SUFFIX) for entry in files)]
    return {"directory": str(directory), "modules": len(modules),
            "bytes": sum(_size(files) for files in groups.values()), "limit_bytes": cache_limit()}


def cache_clear() -> int:
    """Removes every cached module and leftover build folder; the number of modules removed."""
    directory = cache_dir()
    groups = _cached_modules(directory)
    removed = sum(1 for files in groups.values()
                  if any(entry.name.endswith(EXT_SUFFIX) for entry in files))
    for files in groups.values():
        _remove_module(files)
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            match = _BUILD_FOLDER.match(entry.name)
            if match is not None and entry.is_dir(follow_symlinks=False):
                if match["pid"] is None or not _alive(int(match["pid"])) or \
                        int(match["pid"]) == os.getpid():
                    import shutil

                    shutil.rmtree(entry.path, ignore_errors=True)
    return removed


# -- loading --------------------------------------------------------------------


class _CodecLoader(importlib.machinery.ExtensionFileLoader):
    """Loads a codec; gives its generated source to ``linecache`` and ``inspect``."""

    def __init__(self, name: str, path: str, source: str):
        super().__init__(name, path)
        self._source = source

    def get_source(self, fullname: str) -> str:
        return self._source


def _import(name: str, path: Path, source: str) -> ModuleType:
    # Tracebacks through the codec show its lines: registered now, and found
    # again through the module's loader if linecache's cache is cleared.
    filename = source_filename(name)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    loader = _CodecLoader(name, str(path), source)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- building -------------------------------------------------------------------


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
        c_file = _cythonize_apart(pyx, name, flags)
        cythonized = time.perf_counter()
        built = _compile_c(command, c_file, workdir / f"{name}{EXT_SUFFIX}", flags)
        compiled = time.perf_counter()
        last_timing.update(cython=cythonized - started, cc=compiled - cythonized)
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


#: a Cython Context with the module's cimports already loaded, for one build
#: (set only in a build process's forked child: see _fork_build)
_preloaded_context = None


def _cythonize(pyx: Path, name: str, flags: CompileFlags, collect: bool = True) -> Path:
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
    with (_cython_lock, _source_named(source_filename(name)), _collector_paused(collect),
          contextlib.redirect_stderr(report), contextlib.redirect_stdout(report)):
        try:
            result = compile_single(str(pyx), options, full_module_name=name,
                                    context=_preloaded_context)
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
_OG_ARGS = ("-Og", "-fif-conversion", "-fif-conversion2", "-ftree-sra", "-fssa-phiopt",
            "-ftree-pta", "-ftree-dse", "-fmove-loop-invariants", "-ftree-bit-ccp")
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

    script = ("import json, os, sys\n"
              "request = json.loads(sys.stdin.read())\n"
              "sys.path[:] = request['path']\n"
              "from pathlib import Path\n"
              "from roastedavro import compiler\n"
              "from roastedavro.errors import CompileError\n"
              "from roastedavro.flags import CompileFlags\n"
              "if str(compiler.PACKAGE_DIR) != request['package']:\n"
              "    sys.stderr.write(f'another roastedavro was found: {compiler.PACKAGE_DIR}')\n"
              "    sys.stderr.flush()\n"
              "    os._exit(4)\n"
              "try:\n"
              "    compiler._cythonize(Path(request['pyx']), request['name'],\n"
              "                        CompileFlags(**request['flags']), collect=False)\n"
              "except CompileError as error:\n"
              "    sys.stderr.write(str(error))\n"
              "    sys.stderr.flush()\n"
              "    os._exit(3)\n"
              "sys.stdout.flush()\n"
              "os._exit(0)\n")
    cwd = os.getcwd()
    request = json.dumps({
        # this process's current folder stands for its '' entry
        "path": [entry or cwd for entry in sys.path], "package": str(PACKAGE_DIR),
        "pyx": str(pyx), "name": name, "flags": dataclasses.asdict(flags)})
    try:
        done = subprocess.run([sys.executable, "-P", "-c", script], input=request.encode(),
                              capture_output=True, cwd=str(pyx.parent))
    except OSError:  # no process can be started: here
        return _cythonize(pyx, name, flags)
    errors = done.stderr.decode(errors="replace").strip()
    if done.returncode == 3:
        raise CompileError(errors)
    c_file = pyx.with_suffix(".c")
    if done.returncode != 0 or not c_file.exists():
        raise CompileError(f"Cython failed in its process ({_ended(done.returncode)}):\n"
                           f"{errors[-2000:]}")
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
        *(_OG_ARGS if optimize == "-Og" else (optimize,)), "-g0", "-pipe", "-fPIC", "-fno-semantic-interposition", "-fwrapv",
        "-fno-strict-aliasing", "-DNDEBUG", "-w", *(f"-I{path}" for path in sorted(includes) if path),
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
