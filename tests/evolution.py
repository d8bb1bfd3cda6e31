"""Hypothesis strategies for schema evolution: pairs of Avro schemas, one an
evolution of the other, as producers change their schemas.

* :func:`evolved_pairs` draws a record schema (``avro_strategies.record_schemas``)
  and changes it by the moves a schema registry is meant to accept: fields
  added with defaults, fields removed, renamed (the old name an alias) and
  reordered, types promoted (int to long, float or double, long to float or
  double, float to double, string to bytes and back), types widened into
  unions, enum symbols added and defaults set, named types renamed (the old
  full name an alias), records nested anywhere changed alike.
* :func:`incompatible_pairs` adds changes that break: a field added without
  a default, a type narrowed (long to int...), enum symbols removed without a
  default, a fixed resized, a named type renamed without an alias, a type
  changed for an unrelated one.
* :func:`schema_pairs` draws from both; :func:`evolution_chains` draws a list
  of versions, each an evolution of the one before.

A pair is ``(writer, reader)`` as JSON values, the old schema the writer or
the reader at random (both directions matter). Every schema drawn is valid
for Java Avro 1.12 and the specification: unique names, defaults valid for
their types, names that resolve to the type meant.

Nothing here imports roastedavro: the schemas are read into the small model
below by the specification's rules, changed there and written out again
(named types defined where first used, references by full name unless a
short one means the same to every reader).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from hypothesis import reject, strategies as st

from avro_strategies import PRIMITIVES, RESERVED_NAMES, avro_names, namespace_of, record_schemas

NAMED_KINDS = ("record", "error", "enum", "fixed")
INT_RANGE = (-(2**31), 2**31 - 1)
LONG_RANGE = (-(2**63), 2**63 - 1)

# the promotions of the specification: what a reader may read a writer's type as
PROMOTIONS = {
    "int": ("long", "float", "double"),
    "long": ("float", "double"),
    "float": ("double",),
    "string": ("bytes",),
    "bytes": ("string",),
}
# the reverse: a reader of these cannot read all of the writer's type
NARROWINGS = {
    "long": ("int",),
    "float": ("int", "long"),
    "double": ("int", "long", "float"),
}


class _Missing:
    """No default (one object, kept by copies)."""

    def __repr__(self) -> str:
        return "MISSING"

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


MISSING: Any = _Missing()


# ---------------------------------------------------------------------------
# the model: named types by full name, every use of one a Use
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class Prim:
    name: str
    extra: dict = dataclasses.field(default_factory=dict)  # logicalType, custom properties


@dataclasses.dataclass
class Arr:
    items: Any
    extra: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class MapOf:
    values: Any
    extra: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Choice:
    """A union."""

    branches: list


@dataclasses.dataclass
class Use:
    """A use of the named type of this full name (its definition included)."""

    full: str


@dataclasses.dataclass
class FieldDef:
    name: str
    type: Any
    default: Any = MISSING
    aliases: list = dataclasses.field(default_factory=list)
    extra: dict = dataclasses.field(default_factory=dict)  # doc, order, custom properties


@dataclasses.dataclass
class NamedDef:
    kind: str  # record, error, enum or fixed
    full: str
    aliases: list = dataclasses.field(default_factory=list)  # full names
    extra: dict = dataclasses.field(default_factory=dict)  # doc, logicalType, custom properties
    fields: list = dataclasses.field(default_factory=list)
    symbols: list = dataclasses.field(default_factory=list)
    default: str | None = None  # an enum's
    size: int = 0

    @property
    def is_record(self) -> bool:
        return self.kind in ("record", "error")


@dataclasses.dataclass
class Model:
    root: Any
    named: dict  # full name -> NamedDef

    def copy(self) -> "Model":
        return copy.deepcopy(self)

    def taken(self) -> set:
        """Full names no new type may take: the names and aliases of every type."""
        names = set(self.named)
        for named in self.named.values():
            names.update(named.aliases)
        return names

    def reachable(self) -> list:
        """The named types the root uses, in document order."""
        seen: dict[str, NamedDef] = {}

        def walk(node):
            if isinstance(node, Use):
                if node.full in seen:
                    return
                named = seen[node.full] = self.named[node.full]
                for field in named.fields:
                    walk(field.type)
            elif isinstance(node, Arr):
                walk(node.items)
            elif isinstance(node, MapOf):
                walk(node.values)
            elif isinstance(node, Choice):
                for branch in node.branches:
                    walk(branch)

        walk(self.root)
        return list(seen.values())

    def records(self) -> list:
        return [named for named in self.reachable() if named.is_record]

    def deref(self, node):
        return self.named[node.full] if isinstance(node, Use) else node


# -- from JSON ----------------------------------------------------------------


def from_json(schema: Any) -> Model:
    """The model of a schema, names resolved by the specification (a record's
    name is known inside its own fields; a short name is looked up in the
    enclosing namespace, then in the null namespace)."""
    named: dict[str, NamedDef] = {}

    def lookup(name: str, namespace: str | None) -> str:
        if "." in name:
            return name
        if namespace and f"{namespace}.{name}" in named:
            return f"{namespace}.{name}"
        if name in named:
            return name
        raise KeyError(f"unknown type {name!r} in namespace {namespace!r}")

    def read(node: Any, namespace: str | None):
        if isinstance(node, str):
            return Prim(node) if node in PRIMITIVES else Use(lookup(node, namespace))
        if isinstance(node, list):
            return Choice([read(branch, namespace) for branch in node])
        kind = node["type"]
        extra = {
            key: value
            for key, value in node.items()
            if key
            not in (
                "type",
                "items",
                "values",
                "name",
                "namespace",
                "aliases",
                "fields",
                "symbols",
                "default",
                "size",
            )
        }
        if kind in PRIMITIVES:
            return Prim(kind, extra)
        if kind == "array":
            return Arr(read(node["items"], namespace), extra)
        if kind == "map":
            return MapOf(read(node["values"], namespace), extra)
        if kind not in NAMED_KINDS:
            return Use(lookup(kind, namespace))
        name = node["name"]
        if "." in name:
            full = name
        else:
            own = node["namespace"] if "namespace" in node else namespace
            full = f"{own}.{name}" if own else name
        inner = namespace_of(full)
        aliases = [
            alias if "." in alias or not inner else f"{inner}.{alias}" for alias in node.get("aliases", [])
        ]
        definition = named[full] = NamedDef(kind, full, aliases, extra)
        if kind == "enum":
            definition.symbols = list(node["symbols"])
            definition.default = node.get("default")
        elif kind == "fixed":
            definition.size = node["size"]
        else:
            for field in node["fields"]:
                definition.fields.append(
                    FieldDef(
                        field["name"],
                        read(field["type"], inner),
                        field.get("default", MISSING),
                        list(field.get("aliases", [])),
                        {
                            key: value
                            for key, value in field.items()
                            if key not in ("name", "type", "default", "aliases")
                        },
                    )
                )
        return Use(full)

    root = read(schema, None)
    return Model(root, named)


# -- to JSON ------------------------------------------------------------------


class Inexpressible(Exception):
    """A reference no text names unambiguously where it is (the strategies reject it)."""


def to_json(model: Model, draw=None) -> Any:
    """The schema as JSON values, each named type defined where first used.

    With ``draw``, names take their various valid forms (short in their own
    namespace, dotted, with a "namespace" attribute); without, a definition
    is named short where it inherits its namespace and dotted elsewhere, a
    reference by its full name.
    """
    defined: set[str] = set()
    simple_names = {full.rpartition(".")[2] for full in model.named if "." not in full}

    def choose(options: list):
        return options[0] if draw is None else draw(st.sampled_from(options))

    def reference(full: str, namespace: str | None) -> str:
        space, _, simple = full.rpartition(".")
        if not space:
            # a name of the null namespace has no text inside another namespace
            # (the specification reads a short name in the enclosing one; Java
            # then tries the null namespace, fastavro does not)
            if namespace:
                raise Inexpressible(full)
            return simple
        if space == namespace and simple not in simple_names:
            # short within its namespace; Java would look a recursive use up in
            # the null namespace, so no type there may have the short name
            return choose([full, simple])
        return full

    def name_of(named: NamedDef, node: dict, namespace: str | None) -> None:
        space, _, simple = named.full.rpartition(".")
        space = space or None
        forms = []
        if space == namespace:
            forms.append({"name": simple})
        if space:
            forms.append({"name": named.full})
        forms.append({"name": simple, "namespace": space or ""})
        node.update(choose(forms))

    def write(node: Any, namespace: str | None) -> Any:
        if isinstance(node, Prim):
            return {"type": node.name, **node.extra} if node.extra else node.name
        if isinstance(node, Arr):
            return {"type": "array", "items": write(node.items, namespace), **node.extra}
        if isinstance(node, MapOf):
            return {"type": "map", "values": write(node.values, namespace), **node.extra}
        if isinstance(node, Choice):
            return [write(branch, namespace) for branch in node.branches]
        if node.full in defined:
            return reference(node.full, namespace)
        defined.add(node.full)
        named = model.named[node.full]
        out: dict[str, Any] = {"type": named.kind}
        name_of(named, out, namespace)
        inner = namespace_of(named.full)
        if named.aliases:
            out["aliases"] = [alias_text(alias, inner) for alias in named.aliases]
        if named.kind == "enum":
            out["symbols"] = list(named.symbols)
            if named.default is not None:
                out["default"] = named.default
        elif named.kind == "fixed":
            out["size"] = named.size
        else:
            fields = []
            for field in named.fields:
                written: dict[str, Any] = {"name": field.name, "type": write(field.type, inner)}
                if field.default is not MISSING:
                    written["default"] = field.default
                if field.aliases:
                    written["aliases"] = list(field.aliases)
                written.update(field.extra)
                fields.append(written)
            out["fields"] = fields
        out.update(named.extra)
        return out

    return write(model.root, None)


def alias_text(alias: str, namespace: str | None) -> str:
    """An alias as a named type of ``namespace`` writes it (a short name takes the namespace)."""
    if "." in alias:
        return alias
    if namespace:
        # a name of the null namespace has no short form here
        raise Inexpressible(alias)
    return alias


# ---------------------------------------------------------------------------
# defaults
# ---------------------------------------------------------------------------


def valid_default(model: Model, node: Any, value: Any) -> bool:
    """Whether ``value`` is a valid JSON default for the type: the
    specification's rules as Java 1.12 checks them (a union's default may be
    any branch's), bytes and fixed strings of code points 0-255, an enum's a
    symbol, a fixed's of its size."""
    node = model.deref(node)
    if isinstance(node, Choice):
        return any(valid_default(model, branch, value) for branch in node.branches)
    if isinstance(node, Prim):
        kind = node.name
        if kind == "null":
            return value is None
        if kind == "boolean":
            return isinstance(value, bool)
        if kind in ("int", "long"):
            low, high = INT_RANGE if kind == "int" else LONG_RANGE
            return type(value) is int and low <= value <= high
        if kind in ("float", "double"):
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        if kind == "bytes":
            return isinstance(value, str) and all(ord(char) < 256 for char in value)
        return isinstance(value, str)
    if isinstance(node, Arr):
        return isinstance(value, list) and all(valid_default(model, node.items, item) for item in value)
    if isinstance(node, MapOf):
        return isinstance(value, dict) and all(
            valid_default(model, node.values, item) for item in value.values()
        )
    if node.kind == "enum":
        return value in node.symbols
    if node.kind == "fixed":
        return isinstance(value, str) and len(value) == node.size and all(ord(char) < 256 for char in value)
    if not isinstance(value, dict):
        return False
    for field in node.fields:
        if field.name in value:
            if not valid_default(model, field.type, value[field.name]):
                return False
        elif field.default is MISSING:
            return False
    return True


