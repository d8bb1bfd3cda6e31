"""roastedavro.arrow.read_table on files Java wrote, against two oracles.

* fastavro: ``read_table(path)``'s rows equal the records ``fastavro.reader`` reads;
* Java Avro 1.12: they equal the records avro-tools ``tojson`` prints (read from
  its Avro JSON by fastavro's JSON reader, tests/java_tools.py ``json_records``).

The files: every record file among the Java-written files fastavro ships (its
tests/avro-files, scripts/fastavro_testdata.py), and a file of every Avro type,
logical types and edge values included, that Java writes here from JSON lines
(avro-tools ``fromjson``) in the codecs null, deflate, snappy and zstandard. Each
is read whole and with ``columns=`` a subset, checked against the oracle's rows
projected. Both sides are compared after tests/arrow_values.py's normalisation,
which only changes how a value is represented (a map's entries as a dict, a uuid
as its text, a float read from JSON rounded to float32...).

Java's tests are marked java and skip only where there is no java on PATH;
fastavro's need no Java. Every avro-tools call starts a JVM (about 0.6 s), so
each file is printed once (module fixtures), two JVMs at a time.
"""

from __future__ import annotations

import datetime
import io
import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest

pa = pytest.importorskip("pyarrow")

import java_tools  # noqa: E402
from arrow_values import (  # noqa: E402
    fastavro_records,
    named_types,
    oracle_rows,
    project,
    served_by_tier0,  # noqa: F401 (a fixture)
    table_rows,
)
from java_tools import fastavro_testdata, json_lines, json_records  # noqa: E402
from roastedavro.arrow import arrow_schema, read_table  # noqa: E402
from roastedavro.container import FileReader  # noqa: E402
from roastedavro.errors import SchemaError  # noqa: E402

avro_tools = java_tools.avro_tools
fastavro_files = java_tools.fastavro_files

TESTDATA = fastavro_testdata()
# the Java-written files whose schema is no record: an Arrow table's rows are
# records, so read_table refuses them (tested below) and they are not compared
NOT_RECORDS = {
    "null.avro": 'schema "bytes"',
    "deflate.avro": 'schema "bytes"',
    "snappy.avro": 'schema "bytes"',
    "response.avro": 'schema "string"',
    "testDataFileMeta.avro": 'schema "null"',
    "org.apache.avro.tool.TestDataFileTools.avro": 'schema "int"',
    "class org.apache.avro.tool.TestDataFileTools.testWrite.plain.avro": 'schema "int"',
    "class org.apache.avro.tool.TestDataFileTools.testWrite.deflate.avro": 'schema "int"',
    "class org.apache.avro.tool.TestDataFileTools.seperators.avro": "schema an array of int",
    "class org.apache.avro.tool.TestDataFileTools.zerojsonvalues.avro": 'schema "int"',
}
RECORD_FILES = [name for name in TESTDATA.java_written() if name not in NOT_RECORDS]
# codecs Java writes the file of every type in (avro-tools writes bzip2 and xz too)
JAVA_CODECS = ("null", "deflate", "snappy", "zstandard")
JVMS = 2  # avro-tools runs at once (the machines have 2 cores)


# read and written through tier 0 (arrow_values.served_by_tier0)
pytestmark = pytest.mark.usefixtures("served_by_tier0")


def header_schema(path) -> dict:
    """The writer's schema as the file's header has it (JSON values)."""
    with open(path, "rb") as fo:
        return json.loads(FileReader(fo).metadata["avro.schema"])


def some_columns(schema: dict) -> list[str]:
    """Top-level fields to read with ``columns=``: all but the first, last first."""
    names = [field["name"] for field in schema["fields"]]
    return names[::-1][: max(1, len(names) - 1)]


def check_table(path, schema: dict, oracle: list[dict]) -> None:
    """read_table(path) against the oracle's records."""
    expected = oracle_rows(schema, oracle)
    table = read_table(path)
    with open(path, "rb") as fo:  # the header's schema as read (Java's names may hold a "$")
        assert table.schema == arrow_schema(FileReader(fo).writer_schema)
    assert table.num_rows == len(expected)
    assert table_rows(table, schema) == expected


