"""The compiled-code fuzz target, short: seeds, saved inputs and seeded mutations.

The long run is tests/fuzz/fuzz_compiled.py under atheris with the runtime and
codecs instrumented (tests/fuzz/build_instrumented.sh). This runs the same
schemas and the same check (a value that dumps again, reloads equal and dumps
to the same bytes; DecodeError; ValidationError) on the regular build: the
seed corpus, the inputs kept in tests/fuzz/corpus (earlier findings and
inputs the fuzzer found interesting), and a few thousand seeded mutations.
"""

import collections
import importlib.util
import pathlib
import random
import sys
import time

import pytest

FUZZ = pathlib.Path(__file__).resolve().parent / "fuzz"


def _load_targets():
    spec = importlib.util.spec_from_file_location("compiled_targets", FUZZ / "compiled_targets.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("compiled_targets", module)
    spec.loader.exec_module(module)
    return module


targets = _load_targets()


@pytest.fixture(scope="module")
def seeds():
    targets.compile_all()
    return list(targets.seeds())


def test_seeds_are_valid_encodings_that_round_trip(seeds):
    assert {name for name, _ in seeds} == {t.name for t in targets.TARGETS}
    for name, data in seeds:
        assert targets.check(data) == "value", name


def test_saved_inputs_give_an_allowed_outcome(seeds):
    saved = sorted(path for path in (FUZZ / "corpus").iterdir() if path.suffix != ".md")
    assert len(saved) >= 7
    for path in saved:
        assert targets.check(path.read_bytes()) in ("value", "DecodeError", "ValidationError"), path.name


def _zigzag(n):
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def _index(name):
    return [t.name for t in targets.TARGETS].index(name)


@pytest.mark.parametrize("shape", ["generic-link-200000-deep", "decimal-100kB", "generic-decimal-100kB"])
def test_large_former_findings(shape, seeds):
    """Too large to keep as files: a recursive record 200,000 deep on the generic path (fastavro
    overflowed the C stack), 100 kB decimals (conversion took seconds)."""
    if shape == "generic-link-200000-deep":
        # array [], map {}, then Link(v=0, next=Link(...)) 200,000 times, then the other fields
        data = bytes([_index("generic")]) + b"\x00\x00" + b"\x00\x02" * 200_000 + b"\x00\x00" + b"\x00" * 6
    else:
        n = 100_000
        big = _zigzag(n) + b"\x01" + b"\x23" * (n - 1)
        if shape == "decimal-100kB":  # the first field, decimal(9, 2)
            data = bytes([_index("decimals")]) + big + b"\x00" * 40
        else:  # the generic path's decimal(38, 4), after eight compiled fields
            data = bytes([_index("decimals")]) + b"\x02\x01" * 3 + b"\x00" * 20 + b"\x00\x00\x02\x01" + big
    started = time.perf_counter()
    assert targets.check(data) in ("DecodeError", "ValidationError")
    # refused before any conversion: microseconds (before: a crash, or a second per input)
    assert time.perf_counter() - started < 0.5


def test_seeded_mutations_give_an_allowed_outcome(seeds):
    rng = random.Random(20261123)
    pool = [data for _, data in seeds]
    outcomes = collections.Counter()
    for _ in range(4000):
        data = targets.mutate(rng, rng.choice(pool), pool)
        outcome = targets.check(data)
        outcomes[(targets.pick(data)[0].name, outcome)] += 1
    names = {name for name, _ in outcomes}
    assert names == {t.name for t in targets.TARGETS}
    totals = collections.Counter()
    for (_, outcome), n in outcomes.items():
        totals[outcome] += n
    # mostly malformed bytes, some values, a few refused by validators
    assert totals["DecodeError"] > 2000 and totals["value"] > 100 and totals["ValidationError"] > 0, totals


@pytest.mark.parametrize("name", [t.name for t in targets.TARGETS])
def test_hostile_shapes_per_target(name, seeds):
    """Counts and lengths that claim far more than the input holds, spliced into every seed."""
    index = [t.name for t in targets.TARGETS].index(name)
    bombs = [b"\xfe\xff\xff\xff\x0f", b"\x80\xc2\xd7\x2f", b"\xff" * 9 + b"\x01", b"\x01", b"\x03\x02"]
    for seed_name, data in seeds:
        if seed_name != name:
            continue
        for at in range(1, min(len(data), 40)):
            for bomb in bombs:
                outcome = targets.check(bytes([index]) + data[1:at] + bomb + data[at:])
                assert outcome in ("value", "DecodeError", "ValidationError")