def simple_default(model: Model, node: Any, depth: int = 4, stand_ins: set = frozenset()) -> Any:
    """The plainest valid default of a type (MISSING: none within ``depth``,
    as for a record that holds itself, or for a stand-in of ``stand_ins``)."""
    if depth < 0 or (isinstance(node, Use) and id(node) in stand_ins):
        return MISSING
    node = model.deref(node)
    if isinstance(node, Prim):
        return {
            "null": None,
            "boolean": False,
            "int": 0,
            "long": 0,
            "float": 0.0,
            "double": 0.0,
            "bytes": "",
            "string": "",
        }[node.name]
    if isinstance(node, Arr):
        return []
    if isinstance(node, MapOf):
        return {}
    if isinstance(node, Choice):
        for branch in node.branches:
            value = simple_default(model, branch, depth, stand_ins)
            if value is not MISSING:
                return value
        return MISSING
    if node.kind == "enum":
        return node.default if node.default is not None else node.symbols[0]
    if node.kind == "fixed":
        return "\u0000" * node.size
    value = {}
    for field in node.fields:
        if field.default is not MISSING and valid_default(model, field.type, field.default):
            continue
        item = simple_default(model, field.type, depth - 1, stand_ins)
        if item is MISSING:
            return MISSING
        value[field.name] = item
    return value