def check_columns(path, schema: dict, oracle: list[dict], columns: list[str]) -> None:
    """read_table(path, columns=columns) against the oracle's records projected."""
    projected = read_table(path, columns=columns)
    assert projected.column_names == columns
    assert table_rows(projected, schema) == project(oracle_rows(schema, oracle), columns)


# -- the Java-written files fastavro ships ----------------------------------------


def test_the_java_written_files_that_hold_no_records_are_no_tables(fastavro_files):
    for name in TESTDATA.java_written():
        schema = header_schema(fastavro_files / name)
        is_record = isinstance(schema, dict) and schema.get("type") == "record"
        assert is_record == (name not in NOT_RECORDS), name
        if not is_record:
            with pytest.raises(SchemaError, match="not a record"):
                read_table(fastavro_files / name)


# Java reflect's namespaces end in a "$" (a nested class): no Avro name, but the
# header's schema is read leniently, as fastavro and Java read it; columns= keeps
# the projected schema as lenient (lines.avro, part-00000.avro and test.avro)
COLUMN_FILES = RECORD_FILES


@pytest.mark.parametrize("name", RECORD_FILES)
def test_a_java_written_file_reads_as_fastavro_reads_it(fastavro_files, name):
    path = fastavro_files / name
    oracle = fastavro_records(path.read_bytes())
    assert len(oracle) == TESTDATA.FILES[name].records
    check_table(path, header_schema(path), oracle)


@pytest.mark.parametrize("name", COLUMN_FILES)
def test_columns_of_a_java_written_file_read_as_fastavro_reads_them(fastavro_files, name):
    path = fastavro_files / name
    schema = header_schema(path)
    check_columns(path, schema, fastavro_records(path.read_bytes()), some_columns(schema))


@pytest.fixture(scope="module")
def java_prints(avro_tools, fastavro_files) -> dict[str, list[str]]:
    """avro-tools tojson's lines of each record file fastavro ships."""
    with ThreadPoolExecutor(JVMS) as pool:
        lines = pool.map(lambda name: avro_tools.tojson(fastavro_files / name), RECORD_FILES)
        return dict(zip(RECORD_FILES, lines))


@pytest.mark.java
@pytest.mark.parametrize("name", RECORD_FILES)
def test_a_java_written_file_reads_as_java_prints_it(java_prints, fastavro_files, name):
    path = fastavro_files / name
    schema = header_schema(path)
    oracle = json_records(schema, java_prints[name])
    assert len(oracle) == TESTDATA.FILES[name].records
    check_table(path, schema, oracle)


@pytest.mark.java
@pytest.mark.parametrize("name", COLUMN_FILES)
def test_columns_of_a_java_written_file_read_as_java_prints_them(java_prints, fastavro_files, name):
    path = fastavro_files / name
    schema = header_schema(path)
    check_columns(path, schema, json_records(schema, java_prints[name]), some_columns(schema))


# -- a file of every type, written by Java -----------------------------------------

