"""Avro object container files as Arrow tables (``pip install "roastedavro[arrow]"``).

``read_table`` and ``iter_batches`` read a file with the library's own
container reader (every codec, reader schemas, its damage and bounds
errors) and build Arrow columns from the records; ``write_table`` writes a
table's rows with the library's own container writer, in the Avro schema
given or one derived from the Arrow schema; ``arrow_schema`` is the
mapping of Avro types to Arrow types. docs/arrow.md has the mapping table.
"""

from __future__ import annotations

import dataclasses
from typing import Any, BinaryIO, Iterable, Iterator

import pyarrow as pa

from roastedavro.arrow._build import Builder
from roastedavro.arrow._columns import Plan, column_reader, finish, resolving_column_reader
from roastedavro.arrow._io import opened
from roastedavro.arrow._types import arrow_schema_of, derive_avro
from roastedavro.arrow._values import Values, rows
from roastedavro.arrow._writer import RowSource, row_source
from roastedavro.avro.parse import parse_schema
from roastedavro._tier0 import Interpreter, ResolvingInterpreter, branch_indexes
from roastedavro.avro.types import Array, Map, NamedRef, Record, Schema, Union, to_json_value
from roastedavro.container import FileReader, FileWriter
from roastedavro.errors import SchemaError

__all__ = ["arrow_schema", "iter_batches", "read_table", "to_pandas", "to_polars", "write_table"]


def arrow_schema(avro_schema: Any) -> pa.Schema:
    """The Arrow schema of a file of ``avro_schema``'s records (a dict, JSON
    text or a parsed Schema; its type must be a record): one column per
    field, typed as docs/arrow.md's table says. A recursive type is a
    SchemaError naming it: Arrow has no recursive types."""
    return arrow_schema_of(parse_schema(avro_schema))


def _root(schema: Schema) -> Record:
    root = schema.deref(schema.root)
    if not (isinstance(root, Record) and root.kind == "record"):
        raise SchemaError(
            f"an Arrow table holds records: the schema's type is {root.type_name}, not a record"
        )
    return root


def _projected(schema: Schema, columns: Iterable[str]) -> Schema:
    """``schema`` with only the top-level fields ``columns``, in their order."""
    root = _root(schema)
    columns = list(columns)
    by_name = {field.name: field for field in root.fields}
    unknown = [name for name in columns if name not in by_name]
    if unknown:
        raise KeyError(
            f"no column {', '.join(map(repr, unknown))} in the file's records: "
            f"its columns are {', '.join(by_name)}"
        )
    if len(set(columns)) != len(columns):
        raise ValueError(f"columns names a column twice: {columns}")
    kept = dataclasses.replace(root, fields=tuple(by_name[name] for name in columns))
    # through the JSON form: a named type defined in a field left out is
    # defined where it is used next. Not validated again: the schema was
    # parsed as it came (a file's header may hold names Java's reflection
    # wrote, with "$"), and leaving fields out makes nothing invalid
    return parse_schema(
        to_json_value(Schema(kept, schema.named, schema.dialect)), validate=False, dialect=schema.dialect
    )


def iter_batches(
    source: Any,
    batch_size: int = 65536,
    columns: Iterable[str] | None = None,
    reader_schema: Any = None,
    **options: Any,
) -> Iterator[pa.RecordBatch]:
    """The records of the container file ``source`` (a path, a URL opened
    through fsspec, or a binary file object) as Arrow record batches of
    ``batch_size`` rows (the last one shorter).

    ``reader_schema`` reads the records as that schema's (schema
    evolution). ``columns`` reads only those top-level fields, in that
    order: the reader schema keeps only them, so the others are skipped,
    not decoded. A damaged file is the library's ContainerError naming the
    block and its offset. ``options``: FileReader's ``max_block_size``,
    ``flags`` (``CompileFlags``: ``item_allowance``, ``max_depth``...),
    and ``start`` and ``end`` (only the blocks that start in that byte
    range: a file split into ranges reads each block once).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    _check_options(options)
    with opened(source, "rb") as fo:
        yield from _read(fo, batch_size, columns, reader_schema, options, empty=False)


def _check_options(options: dict) -> None:
    unknown = set(options) - {"max_block_size", "flags", "start", "end"}
    if unknown:
        raise TypeError(
            f"unexpected option {', '.join(sorted(unknown))}: a table is read with "
            f"max_block_size, flags, start and end (FileReader's on_damage is not offered: "
            f"a table would not say what it skipped)"
        )


def _read(
    fo: BinaryIO,
    batch_size: int,
    columns: Iterable[str] | None,
    reader_schema: Any,
    options: dict,
    empty: bool,
) -> Iterator[pa.RecordBatch]:
    """The batches of ``fo``'s records (``empty``: one of no rows for a file of none)."""
    columns = list(columns) if columns is not None else None
    reader = _reader(fo, columns, reader_schema, options)
    schema = reader.reader_schema
    root = _root(schema)
    target = arrow_schema_of(schema)
    if reader_schema is None:
        # the records as written (the columns not asked for skipped): straight
        # into Arrow buffers where every type's Arrow values are as stored
        columnar = column_reader(reader.writer_schema, options.get("flags"), columns)
    else:
        # the writer's bytes rearranged as the reader's, then into buffers
        columnar = resolving_column_reader(reader.writer_schema, schema, options.get("flags"))
    if columnar is not None:
        yield from _read_columns(reader, columnar, target, batch_size, empty)
        return
    builder = Builder(schema)
    decoder = _branch_reader(reader, schema, options.get("flags"))
    pending: list = []
    for block, data in reader.decompressed_blocks():
        pending.extend(reader.decode_block(block, decoder, data))
        whole = len(pending) - len(pending) % batch_size
        for start in range(0, whole, batch_size):
            empty = False
            yield _batch(builder, root, target, pending[start : start + batch_size])
        del pending[:whole]
    if pending or empty:
        yield _batch(builder, root, target, pending)


