"""The contenders: one dump and one load function per library and benchmark case.

Every contender is set up once per case, outside the timed loops: parsed
schemas, compiled codecs, reused output buffers and the input value in the
form that library takes. A timed loop then only calls ``dump(value)`` or
``load(data)``.

Stream-based libraries (fastavro, avro, cerializer) get the setup that is
fastest for them: one ``BytesIO`` for output, rewound and truncated per call
(``getvalue()`` returns the bytes), and one ``BytesIO`` holding the message
for input, rewound per call. roastedavro and msgspec take and return
``bytes`` directly.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import decimal
import enum
import io
import json
import os
import re
import sys
import tempfile
import uuid
from typing import Any, Callable

import fastavro

from benchmarks.schemas import Case

AVRO_CONTENDERS = ("roastedavro", "fastavro", "avro", "cerializer", "marshmallow+fastavro")
CONTENDERS = AVRO_CONTENDERS + ("msgspec",)
BASELINE = "fastavro"
#: cerializer's compile time grows steeply with the record's width (see make_cerializer)
CERIALIZER_MAX_FIELDS = 100


@dataclasses.dataclass
class Contender:
    name: str
    dump: Callable[[Any], Any] | None = None
    dump_input: Any = None
    load: Callable[[Any], Any] | None = None
    load_input: Any = None
    #: why dump or load is not timed (an error, a byte mismatch, not applicable)
    dump_excluded: str | None = None
    load_excluded: str | None = None
    notes: list[str] = dataclasses.field(default_factory=list)
    #: seconds taken by the setup (compiling, for the compiling libraries)
    setup_s: float | None = None


def avro_values(value: Any, uuid_as_str: bool = False) -> Any:
    """The record as plain Avro writers take it: enum members become their symbol
    (and UUIDs strings, for Apache avro, whose uuid type takes only strings)."""
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, dict):
        return {key: avro_values(item, uuid_as_str) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [avro_values(item, uuid_as_str) for item in value]
    if uuid_as_str and isinstance(value, uuid.UUID):
        return str(value)
    return value


def normalized(value: Any) -> Any:
    """A representation-independent form of a decoded record, for comparing readers."""
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, dict):
        return {str(key): normalized(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalized(item) for item in value]
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return ("decimal", value.normalize())
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.timezone.utc) if value.tzinfo else value
    return value


@contextlib.contextmanager
def quiet(captured: list[str]):
    """Send stdout/stderr to a temporary file at the file-descriptor level (compilers
    print there); its text is appended to ``captured``."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            sink.seek(0)
            captured.append(sink.read().decode("utf-8", "replace"))


def _writer(write: Callable[[io.BytesIO, Any], None]) -> Callable[[Any], bytes]:
    out = io.BytesIO()

    def dump(value, out=out, write=write):
        out.seek(0)
        out.truncate()
        write(out, value)
        return out.getvalue()

    return dump


def _reader(read: Callable[[io.BytesIO], Any], data: bytes) -> Callable[[Any], Any]:
    source = io.BytesIO(data)

    def load(_data, source=source, read=read):
        source.seek(0)
        return read(source)

    return load


# -- one factory per contender -------------------------------------------------------


def make_roastedavro(case: Case, schema, record, data) -> Contender:
    return Contender("roastedavro", schema.dump_compiled, record, schema.load_compiled, data)


def make_fastavro(case: Case, schema, record, data) -> Contender:
    parsed = fastavro.parse_schema(schema.avro_schema())
    writer, reader = fastavro.schemaless_writer, fastavro.schemaless_reader
    return Contender(
        "fastavro",
        _writer(lambda out, value: writer(out, parsed, value)),
        avro_values(record),
        _reader(lambda source: reader(source, parsed, None), data),
        data,
    )


def make_avro(case: Case, schema, record, data) -> Contender:
    import avro.io
    import avro.schema

    parsed = avro.schema.parse(json.dumps(schema.avro_schema()))
    datum_writer, datum_reader = avro.io.DatumWriter(parsed), avro.io.DatumReader(parsed)
    out = io.BytesIO()
    encoder = avro.io.BinaryEncoder(out)
    source = io.BytesIO(data)
    decoder = avro.io.BinaryDecoder(source)

    def dump(value, out=out, encoder=encoder, write=datum_writer.write):
        out.seek(0)
        out.truncate()
        write(value, encoder)
        return out.getvalue()

    def load(_data, source=source, decoder=decoder, read=datum_reader.read):
        source.seek(0)
        return read(decoder)

    return Contender("avro", dump, avro_values(record, uuid_as_str=True), load, data)


