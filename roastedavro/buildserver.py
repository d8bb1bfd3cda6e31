"""Builds in a build process: a child Python process that runs Cython and
the C compiler for ``build="child"`` (background and ``hot`` compiles) and
for ``roastedavro build``'s workers, so that the calling process holds no
GIL and no Cython state while a module is built."""

from __future__ import annotations

import contextlib
import json
import os
import struct
import sys
import threading
from pathlib import Path

from roastedavro import building
from roastedavro.buildenv import CACHE_ENV, trusted_cache_dir
from roastedavro.building import (
    PACKAGE_DIR,
    _build_cached,
    _ended,
    _pristine_context,
    cache_names,
    last_timing,
)
from roastedavro.codecache import _unwritable
from roastedavro.errors import CompileError
from roastedavro.flags import CompileFlags


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

_CHILD_CODE = "from roastedavro.buildserver import _child_main; _child_main()"
#: build processes per process: builds beyond this many wait for one
BUILD_WORKERS = 2
# the environment a build process keeps from its start: a change to any of
# these starts a new one
_WORKER_ENV = (
    "CC",
    "PATH",
    "TMPDIR",
    "CPATH",
    "C_INCLUDE_PATH",
    "LIBRARY_PATH",
    "LD_LIBRARY_PATH",
    "PYTHONPATH",
)
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


def _timeout_expired() -> type[Exception]:
    import subprocess  # imported already by the worker that waits

    return subprocess.TimeoutExpired


class _BuildWorker:
    """One build process; used by one thread at a time (see ``_WorkerPool``)."""

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
                [sys.executable, "-P", "-c", _CHILD_CODE],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log,
                env=env,
                cwd=directory,
            )
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
                stream.close()  # type: ignore[union-attr]  # the process's pipes
        try:
            self.process.wait(timeout=_STOP_WAIT if wait else 0)
        except _timeout_expired():
            self.process.kill()
            with contextlib.suppress(_timeout_expired()):
                self.process.wait(timeout=_STOP_WAIT)
        with contextlib.suppress(OSError, ValueError):
            self._log.close()


class _WorkerPool:
    """The build processes of this process: at most ``BUILD_WORKERS``, all
    started with the same environment (``key``); a request with another key
    retires the idle ones, and the busy ones as they finish."""

    def __init__(self) -> None:
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
                    stream.close()  # type: ignore[union-attr]  # the process's pipes
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
        [str(PACKAGE_DIR.parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    key = (sys.executable, str(directory), *(env.get(name) for name in _WORKER_ENV))
    return key, env


def _build_in_child(source: str, flags: CompileFlags, fingerprint: str | None, directory: Path) -> None:
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
            f"the next build starts a new one"
        ) from None
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


def _build_request(request: bytes, directory: Path) -> dict:
    """Builds one request's module into the cache; its outcome as a reply."""
    import pickle
    import traceback

    last_timing.clear()
    try:
        source, flags, fingerprint = pickle.loads(request)
        name, filename = cache_names(source, flags, fingerprint)
        _build_cached(source, name, directory, directory / filename, flags)
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
            building._preloaded_context = context
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


def serve_build(request: bytes, directory: Path, private: tuple[int, ...] = ()) -> dict:
    """Builds a request (the pickled ``(source, flags, fingerprint)``) into the
    cache ``directory`` in a process that serves builds (a build process, a
    worker of ``roastedavro build``); its outcome: ``{"ok": True, "timing":
    ...}`` or ``{"ok": False, "error": message}``.

    The process's first build runs in it, with a fresh Context: it loads
    what Cython loads once per process (its lazily imported parts, lexicon,
    utility code). Every later build is forked off (see ``_fork_build``)."""
    global _warm
    building._serving = True
    building._private_fds = private
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
