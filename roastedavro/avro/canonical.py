"""Fingerprints of a schema's Parsing Canonical Form: CRC-64-AVRO, MD5 and SHA-256.

The fingerprints are the schema's identity in single-object encoding,
container files and registries. The canonical form itself is written with
the model (``roastedavro.avro.types.parsing_canonical_form``, re-exported
by ``roastedavro.avro``).
"""

from __future__ import annotations

import hashlib
from typing import Any


#: the CRC-64-AVRO polynomial's empty fingerprint (the specification's EMPTY)
EMPTY64 = 0xC15D213AA4D7A795


def _crc64_table() -> list[int]:
    table = []
    for byte in range(256):
        fp = byte
        for _ in range(8):
            fp = (fp >> 1) ^ (EMPTY64 & -(fp & 1))
        table.append(fp)
    return table


_CRC64_TABLE = _crc64_table()

ALGORITHMS = ("CRC-64-AVRO", "MD5", "SHA-256")
_HASHLIB = {"MD5": "md5", "SHA-256": "sha256"}


def crc64_avro(data: bytes) -> int:
    """The 64-bit Rabin fingerprint of the specification (unsigned)."""
    fp = EMPTY64
    table = _CRC64_TABLE
    for byte in data:
        fp = (fp >> 8) ^ table[(fp ^ byte) & 0xFF]
    return fp


def fingerprint(canonical_form: str, algorithm: str = "CRC-64-AVRO") -> Any:
    """``CRC-64-AVRO`` -> int (Java's fingerprint64 as unsigned); ``MD5`` and
    ``SHA-256`` -> bytes. Case and dashes in the name do not matter."""
    key = algorithm.upper().replace("_", "-")
    key = {"SHA256": "SHA-256", "CRC64-AVRO": "CRC-64-AVRO", "CRC-64": "CRC-64-AVRO"}.get(key, key)
    data = canonical_form.encode("utf-8")
    if key == "CRC-64-AVRO":
        return crc64_avro(data)
    if key in _HASHLIB:
        return hashlib.new(_HASHLIB[key], data).digest()
    raise ValueError(f"unknown fingerprint algorithm {algorithm!r} (one of {', '.join(ALGORITHMS)})")
