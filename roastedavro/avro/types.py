"""Avro types as plain, immutable values: the model every part of roastedavro shares.

A parsed schema is a tree of these types. A named type (record, error, enum,
fixed) is defined once, where it first appears; every later use of it,
including a record's use of itself, is a ``NamedRef`` to its full name,
as in the schema's JSON. ``Schema`` holds the tree with a table of the
named definitions, so a reference is one dictionary lookup and the tree has no
cycles: the types compare, hash and print like any value.

The schema's text forms are written here too: its full JSON
(``Schema.to_dict``) and the specification's "Parsing Canonical Form for
Schemas", as Java's ``SchemaNormalization.toParsingForm`` writes it: only the
attributes that matter for reading (type, name, fields, symbols, items,
values, size), full names, no whitespace.

Nothing here knows about marshmallow, Cython or the wire format.
"""

from __future__ import annotations

from roastedavro._record import field as _field, record
import json
from typing import Any, Iterator, Mapping, Union as _Union, cast

from roastedavro.avro.canonical import fingerprint

PRIMITIVE_TYPES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
NAMED_KINDS = ("record", "error", "enum", "fixed")
ORDERS = ("ascending", "descending", "ignore")


class _NoDefault:
    """The default of a field that has none (``None`` is the JSON null default)."""

    _instance = None

    def __new__(cls) -> _NoDefault:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __reduce__(self) -> tuple[type[_NoDefault], tuple[()]]:
        return (_NoDefault, ())


NO_DEFAULT: Any = _NoDefault()


