"""Java's avro-tools 1.12 (Avro's command-line tools) over object container files.

The session fixture ``avro_tools`` fetches the avro-tools jar on first use
(scripts/java/fetch.py, 73 MB, cached in build/java/lib/ of the checkout) and
gives an :class:`AvroTools`; tests using it skip only when there is no ``java``
on PATH, and a failing download is an error. The module-level functions
(``tojson``, ``fromjson``, ...) do the same through one shared instance, for
scripts and benchmarks; they raise instead of skipping.

Cost: every call starts a JVM, about 0.65 s here with the class-data archive
fetch.py makes on first use (1 s without it), whatever the file's size, and
avro-tools has no way to run several commands in one JVM. So make few calls:
one ``fromjson`` per file written, one ``tojson`` per file read, ``count`` with
every file at once when only the total matters.

Records cross as text in Avro's JSON encoding (a union's branch as
``{"type": value}``, bytes and fixed as strings of code points 0-255): what
``tojson`` prints and what ``fromjson`` reads. :func:`json_records` and
:func:`json_lines` convert with fastavro's JSON reader and writer.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts" / "java"
# one avro-tools run must finish within this (seconds; a call can give its own)
TIMEOUT = 300.0
# codecs fromjson and recodec take, as Avro names them
CODECS = ("null", "deflate", "snappy", "zstandard", "bzip2", "xz")
# avro-tools' --level defaults to -1 (zlib's "default level") for every codec: xz
# refuses it ("Unsupported preset: -1", after writing the header) and zstandard
# reads it as zstd's fast level -1; these are Avro's own defaults
# (CodecFactory.DEFAULT_XZ_LEVEL, DEFAULT_ZSTANDARD_LEVEL)
DEFAULT_LEVELS = {"xz": 6, "zstandard": 3}
_TYPE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
# log lines avro-tools prints on stderr at every start, left out of error messages
_NOISE = re.compile(r".*(NativeCodeLoader|INFO tool\.).*\n?")


class AvroToolsError(RuntimeError):
    """avro-tools failed (non-zero exit or timeout); the message has its stderr."""


@dataclasses.dataclass(frozen=True)
class ToolRun:
    """One avro-tools run: its arguments, output (None where sent to a file) and wall time."""

    args: tuple[str, ...]
    stdout: bytes | None
    stderr: str
    seconds: float


def _fetch_module():
    module = sys.modules.get("roastedavro_java_fetch")
    if module is None:
        spec = importlib.util.spec_from_file_location("roastedavro_java_fetch", SCRIPTS / "fetch.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["roastedavro_java_fetch"] = module
    return module


def tools_available() -> bool:
    """Whether avro-tools can run here: a ``java`` on PATH (the jar is fetched on first use)."""
    return shutil.which("java") is not None


def schema_text(schema: Any) -> str:
    """JSON text of a schema given as JSON values, JSON text or a bare type name ("long")."""
    if not isinstance(schema, str):
        return json.dumps(schema)
    return json.dumps(schema) if _TYPE_NAME.fullmatch(schema) else schema


def _paths(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(path) for path in paths]


class AvroTools:
    """``java -jar avro-tools.jar <tool> ...``, one JVM per call."""

    def __init__(self, command: Sequence[str], timeout: float = TIMEOUT):
        self.command = list(command)  # java, its flags, -jar, the jar
        self.timeout = timeout

    # -- any tool --------------------------------------------------------

    def run(
        self,
        *args: str | os.PathLike,
        stdin: bytes | None = None,
        stdout: str | os.PathLike | None = None,
        timeout: float | None = None,
        jvm_flags: Sequence[str] = (),
    ) -> ToolRun:
        """Runs one tool; its stdout is kept in memory, or written to the file ``stdout``
        (then ``ToolRun.stdout`` is None). ``jvm_flags`` go after fetch.py's, just before
        ``-jar``, so they win (``-Xmx4g``, say). Raises AvroToolsError if Java exits
        non-zero or times out."""
        args = tuple(os.fspath(arg) for arg in args)
        jar_at = self.command.index("-jar")
        argv = [*self.command[:jar_at], *jvm_flags, *self.command[jar_at:], *args]
        timeout = self.timeout if timeout is None else timeout
        started = time.monotonic()
        with (
            tempfile.TemporaryFile() as err,
            open(stdout, "wb") if stdout is not None else tempfile.TemporaryFile() as out,
        ):
            try:
                completed = subprocess.run(
                    argv,
                    input=stdin,
                    stdout=out,
                    stderr=err,
                    stdin=None if stdin is not None else subprocess.DEVNULL,
                    timeout=timeout,
                )
            except subprocess.TimeoutExpired:
                raise AvroToolsError(f"avro-tools {' '.join(args)}: no answer within {timeout} s") from None
            seconds = time.monotonic() - started
            err.seek(0)
            stderr = err.read().decode("utf-8", "replace")
            if completed.returncode != 0:
                detail = _NOISE.sub("", stderr).strip()[:4000]
                raise AvroToolsError(
                    f"avro-tools {' '.join(args)} exited with {completed.returncode}:\n{detail}"
                )
            data = None
            if stdout is None:
                out.seek(0)
                data = out.read()
        return ToolRun(args, data, stderr, seconds)

    # -- reading ---------------------------------------------------------

    def tojson(
        self, path: str | os.PathLike, *, reader_schema: Any = None, head: int | None = None
    ) -> list[str]:
        """The file's records, one line of Avro JSON each (``tojson``, not pretty);
        read with ``reader_schema`` if given, only the first ``head`` if given."""
        args: list[str | os.PathLike] = ["tojson"]
        if head is not None:
            args.append(f"--head={head}")
        if reader_schema is not None:
            args += ["--reader-schema", schema_text(reader_schema)]
        text = self.run(*args, path).stdout.decode("utf-8")
        # split at "\n" only: Java prints U+0085 and U+2028 unescaped in strings (bytes
        # 0x85 in a bytes value), where str.splitlines would split; and a file of no
        # records prints one empty line
        return [line for line in text.split("\n") if line]

    def getschema(self, path: str | os.PathLike) -> str:
        """The writer's schema as Java prints it (pretty JSON text)."""
        return self.run("getschema", path).stdout.decode("utf-8").strip()

    def getmeta(self, path: str | os.PathLike) -> dict[str, str]:
        """The header's metadata, each value decoded as UTF-8 by Java (``getmeta``)."""
        text = self.run("getmeta", path).stdout.decode("utf-8")
        meta: dict[str, str] = {}
        key = None
        lines = text.split("\n")  # not splitlines: see tojson
        if lines and not lines[-1]:
            lines.pop()
        for line in lines:
            if "\t" in line:
                key, value = line.split("\t", 1)
                meta[key] = value
            elif key is not None:  # a value with a line break
                meta[key] += "\n" + line
        return meta

    def count(self, paths: str | os.PathLike | Iterable[str | os.PathLike]) -> int:
        """Records in a file, or in all the files given (one JVM for all); Java counts the
        blocks' record counts, it decompresses but does not decode them."""
        return int(self.run("count", *_paths(paths)).stdout.split()[-1])

    # -- writing ---------------------------------------------------------

    def fromjson(
        self,
        schema: Any,
        json_lines: Iterable[str | Any] | os.PathLike,
        codec: str = "null",
        out_path: str | os.PathLike | None = None,
        *,
        level: int | None = None,
    ) -> Path:
        """Writes a container file with Java's DataFileWriter (``fromjson``) and returns its path.

        ``schema``: a schema file (a Path, or a str naming a file that is not JSON text or a
        bare type name), or the schema as JSON values, JSON text or a bare type name. ``json_lines``: the records in Avro's JSON encoding, each a line of
        text (anything else is json.dumps'ed), or a Path to a file of such lines (a big
        benchmark input is not held in memory). ``level``: for deflate, xz and zstandard;
        by default Avro's default level of each (avro-tools' own default breaks xz).
        Without ``out_path``, a new temporary file (the caller removes it)."""
        if codec not in CODECS:
            raise ValueError(f"codec {codec!r}: avro-tools writes {', '.join(CODECS)}")
        if out_path is None:
            handle, name = tempfile.mkstemp(suffix=f"-{codec}.avro")
            os.close(handle)
            out_path = name
        level = DEFAULT_LEVELS.get(codec) if level is None else level
        with tempfile.TemporaryDirectory() as work:
            if isinstance(schema, os.PathLike) or (
                isinstance(schema, str)
                and schema.strip()[:1] not in ("{", "[", '"')
                and not _TYPE_NAME.fullmatch(schema)
                and os.path.isfile(schema)
            ):
                schema_file = os.fspath(schema)
            else:
                schema_file = os.path.join(work, "schema.avsc")
                Path(schema_file).write_text(schema_text(schema), encoding="utf-8")
            stdin = None
            if isinstance(json_lines, os.PathLike):
                source = os.fspath(json_lines)
            else:
                source = "-"
                stdin = "".join(
                    (line if isinstance(line, str) else json.dumps(line)) + "\n" for line in json_lines
                ).encode("utf-8")
            args = ["fromjson", "--codec", codec, "--schema-file", schema_file]
            if level is not None:
                args += ["--level", str(level)]
            try:
                self.run(*args, source, stdin=stdin, stdout=out_path)
            except AvroToolsError:
                Path(out_path).unlink(missing_ok=True)  # no half-written file left behind
                raise
        return Path(out_path)

    def cat(
        self,
        inputs: str | os.PathLike | Iterable[str | os.PathLike],
        out_path: str | os.PathLike,
        *,
        offset: int | None = None,
        limit: int | None = None,
        samplerate: float | None = None,
    ) -> Path:
        """Records of one or more files (of one schema) into a new file, decoded and written
        again by Java (``cat``): from ``offset``, at most ``limit``, a ``samplerate`` share."""
        args = ["cat"]
        for option, value in (("offset", offset), ("limit", limit), ("samplerate", samplerate)):
            if value is not None:
                args.append(f"--{option}={value}")
        self.run(*args, *_paths(inputs), out_path)
        return Path(out_path)

    def recodec(
        self, in_path: str | os.PathLike, out_path: str | os.PathLike, codec: str, *, level: int | None = None
    ) -> Path:
        """The file written again with another codec (``recodec``; the records are not decoded)."""
        if codec not in CODECS:
            raise ValueError(f"codec {codec!r}: avro-tools writes {', '.join(CODECS)}")
        level = DEFAULT_LEVELS.get(codec) if level is None else level
        args = ["recodec", f"--codec={codec}"]
        if level is not None:
            args.append(f"--level={level}")
        self.run(*args, in_path, out_path)
        return Path(out_path)


