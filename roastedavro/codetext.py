"""The only ways text from a schema declaration reaches generated code.

Schemas come from registries, ``.avsc`` files and other teams' code, so every
name, symbol, logical type, size, default, message or class name in them is
untrusted. It reaches the generated Cython through three channels only:

1. ``identifier``: a name of ``[A-Za-z_][A-Za-z0-9_]*``, whatever the text;
2. ``literal``: the ``repr`` of an exact ``str``, ``int``, ``float``,
   ``bool``, ``bytes`` or ``None`` (or a tuple of them); any other object is
   bound as a constant of the codec (``FunctionEmitter.bind``);
3. ``checked_int``: an exact ``int`` (not a ``bool``, not a ``str``) within
   stated bounds.

Comments go through ``comment``, which keeps a small alphabet that cannot
end a comment or a line.

Two checks make a slip impossible to ship rather than merely unlikely:
``Code`` marks text built through these channels, and the Jinja
environment refuses to render anything else (see emitter); and
``check_function`` tokenizes every generated function and refuses a name
that neither the templates, the runtime nor the emitters provided, a dunder
attribute, an f-string, or anything the tokenizer cannot read.
"""

from __future__ import annotations

import builtins
import io
import keyword
import math
import re
import tokenize
from pathlib import Path

from roastedavro.errors import CompileError

_NOT_IDENTIFIER = re.compile(r"[^0-9A-Za-z_]")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class Code(str):
    """Text that may be pasted into generated code: built by this module's
    channels, by an emitter from them, or written by roastedavro itself."""

    __slots__ = ()


def identifier(text: str) -> Code:
    """A Python/C identifier made from any text: only ``[A-Za-z0-9_]``."""
    ident = _NOT_IDENTIFIER.sub("_", str.__str__(text))
    if not ident or ident[0].isdigit():
        ident = "_" + ident
    return Code(ident)


_LITERAL_TYPES = (type(None), bool, int, float, str, bytes)


def literal(value) -> Code:
    """A Python literal for ``value``, by ``repr`` of its exact built-in type.

    Subclasses are copied to their base type first, so an overridden
    ``__repr__`` never runs. Anything else is a ``TypeError``: bind it.
    """
    if type(value) is tuple:
        items = [literal(item) for item in value]
        return Code("(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")")
    for kind in _LITERAL_TYPES:
        if isinstance(value, kind):
            break
    else:
        raise TypeError(f"{type(value).__name__} values are bound as constants, not literals")
    if isinstance(value, bool) or value is None:
        return Code(repr(value if value is None else bool(value)))
    if isinstance(value, int):
        return Code(int.__repr__(int.__int__(value)))
    if isinstance(value, float):
        number = float.__float__(value)
        if not math.isfinite(number):
            raise TypeError("non-finite floats are bound as constants, not literals")
        return Code(float.__repr__(number))
    if isinstance(value, str):
        return Code(str.__repr__(str.__str__(value)))
    return Code(bytes.__repr__(bytes(value)))


#: the largest size or precision that reaches generated code
MAX_SIZE = 2**31 - 1


def checked_int(value, what: str, low: int = -(2**63), high: int = 2**63 - 1) -> Code:
    """An ``int`` from a declaration, as code: exactly an int, within bounds."""
    if type(value) is not int or not low <= value <= high:
        raise CompileError(f"{what} must be an integer from {low} to {high}, not {value!r}")
    return Code(int.__repr__(value))


_COMMENT_UNSAFE = re.compile(r"[^A-Za-z0-9_ .,:;()<>\[\]|=+*/-]")


def comment(text) -> Code:
    """Text for a comment: a small alphabet (no newline, quote, backslash or
    ``#``), at most 100 characters. Declaration text never reaches a comment
    any other way."""
    cleaned = _COMMENT_UNSAFE.sub("?", str(text))
    return Code(cleaned if len(cleaned) <= 100 else cleaned[:97] + "...")


# -- checking generated functions ------------------------------------------

_PACKAGE = Path(__file__).resolve().parent
_TEMPLATES = _PACKAGE / "templates"
_JINJA_TAGS = re.compile(r"\{[{%#].*?[}%#]\}", re.S)
_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# `from X cimport (a, b)`, `from X import a`, `cdef object NAME = ...`:
# the module-level names the skeleton gives generated functions
_IMPORTED = re.compile(r"^from \S+ c?import (?:\(([^)]*)\)|([^(\n]+)$)", re.M)
_MODULE_CONSTANT = re.compile(r"^cdef (?:object|type) ([A-Za-z_]\w*) =", re.M)