def _frozen(value: Any) -> Any:
    """A JSON value as an immutable, hashable one (dicts become sorted item tuples)."""
    if isinstance(value, dict):
        return ("{}",) + tuple(sorted((key, _frozen(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("[]",) + tuple(_frozen(item) for item in value)
    return value


@record(frozen=True)
class Logical:
    """A logical type annotation of a type that is valid for it.

    ``precision`` and ``scale`` are set for ``decimal`` only. A logicalType
    the specification does not define, or one that is invalid for its type,
    is not a ``Logical``: it stays among the type's properties, and values
    are those of the underlying type (the specification's rule).
    """

    name: str
    precision: int | None = None
    scale: int | None = None


@record(frozen=True)
class AvroType:
    """Base of every Avro type.

    ``props`` are the properties the schema gives the type beyond the ones
    the specification defines for it, in their order (a logicalType that is
    not understood is one of them).
    """

    @property
    def type_name(self) -> str:
        """The type's name in a schema: "long", "record", "array", ..."""
        raise NotImplementedError

    @property
    def props_dict(self) -> dict:
        return dict(self.props)  # type: ignore[attr-defined]


def _props_field() -> Any:
    return _field(default=(), compare=True, hash=False, repr=False)


@record(frozen=True)
class Primitive(AvroType):
    """A primitive type (null, boolean, int, long, float, double, bytes,
    string), with its logical type where it has a valid one."""

    name: str
    logical: Logical | None = None
    props: tuple[tuple[str, Any], ...] = _props_field()

    def __post_init__(self) -> None:
        if self.name not in PRIMITIVE_TYPES:
            raise ValueError(f"{self.name!r} is not an Avro primitive type")

    @property
    def type_name(self) -> str:
        return self.name

    def __hash__(self) -> int:
        return hash((self.name, self.logical, _frozen(dict(self.props))))


@record(frozen=True)
class NamedType(AvroType):
    """Record, error, enum or fixed: ``name`` is the full name."""

    name: str

    @property
    def namespace(self) -> str | None:
        namespace, _, _ = self.name.rpartition(".")
        return namespace or None

    @property
    def simple_name(self) -> str:
        return self.name.rpartition(".")[2]


@record(frozen=True)
class Fixed(NamedType):
    """A named fixed-size byte string (``size`` bytes), with its logical
    type where it has a valid one (decimal, duration, uuid)."""

    size: int = 0
    aliases: tuple[str, ...] = ()
    logical: Logical | None = None
    doc: str | None = None
    props: tuple[tuple[str, Any], ...] = _props_field()

    @property
    def type_name(self) -> str:
        return "fixed"

    def __hash__(self) -> int:
        return hash(("fixed", self.name, self.size, self.logical))


@record(frozen=True)
class Enum(NamedType):
    """A named enum: its symbols, in order (their index is what is written),
    and the default a reader uses for a symbol it does not know."""

    symbols: tuple[str, ...] = ()
    #: the symbol a reader uses for a symbol it does not know (None: no default)
    default: str | None = None
    aliases: tuple[str, ...] = ()
    doc: str | None = None
    props: tuple[tuple[str, Any], ...] = _props_field()

    @property
    def type_name(self) -> str:
        return "enum"

    def __hash__(self) -> int:
        return hash(("enum", self.name, self.symbols, self.default))


@record(frozen=True)
class Field:
    """A record's field: its name, type, default (``NO_DEFAULT`` when it has
    none), order, aliases, doc and other properties."""

    name: str
    type: AvroType
    #: the default as a JSON value (NO_DEFAULT when the field has none)
    default: Any = _field(default=NO_DEFAULT, hash=False)
    aliases: tuple[str, ...] = ()
    doc: str | None = None
    order: str = "ascending"
    props: tuple[tuple[str, Any], ...] = _props_field()

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


@record(frozen=True)
class Record(NamedType):
    """A named record: its fields, in the order they are written."""

    fields: tuple[Field, ...] = ()
    aliases: tuple[str, ...] = ()
    doc: str | None = None
    #: "record", or "error" (a record in protocols)
    kind: str = "record"
    props: tuple[tuple[str, Any], ...] = _props_field()

    @property
    def type_name(self) -> str:
        return self.kind

    def field(self, name: str) -> Field | None:
        for field in self.fields:
            if field.name == name:
                return field
        return None

    def __hash__(self) -> int:
        return hash((self.kind, self.name, self.fields))


@record(frozen=True)
class Array(AvroType):
    """An array of ``items``."""

    items: AvroType
    props: tuple[tuple[str, Any], ...] = _props_field()

    @property
    def type_name(self) -> str:
        return "array"

    def __hash__(self) -> int:
        return hash(("array", self.items))


@record(frozen=True)
class Map(AvroType):
    """A map of string keys to ``values``."""

    values: AvroType
    props: tuple[tuple[str, Any], ...] = _props_field()

    @property
    def type_name(self) -> str:
        return "map"

    def __hash__(self) -> int:
        return hash(("map", self.values))


@record(frozen=True)
class Union(AvroType):
    """A union of ``branches``; the index of the branch is what is written."""

    branches: tuple[AvroType, ...]

    @property
    def type_name(self) -> str:
        return "union"


@record(frozen=True)
class NamedRef(AvroType):
    """A use of a named type defined elsewhere in the schema (or enclosing it:
    recursion). ``name`` is the full name; ``Schema.deref`` finds it."""

    name: str

    @property
    def type_name(self) -> str:
        return self.name


def describe(avro: AvroType) -> str:
    """A short text for a type: "long", "array<shop.Line>", "null | string"."""
    if isinstance(avro, (NamedRef, Record, Enum)):
        return avro.name
    if isinstance(avro, Fixed):
        return _with_logical(f"{avro.name} fixed({avro.size})", avro.logical)
    if isinstance(avro, Array):
        return f"array<{describe(avro.items)}>"
    if isinstance(avro, Map):
        return f"map<{describe(avro.values)}>"
    if isinstance(avro, Union):
        return " | ".join(describe(branch) for branch in avro.branches)
    # the one type left: a primitive
    return _with_logical(avro.type_name, cast(Primitive, avro).logical)


def _with_logical(text: str, logical: Logical | None) -> str:
    if logical is None:
        return text
    if logical.name == "decimal":
        return f"{text} decimal({logical.precision}, {logical.scale})"
    return f"{text} {logical.name}"


AnyType = _Union[Primitive, Fixed, Enum, Record, Array, Map, Union, NamedRef]


class Schema:
    """A parsed Avro schema: the root type and the named types it defines.

    Build one with ``roastedavro.avro.parse_schema`` (or ``load_schema``
    for ``.avsc`` files). Equal when their Parsing Canonical Forms are equal
    and their full JSON is equal.
    """

    __slots__ = ("root", "named", "dialect", "_canonical", "_fingerprints", "_json")

    def __init__(self, root: AvroType, named: Mapping[str, NamedType], dialect: str = "avro"):
        self.root = root
        #: full name -> the definition, for every named type the root uses
        self.named: Mapping[str, NamedType] = dict(named)
        #: the rules it was parsed by: "avro" (the specification's), or
        #: "fastavro" (fastavro's, for the drop-in: see parse_schema), which
        #: schema resolution follows too when this is the reader's schema
        self.dialect = dialect
        self._canonical: str | None = None
        self._fingerprints: dict[str, Any] = {}
        self._json: str | None = None

    def deref(self, avro: AvroType) -> AvroType:
        """The definition behind a reference; any other type as it is."""
        if isinstance(avro, NamedRef):
            return self.named[avro.name]
        return avro

    def walk(self) -> Iterator[AvroType]:
        """Every type of the tree once, named definitions included (references not followed)."""
        stack = [self.root]
        while stack:
            avro = stack.pop()
            yield avro
            if isinstance(avro, Record):
                stack.extend(field.type for field in reversed(avro.fields))
            elif isinstance(avro, Array):
                stack.append(avro.items)
            elif isinstance(avro, Map):
                stack.append(avro.values)
            elif isinstance(avro, Union):
                stack.extend(reversed(avro.branches))

    # -- text forms (below; fingerprints: canonical.py) ---------------------

    def canonical_form(self) -> str:
        """The Parsing Canonical Form, as Java's SchemaNormalization.toParsingForm writes it."""
        if self._canonical is None:
            self._canonical = parsing_canonical_form(self)
        return self._canonical

    def fingerprint(self, algorithm: str = "CRC-64-AVRO") -> Any:
        """The fingerprint of the canonical form: an int for CRC-64-AVRO
        (as Java's ``fingerprint64``, unsigned), bytes for MD5 and SHA-256."""
        known = self._fingerprints.get(algorithm)
        if known is None:
            known = self._fingerprints[algorithm] = fingerprint(self.canonical_form(), algorithm)
        return known

    @property
    def fingerprint_hex(self) -> str:
        """The CRC-64-AVRO fingerprint as 16 hex digits (little-endian bytes, as
        single-object encoding writes them)."""
        return self.fingerprint().to_bytes(8, "little").hex()

    def to_dict(self) -> Any:
        """The schema as JSON values (dict, list or str), every property kept."""
        return to_json_value(self)

    def to_json(self) -> str:
        """The schema as compact JSON text, every property kept."""
        if self._json is None:
            self._json = json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False)
        return self._json

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Schema):
            return NotImplemented
        return self.root == other.root and self.named == other.named

    def __hash__(self) -> int:
        return hash(self.canonical_form())

    def __repr__(self) -> str:
        text = self.to_json()
        return f"Schema({text if len(text) < 200 else text[:197] + '...'})"

    # pickled as its JSON and parsed again (roastedavro.avro.parse registers it)


# -- text forms ---------------------------------------------------------------


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def parsing_canonical_form(schema: Schema) -> str:
    """The specification's Parsing Canonical Form of ``schema``: what decides
    its bytes, in one normal text (the same as ``Schema.canonical_form()``)."""
    out: list[str] = []
    seen: set[str] = set()

    def write(avro: AvroType) -> None:
        if isinstance(avro, NamedRef):
            if avro.name in seen:
                out.append(_quote(avro.name))
                return
            avro = schema.named[avro.name]
        if isinstance(avro, Primitive):
            out.append(_quote(avro.name))
        elif isinstance(avro, NamedType):
            if avro.name in seen:
                out.append(_quote(avro.name))
                return
            seen.add(avro.name)
            out.append('{"name":' + _quote(avro.name))
            if isinstance(avro, Record):
                # an error is a record to a reader
                out.append(',"type":"record","fields":[')
                for number, field in enumerate(avro.fields):
                    if number:
                        out.append(",")
                    out.append('{"name":' + _quote(field.name) + ',"type":')
                    write(field.type)
                    out.append("}")
                out.append("]}")
            elif isinstance(avro, Enum):
                out.append(
                    ',"type":"enum","symbols":[' + ",".join(_quote(symbol) for symbol in avro.symbols) + "]}"
                )
            elif isinstance(avro, Fixed):
                out.append(f',"type":"fixed","size":{avro.size}}}')
        elif isinstance(avro, Array):
            out.append('{"type":"array","items":')
            write(avro.items)
            out.append("}")
        elif isinstance(avro, Map):
            out.append('{"type":"map","values":')
            write(avro.values)
            out.append("}")
        elif isinstance(avro, Union):
            out.append("[")
            for number, branch in enumerate(avro.branches):
                if number:
                    out.append(",")
                write(branch)
            out.append("]")
        else:  # pragma: no cover - the model has no other types
            raise TypeError(f"not an Avro type: {avro!r}")

    write(schema.root)
    return "".join(out)


def to_json_value(schema: Schema) -> Any:
    """The full schema as JSON values: every attribute and property kept, each
    named type defined once (where it first appears) and named afterwards;
    names relative to the enclosing namespace, as Java's ``Schema.toString``."""
    seen: set[str] = set()

    def logical(avro: Primitive | Fixed, node: dict) -> None:
        if avro.logical is not None:
            node["logicalType"] = avro.logical.name
            if avro.logical.precision is not None:
                node["precision"] = avro.logical.precision
                node["scale"] = avro.logical.scale

    def name_for(full: str, enclosing: str | None) -> str:
        namespace, _, name = full.rpartition(".")
        return name if (namespace or None) == enclosing else full

    def convert(avro: AvroType, enclosing: str | None) -> Any:
        if isinstance(avro, NamedRef):
            if avro.name in seen:
                return name_for(avro.name, enclosing)
            avro = schema.named[avro.name]
        if isinstance(avro, Primitive):
            if avro.logical is None and not avro.props:
                return avro.name
            node: dict[str, Any] = {"type": avro.name}
            logical(avro, node)
            node.update(avro.props)
            return node
        if isinstance(avro, NamedType):
            if avro.name in seen:
                return name_for(avro.name, enclosing)
            seen.add(avro.name)
            namespace, _, name = avro.name.rpartition(".")
            node = {"type": avro.type_name, "name": name}
            if (namespace or None) != enclosing:
                node["namespace"] = namespace
            own = namespace or None
            if avro.doc is not None:  # type: ignore[attr-defined]
                node["doc"] = avro.doc  # type: ignore[attr-defined]
            if isinstance(avro, Record):
                fields = []
                for field in avro.fields:
                    item: dict[str, Any] = {"name": field.name, "type": convert(field.type, own)}
                    if field.doc is not None:
                        item["doc"] = field.doc
                    if field.has_default:
                        item["default"] = field.default
                    if field.order != "ascending":
                        item["order"] = field.order
                    if field.aliases:
                        item["aliases"] = list(field.aliases)
                    item.update(field.props)
                    fields.append(item)
                node["fields"] = fields
            elif isinstance(avro, Enum):
                node["symbols"] = list(avro.symbols)
                if avro.default is not None:
                    node["default"] = avro.default
            elif isinstance(avro, Fixed):
                node["size"] = avro.size
                logical(avro, node)
            aliases = avro.aliases  # type: ignore[attr-defined]
            if aliases:
                node["aliases"] = [name_for(alias, own) for alias in aliases]
            node.update(avro.props)  # type: ignore[attr-defined]
            return node
        if isinstance(avro, Array):
            return {"type": "array", "items": convert(avro.items, enclosing), **dict(avro.props)}
        if isinstance(avro, Map):
            return {"type": "map", "values": convert(avro.values, enclosing), **dict(avro.props)}
        if isinstance(avro, Union):
            return [convert(branch, enclosing) for branch in avro.branches]
        raise TypeError(f"not an Avro type: {avro!r}")  # pragma: no cover

    return convert(schema.root, None)
