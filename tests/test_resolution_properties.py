"""Random evolved schema pairs and random data, read as Java reads them.

Schemas come from tests/evolution.py (a record schema evolved the ways
producers evolve them, compatible and breaking changes, in both
directions); data from avro_strategies.datums, written by fastavro with the
writer's schema. For each datum Java's GenericDatumReader(writer, reader) is
the reference:

* where Java reads it, roastedavro reads the same value (compared through
  Java's re-encoding in the reader's schema, read back plainly);
* where Java refuses it, roastedavro refuses it too: a DecodeError for the
  datum, or a SchemaResolutionError for the pair when every datum would fail.

Each example compiles one pair, so examples are few and derandomized (the
second CI run finds them in the cache); each draws several datums.
"""

from __future__ import annotations

import io

import fastavro
import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings, strategies as st

from avro_strategies import datums
from evolution import schema_pairs
from roastedavro import AvroCodec, DecodeError, SchemaResolutionError
from roastedavro.avro import Array, Enum, Fixed, Map, Primitive, Record, Union, parse_schema
from fuzzing import examples

pytestmark = pytest.mark.java

# no shrinking: each step would compile another pair (minutes); the failing
# pair is printed as drawn
COMPILING = settings(
    max_examples=examples(20),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
)


def written(schema, datum) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), datum)
    return out.getvalue()


def has_values(schema) -> bool:
    """Whether the schema has a finite value (a record that must contain
    itself, with no union or collection to stop it, has none)."""
    model = parse_schema(schema)
    finite: dict[str, bool] = {}

    def ok(avro) -> bool:
        avro = model.deref(avro) if not isinstance(avro, Record) else avro
        if isinstance(avro, Record):
            return finite.get(avro.name, False)
        if isinstance(avro, (Array, Map)):
            return True
        if isinstance(avro, Union):
            return any(ok(branch) for branch in avro.branches)
        return True

    for _ in range(len(model.named) + 1):
        for name, named in model.named.items():
            if isinstance(named, Record):
                finite[name] = all(ok(field.type) for field in named.fields)
    return ok(model.root)


def java_misreads_a_union_default(schema) -> bool:
    """Whether Java 1.12.2's resolving reader would take another branch for a
    union default than the specification's (the first branch the default is
    valid for): it takes the first branch that is a record, enum, array or
    map whatever the value, or a primitive of the value's JSON kind, so
    ``["null", Rec, "boolean"]`` with default ``false`` fails in Java
    ("No default value for: ..."), and a number picks an int before a double."""
    model = parse_schema(schema)

    def java_branch(branches, value):
        for index, branch in enumerate(branches):
            if isinstance(branch, (Record, Enum, Array, Map, Union)):
                return index
            kind = branch.name if isinstance(branch, Primitive) else "fixed"
            if (
                (kind in ("fixed", "string", "bytes") and isinstance(value, str))
                or (
                    kind in ("int", "long", "float", "double")
                    and isinstance(value, (int, float))
                    and not isinstance(value, bool)
                )
                or (kind == "boolean" and isinstance(value, bool))
                or (kind == "null" and value is None)
            ):
                return index
        return None

    def spec_branch(branches, value):
        for index, branch in enumerate(branches):
            if isinstance(branch, Primitive):
                ok = {
                    "null": value is None,
                    "boolean": isinstance(value, bool),
                    "int": isinstance(value, int) and not isinstance(value, bool),
                    "long": isinstance(value, int) and not isinstance(value, bool),
                    "float": isinstance(value, (int, float)) and not isinstance(value, bool),
                    "double": isinstance(value, (int, float)) and not isinstance(value, bool),
                    "string": isinstance(value, str),
                    "bytes": isinstance(value, str),
                }[branch.name]
            elif isinstance(branch, Fixed):
                ok = isinstance(value, str) and len(value) == branch.size
            elif isinstance(branch, Enum):
                ok = value in branch.symbols
            elif isinstance(branch, Array):
                ok = isinstance(value, list)
            else:
                ok = isinstance(value, dict)
            if ok:
                return index
        return None

    for named in model.named.values():
        if not isinstance(named, Record):
            continue
        for field in named.fields:
            avro = model.deref(field.type)
            if isinstance(avro, Union) and field.has_default:
                branches = [model.deref(branch) for branch in avro.branches]
                if java_branch(branches, field.default) != spec_branch(branches, field.default):
                    return True
    return False


def _java_bug(answer) -> bool:
    # Java 1.12.2 checks array counts against the reader's item size
    return isinstance(answer, dict) and str(answer.get("error", "")).startswith("Collection claims")


@pytest.mark.fuzz
@COMPILING
@given(data=st.data())
def test_evolved_pairs_read_as_java_reads(data, java):
    writer, reader = data.draw(schema_pairs(), label="pair")
    assume(has_values(writer))
    values = data.draw(st.lists(datums(writer), min_size=1, max_size=6), label="datums")
    encoded = [written(writer, value) for value in values]
    answers = java.resolve_each([(writer, reader, item) for item in encoded])
    try:
        codec = AvroCodec(reader, writer_schema=writer)
    except SchemaResolutionError as error:
        # every datum must be one Java cannot read either, and Java's checker agrees
        readable = [answer for answer in answers if not isinstance(answer, dict)]
        assert not readable, f"Java reads what we refused to compile: {error}"
        assert java.compatibility_each([(reader, writer)])[0]["compatible"] is False
        return
    plain = AvroCodec(reader)
    for item, answer in zip(encoded, answers):
        if _java_bug(answer):
            expected = fastavro.schemaless_reader(
                io.BytesIO(item), fastavro.parse_schema(writer), fastavro.parse_schema(reader)
            )
            assert codec.load(item) == expected
        elif java_misreads_a_union_default(reader):
            codec.load(item)  # reads; what Java reads here is not the reference
        elif isinstance(answer, dict):
            with pytest.raises(DecodeError):
                codec.load(item)
        else:
            try:
                value = codec.load(item)
            except DecodeError as error:
                # bytes read as a string must be UTF-8 here (Java keeps raw bytes)
                assert "UTF-8" in str(error), error
                continue
            assert value == plain.load(answer.data), answer.datum
