"""Schema compatibility: may a reader's schema read what a writer's schema wrote?

``check_compatibility`` decides as Java Avro 1.12's
``SchemaCompatibility.checkReaderWriterCompatibility`` does, which is the rule
schema registries apply, and reports the same incompatibilities in the same
order, with Java's types, locations (JSON pointers into the reader's schema)
and messages, quirks included: named types match by their simple names (or
the writer's full name among the reader's aliases), a reader field of an
enum type that has a default but no field default is compared with the
writer's whole record, a result computed once is reused (with the locations
of its first computation) wherever the same pair of schema nodes meets again,
and a union's branches are tried against the other side from a fresh
location (of a writer's branch that a reader's union lacks, only that is
reported, at the branch's index).
``check_mode`` composes it as a registry's compatibility modes
(BACKWARD, FORWARD, FULL, transitive or not) do.

The checker judges schemas, not data, and is stricter than reading is:
Java's ``GenericDatumReader`` reads data of some pairs it calls
incompatible, for instance an enum whose reader lacks symbols the data never
uses, or a writer's union whose branches the reader lacks but the data never
takes; reading fails only for the values that need what is missing.
Logical types are ignored, as Java's checker ignores them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, NamedTuple, cast

from roastedavro.avro.parse import parse_schema
from roastedavro.avro.types import (
    Array,
    AvroType,
    Enum,
    Field,
    Fixed,
    NamedRef,
    Map,
    NamedType,
    Record,
    Schema,
    describe,
)
from roastedavro.errors import SchemaError

__all__ = [
    "INCOMPATIBILITY_TYPES",
    "MODES",
    "CompatibilityResult",
    "Incompatibility",
    "check_compatibility",
    "check_mode",
]

#: the incompatibility types, as Java's SchemaIncompatibilityType names them
INCOMPATIBILITY_TYPES = (
    "NAME_MISMATCH",
    "FIXED_SIZE_MISMATCH",
    "MISSING_ENUM_SYMBOLS",
    "READER_FIELD_MISSING_DEFAULT_VALUE",
    "TYPE_MISMATCH",
    "MISSING_UNION_BRANCH",
)

#: the compatibility modes of a schema registry (Confluent's names)
MODES = (
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
    "NONE",
)

# what each incompatibility means, before Java's terse message (for __str__)
_EXPLAINED = {
    "NAME_MISMATCH": "the names differ ({}), and no alias of the reader's is the writer's name",
    "FIXED_SIZE_MISMATCH": "the fixed sizes differ ({})",
    "MISSING_ENUM_SYMBOLS": "the reader's enum lacks the writer's symbols {} and has no default",
    "READER_FIELD_MISSING_DEFAULT_VALUE": (
        "the reader's field {!r} has no default, and the writer has no field of its name or aliases"
    ),
    "TYPE_MISMATCH": "{}",
    "MISSING_UNION_BRANCH": "{}",
}


@dataclasses.dataclass(frozen=True)
class Incompatibility:
    """One reason why a reader cannot read all that a writer may write.

    ``type``, ``location`` and ``message`` are Java's: the type is one of
    ``INCOMPATIBILITY_TYPES``, the location a JSON pointer into the
    reader's schema (``/fields/1/type/symbols``; ``/`` is the root).
    ``reader_path`` and ``writer_path`` say where in each schema for a
    human (``shop.Order.lines[].qty``; ``<type>`` marks a union's branch,
    ``""`` is the root of a schema that is not a named type).

    ``check_mode`` sets ``version``, the 0-based index in its
    ``previous`` list of the version compared with, and ``direction``:
    ``"backward"`` when the new schema is the reader of that version's
    data, ``"forward"`` when that version is the reader of the new one's.
    """

    type: str
    location: str
    message: str
    reader_path: str = ""
    writer_path: str = ""
    version: int | None = None
    direction: str | None = None

    def __str__(self) -> str:
        where = (
            f"{self.location} ({self.reader_path or 'the root'} in the reader, "
            f"{self.writer_path or 'the root'} in the writer)"
        )
        text = f"{where}: {_EXPLAINED.get(self.type, '{}').format(self.message)}"
        if self.version is not None:
            text = f"previous[{self.version}] {self.direction}: {text}"
        return text


@dataclasses.dataclass(frozen=True)
class CompatibilityResult:
    """The verdict of a check: true when compatible, else the reasons, in Java's order."""

    compatible: bool
    incompatibilities: tuple[Incompatibility, ...] = ()

    def __bool__(self) -> bool:
        return self.compatible

    def __str__(self) -> str:
        if self.compatible:
            return "compatible"
        return "\n".join(str(reason) for reason in self.incompatibilities)


