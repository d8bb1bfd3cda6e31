"""Recursive schemas: named references, one function per record, depth limits."""

import pytest
from conftest import fastavro_bytes
from marshmallow import ValidationError, fields

from roastedavro import CompiledSchema, CompileFlags, DecodeError


class Node(CompiledSchema):
    value = fields.Integer()
    children = fields.List(fields.Nested(lambda: Node()))
    next = fields.Nested(lambda: Node(), allow_none=True)


@pytest.fixture(scope="module")
def node():
    return Node().compile()


def tree(depth):
    return {"value": depth, "children": [tree(depth - 1), tree(depth - 1)] if depth else [], "next": None}


def chain(length):
    head = {"value": 0, "children": [], "next": None}
    for i in range(1, length):
        head = {"value": i, "children": [], "next": head}
    return head


def test_recursive_schema_is_a_named_reference(node):
    avro = node.avro_schema()
    fields_by_name = {f["name"]: f["type"] for f in avro["fields"]}
    assert fields_by_name["children"] == {"type": "array", "items": "Node"}
    assert fields_by_name["next"] == ["null", "Node"]
    source = node.compile_to_string()
    assert source.count("cdef int write_Node(") == 1
    assert "self.write_Node(w, value, depth + 1)" in source
    assert "self.write_Node(w, item0, depth + 1)" in source


def test_recursive_records_match_oracles(node):
    for record in (tree(0), tree(4), chain(50)):
        data = node.dump_compiled(record)
        assert data == fastavro_bytes(node, node.dump(record))
        assert node.load_compiled(data) == node.load(node.dump(record))


def test_depth_limit_on_dump_and_load():
    shallow = Node().compile(CompileFlags(max_depth=10))
    shallow.dump_compiled(chain(11))
    with pytest.raises(ValidationError, match="nested more than 10 levels"):
        shallow.dump_compiled(chain(12))
    data = Node().compile().dump_compiled(chain(12))
    with pytest.raises(DecodeError, match="nested more than 10 levels"):
        shallow.load_compiled(data)


def test_cyclic_object_is_an_error_not_a_crash(node):
    cyclic = {"value": 1, "children": [], "next": None}
    cyclic["next"] = cyclic
    with pytest.raises(ValidationError):
        node.dump_compiled(cyclic)


def test_deep_hostile_bytes_are_bounded(node):
    # 100k nested "next" branches: stops at the default depth limit
    data = b"\x02\x00\x02" * 100_000
    with pytest.raises(DecodeError, match="nested more than"):
        node.load_compiled(data)


def test_deep_data_on_marshmallows_path_is_a_validation_error_not_a_recursion_error():
    from marshmallow import post_dump, validate

    class Node(CompiledSchema):
        v = fields.Integer(validate=validate.Range(min=0))
        child = fields.Nested(lambda: Node(), allow_none=True)

    class Shouting(CompiledSchema):
        child = fields.Nested(lambda: Shouting(), allow_none=True)

        @post_dump
        def keep(self, data, **kwargs):
            return data

    def chain(depth, leaf):
        record = {"v": leaf, "child": None}
        for _ in range(depth):
            record = {"v": 1, "child": record}
        return record

    node = Node()
    assert node.load_compiled(node.dump_compiled(chain(400, 1)))["v"] == 1
    with pytest.raises(ValidationError) as error:
        node.load_compiled(node.dump_compiled(chain(400, -1)))
    assert "nested too deeply for marshmallow's load" in str(error.value.messages["_schema"])
    with pytest.raises(ValidationError) as error:
        node.load_compiled(node.dump_compiled(chain(20, -1)))
    assert "Must be greater than or equal to 0." in str(error.value.messages)

    deep = {"child": None}
    for _ in range(400):
        deep = {"child": deep}
    with pytest.raises(ValidationError) as error:
        Shouting().dump_compiled(deep)
    assert "nested too deeply for marshmallow's dump" in str(error.value.messages["_schema"])


def test_deep_records_in_a_small_thread_stack_end_in_a_clean_error():
    # max_depth 10,000 is more than a 64 KB thread stack holds: every 32
    # levels the record functions check the room left, so a deep value is
    # a clean error there (and works on the main thread), never an overflow
    import threading

    deep = Node().compile(CompileFlags(max_depth=10_000))
    value = chain(5_000)
    data = deep.dump_compiled(value)
    outcomes = []

    def run():
        # how much stack a level takes depends on the compiler: deep values
        # either work or end in the C-stack error, never in an overflow
        try:
            assert deep.dump_compiled(value) == data
        except ValidationError as error:
            assert "C stack" in str(error.messages)
        try:
            loaded = deep.load_compiled(data)
        except DecodeError as error:
            assert "C stack" in str(error)
        else:
            values = []  # walked without recursion: the chain is 5,000 deep
            while loaded is not None:
                values.append(loaded["value"])
                loaded = loaded["next"]
            assert values == list(range(4_999, -1, -1))
        assert deep.load_compiled(deep.dump_compiled(chain(20))) == chain(20)
        outcomes.append("ok")

    threading.stack_size(64 * 1024)
    try:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(0)
    assert outcomes == ["ok"]
