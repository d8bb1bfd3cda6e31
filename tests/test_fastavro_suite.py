"""fastavro's own test suite against roastedavro.fastavro (scripts/fastavro_suite.py).

fastavro's tests run twice, on fastavro and with its public functions replaced
by the drop-in's; of those that pass on fastavro, every one passes on the
drop-in except the differences the script lists (and docs/fastavro.md explains),
and roastedavro's code never calls fastavro's reader or writer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "fastavro_suite.py"


def test_fastavro_suite_passes_on_the_dropin(tmp_path):
    summary = tmp_path / "summary.json"
    # the compile policy a user's script gets (hot: tier 0 first, a codec
    # compiled once its schema has done enough work), not the test run's
    # eager one, which would compile each of the suite's few hundred schemas
    # (about 4 minutes with an empty cache); the compiled codecs are held to
    # tier 0's values and errors by the twin tests (tests/test_tier0_oracles.py)
    env = {**os.environ, "ROASTEDAVRO_COMPILE": "auto"}
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--json", str(summary)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
    )
    assert completed.returncode == 0, completed.stdout[-20000:] + completed.stderr[-5000:]
    result = json.loads(summary.read_text())
    assert result["passing_on_fastavro"] > 650  # the whole suite ran on fastavro
    assert result["share"] >= 0.98
    assert result["unlisted_failures"] == [] and result["listed_but_passing"] == []
    assert result["fastavro_calls_from_roastedavro"] == {}
