"""Avro schemas from JSON text, dicts and ``.avsc`` files into the model of types.py.

One parser for every front end. It follows the specification, and Java's
``Schema.Parser`` (the reference implementation) where the specification is
silent: names and namespaces, duplicate and unknown names, unions, defaults
checked against their types, logical types ignored when invalid. Every
refusal is a ``SchemaError`` naming where in the schema it is and the
rule it breaks.
"""

from __future__ import annotations

import copyreg
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, TypeVar

from roastedavro.avro.types import (
    NAMED_KINDS,
    NO_DEFAULT,
    ORDERS,
    PRIMITIVE_TYPES,
    Array,
    AvroType,
    Enum,
    Field,
    Fixed,
    Logical,
    Map,
    NamedRef,
    NamedType,
    Primitive,
    Record,
    Schema,
    Union,
)
from roastedavro.errors import SchemaError

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_Named = TypeVar("_Named", bound=NamedType)
NAME_RULE = "letters, digits and _, not starting with a digit"

# the attributes the specification defines per kind of type; any other is a
# custom property, kept in order
_OWN_KEYS = {
    "record": {"type", "name", "namespace", "fields", "doc", "aliases"},
    "enum": {"type", "name", "namespace", "symbols", "doc", "aliases", "default"},
    "fixed": {"type", "name", "namespace", "size", "doc", "aliases"},
    "array": {"type", "items"},
    "map": {"type", "values"},
    "primitive": {"type"},
}
_FIELD_KEYS = {"name", "type", "default", "doc", "aliases", "order"}

# the underlying types each logical type annotates (fixed ones need a size)
_LOGICAL_ON = {
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
#: the logical types fastavro 1.13 converts (its LOGICAL_READERS and
#: LOGICAL_WRITERS, by underlying type): the fastavro dialect keeps only
#: these, and reads and writes the others (timestamp-nanos,
#: local-timestamp-nanos, uuid on fixed, big-decimal, duration) as their
#: underlying type's values, as fastavro does
FASTAVRO_LOGICAL = frozenset(
    [
        ("int", "date"),
        ("int", "time-millis"),
        ("long", "time-micros"),
        ("long", "timestamp-millis"),
        ("long", "timestamp-micros"),
        ("long", "local-timestamp-millis"),
        ("long", "local-timestamp-micros"),
        ("bytes", "decimal"),
        ("fixed", "decimal"),
        ("string", "uuid"),
    ]
)
#: types nested in one another (records, arrays, maps, unions, fields' types)
MAX_SCHEMA_DEPTH = 200
_INT_RANGE = (-(2**31), 2**31 - 1)
_LONG_RANGE = (-(2**63), 2**63 - 1)


#: the rule sets parse_schema knows (see its ``dialect``)
DIALECTS = ("avro", "fastavro")


def parse_schema(
    source: Any, named: Mapping[str, NamedType] | None = None, *, validate: bool = True, dialect: str = "avro"
) -> Schema:
    """A ``Schema`` from a dict, list, JSON text, type name or Schema.

    ``named`` are named types defined elsewhere (other files) that this
    schema may use by name. ``validate=False`` accepts names outside the
    specification's grammar and defaults that do not match their types, as
    Java reads the schemas in container files' headers (older writers, e.g.
    Java's reflect data, wrote names with ``$``); a float or double default
    may be a string Python's ``float`` reads (``"NaN"``, ``"Infinity"``:
    JSON has no such numbers); a default that cannot be written as a value
    of its type is kept in the schema's JSON (among the field's properties)
    but is no default to the codecs: writing a record without that field,
    or reading data that lacks it, is an error then.

    ``dialect="fastavro"`` (off by default; the fastavro drop-in's) reads a
    schema as fastavro 1.13 accepts it, where it accepts more than the
    specification: names, namespaces and aliases of named types may be any
    strings (Java reflect names such as ``org.apache.avro.mapred.TestReflectJob$``,
    aliases such as ``user-v1``), even a primitive type's name; field names
    any strings (``timestamp-millis``, the hex digests of
    ``fastavro.utils.anonymize_schema``), two fields may share a name;
    ``"aliases"`` may be a single string; a record without ``"fields"`` has
    none; ``"order"`` any value (kept as a property); a union may hold two
    branches of one type (not a union directly, which fastavro takes too:
    roastedavro's codecs do not read one); defaults are as with
    ``validate=False`` (fastavro writes ``"nan"`` for a float as NaN). Enum
    symbols follow the specification, as fastavro checks them. The schema
    remembers its dialect (``Schema.dialect``): read as the reader's schema,
    data is resolved by fastavro's rules where they are stricter (see
    roastedavro.avro.resolve). Names reach generated code only as checked
    identifiers and literals, whatever their text (see roastedavro.codetext).
    """
    if dialect not in DIALECTS:
        raise ValueError(f"dialect must be one of {', '.join(DIALECTS)}, not {dialect!r}")
    if isinstance(source, Schema):
        return source
    if isinstance(source, (os.PathLike,)):
        return load_schema(source)
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source).decode("utf-8")
    if isinstance(source, str):
        source = _json_or_name(source)
    parser = _Parser(named or {}, validate, dialect)
    root = parser.parse(source, None, "")
    return Schema(root, parser.named, dialect)


