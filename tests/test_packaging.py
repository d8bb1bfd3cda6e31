"""Packaging: the sdist and the wheel that ``python -m build`` makes, installed and used.

The build runs without build isolation (``--no-isolation``: the ``build`` and
``setuptools`` of the test extra, the installed Cython), so it needs no network;
it builds the sdist from a copy of the checkout and the wheel from that sdist,
as ``python -m build`` does, so a file the sdist lacks fails the wheel's build.
The wheel is installed, without its dependencies, into a fresh virtual
environment in a temporary folder; the dependencies come from the environment
running the tests (a ``.pth`` file lists its site-packages after the fresh
environment's own), and the wheel's metadata is checked to declare them.
A script then compiles a ``CompiledSchema`` and an ``AvroCodec`` there, from
another folder, with a fresh compile cache.
"""

import email.parser
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent  # the checkout the tests run from

# every subpackage of the checkout (avro, encoders, fastavro, kafka, ...)
SUBPACKAGES = sorted(
    path.parent.relative_to(REPOSITORY / "roastedavro").as_posix()
    for path in (REPOSITORY / "roastedavro").glob("*/**/__init__.py")
)
TEMPLATES = sorted(path.name for path in (REPOSITORY / "roastedavro" / "templates").glob("*.j2"))
DEPENDENCIES = {"marshmallow", "jinja2", "cython", "fastavro", "platformdirs"}

SMOKE = r"""
import importlib.util
import os
import pathlib
import sys

import roastedavro
from marshmallow import fields
from roastedavro import AvroCodec, CompiledSchema

package = pathlib.Path(roastedavro.__file__).resolve().parent
# the installed copy, not the checkout's
assert pathlib.Path(sys.prefix).resolve() in package.parents, (sys.prefix, package)
for name in ("py.typed", "_runtime.pxd", "_runtime.pyx", "_runtime.pyi", "_tier0.pyi", "_dropin.pyi", "_columns.pyi", "_columnwriter.pyi"):
    assert (package / name).is_file(), name
assert list((package / "templates").glob("*.j2")), "no templates"
import roastedavro.avro, roastedavro.encoders, roastedavro.fastavro  # noqa: E401,F401


class Trade(CompiledSchema):
    symbol = fields.String(required=True)
    size = fields.Integer()
    tags = fields.List(fields.String())


schema = Trade()
trade = {"symbol": "AAPL", "size": 300, "tags": ["x"]}
assert schema.load_compiled(schema.dump_compiled(trade)) == trade

codec = AvroCodec({"type": "record", "name": "R", "fields": [{"name": "a", "type": "long"}]},
                  compile="never")
assert codec.tier == "interpreter"  # tier 0, shipped compiled in the wheel
assert codec.dump({"a": 1}) == b"\x02"
assert codec.load(codec.dump({"a": -2**63})) == {"a": -2**63}
assert codec.compile().tier == "compiled"
assert codec.load(codec.dump({"a": -2**63})) == {"a": -2**63}

cache = pathlib.Path(os.environ["ROASTEDAVRO_CACHE_DIR"])
built = [path for path in cache.rglob("*") if path.name.endswith((".so", ".pyd"))]
assert len(built) >= 2, built

if importlib.util.find_spec("confluent_kafka") is not None:
    import roastedavro.kafka  # noqa: F401
print("smoke OK", package)
"""


def copy_checkout(tree):
    """The files of the checkout a build reads, plus leftovers the sdist must leave out."""
    tree.mkdir()
    for name in (
        "setup.py",
        "setup.cfg",
        "pyproject.toml",
        "README.md",
        "CHANGELOG.md",
        "CONTRIBUTING.md",
        "MANIFEST.in",
    ):
        shutil.copy(REPOSITORY / name, tree / name)
    caches = shutil.ignore_patterns("__pycache__", ".hypothesis", ".pytest_cache")
    shutil.copytree(REPOSITORY / "roastedavro", tree / "roastedavro", ignore=caches)
    shutil.copytree(REPOSITORY / "tests", tree / "tests", ignore=caches)
    # what `pip install -e .`, a build and a test run leave in a checkout
    (tree / "roastedavro" / "_runtime.c").write_text("#error a stale C file\n")
    (tree / "roastedavro" / "roastedavro_leftover.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\0")
    (tree / "roastedavro" / "__pycache__").mkdir(exist_ok=True)
    (tree / "roastedavro" / "__pycache__" / "codec.cpython-311.pyc").write_bytes(b"\0")
    (tree / "build" / "java").mkdir(parents=True)
    (tree / "build" / "java" / "avro.jar").write_bytes(b"\0")


def check_sdist(path):
    with tarfile.open(path) as archive:
        names = archive.getnames()
    top = names[0].split("/")[0]
    files = {name.removeprefix(top + "/") for name in names}
    for name in (
        "setup.py",
        "setup.cfg",
        "pyproject.toml",
        "README.md",
        "CHANGELOG.md",
        "CONTRIBUTING.md",
        "PKG-INFO",
        "roastedavro/__init__.py",
        "roastedavro/_runtime.pxd",
        "roastedavro/_runtime.pyx",
        "roastedavro/_tier0.pyx",
        "roastedavro/_dropin.pyx",
        "roastedavro/_columns.pyx",
        "roastedavro/_columnwriter.pyx",
        "roastedavro/_always_inline.pxi",
        "roastedavro/py.typed",
        "roastedavro/_runtime.pyi",
        "roastedavro/_tier0.pyi",
        "roastedavro/_dropin.pyi",
        "roastedavro/_columns.pyi",
        "roastedavro/_columnwriter.pyi",
    ):
        assert name in files, name
    for package in SUBPACKAGES:
        assert f"roastedavro/{package}/__init__.py" in files, package
    assert {f"roastedavro/templates/{name}" for name in TEMPLATES} <= files
    unwanted = [
        name
        for name in files
        if name.startswith(("build/", "tests/", "dist/"))
        or "__pycache__" in name
        or name.endswith((".so", ".pyd", ".c", ".o", ".pyc"))
    ]
    assert unwanted == []


