"""Ahead-of-time builds: codecs compiled in CI, shipped as a wheel.

``roastedavro build --package NAME --output DIR SOURCE...`` generates the
codecs of the sources exactly as ``CompiledSchema.compile()`` and
``AvroCodec`` would at run time, builds them in parallel (a process pool),
and writes a wheel ``NAME-VERSION-TAG.whl`` tagged for this Python and
platform. Installed next to the service, the wheel's codecs are found by
``roastedavro.precompiled`` (the entry point group ``roastedavro.codecs``),
so the service starts no compiler.

A SOURCE is ``module:Class`` (a CompiledSchema, imported as the service
imports it: the module path is part of the codec), an ``.avsc`` file (an
AvroCodec), or ``WRITER.avsc=READER.avsc`` (the AvroCodec reading one
writer's data as the reader's values). ``registry_sources`` adds every
version of registry subjects.
"""

from __future__ import annotations

import base64
import concurrent.futures
import hashlib
import importlib
import json
import multiprocessing
import os
import re
import shutil
import sys
import sysconfig
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from roastedavro import __version__, compiler
from roastedavro.errors import CompileError
from roastedavro.flags import CompileFlags, default_optimize
from roastedavro.precompiled import FORMAT, GROUP, MANIFEST

_PACKAGE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_VERSION = re.compile(r"[0-9]+(\.[0-9]+)*([a-z]+[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?\Z")


@dataclass
class CodecSource:
    """One codec to build: its generated source and how errors name it."""

    label: str
    source: str
    fingerprint: str

    def key(self, flags: CompileFlags) -> str:
        return compiler.aot_key(self.source, flags)


# -- sources -----------------------------------------------------------------------


def collect(sources: Iterable[str], flags: CompileFlags) -> list[CodecSource]:
    """The codecs of the command line's SOURCEs (see the module's docstring)."""
    collected = []
    for text in sources:
        if "=" in text and not text.startswith("="):
            writer, reader = text.split("=", 1)
            collected.append(pair_source(_avsc(writer), _avsc(reader), f"{writer} as {reader}"))
        elif text.endswith((".avsc", ".json")) or os.sep in text or "/" in text:
            collected.append(avro_source(_avsc(text), text))
        elif ":" in text:
            collected.append(marshmallow_source(text, flags))
        else:
            raise CompileError(f"{text!r} is neither module:Class nor an .avsc file")
    return collected


def _avsc(path: str):
    from roastedavro.avro.parse import load_schema

    if not Path(path).is_file():
        raise CompileError(f"{path}: no such schema file")
    return load_schema(path)


def avro_source(schema, label: str) -> CodecSource:
    from roastedavro.avrogen import generate_avro_module

    generated = generate_avro_module(schema)
    generated.verify()
    return CodecSource(label, generated.source, f"{schema.fingerprint():016x}")


def pair_source(writer, reader, label: str) -> CodecSource:
    from roastedavro.resolvegen import generate_resolving_module

    generated = generate_resolving_module(writer, reader)
    generated.verify()
    return CodecSource(label, generated.source, f"{reader.fingerprint():016x}")


def marshmallow_source(text: str, flags: CompileFlags) -> CodecSource:
    from roastedavro.codegen import generate_module
    from roastedavro.schema import CompiledSchema

    module_name, _, qualname = text.partition(":")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # module:Class is importable from the current folder
    try:
        target = importlib.import_module(module_name)
        for part in qualname.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as error:
        raise CompileError(f"{text}: cannot import it ({error})") from None
    if not (isinstance(target, type) and issubclass(target, CompiledSchema)):
        raise CompileError(f"{text} is not a CompiledSchema subclass")
    schema = target()
    plan = schema._plan()
    generated = generate_module(plan.root, plan.records, schema._label(), flags.build_key(), plan.fingerprint)
    generated.verify()
    return CodecSource(text, generated.source, plan.fingerprint)


