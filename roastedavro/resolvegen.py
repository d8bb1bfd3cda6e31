"""Cython source of a resolving reader: a writer's bytes read as a reader's values.

The plan comes from roastedavro.avro.resolve. Each pair of records it
reaches gets one function, ``read_<reader>_from_<writer>``, that reads the
writer's fields in the writer's order into a copy of the reader's field
template: fields the reader has are read (and promoted, or their enum
symbols mapped) straight into place, fields it lacks are skipped by the
writer schema's inline skip code (nothing is built for them), and the
reader's fields the writer lacks get their defaults. Reading a value of a
type both schemas share is the plain reader's code for the reader's type,
so resolved data costs what plain data costs.

Schema text reaches the source through codetext's channels only, as in
avrogen: names as checked identifiers, messages and symbols as bound
constants, sizes as checked ints.
"""

from __future__ import annotations

from roastedavro import __version__, blocks
from roastedavro._defaults import encode_default
from roastedavro._runtime import RecordKeys
from roastedavro.avro.resolve import (
    Container,
    EnumMap,
    Plan,
    Promote,
    Read,
    ReaderUnion,
    RecordPlan,
    RecordRef,
    Resolution,
    Unreadable,
    WriterUnion,
    resolve,
)
from roastedavro.avro.types import (
    Array,
    Enum,
    Field,
    Fixed,
    Map,
    Primitive,
    Record,
    Schema,
    Union,
    describe,
)
from roastedavro.avrogen import _ALLOWED, _MAX_SIZE, _Function, _Generator
from roastedavro.codetext import Code, check_function, checked_int, comment, identifier, literal
from roastedavro.emitter import GeneratedModule, ModuleEmitter, environment, indented
from roastedavro.errors import CompileError

# the expression that reads a promoted number (writer type, reader type)
_PROMOTIONS = {
    ("int", "float"): "<double><float>read_long(r)",
    ("long", "float"): "<double><float>read_long(r)",
    ("int", "double"): "<double>read_long(r)",
    ("long", "double"): "<double>read_long(r)",
    ("float", "double"): "read_float(r)",
}