def _schema_from_json(text: str, dialect: str = "avro") -> Schema:
    return parse_schema(text, dialect=dialect)


def _reduce_schema(schema: Schema) -> tuple[Any, tuple[str, ...]]:
    if schema.dialect != "avro":
        return (_schema_from_json, (schema.to_json(), schema.dialect))
    return (_schema_from_json, (schema.to_json(),))


# a Schema pickles (and copies) as its JSON and is parsed again; registered
# here, where it is parsed, so that the model imports no parser
copyreg.pickle(Schema, _reduce_schema)


def parse_schemas(sources: Iterable[Any]) -> list[Schema]:
    """Several schemas whose named types may refer to each other, in any order.

    Each schema may use the named types the others define; a schema whose
    names are not known yet is tried again after the others.
    """
    pending = [(number, _json_or_name(s) if isinstance(s, str) else s) for number, s in enumerate(sources)]
    named: dict[str, NamedType] = {}
    results: dict[int, Schema] = {}
    while pending:
        waiting, last_error = [], None
        for number, source in pending:
            try:
                schema = parse_schema(source, named)
            except _UnknownName as error:
                waiting.append((number, source))
                last_error = error
                continue
            _add_named(named, schema, f"schema {number}")
            results[number] = schema
        if len(waiting) == len(pending):
            raise SchemaError(last_error.reason, last_error.path)  # type: ignore[union-attr]
        pending = waiting
    return [results[number] for number in sorted(results)]


def load_schema(path: str | os.PathLike, named: Mapping[str, NamedType] | None = None) -> Schema:
    """The schema in an ``.avsc`` file.

    A name it uses that no earlier file defined is looked for in
    ``<folder>/<full name>.avsc`` (as fastavro's ``load_schema`` does), and
    that file is loaded first.
    """
    known: dict[str, NamedType] = dict(named or {})
    return _load(Path(path), known, set())


