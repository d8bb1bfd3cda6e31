"""Files that appear whole or not at all: written under a temporary name
beside the target and renamed onto it when complete, removed when the
writing fails (a failed command or write leaves no partial output)."""

from __future__ import annotations

import contextlib
import os
import tempfile
import uuid
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO


#: the local file's write buffer: a container file's blocks (16 KB by
#: default) gathered into few large writes, not a system call each
BUFFER_SIZE = 1 << 20


class Replacement:
    """A temporary file beside ``target`` (a local path), or beside ``path``
    on the fsspec filesystem ``fs``. Used as a context manager, it gives the
    open file and, on leaving, renames it onto the target or removes it if
    the block raised. Opening raises OSError as ``open`` would."""

    def __init__(self, target: str | os.PathLike, fs: Any = None):
        self.fs = fs
        if fs is None:
            self.target = Path(target)
            handle, self.temporary = tempfile.mkstemp(
                prefix=f".{self.target.name}.", suffix=".part", dir=self.target.parent
            )
            self.file: BinaryIO = os.fdopen(handle, "wb", buffering=BUFFER_SIZE)
        else:
            self.target = target  # type: ignore[assignment]  # a path on fs
            head, _, name = str(target).rpartition("/")
            self.temporary = (
                f"{head}/.{name}.{uuid.uuid4().hex}.part" if head else f".{name}.{uuid.uuid4().hex}.part"
            )
            self.file = fs.open(self.temporary, "wb")

    def __enter__(self) -> BinaryIO:
        return self.file

    def __exit__(self, kind: type | None, error: BaseException | None, trace: TracebackType | None) -> None:
        try:
            self.file.close()
            if kind is None:
                self._commit()
                return
        except BaseException:
            self._discard()
            raise
        self._discard()

    def _commit(self) -> None:
        if self.fs is not None:
            self.fs.mv(self.temporary, str(self.target))
            return
        try:
            mode = os.stat(self.target).st_mode & 0o7777  # an existing file's permissions
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask  # as open() would have made it
        os.chmod(self.temporary, mode)
        os.replace(self.temporary, self.target)

    def _discard(self) -> None:
        with contextlib.suppress(OSError):
            if self.fs is None:
                os.unlink(self.temporary)
            elif self.fs.exists(self.temporary):
                self.fs.rm(self.temporary)
