"""The plain-Avro example runs and reports what it promises."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_plain_avro_example_matches_fastavro():
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "plain_avro.py")],
                            capture_output=True, text=True, timeout=600, env=dict(os.environ),
                            cwd=ROOT / "examples")
    assert result.returncode == 0, result.stderr
    assert "bytes equal to fastavro's: True" in result.stdout
    assert "loads what fastavro loads: True" in result.stdout
