"""Hypothesis strategies for Avro schemas and the values they describe.

* :func:`avro_schemas` draws random *valid* Avro schemas as JSON values (dict,
  list or str): every primitive, the logical types of Avro 1.12 that fastavro
  1.13.1 reads (decimal on bytes and fixed, uuid, date, time-millis/micros,
  timestamp-millis/micros, local-timestamp-millis/micros), fixed, enums,
  arrays, maps, unions, records nested and recursive, references to earlier
  named types by short and full name, namespaces (inherited, explicit, dotted
  names, the null namespace ""), field defaults, aliases, docs, custom
  properties, and logical types that readers ignore (unknown, or on the
  wrong type). The nanosecond timestamps, big-decimal, duration and uuid on
  fixed are left out: fastavro 1.13.1 reads them as their underlying types.
* :func:`datums` draws values for a schema in fastavro's conventions: dicts
  for records, str for enums, bytes for bytes and fixed, Decimal, UUID, date,
  time, aware UTC datetimes for timestamps and naive ones for local
  timestamps, each as fastavro reads it back. A union value may be of any
  branch; a record value that fastavro would write as another branch is
  marked with tuple notation ``(full name, value)`` or a ``"-type"`` key.
* :func:`as_read` is the value reading a datum's encoding gives back (the
  marks removed); :func:`assert_same` compares strictly.

No strategy depends on roastedavro: the schemas and values are checked
against fastavro (and Java, in other tests), never against our own output.
Names are resolved here independently of roastedavro's parser, by the
specification's rules (see :class:`Resolver`).
"""

from __future__ import annotations

import array
import dataclasses
import datetime
import decimal
import json
import math
import numbers
import string
from collections.abc import Mapping, Sequence
from typing import Any

from fastavro._logical_readers_py import LOGICAL_READERS
from fastavro._logical_writers_py import LOGICAL_WRITERS  # the ones _validation_py uses
from hypothesis import reject, strategies as st

PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
# names a named type of ours never takes: they mean something else as a type name
RESERVED_NAMES = frozenset(PRIMITIVES + ("record", "error", "enum", "fixed", "array", "map"))
# attributes with a meaning somewhere in a schema: custom properties use other keys
SCHEMA_KEYS = frozenset(
    {
        "type",
        "name",
        "namespace",
        "fields",
        "doc",
        "aliases",
        "symbols",
        "default",
        "size",
        "items",
        "values",
        "order",
        "logicalType",
        "precision",
        "scale",
    }
)

# (underlying type, logicalType) pairs that fastavro 1.13.1 converts
LOGICAL_TYPES = (
    ("int", "date"),
    ("int", "time-millis"),
    ("long", "time-micros"),
    ("long", "timestamp-millis"),
    ("long", "timestamp-micros"),
    ("long", "local-timestamp-millis"),
    ("long", "local-timestamp-micros"),
    ("string", "uuid"),
    ("bytes", "decimal"),
)
# logical types every reader ignores (unknown, or not defined on that type):
# the values are those of the underlying type
IGNORED_LOGICAL_TYPES = (
    ("string", "x-custom-type"),
    ("long", "date"),
    ("int", "timestamp-millis"),
    ("bytes", "uuid"),
    ("double", "decimal"),
)
# the logical types of the specification and the types they annotate (Avro 1.12),
# for resolving schemas drawn elsewhere too
_SPEC_LOGICAL_ON = {
    "date": {"int"},
    "time-millis": {"int"},
    "time-micros": {"long"},
    "timestamp-millis": {"long"},
    "timestamp-micros": {"long"},
    "timestamp-nanos": {"long"},
    "local-timestamp-millis": {"long"},
    "local-timestamp-micros": {"long"},
    "local-timestamp-nanos": {"long"},
    "uuid": {"string", "fixed"},
    "decimal": {"bytes", "fixed"},
    "big-decimal": {"bytes"},
    "duration": {"fixed"},
}

INT_RANGE = (-(2**31), 2**31 - 1)
LONG_RANGE = (-(2**63), 2**63 - 1)
UTC = datetime.timezone.utc


def max_decimal_precision(size: int) -> int:
    """Digits a two's-complement number of ``size`` bytes always holds (the spec's formula)."""
    if size <= 0:
        return 0
    # floor(log10(2**(8*size - 1) - 1)) in exact integer arithmetic
    return len(str(2 ** (8 * size - 1) - 1)) - 1


# ---------------------------------------------------------------------------
# the resolved form of a schema: what its names and logical types mean
# ---------------------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class Prim:
    name: str
    logical: tuple | None = None  # ("decimal", precision, scale) or (name,)
    raw_logical: str | None = None  # the logicalType text, valid or not (fastavro uses it)


