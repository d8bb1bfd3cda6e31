"""How long a caller waits while its codec moves from tier 0 to compiled.

    python -m benchmarks.swap              # 20 fields, HOT_AFTER lowered to 1 MB

One thread calls ``AvroCodec(schema).dump`` in a loop and times every call,
with the ``hot`` policy: after HOT_AFTER bytes a build starts in the
background (a child process) and the compiled codec is swapped in. Reported:
the calls' latency percentiles, maximum and calls over 1 ms, in the 10,000
calls around the swap and in the whole run, against a run of as many calls
with no build at all (``compile="never"``) made after it in the same process.
Pauses the machine causes (other processes) show up in both, and so do the
GIL's turns while a background thread runs Python code (at
roastedavro.background.JOB_SWITCH_INTERVAL); the swap itself is one attribute
assignment per entry point.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

#: calls timed per preallocated list
CHUNK = 1 << 16

HERE = Path(__file__).resolve().parent
if not __package__:
    sys.path.insert(0, str(HERE.parent))


def _schema(fields: int) -> dict:
    return {
        "type": "record",
        "name": "Swap" + uuid.uuid4().hex[:10],
        "fields": [{"name": f"f{i}", "type": "long"} for i in range(fields)],
    }


def _loop(codec, value, calls: int, until_compiled: bool) -> tuple[list[float], int | None]:
    clock = time.perf_counter
    # preallocated chunks: growing one list of millions of floats would copy it
    # now and then, a pause of milliseconds that is the benchmark's own
    chunks: list[list[float]] = []
    chunk: list[float] = []
    slot = CHUNK
    swapped = None
    n = 0
    while n < calls or (until_compiled and swapped is None):
        if slot == CHUNK:
            chunk = [0.0] * CHUNK
            chunks.append(chunk)
            slot = 0
        started = clock()
        codec.dump(value)
        chunk[slot] = clock() - started
        slot += 1
        if swapped is None and until_compiled and codec.tier == "compiled":
            swapped = n
            calls = n + 100_000  # some calls on the compiled codec too
        n += 1
        if until_compiled and n > 50_000_000:
            raise SystemExit("no swap after 50 million calls: is there a C compiler?")
    times = [t for chunk in chunks for t in chunk][:n]
    return times, swapped


def _report(name: str, times: list[float]) -> str:
    ordered = sorted(times)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e6

    return (
        f"{name:28s} calls {len(times):>9,}  median {statistics.median(times) * 1e6:6.2f} us  "
        f"p99.9 {at(0.999):7.1f} us  p99.99 {at(0.9999):8.1f} us  max {max(times) * 1e6:8.1f} us  "
        f"over 1 ms {sum(1 for t in times if t > 1e-3)}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fields", type=int, default=20)
    parser.add_argument("--hot-after", type=int, default=1 << 20)
    args = parser.parse_args(argv)
    os.environ["ROASTEDAVRO_CACHE_DIR"] = tempfile.mkdtemp(prefix="roastedavro-swap-")
    from roastedavro import tiers
    from roastedavro.codec import AvroCodec

    tiers.HOT_AFTER = args.hot_after
    value = {f"f{i}": i * 1000 for i in range(args.fields)}
    hot = AvroCodec(_schema(args.fields))
    times, swapped = _loop(hot, value, 0, until_compiled=True)
    window = times[max(0, swapped - 5_000) : swapped + 5_000]
    still = AvroCodec(_schema(args.fields), compile="never")
    baseline, _ = _loop(still, value, len(times), until_compiled=False)
    print(
        f"build in the background: {hot.stats['build_seconds']:.2f} s; swapped after "
        f"{swapped:,} calls; load average {os.getloadavg()[0]:.2f}"
    )
    print(_report("around the swap (10,000)", window))
    print(_report("whole run with the swap", times))
    print(_report("no build (tier 0 only)", baseline))


if __name__ == "__main__":
    main()
