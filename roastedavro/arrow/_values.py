"""Arrow arrays -> the Python values the library's writer takes, a column
at a time, following the Avro type each column is written as.

Timestamps go over as ints in the Avro type's unit (Arrow's cast refuses
to drop digits), unions as ``(branch name, value)`` tuples so that the
branch an Arrow union holds is the branch written, and nulls as None.
"""

from __future__ import annotations

import decimal
import uuid
from typing import Any

import pyarrow as pa

from roastedavro.arrow._types import TIMESTAMPS, branch_label, logical_name, nullable_branch
from roastedavro.avro.types import Array, AvroType, Fixed, Map, NamedRef, Primitive, Record, Schema, Union
from roastedavro.errors import SchemaError


def _split(flat: list, lengths: list) -> list:
    """``flat`` cut into lists of ``lengths`` (None: a null)."""
    out: list = []
    start = 0
    for length in lengths:
        if length is None:
            out.append(None)
        else:
            out.append(flat[start : start + length])
            start += length
    return out


class Values:
    """Python values of one Avro schema's types from Arrow arrays."""

    def __init__(self, schema: Schema):
        self.schema = schema

    def values(self, avro: AvroType, array: pa.Array, path: str) -> list:
        """The values of ``array`` as ``avro``'s (None for nulls)."""
        if isinstance(array, pa.ChunkedArray):
            out: list = []
            for chunk in array.chunks:
                out.extend(self.values(avro, chunk, path))
            return out
        avro = self.schema.deref(avro) if isinstance(avro, NamedRef) else avro
        kind = array.type
        if pa.types.is_dictionary(kind) and not isinstance(avro, Union):
            array = array.dictionary_decode()
            kind = array.type
        if isinstance(avro, Union):
            branch = nullable_branch(avro)
            if branch is not None:
                if pa.types.is_union(kind):
                    return self._union(avro, array, path, tagged=False)
                return self.values(branch, array, path)
            if pa.types.is_union(kind):
                return self._union(avro, array, path, tagged=True)
            # a plain column for a wider union: the writer chooses each value's branch
            return array.to_pylist()
        if isinstance(avro, Record) and pa.types.is_struct(kind):
            valid = array.is_valid().to_pylist()
            # each child as stored, sliced as the struct (flatten() would give
            # them the struct's nulls, which a union child cannot hold)
            children = [array.field(i) for i in range(kind.num_fields)]
            names = [kind.field(i).name for i in range(kind.num_fields)]
            columns = []
            for field in avro.fields:
                if field.name not in names:
                    continue  # the writer takes the field's default, or names it missing
                child = children[names.index(field.name)]
                columns.append((field.name, self.values(field.type, child, f"{path}.{field.name}")))
            out = []
            for row, ok in enumerate(valid):
                out.append({name: column[row] for name, column in columns} if ok else None)
            return out
        if isinstance(avro, Array) and _is_list(kind):
            lengths = _lengths(array)
            flat = self.values(avro.items, array.flatten(), f"{path}[]")
            return _split(flat, lengths)
        if isinstance(avro, Map) and pa.types.is_map(kind):
            # the offsets of a sliced map array count from the start of its keys
            offsets = array.offsets.to_pylist()
            base, size = offsets[0], offsets[-1] - offsets[0]
            keys = array.keys.slice(base, size).to_pylist()
            items = self.values(avro.values, array.items.slice(base, size), f"{path}{{}}")
            valid = array.is_valid().to_pylist()
            return [
                dict(zip(keys[start - base : end - base], items[start - base : end - base])) if ok else None
                for ok, start, end in zip(valid, offsets, offsets[1:])
            ]
        return self._scalar(avro, array, path)

    def _scalar(self, avro: AvroType, array: pa.Array, path: str) -> list:
        kind = array.type
        logical = logical_name(avro)
        if isinstance(avro, Primitive) and avro.name == "long" and logical in TIMESTAMPS:
            if pa.types.is_timestamp(kind):
                unit = TIMESTAMPS[logical][0]
                try:
                    array = array.cast(pa.timestamp(unit, tz=kind.tz)).cast(pa.int64())
                except pa.ArrowInvalid as error:
                    raise ValueError(f"{path}: {error}") from None
            return array.to_pylist()
        if logical == "date" and pa.types.is_date(kind):
            return array.cast(pa.date32()).cast(pa.int32()).to_pylist()
        if logical == "uuid" and (pa.types.is_fixed_size_binary(kind) or isinstance(kind, pa.UuidType)):
            if isinstance(kind, pa.UuidType):
                array = array.storage
            raw = array.to_pylist()
            if isinstance(avro, Fixed):
                return raw
            return [None if b is None else str(uuid.UUID(bytes=b)) for b in raw]
        if logical == "uuid" and isinstance(avro, Fixed) and _is_text(kind):
            return [None if text is None else _uuid_of(text) for text in array.to_pylist()]
        if logical == "big-decimal" and _is_text(kind):
            return [None if text is None else decimal.Decimal(text) for text in array.to_pylist()]
        if pa.types.is_union(kind) or pa.types.is_struct(kind) or _is_list(kind) or pa.types.is_map(kind):
            raise SchemaError(f"{path}: an Arrow {kind} column cannot be written as {avro.type_name}")
        return array.to_pylist()

    def _union(self, avro: Union, array: pa.Array, path: str, tagged: bool) -> list:
        kind = array.type
        dense = kind.mode == "dense"
        # from the buffers: pyarrow's type_codes and offsets ignore a slice's offset
        buffers = array.buffers()
        codes = _buffer_values(pa.int8(), array, buffers[1])
        offsets = _buffer_values(pa.int32(), array, buffers[2]) if dense else range(len(array))
        children: dict[int, list] = {}
        out: list = []
        position = {code: i for i, code in enumerate(kind.type_codes)}
        labels = {branch_label(b): b for b in avro.branches}
        for row, (code, offset) in enumerate(zip(codes, offsets)):
            child = position[code]
            if child not in children:
                name = kind.field(child).name
                branch = labels.get(name)
                if branch is None and len(kind.type_codes) == len(avro.branches):
                    branch = avro.branches[child]  # the branch in the same place
                if branch is None:
                    raise SchemaError(
                        f"{path}: the Arrow union's child {name!r} is no branch of the Avro union "
                        f"({', '.join(labels)})"
                    )
                children[child] = [branch, self.values(branch, array.field(child), f"{path}<{name}>")]
            branch, values = children[child]
            value = values[offset if dense else row]
            if value is None or (isinstance(branch, Primitive) and branch.name == "null"):
                out.append(None)
            else:
                out.append((branch_label(branch), value) if tagged else value)
        return out


