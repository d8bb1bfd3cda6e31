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
or schema that cannot be read: the message says where), 2 a wrong command
line. A progress line goes to standard error on long runs when it is a
terminal.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO, Iterator, TextIO

from roastedavro.avro.parse import load_schema, parse_schema
from roastedavro.container import (
    CODECS, ContainerError, FileReader, FileWriter, MissingCodecError, read_header,
)
from roastedavro.errors import CompileError, DatumError, DecodeError, SchemaError

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


@contextlib.contextmanager
def _binary_in(name: str) -> Iterator[BinaryIO]:
    if name == "-":
        yield sys.stdin.buffer
    else:
        with open(name, "rb") as fo:
            yield fo


@contextlib.contextmanager
def _binary_out(name: str | None) -> Iterator[BinaryIO]:
    if name in (None, "-"):
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
    else:
        with open(name, "wb") as fo:
            yield fo


def _schema_file(name: str):
    if name == "-":
        return parse_schema(sys.stdin.read())
    path = Path(name)
    if path.suffix == ".avsc":
        return load_schema(path)
    return parse_schema(path.read_text(encoding="utf-8"))


def _json_codec(schema):
    from roastedavro.avrojson import AvroJSON

    return AvroJSON(schema)


# -- subcommands ----------------------------------------------------------------------


def tojson(args, out: TextIO) -> None:
    with _binary_in(args.file) as fo:
        reader = FileReader(fo, _schema_file(args.reader_schema_file)
                            if args.reader_schema_file else None)
        encoder = _json_codec(reader.reader_schema)
        progress = _Progress("tojson")
        indent = 2 if args.pretty else None
        separators = None if args.pretty else (",", ":")
        for block in reader.blocks():
            for record in block.records():
                out.write(json.dumps(encoder.to_json_value(record), indent=indent,
                                     separators=separators, ensure_ascii=False))
                out.write("\n")
            progress.add(block.count)
        progress.done()


