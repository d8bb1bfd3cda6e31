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
from pathlib import Path
from typing import Any

from roastedavro import __version__
from roastedavro._runtime import RecordKeys
from roastedavro._unionrule import UnionChooser
from roastedavro.avro.types import (
    Array,
    AvroType,
    Enum,
    Map,
    NamedRef,
    NamedType,
    Record,
    Schema,
    Union,
    describe,
)
from roastedavro.avrogen_check import CheckCode

# what tier 0 and Avro JSON share with the generator (they must agree with it)
from roastedavro.avrogen_function import _ALLOWED, _WORDS, MAX_NESTING, _Function  # noqa: F401
from roastedavro.avrogen_read import ReadCode
from roastedavro.avrogen_write import WriteCode
from roastedavro.avroplan import (  # noqa: F401
    _PRIMITIVE_SIZES,
    _TIMESTAMPS,
    _TYPE_TESTS,
    _is_primitive,
    _lenient,
    _MinSizes,
    _nullable,
    _UnionPlan,
)
from roastedavro.codetext import (
    MAX_SIZE,
    Code,
    checked_int,
    comment,
    identifier,
    literal,
)
from roastedavro.emitter import (
    GeneratedModule,
    ModuleEmitter,
    environment,
    function_parts,
    indented,
)
from roastedavro.errors import CompileError

_TEMPLATES = Path(__file__).resolve().parent / "templates"
#: the templates whose record functions are split into parts
_SPLIT_TEMPLATES = ("avro_writer.pyx.j2", "avro_reader.pyx.j2")
_MAX_SIZE = MAX_SIZE  # the name resolvegen imports
#: a union of at least this many branches is generated once per module
#: (Generator.shared_union), as is one of two records or more
_SHARED_UNION_BRANCHES = 12
#: fastavro's branch rule validates a dict against each record of a union,
#: field by field, nested records too. In a schema of more record fields than
#: this, tier 0's interpreter validates records (one call into its node
#: table) instead of an accepts_ function per record: in Apache Avro's
#: large_schema.avsc those were a third of the module's code and of its build
_COMPILED_VALIDATION_FIELDS = 1000


# -- the module ---------------------------------------------------------------------


