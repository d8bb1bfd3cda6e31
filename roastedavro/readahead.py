"""A container file's blocks, decompressed one step ahead of their decoding.

Decompressing a zstandard block and decoding its records take about as
long as each other (45 ms and 55 ms for a 15 MB file of flat records). So
a worker thread decompresses the next blocks while the caller decodes
these: 18% less time for a zstandard file on this project's two-core
benchmark machine.

- The worker decompresses a group of blocks in one call that lets go of
  the GIL (zstandard's frames, concatenated, decompress to their outputs
  concatenated). One call per block would not do: between calls the
  worker needs the GIL, which the decoding thread holds for up to the
  interpreter's switch interval (5 ms). Codecs without such a call are
  decompressed on the caller's thread, as before.
- The file is read on the caller's thread only: file objects are not shared.
- Memory stays bounded: a group's output is at most 4 MiB, or one block
  that gives more (a block the worker's call does not take is decompressed
  alone), and one group is decompressed ahead at most.
- Only blocks that are each exactly one frame go to the worker's call:
  joined, a frame cut across two blocks would decode. A process forked
  while reading goes on without the worker (it is the parent's).
- Order and errors are the sequential reader's: each block comes with its
  data or the error decompressing it raised; a damaged frame stops the
  blocks after the ones before it were given.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import threading
    from concurrent.futures import Future, ThreadPoolExecutor

# threading and concurrent.futures are imported when a worker is first
# needed: a process that serves records only never pays for them

__all__ = ["GROUP_OUTPUT", "decompressed"]

#: the decompressed bytes a group aims at, and where its worker stops
GROUP_OUTPUT = 1 << 20
#: the most output of one call for several blocks (one block may give more)
_FRAMES_OUTPUT = 4 * GROUP_OUTPUT
#: compressed bytes in the first group (later ones follow the ratio seen)
_FIRST_INPUT = 1 << 16
#: bounds of a group's compressed bytes, and of its blocks
_LEAST_INPUT, _MOST_INPUT, _MOST_BLOCKS = 1 << 14, 1 << 22, 256

Data = Any  # bytes | bytearray, or the Exception decompressing it raised


def _attempt(decompress: Callable[[Any], Any], block: Any) -> Data:
    try:
        return decompress(block)
    except Exception as error:  # given back at its block, in order
        return error


def _decompress_group(decompress: Callable[[Any], Any], group: list) -> list:
    """The data (or errors) of the group's first blocks, one by one, up to
    the one whose output reaches GROUP_OUTPUT."""
    results: list = []
    output = 0
    for block in group:
        if output >= GROUP_OUTPUT:
            break
        data = _attempt(decompress, block)
        results.append(data)
        if not isinstance(data, Exception):
            output += len(data)
    return results


def _worker(decompress_frames: Callable, group: list, started: threading.Event) -> list | None:
    started.set()
    try:
        # one call for the group (or its first blocks): the GIL let go throughout
        return decompress_frames(group, _FRAMES_OUTPUT)
    except Exception:
        return None


def decompressed(
    blocks: Iterable[Any],
    decompress: Callable[[Any], Any],
    decompress_frames: Callable[[list, int], list | None] | None = None,
) -> Iterator[tuple[Any, Data]]:
    """Each block of ``blocks`` (objects with a ``size``) with
    ``decompress(block)``'s result, or the Exception it raised, in order.
    Where ``decompress_frames`` is given (the data of a group's first blocks,
    at most the given output in all or one block, in one call that releases
    the GIL; or None to decompress them one by one), a worker thread
    decompresses one group ahead. An error of ``blocks`` itself is
    raised after the blocks before it."""
    source = iter(blocks)
    if decompress_frames is None:
        # one call per block would need the GIL between blocks, which the
        # decoding thread holds: no gain from a worker
        for block in source:
            yield block, _attempt(decompress, block)
        return
    failure: BaseException | None = None
    target = _FIRST_INPUT

    def next_group() -> list:
        nonlocal failure
        group: list = []
        if failure is not None:
            return group
        size = 0
        try:
            for block in source:
                group.append(block)
                size += block.size
                if size >= target or len(group) >= _MOST_BLOCKS:
                    break
        except Exception as error:  # raised once the blocks before it are given
            failure = error
        return group

    pool: ThreadPoolExecutor | None = None
    # a process forked while reading has no worker: it goes on on its own thread
    parent = os.getpid()
    # the first group on the caller's thread: a small file needs no worker
    group = next_group()
    results: list | None = _decompress_group(decompress, group)
    ahead = True
    try:
        while group:
            if results is None:
                # frames the worker's call cannot take (sizes not declared,
                # damaged data): the rest on this thread, one block at a time
                ahead, results = False, []
            target = _next_target(group, results, target)
            following = next_group()
            future: Future | None = None
            if ahead and os.getpid() != parent:
                ahead = False
            if following and ahead:
                if pool is None:
                    import threading
                    from concurrent.futures import ThreadPoolExecutor

                    pool = ThreadPoolExecutor(1, thread_name_prefix="roastedavro-readahead")
                started = threading.Event()
                future = pool.submit(_worker, decompress_frames, following, started)
                # the GIL let go until the worker is in its call (else it
                # waits for the interpreter's switch interval, 5 ms)
                started.wait(0.01)
            for index, block in enumerate(group):
                if index < len(results):
                    data, results[index] = results[index], None
                else:  # past what the worker's call took: decompressed here
                    data = _attempt(decompress, block)
                yield block, data
            if future is not None and os.getpid() != parent:
                future = None  # the worker is the parent's: decompressed here
            group, results = following, (future.result() if future is not None else [])
        if failure is not None:
            raise failure
    finally:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _next_target(group: list, results: list, target: int) -> int:
    """Compressed bytes for the next group: GROUP_OUTPUT at the ratio the
    last group's decompressed blocks had."""
    taken = given = 0
    for block, data in zip(group, results):
        if not isinstance(data, Exception) and data is not None:
            taken += block.size
            given += len(data)
    if not given:
        return target
    return max(_LEAST_INPUT, min(_MOST_INPUT, GROUP_OUTPUT * taken // given))
