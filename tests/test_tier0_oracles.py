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
oracle. One allowance: where a thread's C stack runs out, both raise the same
error type with the same advice, each at the depth its own frames reach.

- tests/test_tier0_codec.py runs tests/test_codec.py so (fastavro, Java,
  a small thread stack);
- tests/test_tier0_twins.py runs the AvroCodec tests of test_java_oracle,
  test_single_object, test_fast_paths, test_wide_records and test_huge_ints so;
- this module runs the fuzz target's seeds, saved inputs, seeded mutations,
  hostile shapes and large former findings (tests/fuzz/compiled_targets.py,
  on the Avro schemas of its marshmallow schemas) through twins, mutated
  messages of zero-size items from tests/test_hostile.py in bounded memory,
  test_hostile's checks of the generic path (enum and union indexes, ints,
  booleans, counts, UTF-8: the same DecodeError offsets), and threads
  sharing one interpreter per schema with errors interleaved;
  values are also read by fastavro (decimals exactly, uuids on fixed as UUIDs).

tests/test_codec_properties.py (random schemas against fastavro) has its
tier-0 counterpart in tests/test_tier0.py: random schemas, tier 0 against the
compiled codec and fastavro, damaged bytes against the compiled codec.
"""

from __future__ import annotations

import collections
import datetime
import decimal
import importlib.util
import inspect
import io
import math
import operator
import pathlib
import random
import re
import reprlib
import sys
import threading
import uuid

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roastedavro import codec as codec_module
from roastedavro._tier0 import Interpreter
from roastedavro.avro import parse_schema
from roastedavro.codec import AvroCodec
from roastedavro.errors import DatumError, DecodeError
from roastedavro.flags import CompileFlags

#: the names of DecodeError and its kinds (truncated data, bad UTF-8, data the
#: reader's schema cannot read)
DECODE_ERRORS = (
    "DecodeError",
    "TruncatedError",
    "TextDecodeError",
    "UnreadableDatumError",
    "IndexDecodeError",
    "LengthDecodeError",
)

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
            if all(map(operator.is_, a, e)):  # the same objects (None, small ints): at C speed
                continue
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
    return (
        type(error),
        str(error),
        getattr(error, "path", None),
        getattr(error, "offset", None),
        getattr(error, "reason", None),
    )


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


ENTRY_POINTS = (
    "dump",
    "dump_prefixed",
    "dump_block",
    "load",
    "load_from",
    "load_one",
    "load_block",
    "load_block_within",
)


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
                f"tier 0 and the compiled codec differ: {name}{_shown(args)}: {difference}"
            )
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


def _uses_avro_codec(module, test, words) -> bool:
    """Whether a test's source names one of ``words`` (AvroCodec, module-level
    codecs), or it takes a fixture whose source does."""

    def names(function) -> bool:
        source = inspect.getsource(function)
        return any(re.search(rf"\b{word}\b", source) for word in words)

    if names(test):
        return True
    fixtures = vars(module)
    return any(
        _is_fixture(fixtures.get(name))
        and names(getattr(fixtures[name], "_fixture_function", fixtures[name]))
        for name in inspect.signature(test).parameters
    )


def run_with_twins(
    module,
    namespace: dict,
    leave_out: dict[str, str] | None = None,
    *,
    module_codecs: tuple[str, ...] = (),
    patch=lambda module: {},
    tests: list[str] | None = None,
) -> list[str]:
    """Makes ``namespace`` (a test module's globals) run ``module``'s tests
    that make an AvroCodec or use one of its ``module_codecs`` (or take a
    fixture that does), and its fixtures, with twin codecs: while they run,
    the module's name ``AvroCodec`` is TwinAvroCodec, each of its
    ``module_codecs`` is a TwinAvroCodec of the same schema and flags, and
    the attributes ``patch(module)`` gives replace the module's.
    ``leave_out`` maps the tests that are about the compiled codec object
    itself (not its data) to why; ``tests`` names the tests where they are
    not found so. Returns the names of the tests."""
    leave_out = leave_out or {}
    words = ("AvroCodec", *module_codecs)
    unknown = set(leave_out) - set(vars(module))
    assert not unknown, f"no such tests to leave out: {unknown}"
    names = (
        tests
        if tests is not None
        else [
            name
            for name, value in vars(module).items()
            if name.startswith("test_")
            and callable(value)
            and name not in leave_out
            and _uses_avro_codec(module, value, words)
        ]
    )
    # the tests and the module's fixtures they take (and those take)
    needed, todo = set(), list(names)
    while todo:
        name = todo.pop()
        value = vars(module).get(name)
        if name in needed or not (name in names or _is_fixture(value)):
            continue
        needed.add(name)
        todo.extend(inspect.signature(getattr(value, "_fixture_function", value)).parameters)
    # in the module's order: every pytest-xdist process must collect the same tests
    for name in [name for name in vars(module) if name in needed]:
        value = vars(module)[name]
        assert namespace.get(name, value) is value, f"{name} is taken"
        namespace[name] = value

    @pytest.fixture(scope="module", autouse=True)
    def twin_codecs():
        with pytest.MonkeyPatch.context() as patcher:
            if hasattr(module, "AvroCodec"):
                patcher.setattr(module, "AvroCodec", TwinAvroCodec)
            for name in module_codecs:
                codec = getattr(module, name)
                patcher.setattr(module, name, TwinAvroCodec(codec.schema, codec.flags))
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


# ---------------------------------------------------------------------------
# the fuzz target's schemas (tests/fuzz/compiled_targets.py): seeds, saved
# inputs, mutations and hostile shapes
# ---------------------------------------------------------------------------

targets = _load("compiled_targets", TESTS / "fuzz" / "compiled_targets.py")
FUZZ_CORPUS = TESTS / "fuzz" / "corpus"
_fuzz_twins: dict = {}


# fastavro reads a uuid on a fixed(16) (Avro 1.12) as plain bytes; the
# codecs read a uuid.UUID. The oracle reads it so under a name of its own.
_FIXED_UUID = "test-fixed-uuid"
fastavro.read.LOGICAL_READERS[f"fixed-{_FIXED_UUID}"] = lambda data, writer_schema, reader_schema: uuid.UUID(
    bytes=data
)


def _fixed_uuids(schema):
    if isinstance(schema, list):
        return [_fixed_uuids(branch) for branch in schema]
    if not isinstance(schema, dict):
        return schema
    copy = {
        key: _fixed_uuids(value) if key in ("type", "items", "values") else value
        for key, value in schema.items()
    }
    if "fields" in schema:
        copy["fields"] = [dict(field, type=_fixed_uuids(field["type"])) for field in schema["fields"]]
    if schema.get("logicalType") == "uuid" and schema.get("type") == "fixed":
        copy["logicalType"] = _FIXED_UUID
    return copy


def oracle_schema(avro):
    """fastavro's parse of a schema, reading decimals exactly (as Java and
    the codecs do: tests/test_codec_properties.py) and uuids on fixed(16)
    as uuid.UUID."""
    from test_codec_properties import exact_decimals

    return fastavro.parse_schema(_fixed_uuids(exact_decimals(avro)))


def fuzz_twin(target):
    """The twin of a fuzz target's Avro schema (an array of its records where
    the target reads many) and the oracle's parse of it."""
    if target.name not in _fuzz_twins:
        avro = target.schema_class().avro_schema()
        if target.many:
            avro = {"type": "array", "items": avro}
        _fuzz_twins[target.name] = (twin_of(parse_schema(avro)), oracle_schema(avro))
    return _fuzz_twins[target.name]


