"""Avro container files as Dask collections (``pip install "roastedavro[dask]"``).

``read_avro`` reads files (a path, a glob, a list, fsspec URLs) into a Dask
DataFrame of Arrow-backed columns, a partition per file or per byte range
of ``blocksize`` bytes: a range owns the blocks that start in it (just after
a sync marker), so every record is read once. Each partition is read with
``roastedavro.arrow`` (the library's own container reader: every codec,
reader schemas, its errors). ``read_avro_bag`` gives the records as a Dask
Bag of the library's values; ``to_avro`` writes a DataFrame, a file per
partition. docs/dask.md has the details.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import dask
import dask.bag as db
import dask.dataframe as dd
import fsspec
import pandas as pd
import pyarrow as pa
from dask.dataframe.utils import UNKNOWN_CATEGORIES
from dask.utils import parse_bytes
from fsspec.core import get_fs_token_paths, url_to_fs

from roastedavro._replace import Replacement
from roastedavro.arrow import _batch, _projected, _reader, _root, arrow_schema, read_table, write_table
from roastedavro.arrow._build import Builder
from roastedavro.arrow._types import derive_avro
from roastedavro.avro.parse import parse_schema
from roastedavro.avro.types import Schema
from roastedavro.container import read_header
from roastedavro.containerformat import MAX_BLOCK_SIZE

__all__ = ["read_avro", "read_avro_bag", "to_avro"]

#: (path, start, end): a file, or the blocks of a file that start in [start, end)
_Part = tuple[str, int | None, int | None]


def _parts(
    urlpath: Any, blocksize: int | str | None, storage_options: dict | None
) -> tuple[fsspec.AbstractFileSystem, list[str], list[_Part]]:
    """The filesystem, the files and the partitions of ``urlpath``."""
    fs, _, paths = get_fs_token_paths(urlpath, mode="rb", storage_options=storage_options)
    if len(paths) == 1 and fs.isdir(paths[0]):
        # a directory (as to_avro writes): its .avro files, in order
        paths = sorted(fs.glob(paths[0].rstrip("/") + "/*.avro"))
    if not paths:
        raise FileNotFoundError(f"no file matches {urlpath!r}")
    if blocksize is None:
        return fs, paths, [(path, None, None) for path in paths]
    size = parse_bytes(blocksize) if isinstance(blocksize, str) else blocksize
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ValueError(
            f"blocksize must be a number of bytes (1 or more), a size such as '64MiB' or None, not {blocksize!r}"
        )
    parts: list[_Part] = []
    for path, length in zip(paths, fs.sizes(paths)):
        # a file of no bytes still has its partition: its missing header is the error
        for start in range(0, max(length, 1), size):
            parts.append((path, start, start + size))
    return fs, paths, parts


def _schema(
    fs: fsspec.AbstractFileSystem,
    first: str,
    columns: Iterable[str] | None,
    reader_schema: Any,
    options: dict,
) -> Schema:
    """The schema the records are read as: the reader schema, else the first
    file's (its header alone is read), kept to ``columns``."""
    if reader_schema is not None:
        schema = parse_schema(reader_schema)
    else:
        with fs.open(first, "rb") as fo:
            schema = read_header(fo, options.get("max_block_size", MAX_BLOCK_SIZE)).schema
    if columns is not None:
        return _projected(schema, columns)
    _root(schema)
    return schema


def _check_options(options: dict) -> None:
    unknown = set(options) - {"max_block_size", "flags"}
    if unknown:
        raise TypeError(
            f"unexpected option {', '.join(sorted(unknown))}: files are read with max_block_size and flags"
        )


def _read_partition(
    part: _Part,
    columns: list[str] | None = None,
    *,
    fs: fsspec.AbstractFileSystem,
    reader_schema: Any,
    expected: pa.Schema,
    options: dict,
) -> pd.DataFrame:
    """One partition: the records of a file's byte range as a pandas frame
    of Arrow-backed columns (``columns``: Dask's projection)."""
    path, start, end = part
    with fs.open(path, "rb") as fo:
        table = read_table(fo, columns=columns, reader_schema=reader_schema, start=start, end=end, **options)
    found = [(field.name, field.type) for field in table.schema]
    wanted = [(name, expected.field(name).type) for name in table.column_names if name in expected.names]
    if found != wanted:
        raise ValueError(
            f"the records of {path!r} are read as the columns {_columns(found)}, not as the "
            f"frame's {_columns([(field.name, field.type) for field in expected])} (the first "
            f"file's, or the reader schema's): read files of different schemas with reader_schema="
        )
    return table.to_pandas(types_mapper=pd.ArrowDtype)


