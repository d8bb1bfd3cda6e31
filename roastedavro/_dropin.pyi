# The Python-visible part of the fastavro drop-in's fast paths (_dropin.pyx)
# that the package's Python modules use; mypy does not read .pyx files.
from collections.abc import Callable
from typing import Any

def bytesio_in_place(enabled: bool | None = ...) -> bool: ...
def bind(
    cache: dict[Any, Any],
    codec_of: Callable[..., Any],
    pair_of: Callable[..., Any],
    dump_with_options: Callable[..., Any],
    read_named: Callable[..., Any],
    read_other: Callable[..., Any],
    error: Callable[..., Any],
    unreadable: Callable[..., Any],
) -> None: ...
def watch_logical(
    writers: dict[Any, Any], readers: dict[Any, Any], changed: Callable[[], object]
) -> None: ...
def forget() -> None: ...
def schemaless_writer(
    fo: Any,
    schema: Any,
    record: Any,
    strict: bool = ...,
    strict_allow_default: bool = ...,
    disable_tuple_notation: bool = ...,
) -> None: ...
def schemaless_reader(
    fo: Any,
    writer_schema: Any,
    reader_schema: Any = ...,
    return_record_name: bool = ...,
    return_record_name_override: bool = ...,
    handle_unicode_errors: str = ...,
    return_named_type: bool = ...,
    return_named_type_override: bool = ...,
) -> Any: ...
