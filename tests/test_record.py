"""roastedavro._record's value classes behave as dataclasses.dataclass's.

Each class is checked against a real dataclass made from the same class body
(the oracle): the constructor's parameters and defaults, repr, equality and
hashing, frozen assignment, __match_args__, and dataclasses' own functions
(fields, replace, asdict, is_dataclass) on the record class. Then every class
the package declares with @record is checked to be one, with its fields as
the dataclass module sees them."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pickle
import pkgutil

import pytest

import roastedavro
from roastedavro._record import field, record


def both(body: dict, annotations: dict, **options):
    """The same class made by dataclasses and by record."""
    made = []
    for decorate, make_field in ((dataclasses.dataclass, dataclasses.field), (record, field)):
        namespace = {"__annotations__": dict(annotations), "__module__": __name__}
        for name, value in body.items():
            namespace[name] = make_field(**value) if isinstance(value, dict) else value
        made.append(decorate(**options)(type("Point", (), namespace)))
    return made


SHAPES = [
    ({}, {"x": "int", "y": "int"}),
    ({"y": 0}, {"x": "int", "y": "int"}),
    ({"tags": {"default_factory": list}}, {"x": "int", "tags": "list"}),
    ({"hidden": {"default": None, "repr": False, "compare": False}}, {"x": "int", "hidden": "object"}),
    ({"weight": {"default": 1, "hash": False}}, {"x": "int", "weight": "int"}),
]


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("body, annotations", SHAPES)
def test_a_record_behaves_as_the_dataclass_of_the_same_body(body, annotations, frozen):
    oracle, ours = both(body, annotations, frozen=frozen)
    assert str(inspect.signature(ours)) == str(inspect.signature(oracle))
    assert ours.__match_args__ == oracle.__match_args__
    assert ours.__doc__ == oracle.__doc__
    required = [name for name in annotations if name not in body]
    values = [{name: 1 for name in required}, dict(x=1, **{name: 5 for name in annotations if name != "x"})]
    for given in values:
        a, b = oracle(**given), ours(**given)
        assert repr(b) == repr(a)
        assert (b == ours(**given)) == (a == oracle(**given))
        other = dict(given, x=2)
        assert (b == ours(**other)) == (a == oracle(**other))
        assert b.__eq__(object()) is NotImplemented
        if oracle.__hash__ is None:
            assert ours.__hash__ is None
        else:

            def hashed(value):
                try:
                    return hash(value)
                except TypeError as error:  # a list field: unhashable in both
                    return type(error)

            assert (hashed(b) == hashed(ours(**given))) == (hashed(a) == hashed(oracle(**given)))
            assert (hashed(b) == hashed(ours(**other))) == (hashed(a) == hashed(oracle(**other)))
            assert (hashed(b) is TypeError) == (hashed(a) is TypeError)
        if frozen:
            with pytest.raises(dataclasses.FrozenInstanceError):
                b.x = 3
            with pytest.raises(dataclasses.FrozenInstanceError):
                del b.x
        # dataclasses' functions take it
        assert dataclasses.is_dataclass(b)
        assert [f.name for f in dataclasses.fields(b)] == [f.name for f in dataclasses.fields(a)]
        assert dataclasses.asdict(b) == dataclasses.asdict(a)
        changed = dataclasses.replace(b, x=9)
        assert type(changed) is ours and changed.x == 9


def test_post_init_and_defaults_order():
    calls = []

    @record(frozen=True)
    class Checked:
        a: int
        b: int = 2

        def __post_init__(self):
            calls.append((self.a, self.b))

    Checked(1)
    assert calls == [(1, 2)]
    with pytest.raises(TypeError, match="non-default argument"):

        @record
        class Wrong:
            a: int = 1
            b: int


def _package_records():
    found = {}
    for info in pkgutil.walk_packages(roastedavro.__path__, "roastedavro."):
        if info.name.startswith("roastedavro.kafka"):
            continue  # needs confluent-kafka; holds no value class
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and value.__module__ == module.__name__
                and "__record_fields__" in value.__dict__
            ):
                found[f"{module.__name__}.{value.__qualname__}"] = value
    return found


def test_the_packages_value_classes_are_records_dataclasses_can_read():
    records = _package_records()
    # the schema model, its resolution plan, container files, flags, durations
    for expected in (
        "roastedavro.avro.types.Record",
        "roastedavro.avro.types.Field",
        "roastedavro.flags.CompileFlags",
        "roastedavro._datum.Duration",
        "roastedavro.container.Block",
    ):
        assert expected in records, sorted(records)
    for name, cls in records.items():
        names = list(cls.__record_fields__)
        assert [f.name for f in dataclasses.fields(cls)] == names, name


def test_model_values_pickle_compare_and_hash_as_before():
    from roastedavro.avro import parse_schema

    schema = parse_schema(
        {
            "type": "record",
            "name": "R",
            "fields": [
                {"name": "a", "type": ["null", {"type": "fixed", "name": "F", "size": 2}]},
                {"name": "b", "type": {"type": "array", "items": "long"}, "default": []},
            ],
        }
    )
    again = parse_schema(schema.to_json())
    assert again.root == schema.root and hash(again.root) == hash(schema.root)
    assert pickle.loads(pickle.dumps(schema.root)) == schema.root
    with pytest.raises(dataclasses.FrozenInstanceError):
        schema.root.name = "S"


def test_class_vars_are_not_fields_and_mutable_defaults_are_refused_as_in_dataclasses():
    import typing

    for annotation in (typing.ClassVar[int],):
        oracle, ours = both({"k": 5}, {"x": "int", "k": annotation})
        assert (
            [f.name for f in dataclasses.fields(ours)]
            == ["x"]
            == [f.name for f in dataclasses.fields(oracle)]
        )
        assert ours.k == 5 and str(inspect.signature(ours)) == str(inspect.signature(oracle))
    for mutable in ([], {}, set()):
        with pytest.raises(ValueError, match="mutable default"):
            dataclasses.dataclass(type("M", (), {"__annotations__": {"x": "list"}, "x": mutable}))
        with pytest.raises(ValueError, match="mutable default"):
            record(type("M", (), {"__annotations__": {"x": "list"}, "x": mutable}))
