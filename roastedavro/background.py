"""Compiling codecs off the caller's path.

A service that meets a schema it has not compiled yet (a new writer version
in a Kafka topic, say) must not stop while Cython and the C compiler run for
seconds. :class:`BackgroundCompiler` builds codecs one at a time on a daemon
thread; the build itself runs in a child Python process (``build="child"``),
so the thread only waits, without the GIL, and the threads that serve
messages keep their speed. The finished codec is handed to a callback, which
swaps it in. A build that fails is logged and reported to the callback; the
caller keeps its uncompiled path.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import sys
import threading
import time
from concurrent.futures import Future
from typing import Any, Callable, Hashable

log = logging.getLogger("roastedavro.background")

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


@contextlib.contextmanager
def _short_gil_turns():
    before = sys.getswitchinterval()
    if before <= JOB_SWITCH_INTERVAL:
        yield
        return
    sys.setswitchinterval(JOB_SWITCH_INTERVAL)
    ours = sys.getswitchinterval()   # CPython keeps it in whole microseconds
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
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._jobs: dict[Hashable, Future] = {}
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None
        #: seconds the last TIMINGS_KEPT finished jobs took, by key (for reports)
        self.timings: dict[Hashable, float] = {}

    def submit(self, key: Hashable, make: Make, what: str = "codec") -> Future:
        """A future of ``make(self.build)``, run on the background thread.

        ``what`` names the codec in the log. The future's result is the codec,
        or its exception is the build's error; a finished future's ``seconds``
        is how long the job took.
        """
        with self._guard:
            future = self._jobs.get(key)
            if future is not None and not (future.done() and future.exception() is not None):
                return future
            future = self._jobs[key] = Future()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="roastedavro-compile",
                                                daemon=True)
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
            if not future.set_running_or_notify_cancel():
                continue
            started = time.perf_counter()
            try:
                with _short_gil_turns():
                    codec = make(self.build)
            except BaseException as error:  # reported to the caller, never raised here
                log.error("compiling %s failed; the interpreter (tier 0) serves it on: %s",
                          what, error)
                future.set_exception(error)
            else:
                future.seconds = self.timings[key] = time.perf_counter() - started
                while len(self.timings) > TIMINGS_KEPT:
                    del self.timings[next(iter(self.timings))]
                log.info("compiled %s in %.2f s", what, future.seconds)
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
