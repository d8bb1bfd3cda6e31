"""Where a compiled dump failed: the first value the codec refused, found
by tier 0 over a marked datum, and marshmallow's messages for it, at the
field path marshmallow would give."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from marshmallow import Schema, ValidationError
from marshmallow.utils import missing as missing_value

from roastedavro._support import decimal_bytes, formatted
from roastedavro.errors import DatumError, DumpError
from roastedavro.codegen import NO_VALUE
from roastedavro.visitor import FieldPlan, RecordPlan, record_dump_datum
from roastedavro.wide_decimals import _decimal_encoder

if TYPE_CHECKING:  # annotations only: roastedavro.schema imports this module
    from roastedavro.schema import CompiledSchema, _Plan


def _record_plans(value: Any) -> list:
    """The record plans a field's value plan leads to, without passing one."""
    found, seen, stack = [], set(), [value]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, RecordPlan):
            found.append(item)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif (
            hasattr(item, "__dict__")
            and not isinstance(item, (Schema, type))
            and type(item).__module__.startswith("roastedavro")
        ):
            stack.extend(
                v for k, v in vars(item).items() if k not in ("visitor", "field") and not callable(v)
            )
    return found


def _attribute_path(root: RecordPlan, path: tuple, many: bool) -> list:
    """An error path of Avro names (data_key) as the compiled writer names
    it: record fields by their attribute names, indexes and keys as they are."""
    parts = list(path)
    result = []
    records = [root]
    if many and parts and isinstance(parts[0], int):
        result.append(parts.pop(0))
    for part in parts:
        field = None
        if isinstance(part, str):
            for record in records:
                field = next((f for f in record.fields if f.avro_name == part), None)
                if field is not None:
                    break
        if field is None:
            result.append(part)
            continue
        result.append(field.name)
        records = _record_plans(field.value) or records
    return result


def _renamed(messages: Any, root: RecordPlan, many: bool, standing_in: bool = False) -> Any:
    """record_dump_datum's messages, keyed by attribute names. ``standing_in``
    for the compiled writer (no dump hooks): a field the object has no value
    for is reported as that writer reports it (NO_VALUE), not as a post_dump
    output that left it out."""

    def walk(node, records, field=None):
        if not isinstance(node, dict):
            if standing_in and field is not None and node == [field.error_messages["required"]]:
                return [NO_VALUE]
            return node
        out = {}
        for key, value in node.items():
            field = None
            if isinstance(key, str):
                for record in records:
                    field = next((f for f in record.fields if f.avro_name == key), None)
                    if field is not None:
                        break
            if field is None:
                out[key] = walk(value, records)
            else:
                out[field.name] = walk(value, _record_plans(field.value) or records, field.field)
        return out

    if many and isinstance(messages, dict):
        return {key: walk(value, [root]) for key, value in messages.items()}
    return walk(messages, [root])


def _dump_error_of(
    schema: Schema, record: RecordPlan, obj: Any, many: bool, error: Exception
) -> ValidationError:
    """The ValidationError for an exception out of marshmallow's dump: the
    first field (by the schema's order, into nested schemas) whose own
    serialization raises, named by its path."""
    if many:
        for index, item in enumerate(obj):
            found = _failing_field(schema, record, item)
            if found is not None:
                return ValidationError({index: found})
    else:
        found = _failing_field(schema, record, obj)
        if found is not None:
            return ValidationError(found)
    return ValidationError({"_schema": [f"Cannot be serialized: {error}"]})


def _failing_field(schema: Schema, record: RecordPlan, obj: Any) -> dict | None:
    for plan in record.fields:
        field = plan.field
        if field.load_only:
            continue
        try:
            field.serialize(plan.name, obj, accessor=schema.get_attribute)
            continue
        except ValidationError as error:
            return {plan.name: error.messages}
        except (TypeError, ValueError, AttributeError, KeyError, ArithmeticError) as error:
            failure = error
        try:
            value = field.get_value(obj, plan.dump_key, accessor=schema.get_attribute)
        except Exception:  # noqa: BLE001 - reported as the field's own failure
            value = None
        inner = None
        if value is not None:
            inner = _failing_value(field, value, _record_plans(plan.value), obj)
        if inner is None:
            inner = [_serialize_message(field, value, failure)]
        return {plan.name: inner}
    return None