def check_input(data: bytes) -> str:
    """The fuzz target's check on tier 0 (beside the compiled codec of the
    same Avro schema): a value, which fastavro reads from the same bytes,
    all of them, and which dumps to bytes that load to the same value and
    dump the same again; or a DecodeError with an offset inside the input."""
    target, payload = targets.pick(data)
    twin, exact = fuzz_twin(target)
    kind, value = outcome(twin.load, payload)
    if kind == "error":
        assert isinstance(value, DecodeError), (target.name, payload, value)
        assert 0 <= value.offset <= len(payload), (target.name, value)
        return "DecodeError"
    buffer = io.BytesIO(payload)
    assert_identical(value, fastavro.schemaless_reader(buffer, exact, None))
    assert buffer.tell() == len(payload)
    kind, again = outcome(twin.dump, value)
    if kind == "error":
        # a decimal beyond its precision is read exactly and not written
        assert isinstance(again, DatumError) and "more than the precision" in str(again), again
        return "value"
    back = twin.load(again)
    assert_identical(back, value)
    assert twin.dump(back) == again
    return "value"


@pytest.fixture(scope="module")
def seeds():
    return list(targets.seeds())


def test_fuzz_seeds_and_saved_inputs(seeds):
    assert {name for name, _ in seeds} == {target.name for target in targets.TARGETS}
    for name, data in seeds:
        assert check_input(data) == "value", name
    saved = sorted(path for path in FUZZ_CORPUS.iterdir() if path.suffix != ".md")
    assert len(saved) >= 7
    outcomes = {path.name: check_input(path.read_bytes()) for path in saved}
    # the bombs of 10^8 zero-size items are over the item budget (10^6 is
    # within it); decimals beyond their precision are read exactly (as Java
    # reads them)
    assert {name for name, kind in outcomes.items() if kind in DECODE_ERRORS} == {
        name for name in outcomes if name.startswith("zero-size") and "1e8" in name
    }
    assert outcomes["zero-size-1e6-nulls"] == "value"


