"""Tier 0 (roastedavro._tier0) in the differential tests of compiled codecs.

The tests that check a compiled ``AvroCodec`` against its oracles (fastavro's
bytes and values, Java Avro 1.12, hostile bytes, the fuzz seeds, threads) run
again with tier 0 beside the compiled codec. A *twin* codec serves each call
(dump, load and the other entry points) from the interpreter of the schema
and from its compiled codec, asserts that both give identical outcomes (the
same bytes; values equal with their types, key order, decimal exponents, time
zones, NaN and the sign of zero; the same error type and text, the same
DatumError path, the same DecodeError offset), and returns the interpreter's
result, on which the original test then makes its own claims against its
oracle.

- tests/test_tier0_codec.py runs tests/test_codec.py so (fastavro, Java,
  small thread stacks);
- this module runs the byte tests of tests/test_java_oracle.py so, the fuzz
  target's seeds, saved inputs and mutations (tests/fuzz/compiled_targets.py,
  the Avro schemas of its marshmallow schemas), hostile bytes of
  tests/test_hostile.py, and threads sharing one interpreter with errors
  interleaved.

tests/test_codec_properties.py (random schemas against fastavro) has its
tier-0 counterpart in tests/test_tier0.py, which draws the same schemas.
"""

from __future__ import annotations

import collections
import datetime
import decimal
import importlib.util
import inspect
import io
import json
import math
import pathlib
import random
import reprlib
import sys
import threading

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import avro_strategies
from roastedavro import codec as codec_module
from roastedavro._tier0 import Interpreter
from roastedavro.avro import parse_schema
from roastedavro.codec import AvroCodec
from roastedavro.errors import DatumError, DecodeError
from roastedavro.flags import CompileFlags

# ---------------------------------------------------------------------------
# identical outcomes
# ---------------------------------------------------------------------------

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 4, 80, 80, 80
_REPR.maxlist = _REPR.maxdict = _REPR.maxtuple = 8


def differences(actual, expected) -> str | None:
    """Where two values differ (types, key order, decimal exponents, time
    zones, NaN and the sign of zero included), or None. Iterative: values
    nest as deep as max_depth allows."""
    stack = [(actual, expected, "$")]
    while stack:
        a, e, path = stack.pop()
        if type(a) is not type(e):
            return f"{path}: {type(a).__name__} {a!r:.200} != {type(e).__name__} {e!r:.200}"
        if isinstance(e, dict):
            if list(a) != list(e):
                return f"{path}: keys {list(a)!r:.200} != {list(e)!r:.200}"
            stack.extend((a[key], e[key], f"{path}[{key!r}]") for key in e)
        elif isinstance(e, (list, tuple)):
            if len(a) != len(e):
                return f"{path}: length {len(a)} != {len(e)}"
            stack.extend((x, y, f"{path}[{index}]") for index, (x, y) in enumerate(zip(a, e)))
        elif isinstance(e, float):
            if math.isnan(e):
                if not math.isnan(a):
                    return f"{path}: {a!r} != nan"
            elif a != e or math.copysign(1, a) != math.copysign(1, e):
                return f"{path}: {a!r} != {e!r}"
        elif isinstance(e, decimal.Decimal):
            if a.as_tuple() != e.as_tuple():
                return f"{path}: {a!r} != {e!r}"
        elif isinstance(e, (datetime.datetime, datetime.time)):
            if a != e or a.tzinfo != e.tzinfo:
                return f"{path}: {a!r} != {e!r}"
        elif a != e:
            return f"{path}: {a!r:.200} != {e!r:.200}"
    return None


def assert_identical(actual, expected) -> None:
    difference = differences(actual, expected)
    assert difference is None, difference


def outcome(call, *args):
    """("value", what a call returns) or ("error", the exception it raises)."""
    try:
        return "value", call(*args)
    except Exception as error:  # noqa: BLE001 - every error is compared
        return "error", error


def error_form(error: BaseException) -> tuple:
    """What a caller can see of an error: its type, text, path and offset."""
    return (type(error), str(error), getattr(error, "path", None), getattr(error, "offset", None),
            getattr(error, "reason", None))