@dataclasses.dataclass(eq=False)
class FixedT:
    full: str
    size: int
    logical: tuple | None = None
    raw_logical: str | None = None


@dataclasses.dataclass(eq=False)
class EnumT:
    full: str
    symbols: tuple
    default: str | None = None


@dataclasses.dataclass(eq=False)
class FieldT:
    name: str
    type: Any
    default: Any  # NO_DEFAULT when none
    order: str = "ascending"


@dataclasses.dataclass(eq=False)
class RecordT:
    full: str
    kind: str = "record"
    fields: list | None = None  # None while the record's fields are being drawn


@dataclasses.dataclass(eq=False)
class ArrayT:
    items: Any


@dataclasses.dataclass(eq=False)
class MapT:
    values: Any


@dataclasses.dataclass(eq=False)
class UnionT:
    branches: list


@dataclasses.dataclass(eq=False)
class Ref:
    full: str


NO_DEFAULT = object()
NAMED = (FixedT, EnumT, RecordT)


def _logical_of(node: dict, base: str, size: int | None) -> tuple | None:
    """The logical type the specification gives the node, or None when it is
    unknown or invalid for it (readers then ignore it)."""
    name = node.get("logicalType")
    if not isinstance(name, str) or base not in _SPEC_LOGICAL_ON.get(name, ()):
        return None
    if name == "uuid" and base == "fixed" and size != 16:
        return None
    if name == "duration" and size != 12:
        return None
    if name != "decimal":
        return (name,)
    precision, scale = node.get("precision"), node.get("scale", 0)
    if type(precision) is not int or type(scale) is not int:
        return None
    if precision <= 0 or not 0 <= scale <= precision:
        return None
    if size is not None and precision > max_decimal_precision(size):
        return None
    return ("decimal", precision, scale)


def namespace_of(full: str) -> str | None:
    return full.rpartition(".")[0] or None


class Resolver:
    """Names resolved as the specification says, into the classes above.

    A name with a dot is a full name; otherwise the namespace is the node's
    ``namespace`` (``""`` is the null namespace) or else the enclosing named
    type's. A reference without a dot is looked up in the enclosing
    namespace. (Java also tries the null namespace after that; schemas drawn
    here never need it, as fastavro does not do it.) A definition met again
    with a name already known is taken as that known type, so a schema can
    be resolved while it is being drawn.
    """

    def __init__(self):
        self.named: dict[str, Any] = {}

    def deref(self, node):
        while isinstance(node, Ref):
            node = self.named[node.full]
        return node

    def full_name(self, node: dict, namespace: str | None) -> str:
        name = node["name"]
        if "." in name:
            return name
        own = node["namespace"] if "namespace" in node else namespace
        return f"{own}.{name}" if own else name

    def reference(self, name: str, namespace: str | None):
        if name in PRIMITIVES:
            return Prim(name)
        if "." not in name and namespace and f"{namespace}.{name}" in self.named:
            return Ref(f"{namespace}.{name}")
        if name in self.named:
            return Ref(name)
        raise KeyError(f"unknown type name {name!r} in namespace {namespace!r}")

    def resolve(self, node: Any, namespace: str | None = None):
        if isinstance(node, str):
            return self.reference(node, namespace)
        if isinstance(node, list):
            return UnionT([self.resolve(branch, namespace) for branch in node])
        kind = node["type"]
        if kind in PRIMITIVES:
            raw = node.get("logicalType")
            return Prim(kind, _logical_of(node, kind, None), raw if isinstance(raw, str) else None)
        if kind == "array":
            return ArrayT(self.resolve(node["items"], namespace))
        if kind == "map":
            return MapT(self.resolve(node["values"], namespace))
        if kind not in ("record", "error", "enum", "fixed"):
            return self.reference(kind, namespace)  # {"type": "some.Name"}
        full = self.full_name(node, namespace)
        if full in self.named:
            return self.named[full]
        if kind == "enum":
            enum = EnumT(full, tuple(node["symbols"]), node.get("default"))
            self.named[full] = enum
            return enum
        if kind == "fixed":
            raw = node.get("logicalType")
            fixed = FixedT(
                full,
                node["size"],
                _logical_of(node, "fixed", node["size"]),
                raw if isinstance(raw, str) else None,
            )
            self.named[full] = fixed
            return fixed
        record = RecordT(full, kind)
        self.named[full] = record  # before the fields: they may refer to it
        inner = namespace_of(full)
        record.fields = [
            FieldT(
                f["name"],
                self.resolve(f["type"], inner),
                f.get("default", NO_DEFAULT),
                f.get("order", "ascending"),
            )
            for f in node["fields"]
        ]
        return record


