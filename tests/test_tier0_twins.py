"""More differential tests of compiled AvroCodecs, run again with tier 0
beside the compiled codec (tests/test_tier0_oracles.py, Twin): each call is
served by both, which must agree exactly, and the tests check the
interpreter's results against their oracles.

- tests/test_java_oracle.py: bytes Java Avro 1.12 reads and writes back the
  same (binary and single-object messages);
- tests/test_single_object.py: single-object messages against the
  specification's layout and Java's BinaryMessageDecoder, SchemaStore;
- tests/test_fast_paths.py: dict records of every shape, varints at every
  length, UTF-8, UUIDs, decimals and map keys against fastavro (left out:
  the tests of the runtime's own caches and layout checks);
- tests/test_wide_records.py and tests/test_huge_ints.py: their AvroCodec
  tests (fastavro's bytes, error paths in every part of a wide record, ints
  past Python's text limit);
- tests/test_loaded_records.py: loaded records behave as dicts built key by
  key (values and key order as fastavro's, reference counts, the garbage
  collector's view, Python code run while an array is read), left out the
  tests of the compiled codec's record templates.
"""

import test_fast_paths
import test_hardening
import test_huge_ints
import test_java_oracle
import test_loaded_records
import test_single_object
import test_wide_records
from test_tier0_oracles import TwinAvroCodec, run_with_twins

run_with_twins(
    test_java_oracle,
    globals(),
    patch=lambda module: {"_codec_class": lambda: TwinAvroCodec},
    tests=[
        "test_java_reads_and_writes_back_our_bytes",
        "test_java_reads_random_datums_we_write",
        "test_java_reads_and_writes_back_our_single_object_messages",
    ],
)
run_with_twins(test_single_object, globals())
run_with_twins(
    test_fast_paths,
    globals(),
    leave_out={
        "test_an_avro_codec_remembers_keys_per_field": "the compiled record writers' key slots",
    },
)
run_with_twins(
    test_wide_records,
    globals(),
    leave_out={
        "test_a_wide_resolution_pair_matches_fastavro": "schema resolution",
    },
)
run_with_twins(test_huge_ints, globals(), module_codecs=("CODEC",))
run_with_twins(
    test_loaded_records,
    globals(),
    leave_out={
        "test_the_setitem_codec_really_takes_the_other_path": "the compiled codec's two ways to fill a dict",
        "test_many_loads_leave_the_template_alone": "the compiled codec's record templates",
        "test_an_array_cut_short_in_its_first_block_is_a_decode_error_and_frees_its_items": "counts the process's objects, the twin's own among them: run below on tier 0 alone",
    },
)


def test_an_array_cut_short_in_its_first_block_frees_its_items_on_tier_0():
    import gc

    import pytest

    from roastedavro._tier0 import Interpreter
    from roastedavro.avro import parse_schema
    from roastedavro.errors import DecodeError

    record = {"type": "record", "name": "Item", "fields": [{"name": "n", "type": "long"}]}
    interpreter = Interpreter(parse_schema({"type": "array", "items": record}))
    data = test_loaded_records._blocks(
        ([100, 101, 102, 103], False),
        item=lambda value: test_loaded_records._fastavro_bytes(record, {"n": value}),
    )
    assert interpreter.load(data) == [{"n": 100}, {"n": 101}, {"n": 102}, {"n": 103}]
    for rounds in (10, 2000):  # the first rounds make what any first error makes
        gc.collect()
        before = len(gc.get_objects())
        for _ in range(rounds):
            with pytest.raises(DecodeError, match="past the end|truncated") as caught:
                interpreter.load(data[:6])
        assert caught.value.offset == 5
        gc.collect()
    # the half-filled lists (and the records in them) are gone
    assert len(gc.get_objects()) < before + 50


run_with_twins(
    test_hardening,
    globals(),
    module_codecs=("WIDE_CODEC", "BRANCHY_CODEC"),
    leave_out={
        "test_a_malformed_precompiled_package_is_ignored_with_a_warning": "precompiled packages",
        "test_a_writer_reader_pair_reads_a_decimal_beyond_its_precision_exactly": "schema resolution",
    },
)