def _buffer_values(kind: pa.DataType, array: pa.Array, buffer: pa.Buffer) -> list:
    """The values of one of ``array``'s buffers for its rows (its offset applied)."""
    return pa.Array.from_buffers(kind, len(array), [None, buffer], offset=array.offset).to_pylist()


def _lengths(array: pa.Array) -> list:
    """Each list's (or map's) length, None for a null."""
    valid = array.is_valid().to_pylist()
    if pa.types.is_fixed_size_list(array.type):
        size = array.type.list_size
        return [size if ok else None for ok in valid]
    offsets = array.offsets.to_pylist()
    return [end - start if ok else None for ok, start, end in zip(valid, offsets, offsets[1:])]


def _is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _is_list(kind: pa.DataType) -> bool:
    t = pa.types
    return t.is_list(kind) or t.is_large_list(kind) or t.is_fixed_size_list(kind)


def rows(columns: list[tuple[str, list]], count: int) -> list[dict[str, Any]]:
    """Records (dicts) of the columns' values, row by row."""
    names = [name for name, _ in columns]
    return (
        [dict(zip(names, row)) for row in zip(*(values for _, values in columns))]
        if columns
        else [{} for _ in range(count)]
    )


def _uuid_of(text: str) -> uuid.UUID | str:
    """The UUID a fixed uuid's text spells; text that spells none is kept, for
    the record writer to refuse with its path (as the column writer does)."""
    try:
        return uuid.UUID(text)
    except ValueError:
        return text
