"""The roastedavro command: what each subcommand prints, and its exit codes.

Files are written and checked with fastavro; schemas' canonical forms and
fingerprints are checked against fastavro's.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import fastavro
import pytest

from roastedavro.cli import main

SCHEMA = {"type": "record", "name": "Reading", "namespace": "sensors", "fields": [
    {"name": "id", "type": "long"},
    {"name": "note", "type": ["null", "string"], "default": None},
    {"name": "raw", "type": "bytes"},
]}
RECORDS = [{"id": number, "note": None if number % 3 else f"n{number}", "raw": bytes([number % 256])}
           for number in range(2500)]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    schema_file = folder / "sensors.Reading.avsc"
    schema_file.write_text(json.dumps(SCHEMA))
    data = folder / "readings.avro"
    with open(data, "wb") as fo:
        fastavro.writer(fo, fastavro.parse_schema(SCHEMA), RECORDS, codec="deflate",
                        metadata={"origin": "tests"}, sync_interval=4000)
    return folder, schema_file, data


def run(*argv) -> tuple[int, str]:
    out = io.StringIO()
    code = main([str(arg) for arg in argv], out)
    return code, out.getvalue()


def test_getschema_getmeta_count(files):
    _, _, data = files
    code, text = run("getschema", data)
    assert code == 0 and json.loads(text) == {**SCHEMA, "fields": SCHEMA["fields"]}
    code, text = run("getmeta", data)
    lines = dict(line.split("\t", 1) for line in text.splitlines())
    assert lines["origin"] == "tests" and lines["avro.codec"] == "deflate"
    assert run("getmeta", data, "--key", "origin") == (0, "tests\n")
    assert run("count", data) == (0, f"{len(RECORDS)}\n")


def test_canonical_and_fingerprint(files):
    _, schema_file, _ = files
    parsed = fastavro.parse_schema(SCHEMA)
    canonical = fastavro.schema.to_parsing_canonical_form(parsed)
    assert run("canonical", schema_file) == (0, canonical + "\n")
    for algorithm in ("CRC-64-AVRO", "MD5", "SHA-256"):
        expected = fastavro.schema.fingerprint(canonical, algorithm)
        assert run("fingerprint", schema_file, "--algorithm", algorithm) == (0, expected + "\n")


def test_cat_concatenates_and_recompresses(files, tmp_path):
    _, _, data = files
    out = tmp_path / "both.avro"
    assert run("cat", data, data, "-o", out, "--codec", "bzip2")[0] == 0
    with open(out, "rb") as fo:
        reader = fastavro.reader(fo)
        assert reader.codec == "bzip2" and list(reader) == RECORDS + RECORDS
    assert run("cat", data, "-o", out, "--offset", 100, "--limit", 50)[0] == 0
    with open(out, "rb") as fo:
        assert list(fastavro.reader(fo)) == RECORDS[100:150]


def test_bad_input_exits_1_with_a_message(files, tmp_path, capsys):
    _, schema_file, _ = files
    assert run("count", tmp_path / "missing.avro")[0] == 1
    assert "No such file" in capsys.readouterr().err
    assert run("count", schema_file)[0] == 1
    assert "not an Avro container file" in capsys.readouterr().err
    truncated = tmp_path / "cut.avro"
    truncated.write_bytes(files[2].read_bytes()[:-30])
    assert run("count", truncated)[0] == 1
    assert "block" in capsys.readouterr().err
    with pytest.raises(SystemExit) as raised:
        main(["no-such-command"])
    assert raised.value.code == 2


def test_python_dash_m_and_the_console_script(files):
    _, _, data = files
    result = subprocess.run([sys.executable, "-m", "roastedavro", "count", str(data)],
                            capture_output=True, text=True, timeout=120, env=dict(os.environ),
                            cwd=Path(data).parent)
    assert result.returncode == 0 and result.stdout == f"{len(RECORDS)}\n"


def test_progress_shows_on_a_terminal_only(files, tmp_path, monkeypatch):
    import roastedavro.cli as cli_module

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    ticks = iter(range(0, 10**6, 1))
    monkeypatch.setattr(cli_module.time, "monotonic", lambda: next(ticks))  # a second per call
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    _, _, data = files
    assert run("cat", data, "-o", tmp_path / "copy.avro")[0] == 0
    shown = terminal.getvalue()
    assert "cat: " in shown and "records" in shown and shown.endswith("\r")
    piped = io.StringIO()   # not a terminal: nothing
    monkeypatch.setattr(sys, "stderr", piped)
    assert run("cat", data, "-o", tmp_path / "copy2.avro")[0] == 0
    assert piped.getvalue() == ""
