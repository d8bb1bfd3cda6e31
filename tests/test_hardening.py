"""Defects that changed data or trusted too much: precompiled-codec packages
with malformed manifests, decimals beyond their precision, union branches
that lose part of a value."""

from __future__ import annotations

import json
import sys
import warnings

import pytest

from roastedavro import AvroCodec, precompiled

# -- precompiled-codec packages -------------------------------------------------------

SIMPLE = {"type": "record", "name": "hardening.Simple",
          "fields": [{"name": "a", "type": "long"}, {"name": "b", "type": "string"}]}


def _fake_package(site, name, manifest):
    """An installed distribution declaring ``name`` in the codecs entry point group."""
    package = site / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / precompiled.MANIFEST).write_text(json.dumps(manifest))
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{precompiled.GROUP}]\n{name} = {name}\n")


def _manifest(**entry):
    from roastedavro import __version__
    from roastedavro.compiler import EXT_SUFFIX

    return {"format": precompiled.FORMAT, "roastedavro": __version__, "ext_suffix": EXT_SUFFIX,
            "codecs": {"k" * 64: entry}}


@pytest.mark.parametrize("entry", [
    {"module": "broken_codecs.m", "file": "m.so"},  # no sha256
    {"module": "broken_codecs.m", "file": "m.so", "sha256": 12},
    {"file": "m.so", "sha256": "0" * 64},
    {"module": "broken_codecs.m", "file": "../../m.so", "sha256": "0" * 64},
    "not an object",
])
def test_a_malformed_precompiled_package_is_ignored_with_a_warning(tmp_path, monkeypatch, entry):
    manifest = _manifest(**entry) if isinstance(entry, dict) else dict(_manifest(), codecs={"k": entry})
    _fake_package(tmp_path, "broken_codecs", manifest)
    monkeypatch.syspath_prepend(str(tmp_path))
    precompiled.refresh()
    try:
        with pytest.warns(precompiled.PrecompiledWarning, match="'broken_codecs'"):
            assert precompiled.lookup("k" * 64) is None  # what every codec asks first
        codec = AvroCodec(SIMPLE)  # an unrelated schema keeps working
        assert codec.load(codec.dump({"a": 1, "b": "x"})) == {"a": 1, "b": "x"}
        assert precompiled.packages()["broken_codecs"]["usable"] is False
    finally:
        monkeypatch.undo()
        precompiled.refresh()
        sys.modules.pop("broken_codecs", None)


def test_a_well_formed_manifest_is_indexed(tmp_path, monkeypatch):
    _fake_package(tmp_path, "fine_codecs", _manifest(module="fine_codecs.m", file="m.so",
                                                     sha256="a" * 64, label="x"))
    monkeypatch.syspath_prepend(str(tmp_path))
    precompiled.refresh()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", precompiled.PrecompiledWarning)
            found = precompiled.lookup("k" * 64)
        assert found is not None and found.package == "fine_codecs" and found.sha256 == "a" * 64
    finally:
        monkeypatch.undo()
        precompiled.refresh()


# -- decimal defaults ---------------------------------------------------------------------

def _decimal_record(default, kind="bytes", precision=4):
    decimal_type = {"type": kind, "logicalType": "decimal", "precision": precision, "scale": 2}
    if kind == "fixed":
        decimal_type.update(name="hardening.Money", size=8)
    return {"type": "record", "name": "hardening.Priced",
            "fields": [{"name": "price", "type": decimal_type, "default": default}]}


def _code_points(unscaled: int, size: int | None = None) -> str:
    length = size or max(1, (unscaled.bit_length() + 8) // 8)
    return unscaled.to_bytes(length, "big", signed=True).decode("latin-1")


@pytest.mark.parametrize("kind,size", [("bytes", None), ("fixed", 8)])
@pytest.mark.parametrize("unscaled", [10**4, -(10**4), 10**6, 2**63 - 1])
def test_a_decimal_default_with_too_many_digits_is_a_schema_error(kind, size, unscaled):
    from roastedavro.avro import parse_schema
    from roastedavro.errors import SchemaError

    with pytest.raises(SchemaError, match=r"Priced\.price.*decimal\(4, 2\) default has at most 4 digits"):
        parse_schema(_decimal_record(_code_points(unscaled, size), kind))


@pytest.mark.parametrize("unscaled", [9999, -9999, 0, 1234])
def test_a_decimal_default_within_its_precision_parses(unscaled):
    from roastedavro.avro import parse_schema

    parse_schema(_decimal_record(_code_points(unscaled), "bytes"))
    parse_schema(_decimal_record(_code_points(unscaled, 8), "fixed"))


def test_a_decimal_default_in_a_union_is_checked_against_its_branch():
    from roastedavro.avro import parse_schema
    from roastedavro.errors import SchemaError

    schema = _decimal_record(_code_points(10**5))
    schema["fields"][0]["type"] = [schema["fields"][0]["type"], "null"]
    with pytest.raises(SchemaError, match="matches no branch"):
        parse_schema(schema)


def test_a_huge_decimal_default_is_checked_in_proportion_to_its_length():
    from roastedavro.avro import parse_schema
    from roastedavro.errors import SchemaError

    with pytest.raises(SchemaError, match="at most 10 digits"):
        parse_schema(_decimal_record("\x7f" * 1_000_000, precision=10))
    # precision that large: the exact comparison, bounded by the bytes' size
    parse_schema(_decimal_record("\x7f" * 20_000, precision=60_000))