def registry_sources(
    url: str, subjects: Iterable[str], reader: str | None = None, client=None, skipped: list | None = None
) -> list[CodecSource]:
    """Every version of each subject (an AvroCodec each), and with ``reader``
    (an .avsc file) the codec reading each version as the reader's values,
    as roastedavro.kafka's AvroDeserializer(client, reader) reads them. A
    version the reader cannot read (the deserializer refuses it too) gets no
    pair codec: ``(label, reason)`` is appended to ``skipped``."""
    from roastedavro.errors import SchemaResolutionError
    from roastedavro.kafka.serde import _from_registry, as_confluent

    if client is None:
        from confluent_kafka.schema_registry import SchemaRegistryClient

        client = SchemaRegistryClient({"url": url})
    reader_schema = _avsc(reader) if reader else None
    collected = []
    for subject in subjects:
        for version in client.get_versions(subject):
            registered = client.get_version(subject, version)
            schema = _from_registry(client, registered.schema, f"{subject} version {version}")
            label = f"{subject} version {version} (id {registered.schema_id})"
            collected.append(avro_source(schema, label))
            # the serializers' and deserializers' codec: fastavro's view, a
            # module of its own where that changes the code (logical types)
            confluent = avro_source(as_confluent(schema), label)
            if confluent.source != collected[-1].source:
                collected.append(confluent)
            if reader_schema is not None and schema.canonical_form() != reader_schema.canonical_form():
                try:
                    collected.append(pair_source(schema, as_confluent(reader_schema), f"{label} as {reader}"))
                except SchemaResolutionError as error:
                    if skipped is not None:
                        skipped.append((label, str(error)))
    return collected


# -- building ----------------------------------------------------------------------


def _build_one(source: str, flags: CompileFlags, fingerprint: str, scratch: str, out: str) -> tuple[str, str]:
    """In a pool worker: the module of ``source``, built into the private
    folder ``scratch`` and copied into ``out``. A worker's first build warms
    Cython up; the later ones are forked off it with the runtime's
    declarations already parsed (compiler.serve_build)."""
    import pickle

    name, filename = compiler.cache_names(source, flags, fingerprint)
    outcome = compiler.serve_build(pickle.dumps((source, flags, fingerprint)), Path(scratch))
    if not outcome["ok"]:
        raise CompileError(outcome["error"])
    # in the package: the module's name and this interpreter's suffix
    shutil.copyfile(Path(scratch) / filename, Path(out) / f"{name}{compiler.EXT_SUFFIX}")
    return name, f"{name}{compiler.EXT_SUFFIX}"