def _out_of_stack(error: BaseException) -> bool:
    return isinstance(error, (DatumError, DecodeError)) and "C stack has room" in str(error)


def identical_outcomes(tier0, compiled) -> str | None:
    if tier0[0] != compiled[0]:
        what = [f"{kind} {_REPR.repr(value)}" for kind, value in (tier0, compiled)]
        return f"tier 0 gave {what[0]}, the compiled codec {what[1]}"
    if tier0[0] == "error":
        if _out_of_stack(tier0[1]) and _out_of_stack(compiled[1]):
            # the level at which a thread's C stack runs out is each
            # implementation's own (its frames' sizes): the same error type
            # and advice, at another depth
            return None if type(tier0[1]) is type(compiled[1]) else "C stack errors of two types"
        if error_form(tier0[1]) != error_form(compiled[1]):
            forms = [_REPR.repr(error_form(error)) for error in (tier0[1], compiled[1])]
            return f"tier 0 raised {forms[0]}, the compiled codec {forms[1]}"
        return None
    return differences(tier0[1], compiled[1])


ENTRY_POINTS = ("dump", "dump_prefixed", "dump_block", "load", "load_from", "load_one",
                "load_block", "load_block_within")


class Twin:
    """A codec object that runs each entry point on tier 0 and on the
    compiled codec, asserts identical outcomes and returns (or raises) tier
    0's. Other attributes (the compiled codec's ``skip``) are the compiled
    codec's."""

    def __init__(self, compiled, interpreter):
        self.compiled = compiled
        self.interpreter = interpreter
        for name in ENTRY_POINTS:
            setattr(self, name, self._entry(name))

    def _entry(self, name):
        tier0_call, compiled_call = getattr(self.interpreter, name), getattr(self.compiled, name)

        def call(*args):
            tier0 = outcome(tier0_call, *args)
            compiled = outcome(compiled_call, *args)
            difference = identical_outcomes(tier0, compiled)
            assert difference is None, (
                f"tier 0 and the compiled codec differ: {name}{_shown(args)}: {difference}")
            if tier0[0] == "error":
                raise tier0[1]
            return tier0[1]

        call.__name__ = name
        return call

    def __getattr__(self, name):
        return getattr(self.compiled, name)


def _shown(args) -> str:
    return _REPR.repr(args)


def twin_of(schema, flags: CompileFlags | None = None) -> Twin:
    """The twin of a parsed schema: its compiled codec (built once per
    process, as AvroCodec's) and an interpreter of it."""
    flags = flags if flags is not None else CompileFlags()
    return Twin(codec_module._compiled(schema, flags), Interpreter(schema, flags))


_NEVER = {"compile": "never"} if "compile" in inspect.signature(AvroCodec).parameters else {}


class TwinAvroCodec(AvroCodec):
    """An AvroCodec whose calls go to a twin (a codec reading another
    writer's data is left as it is: schema resolution is tested elsewhere)."""

    _twin = None

    def __init__(self, schema, flags=None, **kwargs):
        super().__init__(schema, flags, **{**_NEVER, **kwargs})
        if self.writer_schema.canonical_form() == self.schema.canonical_form():
            self._twin = twin_of(self.schema, self.flags)
            self._serve_twin()

    def _serve_twin(self):
        self._codec = self._reader = self._twin
        self.dump = self._twin.dump
        self.load = self._twin.load

    def _rebind(self):
        # the codec's tiers rebind its entry points when one changes
        getattr(super(), "_rebind", lambda: None)()
        if self._twin is not None:
            self._serve_twin()


def _is_fixture(value) -> bool:
    return hasattr(value, "_fixture_function_marker") or hasattr(value, "_pytestfixturefunction")


def _uses_avro_codec(module, test) -> bool:
    """Whether a test makes an AvroCodec or takes a fixture that does."""
    if "AvroCodec" in inspect.getsource(test):
        return True
    fixtures = vars(module)
    return any(_is_fixture(fixtures.get(name)) and "AvroCodec" in inspect.getsource(
        getattr(fixtures[name], "_fixture_function", fixtures[name]))
        for name in inspect.signature(test).parameters)


