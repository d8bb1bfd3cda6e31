#!/usr/bin/env python3
"""fastavro's test container files (tests/avro-files/ of fastavro's repository) for
roastedavro's tests; most were written by Java Avro.

Puts the files listed in FILES into a git-ignored folder (build/fastavro-testdata/
fastavro-<version>/ of the checkout, or $ROASTEDAVRO_FASTAVRO_TESTDATA_DIR), each
checked against its pinned SHA-256. Safe to run again and from several processes
at once: a file lock serialises them, and what is there and intact is kept.

    python scripts/fastavro_testdata.py      # fetch, print the folder

    from fastavro_testdata import fetch, FILES, java_written
    folder = fetch()                         # a Path; folder / name for each file

Where they come from, first that works:
 1. $ROASTEDAVRO_FASTAVRO_URL, a mirror of the avro-files folder (file:// URLs too);
 2. GitHub's raw files at the commit of fastavro's tag FASTAVRO_VERSION;
 3. the same files in fastavro's source distribution of that version on PyPI,
    downloaded by pip (hash-checked: --require-hashes) and read with tarfile. The
    machines this project runs on reach PyPI but not GitHub, so this is the way
    there (about 8 s: pip prepares the sdist's metadata in a build environment).
The files are the same in all three (checked when they were pinned).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no lock, so run the first fetch alone
    fcntl = None

FASTAVRO_VERSION = "1.12.2"
FASTAVRO_COMMIT = "a937166d5bf217a8005f1047c817ced7794f231c"  # the tag 1.12.2
SDIST_SHA256 = "3c79502d56cf6b76210032e1c53494ddfbc73c140bccf2ef4092b3f0825323ab"
GITHUB_RAW = f"https://raw.githubusercontent.com/fastavro/fastavro/{FASTAVRO_COMMIT}/tests/avro-files"
FOLDER_IN_SDIST = f"fastavro-{FASTAVRO_VERSION}/tests/avro-files"
HERE = Path(__file__).resolve().parent


@dataclasses.dataclass(frozen=True)
class AvroFile:
    sha256: str
    records: int  # as fastavro 1.13 reads them
    blocks: int
    codec: str
    java: bool  # written by Java Avro (see below)
    note: str = ""


# Java-written: the schema in the header is Java's Schema.toString (compact JSON,
# "type" and "name" first), or the file is named after the Java test that wrote it
# (most were collected from Avro 1.6's Java build in 2011), and the metadata is in
# Java's HashMap order (avro.codec first) where the schema text cannot tell (a bare
# "bytes"). Not Java: JSON with ", " and ": " (Python's json.dumps, fastavro's or
# Avro's Python library's) and, from Python 2, avro.schema first.
FILES: dict[str, AvroFile] = {
    "weather.avro": AvroFile(
        "9298fc50cd99571b8480af60886cd6b10c5dd1cc0aea2d91b444e1c66befd25f",
        5,
        1,
        "null",
        True,
        "Avro's share/test/data weather file; doc after fields (old Java)",
    ),
    "weather-snappy.avro": AvroFile(
        "7c640d43a2f61bbf7851e2d3df4cee71e9aa8c0f420cef169c23b43fcc216c3b", 5, 1, "snappy", True
    ),
    "weather-sorted.avro": AvroFile(
        "b79d3effa80f19b4f79417db7f8d5ffd4e05ddcc52ec08869652ca73f0b3c28a",
        5,
        1,
        "deflate",
        True,
        'a field with "order": "ignore"',
    ),
    "test-null.avro": AvroFile(
        "5e7527572ac67a4416bd6816b66ccdb621f8686efb88f46cb0b795b9febd2f59",
        400,
        53,
        "null",
        True,
        "Java's TestDataFile: many small blocks",
    ),
    "test-null-B.avro": AvroFile(
        "cb8813d1a8b7043d63270d37a987794541b47d8b9ae33d00dfa1d4c553b3c7e8",
        200,
        12,
        "null",
        True,
        "Java's TestDataFileConcat",
    ),
    "test-deflate-0.avro": AvroFile(
        "fcde486478fbb60a379461621fd0da550b0dbe1c6b6bc5f46b562f1274af16f1",
        400,
        53,
        "deflate",
        True,
        "deflate level 0 (stored blocks)",
    ),
    "test-deflate-1.avro": AvroFile(
        "6bd6d7ce3eaafffe56c3494debd1ecbf47ff6972501e1949d4a338ca446bcde5", 400, 53, "deflate", True
    ),
    "test-deflate-9.avro": AvroFile(
        "d680d147f3bfded1880321c648d59bcc89a586a664cd8634a021c802957f3021", 400, 53, "deflate", True
    ),
    "test-deflate-1-A.avro": AvroFile(
        "89b06ae842d4e39d84d026eb933e49e21ceaa038feb693f392f719e4f6336aca",
        400,
        24,
        "deflate",
        True,
        "Java's TestDataFileConcat",
    ),
    "test-deflate-3-A.avro": AvroFile(
        "53314b787d79bcdc6b3b7733ba8984aee3e02509911b35cea9e870ede2a1874d",
        400,
        24,
        "deflate",
        True,
        "Java's TestDataFileConcat",
    ),
    "test-deflate-6-B.avro": AvroFile(
        "f5752c54982cc8cf108f9bd5a3eacfd633029c7e01ff41aed72a8e66e1de4842",
        200,
        12,
        "deflate",
        True,
        "Java's TestDataFileConcat",
    ),
    "test-snappy.avro": AvroFile(
        "014ae36e9ddef883e59cd5d4044b519a7e853b4678a5da3cc8b29c0fe5e4ca1b", 400, 53, "snappy", True
    ),
    "null.avro": AvroFile(
        "8a28ad471b756fcdd98553cae8c55a0cc7cd8e6027d4670684741712d7a35928",
        10,
        1,
        "null",
        True,
        'schema "bytes", the same 10 random values as deflate.avro and snappy.avro',
    ),
    "deflate.avro": AvroFile(
        "b0994052775e00ecd23c6634e1865486432c1c2912b6a667ce8f885ac3c96322", 10, 1, "deflate", True
    ),
    "snappy.avro": AvroFile(
        "9183d5617dc94474a1c6fac8521e9e3aca35e3f6212629556e383c4106b76e19", 10, 1, "snappy", True
    ),
    "java-generated-uuid.avro": AvroFile(
        "a1223b28ff3b3c3d0533f14cd7fe380385c470306ccfbadd64372b2a6a8ca242",
        151,
        1,
        "null",
        True,
        "uuid logical type; no avro.codec in the header",
    ),
    "lines.avro": AvroFile(
        "7069a5b5c23e968762a81c71e7b4ca00285cbaafe2589ce27e3577308672fbb0",
        3,
        1,
        "null",
        True,
        "Java reflect: namespace org.apache.avro.mapred.TestReflectJob$ (a $); no avro.codec",
    ),
    "part-00000.avro": AvroFile(
        "d093efca3755576edcd5fcfae5c2a342b428ac70f546ac31a4dbac572bc1c76d",
        17,
        1,
        "null",
        True,
        "Java mapred output; namespace with a $; no avro.codec",
    ),
    "test.avro": AvroFile(
        "91825432c829e25416f2c6352103f5d6ffd04d6805edfe97ff9abca06b96f6ed",
        2,
        1,
        "null",
        True,
        "Java's TestDataFileReflect: namespace with a $; no avro.codec",
    ),
    "request.avro": AvroFile(
        "4e97dd000df09d808c74b9b0da00cb41c0f800b6212be3dc251e8cdb18f85b1f", 1, 1, "null", True
    ),
    "response.avro": AvroFile(
        "ccf47aa80c283fe6dae3f29f64c87a520b013c5ddf77cf68a6e04b7e1e83cd89", 1, 1, "null", True
    ),
    "testDataFileMeta.avro": AvroFile(
        "3625be9778692242346ccbf41a27c364dbe17e8adb37f1d6dedabd1f601f072d",
        0,
        0,
        "null",
        True,
        'Java\'s TestDataFileMeta: schema "null", user metadata hello=bar, no blocks, no avro.codec',
    ),
    "org.apache.avro.tool.TestDataFileTools.avro": AvroFile(
        "10753e043150dfc5f6baf91ef55070fda07ea42720c90b46252861147bfcdf29",
        10,
        1,
        "null",
        True,
        "no avro.codec",
    ),
    "class org.apache.avro.tool.TestDataFileTools.testWrite.plain.avro": AvroFile(
        "6bdf54bc078ae8871939a1db02f40401a7369cad48a3f9e3bd45728b6d85b709",
        10,
        1,
        "null",
        True,
        "avro-tools fromjson's test",
    ),
    "class org.apache.avro.tool.TestDataFileTools.testWrite.deflate.avro": AvroFile(
        "e947f6a7a263f05523458812582cf8dcef64bdf59f5a34e9d4f2647b2b78465f", 10, 1, "deflate", True
    ),
    "class org.apache.avro.tool.TestDataFileTools.seperators.avro": AvroFile(
        "400d179435f248b1c7239a06a50e7acdf8873b1a06e4c66c1e764d2e3e5555de",
        5,
        1,
        "null",
        True,
        "arrays of int, three of them empty",
    ),
    "class org.apache.avro.tool.TestDataFileTools.zerojsonvalues.avro": AvroFile(
        "5e9ce617edb130ac392a734794f32303307202d6c47fdc7a1a9e03a710296bab",
        0,
        0,
        "null",
        True,
        "a header and no blocks",
    ),
    # written by Python (fastavro or Avro's Python library)
    "a_triple_pair.avro": AvroFile(
        "dfbd2c8a9ab74b9dd079e010ff16c186af41bb1cb1a38a20c7ed61ce4d7c2bed", 1, 1, "null", False
    ),
    "bool.avro": AvroFile(
        "a9e3ec2cd6cc04e0f8c32cf8a61987c5beceb3e198c09062a581660c6379097b", 1, 1, "null", False
    ),
    "m.avro": AvroFile(
        "219d490821e30e133b73e240e4923b7f6c50e8518c4c1266f65be57cd6f06086", 1, 1, "null", False
    ),
    "no-fields.avro": AvroFile(
        "412445aa87b363b56c8a23bfce3fda16f650e070c2ab3eb87e136d46c5b1ccb2",
        1,
        1,
        "null",
        False,
        "a record with no fields",
    ),
    "recursive.avro": AvroFile(
        "87ee6b4264707e813a4bcc184604dd2e512c353f474afd2cabd4714fce0634d9",
        2,
        1,
        "null",
        False,
        "a recursive linked list",
    ),
    "error-type.avro": AvroFile(
        "f02976b0425566cd1d3f50619acc62b0c3dae104c56f78c94d69f66353311199",
        1,
        1,
        "null",
        False,
        'a schema of type "error"',
    ),
    "double_float.avro": AvroFile(
        "d89b6d36f7bc425565e780b8ed9f5988d171456eb3ddce89cbece668a8fe9daa", 1, 1, "deflate", False
    ),
    "weather-legacy-generated.avro": AvroFile(
        "34556160901a29125939ac6f703a204c492b0298429a246b47eeb46d4f83640a",
        4,
        1,
        "null",
        False,
        'fastavro-written; record named "test.Weather" with a dotted name',
    ),
    "weather-legacy-with-names.avro": AvroFile(
        "90b57adef3e2483c117e63aede953345462c9f456d0e60dff8b5c1d53f9008ec",
        3,
        1,
        "null",
        False,
        "fastavro-written",
    ),
}


class FetchError(RuntimeError):
    """The files could not be had from any source."""


def testdata_dir() -> Path:
    configured = os.environ.get("ROASTEDAVRO_FASTAVRO_TESTDATA_DIR")
    base = Path(configured) if configured else HERE.parent / "build" / "fastavro-testdata"
    return base / f"fastavro-{FASTAVRO_VERSION}"


def java_written() -> list[str]:
    """Names of the files Java wrote."""
    return [name for name, info in FILES.items() if info.java]


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


def _intact(path: Path, sha256: str) -> bool:
    return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == sha256


def _store(folder: Path, name: str, data: bytes, source: str) -> None:
    actual = hashlib.sha256(data).hexdigest()
    if actual != FILES[name].sha256:
        raise FetchError(f"{name} from {source}: SHA-256 {actual}, expected {FILES[name].sha256}")
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".part-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, folder / name)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def _from_urls(folder: Path, base: str, names: list[str]) -> None:
    """Each file from base/<name>; OSError (urllib's errors included) if one cannot be had."""
    for name in names:
        url = f"{base.rstrip('/')}/{urllib.parse.quote(name)}"
        with urllib.request.urlopen(url, timeout=30) as response:
            _store(folder, name, response.read(), url)


def download_sdist(version: str, sha256: str, work: str | Path) -> Path:
    """fastavro's source distribution of ``version``, downloaded by pip into
    ``work`` and checked against ``sha256`` (pip's --require-hashes)."""
    requirements = Path(work) / "requirements.txt"
    requirements.write_text(f"fastavro=={version} --hash=sha256:{sha256}\n")
    completed = subprocess.run(
        # --no-binary for fastavro alone: ":all:" would also build its build
        # requirements (Cython) from source to prepare the sdist's metadata,
        # about 6 minutes; with their wheels it takes a few seconds
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            "fastavro",
            "--require-hashes",
            "-r",
            str(requirements),
            "-d",
            str(work),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    sdist = Path(work) / f"fastavro-{version}.tar.gz"
    if completed.returncode != 0 or not sdist.exists():
        raise FetchError(
            f"pip could not download fastavro {version}'s sdist:\n{completed.stdout}{completed.stderr}"
        )
    return sdist


def _from_sdist(folder: Path, names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as work:
        sdist = download_sdist(FASTAVRO_VERSION, SDIST_SHA256, work)
        with tarfile.open(sdist) as archive:
            for name in names:
                member = archive.extractfile(f"{FOLDER_IN_SDIST}/{name}")
                if member is None:
                    raise FetchError(f"{name} is not a file in {sdist.name}")
                _store(folder, name, member.read(), sdist.name)


def fetch(folder: Path | None = None) -> Path:
    """The folder holding every file of FILES, fetching those missing or damaged."""
    folder = folder or testdata_dir()
    with _locked(folder):
        missing = [name for name, info in FILES.items() if not _intact(folder / name, info.sha256)]
        if not missing:
            return folder
        errors = []
        sources = [
            ("$ROASTEDAVRO_FASTAVRO_URL", os.environ.get("ROASTEDAVRO_FASTAVRO_URL")),
            ("GitHub", GITHUB_RAW),
        ]
        for label, base in sources:
            if not base:
                continue
            try:
                _from_urls(folder, base, missing)
                return folder
            except OSError as error:  # unreachable, not found: the next source
                errors.append(f"{label} ({base}): {error}")
            missing = [name for name in missing if not _intact(folder / name, FILES[name].sha256)]
        _log(
            f"fastavro test files: {'; '.join(errors)}; trying fastavro {FASTAVRO_VERSION}'s sdist from PyPI"
        )
        _from_sdist(folder, missing)
        return folder


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        print(fetch())
    except FetchError as error:
        _log(f"error: {error}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