# -- Avro's JSON encoding, through fastavro ----------------------------------


def json_records(schema: Any, lines: Iterable[str]) -> list[Any]:
    """Records from lines of Avro JSON (tojson's output, fromjson's input), by fastavro."""
    import fastavro

    text = "".join(line + "\n" for line in lines)
    parsed = fastavro.parse_schema(json.loads(schema_text(schema)))
    return list(fastavro.json_reader(io.StringIO(text), parsed))


def json_lines(schema: Any, records: Iterable[Any]) -> list[str]:
    """Records as lines of Avro JSON, by fastavro (fromjson reads them)."""
    import fastavro

    out = io.StringIO()
    fastavro.json_writer(out, fastavro.parse_schema(json.loads(schema_text(schema))), list(records))
    return out.getvalue().splitlines()


# -- fastavro's test files (scripts/fastavro_testdata.py) ---------------------


def fastavro_testdata():
    """scripts/fastavro_testdata.py as a module: fetch() -> Path, FILES, java_written()."""
    module = sys.modules.get("roastedavro_fastavro_testdata")
    if module is None:
        path = SCRIPTS.parent / "fastavro_testdata.py"
        spec = importlib.util.spec_from_file_location("roastedavro_fastavro_testdata", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["roastedavro_fastavro_testdata"] = module  # dataclasses look it up
        spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def fastavro_files() -> Path:
    """The folder of fastavro's test files (fetched on first use; no Java needed);
    their names, digests, record counts and writers are fastavro_testdata().FILES."""
    return fastavro_testdata().fetch()


# -- the shared instance -------------------------------------------------------

_tools: AvroTools | None = None
_failure: Exception | None = None
_lock = threading.Lock()


def tools() -> AvroTools:
    """The shared AvroTools, fetching the jar on first call; raises AvroToolsError
    without java, and the download's error (tried once a process) if it failed."""
    global _tools, _failure
    with _lock:
        if _tools is None:
            if not tools_available():
                raise AvroToolsError("no java on PATH: avro-tools needs a Java 11 or later")
            if _failure is not None:
                raise _failure
            try:
                _tools = AvroTools(_fetch_module().tools_command())
            except Exception as error:
                _failure = error
                raise
        return _tools


@pytest.fixture(scope="session")
def avro_tools() -> AvroTools:
    """avro-tools for a test: skips without java, errors if the jar cannot be fetched."""
    if not tools_available():
        pytest.skip("avro-tools: no java on PATH (a Java 11+ runs Avro 1.12's avro-tools)")
    return tools()


def run(*args: str | os.PathLike, **options) -> ToolRun:
    return tools().run(*args, **options)


def tojson(path: str | os.PathLike, **options) -> list[str]:
    return tools().tojson(path, **options)


def fromjson(
    schema: Any,
    json_lines: Iterable[str | Any] | os.PathLike,
    codec: str = "null",
    out_path: str | os.PathLike | None = None,
    **options,
) -> Path:
    return tools().fromjson(schema, json_lines, codec, out_path, **options)


def getschema(path: str | os.PathLike) -> str:
    return tools().getschema(path)


def getmeta(path: str | os.PathLike) -> dict[str, str]:
    return tools().getmeta(path)


def count(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> int:
    return tools().count(paths)


def cat(
    inputs: str | os.PathLike | Iterable[str | os.PathLike], out_path: str | os.PathLike, **options
) -> Path:
    return tools().cat(inputs, out_path, **options)


def recodec(in_path: str | os.PathLike, out_path: str | os.PathLike, codec: str, **options) -> Path:
    return tools().recodec(in_path, out_path, codec, **options)
