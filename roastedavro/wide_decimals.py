"""Decimals past the codec's 64-bit fast path: the compiled reader's error
for the first decimal that does not fit, and which datums may hold one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roastedavro._support import fits_precision, named_types
from roastedavro.errors import DecodeError

if TYPE_CHECKING:  # annotations only: roastedavro.schema imports this module
    from roastedavro.schema import _Plan


def _decimal_encoder(value: Any) -> Any:
    from roastedavro.encoders.logical import DecimalEncoder

    encoder = getattr(value, "encoder", value)
    return encoder if isinstance(encoder, DecimalEncoder) else None


def _never(value) -> bool:
    return False


class _Stop(Exception):
    pass


def _wide_decimal(plan: _Plan, data, many: bool, until: int | None) -> DecodeError | None:
    """The compiled reader's DecodeError for the first decimal (on bytes or
    fixed) with more digits than its precision, before byte ``until``
    (None: anywhere): tier 0 reads decimals exactly, as plain Avro does. The
    bytes are walked in Python, positions only; None if there is none, or
    where the walk cannot go on (bytes tier 0 refused after ``until``)."""
    view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    end = len(view) if until is None else min(until, len(view))
    named: dict = {}
    pos = 0

    def varint() -> int:
        nonlocal pos
        shift = result = 0
        while True:
            if pos >= end or shift > 63:
                raise _Stop
            byte = view[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return (result >> 1) ^ -(result & 1)

    def skip(n: int) -> None:
        nonlocal pos
        if n < 0 or pos + n > end:
            raise _Stop
        pos += n

    def walk(schema: Any) -> None:
        nonlocal pos
        if isinstance(schema, str):
            if schema in named:
                return walk(named[schema])
            kind = schema
            schema = {"type": kind}
        elif isinstance(schema, list):
            index = varint()
            if not 0 <= index < len(schema):
                raise _Stop
            return walk(schema[index])
        kind = schema["type"]
        if isinstance(kind, (dict, list)):
            return walk(kind)
        if kind in ("record", "error"):
            named.setdefault(schema["name"], schema)
            for field in schema["fields"]:
                walk(field["type"])
        elif kind == "null":
            pass
        elif kind == "boolean":
            skip(1)
        elif kind in ("int", "long", "enum"):
            if kind == "enum":
                named.setdefault(schema["name"], schema)
            varint()
        elif kind == "float":
            skip(4)
        elif kind == "double":
            skip(8)
        elif kind in ("bytes", "string", "fixed"):
            if kind == "fixed":
                named.setdefault(schema["name"], schema)
            start = pos
            n = schema["size"] if kind == "fixed" else varint()
            if n < 0 or pos + n > end:
                raise _Stop
            precision = schema.get("precision")
            if type(precision) is int and kind != "string":
                if kind == "bytes" and n > (int(precision * 3.3220) + 1 + 8) // 8:
                    raise _Wide(precision, schema.get("scale", 0), start)
                unscaled = int.from_bytes(view[pos : pos + n], "big", signed=True)
                if not fits_precision(unscaled, precision):
                    raise _Wide(precision, schema.get("scale", 0), start)
            pos += n
        elif kind in ("array", "map"):
            while True:
                count = varint()
                if count == 0:
                    break
                if count < 0:
                    count = -count
                    varint()  # the block's size in bytes
                for _ in range(count):
                    if kind == "map":
                        skip(varint())
                    walk(schema["items"] if kind == "array" else schema["values"])
        else:
            raise _Stop

    try:
        walk({"type": "array", "items": plan.raw} if many else plan.raw)
    except _Wide as wide:
        return DecodeError(
            f"decimal value has more digits than decimal({wide.args[0]}, {wide.args[1]}) allows", wide.args[2]
        )
    except (_Stop, RecursionError, KeyError, TypeError, IndexError):
        return None
    return None


class _Wide(Exception):
    pass


class _DecimalScan:
    """Whether a raw datum may hold a decimal wider than its precision (or
    longer than the compiled reader reads): a filter for the exact walk of
    the bytes (_wide_decimal), which visits only the parts of the schema
    that hold decimals; True where it cannot tell (a union of records)."""

    def __init__(self, raw: Any):
        self.named: dict = named_types(raw)
        self.raw = raw
        self._holds: dict = {}

    def _resolve(self, schema: Any) -> Any:
        while True:
            if isinstance(schema, str):
                schema = self.named.get(schema, {"type": schema})
            elif isinstance(schema, dict) and isinstance(schema.get("type"), (dict, list)):
                schema = schema["type"]
            else:
                return schema

    def holds(self, schema: Any) -> bool:
        schema = self._resolve(schema)
        key = id(schema)
        if key in self._holds:
            return self._holds[key]
        self._holds[key] = False  # a recursive reference while deciding
        if isinstance(schema, list):
            result = any(self.holds(branch) for branch in schema)
        else:
            kind = schema.get("type")
            if kind in ("bytes", "fixed"):
                result = type(schema.get("precision")) is int
            elif kind in ("record", "error"):
                result = any(self.holds(f["type"]) for f in schema["fields"])
            elif kind == "array":
                result = self.holds(schema["items"])
            elif kind == "map":
                result = self.holds(schema["values"])
            else:
                result = False
        self._holds[key] = result
        return result

    def maybe_wide(self, datum: Any, many: bool) -> bool:
        check = self._check
        if check is None:
            check = self._check = self._compile(self.raw, {})
        try:
            if many:
                return any(check(item) for item in datum)
            return check(datum)
        except RecursionError:
            return True

    _check = None

    def _compile(self, schema: Any, made: dict):
        """A function of a raw value: True where it may hold a wide decimal."""
        schema = self._resolve(schema)
        if not self.holds(schema):
            return _never
        key = id(schema)
        if key in made:  # a recursive reference: called through its cell
            cell = made[key]
            return lambda value: cell[0](value)
        cell = made[key] = [None]
        if isinstance(schema, list):
            branches = [b for b in schema if self.holds(b)]
            if len(branches) > 1:

                def check(value):
                    return value is not None
            else:
                inner = self._compile(branches[0], made)

                def check(value):
                    return value is not None and inner(value)
        else:
            kind = schema["type"]
            if kind in ("bytes", "fixed"):
                precision = schema["precision"]
                longest = (int(precision * 3.3220) + 1 + 8) // 8 if kind == "bytes" else 1 << 62

                def check(value):
                    return type(value) is bytes and (
                        len(value) > longest
                        or not fits_precision(int.from_bytes(value, "big", signed=True), precision)
                    )
            elif kind in ("record", "error"):
                parts = [
                    (f["name"], self._compile(f["type"], made))
                    for f in schema["fields"]
                    if self.holds(f["type"])
                ]

                def check(value):
                    if type(value) is not dict:
                        return False
                    for name, part in parts:
                        if part(value.get(name)):
                            return True
                    return False
            elif kind == "array":
                items = self._compile(schema["items"], made)

                def check(value):
                    return type(value) is list and any(items(item) for item in value)
            else:  # map
                values = self._compile(schema["values"], made)

                def check(value):
                    return type(value) is dict and any(values(item) for item in value.values())

        cell[0] = check
        return check
