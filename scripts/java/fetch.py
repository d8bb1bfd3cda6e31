#!/usr/bin/env python3
"""Apache Avro's Java library (the reference implementation) for roastedavro's tests.

Downloads the Avro jars and the few they need from Maven Central into a
git-ignored folder (build/java/ of the checkout, or $ROASTEDAVRO_JAVA_DIR),
checks each against its pinned SHA-256, and compiles AvroOracle.java there.
Safe to run again and from several processes at once: a file lock serialises
them, and what is there and intact is kept.

    python scripts/java/fetch.py             # fetch the jars and compile the oracle
    python scripts/java/fetch.py classpath   # print the oracle's classpath
    python scripts/java/fetch.py run         # run the oracle (JSON lines on stdin/stdout)

A mirror of Maven Central can be given as $ROASTEDAVRO_MAVEN_URL. Needs a JDK
11 or later (javac and java on PATH).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no lock, so run the first fetch alone
    fcntl = None

AVRO_VERSION = "1.12.2"

# (group, artifact, version, sha256): what the Schema, SchemaNormalization and
# generic datum classes load (avro's compression libraries are left out, the
# oracle writes no container files); slf4j-nop keeps Avro's logging quiet
JARS = (
    ("org.apache.avro", "avro", AVRO_VERSION,
     "6522e2a146b859ad158bb024dcc3b0bc826680794a2523b0881dafcbd59ce2df"),
    ("com.fasterxml.jackson.core", "jackson-core", "2.22.1",
     "941ff029bcdb93e83d209ce516c1a7fb8bbac07d0a2fa122f5bf194b2cd7b4f4"),
    ("com.fasterxml.jackson.core", "jackson-databind", "2.22.1",
     "7dcd7e53bec1f56c7ad278bd1ca0840bebcc595d61ce44d6a8439abb75b965b2"),
    ("com.fasterxml.jackson.core", "jackson-annotations", "2.22",
     "21ddb598807d3a51a876704eb979d9296e1c6a6f47ab1826ff88c6d6a127a2d0"),
    ("org.slf4j", "slf4j-api", "2.0.18",
     "44508fd1576500688c790b190acdd16fec4f8c79a3e0b900afd70503cf055f55"),
    ("org.slf4j", "slf4j-nop", "2.0.17",
     "3716f83649ec66161a2edefd4f49df34d1dd1c51cdcf941996c6987260f0a829"),
)

MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
HERE = Path(__file__).resolve().parent
SOURCE = HERE / "AvroOracle.java"
# small heap and quick start: the oracle holds a few thousand parsed schemas at most
JVM_FLAGS = ("-Xshare:auto", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx512m")


class FetchError(RuntimeError):
    """The jars could not be downloaded or the oracle not compiled."""


def java_dir() -> Path:
    configured = os.environ.get("ROASTEDAVRO_JAVA_DIR")
    return Path(configured) if configured else HERE.parent.parent / "build" / "java"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def _locked(folder: Path):
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(lock, fcntl.LOCK_UN)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(url: str, target: Path, sha256: str) -> None:
    mirror_hint = "(a mirror of Maven Central can be set as ROASTEDAVRO_MAVEN_URL)"
    last_error: Exception | None = None
    for attempt in range(3):
        if attempt:
            time.sleep(2 * attempt)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".part")
        try:
            with os.fdopen(handle, "wb") as out, urllib.request.urlopen(url, timeout=60) as response:
                shutil.copyfileobj(response, out)
            actual = _sha256(Path(temporary))
            if actual != sha256:
                raise FetchError(f"{url}: SHA-256 {actual}, expected {sha256} {mirror_hint}")
            os.replace(temporary, target)
            return
        except FetchError:
            raise
        except OSError as error:  # urllib's errors included
            last_error = error
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
    raise FetchError(f"cannot download {url}: {last_error} {mirror_hint}")


def jar_paths(folder: Path | None = None) -> list[Path]:
    lib = (folder or java_dir()) / "lib"
    return [lib / f"{artifact}-{version}.jar" for _, artifact, version, _ in JARS]


def _fetch_unlocked(folder: Path) -> list[Path]:
    base = os.environ.get("ROASTEDAVRO_MAVEN_URL", MAVEN_CENTRAL).rstrip("/")
    (folder / "lib").mkdir(parents=True, exist_ok=True)
    paths = jar_paths(folder)
    for (group, artifact, version, sha256), path in zip(JARS, paths):
        if path.exists() and _sha256(path) == sha256:
            continue
        url = f"{base}/{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}.jar"
        _log(f"downloading {url}")
        _download(url, path, sha256)
    return paths


def fetch(folder: Path | None = None) -> list[Path]:
    """The jars, downloaded if missing or damaged."""
    folder = folder or java_dir()
    with _locked(folder):
        return _fetch_unlocked(folder)


def build(folder: Path | None = None) -> Path:
    """The folder of the compiled oracle, fetching and compiling what is missing."""
    folder = folder or java_dir()
    javac = shutil.which("javac")
    if javac is None:
        raise FetchError("no javac on PATH: the Java oracle needs a JDK 11 or later")
    with _locked(folder):
        jars = _fetch_unlocked(folder)
        # a new folder for each version of the source and the jars
        key = hashlib.sha256(SOURCE.read_bytes() + repr(JARS).encode()).hexdigest()[:16]
        classes = folder / f"oracle-{key}"
        if (classes / "AvroOracle.class").exists():
            return classes
        staging = Path(tempfile.mkdtemp(dir=folder, prefix="oracle-build-"))
        try:
            completed = subprocess.run(
                [javac, "-nowarn", "-encoding", "UTF-8", "-d", str(staging),
                 "-cp", os.pathsep.join(map(str, jars)), str(SOURCE)],
                capture_output=True, text=True, timeout=600)
            if completed.returncode != 0:
                raise FetchError(f"javac failed on {SOURCE}:\n{completed.stdout}{completed.stderr}")
            os.replace(staging, classes)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return classes


def classpath(folder: Path | None = None) -> str:
    folder = folder or java_dir()
    classes = build(folder)
    return os.pathsep.join([str(classes)] + [str(path) for path in jar_paths(folder)])


def command(folder: Path | None = None) -> list[str]:
    """The command line that runs the oracle."""
    java = shutil.which("java")
    if java is None:
        raise FetchError("no java on PATH: the Java oracle needs a JDK 11 or later")
    return [java, *JVM_FLAGS, "-cp", classpath(folder), "AvroOracle"]


def main(argv: list[str]) -> int:
    action = argv[1] if len(argv) > 1 else "fetch"
    try:
        if action == "fetch":
            started = time.monotonic()
            classes = build()
            _log(f"Avro {AVRO_VERSION} jars in {java_dir() / 'lib'}, oracle in {classes} "
                 f"({time.monotonic() - started:.1f} s)")
        elif action == "classpath":
            print(classpath())
        elif action == "run":
            args = command()
            os.execv(args[0], args)
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except FetchError as error:
        _log(f"error: {error}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
