"""Turns a visited schema (a tree of record plans) into Cython source.

The skeleton of the module and of each record function comes from the
Jinja2 templates in ``templates/``; the body of each field comes from its
encoder. Indentation of emitted fragments is handled here, in code, so the
templates stay free of whitespace tricks.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from marshmallow import missing

from roastedavro import __version__
from roastedavro._runtime import RecordKeys
from roastedavro.avrogen import fragment_function_names, generate_fragment
from roastedavro.codetext import (
    RESERVED,
    Code,
    check_function,
    checked_int,
    comment,
    identifier,
    literal,
)
from roastedavro.errors import CompileError
from roastedavro.emitter import (  # noqa: F401  (FIELDS_PER_FUNCTION, GeneratedModule: public here too)
    FIELDS_PER_FUNCTION,
    FunctionLines,
    GeneratedModule,
    ModuleEmitter,
    function_parts,
    indented,
    render,
)
from roastedavro.plans import NO_DEFAULT, RecordPlan, ValuePlan
from roastedavro.validators import failure_condition

#: the runtime's promotions of a writer's number (roastedavro.evolved)
PROMOTIONS = (
    "PROMOTE_INT_LONG",
    "PROMOTE_INT_FLOAT",
    "PROMOTE_INT_DOUBLE",
    "PROMOTE_LONG_FLOAT",
    "PROMOTE_LONG_DOUBLE",
    "PROMOTE_FLOAT_DOUBLE",
)

# the per-level names FunctionEmitter.collection() hands out
COLLECTION_NAMES = re.compile(r"(part|index|key)[0-9]+\Z")


class RecordModuleEmitter(ModuleEmitter):
    """The module of a marshmallow schema: also the functions of the Avro
    types its fields declare, written by the Avro generator."""

    def __init__(self):
        super().__init__()
        #: functions generated for declared Avro types (see fragment)
        self.fragments: list[Code] = []
        self._fragment_prefixes: dict[str, Code] = {}

    def fragment(self, schema, hint: str) -> Code:
        """The prefix of the functions that write and read values of a parsed
        Avro schema's type with AvroCodec's generated code and conventions:
        ``self.<prefix>_write(w, value, depth)`` and
        ``self.<prefix>_read(r, depth)`` (roastedavro.avrogen.generate_fragment).
        Generated once per distinct type (its full JSON) in a module.
        """
        key = schema.to_json()
        prefix = self._fragment_prefixes.get(key)
        if prefix is not None:
            return prefix
        # never write_<ident>/read_<ident> (the records'), a binding or a
        # name the skeleton uses
        base = prefix = Code(f"avro_{identifier(hint)}".rstrip("_"))
        number = 2
        while True:
            names = fragment_function_names(schema, prefix)
            if not names & (self._functions | set(self.bindings) | RESERVED):
                break
            prefix, number = Code(f"{base}{number}"), number + 1
        self._functions |= names
        self._fragment_prefixes[key] = prefix
        self.fragments += generate_fragment(schema, prefix, self)
        return prefix


class CollectionLevel:
    """Locals shared by the collections at one nesting level of a function."""

    def __init__(self, fn: FunctionEmitter, number: int):
        self.fn = fn
        self.number = number
        if fn.tracks_paths:
            # the record's error handler reads these, so writers always have them
            self.part = self.c_local("int", "part", "PATH_NONE")
            self.index = self.c_local("Py_ssize_t", "index", "0")
        self.key = self.c_local("object", "key", "None")

    def c_local(self, ctype: str, base: str, initial: str | None = None) -> str:
        name = f"{base}{self.number}"
        if name not in self.fn.c_locals:
            self.fn.c_locals[name] = (ctype, initial)
            self.fn._names.add(name)
        return name

    def local(self, base: str) -> str:
        """A Python object local. Declared as ``object``: left undeclared,
        Cython would infer a C type from its assignments (a double from an
        array of doubles and a long from a map of longs at the same level
        make it a double, turning the map's longs into floats)."""
        return self.c_local("object", base)


class FunctionEmitter(FunctionLines):
    """The lines and local declarations of one generated function of a
    marshmallow schema's record."""

    def __init__(self, module: ModuleEmitter, record: RecordPlan, tracks_paths: bool):
        super().__init__()
        self.module = module
        # writers record where in a collection a value is, for error paths
        self.tracks_paths = tracks_paths
        self.record = record
        self._collection_level = 0
        self.path_levels = 0
        self._names: set[str] = set()
        self._hints: list[str] = []
        #: reading a value that load throws away (dump_only): marshmallow
        #: neither validates it nor runs hooks on it
        self.discarding = False
        #: in a reader of another writer's layout (written_reader): the
        #: methods reading the nested records whose layout that writer
        #: changed (record ident -> method), and the ones the code called
        self.record_readers: dict[str, Code] = {}
        self.readers_used: set[str] = set()
        self.loose_counts = False

    # -- names --------------------------------------------------------------

    @property
    def hint(self) -> str:
        """The name of the value being emitted, used to name its locals."""
        return self._hints[-1]

    @contextlib.contextmanager
    def naming(self, hint: str):
        self._hints.append(hint)
        try:
            yield
        finally:
            self._hints.pop()

    def name(self, hint: str) -> Code:
        """A fresh local name based on ``hint``."""
        base = identifier(hint)
        name, n = base, 2
        if name in RESERVED or COLLECTION_NAMES.match(name):
            name = base = base + "_"
        while name in self._names or name in RESERVED:
            name, n = f"{base}{n}", n + 1
        self._names.add(name)
        return Code(name)

    def c_local(self, ctype: str, hint: str, initial: str | None = None) -> Code:
        """A C local; the same hint gives the same (shared) variable."""
        name = identifier(hint)
        if name not in self.c_locals:
            self.c_locals[name] = (ctype, initial)
            self._names.add(name)
        return name

    @contextlib.contextmanager
    def collection(self):
        """The names a collection uses at its nesting level: ``level.item`` ...

        Collections at one nesting level share their locals (``count0``,
        ``item0``, ...): a record function has a handful of variables
        however many fields it writes, which keeps the C compiler from
        tracking every field's variable at every error exit. ``part``,
        ``index`` and ``key`` also tell the record's error handler where
        inside a collection a failing value was (see PATH_* in the runtime).
        """
        level = CollectionLevel(self, self._collection_level)
        if self._collection_level == self.path_levels:
            self.path_levels += 1
        self._collection_level += 1
        try:
            yield level
        finally:
            self._collection_level -= 1

    # -- the three channels for declaration text (see codetext) -------------

    def bind(self, obj: Any, what: str) -> Code:
        """``self.bound.<name>``: any Python object, held by the codec as a constant."""
        return self.module.bind(obj, f"{self.record.ident}_{identifier(self.hint)}_{what}")

    def literal(self, value: Any) -> Code:
        """The ``repr`` of a str, int, float, bool, bytes or None (or a tuple
        of them); other objects are bound."""
        try:
            return literal(value)
        except TypeError:
            return self.bind(value, "constant")

    def int(self, value: Any, what: str, low: int = 0, high: int = 2**31 - 1) -> Code:
        """An int from a declaration (a size, a precision): checked to be one."""
        return checked_int(value, f"{self.hint}: {what}", low, high)

    def comment(self, text: Any) -> Code:
        """``# text``, with the text reduced to a safe alphabet."""
        return Code(f"# {comment(text)}")

    def message(self, message: Any) -> Code:
        """An error message for raise_dump_error: a literal, or bound when it
        is not a string (marshmallow allows dicts and lists)."""
        if type(message) is str:
            return literal(message)
        return self.bind(message, "message")

    def flag_invalid(self, target: str) -> None:
        """After a deserialize helper: a value marshmallow's load refuses."""
        self.line(f"if {target} is INVALID:")
        self.line("    r.invalid = 1")

    # -- values -------------------------------------------------------------

    def write_value(self, plan: ValuePlan, value: str) -> None:
        if plan.nullable:
            null_index, value_index = (0, 1) if plan.null_first else (1, 0)
            self.line(f"if {value} is None:")
            self.line(f"    write_byte(w, {null_index * 2})  # union branch null")
            self.line("else:")
            with self.indent():
                self.line(
                    f"write_byte(w, {value_index * 2})  {self.comment('union branch ' + plan.encoder.describe())}"
                )
                plan.encoder.emit_write(self, value)
        else:
            if not getattr(plan.encoder, "accepts_none", False):
                self.line(f"if {value} is None:")
                self.line(f"    raise_dump_error({self.message(plan.null_message)})")
            plan.encoder.emit_write(self, value)

    def read_value(self, plan: ValuePlan, target: str) -> None:
        if plan.nullable:
            null_index = 0 if plan.null_first else 1
            self.line(f"if read_index(r, 2) == {null_index}:")
            self.line(f"    {target} = None")
            self.line("else:")
            with self.indent():
                self._read_checked(plan, target)
        else:
            self._read_checked(plan, target)

    def _read_checked(self, plan: ValuePlan, target: str) -> None:
        if plan.validated_by is None:
            plan.encoder.emit_read(self, target)
            return
        if target.isidentifier():
            plan.encoder.emit_read(self, target)
            self.check_value(plan.validated_by, target)
            return
        # checked in a local, then stored: one dict store, no lookups
        loaded = self.c_local("object", "loaded")
        plan.encoder.emit_read(self, loaded)
        self.check_value(plan.validated_by, loaded)
        self.line(f"{target} = {loaded}")

    def check_value(self, field, target: str) -> None:
        """The field's validators on a loaded value (None is never validated).

        Skipped once the record is known to be invalid: the value may then be
        a placeholder, and marshmallow's load reports the errors anyway.
        """
        if field is None or self.discarding:
            return
        condition = failure_condition(self, field, target)
        if condition is None:
            return
        self.line(f"if self.validate and not r.invalid and ({condition}):")
        self.line("    r.invalid = 1")

    # -- records --------------------------------------------------------------

    def record_reader(self, record: RecordPlan) -> Code:
        """The method that reads one ``record`` value here: ``read_<ident>``,
        or in a one-pass reader of another writer's data, the reader of that
        writer's layout of the record where it differs (written_reader)."""
        name = self.record_readers.get(record.ident)
        if name is None:
            return Code(f"read_{record.ident}")
        self.readers_used.add(record.ident)
        return name

    def block_min_size(self, value) -> int:
        """The fewest bytes an item of an array or map of ``value`` takes,
        for checking a block's count against the bytes left: the schema's
        own (``value.min_size``), or 0 in a reader of another writer's
        layout of nested records where a writer's record may be smaller
        than the schema's (WrittenLayout.loose_counts)."""
        return 0 if self.record_readers and self.loose_counts else value.min_size

    def check(self, text: str, functions=()) -> None:
        """Refuse the rendered functions if they use a name nobody provided
        (``functions``: the names they define besides write_/read_<ident>)."""
        own = {f"write_{self.record.ident}", f"read_{self.record.ident}", "value", *functions}
        check_function(text, self._names | set(self.c_locals) | own)


def record_functions(record: RecordPlan, module: ModuleEmitter) -> dict:
    """The writer and reader of one record, rendered from their templates and
    checked (codetext.check_function) before they go into the module."""
    writer = FunctionEmitter(module, record, tracks_paths=True)
    reader = FunctionEmitter(module, record, tracks_paths=False)
    write_fields, read_fields = [], []
    # the keys a load gives, in order: every field but the dump_only ones
    loaded = [plan for plan in record.fields if not plan.field.dump_only]
    keys = module.bind(RecordKeys(plan.load_key for plan in loaded), f"{record.ident}_keys")
    indexes = {id(plan): index for index, plan in enumerate(loaded)}
    for number, plan in enumerate(record.fields):
        with writer.naming(plan.name), reader.naming(plan.name):
            heading = writer.comment(f"{plan.avro_name}: {plan.value.describe()}")
            value = Code("value")
            body = _write_field_body(writer, plan, value)
            write_fields.append(
                {
                    "comment": heading,
                    "number": number,
                    "value": value,
                    "body": body,
                    "fetch": _fetch(writer, plan),
                }
            )
            read_fields.append(
                {
                    "comment": heading,
                    "body": _read_field_body(reader, plan, indexes.get(id(plan))),
                    "skip": plan.field.dump_only,
                }
            )
    context = {
        "ident": Code(record.ident),
        "name": comment(record.full_name),
        "keys": keys,
    }
    write_parts, read_parts = _parts(record, write_fields, "write"), _parts(record, read_fields, "read")
    for part in read_parts:
        part["skips"] = any(field["skip"] for field in part["fields"])
    written = render(
        "record_writer.pyx.j2",
        **context,
        parts=write_parts,
        declarations=writer.declarations(),
        path_levels=list(range(writer.path_levels))[::-1],
    )
    read = render("record_reader.pyx.j2", **context, parts=read_parts, declarations=reader.declarations())
    parts = {part["function"] for part in write_parts + read_parts}
    module.checks += [(writer, written, parts), (reader, read, parts)]
    return {"writer": indented(written), "reader": indented(read)}


def _parts(record: RecordPlan, fields: list[dict], kind: str) -> list[dict]:
    whole = Code(f"{kind}_{record.ident}")
    parts = function_parts(fields, whole, tuple(plan.name for plan in record.fields))
    for part in parts:
        if part["function"] is None:
            part.update(function=whole, arguments=Code("int depth"))
        else:
            part["arguments"] = Code("int source, Py_ssize_t* cursor, int depth")
    return parts


def _write_field_body(fn: FunctionEmitter, plan, value: str) -> list[Code]:
    def emit():
        fn.line(f"if {value} is MISSING:")
        with fn.indent():
            if plan.dump_default is not missing:
                default = fn.bind(plan.dump_default, "dump_default")
                call = "()" if callable(plan.dump_default) else ""
                fn.line(f"{value} = {default}{call}")
            elif plan.default_value is not NO_DEFAULT:
                # the Python value the Avro default was converted from
                default = fn.bind(plan.default_value, "avro_default")
                fn.line(f"{value} = {default}")
            elif plan.value.takes_null:
                fn.line(f"{value} = None")
            elif plan.field.required:
                fn.line(f"raise_dump_error({fn.message(plan.field.error_messages['required'])})")
            else:
                # marshmallow's dump would leave it out; an Avro record cannot
                fn.line(f"raise_dump_error({fn.message(NO_VALUE)})")
        fn.write_value(plan.value, value)

    return fn.collect(emit)


#: a missing value of a field that is not required, has no default and is
#: not nullable: marshmallow's dump would leave it out, Avro cannot
NO_VALUE = (
    "No value to write: every field of an Avro record is written. Give the field a "
    "value, a dump_default or load_default, or allow_none=True."
)


def _fetch(fn: FunctionEmitter, plan) -> Code:
    """Where dump finds a field's value."""
    if plan.field.load_only:
        return Code("MISSING  # load_only: marshmallow's dump leaves it out")
    own = plan.value.encoder.fetch(fn, plan.dump_key)
    if own is not None:
        return Code(own)
    # marshmallow reads dotted keys as paths into nested objects
    if "." in plan.dump_key:
        return Code(f"field_value(obj, SOURCE_OTHER, {literal(plan.dump_key)}, MISSING)")
    return Code(f"next_field(obj, source, cursor, {literal(plan.dump_key)}, {fn.module.key_slot()})")


def _read_field_body(fn: FunctionEmitter, plan, index: int) -> list[Code]:
    if not plan.field.dump_only:

        def emit():
            # read into a local, then into the index-th entry of the record
            loaded = fn.c_local("object", "loaded_value")
            fn.read_value(plan.value, loaded)
            fn.line(f"set_field(record, values, {index}, {literal(plan.load_key)}, {loaded})")

        return fn.collect(emit)
    fn.discarding = True
    try:
        return fn.collect(lambda: fn.read_value(plan.value, "skipped"))
    finally:
        fn.discarding = False


def written_reader(
    record: RecordPlan,
    module: ModuleEmitter,
    steps: tuple,
    name: Code,
    readers: dict[str, Code],
    loose_counts: bool = False,
    mover: Any = None,
) -> Code:
    """A reader of ``record`` from bytes another writer's schema laid out
    (roastedavro.evolved.WrittenLayout): its steps, in the writer's order,
    read a field as ``record``'s own reader does (the writer's type has
    the same bytes, or holds records the writer laid out otherwise, read
    by ``readers``: record ident -> their method), skip a field the reader
    does not have, or read a field the writer lacks from its default's
    bytes. One pass, no rearranging, but for the values ``mover`` (the
    pair's Rearranger) converts into this schema's bytes first (a step's
    ``move``: an array of renumbered enums, a union whose branches
    changed)."""
    fn = FunctionEmitter(module, record, tracks_paths=False)
    fn.loose_counts = loose_counts
    loaded = [plan for plan in record.fields if not plan.field.dump_only]
    indexes = {id(plan): index for index, plan in enumerate(loaded)}
    keys = module.bind(RecordKeys(plan.load_key for plan in loaded), f"{record.ident}_written_keys")
    fields = []
    for step in steps:
        if step.skip is not None:
            skipper = module.bind_interpreter(step.skip, "writer_types")
            node = checked_int(step.skip_node, "a node of the writer's schema", 0, 2**62)
            fields.append(
                {
                    "comment": fn.comment(f"{step.writer_name}: not read (this schema has no such field)"),
                    "body": [Code(f"{skipper}.skip_at(r, {node}, depth + 1)")],
                    "skip": False,
                }
            )
            continue
        plan = step.field
        # a default's bytes are in this schema's layout, its nested records
        # too, and so are a moved value's
        fn.record_readers = {} if step.default is not None or step.move >= 0 else readers
        fn.readers_used = set()
        with fn.naming(plan.name):
            heading = fn.comment(f"{plan.avro_name}: {plan.value.describe()}")
            body = _read_field_body(fn, plan, indexes.get(id(plan)))
        if step.default is None and not step.nested <= fn.readers_used:
            # an encoder that reads records by its own calls would read the
            # writer's layout as this schema's: no one-pass reader then
            raise CompileError(
                f"{record.full_name}.{plan.avro_name}: its encoder does not read nested records "
                "through fn.record_reader, so data of another writer's layout of "
                f"{', '.join(sorted(step.nested - fn.readers_used))} cannot be read in one pass"
            )
        if step.promote:
            # the writer's number read and promoted, then read by the field's
            # own code from its encoding in this schema's type
            kind = {name: Code(name) for name in PROMOTIONS}[step.promote]
            written = fn.c_local("Reader*", "written", "r")
            promoted = fn.c_local("Promoted", "promoted")
            source = step.promote.split("_")[1].lower()
            heading = fn.comment(
                f"{plan.avro_name}: {plan.value.describe()}, promoted from the {source} written"
            )
            if step.null_index < 0:
                promote = Code(f"read_promoted(r, &{promoted}, {kind})")
            else:
                null_index = checked_int(step.null_index, "the index of null", 0, 1)
                promote = Code(f"read_promoted_nullable(r, &{promoted}, {null_index}, {kind})")
            body = _read_through(written, promote, f"{promoted}.reader", body)
        elif step.remap:
            # the writer's symbol index read and renumbered as this schema's,
            # then read by the field's own code, as a promoted number is
            renumbered = module.bind(step.remap, f"{plan.name}_symbol_indexes")
            messages = module.bind(step.remap_messages, f"{plan.name}_unknown_symbols")
            written = fn.c_local("Reader*", "written", "r")
            promoted = fn.c_local("Promoted", "promoted")
            heading = fn.comment(
                f"{plan.avro_name}: {plan.value.describe()}, its symbols numbered as the writer numbers them"
            )
            if step.null_index < 0:
                remap = Code(f"read_remapped(r, &{promoted}, <tuple>{renumbered}, <tuple>{messages})")
            else:
                null_index = checked_int(step.null_index, "the index of null", 0, 1)
                remap = Code(
                    f"read_remapped_nullable(r, &{promoted}, {null_index}, "
                    f"<tuple>{renumbered}, <tuple>{messages})"
                )
            body = _read_through(written, remap, f"{promoted}.reader", body)
        elif step.move >= 0:
            # moved into this schema's bytes by the pair's Rearranger (errors
            # at their offsets in the writer's bytes), then read from them
            moving = module.bind(mover, "pair_mover")
            move = checked_int(step.move, "a move of the pair's Rearranger", 0, 2**62)
            written = fn.c_local("Reader*", "written", "r")
            moved_reader = fn.c_local("Reader", "moved_reader")
            # the moved bytes: in this room on the stack, or in `moved` where
            # they outgrow it (move_written opens moved_reader on them, with
            # the item budget from before the move: items are counted once)
            moved_room = fn.c_local("Writer", "moved_room")
            moved = fn.c_local("object", "moved")
            heading = fn.comment(
                f"{plan.avro_name}: {plan.value.describe()}, converted from the bytes written"
            )
            body = _read_through(
                written,
                Code(f"{moved} = move_written(r, {moving}, {move}, depth, &{moved_room}, &{moved_reader})"),
                str(moved_reader),
                body,
            )
        elif step.default is not None:
            # read from the default's bytes, as if the writer had written them
            encoded = module.bind(step.default, f"{plan.name}_default_bytes")
            written = fn.c_local("Reader*", "written", "r")
            default_reader = fn.c_local("Reader", "default_reader")
            view = fn.c_local("Py_buffer", "default_view")
            heading = fn.comment(f"{plan.avro_name}: not written, read from its default")
            opening = Code(f"open_reader(&{default_reader}, {encoded}, &{view}, {written}.allowance)")
            body = _read_through(written, opening, str(default_reader), body)
        fields.append({"comment": heading, "body": body, "skip": plan.field.dump_only})
    part = {
        "fields": fields,
        "skips": any(field["skip"] for field in fields),
        "function": name,
        "first": 0,
        "last": len(fields),
    }
    text = render(
        "record_reader.pyx.j2",
        ident=Code(name[len("read_") :]),
        name=comment(record.full_name),
        keys=keys,
        parts=[part],
        declarations=fn.declarations(),
    )
    module.checks.append((fn, text, {name}))
    return indented(text)


def _read_through(written: Code, opening: Code, reader: str, body: list) -> list:
    """The field's own reading code ``body`` run on another reader (the
    promoted or renumbered value, a default's bytes, a moved value) that
    ``opening`` fills, then the writer's reader ``written`` back, invalid if
    that one became invalid."""
    return [
        opening,
        Code(f"r = &{reader}"),
        *body,
        Code(f"{written}.invalid = {written}.invalid or {reader}.invalid"),
        Code(f"r = {written}"),
    ]


def _written_names(layouts: list, records: list[RecordPlan]) -> dict[str, Code]:
    """Each written reader's method name (record ident -> name), taken by
    no record's own reader nor another written one."""
    taken = {f"read_{record.ident}" for record in records}
    names = {}
    for record in layouts:
        name, number = f"read_{record.ident}_written", 2
        while name in taken:
            name, number = f"read_{record.ident}_written{number}", number + 1
        taken.add(name)
        names[record.ident] = Code(name)
    return names


def generate_module(
    root: RecordPlan,
    records: list[RecordPlan],
    label: str,
    flags_key: str,
    fingerprint: str = "",
    written=None,
) -> GeneratedModule:
    """The Cython source of a schema's codec, the objects it binds, its check.

    ``written`` (a roastedavro.evolved.WrittenLayout): the codec reads the
    root record from bytes another writer's schema wrote (written_reader);
    it writes as the schema's own codec does.
    """
    module = RecordModuleEmitter()
    functions = [record_functions(record, module) for record in records]
    root_reader = Code(f"read_{root.ident}")
    min_size = root.min_size()
    if written is not None:
        layouts = [(root, written.steps)] + [(nested.record, nested.steps) for nested in written.nested]
        names = _written_names([record for record, _ in layouts], records)
        root_reader = names[root.ident]
        # the records the writer laid out otherwise, where they are nested
        needed = {ident for _, steps in layouts for step in steps for ident in step.nested}
        readers = {ident: names[ident] for ident in needed}
        for record, steps in layouts:
            functions.append(
                {
                    "writer": Code(""),
                    "reader": written_reader(
                        record,
                        module,
                        steps,
                        names[record.ident],
                        readers,
                        written.loose_counts,
                        written.mover,
                    ),
                }
            )
        min_size = written.min_size
        label = f"{label}, reading data written with {written.writer_fingerprint}"
    source = render(
        "module.pyx.j2",
        version=comment(__version__),
        label=comment(label),
        fingerprint=comment(fingerprint or "unknown"),
        records=[
            comment(f"{record.full_name}: " + ", ".join(plan.avro_name for plan in record.fields))
            for record in records
        ],
        root_ident=Code(root.ident),
        root_reader=root_reader,
        root_name=comment(root.full_name),
        min_size=checked_int(min_size, "the smallest record size", 0, 2**62),
        functions=functions,
        fragments=module.fragments,
        promotions=written is not None
        and any(step.promote or step.remap for _, steps in layouts for step in steps),
        moves=written is not None and any(step.move >= 0 for _, steps in layouts for step in steps),
        bindings=module.declared(),
        interpreters=module.interpreters,
        key_slots=checked_int(max(module.key_slots, 1), "the key slots", 1, 2**31),
    )
    return GeneratedModule(source, module.bindings, module.verify)