class _ResolvingGenerator:
    def __init__(self, resolution: Resolution):
        self.resolution = resolution
        self.module = ModuleEmitter()
        # the writer's side skips what the reader leaves out; the reader's
        # side reads values of shared types and defaults
        self.writer = _Generator(resolution.writer, self.module, "writer", kinds=("skip",))
        self.reader = _Generator(resolution.reader, self.module, "reader", kinds=("read",))
        self.pairs = resolution.reachable_records()
        self.idents = _pair_idents(self.pairs, self.writer.idents, self.reader.idents)
        #: the names of this module's own functions (the generators' are theirs)
        self.own_names = {f"read_{ident}" for ident in self.idents.values()} | {"read_root"}
        self.checks: list[tuple[_Function, str]] = []
        self._defaults = 0
        self.default_functions: list[Code] = []

    # -- values ----------------------------------------------------------------

    def read_plan(self, fn: _Function, plan: Plan, target: str) -> None:
        """Lines that read one writer's value by ``plan`` into ``target``."""
        expression = self.expression(plan)
        if expression is not None:
            fn.line(f"{target} = {expression}")
        elif isinstance(plan, Read):
            self.reader.read_value(fn, plan.reader, target)
        elif isinstance(plan, EnumMap):
            self.read_enum(fn, plan, target)
        elif isinstance(plan, Container):
            self.read_container(fn, plan, target)
        elif isinstance(plan, WriterUnion):
            self.read_writer_union(fn, plan, target)
        elif isinstance(plan, ReaderUnion):
            self.read_plan(fn, plan.plan, target)
        elif isinstance(plan, (RecordRef, Unreadable)):  # what the reader cannot read
            self.unreadable(fn, plan if isinstance(plan, Unreadable) else self.resolution.record(plan).error)
            # not reached (the call raises), but Cython refuses a target no
            # path assigns (a pair reached only through a writer's union
            # branch, whose field the reader cannot read)
            fn.line(f"{target} = None")
        else:  # pragma: no cover - every kind of plan is handled above
            raise AssertionError(f"no code for {plan!r}")

    def expression(self, plan: Plan) -> str | None:
        """The expression that reads a value by ``plan``, where one does."""
        if isinstance(plan, Read):
            return self.reader.read_expression(plan.reader)
        if isinstance(plan, Promote):
            return _PROMOTIONS[plan.writer.name, plan.reader.name]
        if isinstance(plan, EnumMap) and None not in plan.symbols:
            count = checked_int(len(plan.writer.symbols), "symbols", 0, _MAX_SIZE)
            return f"(<tuple>{self.bind(plan.symbols, 'symbols')})[read_index(r, {count})]"
        if isinstance(plan, RecordRef) and self.resolution.record(plan).error is None:
            return f"self.read_{self.idents[plan.key]}(r, depth + 1)"
        if isinstance(plan, ReaderUnion):
            return self.expression(plan.plan)
        return None

    def read_enum(self, fn: _Function, plan: EnumMap, target: str) -> None:
        """A writer's symbol some of which the reader lacks, without default."""
        count = checked_int(len(plan.writer.symbols), "symbols", 0, _MAX_SIZE)
        symbols = self.bind(plan.symbols, "symbols")
        messages = self.bind(plan.unknown_messages(), "unknown_symbols")
        start = fn.local("Py_ssize_t", "start")
        index = fn.local("int", "index")
        symbol = fn.local("object", "symbol")
        fn.line(f"{start} = r.pos")
        fn.line(f"{index} = read_index(r, {count})")
        fn.line(f"{symbol} = (<tuple>{symbols})[{index}]")
        fn.line(f"if {symbol} is None:")
        fn.line(f"    raise_unreadable(r, <str>(<tuple>{messages})[{index}], {start})")
        fn.line(f"{target} = {symbol}")

    def read_container(self, fn: _Function, plan: Container, target: str) -> None:
        is_map = isinstance(plan.writer, Map)
        element = plan.writer.values if is_map else plan.writer.items
        with fn.collection() as level:
            counters = self.reader.block_locals(fn, level)
            if is_map:
                entries = fn.local("dict", f"entries{level}")
                key = fn.local("str", f"key{level}")
                with blocks.read_entries(fn, entries, *counters, key, self.writer.sizes.of(element)):
                    self.read_plan(fn, plan.element, f"{entries}[{key}]")
                fn.line(f"{target} = {entries}")
                return
            items = fn.local("list", f"items{level}")
            with blocks.read_items(fn, items, *counters, self.writer.sizes.of(element)):
                expression = self.expression(plan.element)
                if expression is not None:
                    fn.line(f"put_item({items}, {expression})")
                else:
                    item = fn.local("object", f"item{level}")
                    self.read_plan(fn, plan.element, item)
                    fn.line(f"put_item({items}, {item})")
            fn.line(f"{target} = {items}")

    def read_writer_union(self, fn: _Function, plan: WriterUnion, target: str) -> None:
        writer = plan.writer
        count = len(writer.branches)
        with fn.union() as branch:
            fn.line(f"{branch} = read_index(r, {checked_int(count, 'branches', 1, _MAX_SIZE)})")
            for index, branch_plan in enumerate(plan.branches):
                keyword = "if" if index == 0 else "elif" if index < count - 1 else "else"
                test = f" {branch} == {index}" if keyword != "else" else ""
                fn.line(f"{keyword}{test}:  # {comment(describe(writer.branches[index]))}")
                with fn.indent():
                    self.read_plan(fn, branch_plan, target)

    def unreadable(self, fn: _Function, plan: Unreadable) -> None:
        where = ", ".join(
            part
            for part in (
                f"writer's {plan.writer_path}" if plan.writer_path else "",
                f"reader's {plan.reader_path}" if plan.reader_path else "",
            )
            if part
        )
        message = f"{plan.reason}" + (f" ({where})" if where else "")
        fn.line(
            f"raise_unreadable(r, <str>{self.bind(message, 'unreadable')}, r.pos)  # {comment(plan.reason)}"
        )

    # -- defaults --------------------------------------------------------------

    def default(self, field: Field, record: Record) -> str:
        """The expression of a reader field's default: a constant where the
        value cannot be changed by its user, a fresh value otherwise."""
        avro = self.resolution.reader.deref(field.type)
        value = field.default
        constant = _constant_default(avro, value)
        if constant is not _NOT_CONSTANT:
            return self.literal_or_bound(constant)
        if isinstance(avro, Array) and value == []:
            return "[]"
        if isinstance(avro, Map) and value == {}:
            return "{}"
        # anything else is read from its encoding, as Java reads a default
        encoded = encode_default(field.type, value, self.resolution.reader, f"{record.name}.{field.name}")
        self._defaults += 1
        name = Code(f"default{self._defaults}_{identifier(field.name)}")
        self.own_names.add(name)
        fn = _Function(self, "read", name)
        body = fn.collect(lambda: self.reader.read_value(fn, field.type, "result"))
        text = environment.get_template("avro_default.pyx.j2").render(
            function=name,
            declarations=fn.declarations(),
            body=body,
            name=comment(f"{record.name}.{field.name}: {describe(field.type)}"),
            encoded=self.bind(encoded, "default"),
        )
        self.checks.append((fn, text))
        self.default_functions.append(indented(text))
        return f"self.{name}(depth)"

    def literal_or_bound(self, value) -> str:
        try:
            return literal(value)
        except TypeError:
            return self.bind(value, "default")

    def bind(self, obj, name: str) -> Code:
        return self.module.bind(obj, f"resolve_{identifier(name)}")

    # -- functions -------------------------------------------------------------

    def pair_function(self, pair: RecordPlan) -> Code:
        key = (pair.writer.name, pair.reader.name)
        fn = _Function(self, "read", Code(f"read_{self.idents[key]}"))
        fields = []
        # where each value goes in the record: the reader's order, or fastavro's
        indexes = {name: index for index, name in enumerate(pair.order)}
        loaded = fn.local("object", "loaded_value")
        for step in pair.steps:
            name = step.writer.name
            if step.reader is None:
                heading = f"{name}: {describe(step.writer.type)}, skipped (the reader has no such field)"
                body = fn.collect(lambda: self.writer.skip_value(fn, step.writer.type))
            else:
                shown = name if step.reader.name == name else f"{name} as {step.reader.name}"
                heading = f"{shown}: {describe(step.writer.type)} as {describe(step.reader.type)}"
                store = (
                    f"set_field(record, values, {indexes[step.reader.name]}, "
                    f"{literal(step.reader.name)}, {loaded})"
                )
                body = fn.collect(lambda: (self.read_plan(fn, step.plan, loaded), fn.line(store)))
            fields.append({"comment": Code(f"# {comment(heading)}"), "body": body})
        for field in pair.defaults:
            heading = f"{field.name}: {describe(field.type)}, the writer has none: its default"
            expression = self.default(field, pair.reader)
            fields.append(
                {
                    "comment": Code(f"# {comment(heading)}"),
                    "body": [
                        Code(
                            f"set_field(record, values, {indexes[field.name]}, "
                            f"{literal(field.name)}, {expression})"
                        )
                    ],
                }
            )
        context = {
            "name": comment(f"{pair.reader.name} (written as {pair.writer.name})"),
            "record": True,
            "fragment": False,
        }
        if pair.order == tuple(field.name for field in pair.reader.fields):
            keys = self.reader.record_keys(pair.reader)
        else:
            keys = self.bind(RecordKeys(pair.order), f"{self.idents[key]}_keys")
        return self.render("avro_reader.pyx.j2", fn, context, fields=fields, keys=keys)

    def root_function(self, root: Plan) -> Code:
        fn = _Function(self, "read", Code("read_root"))
        body = fn.collect(lambda: self.read_plan(fn, root, "result"))
        writer, reader = self.resolution.writer.root, self.resolution.reader.root
        heading = Code(f"# {comment(describe(writer) + ' as ' + describe(reader))}")
        return self.render(
            "avro_reader.pyx.j2",
            fn,
            {"name": comment(describe(reader)), "record": False, "fragment": False},
            fields=[{"comment": heading, "body": body}],
        )

    # a function rendered and kept for verify(), as the plain generator does
    render = _Generator.render

    def add_function_names(self, names) -> None:
        self.own_names.update(names)

    @property
    def function_names(self) -> set:
        """Every function name generated code may call: this module's and the
        two generators' (which add their shared unions' as they go)."""
        return self.own_names | self.writer.function_names | self.reader.function_names

    def verify(self) -> None:
        for fn, text in self.checks:
            fn.check(text)
        for fn, text in self.writer.checks + self.reader.checks:
            check_function(text, _ALLOWED | set(fn.c_locals) | self.function_names)

    def generate(self) -> GeneratedModule:
        resolution = self.resolution
        functions = [self.pair_function(pair) for pair in self.pairs]
        root = resolution.root
        if isinstance(root, RecordRef) and resolution.record(root).error is None:
            read_root = Code(f"read_{self.idents[root.key]}")
        else:
            functions.append(self.root_function(root))
            read_root = Code("read_root")
        functions += self.default_functions
        # the plain readers and skippers the code above calls
        functions += self.reader.called_functions() + self.writer.called_functions()
        writer, reader = resolution.writer, resolution.reader
        source = environment.get_template("avro_module.pyx.j2").render(
            root_name=comment(_name(reader)),
            fingerprint=Code(f"0x{reader.fingerprint():016x}"),
            writer_name=comment(_name(writer)),
            writer_fingerprint=Code(f"0x{writer.fingerprint():016x}"),
            min_size=checked_int(self.writer.sizes.of(writer.root), "the smallest value size", 0, 2**62),
            version=comment(__version__),
            records=[
                comment(f"{pair.reader.name} from the writer's {pair.writer.name}") for pair in self.pairs
            ],
            functions=functions,
            write_root=None,
            read_root=read_root,
            skip_root=None,
            skip_type=None,
            bindings=self.module.declared(),
            interpreters=self.module.interpreters,
            key_slots=checked_int(max(self.module.key_slots, 1), "the key slots", 1, 2**31),
        )
        return GeneratedModule(source, self.module.bindings, self.verify)


