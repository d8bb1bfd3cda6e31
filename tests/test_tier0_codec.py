"""tests/test_codec.py with tier 0 beside the compiled codec: every AvroCodec
those tests make serves each call from the interpreter and from the compiled
codec, which must agree exactly (tests/test_tier0_oracles.py, Twin); the
tests then check the interpreter's results against fastavro, Java and the
specification as they check the compiled codec's.

Left out: the tests of the compiled codec object itself (its sharing, its
source text, pickling, the skippers schema resolution uses), which have no
tier-0 counterpart; and the two whose datums writing uses up or changes (a
generator, a list emptied while it is written), which run below with a
fresh datum for each tier. The schemas are compiled once per process, as in
test_codec.py.
"""

import pytest

import test_codec
from roastedavro.avro import parse_schema
from roastedavro.errors import DatumError
from test_tier0_oracles import identical_outcomes, outcome, parametrized, run_with_twins, twin_of

run_with_twins(
    test_codec,
    globals(),
    leave_out={
        "test_an_equal_schema_reuses_the_compiled_codec": "the compile cache's sharing",
        "test_the_source_names_the_schema": "generated source",
        "test_declaration_text_reaches_the_source_only_as_checked_text": "generated source",
        "test_codecs_pickle": "pickling the codec object",
        "test_skipping_checks_what_loading_checks": "the compiled skippers",
        "test_collection_datums_as_fastavro": "datums used up by writing: below",
        "test_a_list_that_changes_while_written": "a datum changed by writing: below",
    },
)


@pytest.fixture(scope="module")
def collections_twin():
    return twin_of(parse_schema(test_codec.COLLECTIONS))


def dump_fresh(twin, make):
    """Tier 0's outcome of writing a datum made by ``make()``; the compiled
    codec's, of another such datum, must be identical."""
    tier0 = outcome(twin.interpreter.dump, make())
    difference = identical_outcomes(tier0, outcome(twin.compiled.dump, make()))
    assert difference is None, difference
    return tier0


@pytest.mark.parametrize("values", parametrized(test_codec.test_collection_datums_as_fastavro))
def test_collection_datums_used_up_by_writing(collections_twin, values):
    def make():
        return test_codec.collections_datum(**values())

    assert dump_fresh(collections_twin, make) == (
        "value",
        test_codec.fastavro_dump(test_codec.COLLECTIONS, make()),
    )


def test_a_list_that_changes_while_written(collections_twin):
    def make():
        items = [1, 2, 3]
        items.insert(1, test_codec.Shrinking(items))
        return test_codec.collections_datum(ints=items)

    kind, error = dump_fresh(collections_twin, make)
    assert kind == "error" and isinstance(error, DatumError)
    assert "the list changed size" in str(error)


def test_a_map_that_changes_while_written(collections_twin):
    kind, error = dump_fresh(collections_twin, test_codec.growing_map_datum)
    assert kind == "error" and isinstance(error, DatumError)
    assert "index.k[0]: the dict changed size" in str(error)


def test_the_codecs_of_these_tests_are_twins(primitives_codec, unions_codec):
    from test_tier0_oracles import TwinAvroCodec

    assert test_codec.AvroCodec is TwinAvroCodec
    for codec in (primitives_codec, unions_codec):
        assert isinstance(codec, TwinAvroCodec) and codec.dump is codec._twin.dump
