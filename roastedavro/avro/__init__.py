"""The Avro schema model: types, parsing, canonical form and fingerprints, schema
resolution and compatibility."""

from __future__ import annotations

from roastedavro.avro.types import (  # noqa: F401
    NO_DEFAULT,
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
from roastedavro.avro.canonical import crc64_avro, fingerprint  # noqa: F401,E402
from roastedavro.avro.types import parsing_canonical_form  # noqa: F401,E402
from roastedavro.avro.parse import load_schema, parse_schema, parse_schemas  # noqa: F401,E402
from roastedavro.avro.resolve import resolve  # noqa: F401,E402

# compatibility is imported when first asked for: a process that writes and
# reads never needs it. (resolve cannot wait: its module's name is also the
# function's, which a later import of the module would hide.)
_LATER = {
    "CompatibilityResult": "compatibility",
    "Incompatibility": "compatibility",
    "check_compatibility": "compatibility",
    "check_mode": "compatibility",
}

# as type checkers see them (at run time TYPE_CHECKING is False)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from roastedavro.avro.compatibility import (  # noqa: F401
        CompatibilityResult,
        Incompatibility,
        check_compatibility,
        check_mode,
    )
del TYPE_CHECKING


def __getattr__(name: str) -> Any:
    module = _LATER.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "NO_DEFAULT",
    "Array",
    "AvroType",
    "CompatibilityResult",
    "Enum",
    "Field",
    "Fixed",
    "Incompatibility",
    "Logical",
    "Map",
    "NamedRef",
    "NamedType",
    "Primitive",
    "Record",
    "Schema",
    "Union",
    "check_compatibility",
    "check_mode",
    "crc64_avro",
    "fingerprint",
    "load_schema",
    "parse_schema",
    "parse_schemas",
    "parsing_canonical_form",
    "resolve",
]