def placeholders(model: Model) -> set:
    """The Use nodes (by id) that Java's parser reads as a stand-in: a record
    used inside its own definition (or an enclosing one's) before its fields
    are all read. Java registers a record only once its fields are read, and
    checking a default meets the stand-in until the parse ends."""
    defined: set[str] = set()
    unfinished: set[str] = set()
    found: set[int] = set()

    def walk(node):
        if isinstance(node, Arr):
            walk(node.items)
        elif isinstance(node, MapOf):
            walk(node.values)
        elif isinstance(node, Choice):
            for branch in node.branches:
                walk(branch)
        elif isinstance(node, Use):
            if node.full in defined:
                if node.full in unfinished:
                    found.add(id(node))
                return
            defined.add(node.full)
            named = model.named[node.full]
            if named.is_record:
                unfinished.add(node.full)
                for field in named.fields:
                    walk(field.type)
                unfinished.discard(node.full)

    walk(model.root)  # in the order to_json writes the schema
    return found


class _JavaThrows(Exception):
    pass


def _java_accepts(model: Model, node: Any, value: Any, stand_ins: set, depth: int = 0) -> bool:
    """Java 1.12's check of a default (Schema.isValidDefault, in its order),
    raising _JavaThrows where it throws: an object checked against a stand-in
    record ("Schema fields not set yet"), or a record default whose missing
    field takes a default that leaves it out again (Java recurses until its
    stack overflows)."""
    if depth > 100:
        raise _JavaThrows
    depth += 1
    if isinstance(node, Use) and id(node) in stand_ins:
        if isinstance(value, dict):
            raise _JavaThrows
        return False
    node = model.deref(node)
    if isinstance(node, Choice):
        return any(_java_accepts(model, branch, value, stand_ins, depth) for branch in node.branches)
    if isinstance(node, Arr):
        return isinstance(value, list) and all(
            _java_accepts(model, node.items, item, stand_ins, depth) for item in value
        )
    if isinstance(node, MapOf):
        return isinstance(value, dict) and all(
            _java_accepts(model, node.values, item, stand_ins, depth) for item in value.values()
        )
    if isinstance(node, NamedDef) and node.is_record:
        if not isinstance(value, dict):
            return False
        for field in node.fields:
            item = value[field.name] if field.name in value else field.default
            if item is MISSING or not _java_accepts(model, field.type, item, stand_ins, depth):
                return False
        return True
    return valid_default(model, node, value)  # stricter than Java for the rest: fine


