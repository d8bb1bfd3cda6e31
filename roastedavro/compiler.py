"""Loads the extension module of generated Cython source: from memory, an
installed package of precompiled codecs, the disk cache, or built (here, or
in a build process).

The cache key covers everything that changes the binary: the generated
source, the runtime's declarations, roastedavro's, Cython's and Python's
versions, the platform and the build flags (building.build_key). The
module's name covers what its C depends on (building.source_key), so the
cache keeps that C for every interpreter: another Python runs only the C
compiler. A cached
module is loaded without running Cython or the C compiler, after its
SHA-256 digest is checked (codecache): a damaged module never reaches the
dynamic loader. Building one key is serialized across threads (a lock
here) and processes (a lock file).

A cache folder is trusted only when it belongs to the current user and no
one else can write to it (as pip does for its cache): anyone who can put a
file there can run code in every process that loads a codec from it. Any
other folder is bypassed with a ``CacheFolderWarning``; codecs are then
built in a private temporary folder of the process.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import linecache
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from roastedavro.buildenv import (  # noqa: F401  (public here too)
    BUILD_MODES,
    CACHE_ENV,
    COMPILE_ENV,
    COMPILE_MODES,
    EXT_SUFFIX,
    CacheFolderWarning,
    _compiler_command,
    _unsafe,
    cache_dir,
    compile_mode,
    compiler_missing,
    may_be_stored,
    trusted_cache_dir,
)
from roastedavro.building import (  # noqa: F401  (public here too)
    PACKAGE_DIR,
    _build_cached,
    _module_name,
    aot_key,
    build_key,
    cache_names,
    last_timing,
    source_key,
    source_filename,
)
from roastedavro.buildserver import (  # noqa: F401  (public here too)
    BUILD_IDLE_SECONDS,
    BUILD_WORKERS,
    _build_in_child,
    build_workers,
    serve_build,
)
from roastedavro.codecache import (  # noqa: F401  (public here too)
    CACHE_LIMIT_ENV,
    DEFAULT_CACHE_LIMIT_MB,
    DIGEST_SUFFIX,
    _bound_cache,
    _intact,
    _touch,
    cache_clear,
    cache_info,
    cache_limit,
)
from roastedavro.errors import CompileError, NotCompiledError
from roastedavro.flags import CompileFlags

if TYPE_CHECKING:
    from roastedavro.emitter import GeneratedModule

_loaded: dict[str, ModuleType] = {}
_key_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def load(
    source: str,
    flags: CompileFlags,
    verify=None,
    fingerprint: str | None = None,
    build: str = "here",
    label: str | None = None,
) -> ModuleType:
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
    ``NotCompiledError``, without waiting for a build another thread
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
        raise NotCompiledError(
            f"the codec is being built by another thread ({_module_name(source_key(source), fingerprint)})"
        )
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


def load_codec(
    generated: GeneratedModule,
    flags: CompileFlags,
    fingerprint: str,
    build: str = "here",
    label: str | None = None,
) -> Any:
    """The codec of a generated module: the module from load() (same
    arguments), its Codec holding the module's bindings, bounded by flags."""
    module = load(
        generated.source, flags, verify=generated.verify, fingerprint=fingerprint, build=build, label=label
    )
    return module.Codec(generated.bindings, flags.max_depth, flags.max_items, flags.item_allowance)


def _load_precompiled(source: str, flags: CompileFlags, key: str) -> ModuleType | None:
    from roastedavro import precompiled

    entry = precompiled.lookup(aot_key(source, flags))
    if entry is None:
        return None
    if not entry.intact():
        raise CompileError(
            f"the precompiled codec {entry.path} does not match the SHA-256 its "
            f"package {entry.package!r} records: reinstall that package"
        )
    loaded_at = time.perf_counter()
    module = _import(entry.module, entry.path, source)
    last_timing["load"] = time.perf_counter() - loaded_at
    last_timing["precompiled"] = 1.0
    return module


def _load_cached_or_build(
    source: str, flags: CompileFlags, verify, fingerprint: str | None, build: str, label: str | None, key: str
) -> ModuleType:
    name, filename = cache_names(source, flags, fingerprint, key)
    directory = trusted_cache_dir()
    target = directory / filename
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
                f"environment; or set {COMPILE_ENV}=auto"
            )
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


# -- loading --------------------------------------------------------------------


class _CodecLoader(importlib.machinery.ExtensionFileLoader):
    """Loads a codec; gives its generated source to ``linecache`` and ``inspect``."""

    def __init__(self, name: str, path: str, source: str):
        super().__init__(name, path)
        self._source = source

    def get_source(self, fullname: str) -> str:  # type: ignore[override]  # the generated source
        return self._source


def _import(name: str, path: Path, source: str) -> ModuleType:
    # Tracebacks through the codec show its lines: registered now, and found
    # again through the module's loader if linecache's cache is cleared.
    filename = source_filename(name)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    loader = _CodecLoader(name, str(path), source)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    assert spec is not None and spec.loader is not None  # made from the loader given
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
