"""Loaded records are copies of a per-type dict of keys, each value written
into its entry (roastedavro._runtime.RecordKeys). The dicts they give must be
indistinguishable from dicts built key by key:

- the layout check accepts CPython 3.11-3.13's dicts of every size and
  refuses what it cannot index (repeated keys, no keys);
- values and key order equal fastavro's reader for plain, nested, wide and
  resolved records, on the direct path and on the PyDict_SetItem one;
- reference counts, lookups, growth, deletion, copying, pickling and the
  garbage collector's view (tracked exactly when a value can hold others,
  cycles through a loaded dict collected) behave as for any dict;
- many loads leave the shared template untouched;
- arrays, made with room for their first block and filled in place, read
  as fastavro reads them in any blocking, are whole lists at every moment
  to Python code run between items, and a load cut short in the first
  block frees its partly filled list.
"""

from __future__ import annotations

import gc
import io
import pickle
import sys
import weakref

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import fields

import roastedavro.avrogen
from roastedavro import AvroCodec, CompiledSchema, DecodeError
from roastedavro._runtime import RecordKeys, _dict_values_offset

# where the dict layout check is expected to pass: CPython 3.11-3.14 with the GIL
CPYTHON_DICTS = (
    sys.implementation.name == "cpython"
    and (3, 11) <= sys.version_info < (3, 15)
    and getattr(sys, "_is_gil_enabled", lambda: True)()
)

ORDER = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "sku", "type": "string"},
        {"name": "price", "type": ["null", "double"]},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "int"}},
        {
            "name": "line",
            "type": {
                "type": "record",
                "name": "Line",
                "fields": [{"name": "qty", "type": "int"}, {"name": "note", "type": ["null", "string"]}],
            },
        },
    ],
}

orders = st.fixed_dictionaries(
    {
        "id": st.integers(-(2**63), 2**63 - 1),
        "sku": st.text(max_size=20),
        "price": st.none() | st.floats(allow_nan=False),
        "tags": st.lists(st.text(max_size=5), max_size=4),
        "attrs": st.dictionaries(st.text(max_size=5), st.integers(-(2**31), 2**31 - 1), max_size=4),
        "line": st.fixed_dictionaries(
            {"qty": st.integers(-(2**31), 2**31 - 1), "note": st.none() | st.text(max_size=8)}
        ),
    }
)


def _fastavro_bytes(schema, record):
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), record)
    return out.getvalue()


def _fastavro_read(writer, data, reader=None):
    parsed_reader = fastavro.parse_schema(reader) if reader else None
    return fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(writer), parsed_reader)


@pytest.fixture(scope="module")
def order_codec():
    return AvroCodec(ORDER)


@pytest.fixture(scope="module")
def setitem_order_codec():
    # the same generated module (a doc string is not in its source), given
    # keys that never take the direct path
    original = roastedavro.avrogen.RecordKeys
    roastedavro.avrogen.RecordKeys = lambda keys: RecordKeys(keys, direct=False)
    try:
        return AvroCodec({**ORDER, "doc": "read through PyDict_SetItem"})
    finally:
        roastedavro.avrogen.RecordKeys = original


@pytest.mark.skipif(not CPYTHON_DICTS, reason="the layout check covers CPython 3.11-3.14's dicts")
@pytest.mark.parametrize("size", [1, 2, 5, 6, 10, 11, 21, 22, 85, 86, 130, 500, 5000])
def test_the_layout_check_accepts_dicts_of_every_size(size):
    keys = RecordKeys(f"field_{n}" for n in range(size))
    assert keys.direct
    # the offset agrees with a template built another way
    assert _dict_values_offset(dict.fromkeys(keys.keys)) > 0


def test_keys_it_cannot_index_take_the_setitem_path():
    assert not RecordKeys(["a", "b", "a"]).direct
    assert not RecordKeys([]).direct
    assert not RecordKeys(["a"], direct=False).direct
    with pytest.raises(TypeError, match="record keys are str"):
        RecordKeys(["a", 1])


def test_dicts_it_cannot_index_are_refused():
    assert _dict_values_offset({}) == -1
    assert _dict_values_offset({1: None, 2: None}) == -1  # keys not all str
    holes = dict.fromkeys("abcdef")
    del holes["c"]  # a deleted entry
    assert _dict_values_offset(holes) == -1


@settings(max_examples=60, deadline=None)
@given(orders)
def test_loads_equal_fastavros_on_both_paths(order_codec, setitem_order_codec, order):
    data = _fastavro_bytes(ORDER, order)
    expected = _fastavro_read(ORDER, data)
    for codec in (order_codec, setitem_order_codec):
        loaded = codec.load(data)
        assert loaded == expected
        assert list(loaded) == list(expected)
        assert list(loaded["line"]) == ["qty", "note"]


def _record_keys(codec):
    # the RecordKeys the generated codec object holds (in its Bound)
    held = gc.get_referents(codec._codec)
    held += [inner for value in held if type(value).__name__ == "Bound" for inner in gc.get_referents(value)]
    return [value for value in held if isinstance(value, RecordKeys)]