def default_ok(model: Model, node: Any, value: Any, stand_ins: set) -> bool:
    """Valid for the specification and for Java's parser as it reads the schema."""
    if not valid_default(model, node, value):
        return False
    try:
        return _java_accepts(model, node, value, stand_ins)
    except _JavaThrows:
        return False


def settle_defaults(model: Model) -> None:
    """Make every default valid after changes: a default the changed type no
    longer takes (or that Java's parser would choke on) becomes the type's
    plainest one, or none."""
    stand_ins = placeholders(model)
    # a record default relies on its fields' defaults: settle until nothing changes
    for _ in range(20):
        changed = False
        for named in model.named.values():
            if named.kind == "enum" and named.default is not None and named.default not in named.symbols:
                named.default = None
                changed = True
            for field in named.fields:
                if field.default is MISSING or default_ok(model, field.type, field.default, stand_ins):
                    continue
                value = simple_default(model, field.type, stand_ins=stand_ins)
                field.default = (
                    value
                    if value is not MISSING and default_ok(model, field.type, value, stand_ins)
                    else MISSING
                )
                changed = True
        if not changed:
            return
    reject()  # defaults that keep undoing each other: too odd to keep


# ---------------------------------------------------------------------------
# changes
# ---------------------------------------------------------------------------

_TYPE_NAMES = ["Added", "Extra", "Detail", "Status", "Code", "Part", "Info"]
_FIELD_NAMES = ["added", "count", "label", "flag", "score", "tags", "note", "id2"]
_SYMBOLS = ["NEW", "OTHER", "UNKNOWN", "Z", "B", "A", "C_2"]


