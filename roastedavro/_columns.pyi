# Stub of the compiled module roastedavro/_columns.pyx (Avro records read
# straight into Arrow buffers, for roastedavro.arrow).
from typing import Any, Callable

class Column:
    kind: int
    length: int
    null_count: int
    keep: bool
    def __init__(
        self,
        kind: int,
        null_index: int = ...,
        size: int = ...,
        min_size: int = ...,
        children: Any = ...,
        keep: bool = ...,
        precision: int = ...,
        width: int = ...,
        path: str = ...,
    ) -> None: ...
    def buffers(self) -> tuple[int, int, Any, Any, Any]: ...

class BlockReader:
    def __init__(self, root: Column, min_size: int, max_depth: int, max_items: int) -> None: ...
    def cut_every(self, batch_size: int, on_full: Callable[[], object]) -> None: ...
    def load_block_within(self, data: Any, count: int, allowance: int) -> tuple[int, int]: ...
