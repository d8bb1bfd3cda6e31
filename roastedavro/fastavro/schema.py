"""``fastavro.schema``'s functions over roastedavro's schema model.

Canonical forms and fingerprints are roastedavro's (equal to Java's);
``parse_schema`` and ``load_schema`` return what fastavro's return, so the
result works with both libraries.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import fastavro.schema as _schema

# fastavro's own, taken before anything can replace the module's names with ours
_fastavro_parse_schema = _schema.parse_schema
_fastavro_load_schema = _schema.load_schema

from roastedavro.avro.canonical import crc64_avro
from roastedavro.avro.parse import load_schema as _load_model
from roastedavro.fastavro._models import as_model


def parse_schema(schema: Any, named_schemas: dict | None = None, *, expand: bool = False,
                 _write_hint: bool = True, _force: bool = False,
                 _ignore_default_error: bool = False) -> Any:
    """fastavro's ``parse_schema``, after roastedavro's parser checked the schema
    (a :class:`roastedavro.errors.SchemaError`, a ``ValueError``, for an invalid one)."""
    if named_schemas is None:
        # roastedavro's checks: Java's rules, clear messages
        as_model(schema)
    return _fastavro_parse_schema(schema, named_schemas, expand=expand, _write_hint=_write_hint,
                                _force=_force, _ignore_default_error=_ignore_default_error)


def load_schema(schema_path: str | Path, *, repo: Any = None, named_schemas: dict | None = None,
                _write_hint: bool = True, _injected_schemas: Any = None) -> Any:
    """The schema in an ``.avsc`` file, names from ``<folder>/<name>.avsc`` loaded as needed."""
    if repo is not None or named_schemas is not None or _injected_schemas is not None:
        return _fastavro_load_schema(schema_path, repo=repo, named_schemas=named_schemas,
                                   _write_hint=_write_hint, _injected_schemas=_injected_schemas)
    model = _load_model(schema_path)
    return _fastavro_parse_schema(model.to_dict(), _write_hint=_write_hint)


def to_parsing_canonical_form(schema: Any) -> str:
    """The Parsing Canonical Form (as Java's ``SchemaNormalization.toParsingForm``)."""
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
    try:
        return getattr(_schema, name)
    except AttributeError:
        raise AttributeError(f"module 'roastedavro.fastavro.schema' has no attribute {name!r}") from None
