"""Unions of records: a value that is one of several nested schemas.

Two ways to declare one, both written as one Avro union of the schemas'
records (with "null" first where the field allows None):

- a ``Nested`` field of a marshmallow-oneofschema ``OneOfSchema``: its
  ``get_obj_type`` names the branch on dump, as its own ``dump`` does;
- ``roastedavro.fields.Union``: the first branch whose class the
  object is an instance of.

On load the branch read says which schema loads the record, with that
schema's hooks; the value is what the schema's ``load`` returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from marshmallow import Schema, fields
from marshmallow.decorators import PRE_DUMP

from roastedavro.encoders.base import Encoder
from roastedavro.encoders.collections import each_in_path, emit_array_read, emit_array_write
from roastedavro.errors import DumpError
from roastedavro.fields import Union
from roastedavro.hooks import LoadHooks, PreDump, hook_tags
from roastedavro.plans import record_dump_datum, record_load_input


def is_one_of_schema(schema: Any) -> bool:
    """Whether ``schema`` is a marshmallow-oneofschema ``OneOfSchema`` (not imported here)."""
    return any(
        kind.__name__ == "OneOfSchema" and kind.__module__.startswith("marshmallow_oneofschema")
        for kind in type(schema).__mro__
    )


class Branch:
    """One record of a union: the schema that writes and loads it."""

    def __init__(self, schema: Schema, record, label: Any):
        self.schema = schema
        self.record = record
        #: what marshmallow's dump output names the branch by (a OneOfSchema's
        #: type name, a Union's record name)
        self.label = label
        self.load_hooks = LoadHooks(schema)
        self.pre_dump = PreDump(schema) if PRE_DUMP in hook_tags(schema) else None


class TypeNameChooser:
    """A OneOfSchema's branch for an object: its ``get_obj_type``, looked up
    in ``type_schemas``. ``choose`` returns (union index, value), as the
    runtime's choose_branch takes it; a type it has no schema for is a
    DumpError with the OneOfSchema's own message."""

    def __init__(self, one_of: Schema, indexes: dict):
        self.one_of = one_of
        self.indexes = indexes

    def choose(self, value: Any) -> tuple[int, Any]:
        kind = self.one_of.get_obj_type(value)  # type: ignore[attr-defined]  # a OneOfSchema
        if kind is None:
            raise DumpError([f"Unknown object class: {type(value).__name__}"])
        try:
            return self.indexes[kind], value
        except (KeyError, TypeError):
            raise DumpError([f"Unsupported object type: {kind}"]) from None


class ClassChooser:
    """A Union's branch for an object: the first class it is an instance of,
    else a DumpError with the field's own message."""

    def __init__(self, field, first_index: int):
        self.field = field
        self.classes = tuple(kind for kind, _ in field.branches)
        self.first_index = first_index

    def choose(self, value: Any) -> tuple[int, Any]:
        for number, kind in enumerate(self.classes):
            if isinstance(value, kind):
                return self.first_index + number, value
        names = ", ".join(kind.__name__ for kind in self.classes)
        raise DumpError(
            [self.field.error_messages["no_branch"].format(kind=type(value).__name__, names=names)]
        )