def _cerializer_modules():
    """cerializer's modules, importable with any Cython 3: cerializer 1.5.1 reads
    ``Cython.Utils.get_cython_cache_dir``, which Cython 3.1 moved to ``Cython.Build.Inline``."""
    import Cython.Build.Inline
    import Cython.Utils

    if not hasattr(Cython.Utils, "get_cython_cache_dir"):
        Cython.Utils.get_cython_cache_dir = Cython.Build.Inline.get_cython_cache_dir
    import cerializer.cerializer_handler as handler
    import cerializer.schema_handler as schema_handler
    import cerializer.utils as utils

    return handler, schema_handler, utils


def make_cerializer(case: Case, schema, record, data) -> Contender:
    handler, schema_handler, utils = _cerializer_modules()
    avro = schema.avro_schema()
    if len(avro["fields"]) > CERIALIZER_MAX_FIELDS:
        reason = (
            f"skipped: {len(avro['fields'])} fields > --cerializer-max-fields "
            f"{CERIALIZER_MAX_FIELDS} (cerializer 1.5.1 compiles a 50-field record in ~20 s; "
            "on the 2-CPU development machine the 500-field record ran Cython + gcc for "
            "~16 minutes on a 6.8 MB C file, then gcc exited with status 1)"
        )
        return Contender("cerializer", dump_excluded=reason, load_excluded=reason)
    namespace, name = avro["namespace"], avro["name"]
    schemata = schema_handler.CerializerSchemata([(utils.get_schema_identifier(namespace, name), avro)])
    output: list[str] = []
    try:
        with quiet(output):
            codec = handler.Cerializer(schemata, namespace, name)
    except Exception as error:
        lines = [line for line in "".join(output).splitlines() if "error" in line.lower()]
        raise RuntimeError(f"{_short(error)}; {' | '.join(lines[-3:])}") from None
    # serialize_into / deserialize_from: cerializer's stream API, buffers reused
    # like the other stream-based libraries (serialize()/deserialize() make a new BytesIO)
    return Contender(
        "cerializer",
        _writer(lambda out, value: codec.serialize_into(out, value)),
        avro_values(record),
        _reader(codec.deserialize_from, data),
        data,
    )


def make_marshmallow_fastavro(case: Case, schema, record, data) -> Contender:
    # what a marshmallow user does today: marshmallow's dump, then fastavro;
    # fastavro, then marshmallow's load. A separate (never compiled) instance.
    plain = type(schema)()
    parsed = fastavro.parse_schema(schema.avro_schema())
    writer, reader = fastavro.schemaless_writer, fastavro.schemaless_reader
    dump_marshmallow, load_marshmallow = plain.dump, plain.load
    return Contender(
        "marshmallow+fastavro",
        _writer(lambda out, value: writer(out, parsed, dump_marshmallow(value))),
        record,
        _reader(lambda source: load_marshmallow(reader(source, parsed, None)), data),
        data,
    )


def make_msgspec(case: Case, schema, record, data) -> Contender:
    import msgspec

    encoder = msgspec.msgpack.Encoder()
    decoder = msgspec.msgpack.Decoder(case.struct)
    value = case.struct_value(record)
    encoded = encoder.encode(value)
    contender = Contender("msgspec", encoder.encode, value, decoder.decode, encoded)
    contender.notes.append(f"MessagePack, {len(encoded)} bytes (Avro: {len(data)})")
    return contender


FACTORIES = {
    "roastedavro": make_roastedavro,
    "fastavro": make_fastavro,
    "avro": make_avro,
    "cerializer": make_cerializer,
    "marshmallow+fastavro": make_marshmallow_fastavro,
    "msgspec": make_msgspec,
}


