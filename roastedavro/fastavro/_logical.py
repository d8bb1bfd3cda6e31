"""fastavro's custom logical types around roastedavro's codecs.

fastavro calls ``fastavro.write.LOGICAL_WRITERS["<type>-<logicalType>"]``
(``prepare(datum, schema)``) before writing a value whose schema node has
that key, and ``fastavro.read.LOGICAL_READERS[key]`` (``read(datum,
writer_schema, reader_schema)``) after reading one. The standard keys
fastavro registers itself are roastedavro's own logical types; any other
registered key makes a ``Plan`` for the schemas that use it: the datum
is walked along fastavro's parsed form of the schema and the registered
functions are applied at those nodes only, around the codec's own writing
and reading. A schema that uses no such key gets no plan and its codec is
used as it is.

Unions are written as fastavro writes them: the branch is chosen with
fastavro's rule (its validation, which applies ``prepare`` first), then
given to the codec as fastavro's ``(branch name, value)`` notation. A value
read from a union is matched to its branch by its Python type (records by
their field names, enums by their symbols, fixed by their size); a value
that more than one branch could have given, where one of them has a custom
logical type, is an error saying so rather than a guess.
"""

from __future__ import annotations

import datetime
import decimal
import json
import threading
import uuid
from collections.abc import Mapping
from typing import Any, Callable

from roastedavro.avro.types import PRIMITIVE_TYPES, Schema
from roastedavro.errors import SchemaError
from roastedavro._runtime import schema_shape
from roastedavro.fastavro._models import SchemaParseError, fastavro_parse, unchanged

#: fastavro's registries (the dicts its users add to), once fastavro is
#: imported (bind); until then no custom type can be registered
WRITERS: dict = {}
READERS: dict = {}


def bind() -> None:
    """Take fastavro's registries (fastavro is imported)."""
    global WRITERS, READERS
    import fastavro.read
    import fastavro.write

    WRITERS, READERS = fastavro.write.LOGICAL_WRITERS, fastavro.read.LOGICAL_READERS


def _validate(*args: Any, **kwargs: Any) -> Any:
    try:
        from fastavro._validation import _validate  # type: ignore[attr-defined]  # not in fastavro's stub
    except ImportError:  # fastavro without its compiled modules
        from fastavro._validation_py import _validate
    return _validate(*args, **kwargs)


def _match_types(*args: Any, **kwargs: Any) -> Any:
    try:
        from fastavro._read import match_types  # type: ignore[attr-defined]  # not in fastavro's stub
    except ImportError:
        from fastavro._read_py import match_types
    return match_types(*args, **kwargs)


def _match_schemas(*args: Any, **kwargs: Any) -> Any:
    try:
        from fastavro._read import match_schemas  # type: ignore[attr-defined]  # not in fastavro's stub
    except ImportError:
        from fastavro._read_py import match_schemas
    return match_schemas(*args, **kwargs)


#: the keys fastavro registers itself: roastedavro's own logical types
STANDARD = frozenset(
    {
        "long-timestamp-millis",
        "long-local-timestamp-millis",
        "long-timestamp-micros",
        "long-local-timestamp-micros",
        "int-date",
        "bytes-decimal",
        "fixed-decimal",
        "string-uuid",
        "int-time-millis",
        "long-time-micros",
    }
)

_NAMED = ("record", "error", "enum", "fixed")
_lock = threading.Lock()


def generation() -> tuple[int, int]:
    """The registries' state as the plans see it: keys added or removed
    change it (a function replaced under a key is looked up at each call)."""
    return len(WRITERS), len(READERS)


_custom: list = [None, frozenset(), frozenset()]  # generation, writer keys, reader keys


def custom_keys() -> tuple[frozenset, frozenset]:
    """The registered keys that are not roastedavro's own: (writers, readers)."""
    state = generation()
    if _custom[0] != state:
        _custom[1:] = [frozenset(WRITERS) - STANDARD, frozenset(READERS) - STANDARD]
        _custom[0] = state
    return _custom[1], _custom[2]


