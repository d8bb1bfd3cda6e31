"""Cython source of an AvroCodec, generated from a parsed Avro schema.

Each named record gets a writer, a reader and a skipper function (the
skipper checks a value's bytes as the reader does without building it, for
schema resolution); everything else is written inline where it is used.
Values follow fastavro's conventions (see roastedavro._datum): the generated
code writes values of the exact Python type the Avro type needs with the
runtime's inline primitives, and hands any other value to the runtime's out
of line conversions, so a record's fields cost no Python-level call.

Schema text reaches the source only through codetext's channels: names of
records become checked identifiers in function names, field names and
symbols are repr literals or bound constants, sizes and precisions checked
ints, and comments go through ``codetext.comment``. Every generated function
is checked with ``codetext.check_function`` before a build.
"""

from __future__ import annotations

import collections
import contextlib
import re
from pathlib import Path
from typing import Any

from roastedavro import __version__, blocks
from roastedavro._datum import UnionChooser, Validator, encode_default
from roastedavro._runtime import RecordKeys
from roastedavro.avro.types import (
    Array, AvroType, Enum, Fixed, Map, NamedRef, NamedType, Primitive, Record, Schema, Union,
    describe,
)
from roastedavro.emitter import (
    GeneratedModule, ModuleEmitter, environment, function_parts, indented,
)
from roastedavro.codetext import Code, check_function, checked_int, comment, identifier, literal
from roastedavro.errors import CompileError
# what tier 0 and Avro JSON share with the generator (they must agree with it)
from roastedavro.avroplan import (  # noqa: F401
    _PRIMITIVE_SIZES, _TIMESTAMPS, _TYPE_TESTS, _MinSizes, _UnionPlan, _is_primitive,
)

_TEMPLATES = Path(__file__).resolve().parent / "templates"
#: the templates whose record functions are split into parts
_SPLIT_TEMPLATES = ("avro_writer.pyx.j2", "avro_reader.pyx.j2")
#: arrays and maps nested inside one another within one function (records
#: start a new function); deeper schemas would make C the compiler's problem
MAX_NESTING = 64
#: the largest size or precision that reaches generated code
_MAX_SIZE = 2**31 - 1
#: a union of at least this many branches is generated once per module
#: (Generator.shared_union), as is one of two records or more
_SHARED_UNION_BRANCHES = 12
#: fastavro's branch rule validates a dict against each record of a union,
#: field by field, nested records too. In a schema of more record fields than
#: this, tier 0's interpreter validates records (one call into its node
#: table) instead of an accepts_ function per record: in Apache Avro's
#: large_schema.avsc those were a third of the module's code and of its build
_COMPILED_VALIDATION_FIELDS = 1000

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

# -- one generated function --------------------------------------------------------


class _Function:
    """The lines and C locals of one generated function.

    Locals of collections and unions are numbered by nesting level (``items0``,
    ``count1``, ``branch0``); values at one level share them.
    """

    def __init__(self, module: _Generator, kind: str, name: Code):
        self.module = module
        self.kind = kind  # "write", "read", "skip" or "check"
        self.name = name
        self.lines: list[Code] = []
        self.c_locals: dict[str, tuple[str, str | None]] = {}
        self._indent = 0
        self.nesting = 0
        self.path_levels = 0
        self.unions = 0
        self.checks = 0

    def line(self, text: str = "") -> None:
        self.lines.append(Code("    " * self._indent + text if text else ""))

    @contextlib.contextmanager
    def indent(self):
        self._indent += 1
        try:
            yield
        finally:
            self._indent -= 1

    def local(self, ctype: str, name: str, initial: str | None = None) -> str:
        if name not in self.c_locals:
            self.c_locals[name] = (ctype, initial)
        return name

    @contextlib.contextmanager
    def collection(self):
        """The level number of a collection nested in this function."""
        level = self.nesting
        if level >= MAX_NESTING:
            raise CompileError(f"arrays and maps are nested more than {MAX_NESTING} levels deep "
                               f"within one record ({self.name}); no codec is generated for it")
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

    def declarations(self) -> list[Code]:
        return [Code(f"cdef {ctype} {name}" + (f" = {initial}" if initial is not None else ""))
                for name, (ctype, initial) in self.c_locals.items()]

    def collect(self, emit) -> list[Code]:
        start = len(self.lines)
        emit()
        body = self.lines[start:]
        del self.lines[start:]
        return body

    def check(self, text: str) -> None:
        check_function(text, _ALLOWED | set(self.c_locals) | self.module.function_names)


# -- the module ---------------------------------------------------------------------


