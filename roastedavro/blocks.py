"""The loops of Avro's block-encoded kinds (arrays and maps), written once
for both code generators: ``avrogen`` (plain Avro schemas) and the
marshmallow encoders (``encoders.collections``).

Each takes the function being emitted (anything with ``line`` and
``indent``) and the names of the C locals it may use; the caller emits what
is its own inside the loop (an item's conversion, write or read). Writes
follow fastavro: one block holding every item, then the terminating zero
(an empty collection is the zero alone). Reads accept any block layout,
negative counts included.
"""

from __future__ import annotations

import contextlib

from roastedavro.codetext import checked_int, literal


@contextlib.contextmanager
def write_items(fn, items: str, count: str, item: str, part: str, index: str, resized: str):
    """The loop writing the list ``items`` as one block; the body writes ``item``.

    ``part``/``index`` say where an error is (an item's index); ``resized``
    is the error raised when the list changed size while it was written:
    the count is already out, and the bytes must not promise more or fewer
    items than follow.
    """
    fn.line(f"{count} = len({items})")
    fn.line(f"if {count}:")
    with fn.indent():
        fn.line(f"write_long(w, {count})")
        fn.line(f"{part} = PATH_INDEX")
        fn.line(f"{index} = 0")
        fn.line(f"for {item} in {items}:")
        with fn.indent():
            yield
            fn.line(f"{index} += 1")
        fn.line(f"if {index} != {count}:")
        fn.line(f"    raise_dump_error({literal(resized)})")
        fn.line(f"{part} = PATH_NONE")
    fn.line("write_byte(w, 0)")


@contextlib.contextmanager
def write_entries(
    fn,
    entries: str,
    count: str,
    position: str,
    refs: tuple[str, str],
    key: str,
    item: str,
    part: str,
    index: str,
    check_keys: bool,
    resized: str,
):
    """The loop writing the dict ``entries`` as one block; the body writes
    ``item``, the value under ``key`` (its key is written already).

    ``position`` and ``refs`` (two ``PyObject*`` locals) walk the dict with
    ``PyDict_Next``; ``part``/``index`` say where an error is (the key, or
    its value). ``check_keys`` checks that each key is a str (a marshmallow
    Dict converts its keys before). A dict that changes size while it is
    written (a value's conversion can run Python code) raises ``resized``:
    the count is already out, and the bytes must not promise more or fewer
    entries than follow.
    """
    key_ref, item_ref = refs
    fn.line(f"{count} = len({entries})")
    fn.line(f"if {count}:")
    with fn.indent():
        fn.line(f"write_long(w, {count})")
        fn.line(f"{index} = 0")
        fn.line(f"{position} = 0")
        fn.line(f"while PyDict_Next({entries}, &{position}, &{key_ref}, &{item_ref}):")
        with fn.indent():
            # new references: writing a value may run Python code
            fn.line(f"{key} = <object>{key_ref}")
            fn.line(f"{item} = <object>{item_ref}")
            fn.line(f"{part} = PATH_KEY")
            if check_keys:
                fn.line(f"if type({key}) is not str:")
                fn.line(f"    check_map_key({key})")
            fn.line(f"write_str(w, <str>{key})")
            fn.line(f"{part} = PATH_VALUE")
            yield
            fn.line(f"{index} += 1")
        fn.line(f"{part} = PATH_NONE")
        fn.line(f"if {index} != {count}:")
        fn.line(f"    raise_dump_error({literal(resized)})")
    fn.line("write_byte(w, 0)")


@contextlib.contextmanager
def read_blocks(fn, count: str, position: str, min_size: int, before_first=None):
    """The loop over an array's or map's blocks; the body reads one item.

    Each block's count is checked against the remaining bytes (at least
    ``min_size`` per item), ``max_items`` and the message's item budget
    before its first item is read. ``before_first(count)`` emits lines once
    the first count is known (a presized list or dict).
    """
    size = checked_int(min_size, "the smallest item size", 0, 2**62)
    fn.line(f"{count} = read_block_count(r, {size}, self.max_items)")
    if before_first is not None:
        before_first(count)
    fn.line(f"while {count}:")
    with fn.indent():
        fn.line(f"for {position} in range({count}):")
        with fn.indent():
            yield
        fn.line(f"{count} = read_block_count(r, {size}, self.max_items)")


@contextlib.contextmanager
def read_items(fn, result: str, count: str, position: str, min_size: int):
    """The loop reading an array into the list ``result`` (presized for the
    first block); the body reads one item and appends it with ``put_item``."""
    with read_blocks(fn, count, position, min_size, lambda first: fn.line(f"{result} = new_items({first})")):
        yield


@contextlib.contextmanager
def read_entries(fn, result: str, count: str, position: str, key: str, min_value_size: int):
    """The loop reading a map into the dict ``result`` (sized for the first
    block: no resizing while it fills); the body, after ``key`` is read,
    reads its value. A key takes at least its one-byte length."""
    with read_blocks(
        fn, count, position, 1 + min_value_size, lambda first: fn.line(f"{result} = new_record_dict({first})")
    ):
        fn.line(f"{key} = read_key(r)")
        yield
