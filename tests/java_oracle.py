"""Java Avro 1.12 (the reference implementation) as a test oracle.

The session fixture ``java`` fetches the jars on first use (scripts/java/fetch.py,
cached in build/java/ of the checkout), starts one JVM running
scripts/java/AvroOracle.java and talks JSON lines with it. Tests using it skip
only when there is no ``java``/``javac`` on PATH; a failing download or
compilation is an error.

Schemas are given as JSON values (dict, list), JSON text, or a bare type name
(``"long"``, ``"com.example.Order"``), as parse_schema takes them.
"""

from __future__ import annotations

import base64
import dataclasses
import importlib.util
import json
import queue
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterable

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts" / "java"
# requests per line: a batch is answered in one line, and a JVM that dies in the
# middle of a batch loses no more than this
BATCH = 500
# one line (a batch included) must be answered within this
TIMEOUT = 300.0
_TYPE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


class JavaOracleError(RuntimeError):
    """Java refused a request the test expected it to accept."""


def _fetch_module():
    spec = importlib.util.spec_from_file_location("roastedavro_java_fetch", SCRIPTS / "fetch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def schema_text(schema: Any) -> str:
    """JSON text of a schema given as JSON values, JSON text or a bare type name ("long")."""
    if not isinstance(schema, str):
        return json.dumps(schema)
    return json.dumps(schema) if _TYPE_NAME.fullmatch(schema) else schema


@dataclasses.dataclass(frozen=True)
class RoundTrip:
    """Java's reading of some bytes and its writing of what it read."""

    data: bytes  # GenericDatumWriter's encoding of the datum read
    datum: str  # GenericData.toString of the datum
    json: str  # the datum in Avro's JSON encoding
    trailing: int  # bytes left after the datum


class JavaOracle:
    def __init__(self, command: list[str]):
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            encoding="utf-8",
            bufsize=1,
        )
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._lock = threading.Lock()

    def _read(self):
        for line in self._process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _stderr_tail(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")[-2000:]

    def close(self):
        if self._process.poll() is None:
            self._process.stdin.close()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._stderr.close()

    def _exchange(self, message: Any) -> Any:
        with self._lock:
            if self._process.poll() is not None:
                raise JavaOracleError(f"the Java oracle has exited:\n{self._stderr_tail()}")
            self._process.stdin.write(json.dumps(message) + "\n")
            self._process.stdin.flush()
            try:
                line = self._lines.get(timeout=TIMEOUT)
            except queue.Empty:
                raise JavaOracleError(f"the Java oracle did not answer within {TIMEOUT} s") from None
            if line is None:
                raise JavaOracleError(f"the Java oracle has exited:\n{self._stderr_tail()}")
            return json.loads(line)

    # -- requests ---------------------------------------------------------

    def request(self, request: dict) -> dict:
        """One request as the protocol has it (see AvroOracle.java); the answer as it is."""
        return self._exchange(request)

    def batch(self, requests: Iterable[dict]) -> list[dict]:
        """Many requests, BATCH per line; the answers in order."""
        requests = list(requests)
        answers: list[dict] = []
        for start in range(0, len(requests), BATCH):
            answers.extend(self._exchange(requests[start : start + BATCH]))
        return answers

    @staticmethod
    def _ok(answer: dict, what: str) -> dict:
        if not answer.get("ok"):
            raise JavaOracleError(f"Java refused {what}: {answer.get('kind')}: {answer.get('error')}")
        return answer

    # parse: Java's verdict, never raises for a refused schema

    def parse(self, schema: Any) -> dict:
        """{"ok": True, "full": Schema.toString()} or {"ok": False, "kind": ..., "error": ...}."""
        return self._exchange({"op": "parse", "schema": schema_text(schema)})

    def parse_each(self, schemas: Iterable[Any]) -> list[dict]:
        """parse for each schema, each with a fresh Parser."""
        return self.batch({"op": "parse", "schema": schema_text(s)} for s in schemas)

    def parse_many(self, schemas: Iterable[Any]) -> list[dict]:
        """The schemas parsed in order by one Parser (later ones may use earlier ones' names).
        One result per schema up to the first refused one."""
        answer = self._exchange({"op": "parse_many", "schemas": [schema_text(s) for s in schemas]})
        return self._ok(answer, "parse_many")["results"]

    # canonical forms and fingerprints: the schema must be valid for Java

    def canonical(self, schema: Any) -> str:
        return self.canonical_each([schema])[0]

    def canonical_each(self, schemas: Iterable[Any]) -> list[str]:
        texts = [schema_text(s) for s in schemas]
        answers = self.batch({"op": "canonical", "schema": text} for text in texts)
        return [self._ok(answer, f"schema {text}")["canonical"] for text, answer in zip(texts, answers)]

    def fingerprints(self, schema: Any) -> dict:
        return self.fingerprints_each([schema])[0]

    def fingerprints_each(self, schemas: Iterable[Any]) -> list[dict]:
        """{"CRC-64-AVRO": unsigned int, "MD5": bytes, "SHA-256": bytes} for each schema."""
        texts = [schema_text(s) for s in schemas]
        answers = self.batch({"op": "fingerprints", "schema": text} for text in texts)
        results = []
        for text, answer in zip(texts, answers):
            self._ok(answer, f"schema {text}")
            results.append(
                {
                    "CRC-64-AVRO": int(answer["crc64"]),
                    "MD5": bytes.fromhex(answer["md5"]),
                    "SHA-256": bytes.fromhex(answer["sha256"]),
                }
            )
        return results

    # data

    def roundtrip(self, schema: Any, data: bytes) -> RoundTrip:
        return self.roundtrip_each([(schema, data)])[0]

    def roundtrip_each(self, cases: Iterable[tuple[Any, bytes]]) -> list[RoundTrip]:
        """Java reads each (schema, bytes) and writes what it read; raises if it cannot read one."""
        cases = [(schema_text(schema), data) for schema, data in cases]
        answers = self.batch(
            {"op": "roundtrip", "schema": text, "data": base64.b64encode(data).decode()}
            for text, data in cases
        )
        results = []
        for (text, data), answer in zip(cases, answers):
            self._ok(answer, f"to read {data.hex()} as {text}")
            results.append(
                RoundTrip(
                    base64.b64decode(answer["data"]), answer["datum"], answer["json"], answer["trailing"]
                )
            )
        return results

    def roundtrip_single_each(self, cases: Iterable[tuple[Any, bytes]]) -> list[RoundTrip]:
        """The same for single-object encoded messages: Java's message decoder checks the
        marker and the fingerprint, its encoder writes them (``json`` is empty)."""
        cases = [(schema_text(schema), data) for schema, data in cases]
        answers = self.batch(
            {"op": "roundtrip_single", "schema": text, "data": base64.b64encode(data).decode()}
            for text, data in cases
        )
        results = []
        for (text, data), answer in zip(cases, answers):
            self._ok(answer, f"to read the message {data.hex()} as {text}")
            results.append(
                RoundTrip(base64.b64decode(answer["data"]), answer["datum"], "", answer["trailing"])
            )
        return results

    def encode_json(self, schema: Any, datum_json: str) -> bytes:
        return self.encode_json_each([(schema, datum_json)])[0]

    def encode_json_each(self, cases: Iterable[tuple[Any, str]]) -> list[bytes]:
        """Binary encodings of datums given in Avro's JSON encoding (unions as {"type": value},
        bytes and fixed as strings of code points 0-255)."""
        cases = [(schema_text(schema), text) for schema, text in cases]
        answers = self.batch({"op": "encode_json", "schema": schema, "json": text} for schema, text in cases)
        return [
            base64.b64decode(self._ok(answer, f"to encode {text} as {schema}")["data"])
            for (schema, text), answer in zip(cases, answers)
        ]

    # schema resolution and compatibility

    def resolve_each(self, cases: Iterable[tuple[Any, Any, bytes]]) -> list[RoundTrip | dict]:
        """GenericDatumReader(writer, reader) reads each (writer, reader, bytes); what it read is
        written in the reader's schema. A RoundTrip, or Java's refusal as {"kind", "error"}
        (data the pair cannot read is an answer here, not a test failure)."""
        cases = [(schema_text(w), schema_text(r), data) for w, r, data in cases]
        answers = self.batch(
            {"op": "resolve", "writer": w, "reader": r, "data": base64.b64encode(data).decode()}
            for w, r, data in cases
        )
        results: list[RoundTrip | dict] = []
        for answer in answers:
            if answer.get("ok"):
                results.append(
                    RoundTrip(
                        base64.b64decode(answer["data"]), answer["datum"], answer["json"], answer["trailing"]
                    )
                )
            else:
                results.append({"kind": answer.get("kind"), "error": answer.get("error")})
        return results

    def compatibility_each(self, pairs: Iterable[tuple[Any, Any]]) -> list[dict]:
        """SchemaCompatibility.checkReaderWriterCompatibility for each (reader, writer):
        {"compatible": bool, "incompatibilities": [{"type", "location", "message"}]},
        or {"error": ...} where Java throws."""
        pairs = [(schema_text(r), schema_text(w)) for r, w in pairs]
        answers = self.batch({"op": "compatibility", "reader": r, "writer": w} for r, w in pairs)
        return [
            answer if answer.get("ok") else {"error": f"{answer.get('kind')}: {answer.get('error')}"}
            for answer in answers
        ]


_oracle: JavaOracle | None = None
_failure: Exception | None = None


def start_oracle() -> JavaOracle:
    """The oracle of this process (started on first call)."""
    global _oracle, _failure
    if _oracle is None:
        missing = [tool for tool in ("java", "javac") if shutil.which(tool) is None]
        if missing:
            pytest.skip(
                f"Java oracle: no {' or '.join(missing)} on PATH "
                "(a JDK 11+ runs the comparisons with Java Avro 1.12)"
            )
        # anything else that goes wrong (download, javac) is an error of every
        # test that needs the oracle, tried once per session
        if _failure is not None:
            raise _failure
        try:
            _oracle = JavaOracle(_fetch_module().command())
        except Exception as error:
            _failure = error
            raise
    return _oracle


@pytest.fixture(scope="session")
def java():
    oracle = start_oracle()
    yield oracle
    global _oracle
    oracle.close()
    _oracle = None