def _short(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    text = " ".join(text.split())
    return text if len(text) <= 240 else text[:237] + "..."


def build(case: Case, schema, names: tuple[str, ...] = CONTENDERS) -> tuple[dict[str, Contender], dict]:
    """Set up each contender for ``case`` and check it against roastedavro.

    Avro writers must produce roastedavro's bytes; Avro readers must decode
    roastedavro's bytes to the same values (after normalising enum members to
    symbols, UUIDs to strings, ...). A failing or disagreeing direction is
    excluded from timing, with the reason. Returns the contenders and the
    reference (record, bytes, loaded value).
    """
    record = case.record()
    data = schema.dump_compiled(record)
    loaded = schema.load_compiled(data)
    reference = {"record": record, "data": data, "loaded": loaded}
    expected = normalized(loaded)
    contenders: dict[str, Contender] = {}
    for name in names:
        try:
            contender = FACTORIES[name](case, schema, record, data)
        except Exception as error:  # noqa: BLE001 - report, don't crash
            contender = Contender(
                name,
                dump_excluded=f"setup failed: {_short(error)}",
                load_excluded=f"setup failed: {_short(error)}",
            )
            contenders[name] = contender
            continue
        contenders[name] = contender
        _check(contender, name, data, expected, record)
    return contenders, reference


def _check(contender: Contender, name: str, data: bytes, expected: Any, record: Any) -> None:
    if contender.dump_excluded is None:
        _check_dump(contender, name, data)
    if contender.load_excluded is None:
        _check_load(contender, name, expected, record)


def _check_dump(contender: Contender, name: str, data: bytes) -> None:
    try:
        written = contender.dump(contender.dump_input)
    except Exception as error:  # noqa: BLE001
        contender.dump_excluded = f"dump raised {_short(error)}"
    else:
        if name in AVRO_CONTENDERS and bytes(written) != data:
            contender.dump_excluded = (
                f"bytes differ from roastedavro ({len(written)} vs {len(data)} bytes; "
                f"first difference at byte {_first_difference(bytes(written), data)})"
            )


def _check_load(contender: Contender, name: str, expected: Any, record: Any) -> None:
    try:
        value = contender.load(contender.load_input)
    except Exception as error:  # noqa: BLE001
        contender.load_excluded = f"load raised {_short(error)}"
        return
    if name == "msgspec":
        if normalized(value) != normalized(contender.dump_input):
            contender.load_excluded = "msgspec round trip differs"
        return
    if normalized(value) != expected:
        contender.load_excluded = "decoded values differ from roastedavro's: " + _difference(
            normalized(value), expected
        )
    if name == "roastedavro" and normalized(value) != normalized(record):
        contender.notes.append(
            "load_compiled(dump_compiled(record)) differs from the record: "
            + _difference(normalized(value), normalized(record))
        )


def _first_difference(a: bytes, b: bytes) -> int:
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return index
    return min(len(a), len(b))


def _difference(got: Any, want: Any, path: str = "") -> str:
    if isinstance(got, dict) and isinstance(want, dict):
        for key in list(want) + [k for k in got if k not in want]:
            if key not in got or key not in want:
                return f"{path}.{key}: only in {'expected' if key in want else 'decoded'}"
            if got[key] != want[key]:
                return _difference(got[key], want[key], f"{path}.{key}")
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for index, (x, y) in enumerate(zip(got, want)):
            if x != y:
                return _difference(x, y, f"{path}[{index}]")
    text = f"{path or 'value'}: {got!r} != {want!r}"
    return text if len(text) <= 240 else text[:237] + "..."


# -- contenders on plain Avro schemas (benchmarks/avro_codecs.py) ----------------------
#
# Each takes an AvroCase (benchmarks/avro_schemas.py), its datums and fastavro's
# message for each datum. A contender's dump_input is the list of datums and its
# load_input the list of what its load takes for each message (bytes, or a
# BytesIO holding it for the stream-based libraries); a timed call is one
# ``dump(x)`` or ``load(x)`` per item of the list.

SCHEMA_CONTENDERS = ("AvroCodec", "roastedavro.fastavro", "fastavro", "cerializer", "spavro")


def _sources(messages: list[bytes]) -> list[io.BytesIO]:
    return [io.BytesIO(message) for message in messages]


def _schemaless_writer(write: Callable, parsed: Any) -> Callable[[Any], bytes]:
    # fastavro's call as user code makes it: write(fo, schema, datum), one frame
    out = io.BytesIO()

    def dump(value, out=out, write=write, parsed=parsed):
        out.seek(0)
        out.truncate()
        write(out, parsed, value)
        return out.getvalue()

    return dump


def _stream_reader(read: Callable[[io.BytesIO], Any]) -> Callable[[io.BytesIO], Any]:
    def load(source, read=read):
        source.seek(0)
        return read(source)

    return load


def _schemaless_reader(read: Callable, parsed: Any) -> Callable[[io.BytesIO], Any]:
    # read(fo, schema, None), one frame
    def load(source, read=read, parsed=parsed):
        source.seek(0)
        return read(source, parsed, None)

    return load


def bytesio_steps(messages: list[bytes]) -> Contender:
    """What the stream contenders' timings hold beyond the library's own
    work: the steps around the call and the stream taking in the message's
    bytes (subtracted from both for the per-call figures)."""
    out = io.BytesIO()

    def dump(message, out=out):
        out.seek(0)
        out.truncate()
        out.write(message)
        return out.getvalue()

    def load(source):
        source.seek(0)
        return source

    return Contender("BytesIO steps", dump, messages, load, _sources(messages))


def make_schema_avrocodec(case, datums, messages) -> Contender:
    from roastedavro import AvroCodec

    codec = AvroCodec(case.schema, compile="eager")  # the compiled codec (tier 1)
    return Contender("AvroCodec", codec.dump, datums, codec.load, messages)


def make_schema_roastedavro_fastavro(case, datums, messages) -> Contender:
    # the drop-in, called as code written for fastavro calls it
    import roastedavro.fastavro as drop_in

    parsed = drop_in.parse_schema(case.schema)
    drop_in.codec_for(parsed).compile()  # measured compiled: no swap in the middle of a run
    writer, reader = drop_in.schemaless_writer, drop_in.schemaless_reader
    writer(io.BytesIO(), parsed, datums[0])  # compiles the codec, outside the setup of others
    return Contender(
        "roastedavro.fastavro",
        _schemaless_writer(writer, parsed),
        datums,
        _schemaless_reader(reader, parsed),
        _sources(messages),
    )


def make_schema_fastavro(case, datums, messages) -> Contender:
    parsed = fastavro.parse_schema(case.schema)
    writer, reader = fastavro.schemaless_writer, fastavro.schemaless_reader
    return Contender(
        "fastavro",
        _schemaless_writer(writer, parsed),
        datums,
        _schemaless_reader(reader, parsed),
        _sources(messages),
    )


def make_schema_cerializer(case, datums, messages) -> Contender:
    handler, schema_handler, utils = _cerializer_modules()
    avro = case.schema
    if len(avro["fields"]) > CERIALIZER_MAX_FIELDS:
        reason = f"skipped: {len(avro['fields'])} fields > --cerializer-max-fields {CERIALIZER_MAX_FIELDS}"
        return Contender("cerializer", dump_excluded=reason, load_excluded=reason)
    namespace, name = avro["namespace"], avro["name"]
    schemata = schema_handler.CerializerSchemata([(utils.get_schema_identifier(namespace, name), avro)])
    output: list[str] = []
    try:
        with quiet(output):
            codec = handler.Cerializer(schemata, namespace, name)
    except Exception as error:
        # Cython's messages: "<file>.pyx:<line>:<column>: <message>"
        found = re.findall(r"\.pyx:(\d+):\d+: (.+)", "".join(output))
        messages = "; ".join(f"line {line}: {text}" for line, text in found[:3])
        raise RuntimeError(
            f"{type(error).__name__} in the code cerializer generated: {messages or _short(error)}"
        ) from None
    return Contender(
        "cerializer",
        _writer(lambda out, value: codec.serialize_into(out, value)),
        datums,
        _stream_reader(codec.deserialize_from),
        _sources(messages),
    )


def make_schema_spavro(case, datums, messages) -> Contender:
    import spavro.fast_binary
    import spavro.schema

    # spavro's DatumWriter/DatumReader call these on the normalised schema; called
    # directly here to leave out the wrappers (the encoder objects, a try block)
    normalised = spavro.schema.parse(json.dumps(case.schema)).to_json()
    write = spavro.fast_binary.get_writer(normalised)
    read = spavro.fast_binary.get_reader(normalised)
    return Contender("spavro", _writer(write), datums, _stream_reader(read), _sources(messages))


SCHEMA_FACTORIES = {
    "AvroCodec": make_schema_avrocodec,
    "roastedavro.fastavro": make_schema_roastedavro_fastavro,
    "fastavro": make_schema_fastavro,
    "cerializer": make_schema_cerializer,
    "spavro": make_schema_spavro,
}


def fastavro_reference(schema: dict, datums: list) -> tuple[list[bytes], list]:
    """fastavro's message for each datum, and fastavro's reading of each message."""
    parsed = fastavro.parse_schema(schema)
    messages, values = [], []
    for datum in datums:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, datum)
        messages.append(out.getvalue())
        values.append(fastavro.schemaless_reader(io.BytesIO(messages[-1]), parsed, None))
    return messages, values


