"""What the environment says about compiling and keeping codecs: the compile
policy (``ROASTEDAVRO_COMPILE``), whether this machine can compile, the
cache folder and whether it can be trusted, and whether a schema's codec
may be stored there.

A process served by the interpreter or by stored codecs asks these
questions on its first call; the builder (``roastedavro.compiler``,
Cython, the C compiler, the build workers) is imported only by a process
that builds or loads a codec.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading
import warnings
from pathlib import Path

from roastedavro.errors import CompileError
from roastedavro.flags import EXT_SUFFIX  # noqa: F401  (public here too)

CACHE_ENV = "ROASTEDAVRO_CACHE_DIR"
COMPILE_ENV = "ROASTEDAVRO_COMPILE"
#: where a module missing from the cache is built: in this process, in a
#: child process, or nowhere (``NotCompiledError``)
BUILD_MODES = ("here", "child", "never")


class CacheFolderWarning(UserWarning):
    """The module cache folder is not private to the user: it is bypassed."""


def cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("roastedavro", appauthor=False))


def _unsafe(directory: Path) -> str | None:
    """Why ``directory`` cannot be trusted with modules to load, or None.

    A folder that does not exist yet is created private to the user first, so
    that no one else can create it in between."""
    if os.name != "posix":  # pragma: no cover - owners and modes are POSIX's
        return None
    with contextlib.suppress(OSError):
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        status = os.stat(directory)  # a symbolic link: the folder it leads to
    except FileNotFoundError:
        return None  # nothing to load; building there says why it cannot
    except OSError as error:
        return f"it cannot be examined ({error})"
    if not stat.S_ISDIR(status.st_mode):
        return "it is not a folder"
    if status.st_uid != os.geteuid():
        return f"it belongs to the user id {status.st_uid}, not to the current user (id {os.geteuid()})"
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"others can write to it (mode {stat.S_IMODE(status.st_mode):o}): run chmod go-w on it"
    return None


_private_folders: dict[str, Path] = {}
_private_guard = threading.Lock()


def trusted_cache_dir() -> Path:
    """The folder codecs are loaded from and built into: ``cache_dir``, or,
    if that folder is not private to the user (see ``_unsafe``), a private
    temporary folder of this process, with a ``CacheFolderWarning``."""
    directory = cache_dir()
    problem = _unsafe(directory)
    if problem is None:
        return directory
    with _private_guard:
        private = _private_folders.get(str(directory))
        if private is None:
            warnings.warn(
                f"the module cache {directory} is not used: {problem}. Anyone who can write "
                f"to it could run code in this process. Codecs are built in a private "
                f"temporary folder instead (again in every process); make the folder yours "
                f"and not writable by others, or set {CACHE_ENV} to a private folder",
                CacheFolderWarning,
                stacklevel=3,
            )
            import atexit
            import shutil
            import tempfile

            private = Path(tempfile.mkdtemp(prefix="roastedavro-cache-"))

            atexit.register(shutil.rmtree, private, True)
            _private_folders[str(directory)] = private
    return private


#: the values ROASTEDAVRO_COMPILE takes (roastedavro.tiers explains them)
COMPILE_MODES = ("auto", "eager", "hot", "never")


def compile_mode() -> str:
    """``ROASTEDAVRO_COMPILE``: "auto" (the default: each entry point's own
    policy), "eager", "hot" or "never" (nothing is compiled: a codec neither
    precompiled nor cached is served by the interpreter, or is a
    NotCompiledError where a compiled codec was asked for)."""
    mode = os.environ.get(COMPILE_ENV, "auto").strip().lower() or "auto"
    if mode not in COMPILE_MODES:
        raise CompileError(f"{COMPILE_ENV}={mode!r}: use one of {', '.join(COMPILE_MODES)}")
    return mode


_can_compile: dict[tuple, str | None] = {}


def compiler_missing() -> str | None:
    """Why codecs cannot be compiled on this machine (no C compiler, no
    Python headers, no Cython), or None when they can. Checked once per
    ``CC``/``PATH``; nothing is run."""
    key = (os.environ.get("CC", ""), os.environ.get("PATH", ""))
    if key not in _can_compile:
        reason = None
        try:
            _compiler_command()
        except CompileError as error:
            reason = str(error)
        if reason is None:
            import sysconfig

            include = sysconfig.get_path("include")
            if not include or not os.path.exists(os.path.join(include, "Python.h")):
                reason = (
                    f"the Python headers (Python.h in {include}) are not installed: "
                    f"install the python3-dev package of this Python"
                )
        if reason is None:
            import importlib.util

            if importlib.util.find_spec("Cython") is None:
                reason = "Cython is not installed: pip install cython"
        _can_compile[key] = reason
    return _can_compile[key]


def may_be_stored(fingerprint: str) -> bool:
    """Whether a codec module of the schema with this fingerprint (hex, as
    ``roastedavro.compiler.load`` takes it) may be precompiled or cached: False when no package
    of precompiled codecs is installed and the cache holds no module named
    for the fingerprint. Looking a codec up means generating its source (its
    key), which a process need not do, nor import the generator for, when
    nothing can be found."""
    from roastedavro import precompiled

    if precompiled.lookup_possible():
        return True
    prefix = f"roastedavro_codec_{fingerprint}_"
    try:
        with os.scandir(trusted_cache_dir()) as entries:
            return any(entry.name.startswith(prefix) and entry.name.endswith(EXT_SUFFIX) for entry in entries)
    except OSError:
        return True  # the lookup itself says what is wrong


def platform_refusal(platform: str | None = None) -> str | None:
    """Why schemas cannot be compiled on ``platform``, or None where they
    can: on POSIX systems (Linux, tested; macOS, with clang, untested), whose
    C compiler roastedavro calls as gcc and clang are called and whose cache
    it locks with flock. Windows is not supported yet."""
    if (sys.platform if platform is None else platform) == "win32":
        return (
            "compiling schemas is not supported on Windows yet (roastedavro calls the C "
            "compiler as gcc or clang are called and locks its cache with POSIX file "
            "locks): every schema is served by tier 0, the interpreter built with the "
            "package, which needs no compiler (ROASTEDAVRO_COMPILE=never says so "
            "without this message)"
        )
    return None


def _compiler_command() -> list[str]:
    """The C compiler's command: ``CC``, else the compiler Python was built with."""
    import shlex
    import shutil
    import sysconfig

    refusal = platform_refusal()
    if refusal is not None:
        raise CompileError(refusal)

    configured = os.environ.get("CC", "").strip()
    if configured:
        try:
            command = shlex.split(configured)
        except ValueError as error:
            raise CompileError(f"CC={configured!r} is not a valid command: {error}") from None
        if shutil.which(command[0]) is None:
            raise CompileError(
                f"no C compiler found: CC={configured!r} names {command[0]!r}, which is not an "
                "executable file or a command on PATH. Set CC to an installed C compiler "
                "(gcc or clang), or unset it"
            )
        return command
    command = shlex.split(sysconfig.get_config_var("CC") or "cc")
    if shutil.which(command[0]) is None:
        raise CompileError(
            f"no C compiler found: {command[0]!r} (the compiler Python was built with) is not "
            "installed or not on PATH. Install gcc or clang, or set CC to your compiler"
        )
    return command