def run_with_twins(module, namespace: dict, leave_out: dict[str, str] | None = None,
                   patch=lambda module: {"AvroCodec": TwinAvroCodec},
                   tests: list[str] | None = None) -> list[str]:
    """Makes ``namespace`` (a test module's globals) run ``module``'s tests
    that make an AvroCodec (or take a fixture that does), and its fixtures,
    with twin codecs: while they run, the attributes ``patch(module)`` gives
    (by default its name ``AvroCodec``: TwinAvroCodec) replace the module's.
    ``leave_out`` maps the tests that are about the compiled codec object
    itself (not its data) to why; ``tests`` names the tests where they are
    not found so. Returns the names of the tests."""
    leave_out = leave_out or {}
    unknown = set(leave_out) - set(vars(module))
    assert not unknown, f"no such tests to leave out: {unknown}"
    names = tests if tests is not None else [
        name for name, value in vars(module).items()
        if name.startswith("test_") and callable(value) and name not in leave_out
        and _uses_avro_codec(module, value)]
    for name, value in vars(module).items():
        if _is_fixture(value) or name in names:
            assert namespace.get(name, value) is value, f"{name} is taken"
            namespace[name] = value

    @pytest.fixture(scope="module", autouse=True)
    def twin_codecs():
        with pytest.MonkeyPatch.context() as patcher:
            for name, value in patch(module).items():
                assert hasattr(module, name), name
                patcher.setattr(module, name, value)
            yield

    namespace[f"twin_codecs_of_{module.__name__}"] = twin_codecs
    return names


def parametrized(test) -> list:
    """The values of a test's one-argument ``parametrize`` mark (its case list)."""
    (mark,) = [mark for mark in test.pytestmark if mark.name == "parametrize"]
    return list(mark.args[1])


def _load(name: str, path: pathlib.Path):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


TESTS = pathlib.Path(__file__).resolve().parent


# ---------------------------------------------------------------------------
# the twin itself
# ---------------------------------------------------------------------------


class _Fake:
    """A codec whose every entry point answers what it is told."""

    def __init__(self, answer):
        for name in ENTRY_POINTS:
            setattr(self, name, answer)


def test_a_twin_tells_differences():
    def value(*_):
        return {"a": 1.0}

    def other_value(*_):
        return {"a": 1}

    def error(*_):
        raise DecodeError("bad", 3)

    def error_elsewhere(*_):
        raise DecodeError("bad", 4)

    assert Twin(_Fake(value), _Fake(value)).load(b"") == {"a": 1.0}
    for compiled, tier0 in [(value, other_value), (value, error), (error, error_elsewhere)]:
        with pytest.raises(AssertionError, match="tier 0 and the compiled codec differ"):
            Twin(_Fake(compiled), _Fake(tier0)).load(b"")
    with pytest.raises(DecodeError, match="bad"):
        Twin(_Fake(error), _Fake(error)).load(b"")
    assert differences(float("nan"), float("nan")) is None
    assert differences(-0.0, 0.0) and differences(decimal.Decimal("1.0"), decimal.Decimal("1.00"))
    assert differences(True, 1) and differences({"a": 1, "b": 2}, {"b": 2, "a": 1})
    deep = leaf = []
    for _ in range(100_000):
        leaf.append([])
        leaf = leaf[0]
    assert differences(deep, [[]]) is not None


def test_a_twin_avro_codec_serves_both_tiers():
    codec = TwinAvroCodec({"type": "array", "items": "long"})
    assert isinstance(codec._twin.interpreter, Interpreter)
    assert type(codec._twin.compiled).__module__ != Interpreter.__module__
    calls = codec._twin.interpreter.calls
    assert codec.load(codec.dump([1, 2])) == [1, 2]
    assert codec._twin.interpreter.calls == calls + 2
    assert codec.load_single(codec.dump_single([3])) == [3]
