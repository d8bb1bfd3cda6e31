"""SchemaShape: the check that a writer schema given as a dict is unchanged
since its pair was kept (roastedavro._runtime). A false "unchanged" would
read data with the wrong schema, so every change must be seen; a false
"changed" only costs the slow path, which compares values."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from roastedavro._runtime import UNCHECKABLE, SchemaShape, schema_shape

atoms = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5))
trees = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=30,
)
schemas = st.one_of(
    st.dictionaries(st.text(max_size=4), trees, min_size=1, max_size=4),
    st.lists(trees, min_size=1, max_size=4),
)


def containers(tree, found=None):
    found = [] if found is None else found
    if isinstance(tree, (dict, list)):
        found.append(tree)
        for item in tree.values() if isinstance(tree, dict) else tree:
            containers(item, found)
    return found


@settings(max_examples=200, deadline=None)
@given(schemas)
def test_an_untouched_schema_matches_its_shape(schema):
    shape = SchemaShape.of(schema)
    assert shape is not None
    assert shape.matches(schema)
    assert not shape.matches(copy.deepcopy(schema))  # another object: the slow path


@settings(max_examples=300, deadline=None)
@given(schemas, st.data())
def test_every_change_in_place_is_seen(schema, data):
    shape = SchemaShape.of(schema)
    before = copy.deepcopy(schema)
    target = data.draw(st.sampled_from(containers(schema)))
    change = data.draw(st.sampled_from(["add", "remove", "replace", "clear"]))
    if isinstance(target, dict):
        if change == "add":
            target[data.draw(st.text(min_size=5, max_size=6))] = 1
        elif change == "remove" and target:
            target.pop(next(iter(target)))
        elif change == "replace" and target:
            target[next(iter(target))] = ["a new", "value"]
        else:
            target.clear()
    else:
        if change == "add":
            target.append(None)
        elif change == "remove" and target:
            target.pop()
        elif change == "replace" and target:
            target[0] = {"a new": "value"}
        else:
            target.clear()
    if schema != before:
        assert not shape.matches(schema)


def test_the_same_value_put_back_is_taken_as_a_change():
    schema = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "long"}]}
    shape = SchemaShape.of(schema)
    schema["fields"][0]["type"] = "int"
    assert not shape.matches(schema)
    schema["fields"][0]["type"] = "long"
    assert not shape.matches(schema)


def test_a_list_changed_in_place_is_seen():
    schema = {"type": "record", "name": "R", "fields": [{"name": "a", "type": ["null", "string"]}]}
    shape = SchemaShape.of(schema)
    branches = schema["fields"][0]["type"]
    branches.reverse()
    assert not shape.matches(schema)
    branches.reverse()
    assert shape.matches(schema)  # the same objects in the same places again


def test_what_is_not_a_json_tree_has_no_shape():
    assert SchemaShape.of({"a": object()}) is None
    assert SchemaShape.of({1: "x"}) is None
    assert SchemaShape.of("string") is None
    assert SchemaShape.of({"a": ("tuple",)}) is None
    nested = inner = {}
    for _ in range(300):
        inner["a"] = {}
        inner = inner["a"]
    assert SchemaShape.of(nested) is None  # deeper than any schema needs


def test_a_shape_does_not_match_another_object():
    schema = {"type": "string"}
    shape = SchemaShape.of(schema)
    assert not shape.matches({"type": "string"})
    assert not shape.matches(None)
    assert not shape.matches([])


def test_what_a_cache_keeps_for_each_kind_of_schema():
    from roastedavro.avro import parse_schema

    assert schema_shape("string") is None  # text cannot change
    assert schema_shape(parse_schema("string")) is None  # nor a parsed Schema
    union = ["null", "string"]
    assert schema_shape(union).matches(union)
    odd = {"type": "record", "name": "R", "fields": (), "x": object()}
    assert schema_shape(odd) is UNCHECKABLE
    assert not UNCHECKABLE.matches(odd)
