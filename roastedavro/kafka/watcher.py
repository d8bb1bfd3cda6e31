"""RegistryWatcher: compiles new schema versions before their first message."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from roastedavro.kafka.deserializer import AvroDeserializer

log = logging.getLogger("roastedavro.kafka")


class RegistryWatcher:
    """Polls the registry for new versions of ``subjects`` every ``interval``
    seconds, and has each deserializer fetch and compile them (``prepare``)
    before any message needs them.

    The first poll runs at once. A poll that fails (the registry down, a
    subject deleted) is logged and tried again at the next interval; messages
    whose schemas the deserializers already have are never affected.
    ``start()`` runs it on a daemon thread, ``stop()`` ends it (it is also a
    context manager); ``poll()`` runs one poll in the caller's thread and
    returns the schema ids it found new.
    """

    def __init__(
        self,
        schema_registry_client: Any,
        subjects: Iterable[str],
        deserializers: Iterable[AvroDeserializer] = (),
        interval: float = 30.0,
    ) -> None:
        if interval <= 0:
            raise ValueError("interval must be positive")
        self._registry = schema_registry_client
        self.subjects = list(subjects)
        self.deserializers = list(deserializers)
        self.interval = interval
        self._seen: dict[str, set[int]] = {subject: set() for subject in self.subjects}
        #: every schema id found, in the order found
        self.schema_ids: list[int] = []
        #: the last poll's error, None after a poll that worked
        self.last_error: BaseException | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def poll(self) -> list[int]:
        """Looks once for new versions of the subjects and has every
        deserializer prepare (compile) each; returns the new schema ids.
        Registry failures are logged and kept in ``last_error``."""
        found: list[int] = []
        errors = []
        for subject in self.subjects:
            try:
                versions = self._registry.get_versions(subject)
                for version in versions:
                    if version in self._seen[subject]:
                        continue
                    registered = self._registry.get_version(subject, version)
                    self._seen[subject].add(version)
                    if registered.schema_id not in self.schema_ids + found:
                        found.append(registered.schema_id)
            except Exception as error:  # the next poll tries again
                if getattr(error, "http_status_code", None) == 404:
                    log.info("watching subject %r: it has no version yet", subject)
                    continue
                errors.append(error)
                log.warning("watching subject %r: the registry failed: %s", subject, error)
        for schema_id in found:
            for deserializer in self.deserializers:
                try:
                    deserializer.prepare(schema_id)
                except Exception as error:
                    errors.append(error)
                    log.warning("schema id %d cannot be prepared: %s", schema_id, error)
            # listed once every deserializer has started on it
            self.schema_ids.append(schema_id)
        self.last_error = errors[-1] if errors else None
        return found

    def start(self) -> RegistryWatcher:
        """Polls every ``interval`` seconds on a daemon thread; returns self."""
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(
                target=self._run, name="roastedavro-registry-watcher", daemon=True
            )
            self._thread.start()
        return self

    def stop(self, timeout: float | None = 10.0) -> None:
        """Ends the polling thread, waiting up to ``timeout`` seconds for it."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.poll()
            self._stop.wait(self.interval)

    def __enter__(self) -> RegistryWatcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