def resolve(schema: Any) -> tuple[Any, Resolver]:
    resolver = Resolver()
    return resolver.resolve(schema), resolver


def defined_names(schema: Any) -> set[str]:
    """The full names of every named type the schema defines."""
    _, resolver = resolve(schema)
    return set(resolver.named)


# ---------------------------------------------------------------------------
# schemas
# ---------------------------------------------------------------------------

_FIRST = string.ascii_letters + "_"
_REST = _FIRST + string.digits


@st.composite
def avro_names(draw) -> str:
    """A valid Avro name: [A-Za-z_][A-Za-z0-9_]*, short."""
    return draw(st.text(_FIRST, min_size=1, max_size=1)) + draw(st.text(_REST, max_size=5))


def _type_names():
    # readable names most of the time, odd valid ones sometimes
    return st.one_of(
        st.sampled_from(["Rec", "Node", "Item", "Color", "Hash", "Money", "Point"]), avro_names()
    ).filter(lambda n: n not in RESERVED_NAMES)


def _namespaces():
    return st.one_of(
        st.sampled_from(["a", "com.example", "org.acme.v1", "x_1.y_2"]),
        st.lists(avro_names(), min_size=1, max_size=3).map(".".join),
    )


def _json_scalars():
    return st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.text(max_size=6))


def _json_values():
    return st.recursive(
        _json_scalars(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
        ),
        max_leaves=5,
    )


def _latin1_text(min_size=0, max_size=4):
    # the JSON form of bytes: one code point 0-255 per byte
    return st.text(st.characters(min_codepoint=0, max_codepoint=255), min_size=min_size, max_size=max_size)


def _decimal_default(precision: int, size: int | None):
    """A decimal's default: an unscaled value within the precision (a parse
    error otherwise), its two's complement as code points 0-255."""

    def text(unscaled: int) -> str:
        length = size or (unscaled.bit_length() + 8) // 8
        return unscaled.to_bytes(length, "big", signed=True).decode("latin-1")

    return st.integers(-(10**precision) + 1, 10**precision - 1).map(text)


