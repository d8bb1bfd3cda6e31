"""fastavro's schema parser and the exception types its users catch, without
the rest of fastavro.

``import fastavro`` loads its readers and writers, their compiled modules and
compression libraries (about 10 MB of RSS and 35 ms); roastedavro needs its
``parse_schema`` and exception classes. While fastavro is not imported, the
modules holding them are loaded alone, under their own names: a later
``import fastavro`` finds them in ``sys.modules`` and uses them, so the
classes are fastavro's. ``when_imported`` runs a function once fastavro
itself has been imported (by anyone).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import threading
from types import ModuleType
from typing import Callable

__all__ = ["module", "parse_schema", "load_schema", "when_imported"]

_lock = threading.RLock()


def module(name: str) -> ModuleType:
    """fastavro's submodule ``name`` (``_schema_common``, ``_read_common``,
    ...): imported as usual once fastavro is, else loaded alone (with the
    modules it imports relatively, which must be loaded alone first)."""
    full = f"fastavro.{name}"
    found = sys.modules.get(full)
    if found is not None:
        return found
    with _lock:
        found = sys.modules.get(full)
        if found is not None:
            return found
        if "fastavro" in sys.modules:
            return importlib.import_module(full)
        if name == "_schema":
            # fastavro.schema's choice: the compiled parser, else the Python one
            for needed in ("const", "repository", "_schema_common"):
                module(needed)
            try:
                return _load_alone(full)
            except ImportError:
                module("types")
                return _load_alone("fastavro._schema_py")
        return _load_alone(full)


def _load_alone(full: str) -> ModuleType:
    package = importlib.util.find_spec("fastavro")  # finds it, does not import it
    if package is None or not package.submodule_search_locations:
        raise ImportError("fastavro is not installed", name="fastavro")
    spec = importlib.machinery.PathFinder.find_spec(full, package.submodule_search_locations)
    if spec is None:
        raise ImportError(f"No module named {full!r}", name=full)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[full] = loaded
    try:
        spec.loader.exec_module(loaded)  # type: ignore[union-attr]  # a source file's spec has a loader
    except BaseException:
        sys.modules.pop(full, None)
        raise
    return sys.modules[full]


def parse_schema(*args, **kwargs):
    """fastavro's own ``parse_schema`` (the one fastavro.schema exports)."""
    return module("_schema").parse_schema(*args, **kwargs)


def load_schema(*args, **kwargs):
    """fastavro's own ``load_schema``."""
    return module("_schema").load_schema(*args, **kwargs)


# -- a function run once fastavro is imported ----------------------------------

_waiting: list[Callable[[], None]] = []


class _Loader:
    """fastavro's package loader, running the waiting functions after it."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, package: ModuleType) -> None:
        # the package is fastavro's own again once it runs
        package.__loader__ = package.__spec__.loader = self.loader  # type: ignore[union-attr]  # a package's
        self.loader.exec_module(package)
        _imported()

    def __getattr__(self, name: str):
        return getattr(self.loader, name)


class _Finder:
    """Finds fastavro's package as the other finders do, with a _Loader."""

    def __init__(self):
        self.finding = False

    def find_spec(self, name, path=None, target=None):
        if name != "fastavro" or self.finding:
            return None
        self.finding = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.finding = False
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader)
        return spec


_finder = _Finder()


def _imported() -> None:
    with _lock:
        waiting = list(_waiting)
        _waiting.clear()
        if _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
    for function in waiting:
        function()


def when_imported(function: Callable[[], None]) -> None:
    """Call ``function()`` once fastavro is imported: now if it is."""
    with _lock:
        if "fastavro" not in sys.modules:
            _waiting.append(function)
            if _finder not in sys.meta_path:
                sys.meta_path.insert(0, _finder)
            return
    function()