def test_the_setitem_codec_really_takes_the_other_path(order_codec, setitem_order_codec):
    assert len(_record_keys(setitem_order_codec)) == 2  # Order and Line
    assert not any(keys.direct for keys in _record_keys(setitem_order_codec))
    if CPYTHON_DICTS:
        assert len(_record_keys(order_codec)) == 2
        assert all(keys.direct for keys in _record_keys(order_codec))


def test_loaded_dicts_behave_as_dicts(order_codec):
    order = {
        "id": 7,
        "sku": "abc" * 30,
        "price": None,
        "tags": ["x"],
        "attrs": {"k": 1},
        "line": {"qty": 2, "note": None},
    }
    loaded = order_codec.load(_fastavro_bytes(ORDER, order))
    built = {}
    for key, value in order.items():
        built[key] = value
    assert loaded == built and hash(frozenset(loaded)) == hash(frozenset(built))
    for key in order:
        assert loaded[key] == order[key] and loaded.get(key) == order[key] and key in loaded
    # grows, shrinks and copies as any dict
    for n in range(50):
        loaded[f"extra{n}"] = n
    del loaded["sku"]
    loaded.pop("extra3")
    assert "sku" not in loaded and loaded["extra49"] == 49 and len(loaded) == 6 + 50 - 2
    assert pickle.loads(pickle.dumps(loaded)) == loaded
    assert dict(loaded) == loaded.copy() == {**loaded}
    loaded.clear()
    assert loaded == {}


def test_each_value_is_referenced_once_by_its_record(order_codec):
    order = {
        "id": 2**62,
        "sku": "a unique string value",
        "price": 1.5,
        "tags": [],
        "attrs": {},
        "line": {"qty": 2**30, "note": "a note"},
    }
    loaded = order_codec.load(_fastavro_bytes(ORDER, order))
    for key in ("id", "sku", "price", "tags", "attrs", "line"):
        value = loaded[key]
        # this local, the record, getrefcount's argument
        assert sys.getrefcount(value) == 3, key
    value, line = loaded["sku"], loaded["line"]
    del loaded
    assert sys.getrefcount(value) == 2 and sys.getrefcount(line) == 2


def test_the_garbage_collector_sees_what_it_would_see_in_a_built_dict(order_codec):
    flat = {
        "type": "record",
        "name": "Flat",
        "fields": [
            {"name": "a", "type": "long"},
            {"name": "b", "type": "string"},
            {"name": "c", "type": ["null", "double"]},
        ],
    }
    flat_codec = AvroCodec(flat)
    loaded = flat_codec.load(_fastavro_bytes(flat, {"a": 1, "b": "x", "c": None}))
    assert not gc.is_tracked(loaded) and not gc.is_tracked({"a": 1, "b": "x", "c": None})
    loaded["later"] = []  # CPython tracks it from here, as any dict
    assert gc.is_tracked(loaded)
    order = {"id": 1, "sku": "s", "price": None, "tags": [], "attrs": {}, "line": {"qty": 1, "note": None}}
    record = order_codec.load(_fastavro_bytes(ORDER, order))
    assert gc.is_tracked(record)
    assert not gc.is_tracked(record["line"])
    # a cycle through a loaded record is collected
    record["tags"].append(record)
    record["marker"] = marker = Marker()
    watcher = weakref.ref(marker)
    del record, marker
    gc.collect()
    assert watcher() is None


class Marker:
    pass


def test_many_loads_leave_the_template_alone(order_codec):
    order = {
        "id": 1,
        "sku": "s",
        "price": 2.0,
        "tags": ["t"],
        "attrs": {"a": 1},
        "line": {"qty": 1, "note": "n"},
    }
    data = _fastavro_bytes(ORDER, order)
    records = [order_codec.load(data) for _ in range(1000)]
    assert all(record == order for record in records)
    templates = [keys.template for keys in _record_keys(order_codec)]
    assert templates and all(set(t.values()) == {None} for t in templates)


WideSchema = type(
    "WideSchema",
    (CompiledSchema,),
    {
        "Meta": type("Meta", (), {"avro_name": "WideLoaded"}),
        **{
            f"f{n}": (fields.Integer(required=True) if n % 3 else fields.String(required=True))
            for n in range(120)
        },
        "skipped": fields.String(dump_only=True),
        "renamed": fields.Integer(attribute="other_name", required=True),
    },
)


@pytest.fixture(scope="module")
def wide():
    schema = WideSchema()
    schema.compile()
    return schema


@settings(max_examples=20, deadline=None)
@given(numbers=st.lists(st.integers(-(2**63), 2**63 - 1), min_size=120, max_size=120))
def test_wide_marshmallow_records_load_as_marshmallow_loads(wide, numbers):
    # three functions of fields, a dump_only field on the wire only, an attribute
    record = {f"f{n}": (numbers[n] if n % 3 else str(numbers[n])) for n in range(120)}
    record.update(skipped="on the wire only", other_name=5)
    loaded = wide.load_compiled(wide.dump_compiled(record))
    dumped = wide.dump(record)
    del dumped["skipped"]  # marshmallow's load refuses dump_only keys
    expected = wide.load(dumped)
    assert loaded == expected
    assert list(loaded) == list(expected)
    assert "skipped" not in loaded and loaded["other_name"] == 5


