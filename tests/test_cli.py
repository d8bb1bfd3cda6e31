"""The roastedavro command: what each subcommand prints, and its exit codes.

Files are written and checked with fastavro; schemas' canonical forms and
fingerprints are checked against fastavro's; tojson, fromjson and cat on
unions (records of one shape, float/double, int/long, bytes/string) against
Java's avro-tools.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import fastavro
import pytest

import java_tools
from roastedavro.cli import main
from roastedavro.container import FileReader

avro_tools = java_tools.avro_tools

SCHEMA = {
    "type": "record",
    "name": "Reading",
    "namespace": "sensors",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "raw", "type": "bytes"},
    ],
}
RECORDS = [
    {"id": number, "note": None if number % 3 else f"n{number}", "raw": bytes([number % 256])}
    for number in range(2500)
]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    schema_file = folder / "sensors.Reading.avsc"
    schema_file.write_text(json.dumps(SCHEMA))
    data = folder / "readings.avro"
    with open(data, "wb") as fo:
        fastavro.writer(
            fo,
            fastavro.parse_schema(SCHEMA),
            RECORDS,
            codec="deflate",
            metadata={"origin": "tests"},
            sync_interval=4000,
        )
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
    result = subprocess.run(
        [sys.executable, "-m", "roastedavro", "count", str(data)],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
        cwd=Path(data).parent,
    )
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
    piped = io.StringIO()  # not a terminal: nothing
    monkeypatch.setattr(sys, "stderr", piped)
    assert run("cat", data, "-o", tmp_path / "copy2.avro")[0] == 0
    assert piped.getvalue() == ""


# -- union branches: as stored, as named ------------------------------------------------------

BRANCHES = {
    "type": "record",
    "name": "Change",
    "namespace": "db",
    "fields": [
        {
            "name": "op",
            "type": [
                {"type": "record", "name": "Create", "fields": [{"name": "id", "type": "long"}]},
                {"type": "record", "name": "Delete", "fields": [{"name": "id", "type": "long"}]},
            ],
        },
        {"name": "number", "type": ["null", "float", "double"]},
        {"name": "count", "type": ["int", "long"]},
        {"name": "payload", "type": ["bytes", "string"]},
        {"name": "numbers", "type": {"type": "array", "items": ["double", "float"]}},
    ],
}
BRANCH_LINES = [
    '{"op":{"db.Delete":{"id":1}},"number":{"float":1.5},"count":{"long":1},'
    '"payload":{"string":"abc"},"numbers":[{"float":0.5},{"double":0.5}]}',
    '{"op":{"db.Create":{"id":2}},"number":{"double":1.5},"count":{"int":1},'
    '"payload":{"bytes":"abc"},"numbers":[]}',
    '{"op":{"db.Delete":{"id":3}},"number":null,"count":{"long":-1},'
    '"payload":{"bytes":"\\u00ff\\u0000"},"numbers":[{"float":"NaN"},{"double":"-Infinity"}]}',
    '{"op":{"db.Create":{"id":4}},"number":{"float":0.1},"count":{"long":2147483648},'
    '"payload":{"string":"\\u00e9"},"numbers":[{"double":0.1}]}',
] * 3


def block_data(path) -> bytes:
    """The records' bytes of a container file, all blocks' decompressed data."""
    with open(path, "rb") as fo:
        reader = FileReader(fo)
        return b"".join(reader.decompress(block) for block in reader.blocks())


@pytest.fixture(scope="module")
def branch_files(tmp_path_factory, avro_tools):
    folder = tmp_path_factory.mktemp("branches")
    schema_file = folder / "db.Change.avsc"
    schema_file.write_text(json.dumps(BRANCHES))
    lines = folder / "changes.json"
    lines.write_text("\n".join(BRANCH_LINES) + "\n", encoding="utf-8")
    java_file = avro_tools.fromjson(BRANCHES, BRANCH_LINES, "deflate", folder / "java.avro")
    return folder, schema_file, lines, java_file


@pytest.mark.java
def test_tojson_prints_the_branch_the_bytes_hold_as_avro_tools(branch_files, avro_tools):
    _, _, _, java_file = branch_files
    code, text = run("tojson", java_file)
    assert code == 0
    javas = [json.loads(line) for line in avro_tools.tojson(java_file)]
    assert [json.loads(line) for line in text.splitlines()] == javas
    assert javas == [json.loads(line) for line in BRANCH_LINES]


READER = {
    **BRANCHES,
    "fields": [
        {
            "name": "op",
            "type": [
                {"type": "record", "name": "Delete", "fields": [{"name": "id", "type": "double"}]},
                {"type": "record", "name": "Create", "fields": [{"name": "id", "type": "long"}]},
            ],
        },
        {"name": "number", "type": ["null", "double", "float"]},
        {"name": "count", "type": ["long", "int"]},
        {"name": "payload", "type": ["string", "bytes"]},
        {"name": "added", "type": {"type": "map", "values": "int"}, "default": {"a": 1}},
    ],
}


@pytest.mark.java
def test_tojson_with_a_reader_schema_as_avro_tools(branch_files, avro_tools, tmp_path):
    _, _, _, java_file = branch_files
    reader_file = tmp_path / "reader.avsc"
    reader_file.write_text(json.dumps(READER))
    code, text = run("tojson", java_file, "--reader-schema-file", reader_file)
    assert code == 0
    ours = [json.loads(line) for line in text.splitlines()]
    assert ours == [json.loads(line) for line in avro_tools.tojson(java_file, reader_schema=READER)]
    assert ours[0]["op"] == {"db.Delete": {"id": 1.0}} and ours[1]["number"] == {"double": 1.5}
    assert ours[0]["number"] == {"float": 1.5} and ours[0]["count"] == {"long": 1}


@pytest.mark.java
def test_fromjson_writes_the_branch_the_json_names_as_avro_tools(branch_files, avro_tools, tmp_path):
    _, schema_file, lines, java_file = branch_files
    ours = tmp_path / "ours.avro"
    assert run("fromjson", "--schema-file", schema_file, "--codec", "deflate", lines, "-o", ours)[0] == 0
    assert block_data(ours) == block_data(java_file)
    assert avro_tools.tojson(ours) == avro_tools.tojson(java_file)


@pytest.mark.java
def test_cat_copies_the_records_bytes(branch_files, avro_tools, tmp_path):
    _, _, _, java_file = branch_files
    copy = tmp_path / "copy.avro"
    assert run("cat", java_file, java_file, "-o", copy)[0] == 0
    assert block_data(copy) == block_data(java_file) * 2
    assert avro_tools.tojson(copy) == avro_tools.tojson(java_file) * 2
    cut = tmp_path / "cut.avro"
    assert (
        run("cat", java_file, java_file, "-o", cut, "--codec", "bzip2", "--offset", 10, "--limit", 4)[0] == 0
    )
    with open(cut, "rb") as fo:
        assert FileReader(fo).codec == "bzip2"
    expected = [json.loads(line) for line in (BRANCH_LINES * 2)[10:14]]
    assert [json.loads(line) for line in avro_tools.tojson(cut)] == expected


# -- failures: clean, one line, naming the file and the line; nothing left behind -------------


def test_a_failed_fromjson_leaves_no_output(files, tmp_path, capsys):
    _, schema_file, _ = files
    out = tmp_path / "out.avro"
    missing = tmp_path / "missing.json"
    assert run("fromjson", "--schema-file", schema_file, missing, "-o", out)[0] == 1
    assert "missing.json: No such file" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": 1, "raw": "a"}\n\n{"id": 2, "raw": "a", "note": {"strin": "x"}}\n')
    out.write_bytes(b"what was there")
    assert run("fromjson", "--schema-file", schema_file, bad, "-o", out)[0] == 1
    assert capsys.readouterr().err == (
        f"roastedavro fromjson: {bad}: line 3 (record 2): note: 'strin' is not a branch of the "
        "union [null, string]\n"
    )
    assert out.read_bytes() == b"what was there"  # the old file stays, no temporary is left
    assert sorted(path.name for path in tmp_path.iterdir()) == ["bad.json", "out.avro"]
    bad.write_text('{"id": 1, "raw": "a"}\n{"id": 2, "raw": "a"}\n')
    assert run("fromjson", "--schema-file", schema_file, bad, "-o", out)[0] == 0
    with open(out, "rb") as fo:
        assert [record["id"] for record in fastavro.reader(fo)] == [1, 2]


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"id": 1, "raw": "a"}\n{"id": NaN, "raw": "a"}\n', "line 2: not valid JSON: NaN is not JSON"),
        ('{"id": 1, "raw": "a"}\n{"id": -Infinity, "raw": ""}\n', "line 2: not valid JSON: -Infinity"),
        ('{"id": ' + "9" * 5000 + ', "raw": ""}\n', "line 1: not valid JSON: a number of more than"),
        ("\n\n" + "[" * 100_000 + "]" * 100_000 + "\n", "line 3: the JSON is nested too deeply"),
        ('{"id": 1,\n "raw": "a"}\n{"id": 2,\n "raw": nul}\n', "line 4: not valid JSON: Expecting value"),
        ('{"id": 1,\n "raw": "a"\n', "line 1: not valid JSON: the value is not complete"),
        (
            '{"id": 1, "raw": ""} {"id": 2, "raw": "}"}\n\n{"id": 3,\n "raw": 5}\n',
            "line 3 (record 3): raw: expected a string",
        ),
        ('{"id": 1, "raw": "a"}\n{"id": 1.5, "raw": "a"}\n', "line 2 (record 2): id: expected a long"),
    ],
)
def test_fromjson_errors_name_the_line(files, tmp_path, capsys, text, message):
    _, schema_file, _ = files
    source = tmp_path / "in.json"
    source.write_text(text)
    assert run("fromjson", "--schema-file", schema_file, source, "-o", tmp_path / "o.avro")[0] == 1
    err = capsys.readouterr().err
    assert err.startswith(f"roastedavro fromjson: {source}: {message}") and err.count("\n") == 1
    assert not (tmp_path / "o.avro").exists()


def test_pretty_json_records_are_read(files, tmp_path):
    _, schema_file, _ = files
    source = tmp_path / "in.json"
    source.write_text(
        '{\n  "id": 1,\n  "raw": "\\u00ff"\n}\n{"id": 2, "raw": ""} {"id": 3, '
        '"raw": "", "note": {"string": "x"}}\n'
    )
    out = tmp_path / "o.avro"
    assert run("fromjson", "--schema-file", schema_file, source, "-o", out)[0] == 0
    with open(out, "rb") as fo:
        assert list(fastavro.reader(fo)) == [
            {"id": 1, "note": None, "raw": b"\xff"},
            {"id": 2, "note": None, "raw": b""},
            {"id": 3, "note": "x", "raw": b""},
        ]


def test_canonical_says_when_a_file_is_not_a_schema(tmp_path, capsys):
    cases = [
        (b"hello\n", "not a schema: not JSON"),
        (b"\xff\xfe{}", "not a schema: not UTF-8"),
        (b'"hello"', "not a valid schema: "),
        (b'{"type": "record"}', "not a valid schema: "),
    ]
    for number, (data, message) in enumerate(cases):
        path = tmp_path / f"schema{number}.avsc"
        path.write_bytes(data)
        assert run("canonical", path)[0] == 1
        err = capsys.readouterr().err
        assert err.startswith(f"roastedavro canonical: {path}: {message}"), err
        assert err.count("\n") == 1


def test_damaged_files_are_one_line_naming_the_file(files, tmp_path):
    _, _, data = files
    damaged = tmp_path / "damaged.avro"
    raw = bytearray(data.read_bytes())
    with open(data, "rb") as fo:
        second = list(FileReader(fo).blocks())[1]
    raw[second.offset + 8] ^= 0xFF  # inside the block's compressed data
    damaged.write_bytes(bytes(raw))
    for command in (
        ["tojson", damaged],
        ["cat", damaged, "-o", tmp_path / "copy.avro"],
        ["count", tmp_path / "none.avro"],
        ["getschema", data.parent / "sensors.Reading.avsc"],
    ):
        result = subprocess.run(
            [sys.executable, "-m", "roastedavro", *map(str, command)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert result.returncode == 1, result
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.startswith(f"roastedavro {command[0]}: {command[1]}: "), result.stderr
        if command[1] == damaged:
            assert "block 1" in result.stderr, result.stderr
    assert not (tmp_path / "copy.avro").exists()


def test_a_few_bytes_announcing_millions_of_records_are_refused(tmp_path, capsys):
    from roastedavro._datum import encode_long
    from roastedavro.container import FileWriter

    path = tmp_path / "empty-records.avro"
    with open(path, "wb") as fo:
        writer = FileWriter(fo, {"type": "record", "name": "E", "fields": []}, "null", encode_block=b"".join)
        fo.write(encode_long(36_000_000) + encode_long(0) + writer.sync_marker)
    for command in (["tojson", path], ["cat", path, "-o", tmp_path / "copy.avro"]):
        assert run(*command)[0] == 1
        err = capsys.readouterr().err
        assert (
            err.startswith(f"roastedavro {command[0]}: {path}: block 0: ") and "item budget exceeded" in err
        ), err
    assert run("count", path) == (0, "36000000\n")  # nothing decoded: the count is the header's


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["--version"])
    assert raised.value.code == 0
    from roastedavro import __version__

    assert capsys.readouterr().out == f"roastedavro {__version__}\n"
    for command in (
        "tojson",
        "fromjson",
        "getschema",
        "getmeta",
        "count",
        "cat",
        "canonical",
        "fingerprint",
        "cache",
    ):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = capsys.readouterr().out
        positionals = text.split("positional arguments:")[1].split("options:")[0]
        lines = [line for line in positionals.splitlines() if line.strip()]
        assert lines and all(len(line.split(None, 1)) == 2 or line.startswith(" " * 8) for line in lines), (
            command,
            positionals,
        )


def test_light_commands_import_no_compiler(files):
    _, _, data = files
    probe = (
        "import sys\nfrom roastedavro.cli import main\n"
        f"for command in ('count', 'getschema', 'getmeta'): main([command, {str(data)!r}])\n"
        "print(sorted(name for name in ('roastedavro.codec', 'roastedavro.compiler', "
        "'roastedavro._runtime', 'jinja2', 'Cython', 'fastavro', 'marshmallow') "
        "if name in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=Path(data).parent
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "[]"


def test_cat_refuses_files_whose_schemas_differ_beyond_docs(files, tmp_path, capsys):
    _, _, data = files
    for number, change in enumerate(
        [
            {"doc": "the same records"},
            {"fields": [{**SCHEMA["fields"][0], "doc": "an id"}, *SCHEMA["fields"][1:]]},
        ]
    ):
        same = tmp_path / f"documented{number}.avro"
        with open(same, "wb") as fo:
            fastavro.writer(fo, fastavro.parse_schema({**SCHEMA, **change}), RECORDS[:3])
        assert run("cat", data, same, "-o", tmp_path / "both.avro")[0] == 0
        with open(tmp_path / "both.avro", "rb") as fo:
            assert list(fastavro.reader(fo)) == RECORDS + RECORDS[:3]
    # the same canonical form, but the longs are timestamps here: not copied under "long"
    stamped = tmp_path / "stamped.avro"
    timestamps = {
        **SCHEMA,
        "fields": [
            {"name": "id", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            *SCHEMA["fields"][1:],
        ],
    }
    with open(stamped, "wb") as fo:
        fastavro.writer(fo, fastavro.parse_schema(timestamps), [], codec="null")
    assert run("cat", data, stamped, "-o", tmp_path / "mixed.avro")[0] == 1
    assert capsys.readouterr().err == (f"roastedavro cat: {stamped}: its schema is not the first file's\n")
    assert not (tmp_path / "mixed.avro").exists()


def test_output_keeps_an_existing_files_permissions_and_devices_stay(files, tmp_path):
    _, _, data = files
    out = tmp_path / "copy.avro"
    out.write_bytes(b"old")
    out.chmod(0o640)
    assert run("cat", data, "-o", out, "--limit", 5)[0] == 0
    assert (out.stat().st_mode & 0o777) == 0o640
    with open(out, "rb") as fo:
        assert list(fastavro.reader(fo)) == RECORDS[:5]
    # a named pipe (as /dev/stdout or /dev/null would be) is written to, not replaced by a file
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()))
    reader.start()
    assert run("cat", data, "-o", pipe, "--limit", 5)[0] == 0
    reader.join(60)
    assert not pipe.is_file() and list(fastavro.reader(io.BytesIO(received[0]))) == RECORDS[:5]
    assert run("cat", data, "-o", tmp_path / "no" / "such" / "folder.avro")[0] == 1