class _Drawer:
    """Draws one schema in document order, keeping what a later part may refer to."""

    def __init__(self, draw):
        self.draw = draw
        self.resolver = Resolver()
        self.open: list[str] = []  # records whose fields are being drawn, outermost first

    # -- bits ------------------------------------------------------------------

    def props(self, node: dict) -> None:
        """Custom properties, sometimes."""
        if self.draw(st.integers(0, 5)) == 0:
            keys = self.draw(
                st.lists(
                    st.sampled_from(["x-meta", "connect.name", "javaType", "owner", "x"]),
                    unique=True,
                    min_size=1,
                    max_size=2,
                )
            )
            for key in keys:
                node[key] = self.draw(_json_values())

    def doc(self, node: dict) -> None:
        if self.draw(st.integers(0, 3)) == 0:
            node["doc"] = self.draw(st.text(max_size=8))

    def name(self, node: dict, namespace: str | None) -> str:
        """Give a new named type a name (plain, with a namespace or dotted), unique."""
        base = self.draw(_type_names())
        form = self.draw(st.sampled_from(["plain", "plain", "namespace", "null-namespace", "dotted"]))
        for attempt in range(100):
            candidate = base if attempt == 0 else f"{base}{attempt}"
            node.pop("namespace", None)
            if form == "plain":
                node["name"] = candidate
            elif form == "namespace":
                node["name"] = candidate
                node["namespace"] = self.draw(_namespaces())
            elif form == "null-namespace":
                node["name"] = candidate
                node["namespace"] = ""
            else:
                node["name"] = f"{self.draw(_namespaces())}.{candidate}"
                if self.draw(st.booleans()):
                    node["namespace"] = self.draw(_namespaces())  # ignored: the name has a dot
            full = self.resolver.full_name(node, namespace)
            if full not in self.resolver.named:
                break
        if self.draw(st.integers(0, 3)) == 0:
            node["aliases"] = self.draw(
                st.lists(
                    st.one_of(avro_names(), st.builds("{}.{}".format, _namespaces(), avro_names())),
                    unique=True,
                    min_size=1,
                    max_size=2,
                )
            )
        return full

    def reference_text(self, full: str, namespace: str | None) -> str | None:
        """How this place may name the type: the short name within the type's own
        namespace, else the full name (None: no way, as the spec has none for
        a type of the null namespace inside another namespace)."""
        target_namespace = namespace_of(full)
        if target_namespace is None:
            return full if namespace is None else None
        short = full.rpartition(".")[2]
        if target_namespace == namespace and self.draw(st.booleans()):
            return short
        return full

    def referable(self, namespace: str | None, exclude: set) -> list[str]:
        return [
            full
            for full, node in self.resolver.named.items()
            if full not in exclude
            and not (isinstance(node, RecordT) and node.fields is None)
            and (namespace_of(full) is not None or namespace is None)
        ]

    # -- types -----------------------------------------------------------------

    def type(self, depth: int, namespace: str | None, used: set | None = None) -> Any:
        """Any type; ``used`` (in a union) holds the keys of earlier branches."""
        in_union = used is not None
        used = used if used is not None else set()
        kinds = ["primitive"] * 4 + ["logical"] * 2 + ["fixed", "enum"]
        if self.referable(namespace, used):
            kinds.append("reference")
        if depth > 0:
            kinds += [k for k in ("array", "map") if k not in used] + ["record"] * 2
            if not in_union:
                kinds.append("union")
        kinds = [k for k in kinds if k != "primitive" or set(PRIMITIVES) - used]
        kinds = [
            k
            for k in kinds
            if k != "logical" or any(base not in used for base, _ in LOGICAL_TYPES + IGNORED_LOGICAL_TYPES)
        ]
        kind = self.draw(st.sampled_from(kinds))
        if kind == "primitive":
            return self.primitive(self.draw(st.sampled_from([p for p in PRIMITIVES if p not in used])))
        if kind == "logical":
            return self.logical(used)
        if kind == "fixed":
            return self.fixed(namespace)
        if kind == "enum":
            return self.enum(namespace)
        if kind == "reference":
            full = self.draw(st.sampled_from(self.referable(namespace, used)))
            return self.reference_text(full, namespace)
        if kind == "array":
            node = {"type": "array", "items": self.type(depth - 1, namespace)}
            self.props(node)
            return node
        if kind == "map":
            node = {"type": "map", "values": self.type(depth - 1, namespace)}
            self.props(node)
            return node
        if kind == "union":
            return self.union(depth, namespace)
        return self.record(depth - 1, namespace)

    def primitive(self, name: str) -> Any:
        form = self.draw(st.integers(0, 5))
        if form == 0:
            return {"type": name}
        if form == 1:
            node = {"type": name}
            self.props(node)
            return node
        return name

    def logical(self, used: set) -> dict:
        choices = [pair for pair in LOGICAL_TYPES if pair[0] not in used]
        ignored = [pair for pair in IGNORED_LOGICAL_TYPES if pair[0] not in used]
        if ignored and (not choices or self.draw(st.integers(0, 7)) == 0):
            choices = ignored
        base, logical = self.draw(st.sampled_from(choices))
        node: dict[str, Any] = {"type": base, "logicalType": logical}
        if logical == "decimal" and base == "bytes":
            node["precision"] = self.draw(st.integers(1, 30))
            scale = self.draw(st.integers(0, node["precision"]))
            if scale or self.draw(st.booleans()):
                node["scale"] = scale
        self.props(node)
        return node

    def fixed(self, namespace: str | None) -> dict:
        node: dict[str, Any] = {"type": "fixed"}
        self.name(node, namespace)
        node["size"] = self.draw(st.integers(0, 16))
        if node["size"] and self.draw(st.integers(0, 3)) == 0:
            node["logicalType"] = "decimal"
            node["precision"] = self.draw(st.integers(1, max_decimal_precision(node["size"])))
            node["scale"] = self.draw(st.integers(0, node["precision"]))
        self.doc(node)
        self.props(node)
        self.resolver.resolve(node, namespace)
        return node

    def enum(self, namespace: str | None) -> dict:
        node: dict[str, Any] = {"type": "enum"}
        self.name(node, namespace)
        node["symbols"] = self.draw(
            st.lists(
                st.one_of(st.sampled_from(["A", "B", "RED", "int", "_x"]), avro_names()),
                unique=True,
                min_size=1,
                max_size=5,
            )
        )
        if self.draw(st.booleans()):
            node["default"] = self.draw(st.sampled_from(node["symbols"]))
        self.doc(node)
        self.props(node)
        self.resolver.resolve(node, namespace)
        return node

    def union(self, depth: int, namespace: str | None) -> list:
        branches: list = []
        used: set = set()
        for _ in range(self.draw(st.integers(1, 4))):
            branch = self.type(depth - 1, namespace, used)
            used.add(self.union_key(branch, namespace))
            branches.append(branch)
        return branches

    def union_key(self, branch: Any, namespace: str | None) -> str:
        """What two branches of a union may not share: the type, or the full name."""
        node = self.resolver.resolve(branch, namespace)
        if isinstance(node, Ref):
            return node.full
        if isinstance(node, NAMED):
            return node.full
        if isinstance(node, Prim):
            return node.name
        return "array" if isinstance(node, ArrayT) else "map"

    def recursive(self, namespace: str | None) -> Any:
        """A use of an enclosing record that data can end: through null or a container."""
        full = self.draw(st.sampled_from(self.open))
        name = self.reference_text(full, namespace)
        if name is None:
            return None
        form = self.draw(st.integers(0, 4))
        if form == 0:
            return ["null", name]
        if form == 1:
            return [name, "null"]
        if form == 2:
            return {"type": "array", "items": name}
        if form == 3:
            return {"type": "map", "values": name}
        return ["null", {"type": "array", "items": name}]

    def record(self, depth: int, namespace: str | None) -> dict:
        kind = "error" if self.draw(st.integers(0, 19)) == 0 else "record"
        node: dict[str, Any] = {"type": kind}
        full = self.name(node, namespace)
        inner = namespace_of(full)
        self.doc(node)
        record = RecordT(full, kind)
        self.resolver.named[full] = record
        self.open.append(full)
        fields: list[dict] = []
        resolved: list[FieldT] = []
        names = self.draw(
            st.lists(
                st.one_of(st.sampled_from(["id", "name", "value", "next", "type", "int"]), avro_names()),
                unique=True,
                max_size=4,
            )
        )
        for field_name in names:
            field_type = None
            if self.draw(st.integers(0, 4)) == 0:
                field_type = self.recursive(inner)
            if field_type is None:
                field_type = self.type(depth, inner)
            field: dict[str, Any] = {"name": field_name, "type": field_type}
            field_node = self.resolver.resolve(field_type, inner)
            if self.draw(st.integers(0, 2)) == 0:
                default = self.json_default(field_node, 2)
                if default is not NO_DEFAULT:
                    field["default"] = default
            self.doc(field)
            if self.draw(st.integers(0, 5)) == 0:
                field["order"] = self.draw(st.sampled_from(["ascending", "descending", "ignore"]))
            if self.draw(st.integers(0, 5)) == 0:
                field["aliases"] = self.draw(st.lists(avro_names(), unique=True, min_size=1, max_size=2))
            self.props(field)
            fields.append(field)
            resolved.append(FieldT(field_name, field_node, field.get("default", NO_DEFAULT)))
        node["fields"] = fields
        self.props(node)
        record.fields = resolved
        self.open.pop()
        return node

    # -- defaults ----------------------------------------------------------------

    def json_default(self, node: Any, depth: int) -> Any:
        """A JSON default valid for the type (a union's: for its first branch), or
        NO_DEFAULT when there is none to give (a record still being drawn)."""
        node = self.resolver.deref(node)
        draw = self.draw
        if isinstance(node, Prim):
            kind = node.name
            if kind == "null":
                return None
            if kind == "boolean":
                return draw(st.booleans())
            if kind in ("int", "long"):
                return draw(st.integers(*(INT_RANGE if kind == "int" else LONG_RANGE)))
            if kind in ("float", "double"):
                # JSON floats: integers are valid too (spec, Java), but fastavro refuses them
                return draw(
                    st.floats(allow_nan=False, allow_infinity=False, width=32 if kind == "float" else 64)
                )
            if kind == "bytes":
                if node.logical and node.logical[0] == "decimal":
                    return draw(_decimal_default(node.logical[1], None))
                return draw(_latin1_text())
            return draw(st.text(max_size=6))
        if isinstance(node, FixedT):
            if node.logical and node.logical[0] == "decimal":
                return draw(_decimal_default(node.logical[1], node.size))
            return draw(_latin1_text(node.size, node.size))
        if isinstance(node, EnumT):
            return draw(st.sampled_from(node.symbols))
        if isinstance(node, ArrayT):
            items = [
                self.json_default(node.items, depth - 1)
                for _ in range(draw(st.integers(0, 2)) if depth > 0 else 0)
            ]
            return [] if NO_DEFAULT in items else items
        if isinstance(node, MapT):
            keys = draw(st.lists(st.text(max_size=3), unique=True, max_size=2)) if depth > 0 else []
            values = {key: self.json_default(node.values, depth - 1) for key in keys}
            return {} if NO_DEFAULT in values.values() else values
        if isinstance(node, UnionT):
            return self.json_default(node.branches[0], depth) if node.branches else NO_DEFAULT
        if isinstance(node, RecordT):
            if node.fields is None or depth <= 0:
                return NO_DEFAULT
            value = {}
            for field in node.fields:
                if field.default is not NO_DEFAULT and draw(st.booleans()):
                    continue  # a record default may leave out fields that have defaults
                item = self.json_default(field.type, depth - 1)
                if item is NO_DEFAULT:
                    return NO_DEFAULT
                value[field.name] = item
            return value
        raise AssertionError(node)


