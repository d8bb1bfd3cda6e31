"""marshmallow's steps after field deserialization, run on the compiled reader's result.

The compiled reader builds a record's loaded dict (field validators
included, see ``validators.py``). What marshmallow's ``load`` does next,
``@validates`` methods, ``@validates_schema`` methods and ``post_load``
hooks, runs here through marshmallow's own private methods, so ordering,
keyword arguments and the ``many`` variants are exactly its own. Any error
makes the codec load the bytes again through marshmallow's ``load``, which
builds the exact ``ValidationError`` (messages and ``valid_data``).
"""

from __future__ import annotations

import inspect
from typing import Any

from marshmallow import Schema, ValidationError
from marshmallow.decorators import POST_LOAD, PRE_DUMP, PRE_LOAD, VALIDATES, VALIDATES_SCHEMA
from marshmallow.error_store import ErrorStore

from roastedavro._support import INVALID

# marshmallow 4 renamed pass_many to pass_collection and passes `unknown`
# to hooks; the private methods say which one is installed.
_COLLECTION = ("pass_collection" if "pass_collection" in
               inspect.signature(Schema._invoke_schema_validators).parameters else "pass_many")
_PASSES_UNKNOWN = "unknown" in inspect.signature(Schema._invoke_load_processors).parameters


def hook_entries(schema: Schema) -> list[tuple[str, bool, dict]]:
    """(tag, pass_many, options) for every hook method of the schema.

    marshmallow 3.2x keeps attribute names under (tag, pass_many) keys with
    the options on the method; later versions keep (name, many, options)
    under the tag.
    """
    entries = []
    for key, hooks in getattr(schema, "_hooks", {}).items():
        for hook in hooks:
            if isinstance(hook, tuple):
                _, many, options = hook
                tag = key
            else:
                tag, many = key if isinstance(key, tuple) else (key, False)
                config = getattr(getattr(type(schema), hook, None), "__marshmallow_hook__", None) or {}
                options = config.get(key, {})
            entries.append((tag, bool(many), dict(options or {})))
    return entries


def hook_tags(schema: Schema) -> set[str]:
    """The marshmallow hook kinds a schema defines (pre_load, validates, ...)."""
    return {tag for tag, _, _ in hook_entries(schema)}


def load_hooks_fallback(schema: Schema) -> str | None:
    """Why the schema's load hooks cannot run on the compiled result, if they cannot."""
    for tag, _, options in hook_entries(schema):
        if tag == PRE_LOAD:
            # it rewrites marshmallow's input, which the compiled reader never builds
            return "pre_load"
        if tag in (POST_LOAD, VALIDATES_SCHEMA) and options.get("pass_original"):
            return f"{tag} with pass_original"
    return None


class LoadHooks:
    """One schema's ``@validates``, ``@validates_schema`` and ``post_load`` steps.

    Called with the compiled reader's result (a dict, or a list of them with
    ``many``); returns the final value, or ``INVALID`` when marshmallow's
    load would raise.
    """

    def __init__(self, schema: Schema):
        self.schema = schema
        tags = hook_tags(schema)
        self.validates = VALIDATES in tags
        self.validates_schema = VALIDATES_SCHEMA in tags
        self.post_load = POST_LOAD in tags

    def __bool__(self) -> bool:
        return self.validates or self.validates_schema or self.post_load

    def __call__(self, result: Any, many: bool, validate: bool) -> Any:
        schema = self.schema
        extra: dict[str, Any] = {"partial": schema.partial}
        if _PASSES_UNKNOWN:
            extra["unknown"] = schema.unknown
        # only read with pass_original, which stays on marshmallow's path
        original = [None] * len(result) if many else None
        if validate and (self.validates or self.validates_schema):
            store = ErrorStore()
            if self.validates:
                schema._invoke_field_validators(error_store=store, data=result, many=many)
            if self.validates_schema:
                for pass_collection in (True, False):
                    schema._invoke_schema_validators(
                        error_store=store, data=result, original_data=original, many=many,
                        field_errors=False, **{_COLLECTION: pass_collection}, **extra)
            if store.errors:
                return INVALID
        if self.post_load:
            try:
                return schema._invoke_load_processors(
                    POST_LOAD, result, many=many, original_data=original, **extra)
            except ValidationError:
                return INVALID
        return result


class PreDump:
    """A nested schema's ``pre_dump`` hooks, run on its value before the compiled writer.

    As marshmallow's Nested field does: on the whole list with many=True,
    never on None.
    """

    def __init__(self, schema: Schema):
        self.schema = schema

    def __call__(self, value: Any, many: bool) -> Any:
        return self.schema._invoke_dump_processors(PRE_DUMP, value, many=many, original_data=value)