def check_compatibility(reader: Any, writer: Any) -> CompatibilityResult:
    """Whether data written with ``writer`` can always be read with ``reader``.

    Both are ``roastedavro.avro.Schema`` objects or anything
    ``roastedavro.avro.parse_schema`` takes (a dict, a list, a type
    name, JSON text). The verdict and every incompatibility are those of
    Java Avro 1.12's ``SchemaCompatibility.checkReaderWriterCompatibility``.

    Raises ``roastedavro.errors.SchemaError`` for a schema that is not
    valid, where Java throws (a reader field that matches more than one
    writer field by its name and aliases), and for schemas nested too deeply
    for Python's recursion limit.
    """
    reader_schema, writer_schema = parse_schema(reader), parse_schema(writer)
    checker = _Checker(reader_schema, writer_schema)
    try:
        found = checker.pair("", checker.root(reader_schema), checker.root(writer_schema), [])
    except RecursionError:
        raise SchemaError("the schemas nest too deeply to compare within Python's recursion limit") from None
    return CompatibilityResult(not found, found)


def check_mode(schema: Any, previous: Iterable[Any], mode: str = "BACKWARD") -> CompatibilityResult:
    """Whether a registry in ``mode`` accepts ``schema`` after the ``previous`` versions.

    ``previous`` are the versions registered before, oldest first (the
    registry's order); ``mode`` one of ``MODES`` (any letter case), with
    Confluent Schema Registry's meaning:

    * BACKWARD: the new schema reads data written with the latest version;
    * FORWARD: the latest version reads data written with the new schema;
    * FULL: both;
    * the ``_TRANSITIVE`` modes: the same against every previous version;
    * NONE: anything goes (as does any schema when there is no previous version).

    Each pair is judged by ``check_compatibility``. The result holds the
    incompatibilities of every version compared, the latest version first
    (backward before forward for one version), each with its ``version``
    (index in ``previous``) and ``direction`` set.
    """
    name = mode.upper() if isinstance(mode, str) else mode
    if name not in MODES:
        raise ValueError(f"unknown compatibility mode {mode!r}: use one of {', '.join(MODES)}")
    new = parse_schema(schema)
    versions = [parse_schema(version) for version in previous]
    if name == "NONE" or not versions:
        return CompatibilityResult(True)
    indexes = range(len(versions)) if name.endswith("_TRANSITIVE") else [len(versions) - 1]
    found: list[Incompatibility] = []
    for index in reversed(indexes):
        if name.startswith(("BACKWARD", "FULL")):
            for reason in check_compatibility(new, versions[index]).incompatibilities:
                found.append(dataclasses.replace(reason, version=index, direction="backward"))
        if name.startswith(("FORWARD", "FULL")):
            for reason in check_compatibility(versions[index], new).incompatibilities:
                found.append(dataclasses.replace(reason, version=index, direction="forward"))
    return CompatibilityResult(not found, tuple(found))


# -- the checker ------------------------------------------------------------------------------

# Java's Schema.Type names
_JAVA_TYPES = {
    "null": "NULL",
    "boolean": "BOOLEAN",
    "int": "INT",
    "long": "LONG",
    "float": "FLOAT",
    "double": "DOUBLE",
    "bytes": "BYTES",
    "string": "STRING",
    "record": "RECORD",
    "error": "RECORD",
    "enum": "ENUM",
    "fixed": "FIXED",
    "array": "ARRAY",
    "map": "MAP",
    "union": "UNION",
}
# the writer types each reader type reads beside its own (the promotions)
_READS_ALSO = {
    "LONG": ("INT",),
    "FLOAT": ("INT", "LONG"),
    "DOUBLE": ("INT", "LONG", "FLOAT"),
    "BYTES": ("STRING",),
    "STRING": ("BYTES",),
}
_PRIMITIVES = frozenset(("NULL", "BOOLEAN", "INT", "LONG", "FLOAT", "DOUBLE", "BYTES", "STRING"))
_IN_PROGRESS = None


class _Node(NamedTuple):
    """A schema node as Java's checker sees it: the type (references followed),
    the identity of the Java Schema object it would be, and a readable path."""

    avro: AvroType
    #: ("named", full name) for a named type, which is one Java object wherever it
    #: is used; otherwise the node's position under its root or named type
    key: tuple
    path: str

    @property
    def java_type(self) -> str:
        return _JAVA_TYPES[self.avro.type_name]