@st.composite
def avro_schemas(draw, max_depth: int = 3, records_only: bool = False) -> Any:
    """A random valid Avro schema as JSON values (dict, list or str).

    ``max_depth`` bounds the nesting of records, arrays, maps and unions;
    ``records_only`` makes the top level a record (as registries and
    container files mostly have).
    """
    drawer = _Drawer(draw)
    if records_only or draw(st.integers(0, 2)) > 0:
        return drawer.record(max_depth, None)
    return drawer.type(max_depth, None)


def record_schemas(max_depth: int = 3):
    return avro_schemas(max_depth=max_depth, records_only=True)


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------

_MIN_TS = datetime.datetime(1, 1, 1)
_MAX_TS = datetime.datetime(9999, 12, 31, 23, 59, 59, 999999)
_MAP_KEYS = st.text(max_size=5).filter(lambda key: key != "-type")


def fastavro_logical(node) -> tuple | None:
    """The node's logical type if fastavro 1.13.1 converts it (else its values
    are the underlying type's, in fastavro: timestamp-nanos, big-decimal,
    duration, uuid on fixed)."""
    if node.logical is None:
        return None
    base = "fixed" if isinstance(node, FixedT) else node.name
    return node.logical if f"{base}-{node.logical[0]}" in LOGICAL_READERS else None