def fromjson(args, out: TextIO) -> None:
    schema = _schema_file(args.schema_file)
    decoder = _json_codec(schema)
    progress = _Progress("fromjson")
    with _binary_out(args.output) as target, \
            (sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")) as lines:
        writer = FileWriter(target, schema, args.codec)
        for number, line in enumerate(_json_values(lines), 1):
            try:
                writer.write(decoder.from_json_value(line))
            except (ValueError, TypeError) as error:
                raise _BadInput(f"{args.file}: record {number}: {error}") from None
            if number % 10000 == 0:
                progress.add(10000)
        writer.close()
    progress.done()


def _json_values(lines: TextIO) -> Iterator[Any]:
    """The JSON values of a text, one after another (one per line, or pretty)."""
    decoder = json.JSONDecoder()
    buffer = ""
    for line in lines:
        buffer += line
        while True:
            stripped = buffer.lstrip()
            if not stripped:
                buffer = ""
                break
            try:
                value, end = decoder.raw_decode(stripped)
            except json.JSONDecodeError:
                break   # the value goes on in the next line
            yield value
            buffer = stripped[end:]
    if buffer.strip():
        try:
            json.loads(buffer)
        except json.JSONDecodeError as error:
            raise _BadInput(f"not valid JSON: {error}") from None


def getschema(args, out: TextIO) -> None:
    with _binary_in(args.file) as fo:
        header = read_header(fo)
    out.write(json.dumps(header.schema.to_dict(), indent=2, ensure_ascii=False) + "\n")


def getmeta(args, out: TextIO) -> None:
    with _binary_in(args.file) as fo:
        header = read_header(fo)
    for key, value in header.metadata.items():
        if args.key is not None and key != args.key:
            continue
        text = value.decode("utf-8", "backslashreplace")
        out.write(text + "\n" if args.key is not None else f"{key}\t{text}\n")


def count(args, out: TextIO) -> None:
    with _binary_in(args.file) as fo:
        out.write(f"{sum(block.count for block in FileReader(fo).blocks())}\n")


def cat(args, out: TextIO) -> None:
    schema = None
    offset, limit = args.offset, args.limit
    progress = _Progress("cat")
    with _binary_out(args.output) as target:
        writer = None
        for name in args.files:
            with _binary_in(name) as fo:
                reader = FileReader(fo)
                if schema is None:
                    schema = reader.writer_schema
                    writer = FileWriter(target, schema, args.codec or reader.codec)
                elif reader.writer_schema.canonical_form() != schema.canonical_form():
                    raise _BadInput(f"{name}: its schema is not the first file's")
                for block in reader.blocks():
                    if offset >= block.count:
                        offset -= block.count
                        continue
                    records = block.records()[offset:]
                    offset = 0
                    if limit is not None:
                        records = records[:limit]
                        limit -= len(records)
                    writer.write_many(records)
                    progress.add(len(records))
                    if limit == 0:
                        break
            if limit == 0:
                break
        if writer is not None:
            writer.close()
    progress.done()


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

    flags = CompileFlags(optimize=args.optimize)
    codecs = aot.collect(args.sources, flags)
    if args.subject:
        if not args.registry:
            raise _BadInput("--subject needs --registry URL")
        codecs += aot.registry_sources(args.registry, args.subject, args.reader)
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

    wheel, manifest = aot.build_wheel(args.package, args.version, codecs, Path(args.output),
                                      flags, args.jobs, progress)
    out.write(f"{wheel}\n")
    print(f"built {len(manifest['codecs'])} codecs in {manifest['seconds']:.1f} s", file=sys.stderr)


def cache(args, out: TextIO) -> None:
    from roastedavro import compiler, precompiled

    if args.action == "clear":
        removed = compiler.cache_clear()
        out.write(f"removed {removed} modules from {compiler.cache_dir()}\n")
        return
    info = compiler.cache_info()
    out.write(f"directory: {info['directory']}\n"
              f"modules: {info['modules']}\n"
              f"size: {info['bytes'] / 2**20:.1f} MiB of {info['limit_bytes'] / 2**20:.0f} MiB "
              f"(least recently used evicted beyond; {compiler.CACHE_LIMIT_ENV})\n"
              f"compile: {compiler.compile_mode()} ({compiler.COMPILE_ENV})\n")
    for name, package in precompiled.packages().items():
        state = "used" if package["usable"] else f"not used: {package['problem']}"
        out.write(f"precompiled: {name}, {package['codecs']} codecs ({state})\n")


# -- the command line -----------------------------------------------------------------


class _BadInput(Exception):
    pass


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(
        prog="roastedavro", description="Avro object container files and schemas from the shell "
        "(avro-tools' commands). '-' is standard input or output.")
    commands = main.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sub = commands.add_parser("tojson", help="a container file's records as Avro JSON, one per line")
    sub.add_argument("file")
    sub.add_argument("--pretty", action="store_true", help="indented JSON")
    sub.add_argument("--reader-schema-file", help="read the records as this schema's (evolution)")
    sub.set_defaults(run=tojson)

    sub = commands.add_parser("fromjson", help="Avro JSON records (one per line) to a container file")
    sub.add_argument("file", help="the JSON records, or -")
    sub.add_argument("--schema-file", required=True, help="the records' schema (.avsc)")
    sub.add_argument("--codec", default="null", choices=list(CODECS))
    sub.add_argument("-o", "--output", help="the file to write (default: standard output)")
    sub.set_defaults(run=fromjson)

    sub = commands.add_parser("getschema", help="a container file's schema")
    sub.add_argument("file")
    sub.set_defaults(run=getschema)

    sub = commands.add_parser("getmeta", help="a container file's metadata, key<TAB>value per line")
    sub.add_argument("file")
    sub.add_argument("--key", help="only this key's value")
    sub.set_defaults(run=getmeta)

    sub = commands.add_parser("count", help="the records in a container file (nothing decoded)")
    sub.add_argument("file")
    sub.set_defaults(run=count)

    sub = commands.add_parser("cat", help="container files of one schema concatenated, or recompressed")
    sub.add_argument("files", nargs="+")
    sub.add_argument("-o", "--output", help="the file to write (default: standard output)")
    sub.add_argument("--codec", choices=list(CODECS), help="default: the first file's")
    sub.add_argument("--offset", type=int, default=0, help="records to skip first")
    sub.add_argument("--limit", type=int, help="records to write at most")
    sub.set_defaults(run=cat)

    sub = commands.add_parser("canonical", help="a schema's Parsing Canonical Form")
    sub.add_argument("schema_file")
    sub.set_defaults(run=canonical)

    sub = commands.add_parser("fingerprint", help="a schema's fingerprint, in hex")
    sub.add_argument("schema_file")
    sub.add_argument("--algorithm", default="CRC-64-AVRO", choices=_ALGORITHMS)
    sub.set_defaults(run=fingerprint)

    sub = commands.add_parser(
        "build", help="compile codecs ahead of time into an installable wheel",
        description="Compile codecs ahead of time into a wheel tagged for this Python and "
        "platform. With the wheel installed, CompiledSchema and AvroCodec load these codecs "
        "and start no compiler.")
    sub.add_argument("sources", nargs="*", metavar="SOURCE",
                     help="module:Class (a CompiledSchema, importable from here), an .avsc file, "
                     "or WRITER.avsc=READER.avsc (a resolving reader)")
    sub.add_argument("--package", required=True, help="the wheel's package name (an identifier)")
    sub.add_argument("--output", required=True, help="the folder the wheel is written to")
    sub.add_argument("--version", default="1.0.0", help="the wheel's version (default 1.0.0)")
    sub.add_argument("-j", "--jobs", type=int, help="parallel builds (default: the CPU count)")
    sub.add_argument("--optimize", default="-O1", help="the C optimisation level (default -O1)")
    sub.add_argument("--registry", help="a Confluent-compatible schema registry's URL")
    sub.add_argument("--subject", action="append", help="every version of this subject (repeatable)")
    sub.add_argument("--reader", help="with --subject: also each version read as this .avsc")
    sub.set_defaults(run=build)

    sub = commands.add_parser("cache", help="the compile cache: info or clear")
    sub.add_argument("action", choices=["info", "clear"])
    sub.set_defaults(run=cache)
    return main


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    args = parser().parse_args(argv)
    out = out if out is not None else sys.stdout
    try:
        args.run(args, out)
    except (ContainerError, MissingCodecError, SchemaError, DecodeError, DatumError,
            CompileError, _BadInput) as error:
        print(f"roastedavro {args.command}: {error}", file=sys.stderr)
        return 1
    except (OSError, UnicodeDecodeError) as error:
        if isinstance(error, BrokenPipeError):  # `| head`: not an error
            with contextlib.suppress(OSError):
                sys.stdout = io.TextIOWrapper(io.BytesIO())
            return 0
        print(f"roastedavro {args.command}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