class _Checker:
    """Java's ReaderWriterCompatibilityChecker over our schema model.

    One memo of results per check, keyed by the pair of nodes (by Java
    object identity, emulated by ``_Node.key``). A location is a list
    of JSON-pointer tokens, the first (the root's, dropped when written) "".
    """

    def __init__(self, reader: Schema, writer: Schema):
        self.schemas = {"reader": reader, "writer": writer}
        self.memo: dict[tuple, tuple[Incompatibility, ...] | None] = {}

    # -- nodes ----------------------------------------------------------------------

    @staticmethod
    def node(schema: Schema, avro: AvroType, key: tuple, path: str) -> _Node:
        if isinstance(avro, NamedRef):
            avro = schema.named[avro.name]
        if isinstance(avro, NamedType):
            key = ("named", avro.name)
        return _Node(avro, key, path)

    def root(self, schema: Schema) -> _Node:
        root = schema.deref(schema.root)
        return self.node(schema, root, ("root",), root.name if isinstance(root, NamedType) else "")

    def child(self, side: str, parent: _Node, avro: AvroType, token: Any, path: str) -> _Node:
        return self.node(self.schemas[side], avro, parent.key + (token,), path)

    def branches(self, side: str, union: _Node) -> list[_Node]:
        return [
            self.child(
                side, union, branch, index, f"{union.path}<{describe(self.schemas[side].deref(branch))}>"
            )
            for index, branch in enumerate(union.avro.branches)  # type: ignore[attr-defined]
        ]

    # -- Java's getCompatibility and calculateCompatibility ---------------------------

    def pair(
        self, token: str, reader: _Node, writer: _Node, location: list[str]
    ) -> tuple[Incompatibility, ...]:
        location.append(token)
        key = (reader.key, writer.key)
        if key in self.memo:
            known = self.memo[key]
            # a pair met again while it is being checked (recursion) passes
            found = () if known is _IN_PROGRESS else known
        else:
            self.memo[key] = _IN_PROGRESS
            found = self.calculate(reader, writer, location)
            self.memo[key] = found
        location.pop()
        return found

    def fresh(self, reader: _Node, writer: _Node) -> tuple[Incompatibility, ...]:
        """Java's two-argument getCompatibility: a new location, the same memo."""
        return self.pair("", reader, writer, [])

    def calculate(self, reader: _Node, writer: _Node, location: list[str]) -> tuple[Incompatibility, ...]:
        rtype, wtype = reader.java_type, writer.java_type
        if rtype == wtype:
            if rtype in _PRIMITIVES:
                return ()
            if rtype == "ARRAY":
                return self.pair(
                    "items",
                    self.child("reader", reader, cast(Array, reader.avro).items, "items", reader.path + "[]"),
                    self.child("writer", writer, cast(Array, writer.avro).items, "items", writer.path + "[]"),
                    location,
                )
            if rtype == "MAP":
                return self.pair(
                    "values",
                    self.child("reader", reader, cast(Map, reader.avro).values, "values", reader.path + "{}"),
                    self.child("writer", writer, cast(Map, writer.avro).values, "values", writer.path + "{}"),
                    location,
                )
            if rtype == "FIXED":
                return self.names(reader, writer, location) + self.size(reader, writer, location)
            if rtype == "ENUM":
                return self.names(reader, writer, location) + self.symbols(reader, writer, location)
            if rtype == "RECORD":
                return self.names(reader, writer, location) + self.fields(reader, writer, location)
            # two unions: each writer branch must be readable by the reader's union
            found: tuple[Incompatibility, ...] = ()
            for index, branch in enumerate(self.branches("writer", writer)):
                location.append(str(index))
                if self.fresh(reader, branch):
                    found += (
                        self.found(
                            "MISSING_UNION_BRANCH",
                            location,
                            f"reader union lacking writer type: {branch.java_type}",
                            reader,
                            branch,
                        ),
                    )
                location.pop()
            return found
        if wtype == "UNION":
            # a reader that is no union must read every branch of the writer's
            found = ()
            for index, branch in enumerate(self.branches("writer", writer)):
                found += self.pair(str(index), reader, branch, location)
            return found
        if wtype in _READS_ALSO.get(rtype, ()):
            return ()
        if rtype == "UNION":
            for branch in self.branches("reader", reader):
                if not self.fresh(branch, writer):
                    return ()
            return (
                self.found(
                    "MISSING_UNION_BRANCH",
                    location,
                    f"reader union lacking writer type: {wtype}",
                    reader,
                    writer,
                ),
            )
        return (
            self.found(
                "TYPE_MISMATCH",
                location,
                f"reader type: {rtype} not compatible with writer type: {wtype}",
                reader,
                writer,
            ),
        )

    # -- the parts of named types -----------------------------------------------------

    def names(self, reader: _Node, writer: _Node, location: list[str]) -> tuple[Incompatibility, ...]:
        rnamed, wnamed = reader.avro, writer.avro
        assert isinstance(rnamed, NamedType) and isinstance(wnamed, NamedType)
        # Java's schemaNameEquals: simple names, or the writer's full name among the reader's aliases
        if rnamed.simple_name == wnamed.simple_name or wnamed.name in rnamed.aliases:  # type: ignore[attr-defined]
            return ()
        return (self.found("NAME_MISMATCH", location + ["name"], f"expected: {wnamed.name}", reader, writer),)

    def size(self, reader: _Node, writer: _Node, location: list[str]) -> tuple[Incompatibility, ...]:
        rfixed, wfixed = reader.avro, writer.avro
        assert isinstance(rfixed, Fixed) and isinstance(wfixed, Fixed)
        if rfixed.size == wfixed.size:
            return ()
        return (
            self.found(
                "FIXED_SIZE_MISMATCH",
                location + ["size"],
                f"expected: {wfixed.size}, found: {rfixed.size}",
                reader,
                writer,
            ),
        )

    def symbols(self, reader: _Node, writer: _Node, location: list[str]) -> tuple[Incompatibility, ...]:
        renum, wenum = reader.avro, writer.avro
        assert isinstance(renum, Enum) and isinstance(wenum, Enum)
        missing = set(wenum.symbols) - set(renum.symbols)
        if not missing or (renum.default is not None and renum.default in renum.symbols):
            return ()
        # Java prints a TreeSet: sorted by UTF-16 code units
        text = "[" + ", ".join(sorted(missing, key=lambda s: s.encode("utf-16-be"))) + "]"
        return (self.found("MISSING_ENUM_SYMBOLS", location + ["symbols"], text, reader, writer),)

    def fields(self, reader: _Node, writer: _Node, location: list[str]) -> tuple[Incompatibility, ...]:
        rrecord, wrecord = reader.avro, writer.avro
        assert isinstance(rrecord, Record) and isinstance(wrecord, Record)
        found: tuple[Incompatibility, ...] = ()
        location.append("fields")
        numbers = {wfield.name: number for number, wfield in enumerate(wrecord.fields)}
        for number, rfield in enumerate(rrecord.fields):
            location.append(str(number))
            rpath = f"{reader.path}.{rfield.name}"
            rtype = self.child("reader", reader, rfield.type, ("fields", number), rpath)
            wnumber = _writer_field(numbers, wrecord, rrecord, rfield, rpath)
            if wnumber is not None:
                wfield = wrecord.fields[wnumber]
                wtype = self.child(
                    "writer", writer, wfield.type, ("fields", wnumber), f"{writer.path}.{wfield.name}"
                )
                found += self.pair("type", rtype, wtype, location)
            elif not rfield.has_default:
                if isinstance(rtype.avro, Enum) and rtype.avro.default is not None:
                    # Java's quirk: the enum is compared with the writer's whole record
                    found += self.pair("type", rtype, writer, location)
                else:
                    found += (
                        self.found(
                            "READER_FIELD_MISSING_DEFAULT_VALUE", location, rfield.name, rtype, writer
                        ),
                    )
            location.pop()
        location.pop()
        return found

    @staticmethod
    def found(kind: str, location: list[str], message: str, reader: _Node, writer: _Node) -> Incompatibility:
        pointer = "/" + "/".join(token.replace("~", "~0").replace("/", "~1") for token in location[1:])
        return Incompatibility(kind, pointer, message, reader.path, writer.path)


def _writer_field(
    numbers: dict[str, int], writer: Record, reader: Record, field: Field, path: str
) -> int | None:
    """Java's lookupWriterField: the index (``numbers``: by name) of the writer
    field of the reader field's name or of one of its aliases; more than one
    is an error (Java throws)."""
    matches = [
        numbers[name] for name in (field.name, *dict.fromkeys(field.aliases)) if name in numbers
    ]  # the aliases are a set in Java: each once
    if len(matches) > 1:
        names = ", ".join(repr(writer.fields[number].name) for number in matches)
        raise SchemaError(
            f"the reader's field {field.name!r} (of {reader.name}) matches several fields of the "
            f"writer's record {writer.name} by its name and aliases: {names}",
            path,
        )
    return matches[0] if matches else None