def _millis(value):
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def _decimals(precision: int, scale: int):
    """Decimals of at most ``precision`` digits with exponent -scale: as fastavro reads them."""
    bound = 10**precision - 1
    return st.integers(-bound, bound).map(
        lambda unscaled: decimal.Decimal(
            (int(unscaled < 0), tuple(int(d) for d in str(abs(unscaled))), -scale)
        )
    )


def _logical_values(logical: tuple):
    name = logical[0]
    if name == "decimal":
        return _decimals(logical[1], logical[2])
    if name == "uuid":
        return st.uuids()
    if name == "date":
        return st.dates()
    if name == "time-millis":
        return st.times().map(_millis)
    if name == "time-micros":
        return st.times()
    if name == "timestamp-millis":
        return st.datetimes(_MIN_TS, _MAX_TS, timezones=st.just(UTC)).map(_millis)
    if name == "timestamp-micros":
        return st.datetimes(_MIN_TS, _MAX_TS, timezones=st.just(UTC))
    if name == "local-timestamp-millis":
        return st.datetimes(_MIN_TS, _MAX_TS).map(_millis)
    if name == "local-timestamp-micros":
        return st.datetimes(_MIN_TS, _MAX_TS)
    raise AssertionError(f"no values for the logical type {name}")


def _primitive_values(name: str):
    return {
        "null": st.none(),
        "boolean": st.booleans(),
        "int": st.integers(*INT_RANGE),
        "long": st.one_of(st.integers(*LONG_RANGE), st.integers(-1000, 1000)),
        "float": st.floats(width=32),
        "double": st.floats(),
        "bytes": st.binary(max_size=8),
        "string": st.text(max_size=8),
    }[name]


