"""Benchmarks of roastedavro against fastavro, avro, cerializer, marshmallow+fastavro and msgspec.

Run from the repository root: ``python -m benchmarks`` (or ``--quick``); see run.py.
"""
