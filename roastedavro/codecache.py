"""The module cache's files: each module's integrity, the locks and build
folders of builds under way, and the cache's size.

A cached module is machine code loaded into the process, so a damaged one
must never reach the dynamic loader. Each module has a SHA-256 digest
beside it; the module is hashed and compared before it is loaded, and a
module that does not match its digest, or has none, is deleted and built
again. Modules are built in a private temporary folder inside the cache,
synced to disk and moved into place with one atomic rename; the digest is
written the same way, after the module. Building one key is serialized
across processes by a lock file: concurrent compiles of a schema build it
once, and a failed or killed build leaves nothing that is ever loaded.
Temporary folders of killed builds are removed by later builds. The cache
is kept under ``ROASTEDAVRO_CACHE_MAX_MB``, least recently used first.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX: threads are still serialized
    fcntl = None  # type: ignore[assignment]  # tested before use

from roastedavro.buildenv import CACHE_ENV, EXT_SUFFIX, cache_dir
from roastedavro.errors import CompileError

CACHE_LIMIT_ENV = "ROASTEDAVRO_CACHE_MAX_MB"
#: the cache's default size bound; least recently used modules go first
DEFAULT_CACHE_LIMIT_MB = 1024
DIGEST_SUFFIX = ".sha256"
#: a build folder untouched for this long, whose process is gone, is removed
STALE_AFTER = 600.0
# build folders: "<module name>.build-<pid>.<random>"; older versions of
# roastedavro made "<module name>.<random>"
_BUILD_FOLDER = re.compile(
    r"roastedavro_codec_(?:[0-9a-f]{32}|[0-9a-f]{16}_[0-9a-f]{20})\.(?:build-(?P<pid>[0-9]+)\.[a-z0-9_]+|[a-z0-9_]{8})\Z"
)


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
    return CompileError(
        f"cannot write to the module cache {directory} ({error}); set {CACHE_ENV} to a writable folder"
    )


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
        if match is not None and not entry.name.endswith(".lock") and entry.is_file(follow_symlinks=False):
            groups.setdefault(match[1], []).append(entry)
    return groups


def _last_used(files: list[os.DirEntry]) -> float:
    # a module's files are touched when it is loaded (any interpreter's) or
    # its C is reused
    latest = 0.0
    for entry in files:
        with contextlib.suppress(OSError):
            latest = max(latest, entry.stat(follow_symlinks=False).st_mtime)
    return latest


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
    modules = [files for files in groups.values() if any(entry.name.endswith(EXT_SUFFIX) for entry in files)]
    return {
        "directory": str(directory),
        "modules": len(modules),
        "bytes": sum(_size(files) for files in groups.values()),
        "limit_bytes": cache_limit(),
    }


def cache_clear() -> int:
    """Removes every cached module and leftover build folder; the number of modules removed."""
    directory = cache_dir()
    groups = _cached_modules(directory)
    removed = sum(1 for files in groups.values() if any(entry.name.endswith(EXT_SUFFIX) for entry in files))
    for files in groups.values():
        _remove_module(files)
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            match = _BUILD_FOLDER.match(entry.name)
            if match is not None and entry.is_dir(follow_symlinks=False):
                if match["pid"] is None or not _alive(int(match["pid"])) or int(match["pid"]) == os.getpid():
                    import shutil

                    shutil.rmtree(entry.path, ignore_errors=True)
    return removed
