"""Where a table is read from or written to: a path, a binary file object,
or a URL opened through fsspec. A file written by path or URL appears
whole or not at all (written beside it and renamed when complete)."""

from __future__ import annotations

import contextlib
import os
from typing import Any, BinaryIO, Iterator

from roastedavro._replace import Replacement


@contextlib.contextmanager
def opened(target: Any, mode: str) -> Iterator[BinaryIO]:
    """``target`` opened in ``mode`` ("rb", "wb"): a file object as it is
    (not closed, the caller's to clean up), a path opened and closed, a URL
    (``scheme://...``) opened through fsspec. Written ("wb"), a path or URL
    is a temporary file beside it, renamed onto it when the block completes
    and removed when it raises: a failed write leaves no partial file."""
    if hasattr(target, "read" if mode == "rb" else "write"):
        yield target
        return
    if isinstance(target, str) and "://" in target:
        try:
            import fsspec
        except ImportError:
            raise ImportError(
                f"{target!r} is a URL: opening URLs needs fsspec (pip install fsspec, "
                f"and the filesystem's own package, e.g. s3fs or gcsfs)"
            ) from None
        if mode == "wb":
            fs, path = fsspec.core.url_to_fs(target)
            with Replacement(path, fs) as fo:
                yield fo
            return
        with fsspec.open(target, mode) as fo:
            yield fo
        return
    if not isinstance(target, (str, bytes, os.PathLike)):
        raise TypeError(f"expected a path, a URL or a binary file object, not {type(target).__name__}")
    if mode == "wb":
        with Replacement(os.fsdecode(target)) as fo:
            yield fo
        return
    with open(target, mode) as opened_file:
        yield opened_file  # type: ignore[misc]  # "rb" or "wb": a binary file
