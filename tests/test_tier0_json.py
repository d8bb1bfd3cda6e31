"""tests/test_avro_json.py with tier 0 beside the compiled codec
(tests/test_tier0_oracles.py, Twin): the binary side of its Java
comparisons (Java's JSON of our bytes, our bytes of Java's JSON, random
schemas and datums transcoded) is served by both tiers, which must agree
exactly. Codecs that read another writer's data are schema resolution's and
are left as they are.
"""

import test_avro_json
from test_tier0_oracles import run_with_twins

run_with_twins(test_avro_json, globals())
