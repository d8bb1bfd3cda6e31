"""The container-file harness against fastavro: avro-tools (tests/java_tools.py) and
fastavro's test files (scripts/fastavro_testdata.py).

Java writes a file in every codec and fastavro reads it; fastavro writes one in every
codec it has here and Java reads it; fastavro reads the files in its own repository,
most of them written by Java. These test the harness, not roastedavro: a failure
here is in the tools, the files or the fixtures. About 17 JVM starts in all.
"""

from __future__ import annotations

import io
import json

import fastavro
import pytest
from fastavro.schema import to_parsing_canonical_form

import java_tools
from java_tools import CODECS, AvroToolsError, fastavro_testdata, json_lines, json_records

# the fixtures (session-scoped, in java_tools)
avro_tools = java_tools.avro_tools
fastavro_files = java_tools.fastavro_files

SCHEMA = {
    "type": "record",
    "name": "Reading",
    "namespace": "test.harness",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "small", "type": "int"},
        {"name": "station", "type": "string"},
        {"name": "raw", "type": "bytes"},
        {"name": "value", "type": "double"},
        {"name": "ratio", "type": "float"},
        {"name": "ok", "type": "boolean"},
        {"name": "nothing", "type": "null"},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}},
        {"name": "tag", "type": {"type": "fixed", "name": "Tag", "size": 4}},
        {"name": "samples", "type": {"type": "array", "items": "int"}},
        {"name": "labels", "type": {"type": "map", "values": "string"}},
        {"name": "note", "type": ["null", "string", "long"]},
        {
            "name": "where",
            "type": {
                "type": "record",
                "name": "Place",
                "fields": [{"name": "lat", "type": "double"}, {"name": "lon", "type": "double"}],
            },
        },
    ],
}

# enough for several blocks at Java's default sync interval (64 KB); floats are
# exact in 32 bits, strings go past ASCII
RECORDS = [
    {
        "id": i * 7919 - 10_000_000,
        "small": (-1) ** i * i,
        "station": f"station-{i % 97}-{'é' * (i % 3)}{'😀' if i % 50 == 0 else ''}",
        "raw": bytes((i + k) % 256 for k in range(i % 9)),
        "value": i / 7,
        "ratio": (i % 64) * 0.25,
        "ok": i % 2 == 0,
        "nothing": None,
        "kind": "ABC"[i % 3],
        "tag": (i * 31).to_bytes(4, "big"),
        "samples": list(range(i % 5)),
        "labels": {f"k{j}": f"v{i}-{j}" for j in range(i % 4)},
        "note": [None, f"n{i}", i * 1_000_003][i % 3],
        "where": {"lat": 50.0 + i / 1000, "lon": -i / 3},
    }
    for i in range(3000)
]
LINES = json_lines(SCHEMA, RECORDS)


def _fastavro_has(codec: str) -> bool:
    try:
        fastavro.writer(io.BytesIO(), {"type": "long"}, [1], codec=codec)
    except ValueError:  # "you need to install one of the following libraries"
        return False
    return True


FASTAVRO_CODECS = [codec for codec in CODECS if _fastavro_has(codec)]


def _blocks(path) -> int:
    with open(path, "rb") as file:
        return sum(1 for _ in fastavro.block_reader(file))


def test_avro_json_round_trip():
    # fromjson's input and tojson's output are read back by fastavro's JSON reader
    assert json_records(SCHEMA, LINES) == RECORDS
    assert json.loads(LINES[2])["note"] == {"long": 2 * 1_000_003}


@pytest.mark.java
@pytest.mark.parametrize("codec", CODECS)
def test_java_writes_fastavro_reads(avro_tools, codec, tmp_path):
    if codec not in FASTAVRO_CODECS:
        pytest.skip(f"fastavro {fastavro.__version__} cannot read {codec} here (no codec library)")
    path = avro_tools.fromjson(SCHEMA, LINES, codec, tmp_path / f"java-{codec}.avro")
    with open(path, "rb") as file:
        reader = fastavro.reader(file)
        assert reader.codec == codec
        assert reader.metadata["avro.codec"] == codec
        assert list(reader) == RECORDS
    assert _blocks(path) > 1


@pytest.mark.java
@pytest.mark.parametrize("codec", CODECS)
def test_fastavro_writes_java_reads(avro_tools, codec, tmp_path):
    if codec not in FASTAVRO_CODECS:
        pytest.skip(f"fastavro {fastavro.__version__} cannot write {codec} here (no codec library)")
    path = tmp_path / f"fastavro-{codec}.avro"
    with open(path, "wb") as file:
        fastavro.writer(file, fastavro.parse_schema(SCHEMA), RECORDS, codec=codec, sync_interval=20_000)
    assert _blocks(path) > 1
    assert json_records(SCHEMA, avro_tools.tojson(path)) == RECORDS


@pytest.mark.java
def test_getmeta_getschema_count(avro_tools, tmp_path):
    path = tmp_path / "meta.avro"
    with open(path, "wb") as file:
        fastavro.writer(
            file,
            fastavro.parse_schema(SCHEMA),
            RECORDS,
            codec="deflate",
            metadata={"created-by": "tests", "note": "ünïcode"},
        )
    meta = avro_tools.getmeta(path)
    assert meta["avro.codec"] == "deflate"
    assert meta["created-by"] == "tests" and meta["note"] == "ünïcode"
    assert json.loads(meta["avro.schema"])["name"] == "test.harness.Reading"
    # Java prints the namespace apart, fastavro writes the full name: compare canonical forms
    assert to_parsing_canonical_form(json.loads(avro_tools.getschema(path))) == to_parsing_canonical_form(
        json.loads(meta["avro.schema"])
    )
    # one JVM counts several files
    assert avro_tools.count([path, path]) == 2 * len(RECORDS)


@pytest.mark.java
def test_java_errors_carry_its_message(avro_tools, tmp_path):
    out = tmp_path / "bad.avro"
    with pytest.raises(AvroToolsError, match="Expected long"):
        avro_tools.fromjson(SCHEMA, ['{"id": "not a long"}'], "null", out)
    assert not out.exists()


# -- fastavro's test files -----------------------------------------------------

TESTDATA = fastavro_testdata()


@pytest.mark.parametrize("name", TESTDATA.java_written())
def test_fastavro_reads_javas_files(fastavro_files, name):
    info = TESTDATA.FILES[name]
    if info.codec not in FASTAVRO_CODECS:
        pytest.skip(f"fastavro {fastavro.__version__} cannot read {info.codec} here")
    with open(fastavro_files / name, "rb") as file:
        reader = fastavro.reader(file)
        assert reader.codec == info.codec
        assert len(list(reader)) == info.records
    assert _blocks(fastavro_files / name) == info.blocks


@pytest.mark.java
def test_java_counts_every_fastavro_file(avro_tools, fastavro_files):
    # one JVM reads every header and block (Python- and Java-written alike)
    names = sorted(TESTDATA.FILES)
    assert avro_tools.count([fastavro_files / name for name in names]) == sum(
        TESTDATA.FILES[name].records for name in names
    )
