"""Avro names, and the rules a declared Avro type must follow.

Types given in ``metadata={"avro": ...}`` come from users and other teams:
they are checked here, against the specification's grammar, before any
code is generated.
"""

from __future__ import annotations

import re
from typing import Any

from roastedavro.codetext import identifier  # noqa: F401  (re-exported)
from roastedavro.errors import CompileError

#: a valid Avro name (record, field, enum, fixed, enum symbol)
AVRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: a full name: dot-separated names
FULL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")

PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
NAME_RULE = "letters, digits and _, not starting with a digit"
#: Avro sizes and counts are ints; nothing larger is meaningful
MAX_SIZE = 2**31 - 1


def is_name(value: Any) -> bool:
    return type(value) is str and AVRO_NAME.match(value) is not None


def check_avro_type(avro: Any, where: str) -> None:
    """Raise ``CompileError`` naming ``where`` and the rule if ``avro`` is not
    a well-formed Avro type (names, namespaces, symbols, sizes, precisions)."""
    _check(avro, where, "the type")


def _fail(where: str, at: str, rule: str) -> CompileError:
    return CompileError(f"{where}: metadata avro: {at}: {rule}")


def _check_int(value, where, at, low, high):
    if type(value) is not int or not low <= value <= high:
        raise _fail(where, at, f"must be an integer from {low} to {high}, not {value!r}")


def _check(avro: Any, where: str, at: str, depth: int = 0) -> None:
    if depth > 100:
        raise _fail(where, at, "nested more than 100 levels deep")
    if type(avro) is str:
        if avro not in PRIMITIVES and not FULL_NAME.match(avro):
            raise _fail(
                where,
                at,
                f"{avro!r} is neither a primitive type nor a valid type name ({NAME_RULE}, dot-separated)",
            )
        return
    if type(avro) is list:
        for index, branch in enumerate(avro):
            _check(branch, where, f"{at}, union branch {index}", depth + 1)
        return
    if type(avro) is not dict:
        raise _fail(where, at, f"must be a type name, a list (union) or a dict, not {type(avro).__name__}")
    kind = avro.get("type")
    if "logicalType" in avro and type(avro["logicalType"]) is not str:
        raise _fail(where, at, "logicalType must be a string")
    if kind in ("record", "error", "enum", "fixed"):
        _check_named(avro, where, at)
    if kind in ("record", "error"):
        fields = avro.get("fields")
        if type(fields) is not list:
            raise _fail(where, at, "a record needs a list of fields")
        for index, field in enumerate(fields):
            if type(field) is not dict or not is_name(field.get("name")):
                name = field.get("name") if type(field) is dict else field
                raise _fail(
                    where, f"{at}, field {index}", f"{name!r} is not a valid field name ({NAME_RULE})"
                )
            if "type" not in field:
                raise _fail(where, f"{at}, field {field['name']}", "a field needs a type")
            _check(field["type"], where, f"{at}, field {field['name']}", depth + 1)
    elif kind == "enum":
        symbols = avro.get("symbols")
        if type(symbols) is not list or not symbols:
            raise _fail(where, at, "an enum needs a non-empty list of symbols")
        for symbol in symbols:
            if not is_name(symbol):
                raise _fail(where, at, f"enum symbol {symbol!r} is not valid ({NAME_RULE})")
        if len(set(symbols)) != len(symbols):
            raise _fail(where, at, "enum symbols must be unique")
        if "default" in avro and avro["default"] not in symbols:
            raise _fail(where, at, f"enum default {avro['default']!r} is not one of its symbols")
    elif kind == "fixed":
        _check_int(avro.get("size"), where, f"{at}, size", 0, MAX_SIZE)
    elif kind == "array":
        if "items" not in avro:
            raise _fail(where, at, "an array needs items")
        _check(avro["items"], where, f"{at}, items", depth + 1)
    elif kind == "map":
        if "values" not in avro:
            raise _fail(where, at, "a map needs values")
        _check(avro["values"], where, f"{at}, values", depth + 1)
    elif kind in PRIMITIVES:
        pass
    else:
        # {"type": <another type>}, or a reference by name
        _check(kind, where, at, depth + 1)
    if avro.get("logicalType") == "decimal":
        _check_int(avro.get("precision"), where, f"{at}, precision", 1, MAX_SIZE)
        _check_int(avro.get("scale", 0), where, f"{at}, scale", 0, avro["precision"])


def _check_named(avro: dict, where: str, at: str) -> None:
    name = avro.get("name")
    if type(name) is not str or not FULL_NAME.match(name):
        raise _fail(where, at, f"{name!r} is not a valid name ({NAME_RULE})")
    namespace = avro.get("namespace")
    if (
        namespace is not None
        and namespace != ""
        and (type(namespace) is not str or not FULL_NAME.match(namespace))
    ):
        raise _fail(where, at, f"{namespace!r} is not a valid namespace (dot-separated names: {NAME_RULE})")
    for alias in avro.get("aliases", ()):
        if type(alias) is not str or not FULL_NAME.match(alias):
            raise _fail(where, at, f"alias {alias!r} is not a valid name")


def min_encoded_size(avro: Any, named: dict | None = None, depth: int = 0) -> int:
    """The fewest bytes one value of an Avro type takes (0 for null and for
    records of only such fields): collection counts are checked against it."""
    named = {} if named is None else named
    if depth > 100:
        return 0
    if type(avro) is str:
        sizes = {"null": 0, "float": 4, "double": 8}
        if avro in PRIMITIVES:
            return sizes.get(avro, 1)
        return named.get(avro, 0)  # a reference: at least nothing
    if type(avro) is list:
        return 1  # the branch index
    if type(avro) is not dict:
        return 0
    kind = avro.get("type")
    if kind == "fixed":
        size = avro.get("size")
        found = size if type(size) is int and size >= 0 else 0
    elif kind in ("record", "error"):
        found = 0
        named[avro.get("name")] = 0  # recursion counts as 0 while in progress
        for field in avro.get("fields", ()):
            found += min_encoded_size(field.get("type"), named, depth + 1)
    elif kind in ("enum", "array", "map"):
        found = 1
    else:
        return min_encoded_size(kind, named, depth + 1)
    if kind in ("record", "error", "enum", "fixed") and type(avro.get("name")) is str:
        named[avro["name"]] = found
    return found