def _columns(columns: list[tuple[str, pa.DataType]]) -> str:
    return "(" + ", ".join(f"{name}: {kind}" for name, kind in columns) + ")"


def read_avro(
    urlpath: Any,
    blocksize: int | str | None = "64MiB",
    columns: Iterable[str] | None = None,
    reader_schema: Any = None,
    storage_options: dict | None = None,
    **options: Any,
) -> dd.DataFrame:
    """Avro container files as a Dask DataFrame whose columns are
    Arrow-backed (``pd.ArrowDtype`` of ``roastedavro.arrow``'s types).

    ``urlpath``: a path, a glob, a list of them, a directory (its ``.avro``
    files, in name order), or fsspec URLs (``storage_options`` go to the
    filesystem). ``blocksize`` (bytes, or a
    size such as ``"64MiB"``) splits each file into byte ranges, a
    partition each, that own the blocks that start in them; ``None``: a
    partition per file. ``columns`` reads only those top-level fields (the
    others are skipped, not decoded); ``reader_schema`` reads the records as
    that schema's. The frame's columns come from the reader schema, else
    from the first file's header (no records are read to build the graph).
    ``options``: ``max_block_size`` and ``flags``, as FileReader's. A damaged
    block is the library's ContainerError, raised by the computation.
    """
    _check_options(options)
    fs, paths, parts = _parts(urlpath, blocksize, storage_options)
    schema = _schema(fs, paths[0], columns, reader_schema, options)
    expected = arrow_schema(schema)
    # built as a file of no records is (pyarrow's empty_table() cannot make a dense_union)
    empty = _batch(Builder(schema), _root(schema), expected, [])
    meta = pa.Table.from_batches([empty]).to_pandas(types_mapper=pd.ArrowDtype)
    kwargs: dict[str, Any] = {
        "fs": fs,
        "reader_schema": reader_schema,
        "expected": expected,
        "options": options,
    }
    if columns is not None:
        kwargs["columns"] = list(columns)
    return dd.from_map(_read_partition, parts, meta=meta, label="read-avro", **kwargs)


def _read_records(
    part: _Part,
    *,
    fs: fsspec.AbstractFileSystem,
    columns: list[str] | None,
    reader_schema: Any,
    options: dict,
) -> list:
    path, start, end = part
    with fs.open(path, "rb") as fo:
        return list(_reader(fo, columns, reader_schema, dict(options, start=start, end=end)))


def read_avro_bag(
    urlpath: Any,
    blocksize: int | str | None = "64MiB",
    columns: Iterable[str] | None = None,
    reader_schema: Any = None,
    storage_options: dict | None = None,
    **options: Any,
) -> db.Bag:
    """Avro container files as a Dask Bag of their records, the library's
    values (a dict per record of a plain Avro schema), split into
    partitions as ``read_avro`` splits them (the same arguments)."""
    _check_options(options)
    fs, paths, parts = _parts(urlpath, blocksize, storage_options)
    wanted = list(columns) if columns is not None else None
    if wanted is not None:
        _schema(fs, paths[0], wanted, reader_schema, options)  # an unknown column fails now
    read = dask.delayed(_read_records, pure=True)
    return db.from_delayed(
        [read(part, fs=fs, columns=wanted, reader_schema=reader_schema, options=options) for part in parts]
    )


# -- writing ------------------------------------------------------------------------


def _targets(
    path: str, count: int, name_function: Callable[[int], str] | None, storage_options: dict | None
) -> tuple[fsspec.AbstractFileSystem, list[str]]:
    """The filesystem and the file of each partition: ``path`` with its
    ``*`` replaced by ``name_function(i)``, or ``path/part.*.avro``."""
    fs, root = url_to_fs(path, **(storage_options or {}))
    if "*" not in root:
        fs.makedirs(root, exist_ok=True)
        root = root.rstrip("/") + "/part.*.avro"
    elif root.count("*") > 1:
        raise ValueError(f"a path pattern has one '*', not {root.count('*')}: {path!r}")
    else:
        parent = root.rsplit("/", 1)[0] if "/" in root else ""
        if parent:
            fs.makedirs(parent, exist_ok=True)
    if name_function is None:
        width = len(str(max(count - 1, 0)))
        name_function = lambda i: str(i).zfill(width)  # noqa: E731  # sorted names keep the order
    names = [root.replace("*", name_function(i)) for i in range(count)]
    if len(set(names)) != count:
        raise ValueError("name_function gave two partitions the same name")
    return fs, names


