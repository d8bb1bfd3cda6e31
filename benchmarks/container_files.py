"""Object container files: write and read throughput against fastavro (and Java's avro-tools).

    python -m benchmarks.container_files              # full: 1,000,000 records, best of 3, ~16 min
    python -m benchmarks.container_files --quick      # 100,000 records, best of 3, ~3 min
    python -m benchmarks.container_files --case trade --codecs null,zstandard --no-java
    python -m benchmarks.container_files --repeats 2 --no-java   # ~7 min

The full run's time is mostly fastavro's (about 30 s per codec and direction
for 1,000,000 records, so 9 minutes over 3 rounds) and avro-tools' (10-25 s a
run).

Writes benchmarks/results/container_files.json, container_files.md and
container_files.png (records/s per codec and contender, write and read).

The records: ``--case`` of benchmarks/avro_schemas.py, ``event`` by default (a
clickstream event of 14 fields: a uuid, two timestamps, two enums, optional
strings, a map of 2-8 strings, a payload union ``[null, string, long, double,
boolean, Click, Purchase]``; 208 bytes a record without compression).
``--distinct`` (10,000) different records are drawn from the case's seeded
generator and cycled to make the file's ``--records`` (1,000,000): the input
of every writer is ``itertools.islice(itertools.cycle(batch), records)``, so
generating records costs nothing in the timings and memory stays small.
Blocks are compressed one at a time, so cycling a batch of 10,000 records
(about 130 blocks of 16 kB) does not help compression.

Contenders, each timed on the same records and the same file:

- ``fastavro`` (the baseline): ``fastavro.writer(fo, parsed, records, codec=...)``
  with the schema parsed once by ``fastavro.parse_schema``; ``fastavro.reader(fo)``;
- ``roastedavro.fastavro`` (the drop-in): ``writer``/``reader`` of
  ``roastedavro.fastavro``, the schema parsed once by its ``parse_schema``;
- ``roastedavro.container``: ``write_file(fo, schema, records, codec)`` with the
  schema dict, ``FileReader(fo)``; both roastedavro contenders run on the
  schema's compiled codec, built (or found in the cache) before the checks;
- ``avro-tools`` (if ``java`` is on PATH and scripts/java/fetch.py can fetch
  avro-tools 1.12.2): ``java -jar avro-tools-1.12.2.jar fromjson --codec C
  [--level 3] --schema-file S JSON > out`` and ``tojson FILE > /dev/null``, run
  by subprocess with the JVM's default flags. These are end-to-end figures of
  a command: a JVM start (about 0.5 s here), Avro's JSON encoding parsed or
  printed for every record, and the file on disk (``out`` and the JSON in
  /tmp) -- not the cost of the codec alone. Its JSON input is what ``tojson``
  prints for a null-codec file of the records (made once, not timed). A run
  takes 10-25 s, so avro-tools runs in the first ``--java-rounds`` (1) rounds
  only.

Python writes go to an ``io.BytesIO`` (no disk in the timings); every reader
reads one and the same file per codec, the one fastavro wrote (the first
repeat's), from an ``io.BytesIO`` over its bytes, consuming every record
(``collections.deque(reader, maxlen=0)``: each record is built, then dropped).
All writers are given the same sync marker, so their files can be compared
byte for byte. Compression levels are each library's default: zlib's 6 for
deflate, zstd's 3 for zstandard (fastavro through ``backports.zstd``,
roastedavro through ``cramjam``; avro-tools is given ``--level 3``, since its
own default, -1, is zstd's fast level -1).

Checks, before timing: the ``distinct`` records written by fastavro and read
back by fastavro are the reference values. Per codec, each writer writes
them and fastavro reads the file back; each reader reads fastavro's file; every
record must equal the reference with the same Python types
(benchmarks.contenders.strict_difference). A contender that fails a check is
not timed in that direction (n/a, with the reason). Where fastavro lacks a
codec's library (zstandard without backports.zstd on Python < 3.14), fastavro
is n/a for that codec, the writers' record data are compared with fastavro's
null file's, and the readers read roastedavro.container's file. After timing,
on the full-size files: each Python writer's file (of the first round) must
hold the same record bytes as fastavro's (blocks decompressed by fastavro's
``block_reader`` and concatenated: block boundaries may differ, the
records' encoding may not) and the same record count; avro-tools' file, whose
maps Java writes in its HashMap's order, must hold ``records`` records in its
blocks, its first ``distinct`` read by fastavro equal to the reference and all
of them read by roastedavro.container equal to it; each roastedavro reader
reads every record of the full file to the reference (``==``, and
strict_difference on the first ``distinct``); avro-tools' ``tojson`` of each
file prints ``records`` lines, the same text for every codec, whose first
``distinct`` read back by fastavro's JSON reader equal the reference.

Timing: one process, ``--repeats`` (3) rounds; in each round, per codec, every
contender writes once, then every contender reads once, in an order rotated
by one each round (the machine is shared and noisy: interleaving spreads
the noise over the contenders). ``gc.collect()`` before each run; the
collector stays on, as in use. The figure is the best of the rounds:
records/s = records / fastest wall time; ratio = contender records/s /
fastavro's. The median is kept in the JSON and the Markdown.

The codec alone: the blocks of fastavro's null file compressed and
decompressed one by one by roastedavro.container's codecs (zlib, cramjam's
zstd) and nothing else, best of the rounds: the most records/s any writer or
reader can reach with that codec here.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import gc
import hashlib
import importlib.util
import io
import itertools
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
if not __package__:  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(ROOT))

import fastavro  # noqa: E402

import roastedavro.container as container  # noqa: E402
import roastedavro.fastavro as drop_in  # noqa: E402
from roastedavro.codec import AvroCodec  # noqa: E402
from benchmarks.avro_schemas import CASES  # noqa: E402
from benchmarks.contenders import _short, strict_difference  # noqa: E402
from benchmarks.run import cpu_and_commit, fmt_x  # noqa: E402

BASELINE = "fastavro"
JAVA = "avro-tools"
PYTHON_CONTENDERS = ("fastavro", "roastedavro.fastavro", "roastedavro.container")
CODECS = ("null", "deflate", "zstandard")
DIRECTIONS = ("write", "read")
#: avro-tools' --level per codec (its default, -1, is zstd's fast level -1 for zstandard)
JAVA_LEVELS = {"zstandard": 3}
SYNC_MARKER = random.Random(2024).randbytes(16)
WORK = Path(os.environ.get("TMPDIR", "/tmp")) / "roastedavro-bench-container"
COLORS = {
    "fastavro": "#8c8c8c",
    "roastedavro.fastavro": "#d95f02",
    "roastedavro.container": "#7f2704",
    JAVA: "#1b9e77",
}


# -- contenders --------------------------------------------------------------------------


@dataclasses.dataclass
class Contender:
    name: str
    #: (file object, codec, records) -> None
    write: Callable[[Any, str, Iterable], None] | None
    #: file object -> an iterable of the records
    read: Callable[[Any], Iterable] | None
    call: dict[str, str]
    #: (codec, direction) -> why it is not timed there
    excluded: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)


def python_contenders(schema: dict) -> dict[str, Contender]:
    parsed = fastavro.parse_schema(schema)
    drop_in_parsed = drop_in.parse_schema(schema)
    # measured compiled: no records served by tier 0 while the compiled codec
    # is looked up or built, no swap in the middle of a run (the drop-in,
    # write_file and both readers share the schema's one engine)
    drop_in.codec_for(drop_in_parsed).compile()
    AvroCodec(schema).compile()

    def fastavro_write(fo, codec, records):
        fastavro.writer(fo, parsed, records, codec=codec, sync_marker=SYNC_MARKER)

    def drop_in_write(fo, codec, records):
        drop_in.writer(fo, drop_in_parsed, records, codec=codec, sync_marker=SYNC_MARKER)

    def container_write(fo, codec, records):
        container.write_file(fo, schema, records, codec, sync_marker=SYNC_MARKER)

    return {
        "fastavro": Contender(
            "fastavro",
            fastavro_write,
            fastavro.reader,
            {
                "write": "fastavro.writer(fo, fastavro.parse_schema(schema), records, codec=codec)",
                "read": "fastavro.reader(fo)",
            },
        ),
        "roastedavro.fastavro": Contender(
            "roastedavro.fastavro",
            drop_in_write,
            drop_in.reader,
            {
                "write": "roastedavro.fastavro.writer(fo, roastedavro.fastavro.parse_schema(schema), "
                "records, codec=codec)",
                "read": "roastedavro.fastavro.reader(fo)",
            },
        ),
        "roastedavro.container": Contender(
            "roastedavro.container",
            container_write,
            container.FileReader,
            {
                "write": "roastedavro.container.write_file(fo, schema, records, codec)",
                "read": "roastedavro.container.FileReader(fo)",
            },
        ),
    }


def fastavro_codec_missing(codec: str) -> str | None:
    """Why fastavro cannot write ``codec`` here (a missing library), or None."""
    try:
        fastavro.writer(io.BytesIO(), fastavro.parse_schema("long"), [1], codec=codec)
    except (ValueError, ImportError) as error:
        return f"fastavro cannot write {codec} here: {_short(error)}"
    return None


# -- Java's avro-tools --------------------------------------------------------------------


def avro_tools_jar() -> tuple[Path | None, str]:
    """The avro-tools jar (fetched by scripts/java/fetch.py if missing), or None and why not."""
    java = shutil.which("java")
    if java is None:
        return None, "no java on PATH"
    fetch_py = ROOT / "scripts" / "java" / "fetch.py"
    try:
        spec = importlib.util.spec_from_file_location("roastedavro_java_fetch", fetch_py)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fetch_tools = getattr(module, "fetch_tools", None)
        if fetch_tools is None:
            return None, f"{fetch_py.relative_to(ROOT)} has no fetch_tools() (no avro-tools)"
        return Path(fetch_tools()), ""
    except Exception as error:  # noqa: BLE001 - Java is optional: report and go on
        return None, f"avro-tools could not be fetched: {_short(error)}"


def java_version() -> str | None:
    try:
        completed = subprocess.run(["java", "-version"], capture_output=True, text=True)
        return completed.stderr.splitlines()[0] if completed.stderr else None
    except OSError:
        return None


class AvroTools:
    """``java -jar avro-tools.jar`` with the JVM's default flags, timed by wall clock."""

    def __init__(self, jar: Path, work: Path, schema: dict):
        self.jar = jar
        self.work = work
        self.schema = schema
        self.schema_file = work / "schema.avsc"
        self.schema_file.write_text(json.dumps(schema))
        self.json_file = work / "records.json"

    def _run(self, args: list[str], stdout_path: str | os.PathLike) -> float:
        argv = ["java", "-jar", str(self.jar), *map(str, args)]
        with open(stdout_path, "wb") as out:
            started = time.perf_counter()
            completed = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
            seconds = time.perf_counter() - started
        if completed.returncode != 0:
            raise RuntimeError(
                f"avro-tools {' '.join(map(str, args))} exited with "
                f"{completed.returncode}: "
                f"{completed.stderr.decode('utf-8', 'replace')[-2000:]}"
            )
        return seconds

    def fromjson_args(self, codec: str) -> list[str]:
        level = JAVA_LEVELS.get(codec)
        return (
            ["fromjson", "--codec", codec]
            + (["--level", str(level)] if level is not None else [])
            + ["--schema-file", self.schema_file, self.json_file]
        )

    def write(self, codec: str, out: Path) -> float:
        return self._run(self.fromjson_args(codec), out)

    def read(self, path: Path, out: str | os.PathLike = os.devnull) -> float:
        return self._run(["tojson", path], out)

    def startup(self) -> float:
        """A JVM start with avro-tools' main class and nothing to do (its usage text)."""
        started = time.perf_counter()
        subprocess.run(
            ["java", "-jar", str(self.jar)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        return time.perf_counter() - started


# -- records and checks -------------------------------------------------------------------


def make_batch(case_name: str, distinct: int) -> list:
    case = CASES[case_name]
    rng = random.Random(case.seed)
    return [case.make_datum(rng) for _ in range(distinct)]


def records(batch: list, count: int) -> Iterable:
    return itertools.islice(itertools.cycle(batch), count)


def first_difference(got: Iterable, want: list, count: int | None = None) -> str | None:
    """The first record of ``got`` that differs from ``want`` (strictly), or a count mismatch."""
    got = list(got)
    expected = len(want) if count is None else count
    if len(got) != expected:
        return f"{len(got)} records, not {expected}"
    for index, (x, y) in enumerate(zip(got, want)):
        difference = strict_difference(x, y, f"[{index}]")
        if difference:
            return f"record {difference}"
    return None


def full_read_difference(reader: Iterable, reference: list, count: int) -> str | None:
    """Every record of a full file: strictly the reference for the first cycle, ``==`` after."""
    distinct = len(reference)
    index = -1
    for index, record in enumerate(reader):
        want = reference[index % distinct]
        if index < distinct:
            difference = strict_difference(record, want, f"[{index}]")
            if difference:
                return f"record {difference}"
        elif record != want:
            return f"record [{index}] != reference record [{index % distinct}]"
    if index + 1 != count:
        return f"{index + 1} records, not {count}"
    return None


def record_data_digest(data: Any) -> tuple[int, str]:
    """(records, SHA-256 of the blocks' decompressed data concatenated), by fastavro's
    block_reader; where fastavro lacks the codec's library, by roastedavro's decompression."""
    return record_data(data)[:2]


def record_data(data: Any) -> tuple[int, str, int]:
    """(records, SHA-256 of the record data, blocks) of a container file."""
    digest = hashlib.sha256()
    count = blocks = 0
    try:
        for block in fastavro.block_reader(io.BytesIO(data)):
            digest.update(block.bytes_.getbuffer())
            count += block.num_records
            blocks += 1
    except (ValueError, ImportError):
        digest, count, blocks = hashlib.sha256(), 0, 0
        reader = container.FileReader(io.BytesIO(data))
        for block in reader.blocks():
            digest.update(reader.decompress(block))
            count += block.count
            blocks += 1
    return count, digest.hexdigest(), blocks


def sample_checks(
    contenders: dict[str, Contender],
    schema: dict,
    batch: list,
    codecs: list[str],
    missing: dict[str, str | None],
    log,
) -> tuple[list, dict, dict]:
    """The reference values; per codec each contender's checks on ``batch``; per codec
    the contender whose files the readers read (fastavro, or roastedavro.container
    where fastavro cannot write the codec: ``missing[codec]`` says why)."""
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(schema), batch, sync_marker=SYNC_MARKER)
    null_digest = record_data_digest(buffer.getbuffer())
    buffer.seek(0)
    reference = list(fastavro.reader(buffer))
    if len(reference) != len(batch):
        raise SystemExit(f"fastavro reads {len(reference)} records of {len(batch)}")
    checks: dict[str, dict] = {}
    sources: dict[str, str] = {}
    for codec in codecs:
        entry: dict[str, Any] = {}
        checks[codec] = entry
        files: dict[str, bytes] = {}
        for name, contender in contenders.items():
            result: dict[str, Any] = {}
            entry[name] = result
            if (codec, "write") in contender.excluded:
                result["write"] = contender.excluded[codec, "write"]
                continue
            buffer = io.BytesIO()
            try:
                contender.write(buffer, codec, batch)
                files[name] = buffer.getvalue()
                buffer.seek(0)
                if missing.get(codec):
                    # fastavro cannot read the file: its records' bytes must be those
                    # of fastavro's null-codec file
                    digest = record_data_digest(files[name])
                    result["write"] = (
                        None
                        if digest == null_digest
                        else "the record data differ from fastavro's null file's"
                    )
                else:
                    result["write"] = first_difference(fastavro.reader(buffer), reference)
            except Exception as error:  # noqa: BLE001 - reported, the contender is not timed
                result["write"] = f"{type(error).__name__}: {_short(error)}"
        source = next(
            (
                name
                for name in (BASELINE, "roastedavro.container")
                if name in files and not entry[name]["write"]
            ),
            None,
        )
        if source is None:
            raise SystemExit(
                f"no file to read for {codec}: neither fastavro nor "
                f"roastedavro.container wrote one that fastavro reads back"
            )
        sources[codec] = source
        for name, contender in contenders.items():
            result = entry[name]
            if name in files and BASELINE in files:
                result["same_bytes_as_fastavro"] = files[name] == files[BASELINE]
            if (codec, "read") in contender.excluded:
                result["read"] = contender.excluded[codec, "read"]
                continue
            try:
                result["read"] = first_difference(contender.read(io.BytesIO(files[source])), reference)
            except Exception as error:  # noqa: BLE001
                result["read"] = f"{type(error).__name__}: {_short(error)}"
        for name, contender in contenders.items():
            for direction in DIRECTIONS:
                if entry[name].get(direction):
                    contender.excluded.setdefault((codec, direction), entry[name][direction])
        log(
            f"check {codec:10s} "
            + "; ".join(
                f"{name}: write {'ok' if not r.get('write') else 'FAILED'}"
                + (" (same bytes)" if r.get("same_bytes_as_fastavro") else "")
                + f", read {'ok' if not r.get('read') else 'FAILED'}"
                for name, r in entry.items()
            )
        )
        for name, r in entry.items():
            for direction in DIRECTIONS:
                if r.get(direction):
                    log(f"  {name} {direction}: {r[direction]}")
    return reference, checks, sources


# -- timing ---------------------------------------------------------------------------------


def consume(iterable: Iterable) -> None:
    collections.deque(iterable, maxlen=0)


def rotated(names: list[str], by: int) -> list[str]:
    by %= len(names)
    return names[by:] + names[:by]


def run_rounds(
    contenders: dict[str, Contender],
    java: AvroTools | None,
    batch: list,
    reference: list,
    count: int,
    codecs: list[str],
    sources: dict[str, str],
    repeats: int,
    java_rounds: int,
    log,
) -> tuple[dict, dict, dict]:
    """Seconds per (codec, direction, contender): a list, one per round; the read
    inputs (per codec, the file of ``sources[codec]``, fastavro, of the first round);
    the full-size files' (records, digest of the record data) and sizes, per writer,
    and the check of avro-tools' files. avro-tools runs in the first ``java_rounds``."""
    seconds: dict = {codec: {d: {} for d in DIRECTIONS} for codec in codecs}
    inputs: dict[str, bytes] = {}
    java_written: dict[str, str | None] = {}
    digests: dict = {codec: {} for codec in codecs}
    sizes: dict = {codec: {} for codec in codecs}
    blocks: dict = {codec: {} for codec in codecs}
    for round_number in range(repeats):
        names = list(contenders) + ([JAVA] if java and round_number < java_rounds else [])
        for codec in codecs:
            order = rotated(names, round_number)
            for name in order:
                if name == JAVA:
                    out = WORK / f"java-{codec}.avro"
                    elapsed = java.write(codec, out)
                    if round_number == 0:
                        sizes[codec][name] = out.stat().st_size
                        with open(out, "rb") as fo:
                            blocks[codec][name] = sum(1 for _ in fastavro.block_reader(fo))
                        java_written[codec] = java_write_check(out, java.schema, reference, count)
                    out.unlink()
                else:
                    contender = contenders[name]
                    if (codec, "write") in contender.excluded:
                        continue
                    buffer = io.BytesIO()
                    items = records(batch, count)
                    gc.collect()
                    started = time.perf_counter()
                    contender.write(buffer, codec, items)
                    elapsed = time.perf_counter() - started
                    if round_number == 0:
                        with buffer.getbuffer() as view:
                            records_in, digest, blocks[codec][name] = record_data(view)
                            digests[codec][name] = (records_in, digest)
                            sizes[codec][name] = len(view)
                        if name == sources[codec]:
                            inputs[codec] = buffer.getvalue()
                    buffer.close()
                seconds[codec]["write"].setdefault(name, []).append(elapsed)
            data = inputs[codec]
            for name in order:
                if name == JAVA:
                    path = WORK / f"input-{codec}.avro"
                    if not path.exists():
                        path.write_bytes(data)
                    elapsed = java.read(path)
                else:
                    contender = contenders[name]
                    if (codec, "read") in contender.excluded:
                        continue
                    source = io.BytesIO(data)
                    gc.collect()
                    started = time.perf_counter()
                    consume(contender.read(source))
                    elapsed = time.perf_counter() - started
                seconds[codec]["read"].setdefault(name, []).append(elapsed)
            log(
                f"round {round_number + 1}/{repeats} {codec:10s} "
                + "  ".join(
                    f"{d}: "
                    + " ".join(
                        f"{n} {count / seconds[codec][d][n][-1]:,.0f}/s"
                        for n in names
                        if n in seconds[codec][d]
                    )
                    for d in DIRECTIONS
                )
            )
    return seconds, inputs, {"digests": digests, "sizes": sizes, "blocks": blocks, "java": java_written}


def codec_alone(inputs: dict[str, bytes], count: int, repeats: int) -> dict:
    """Seconds to compress and decompress the record data of the null file's blocks with
    each codec alone (roastedavro.container's CODECS: zlib, cramjam), best of ``repeats``:
    a ceiling on any writer's and reader's records/s with that codec."""
    null = inputs.get("null")
    if null is None:
        return {}
    reader = container.FileReader(io.BytesIO(null))
    blocks = [block.data for block in reader.blocks()]
    result = {}
    for codec in inputs:
        if codec == "null":
            continue
        implementation = container.CODECS[codec]
        encode_s, decode_s = [], []
        for _ in range(repeats):
            gc.collect()
            started = time.perf_counter()
            compressed = [implementation.encode(data, None) for data in blocks]
            encode_s.append(time.perf_counter() - started)
            started = time.perf_counter()
            for data in compressed:
                implementation.decode(data, container.MAX_BLOCK_SIZE)
            decode_s.append(time.perf_counter() - started)
        result[codec] = {
            "blocks": len(blocks),
            "bytes": sum(map(len, blocks)),
            "compress_s": encode_s,
            "decompress_s": decode_s,
            "compress_records_per_s": count / min(encode_s),
            "decompress_records_per_s": count / min(decode_s),
        }
    return result


# -- full-size checks --------------------------------------------------------------------------


def full_checks(
    contenders: dict[str, Contender],
    java: AvroTools | None,
    inputs: dict,
    written: dict,
    sources: dict,
    reference: list,
    count: int,
    log,
) -> dict:
    checks: dict = {}
    java_digests: dict = {}
    for codec, data in inputs.items():
        entry: dict = {}
        checks[codec] = entry
        digests = written["digests"][codec]
        base = digests[sources[codec]]
        for name, digest in digests.items():
            problem = None
            if digest[0] != count:
                problem = f"{digest[0]} records, not {count}"
            elif digest != base:
                problem = f"record data unlike {sources[codec]}'s"
            entry.setdefault(name, {})["write"] = problem
        for name, contender in contenders.items():
            if name == BASELINE or (codec, "read") in contender.excluded:
                continue  # fastavro is the reference reader
            try:
                entry.setdefault(name, {})["read"] = full_read_difference(
                    contender.read(io.BytesIO(data)), reference, count
                )
            except Exception as error:  # noqa: BLE001
                entry[name]["read"] = f"{type(error).__name__}: {_short(error)}"
        if java:
            entry.setdefault(JAVA, {})["write"] = written["java"].get(codec)
            entry[JAVA]["read"] = java_read_check(java, codec, reference, count, java_digests)
        log(
            f"full-size check {codec:10s} "
            + "; ".join(
                f"{name}: "
                + ", ".join(
                    f"{d} {'ok' if not r.get(d) else 'FAILED: ' + r[d]}" for d in DIRECTIONS if d in r
                )
                for name, r in entry.items()
            )
        )
    return checks


def java_write_check(path: Path, schema: dict, reference: list, count: int) -> str | None:
    """avro-tools' file: ``count`` records in its blocks, the first ``len(reference)``
    read by fastavro equal to the reference, and all equal to it (``==``) read by
    roastedavro.container. (Its record bytes may differ from fastavro's: Java writes a
    map's entries in its HashMap's order.)"""
    try:
        with open(path, "rb") as fo:
            blocks = sum(block.num_records for block in fastavro.block_reader(fo))
        if blocks != count:
            return f"{blocks} records, not {count}"
        with open(path, "rb") as fo:
            head = first_difference(itertools.islice(fastavro.reader(fo), len(reference)), reference)
        if head:
            return f"read by fastavro: {head}"
        with open(path, "rb") as fo:
            return full_read_difference(container.FileReader(fo), reference, count)
    except Exception as error:  # noqa: BLE001
        return f"{type(error).__name__}: {_short(error)}"


def java_read_check(java: AvroTools, codec: str, reference: list, count: int, digests: dict) -> str | None:
    """tojson of the read input: ``count`` lines, the same text for every codec, the first
    ``len(reference)`` read by fastavro's JSON reader equal to the reference."""
    out = WORK / f"tojson-{codec}.json"
    java.read(WORK / f"input-{codec}.avro", out)
    digest = hashlib.sha256()
    lines = 0
    head: list[str] = []
    with open(out, "rb") as text:
        for line in text:
            digest.update(line)
            if lines < len(reference):
                head.append(line.decode("utf-8"))
            lines += 1
    out.unlink()
    if lines != count:
        return f"{lines} lines, not {count}"
    first = digests.setdefault("first", (codec, digest.hexdigest()))
    if first[1] != digest.hexdigest():
        return f"tojson prints other text than for the {first[0]} file"
    parsed = fastavro.parse_schema(java.schema)
    return first_difference(fastavro.json_reader(io.StringIO("".join(head)), parsed), reference)


# -- report ---------------------------------------------------------------------------------


def environment(args, java_jar: Path | None, java_note: str) -> dict:
    from importlib.metadata import PackageNotFoundError, version

    def installed(package: str) -> str | None:
        try:
            return version(package)
        except PackageNotFoundError:
            return None

    cpu, commit = cpu_and_commit()
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "mode": "quick" if args.quick else "full",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "git_commit": commit,
        "versions": {
            package: installed(package)
            for package in ("roastedavro", "fastavro", "cramjam", "backports.zstd", "Cython")
        },
        "java": java_version() if java_jar else None,
        "avro_tools": java_jar.name if java_jar else None,
        "java_note": java_note or None,
        "case": args.case,
        "records": args.records,
        "distinct": args.distinct,
        "codecs": args.codecs,
        "repeats": args.repeats,
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def summarize(seconds: dict, count: int) -> dict:
    table: dict = {}
    for codec, directions in seconds.items():
        table[codec] = {}
        for direction, by_name in directions.items():
            row = {}
            base = min(by_name[BASELINE]) if by_name.get(BASELINE) else None
            for name, samples in by_name.items():
                if not samples:
                    continue
                best = min(samples)
                row[name] = {
                    "seconds": samples,
                    "best_s": best,
                    "median_s": statistics.median(samples),
                    "records_per_s": count / best,
                    "ratio": base / best if base else None,
                }
            table[codec][direction] = row
    return table


def fmt_rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def markdown(report: dict) -> str:
    env, table = report["environment"], report["table"]
    names = report["contenders"]
    count = env["records"]
    command = "python -m benchmarks.container_files" + (" --quick" if env["mode"] == "quick" else "")
    lines = [
        "# Object container files: write and read throughput, against fastavro",
        "",
        f"{env['date']}, {env['mode']} mode: {count:,} `{env['case']}` records "
        f"({env['distinct']:,} distinct, cycled), best of {env['repeats']} interleaved rounds. "
        f"Python {env['python']}, {env['cpu']} ({env['cpus']} CPUs), {env['platform']}. "
        f"roastedavro {env['git_commit']}.",
        "Versions: "
        + ", ".join(f"{k} {v}" for k, v in env["versions"].items())
        + (f"; {env['java']}, {env['avro_tools']}" if env.get("java") else "")
        + ".",
        f"Load average (1, 5, 15 min) at start {env['loadavg_at_start']}, at end "
        f"{env.get('loadavg_at_end')}: the machine is shared, so absolute figures move "
        "between runs; rounds are interleaved, so ratios move less. "
        f"Run time {report['elapsed_s']:.0f} s.",
        "",
        f"Regenerate: `{command}` (from the repository root; `--quick`: 100,000 records). "
        "See the docstring of benchmarks/container_files.py for the method.",
        "",
        f"The records: benchmarks/avro_schemas.py's `{env['case']}` "
        f"({CASES[env['case']].description}). Python writers write to an `io.BytesIO`; every "
        "reader reads the file fastavro wrote, from an `io.BytesIO`, consuming every record "
        "(`collections.deque(reader, maxlen=0)`). records/s = records / the best round's "
        "wall time; ratio = records/s / fastavro's records/s.",
        "",
        "| contender | write | read |",
        "| --- | --- | --- |",
    ]
    for name in names:
        calls = report["calls"].get(name, {})
        lines.append(f"| {name} | `{calls.get('write', '')}` | `{calls.get('read', '')}` |")
    lines += [""]
    if env.get("java"):
        lines += [
            f"{JAVA}: `java -jar {env['avro_tools']} fromjson --codec C [--level 3 for zstandard] "
            "--schema-file S records.json > out.avro` (write) and `tojson input-C.avro > "
            "/dev/null` (read), the JVM's default flags, files in /tmp (input-C.avro: the "
            "file the Python readers read; records.json: what "
            "tojson prints for a null-codec file of the same records). End to end: each run "
            f"includes a JVM start ({report['java_startup_s']:.2f} s for avro-tools printing its "
            "usage) and Avro's JSON encoding parsed (fromjson) or printed (tojson) for every "
            "record, so these are not codec-only figures. "
            + (
                "avro-tools runs in the first round only: one run per codec and direction "
                "(a run takes 10-25 s for 1,000,000 records)."
                if report["java_rounds"] == 1
                else f"avro-tools runs in the first {report['java_rounds']} rounds only (best "
                f"of {report['java_rounds']})."
            ),
            "",
        ]
    else:
        lines += [f"{JAVA}: not run ({env.get('java_note') or 'not available'}).", ""]
    lines += [
        "## Records per second (ratio over fastavro)",
        "",
        f"Best of {env['repeats']} rounds.",
        "",
        "| codec | direction | " + " | ".join(names) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in names) + " |",
    ]
    for codec in env["codecs"]:
        for direction in DIRECTIONS:
            row = table.get(codec, {}).get(direction, {})
            cells = []
            for name in names:
                entry = row.get(name)
                if entry is None:
                    cells.append("n/a")
                elif name == BASELINE:
                    cells.append(fmt_rate(entry["records_per_s"]))
                else:
                    cells.append(f"{fmt_rate(entry['records_per_s'])} ({fmt_x(entry['ratio'])})")
            lines.append(f"| {codec} | {direction} | " + " | ".join(cells) + " |")
    lines += ["", "n/a: not run (see Checks and the notes above).", ""]
    target = report.get("target")
    if target:
        lines += [
            "Target (at least 5× fastavro on the null codec, write and read): "
            + "; ".join(
                f"{t['contender']} {t['direction']} {fmt_x(t['ratio'])} "
                f"{'met' if t['ratio'] and t['ratio'] >= 5 else 'NOT met'}"
                for t in target
            )
            + ".",
            "",
        ]
    alone = report.get("codec_alone") or {}
    if alone:
        lines += [
            "## The codec alone",
            "",
            "The record data of the blocks of fastavro's null file "
            f"({next(iter(alone.values()))['blocks']:,} blocks of about 16,000 bytes) "
            "compressed and decompressed block by block, nothing else, by the libraries "
            "roastedavro uses (zlib at its default level 6; cramjam's zstd at level 3), "
            f"best of {env['repeats']}, as records/s: what the compression alone allows "
            "a writer or a reader at most. fastavro uses the same zlib, and libzstd through "
            "backports.zstd, at the same levels.",
            "",
            "| codec | compress | decompress |",
            "| --- | ---: | ---: |",
        ]
        for codec, figures in alone.items():
            lines.append(
                f"| {codec} | {fmt_rate(figures['compress_records_per_s'])} "
                f"| {fmt_rate(figures['decompress_records_per_s'])} |"
            )
        lines += [""]
    lines += [
        "## File sizes",
        "",
        "Bytes of each writer's file (the first round's), bytes per record and blocks. "
        "fastavro and roastedavro end a block at about 16,000 bytes of records (their "
        "default sync_interval), at other records (roastedavro sizes its batches by "
        "the bytes per record so far), hence files of the same record data but not the "
        "same bytes; avro-tools' blocks are of about 64,000 bytes (Java's "
        "DataFileWriter default), which compress better.",
        "",
        "| codec | " + " | ".join(names) + " |",
        "| --- | " + " | ".join("---:" for _ in names) + " |",
    ]
    for codec in env["codecs"]:
        sizes = report["sizes"].get(codec, {})
        blocks = report["blocks"].get(codec, {})
        lines.append(
            f"| {codec} | "
            + " | ".join(
                f"{sizes[n]:,} ({sizes[n] / count:.1f} B, {blocks.get(n, 0):,} blocks)"
                if n in sizes
                else "n/a"
                for n in names
            )
            + " |"
        )
    lines += [
        "",
        "## Median of the rounds (records/s)",
        "",
        "avro-tools: its run(s) as above.",
        "",
        "| codec | direction | " + " | ".join(names) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in names) + " |",
    ]
    for codec in env["codecs"]:
        for direction in DIRECTIONS:
            row = table.get(codec, {}).get(direction, {})
            lines.append(
                f"| {codec} | {direction} | "
                + " | ".join(fmt_rate(count / row[n]["median_s"]) if n in row else "n/a" for n in names)
                + " |"
            )
    lines += [
        "",
        "## Checks",
        "",
        f"Before timing, on the {env['distinct']:,} distinct records: each writer's file "
        "read back by fastavro, and each reader on fastavro's file, strictly equal to "
        "fastavro's own round trip (values and Python types). After timing, on the "
        f"{count:,}-record files: each writer's file holds the same record count and "
        "the same record bytes as fastavro's (blocks decompressed by fastavro and "
        "concatenated); each roastedavro reader reads every record to the reference; "
        "avro-tools' tojson prints every record, the same text for every codec, and "
        "its first records read back by fastavro's JSON reader equal the reference.",
        "",
        "| codec | contender | sample write | sample read | same bytes as fastavro "
        "| full write | full read |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]

    def verdict(value: Any, present: bool) -> str:
        if not present:
            return "-"
        return "ok" if value is None else f"FAILED: {value}"

    for codec in env["codecs"]:
        sample = report["sample_checks"].get(codec, {})
        full = report["full_checks"].get(codec, {})
        for name in names:
            s, f = sample.get(name, {}), full.get(name, {})
            same = s.get("same_bytes_as_fastavro")
            lines.append(
                f"| {codec} | {name} | {verdict(s.get('write'), 'write' in s)} "
                f"| {verdict(s.get('read'), 'read' in s)} "
                f"| {'-' if same is None else 'yes' if same else 'no'} "
                f"| {verdict(f.get('write'), 'write' in f)} "
                f"| {verdict(f.get('read'), 'read' in f)} |"
            )
    lines += [
        "",
        "-: not applicable (fastavro is the reference reader; avro-tools is checked "
        "on the full-size files only). avro-tools' file is checked by its blocks' "
        "record count, fastavro reading its first records and roastedavro.container "
        "reading all of them to the reference: its record bytes are not fastavro's, "
        "since Java writes a map's entries in its HashMap's order.",
        "",
    ]
    lines += ["![records/s per codec](container_files.png)", ""]
    return "\n".join(lines)


def chart(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    env, table = report["environment"], report["table"]
    names, codecs = report["contenders"], env["codecs"]
    figure, axes = plt.subplots(1, 2, figsize=(13, 5.4), sharey=True)
    width = 0.8 / len(names)
    top = max(
        (
            entry["records_per_s"]
            for codec in codecs
            for direction in DIRECTIONS
            for entry in table[codec][direction].values()
        ),
        default=1,
    )
    for axis, direction in zip(axes, DIRECTIONS):
        for index, name in enumerate(names):
            xs, ys, labels = [], [], []
            for position, codec in enumerate(codecs):
                entry = table[codec][direction].get(name)
                if entry is None:
                    continue
                xs.append(position + (index - (len(names) - 1) / 2) * width)
                ys.append(entry["records_per_s"] / 1000)
                labels.append("1×" if name == BASELINE else fmt_x(entry["ratio"]))
            bars = axis.bar(xs, ys, width, label=name, color=COLORS.get(name))
            axis.bar_label(bars, labels, fontsize=7.5, padding=2)
        axis.set_xticks(range(len(codecs)), codecs)
        axis.set_title(f"{direction} ({'to a BytesIO' if direction == 'write' else 'all records'})")
        axis.set_xlabel("codec")
        axis.grid(axis="y", alpha=0.3)
        axis.set_ylim(0, top / 1000 * 1.12)
    axes[0].set_ylabel("thousand records per second (higher is better)")
    axes[0].legend(loc="upper right", fontsize=9)
    figure.suptitle(
        f"Avro container files: {env['records']:,} '{env['case']}' records, "
        f"best of {env['repeats']}; label: ratio over fastavro"
        + (
            "\navro-tools: end to end (JVM start, JSON), "
            + ("one run" if report["java_rounds"] == 1 else f"best of {report['java_rounds']}")
            if JAVA in names
            else ""
        ),
        fontsize=11,
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


# -- main ---------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.container_files", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="100,000 records instead of 1,000,000")
    parser.add_argument("--records", type=int, help="records per file (default 1,000,000; quick 100,000)")
    parser.add_argument(
        "--distinct", type=int, default=10_000, help="different records, cycled (default 10,000)"
    )
    parser.add_argument(
        "--case",
        default="event",
        choices=sorted(CASES),
        help="the records: a case of benchmarks/avro_schemas.py (default event)",
    )
    parser.add_argument(
        "--codecs", default=",".join(CODECS), help=f"comma-separated (default {','.join(CODECS)})"
    )
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument(
        "--java-rounds",
        type=int,
        default=1,
        help="rounds avro-tools runs in, from the first (default 1: a run of it takes 10-25 s)",
    )
    parser.add_argument("--no-java", action="store_true", help="leave avro-tools out")
    parser.add_argument("--out", type=Path, default=RESULTS, help="output folder")
    args = parser.parse_args(argv)
    if args.records is None:
        args.records = 100_000 if args.quick else 1_000_000
    args.codecs = args.codecs.split(",")
    unknown = set(args.codecs) - set(container.CODECS)
    if unknown:
        parser.error(f"unknown codec(s) {', '.join(sorted(unknown))}")
    return args


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    started_all = time.perf_counter()

    def log(message: str) -> None:
        print(message, flush=True)

    case = CASES[args.case]
    java_jar, java_note = (None, "left out (--no-java)") if args.no_java else avro_tools_jar()
    env = environment(args, java_jar, java_note)
    log(
        f"container files: {env['mode']} mode, {args.records:,} {args.case} records, "
        f"codecs {', '.join(args.codecs)}, {args.repeats} rounds; Python {env['python']}, "
        f"{env['cpu']}; avro-tools: {java_jar or java_note}"
    )

    batch = make_batch(args.case, args.distinct)
    contenders = python_contenders(case.schema)
    missing = {codec: fastavro_codec_missing(codec) for codec in args.codecs}
    for codec, reason in missing.items():
        if reason:
            log(reason)
            for direction in DIRECTIONS:
                contenders[BASELINE].excluded[codec, direction] = reason
    reference, sample, sources = sample_checks(contenders, case.schema, batch, args.codecs, missing, log)
    failed = [
        (codec, direction, reason)
        for codec in args.codecs
        for direction in DIRECTIONS
        if (reason := sample[codec][BASELINE].get(direction)) and not missing.get(codec)
    ]
    if failed:
        raise SystemExit(
            "fastavro, the reference, fails its own checks: "
            + "; ".join(f"{c} {d}: {r}" for c, d, r in failed)
        )

    java = None
    java_startup = json_source_digest = None
    if java_jar:
        WORK.mkdir(parents=True, exist_ok=True)
        java = AvroTools(java_jar, WORK, case.schema)
        # the JSON for fromjson: what tojson prints for a null-codec file of the records
        # (not timed; written by roastedavro.container for speed: its record data must be
        # fastavro's, checked after the rounds)
        path = WORK / "json-source.avro"
        with open(path, "wb") as fo:
            container.write_file(fo, case.schema, records(batch, args.records), "null")
        json_source_digest = record_data_digest(path.read_bytes())
        java.read(path, java.json_file)
        path.unlink()
        java_startup = min(java.startup() for _ in range(3))
        log(f"avro-tools: JSON input {java.json_file.stat().st_size:,} bytes; JVM start {java_startup:.2f} s")

    try:
        seconds, inputs, written = run_rounds(
            contenders,
            java,
            batch,
            reference,
            args.records,
            args.codecs,
            sources,
            args.repeats,
            args.java_rounds,
            log,
        )
        full = full_checks(contenders, java, inputs, written, sources, reference, args.records, log)
        alone = codec_alone(inputs, args.records, args.repeats)
        for codec, figures in alone.items():
            log(
                f"{codec} alone: compress {figures['compress_records_per_s']:,.0f} records/s, "
                f"decompress {figures['decompress_records_per_s']:,.0f} records/s"
            )
    finally:
        if java:
            shutil.rmtree(WORK, ignore_errors=True)
    del inputs
    if java and "null" in written["digests"]:
        null_digest = written["digests"]["null"].get(BASELINE)
        json_source = (
            "ok"
            if json_source_digest == null_digest
            else f"FAILED: the JSON's source file {json_source_digest} is not fastavro's "
            f"null file {null_digest}"
        )
        log(f"avro-tools' JSON input made from the records of fastavro's null file: {json_source}")
        for entry in full.values():
            if json_source != "ok":
                entry[JAVA]["write"] = entry[JAVA]["write"] or json_source
    names = list(contenders) + ([JAVA] if java else [])
    table = summarize(seconds, args.records)
    null = table.get("null", {})
    target = [
        {"contender": name, "direction": direction, "ratio": null[direction][name]["ratio"]}
        for name in contenders
        if name != BASELINE
        for direction in DIRECTIONS
        if name in null.get(direction, {})
    ]
    env["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    calls = {name: c.call for name, c in contenders.items()}
    if java:
        calls[JAVA] = {
            "write": "fromjson --codec C [--level 3] --schema-file S records.json > out.avro",
            "read": "tojson input-C.avro > /dev/null",
        }
    report: dict[str, Any] = {
        "environment": env,
        "contenders": names,
        "calls": calls,
        "fastavro_missing_codecs": {c: m for c, m in missing.items() if m},
        "read_inputs_written_by": sources,
        "table": table,
        "sizes": written["sizes"],
        "blocks": written["blocks"],
        "record_data_digests": written["digests"],
        "target": target,
        "codec_alone": alone,
        "sample_checks": sample,
        "full_checks": full,
        "java_startup_s": java_startup,
        "java_rounds": min(args.java_rounds, args.repeats),
        "excluded": {
            name: [{"codec": c, "direction": d, "reason": r} for (c, d), r in contender.excluded.items()]
            for name, contender in contenders.items()
        },
    }
    report["elapsed_s"] = round(time.perf_counter() - started_all, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "container_files.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    (args.out / "container_files.md").write_text(markdown(report))
    try:
        chart(report, args.out / "container_files.png")
    except ImportError as error:  # the bench extra's matplotlib
        log(f"no chart: {error} (pip install -e '.[bench]')")
    for codec in args.codecs:
        for direction in DIRECTIONS:
            row = table[codec][direction]
            log(
                f"{codec:10s} {direction:5s} "
                + "  ".join(
                    f"{n} {fmt_rate(row[n]['records_per_s'])}/s ({fmt_x(row[n]['ratio'])})"
                    for n in names
                    if n in row
                )
            )
    log(
        f"wrote {args.out / 'container_files.json'}, container_files.md and "
        f"container_files.png in {report['elapsed_s']:.0f} s"
    )
    return report


if __name__ == "__main__":
    main()
