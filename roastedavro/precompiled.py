"""Installed packages of precompiled codecs (made by ``roastedavro build``).

A package of codecs declares itself in the entry point group
``roastedavro.codecs`` (name and value: its import name) and carries a
manifest, ``roastedavro-codecs.json``, beside its modules: the roastedavro
version and extension suffix it was built for, and for each codec the key it
answers to (``roastedavro.compiler.aot_key``), its module name, file and
SHA-256. A package built for another roastedavro or another Python ABI, or
whose manifest is malformed (an entry without its module, file or SHA-256),
is ignored as a whole, with a warning naming it: other codecs keep working. A
module whose digest does not match is never loaded.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import re
import sys
import warnings
from roastedavro._record import record
from pathlib import Path

from roastedavro import __version__

GROUP = "roastedavro.codecs"
MANIFEST = "roastedavro-codecs.json"
FORMAT = 1

_SHA256 = re.compile(r"[0-9a-f]{64}")
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


class PrecompiledWarning(UserWarning):
    """An installed package of precompiled codecs is not used (the message says why)."""


@record(frozen=True)
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


def lookup_possible() -> bool:
    """Whether any usable precompiled codec is installed (the unusable are
    warned about, as by ``lookup``)."""
    return bool(_index())


def refresh() -> None:
    """Forget the index: packages installed since are found on the next lookup."""
    _index.cache_clear()


def packages() -> dict[str, dict]:
    """What each installed package of codecs holds (for ``roastedavro cache info``)."""
    found = {}
    for name, directory, manifest, problem in _packages():
        found[name] = {
            "directory": str(directory),
            "codecs": len((manifest or {}).get("codecs", {})),
            "usable": problem is None,
            "problem": problem,
        }
    return found


@functools.lru_cache(maxsize=1)
def _index() -> dict[str, Precompiled]:
    index: dict[str, Precompiled] = {}
    if not _group_may_be_declared():
        # importlib.metadata (with email, zipfile, csv, ...) costs a process
        # a few MB: not imported where it could find nothing
        return index
    for name, directory, manifest, problem in _packages():
        if problem is not None:
            warnings.warn(
                f"the precompiled codecs of the package {name!r} are not used: {problem}",
                PrecompiledWarning,
                stacklevel=2,
            )
            continue
        for key, entry in manifest["codecs"].items():
            index[key] = Precompiled(
                name, entry["module"], directory / entry["file"], entry["sha256"], entry.get("label", "")
            )
    return index


def _malformed(manifest) -> str | None:
    """What is wrong with a manifest's list of codecs, or None."""
    if not isinstance(manifest, dict):
        return f"its manifest is a JSON {type(manifest).__name__}, not an object"
    codecs = manifest.get("codecs")
    if not isinstance(codecs, dict):
        return 'its manifest has no "codecs" object'
    for key, entry in codecs.items():
        if not isinstance(entry, dict):
            return f"its manifest's entry {key!r} is not an object"
        module, file, digest = entry.get("module"), entry.get("file"), entry.get("sha256")
        label = entry.get("label", "")
        if not isinstance(module, str) or not _MODULE.fullmatch(module):
            return f'its manifest\'s entry {key!r} has no valid "module" (a module name)'
        if not isinstance(file, str) or not file or "/" in file or "\\" in file or file in (".", ".."):
            return f'its manifest\'s entry {key!r} has no valid "file" (a file name in the package)'
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            return f'its manifest\'s entry {key!r} has no valid "sha256" (64 lowercase hex digits)'
        if not isinstance(label, str):
            return f'its manifest\'s entry {key!r} has a "label" that is not a string'
    return None


def _group_may_be_declared() -> bool:
    """False when no installed distribution declares the entry point group
    ``GROUP``, read from the files importlib.metadata reads for
    ``entry_points()``: every ``entry_points.txt`` of the ``*.dist-info`` and
    ``*.egg-info`` folders (and an ``.egg``'s ``EGG-INFO``) in the folders of
    ``sys.path``. True wherever that cannot tell (a zip file on ``sys.path``, a
    finder of distributions other than the path's, an unreadable file): the
    caller then asks importlib.metadata."""
    from importlib.machinery import PathFinder

    for finder in sys.meta_path:
        if finder is not PathFinder and getattr(finder, "find_distributions", None) is not None:
            return True
    needle = GROUP.encode()
    for root in sys.path:
        if not isinstance(root, str):
            return True
        folder = root or "."
        try:
            children = os.listdir(folder)
        except OSError:
            if os.path.exists(folder):
                return True  # a zip file, or a folder that cannot be listed
            continue
        egg = os.path.basename(root).lower().endswith(".egg")
        for child in children:
            low = child.lower()
            if not (low.endswith((".dist-info", ".egg-info")) or (egg and low == "egg-info")):
                continue
            try:
                with open(os.path.join(folder, child, "entry_points.txt"), "rb") as file:
                    if needle in file.read():
                        return True
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
                continue  # importlib.metadata reads no entry points there either
            except OSError:
                return True
    return False


def _packages():
    from importlib.metadata import entry_points

    from roastedavro.flags import EXT_SUFFIX

    for point in entry_points(group=GROUP):
        name = point.value
        try:
            spec = importlib.util.find_spec(name)
            if spec is None:
                yield name, None, None, "it cannot be found"
                continue
            if not spec.submodule_search_locations:
                yield (
                    name,
                    None,
                    None,
                    (
                        "it is a module, not a package: a package of precompiled "
                        f"codecs is a folder holding {MANIFEST}"
                    ),
                )
                continue
            directory = Path(list(spec.submodule_search_locations)[0])
            manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        except Exception as error:  # a broken package must not stop the program
            yield name, None, None, f"its manifest cannot be read ({error})"
            continue
        problem = _malformed(manifest)
        if problem is not None:
            manifest = None
        elif manifest.get("format") != FORMAT:
            problem = f"manifest format {manifest.get('format')!r}, this roastedavro reads {FORMAT}"
        elif manifest.get("roastedavro") != __version__:
            problem = (
                f"built for roastedavro {manifest.get('roastedavro')}, this is {__version__}: "
                "rebuild it with this version"
            )
        elif manifest.get("ext_suffix") != EXT_SUFFIX:
            problem = (
                f"built for extension modules {manifest.get('ext_suffix')!r}, this Python "
                f"loads {EXT_SUFFIX!r}: build it with this Python"
            )
        yield name, directory, manifest, problem