class _Generator:
    """The functions of one schema: an AvroCodec's module, or (with a
    ``prefix``) a fragment for another module, whose function and constant
    names all start with the prefix and which has no skippers."""

    def __init__(self, schema: Schema, module: ModuleEmitter | None = None, prefix: str = "",
                 kinds: tuple = (), exact_decimals: bool = True):
        self.schema = schema
        #: plain Avro reads a decimal's exact value even beyond its precision, as
        #: Java does (within a bound, see the runtime's read_decimal_exact);
        #: fragments of marshmallow schemas keep refusing it
        self.exact_decimals = exact_decimals
        self.module = module if module is not None else ModuleEmitter()
        self.prefix = prefix
        self.sizes = _MinSizes(schema)
        self.records = _records_in_order(schema)
        self.idents = _function_idents(self.records)
        # no skippers of its own: an AvroCodec's skip() is the runtime's
        # generic walk (generic_skip); resolution pairs ask for "skip"
        self.kinds = kinds or ("write", "read")
        self.function_names = {self.function(kind, ident) for ident in self.idents.values()
                               for kind in self.kinds + ("accepts",)}
        #: records whose reader or skipper generated code calls, by kind
        self.called: dict[str, dict[str, Record]] = {"read": {}, "skip": {}}
        if prefix:
            self.function_names |= {f"{prefix}_write", f"{prefix}_read"}
        else:
            self.function_names |= {"write_root", "read_root", "skip_root"}
        #: records whose validators (accepts_<ident>) are used, and those generated
        self.validated: dict[str, Record] = {}
        self._validators_done: set[str] = set()
        self._enums: dict[str, tuple[Code, Code]] = {}
        self._record_keys: dict[str, Code] = {}
        self._unions = 0
        self._choosers: dict[tuple, Code] = {}
        self._validators: dict[AvroType, Code] = {}
        #: unions written, read and skipped by functions of their own (see
        #: shared_union), by _union_key: the ident of each, the union, and
        #: those whose functions exist
        self.shared: dict[tuple, Code] = {}
        self._shared_unions: dict[tuple, Union] = {}
        self._shared_done: set[tuple] = set()
        #: how many times each union occurs in the schema
        self._union_uses = collections.Counter(
            _union_key(avro) for avro in schema.walk() if isinstance(avro, Union))
        self.checks: list[tuple[_Function, str]] = []
        #: records validated by tier 0 (see _COMPILED_VALIDATION_FIELDS): its
        #: interpreter and the binding that holds it, made at the first use
        self.tier0_validates = (sum(len(record.fields) for record in self.records)
                                > _COMPILED_VALIDATION_FIELDS)
        self._validation: tuple[Any, Code] | None = None

    # -- constants -------------------------------------------------------------

    def function(self, kind: str, ident: str) -> Code:
        """The name of a record's writer, reader, skipper or validator."""
        if self.prefix:
            return Code(f"{self.prefix}_{kind}_{ident}")
        return Code(f"{kind}_{ident}")

    def bind(self, obj: Any, name: str) -> Code:
        return self.module.bind(obj, f"{self.prefix or 'const'}_{identifier(name)}")

    def enum_constants(self, enum: Enum) -> tuple[Code, Code]:
        """The enum's symbols (a tuple) and indexes (symbol -> index), bound once."""
        known = self._enums.get(enum.name)
        if known is None:
            ident = identifier(enum.name)
            symbols = tuple(enum.symbols)
            indexes = {symbol: index for index, symbol in enumerate(symbols)}
            known = self._enums[enum.name] = (self.bind(symbols, f"{ident}_symbols"),
                                              self.bind(indexes, f"{ident}_indexes"))
        return known

    def union_chooser(self, union: Union) -> Code:
        """The union's chooser (fastavro's rule), bound once per distinct union."""
        key = _union_key(union)
        known = self._choosers.get(key)
        if known is None:
            self._unions += 1
            known = self._choosers[key] = self.bind(UnionChooser(union, self.schema),
                                                    f"union{self._unions}")
        return known

    def shared_union(self, union: Union) -> Code | None:
        """The ident of the functions that write, read and skip ``union``, for
        a union that occurs more than once and whose code is long: one of
        several records (fastavro's choice of a record for a dict is a
        validation and a count of shared keys per record), or of many
        branches. Such a union is generated once per module and called
        wherever it occurs, not written out at every field that has it. None
        for a union written in place: one that occurs once, a short one, or
        one with an array or map branch (whose items' error paths the calling
        function tracks)."""
        key = _union_key(union)
        known = self.shared.get(key)
        if known is not None:
            return known
        if self._union_uses[key] < 2:
            return None  # once in the schema: nothing to share, and a call to save
        branches = [self.schema.deref(branch) for branch in union.branches]
        if any(isinstance(branch, (Array, Map)) for branch in branches):
            return None
        records = sum(isinstance(branch, Record) for branch in branches)
        if records < 2 and len(branches) < _SHARED_UNION_BRANCHES:
            return None
        taken = set(self.idents.values()) | set(self.shared.values())
        number = len(self.shared) + 1
        ident = Code(f"union{number}")
        while ident in taken or any(f"{kind}_{ident}" in _SKELETON_NAMES
                                    for kind in _FUNCTION_KINDS):
            number += 1
            ident = Code(f"union{number}")
        self.shared[key] = ident
        self._shared_unions[key] = union
        self.function_names |= {self.function(kind, ident) for kind in self.kinds + ("accepts",)}
        return ident

    def shared_union_functions(self) -> list[Code]:
        """The functions of the shared unions used so far (and of those they
        use in turn), each once."""
        functions: list[Code] = []
        while len(self._shared_done) < len(self.shared):
            for key, ident in list(self.shared.items()):
                if key in self._shared_done:
                    continue
                self._shared_done.add(key)
                union = self._shared_unions[key]
                functions += self.value_functions(
                    union, {kind: self.function(kind, ident) for kind in self.kinds},
                    in_place=True)
                if "write" in self.kinds:  # writers choose a branch by validating
                    functions.append(self.union_validator_function(union, ident))
        return functions

    def pending_functions(self) -> list[Code]:
        """The shared unions' and the validators' functions used so far, and
        those they use in turn, until none is missing."""
        functions: list[Code] = []
        while True:
            more = self.shared_union_functions() + self.validator_functions()
            if not more:
                return functions
            functions += more

    def union_validator_function(self, union: Union, ident: Code) -> Code:
        """accepts_<ident>: whether fastavro's validation accepts a value as the union."""
        fn = _Function(self, "check", self.function("accepts", ident))
        fn.local("object", "value")
        result: list[str] = []
        body = fn.collect(lambda: result.append(self.check_union(fn, union, "value")))
        return self.render("avro_union_validator.pyx.j2", fn,
                           {"name": comment(describe(union))}, body=body,
                           result=Code(result[0]))

    # -- writing ---------------------------------------------------------------

    def write_value(self, fn: _Function, avro: AvroType, value: str, lenient: bool = False) -> None:
        """Lines that write the Python value in local ``value`` as ``avro``."""
        avro = self.schema.deref(avro)
        if isinstance(avro, Record):
            fn.line(f"self.{self.function('write', self.idents[avro.name])}(w, {value}, depth + 1)")
        elif isinstance(avro, Array):
            self.write_array(fn, avro, value)
        elif isinstance(avro, Map):
            self.write_map(fn, avro, value)
        elif isinstance(avro, Union):
            shared = self.shared_union(avro)
            if shared is not None:
                fn.line(f"self.{self.function('write', shared)}(w, {value}, depth)")
            else:
                self.write_union(fn, avro, value)
        elif isinstance(avro, Enum):
            indexes = self.enum_constants(avro)[1]
            fn.line(f"write_enum_datum(w, {value}, <dict>{indexes})")
        elif isinstance(avro, Primitive) and avro.name == "null":
            fn.line(f"if {value} is not None:")
            fn.line('    raise_dump_error(u"expected None for an Avro null")')
        else:
            fn.line(self.write_call(avro, value, lenient))

    def write_call(self, avro: AvroType, value: str, lenient: bool) -> str:
        logical = avro.logical
        name = logical.name if logical is not None else None
        if isinstance(avro, Fixed):
            size = checked_int(avro.size, "a fixed size", 0, _MAX_SIZE)
            if name == "decimal":
                return (f"write_decimal_datum(w, {value}, {self.decimal_args(logical)}, {size})")
            if name == "uuid":
                return f"write_uuid_datum(w, {value}, True)"
            if name == "duration":
                return f"write_duration_datum(w, {value})"
            return f"write_fixed_datum(w, {value}, {size})"
        kind = avro.name
        if name in _TIMESTAMPS:
            local = "True" if name.startswith("local") else "False"
            return f"write_timestamp_datum(w, {value}, {_UNITS[name.rpartition('-')[2]]}, {local})"
        if name == "date":
            return f"write_date_datum(w, {value})"
        if name in ("time-millis", "time-micros"):
            return f"write_time_datum(w, {value}, {_UNITS[name.rpartition('-')[2]]})"
        if name == "decimal":
            return f"write_decimal_datum(w, {value}, {self.decimal_args(logical)}, 0)"
        if name == "big-decimal":
            return f"write_big_decimal_datum(w, {value})"
        if name == "uuid":
            return f"write_uuid_datum(w, {value}, False)"
        if kind in ("float", "double"):
            return f"write_{kind}_datum(w, {value}, {'True' if lenient else 'False'})"
        return f"write_{_WRITERS[kind]}_datum(w, {value})"

    @property
    def decimal_reader(self) -> str:
        return "read_decimal_exact" if self.exact_decimals else "read_decimal"

    def decimal_args(self, logical) -> str:
        scale = checked_int(logical.scale, "a decimal scale", 0, _MAX_SIZE)
        precision = checked_int(logical.precision, "a decimal precision", 1, _MAX_SIZE)
        return f"{scale}, {precision}"

    def write_array(self, fn: _Function, avro: Array, value: str) -> None:
        with fn.collection() as level:
            items = fn.local("list", f"items{level}")
            count = fn.local("Py_ssize_t", f"count{level}")
            item = fn.local("object", f"item{level}")
            fn.line(f"{items} = array_datum({value})")
            with blocks.write_items(fn, items, count, item, f"part{level}", f"index{level}",
                                    "the list changed size while it was being written"):
                self.write_value(fn, avro.items, item)

    def write_map(self, fn: _Function, avro: Map, value: str) -> None:
        with fn.collection() as level:
            entries = fn.local("dict", f"entries{level}")
            count = fn.local("Py_ssize_t", f"count{level}")
            position = fn.local("Py_ssize_t", f"position{level}")
            refs = (fn.local("PyObject*", f"key_ref{level}"), fn.local("PyObject*", f"item_ref{level}"))
            item = fn.local("object", f"item{level}")
            fn.line(f"{entries} = map_datum({value})")
            with blocks.write_entries(fn, entries, count, position, refs, f"key{level}", item,
                                      f"part{level}", f"index{level}", True,
                                      "the dict changed size while it was being written"):
                self.write_value(fn, avro.values, item)

    def write_union(self, fn: _Function, avro: Union, value: str) -> None:
        plan = _UnionPlan(avro, self.schema)
        with fn.union() as branch:
            chooser = self.union_chooser(avro)
            choose = f"{value} = choose_branch({chooser}, {value}, &{branch})"
            arms = []
            for python_type, test in _TYPE_TESTS.items():
                if python_type == "dict" and len(plan.dict_branches()) > 1:
                    arms.append((test, "dict"))
                    continue
                if python_type == "int":
                    by_size = plan.for_int()
                    if any(index is not None for index in by_size):
                        arms.append((test, by_size))
                    continue
                index = plan.static(python_type)
                if index is not None:
                    arms.append((test, index))
            keyword = "if"
            for test, index in arms:
                fn.line(f"{keyword} {test.format(value=value)}:")
                with fn.indent():
                    if isinstance(index, list):
                        self.int_arm(fn, avro, branch, index, choose, value)
                    elif index == "dict":
                        self.dict_arm(fn, avro, plan, branch, choose, value)
                    else:
                        fn.line(f"{branch} = {index}  {self.branch_comment(avro, index)}")
                keyword = "elif"
            if arms:
                fn.line("else:")
                with fn.indent():
                    # fastavro's validation decides (roastedavro._datum.UnionChooser)
                    fn.line(choose)
            else:
                fn.line(choose)
            fn.line(f"write_long(w, {branch})")
            keyword = "if"
            for index, branch_type in enumerate(avro.branches):
                if _is_primitive(branch_type, "null"):
                    continue
                fn.line(f"{keyword} {branch} == {index}:  {self.branch_comment(avro, index)}")
                with fn.indent():
                    self.write_value(fn, branch_type, value)
                keyword = "elif"

    def dict_arm(self, fn: _Function, avro: Union, plan: _UnionPlan, branch: str, choose: str,
                 value: str) -> None:
        """fastavro's choice for a dict among records and maps: each in order that
        its validation accepts the dict; a record sharing more field names with
        the dict than the ones before it, or a map outright (then no later one)."""
        most, fields = fn.local("int", "most"), fn.local("int", "fields")
        fn.line(f"{branch} = -1")
        fn.line(f"{most} = -1")

        def emit(indexes):
            if not indexes:
                return
            index, rest = indexes[0], indexes[1:]
            definition = plan.branches[index]
            accepted = self.check(fn, definition, value)
            # fastavro counts shared names for "record"s only: an "error" it
            # takes outright, as a map
            if isinstance(definition, Record) and definition.kind == "record":
                fn.line(f"if {accepted}:  {self.branch_comment(avro, index)}")
                with fn.indent():
                    # the record's field names the dict has
                    name = fn.local("object", "field_name")
                    fn.line(f"{fields} = 0")
                    fn.line(f"for {name} in {self.record_keys(definition)}.keys:")
                    fn.line(f"    if {name} in <dict>{value}:")
                    fn.line(f"        {fields} += 1")
                    fn.line(f"if {fields} > {most}:")
                    fn.line(f"    {most} = {fields}")
                    fn.line(f"    {branch} = {index}")
                emit(rest)
            else:
                fn.line(f"if {accepted}:  {self.branch_comment(avro, index)}")
                fn.line(f"    {branch} = {index}")
                if rest:
                    fn.line("else:")
                    with fn.indent():
                        emit(rest)

        emit(plan.dict_branches())
        fn.line(f"if {branch} < 0:")
        with fn.indent():
            fn.line(choose)  # none: fastavro's validation says why

    # -- fastavro's validation -------------------------------------------------

    def check(self, fn: _Function, avro: AvroType, value: str) -> str:
        """A bint expression: whether fastavro's validation accepts ``value`` as
        ``avro``. Lines it needs first are emitted before it."""
        avro = self.schema.deref(avro)
        logical = getattr(avro, "logical", None)
        name = logical.name if logical is not None else None
        if isinstance(avro, Record):
            validation = self.validation()
            if validation is not None:
                interpreter, bound = validation
                node = checked_int(interpreter.record_node(avro.name), "a record's node", 0, 2**62)
                return f"(<DatumCodec>{bound}).accepts_record_at({node}, {value}, depth)"
            self.validated.setdefault(avro.name, avro)
            return f"self.{self.function('accepts', self.idents[avro.name])}({value}, depth + 1)"
        if isinstance(avro, Enum):
            return f"valid_symbol({value}, <dict>{self.enum_constants(avro)[1]})"
        if isinstance(avro, Fixed):
            if name is None:
                return f"valid_fixed({value}, {checked_int(avro.size, 'a fixed size', 0, _MAX_SIZE)})"
            return f"{self.validator(avro)}({value})"
        if isinstance(avro, Array):
            return self.check_array(fn, avro, value)
        if isinstance(avro, Map):
            return self.check_map(fn, avro, value)
        if isinstance(avro, Union):
            shared = self.shared_union(avro)
            if shared is not None:
                return f"self.{self.function('accepts', shared)}({value}, depth)"
            return self.check_union(fn, avro, value)
        kind = avro.name
        if name in _TIMESTAMPS:
            return f"(isinstance({value}, DATETIME) or valid_integer({value}, 64))"
        if name == "date":
            return f"valid_date({value})"
        if name in ("time-millis", "time-micros"):
            bits = 32 if name == "time-millis" else 64
            return f"(isinstance({value}, TIME) or valid_integer({value}, {bits}))"
        if name == "uuid":
            return f"(isinstance({value}, str) or isinstance({value}, UUID))"
        if name is not None:  # decimals: converted first, which may fail as fastavro's does
            return f"{self.validator(avro)}({value})"
        return {
            "null": "{value} is None", "boolean": "type({value}) is bool",
            "int": "valid_integer({value}, 32)", "long": "valid_integer({value}, 64)",
            "float": "valid_real({value})", "double": "valid_real({value})",
            "bytes": "valid_bytes({value})", "string": "isinstance({value}, str)",
        }[kind].format(value=value)

    def validation(self) -> tuple[Any, Code] | None:
        """Tier 0's interpreter of the schema and its binding, where it
        validates records (tier0_validates); None where accepts_ functions do."""
        if self.tier0_validates and self._validation is None:
            from roastedavro._tier0 import Interpreter

            try:
                interpreter = Interpreter(self.schema)
            except Exception:  # a schema tier 0 refuses: validated here, as always
                self.tier0_validates = False
                return None
            self._validation = (interpreter, self.module.bind_interpreter(
                interpreter, f"{self.prefix or 'const'}_validation"))
        return self._validation

    def validator(self, avro: AvroType) -> Code:
        """fastavro's validation of ``avro`` in Python, bound once per distinct type."""
        known = self._validators.get(avro)
        if known is None:
            known = self._validators[avro] = self.bind(Validator(avro, self.schema), "validator")
        return known

    def check_array(self, fn: _Function, avro: Array, value: str) -> str:
        with fn.check_level() as level:
            ok, item = fn.local("bint", f"ok{level}"), fn.local("object", f"checked{level}")
            fn.line(f"if type({value}) is list or type({value}) is tuple:")
            with fn.indent():
                fn.line(f"{ok} = True")
                fn.line(f"for {item} in {value}:")
                with fn.indent():
                    accepted = self.check(fn, avro.items, item)
                    fn.line(f"if not {accepted}:")
                    fn.line(f"    {ok} = False")
                    fn.line("    break")
            fn.line("else:  # other sequences, as fastavro says")
            fn.line(f"    {ok} = {self.validator(avro)}({value})")
        return ok

    def check_map(self, fn: _Function, avro: Map, value: str) -> str:
        with fn.check_level() as level:
            ok, item = fn.local("bint", f"ok{level}"), fn.local("object", f"checked{level}")
            key = fn.local("object", f"checked_key{level}")
            fn.line(f"if type({value}) is dict:")
            with fn.indent():
                fn.line(f"{ok} = True")
                fn.line(f"for {key}, {item} in (<dict>{value}).items():")
                with fn.indent():
                    fn.line(f"if not isinstance({key}, str):")
                    fn.line(f"    {ok} = False")
                    fn.line("    break")
                    accepted = self.check(fn, avro.values, item)
                    fn.line(f"if not {accepted}:")
                    fn.line(f"    {ok} = False")
                    fn.line("    break")
            fn.line("else:  # other mappings, as fastavro says")
            fn.line(f"    {ok} = {self.validator(avro)}({value})")
        return ok

    def check_union(self, fn: _Function, avro: Union, value: str) -> str:
        with fn.check_level() as level:
            ok = fn.local("bint", f"ok{level}")
            fn.line(f"if isinstance({value}, tuple):  # a branch named in tuple notation")
            fn.line(f"    {ok} = {self.validator(avro)}({value})")
            fn.line("else:")
            with fn.indent():
                # the first branch that accepts it; later ones only if none has
                # (one level of indentation however many branches there are)
                fn.line(f"{ok} = False")
                for branch in avro.branches:
                    fn.line(f"if not {ok}:")
                    with fn.indent():
                        accepted = self.check(fn, branch, value)
                        fn.line(f"{ok} = {accepted}")
        return ok

    def validator_function(self, record: Record) -> Code:
        ident = self.idents[record.name]
        fn = _Function(self, "check", self.function("accepts", ident))
        fn.local("object", "value")
        fields = []
        for field in record.fields:
            heading = Code(f"# {comment(field.name + ': ' + describe(field.type))}")
            # the default's JSON value as fastavro validates it, or None
            default = self.literal_or_bound(field.default if field.has_default else None)

            def body(field=field):
                accepted = self.check(fn, field.type, "value")
                fn.line(f"if not {accepted}:")
                fn.line("    return False")

            fields.append({"comment": heading, "key": literal(field.name), "default": default,
                           "body": fn.collect(body)})
        return self.render("avro_validator.pyx.j2", fn,
                           {"name": comment(record.name)},
                           fields=fields, full_name=literal(record.name),
                           fallback=self.validator(record))

    def literal_or_bound(self, value: Any) -> Code:
        try:
            return literal(value)
        except TypeError:
            return self.bind(value, "default")

    def int_arm(self, fn: _Function, avro: Union, branch: str, by_size: list, choose: str,
                value: str) -> None:
        """An int's branch by its size: what fits an Avro int, a long, neither."""
        def assign(index):
            if index is None:
                fn.line(choose)
            else:
                fn.line(f"{branch} = {index}  {self.branch_comment(avro, index)}")

        fits_int, fits_long, larger = by_size
        if fits_int == fits_long == larger:
            assign(fits_int)
            return
        size = fn.local("int", "size")
        fn.line(f"{size} = int_size({value})  # 0: fits an int, 1: a long, 2: neither")
        if fits_long == larger:
            conditions = [(f"{size} == 0", fits_int), (None, fits_long)]
        elif fits_int == fits_long:
            conditions = [(f"{size} <= 1", fits_int), (None, larger)]
        else:
            conditions = [(f"{size} == 0", fits_int), (f"{size} == 1", fits_long), (None, larger)]
        for number, (condition, index) in enumerate(conditions):
            fn.line(f"{'if' if number == 0 else 'elif'} {condition}:" if condition else "else:")
            with fn.indent():
                assign(index)

    def branch_comment(self, avro: Union, index: int) -> str:
        return f"# {comment(describe(avro.branches[index]))}"

    # -- reading ---------------------------------------------------------------

    def read_value(self, fn: _Function, avro: AvroType, target: str) -> None:
        """Lines that read one value of ``avro`` into ``target`` (an assignable expression)."""
        avro = self.schema.deref(avro)
        if isinstance(avro, Array):
            with fn.collection() as level:
                items = fn.local("list", f"items{level}")
                with blocks.read_items(fn, items, *self.block_locals(fn, level),
                                       self.sizes.of(avro.items)):
                    expression = self.read_expression(avro.items)
                    if expression is not None:
                        fn.line(f"put_item({items}, {expression})")
                    else:
                        item = fn.local("object", f"item{level}")
                        self.read_value(fn, avro.items, item)
                        fn.line(f"put_item({items}, {item})")
                fn.line(f"{target} = {items}")
        elif isinstance(avro, Map):
            with fn.collection() as level:
                entries = fn.local("dict", f"entries{level}")
                key = fn.local("str", f"key{level}")
                with blocks.read_entries(fn, entries, *self.block_locals(fn, level), key,
                                         self.sizes.of(avro.values)):
                    self.read_value(fn, avro.values, f"{entries}[{key}]")
                fn.line(f"{target} = {entries}")
        elif isinstance(avro, Union) and self.shared_union(avro) is None:
            self.dispatch(fn, avro, lambda branch: self.read_value(fn, branch, target))
        else:
            fn.line(f"{target} = {self.read_expression(avro)}")

    def read_expression(self, avro: AvroType) -> str | None:
        """The expression that reads one value of a type that needs no statements."""
        avro = self.schema.deref(avro)
        if isinstance(avro, Record):
            self.called["read"].setdefault(avro.name, avro)
            return f"self.{self.function('read', self.idents[avro.name])}(r, depth + 1)"
        if isinstance(avro, Union):
            shared = self.shared_union(avro)
            if shared is None:
                return None
            return f"self.{self.function('read', shared)}(r, depth)"
        if isinstance(avro, Enum):
            symbols = self.enum_constants(avro)[0]
            return f"read_enum(r, <tuple>{symbols})"
        if isinstance(avro, Fixed):
            size = checked_int(avro.size, "a fixed size", 0, _MAX_SIZE)
            name = avro.logical.name if avro.logical is not None else None
            if name == "decimal":
                return f"{self.decimal_reader}(r, {self.decimal_args(avro.logical)}, {size})"
            if name == "uuid":
                return "read_uuid(r, True)"
            if name == "duration":
                return "read_duration(r)"
            return f"read_fixed(r, {size})"
        if not isinstance(avro, Primitive):
            return None
        name = avro.logical.name if avro.logical is not None else None
        if name in ("timestamp-millis", "timestamp-micros", "local-timestamp-millis",
                    "local-timestamp-micros"):
            unit = "1000" if name.endswith("millis") else "1"
            return f"read_timestamp(r, {unit}, {'False' if name.startswith('local') else 'True'})"
        if name == "date":
            return "read_date(r)"
        if name in ("time-millis", "time-micros"):
            return f"read_time(r, {'1000' if name == 'time-millis' else '1'})"
        if name == "decimal":
            return f"{self.decimal_reader}(r, {self.decimal_args(avro.logical)}, 0)"
        if name == "big-decimal":
            return "read_big_decimal(r)"
        if name == "uuid":
            return "read_uuid(r, False)"
        # timestamp-nanos and local-timestamp-nanos: ints, as fastavro reads them
        return _READERS[avro.name]

    @staticmethod
    def block_locals(fn: _Function, level: int) -> tuple[str, str]:
        """The C locals of the block loop at nesting ``level``: the block's
        count and the position in it (roastedavro.blocks)."""
        return fn.local("long long", f"count{level}"), fn.local("long long", f"position{level}")

    def dispatch(self, fn: _Function, avro: Union, emit) -> None:
        """Read a union's branch index, then ``emit(branch type)`` in its arm."""
        count = len(avro.branches)
        if count == 2:
            fn.line(f"if read_index(r, 2) == 0:  {self.branch_comment(avro, 0)}")
            with fn.indent():
                emit(avro.branches[0])
            fn.line(f"else:  {self.branch_comment(avro, 1)}")
            with fn.indent():
                emit(avro.branches[1])
            return
        with fn.union() as branch:
            fn.line(f"{branch} = read_index(r, {checked_int(count, 'branches', 0, _MAX_SIZE)})")
            for index, branch_type in enumerate(avro.branches):
                keyword = "if" if index == 0 else "elif" if index < count - 1 else "else"
                test = f" {branch} == {index}" if keyword != "else" else ""
                fn.line(f"{keyword}{test}:  {self.branch_comment(avro, index)}")
                with fn.indent():
                    emit(branch_type)

    # -- skipping --------------------------------------------------------------

    def skip_value(self, fn: _Function, avro: AvroType) -> None:
        avro = self.schema.deref(avro)
        if isinstance(avro, Record):
            self.called["skip"].setdefault(avro.name, avro)
            fn.line(f"self.{self.function('skip', self.idents[avro.name])}(r, depth + 1)")
        elif isinstance(avro, (Array, Map)):
            inner = avro.items if isinstance(avro, Array) else avro.values
            with fn.collection() as level:
                min_size = self.sizes.of(inner) + (1 if isinstance(avro, Map) else 0)
                with blocks.read_blocks(fn, *self.block_locals(fn, level), min_size):
                    if isinstance(avro, Map):
                        fn.line("skip_length(r)")
                    self.skip_value(fn, inner)
        elif isinstance(avro, Union):
            shared = self.shared_union(avro)
            if shared is not None and "skip" in self.kinds:
                fn.line(f"self.{self.function('skip', shared)}(r, depth)")
            else:
                self.dispatch(fn, avro, lambda branch: self.skip_value(fn, branch))
        elif isinstance(avro, Enum):
            fn.line(f"read_index(r, {checked_int(len(avro.symbols), 'symbols', 0, _MAX_SIZE)})")
        elif isinstance(avro, Fixed):
            fn.line(f"skip_raw(r, {checked_int(avro.size, 'a fixed size', 0, _MAX_SIZE)})")
        else:
            kind = avro.name
            if kind in ("bytes", "string"):
                fn.line("skip_length(r)")
            elif kind in ("float", "double"):
                fn.line(f"skip_raw(r, {4 if kind == 'float' else 8})")
            elif kind == "long":
                fn.line("skip_long(r)")
            elif kind != "null":
                fn.line(f"{_READERS[kind]}")
            else:
                fn.line("pass  # null: no bytes")

    # -- functions -------------------------------------------------------------

    def record_functions(self, record: Record, kinds: tuple = ()) -> list[Code]:
        """The record's functions of ``kinds`` (the generator's by default)."""
        kinds = kinds or self.kinds
        functions = []
        if "write" in kinds:
            functions.append(self.writer_function(record))
        if "read" in kinds:
            functions.append(self.reader_function(record))
        if "skip" in kinds:
            functions.append(self.skipper_function(record))
        return functions

    def _context(self, record: Record) -> dict:
        return {"name": comment(record.name), "record": True}

    @staticmethod
    def _heading(field) -> Code:
        return Code(f"# {comment(field.name + ': ' + describe(field.type))}")

    def writer_function(self, record: Record) -> Code:
        writer = _Function(self, "write", self.function("write", self.idents[record.name]))
        writer.local("object", "value")
        written = [{"comment": self._heading(field), "number": number, "key": literal(field.name),
                    "seen": self.module.key_slot(),
                    "body": writer.collect(lambda: self.write_field(writer, record, field))}
                   for number, field in enumerate(record.fields)]
        return self.render("avro_writer.pyx.j2", writer, self._context(record), fields=written,
                           names=tuple(field.name for field in record.fields),
                           path_levels=list(range(writer.path_levels))[::-1])

    def reader_function(self, record: Record) -> Code:
        ident = self.idents[record.name]
        reader = _Function(self, "read", self.function("read", ident))
        read = [{"comment": self._heading(field), "body": reader.collect(
                    lambda: self.read_field(reader, field.type, index, field.name))}
                for index, field in enumerate(record.fields)]
        return self.render("avro_reader.pyx.j2", reader, self._context(record), fields=read,
                           keys=self.record_keys(record))

    def read_field(self, fn: _Function, avro: AvroType, index: int, name: str) -> None:
        """Lines that read a record's index-th field into its entry of ``record``."""
        loaded = fn.local("object", "loaded_value")
        self.read_value(fn, avro, loaded)
        fn.line(f"set_field(record, values, {index}, {literal(name)}, {loaded})")

    def record_keys(self, record: Record) -> Code:
        """The bound RecordKeys of a record's field names, which its readers copy."""
        known = self._record_keys.get(record.name)
        if known is None:
            keys = RecordKeys(field.name for field in record.fields)
            known = self._record_keys[record.name] = self.bind(
                keys, f"{self.idents[record.name]}_keys")
        return known

    def skipper_function(self, record: Record) -> Code:
        skipper = _Function(self, "skip", self.function("skip", self.idents[record.name]))
        skipped = [{"comment": self._heading(field),
                    "body": skipper.collect(lambda: self.skip_value(skipper, field.type))}
                   for field in record.fields]
        return self.render("avro_skipper.pyx.j2", skipper, self._context(record), fields=skipped)

    def called_functions(self) -> list[Code]:
        """The readers and skippers generated code has called so far, and
        those they call in turn, each once (for modules that generate only
        what they use)."""
        functions: list[Code] = []
        done: set = set()
        while True:
            functions += self.shared_union_functions()
            pending = [(kind, record) for kind, records in self.called.items()
                       for record in list(records.values()) if (kind, record.name) not in done]
            if not pending:
                return functions
            for kind, record in pending:
                done.add((kind, record.name))
                functions.append(self.reader_function(record) if kind == "read"
                                 else self.skipper_function(record))

    def write_field(self, fn: _Function, record: Record, field) -> None:
        dereffed = self.schema.deref(field.type)
        if field.has_default:
            where = f"{record.name}.{field.name}"
            encoded = encode_default(field.type, field.default, self.schema, where)
            fn.line("if value is MISSING:")
            fn.line(f"    write_encoded(w, {literal(encoded)})  # the default")
            fn.line("else:")
            with fn.indent():
                self.write_value(fn, field.type, "value", lenient=_lenient(dereffed))
            return
        fn.line("if value is MISSING:")
        if _nullable(dereffed):
            # fastavro's rule: a union with null, missing, is null
            fn.line("    value = None")
        else:
            fn.line('    raise_dump_error(u"no value and no default for the field")')
        self.write_value(fn, field.type, "value", lenient=_lenient(dereffed))

    def root_functions(self, root: AvroType) -> list[Code]:
        """write_root, read_root and skip_root; a fragment's <prefix>_write and
        <prefix>_read (for a record too: its value is one level deeper)."""
        prefix = self.prefix or None
        names = {kind: Code(f"{prefix}_{kind}" if prefix else f"{kind}_root")
                 for kind in ("write", "read")}
        return self.value_functions(root, names)

    def value_functions(self, avro: AvroType, names: dict[str, Code],
                        in_place: bool = False) -> list[Code]:
        """The functions (named by kind in ``names``) that write, read and skip
        one value of ``avro``; ``in_place``: its own code, even where
        write_value would call a shared function for it."""
        heading = Code(f"# {comment(describe(avro))}")
        context = {"name": comment(describe(avro)), "record": False,
                   "shared": in_place}
        functions = []
        if "write" in names:
            writer = _Function(self, "write", names["write"])
            writer.local("object", "value")

            def write():
                if in_place:
                    self.write_union(writer, avro, "value")
                else:
                    self.write_value(writer, avro, "value")

            written = [{"comment": heading, "body": writer.collect(write)}]
            functions.append(self.render("avro_writer.pyx.j2", writer, context, fields=written,
                                         path_levels=list(range(writer.path_levels))[::-1]))
        if "read" in names:
            reader = _Function(self, "read", names["read"])

            def read():
                if in_place:
                    self.dispatch(reader, avro,
                                  lambda branch: self.read_value(reader, branch, "result"))
                else:
                    self.read_value(reader, avro, "result")

            read_lines = [{"comment": heading, "body": reader.collect(read)}]
            functions.append(self.render("avro_reader.pyx.j2", reader, context, fields=read_lines))
        if "skip" in names:
            skipper = _Function(self, "skip", names["skip"])

            def skip():
                if in_place:
                    self.dispatch(skipper, avro, lambda branch: self.skip_value(skipper, branch))
                else:
                    self.skip_value(skipper, avro)

            skipped = [{"comment": heading, "body": skipper.collect(skip)}]
            functions.append(self.render("avro_skipper.pyx.j2", skipper, context, fields=skipped))
        return functions

    def render(self, template: str, fn: _Function, context: dict, **more) -> Code:
        if template in _SPLIT_TEMPLATES:
            # a wide record's writer or reader: functions of at most
            # FIELDS_PER_FUNCTION fields (codegen.function_parts)
            fields = more["fields"]
            more["parts"] = (function_parts(fields, fn.name, more.pop("names", ()))
                             if context.get("record") else [{"function": None, "fields": fields}])
            self.add_function_names(part["function"] for part in more["parts"]
                                    if part["function"] is not None)
        text = environment.get_template(template).render(
            function=fn.name, declarations=fn.declarations(), **context, **more)
        self.checks.append((fn, text))
        return indented(text)

    def add_function_names(self, names) -> None:
        """Names of functions generated code may call, made as it is generated."""
        self.function_names.update(names)

    def verify(self) -> None:
        for fn, text in self.checks:
            fn.check(text)

    def validator_functions(self) -> list[Code]:
        """The validators the union dispatch uses so far, and those they use
        in turn, each once."""
        functions = []
        while len(self._validators_done) < len(self.validated):
            for name, record in list(self.validated.items()):
                if name not in self._validators_done:
                    self._validators_done.add(name)
                    functions.append(self.validator_function(record))
        return functions

    def generate(self) -> GeneratedModule:
        schema = self.schema
        root = schema.root
        functions: list[Code] = []
        for record in self.records:
            functions += self.record_functions(record)
        functions += self.pending_functions()
        if isinstance(root, Record):
            ident = self.idents[root.name]
            roots = {f"{kind}_root": Code(f"{kind}_{ident}") for kind in ("write", "read")}
        else:
            functions += self.root_functions(root)
            # a union of several records at the root validates them too
            functions += self.pending_functions()
            roots = {f"{kind}_root": Code(f"{kind}_root") for kind in ("write", "read")}
        roots["skip_root"] = None
        roots["skip_type"] = self.module.bind(generic_skip(schema), "skip_type")
        fingerprint = schema.fingerprint()
        source = environment.get_template("avro_module.pyx.j2").render(
            root_name=comment(root.name if isinstance(root, Record) else describe(root)),
            fingerprint=Code(f"0x{fingerprint:016x}"),
            writer_name=None,
            min_size=checked_int(self.sizes.of(root), "the smallest value size", 0, 2**62),
            version=comment(__version__),
            records=[comment(f"{record.name}: " + ", ".join(f.name for f in record.fields))
                     for record in self.records],
            functions=functions,
            **roots,
            bindings=self.module.declared(),
            interpreters=self.module.interpreters,
            key_slots=checked_int(max(self.module.key_slots, 1), "the key slots", 1, 2**31),
        )
        return GeneratedModule(source, self.module.bindings, self.verify)