#: plans by id() of the writer's and reader's schema objects:
#: (schema, reader, generation, plan or None); the objects are held
_PLANS: dict[Any, tuple] = {}
_PLANS_KEPT = 1024


def forget() -> None:
    """Drop the plans (the registries changed)."""
    with _lock:
        _PLANS.clear()


def logical_plan(schema: Any, reader: Any = None) -> Plan | None:
    """The plan applying the custom logical types ``schema`` (read as
    ``reader``'s, if given) uses, or None when it uses none (the common
    case: a check of the registries' sizes when no custom type is
    registered)."""
    writer_keys, reader_keys = custom_keys()
    if not writer_keys and not reader_keys:
        return None
    key = (id(schema), id(reader))
    state = _custom[0]
    entry = _PLANS.get(key)
    if (
        entry is not None
        and entry[0] is schema
        and entry[1] is reader
        and entry[2] == state
        and unchanged(entry[4], schema)
        and unchanged(entry[5], reader)
    ):
        return entry[3]
    shapes = (schema_shape(schema), schema_shape(reader))
    try:
        plan = Plan(schema, reader, writer_keys, reader_keys)
    except SchemaError:
        # a schema fastavro's parser refuses (the drop-in's model took it):
        # fastavro applies no logical type to its data either
        plan = None
    if plan is not None and not plan.writes and not plan.reads:
        plan = None
    with _lock:
        _PLANS[key] = (schema, reader, state, plan, *shapes)
        if len(_PLANS) > _PLANS_KEPT:
            del _PLANS[next(iter(_PLANS))]  # the oldest
    return plan


def _parsed(schema: Any, table: dict) -> Any:
    """fastavro's parsed form of a schema as the drop-in takes it, its named
    types in ``table`` (fastavro's named_schemas)."""
    if isinstance(schema, Schema):
        schema = schema.to_dict()
    elif isinstance(schema, str) and schema.lstrip()[:1] in ("{", "[", '"'):
        schema = json.loads(schema)
    # the defaults are the codec's concern (fastavro's readers take bad ones too)
    parsed = fastavro_parse(schema, table, _ignore_default_error=True)
    if isinstance(parsed, dict) and isinstance(parsed.get("__named_schemas"), dict):
        for name, definition in parsed["__named_schemas"].items():
            table.setdefault(name, definition)
    return parsed


def _type(node: Any) -> Any:
    # fastavro's extract_record_type
    if isinstance(node, dict):
        return node["type"]
    if isinstance(node, list):
        return "union"
    return node


def _key(node: Any) -> str | None:
    # fastavro's extract_logical_type
    if isinstance(node, dict):
        logical = node.get("logicalType")
        if logical:
            return f"{node['type']}-{logical}"
    return None


def _branch_name(node: Any) -> str:
    # the name fastavro's (name, value) notation gives a union's branch
    kind = _type(node)
    return node["name"] if kind in _NAMED else kind


class _Needs:
    """Which nodes of a parsed schema have a key of ``keys`` below them."""

    def __init__(self, table: dict, keys: frozenset):
        self.table, self.keys = table, keys
        self.memo: dict[Any, Any] = {}

    def resolve(self, node: Any) -> Any:
        while isinstance(node, str) and node not in PRIMITIVE_TYPES and node in self.table:
            node = self.table[node]
        return node

    def __call__(self, node: Any) -> bool:
        found = self.memo.get(id(node))
        if found is not None:
            return found
        if isinstance(node, str):
            resolved = self.resolve(node)
            if isinstance(resolved, str):
                return False
            return self(resolved)
        if not isinstance(node, (dict, list)):
            return False
        self.memo[id(node)] = False  # a recursive type: what is below decides
        if isinstance(node, list):
            found = any([self(branch) for branch in node])
        else:
            kind = node.get("type")
            found = _key(node) in self.keys
            children = []
            if kind in ("record", "error", "request"):
                children = [field.get("type") for field in node.get("fields", ())]
            elif kind == "array":
                children = [node.get("items")]
            elif kind == "map":
                children = [node.get("values")]
            elif isinstance(kind, (dict, list)):
                children = [kind]
            found = any([self(child) for child in children]) or found
        self.memo[id(node)] = found
        return found


