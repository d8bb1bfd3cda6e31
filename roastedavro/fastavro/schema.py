"""``fastavro.schema``'s functions over roastedavro's schema model.

``parse_schema`` and ``load_schema`` are fastavro's own (the result works
with both libraries; a schema fastavro refuses raises its exception, which
is roastedavro's SchemaError too), and check that roastedavro's model of
the schema can be built. Canonical forms and fingerprints are roastedavro's,
of that model (Java's, and fastavro's for the schemas fastavro takes).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from roastedavro import _fastavro_parts

# fastavro's own, from the module fastavro.schema takes them from: never
# names that may have been replaced by ours
_fastavro_parse_schema = _fastavro_parts.parse_schema
_fastavro_load_schema = _fastavro_parts.load_schema
_schema = _fastavro_parts.module("_schema_common")

from roastedavro.avro.canonical import crc64_avro  # noqa: E402  (after fastavro's parts, which it wraps)
from roastedavro.fastavro._models import (  # noqa: F401, E402  (the errors are public here)
    SchemaParseError,
    UnknownTypeError,
    as_model,
    fastavro_parse,
    model_of,
)


def parse_schema(
    schema: Any,
    named_schemas: dict | None = None,
    *,
    expand: bool = False,
    _write_hint: bool = True,
    _force: bool = False,
    _ignore_default_error: bool = False,
) -> Any:
    """fastavro's ``parse_schema`` (what fastavro refuses raises its
    SchemaParseException or UnknownType, as a SchemaParseError or
    UnknownTypeError), after which roastedavro's model of the schema is
    built (a SchemaParseError if it cannot be served)."""
    parsed = fastavro_parse(
        schema,
        named_schemas,
        expand=expand,
        _write_hint=_write_hint,
        _force=_force,
        _ignore_default_error=_ignore_default_error,
    )
    model_of(parsed, full_names=True, named=named_schemas)
    return parsed


def load_schema(
    schema_path: str | Path,
    *,
    repo: Any = None,
    named_schemas: dict | None = None,
    _write_hint: bool = True,
    _injected_schemas: Any = None,
) -> Any:
    """The schema in an ``.avsc`` file, names from ``<folder>/<name>.avsc``
    loaded as needed: fastavro's ``load_schema``, its refusals raised as in
    ``parse_schema``."""
    try:
        loaded = _fastavro_load_schema(
            schema_path,
            repo=repo,
            named_schemas=named_schemas,
            _write_hint=_write_hint,
            _injected_schemas=_injected_schemas,
        )
    except _schema.UnknownType as error:
        raise UnknownTypeError(
            error.name, f"{error.name!r} is not a defined type, and no schema file defines it"
        ) from None
    except _schema.SchemaParseException as error:
        raise SchemaParseError(str(error)) from None
    model_of(loaded, full_names=True, named=named_schemas)
    return loaded


def to_parsing_canonical_form(schema: Any) -> str:
    """The Parsing Canonical Form (as Java's ``SchemaNormalization.toParsingForm``)
    of the schema as fastavro reads it."""
    if isinstance(schema, (dict, list)) or (
        isinstance(schema, str) and schema.lstrip()[:1] not in ("{", "[", '"')
    ):
        # fastavro's reading: its refusals, and its full names
        return model_of(fastavro_parse(schema), full_names=True).canonical_form()
    return as_model(schema).canonical_form()


def fingerprint(parsing_canonical_form: str, algorithm: str) -> str:
    """The fingerprint in hex, as fastavro gives it: ``CRC-64-AVRO`` as its
    little-endian bytes (as Java and single-object encoding write them), or
    any hashlib algorithm (``md5``, ``sha256``, ...)."""
    data = parsing_canonical_form.encode("utf-8")
    if algorithm == "CRC-64-AVRO":
        return crc64_avro(data).to_bytes(8, "little").hex()
    if algorithm not in FINGERPRINT_ALGORITHMS:
        raise ValueError(f"Unknown schema fingerprint algorithm {algorithm}")
    # the Avro specification's names, and hashlib's
    return hashlib.new({"MD5": "md5", "SHA-256": "sha256"}.get(algorithm, algorithm), data).hexdigest()


#: fastavro's: hashlib's guaranteed algorithms, CRC-64-AVRO, MD5 and SHA-256
FINGERPRINT_ALGORITHMS = _schema.FINGERPRINT_ALGORITHMS


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        # probes such as the import system's for __path__ import nothing
        raise AttributeError(f"module 'roastedavro.fastavro.schema' has no attribute {name!r}")
    # the rest of fastavro.schema, which imports the whole of fastavro
    import fastavro.schema

    try:
        return getattr(fastavro.schema, name)
    except AttributeError:
        raise AttributeError(f"module 'roastedavro.fastavro.schema' has no attribute {name!r}") from None