_UNITS = {"millis": "UNIT_MILLIS", "micros": "UNIT_MICROS", "nanos": "UNIT_NANOS"}
_WRITERS = {"boolean": "boolean", "int": "int", "long": "long", "bytes": "bytes",
            "string": "string"}
_READERS = {"null": "None", "boolean": "read_boolean(r)", "int": "read_int(r)",
            "long": "read_long(r)", "float": "read_float(r)", "double": "read_double(r)",
            "bytes": "read_bytes(r)", "string": "read_str(r)"}


def _union_key(union: Union) -> tuple:
    """What makes two unions the same: their branches, a named type by its
    full name (defined in place the first time, referred to after)."""
    return tuple(("named", branch.name) if isinstance(branch, (NamedRef, NamedType)) else branch
                 for branch in union.branches)


def _lenient(avro: AvroType) -> bool:
    """A float or double field of a record: fastavro calls float() on its value."""
    return isinstance(avro, Primitive) and avro.name in ("float", "double") and avro.logical is None


def _nullable(avro: AvroType) -> bool:
    """fastavro writes null for a missing field of these (``"null" in field_type``)."""
    if isinstance(avro, Union):
        return any(_is_primitive(branch, "null") for branch in avro.branches)
    return _is_primitive(avro, "null")


def _records_in_order(schema: Schema) -> list[Record]:
    """The schema's records, each once, in the order they are defined."""
    return [avro for avro in schema.walk() if isinstance(avro, Record)]


