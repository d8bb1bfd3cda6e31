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
    python scripts/java/fetch.py tools       # fetch avro-tools (73 MB), print the jar's path
    python scripts/java/fetch.py tools-run tojson FILE   # run avro-tools with the flags below

avro-tools (Avro's command-line tools: tojson, fromjson, getmeta, ... on container
files) is a separate, big, shaded jar holding every codec's library; only the
tools actions and fetch_tools() download it, never the default fetch.

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
    (
        "org.apache.avro",
        "avro",
        AVRO_VERSION,
        "6522e2a146b859ad158bb024dcc3b0bc826680794a2523b0881dafcbd59ce2df",
    ),
    (
        "com.fasterxml.jackson.core",
        "jackson-core",
        "2.22.1",
        "941ff029bcdb93e83d209ce516c1a7fb8bbac07d0a2fa122f5bf194b2cd7b4f4",
    ),
    (
        "com.fasterxml.jackson.core",
        "jackson-databind",
        "2.22.1",
        "7dcd7e53bec1f56c7ad278bd1ca0840bebcc595d61ce44d6a8439abb75b965b2",
    ),
    (
        "com.fasterxml.jackson.core",
        "jackson-annotations",
        "2.22",
        "21ddb598807d3a51a876704eb979d9296e1c6a6f47ab1826ff88c6d6a127a2d0",
    ),
    ("org.slf4j", "slf4j-api", "2.0.18", "44508fd1576500688c790b190acdd16fec4f8c79a3e0b900afd70503cf055f55"),
    ("org.slf4j", "slf4j-nop", "2.0.17", "3716f83649ec66161a2edefd4f49df34d1dd1c51cdcf941996c6987260f0a829"),
)

# avro-tools, shaded: Avro, Jackson, snappy-java (native libsnappyjava.so for Linux
# x86_64 and others, extracted to java.io.tmpdir when first used), zstd-jni
# 1.5.7-12 (native likewise), org.tukaani xz, commons-compress 1.28.0 (bzip2) and
# Hadoop's classes. Its SHA-256 was computed here from the jar downloaded from Maven
# Central, whose SHA-1 matched Maven Central's published avro-tools-1.12.2.jar.sha1
# (1e2873fa763dad100162b21b4d5ec9fe2ae437e1); 72,983,354 bytes.
TOOLS_JAR = (
    "org.apache.avro",
    "avro-tools",
    AVRO_VERSION,
    "6220e8bc089aaf917cdad4cd358bd651fc0394c0e5ddb8b36da402012c294a68",
)

MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
HERE = Path(__file__).resolve().parent
SOURCE = HERE / "AvroOracle.java"
# small heap and quick start: the oracle holds a few thousand parsed schemas at most
JVM_FLAGS = ("-Xshare:auto", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx512m")
# added for avro-tools, whose output is read from stdout: the JVM's own warnings
# (a class-data archive it cannot use, say) go to stderr, not stdout
TOOLS_LOG_FLAGS = ("-Xlog:disable", "-Xlog:all=warning:stderr")


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


def _fetch_jars(folder: Path, jars) -> list[Path]:
    base = os.environ.get("ROASTEDAVRO_MAVEN_URL", MAVEN_CENTRAL).rstrip("/")
    (folder / "lib").mkdir(parents=True, exist_ok=True)
    paths = [folder / "lib" / f"{artifact}-{version}.jar" for _, artifact, version, _ in jars]
    for (group, artifact, version, sha256), path in zip(jars, paths):
        if path.exists() and _sha256(path) == sha256:
            continue
        url = f"{base}/{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}.jar"
        _log(f"downloading {url}")
        _download(url, path, sha256)
    return paths


def _fetch_unlocked(folder: Path) -> list[Path]:
    return _fetch_jars(folder, JARS)


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
                [
                    javac,
                    "-nowarn",
                    "-encoding",
                    "UTF-8",
                    "-d",
                    str(staging),
                    "-cp",
                    os.pathsep.join(map(str, jars)),
                    str(SOURCE),
                ],
                capture_output=True,
                text=True,
                timeout=600,
            )
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


