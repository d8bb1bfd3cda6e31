"""The module-level ``__getattr__`` of the drop-in's submodules named as
fastavro's (``read``, ``write``, ``validation``, ``json_read``,
``json_write``): a name the submodule does not define is fastavro's own
module's (constants, registries, helpers that move no data), except the
names listed as refused, which would move data through fastavro's own
reader or writer."""

from __future__ import annotations

import importlib
from typing import Any, Callable


def forwarder(ours: str, theirs: str, refused: dict[str, str]) -> Callable[[str], Any]:
    def __getattr__(name: str) -> Any:
        if name in refused:
            raise AttributeError(f"{ours}.{name} is not provided: {refused[name]}")
        if name.startswith("__"):
            raise AttributeError(f"module {ours!r} has no attribute {name!r}")
        try:
            return getattr(importlib.import_module(theirs), name)
        except AttributeError:
            raise AttributeError(f"module {ours!r} has no attribute {name!r}") from None

    return __getattr__