def test_fuzz_seeded_mutations(seeds):
    rng = random.Random(20261126)
    pool = [data for _, data in seeds]
    totals = collections.Counter()
    for _ in range(3000):
        totals[check_input(targets.mutate(rng, rng.choice(pool), pool))] += 1
    assert totals["DecodeError"] > 1000 and totals["value"] > 100, totals


@pytest.mark.parametrize("name", [target.name for target in targets.TARGETS])
def test_fuzz_hostile_shapes_per_target(name, seeds):
    """Counts and lengths that claim far more than the input holds, spliced into every seed."""
    index = [target.name for target in targets.TARGETS].index(name)
    bombs = [b"\xfe\xff\xff\xff\x0f", b"\x80\xc2\xd7\x2f", b"\xff" * 9 + b"\x01", b"\x01", b"\x03\x02"]
    for seed_name, data in seeds:
        if seed_name == name:
            for at in range(1, min(len(data), 40)):
                for bomb in bombs:
                    check_input(bytes([index]) + data[1:at] + bomb + data[at:])


def _selector(name: str) -> bytes:
    return bytes([[target.name for target in targets.TARGETS].index(name)])


def test_fuzz_large_former_findings():
    """tests/test_fuzz_short.py's inputs too large to keep as files: a
    recursive record 200,000 deep, 100 kB decimals, and item counts past
    the budget."""
    deep = _selector("generic") + b"\x00\x00" + b"\x00\x02" * 200_000 + b"\x00\x00" + b"\x00" * 6
    assert check_input(deep) in DECODE_ERRORS
    big = _zigzag(100_000) + b"\x01" + b"\x23" * (100_000 - 1)
    for data in (
        _selector("decimals") + big + b"\x00" * 40,
        _selector("decimals") + b"\x02\x01" * 3 + b"\x00" * 20 + b"\x00\x00\x02\x01" + big,
    ):
        check_input(data)
    # zero_size: nulls, then five empty collections and an empty string
    rest = b"\x00" * 6
    block = _zigzag(600_000)
    for data, message in [
        (_zigzag(10**8) + b"\x00" + rest, "item budget exceeded"),
        (_zigzag(2**62) + b"\x00" + rest, "CompileFlags.max_items"),
        # blocks of 600,000 nulls, and the empty records after them:
        # together past the allowance of 10^6 items
        (block * 2 + b"\x00" + rest, "item budget exceeded"),
        (block + b"\x00" + block + b"\x00" + rest[2:], "item budget exceeded"),
    ]:
        assert check_input(_selector("zero_size") + data) in DECODE_ERRORS
        with pytest.raises(DecodeError, match=message):
            fuzz_twin(targets.pick(_selector("zero_size"))[0])[0].load(data)
    assert check_input(_selector("zero_size") + block + b"\x00" + rest) == "value"


