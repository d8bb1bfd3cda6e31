"""Ahead-of-time builds (roastedavro build), ROASTEDAVRO_COMPILE=never, and the
cache's size bound and commands.

The wheel is built once for the module; each check runs in a fresh Python
with the wheel installed into a folder on its path, an empty compile cache
and no permission to compile.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

from roastedavro import AvroCodec, CompileError, compiler

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "examples" / "schemas"

SCHEMA_MODULE = """
from marshmallow import fields
from roastedavro import CompiledSchema


class Reading(CompiledSchema):
    class Meta:
        avro_namespace = "aot.test"

    sensor = fields.String(required=True)
    value = fields.Float(required=True)
    tags = fields.List(fields.String())
"""

USE = """
import io, json, os, sys
import fastavro
from roastedavro import AvroCodec, compiler
from roastedavro.avro import load_schema
import aotschemas

out = {}
schema = aotschemas.Reading().compile()
reading = {"sensor": "t1", "value": 21.5, "tags": ["a"]}
data = schema.dump_compiled(reading)
buffer = io.BytesIO()
fastavro.schemaless_writer(buffer, fastavro.parse_schema(schema.avro_schema()), reading)
out["marshmallow"] = [data == buffer.getvalue(), schema.load_compiled(data) == reading,
                      compiler.last_timing.get("precompiled")]
v1 = load_schema(sys.argv[1]); v2 = load_schema(sys.argv[2])
order = {"id": "6f1c9a6e-3a51-4c2e-9d8e-0b4a0e7c2f11", "placed": 1, "status": "PAID",
         "ship_to": None, "lines": [], "payment": {"due_days": 3}, "notes": {}}
codec = AvroCodec(v1)
out["avro"] = codec.load(codec.dump(order))["status"]
out["pair"] = AvroCodec(v2, writer_schema=v1).load(codec.dump(order))["currency"]
# a codec the wheel lacks is served by the interpreter; compiling it is refused
missing = AvroCodec(v2)
codec.wait_compiled(60)   # the precompiled codec is looked up off the caller's path
missing.wait_compiled(60)
out["tiers"] = [codec.tier, missing.tier]
try:
    AvroCodec(v2).compile()
except Exception as error:
    out["missing"] = [type(error).__name__, str(error)]
out["cache"] = os.listdir(os.environ["ROASTEDAVRO_CACHE_DIR"])
print(json.dumps(out))
"""


def run(args, cwd, env=None, check=True):
    result = subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=600, env=dict(os.environ, **(env or {}))
    )
    if check:
        assert result.returncode == 0, result.stderr + result.stdout
    return result


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The wheel of a CompiledSchema, an .avsc and a (writer, reader) pair."""
    project = tmp_path_factory.mktemp("project")
    (project / "aotschemas.py").write_text(textwrap.dedent(SCHEMA_MODULE))
    v1, v2 = SCHEMAS / "shop.Order.avsc", SCHEMAS / "v2" / "shop.Order.avsc"
    started = time.monotonic()
    result = run(
        [
            sys.executable,
            "-m",
            "roastedavro",
            "build",
            "--package",
            "aot_codecs",
            "--version",
            "2.1.0",
            "--output",
            "dist",
            "aotschemas:Reading",
            str(v1),
            f"{v1}={v2}",
        ],
        project,
        {"ROASTEDAVRO_CACHE_DIR": str(project / "cache")},
    )
    wheel = project / result.stdout.strip()
    return {
        "project": project,
        "wheel": wheel,
        "v1": v1,
        "v2": v2,
        "stderr": result.stderr,
        "seconds": time.monotonic() - started,
    }


def install(built, target: Path) -> Path:
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            str(built["wheel"]),
        ],
        built["project"],
    )
    return target


def use(built, site: Path, cache: Path, mode: str = "never") -> dict:
    cache.mkdir(exist_ok=True)
    (built["project"] / "use.py").write_text(USE)
    result = run(
        [sys.executable, "use.py", str(built["v1"]), str(built["v2"])],
        built["project"],
        {"PYTHONPATH": str(site), "ROASTEDAVRO_CACHE_DIR": str(cache), "ROASTEDAVRO_COMPILE": mode},
    )
    return json.loads(result.stdout.splitlines()[-1])