def _serialize_message(field: Any, value: Any, failure: Exception) -> str:
    """The compiled writer's message for a value the field's own
    serialization refuses (roastedavro._support's conversions)."""
    from marshmallow import fields as mm_fields

    messages = field.error_messages
    if isinstance(field, mm_fields.Pluck):
        # a value without the plucked key: as the compiled writer's lookup says
        plucked = field.schema.fields.get(field.field_name)
        return (plucked or field).error_messages["required"]
    if isinstance(field, mm_fields.Nested) and field.many:
        return "Not a valid list."  # roastedavro._support.as_list
    if isinstance(field, mm_fields.Enum) and "unknown" in messages:
        return formatted(messages["unknown"], choices=getattr(field, "choices_text", ""))
    if isinstance(field, mm_fields.Tuple):
        try:
            if len(tuple(value)) != len(field.tuple_fields):
                return f"Length must be {len(field.tuple_fields)}."
        except TypeError:
            pass
    message = messages.get("invalid")
    if message is None:
        return f"Cannot be serialized: {failure}"
    return formatted(message, obj_type=getattr(field, "OBJ_TYPE", "value"), input=value)


def _failing_value(field: Any, value: Any, records: list, obj: Any) -> Any:
    """The messages for the part of ``value`` the field cannot serialize
    (an item of a list, a value of a dict, a field of a nested record), as
    the compiled writer nests them; None where no part can be named."""
    from marshmallow import fields as mm_fields

    def record_of(nested_schema):
        for record in records:
            if record.schema is nested_schema or type(record.schema) is type(nested_schema):
                return record
        return records[0] if records else None

    try:
        if isinstance(field, mm_fields.Pluck):
            return None
        if isinstance(field, mm_fields.Nested):
            record = record_of(field.schema)
            if record is None:
                return None
            if field.many:
                for index, item in enumerate(value):
                    found = _failing_field(field.schema, record, item)
                    if found is not None:
                        return {index: found}
                return None
            return _failing_field(field.schema, record, value)
        if isinstance(field, mm_fields.List):
            for index, item in enumerate(value):
                found = _failing_item(field.inner, item, records, obj)
                if found is not None:
                    return {index: found}
            return None
        if isinstance(field, mm_fields.Tuple):
            if len(tuple(value)) != len(field.tuple_fields):
                return None
            for index, (inner, item) in enumerate(zip(field.tuple_fields, value)):
                found = _failing_item(inner, item, records, obj)
                if found is not None:
                    return {index: found}
            return None
        if isinstance(field, mm_fields.Dict):
            for key, item in value.items():
                if field.key_field is not None:
                    found = _failing_item(field.key_field, key, records, obj)
                    if found is not None:
                        return {key: {"key": found}}
                if field.value_field is not None:
                    found = _failing_item(field.value_field, item, records, obj)
                    if found is not None:
                        return {key: {"value": found}}
            return None
    except (TypeError, ValueError, AttributeError, KeyError, ArithmeticError):
        return None
    return None


def _failing_item(field: Any, value: Any, records: list, obj: Any) -> Any:
    if value is None:
        return None
    try:
        field._serialize(value, field.name, obj)
        return None
    except ValidationError as error:
        return error.messages
    except (TypeError, ValueError, AttributeError, KeyError, ArithmeticError) as error:
        return _failing_value(field, value, records, obj) or [_serialize_message(field, value, error)]


def _items(obj: Any) -> list:
    """The records of many=True, as the compiled writer takes them."""
    if type(obj) is list:
        return obj
    try:
        return list(obj)
    except TypeError:
        raise DumpError("Not a valid list.") from None


class _Refused:
    """A value marked as refused (its messages) in the datum tier 0 writes
    to find the first wrong value."""

    __slots__ = ("messages",)

    def __init__(self, messages):
        self.messages = messages