class _NotConstant:
    pass


_NOT_CONSTANT = _NotConstant()


def _constant_default(avro, value):
    """The Python value of a default that can be shared by every record read
    (immutable, no logical type to convert), or _NOT_CONSTANT."""
    if isinstance(avro, Primitive) and avro.logical is None:
        kind = avro.name
        if kind == "null":
            return None
        if kind == "boolean":
            return bool(value)
        if kind in ("int", "long"):
            return int(value)
        if kind in ("float", "double"):
            return float(value)
        if kind == "string":
            return str(value)
        return value.encode("latin-1")  # bytes: code points 0-255
    if isinstance(avro, Enum):
        return str(value)
    if isinstance(avro, Fixed) and avro.logical is None:
        return value.encode("latin-1")
    if (
        isinstance(avro, Union)
        and value is None
        and any(isinstance(branch, Primitive) and branch.name == "null" for branch in avro.branches)
    ):
        return None
    return _NOT_CONSTANT


def _name(schema: Schema) -> str:
    root = schema.deref(schema.root)
    return root.name if isinstance(root, Record) else describe(root)


def _pair_idents(pairs: list[RecordPlan], writer_idents: dict, reader_idents: dict) -> dict:
    """(writer name, reader name) -> the identifier in the pair's function
    name: ``<reader>_from_<writer>``, numbered where two pairs make one."""
    idents: dict = {}
    taken: set = {"root"}
    for pair in pairs:
        base = ident = Code(f"{reader_idents[pair.reader.name]}_from_{writer_idents[pair.writer.name]}")
        number = 2
        while ident in taken:
            ident, number = Code(f"{base}_{number}"), number + 1
        taken.add(ident)
        idents[(pair.writer.name, pair.reader.name)] = ident
    return idents


def generate_resolving_module(writer: Schema, reader: Schema) -> GeneratedModule:
    """The Cython source of a codec that reads ``writer``'s data as
    ``reader``'s values. Raises SchemaResolutionError for a pair whose
    every datum the reader cannot read."""
    try:
        resolution = resolve(writer, reader)
    except RecursionError:
        raise CompileError(
            "the schemas nest too deeply to resolve within Python's recursion "
            "limit; no codec is generated for the pair"
        ) from None
    resolution.check()
    return _ResolvingGenerator(resolution).generate()