def _read_columns(
    reader: FileReader, columnar: tuple[Any, Plan], target: pa.Schema, batch_size: int, empty: bool
) -> Iterator[pa.RecordBatch]:
    """The batches of the records as written, decoded into Arrow buffers
    (roastedavro.arrow._columns): a batch is cut whenever the columns hold
    batch_size rows, within a block too, so no batch is a copy."""
    decoder, root = columnar
    kind = pa.struct(list(target))
    full: list[pa.RecordBatch] = []
    decoder.cut_every(batch_size, lambda: full.append(pa.RecordBatch.from_struct_array(_struct(root, kind))))
    for block, data in reader.decompressed_blocks():
        reader.decode_block(block, decoder, data)
        if full:
            ready = full[:]
            full.clear()
            empty = False
            yield from ready
    if root.column.length or empty:
        # the last rows (fewer than batch_size), or no rows in a file of none
        yield pa.RecordBatch.from_struct_array(_struct(root, kind))


def _struct(root: Plan, kind: pa.DataType) -> pa.StructArray:
    """The rows read into ``root`` as one struct array of ``kind``."""
    rows = finish(root)
    if rows.type != kind:
        # the columns asked for, in their order (the records have no nulls of their own)
        children = [rows.field(rows.type.get_field_index(field.name)) for field in kind]
        rows = pa.StructArray.from_arrays(children, fields=list(kind))
    return rows


def _branch_reader(reader: FileReader, schema: Schema, flags: Any) -> Any:
    """Where ``schema`` has a union of more than a null and one type: a
    tier-0 reader that reads each such union's value as (branch index,
    value), so the dense union keeps the branch written (an int written in
    a long branch stays there); None (the file's codec reads) otherwise."""
    if not any(branch_indexes(union) is not None for union in _unions(schema)):
        return None
    if schema is reader.writer_schema:
        return Interpreter(schema, flags, branches=True)
    return ResolvingInterpreter(reader.writer_schema, schema, flags, branches=True)


def _unions(schema: Schema) -> Iterator[Union]:
    """The unions within ``schema``'s type (each named type looked into once)."""
    seen: set[str] = set()
    pending: list[Any] = [schema.root]
    while pending:
        avro = pending.pop()
        if isinstance(avro, NamedRef):
            avro = schema.deref(avro)
        if isinstance(avro, Union):
            yield avro
            pending.extend(avro.branches)
        elif isinstance(avro, Record):
            if avro.name not in seen:
                seen.add(avro.name)
                pending.extend(field.type for field in avro.fields)
        elif isinstance(avro, Array):
            pending.append(avro.items)
        elif isinstance(avro, Map):
            pending.append(avro.values)


def _reader(fo: BinaryIO, columns: Iterable[str] | None, reader_schema: Any, options: dict) -> FileReader:
    """A FileReader of ``fo`` whose reader schema keeps only ``columns``."""
    reader = FileReader(fo, reader_schema, **options)
    if columns is not None:
        reader.read_as(_projected(reader.reader_schema, columns))
    return reader