class Evolver:
    """Changes a model in place, drawing each choice."""

    def __init__(self, draw, model: Model):
        self.draw = draw
        self.model = model

    # -- names ------------------------------------------------------------------

    def new_type_name(self, namespace: str | None) -> str:
        taken = self.model.taken()
        base = self.draw(st.one_of(st.sampled_from(_TYPE_NAMES), avro_names()))
        for attempt in range(100):
            simple = base if attempt == 0 else f"{base}{attempt}"
            full = f"{namespace}.{simple}" if namespace else simple
            if simple not in RESERVED_NAMES and full not in taken:
                return full
        reject()

    def new_field_name(self, record: NamedDef) -> str:
        taken = {field.name for field in record.fields}
        for field in record.fields:
            taken.update(field.aliases)
        base = self.draw(st.one_of(st.sampled_from(_FIELD_NAMES), avro_names()))
        for attempt in range(100):
            name = base if attempt == 0 else f"{base}{attempt}"
            if name not in taken:
                return name
        reject()

    def new_symbols(self, enum: NamedDef, count: int) -> list:
        symbols: list[str] = []
        for _ in range(count):
            base = self.draw(st.one_of(st.sampled_from(_SYMBOLS), avro_names()))
            candidate, attempt = base, 0
            while candidate in enum.symbols or candidate in symbols:
                attempt += 1
                candidate = f"{base}{attempt}"
            symbols.append(candidate)
        return symbols

    # -- picking --------------------------------------------------------------

    def record(self) -> NamedDef | None:
        records = self.model.records()
        return self.draw(st.sampled_from(records)) if records else None

    def field(self, predicate=lambda field: True):
        """A (record, field) of the schema, or None."""
        choices = [
            (record, field) for record in self.model.records() for field in record.fields if predicate(field)
        ]
        return self.draw(st.sampled_from(choices)) if choices else None

    def named(self, kind: tuple) -> NamedDef | None:
        choices = [named for named in self.model.reachable() if named.kind in kind]
        return self.draw(st.sampled_from(choices)) if choices else None

    def slots(self, names: dict) -> list:
        """Places holding a primitive of one of ``names``, in field types, array
        items, map values and union branches: (container, key, the union or None)."""
        found = []

        def visit(container, key, node, union=None):
            if isinstance(node, Prim) and node.name in names:
                found.append((container, key, union))
            elif isinstance(node, Arr):
                visit(node, "items", node.items)
            elif isinstance(node, MapOf):
                visit(node, "values", node.values)
            elif isinstance(node, Choice):
                for index, branch in enumerate(node.branches):
                    visit(node.branches, index, branch, node)

        for record in self.model.records():
            for field in record.fields:
                visit(field, "type", field.type)
        return found

    @staticmethod
    def get(container, key):
        return container[key] if isinstance(container, list) else getattr(container, key)

    @staticmethod
    def put(container, key, value):
        if isinstance(container, list):
            container[key] = value
        else:
            setattr(container, key, value)

    # -- new types ------------------------------------------------------------

    def default_for(self, node) -> Any:
        """A valid default, drawn: a plain one or a random value of the type."""
        node_ = self.model.deref(node)
        if (
            isinstance(node_, Prim)
            and node_.extra.get("logicalType") != "decimal"
            and self.draw(st.booleans())
        ):
            values = {
                "null": st.none(),
                "boolean": st.booleans(),
                "int": st.integers(*INT_RANGE),
                "long": st.integers(-(2**40), 2**40),
                "float": st.integers(-100, 100),
                "double": st.floats(allow_nan=False, allow_infinity=False),
                "bytes": st.text(st.characters(max_codepoint=255), max_size=3),
                "string": st.text(max_size=4),
            }
            return self.draw(values[node_.name])
        if isinstance(node_, NamedDef) and node_.kind == "enum" and node_.symbols:
            return self.draw(st.sampled_from(node_.symbols))
        return simple_default(self.model, node)

    def new_type(self, namespace: str | None, depth: int = 1):
        kinds = ["primitive"] * 3 + ["nullable", "array", "map", "enum", "fixed"]
        if depth > 0:
            kinds.append("record")
        referable = [
            named.full
            for named in self.model.reachable()
            if namespace is None or namespace_of(named.full) is not None
        ]
        if referable:
            kinds.append("reference")
        kind = self.draw(st.sampled_from(kinds))
        if kind == "primitive":
            return Prim(self.draw(st.sampled_from(PRIMITIVES)))
        if kind == "nullable":
            return Choice([Prim("null"), Prim(self.draw(st.sampled_from(PRIMITIVES[1:])))])
        if kind == "array":
            return Arr(Prim(self.draw(st.sampled_from(PRIMITIVES))))
        if kind == "map":
            return MapOf(self.new_type(namespace, depth - 1))
        if kind == "reference":
            # a type of the null namespace has no name inside another namespace
            return Use(self.draw(st.sampled_from(referable)))
        full = self.new_type_name(namespace)
        if kind == "enum":
            enum = NamedDef("enum", full)
            enum.symbols = self.new_symbols(enum, self.draw(st.integers(1, 3)))
            if self.draw(st.booleans()):
                enum.default = self.draw(st.sampled_from(enum.symbols))
            self.model.named[full] = enum
            return Use(full)
        if kind == "fixed":
            self.model.named[full] = NamedDef("fixed", full, size=self.draw(st.integers(0, 8)))
            return Use(full)
        record = NamedDef("record", full)
        self.model.named[full] = record
        for _ in range(self.draw(st.integers(0, 2))):
            field = FieldDef(self.new_field_name(record), self.new_type(namespace, depth - 1))
            field.default = self.default_for(field.type)
            record.fields.append(field)
        return Use(full)

    # -- changes a registry accepts (in one direction or both) ---------------------

    def add_field(self, with_default: bool = True, record: NamedDef | None = None) -> None:
        record = record or self.record()
        if record is None:
            return
        field = FieldDef(self.new_field_name(record), self.new_type(namespace_of(record.full)))
        if with_default:
            field.default = self.default_for(field.type)
            if field.default is MISSING:  # a record that holds itself: no finite default
                field.type, field.default = Choice([Prim("null"), field.type]), None
        position = self.draw(st.integers(0, len(record.fields)))
        record.fields.insert(position, field)

    def remove_field(self) -> None:
        found = self.field()
        if found is not None:
            record, field = found
            record.fields.remove(field)

    def rename_field(self, alias: bool = True) -> None:
        found = self.field()
        if found is None:
            return
        record, field = found
        old = field.name
        field.name = self.new_field_name(record)
        if alias:
            field.aliases.append(old)
        else:
            field.aliases.clear()

    def reorder_fields(self) -> None:
        record = self.record()
        if record is not None and len(record.fields) > 1:
            record.fields[:] = self.draw(st.permutations(record.fields))

    def change_primitive(self, table: dict) -> None:
        """Promote (PROMOTIONS) or narrow (NARROWINGS) a primitive somewhere."""
        slots = self.slots(table)
        if not slots:
            return
        container, key, union = self.draw(st.sampled_from(slots))
        old = self.get(container, key)
        present = {branch.name for branch in union.branches if isinstance(branch, Prim)} if union else set()
        choices = [name for name in table[old.name] if name not in present]
        if choices:
            self.put(container, key, Prim(self.draw(st.sampled_from(choices))))

    def widen_to_union(self) -> None:
        found = self.field(lambda field: not (isinstance(field.type, Prim) and field.type.name == "null"))
        if found is None:
            return
        _, field = found
        if isinstance(field.type, Choice):
            kinds = {branch.name for branch in field.type.branches if isinstance(branch, Prim)}
            kinds.update("array" for b in field.type.branches if isinstance(b, Arr))
            kinds.update("map" for b in field.type.branches if isinstance(b, MapOf))
            others = [name for name in PRIMITIVES if name not in kinds]
            if others:
                field.type.branches.insert(
                    self.draw(st.integers(0, len(field.type.branches))),
                    Prim(self.draw(st.sampled_from(others))),
                )
            return
        if field.default is MISSING or field.default is None:
            field.type = Choice([Prim("null"), field.type])
            if self.draw(st.integers(0, 3)) > 0:
                field.default = None
            return
        kind = field.type.name if isinstance(field.type, Prim) else None
        other = self.draw(st.sampled_from([name for name in PRIMITIVES if name != kind]))
        field.type = Choice([field.type, Prim(other)])

    def add_symbols(self) -> None:
        enum = self.named(("enum",))
        if enum is None:
            return
        for symbol in self.new_symbols(enum, self.draw(st.integers(1, 2))):
            enum.symbols.insert(self.draw(st.integers(0, len(enum.symbols))), symbol)

    def set_enum_default(self) -> None:
        enum = self.named(("enum",))
        if enum is not None:
            enum.default = self.draw(st.sampled_from(enum.symbols))

    def rename_type(self, alias: bool = True) -> None:
        named = self.named(NAMED_KINDS)
        if named is None:
            return
        old = named.full
        new = self.new_type_name(namespace_of(old))
        del self.model.named[old]
        named.full = new
        if alias:
            named.aliases.append(old)
        else:
            named.aliases.clear()
        self.model.named[new] = named
        self.model.root = _renamed(self.model.root, old, new)
        for other in self.model.named.values():
            for field in other.fields:
                field.type = _renamed(field.type, old, new)

    # -- changes that break ---------------------------------------------------

    def remove_symbols(self) -> None:
        enum = self.named(("enum",))
        if enum is None or len(enum.symbols) < 2:
            return
        for symbol in self.draw(
            st.lists(st.sampled_from(enum.symbols), min_size=1, max_size=len(enum.symbols) - 1, unique=True)
        ):
            enum.symbols.remove(symbol)
        if self.draw(st.integers(0, 3)) > 0:
            enum.default = None
        elif enum.default not in enum.symbols:
            enum.default = enum.symbols[0]

    def resize_fixed(self) -> None:
        fixed = self.named(("fixed",))
        if fixed is not None:
            fixed.size = self.draw(st.integers(0, 20).filter(lambda size: size != fixed.size))
            for key in ("logicalType", "precision", "scale"):
                fixed.extra.pop(key, None)

    def replace_type(self) -> None:
        """A field's type for an unrelated one (a default made for it, if it had one)."""
        found = self.field()
        if found is None:
            return
        record, field = found
        old = self.model.deref(field.type)
        new = self.new_type(namespace_of(record.full))
        if (
            isinstance(old, Prim)
            and isinstance(new, Prim)
            and (new.name == old.name or new.name in PROMOTIONS.get(old.name, ()))
        ):
            new = Arr(new) if old.name != "null" else Prim("boolean")
        field.type = new
        if field.default is not MISSING:
            field.default = self.default_for(new)

    # -- sequences ------------------------------------------------------------

    def applicable(self, steps: dict) -> list:
        """The names of the steps that have something to change in this schema."""
        reachable = self.model.reachable()
        has = {
            "record": any(named.is_record for named in reachable),
            "field": any(named.is_record and named.fields for named in reachable),
            "fields": any(named.is_record and len(named.fields) > 1 for named in reachable),
            "enum": any(named.kind == "enum" for named in reachable),
            "enum2": any(named.kind == "enum" and len(named.symbols) > 1 for named in reachable),
            "fixed": any(named.kind == "fixed" for named in reachable),
            "named": bool(reachable),
            "promotable": bool(self.slots(PROMOTIONS)),
            "narrowable": bool(self.slots(NARROWINGS)),
        }
        return [name for name, needs in steps.items() if has[needs]]

    COMPATIBLE = {
        # step: what the schema needs for it
        "add_field": "record",
        "remove_field": "field",
        "rename_field": "field",
        "reorder_fields": "fields",
        "promote": "promotable",
        "widen_to_union": "field",
        "add_symbols": "enum",
        "set_enum_default": "enum",
        "rename_type": "named",
    }
    BREAKING = {
        "add_required": "record",
        "narrow": "narrowable",
        "remove_symbols": "enum2",
        "resize_fixed": "fixed",
        "rename_type_without_alias": "named",
        "rename_field_without_alias": "field",
        "replace_type": "field",
    }

    def step(self, steps: dict) -> None:
        choices = self.applicable(steps)
        if not choices:
            return
        name = self.draw(st.sampled_from(choices))
        if name == "promote":
            self.change_primitive(PROMOTIONS)
        elif name == "narrow":
            self.change_primitive(NARROWINGS)
        elif name == "add_required":
            self.add_field(with_default=False)
        elif name == "rename_type_without_alias":
            self.rename_type(alias=False)
        elif name == "rename_field_without_alias":
            self.rename_field(alias=False)
        else:
            getattr(self, name)()

    def compatible_step(self) -> None:
        self.step(self.COMPATIBLE)

    def breaking_step(self) -> None:
        self.step(self.BREAKING)