def build_codecs(
    codecs: list[CodecSource],
    package_dir: Path,
    flags: CompileFlags,
    jobs: int | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> dict:
    """Builds the codecs into ``package_dir`` with a manifest; returns the manifest."""
    package_dir.mkdir(parents=True, exist_ok=True)
    unique = {codec.key(flags): codec for codec in codecs}
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "roastedavro": __version__,
        "ext_suffix": compiler.EXT_SUFFIX,
        "python": sys.version.split()[0],
        "flags": flags.build_key(),
        "codecs": {},
    }
    compiler._compiler_command()  # no C compiler: fail before the pool starts
    done = 0
    workers = max(1, min(jobs or os.cpu_count() or 1, len(unique) or 1))
    # private to this user (mkdtemp: mode 700), removed at the end
    scratch = tempfile.mkdtemp(prefix="roastedavro-aot-")
    try:
        # spawned, not forked: the calling process may have threads (a
        # service's, the background compiler's), and a fork copies their
        # locks in whatever state they are in
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures = {
                pool.submit(_build_one, codec.source, flags, codec.fingerprint, scratch, str(package_dir)): (
                    key,
                    codec,
                )
                for key, codec in unique.items()
            }
            for future in concurrent.futures.as_completed(futures):
                key, codec = futures[future]
                try:
                    module, file = future.result()
                except CompileError as error:
                    raise CompileError(f"{codec.label}: {error}") from None
                digest = hashlib.sha256((package_dir / file).read_bytes()).hexdigest()
                manifest["codecs"][key] = {
                    "module": module,
                    "file": file,
                    "sha256": digest,
                    "label": codec.label,
                    "fingerprint": codec.fingerprint,
                }
                done += 1
                if progress is not None:
                    progress(done, len(unique), codec.label)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    (package_dir / MANIFEST).write_text(
        json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    init = package_dir / "__init__.py"
    if not init.exists():
        init.write_text('"""Precompiled roastedavro codecs (roastedavro build)."""\n', encoding="utf-8")
    return manifest


# -- the wheel ---------------------------------------------------------------------


def wheel_tag() -> str:
    """This interpreter's and platform's wheel tag, e.g. cp311-cp311-linux_x86_64."""
    interpreter = f"cp{sys.version_info.major}{sys.version_info.minor}"
    abi = interpreter + ("t" if sysconfig.get_config_var("Py_GIL_DISABLED") else "")
    platform = re.sub(r"[^A-Za-z0-9_]", "_", sysconfig.get_platform())
    return f"{interpreter}-{abi}-{platform}"


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def write_wheel(package: str, version: str, package_dir: Path, output: Path) -> Path:
    """A wheel of ``package_dir`` (importable as ``package``) declaring its
    codecs in the entry point group, requiring this roastedavro version."""
    distribution = f"{package}-{version}"
    info = f"{distribution}.dist-info"
    files: dict[str, bytes] = {}
    for path in sorted(package_dir.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            files[f"{package}/{path.relative_to(package_dir).as_posix()}"] = path.read_bytes()
    files[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n"
        f"Summary: Precompiled roastedavro codecs\nRequires-Dist: roastedavro=={__version__}\n"
    ).encode()
    files[f"{info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: roastedavro {__version__}\nRoot-Is-Purelib: false\n"
        f"Tag: {wheel_tag()}\n"
    ).encode()
    files[f"{info}/entry_points.txt"] = f"[{GROUP}]\n{package} = {package}\n".encode()
    record = [f"{name},{_record_hash(data)},{len(data)}" for name, data in files.items()]
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    output.mkdir(parents=True, exist_ok=True)
    wheel = output / f"{distribution}-{wheel_tag()}.whl"
    partial = wheel.with_suffix(".whl.tmp")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            entry.external_attr = (0o755 if name.endswith(compiler.EXT_SUFFIX) else 0o644) << 16
            archive.writestr(entry, data, zipfile.ZIP_DEFLATED)
    os.replace(partial, wheel)
    return wheel


def build_wheel(
    package: str,
    version: str,
    codecs: list[CodecSource],
    output: Path,
    flags: CompileFlags | None = None,
    jobs: int | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> tuple[Path, dict]:
    """``roastedavro build``: the codecs built and packed as one wheel."""
    if not _PACKAGE.match(package):
        raise CompileError(f"--package {package!r} is not a Python identifier")
    if not _VERSION.match(version):
        raise CompileError(f"--version {version!r} is not a version such as 1.0.0")
    if not codecs:
        raise CompileError("nothing to build: give at least one SOURCE or --subject")
    flags = flags or CompileFlags()
    with tempfile.TemporaryDirectory(prefix="roastedavro-wheel-") as scratch:
        package_dir = Path(scratch) / package
        started = time.perf_counter()
        manifest = build_codecs(codecs, package_dir, flags, jobs, progress)
        manifest["seconds"] = round(time.perf_counter() - started, 2)
        return write_wheel(package, version, package_dir, output), manifest


# -- setuptools: a project's own package carries its codecs ---------------------------


def setuptools_options(sources: list[str], package: str, optimize: str | None = None) -> dict:
    """``setup()`` options for a project whose own wheel carries its codecs.

    Its ``build_py`` builds the codecs of ``sources`` (as ``roastedavro
    build`` takes them) into the subpackage ``package`` (e.g.
    ``"myservice._codecs"``) of the build, and its distribution class says
    the wheel holds extension modules, so it is tagged for this Python and
    platform. The project declares the subpackage in the entry point group
    ``roastedavro.codecs``::

        # setup.py
        from setuptools import setup
        from roastedavro.aot import setuptools_options

        setup(**setuptools_options(["myservice.schemas:Order"], "myservice._codecs"),
              entry_points={"roastedavro.codecs": ["myservice = myservice._codecs"]})

    with ``roastedavro`` in ``[build-system] requires`` of its pyproject.toml.
    ``optimize`` is the C optimisation level (``CompileFlags``' default
    where None).
    """
    from setuptools import Distribution
    from setuptools.command.build_py import build_py

    class build_py_with_codecs(build_py):
        def run(self):
            super().run()
            flags = CompileFlags(optimize=optimize or default_optimize())
            target = Path(self.build_lib, *package.split("."))
            build_codecs(collect(sources, flags), target, flags)

    class DistributionWithCodecs(Distribution):
        def has_ext_modules(self):
            return True

    return {"cmdclass": {"build_py": build_py_with_codecs}, "distclass": DistributionWithCodecs}
