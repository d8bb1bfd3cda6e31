"""What the code generator (roastedavro.avrogen), tier 0 and Avro JSON must
decide alike: the branch of a union a value's exact Python type chooses, and
the fewest bytes a value of each type takes. Kept apart from the generator so
that serving data does not import it (it brings jinja2 and the marshmallow
code generator)."""

from __future__ import annotations

from typing import Any

from roastedavro._unionrule import always_exact, reads_as
from roastedavro.avro.types import (
    Array,
    AvroType,
    Enum,
    Fixed,
    Map,
    Primitive,
    Record,
    Schema,
    Union,
)

# -- unions: the branch a value's exact Python type decides ---------------------

# the exact types the generated dispatch tests, and how (`value` is the value)
_TYPE_TESTS = {
    "None": "{value} is None",
    "str": "type({value}) is str",
    "int": "type({value}) is int",
    "float": "type({value}) is float",
    "dict": "type({value}) is dict",
    "list": "type({value}) is list",
    "bool": "type({value}) is bool",
    "bytes": "type({value}) is bytes",
    "datetime": "type({value}) is DATETIME",
    "date": "type({value}) is DATE",
    "time": "type({value}) is TIME",
    "Decimal": "type({value}) is DECIMAL",
    "UUID": "type({value}) is UUID",
    "Duration": "type({value}) is DURATION",
}
_TIMESTAMPS = (
    "timestamp-millis",
    "timestamp-micros",
    "timestamp-nanos",
    "local-timestamp-millis",
    "local-timestamp-micros",
    "local-timestamp-nanos",
)


def _accepted(avro: AvroType) -> dict[str, str]:
    """Which exact Python types fastavro's validation of a branch may accept:
    "yes" (every value of the type), "maybe" (some values), and for ints
    "int32", "int64" (by range) or "real" (every int)."""
    logical = getattr(avro, "logical", None)
    name = logical.name if logical is not None else None
    if isinstance(avro, Primitive):
        kind = avro.name
        if kind == "null":
            return {"None": "yes"}
        if kind == "boolean":
            return {"bool": "yes"}
        if kind == "int":
            if name == "date":
                return {"int": "int32", "date": "yes", "datetime": "yes", "str": "maybe"}
            if name == "time-millis":
                return {"int": "int32", "time": "yes"}
            return {"int": "int32"}
        if kind == "long":
            if name in _TIMESTAMPS:
                return {"int": "int64", "datetime": "yes"}
            if name == "time-micros":
                return {"int": "int64", "time": "yes"}
            return {"int": "int64"}
        if kind in ("float", "double"):
            return {"int": "real", "float": "yes"}
        if kind == "bytes":
            return {"bytes": "yes", "Decimal": "yes"} if name else {"bytes": "yes"}
        return {"str": "yes", "UUID": "yes"} if name == "uuid" else {"str": "yes"}
    if isinstance(avro, Fixed):
        accepted = {"bytes": "maybe"}
        if name == "decimal":
            accepted["Decimal"] = "maybe"
        elif name == "uuid":
            accepted["UUID"] = "yes"
        elif name == "duration":
            accepted["Duration"] = "yes"
        return accepted
    if isinstance(avro, Enum):
        return {"str": "maybe"}
    if isinstance(avro, Array):
        return {"list": "maybe"}
    if isinstance(avro, (Map, Record)):
        return {"dict": "maybe"}
    return {}


def _is_primitive(avro: AvroType, name: str) -> bool:
    return isinstance(avro, Primitive) and avro.name == name


def _lenient(avro: AvroType) -> bool:
    """A float or double field of a record: fastavro calls float() on its value."""
    return isinstance(avro, Primitive) and avro.name in ("float", "double") and avro.logical is None


def _nullable(avro: AvroType) -> bool:
    """fastavro writes null for a missing field of these (``"null" in field_type``)."""
    if isinstance(avro, Union):
        return any(_is_primitive(branch, "null") for branch in avro.branches)
    return _is_primitive(avro, "null")