def _first_refused_in(schema: CompiledSchema, plan: _Plan, interpreter, obj: Any) -> dict | None:
    datum = _datum_marking(schema, plan, plan.root, obj, 0)
    try:
        interpreter.dump(datum)
        return None
    except DatumError as error:
        value, prefix = datum, []
        for part in error.path:
            try:
                value = value[part]
            except (KeyError, IndexError, TypeError):
                break
            prefix.append(part)
            if isinstance(value, _Refused):
                messages = value.messages
                for name in reversed(_attribute_path(plan.root, tuple(prefix), False)):
                    messages = {name: messages}
                return messages
        messages = [_datum_message(plan.root, datum, error.path, False) or error.reason]
        for part in reversed(_attribute_path(plan.root, error.path, False)):
            messages = {part: messages}
        return messages


def _datum_marking(schema: Schema, plan: _Plan, record: RecordPlan, obj: Any, depth: int) -> dict:
    """The Avro record of ``obj`` field by field, each value the writer
    refuses replaced by a _Refused; nested records are followed."""
    from marshmallow import fields as mm_fields

    if depth > 200:
        raise DumpError("too deep")
    datum = {}
    checks = {entry[0].name: entry for entry in plan.decimal_checks.get(id(record), ())}
    for field_plan in record.fields:
        field = field_plan.field
        name = field_plan.avro_name
        if not field.load_only:
            try:
                value = field.get_value(obj, field_plan.dump_key, accessor=schema.get_attribute)
            except Exception:  # noqa: BLE001 - serialize below reports it
                value = missing_value
            nested = None
            if (
                isinstance(field, mm_fields.Nested)
                and not isinstance(field, mm_fields.Pluck)
                and value is not None
                and value is not missing_value
            ):
                nested = next(
                    (r for r in _record_plans(field_plan.value) if type(r.schema) is type(field.schema)), None
                )
            if nested is not None:
                if field.many:
                    try:
                        items = list(value)
                    except TypeError:
                        datum[name] = _Refused(["Not a valid list."])
                        continue
                    datum[name] = [
                        _datum_marking(field.schema, plan, nested, item, depth + 1) for item in items
                    ]
                else:
                    datum[name] = _datum_marking(field.schema, plan, nested, value, depth + 1)
                continue
            entry = checks.get(field_plan.name)
            if (
                entry is not None
                and entry[1] is not None
                and value is not None
                and value is not missing_value
            ):
                encoder = entry[1]
                try:
                    decimal_bytes(field, value, obj, encoder.scale, encoder.precision, encoder.size)
                except DumpError as error:
                    datum[name] = _Refused(error.messages)
                    continue
        datum[name] = _field_datum(schema, field_plan, obj)
    return datum


_single_field_records: dict = {}


def _field_datum(schema: Schema, field_plan: FieldPlan, obj: Any) -> Any:
    """One field's Avro value as the uncompiled writer makes it, or a _Refused."""
    field = field_plan.field
    dumped = {}
    if not field.load_only:
        try:
            value = field.serialize(field_plan.name, obj, accessor=schema.get_attribute)
        except ValidationError as error:
            return _Refused(error.messages)
        except (TypeError, ValueError, AttributeError, KeyError, ArithmeticError) as error:
            try:
                raw = field.get_value(obj, field_plan.dump_key, accessor=schema.get_attribute)
            except Exception:  # noqa: BLE001 - reported as the field's own failure
                raw = None
            found = None
            if raw is not None:
                found = _failing_value(field, raw, _record_plans(field_plan.value), obj)
            return _Refused(found or [_serialize_message(field, raw, error)])
        if value is not missing_value:
            dumped[field_plan.avro_name] = value
    single = _single_field_records.get(id(field_plan))
    if single is None or single[0] is not field_plan:
        if len(_single_field_records) > 4096:
            _single_field_records.clear()
        single = _single_field_records[id(field_plan)] = (
            field_plan,
            RecordPlan(None, "single", None, "single", [field_plan]),
        )
    try:
        return record_dump_datum(single[1], dumped)[field_plan.avro_name]
    except ValidationError as error:
        renamed = _renamed(error.messages, single[1], False, standing_in=True)
        return _Refused(renamed.get(field_plan.name, renamed) if isinstance(renamed, dict) else renamed)