def _arrow_of(meta: pd.DataFrame) -> pa.Schema:
    """The Arrow schema of the frame's columns, from its meta (no data)."""
    arrow = pa.Schema.from_pandas(meta, preserve_index=False)
    unknown = [
        field.name
        for field in arrow
        if pa.types.is_null(field.type) and not isinstance(meta.dtypes[field.name], pd.ArrowDtype)
    ]
    if unknown:
        raise TypeError(
            f"the column {', '.join(map(repr, unknown))} holds Python objects: its Avro type "
            f"cannot be derived without reading the data; give schema=, or give the column "
            f"an Arrow type (astype(pd.ArrowDtype(...)))"
        )
    return arrow.remove_metadata()


def _write_partition(
    frame: pd.DataFrame,
    fs: fsspec.AbstractFileSystem,
    target: str,
    schema: Any,
    arrow: pa.Schema | None,
    codec: str,
    options: dict,
) -> str:
    """Write one partition to ``target`` through a temporary file beside
    it, renamed when whole (a failure leaves no file)."""
    if arrow is not None:
        table = pa.Table.from_pandas(frame, schema=arrow, preserve_index=False)
    else:
        table = pa.Table.from_pandas(frame, preserve_index=False)
    with Replacement(target, fs) as fo:
        write_table(table, fo, schema, codec, **options)
    return target


def to_avro(
    df: dd.DataFrame,
    path: str,
    schema: Any = None,
    codec: str = "null",
    name_function: Callable[[int], str] | None = None,
    storage_options: dict | None = None,
    compute: bool = True,
    compute_kwargs: dict | None = None,
    **options: Any,
) -> Any:
    """Write a Dask DataFrame as Avro container files, one per partition
    (the index is not written).

    ``path``: a directory (made if missing; files ``part.0.avro``,
    ``part.1.avro``...) or a pattern with one ``*`` (``"out/data-*.avro"``),
    replaced by ``name_function(i)`` (default: the partition's number, padded
    with zeros so that the names sort in order). ``schema``: the Avro schema
    of the rows; without it, one is derived once from the frame's Arrow
    schema (its meta), so every file has the same. ``options`` go to the
    library's FileWriter (``sync_interval``, ``metadata``...). Returns the
    paths written (``compute=False``: the Delayed values that write them;
    ``compute_kwargs`` go to ``dask.compute``, e.g. ``scheduler``).
    A partition that fails leaves no file of its own.
    """
    meta = df._meta
    arrow: pa.Schema | None = None
    if schema is None:
        arrow = _arrow_of(meta)
        schema = derive_avro(arrow, symbols=_categories(meta))
        # the derived schema is checked now (a name that is no Avro name), not in each partition
        parse_schema(schema)
    else:
        _check_columns(meta, schema)
    fs, targets = _targets(path, df.npartitions, name_function, storage_options)
    write = dask.delayed(_write_partition, pure=False)
    values = [
        write(part, fs, target, schema, arrow, codec, options)
        for part, target in zip(df.to_delayed(), targets)
    ]
    if not compute:
        return values
    written = dask.compute(*values, **(compute_kwargs or {}))
    # a URL's files as URLs, a path's as paths
    return [fs.unstrip_protocol(name) if "://" in path else name for name in written]


def _categories(meta: pd.DataFrame) -> dict[str, list]:
    """The categories of the categorical columns whose categories are known
    (strings that are Avro names make an enum of them)."""
    return {
        str(name): list(dtype.categories)
        for name, dtype in meta.dtypes.items()
        if isinstance(dtype, pd.CategoricalDtype) and UNKNOWN_CATEGORIES not in dtype.categories
    }


def _check_columns(meta: pd.DataFrame, schema: Any) -> None:
    """The frame's columns are the schema's fields (a field with a default
    may have no column): a ValueError naming the others, before any file."""
    root = _root(parse_schema(schema))
    columns = [str(name) for name in meta.columns]
    extra = [name for name in columns if name not in {field.name for field in root.fields}]
    missing = [field.name for field in root.fields if field.name not in columns and not field.has_default]
    if extra or missing:
        parts = []
        if missing:
            parts.append(f"the schema's field {', '.join(map(repr, missing))} has no column (and no default)")
        if extra:
            parts.append(f"the column {', '.join(map(repr, extra))} is no field of the schema")
        raise ValueError("the frame does not match the schema: " + "; ".join(parts))