class _FastavroUnions:
    """Which branch fastavro 1.13.1 writes a value as, mirrored from its
    validation (fastavro/_validation_py.py) and ``write_union``
    (fastavro/_write_py.py), so that drawn union values read back as drawn.

    fastavro takes the first branch that validates the value, except that a
    float goes on to a later double, and that among records it takes the one
    sharing the most field names with the dict. Logical types convert the
    value first with fastavro's own converters, which may raise (then
    fastavro cannot write the value at all).
    """

    def __init__(self, resolver: Resolver):
        self.resolver = resolver

    def accepts(self, value, node) -> bool:
        node = self.resolver.deref(node)
        if isinstance(node, UnionT):
            if isinstance(value, tuple):
                name, value = value
                for branch in node.branches:
                    branch_node = self.resolver.deref(branch)
                    if isinstance(branch_node, RecordT) and branch_node.full == name:
                        return self.accepts(value, branch_node)
                return False
            return any(self.accepts(value, branch) for branch in node.branches)
        raw = getattr(node, "raw_logical", None)
        if raw is not None:
            base = "fixed" if isinstance(node, FixedT) else node.name
            prepare = LOGICAL_WRITERS.get(f"{base}-{raw}")
            if prepare is not None:
                decimal_ = node.logical if node.logical and node.logical[0] == "decimal" else None
                value = prepare(
                    value,
                    {
                        "precision": decimal_[1] if decimal_ else 0,
                        "scale": decimal_[2] if decimal_ else 0,
                        "size": getattr(node, "size", None),
                    },
                )
        if isinstance(node, Prim):
            kind = node.name
            if kind == "null":
                return value is None
            if kind == "boolean":
                return isinstance(value, bool)
            if kind == "string":
                return isinstance(value, str)
            if kind == "bytes":
                return isinstance(value, (bytes, bytearray))
            if kind in ("int", "long"):
                low, high = INT_RANGE if kind == "int" else LONG_RANGE
                return (
                    isinstance(value, numbers.Integral)
                    and not isinstance(value, bool)
                    and low <= value <= high
                )
            return isinstance(value, (int, float, numbers.Real)) and not isinstance(value, bool)
        if isinstance(node, FixedT):
            return isinstance(value, (bytes, bytearray)) and len(value) == node.size
        if isinstance(node, EnumT):
            return value in node.symbols
        if isinstance(node, ArrayT):
            return (
                isinstance(value, (Sequence, array.array))
                and not isinstance(value, str)
                and all(self.accepts(item, node.items) for item in value)
            )
        if isinstance(node, MapT):
            return (
                isinstance(value, Mapping)
                and all(isinstance(key, str) for key in value)
                and all(self.accepts(item, node.values) for item in value.values())
            )
        if isinstance(node, RecordT):
            return (
                isinstance(value, Mapping)
                and not ("-type" in value and value["-type"] != node.full)
                and all(
                    self.accepts(value.get(f.name, None if f.default is NO_DEFAULT else f.default), f.type)
                    for f in node.fields
                )
            )
        raise AssertionError(node)

    def branch(self, value, union: UnionT) -> int:
        """The index fastavro writes ``value`` as (-1: none); may raise as fastavro does."""
        if isinstance(value, tuple):
            name = value[0]
            for index, branch in enumerate(union.branches):
                node = self.resolver.deref(branch)
                if isinstance(node, NAMED) and node.full == name:
                    return index
            return -1
        best, most_fields, could_be_float = -1, -1, False
        for index, branch in enumerate(union.branches):
            node = self.resolver.deref(branch)
            if could_be_float:
                if isinstance(node, Prim) and node.name == "double":
                    return index
                continue
            if not self.accepts(value, node):
                continue
            if isinstance(node, RecordT) and node.kind == "record":
                shared = len({f.name for f in node.fields} & set(value))
                if shared > most_fields:
                    best, most_fields = index, shared
            elif isinstance(node, Prim) and node.name == "float":
                best, could_be_float = index, True
            else:
                return index
        return best


def _reads_back_same(value, node) -> bool:
    """Whether ``value`` drawn for one branch reads back equal (and of the same
    type) when written as this other branch."""
    if isinstance(node, Prim) and fastavro_logical(node) is None:
        if node.name in ("int", "long"):
            return isinstance(value, int) and not isinstance(value, bool)
        if node.name == "double":
            return isinstance(value, float)
        if node.name == "string":
            return isinstance(value, str)
        if node.name == "bytes":
            return isinstance(value, bytes)
    if isinstance(node, FixedT) and fastavro_logical(node) is None:
        return isinstance(value, bytes) and len(value) == node.size
    if isinstance(node, EnumT):
        return isinstance(value, str) and value in node.symbols
    return False


