"""The ``roastedavro`` command: Avro files from the shell, as avro-tools does it.

    roastedavro tojson FILE [--pretty] [--reader-schema-file S]
    roastedavro fromjson --schema-file S [--codec C] JSON_FILE [-o OUT]
    roastedavro getschema FILE
    roastedavro getmeta FILE [--key K]
    roastedavro count FILE
    roastedavro cat FILE... -o OUT [--codec C] [--offset N] [--limit N]
    roastedavro canonical SCHEMA_FILE
    roastedavro fingerprint SCHEMA_FILE [--algorithm CRC-64-AVRO|MD5|SHA-256]
    roastedavro build --package NAME --output DIR [--version V] [-j N] SOURCE...
        [--registry URL --subject S... [--reader READER.avsc]]
    roastedavro cache info|clear

``-`` is standard input or output. Exit codes: 0 done, 1 bad input (a file
or schema that cannot be read: one line naming the file and the block, or
the line and record), 2 a wrong command line. A progress line goes to
standard error on long runs when it is a terminal.

Records go between binary and JSON without Python datums (roastedavro.avrojson):
``tojson`` prints a union's value under the branch the bytes hold,
``fromjson`` writes the branch the JSON names, and ``cat`` copies the
records' bytes (whole blocks when the codec stays). An output file is written
under a temporary name and renamed when the command succeeds. Only what reading
a header needs is imported up front: ``count``, ``getschema`` and ``getmeta``
start without the compiler or marshmallow.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO, Iterator, TextIO

# Only what reading a header needs is imported here: the compiler (AvroCodec,
# marshmallow code generation) is imported by the commands that need it (build,
# cache), so count, getschema and getmeta start fast.
from roastedavro import __version__
from roastedavro._replace import Replacement
from roastedavro.avro.parse import load_schema, parse_schema
from roastedavro.container import (
    CODECS,
    ContainerError,
    FileReader,
    FileWriter,
    MissingCodecError,
    read_header,
)
from roastedavro.errors import CompileError, DatumError, DecodeError, SchemaError
from roastedavro.flags import default_optimize

_ALGORITHMS = ("CRC-64-AVRO", "MD5", "SHA-256")


class _Progress:
    """Records done, on standard error, at most every half second, when it is a terminal."""

    def __init__(self, what: str, stream: TextIO | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.what = what
        self.count = 0
        self.started = self.shown = time.monotonic()

    def add(self, count: int) -> None:
        self.count += count
        if self.enabled and time.monotonic() - self.shown > 0.5:
            self.shown = time.monotonic()
            rate = self.count / max(self.shown - self.started, 1e-9)
            self.stream.write(f"\r{self.what}: {self.count:,} records ({rate:,.0f}/s)")
            self.stream.flush()

    def done(self) -> None:
        if self.enabled and self.shown != self.started:
            self.stream.write("\r" + " " * 60 + "\r")
            self.stream.flush()


class _BadInput(Exception):
    pass


@contextlib.contextmanager
def _reading(name: str) -> Iterator[None]:
    """Errors while reading the input ``name`` as one line naming it."""
    try:
        yield
    except _BadInput:
        raise
    except (
        ContainerError,
        DecodeError,
        SchemaError,
        UnicodeDecodeError,
        MemoryError,
        RecursionError,
    ) as error:
        raise _BadInput(f"{_shown_name(name)}: {_error_text(error)}") from None
    except OSError as error:
        if isinstance(error, BrokenPipeError):
            raise
        raise _BadInput(f"{_shown_name(name)}: {error.strerror or error}") from None
    except Exception as error:  # whatever else damaged input raises: one line, not a traceback
        raise _BadInput(f"{_shown_name(name)}: cannot be read: {type(error).__name__}: {error}") from None


@contextlib.contextmanager
def _writing(name: str) -> Iterator[None]:
    try:
        yield
    except OSError as error:
        raise _BadInput(f"{name}: cannot write it: {error.strerror or error}") from None


def _shown_name(name: str) -> str:
    return "standard input" if name == "-" else name


def _error_text(error: BaseException) -> str:
    if isinstance(error, MemoryError):
        return "not enough memory to read it"
    if isinstance(error, RecursionError):
        return "nested too deeply for Python's recursion limit"
    if isinstance(error, UnicodeDecodeError):
        return f"not valid UTF-8 text ({error.reason} at byte {error.start})"
    return str(error)


@contextlib.contextmanager
def _binary_in(name: str) -> Iterator[BinaryIO]:
    if name == "-":
        yield sys.stdin.buffer
    else:
        with _reading(name):
            fo = open(name, "rb")
        with fo:
            yield fo


@contextlib.contextmanager
def _binary_out(name: str | None) -> Iterator[BinaryIO]:
    """The output file: written under a temporary name next to it and renamed
    when the command succeeds, removed when it fails (standard output as it is)."""
    if name in (None, "-"):
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    target = Path(name)
    if target.exists() and not target.is_file():  # /dev/null, a pipe: written as it is
        with _writing(name):
            fo = open(target, "wb")
        with fo:
            yield fo
        return
    with _writing(name):
        replacement = Replacement(target)
    with replacement as fo:
        yield fo


def _schema_file(name: str):
    """The schema in a file (or standard input), or an error saying the file is not one."""
    shown_name = _shown_name(name)
    with _reading(name):
        data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _BadInput(
            f"{shown_name}: not a schema: not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None
    try:
        value = json.loads(text, parse_constant=_not_json)
    except RecursionError:
        raise _BadInput(f"{shown_name}: not a schema: nested too deeply") from None
    except ValueError as error:
        raise _BadInput(f"{shown_name}: not a schema: not JSON ({error})") from None
    try:
        if name != "-" and Path(name).suffix == ".avsc":
            return load_schema(name)  # names defined in other .avsc files next to it
        return parse_schema(value)
    except SchemaError as error:
        raise _BadInput(f"{shown_name}: not a valid schema: {error}") from None
    except RecursionError:
        raise _BadInput(f"{shown_name}: not a schema: nested too deeply") from None


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_codec(schema):
    from roastedavro.avrojson import AvroJSON

    return AvroJSON(schema)


def _block_error(block, error: DecodeError, size: int) -> ContainerError:
    return ContainerError(
        f"its records cannot be read: {error.reason} (at byte {error.offset} "
        f"of the block's {size} bytes of data)",
        block.offset,
        block.number,
    )


def _block_json_values(reader: FileReader, block, codec, allowance: int | None) -> list:
    """A block's records as JSON values, each union's branch the one the bytes
    hold; records and items paid for from the file's budget (``allowance``:
    what the blocks before left, None for the first block)."""
    data = reader.decompress(block)
    try:
        return codec.binary_to_json_values(data, block.count, item_allowance=allowance)
    except DecodeError as error:
        raise _block_error(block, error, len(data)) from None


# -- subcommands ----------------------------------------------------------------------


def tojson(args, out: TextIO) -> None:
    reader_schema = _schema_file(args.reader_schema_file) if args.reader_schema_file else None
    with _binary_in(args.file) as fo, _reading(args.file):
        reader = FileReader(fo)
        from roastedavro.avrojson import AvroJSON

        # with a reader's schema: resolved from the bytes, a reader union's value
        # under the branch resolution chose
        codec = AvroJSON(reader.writer_schema, reader_schema=reader_schema)
        progress = _Progress("tojson")
        indent = 2 if args.pretty else None
        separators = None if args.pretty else (",", ":")
        allowance = None
        for block in reader.blocks():
            values = _block_json_values(reader, block, codec, allowance)
            allowance = codec.items_left
            for value in values:
                out.write(json.dumps(value, indent=indent, separators=separators, ensure_ascii=False))
                out.write("\n")
            progress.add(block.count)
        progress.done()


def fromjson(args, out: TextIO) -> None:
    schema = _schema_file(args.schema_file)
    codec = _json_codec(schema)
    progress = _Progress("fromjson")
    with _binary_in(args.file) as source, _binary_out(args.output) as target:
        lines = io.TextIOWrapper(source, encoding="utf-8", newline=None)
        # the records' bytes are written as the JSON gives them: no datum between
        try:
            writer = FileWriter(target, schema, args.codec, encode_block=b"".join)
            for number, (line, value) in enumerate(_json_values(lines, args.file), 1):
                try:
                    writer.write(codec.json_value_to_binary(value))
                except ValueError as error:
                    raise _BadInput(
                        f"{_shown_name(args.file)}: line {line} (record {number}): {error}"
                    ) from None
                if number % 10000 == 0:
                    progress.add(10000)
            writer.close()
        finally:
            lines.detach()  # the input is closed by _binary_in (standard input stays open)
    progress.done()


# what opens and closes JSON arrays and objects on a line, strings (which cannot
# span lines in JSON) skipped whole
_JSON_NESTING = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_JSON_SPACE = re.compile(r"[ \t\r\n]*")


def _json_values(lines: TextIO, name: str) -> Iterator[tuple[int, Any]]:
    """The JSON values of a text, one after another (one per line, several on
    a line, or pretty over several lines), each with the number of the line
    it starts on. Lines are gathered until their brackets close, then parsed
    once: linear in the text, however a value is laid out."""
    import decimal

    decoder = json.JSONDecoder(parse_float=decimal.Decimal, parse_constant=_not_json)
    shown_name = _shown_name(name)

    def values(text: str, first: int, at_end: bool) -> Iterator[tuple[int, Any]]:
        position, line = 0, first
        while True:
            start = _JSON_SPACE.match(text, position).end()
            line += text.count("\n", position, start)
            if start == len(text):
                return
            try:
                value, position = decoder.raw_decode(text, start)
            except json.JSONDecodeError as error:
                where = first + error.lineno - 1
                if at_end and error.pos >= len(text.rstrip()):
                    raise _BadInput(
                        f"{shown_name}: line {line}: not valid JSON: the value is "
                        "not complete at the end of the input"
                    ) from None
                raise _BadInput(f"{shown_name}: line {where}: not valid JSON: {error.msg}") from None
            except RecursionError:
                raise _BadInput(
                    f"{shown_name}: line {line}: the JSON is nested too deeply for Python's recursion limit"
                ) from None
            except ValueError as error:  # NaN, Infinity, an int of too many digits
                reason = str(error)
                if "integer string conversion" in reason:
                    reason = f"a number of more than {sys.get_int_max_str_digits()} digits"
                raise _BadInput(f"{shown_name}: line {line}: not valid JSON: {reason}") from None
            yield line, value
            line += text.count("\n", start, position)

    parts: list[str] = []
    first = depth = number = 0
    try:
        for number, line in enumerate(lines, 1):
            if not parts:
                if not line.strip():
                    continue
                first = number
            parts.append(line)
            for token in _JSON_NESTING.findall(line):
                if token in ("[", "{"):
                    depth += 1
                elif token in ("]", "}"):
                    depth -= 1
            if depth <= 0:  # every value begun so far is complete (or broken)
                yield from values("".join(parts), first, False)
                parts, depth = [], 0
    except UnicodeDecodeError as error:
        raise _BadInput(f"{shown_name}: line {number + 1}: not valid UTF-8 text ({error.reason})") from None
    if parts:
        yield from values("".join(parts), first, True)


def getschema(args, out: TextIO) -> None:
    with _binary_in(args.file) as fo, _reading(args.file):
        header = read_header(fo)
    out.write(json.dumps(header.schema.to_dict(), indent=2, ensure_ascii=False) + "\n")


def getmeta(args, out: TextIO) -> None:
    with _binary_in(args.file) as fo, _reading(args.file):
        header = read_header(fo)
    for key, value in header.metadata.items():
        if args.key is not None and key != args.key:
            continue
        text = value.decode("utf-8", "backslashreplace")
        out.write(text + "\n" if args.key is not None else f"{key}\t{text}\n")


def count(args, out: TextIO) -> None:
    with _binary_in(args.file) as fo, _reading(args.file):
        out.write(f"{sum(block.count for block in FileReader(fo).blocks())}\n")


def cat(args, out: TextIO) -> None:
    """Blocks copied as they are stored when the codec stays, decompressed and
    compressed again when it changes; records are never decoded to Python
    values, only walked (to check them, and to cut blocks at --offset and
    --limit), so their bytes, union branches included, are the input's."""
    from roastedavro._datum import encode_long

    schema = None
    offset, limit = args.offset, args.limit
    progress = _Progress("cat")
    with _binary_out(args.output) as target:
        writer = codec = None
        for name in args.files:
            with _binary_in(name) as fo, _reading(name):
                reader = FileReader(fo)
                if schema is None:
                    schema = reader.writer_schema
                    writer = FileWriter(target, schema, args.codec or reader.codec, encode_block=b"".join)
                    codec = _json_codec(schema)
                elif _without_docs(reader.writer_schema) != _without_docs(schema):
                    # the records' bytes are copied under the first file's schema: the
                    # same types, logical types and properties (docs aside), as Java's
                    # Schema.equals
                    raise _BadInput(f"{name}: its schema is not the first file's")
                allowance = None  # the file's item budget, as tojson's
                for block in reader.blocks():
                    if limit == 0:
                        break
                    if offset >= block.count:
                        offset -= block.count
                        continue
                    data = reader.decompress(block)
                    try:
                        ends = codec.binary_record_ends(data, block.count, item_allowance=allowance)
                        allowance = codec.items_left
                    except DecodeError as error:
                        raise _block_error(block, error, len(data)) from None
                    first = offset
                    last = block.count if limit is None else min(block.count, offset + limit)
                    offset = 0
                    if limit is not None:
                        limit -= last - first
                    if first == 0 and last == block.count and reader.codec == writer.codec:
                        writer.flush()  # whatever a cut block left pending, then this one
                        target.write(
                            b"".join(
                                (
                                    encode_long(block.count),
                                    encode_long(block.size),
                                    block.data,
                                    writer.sync_marker,
                                )
                            )
                        )
                    else:
                        starts = [0, *ends]
                        writer.write_many(data[starts[index] : ends[index]] for index in range(first, last))
                    progress.add(last - first)
            if limit == 0:
                break
        if writer is not None:
            writer.close()
    progress.done()


