#!/usr/bin/env python3
"""A Kafka broker and a Confluent-compatible schema registry for roastedavro's tests.

Both are real servers run by Java 17+ on 127.0.0.1, fetched from Maven Central:
Apache Kafka (KRaft: one JVM that is broker and controller, run from its jars) and
Apicurio Registry (in-memory storage; Confluent's API under /apis/ccompat/v7).
The files go to a git-ignored folder (build/services/ of the checkout, or
$ROASTEDAVRO_SERVICES_DIR), each checked against its pinned SHA-256; what is
there and intact is kept, and a file lock lets several processes fetch at once.

    python scripts/services/services.py fetch [kafka|registry|all]
    python scripts/services/services.py start kafka|registry [--port N] [--state DIR]
    python scripts/services/services.py stop kafka|registry [--state DIR]
    python scripts/services/services.py status

start prints one JSON line (pid, port, bootstrap or url, state folder, log) once
the server answers; the server keeps running after the command returns. Ports
are free ones picked at random unless --port is given (Kafka's controller port
too), the state folder a fresh one under the temporary folder unless --state
is. A mirror of Maven Central can be given as $ROASTEDAVRO_MAVEN_URL.

As a module: start_kafka() and start_registry() return a started service
(.port, .log_path, .alive(), .stop(), KafkaService.bootstrap, RegistryService.url);
with wait=False they return as soon as the JVM runs, and .wait_ready() waits,
so both servers can come up at the same time.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no lock, so run the first fetch alone
    fcntl = None

KAFKA_VERSION = "4.3.1"
APICURIO_VERSION = "3.0.9"  # the newest Apicurio Registry that runs on Java 17

# (group, artifact, version, sha256): kafka_2.13 and what it needs at run time,
# as Maven resolves it, plus log4j-slf4j-impl so the broker's slf4j 1.x logging
# reaches log4j2 (configured by log4j2.properties here). Each SHA-256 was
# computed from the jar downloaded from Maven Central, whose SHA-1 matched the
# .sha1 file published next to it.
KAFKA_JARS = (
    ("at.yawk.lz4", "lz4-java", "1.10.2", "252dabd586d22149a31661a8afc1a50747714eb1a298bd4a6e780c8c91a13866"),
    (
        "com.dynatrace.hash4j",
        "hash4j",
        "0.22.0",
        "23028a3fd006e530bf495f551083208187cafd8f80624d048eba56442f16a50e",
    ),
    (
        "com.fasterxml.jackson.core",
        "jackson-annotations",
        "2.21",
        "53ca085f4a150f703f49e1aabd935bd03b43e1ea3d55d135438292af22cef56b",
    ),
    (
        "com.fasterxml.jackson.core",
        "jackson-core",
        "2.21.2",
        "12e8655b100267b44d0f14d01b1f5082a5105e616174dc4307be1a761e92407b",
    ),
    (
        "com.fasterxml.jackson.core",
        "jackson-databind",
        "2.21.2",
        "8c982f01f148d805f0aaac2339011244757e0df7c6ff8951f2fa3f433b8ed849",
    ),
    (
        "com.fasterxml.jackson.dataformat",
        "jackson-dataformat-csv",
        "2.21.2",
        "682f8c7977e02a42748426bf54946e32e52e2f80b84b6642801ab12bd541368a",
    ),
    (
        "com.fasterxml.jackson.dataformat",
        "jackson-dataformat-yaml",
        "2.21.2",
        "d25551812fa0c14f37cabaa9401e63eadcea42ce36311183af5622d5bc8a1bc7",
    ),
    (
        "com.fasterxml.jackson.datatype",
        "jackson-datatype-jdk8",
        "2.21.2",
        "e581bbf3fc5622d16b57366dd41e10fc56921fb202879de2ef487f87dd9b30e7",
    ),
    (
        "com.github.ben-manes.caffeine",
        "caffeine",
        "3.2.0",
        "ec411dfdf0c03f25218648ce89861630b71680e5858a9a7278ebac8e55cab3d7",
    ),
    (
        "com.github.luben",
        "zstd-jni",
        "1.5.6-10",
        "b6c3237e24b8252a5a9c3a0e1ae30ef8f323412e74bd358548b7a9e527d676df",
    ),
    ("com.google.re2j", "re2j", "1.8", "7b52c72156dd7f98b3237a5b35c1d34fba381b21048c89208913ad80a45dfbd7"),
    (
        "com.typesafe.scala-logging",
        "scala-logging_2.13",
        "3.9.6",
        "0ad0c3f4d89d538b3b6c300158555e266aa69cf1b5f6522aba8b5bad238eb994",
    ),
    (
        "com.yammer.metrics",
        "metrics-core",
        "2.2.0",
        "6b7a14a6f34c10f8683f7b5e2f39df0f07b58c7dff0e468ebbc713905c46979c",
    ),
    (
        "commons-beanutils",
        "commons-beanutils",
        "1.11.0",
        "9e44ba68ec9a3f21286fa2a8bbb003b735c0f69101bb43144b79f4f8aaa74709",
    ),
    (
        "commons-collections",
        "commons-collections",
        "3.2.2",
        "eeeae917917144a68a741d4c0dff66aa5c5c5fd85593ff217bced3fc8ca783b8",
    ),
    (
        "commons-digester",
        "commons-digester",
        "2.1",
        "e0b2b980a84fc6533c5ce291f1917b32c507f62bcad64198fff44368c2196a3d",
    ),
    (
        "commons-logging",
        "commons-logging",
        "1.3.5",
        "6d7a744e4027649fbb50895df9497d109f98c766a637062fe8d2eabbb3140ba4",
    ),
    (
        "commons-validator",
        "commons-validator",
        "1.10.1",
        "ed74711a78d793ca37f6075e4a1e93d107233dfd20d0bb17e32bad88d38e56aa",
    ),
    (
        "net.sf.jopt-simple",
        "jopt-simple",
        "5.0.4",
        "df26cc58f235f477db07f753ba5a3ab243ebe5789d9f89ecf68dd62ea9a66c28",
    ),
    (
        "net.sourceforge.argparse4j",
        "argparse4j",
        "0.7.0",
        "65ceb669d88f63306c680f8088bbf765bbca72d288a61a03703000076c3d3f56",
    ),
    (
        "org.apache.kafka",
        "kafka-clients",
        KAFKA_VERSION,
        "52501b7b47510c66f898871adaf6d2968ab7246561d44ced43643a8a587f0b36",
    ),
    (
        "org.apache.kafka",
        "kafka-coordinator-common",
        KAFKA_VERSION,
        "66a86b8c89718216ffa72fe4e44b9d1bdf3472e4cb9200c36a0742a25febbdba",
    ),
    (
        "org.apache.kafka",
        "kafka-group-coordinator-api",
        KAFKA_VERSION,
        "d81bc1a3739ff6c9b21815baae00022306342a16d3d94e6a2621201b9980a30d",
    ),
    (
        "org.apache.kafka",
        "kafka-group-coordinator",
        KAFKA_VERSION,
        "4ab56d002e1624185c874199e9e0ffb243dbeb9f68b4d0cadf48ce2f617a1126",
    ),
    (
        "org.apache.kafka",
        "kafka-metadata",
        KAFKA_VERSION,
        "4d73a96c6474a4ebdd67a1cee14da1a94cfd6bb9e6e252685ba5667d8ab7f898",
    ),
    (
        "org.apache.kafka",
        "kafka-raft",
        KAFKA_VERSION,
        "46abbf89806dd22d848e997cdfb1431524cab4ec88e38a7d2806e20b24a70609",
    ),
    (
        "org.apache.kafka",
        "kafka-server-common",
        KAFKA_VERSION,
        "d7c719f749579a399011f0df7414de8a78f10f074a6122caa550fdb141351575",
    ),
    (
        "org.apache.kafka",
        "kafka-server",
        KAFKA_VERSION,
        "01d736599ec3b0cdbb0480c15219170b28cdae189785e7f0c6f1f26e528eaebc",
    ),
    (
        "org.apache.kafka",
        "kafka-share-coordinator",
        KAFKA_VERSION,
        "8ceeed7346127e652ea5c650b217890aaff14919f967d27fadce420745bd3066",
    ),
    (
        "org.apache.kafka",
        "kafka-storage-api",
        KAFKA_VERSION,
        "bc2b22639fa554494461d101d599e01bae840d97c4f46e18fdf3d2fe41a47098",
    ),
    (
        "org.apache.kafka",
        "kafka-storage",
        KAFKA_VERSION,
        "97e3facddd2914a58f28ec91ef35f8da69963eab3651196e97f487924f6dac98",
    ),
    (
        "org.apache.kafka",
        "kafka-tools-api",
        KAFKA_VERSION,
        "dcf6785742e0c8ab11a0fc09c62f1192e11e997dc629669a8db82aa40d933c31",
    ),
    (
        "org.apache.kafka",
        "kafka-transaction-coordinator",
        KAFKA_VERSION,
        "c64aaa2a88d8fd382c4800204872917686e542043c7916c9e8797d939d8eb313",
    ),
    (
        "org.apache.kafka",
        "kafka_2.13",
        KAFKA_VERSION,
        "b098abef5ff878e76f60cd6c559b9baa5663ccb1b55f2837558b22c329d32423",
    ),
    (
        "org.apache.logging.log4j",
        "log4j-api",
        "2.25.4",
        "c4b642a7f047275215de117e0e3847eb2c7711d84a0aa7433e7b3c096daf341d",
    ),
    (
        "org.apache.logging.log4j",
        "log4j-core",
        "2.25.4",
        "10fee2c0485d54fa44ee75d314f6295508f7b932281873db61a91b88073200e6",
    ),
    (
        "org.apache.logging.log4j",
        "log4j-slf4j-impl",
        "2.25.4",
        "7ac68a0afcc83d54f48d116d79370a43f0a2a6b71b5c1d6dda943bb6a95ddbaa",
    ),
    (
        "org.bitbucket.b_c",
        "jose4j",
        "0.9.6",
        "7314af50cde9c99e8eaf43eee617a23edcc6bb43036221064355094999d837ef",
    ),
    (
        "org.hdrhistogram",
        "HdrHistogram",
        "2.2.2",
        "22d1d4316c4ec13a68b559e98c8256d69071593731da96136640f864fa14fad8",
    ),
    ("org.jspecify", "jspecify", "1.0.0", "1fad6e6be7557781e4d33729d49ae1cdc8fdda6fe477bb0cc68ce351eafdfbab"),
    (
        "org.pcollections",
        "pcollections",
        "4.0.2",
        "2bbeef5797a241300c4f7513cd546239629ed7deda4fc0c31df90bb95f5f13ef",
    ),
    (
        "org.scala-lang",
        "scala-library",
        "2.13.18",
        "4e85d96ff7bc7dc627985523c3541b9917aaa08e956391380c42db21a2c4e5a0",
    ),
    (
        "org.scala-lang",
        "scala-reflect",
        "2.13.18",
        "6935ff1982b2ac93d695f15aa66921be2f602921277afe002f018fd8c7d6e29b",
    ),
    ("org.slf4j", "slf4j-api", "1.7.36", "d3ef575e3e4979678dc01bf1dcce51021493b4d11fb7f1be8ad982877c16a1c0"),
    (
        "org.xerial.snappy",
        "snappy-java",
        "1.1.10.7",
        "4c766cb3f855415ee734b2392949a0b6f12a60879334a74518deaf6270d32e36",
    ),
    ("org.yaml", "snakeyaml", "2.5", "e6682acf1ace77508ef13649cbf4f8d09d2cf5457bdb61d25ffb6ac0233d78dd"),
)

# The registry as Maven Central has it: a tar.gz (109 MB) holding the runner jar
# and its lib/ folder. SHA-256 computed like the jars' (its SHA-1 matched too).
APICURIO_ARCHIVE = (
    "io.apicurio",
    "apicurio-registry-app",
    APICURIO_VERSION,
    "all",
    "2b28181501a20cbf6efcd77f9b7153908fc01f3d3a7c32024c0bd9e1b04c8a43",
)

MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
HERE = Path(__file__).resolve().parent
MIN_JAVA = 17  # Kafka 4's broker and Apicurio 3 need it
# A small heap and the serial collector: the least memory for servers this idle.
# Only the quick JIT (C1): both start in about half the time on two cores, and
# tests send too little for the optimising one to pay off.
JVM_FLAGS = (
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Xshare:auto",
    "-XX:-UsePerfData",
    "-Djava.awt.headless=true",
)
KAFKA_TIMEOUT = 60.0
REGISTRY_TIMEOUT = 120.0
STOP_TIMEOUT = 15.0
# a port taken between picking it and the server binding it: try new ones
PORT_TRIES = 3
_PORT_IN_USE = re.compile(r"Address already in use|seems to be in use", re.IGNORECASE)


class ServiceError(RuntimeError):
    """A server could not be fetched, started or stopped."""


def services_dir() -> Path:
    configured = os.environ.get("ROASTEDAVRO_SERVICES_DIR")
    return Path(configured) if configured else HERE.parent.parent / "build" / "services"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- fetching ---------------------------------------------------------------


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


def _maven_url(group: str, artifact: str, version: str, suffix: str) -> str:
    base = os.environ.get("ROASTEDAVRO_MAVEN_URL", MAVEN_CENTRAL).rstrip("/")
    return f"{base}/{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}{suffix}"


def _download(url: str, target: Path, sha256: str) -> None:
    """url to target, written only whole and with the expected SHA-256."""
    hint = "(a mirror of Maven Central can be set as ROASTEDAVRO_MAVEN_URL)"
    last_error: Exception | None = None
    for attempt in range(3):
        if attempt:
            time.sleep(2 * attempt)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".part")
        try:
            with os.fdopen(handle, "wb") as out, urllib.request.urlopen(url, timeout=60) as response:
                shutil.copyfileobj(response, out, 1 << 20)
            actual = _sha256(Path(temporary))
            if actual != sha256:
                raise ServiceError(f"{url}: SHA-256 {actual}, expected {sha256} {hint}")
            os.replace(temporary, target)
            return
        except ServiceError:
            raise
        except OSError as error:  # urllib's errors included
            last_error = error
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
    raise ServiceError(f"cannot download {url}: {last_error} {hint}")


def kafka_lib(folder: Path | None = None) -> Path:
    return (folder or services_dir()) / f"kafka-{KAFKA_VERSION}" / "lib"


def registry_home(folder: Path | None = None) -> Path:
    return (folder or services_dir()) / f"apicurio-registry-{APICURIO_VERSION}"


def _fetch_kafka(folder: Path) -> Path:
    lib = kafka_lib(folder)
    lib.mkdir(parents=True, exist_ok=True)
    for group, artifact, version, sha256 in KAFKA_JARS:
        path = lib / f"{artifact}-{version}.jar"
        if path.exists() and _sha256(path) == sha256:
            continue
        url = _maven_url(group, artifact, version, ".jar")
        _log(f"downloading {url}")
        _download(url, path, sha256)
    return lib


def _fetch_registry(folder: Path) -> Path:
    home = registry_home(folder)
    group, artifact, version, classifier, sha256 = APICURIO_ARCHIVE
    # unpacked into a staging folder and renamed, with a marker naming the archive's
    # hash: the folder is whole if the marker is there (hashing its 362 files on
    # every start would cost more than it protects against)
    marker = home / ".sha256"
    if marker.exists() and marker.read_text().strip() == sha256:
        return home
    archive = folder / f"{artifact}-{version}-{classifier}.tar.gz"
    if not (archive.exists() and _sha256(archive) == sha256):
        url = _maven_url(group, artifact, version, f"-{classifier}.tar.gz")
        _log(f"downloading {url}")
        _download(url, archive, sha256)
    staging = Path(tempfile.mkdtemp(dir=folder, prefix=home.name + ".unpacking-"))
    staging.chmod(0o755)  # mkdtemp makes it private
    try:
        with tarfile.open(archive) as tar:
            # the "data" filter refuses links and paths out of the folder (3.11.4+)
            tar.extractall(staging, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        (staging / ".sha256").write_text(sha256 + "\n")
        shutil.rmtree(home, ignore_errors=True)
        os.replace(staging, home)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    archive.unlink()  # 109 MB that the unpacked folder holds anyway
    return home


def fetch(which: str = "all", folder: Path | None = None) -> None:
    """Download what the servers need (kafka, registry or all), if missing or damaged."""
    if which not in ("kafka", "registry", "all"):
        raise ValueError(f"fetch what? {which!r} (kafka, registry or all)")
    folder = folder or services_dir()
    with _locked(folder):
        if which in ("kafka", "all"):
            _fetch_kafka(folder)
        if which in ("registry", "all"):
            _fetch_registry(folder)


# -- processes --------------------------------------------------------------


def java_missing_reason() -> str | None:
    """Why the servers cannot run here (no java, or one older than 17), or None."""
    java = shutil.which("java")
    if java is None:
        return f"no java on PATH (Kafka and the schema registry need Java {MIN_JAVA}+)"
    try:
        completed = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        return f"cannot run {java} -version: {error}"
    found = re.search(r'version "(?:1\.)?(\d+)', completed.stderr)
    if found is None:
        return f"cannot tell the version of {java}: {completed.stderr.strip()[:200]}"
    if int(found.group(1)) < MIN_JAVA:
        return f"{java} is Java {found.group(1)}; Kafka and the schema registry need Java {MIN_JAVA}+"
    return None


def free_ports(count: int = 1) -> list[int]:
    """Ports free on 127.0.0.1 now, all different (their sockets are open together)."""
    with contextlib.ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
        return ports


def _kafka_request(stream, api_key: int, body: bytes) -> bytes:
    """One version 0 request of Kafka's protocol on a connected stream; the response
    after its correlation id."""
    client = b"roastedavro"
    message = struct.pack(">hhih", api_key, 0, 1, len(client)) + client + body
    stream.write(struct.pack(">i", len(message)) + message)
    stream.flush()
    (size,) = struct.unpack(">i", stream.read(4))
    return stream.read(size)[4:]


def _groups_served(port: int) -> bool:
    """Whether a Kafka broker serves consumer groups: its group coordinator is found
    (the first asking creates __consumer_offsets) and loaded. Waiting for this at
    start spares the first test using a consumer group a few seconds of retries."""
    group = b"roastedavro-ready"
    key = struct.pack(">h", len(group)) + group
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock, sock.makefile("rwb") as stream:
            found = _kafka_request(stream, 10, key)  # FindCoordinator: error code first
            if struct.unpack(">h", found[:2])[0] != 0:
                return False
            described = _kafka_request(stream, 15, struct.pack(">i", 1) + key)  # DescribeGroups
            return struct.unpack(">h", described[4:6])[0] == 0  # the group's error code
    except (OSError, struct.error):
        return False


def _pid_alive(pid: int, state: Path) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):  # gone, or someone else's by now
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc to tell more
    # not a zombie, and not a reused pid: ours has its state folder on its command line
    return stat.rsplit(") ", 1)[-1][:1] != "Z" and str(state).encode() in cmdline


def _remove_abandoned(name: str) -> None:
    """Delete the temporary state folders of servers whose owner was killed (the
    server with it): a pid file is left there, naming a process that has ended."""
    for state in Path(tempfile.gettempdir()).glob(f"roastedavro-{name}-*"):
        with contextlib.suppress(OSError, ValueError):
            pid = int((state / f"{name}.pid").read_text())
            if not _pid_alive(pid, state):
                shutil.rmtree(state, ignore_errors=True)


class Service:
    """One server: a JVM with its state folder, log and pid file."""

    name = "service"
    ready_timeout = 60.0

    def __init__(
        self,
        port: int | None = None,
        state: str | Path | None = None,
        *,
        detach: bool = False,
        folder: Path | None = None,
    ):
        self.port = port or 0
        self._picked_port = port is None
        self._temporary = state is None
        self.state = Path(state).resolve() if state is not None else None
        self.folder = folder or services_dir()
        # detached: outlives this process (the command line); else dies with it
        self.detach = detach
        self.process: subprocess.Popen | None = None
        self.pid: int | None = None
        self.started_at = 0.0
        self.ready_after: float | None = None  # seconds from start() to ready

    @property
    def log_path(self) -> Path:
        return self.state / f"{self.name}.log"

    @property
    def record_path(self) -> Path:
        return self.state / f"{self.name}.json"

    def info(self) -> dict:
        return {
            "service": self.name,
            "pid": self.pid,
            "port": self.port,
            "state": str(self.state),
            "log": str(self.log_path),
            "temporary": self._temporary,
        }

    def __repr__(self):
        return f"<{type(self).__name__} {json.dumps(self.info())}>"

    # what each server does differently
    def _fetch(self) -> None:
        raise NotImplementedError

    def _pick_ports(self) -> None:
        self.port = free_ports(1)[0]

    def _prepare(self) -> None:
        """Write the configuration for the current ports (again after a port clash)."""

    def _command(self) -> list[str]:
        raise NotImplementedError

    def _ready(self) -> bool:
        raise NotImplementedError

    def _after_ready(self) -> None:
        pass

    # lifecycle
    def start(self, wait: bool = True) -> Service:
        """Fetch what is missing, launch the JVM and (with wait) wait until it answers."""
        reason = java_missing_reason()
        if reason:
            raise ServiceError(reason)
        self.started_at = time.monotonic()
        self._fetch()
        if self.state is None:
            _remove_abandoned(self.name)
            self.state = Path(tempfile.mkdtemp(prefix=f"roastedavro-{self.name}-"))
        self.state.mkdir(parents=True, exist_ok=True)
        try:
            if self._picked_port:
                self._pick_ports()
            self._prepare()
            self._launch()
        except BaseException:
            self.stop()  # the error says what went wrong: no log to keep
            raise
        if wait:
            self.wait_ready()
        return self

    def _launch(self) -> None:
        command = self._command()
        if not self.detach and sys.platform == "linux" and shutil.which("setpriv"):
            # the kernel kills the server when the thread that started it ends,
            # so a killed test run leaves no JVM behind. setpriv (util-linux)
            # asks for that between its fork and exec, in C: Python code there
            # (a preexec_fn) can hang forever in a process that has threads
            command = ["setpriv", "--pdeathsig", "KILL", "--", *command]
        with open(self.log_path, "wb") as log:  # a fresh log: readiness is read from it
            self.process = subprocess.Popen(
                command,
                cwd=self.state,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # Ctrl-C reaches the tests only
        self.pid = self.process.pid
        (self.state / f"{self.name}.pid").write_text(f"{self.pid}\n")
        self._write_record()

    def _write_record(self) -> None:
        self.record_path.write_text(json.dumps(self.info()) + "\n")

    def log_tail(self, lines: int = 30) -> str:
        """The log's first errors (the cause, before the stack traces) and its last lines."""
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        errors = [line for line in text[:-lines] if re.search(r"\bERROR\b|^\S*(Exception|Error)\b", line)][:5]
        return "\n".join(errors + ["..."] * bool(errors) + text[-lines:])

    def wait_ready(self, timeout: float | None = None) -> Service:
        """Wait until the server answers; stop it and raise ServiceError if it does not."""
        deadline = time.monotonic() + (timeout or self.ready_timeout)
        tries = 1
        while not self._ready():
            if not self.alive():
                log = self.log_tail()
                if self._picked_port and tries < PORT_TRIES and _PORT_IN_USE.search(log):
                    tries += 1  # another process took a port we picked
                    self._pick_ports()
                    self._prepare()
                    self._launch()
                    continue
                self.stop(keep_state=True)
                raise ServiceError(f"{self.name} exited while starting; {self.log_path} ends:\n{log}")
            if time.monotonic() > deadline:
                log = self.log_tail()
                self.stop(keep_state=True)
                raise ServiceError(
                    f"{self.name} did not answer within {timeout or self.ready_timeout:.0f} s; "
                    f"{self.log_path} ends:\n{log}"
                )
            time.sleep(0.1)
        self._after_ready()
        self.ready_after = time.monotonic() - self.started_at
        self._write_record()
        return self

    def alive(self) -> bool:
        if self.process is not None:
            return self.process.poll() is None
        return self.pid is not None and _pid_alive(self.pid, self.state)

    def stop(self, timeout: float = STOP_TIMEOUT, keep_state: bool = False) -> None:
        """SIGTERM, SIGKILL if still running after timeout; a state folder made by
        start() is deleted unless keep_state."""
        if self.pid is not None and self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.1)
            if self.alive():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
                while self.alive():
                    time.sleep(0.05)
        if self.process is not None:
            self.process.wait()
        if self.state is not None:
            if self._temporary and not keep_state:
                shutil.rmtree(self.state, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    (self.state / f"{self.name}.pid").unlink()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    @classmethod
    def from_record(cls, record: dict) -> Service:
        """The service a record (the JSON start prints) describes, to check or stop it."""
        service = cls(port=record["port"], state=record["state"])
        service._temporary = record.get("temporary", False)
        service.pid = record["pid"]
        return service


def kafka_cluster_id(random_bytes=lambda: uuid.uuid4().bytes) -> str:
    """A KRaft cluster id made here (saves a JVM run): a Kafka Uuid is 16
    random bytes in URL-safe base64 without padding. Like Kafka's
    Uuid.randomUuid, never one starting with "-", which the storage tool's
    argument parser would take for an option (1 in 64 ids)."""
    while True:
        cluster_id = base64.urlsafe_b64encode(random_bytes()).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


class KafkaService(Service):
    """Apache Kafka in KRaft combined mode: .bootstrap is "127.0.0.1:PORT"."""

    name = "kafka"
    ready_timeout = KAFKA_TIMEOUT
    _STARTED = "Kafka Server started"  # KafkaRaftServer's INFO line, kept by log4j2.properties

    def __init__(
        self,
        port: int | None = None,
        state: str | Path | None = None,
        *,
        controller_port: int | None = None,
        **options,
    ):
        super().__init__(port, state, **options)
        self.controller_port = controller_port or 0
        self._picked_controller_port = controller_port is None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def info(self) -> dict:
        return {**super().info(), "bootstrap": self.bootstrap, "controller_port": self.controller_port}

    @classmethod
    def from_record(cls, record: dict) -> KafkaService:
        service = super().from_record(record)
        service.controller_port = record.get("controller_port", 0)
        return service

    def _fetch(self) -> None:
        fetch("kafka", self.folder)

    def _pick_ports(self) -> None:
        self.port, controller_port = free_ports(2)
        if self._picked_controller_port:
            self.controller_port = controller_port

    def _java(self) -> list[str]:
        return [
            shutil.which("java") or "java",
            *JVM_FLAGS,
            f"-Dlog4j2.configurationFile={HERE / 'log4j2.properties'}",
            "-cp",
            str(kafka_lib(self.folder) / "*"),
        ]

    def _prepare(self) -> None:
        if not self.controller_port:
            self.controller_port = free_ports(1)[0]
        config = self.state / "server.properties"
        config.write_text(
            (HERE / "kafka.properties").read_text()
            + "\n# this run's ports and folder\n"
            + "\n".join(
                [
                    f"listeners=PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
                    f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}",
                    f"controller.quorum.voters=1@127.0.0.1:{self.controller_port}",
                    f"log.dirs={self.state / 'data'}",
                ]
            )
            + "\n"
        )
        if (self.state / "data" / "meta.properties").exists():
            return
        cluster_id = kafka_cluster_id()
        completed = subprocess.run(
            [*self._java(), "kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(config)],
            cwd=self.state,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if completed.returncode != 0:
            raise ServiceError(f"formatting Kafka's storage failed:\n{completed.stdout}{completed.stderr}")

    def _command(self) -> list[str]:
        return [*self._java(), "kafka.Kafka", str(self.state / "server.properties")]

    def _ready(self) -> bool:
        try:
            started = self._STARTED in self.log_path.read_text(errors="replace")
        except OSError:
            return False
        return started and _groups_served(self.port)


class RegistryService(Service):
    """Apicurio Registry, in memory: .url is the base of its Confluent API."""

    name = "registry"
    ready_timeout = REGISTRY_TIMEOUT
    compatibility = "BACKWARD"  # Confluent's default (Apicurio's is NONE)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/apis/ccompat/v7"

    def info(self) -> dict:
        return {**super().info(), "url": self.url}

    def _fetch(self) -> None:
        fetch("registry", self.folder)

    def _command(self) -> list[str]:
        return [
            shutil.which("java") or "java",
            *JVM_FLAGS,
            "-Dquarkus.http.host=127.0.0.1",
            f"-Dquarkus.http.port={self.port}",
            "-Dapicurio.storage.kind=sql",
            "-Dapicurio.storage.sql.kind=h2",
            f"-Dapicurio.storage.snapshot.location={self.state}",
            f"-Djava.io.tmpdir={self.state}",
            # as Confluent's: a schema differing only in whitespace keeps its id
            "-Dapicurio.ccompat.use-canonical-hash=true",
            f"-Dapicurio.rules.global.compatibility={self.compatibility}",  # see _after_ready
            # warnings and errors only: by default it logs every request
            "-Dquarkus.http.access-log.enabled=false",
            '-Dquarkus.log.category."io.apicurio".level=WARN',
            "-Dquarkus.banner.enabled=false",
            "-jar",
            str(registry_home(self.folder) / f"apicurio-registry-app-{APICURIO_VERSION}-runner.jar"),
        ]

    def request(self, method: str, path: str, body: dict | None = None) -> object:
        """One call to the Confluent API (path after .url); the JSON answer. An error
        answer raises urllib's HTTPError (.code), its message ending in the body."""
        request = urllib.request.Request(
            self.url + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            error.msg = f"{error.msg}: {error.read().decode(errors='replace')[:1000]}"
            raise

    def _ready(self) -> bool:
        try:
            self.request("GET", "/subjects")
            return True
        except (OSError, ValueError, http.client.HTTPException):  # not listening or not serving yet
            return False

    def _after_ready(self) -> None:
        # the -D flag makes registering enforce it; this makes GET /config report it
        self.request("PUT", "/config", {"compatibility": self.compatibility})


def start_kafka(
    port: int | None = None, state: str | Path | None = None, *, wait: bool = True, **options
) -> KafkaService:
    """A Kafka broker on 127.0.0.1 (free ports and a fresh state folder by default).
    On Linux it is killed when the calling thread ends, unless detach=True: start
    it from a thread that lives as long as it should (the main thread, in tests)."""
    return KafkaService(port, state, **options).start(wait)


def start_registry(
    port: int | None = None, state: str | Path | None = None, *, wait: bool = True, **options
) -> RegistryService:
    """A schema registry on 127.0.0.1 (a free port and a fresh state folder by default);
    killed with the calling thread like start_kafka's broker."""
    return RegistryService(port, state, **options).start(wait)


SERVICES = {"kafka": KafkaService, "registry": RegistryService}


# -- command line -----------------------------------------------------------


def _running_record(name: str) -> Path:
    """Where the command line remembers the server it started last."""
    return services_dir() / "running" / f"{name}.json"


def _recorded(name: str, state: str | None) -> Service | None:
    path = Path(state) / f"{name}.json" if state else _running_record(name)
    try:
        return SERVICES[name].from_record(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError):
        return None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    actions = parser.add_subparsers(dest="action", required=True)
    actions.add_parser("fetch").add_argument(
        "which", nargs="?", default="all", choices=("kafka", "registry", "all")
    )
    for action in ("start", "stop"):
        sub = actions.add_parser(action)
        sub.add_argument("service", choices=tuple(SERVICES))
        sub.add_argument("--state", help="state folder (default: a fresh one; for stop: the last started)")
        if action == "start":
            sub.add_argument("--port", type=int, help="port (default: a free one)")
            sub.add_argument(
                "--controller-port", type=int, help="Kafka's controller port (default: a free one)"
            )
    actions.add_parser("status")
    args = parser.parse_args(argv[1:])

    try:
        if args.action == "fetch":
            started = time.monotonic()
            fetch(args.which)
            _log(f"{args.which} in {services_dir()} ({time.monotonic() - started:.1f} s)")
        elif args.action == "start":
            running = _recorded(args.service, None)
            if running is not None and running.alive() and args.state is None:
                _log(f"{args.service} is running already (stop it first):")
                print(json.dumps(running.info()))
                return 1
            options = {"controller_port": args.controller_port} if args.service == "kafka" else {}
            service = SERVICES[args.service](args.port, args.state, detach=True, **options).start()
            record = {**service.info(), "seconds": round(service.ready_after, 1)}
            _running_record(args.service).parent.mkdir(parents=True, exist_ok=True)
            _running_record(args.service).write_text(json.dumps(record) + "\n")
            print(json.dumps(record))
        elif args.action == "stop":
            service = _recorded(args.service, args.state)
            if service is None or not service.alive():
                _log(f"{args.service} is not running")
            else:
                service.stop()
                _log(f"{args.service} stopped (pid {service.pid})")
            if args.state is None:
                with contextlib.suppress(FileNotFoundError):
                    _running_record(args.service).unlink()
        elif args.action == "status":
            for name in SERVICES:
                service = _recorded(name, None)
                if service is None:
                    print(json.dumps({"service": name, "running": False}))
                else:
                    print(json.dumps({**service.info(), "running": service.alive()}))
    except (ServiceError, urllib.error.URLError) as error:
        _log(f"error: {error}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
