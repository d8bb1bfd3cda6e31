"""marshmallow's steps after field deserialization, run on the compiled reader's result.

The compiled reader builds a record's loaded dict (field validators
included, see ``validators.py``). What marshmallow's ``load`` does next,
``@validates`` methods, ``@validates_schema`` methods and ``post_load``
hooks, runs here with the order, arguments and keywords marshmallow's
successful load gives them. Any error makes the codec load the bytes again
through marshmallow's ``load``, which builds the exact ``ValidationError``
(messages and ``valid_data``).
"""

from __future__ import annotations

import inspect
from typing import Any

from marshmallow import Schema, ValidationError, missing
from marshmallow.decorators import POST_LOAD, PRE_DUMP, PRE_LOAD, VALIDATES, VALIDATES_SCHEMA

from roastedavro._support import INVALID

# marshmallow 4 passes `unknown` to hooks; its private method says whether
# the installed version does
_PASSES_UNKNOWN = "unknown" in inspect.signature(Schema._invoke_load_processors).parameters


def hook_entries(schema: Schema) -> list[tuple[str, bool, dict]]:
    """(tag, pass_many, options) for every hook method of the schema.

    marshmallow 3.2x keeps attribute names under (tag, pass_many) keys with
    the options on the method; later versions keep (name, many, options)
    under the tag.
    """
    return [(tag, many, options) for tag, many, options, _ in _named_hook_entries(schema)]


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
    own load must decide (a validator failed, a hook raised
    ``ValidationError``, a ``@validates`` method returned ``missing``).

    The hooks are called as marshmallow calls them on a successful load:
    the same order (collection hooks first), arguments and keywords, so the
    result is marshmallow's. Error paths are left to marshmallow itself.
    """

    def __init__(self, schema: Schema):
        self.schema = schema
        #: a @validates names a field the schema does not have: marshmallow
        #: raises ValueError on every load, so every load goes to it
        self.defer = False
        self.field_checks: list[tuple[Any, str, dict]] = []
        schema_checks: dict[bool, list] = {True: [], False: []}
        post_loads: dict[bool, list] = {True: [], False: []}
        for tag, many, options, name in _named_hook_entries(schema):
            method = getattr(schema, name)
            if tag == VALIDATES:
                names = options.get("field_names") or (options["field_name"],)
                for field_name in names:
                    field = schema.fields.get(field_name)
                    if field is None:
                        # excluded by only/exclude (skipped), or an error marshmallow raises
                        self.defer = self.defer or field_name not in schema.declared_fields
                        continue
                    data_key = field.data_key if field.data_key is not None else field_name
                    # marshmallow 4 tells the method which field it validates
                    kwargs = {"data_key": data_key} if "field_names" in options else {}
                    self.field_checks.append((method, field.attribute or field_name, kwargs))
            elif tag == VALIDATES_SCHEMA:
                schema_checks[many].append(method)
            elif tag == POST_LOAD:
                post_loads[many].append(method)
        # marshmallow runs the collection (pass_many) hooks first
        self.schema_checks = [(m, True) for m in schema_checks[True]] + [
            (m, False) for m in schema_checks[False]
        ]
        self.post_loads = [(m, True) for m in post_loads[True]] + [(m, False) for m in post_loads[False]]

    def __bool__(self) -> bool:
        return bool(self.defer or self.field_checks or self.schema_checks or self.post_loads)

    def __call__(self, result: Any, many: bool, validate: bool) -> Any:
        if self.defer:
            return INVALID
        schema = self.schema
        kwargs: dict[str, Any] = {"many": many, "partial": schema.partial}
        if _PASSES_UNKNOWN:
            kwargs["unknown"] = schema.unknown
        try:
            if validate:
                records = result if many else (result,)
                for method, key, extra in self.field_checks:
                    for record in records:
                        if key in record and method(record[key], **extra) is missing:
                            return INVALID
                for method, whole in self.schema_checks:
                    if many and not whole:
                        for record in result:
                            method(record, **kwargs)
                    else:
                        method(result, **kwargs)
            for method, whole in self.post_loads:
                if many and not whole:
                    result = [method(record, **kwargs) for record in result]
                else:
                    result = method(result, **kwargs)
        except ValidationError:
            return INVALID
        return result


def _named_hook_entries(schema: Schema):
    """hook_entries with each hook's attribute name, in marshmallow's order."""
    for key, hooks in getattr(schema, "_hooks", {}).items():
        for hook in hooks:
            if isinstance(hook, tuple):
                name, many, options = hook
                tag = key
            else:
                name = hook
                tag, many = key if isinstance(key, tuple) else (key, False)
                config = getattr(getattr(type(schema), hook, None), "__marshmallow_hook__", None) or {}
                options = config.get(key, {})
            yield tag, bool(many), dict(options or {}), name


class PreDump:
    """A nested schema's ``pre_dump`` hooks, run on its value before the compiled writer.

    As marshmallow's Nested field does: on the whole list with many=True,
    never on None.
    """

    def __init__(self, schema: Schema):
        self.schema = schema

    def __call__(self, value: Any, many: bool) -> Any:
        return self.schema._invoke_dump_processors(PRE_DUMP, value, many=many, original_data=value)