POINT = {
    "type": "record",
    "name": "Point",
    "fields": [
        {"name": "x", "type": "long"},
        {"name": "y", "type": "double"},
        {"name": "f", "type": "float"},
    ],
}
COLOR = {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"], "default": "RED"}
F4 = {"type": "fixed", "name": "F4", "size": 4}
D8 = {"type": "fixed", "name": "D8", "size": 8, "logicalType": "decimal", "precision": 18, "scale": 4}
OTHER = {
    "type": "record",
    "name": "Other",
    "fields": [
        {"name": "tag", "type": "string"},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    ],
}


def _logical(base: str, logical: str, **more) -> dict:
    return {"type": base, "logicalType": logical, **more}


EVERY = {
    "type": "record",
    "name": "Every",
    "namespace": "test.java",
    "doc": "every Avro type, written by Java's avro-tools fromjson",
    "fields": [
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "by", "type": "bytes"},
        {"name": "n", "type": "null"},
        {"name": "date", "type": _logical("int", "date")},
        {"name": "tmillis", "type": _logical("int", "time-millis")},
        {"name": "tmicros", "type": _logical("long", "time-micros")},
        {"name": "tsmillis", "type": _logical("long", "timestamp-millis")},
        {"name": "tsmicros", "type": _logical("long", "timestamp-micros")},
        {"name": "tsnanos", "type": _logical("long", "timestamp-nanos")},
        {"name": "ltsmillis", "type": _logical("long", "local-timestamp-millis")},
        {"name": "ltsmicros", "type": _logical("long", "local-timestamp-micros")},
        {"name": "ltsnanos", "type": _logical("long", "local-timestamp-nanos")},
        {"name": "id", "type": _logical("string", "uuid")},
        {"name": "idf", "type": {"type": "fixed", "name": "U16", "size": 16, "logicalType": "uuid"}},
        {"name": "dec", "type": _logical("bytes", "decimal", precision=10, scale=2)},
        {"name": "decf", "type": D8},
        {"name": "dec40", "type": _logical("bytes", "decimal", precision=40, scale=5)},
        {
            "name": "dec45f",
            "type": {
                "type": "fixed",
                "name": "D20",
                "size": 20,
                "logicalType": "decimal",
                "precision": 45,
                "scale": 10,
            },
        },
        {"name": "dur", "type": {"type": "fixed", "name": "Dur", "size": 12, "logicalType": "duration"}},
        {"name": "fx", "type": F4},
        {"name": "e", "type": COLOR},
        {"name": "opt", "type": ["null", "string"], "default": None},
        {"name": "opt_last", "type": ["long", "null"]},
        {"name": "opt_rec", "type": ["null", POINT]},
        {"name": "opt_e", "type": ["null", "Color"]},
        {"name": "opt_fx", "type": ["null", "F4"]},
        {"name": "opt_dec", "type": ["null", _logical("bytes", "decimal", precision=9, scale=3)]},
        {"name": "opt_ts", "type": ["null", _logical("long", "timestamp-micros")]},
        {"name": "opt_arr", "type": ["null", {"type": "array", "items": "int"}]},
        {"name": "opt_map", "type": [{"type": "map", "values": "string"}, "null"]},
        {"name": "num", "type": ["int", "long", "float", "double"]},
        {"name": "u3", "type": ["null", "int", "string", "Point"]},
        {"name": "named", "type": ["Color", "F4", "Point", OTHER, {"type": "map", "values": "long"}]},
        {
            "name": "uwide",
            "type": [
                "null",
                "boolean",
                "bytes",
                _logical("long", "timestamp-millis"),
                _logical("int", "date"),
                {"type": "array", "items": "double"},
            ],
        },
        {"name": "uarr", "type": ["string", {"type": "array", "items": ["null", "Point"]}]},
        {
            "name": "inner",
            "type": {
                "type": "record",
                "name": "Inner",
                "fields": [
                    {"name": "p", "type": "Point"},
                    {"name": "tags", "type": {"type": "array", "items": "string"}},
                    {"name": "when", "type": _logical("long", "timestamp-millis")},
                    {"name": "nanos", "type": _logical("long", "local-timestamp-nanos")},
                    {"name": "amount", "type": "D8"},
                    {"name": "lists", "type": {"type": "map", "values": {"type": "array", "items": "long"}}},
                    {"name": "deep", "type": ["null", "Other"]},
                ],
            },
        },
        {"name": "pts", "type": {"type": "array", "items": "Point"}},
        {"name": "m", "type": {"type": "map", "values": "long"}},
        {"name": "mrec", "type": {"type": "map", "values": ["null", "Point"]}},
        {"name": "grid", "type": {"type": "array", "items": {"type": "array", "items": "int"}}},
        {"name": "arr_maps", "type": {"type": "array", "items": {"type": "map", "values": "string"}}},
        {"name": "arr_opt", "type": {"type": "array", "items": ["null", "int"]}},
        {"name": "stamps", "type": {"type": "array", "items": _logical("long", "timestamp-nanos")}},
    ],
}

