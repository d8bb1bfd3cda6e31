"""What the code generators share: the Jinja2 environment that renders only
checked code, the module being generated (``ModuleEmitter``: the
objects its codec binds, key slots, the functions to check), one generated
function's lines and C locals (``FunctionLines``), how a wide record's
functions are split, and the generated module itself.

The marshmallow generator (``roastedavro.codegen``), the Avro generator
(``roastedavro.avrogen``) and the resolving reader's
(``roastedavro.resolvegen``) build on it; it imports none of them.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any, Callable, NamedTuple

import jinja2

from roastedavro._runtime import RecordKeys
from roastedavro.codetext import RESERVED, Code, checked_int, identifier, literal
from roastedavro.errors import CompileError


def _only_code(value):
    # Every {{ }} in a template renders Code (built by codetext's channels or
    # by an emitter) or an exact int: plain text cannot reach the module.
    if isinstance(value, Code) or type(value) is int:
        return value
    raise CompileError(f"internal error: a template was given unchecked text {value!r}")


environment = jinja2.Environment(
    loader=jinja2.PackageLoader("roastedavro", "templates"),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
    autoescape=False,
    finalize=_only_code,
)


class FunctionLines:
    """The lines and C locals of one generated function: what both
    generators' function emitters build on (roastedavro.codegen's
    FunctionEmitter, roastedavro.avrogen_function's _Function)."""

    def __init__(self) -> None:
        self.lines: list[Code] = []
        #: name -> (C type, initial value or None), declared at the top
        self.c_locals: dict[str, tuple[str, str | None]] = {}
        self._indent = 0

    def line(self, text: str = "") -> None:
        # Checked with the whole function by codetext.check_function before
        # anything is built: only names the emitters and runtime provide.
        self.lines.append(Code("    " * self._indent + text if text else ""))

    @contextlib.contextmanager
    def indent(self):
        self._indent += 1
        try:
            yield
        finally:
            self._indent -= 1

    def declarations(self) -> list[Code]:
        return [
            Code(f"cdef {ctype} {name}" + (f" = {initial}" if initial is not None else ""))
            for name, (ctype, initial) in self.c_locals.items()
        ]

    def collect(self, emit: Callable[[], Any]) -> list[Code]:
        """The lines ``emit()`` adds, taken out of the function (for a
        template to place)."""
        start = len(self.lines)
        emit()
        body = self.lines[start:]
        del self.lines[start:]
        return body


class ModuleEmitter:
    """Collects what the record functions need from outside their source,
    and the functions to check before the module is built.

    Python objects used on slow paths (field instances for their
    ``_serialize``, defaults, mapping types) become typed attributes of the
    codec object's ``bound`` (the module's Bound class, templates/bound.pyx.j2),
    so each compiled schema instance holds its own.
    """

    def __init__(self) -> None:
        self.bindings: dict[str, Any] = {}
        self._names_by_id: dict[int, str] = {}
        #: (emitter, rendered functions[, the names they define])
        self.checks: list[tuple] = []
        #: method names of the codec that bindings must not take
        self._functions: set[str] = set()
        #: slots of the codec's keys_seen array given out (see key_slot)
        self.key_slots = 0
        #: bindings that are tier-0 interpreters (bind_interpreter)
        self.interpreters: list[Code] = []

    def verify(self) -> None:
        """codetext.check_function over every generated function.

        Run before the module is built (tokenizing costs about as much as
        generating), not when a cached build of the same source is loaded.
        """
        for emitter, text, *functions in self.checks:
            emitter.check(text, *functions)

    def bind(self, obj: Any, name: str) -> Code:
        return Code(f"self.bound.{self._binding(obj, name)}")

    def bind_interpreter(self, interpreter: Any, name: str) -> Code:
        """A tier-0 interpreter bound as ``bind`` does, which each codec
        object gives its own nesting bound (``max_depth``)."""
        attribute = self._binding(interpreter, name)
        if attribute not in self.interpreters:
            self.interpreters.append(attribute)
        return Code(f"self.bound.{attribute}")

    def _binding(self, obj: Any, name: str) -> Code:
        """The attribute of the module's Bound that holds ``obj`` (one per object)."""
        known = self._names_by_id.get(id(obj))
        if known is not None:
            return Code(known)
        name = base = identifier(name)
        if PART_FUNCTION.match(name):
            # part_...: the names of wide records' functions (a binding no
            # longer shares their class, but generated text stays unambiguous)
            name = base = f"bound_{name}"  # type: ignore[assignment]  # an identifier too
        n = 2
        # never a name of the module's skeleton or runtime (max_depth, ...)
        while name in self.bindings or name in RESERVED or name in self._functions:
            name, n = f"{base}_{n}", n + 1
        self.bindings[name] = obj
        # the object stays referenced by `bindings`, so its id is not reused
        self._names_by_id[id(obj)] = name
        return Code(name)

    def key_slot(self) -> Code:
        """A field's own slot in the codec's ``keys_seen`` array, for
        ``next_field``: the equal dict key it last matched, held so that
        dicts built from the same key objects match it by identity."""
        slot = checked_int(self.key_slots, "a key slot", 0, 2**31)
        self.key_slots += 1
        return Code(f"&self.keys_seen[{slot}]")

    def declared(self) -> list[tuple[Code, Code, Code]]:
        """The module template's bindings: attribute name, key, C type
        (RecordKeys are typed, so their fields are read without a check;
        interpreters are DatumCodecs, so that binding anything else fails)."""
        interpreters = set(self.interpreters)
        return [
            (
                Code(name),
                literal(name),
                Code(
                    "RecordKeys"
                    if type(obj) is RecordKeys
                    else "DatumCodec"
                    if name in interpreters
                    else "object"
                ),
            )
            for name, obj in self.bindings.items()
        ]


#: fields per generated function: a wider record is written and read by one
#: function per this many fields, called in turn. The C compiler's time grows
#: faster than linearly with a function's size (500 fields in one function
#: take several times as long as ten functions of 50), and a call per 50
#: fields costs nothing measurable.
FIELDS_PER_FUNCTION = 50
#: the names of those functions start so; no binding does (see ModuleEmitter.bind)
PART_FUNCTION = re.compile(r"part_")


def function_parts(fields: list, function: str, names: tuple = ()) -> list[dict]:
    """A record function's fields in parts of at most FIELDS_PER_FUNCTION:
    one part without a name (the function itself holds the fields), or
    parts named ``part_<function>_<n>`` that the function calls in turn.
    With the fields' ``names``, each part has the literal tuple of its own
    (its error handler's), and its fields' numbers count from its first."""
    size = FIELDS_PER_FUNCTION if len(fields) > FIELDS_PER_FUNCTION else max(len(fields), 1)
    parts = []
    for number, first in enumerate(range(0, max(len(fields), 1), size), 1):
        part = {
            "function": Code(f"part_{function}_{number}") if size < len(fields) else None,
            "fields": fields[first : first + size],
            "first": first,
            "last": max(min(first + size, len(fields)) - 1, 0),
        }
        if names:
            part["field_names"] = literal(tuple(names[first : first + size]))
        parts.append(part)
    return parts


def indented(text: str) -> Code:
    """A checked function, indented as a method of the codec class."""
    return Code("".join("    " + line if line.strip() else line for line in text.splitlines(True)))


def render(template: str, **context) -> str:
    return environment.get_template(template).render(**context)


class GeneratedModule(NamedTuple):
    source: str
    #: the objects the codec holds as constants, by attribute name
    bindings: dict[str, Any]
    #: raises CompileError if a generated function uses anything it was not
    #: given; run before the source is built
    verify: Callable[[], None]
