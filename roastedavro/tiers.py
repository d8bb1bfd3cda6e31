"""Which tier serves a schema, and when its codec is compiled.

Every schema is served at once by tier 0, the interpreter compiled with the
package (roastedavro._tier0): no C compiler, no wait, within about 15% of a
compiled codec's speed on plain Avro. The compiled codec (tier 1) is an
optimisation; a policy says when to build it:

``eager``
    before the first call (the caller waits for the build or the cache),
    as ``CompiledSchema.compile()`` always does;
``hot``
    in the background, in a child process, once the schema has done enough
    work to repay the build (``HOT_AFTER`` bytes written and read); a
    precompiled or cached codec is used as soon as it is found;
``never``
    tier 0, unless a precompiled or cached codec exists (looked up off the
    caller's path, as under ``hot``, and used as soon as it is found).

``ROASTEDAVRO_COMPILE`` sets the policy of every entry point that is not
given one; ``never`` there forbids compiling anywhere (a deployment without
a compiler), whatever a codec asks for. Where no C compiler is installed,
``eager`` and ``hot`` serve from tier 0 (``roastedavro.buildenv.compiler_missing``
says why).
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable

from roastedavro import buildenv
from roastedavro.errors import CompileError, NotCompiledError

if TYPE_CHECKING:
    from roastedavro.background import Job

#: the compile policies
POLICIES = ("eager", "hot", "never")

#: ``hot``: the bytes a schema's tier-0 codec writes and reads before its
#: compiled codec is built (64 MiB: a few seconds of tier-0 work, in which a
#: busy service shows the schema will stay; the build then runs on another
#: core and each later call saves 10-15%)
HOT_AFTER = 64 << 20


def compile_policy(explicit: str | None = None, default: str = "hot") -> str:
    """The policy of one codec: ``never`` when ROASTEDAVRO_COMPILE says so,
    else ``explicit`` if given, else ROASTEDAVRO_COMPILE's (``auto``:
    ``default``)."""
    if explicit is not None and explicit not in POLICIES:
        raise ValueError(f"compile must be one of {', '.join(POLICIES)}, not {explicit!r}")
    mode = buildenv.compile_mode()
    if mode == "never":
        return "never"
    if explicit is not None:
        return explicit
    return default if mode == "auto" else mode


def can_compile() -> bool:
    """Whether codecs can be compiled here (a C compiler, Python's headers and Cython)."""
    return buildenv.compiler_missing() is None


__all__ = ["POLICIES", "HOT_AFTER", "Engine", "compile_policy", "can_compile", "CompileError"]


# -- one schema's tiers -------------------------------------------------------------

_told_no_compiler = False


def _log():
    # logging is imported when there is something to say (a few hundred KB a
    # process served quietly does without)
    import logging

    return logging.getLogger("roastedavro.tiers")


def _no_compiler_told() -> None:
    global _told_no_compiler
    if not _told_no_compiler:
        _told_no_compiler = True
        _log().warning("codecs are served by the interpreter (tier 0): %s", buildenv.compiler_missing())


class _Named:
    """A name made when a log line prints it."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], str]):
        self.make = make

    def __str__(self) -> str:
        return self.make()


class Engine:
    """The codecs of one schema (or writer/reader pair) and flags in a
    process: tier 0 at once, the compiled codec once it is built or found.

    ``interpret()`` makes the tier-0 codec, ``build(where)`` the compiled one
    (``where``: "here", "child" or "never", as compiler.load takes it, or
    "lookup": "never", raising NotCompiledError at once where no stored
    codec can be found). Both
    have the entry points of a compiled codec module's ``Codec``. Objects
    that serve calls from ``current`` (AvroCodec instances) subscribe with
    ``subscribe`` and are told to rebind when it changes: the swap is one
    attribute assignment per entry point, so a caller never waits for it.
    """

    def __init__(self, what: Callable[[], str], interpret: Callable[[], Any], build: Callable[[str], Any]):
        self._what = what
        self._interpret = interpret
        self._build = build
        self.interpreter: Any = None
        self.compiled: Any = None
        #: what serves calls now: the compiled codec once there is one
        self.current: Any = None
        #: "interpreter", "looking" (for a cached codec), "compiling",
        #: "compiled", or "failed" (the interpreter serves on)
        self.state = "new"
        self.error: BaseException | None = None
        #: seconds the background build took
        self.build_seconds: float | None = None
        self._subscribers: weakref.WeakSet = weakref.WeakSet()
        self._lock = threading.RLock()
        self._looked_up = False
        self._watched = False
        self.future: Job | None = None

    @property
    def what(self) -> str:
        """How logs and errors name the schema (made when first needed: it
        takes the schema's fingerprint)."""
        return self._what()

    # -- serving ----------------------------------------------------------------

    def start(self, policy: str, build: str = "here") -> Any:
        """Makes a codec serve under ``policy``; returns ``current``."""
        if self.compiled is not None:
            return self.compiled
        if policy == "eager" and (build == "never" or can_compile()):
            return self._install(self._build(build))
        if policy == "eager":
            _no_compiler_told()
        # "hot" asks whether this machine can compile when the schema is hot,
        # off the caller's path (_compile_if_possible)
        hot = policy == "hot"
        current = self._serve_interpreter()
        with self._lock:
            lookup = not self._looked_up
            self._looked_up = True
            watch = hot and not self._watched
            self._watched = self._watched or hot
        if lookup:
            # a codec built before (the cache, a precompiled package) is found
            # off the caller's path: finding it means generating its source
            # (44 ms for 500 fields), which the first record does not wait for
            self._background(self._find, "looking")
        if watch and self.compiled is None:
            self.interpreter.watch(HOT_AFTER, self._hot)
        return current

    def compile(self, build: str = "here") -> Any:
        """The compiled codec, built (or found) now and installed: a
        CompileError where it cannot be (no C compiler, ROASTEDAVRO_COMPILE=never
        and nothing cached, ``build="never"`` and nothing cached)."""
        if self.compiled is not None:
            return self.compiled
        return self._install(self._build(build))

    def _serve_interpreter(self) -> Any:
        with self._lock:
            if self.current is None:
                self.interpreter = self.current = self._interpret()
                self.state = "interpreter"
            return self.current

    def _find(self, where: str) -> Any:
        try:
            # "lookup": "never", and nothing generated where nothing can be found
            return self._build("lookup")
        except NotCompiledError:
            return None

    def _hot(self) -> None:
        # called from the interpreter's entry point that crossed HOT_AFTER:
        # only a job is queued here
        if self.compiled is None:
            self._background(self._compile_if_possible, "compiling")

    def _compile_if_possible(self, where: str) -> Any:
        if not can_compile():
            _no_compiler_told()
            return None  # the interpreter serves on
        return self._build(where)

    def _background(self, make: Callable[[str], Any], state: str) -> None:
        from roastedavro.background import default_compiler, made_here

        with self._lock:
            if self.state in ("compiling", "compiled"):
                return
            self.state = state
        made_here("roastedavro.tiers")  # the job may say there is no compiler
        future = default_compiler().submit((id(self), state), make, _Named(self._what))

        def done(future: Job) -> None:
            error = future.exception()
            if error is None and future.result() is not None:
                if state == "compiling":
                    self.build_seconds = getattr(future, "seconds", None)
                self._install(future.result())
                return
            with self._lock:
                if self.compiled is None and self.state == state:
                    # nothing found, or the build failed: the interpreter serves on
                    self.state, self.error = ("failed", error) if error is not None else ("interpreter", None)

        self.future = future
        future.add_done_callback(done)

    def _install(self, compiled: Any) -> Any:
        with self._lock:
            if self.compiled is None:
                self.compiled = self.current = compiled
                self.state = "compiled"
                if self.interpreter is not None:
                    self.interpreter.watch(0, None)
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            subscriber._rebind()
        return self.compiled

    def subscribe(self, subscriber: Any) -> None:
        self._subscribers.add(subscriber)

    # -- reports ----------------------------------------------------------------

    @property
    def tier(self) -> str:
        """ "compiled" or "interpreter": what serves calls now."""
        return "compiled" if self.compiled is not None else "interpreter"

    def stats(self) -> dict:
        """The calls each tier served, the tier serving now and the compile's state."""
        return {
            "tier": self.tier,
            "state": self.state,
            "calls": {
                "interpreter": getattr(self.interpreter, "calls", 0),
                "compiled": getattr(self.compiled, "calls", 0),
            },
            "build_seconds": self.build_seconds,
            "error": str(self.error) if self.error is not None else None,
        }

    def wait(self, timeout: float | None = None) -> bool:
        """Waits for a background lookup or build under way; True when none is left."""
        future = self.future
        if future is None:
            return True
        try:
            future.exception(timeout)
        except TimeoutError:
            return False
        return True