class _UnionPlan:
    """The branch each exact Python type decides for every value of that type
    (UnionChooser's rule: the first branch reading back the value's type and
    value, else fastavro's choice), or None where the values must decide."""

    def __init__(self, union: Union, schema: Schema):
        self.branches = [schema.deref(branch) for branch in union.branches]
        self.tables = [_accepted(branch) for branch in self.branches]
        self.reads = [reads_as(branch) for branch in self.branches]

    def _same_kind(self, python_type: str) -> int | None | bool:
        """The branch that reads back every value of the type it accepts (an
        int, the branch), False if no branch reads the type back (fastavro's
        choice then), None if the values must decide."""
        same = [
            (index, table[python_type])
            for index, table in enumerate(self.tables)
            if python_type in table and self.reads[index] == python_type
        ]
        if not same:
            return False
        if python_type == "float":
            doubles = [index for index, _ in same if _is_primitive(self.branches[index], "double")]
            return doubles[0] if doubles else same[0][0]
        if python_type == "Decimal" and len(same) > 1:
            return None  # a decimal's scale and precision decide which takes it
        index, how = same[0]
        # "maybe": some values of the type only: those are the values' choice,
        # unless no other branch could take the rest
        alone = len(same) == 1 and not any(
            python_type in table for other, table in enumerate(self.tables) if other != index
        )
        if (how == "yes" or alone) and (len(same) == 1 or always_exact(python_type, self.branches[index])):
            return index
        return None

    def _double_after(self, index: int) -> int:
        # fastavro prefers a double to a float: after a float branch matches,
        # the first later double wins
        if _is_primitive(self.branches[index], "float"):
            for later in range(index + 1, len(self.branches)):
                if _is_primitive(self.branches[later], "double"):
                    return later
        return index

    def static(self, python_type: str) -> int | None:
        same = self._same_kind(python_type)
        if same is not False:
            return same
        found = [
            (index, table[python_type]) for index, table in enumerate(self.tables) if python_type in table
        ]
        if not found:
            return None
        index, how = found[0]
        if how == "yes" or len(found) == 1:
            return self._double_after(index)
        return None

    def dict_branches(self) -> list[int]:
        """The branches a dict may be written as (records and maps), in order."""
        return [index for index, table in enumerate(self.tables) if "dict" in table]

    def for_int(self) -> list[int | None]:
        """The branch of an int that fits an Avro int, a long, neither."""
        result = []
        for size in (0, 1, 2):
            chosen = None
            # a branch that reads back an int first (an int that fits it is
            # exact); else fastavro's choice (a date, a time, a float...)
            for ints in (True, False):
                for index, table in enumerate(self.tables):
                    if ints and self.reads[index] != "int":
                        continue
                    how = table.get("int")
                    if how == "real" or (how == "int64" and size <= 1) or (how == "int32" and size == 0):
                        chosen = index if ints else self._double_after(index)
                        break
                if chosen is not None:
                    break
            result.append(chosen)
        return result


# -- sizes ------------------------------------------------------------------------

_PRIMITIVE_SIZES = {"null": 0, "float": 4, "double": 8}


class _MinSizes:
    """The fewest bytes a value of each type takes (lower bounds; recursive
    records settle by iteration, as the runtime's generic node table does)."""

    def __init__(self, schema: Schema):
        self.schema = schema
        self.records = {name: 0 for name, avro in schema.named.items() if isinstance(avro, Record)}
        for _ in range(64):
            changed = False
            for name in self.records:
                record: Any = schema.named[name]  # a Record (self.records)
                size = min(sum(self.of(field.type) for field in record.fields), 2**40)
                if size != self.records[name]:
                    self.records[name] = size
                    changed = True
            if not changed:
                break

    def of(self, avro: AvroType) -> int:
        avro = self.schema.deref(avro)
        if isinstance(avro, Primitive):
            return _PRIMITIVE_SIZES.get(avro.name, 1)
        if isinstance(avro, Fixed):
            return avro.size
        if isinstance(avro, Record):
            return self.records.get(avro.name, 0)
        if isinstance(avro, Union):
            return 1 + min((self.of(branch) for branch in avro.branches), default=0)
        return 1  # enum index, array and map block count