def _decimal_checks(root: RecordPlan) -> dict:
    """For each record reachable from ``root`` (by id), the fields to check
    before marshmallow's dump: (field plan, decimal encoder, None) for a
    Decimal field, (field plan, None, nested record) for a Nested field whose
    record holds Decimal fields, at any depth."""
    from marshmallow import fields as mm_fields

    fields_of: dict = {}
    stack = [root]
    while stack:
        record = stack.pop()
        if id(record) in fields_of:
            continue
        entries = []
        for plan in record.fields:
            if plan.field.load_only:
                continue
            encoder = _decimal_encoder(plan.value)
            if encoder is not None:
                entries.append((plan, encoder, None))
            elif isinstance(plan.field, mm_fields.Nested) and not isinstance(plan.field, mm_fields.Pluck):
                nested = [r for r in _record_plans(plan.value) if type(r.schema) is type(plan.field.schema)]
                if nested:
                    entries.append((plan, None, nested[0]))
                    stack.append(nested[0])
        fields_of[id(record)] = entries
    # keep the nested records that lead to a decimal (a fixed point over cycles)
    holds = {key for key, entries in fields_of.items() if any(e[1] is not None for e in entries)}
    grown = True
    while grown:
        grown = False
        for key, entries in fields_of.items():
            if key not in holds and any(e[2] is not None and id(e[2]) in holds for e in entries):
                holds.add(key)
                grown = True
    return {
        key: [e for e in entries if e[1] is not None or id(e[2]) in holds]
        for key, entries in fields_of.items()
        if key in holds
    }


def _unroundable(schema: Schema, record: RecordPlan, obj: Any, checks: dict, depth: int = 0) -> dict | None:
    """The compiled writer's error for a Decimal field's value (in this
    record or its nested records) that has more places than the field
    writes: marshmallow's dump would round it."""
    if depth > 100 or obj is None:
        return None
    for plan, encoder, nested in checks.get(id(record), ()):
        field = plan.field
        try:
            value = field.get_value(obj, plan.dump_key, accessor=schema.get_attribute)
        except Exception:  # noqa: BLE001 - marshmallow's dump reports it
            continue
        if value is None or value is missing_value:
            continue
        if encoder is not None:
            try:
                decimal_bytes(field, value, obj, encoder.scale, encoder.precision, encoder.size)
            except DumpError as error:
                return {plan.name: error.messages}
            continue
        try:
            items = list(enumerate(value)) if field.many else [(None, value)]
        except TypeError:
            continue
        for index, item in items:
            found = _unroundable(field.schema, nested, item, checks, depth + 1)
            if found is not None:
                return {plan.name: found if index is None else {index: found}}
    return None


def _datum_message(root: RecordPlan, datum: Any, path: tuple, many: bool) -> str | None:
    """The compiled writer's message where tier 0 refuses the value at
    ``path`` of the datum and the compiled writer words it otherwise: "Field
    may not be null." (the field's own message) for None, "Not valid
    bytes." for a Raw field's value."""
    from marshmallow import fields as mm_fields

    value, records, field = datum, [root], None
    parts = list(path)
    if many and parts and isinstance(parts[0], int):
        value = value[parts.pop(0)]
    try:
        for part in parts:
            value = value[part]
            found = None
            if isinstance(part, str):
                for record in records:
                    found = next((f for f in record.fields if f.avro_name == part), None)
                    if found is not None:
                        break
            if found is not None:
                field = found.field
                records = _record_plans(found.value) or records
    except (KeyError, IndexError, TypeError):
        return None
    if value is None:
        messages = getattr(field, "error_messages", None) or {}
        return messages.get("null", "Field may not be null.")
    if isinstance(field, mm_fields.Raw) and not isinstance(value, (bytes, bytearray, memoryview)):
        return "Not valid bytes."  # as roastedavro._support.as_bytes says
    return None
