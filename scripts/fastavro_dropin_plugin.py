"""A pytest plugin that runs fastavro's own test suite against roastedavro.fastavro.

    pytest -p fastavro_dropin_plugin --dropin=swap --dropin-report=out.json <fastavro's tests>

With ``--dropin=swap`` fastavro's public functions (listed in SWAPPED) are
replaced by the drop-in's before the tests are collected, so the tests'
``fastavro.writer(...)``, ``from fastavro import reader`` and so on call
roastedavro; fastavro's internals that some tests use directly stay
fastavro's. ``--dropin=off`` runs fastavro itself (the baseline).

With the drop-in, the plugin also counts the calls into fastavro's own reader and writer
entry points made from roastedavro's code (none may be: the drop-in's data
runs on roastedavro's engine), and writes every test's outcome and those
counts to the ``--dropin-report`` JSON file.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections import Counter

import pytest

#: module -> names replaced by roastedavro.fastavro's (or its schema module's)
SWAPPED = {
    "fastavro": [
        "parse_schema",
        "schemaless_writer",
        "schemaless_reader",
        "writer",
        "reader",
        "block_reader",
        "is_avro",
        "json_writer",
        "json_reader",
    ],
    "fastavro.read": ["reader", "block_reader", "schemaless_reader", "is_avro"],
    "fastavro.write": ["writer", "schemaless_writer", "Writer"],
    "fastavro.json_read": ["json_reader"],
    "fastavro.json_write": ["json_writer"],
    "fastavro.schema": ["parse_schema", "load_schema", "to_parsing_canonical_form", "fingerprint"],
}

#: fastavro's own entry points to data (Cython and pure Python builds)
WATCHED = {
    "fastavro._read": ["reader", "block_reader", "schemaless_reader", "file_reader"],
    "fastavro._read_py": ["reader", "block_reader", "schemaless_reader", "read_data", "file_reader"],
    "fastavro._write": ["writer", "schemaless_writer", "write_data", "Writer"],
    "fastavro._write_py": ["writer", "schemaless_writer", "write_data", "Writer"],
    "fastavro.json_read": ["json_reader"],
    "fastavro.json_write": ["json_writer"],
}

_calls: Counter = Counter()
_outcomes: dict[str, str] = {}


def pytest_addoption(parser):
    group = parser.getgroup("roastedavro drop-in")
    group.addoption(
        "--dropin",
        choices=("swap", "off"),
        default="swap",
        help="swap: fastavro's public functions are roastedavro.fastavro's",
    )
    group.addoption("--dropin-report", default=None, help="write outcomes and counts here (JSON)")


def _from_roastedavro(package_dir: str) -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.startswith(package_dir):
            return True
        frame = frame.f_back
    return False


def _watch(module, name: str, package_dir: str) -> None:
    target = getattr(module, name, None)
    if target is None:
        return
    label = f"{module.__name__}.{name}"
    if isinstance(target, type):
        init = target.__init__

        @functools.wraps(init)
        def counted_init(self, *args, **kwargs):
            if _from_roastedavro(package_dir):
                _calls[label] += 1
            return init(self, *args, **kwargs)

        try:
            target.__init__ = counted_init
        except TypeError:
            pass  # an extension type: its module-level functions are watched
        return

    @functools.wraps(target)
    def counted(*args, **kwargs):
        if _from_roastedavro(package_dir):
            _calls[label] += 1
        return target(*args, **kwargs)

    setattr(module, name, counted)


def pytest_configure(config):
    import importlib

    import roastedavro
    import roastedavro.fastavro as dropin
    import roastedavro.fastavro.schema as dropin_schema
    import roastedavro.fastavro.write as dropin_write

    if config.getoption("dropin") != "swap":
        return  # fastavro alone: nothing to count, and its tracebacks stay its own
    package_dir = os.path.dirname(roastedavro.__file__) + os.sep
    for module_name, names in WATCHED.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for name in names:
            _watch(module, name, package_dir)
    for module_name, names in SWAPPED.items():
        module = importlib.import_module(module_name)
        source = {"fastavro.schema": dropin_schema, "fastavro.write": dropin_write}.get(module_name, dropin)
        for name in names:
            setattr(module, name, getattr(source, name))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" or (report.when == "setup" and not report.passed):
        if report.when == "setup" and report.skipped:
            _outcomes[item.nodeid] = "skipped"
        elif report.skipped and hasattr(report, "wasxfail"):
            _outcomes[item.nodeid] = "xfailed"
        else:
            _outcomes[item.nodeid] = report.outcome
    elif report.when == "teardown" and report.failed:
        _outcomes[item.nodeid] = "failed"


def pytest_sessionfinish(session, exitstatus):
    path = session.config.getoption("dropin_report")
    if path:
        with open(path, "w") as out:
            json.dump(
                {
                    "mode": session.config.getoption("dropin"),
                    "outcomes": _outcomes,
                    "fastavro_calls_from_roastedavro": dict(_calls),
                },
                out,
                indent=1,
                sort_keys=True,
            )


def pytest_terminal_summary(terminalreporter):
    calls = sum(_calls.values())
    terminalreporter.write_line(
        f"calls from roastedavro into fastavro's reader and writer: {calls}"
        + (f" {dict(_calls)}" if calls else "")
    )