def build_for_schema(case, names: tuple[str, ...] = SCHEMA_CONTENDERS) -> tuple[dict[str, Contender], dict]:
    """Set up each contender for an Avro-schema case and check it against fastavro.

    A writer must produce fastavro's bytes for every datum, a reader must read
    each of fastavro's messages to fastavro's values, with the same Python
    types (``strict_difference``). A failing or disagreeing direction is
    excluded from timing, with the reason.
    """
    import time

    datums = case.datums()
    messages, values = fastavro_reference(case.schema, datums)
    reference = {"datums": datums, "messages": messages, "values": values}
    contenders: dict[str, Contender] = {}
    for name in names:
        started = time.perf_counter()
        try:
            contender = SCHEMA_FACTORIES[name](case, datums, messages)
        except Exception as error:  # noqa: BLE001 - report, don't crash
            contender = Contender(
                name,
                dump_excluded=f"setup failed: {_short(error)}",
                load_excluded=f"setup failed: {_short(error)}",
            )
        contender.setup_s = time.perf_counter() - started
        contenders[name] = contender
        if contender.dump_excluded is None:
            contender.dump_excluded = _check_batch_dump(contender, messages)
        if contender.load_excluded is None:
            contender.load_excluded = _check_batch_load(contender, values)
    return contenders, reference