def _load(path: Path, known: dict[str, NamedType], loading: set[Path]) -> Schema:
    path = path.resolve()
    if path in loading:
        raise SchemaError(f"{path.name} refers back to itself through other files", str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise SchemaError(f"cannot read the schema file: {error.strerror or error}", str(path)) from None
    source = _json_or_name(text, where=str(path))
    while True:
        try:
            schema = parse_schema(source, known)
        except _UnknownName as unknown:
            other = path.parent / f"{unknown.name}.avsc"
            if not other.is_file():
                raise SchemaError(
                    f"{unknown.reason}, and there is no file {other.name} next to {path.name}", unknown.path
                ) from None
            loading.add(path)
            try:
                _add_named(known, _load(other, known, loading), other.name)
            finally:
                loading.discard(path)
            continue
        _add_named(known, schema, path.name)
        return schema


def _add_named(known: dict[str, NamedType], schema: Schema, where: str) -> None:
    for name, definition in schema.named.items():
        previous = known.get(name)
        if previous is not None and previous != definition:
            raise SchemaError(f"defines {name!r} differently from an earlier schema", where)
        known[name] = definition


def _json_or_name(text: str, where: str = "") -> Any:
    stripped = text.strip()
    if stripped[:1] in ("{", "[", '"'):
        try:
            return json.loads(stripped, parse_constant=_no_constant)
        except ValueError as error:
            raise SchemaError(f"not valid JSON: {error}", where) from None
        except RecursionError:
            raise SchemaError(f"JSON nested more than {MAX_SCHEMA_DEPTH} levels deep", where) from None
    # a bare type name such as long or com.example.Order
    return stripped


def _no_constant(name: str) -> Any:
    # NaN and Infinity are not JSON (Java's parser refuses them too)
    raise ValueError(f"{name} is not a JSON value")


class _UnknownName(SchemaError):
    def __init__(self, name: str, message: str, path: str):
        super().__init__(message, path)
        self.name = name


class _Parser:
    def __init__(self, external: Mapping[str, NamedType], validate: bool = True, dialect: str = "avro"):
        #: named types defined by other schemas that this one may use
        self.external = external
        #: fastavro's rules (parse_schema's dialect="fastavro")
        self.fastavro = dialect == "fastavro"
        #: check names against the specification's grammar and defaults against their types
        self.validate = validate and not self.fastavro
        #: named types this schema defines or uses, by full name
        self.named: dict[str, NamedType] = {}
        self.depth = 0

    def check_full_name(self, name: Any, path: str, what: str) -> None:
        if self.validate:
            check_full_name(name, path, what)
        elif not isinstance(name, str) or not (name or self.fastavro):
            raise SchemaError(f"the {what} {_show(name)} is not a name", path or "schema")

    # -- dispatch -------------------------------------------------------------

    def parse(self, node: Any, namespace: str | None, path: str) -> AvroType:
        self.depth += 1
        try:
            if self.depth > MAX_SCHEMA_DEPTH:
                raise SchemaError(
                    f"types are nested more than {MAX_SCHEMA_DEPTH} levels deep "
                    "(roastedavro's limit, which keeps every part of the library "
                    "within Python's recursion limit)",
                    path or "schema",
                )
            return self.parse_type(node, namespace, path)
        finally:
            self.depth -= 1

    def parse_type(self, node: Any, namespace: str | None, path: str) -> AvroType:
        if isinstance(node, str):
            return self.reference(node, namespace, path)
        if isinstance(node, list):
            return self.union(node, namespace, path)
        if not isinstance(node, dict):
            raise SchemaError(
                f"a schema is a type name, a JSON object or a list (a union), not {_json_text(node)}",
                path or "schema",
            )
        kind = node.get("type")
        if kind is None or "type" not in node:
            raise SchemaError('no "type"', path or "schema")
        if not isinstance(kind, str):
            # Java's parser wants a name here; {"type": {...}} is not a schema
            raise SchemaError(f'"type" must be a type name, not {_json_text(kind)}', path or "schema")
        if kind in PRIMITIVE_TYPES:
            return self.primitive(node, kind, path)
        if kind in ("record", "error"):
            return self.record(node, kind, namespace, path)
        if kind == "enum":
            return self.enum(node, namespace, path)
        if kind == "fixed":
            return self.fixed(node, namespace, path)
        if kind == "array":
            return Array(
                self.parse(self.required(node, "items", path), namespace, f"{path}.items"),
                self.props(node, "array"),
            )
        if kind == "map":
            return Map(
                self.parse(self.required(node, "values", path), namespace, f"{path}.values"),
                self.props(node, "map"),
            )
        # {"type": "com.example.Order"}: Java's parser refuses a use of a
        # named type written as an object; the name alone is the schema
        self.reference(kind, namespace, path)
        raise SchemaError(
            f'{{"type": {kind!r}}} is not a schema: write the type\'s name, {kind!r}, on its own',
            path or "schema",
        )

    # -- names ----------------------------------------------------------------

    def reference(self, name: str, namespace: str | None, path: str) -> AvroType:
        plain = _PLAIN.get(name)
        if plain is not None:
            return plain  # immutable: one instance per primitive serves every use
        if not name:
            raise SchemaError("an empty type name", path or "schema")
        candidates = [name] if "." in name else ([f"{namespace}.{name}", name] if namespace else [name])
        for full in candidates:
            if full in self.named:
                return NamedRef(full)
            if full in self.external:
                # first use of a type another schema defines: this tree holds
                # its definition, as if it were written here
                definition = self.external[full]
                self.named[full] = definition
                for inner_name, inner in _named_in(definition).items():
                    self.named.setdefault(inner_name, inner)
                return definition
        if name in NAMED_KINDS or name in ("array", "map"):
            raise SchemaError(f'{name!r} needs a JSON object: {{"type": {name!r}, ...}}', path or "schema")
        raise _UnknownName(
            candidates[0],
            f"{_show(name)} is not a defined type (named types must be defined before they are used)",
            path or "schema",
        )

    def full_name(self, node: dict, namespace: str | None, path: str, kind: str) -> tuple[str, str | None]:
        name = node.get("name")
        if name is None:
            raise SchemaError(f'a {kind} needs a "name"', path or "schema")
        if not isinstance(name, str):
            raise SchemaError(f"the name {_json_text(name)} is not a string", path or "schema")
        if "." in name:
            full = name
        else:
            own = node.get("namespace", namespace) if "namespace" in node else namespace
            if own is not None and not isinstance(own, str):
                raise SchemaError(f"the namespace {_json_text(own)} is not a string", path or name)
            if own:
                self.check_full_name(own, path or f"{own}.{name}", "namespace")
            full = f"{own}.{name}" if own else name
        self.check_full_name(full, path or full, "name")
        if full.rpartition(".")[2] in PRIMITIVE_TYPES and not self.fastavro:
            # the specification: primitive names are defined in no namespace
            raise SchemaError(
                f"{full!r}: {full.rpartition('.')[2]!r} is a primitive type name and cannot name a type",
                path or full,
            )
        if full in self.named:
            raise SchemaError(f"{full!r} is already defined (a name can be defined once)", path or full)
        new_namespace = full.rpartition(".")[0] or None
        return full, new_namespace

    def define(self, definition: _Named, path: str) -> _Named:
        """Register a named type; another schema's definition of the name must be the same."""
        known = self.external.get(definition.name)
        if known is not None and known != definition:
            raise SchemaError(f"{definition.name!r} is already defined differently by another schema", path)
        self.named[definition.name] = definition
        return definition

    def aliases(self, node: dict, namespace: str | None, path: str, named: bool) -> tuple[str, ...]:
        if "aliases" not in node:
            return ()
        aliases = node["aliases"]
        if self.fastavro and isinstance(aliases, str):
            aliases = [aliases]  # fastavro takes one name for a list of it
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise SchemaError(f'"aliases" must be a list of names, not {_json_text(aliases)}', path)
        result = []
        for alias in aliases:
            if named:
                self.check_full_name(alias, path, "alias")
                if "." not in alias and namespace:
                    alias = f"{namespace}.{alias}"
            # a field's aliases are any strings (the specification and Java)
            result.append(alias)
        return tuple(result)

    # -- kinds ----------------------------------------------------------------

    def primitive(self, node: dict, kind: str, path: str) -> Primitive:
        props = self.props(node, "primitive")
        logical = _logical(node, kind, None, self.fastavro)
        if logical is not None:
            props = tuple(item for item in props if item[0] not in ("logicalType", "precision", "scale"))
        return Primitive(kind, logical, props)

    def record(self, node: dict, kind: str, namespace: str | None, path: str) -> NamedType:
        full, inner_namespace = self.full_name(node, namespace, path, kind)
        path = path or full
        fields_node = node.get("fields")
        if "fields" not in node:
            if not self.fastavro:
                raise SchemaError(f'the {kind} {full!r} has no "fields"', path)
            fields_node = []  # fastavro's: no fields
        if not isinstance(fields_node, list):
            raise SchemaError(f'"fields" must be a list, not {_json_text(fields_node)}', path)
        aliases = self.aliases(node, inner_namespace, path, named=True)
        doc = _doc(node, path)
        # registered before its fields are parsed: a field may refer to the
        # record itself (recursion)
        self.named[full] = Record(full)
        fields: list[Field] = []
        seen: set[str] = set()
        for number, field_node in enumerate(fields_node):
            field = self.field(field_node, inner_namespace, path, number)
            if field.name in seen and not self.fastavro:
                raise SchemaError(f"two fields are named {field.name!r}", path)
            seen.add(field.name)
            fields.append(field)
        record = Record(
            full,
            tuple(fields),
            aliases,
            doc,
            "error" if kind == "error" else "record",
            self.props(node, "record"),
        )
        return self.define(record, path)

    def field(self, node: Any, namespace: str | None, path: str, number: int) -> Field:
        if not isinstance(node, dict):
            raise SchemaError(f"field {number} must be a JSON object, not {_json_text(node)}", path)
        name = node.get("name")
        if not isinstance(name, str):
            raise SchemaError(f'field {number} needs a "name" that is a string', path)
        where = f"{path}.{name}"
        if self.validate and not NAME.match(name):
            raise SchemaError(f"{_show(name)} is not a valid field name ({NAME_RULE})", where)
        if "type" not in node:
            raise SchemaError('the field has no "type"', where)
        avro = self.parse(node["type"], namespace, where)
        default = node.get("default", NO_DEFAULT) if "default" in node else NO_DEFAULT
        keys = _FIELD_KEYS
        if default is not NO_DEFAULT:
            if self.validate:
                problem = self.default_problem(avro, default)
                if problem is not None:
                    raise SchemaError(f"the default {_json_text(default)} is not valid: {problem}", where)
            elif self.fastavro and not self.writable_default(avro, default):
                # kept in the JSON, among the field's properties; no default
                # to the codecs, which write and read defaults as values
                default, keys = NO_DEFAULT, _FIELD_KEYS - {"default"}
        order = node.get("order", "ascending")
        if order not in ORDERS:
            if not self.fastavro:
                raise SchemaError(
                    f'"order" must be one of {", ".join(ORDERS)}, not {_json_text(order)}', where
                )
            order, keys = "ascending", keys - {"order"}  # kept as a property
        aliases = self.aliases(node, None, where, named=False)
        props = tuple((key, value) for key, value in node.items() if key not in keys)
        return Field(name, avro, default, aliases, _doc(node, where), order, props)

    def writable_default(self, avro: AvroType, value: Any) -> bool:
        """Whether the codecs can write ``value`` as a value of ``avro`` (with
        the named types known so far; a record being parsed has no fields yet)."""
        from roastedavro._defaults import encode_default

        try:
            encode_default(avro, value, Schema(avro, self.named))
        except (SchemaError, KeyError, TypeError, ValueError, OverflowError, RecursionError):
            return False
        return True

    def enum(self, node: dict, namespace: str | None, path: str) -> Enum:
        full, inner_namespace = self.full_name(node, namespace, path, "enum")
        path = path or full
        symbols = node.get("symbols")
        if not isinstance(symbols, list):
            raise SchemaError(f'an enum needs "symbols", a list of names, not {_json_text(symbols)}', path)
        seen: set[str] = set()
        for symbol in symbols:
            # fastavro checks symbols as the specification has them
            if not isinstance(symbol, str) or ((self.validate or self.fastavro) and not NAME.match(symbol)):
                raise SchemaError(f"the symbol {_show(symbol)} is not a valid name ({NAME_RULE})", path)
            if symbol in seen:
                raise SchemaError(f"the symbol {symbol!r} appears twice", path)
            seen.add(symbol)
        default = node.get("default")
        if "default" in node and (not isinstance(default, str) or default not in seen):
            raise SchemaError(f"the enum default {_json_text(default)} is not one of its symbols", path)
        enum = Enum(
            full,
            tuple(symbols),
            default,
            self.aliases(node, inner_namespace, path, True),
            _doc(node, path),
            self.props(node, "enum"),
        )
        return self.define(enum, path)

    def fixed(self, node: dict, namespace: str | None, path: str) -> Fixed:
        full, inner_namespace = self.full_name(node, namespace, path, "fixed")
        path = path or full
        size = node.get("size")
        if type(size) is not int or size < 0:
            raise SchemaError(
                f'a fixed needs a "size" that is a non-negative integer, not {_json_text(size)}', path
            )
        if size > 2**31 - 1:
            raise SchemaError(f"the size {size} is larger than 2**31 - 1", path)
        props = self.props(node, "fixed")
        logical = _logical(node, "fixed", size, self.fastavro)
        if logical is not None:
            props = tuple(item for item in props if item[0] not in ("logicalType", "precision", "scale"))
        fixed = Fixed(
            full, size, self.aliases(node, inner_namespace, path, True), logical, _doc(node, path), props
        )
        return self.define(fixed, path)

    def union(self, node: list, namespace: str | None, path: str) -> Union:
        branches: list[AvroType] = []
        seen: dict[str, int] = {}
        for number, item in enumerate(node):
            where = f"{path}[{number}]"
            if isinstance(item, list):
                # fastavro takes a union in a union; the specification and
                # Java do not, nor do roastedavro's codecs
                raise SchemaError("a union cannot hold another union directly", where)
            branch = self.parse(item, namespace, where)
            key = branch.name if isinstance(branch, (NamedType, NamedRef)) else branch.type_name
            if key in seen and not self.fastavro:
                raise SchemaError(
                    f"the union holds {key!r} twice (branches {seen[key]} and {number}); "
                    "a union has at most one branch of each type or name",
                    path or "schema",
                )
            seen[key] = number
            branches.append(branch)
        return Union(tuple(branches))

    # -- pieces -----------------------------------------------------------------

    def required(self, node: dict, key: str, path: str) -> Any:
        if key not in node:
            article = "an" if node["type"] == "array" else "a"
            raise SchemaError(f"{article} {node['type']} needs {key!r}", path or "schema")
        return node[key]

    def props(self, node: dict, kind: str) -> tuple[tuple[str, Any], ...]:
        own = _OWN_KEYS[kind]
        return tuple((key, value) for key, value in node.items() if key not in own)

    def default_problem(self, avro: AvroType, value: Any) -> str | None:
        """Why ``value`` is not a valid JSON default for ``avro`` (None: it is)."""
        avro = self.named.get(avro.name, avro) if isinstance(avro, NamedRef) else avro
        if isinstance(avro, Union):
            # Java 1.12 takes a default that matches any branch
            if any(self.default_problem(branch, value) is None for branch in avro.branches):
                return None
            return "it matches no branch of the union"
        kind = avro.type_name
        if kind == "null":
            return None if value is None else "a null default must be null"
        if kind == "boolean":
            return None if isinstance(value, bool) else "a boolean default must be true or false"
        if kind in ("int", "long"):
            low, high = _INT_RANGE if kind == "int" else _LONG_RANGE
            if type(value) is int and low <= value <= high:
                return None
            return f"{'an' if kind == 'int' else 'a'} {kind} default must be an integer in [{low}, {high}]"
        if kind in ("float", "double"):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return None
            return f"a {kind} default must be a number"
        if kind in ("bytes", "fixed"):
            if not isinstance(value, str):
                return f"a {kind} default must be a string"
            if any(ord(char) > 255 for char in value):
                return f"a {kind} default is a string of code points 0-255 (one per byte)"
            if kind == "fixed" and len(value) != avro.size:  # type: ignore[attr-defined]
                return f"a fixed default must have {avro.size} bytes"  # type: ignore[attr-defined]
            logical = getattr(avro, "logical", None)
            if logical is not None and logical.name == "decimal":
                return decimal_default_problem(value, logical.precision, logical.scale)
            return None
        if kind == "string":
            return None if isinstance(value, str) else "a string default must be a string"
        if kind == "enum":
            if value in avro.symbols:  # type: ignore[attr-defined]
                return None
            return "an enum default must be one of its symbols"
        if kind == "array":
            if not isinstance(value, list):
                return "an array default must be a list"
            for item in value:
                problem = self.default_problem(avro.items, item)  # type: ignore[attr-defined]
                if problem is not None:
                    return f"an item: {problem}"
            return None
        if kind == "map":
            if not isinstance(value, dict):
                return "a map default must be a JSON object"
            for key, item in value.items():
                problem = self.default_problem(avro.values, item)  # type: ignore[attr-defined]
                if problem is not None:
                    return f"value {key!r}: {problem}"
            return None
        if kind in ("record", "error"):
            if not isinstance(value, dict):
                return "a record default must be a JSON object"
            record: Any = avro  # a record, by its kind
            if not record.fields and record.name in self.named and self.named[record.name] is not record:
                avro = self.named[record.name]
            for field in avro.fields:  # type: ignore[attr-defined]
                if field.name in value:
                    problem = self.default_problem(field.type, value[field.name])
                elif field.has_default:
                    problem = None
                else:
                    problem = "it has no value and no default"
                if problem is not None:
                    return f"field {field.name!r}: {problem}"
            return None
        return None


def check_full_name(name: Any, path: str, what: str) -> None:
    """A name or dotted full name, every part valid."""
    if not isinstance(name, str) or not all(NAME.match(part) for part in name.split(".")):
        raise SchemaError(
            f"the {what} {_show(name)} is not a valid Avro name (dot-separated names of {NAME_RULE})",
            path or "schema",
        )


def _named_in(definition: AvroType) -> dict[str, NamedType]:
    """The named types defined inside a definition (itself included)."""
    found: dict[str, NamedType] = {}
    stack = [definition]
    while stack:
        avro = stack.pop()
        if isinstance(avro, NamedType) and avro.name not in found:
            found[avro.name] = avro
        if isinstance(avro, Record):
            stack.extend(field.type for field in avro.fields)
        elif isinstance(avro, Array):
            stack.append(avro.items)
        elif isinstance(avro, Map):
            stack.append(avro.values)
        elif isinstance(avro, Union):
            stack.extend(avro.branches)
    return found


def _logical(node: dict, kind: str, size: int | None, fastavro: bool = False) -> Logical | None:
    """The node's logical type if it is valid for it (else None: ignored, as
    the specification and Java's parser do). In the fastavro dialect only
    the logical types fastavro converts count, and a decimal's precision or
    scale given as true or false is 1 or 0, as in fastavro (a Python bool
    is an int)."""
    name = node.get("logicalType")
    if not isinstance(name, str) or kind not in _LOGICAL_ON.get(name, ()):
        return None
    if fastavro and (kind, name) not in FASTAVRO_LOGICAL:
        return None
    if name == "uuid" and kind == "fixed" and size != 16:
        return None
    if name == "duration" and size != 12:
        return None
    if name != "decimal":
        return Logical(name)
    precision, scale = node.get("precision"), node.get("scale", 0)
    if fastavro:
        precision, scale = (int(value) if type(value) is bool else value for value in (precision, scale))
    if type(precision) is not int or type(scale) is not int:
        return None
    if precision <= 0 or precision > 2**31 - 1 or scale < 0 or scale > precision:
        return None
    if size is not None and precision > max_decimal_precision(size):
        return None
    return Logical(name, precision, scale)


def decimal_default_problem(value: str, precision: int, scale: int) -> str | None:
    """Why a decimal's default (its bytes as code points 0-255) has more digits
    than ``decimal(precision, scale)`` allows, or None: writing it would give
    bytes that a reader checking the precision refuses."""
    unscaled = int.from_bytes(value.encode("latin-1"), "big", signed=True)
    magnitude = abs(unscaled)
    # 2**3.32 < 10 < 2**4: fewer bits than 3.32 digits' worth always fit, more
    # than 4 digits' worth never do; in between, 10**precision is computed, no
    # larger than the bytes themselves
    bits = magnitude.bit_length()
    if bits * 100 <= 332 * precision or (bits <= 4 * precision and magnitude < 10**precision):
        return None
    return (
        f"a decimal({precision}, {scale}) default has at most {precision} digits; "
        f"these bytes hold an unscaled value of more (bytes are the two's-complement "
        f'big-endian unscaled value, e.g. "\\u0004\\u00d2" for 12.34 at scale 2)'
    )


def max_decimal_precision(size: int) -> int:
    """The most decimal digits a two's-complement number of ``size`` bytes holds."""
    if size <= 0:
        return 0
    return int(math.floor(math.log10(2) * (8 * size - 1)))


#: the primitive types without a logical type or properties
_PLAIN = {name: Primitive(name) for name in PRIMITIVE_TYPES}


def _doc(node: dict, path: str) -> str | None:
    doc = node.get("doc")
    return doc if isinstance(doc, str) else None


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else _json_text(value)


def _json_text(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        try:
            text = repr(value)
        except ValueError:  # an int past Python's digit limit for int-to-text, perhaps nested
            digits = f"an int of more than {sys.get_int_max_str_digits()} digits"
            text = f"<{digits}>" if isinstance(value, int) else f"<a {type(value).__name__} holding {digits}>"
    return text if len(text) <= 80 else text[:77] + "..."
