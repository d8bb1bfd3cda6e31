"""Where a table is read from or written to: a path, a binary file object,
or a URL opened through fsspec."""

from __future__ import annotations

import contextlib
import os
from typing import Any, BinaryIO, Iterator


@contextlib.contextmanager
def opened(target: Any, mode: str) -> Iterator[BinaryIO]:
    """``target`` opened in ``mode`` ("rb", "wb"): a file object as it is
    (not closed), a path opened and closed, a URL (``scheme://...``) opened
    through fsspec."""
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
        with fsspec.open(target, mode) as fo:
            yield fo
        return
    if not isinstance(target, (str, bytes, os.PathLike)):
        raise TypeError(f"expected a path, a URL or a binary file object, not {type(target).__name__}")
    with open(target, mode) as opened_file:
        yield opened_file  # type: ignore[misc]  # "rb" or "wb": a binary file
