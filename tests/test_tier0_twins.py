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
  past Python's text limit).
"""

import test_fast_paths
import test_huge_ints
import test_java_oracle
import test_single_object
import test_wide_records
from test_tier0_oracles import TwinAvroCodec, run_with_twins

run_with_twins(test_java_oracle, globals(), patch=lambda module: {
    "_codec_class": lambda: TwinAvroCodec}, tests=[
    "test_java_reads_and_writes_back_our_bytes",
    "test_java_reads_random_datums_we_write",
    "test_java_reads_and_writes_back_our_single_object_messages"])
run_with_twins(test_single_object, globals())
run_with_twins(test_fast_paths, globals(), leave_out={
    "test_an_avro_codec_remembers_keys_per_field": "the compiled record writers' key slots",
})
run_with_twins(test_wide_records, globals(), leave_out={
    "test_a_wide_resolution_pair_matches_fastavro": "schema resolution",
})
run_with_twins(test_huge_ints, globals(), patch=lambda module: {
    "CODEC": TwinAvroCodec(module.CODEC.schema)})