def test_the_wheel_is_tagged_for_this_python_and_its_record_is_right(built):
    wheel = built["wheel"]
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert wheel.name.startswith(f"aot_codecs-2.1.0-{tag}-{tag}-")
    assert "3/3" in built["stderr"]  # the progress lines
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        manifest = json.loads(archive.read("aot_codecs/roastedavro-codecs.json"))
        assert (
            "[roastedavro.codecs]\naot_codecs = aot_codecs"
            in archive.read("aot_codecs-2.1.0.dist-info/entry_points.txt").decode()
        )
        metadata = archive.read("aot_codecs-2.1.0.dist-info/METADATA").decode()
        record = list(csv.reader(io.StringIO(archive.read("aot_codecs-2.1.0.dist-info/RECORD").decode())))
        for name, digest, size in record:
            if name.endswith("RECORD"):
                continue
            data = archive.read(name)
            assert (
                digest
                == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            )
            assert int(size) == len(data)
    from roastedavro import __version__

    assert f"Requires-Dist: roastedavro=={__version__}" in metadata
    assert manifest["roastedavro"] == __version__ and manifest["ext_suffix"] == compiler.EXT_SUFFIX
    assert len(manifest["codecs"]) == 3
    assert "aotschemas:Reading" in {entry["label"] for entry in manifest["codecs"].values()}
    assert sum(name.endswith(compiler.EXT_SUFFIX) for name in names) == 3


def test_installed_codecs_load_without_a_compiler_or_the_cache(built, tmp_path):
    site = install(built, tmp_path / "site")
    out = use(built, site, tmp_path / "cache")
    # bytes equal to fastavro's, loads round trip, from the precompiled package
    assert out["marshmallow"] == [True, True, 1.0]
    assert out["avro"] == "PAID" and out["pair"] == "NOK"
    # a codec the wheel lacks: tier 0 serves it; compile() is a CompileError
    # naming the schema and how to build it
    assert out["tiers"] == ["compiled", "interpreter"]
    kind, message = out["missing"]
    assert kind == "NotCompiledError"
    assert "shop.Order" in message and "roastedavro build" in message
    assert "ROASTEDAVRO_COMPILE=never" in message
    assert out["cache"] == []  # nothing written


def _tampered(built, tmp_path, change) -> Path:
    site = install(built, tmp_path / "site")
    change(site / "aot_codecs")
    return site


def test_a_package_for_another_roastedavro_or_abi_is_never_loaded(built, tmp_path):
    def other_version(package: Path):
        manifest = json.loads((package / "roastedavro-codecs.json").read_text())
        manifest["roastedavro"] = "0.0.1"
        (package / "roastedavro-codecs.json").write_text(json.dumps(manifest))

    out = use(built, _tampered(built, tmp_path / "a", other_version), tmp_path / "cache-a", mode="auto")
    assert out["marshmallow"][2] is None  # compiled here instead (mode auto)

    def other_abi(package: Path):
        manifest = json.loads((package / "roastedavro-codecs.json").read_text())
        manifest["ext_suffix"] = ".cpython-39-x86_64-linux-gnu.so"
        (package / "roastedavro-codecs.json").write_text(json.dumps(manifest))

    site = _tampered(built, tmp_path / "b", other_abi)
    (built["project"] / "use.py").write_text(USE)
    result = run(
        [sys.executable, "use.py", str(built["v1"]), str(built["v2"])],
        built["project"],
        {
            "PYTHONPATH": str(site),
            "ROASTEDAVRO_CACHE_DIR": str(tmp_path / "cache-b"),
            "ROASTEDAVRO_COMPILE": "never",
        },
        check=False,
    )
    assert result.returncode != 0
    assert "NotCompiledError" in result.stderr and "aotschemas.Reading" in result.stderr
    assert "built for extension modules" in result.stderr  # the warning says why


