"""The plain-Avro example runs and reports what it promises."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_plain_avro_example_matches_fastavro():
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "plain_avro.py")],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ),
        cwd=ROOT / "examples",
    )
    assert result.returncode == 0, result.stderr
    assert "bytes equal to fastavro's: True" in result.stdout
    assert "loads what fastavro loads: True" in result.stdout
    assert "   compiled dump:" in result.stdout and "   compiled load:" in result.stdout


def test_evolution_example_reads_version_one_as_version_two():
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "evolution.py")],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ),
        cwd=ROOT / "examples",
    )
    assert result.returncode == 0, result.stderr
    assert "reads what fastavro reads: True" in result.stdout
    assert "v2 reads v1 (BACKWARD): True" in result.stdout
    assert "v1 reads v2 (FORWARD): False" in result.stdout
    assert "reader type: INT not compatible with writer type: LONG" in result.stdout
    assert "version 1 cannot read version 2" in result.stdout


def test_kafka_examples_produce_version_one_and_consume_as_version_two(
    kafka_broker, schema_registry, kafka_topic
):
    env = dict(os.environ, KAFKA_BOOTSTRAP=kafka_broker.bootstrap, SCHEMA_REGISTRY_URL=schema_registry.url)
    common = ["--topic", kafka_topic, "--count", "3000"]
    produced = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "kafka_producer.py"), *common],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert produced.returncode == 0, produced.stderr
    assert f"produced 3000 orders (schema version 1) to {kafka_topic!r}" in produced.stdout
    consumed = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "kafka_consumer.py"), *common],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert consumed.returncode == 0, consumed.stderr
    assert f"consumed 3000 orders from {kafka_topic!r}" in consumed.stdout
    # version 2's defaults and renamed field, filled in from version 1's data
    assert "currency ['NOK'], remarks {'gift': 'yes'}" in consumed.stdout
