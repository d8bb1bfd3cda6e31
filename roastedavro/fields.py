"""marshmallow fields of this library's own."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from marshmallow import Schema, fields


class Union(fields.Field):
    """A value that is an object of one of several nested schemas, written as
    an Avro union of their records.

    ``branches`` maps a Python class to the schema (class or instance) that
    writes and loads its objects, in order: a dict, or (class, schema)
    pairs::

        shape = Union({Circle: CircleSchema, Square: SquareSchema})

    - **dump**: the first branch whose class the value is an instance of
      (``isinstance``, in the order given) writes it; a value of none of the
      classes is a ``ValidationError``. Put subclasses before their bases.
    - **load**: the union branch read says which schema loads the record (its
      hooks and ``post_load`` included), whatever its class.
    - **marshmallow's own dump and load** (``dump``/``load``, JSON): the value
      is a dict of one key, the branch's Avro record name, holding the
      record's fields; Avro's JSON encoding writes a union's value the same way.

    The Avro type is the union of the branches' records, with ``"null"``
    first when ``allow_none=True``; each schema is one branch (its record
    name, ``Meta.avro_name`` or the class name, unique within the union).
    """

    default_error_messages = {
        "invalid": "Not a union value: a dict of one record name and its fields.",
        "unknown": "{name!r} is not one of this union's records.",
        "no_branch": "Cannot write a value of type {kind}: it is none of this union's classes ({names}).",
    }

    def __init__(self, branches: Mapping[type, Any] | Iterable[tuple[type, Any]], **kwargs: Any):
        pairs = list(branches.items()) if isinstance(branches, Mapping) else list(branches)
        if not pairs:
            raise ValueError("Union needs at least one (class, schema) branch")
        self.branches: list[tuple[type, Schema]] = []
        for pair in pairs:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise ValueError(f"a Union branch is a (class, schema) pair, not {pair!r}")
            kind, schema = pair
            if not isinstance(kind, type):
                raise ValueError(f"a Union branch's class must be a class, not {kind!r}")
            if isinstance(schema, type) and issubclass(schema, Schema):
                schema = schema()
            elif not isinstance(schema, Schema):
                raise ValueError(
                    f"a Union branch's schema must be a marshmallow Schema or Schema class, not {schema!r}"
                )
            self.branches.append((kind, schema))
        super().__init__(**kwargs)

    @staticmethod
    def record_name(schema: Schema) -> str:
        """The Avro name of a branch's record (``Meta.avro_name``, else the class name)."""
        meta = type(schema).__dict__.get("Meta")
        return getattr(meta, "avro_name", None) or type(schema).__name__

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        if value is None:
            return None
        for kind, schema in self.branches:
            if isinstance(value, kind):
                return {self.record_name(schema): schema.dump(value)}
        raise self.make_error(
            "no_branch",
            kind=type(value).__name__,
            names=", ".join(kind.__name__ for kind, _ in self.branches),
        )

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if not isinstance(value, Mapping) or len(value) != 1:
            raise self.make_error("invalid")
        ((name, record),) = value.items()
        for _, schema in self.branches:
            if self.record_name(schema) == name:
                return schema.load(record)
        raise self.make_error("unknown", name=name)
