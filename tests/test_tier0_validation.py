"""In a schema of many fields (more than avrogen._COMPILED_VALIDATION_FIELDS),
fastavro's branch rule (a dict goes to the union's record whose validation
accepts it, deeply) is run by tier 0's interpreter, one call per record,
instead of an accepts_ function generated per record. The bytes, errors,
paths and nesting bound stay those of fastavro and of the generated checks.

Here the bound is lowered to 0 so that small schemas take that path; the
oracles are fastavro's bytes and the codec generated with its own checks.
"""

from __future__ import annotations

import re

import fastavro
import pytest

# run here again, with this module's `ambiguous` fixture (records validated by tier 0)
from test_codec_properties import AMBIGUOUS, test_ambiguous_unions_like_fastavro  # noqa: F401
from conftest import build_avro_codec
from test_shared_unions import DRAWING, DRAWINGS, fastavro_dump, fastavro_load
from roastedavro import avrogen
from roastedavro.avro import parse_schema
from roastedavro.errors import DatumError
from roastedavro.flags import CompileFlags


def build(schema, tier0: bool, flags: CompileFlags = CompileFlags()):
    """A compiled codec of ``schema`` whose records are validated by tier 0
    (or by its own generated checks), and its source."""
    bound = avrogen._COMPILED_VALIDATION_FIELDS
    avrogen._COMPILED_VALIDATION_FIELDS = -1 if tier0 else 10**9
    try:
        codec, generated = build_avro_codec(schema, flags)
    finally:
        avrogen._COMPILED_VALIDATION_FIELDS = bound
    return codec, generated.source


@pytest.fixture(scope="module")
def drawing():
    return build(DRAWING, tier0=True)


@pytest.fixture(scope="module")
def ambiguous():
    return build(AMBIGUOUS, tier0=True)[0], fastavro.parse_schema(AMBIGUOUS)


def test_no_record_validator_is_generated(drawing):
    _, source = drawing
    assert "accepts_record_at(" in source
    assert not re.search(r"cdef bint accepts_shared_(Circle|Square|Label)\b", source)
    # the generated checks of the same schema, for contrast
    assert re.search(r"cdef bint accepts_shared_Circle\b", build(DRAWING, tier0=False)[1])


def test_a_schema_of_many_fields_is_validated_by_tier0():
    wide = {
        "type": "record",
        "name": "Wide",
        "fields": [{"name": f"f{n}", "type": "long"} for n in range(avrogen._COMPILED_VALIDATION_FIELDS)]
        + [
            {
                "name": "shape",
                "type": [
                    "null",
                    {"type": "record", "name": "A", "fields": [{"name": "x", "type": "int"}]},
                    {"type": "record", "name": "B", "fields": [{"name": "y", "type": "int"}]},
                ],
            }
        ],
    }
    source = avrogen.generate_avro_module(parse_schema(wide)).source
    assert "accepts_record_at(" in source and "cdef bint accepts_A" not in source
    narrow = dict(wide, fields=wide["fields"][-3:])
    assert "accepts_record_at(" not in avrogen.generate_avro_module(parse_schema(narrow)).source


@pytest.mark.parametrize("datum", DRAWINGS)
def test_bytes_and_values_are_fastavros(drawing, datum):
    codec, _ = drawing
    data = codec.dump(datum)
    assert data == fastavro_dump(DRAWING, datum)
    assert codec.load(data) == fastavro_load(DRAWING, data)


@pytest.mark.parametrize(
    "datum",
    [
        {"main": {"r": "wide"}, "others": [], "named": {}, "layer": {"top": None}},
        {"main": None, "others": [{"side": 1.0}], "named": {}, "layer": {"top": None}},
        {"main": None, "others": [], "named": {"k": {"text": 3, "side": 1.0}}, "layer": {"top": None}},
    ],
)
def test_a_value_no_record_accepts_has_the_same_error(drawing, datum):
    own = build(DRAWING, tier0=False)[0]
    with pytest.raises(DatumError) as expected:
        own.dump(datum)
    with pytest.raises(DatumError) as raised:
        drawing[0].dump(datum)
    assert str(raised.value) == str(expected.value)
    assert raised.value.path == expected.value.path


LIST = {
    "type": "record",
    "name": "Cell",
    "fields": [
        {"name": "value", "type": "long"},
        {
            "name": "next",
            "type": [
                "null",
                "Cell",
                {
                    "type": "record",
                    "name": "End",
                    "fields": [{"name": "value", "type": "long"}, {"name": "why", "type": "string"}],
                },
            ],
        },
    ],
}


def _chain(length: int) -> dict:
    cell = None
    for number in range(length):
        cell = {"value": number, "next": cell}
    return cell


def test_the_nesting_bound_is_the_codecs():
    # a union of two records: each nested dict is validated down to its end
    flags = CompileFlags(max_depth=6)
    tier0, _ = build(LIST, tier0=True, flags=flags)
    own, _ = build(LIST, tier0=False, flags=flags)
    for length in (3, 5, 6, 7, 12):
        outcomes = []
        for codec in (own, tier0):
            try:
                outcomes.append(codec.dump(_chain(length)))
            except DatumError as error:
                outcomes.append(str(error))
        assert outcomes[0] == outcomes[1], length
    assert isinstance(outcomes[0], str) and "nested more than 6" in outcomes[0]
    assert tier0.dump(_chain(3)) == fastavro_dump(LIST, _chain(3))