def check_wheel(path):
    from packaging.requirements import Requirement  # a dependency of build
    from packaging.utils import canonicalize_name

    with zipfile.ZipFile(path) as archive:
        files = set(archive.namelist())
        metadata_name = next(name for name in files if name.endswith(".dist-info/METADATA"))
        metadata = email.parser.BytesParser().parsebytes(archive.read(metadata_name))
    for name in (
        "roastedavro/__init__.py",
        "roastedavro/_runtime.pxd",
        "roastedavro/_runtime.pyx",
        "roastedavro/py.typed",
        "roastedavro/_runtime.pyi",
        "roastedavro/_tier0.pyi",
        "roastedavro/_dropin.pyi",
        "roastedavro/_columns.pyi",
        "roastedavro/_columnwriter.pyi",
    ):
        assert name in files, name
    for package in SUBPACKAGES:
        assert f"roastedavro/{package}/__init__.py" in files, package
    assert {f"roastedavro/templates/{name}" for name in TEMPLATES} <= files
    # the runtime, tier 0, the drop-in's calls, the Arrow column reader and writer
    for extension in ("_runtime", "_tier0", "_dropin", "_columns", "_columnwriter"):
        built = [
            name
            for name in files
            if name.startswith(f"roastedavro/{extension}.")
            and name.endswith(sysconfig.get_config_var("EXT_SUFFIX"))
        ]
        assert len(built) == 1, (extension, sorted(files))
    unwanted = [
        name
        for name in files
        if not name.startswith(("roastedavro/", "roastedavro-"))
        or "__pycache__" in name
        or "leftover" in name
        or name.endswith((".c", ".o", ".pyc"))
    ]
    assert unwanted == []
    # installed below without them: the metadata must declare them
    requirements = [Requirement(text) for text in metadata.get_all("Requires-Dist", [])]
    required = {
        canonicalize_name(requirement.name)
        for requirement in requirements
        if requirement.marker is None or "extra" not in str(requirement.marker)
    }
    assert DEPENDENCIES <= required, required
    entry_points = archive_text(path, ".dist-info/entry_points.txt")
    assert "roastedavro = roastedavro.cli:main" in entry_points


def archive_text(path, suffix):
    with zipfile.ZipFile(path) as archive:
        return archive.read(next(name for name in archive.namelist() if name.endswith(suffix))).decode()


def fresh_environment(folder, wheel):
    """A virtual environment with ``wheel`` installed; its dependencies are this environment's."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, timeout=120, capture_output=True)
    python = folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        check=True,
        timeout=300,
        capture_output=True,
    )
    # after the installation, or pip would find roastedavro installed here already;
    # the fresh environment's own site-packages come first on sys.path
    own = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    borrowed = [*site.getsitepackages(), *([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])]
    Path(own, "zz_borrowed_dependencies.pth").write_text("".join(f"{path}\n" for path in borrowed))
    return python


def test_the_wheel_built_from_the_sdist_installs_and_compiles_codecs(tmp_path):
    if not (REPOSITORY / "setup.py").exists() or not (REPOSITORY / "MANIFEST.in").exists():
        pytest.skip("not a source checkout")
    pytest.importorskip("build", reason="the build package is not installed (pip install '.[test]')")
    pytest.importorskip("setuptools", reason="setuptools is not installed (pip install '.[test]')")
    tree = tmp_path / "checkout"
    copy_checkout(tree)
    dist = tmp_path / "dist"
    completed = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(tree)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        # the extensions at -O0: this test checks what the wheel holds and
        # does, and their -O2 build would be most of its time
        env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", CFLAGS="-O0"),
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-4000:]
    # setup.py leaves out its -O2 where CFLAGS names a level: the last level wins
    compiles = [
        line.split() for line in completed.stdout.splitlines() if "_runtime.c" in line and " -c " in line
    ]
    assert compiles and all([arg for arg in line if arg.startswith("-O")][-1] == "-O0" for line in compiles)
    [sdist] = dist.glob("*.tar.gz")
    [wheel] = dist.glob("*.whl")
    check_sdist(sdist)
    check_wheel(wheel)

    python = fresh_environment(tmp_path / "venv", wheel)
    work = tmp_path / "elsewhere"
    work.mkdir()
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    environment["ROASTEDAVRO_CACHE_DIR"] = str(tmp_path / "cache")
    # -I: neither the current folder nor PYTHONPATH nor the user's site-packages
    completed = subprocess.run(
        [str(python), "-I", "-c", SMOKE],
        cwd=work,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert f"smoke OK {(tmp_path / 'venv').resolve()}" in completed.stdout

    command = python.parent / ("roastedavro.exe" if os.name == "nt" else "roastedavro")
    completed = subprocess.run(
        [str(command), "--help"], cwd=work, env=environment, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0 and "usage: roastedavro" in completed.stdout, completed.stderr
