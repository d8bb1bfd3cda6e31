"""roastedavro.fastavro against fastavro itself: same calls, same bytes, same values."""

from __future__ import annotations

import copy
import datetime
import decimal
import hashlib
import io
import json
import os
import uuid

import fastavro
import fastavro.schema
import pytest

import roastedavro.fastavro as dropin
from roastedavro.errors import DatumError, SchemaError

codec_module = pytest.importorskip("roastedavro.codec", reason="AvroCodec not available")

ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]}},
        {"name": "previous", "type": ["null", "Status"], "default": None},
        {
            "name": "lines",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Line",
                    "fields": [
                        {"name": "sku", "type": "string"},
                        {"name": "quantity", "type": "int"},
                        {
                            "name": "price",
                            "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
                        },
                    ],
                },
            },
        },
        {"name": "tags", "type": {"type": "map", "values": ["null", "string", "long"]}},
        {"name": "parent", "type": ["null", "Order"], "default": None},
        {"name": "note", "type": "string", "default": "none"},
    ],
}


def order(n: int) -> dict:
    return {
        "id": uuid.UUID(int=n * 7919),
        "placed": datetime.datetime(2026, 1, 2, 3, 4, 5, n, tzinfo=datetime.timezone.utc),
        "status": ["NEW", "PAID", "SHIPPED"][n % 3],
        "previous": None if n % 2 else "NEW",
        "lines": [
            {"sku": f"sku-{i}", "quantity": i - n, "price": decimal.Decimal(f"{i * 3}.{n % 100:02d}")}
            for i in range(n % 4)
        ],
        "tags": {"a": None, "b": f"x{n}", "c": n * 1000},
        "parent": None
        if n % 3
        else {
            "id": uuid.UUID(int=n),
            "placed": datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc),
            "status": "PAID",
            "previous": None,
            "lines": [],
            "tags": {},
            "parent": None,
        },
    }


def fastavro_bytes(schema, datum) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(copy.deepcopy(schema)), datum)
    return out.getvalue()


@pytest.mark.parametrize("parsed", [False, True], ids=["plain", "parsed-by-fastavro"])
def test_writer_and_reader_match_fastavro(parsed):
    schema = fastavro.parse_schema(copy.deepcopy(ORDER)) if parsed else ORDER
    for n in range(12):
        datum = order(n)
        out = io.BytesIO()
        dropin.schemaless_writer(out, schema, datum)
        expected = fastavro_bytes(ORDER, datum)
        assert out.getvalue() == expected
        ours = dropin.schemaless_reader(io.BytesIO(expected), schema)
        theirs = fastavro.schemaless_reader(io.BytesIO(expected), fastavro.parse_schema(copy.deepcopy(ORDER)))
        assert ours == theirs


def test_a_call_is_a_lookup_after_the_first():
    schema = dropin.parse_schema(copy.deepcopy(ORDER))
    from roastedavro.fastavro._codecs import codec_for

    first = codec_for(schema)
    assert codec_for(schema) is first
    # an equal schema given as another object shares the compiled codec
    assert codec_for(copy.deepcopy(ORDER)) is first


def test_parse_schema_returns_fastavros_parsed_form():
    assert dropin.parse_schema(copy.deepcopy(ORDER)) == fastavro.parse_schema(copy.deepcopy(ORDER))


def test_parse_schema_refuses_invalid_schemas_with_schema_error():
    bad = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "Nowhere"}]}
    with pytest.raises(SchemaError, match="R.a.*'Nowhere' is not a defined type"):
        dropin.parse_schema(bad)
    assert issubclass(SchemaError, ValueError)


def test_reading_with_another_reader_schema_resolves_as_fastavro():
    writer = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}
    reader = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "a", "type": "long"}, {"name": "b", "type": "string", "default": "x"}],
    }
    data = fastavro_bytes(writer, {"a": 5})
    assert dropin.schemaless_reader(io.BytesIO(data), writer, reader) == {"a": 5, "b": "x"}


@pytest.mark.parametrize(
    "schema",
    [
        ORDER,
        "long",
        ["null", "string"],
        {"type": "fixed", "name": "F", "namespace": "a.b", "size": 3},
        {"type": "map", "values": {"type": "array", "items": "bytes"}},
    ],
)
def test_canonical_form_and_fingerprints_match_fastavro(schema):
    parsed = fastavro.parse_schema(copy.deepcopy(schema))
    canonical = fastavro.schema.to_parsing_canonical_form(parsed)
    assert dropin.schema.to_parsing_canonical_form(copy.deepcopy(schema)) == canonical
    for algorithm in fastavro.schema.FINGERPRINT_ALGORITHMS:
        if algorithm.startswith("shake"):
            continue  # fastavro needs a length for these
        assert dropin.schema.fingerprint(canonical, algorithm) == fastavro.schema.fingerprint(
            canonical, algorithm
        ), algorithm
    assert dropin.schema.fingerprint(canonical, "sha256") == hashlib.sha256(canonical.encode()).hexdigest()