#: the Python types a value read for a node has, by node type (roastedavro's
#: values: its standard logical types give these)
_READ_TYPES: dict[str, tuple[type[Any], ...]] = {
    "null": (type(None),),
    "boolean": (bool,),
    "int": (int,),
    "long": (int,),
    "float": (float,),
    "double": (float,),
    "bytes": (bytes,),
    "fixed": (bytes,),
    "string": (str,),
    "enum": (str,),
    "array": (list,),
    "map": (dict,),
    "record": (dict,),
    "error": (dict,),
}
_LOGICAL_READ_TYPES: dict[str | None, tuple[type[Any], ...]] = {
    "int-date": (datetime.date,),
    "int-time-millis": (datetime.time,),
    "long-time-micros": (datetime.time,),
    "long-timestamp-millis": (datetime.datetime,),
    "long-timestamp-micros": (datetime.datetime,),
    "long-local-timestamp-millis": (datetime.datetime,),
    "long-local-timestamp-micros": (datetime.datetime,),
    "bytes-decimal": (decimal.Decimal,),
    "fixed-decimal": (decimal.Decimal,),
    "string-uuid": (uuid.UUID,),
}


class Plan:
    """Where a schema's custom logical types are, and their application:
    ``prepare`` (before writing) and ``post`` (after reading)."""

    def __init__(self, schema: Any, reader: Any, writer_keys: frozenset, reader_keys: frozenset):
        self.table: dict = {}
        self.schema = _parsed(schema, self.table)
        self.reader_table: dict = {}
        self.reader = None
        if reader is not None:
            parsed = _parsed(reader, self.reader_table)
            if parsed != self.schema:
                self.reader = parsed  # as fastavro: an equal reader's schema is none
        self.writes_below = _Needs(self.table, writer_keys)
        self.reads_below = _Needs(self.table, reader_keys)
        self.writes = self.writes_below(self.schema)
        self.reads = self.reads_below(self.schema)
        self.named = {"writer": self.table, "reader": self.reader_table}

    # -- writing ---------------------------------------------------------------

    def prepare(self, datum: Any) -> Any:
        """``datum`` with fastavro's ``prepare`` applied where the schema has a
        custom logical type (the datum itself is not changed)."""
        if not self.writes:
            return datum
        return self._prepare(datum, self.schema)

    def _prepare(self, datum: Any, node: Any) -> Any:
        needs = self.writes_below
        node = needs.resolve(node)
        if not needs(node):
            return datum
        if isinstance(node, list):
            return self._prepare_union(datum, node)
        key = _key(node)
        if key is not None and key not in STANDARD:
            prepare = WRITERS.get(key)
            if prepare is not None:
                datum = prepare(datum, node)
        kind = node["type"]
        if kind in ("record", "error", "request"):
            if isinstance(datum, Mapping):
                datum = dict(datum)
                for field in node["fields"]:
                    name = field["name"]
                    if name in datum and needs(field["type"]):
                        datum[name] = self._prepare(datum[name], field["type"])
        elif kind == "array":
            if not isinstance(datum, (str, bytes, Mapping)):
                try:
                    items = list(datum)
                except TypeError:
                    return datum  # the codec says what is wrong
                items_node = node["items"]
                datum = [self._prepare(item, items_node) for item in items]
        elif kind == "map":
            if isinstance(datum, Mapping):
                values = node["values"]
                datum = {name: self._prepare(value, values) for name, value in datum.items()}
        elif isinstance(kind, (dict, list)):
            datum = self._prepare(datum, kind)
        return datum

    def _prepare_union(self, datum: Any, branches: list) -> Any:
        # fastavro's write_union: the branch its validation (with the
        # prepare functions) takes, the float/double and record rules
        if isinstance(datum, tuple) and len(datum) == 2 and isinstance(datum[0], str):
            name, value = datum
            for branch in branches:
                if _branch_name(branch) == name:
                    return name, self._prepare(value, branch)
            return datum  # no such branch: the codec says so
        table = self.table
        best = -1
        most_fields = -1
        could_be_float = False
        for index, candidate in enumerate(branches):
            if could_be_float:
                if _type(candidate) == "double":
                    best = index
                    break
                continue
            if _validate(datum, candidate, table, field="", raise_errors=False, options={}):
                kind = _type(candidate)
                if kind in table:
                    candidate = table[kind]
                    kind = _type(candidate)
                if kind == "record":
                    key = _key(candidate)
                    if key is not None:
                        prepare = WRITERS.get(key)
                        if prepare is not None:
                            datum = prepare(datum, candidate)
                    names = {field["name"] for field in candidate["fields"]}
                    fields = len(names.intersection(datum))
                    if fields > most_fields:
                        best = index
                        most_fields = fields
                elif kind == "float":
                    best = index
                    could_be_float = True
                else:
                    best = index
                    break
        if best == -1:
            return datum  # no branch takes it: the codec says so
        branch = branches[best]
        if not self.writes_below(branch):
            return datum
        return _branch_name(branch), self._prepare(datum, branch)

    # -- reading ---------------------------------------------------------------

    def post(self, value: Any) -> Any:
        """A value the codec read, with fastavro's reader functions applied
        where the writer's schema has a custom logical type."""
        if not self.reads:
            return value
        return self._post(value, self.schema, self.reader)

    def _reader_node(self, writer: Any, reader: Any) -> Any:
        # the reader's node fastavro reads ``writer``'s data as (read_union,
        # match_schemas); None when it cannot
        if reader is None:
            return None
        if isinstance(reader, list) and not isinstance(writer, list):
            for branch in reader:
                if _match_types(writer, branch, self.named):
                    reader = branch
                    break
            else:
                return None
        try:
            return _match_schemas(writer, reader, self.named, raise_on_error=False)
        except Exception:  # noqa: BLE001 - fastavro's matching of schemas it cannot pair
            return None

    def _resolve_reader(self, node: Any) -> Any:
        while isinstance(node, str) and node not in PRIMITIVE_TYPES and node in self.reader_table:
            node = self.reader_table[node]
        return node

    def _post(self, value: Any, writer: Any, reader: Any) -> Any:
        needs = self.reads_below
        writer = needs.resolve(writer)
        if not needs(writer):
            return value
        if reader is not None:
            reader = self._resolve_reader(self._reader_node(writer, reader))
        if isinstance(writer, list):
            return self._post_union(value, writer, reader)
        kind = writer["type"]
        if kind in ("record", "error", "request"):
            if isinstance(value, dict):
                fields = {}
                if isinstance(reader, dict):
                    for field in reader.get("fields", ()):
                        fields[field["name"]] = (field["name"], field.get("type"))
                        for alias in field.get("aliases", ()):
                            fields.setdefault(alias, (field["name"], field.get("type")))
                for field in writer["fields"]:
                    name = field["name"]
                    if not needs(field["type"]):
                        continue
                    if reader is None:
                        target, reader_type = name, None
                    elif name in fields:
                        target, reader_type = fields[name]
                    else:
                        continue  # the reader's schema has not this field
                    if target in value:
                        value[target] = self._post(value[target], field["type"], reader_type)
        elif kind == "array":
            if isinstance(value, list):
                items = writer["items"]
                reader_items = reader.get("items") if isinstance(reader, dict) else None
                value[:] = [self._post(item, items, reader_items) for item in value]
        elif kind == "map":
            if isinstance(value, dict):
                values = writer["values"]
                reader_values = reader.get("values") if isinstance(reader, dict) else None
                for name, item in value.items():
                    value[name] = self._post(item, values, reader_values)
        elif isinstance(kind, (dict, list)):
            value = self._post(value, kind, reader)
        key = _key(writer)
        if key is not None and key not in STANDARD:
            read = READERS.get(key)
            if read is not None:
                value = read(value, writer, reader)
        return value

    def _could_be(self, value: Any, node: Any, resolve: Callable[[Any], Any]) -> bool:
        node = resolve(node)
        if isinstance(node, list):
            return any(self._could_be(value, branch, resolve) for branch in node)
        kind = _type(node)
        if kind in ("int", "long") and type(value) is bool:
            return False
        key = _key(node)
        types = _LOGICAL_READ_TYPES.get(key) or _READ_TYPES.get(kind, ())
        if key in ("int-date",) and type(value) is datetime.datetime:
            return False
        if not isinstance(value, types):
            return False
        if kind in ("record", "error"):
            return set(value) == {field["name"] for field in node["fields"]}
        if kind == "enum":
            return value in node.get("symbols", ())
        if kind == "fixed" and key not in _LOGICAL_READ_TYPES:
            return len(value) == node.get("size")
        return True

    def _post_union(self, value: Any, branches: list, reader: Any) -> Any:
        # the writer's branch the value was read from: the one whose value
        # (as the reader's schema reads it) it can be
        needs = self.reads_below
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
            # fastavro's naming options: (the branch's name, its value)
            for branch in branches:
                if _branch_name(needs.resolve(branch)) == value[0]:
                    return value[0], self._post(value[1], branch, reader)
        candidates = []
        for branch in branches:
            if reader is None:
                if self._could_be(value, branch, needs.resolve):
                    candidates.append((branch, None))
                continue
            target = self._resolve_reader(self._reader_node(needs.resolve(branch), reader))
            if target is not None and self._could_be(value, target, self._resolve_reader):
                candidates.append((branch, reader))
        if len(candidates) == 1:
            branch, branch_reader = candidates[0]
            return self._post(value, branch, branch_reader)
        if any(needs(branch) for branch, _ in candidates):
            raise SchemaParseError(
                f"the value {value!r} read for the union {json.dumps(branches, default=str)} "
                f"could have come from more than one of its branches, and one of them has a "
                f"custom logical type: roastedavro.fastavro cannot tell whether to apply it"
            )
        return value


class LogicalCodec:
    """A codec with a plan: what the drop-in's per-call paths expect of an
    AvroCodec (``_codec``, ``_reader``, ``dump``, ``load``, ``flags``,
    ``writer_schema``; the rest is the codec's), applying the plan around
    it. ``_codec`` is None, so roastedavro._dropin calls ``dump``."""

    __slots__ = ("plain", "plan", "_reader")
    _codec = None

    def __init__(self, plain: Any, plan: Plan):
        self.plain, self.plan = plain, plan
        self._reader = LogicalReader(plain, plan)

    def dump(self, datum: Any) -> bytes:
        return self.plain.dump(self.plan.prepare(datum))

    def load(self, data: Any) -> Any:
        return self.plan.post(self.plain.load(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.plain, name)


class LogicalReader:
    """The codec's current reader, its values passed through the plan."""

    __slots__ = ("plain", "plan")

    def __init__(self, plain: Any, plan: Plan):
        self.plain, self.plan = plain, plan

    def load_one(self, data: Any, start: int) -> tuple[Any, int]:
        datum, end = self.plain._reader.load_one(data, start)
        return self.plan.post(datum), end

    def load(self, data: Any) -> Any:
        return self.plan.post(self.plain._reader.load(data))