#: the names of the codec's own methods and the runtime's functions
#: (write_datum, read_root, read_long, ...), which no record's function takes
_SKELETON_NAMES = frozenset(_WORDS.findall("\n".join(
    path.read_text() for path in [_TEMPLATES.parent / "_runtime.pxd",
                                  *_TEMPLATES.glob("avro_*.pyx.j2")])))
_FUNCTION_KINDS = ("write", "read", "skip", "accepts")


def _function_idents(records: list[Record]) -> dict[str, Code]:
    """Full name -> the identifier in its functions' names (write_<ident>):
    the full name as an identifier, numbered when two full names make the
    same one ("a.b_c" and "a_b.c") or its functions' names would be the
    skeleton's (a record named "datum": write_datum); "root" is the
    non-record root's."""
    idents: dict[str, Code] = {}
    taken = {"root"}
    for record in records:
        base = ident = identifier(record.name.replace(".", "_"))
        number = 2
        while ident in taken or any(f"{kind}_{ident}" in _SKELETON_NAMES
                                    for kind in _FUNCTION_KINDS):
            ident, number = Code(f"{base}_{number}"), number + 1
        taken.add(ident)
        idents[record.name] = ident
    return idents


def generic_skip(schema: Schema):
    """What an AvroCodec's skip() walks: the runtime's table of the schema's
    nodes (GenericType), which checks a value's bytes as reading it would
    (lengths, indexes, UTF-8, decimal digits, nesting, the item budget)
    without code generated for it; None where fastavro's parser, which
    builds the table, refuses the schema (skip() then says so)."""
    from roastedavro._runtime import GenericType
    from roastedavro.avro.types import to_json_value

    try:
        return GenericType(to_json_value(schema))
    except Exception:
        return None


