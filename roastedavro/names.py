"""Avro names and the identifiers derived from them."""

import re

#: a valid Avro name (record, field, enum, fixed, enum symbol)
AVRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NOT_IDENTIFIER = re.compile(r"[^0-9A-Za-z_]")


def identifier(text: str) -> str:
    """A Python/C identifier made from any text."""
    ident = _NOT_IDENTIFIER.sub("_", text)
    if not ident or ident[0].isdigit():
        ident = "_" + ident
    return ident