def _check_batch_dump(contender: Contender, messages: list[bytes]) -> str | None:
    for index, (datum, message) in enumerate(zip(contender.dump_input, messages)):
        try:
            written = bytes(contender.dump(datum))
        except Exception as error:  # noqa: BLE001
            return f"datum {index}: dump raised {_short(error)}"
        if written != message:
            return (
                f"datum {index}: bytes differ from fastavro's ({len(written)} vs "
                f"{len(message)} bytes; first difference at byte "
                f"{_first_difference(written, message)})"
            )
    return None


def _check_batch_load(contender: Contender, values: list) -> str | None:
    for index, (source, want) in enumerate(zip(contender.load_input, values)):
        try:
            got = contender.load(source)
        except Exception as error:  # noqa: BLE001
            return f"message {index}: load raised {_short(error)}"
        difference = strict_difference(got, want)
        if difference:
            return f"message {index}: value differs from fastavro's: {difference}"
    return None


def strict_difference(got: Any, want: Any, path: str = "") -> str | None:
    """Where ``got`` differs from ``want`` in value or Python type (None if nowhere).

    Stricter than ``==``: ``1`` is not ``True``, a ``str`` is not a ``UUID``,
    ``Decimal("1.50")`` is not ``Decimal("1.5")``, a datetime must have the same
    UTC offset, floats must be equal (NaN equals NaN).
    """
    where = path or "value"
    if isinstance(got, dict) and isinstance(want, dict):
        if set(got) != set(want):
            missing = [key for key in want if key not in got]
            extra = [key for key in got if key not in want]
            return _clip(
                f"{where}: keys differ"
                + (f", missing {missing}" if missing else "")
                + (f", unexpected {extra}" if extra else "")
            )
        for key in want:
            difference = strict_difference(got[key], want[key], f"{path}.{key}")
            if difference:
                return difference
        return None
    if type(got) is not type(want):
        return _clip(f"{where}: {type(got).__name__} {got!r} != {type(want).__name__} {want!r}")
    if isinstance(want, list):
        if len(got) != len(want):
            return f"{where}: {len(got)} items != {len(want)}"
        for index, (x, y) in enumerate(zip(got, want)):
            difference = strict_difference(x, y, f"{path}[{index}]")
            if difference:
                return difference
        return None
    if isinstance(want, float):
        same = got == want or (got != got and want != want)
    elif isinstance(want, decimal.Decimal):
        same = got == want and got.as_tuple().exponent == want.as_tuple().exponent
    elif isinstance(want, (datetime.datetime, datetime.time)):
        same = got == want and got.utcoffset() == want.utcoffset()
    else:
        same = got == want
    return None if same else _clip(f"{where}: {got!r} != {want!r}")


def _clip(text: str) -> str:
    return text if len(text) <= 300 else text[:297] + "..."
