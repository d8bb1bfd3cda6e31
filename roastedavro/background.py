"""Compiling codecs off the caller's path.

A service that meets a schema it has not compiled yet (a new writer version
in a Kafka topic, say) must not stop while Cython and the C compiler run for
seconds. ``BackgroundCompiler`` builds codecs one at a time on a daemon
thread; the build itself runs in a child Python process (``build="child"``),
so the thread only waits, without the GIL, and the threads that serve
messages keep their speed. The finished codec is handed to a callback, which
swaps it in. A build that fails is logged and reported to the callback; the
caller keeps its uncompiled path.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from _queue import SimpleQueue  # queue.SimpleQueue, without queue's other imports
from typing import Any, Callable, Hashable

#: ``make(build)`` builds a codec; ``build`` is where a module missing from
#: the compile cache is compiled ("child", "here"; see compiler.load)
Make = Callable[[str], Any]

#: the GIL's switch interval while a job runs. The job's Python work
#: (generating a module's source, importing it) otherwise keeps the GIL for
#: CPython's default 5 ms at a time, and a thread serving calls waits that
#: long; while the job waits for its build process it does not ask for the
#: GIL, so the shorter turns cost nothing then.
JOB_SWITCH_INTERVAL = 0.0002
TIMINGS_KEPT = 64


def _log():
    # logging is imported when there is something to say: a process served
    # quietly does without it (and without concurrent.futures, which imports it)
    import logging

    return logging.getLogger("roastedavro.background")


def made_here(logger_name: str) -> None:
    """Makes the logger a job may use on the background thread now, on the
    caller's thread, where the process has imported logging already. Made on
    the thread at an arbitrary moment, it would change logging's registry
    under code that walks it without logging's lock (pytest's log capture
    does, at each test phase: "dictionary changed size during iteration").
    A process without logging has nothing walking it, and stays without."""
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.getLogger(logger_name)


class Job:
    """The future of one background job: its codec, or its error.

    What the tiers need of ``concurrent.futures.Future`` (``result``,
    ``exception``, ``done``, ``add_done_callback``), without that module and
    the logging it imports. ``seconds`` is how long a finished job took.
    """

    __slots__ = ("_finished", "_guard", "_result", "_error", "_callbacks", "seconds")

    def __init__(self) -> None:
        self._finished = threading.Event()
        self._guard = threading.Lock()
        self._result: Any = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[Job], Any]] = []
        self.seconds: float | None = None

    def done(self) -> bool:
        return self._finished.is_set()

    def _wait(self, timeout: float | None) -> None:
        if not self._finished.wait(timeout):
            raise TimeoutError(f"the background job did not finish within {timeout} s")

    def result(self, timeout: float | None = None) -> Any:
        """The job's result; its error raised; TimeoutError after ``timeout`` seconds."""
        self._wait(timeout)
        if self._error is not None:
            raise self._error
        return self._result

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """The job's error, None when it succeeded; TimeoutError after ``timeout`` seconds."""
        self._wait(timeout)
        return self._error

    def add_done_callback(self, callback: Callable[[Job], Any]) -> None:
        """Calls ``callback(job)`` when the job finishes (now, if it has)."""
        with self._guard:
            if not self._finished.is_set():
                self._callbacks.append(callback)
                return
        self._call(callback)

    def set_result(self, result: Any) -> None:
        self._finish(result, None)

    def set_exception(self, error: BaseException) -> None:
        self._finish(None, error)

    def _finish(self, result: Any, error: BaseException | None) -> None:
        with self._guard:
            self._result, self._error = result, error
            self._finished.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            self._call(callback)

    def _call(self, callback: Callable[[Job], Any]) -> None:
        try:
            callback(self)
        except Exception:  # as concurrent.futures does: logged, the others still run
            _log().exception("a callback of a background job raised")


@contextlib.contextmanager
def _short_gil_turns():
    before = sys.getswitchinterval()
    if before <= JOB_SWITCH_INTERVAL:
        yield
        return
    sys.setswitchinterval(JOB_SWITCH_INTERVAL)
    ours = sys.getswitchinterval()  # CPython keeps it in whole microseconds
    try:
        yield
    finally:
        # unless the program set an interval of its own meanwhile
        if sys.getswitchinterval() == ours:
            sys.setswitchinterval(before)


class BackgroundCompiler:
    """Builds codecs in submission order on one daemon thread.

    ``build="child"`` (the default) compiles in a child Python process;
    ``"here"`` compiles in this process on the background thread (Cython then
    holds the GIL for part of the build). A job submitted while one with the
    same key is under way gets that job's future.
    """

    def __init__(self, build: str = "child"):
        if build not in ("child", "here"):
            raise ValueError(f"build must be 'child' or 'here', not {build!r}")
        self.build = build
        self._queue: SimpleQueue = SimpleQueue()
        self._jobs: dict[Hashable, Job] = {}
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None
        #: seconds the last TIMINGS_KEPT finished jobs took, by key (for reports)
        self.timings: dict[Hashable, float] = {}

    def submit(self, key: Hashable, make: Make, what: object = "codec") -> Job:
        """A future (a ``Job``) of ``make(self.build)``, run on the background thread.

        ``what`` names the codec in the log. The future's result is the codec,
        or its exception is the build's error; a finished future's ``seconds``
        is how long the job took.
        """
        made_here("roastedavro.background")
        with self._guard:
            future = self._jobs.get(key)
            if future is not None and not (future.done() and future.exception() is not None):
                return future
            future = self._jobs[key] = Job()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="roastedavro-compile", daemon=True)
                self._thread.start()
        self._queue.put((key, make, what, future))
        return future

    def pending(self) -> int:
        """How many submitted builds have not finished."""
        with self._guard:
            return sum(1 for future in self._jobs.values() if not future.done())

    def _run(self) -> None:
        while True:
            key, make, what, future = self._queue.get()
            started = time.perf_counter()
            try:
                with _short_gil_turns():
                    codec = make(self.build)
            except BaseException as error:  # reported to the caller, never raised here
                _log().error("compiling %s failed; the interpreter (tier 0) serves it on: %s", what, error)
                future.set_exception(error)
            else:
                future.seconds = self.timings[key] = time.perf_counter() - started
                while len(self.timings) > TIMINGS_KEPT:
                    del self.timings[next(iter(self.timings))]
                if codec is not None:  # a lookup that found nothing has nothing to say
                    _log().info("%s ready in %.2f s", what, future.seconds)
                future.set_result(codec)
            finally:
                # a finished job is forgotten (its codec belongs to whoever
                # asked for it): a process meeting endless new schemas keeps
                # only the jobs under way
                with self._guard:
                    if self._jobs.get(key) is future:
                        del self._jobs[key]


_default: BackgroundCompiler | None = None
_default_guard = threading.Lock()


def default_compiler() -> BackgroundCompiler:
    """The process's shared background compiler (builds in child processes)."""
    global _default
    with _default_guard:
        if _default is None:
            _default = BackgroundCompiler()
        return _default