UTC = datetime.timezone.utc
INTS = [0, 1, -1, 2**31 - 1, -(2**31)]
LONGS = [0, -1, 2**63 - 1, -(2**63), 2**53 + 1]
FLOATS = [0.0, 1.1, -2.5, 3.4028234663852886e38, 1.401298464324817e-45, -0.0, 0.1]
DOUBLES = [0.1, -1e308, 5e-324, 1.7976931348623157e308, -0.0, 1 / 3]
TEXTS = ["", "plain", "é", "日本語", "emoji 😀", "line\u2028sep\u0085nel", 'quote" back\\ tab\t nul\x00']
BLOBS = [b"", bytes(range(256)), b"\x85\xff", b"\x00", "é".encode()]
DATES = [
    datetime.date(1970, 1, 1),
    datetime.date(1969, 12, 31),
    datetime.date(1, 1, 1),
    datetime.date(9999, 12, 31),
    datetime.date(2024, 2, 29),
]
TIMES_MS = [datetime.time(0), datetime.time(23, 59, 59, 999000), datetime.time(12, 30, 15, 123000)]
TIMES_US = [datetime.time(0), datetime.time(23, 59, 59, 999999), datetime.time(0, 0, 0, 1)]
# naive: Python's datetime range; each time zone aware below
MOMENTS_MS = [
    datetime.datetime(1970, 1, 1),
    datetime.datetime(1969, 12, 31, 23, 59, 59, 999000),
    datetime.datetime(1, 1, 1),
    datetime.datetime(9999, 12, 31, 23, 59, 59, 999000),
    datetime.datetime(2021, 6, 1, 8, 0, 0, 123000),
]
MOMENTS_US = [
    datetime.datetime(1970, 1, 1, 0, 0, 0, 1),
    datetime.datetime(1969, 12, 31, 23, 59, 59, 999999),
    datetime.datetime(1, 1, 1),
    datetime.datetime(9999, 12, 31, 23, 59, 59, 999999),
    datetime.datetime(1900, 3, 1, 12, 0, 0, 500000),
]
NANOS = [0, -1, 2**63 - 1, -(2**63), 1_700_000_000_123_456_789]
UUIDS = [
    "F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6",  # upper case: the table and fastavro give lower
    "00000000-0000-0000-0000-000000000000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
    str(uuid.UUID(int=2**127 + 12345)),
]
DECIMALS = [Decimal("-12345678.90"), Decimal("0.00"), Decimal("99999999.99"), Decimal("-0.01")]
DECIMALS_18_4 = [Decimal("99999999999999.9999"), Decimal("-99999999999999.9999"), Decimal("0.0001")]
# every digit the precision has (as text: Decimal arithmetic would round to 28 digits)
DECIMALS_40_5 = [Decimal("9" * 40 + "E-5"), Decimal("-" + "9" * 40 + "E-5"), Decimal("-0.00001")]
DECIMALS_45_10 = [Decimal("9" * 45 + "E-10"), Decimal("-" + "9" * 45 + "E-10"), Decimal("1.5")]
ROWS = 24


def pick(values: list, k: int):
    return values[k % len(values)]


def point(k: int) -> dict:
    return {"x": pick(LONGS, k), "y": pick(DOUBLES, k), "f": pick(FLOATS, k)}