class RecordUnionValue(Encoder):
    """One value of a union of records: the branch index, then a call to
    that record's function. Null, where allowed, is the union's first
    branch: the field's value is this union itself, never ["null", union]."""

    accepts_none = True
    never_null = True

    def __init__(self, field, visitor, path, branches: list[Branch], chooser, with_null: bool):
        self.branches = branches
        self.chooser = chooser
        self.with_null = with_null
        self.first = 1 if with_null else 0
        self.by_label = {branch.label: branch for branch in branches}
        self.by_name = {branch.record.full_name: branch for branch in branches}
        # tier 0 reads this union's values with their branch's name (see _Plan)
        visitor.record_unions = True
        super().__init__(field, visitor, path)

    def choose_avro_type(self, override):
        return "union"

    @property
    def holds_null(self) -> bool:
        return self.with_null

    def avro_type(self, names):
        records = [names.record(branch.record) for branch in self.branches]
        return ["null", *records] if self.with_null else records

    def describe(self):
        names = " | ".join(branch.record.full_name for branch in self.branches)
        return f"null | {names}" if self.with_null else names

    # -- marshmallow's dump output and load input (the uncompiled path) ------

    def branch_of_dumped(self, dumped: Any) -> tuple[Branch, dict]:
        """The branch and record fields of one value as marshmallow's dump gives it."""
        raise NotImplementedError

    def load_form(self, branch: Branch, loaded: dict) -> Any:
        """marshmallow's load input for a record of ``branch``."""
        raise NotImplementedError

    def dump_datum(self, dumped):
        if dumped is None:
            return None
        branch, record_fields = self.branch_of_dumped(dumped)
        # fastavro's and tier 0's way to name a union's branch
        return branch.record.full_name, record_dump_datum(branch.record, record_fields)

    def load_input(self, raw):
        if raw is None:
            return None
        if isinstance(raw, tuple):  # read with the branch's name (more than one record)
            name, raw = raw
            branch = self.by_name[name]
        else:
            branch = self.branches[0]
        return self.load_form(branch, record_load_input(branch.record, raw))

    def default_datum(self, value):
        raise self.error(
            "a union of records takes no default but None (load_default=None with allow_none=True)"
        )

    # -- the code ------------------------------------------------------------

    def emit_write(self, fn, value):
        branch = fn.c_local("int", "branch")
        if self.with_null:
            fn.line(f"if {value} is None:")
            fn.line("    write_byte(w, 0)  # union branch null")
            fn.line("else:")
        else:
            fn.line(f"if {value} is None:")
            fn.line(f"    raise_dump_error({fn.message(self.field.error_messages['null'])})")
            fn.line("else:")
        with fn.indent():
            chooser = fn.bind(self.chooser, "chooser")
            fn.line(f"{value} = choose_branch({chooser}, {value}, &{branch})")
            fn.line(f"write_long(w, {branch})")
            for number, item in enumerate(self.branches):
                keyword = "if" if number == 0 else "elif"
                fn.line(
                    f"{keyword} {branch} == {self.first + number}:  "
                    f"{fn.comment('union branch ' + item.record.full_name)}"
                )
                with fn.indent():
                    if item.pre_dump is not None:
                        hooks = fn.bind(item.pre_dump, f"pre_dump{number}")
                        fn.line(f"{value} = {hooks}({value}, False)")
                    fn.line(f"self.write_{item.record.ident}(w, {value}, depth + 1)")

    def emit_read(self, fn, target):
        branch = fn.c_local("int", "branch")
        # read into the target itself where it is a local, not a dict item
        loaded = target if target.isidentifier() else fn.c_local("object", "loaded")
        count = fn.int(len(self.branches) + self.first, "the union's branch count", 1, 2**20)
        fn.line(f"{branch} = read_index(r, {count})")
        if self.with_null:
            fn.line(f"if {branch} == 0:")
            fn.line(f"    {loaded} = None")
        for number, item in enumerate(self.branches):
            keyword = "if" if number == 0 and not self.with_null else "elif"
            fn.line(
                f"{keyword} {branch} == {self.first + number}:  "
                f"{fn.comment('union branch ' + item.record.full_name)}"
            )
            with fn.indent():
                fn.line(f"{loaded} = self.{fn.record_reader(item.record)}(r, depth + 1)")
                if item.load_hooks and not fn.discarding:
                    # the branch schema's own load: its validators and post_load
                    hooks = fn.bind(item.load_hooks, f"load_hooks{number}")
                    fn.line("if not r.invalid:")
                    fn.line(f"    {loaded} = {hooks}({loaded}, False, self.validate)")
                    fn.line(f"    if {loaded} is INVALID:")
                    fn.line("        r.invalid = 1")
        if loaded != target:
            fn.line(f"{target} = {loaded}")


class _OneOfValue(RecordUnionValue):
    def __init__(self, field, visitor, path, branches, chooser, with_null, one_of, labels):
        self.type_field = one_of.type_field
        super().__init__(field, visitor, path, branches, chooser, with_null)
        # every type name, two of one schema included
        self.by_label = dict(labels)

    def branch_of_dumped(self, dumped):
        if not isinstance(dumped, Mapping):
            # OneOfSchema's dump returns (None, {"_schema": message}) for a
            # type it has no schema for, where the compiled writer refuses it
            if (
                isinstance(dumped, tuple)
                and len(dumped) == 2
                and isinstance(dumped[1], dict)
                and isinstance(dumped[1].get("_schema"), str)
            ):
                raise DumpError([dumped[1]["_schema"]])
            raise DumpError([f"Not a record of this union: {dumped!r}."])
        record_fields = dict(dumped)
        label = record_fields.pop(self.type_field, None)
        branch = self.by_label.get(label) if _hashable(label) else None
        if branch is None:
            raise DumpError([f"Unsupported object type: {label}"])
        return branch, record_fields

    def load_form(self, branch, loaded):
        return {**loaded, self.type_field: branch.label}


class _UnionValue(RecordUnionValue):
    def branch_of_dumped(self, dumped):
        if not isinstance(dumped, Mapping) or len(dumped) != 1:
            raise DumpError(["Not a union value: a dict of one record name and its fields."])
        ((label, record_fields),) = dumped.items()
        branch = self.by_label.get(label) if _hashable(label) else None
        if branch is None:
            raise DumpError([f"{label!r} is not one of this union's records."])
        return branch, record_fields

    def load_form(self, branch, loaded):
        return {branch.label: loaded}


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