def generate_avro_module(schema: Schema) -> GeneratedModule:
    """The Cython source of a schema's AvroCodec, the objects it binds, its check."""
    return _Generator(schema).generate()


def fragment_function_names(schema: Schema, prefix: str) -> set[str]:
    """The names of the functions generate_fragment makes for ``schema``."""
    return set(_Generator(schema, ModuleEmitter(), prefix).function_names)


def generate_fragment(schema: Schema, prefix: str, module: ModuleEmitter) -> list[Code]:
    """Functions that write and read values of ``schema``'s type as AvroCodec
    does, for embedding in another generated module (the marshmallow codec's,
    for fields with a declared Avro type):

    ``cdef int <prefix>_write(self, Writer* w, object datum, int depth) except -1``
    ``cdef object <prefix>_read(self, Reader* r, int depth)``

    and the writers, readers and validators of the records in the type, all
    named ``<prefix>_...``. ``depth`` is the caller's record depth: records
    inside count from it, against the host's ``self.max_depth``. Constants are
    bound on ``module`` (attributes of the codec's Bound, named ``<prefix>_...``) and each
    function is added to ``module.checks`` (codetext.check_function).

    The host module provides what avro_module.pyx.j2 declares: the runtime's
    datum primitives and record-key helpers (new_record, record_values,
    set_field, RecordKeys, PyObject), MISSING, DumpError and the exact types
    DATETIME ... DURATION.
    """
    if not prefix or identifier(prefix) != prefix:
        raise CompileError(f"internal error: fragment prefix {prefix!r} is not an identifier")
    generator = _Generator(schema, module, prefix, exact_decimals=False)
    functions: list[Code] = []
    for record in generator.records:
        functions += generator.record_functions(record)
    functions += generator.root_functions(schema.root)
    functions += generator.pending_functions()
    module.checks += generator.checks
    return functions
