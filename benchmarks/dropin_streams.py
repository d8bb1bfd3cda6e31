"""roastedavro.fastavro.schemaless_reader against fastavro's, reading consecutive datums from streams.

    python -m benchmarks.dropin_streams            # 10,000 small records, best of 7
    python -m benchmarks.dropin_streams --records 2000 --repeats 3

Per stream kind, µs per record to read all records one schemaless_reader call
at a time until EOFError, fastavro and the drop-in side by side (the best of
the repeats, each on a fresh stream): a BytesIO, a file opened "rb" (a
BufferedReader), the same file unbuffered (FileIO, seekable), a pipe opened
"rb" (a BufferedReader that cannot seek), the pipe unbuffered (FileIO that
cannot seek), a Python object with only read() and seekable() -> False, and a
gzip file (seekable, but seeking back decompresses from the start).
Every reader's values are checked against fastavro's before timing.
"""

from __future__ import annotations

import argparse
import fcntl
import gzip
import io
import os
import tempfile
import time

import fastavro

import roastedavro.fastavro as dropin

SCHEMA = {
    "type": "record",
    "name": "Tick",
    "fields": [
        {"name": "symbol", "type": "string"},
        {"name": "price", "type": "double"},
        {"name": "size", "type": "int"},
        {"name": "time", "type": "long"},
        {"name": "venue", "type": ["null", "string"]},
    ],
}


class ReadOnly:
    """A stream with read() only, which cannot seek (a socket-like object)."""

    def __init__(self, fo):
        self.fo = fo

    def read(self, n=-1):
        return self.fo.read(n)

    def seekable(self):
        return False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.fo.close()


def records(n: int) -> list[dict]:
    return [
        {
            "symbol": f"SYM{i % 97}",
            "price": 100 + i / 8,
            "size": i % 1000,
            "time": 1_700_000_000_000 + i,
            "venue": None if i % 3 else "XNAS",
        }
        for i in range(n)
    ]


def pipe_of(data: bytes, buffered: bool):
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, 1031, max(len(data), 65536))  # F_SETPIPE_SZ
    os.write(write_end, data)
    os.close(write_end)
    return os.fdopen(read_end, "rb", buffering=-1 if buffered else 0)


def read_all(read, fo, schema) -> list:
    out = []
    try:
        while True:
            out.append(read(fo, schema))
    except EOFError:
        return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    schema = fastavro.parse_schema(SCHEMA)
    values = records(args.records)
    out = io.BytesIO()
    for value in values:
        fastavro.schemaless_writer(out, schema, value)
    data = out.getvalue()
    with tempfile.NamedTemporaryFile(suffix=".bin") as file:
        file.write(data)
        file.flush()
        gz_name = file.name + ".gz"
        with gzip.open(gz_name, "wb") as out:
            out.write(data)
        sources = {
            "BytesIO": lambda: io.BytesIO(data),
            "file (buffered)": lambda: open(file.name, "rb"),
            "file (unbuffered)": lambda: open(file.name, "rb", buffering=0),
            "pipe (buffered)": lambda: pipe_of(data, True),
            "pipe (unbuffered)": lambda: pipe_of(data, False),
            "read()-only object": lambda: ReadOnly(io.BytesIO(data)),
            "gzip file": lambda: gzip.open(gz_name, "rb"),
        }
        readers = {"fastavro": fastavro.schemaless_reader, "roastedavro": dropin.schemaless_reader}
        expected = read_all(fastavro.schemaless_reader, io.BytesIO(data), schema)
        print(
            f"{args.records:,} records of {len(data) / args.records:.1f} bytes; "
            f"µs per record, best of {args.repeats}"
        )
        print(f"{'stream':<22}{'fastavro':>10}{'roastedavro':>13}{'ratio':>8}")
        for name, make in sources.items():
            best = {}
            for reader_name, read in readers.items():
                with make() as fo:
                    assert read_all(read, fo, schema) == expected, (name, reader_name)
                times = []
                for _ in range(args.repeats):
                    with make() as fo:
                        began = time.perf_counter()
                        read_all(read, fo, schema)
                        times.append(time.perf_counter() - began)
                best[reader_name] = min(times) / args.records * 1e6
            print(
                f"{name:<22}{best['fastavro']:>10.2f}{best['roastedavro']:>13.2f}"
                f"{best['fastavro'] / best['roastedavro']:>7.1f}x"
            )
        os.unlink(gz_name)


if __name__ == "__main__":
    main()
