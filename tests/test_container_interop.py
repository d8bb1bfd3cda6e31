"""roastedavro's container files against Java's avro-tools and Java-written files.

* Files roastedavro writes, in every codec, are read by avro-tools ``tojson``
  to the same output as fastavro's file of the same records.
* Files avro-tools writes (``fromjson --codec``) read here as fastavro reads them.
* The Java-written files in fastavro's repository read here as fastavro reads them.
* Our ``roastedavro tojson`` prints the JSON values Java's prints, and Java
  reads what ``roastedavro fromjson`` writes.
"""

from __future__ import annotations

import io
import json

import fastavro
import pytest

import java_tools
import roastedavro.fastavro as dropin
from java_tools import CODECS, fastavro_testdata
from roastedavro.cli import main as cli
from roastedavro.container import FileReader
from test_container_java import FASTAVRO_CODECS, LINES, RECORDS, SCHEMA

avro_tools = java_tools.avro_tools
fastavro_files = java_tools.fastavro_files


@pytest.mark.java
@pytest.mark.parametrize("codec", CODECS)
def test_java_reads_our_files_as_fastavros(avro_tools, codec, tmp_path):
    ours = tmp_path / f"ours-{codec}.avro"
    with open(ours, "wb") as fo:
        dropin.writer(fo, SCHEMA, RECORDS, codec=codec, sync_interval=20_000)
    lines = avro_tools.tojson(ours)
    if codec in FASTAVRO_CODECS:
        theirs = tmp_path / f"fastavro-{codec}.avro"
        with open(theirs, "wb") as fo:
            fastavro.writer(fo, fastavro.parse_schema(SCHEMA), RECORDS, codec=codec)
        assert lines == avro_tools.tojson(theirs)
    else:
        assert [json.loads(line) for line in lines] == [json.loads(line) for line in LINES]


@pytest.mark.java
@pytest.mark.parametrize("codec", CODECS)
def test_we_read_javas_files_as_fastavro(avro_tools, codec, tmp_path):
    path = avro_tools.fromjson(SCHEMA, LINES, codec, tmp_path / f"java-{codec}.avro")
    with open(path, "rb") as fo:
        reader = FileReader(fo)
        assert reader.codec == codec
        assert list(reader) == RECORDS
    with open(path, "rb") as fo:
        assert sum(block.count for block in dropin.block_reader(fo)) == len(RECORDS)


TESTDATA = fastavro_testdata()


@pytest.mark.parametrize("name", TESTDATA.java_written())
def test_we_read_the_java_written_files_fastavro_ships(fastavro_files, name):
    path = fastavro_files / name
    with open(path, "rb") as fo:
        expected = list(fastavro.reader(fo))
    with open(path, "rb") as fo:
        assert list(dropin.reader(fo)) == expected


@pytest.mark.java
def test_our_tojson_and_fromjson_agree_with_javas(avro_tools, tmp_path):
    path = avro_tools.fromjson(SCHEMA, LINES, "deflate", tmp_path / "java.avro")
    out = io.StringIO()
    assert cli(["tojson", str(path)], out) == 0
    ours = [json.loads(line) for line in out.getvalue().split("\n") if line]  # not splitlines: U+0085
    assert ours == [json.loads(line) for line in avro_tools.tojson(path)]
    # Java reads what our fromjson writes from Java's JSON
    source = tmp_path / "records.json"
    source.write_text("\n".join(avro_tools.tojson(path)) + "\n", encoding="utf-8")
    schema_file = tmp_path / "test.harness.Reading.avsc"
    schema_file.write_text(json.dumps(SCHEMA))
    written = tmp_path / "ours.avro"
    assert (
        cli(
            [
                "fromjson",
                "--schema-file",
                str(schema_file),
                "--codec",
                "snappy",
                str(source),
                "-o",
                str(written),
            ],
            io.StringIO(),
        )
        == 0
    )
    assert avro_tools.tojson(written) == avro_tools.tojson(path)
