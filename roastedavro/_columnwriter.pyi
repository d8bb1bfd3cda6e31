# Stub of the compiled module roastedavro/_columnwriter.pyx (Arrow columns
# written as Avro records, for roastedavro.arrow).
from typing import Any

class Source:
    def __init__(
        self,
        kind: int,
        what: str,
        null_index: int = ...,
        width: int = ...,
        signed: bool = ...,
        narrow: bool = ...,
        size: int = ...,
        children: Any = ...,
        names: Any = ...,
        constant: bytes = ...,
        table: bytes | None = ...,
        symbols: list[Any] | None = ...,
    ) -> None: ...
    def bind(self, array: Any, table: bytes | None = ..., symbols: list[Any] | None = ...) -> None: ...

class RowWriter:
    def __init__(self, root: Source) -> None: ...
    def encode(self, start: int, stop: int, limit: int) -> tuple[bytes, int]: ...

def ascii_values(array: Any, large: bool) -> bool: ...