#: never valid in a generated function, whatever provided them
FORBIDDEN = frozenset(
    {
        "import",
        "cimport",
        "include",
        "extern",
        "DEF",
        "IF",
        "ELIF",
        "ELSE",
        "global",
        "nonlocal",
        "lambda",
        "class",
        "def",
        "cpdef",
        "ctypedef",
        "yield",
        "await",
        "async",
        "with",
        "exec",
        "eval",
        "compile",
        "open",
        "__import__",
        "globals",
        "locals",
        "vars",
        "getattr",
        "setattr",
        "delattr",
        "breakpoint",
        "input",
        "help",
        "memoryview",
        "object_hook",
    }
)
_KEYWORDS = frozenset(
    {
        "if",
        "elif",
        "else",
        "for",
        "in",
        "is",
        "not",
        "and",
        "or",
        "while",
        "try",
        "except",
        "finally",
        "raise",
        "return",
        "as",
        "from",
        "pass",
        "break",
        "continue",
        "None",
        "True",
        "False",
        "cdef",
    }
)
_BUILTINS = frozenset(
    {
        "len",
        "type",
        "range",
        "list",
        "dict",
        "tuple",
        "str",
        "int",
        "float",
        "bool",
        "bytes",
        "isinstance",
        "min",
        "max",
        "abs",
        "set",
        "frozenset",
    }
)
_C_TYPES = frozenset(
    {
        "int",
        "long",
        "double",
        "float",
        "char",
        "unsigned",
        "signed",
        "bint",
        "object",
        "Py_ssize_t",
        "PyObject",
        "Py_buffer",
        "size_t",
        "Reader",
        "Writer",
    }
)


def _skeleton_names() -> frozenset:
    module = (_TEMPLATES / "module.pyx.j2").read_text()
    names = set(_MODULE_CONSTANT.findall(module))
    for listed, single in _IMPORTED.findall(module):
        names.update(_WORDS.findall(listed or single))
    for template in ("record_writer.pyx.j2", "record_reader.pyx.j2"):
        text = _JINJA_TAGS.sub(" ", (_TEMPLATES / template).read_text())
        text = re.sub(r"#[^\n]*", " ", text)
        names.update(_WORDS.findall(re.sub(r"(['\"]).*?\1", " ", text)))
    return frozenset(names)


#: names any generated function may use: what the module skeleton imports
#: and declares, what the record templates use, keywords, a few builtins
ALLOWED = (_skeleton_names() | _KEYWORDS | _BUILTINS | _C_TYPES) - FORBIDDEN


def check_function(text: str, names) -> None:
    """Refuse a generated function that uses anything it was not given.

    ``names`` are the locals the emitters declared. Attributes (after ``.``)
    may be any name but a dunder; every other name must be in ``ALLOWED`` or
    ``names``. Strings must be plain literals and comments stay comments, as
    the tokenizer sees them. An error here is a bug in an encoder (or an
    attempt to smuggle code through a declaration), never the user's schema.
    """
    allowed = ALLOWED | frozenset(names)
    previous = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind = tokenize.tok_name[token.type]
            if kind == "NAME":
                name = token.string
                if previous == ".":
                    bad = name.startswith("__")
                else:
                    bad = name not in allowed or name in FORBIDDEN
                if bad:
                    raise CompileError(
                        f"generated code uses {name!r}, which no template, runtime "
                        f"function or emitter provided (line {token.start[0]}: "
                        f"{token.line.strip()!r}); encoders must pass declaration text "
                        "through fn.literal, fn.bind or fn.int"
                    )
            elif kind == "STRING":
                prefix = token.string[: token.string.find(token.string[-1])].lower()
                if "f" in prefix:
                    raise CompileError(f"generated code has an f-string: {token.line.strip()!r}")
            elif kind in ("ERRORTOKEN", "FSTRING_START"):
                raise CompileError(f"generated code has an unexpected token: {token.line.strip()!r}")
            if kind not in ("NL", "NEWLINE", "COMMENT", "INDENT", "DEDENT"):
                previous = token.string
    except (tokenize.TokenError, IndentationError, SyntaxError) as error:
        raise CompileError(f"generated code does not tokenize: {error}") from None


# Names a generated identifier must not take: Python and Cython keywords,
# builtins, and the names the templates and runtime use themselves.
RESERVED = (
    set(keyword.kwlist)
    | set(dir(builtins))
    | {
        "cdef",
        "cpdef",
        "cimport",
        "ctypedef",
        "struct",
        "union",
        "enum",
        "extern",
        "inline",
        "public",
        "readonly",
        "api",
        "nogil",
        "gil",
        "include",
        "sizeof",
        "typeof",
        "NULL",
        "new",
        "char",
        "short",
        "long",
        "int",
        "double",
        "float",
        "unsigned",
        "signed",
        "const",
        "void",
        "bint",
        "object",
        "Py_ssize_t",
        "size_t",
        "cython",
        "fused",
        "DEF",
        "IF",
        "ELIF",
        "ELSE",
        "w",
        "r",
        "obj",
        "objs",
        "data",
        "self",
        "depth",
        "source",
        "record",
        "error",
        "field_no",
        "view",
        "acquired",
        "result",
        "count",
        "index",
        "item",
        "MISSING",
        "value",
        "loaded",
        "loaded_value",
        "values",
        "PATH_NONE",
        "PATH_INDEX",
        "PATH_KEY",
        "PATH_VALUE",
        "DumpError",
        "ValidationError",
        "caught",
        "INVALID",
    }
)
# every name the module skeleton and the runtime declare or import, so that
# a field called `write_long` or `obj` cannot shadow one of them
RESERVED |= set(
    re.findall(
        r"[A-Za-z_][A-Za-z0-9_]*",
        (
            (_PACKAGE / "templates" / "module.pyx.j2").read_text()
            + (_PACKAGE / "templates" / "bound.pyx.j2").read_text()
            + (_PACKAGE / "_runtime.pxd").read_text()
        ),
    )
)