def _renamed(node: Any, old: str, new: str) -> Any:
    if isinstance(node, Use):
        return Use(new) if node.full == old else node
    if isinstance(node, Arr):
        return Arr(_renamed(node.items, old, new), node.extra)
    if isinstance(node, MapOf):
        return MapOf(_renamed(node.values, old, new), node.extra)
    if isinstance(node, Choice):
        return Choice([_renamed(branch, old, new) for branch in node.branches])
    return node


# ---------------------------------------------------------------------------
# strategies
# ---------------------------------------------------------------------------


def _written(draw, model: Model) -> Any:
    model = model.copy()
    settle_defaults(model)
    try:
        return to_json(model, draw)
    except Inexpressible:
        reject()


@st.composite
def base_models(draw, max_depth: int = 2) -> Model:
    """A random record schema (avro_strategies.record_schemas) read into the
    model, its root given a few more fields when it has few."""
    model = from_json(draw(record_schemas(max_depth=max_depth)))
    root = model.named[model.root.full]
    evolver = Evolver(draw, model)
    for _ in range(draw(st.integers(1, 4)) - len(root.fields)):
        evolver.add_field(with_default=draw(st.booleans()), record=root)
    return model


def _evolve(draw, model: Model, steps: int, breaking: int) -> Model:
    new = model.copy()
    evolver = Evolver(draw, new)
    moves = ["compatible"] * steps + ["breaking"] * breaking
    for move in draw(st.permutations(moves)):
        if move == "compatible":
            evolver.compatible_step()
        else:
            evolver.breaking_step()
    return new