class _RecordUnionField(Encoder):
    """A field whose value (or, with ``many``, each item) is a union of records."""

    min_size = 1

    def __init__(self, field, visitor, path, item: RecordUnionValue, many: bool):
        self.item = item
        self.many = many
        # one value: null is a branch of the union; many: the list may be null
        # this encoder's own, by ``many``
        self.never_null = self.accepts_none = not many  # type: ignore[misc]
        self.holds_null = item.with_null
        if many:
            self.items = visitor.plain_value(item)
        super().__init__(field, visitor, path)

    def choose_avro_type(self, override):
        if override is not None:
            raise self.error("a union of records is written as one; remove metadata 'avro'")
        return "array" if self.many else "union"

    def avro_type(self, names):
        union = self.item.avro_type(names)
        return {"type": "array", "items": union} if self.many else union

    def describe(self):
        return f"array<{self.item.describe()}>" if self.many else self.item.describe()

    def load_input(self, raw):
        if self.many and raw is not None:
            return [self.item.load_input(item) for item in raw]
        return self.item.load_input(raw)

    def dump_datum(self, dumped):
        if self.many and dumped is not None:
            return each_in_path(self.item.dump_datum, dumped)
        return self.item.dump_datum(dumped)

    def default_datum(self, value):
        return self.item.default_datum(value)

    def emit_write(self, fn, value):
        if self.many:
            emit_array_write(fn, value, self.items)
        else:
            self.item.emit_write(fn, value)

    def emit_read(self, fn, target):
        if self.many:
            emit_array_read(fn, target, self.items)
        else:
            self.item.emit_read(fn, target)


def _branch_schema(schema: Any, where: str, error) -> Schema:
    if isinstance(schema, Schema):
        return schema
    if isinstance(schema, type) and issubclass(schema, Schema):
        return schema()
    raise error(f"{where} is {schema!r}, not a marshmallow Schema or Schema class")


def _visit_branches(encoder: Encoder, visitor, path: str, schemas: Iterable[tuple[Any, Schema]]):
    """The distinct records of ``schemas`` (label, schema) in order, and each
    label's union index. Two labels of one schema share its record."""
    branches: list[Branch] = []
    records: dict[int, Branch] = {}
    labels: list[tuple[Any, Branch]] = []
    for label, schema in schemas:
        record = visitor.visit_record(schema, path, visitor.current_namespace)
        branch = records.get(id(record))
        if branch is None:
            branch = records[id(record)] = Branch(schema, record, label)
            branches.append(branch)
        labels.append((label, branch))
    if not branches:
        raise encoder.error("a union of records needs at least one schema")
    return branches, labels


class OneOfSchemaEncoder(_RecordUnionField):
    """``Nested(SomeOneOfSchema)``: the OneOfSchema's ``type_schemas`` as a
    union of their records, in their order; ``get_obj_type`` chooses the
    branch on dump. The type name is the branch, not a field of the
    record: ``type_field_remove=False`` cannot be written."""

    field_class = fields.Nested

    def __init__(self, field, visitor, path):
        self.field = field
        self.path = path
        one_of = field.schema
        where = type(one_of).__name__
        if not one_of.type_field_remove:
            raise self.error(
                f"{where}.type_field_remove=False cannot be written: the Avro "
                "union branch holds the type, not a field of the record"
            )
        mapping = one_of.type_schemas
        if not isinstance(mapping, Mapping) or not mapping:
            raise self.error(f"{where}.type_schemas is empty: a union needs at least one schema")
        schemas = [
            (label, _branch_schema(schema, f"{where}.type_schemas[{label!r}]", self.error))
            for label, schema in mapping.items()
        ]
        for label, schema in schemas:
            if any((f.data_key or name) == one_of.type_field for name, f in schema.fields.items()):
                raise self.error(
                    f"{type(schema).__name__} (type {label!r}) has a field written as "
                    f"{one_of.type_field!r}, which {where}'s type field replaces on dump "
                    "and removes on load; rename one of them"
                )
        branches, labels = _visit_branches(self, visitor, path, schemas)
        many = bool(field.many)
        with_null = bool(field.allow_none) and not many
        first = 1 if with_null else 0
        indexes = {label: first + branches.index(branch) for label, branch in labels}
        item = _OneOfValue(
            field, visitor, path, branches, TypeNameChooser(one_of, indexes), with_null, one_of, labels
        )
        super().__init__(field, visitor, path, item, many)


class UnionEncoder(_RecordUnionField):
    """``roastedavro.fields.Union``: its branches' records, in order;
    the first branch whose class the object is an instance of writes it."""

    field_class = Union

    def __init__(self, field, visitor, path):
        self.field = field
        self.path = path
        schemas = list(field.branches)
        branches, labels = _visit_branches(self, visitor, path, schemas)
        if len(branches) != len(labels):
            raise self.error("two branches have the same schema: a union holds each record once")
        names = [branch.record.name for branch in branches]
        if len(set(names)) != len(names):
            raise self.error(
                f"two branches' records have the same name ({', '.join(names)}): set Meta.avro_name on one"
            )
        for branch in branches:
            branch.label = branch.record.name
        with_null = bool(field.allow_none)
        item = _UnionValue(
            field, visitor, path, branches, ClassChooser(field, 1 if with_null else 0), with_null
        )
        super().__init__(field, visitor, path, item, False)