def test_resolved_records_take_the_readers_order_and_defaults():
    writer = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "b", "type": "string"},
            {"name": "gone", "type": "long"},
            {"name": "a", "type": "int"},
        ],
    }
    reader = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "a", "type": "long"},
            {"name": "new", "type": "string", "default": "d"},
            {"name": "b", "type": "string"},
        ],
    }
    data = _fastavro_bytes(writer, {"b": "x", "gone": 9, "a": 3})
    loaded = AvroCodec(reader, writer_schema=writer).load(data)
    expected = _fastavro_read(writer, data, reader)
    assert loaded == expected == {"a": 3, "new": "d", "b": "x"}
    # the reader's order (fastavro's is the writer's, then the defaults)
    assert list(loaded) == ["a", "new", "b"]


# -- arrays: room for the first block, filled in place ---------------------------


def _blocks(*blocks, item=lambda value: _fastavro_bytes("long", value)):
    # an array written in the given blocks; a negative count carries its
    # block's byte size, as writers that buffer blocks send it
    out = b""
    for values, sized in blocks:
        body = b"".join(item(value) for value in values)
        if sized:
            out += _fastavro_bytes("long", -len(values)) + _fastavro_bytes("long", len(body)) + body
        else:
            out += _fastavro_bytes("long", len(values)) + body
    return out + b"\x00"


BLOCKINGS = [
    [],
    [([1, 2, 3], False)],
    [([1, 2, 3], True), ([4], False), ([5, 6], True)],
    [([7], False), ([8, 9, 10, 11, 12], False)],
    [([2**62, -1], True), ([0] * 40, True)],
]


@pytest.mark.parametrize("blocking", BLOCKINGS)
def test_arrays_in_any_blocks_read_as_fastavro_reads_them(blocking):
    data = _blocks(*blocking) if blocking else b"\x00"
    expected = fastavro.schemaless_reader(io.BytesIO(data), {"type": "array", "items": "long"})
    assert expected == [value for values, _ in blocking for value in values]
    codec = AvroCodec({"type": "array", "items": "long"})
    assert codec.load(data) == expected
    wider = AvroCodec({"type": "array", "items": "double"}, writer_schema={"type": "array", "items": "long"})
    assert wider.load(data) == [float(value) for value in expected]

    class Numbers(CompiledSchema):
        class Meta:
            avro_name = "Numbers"

        values = fields.List(fields.Integer(), required=True)

    assert Numbers().load_compiled(data) == {"values": expected}


def test_an_array_cut_short_in_its_first_block_is_a_decode_error_and_frees_its_items():
    record = {"type": "record", "name": "Item", "fields": [{"name": "n", "type": "long"}]}
    schema = {"type": "array", "items": record}
    # two-byte items: six bytes pass the block's size check (one byte per
    # item at least), then the third item runs past the end
    expected = [{"n": 100}, {"n": 101}, {"n": 102}, {"n": 103}]
    data = _blocks(([100, 101, 102, 103], False), item=lambda value: _fastavro_bytes(record, {"n": value}))
    codec = AvroCodec(schema)
    assert codec.load(data) == expected
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(200):
        with pytest.raises(DecodeError, match="past the end|truncated") as caught:
            codec.load(data[:6])
    assert caught.value.offset == 5
    gc.collect()
    # the half-filled lists (and the records in them) are gone
    assert len(gc.get_objects()) < before + 50
    assert codec.load(data) == expected


def test_python_code_run_while_an_array_is_read_sees_a_whole_list():
    # a field's own _deserialize runs between items: the list being filled,
    # reachable through the garbage collector, holds exactly the items read
    # so far (no empty slots to crash repr or iteration)
    seen = []

    class Peeking(fields.String):
        def _deserialize(self, value, attr, data, **kwargs):
            word = "".join([value, "!"])  # a new object for each item
            if seen:
                for holder in gc.get_referrers(seen[-1][0]):
                    if type(holder) is list and holder is not seen[-1]:
                        repr(holder)
                        seen.append((word, len(holder), list(holder)))
                        break
                else:
                    seen.append((word, None, None))
            else:
                seen.append((word, 0, []))
            return word

    class Words(CompiledSchema):
        class Meta:
            avro_name = "Words"

        words = fields.List(Peeking(), required=True)

    schema = Words()
    data = schema.dump_compiled({"words": ["a", "b", "c", "d"]})
    assert schema.load_compiled(data) == {"words": ["a!", "b!", "c!", "d!"]}
    # while item k was read, the list held the k items before it
    assert [(length, items) for _, length, items in seen[1:]] == [
        (1, ["a!"]),
        (2, ["a!", "b!"]),
        (3, ["a!", "b!", "c!"]),
    ]