def _batch(builder: Builder, root: Record, target: pa.Schema, records: list) -> pa.RecordBatch:
    arrays = [
        builder.build(field.type, [record[field.name] for record in records], field.name)
        for field in root.fields
    ]
    if not arrays:
        # records of no fields: the rows still count
        return pa.RecordBatch.from_struct_array(pa.array([{}] * len(records), pa.struct([])))
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def read_table(
    source: Any, columns: Iterable[str] | None = None, reader_schema: Any = None, **options: Any
) -> pa.Table:
    """The records of the container file ``source`` as an Arrow table
    (``columns``, ``reader_schema`` and ``options`` as ``iter_batches``'s)."""
    _check_options(options)
    with opened(source, "rb") as fo:
        batches = list(_read(fo, 65536, columns, reader_schema, options, empty=True))
        return pa.Table.from_batches(batches)


def to_pandas(
    source: Any, columns: Iterable[str] | None = None, reader_schema: Any = None, **options: Any
) -> Any:
    """The records of ``source`` as a pandas DataFrame whose columns hold
    Arrow arrays (``pd.ArrowDtype``: the table's buffers, not copied into
    NumPy or Python objects); arguments as ``read_table``'s. Needs pandas."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_pandas needs pandas: pip install pandas") from None
    return read_table(source, columns, reader_schema, **options).to_pandas(types_mapper=pd.ArrowDtype)


def to_polars(
    source: Any, columns: Iterable[str] | None = None, reader_schema: Any = None, **options: Any
) -> Any:
    """The records of ``source`` as a polars DataFrame (``polars.from_arrow``:
    the table's buffers, without copies where polars' types are Arrow's);
    arguments as ``read_table``'s. Needs polars."""
    try:
        import polars as pl
    except ImportError:
        raise ImportError("to_polars needs polars: pip install polars") from None
    return pl.from_arrow(read_table(source, columns, reader_schema, **options))


def write_table(table: Any, dest: Any, schema: Any = None, codec: str = "null", **options: Any) -> None:
    """Write an Arrow table (or record batch) to ``dest`` (a path, a URL
    opened through fsspec, or a binary file object, left open) as an Avro
    container file compressed with ``codec``.

    ``schema`` is the Avro schema of the rows (a record whose fields are
    the table's columns; a field with a default may have no column); without
    it, one is derived from the Arrow schema (docs/arrow.md gives the rule).
    ``options`` go to the library's FileWriter (``sync_interval``,
    ``metadata``...). Values the Avro type cannot hold are the library's
    DatumError naming the field.
    """
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if schema is None:
        schema = derive_avro(table.schema, symbols=_dictionaries(table))
    parsed = parse_schema(schema)
    root = _root(parsed)
    fields = {field.name: field for field in root.fields}
    extra = [name for name in table.column_names if name not in fields]
    missing = [f.name for f in root.fields if f.name not in table.column_names and not f.has_default]
    if extra or missing:
        parts = []
        if missing:
            parts.append(f"the schema's field {', '.join(map(repr, missing))} has no column (and no default)")
        if extra:
            parts.append(f"the column {', '.join(map(repr, extra))} is no field of the schema")
        raise ValueError("the table does not match the schema: " + "; ".join(parts))
    with opened(dest, "wb") as fo:
        writer = FileWriter(fo, parsed, codec, **options)
        source = row_source(parsed, table.schema)
        if source is not None:
            _write_rows(writer, source, table)
        else:
            converter = Values(parsed)
            for batch in table.to_batches():
                columns = [
                    (name, converter.values(fields[name].type, batch.column(name), name))
                    for name in table.column_names
                ]
                writer.write_many(rows(columns, batch.num_rows))
        writer.close()


def _write_rows(writer: FileWriter, source: RowSource, table: pa.Table) -> None:
    """The table's rows written from its buffers (roastedavro.arrow._writer),
    each block ended where the dict writer ends it."""
    for batch in table.to_batches():
        source.bind(batch)
        row, stop = 0, batch.num_rows
        while row < stop:
            data, after = source.encode(row, stop, writer.room())
            writer.add_encoded(data, after - row)
            row = after


def _dictionaries(table: pa.Table) -> dict[str, list]:
    """The symbols of the top-level dictionary columns of strings whose
    chunks share one dictionary (the candidates for enums)."""
    found = {}
    for field in table.schema:
        kind = field.type
        if not (pa.types.is_dictionary(kind) and pa.types.is_string(kind.value_type)):
            continue
        chunks = table.column(field.name).chunks
        dictionaries = [chunk.dictionary for chunk in chunks]
        if dictionaries and all(d.equals(dictionaries[0]) for d in dictionaries):
            found[field.name] = dictionaries[0].to_pylist()
    return found
