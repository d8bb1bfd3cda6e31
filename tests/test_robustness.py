"""Hostile bytes, many threads, long runs: no crash, no hang, no leak."""

import gc
import random
import threading
import tracemalloc

import pytest
from marshmallow import ValidationError, fields, post_load, validate, validates_schema

from roastedavro import CompiledSchema, DecodeError


class Leaf(CompiledSchema):
    name = fields.String()
    score = fields.Float(allow_none=True)


class Tree(CompiledSchema):
    id = fields.Integer()
    label = fields.String(allow_none=True)
    tags = fields.List(fields.String())
    attrs = fields.Dict(keys=fields.String(), values=fields.Integer(allow_none=True))
    leaves = fields.Nested(Leaf, many=True)
    child = fields.Nested(lambda: Tree(), allow_none=True)
    flag = fields.Boolean()


class CheckedLeaf(CompiledSchema):
    name = fields.String(validate=validate.Length(max=3))
    score = fields.Float(allow_none=True, validate=validate.Range(min=0.1))

    @post_load
    def make(self, data, **kwargs):
        return ("leaf", data["name"], data["score"])


class CheckedTree(CompiledSchema):
    """Tree with validators and hooks: fuzzed bytes also reach marshmallow's load."""

    id = fields.Integer(validate=validate.Range(max=2**62))
    label = fields.String(allow_none=True, validate=validate.Length(max=30))
    tags = fields.List(fields.String(validate=validate.Regexp(r"^0\.")))
    attrs = fields.Dict(
        keys=fields.String(validate=validate.Length(max=1)),
        values=fields.Integer(allow_none=True, validate=validate.Range(-5, 5)),
    )
    leaves = fields.Nested(CheckedLeaf, many=True)
    child = fields.Nested(lambda: CheckedTree(), allow_none=True)
    flag = fields.Boolean()

    @validates_schema
    def flag_means_no_child(self, data, **kwargs):
        if data["flag"] and data["child"] is not None:
            raise ValidationError("a flagged tree has no child")

    @post_load
    def make(self, data, **kwargs):
        return ("tree", sorted(data))


def record(rng: random.Random, depth: int = 0) -> dict:
    return {
        "id": rng.randint(-(2**63), 2**63 - 1),
        "label": rng.choice([None, "", "x" * rng.randint(1, 40), "ünï ✓"]),
        "tags": [str(rng.random()) for _ in range(rng.randint(0, 4))],
        "attrs": {str(i): rng.choice([None, rng.randint(-9, 9)]) for i in range(rng.randint(0, 3))},
        "leaves": [
            {"name": "l", "score": rng.choice([None, rng.random()])} for _ in range(rng.randint(0, 3))
        ],
        "child": record(rng, depth + 1) if depth < 3 and rng.random() < 0.5 else None,
        "flag": rng.random() < 0.5,
    }


@pytest.fixture(scope="module")
def tree():
    return Tree().compile()


@pytest.fixture(scope="module")
def checked_tree():
    return CheckedTree().compile()


def mutations(rng: random.Random, data: bytes):
    """Seeded mutations of a valid encoding: flips, truncations, splices, varint bombs."""
    yield data[: rng.randrange(len(data))]
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        buf[rng.randrange(len(buf))] = rng.randrange(256)
    yield bytes(buf)
    at = rng.randrange(len(data))
    yield data[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 12))) + data[at:]
    yield data[:at] + b"\xff" * rng.randint(1, 11) + b"\x01" + data[at:]  # over-long varints
    yield data[:at] + b"\xfe\xff\xff\xff\x0f" + data[at:]  # huge counts/lengths
    yield data[:at] + b"\x01" + data[at:]  # negative counts/lengths


@pytest.mark.parametrize("which", ["tree", "checked_tree"])
def test_fuzzed_bytes_give_a_value_or_a_documented_error(which, request):
    """Every mutation decodes to a value or raises DecodeError (or marshmallow's
    ValidationError for a decoded value it refuses); never anything else."""
    tree = request.getfixturevalue(which)
    rng = random.Random(20261121)
    outcomes = {"value": 0, "DecodeError": 0, "ValidationError": 0}
    for _ in range(300):
        data = tree.dump_compiled(record(rng))
        for mutated in mutations(rng, data):
            try:
                tree.load_compiled(mutated)
                outcomes["value"] += 1
            except DecodeError as error:
                assert 0 <= error.offset <= len(mutated)
                outcomes["DecodeError"] += 1
            except ValidationError:
                outcomes["ValidationError"] += 1
    assert outcomes["DecodeError"] > 1000 and outcomes["value"] > 0
    if which == "checked_tree":
        assert outcomes["ValidationError"] > 10


def test_deep_recursion_in_hostile_bytes_is_bounded(tree):
    # a child, a child, ...: every level is the shortest valid prefix
    level = b"\x00\x00\x00\x00\x00\x02"  # id 0, label null, no tags/attrs/leaves, child branch
    with pytest.raises(DecodeError, match="nested more than"):
        tree.load_compiled(level * 100_000)


def loaded(schema, data):
    try:
        return schema.load_compiled(data)
    except ValidationError as error:
        return ("ValidationError", error.messages)


@pytest.mark.parametrize("which", ["tree", "checked_tree"])
def test_eight_threads_share_one_codec(which, request):
    tree = request.getfixturevalue(which)
    rng = random.Random(7)
    records = [record(rng) for _ in range(200)]
    expected = [(tree.dump_compiled(r), loaded(tree, tree.dump_compiled(r))) for r in records]
    if which == "checked_tree":
        # both paths: valid records on the compiled path, invalid ones through marshmallow
        assert 20 < sum(e[1][0] == "ValidationError" for e in expected) < 180
    failures = []
    start = threading.Barrier(8)

    def hammer(seed):
        order = random.Random(seed)
        start.wait()
        for _ in range(2000):
            i = order.randrange(len(records))
            data = tree.dump_compiled(records[i])
            if data != expected[i][0] or loaded(tree, data) != expected[i][1]:
                failures.append(i)
            if order.random() < 0.1:
                try:
                    tree.load_compiled(data[:-1])
                    failures.append(("no error", i))
                except DecodeError:
                    pass

    threads = [threading.Thread(target=hammer, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_memory_stays_flat_including_error_paths(tree):
    rng = random.Random(3)
    good = record(rng)
    data = tree.dump_compiled(good)
    bad_record = {**good, "id": "not a number"}
    truncated = data[:-3]

    def cycle(n):
        for _ in range(n):
            tree.load_compiled(tree.dump_compiled(good))
            try:
                tree.dump_compiled(bad_record)
            except ValidationError:
                pass
            try:
                tree.load_compiled(truncated)
            except DecodeError:
                pass

    cycle(2_000)
    gc.collect()
    tracemalloc.start()
    cycle(5_000)
    gc.collect()
    first, _ = tracemalloc.get_traced_memory()
    cycle(20_000)
    gc.collect()
    second, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # 20,000 more cycles of dump, load and two errors: no per-cycle growth
    assert second - first < 64 * 1024, (first, second)