def _pair(draw, old: Model, new: Model) -> tuple[Any, Any]:
    old_json, new_json = _written(draw, old), _written(draw, new)
    # both directions: the old schema as the writer (the new one reads old
    # data) or as the reader (old code reads new data)
    return (old_json, new_json) if draw(st.booleans()) else (new_json, old_json)


@st.composite
def evolved_pairs(draw, max_steps: int = 4, max_depth: int = 2) -> tuple[Any, Any]:
    """(writer, reader): a record schema and an evolution of it by changes a
    registry is meant to accept, in one direction or both."""
    old = draw(base_models(max_depth))
    new = _evolve(draw, old, draw(st.integers(1, max_steps)), 0)
    return _pair(draw, old, new)


@st.composite
def incompatible_pairs(draw, max_steps: int = 3, max_depth: int = 2) -> tuple[Any, Any]:
    """(writer, reader): an evolution with at least one change that breaks
    compatibility in one direction (most often), among compatible ones."""
    old = draw(base_models(max_depth))
    new = _evolve(draw, old, draw(st.integers(0, max_steps)), draw(st.integers(1, 2)))
    return _pair(draw, old, new)


def schema_pairs(max_steps: int = 4, max_depth: int = 2):
    """(writer, reader) pairs from :func:`evolved_pairs` and :func:`incompatible_pairs`."""
    return st.one_of(evolved_pairs(max_steps, max_depth), incompatible_pairs(max_steps, max_depth))


@st.composite
def evolution_chains(draw, min_versions: int = 2, max_versions: int = 4, max_depth: int = 2) -> list:
    """Versions of one schema, oldest first, each an evolution of the one
    before (a breaking change now and then)."""
    model = draw(base_models(max_depth))
    versions = [model]
    for _ in range(draw(st.integers(min_versions, max_versions)) - 1):
        breaking = 1 if draw(st.integers(0, 2)) == 0 else 0
        versions.append(_evolve(draw, versions[-1], draw(st.integers(0 if breaking else 1, 2)), breaking))
    return [_written(draw, version) for version in versions]