def test_a_damaged_precompiled_module_is_refused(built, tmp_path):
    def damage(package: Path):
        for module in package.glob(f"*{compiler.EXT_SUFFIX}"):
            data = bytearray(module.read_bytes())
            data[len(data) // 2] ^= 0xFF
            module.write_bytes(bytes(data))

    site = _tampered(built, tmp_path, damage)
    (built["project"] / "use.py").write_text(USE)
    result = run(
        [sys.executable, "use.py", str(built["v1"]), str(built["v2"])],
        built["project"],
        {
            "PYTHONPATH": str(site),
            "ROASTEDAVRO_CACHE_DIR": str(tmp_path / "cache"),
            "ROASTEDAVRO_COMPILE": "never",
        },
        check=False,
    )
    assert result.returncode != 0
    assert "does not match the SHA-256" in result.stderr


def test_build_errors_are_clear(built, tmp_path):
    def build(*sources, package="ok_name"):
        return run(
            [
                sys.executable,
                "-m",
                "roastedavro",
                "build",
                "--package",
                package,
                "--output",
                str(tmp_path),
                *sources,
            ],
            built["project"],
            check=False,
        )

    for sources, package, expected in [
        (("nosuchmodule:X",), "ok_name", "cannot import it"),
        (("aotschemas:textwrap",), "ok_name", "cannot import it"),
        (("missing.avsc",), "ok_name", "no such schema file"),
        (("aotschemas:fields",), "ok_name", "not a CompiledSchema subclass"),
        ((str(SCHEMAS / "shop.Order.avsc"),), "bad-name", "is not a Python identifier"),
        ((), "ok_name", "nothing to build"),
    ]:
        result = build(*sources, package=package)
        assert result.returncode == 1, result.stderr
        assert expected in result.stderr


# -- ROASTEDAVRO_COMPILE, the cache's bound and commands ----------------------------------


def test_an_unknown_compile_mode_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ROASTEDAVRO_COMPILE", "sometimes")
    with pytest.raises(
        CompileError, match="ROASTEDAVRO_COMPILE='sometimes': use one of auto, eager, hot, never"
    ):
        AvroCodec({"type": "record", "name": "Mode", "fields": [{"name": "x", "type": "int"}]})


def test_the_cache_evicts_the_least_recently_used_modules(monkeypatch, tmp_path):
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path))
    schemas = [
        {"type": "record", "name": f"Lru{n}", "fields": [{"name": "x", "type": "int"}]} for n in range(3)
    ]
    for schema in schemas:
        AvroCodec(schema, compile="eager")
    info = compiler.cache_info()
    assert info["modules"] == 3 and info["directory"] == str(tmp_path)
    modules = sorted(tmp_path.glob(f"*{compiler.EXT_SUFFIX}"), key=lambda p: p.stat().st_mtime)
    # the oldest is used again: it becomes the newest
    os.utime(modules[0], (time.time() + 10, time.time() + 10))
    size = info["bytes"] / 3
    monkeypatch.setenv("ROASTEDAVRO_CACHE_MAX_MB", str(2.5 * size / 2**20))
    evicted = compiler._bound_cache(tmp_path)
    assert evicted == [modules[1].name.split(".")[0]]
    assert not modules[1].exists() and modules[0].exists() and modules[2].exists()
    assert not Path(str(modules[1]) + ".sha256").exists()


def test_cache_commands(monkeypatch, tmp_path):
    env = {"ROASTEDAVRO_CACHE_DIR": str(tmp_path), "ROASTEDAVRO_COMPILE": "hot"}
    monkeypatch.setenv("ROASTEDAVRO_CACHE_DIR", str(tmp_path))
    AvroCodec({"type": "record", "name": "Cmd", "fields": [{"name": "x", "type": "int"}]}, compile="eager")
    info = run([sys.executable, "-m", "roastedavro", "cache", "info"], tmp_path, env).stdout
    assert f"directory: {tmp_path}" in info and "modules: 1" in info
    assert "compile: hot (ROASTEDAVRO_COMPILE)" in info
    cleared = run([sys.executable, "-m", "roastedavro", "cache", "clear"], tmp_path, env).stdout
    assert cleared.startswith("removed 1 modules")
    assert list(tmp_path.glob(f"*{compiler.EXT_SUFFIX}")) == []


SETUP_PY = """
from setuptools import setup
from roastedavro.aot import setuptools_options

setup(name="myservice", version="1.0", packages=["myservice"],
      **setuptools_options(["myservice.schemas:Order"], "myservice._codecs"),
      entry_points={"roastedavro.codecs": ["myservice = myservice._codecs"]})
"""


def test_a_projects_own_wheel_carries_its_codecs(tmp_path):
    try:
        from setuptools.command.bdist_wheel import bdist_wheel  # noqa: F401
    except ImportError:
        pytest.skip("setuptools 70.1 or later (with bdist_wheel) is not installed")
    project = tmp_path / "project"
    (project / "myservice").mkdir(parents=True)
    (project / "myservice" / "__init__.py").write_text("")
    (project / "myservice" / "schemas.py").write_text(
        textwrap.dedent(SCHEMA_MODULE).replace("class Reading", "class Order")
    )
    (project / "setup.py").write_text(SETUP_PY)
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            "dist",
            ".",
        ],
        project,
        {"ROASTEDAVRO_CACHE_DIR": str(tmp_path / "build-cache")},
    )
    (wheel,) = (project / "dist").glob("myservice-1.0-*.whl")
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert wheel.name.startswith(f"myservice-1.0-{tag}-{tag}-")
    site = tmp_path / "site"
    run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
        tmp_path,
    )
    (tmp_path / "cache").mkdir()
    check = (
        "from myservice.schemas import Order\n"
        "s = Order().compile()\n"
        "print(s.load_compiled(s.dump_compiled({'sensor': 'a', 'value': 1.5, 'tags': []})))\n"
    )
    result = run(
        [sys.executable, "-c", check],
        tmp_path,
        {
            "PYTHONPATH": str(site),
            "ROASTEDAVRO_CACHE_DIR": str(tmp_path / "cache"),
            "ROASTEDAVRO_COMPILE": "never",
        },
    )
    assert "'sensor': 'a'" in result.stdout
    assert list((tmp_path / "cache").iterdir()) == []
