"""What a process served by the interpreter imports: nothing made for
building codecs (the builder, subprocess, tempfile, sysconfig, ...), nor
logging, nor importlib.metadata where no package of precompiled codecs is
installed, nor dataclasses and the introspection it brings (a few MB of
RSS together: the drop-in's memory against fastavro's,
benchmarks/memory.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import pytest

from roastedavro import precompiled

SCRIPT = r"""
import io, json, sys
import roastedavro.fastavro as fa
from roastedavro import AvroCodec

schema = {"type": "record", "name": "W", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": ["null", "string"]}]}
parsed = fa.parse_schema(schema)
out = io.BytesIO()
fa.schemaless_writer(out, parsed, {"id": 1, "name": "x"})
out.seek(0)
assert fa.schemaless_reader(out, parsed) == {"id": 1, "name": "x"}
out = io.BytesIO()
fa.writer(out, parsed, [{"id": 2, "name": None}], codec="deflate")
out.seek(0)
assert list(fa.reader(out)) == [{"id": 2, "name": None}]
codec = AvroCodec(schema)
assert codec.load(codec.dump({"id": 3, "name": "y"})) == {"id": 3, "name": "y"}
assert codec.wait_compiled(60)  # the background lookup has run
print(json.dumps(sorted(sys.modules)))
"""

BUILD_ONLY = {
    "importlib.metadata",
    "email",
    "zipfile",
    "csv",
    "socket",
    "calendar",
    "subprocess",
    "tempfile",
    "signal",
}
#: what serving quietly from the interpreter needs neither: the builder and
#: what it imports, logging (and concurrent.futures, which imports it), the
#: codecs' libraries of codecs not used, compatibility checks
QUIET_SERVING_SKIPS = {
    "roastedavro.compiler",
    "sysconfig",
    "logging",
    "concurrent.futures",
    "queue",
    "bz2",
    "lzma",
    "roastedavro.avro.compatibility",
}
#: dataclasses imports inspect, ast and dis (about 1.3 MB); the value classes
#: on the serving path are roastedavro._record's
INTROSPECTION = {"dataclasses", "inspect", "ast", "dis"}


@pytest.mark.parametrize("policy", ["never", "auto"])
def test_serving_from_the_interpreter_imports_nothing_made_for_builds(policy, tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(ROASTEDAVRO_COMPILE=policy, ROASTEDAVRO_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    imported = set(json.loads(done.stdout.splitlines()[-1]))
    assert "roastedavro.precompiled" in imported  # the lookup did run
    heavy = BUILD_ONLY | QUIET_SERVING_SKIPS | INTROSPECTION | {"shutil", "shlex"}
    assert sorted(imported & heavy) == []


def _dist_info(folder, name, entry_points: str | None):
    info = folder / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)


def _declared_with(monkeypatch, entry: str) -> bool:
    monkeypatch.syspath_prepend(entry)
    return precompiled._group_may_be_declared()


def test_the_scan_sees_the_group_where_importlib_metadata_does(tmp_path, monkeypatch):
    import importlib.metadata

    if precompiled._group_may_be_declared():
        pytest.skip("a package of precompiled codecs is installed here")
    assert list(importlib.metadata.entry_points(group=precompiled.GROUP)) == []
    site = tmp_path / "site"
    _dist_info(site, "other", "[console_scripts]\nother = other:main\n")
    _dist_info(site, "bare", None)
    assert not _declared_with(monkeypatch, str(site))
    _dist_info(site, "codecs_pkg", f"[{precompiled.GROUP}]\ncodecs_pkg = codecs_pkg\n")
    assert precompiled._group_may_be_declared()
    assert [point.value for point in importlib.metadata.entry_points(group=precompiled.GROUP)] == [
        "codecs_pkg"
    ]


def test_an_eggs_metadata_is_read(tmp_path, monkeypatch):
    egg = tmp_path / "codecs_pkg-1.0-py3.11.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "EGG-INFO" / "entry_points.txt").write_text(f"[{precompiled.GROUP}]\nx = x\n")
    assert _declared_with(monkeypatch, str(egg))


def test_where_the_scan_cannot_tell_importlib_metadata_decides(tmp_path, monkeypatch):
    archive = tmp_path / "site.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("other-1.0.dist-info/METADATA", "Name: other\n")
    assert _declared_with(monkeypatch, str(archive))
    monkeypatch.undo()

    class Finder:
        @staticmethod
        def find_spec(*args):
            return None

        @staticmethod
        def find_distributions(*args, **kwargs):
            return iter(())

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder])
    assert precompiled._group_may_be_declared()


def test_a_package_of_codecs_installed_later_is_found_after_refresh(tmp_path, monkeypatch):
    # the index remembers "nothing installed" until refresh(), as before
    precompiled.refresh()
    before = precompiled.lookup_possible()
    site = tmp_path / "site"
    _dist_info(site, "late_codecs", f"[{precompiled.GROUP}]\nlate_codecs = late_codecs\n")
    monkeypatch.syspath_prepend(str(site))
    try:
        assert precompiled.lookup_possible() is before
        precompiled.refresh()
        with pytest.warns(precompiled.PrecompiledWarning, match="'late_codecs'"):
            assert precompiled.lookup_possible() is before  # cannot be found: warned, not used
    finally:
        monkeypatch.undo()
        precompiled.refresh()
