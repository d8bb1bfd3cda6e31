"""A real Kafka broker and schema registry for tests (scripts/services/services.py).

Session fixtures, each server started once per session on free ports of 127.0.0.1:

    kafka_broker      .bootstrap ("127.0.0.1:PORT"), .port, .log_path, .alive()
    schema_registry   .url (Confluent API base), .request(method, path, body), .port, .log_path
    services          .kafka and .registry, both started

and kafka_topic, a fresh topic name for each test (unique_topic() outside fixtures).

When the first of them is needed, every server some collected test needs is
started at once, so Kafka and the registry come up side by side (6-7 s here
rather than 9-10). The jars are fetched on first use into build/services/.
Tests skip only when there is no Java 17+ on PATH; a failing download or start
is an error of every test that needs the server, tried once per session.
"""

from __future__ import annotations

import importlib.util
import re
import types
import uuid
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "services" / "services.py"

__all__ = [
    "kafka_broker",
    "schema_registry",
    "services",
    "kafka_topic",
    "service_pool",
    "unique_topic",
    "servers",
]


def _load_script():
    # a name of its own: "services" is this module
    spec = importlib.util.spec_from_file_location("roastedavro_services", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


servers = _load_script()

_FIXTURES = {"kafka": ("kafka_broker", "services"), "registry": ("schema_registry", "services")}
_STARTERS = {"kafka": servers.KafkaService, "registry": servers.RegistryService}


class _Pool:
    """The session's servers. One per process, whichever module holds the fixtures,
    so that importing them into several places does not start them twice."""

    def __init__(self):
        self.running: dict[str, object] = {}
        self.failures: dict[str, Exception] = {}
        self.java_reason: str | None = None
        self.java_checked = False

    def get(self, name: str, session: pytest.Session):
        if name in self.running:
            return self.running[name]
        if not self.java_checked:
            self.java_reason, self.java_checked = servers.java_missing_reason(), True
        if self.java_reason:
            pytest.skip(f"Kafka and schema registry tests: {self.java_reason}")
        if name not in self.failures:
            self._start({name} | self._wanted(session))
        if name in self.failures:
            raise self.failures[name]
        return self.running[name]

    def _wanted(self, session: pytest.Session) -> set[str]:
        used = set()
        for item in session.items:
            names = getattr(item, "fixturenames", ())
            used.update(server for server, fixtures in _FIXTURES.items() if any(f in names for f in fixtures))
        return {name for name in used if name not in self.running and name not in self.failures}

    def _start(self, names: set[str]) -> None:
        # launched from this (the main) thread, since each JVM dies with the thread
        # that started it; the slower registry first, then all are waited for
        launched = []
        for name in sorted(names, key=lambda n: n != "registry"):
            try:
                launched.append(_STARTERS[name]().start(wait=False))
            except Exception as error:
                self.failures[name] = error
        for service in launched:
            try:
                self.running[service.name] = service.wait_ready()
            except Exception as error:
                self.failures[service.name] = error

    def stop(self) -> None:
        while self.running:
            _, service = self.running.popitem()
            service.stop()


_pool = _Pool()


@pytest.fixture(scope="session")
def service_pool():
    """Stops the servers at the end of the session."""
    yield _pool
    _pool.stop()


@pytest.fixture(scope="session")
def kafka_broker(service_pool, request):
    return service_pool.get("kafka", request.session)


@pytest.fixture(scope="session")
def schema_registry(service_pool, request):
    return service_pool.get("registry", request.session)


@pytest.fixture(scope="session")
def services(service_pool, request):
    return types.SimpleNamespace(
        kafka=service_pool.get("kafka", request.session),
        registry=service_pool.get("registry", request.session),
    )


def unique_topic(prefix: str = "roastedavro") -> str:
    """A topic name no other test (or test run on this broker) uses."""
    prefix = re.sub(r"[^A-Za-z0-9._-]+", "-", prefix).strip("-.")[:180] or "topic"
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def kafka_topic(request):
    """A fresh topic name, after the test's name (subject names follow it: NAME-value)."""
    return unique_topic(request.node.name)