class _Generator(WriteCode, CheckCode, ReadCode):
    """The functions of one schema: an AvroCodec's module, or (with a
    ``prefix``) a fragment for another module, whose function and constant
    names all start with the prefix and which has no skippers."""

    def __init__(
        self,
        schema: Schema,
        module: ModuleEmitter | None = None,
        prefix: str = "",
        kinds: tuple = (),
        exact_decimals: bool = True,
    ):
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
        self.function_names = {
            self.function(kind, ident) for ident in self.idents.values() for kind in self.kinds + ("accepts",)
        }
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
            _union_key(avro) for avro in schema.walk() if isinstance(avro, Union)
        )
        self.checks: list[tuple[_Function, str]] = []
        #: records validated by tier 0 (see _COMPILED_VALIDATION_FIELDS): its
        #: interpreter and the binding that holds it, made at the first use
        self.tier0_validates = (
            sum(len(record.fields) for record in self.records) > _COMPILED_VALIDATION_FIELDS
        )
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
            known = self._enums[enum.name] = (
                self.bind(symbols, f"{ident}_symbols"),
                self.bind(indexes, f"{ident}_indexes"),
            )
        return known

    def union_chooser(self, union: Union) -> Code:
        """The union's chooser (fastavro's rule), bound once per distinct union."""
        key = _union_key(union)
        known = self._choosers.get(key)
        if known is None:
            self._unions += 1
            known = self._choosers[key] = self.bind(UnionChooser(union, self.schema), f"union{self._unions}")
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
        while ident in taken or any(f"{kind}_{ident}" in _SKELETON_NAMES for kind in _FUNCTION_KINDS):
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
                    union, {kind: self.function(kind, ident) for kind in self.kinds}, in_place=True
                )
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
        written = [
            {
                "comment": self._heading(field),
                "number": number,
                "key": literal(field.name),
                "seen": self.module.key_slot(),
                "body": writer.collect(lambda: self.write_field(writer, record, field)),
            }
            for number, field in enumerate(record.fields)
        ]
        return self.render(
            "avro_writer.pyx.j2",
            writer,
            self._context(record),
            fields=written,
            names=tuple(field.name for field in record.fields),
            path_levels=list(range(writer.path_levels))[::-1],
        )

    def reader_function(self, record: Record) -> Code:
        ident = self.idents[record.name]
        reader = _Function(self, "read", self.function("read", ident))
        read = [
            {
                "comment": self._heading(field),
                "body": reader.collect(lambda: self.read_field(reader, field.type, index, field.name)),
            }
            for index, field in enumerate(record.fields)
        ]
        return self.render(
            "avro_reader.pyx.j2", reader, self._context(record), fields=read, keys=self.record_keys(record)
        )

    def record_keys(self, record: Record) -> Code:
        """The bound RecordKeys of a record's field names, which its readers copy."""
        known = self._record_keys.get(record.name)
        if known is None:
            keys = RecordKeys(field.name for field in record.fields)
            known = self._record_keys[record.name] = self.bind(keys, f"{self.idents[record.name]}_keys")
        return known

    def skipper_function(self, record: Record) -> Code:
        skipper = _Function(self, "skip", self.function("skip", self.idents[record.name]))
        skipped = [
            {
                "comment": self._heading(field),
                "body": skipper.collect(lambda: self.skip_value(skipper, field.type)),
            }
            for field in record.fields
        ]
        return self.render("avro_skipper.pyx.j2", skipper, self._context(record), fields=skipped)

    def called_functions(self) -> list[Code]:
        """The readers and skippers generated code has called so far, and
        those they call in turn, each once (for modules that generate only
        what they use)."""
        functions: list[Code] = []
        done: set = set()
        while True:
            functions += self.shared_union_functions()
            pending = [
                (kind, record)
                for kind, records in self.called.items()
                for record in list(records.values())
                if (kind, record.name) not in done
            ]
            if not pending:
                return functions
            for kind, record in pending:
                done.add((kind, record.name))
                functions.append(
                    self.reader_function(record) if kind == "read" else self.skipper_function(record)
                )

    def root_functions(self, root: AvroType) -> list[Code]:
        """write_root, read_root and skip_root; a fragment's <prefix>_write and
        <prefix>_read (for a record too: its value is one level deeper)."""
        prefix = self.prefix or None
        names = {kind: Code(f"{prefix}_{kind}" if prefix else f"{kind}_root") for kind in ("write", "read")}
        return self.value_functions(root, names)

    def value_functions(self, avro: AvroType, names: dict[str, Code], in_place: bool = False) -> list[Code]:
        """The functions (named by kind in ``names``) that write, read and skip
        one value of ``avro``; ``in_place``: its own code, even where
        write_value would call a shared function for it."""
        heading = Code(f"# {comment(describe(avro))}")
        context = {"name": comment(describe(avro)), "record": False, "shared": in_place}
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
            functions.append(
                self.render(
                    "avro_writer.pyx.j2",
                    writer,
                    context,
                    fields=written,
                    path_levels=list(range(writer.path_levels))[::-1],
                )
            )
        if "read" in names:
            reader = _Function(self, "read", names["read"])

            def read():
                if in_place:
                    self.dispatch(reader, avro, lambda branch: self.read_value(reader, branch, "result"))
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
            more["parts"] = (
                function_parts(fields, fn.name, more.pop("names", ()))
                if context.get("record")
                else [{"function": None, "fields": fields}]
            )
            self.add_function_names(
                part["function"] for part in more["parts"] if part["function"] is not None
            )
        text = environment.get_template(template).render(
            function=fn.name, declarations=fn.declarations(), **context, **more
        )
        self.checks.append((fn, text))
        return indented(text)

    def add_function_names(self, names) -> None:
        """Names of functions generated code may call, made as it is generated."""
        self.function_names.update(names)

    def verify(self) -> None:
        for fn, text in self.checks:
            fn.check(text)

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
            records=[
                comment(f"{record.name}: " + ", ".join(f.name for f in record.fields))
                for record in self.records
            ],
            functions=functions,
            **roots,
            bindings=self.module.declared(),
            interpreters=self.module.interpreters,
            key_slots=checked_int(max(self.module.key_slots, 1), "the key slots", 1, 2**31),
        )
        return GeneratedModule(source, self.module.bindings, self.verify)


def _union_key(union: Union) -> tuple:
    """What makes two unions the same: their branches, a named type by its
    full name (defined in place the first time, referred to after)."""
    return tuple(
        ("named", branch.name) if isinstance(branch, (NamedRef, NamedType)) else branch
        for branch in union.branches
    )


def _records_in_order(schema: Schema) -> list[Record]:
    """The schema's records, each once, in the order they are defined."""
    return [avro for avro in schema.walk() if isinstance(avro, Record)]


#: the names of the codec's own methods and the runtime's functions
#: (write_datum, read_root, read_long, ...), which no record's function takes
_SKELETON_NAMES = frozenset(
    _WORDS.findall(
        "\n".join(
            path.read_text()
            for path in [_TEMPLATES.parent / "_runtime.pxd", *_TEMPLATES.glob("avro_*.pyx.j2")]
        )
    )
)
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
        while ident in taken or any(f"{kind}_{ident}" in _SKELETON_NAMES for kind in _FUNCTION_KINDS):
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