class _Values:
    def __init__(self, resolver: Resolver, max_depth: int):
        self.resolver = resolver
        self.unions = _FastavroUnions(resolver)
        self.max_depth = max_depth

    def value(self, draw, node, depth: int):
        if depth < -40:
            # a record reached again through unions without null, deeper and
            # deeper: not a value worth drawing (and Python's stack is finite)
            reject()
        node = self.resolver.deref(node)
        if isinstance(node, Prim):
            if fastavro_logical(node) is not None:
                return draw(_logical_values(node.logical))
            return draw(_primitive_values(node.name))
        if isinstance(node, FixedT):
            if fastavro_logical(node) is not None:  # decimal
                return draw(_decimals(node.logical[1], node.logical[2]))
            return draw(st.binary(min_size=node.size, max_size=node.size))
        if isinstance(node, EnumT):
            return draw(st.sampled_from(node.symbols))
        if isinstance(node, ArrayT):
            count = draw(st.integers(0, 3)) if depth > 0 else 0
            return [self.value(draw, node.items, depth - 1) for _ in range(count)]
        if isinstance(node, MapT):
            keys = draw(st.lists(_MAP_KEYS, unique=True, max_size=3)) if depth > 0 else []
            return {key: self.value(draw, node.values, depth - 1) for key in keys}
        if isinstance(node, RecordT):
            return {f.name: self.value(draw, f.type, depth - 1) for f in node.fields}
        if isinstance(node, UnionT):
            return self.union_value(draw, node, depth)
        raise AssertionError(node)

    def union_value(self, draw, union: UnionT, depth: int):
        if not union.branches:
            reject()  # an empty union has no values
        nulls = [
            index
            for index, branch in enumerate(union.branches)
            if isinstance(self.resolver.deref(branch), Prim) and self.resolver.deref(branch).name == "null"
        ]
        if depth <= 0 and nulls:
            return None  # ends recursion (and keeps values small)
        for index in draw(st.permutations(range(len(union.branches)))):
            node = self.resolver.deref(union.branches[index])
            value = self.value(draw, node, depth)
            try:
                chosen = self.unions.branch(value, union)
            except (ValueError, TypeError, ArithmeticError):
                continue  # fastavro cannot write this value in this union
            if chosen == index:
                return value
            if isinstance(node, RecordT):
                # fastavro would take another branch: name the one meant
                if draw(st.booleans()):
                    marked = {**value, "-type": node.full}
                    try:
                        if self.unions.branch(marked, union) == index:
                            return marked
                    except (ValueError, TypeError, ArithmeticError):
                        pass
                return (node.full, value)
            if chosen >= 0 and _reads_back_same(value, self.resolver.deref(union.branches[chosen])):
                return value
        reject()


@st.composite
def datums(draw, schema: Any, max_depth: int = 3) -> Any:
    """A value for ``schema`` (JSON values or JSON text) in fastavro's conventions.

    ``max_depth`` bounds containers and recursion: beyond it arrays and maps
    are empty and unions with null are null.
    """
    if isinstance(schema, str) and schema.strip()[:1] in ("{", "[", '"'):
        schema = json.loads(schema)
    root, resolver = resolve(schema)
    return _Values(resolver, max_depth).value(draw, root, max_depth)


def in_tuple_notation(datum: Any) -> Any:
    """The datum with each record that a ``"-type"`` key names written in
    tuple notation instead, ``(name, record)``: the same branches. fastavro
    writes a ``"-type"`` mark only in the union it writes, not inside the
    value of another union it validates (a record of an array in
    ``["null", {"type": "array", ...}]``), where the tuple is its form."""
    if isinstance(datum, tuple):
        return (datum[0], in_tuple_notation(datum[1]))
    if isinstance(datum, dict):
        inner = {key: in_tuple_notation(value) for key, value in datum.items() if key != "-type"}
        return (datum["-type"], inner) if "-type" in datum else inner
    if isinstance(datum, list):
        return [in_tuple_notation(item) for item in datum]
    return datum


def as_read(datum: Any) -> Any:
    """The value reading the datum's encoding gives back: the union marks of
    :func:`datums` (tuple notation, ``"-type"``) removed."""
    if isinstance(datum, tuple):
        return as_read(datum[1])
    if isinstance(datum, dict):
        return {key: as_read(value) for key, value in datum.items() if key != "-type"}
    if isinstance(datum, list):
        return [as_read(item) for item in datum]
    return datum


def assert_same(actual: Any, expected: Any, path: str = "$") -> None:
    """Equality that also checks exact types, dict key order, decimal exponents,
    time zones, NaN and the sign of zero."""
    assert type(actual) is type(expected), (
        f"{path}: {type(actual).__name__} {actual!r} != {type(expected).__name__} {expected!r}"
    )
    if isinstance(expected, dict):
        assert list(actual) == list(expected), f"{path}: keys {list(actual)} != {list(expected)}"
        for key in expected:
            assert_same(actual[key], expected[key], f"{path}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected), f"{path}: length {len(actual)} != {len(expected)}"
        for index, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{path}[{index}]")
    elif isinstance(expected, float):
        if math.isnan(expected):
            assert math.isnan(actual), f"{path}: {actual!r} != nan"
        else:
            assert actual == expected and math.copysign(1, actual) == math.copysign(1, expected), (
                f"{path}: {actual!r} != {expected!r}"
            )
    elif isinstance(expected, decimal.Decimal):
        assert actual.as_tuple() == expected.as_tuple(), f"{path}: {actual!r} != {expected!r}"
    elif isinstance(expected, (datetime.datetime, datetime.time)):
        assert actual == expected and actual.tzinfo == expected.tzinfo, f"{path}: {actual!r} != {expected!r}"
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"
