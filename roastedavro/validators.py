"""A field's marshmallow validators as one Cython condition on the loaded value.

Range, Length, Equal, OneOf (over a list or tuple) and Regexp become inline
comparisons on the value, the same comparisons their ``__call__`` makes;
Email runs its accepting branch in the runtime; any other validator (URL,
ContainsOnly, NoneOf, callables, user classes) is called once through the
runtime's ``passes``. Only the outcome matters here: a value that fails
makes the codec load the bytes again through marshmallow, which raises the
exact error.
"""

from __future__ import annotations

from marshmallow import fields, validate


def has_validation(field: fields.Field) -> bool:
    """Whether loading a value of the field runs a validation step."""
    return bool(field.validators) or type(field)._validate is not fields.Field._validate


def failure_condition(fn, field: fields.Field, value: str) -> str | None:
    """A Cython expression that is true when ``value`` fails the field's validation."""
    if type(field)._validate is not fields.Field._validate:
        # a field class with its own validation step: run it as it is
        return f"not validation_passes({fn.bind(field, 'field')}, {value})"
    parts = [_condition(fn, validator, value) for validator in field.validators]
    return " or ".join(part for part in parts if part) or None


def _condition(fn, validator, value: str) -> str | None:
    kind = type(validator)
    if kind is validate.Range:
        parts = []
        if validator.min is not None:
            op = "<" if validator.min_inclusive else "<="
            parts.append(f"{value} {op} {fn.bind(validator.min, 'min')}")
        if validator.max is not None:
            op = ">" if validator.max_inclusive else ">="
            parts.append(f"{value} {op} {fn.bind(validator.max, 'max')}")
        return " or ".join(parts)
    if kind is validate.Length:
        if validator.equal is not None:
            return f"len({value}) != {_number(fn, validator.equal, 'length')}"
        parts = []
        if validator.min is not None:
            parts.append(f"len({value}) < {_number(fn, validator.min, 'min_length')}")
        if validator.max is not None:
            parts.append(f"len({value}) > {_number(fn, validator.max, 'max_length')}")
        return " or ".join(parts)
    if kind is validate.Equal:
        return f"{value} != {fn.bind(validator.comparable, 'equal')}"
    if kind is validate.OneOf and type(validator.choices) in (list, tuple):
        # sequence membership compares with ==, as OneOf's `in` does, and
        # cannot raise the TypeError OneOf turns into an error
        return f"{value} not in {fn.bind(tuple(validator.choices), 'choices')}"
    if kind is validate.Email and all(
        hasattr(validator, name) for name in ("USER_REGEX", "DOMAIN_REGEX", "DOMAIN_WHITELIST")
    ):
        return f"not email_passes({fn.bind(validator, 'validator')}, {value})"
    if kind is validate.Regexp:
        return f"{fn.bind(validator.regex, 'regex')}.match({value}) is None"
    return f"not passes({fn.bind(validator, 'validator')}, {value})"


def _number(fn, number, what: str) -> str:
    return str(number) if type(number) is int else fn.bind(number, what)
