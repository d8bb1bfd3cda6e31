"""Installed packages of precompiled codecs (made by ``roastedavro build``).

A package of codecs declares itself in the entry point group
``roastedavro.codecs`` (name and value: its import name) and carries a
manifest, ``roastedavro-codecs.json``, beside its modules: the roastedavro
version and extension suffix it was built for, and for each codec the key it
answers to (:func:`roastedavro.compiler.aot_key`), its module name, file and
SHA-256. A package built for another roastedavro or another Python ABI is
ignored, with a warning; a module whose digest does not match is never loaded.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
from dataclasses import dataclass
from pathlib import Path

from roastedavro import __version__

log = logging.getLogger("roastedavro.precompiled")

GROUP = "roastedavro.codecs"
MANIFEST = "roastedavro-codecs.json"
FORMAT = 1


@dataclass(frozen=True)
class Precompiled:
    """One precompiled codec of an installed package."""

    package: str
    module: str
    path: Path
    sha256: str
    label: str

    def intact(self) -> bool:
        try:
            return hashlib.sha256(self.path.read_bytes()).hexdigest() == self.sha256
        except OSError:
            return False


def lookup(key: str) -> Precompiled | None:
    """The installed precompiled codec for an ``aot_key``, or None."""
    return _index().get(key)


def refresh() -> None:
    """Forget the index: packages installed since are found on the next lookup."""
    _index.cache_clear()


def packages() -> dict[str, dict]:
    """What each installed package of codecs holds (for ``roastedavro cache info``)."""
    found = {}
    for name, directory, manifest, problem in _packages():
        found[name] = {"directory": str(directory), "codecs": len((manifest or {}).get("codecs", {})),
                       "usable": problem is None, "problem": problem}
    return found


@functools.lru_cache(maxsize=1)
def _index() -> dict[str, Precompiled]:
    index: dict[str, Precompiled] = {}
    for name, directory, manifest, problem in _packages():
        if problem is not None:
            log.warning("precompiled codecs of %r are not used: %s", name, problem)
            continue
        for key, entry in manifest["codecs"].items():
            index[key] = Precompiled(name, entry["module"], directory / entry["file"],
                                     entry["sha256"], entry.get("label", ""))
    return index


def _packages():
    from roastedavro.compiler import EXT_SUFFIX

    for point in importlib.metadata.entry_points(group=GROUP):
        name = point.value
        try:
            spec = importlib.util.find_spec(name)
            directory = Path(list(spec.submodule_search_locations)[0])
            manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        except Exception as error:  # a broken package must not stop the program
            yield name, None, None, f"its manifest cannot be read ({error})"
            continue
        problem = None
        if manifest.get("format") != FORMAT:
            problem = f"manifest format {manifest.get('format')!r}, this roastedavro reads {FORMAT}"
        elif manifest.get("roastedavro") != __version__:
            problem = (f"built for roastedavro {manifest.get('roastedavro')}, this is {__version__}: "
                       "rebuild it with this version")
        elif manifest.get("ext_suffix") != EXT_SUFFIX:
            problem = (f"built for extension modules {manifest.get('ext_suffix')!r}, this Python "
                       f"loads {EXT_SUFFIX!r}: build it with this Python")
        yield name, directory, manifest, problem