def test_load_schema_follows_names_to_other_files(tmp_path):
    (tmp_path / "shop.Address.avsc").write_text(
        json.dumps(
            {
                "type": "record",
                "name": "Address",
                "namespace": "shop",
                "fields": [{"name": "city", "type": "string"}],
            }
        )
    )
    (tmp_path / "shop.Customer.avsc").write_text(
        json.dumps(
            {
                "type": "record",
                "name": "Customer",
                "namespace": "shop",
                "fields": [
                    {"name": "home", "type": "Address"},
                    {"name": "work", "type": ["null", "Address"]},
                ],
            }
        )
    )
    ours = dropin.load_schema(tmp_path / "shop.Customer.avsc")
    theirs = fastavro.schema.load_schema(str(tmp_path / "shop.Customer.avsc"))
    assert fastavro.schema.to_parsing_canonical_form(ours) == fastavro.schema.to_parsing_canonical_form(
        theirs
    )
    datum = {"home": {"city": "Oslo"}, "work": {"city": "Bergen"}}
    out = io.BytesIO()
    dropin.schemaless_writer(out, ours, datum)
    assert out.getvalue() == fastavro_bytes(theirs, datum)


def test_the_rest_of_fastavros_api_is_fastavros():
    assert dropin.validate is fastavro.validate
    assert dropin.schema.expand_schema is fastavro.schema.expand_schema
    with pytest.raises(AttributeError):
        _ = dropin.no_such_function


def test_schemaless_reader_reads_a_stream_of_datums_as_fastavro(tmp_path):
    schema = dropin.parse_schema(copy.deepcopy(ORDER))
    data = b"".join(fastavro_bytes(ORDER, order(n)) for n in range(5))
    theirs, stream = [], io.BytesIO(data)
    while True:
        try:
            theirs.append(fastavro.schemaless_reader(stream, schema))
        except EOFError:
            break
    path = tmp_path / "datums.bin"
    path.write_bytes(data)
    with open(path, "rb") as file:
        for fo in (io.BytesIO(data), file):
            ours = []
            while True:
                try:
                    ours.append(dropin.schemaless_reader(fo, schema))
                except EOFError:
                    break
            assert ours == theirs and len(ours) == 5
    # a truncated datum is a DecodeError, not a silently shorter stream
    from roastedavro import DecodeError

    with pytest.raises(DecodeError):
        dropin.schemaless_reader(io.BytesIO(fastavro_bytes(ORDER, order(4))[:-1]), schema)


def test_serving_data_imports_no_code_generator_compiler_or_marshmallow(tmp_path):
    # the drop-in serves from tier 0 and looks up a stored codec in the
    # background: neither needs jinja2, the generators, Cython or marshmallow
    # (memory and import time a fastavro script would not pay)
    import subprocess
    import sys

    heavy = (
        "jinja2",
        "Cython",
        "marshmallow",
        "roastedavro.codegen",
        "roastedavro.avrogen",
        "roastedavro.resolvegen",
        "roastedavro.avrojson",
    )
    probe = f"""
import io, sys
import roastedavro.fastavro as fa
heavy = {heavy!r}
print(sorted(name for name in heavy if name in sys.modules))
schema = fa.parse_schema({{"type": "record", "name": "R", "fields": [
    {{"name": "a", "type": "long"}}, {{"name": "b", "type": ["null", "string", "double"]}}]}})
for i in range(200):
    out = io.BytesIO()
    fa.schemaless_writer(out, schema, {{"a": i, "b": (None, "x", 1.5)[i % 3]}})
    assert fa.schemaless_reader(io.BytesIO(out.getvalue()), schema)["a"] == i
container = io.BytesIO()
fa.writer(container, schema, [{{"a": 1, "b": "y"}}] * 10)
container.seek(0)
assert len(list(fa.reader(container))) == 10
import roastedavro.codec
for engine in list(roastedavro.codec._engines.values()):
    assert engine.wait(60)
print(sorted(name for name in heavy if name in sys.modules))
"""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    for policy in ("auto", "never"):
        env = {**os.environ, "ROASTEDAVRO_COMPILE": policy, "ROASTEDAVRO_CACHE_DIR": str(cache)}
        result = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[-2:] == ["[]", "[]"], (policy, result.stdout)


def test_a_dict_that_changes_while_written_is_fastavros_runtime_error():
    # fastavro's dict iteration raises RuntimeError; the drop-in's DatumError is one too
    schema = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "m", "type": {"type": "map", "values": "double"}}],
    }

    class Growing:
        def __init__(self, entries):
            self.entries = entries

        def __float__(self):
            self.entries["added"] = 2.0
            return 1.0

    for module in (fastavro, dropin):
        entries = {"a": 0.0}
        entries["b"] = Growing(entries)
        with pytest.raises(RuntimeError):
            module.schemaless_writer(io.BytesIO(), module.parse_schema(schema), {"m": entries})
    entries = {"a": 0.0}
    entries["b"] = Growing(entries)
    with pytest.raises(DatumError, match="m: the dict changed size"):
        dropin.schemaless_writer(io.BytesIO(), schema, {"m": entries})