# -- avro-tools -------------------------------------------------------------


def tools_jar_path(folder: Path | None = None) -> Path:
    _, artifact, version, _ = TOOLS_JAR
    return (folder or java_dir()) / "lib" / f"{artifact}-{version}.jar"


def fetch_tools(folder: Path | None = None) -> Path:
    """The avro-tools jar, downloaded if missing or damaged (73 MB, once)."""
    folder = folder or java_dir()
    with _locked(folder):
        return _fetch_jars(folder, [TOOLS_JAR])[0]


def _archive_key(java: str) -> str:
    """What a class-data archive depends on: the jar, the JVM and the flags."""
    home = Path(java).resolve().parent.parent
    parts = [TOOLS_JAR[3], str(home), repr(JVM_FLAGS)]
    for name in ("bin/java", "lib/server/libjvm.so", "lib/modules"):
        with contextlib.suppress(OSError):
            stat = (home / name).stat()
            parts.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _tools_archive(folder: Path, java: str, jar: Path) -> Path | None:
    """A class-data archive of avro-tools' classes (JDK 13+ -XX:ArchiveClassesAtExit):
    it starts each avro-tools JVM about 0.35 s sooner (about 0.65 s instead of 1 s
    here). Made once, under the lock, by running fromjson on two records; None where
    it cannot be made (an old JDK), and then avro-tools runs without it."""
    archive = folder / f"avro-tools-{_archive_key(java)}.jsa"
    failed = archive.with_suffix(".failed")
    if archive.exists():
        return archive
    if failed.exists():
        return None
    work = Path(tempfile.mkdtemp(dir=folder, prefix="avro-tools-cds-"))
    try:
        (work / "schema.avsc").write_text(
            '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "long"},'
            ' {"name": "b", "type": ["null", "string"]}]}'
        )
        (work / "in.json").write_text('{"a": 1, "b": null}\n{"a": 2, "b": {"string": "x"}}\n')
        staging = work / "tools.jsa"
        completed = subprocess.run(
            [
                java,
                *JVM_FLAGS,
                *TOOLS_LOG_FLAGS,
                f"-XX:ArchiveClassesAtExit={staging}",
                "-jar",
                str(jar),
                "fromjson",
                "--codec",
                "deflate",
                "--schema-file",
                str(work / "schema.avsc"),
                str(work / "in.json"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )
        if completed.returncode != 0 or not staging.exists():
            _log(
                f"avro-tools runs without a class-data archive (cannot make one: "
                f"{completed.stderr.strip()[-500:]})"
            )
            failed.write_text(completed.stderr)
            return None
        os.replace(staging, archive)
        return archive
    except (OSError, subprocess.SubprocessError) as error:
        _log(f"avro-tools runs without a class-data archive ({error})")
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def tools_command(folder: Path | None = None) -> list[str]:
    """The command line that runs avro-tools (add the tool's name and arguments),
    fetching the jar (and making its class-data archive) if missing."""
    java = shutil.which("java")
    if java is None:
        raise FetchError("no java on PATH: avro-tools needs a Java 11 or later")
    folder = folder or java_dir()
    with _locked(folder):
        jar = _fetch_jars(folder, [TOOLS_JAR])[0]
        archive = _tools_archive(folder, java, jar)
    cds = [f"-XX:SharedArchiveFile={archive}"] if archive else []
    return [java, *JVM_FLAGS, *TOOLS_LOG_FLAGS, *cds, "-jar", str(jar)]


def main(argv: list[str]) -> int:
    action = argv[1] if len(argv) > 1 else "fetch"
    try:
        if action == "fetch":
            started = time.monotonic()
            classes = build()
            _log(
                f"Avro {AVRO_VERSION} jars in {java_dir() / 'lib'}, oracle in {classes} "
                f"({time.monotonic() - started:.1f} s)"
            )
        elif action == "classpath":
            print(classpath())
        elif action == "run":
            args = command()
            os.execv(args[0], args)
        elif action == "tools":
            print(fetch_tools())
        elif action == "tools-run":
            args = tools_command() + argv[2:]
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
