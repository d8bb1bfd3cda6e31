"""One generated function of an AvroCodec module: its lines and C locals
(part of the generator, roastedavro.avrogen)."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import TYPE_CHECKING

from roastedavro.codetext import Code, check_function
from roastedavro.emitter import FunctionLines
from roastedavro.errors import CompileError

if TYPE_CHECKING:
    from roastedavro.avrogen import _Generator

#: arrays and maps nested inside one another within one function (records
#: start a new function); deeper schemas would make C the compiler's problem
MAX_NESTING = 64

_TEMPLATES = Path(__file__).resolve().parent / "templates"
_JINJA_TAGS = re.compile(r"\{[{%#].*?[}%#]\}", re.S)
_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _template_names() -> frozenset:
    """Every name the avro_* templates write: what generated functions may use
    besides their own locals (the module's imports, constants and locals)."""
    names = set()
    for path in _TEMPLATES.glob("avro_*.pyx.j2"):
        text = _JINJA_TAGS.sub(" ", path.read_text())
        text = re.sub(r"#[^\n]*", " ", text)
        names.update(_WORDS.findall(re.sub(r"(['\"]).*?\1", " ", text)))
    return frozenset(names)


_ALLOWED = _template_names()


class _Function(FunctionLines):
    """The lines and C locals of one generated function of the Avro model.

    Locals of collections and unions are numbered by nesting level (``items0``,
    ``count1``, ``branch0``); values at one level share them.
    """

    def __init__(self, module: _Generator, kind: str, name: Code):
        super().__init__()
        self.module = module
        self.kind = kind  # "write", "read", "skip" or "check"
        self.name = name
        self.nesting = 0
        self.path_levels = 0
        self.unions = 0
        self.checks = 0

    def local(self, ctype: str, name: str, initial: str | None = None) -> str:
        if name not in self.c_locals:
            self.c_locals[name] = (ctype, initial)
        return name

    @contextlib.contextmanager
    def collection(self):
        """The level number of a collection nested in this function."""
        level = self.nesting
        if level >= MAX_NESTING:
            raise CompileError(
                f"arrays and maps are nested more than {MAX_NESTING} levels deep "
                f"within one record ({self.name}); no codec is generated for it"
            )
        if self.kind == "write":
            self.local("int", f"part{level}", "PATH_NONE")
            self.local("Py_ssize_t", f"index{level}", "0")
            self.local("object", f"key{level}", "None")
            self.path_levels = max(self.path_levels, level + 1)
        self.nesting += 1
        try:
            yield level
        finally:
            self.nesting -= 1

    @contextlib.contextmanager
    def union(self):
        level = self.unions
        self.unions += 1
        try:
            yield self.local("int", f"branch{level}")
        finally:
            self.unions -= 1

    @contextlib.contextmanager
    def check_level(self):
        """The level number of a validation nested in this function."""
        level = self.checks
        self.checks += 1
        try:
            yield level
        finally:
            self.checks -= 1

    def check(self, text: str) -> None:
        check_function(text, _ALLOWED | set(self.c_locals) | self.module.function_names)
