# The Python-visible part of tier 0, the interpreter (_tier0.pyx), that the
# package's Python modules use; mypy does not read .pyx files.
from collections.abc import Callable
from typing import Any, Final

from roastedavro._runtime import DatumCodec, Transcoder

def union_names(
    union: Any, schema: Any, naming: Any, reader: Any = ..., reader_branches: Any = ...
) -> Any: ...
def branch_indexes(union: Any) -> tuple[int, ...] | None: ...

class Interpreter(DatumCodec):
    schema: Final[Any]
    def __init__(
        self,
        schema: Any,
        flags: Any = ...,
        naming: Any = ...,
        unicode_errors: str | None = ...,
        strict: int = ...,
        branches: bool = ...,
    ) -> None: ...
    def record_node(self, name: str) -> int: ...
    def field_node(self, record: str, position: int) -> int: ...
    @property
    def work(self) -> int: ...
    def watch(self, hot_at: int, on_hot: Callable[[], object]) -> None: ...

class ResolvingInterpreter(DatumCodec):
    schema: Final[Any]
    writer_schema: Final[Any]
    fastavro_differs: Final[bool]
    def __init__(
        self,
        writer_schema: Any,
        reader_schema: Any,
        flags: Any = ...,
        naming: Any = ...,
        unicode_errors: str | None = ...,
        fastavro_values: bool = ...,
        branches: bool = ...,
    ) -> None: ...
    @property
    def work(self) -> int: ...
    def watch(self, hot_at: int, on_hot: Callable[[], object]) -> None: ...

class Rearranger(Transcoder):
    @property
    def calls(self) -> int: ...
    @staticmethod
    def build(writer_schema: Any, reader_schema: Any, flags: Any = ...) -> Rearranger | None: ...
    def transcode_block_within(self, data: Any, count: int, allowance: int) -> tuple[bytes, int]: ...
    @property
    def work(self) -> int: ...
    def watch(self, hot_at: int, on_hot: Callable[[], object]) -> None: ...