def _without_docs(schema) -> Any:
    def strip(value):
        if isinstance(value, dict):
            return {key: strip(item) for key, item in value.items() if key != "doc"}
        if isinstance(value, list):
            return [strip(item) for item in value]
        return value

    return strip(json.loads(schema.to_json()))


def canonical(args, out: TextIO) -> None:
    out.write(_schema_file(args.schema_file).canonical_form() + "\n")


def fingerprint(args, out: TextIO) -> None:
    schema = _schema_file(args.schema_file)
    value = schema.fingerprint(args.algorithm)
    if isinstance(value, int):  # CRC-64-AVRO: its 8 bytes, little-endian, as single-object encoding
        value = value.to_bytes(8, "little")
    out.write(value.hex() + "\n")


def build(args, out: TextIO) -> None:
    from roastedavro import aot
    from roastedavro.flags import CompileFlags

    try:
        flags = CompileFlags(optimize=args.optimize or default_optimize())
    except ValueError as error:
        raise _BadInput(str(error)) from None
    codecs = aot.collect(args.sources, flags)
    if args.subject:
        if not args.registry:
            raise _BadInput("--subject needs --registry URL")
        skipped: list = []
        codecs += aot.registry_sources(args.registry, args.subject, args.reader, skipped=skipped)
        for label, reason in skipped:
            print(f"{label}: not built as read by --reader, which cannot read it ({reason})", file=sys.stderr)
    elif args.reader:
        raise _BadInput("--reader goes with --registry and --subject (for files: WRITER=READER)")
    shown = sys.stderr.isatty()

    def progress(done: int, total: int, label: str) -> None:
        width = 30
        bar = "#" * (width * done // total) + "-" * (width - width * done // total)
        line = f"[{bar}] {done}/{total} {label}"
        if shown:
            sys.stderr.write("\r" + line[:100].ljust(100) + ("\n" if done == total else ""))
            sys.stderr.flush()
        else:
            print(line, file=sys.stderr)

    wheel, manifest = aot.build_wheel(
        args.package, args.version, codecs, Path(args.output), flags, args.jobs, progress
    )
    out.write(f"{wheel}\n")
    print(f"built {len(manifest['codecs'])} codecs in {manifest['seconds']:.1f} s", file=sys.stderr)


def cache(args, out: TextIO) -> None:
    from roastedavro import compiler, precompiled

    if args.action == "clear":
        removed = compiler.cache_clear()
        out.write(f"removed {removed} modules from {compiler.cache_dir()}\n")
        return
    info = compiler.cache_info()
    out.write(
        f"directory: {info['directory']}\n"
        f"modules: {info['modules']}\n"
        f"size: {info['bytes'] / 2**20:.1f} MiB of {info['limit_bytes'] / 2**20:.0f} MiB "
        f"(least recently used evicted beyond; {compiler.CACHE_LIMIT_ENV})\n"
        f"compile: {compiler.compile_mode()} ({compiler.COMPILE_ENV})\n"
    )
    for name, package in precompiled.packages().items():
        state = "used" if package["usable"] else f"not used: {package['problem']}"
        out.write(f"precompiled: {name}, {package['codecs']} codecs ({state})\n")


# -- the command line -----------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(
        prog="roastedavro",
        description="Avro object container files and schemas from the shell "
        "(avro-tools' commands). '-' is standard input or output. Exit codes: 0 done, 1 bad "
        "input (the message names the file, and the block or line), 2 a wrong command line.",
    )
    main.add_argument("--version", action="version", version=f"roastedavro {__version__}")
    commands = main.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sub = commands.add_parser("tojson", help="a container file's records as Avro JSON, one per line")
    sub.add_argument("file", help="the container file, or - for standard input")
    sub.add_argument("--pretty", action="store_true", help="indented JSON")
    sub.add_argument("--reader-schema-file", help="read the records as this schema's (evolution)")
    sub.set_defaults(run=tojson)

    sub = commands.add_parser("fromjson", help="Avro JSON records (one per line) to a container file")
    sub.add_argument(
        "file",
        help="the records in Avro's JSON encoding (one per line, or pretty-printed), or - for standard input",
    )
    sub.add_argument("--schema-file", required=True, help="the records' schema (.avsc)")
    sub.add_argument("--codec", default="null", choices=list(CODECS))
    sub.add_argument("-o", "--output", help="the file to write (default: standard output)")
    sub.set_defaults(run=fromjson)

    sub = commands.add_parser("getschema", help="a container file's schema")
    sub.add_argument("file", help="the container file, or - for standard input")
    sub.set_defaults(run=getschema)

    sub = commands.add_parser("getmeta", help="a container file's metadata, key<TAB>value per line")
    sub.add_argument("file", help="the container file, or - for standard input")
    sub.add_argument("--key", help="only this key's value")
    sub.set_defaults(run=getmeta)

    sub = commands.add_parser("count", help="the records in a container file (nothing decoded)")
    sub.add_argument("file", help="the container file, or - for standard input")
    sub.set_defaults(run=count)

    sub = commands.add_parser("cat", help="container files of one schema concatenated, or recompressed")
    sub.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="container files of one schema, in order (- for standard input)",
    )
    sub.add_argument("-o", "--output", help="the file to write (default: standard output)")
    sub.add_argument("--codec", choices=list(CODECS), help="default: the first file's")
    sub.add_argument("--offset", type=int, default=0, help="records to skip first")
    sub.add_argument("--limit", type=int, help="records to write at most")
    sub.set_defaults(run=cat)

    sub = commands.add_parser("canonical", help="a schema's Parsing Canonical Form")
    sub.add_argument("schema_file", help="the schema (.avsc, JSON), or - for standard input")
    sub.set_defaults(run=canonical)

    sub = commands.add_parser("fingerprint", help="a schema's fingerprint, in hex")
    sub.add_argument("schema_file", help="the schema (.avsc, JSON), or - for standard input")
    sub.add_argument("--algorithm", default="CRC-64-AVRO", choices=_ALGORITHMS)
    sub.set_defaults(run=fingerprint)

    sub = commands.add_parser(
        "build",
        help="compile codecs ahead of time into an installable wheel",
        description="Compile codecs ahead of time into a wheel tagged for this Python and "
        "platform. With the wheel installed, CompiledSchema and AvroCodec load these codecs "
        "and start no compiler.",
    )
    sub.add_argument(
        "sources",
        nargs="*",
        metavar="SOURCE",
        help="module:Class (a CompiledSchema, importable from here), an .avsc file, "
        "or WRITER.avsc=READER.avsc (a resolving reader)",
    )
    sub.add_argument("--package", required=True, help="the wheel's package name (an identifier)")
    sub.add_argument("--output", required=True, help="the folder the wheel is written to")
    sub.add_argument("--version", default="1.0.0", help="the wheel's version (default 1.0.0)")
    sub.add_argument("-j", "--jobs", type=int, help="parallel builds (default: the CPU count)")
    sub.add_argument(
        "--optimize",
        help="the C optimisation level (default: ROASTEDAVRO_OPTIMIZE where it is set, else -O1)",
    )
    sub.add_argument("--registry", help="a Confluent-compatible schema registry's URL")
    sub.add_argument("--subject", action="append", help="every version of this subject (repeatable)")
    sub.add_argument("--reader", help="with --subject: also each version read as this .avsc")
    sub.set_defaults(run=build)

    sub = commands.add_parser("cache", help="the compile cache: info or clear")
    sub.add_argument(
        "action", choices=["info", "clear"], help="info: where it is, its size; clear: remove its modules"
    )
    sub.set_defaults(run=cache)
    return main


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    args = parser().parse_args(argv)
    out = out if out is not None else sys.stdout
    try:
        default_optimize()
    except ValueError as error:  # a bad ROASTEDAVRO_OPTIMIZE: one line, before any work
        print(f"roastedavro {args.command}: {error}", file=sys.stderr)
        return 1
    try:
        args.run(args, out)
    except (
        ContainerError,
        MissingCodecError,
        SchemaError,
        DecodeError,
        DatumError,
        CompileError,
        _BadInput,
    ) as error:
        print(f"roastedavro {args.command}: {error}", file=sys.stderr)
        return 1
    except (OSError, UnicodeDecodeError, MemoryError, RecursionError) as error:
        if isinstance(error, BrokenPipeError):  # `| head`: not an error
            with contextlib.suppress(OSError):
                sys.stdout = io.TextIOWrapper(io.BytesIO())
            return 0
        print(f"roastedavro {args.command}: {_error_text(error)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