def every(k: int) -> dict:
    """Record k of the file of every type, as fastavro's JSON writer takes it."""
    return {
        "b": k % 2 == 0,
        "i": pick(INTS, k),
        "l": pick(LONGS, k),
        "f": pick(FLOATS, k),
        "d": pick(DOUBLES, k),
        "s": pick(TEXTS, k),
        "by": pick(BLOBS, k),
        "n": None,
        "date": pick(DATES, k),
        "tmillis": pick(TIMES_MS, k),
        "tmicros": pick(TIMES_US, k),
        "tsmillis": pick(MOMENTS_MS, k).replace(tzinfo=UTC),
        "tsmicros": pick(MOMENTS_US, k).replace(tzinfo=UTC),
        "tsnanos": pick(NANOS, k),
        "ltsmillis": pick(MOMENTS_MS, k + 1),
        "ltsmicros": pick(MOMENTS_US, k + 1),
        "ltsnanos": pick(NANOS, k + 2),
        "id": pick(UUIDS, k),
        "idf": uuid.UUID(pick(UUIDS, k + 1)).bytes,  # fastavro 1.13 takes a fixed uuid as bytes
        "dec": pick(DECIMALS, k),
        "decf": pick(DECIMALS_18_4, k),
        "dec40": pick(DECIMALS_40_5, k),
        "dec45f": pick(DECIMALS_45_10, k),
        "dur": bytes([255] * 12) if k % 3 == 0 else (k * 1000).to_bytes(4, "little") * 3,
        "fx": k.to_bytes(4, "big") if k % 2 else b"\xff\x00\x85\x7f",
        "e": pick(COLOR["symbols"], k),
        "opt": None if k % 3 == 0 else pick(TEXTS, k),
        "opt_last": None if k % 2 else pick(LONGS, k),
        "opt_rec": None if k % 2 else point(k),
        "opt_e": None if k % 4 == 1 else pick(COLOR["symbols"], k + 1),
        "opt_fx": None if k % 4 == 2 else bytes([k, 0, 0, k]),
        "opt_dec": None if k % 3 == 1 else Decimal(k * 1001 - 7000).scaleb(-3),
        "opt_ts": None if k % 3 == 2 else pick(MOMENTS_US, k + 2).replace(tzinfo=UTC),
        "opt_arr": None if k % 3 == 0 else [pick(INTS, k + j) for j in range(k % 4)],
        "opt_map": None if k % 4 == 3 else {pick(TEXTS, k + j): pick(TEXTS, j) for j in range(k % 5)},
        "num": [pick(INTS, k), pick(LONGS, k), pick(FLOATS, k), pick(DOUBLES, k)][k % 4],
        "u3": [None, pick(INTS, k), pick(TEXTS, k), point(k)][k % 4],
        "named": [
            pick(COLOR["symbols"], k),
            bytes([k, k, k, 0x85]),
            point(k),
            {"tag": pick(TEXTS, k), "day": pick(DATES, k)},
            {f"k{j}": pick(LONGS, j) for j in range(k % 3)},
        ][k % 5],
        "uwide": [
            None,
            k % 2 == 1,
            pick(BLOBS, k),
            pick(MOMENTS_MS, k).replace(tzinfo=UTC),
            pick(DATES, k),
            [pick(DOUBLES, k + j) for j in range(k % 3)],
        ][k % 6],
        "uarr": pick(TEXTS, k) if k % 2 else [None if j % 2 else point(k + j) for j in range(k % 4)],
        "inner": {
            "p": point(k + 3),
            "tags": [pick(TEXTS, k + j) for j in range(k % 3)],
            "when": pick(MOMENTS_MS, k + 2).replace(tzinfo=UTC),
            "nanos": pick(NANOS, k + 3),
            "amount": pick(DECIMALS_18_4, k + 1),
            "lists": {pick(TEXTS, j): [pick(LONGS, j + i) for i in range(j)] for j in range(k % 4)},
            "deep": None if k % 2 else {"tag": pick(TEXTS, k + 1), "day": pick(DATES, k + 1)},
        },
        "pts": [point(k + j) for j in range(k % 3)],
        # many keys: Java prints a map in its HashMap's order, not the file's
        "m": {f"key{j}": pick(LONGS, j) for j in range(k % 4 * 5)},
        "mrec": {"a": None, "b": point(k), "": point(k + 1)} if k % 2 else {},
        "grid": [[pick(INTS, i + j) for i in range(j)] for j in range(k % 4)],
        "arr_maps": [{}, {"é": pick(TEXTS, k)}][: k % 3],
        "arr_opt": [None, pick(INTS, k), None][: k % 4],
        "stamps": [pick(NANOS, k + j) for j in range(k % 3)],
    }


RECORDS = [every(k) for k in range(ROWS)]
# the rows whose "num" Java writes in the long branch, not the int one its JSON
# writer chooses: the table's union keeps the branch Java wrote
LONG_BRANCH = [k for k in range(ROWS) if k % 8 == 0]  # num holds an int in rows k % 4 == 0
# columns whose types are read straight into Arrow buffers (no decimals, no
# uuids: the column reader), last first
AS_STORED = [
    field["name"]
    for field in EVERY["fields"][::-1]
    if field["name"] not in ("id", "idf", "dec", "decf", "dec40", "dec45f", "opt_dec", "inner")
]
MIXED = ["uwide", "dec45f", "idf", "id", "i", "inner", "named"]
UNIONS = ["num", "u3", "named", "uwide", "uarr"]  # more than a null and one type


# fastavro's JSON writer refuses a map's empty key ("No key was set": it tests the
# key's truth): it writes this one instead, and the lines are given the empty key
EMPTY_KEY = "\ue000"


def _empty_keys_as(key: str, value):
    if isinstance(value, dict):  # a map's or a record's (whose field names are never empty)
        return {(key if name == "" else name): _empty_keys_as(key, item) for name, item in value.items()}
    if isinstance(value, list):
        return [_empty_keys_as(key, item) for item in value]
    return value