def _zigzag(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


# ---------------------------------------------------------------------------
# hostile messages (tests/test_hostile.py): items that take no bytes, mutated
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def zeros():
    import test_hostile

    avro = test_hostile.Zeros().avro_schema()
    # a small allowance keeps the worst message small, as test_hostile's
    return (
        twin_of(parse_schema(avro), CompileFlags(item_allowance=20_000)),
        oracle_schema(avro),
        fastavro.parse_schema(avro),
    )


def _hostile():
    import test_hostile

    return test_hostile


@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(index=st.sampled_from(range(len(_hostile().ZERO_RECORDS))), operations=_hostile().OPERATIONS)
def test_mutated_messages_of_zero_size_items_in_bounded_memory(zeros, index, operations):
    import tracemalloc

    twin, exact, parsed = zeros
    record = _hostile().ZERO_RECORDS[index]
    encoded = twin.dump(record)
    assert encoded == fastavro_dump(parsed, record)
    data = _hostile().mutate(encoded, operations)
    tracemalloc.start()
    try:
        kind, value = outcome(twin.load, data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # both tiers' values together: at most (length + 20,000) items each
    assert peak < 64 * 1024 * 1024
    if kind == "error":
        assert isinstance(value, DecodeError) and 0 <= value.offset <= len(data), value
        return
    buffer = io.BytesIO(data)
    assert_identical(value, fastavro.schemaless_reader(buffer, exact, None))
    assert buffer.tell() == len(data)
    kind, again = outcome(twin.dump, value)
    if kind == "value":
        assert_identical(twin.load(again), value)
    else:  # a decimal beyond its precision: read exactly, not written
        assert isinstance(again, DatumError) and "more than the precision" in str(again)


def fastavro_dump(parsed, datum) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, datum)
    return out.getvalue()


# ---------------------------------------------------------------------------
# threads sharing one interpreter per schema, errors interleaved
# ---------------------------------------------------------------------------

_WRONG_VALUES = [object(), "text", 2**70, -1.5, None, b"\xff", [1], {"k": object()}]


def _damaged(rng: random.Random, value):
    """``value`` with one field of a record (of the first, in a list) replaced
    by a value of the wrong kind."""
    if isinstance(value, list):
        return [_damaged(rng, value[0])] + value[1:] if value else [object()]
    copy = dict(value)
    copy[rng.choice(sorted(copy))] = rng.choice(_WRONG_VALUES)
    return copy


@pytest.fixture(scope="module")
def thread_cases(seeds):
    """(twin, entry point, arguments, the compiled codec's outcome) for
    every fuzz target: its seeds and mutations of them to load, the values
    they give and damaged ones to dump."""
    rng = random.Random(28)
    cases = []
    for name, data in seeds:
        target, payload = targets.pick(data)
        twin, _ = fuzz_twin(target)
        mutated = targets.mutate(rng, data, [data])[1:]
        value = twin.interpreter.load(payload)
        prefixed = b"\xc3\x01" + payload
        for call, args in [
            ("load", (payload,)),
            ("load", (mutated,)),
            ("load_from", (prefixed, 2)),
            ("dump", (value,)),
            ("dump", (_damaged(rng, value),)),
            ("load", (payload[: rng.randrange(len(payload) or 1)],)),
        ]:
            cases.append((twin, call, args, outcome(getattr(twin.compiled, call), *args)))
    kinds = collections.Counter(
        type(expected[1]).__name__ if expected[0] == "error" else expected[0] for _, _, _, expected in cases
    )
    malformed = kinds["DecodeError"] + kinds["IndexDecodeError"] + kinds["LengthDecodeError"]
    assert kinds["value"] > 100 and kinds["DatumError"] > 30 and malformed > 30, kinds
    return cases


def test_threads_sharing_interpreters_get_the_compiled_codecs_outcomes(thread_cases):
    failures = []
    start = threading.Barrier(4)

    def work(seed):
        rng = random.Random(seed)
        order = list(thread_cases)
        start.wait()
        for _ in range(4):
            rng.shuffle(order)
            for twin, call, args, expected in order:
                got = outcome(getattr(twin.interpreter, call), *args)
                difference = identical_outcomes(got, expected)
                if difference is not None:
                    failures.append((call, _shown(args), difference))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[:5]


# the generic path's checks (tests/test_hostile.py), which tier 0 replaces:
# the same errors at the same offsets on both tiers
MISC = {
    "type": "record",
    "name": "Misc",
    "fields": [
        {
            "name": "value",
            "type": {
                "type": "record",
                "name": "MiscValue",
                "fields": [
                    {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
                    {"name": "u", "type": ["null", "int"]},
                    {"name": "b", "type": "boolean"},
                    {"name": "d", "type": {"type": "array", "items": "double"}},
                    {"name": "k", "type": {"type": "map", "values": "null"}},
                ],
            },
        }
    ],
}
TEXTS = {
    "type": "record",
    "name": "Texts",
    "fields": [{"name": "words", "type": {"type": "map", "values": "string"}}],
}


@pytest.fixture(scope="module")
def misc():
    return twin_of(parse_schema(MISC))


@pytest.fixture(scope="module")
def texts():
    return twin_of(parse_schema(TEXTS))


def test_indexes_booleans_ints_and_counts_are_checked_at_their_offsets(misc):
    import struct

    record = {"value": {"e": "B", "u": 7, "b": True, "d": [0.5], "k": {"x": None}}}
    data = misc.dump(record)
    # enum, union branch, int, boolean, array (count, double, end), map (count, key, end)
    assert data == b"\x02\x02\x0e\x01\x02" + struct.pack("<d", 0.5) + b"\x00\x02\x02x\x00"
    assert misc.load(data) == record
    for bad, offset in [
        (b"\x04" + data[1:], 0),  # enum index 2 of 2 symbols
        (data[:1] + b"\x06" + data[2:], 1),  # union branch 3 of 2
        (data[:2] + _zigzag(2**31) + data[3:], 2),  # an int past 32 bits
        (data[:3] + b"\x02" + data[4:], 3),  # a boolean byte of 2
        (data[:4] + _zigzag(1000) + data[5:], 4),  # 1,000 doubles in 9 bytes
        (data[:14] + _zigzag(10) + data[15:], 14),  # 10 entries in 4 bytes
        (data[:15] + b"\x06" + data[16:], 15),  # a key longer than what is left
    ]:
        with pytest.raises(DecodeError) as caught:
            misc.load(bad)
        assert caught.value.offset == offset, (bad, caught.value)


@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(text=st.binary(max_size=12) | st.text(max_size=6).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_utf8_is_checked_as_python_checks_it(texts, text):
    # the map's one value at offset 4: count, key length, "k", value length
    data = b"\x02\x02k" + _zigzag(len(text)) + text + b"\x00"
    try:
        expected = text.decode("utf-8")
    except UnicodeDecodeError as error:
        with pytest.raises(DecodeError, match="UTF-8") as caught:
            texts.load(data)
        assert caught.value.offset == 4 + error.start
    else:
        assert_identical(texts.load(data), {"words": {"k": expected}})