def every_lines() -> list[str]:
    """The records as lines of Avro JSON, the LONG_BRANCH rows' num in the long branch."""
    lines = json_lines(EVERY, [_empty_keys_as(EMPTY_KEY, record) for record in RECORDS])
    lines = [line.replace(json.dumps(EMPTY_KEY) + ":", '"":') for line in lines]
    for k in LONG_BRANCH:
        value = json.loads(lines[k])
        value["num"] = {"long": value["num"]["int"]}
        lines[k] = json.dumps(value)
    return lines


@pytest.fixture(scope="module")
def java_every(avro_tools, tmp_path_factory) -> dict[str, tuple]:
    """codec -> (the file of every type Java wrote in it, tojson's lines of it)."""
    folder = tmp_path_factory.mktemp("java-every")
    lines = every_lines()

    def write_and_print(codec: str) -> tuple:
        path = avro_tools.fromjson(EVERY, lines, codec, folder / f"every-{codec}.avro")
        return path, avro_tools.tojson(path)

    with ThreadPoolExecutor(JVMS) as pool:
        return dict(zip(JAVA_CODECS, pool.map(write_and_print, JAVA_CODECS)))


def branch_names(union: list) -> list[str]:
    """The names Avro JSON gives a union's branches ({"name": value})."""
    names = []
    for branch in union:
        if isinstance(branch, str):
            names.append(branch)
        elif branch["type"] in ("record", "enum", "fixed"):
            names.append(branch["name"])  # fastavro's parse: the full name
        else:
            names.append(branch["type"])
    return names


@pytest.mark.java
@pytest.mark.parametrize("codec", JAVA_CODECS)
def test_every_type_java_writes_reads_as_fastavro_and_java_read_it(java_every, codec):
    path, printed = java_every[codec]
    with open(path, "rb") as fo:
        assert FileReader(fo).codec == codec
    schema = header_schema(path)
    fastavro_oracle = fastavro_records(path.read_bytes())
    java_oracle = json_records(schema, printed)
    # the oracles agree, and hold the records meant (Java wrote them as given)
    assert oracle_rows(schema, fastavro_oracle) == oracle_rows(schema, java_oracle)
    assert oracle_rows(schema, java_oracle) == oracle_rows(EVERY, RECORDS)
    for oracle in (fastavro_oracle, java_oracle):
        check_table(path, schema, oracle)
        for columns in (AS_STORED, MIXED, ["tsnanos"]):
            check_columns(path, schema, oracle, columns)
    # a union's value is in the branch Java wrote it in: type code = branch index
    table = read_table(path)
    named = named_types(EVERY)
    parsed = {field["name"]: field["type"] for field in named["test.java.Every"]["fields"]}
    printed_values = [json.loads(line) for line in printed]
    for name in UNIONS:
        names = branch_names(parsed[name])
        java_codes = [names.index("null" if v[name] is None else next(iter(v[name]))) for v in printed_values]
        table_codes = [code for chunk in table.column(name).chunks for code in chunk.type_codes.to_pylist()]
        assert table_codes == java_codes, name
    assert all(list(printed_values[k]["num"]) == ["long"] for k in LONG_BRANCH)


@pytest.mark.java
@pytest.mark.parametrize(
    "columns",
    [["opt_rec", "mrec"], ["opt_rec", "id"]],
    ids=["read-into-buffers", "from-python-values"],  # a uuid column takes the Python values
)
def test_a_table_with_null_records_is_written_to_parquet(java_every, columns):
    pq = pytest.importorskip("pyarrow.parquet")
    path, _ = java_every["null"]
    # a null record's fields that are not nullable hold valid zeros, which
    # its validity hides, as in the tables pyarrow builds (Parquet's writer
    # refuses nulls in a field declared not nullable)
    table = read_table(path, columns=columns)
    records = table.column("opt_rec")
    assert records.null_count > 0
    for chunk in records.chunks:
        assert all(chunk.field(i).null_count == 0 for i in range(chunk.type.num_fields))
    out = io.BytesIO()
    pq.write_table(table, out)
    assert table_rows(pq.read_table(out), EVERY) == table_rows(table, EVERY)
