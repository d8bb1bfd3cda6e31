"""Records wider than one generated function: their fields are written and
read by functions of at most FIELDS_PER_FUNCTION fields, called in turn
(codegen.function_parts). Bytes, values and error paths must not show it.

Oracles: fastavro's bytes and values, marshmallow's load and error paths.
"""

import io
import re

import fastavro
import pytest
from conftest import fastavro_bytes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from marshmallow import Schema, ValidationError, fields

from roastedavro import AvroCodec, CompiledSchema
from roastedavro.codegen import FIELDS_PER_FUNCTION

WIDTH = 2 * FIELDS_PER_FUNCTION + 30  # three parts, the last one short
NESTED_AT = WIDTH - 3  # a nested record in the last part
DUMP_ONLY = (FIELDS_PER_FUNCTION + 5, WIDTH - 7)


class Point(Schema):
    x = fields.Integer(required=True)
    y = fields.Float(required=True)


def _mm_field(number: int):
    kind = number % 5
    if number == NESTED_AT:
        return fields.Nested(Point, required=True)
    if number in DUMP_ONLY:
        return fields.String(dump_only=True)
    if kind == 0:
        return fields.Integer(required=True)
    if kind == 1:
        return fields.String(allow_none=True)
    if kind == 2:
        return fields.Float(required=True)
    if kind == 3:
        return fields.Boolean(required=True)
    return fields.List(fields.Integer(), required=True)


Wide = type("Wide", (CompiledSchema,), {f"f{n:03d}": _mm_field(n) for n in range(WIDTH)})


def _mm_value(number: int, seed: int):
    if number == NESTED_AT:
        return {"x": seed, "y": seed / 4}
    if number in DUMP_ONLY:
        return f"only-{number}"
    return [
        seed * number,
        f"s{seed}-{number}" if seed % 3 else None,
        number + seed / 8,
        bool((seed + number) % 2),
        [seed, number],
    ][number % 5]


def _mm_record(seed: int) -> dict:
    return {f"f{n:03d}": _mm_value(n, seed) for n in range(WIDTH)}


def _marshmallow_load(schema, dumped, many=False):
    # dump_only fields are on the wire but not loaded (marshmallow's load
    # refuses them as unknown)
    def loadable(item):
        return {key: value for key, value in item.items() if key not in {f"f{n:03d}" for n in DUMP_ONLY}}

    return schema.load([loadable(item) for item in dumped] if many else loadable(dumped), many=many)


@pytest.fixture(scope="module")
def wide():
    return Wide().compile()


def test_the_source_has_one_function_per_part(wide):
    source = wide.compile_to_string()
    writers = re.findall(r"cdef int (part_write_Wide_[0-9]+)\(", source)
    readers = re.findall(r"cdef int (part_read_Wide_[0-9]+)\(", source)
    assert writers == [f"part_write_Wide_{n}" for n in (1, 2, 3)]
    assert readers == [f"part_read_Wide_{n}" for n in (1, 2, 3)]
    # each part holds its share of the fields, in order
    chunks = re.split(r"cdef int part_write_Wide_[0-9]+\(", source)[1:]
    # (up to the next method: `cdef` indented as a method of the codec class)
    counts = [
        len(re.findall(r"^\s+field_no = ", re.split(r"\n    cdef ", chunk)[0], re.M)) for chunk in chunks
    ]
    assert counts == [FIELDS_PER_FUNCTION, FIELDS_PER_FUNCTION, WIDTH - 2 * FIELDS_PER_FUNCTION]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(min_value=-(10**6), max_value=10**6))
def test_bytes_and_values_match_fastavro_and_marshmallow(wide, seed):
    record = _mm_record(seed)
    data = wide.dump_compiled(record)
    assert data == fastavro_bytes(wide, wide.dump(record))
    assert wide.load_compiled(data) == _marshmallow_load(wide, wide.dump(record))


def test_many_records(wide):
    records = [_mm_record(seed) for seed in range(5)]
    data = wide.dump_compiled(records, many=True)
    assert data == fastavro_bytes(wide, wide.dump(records, many=True), many=True)
    assert wide.load_compiled(data, many=True) == _marshmallow_load(
        wide, wide.dump(records, many=True), many=True
    )


@pytest.mark.parametrize("number", [0, FIELDS_PER_FUNCTION + 2, WIDTH - 5, NESTED_AT])
def test_errors_name_the_field_in_every_part(wide, number):
    record = _mm_record(1)
    name = f"f{number:03d}"
    record[name] = {"x": "not a number", "y": 1.0} if number == NESTED_AT else "not a number"
    with pytest.raises(ValidationError) as compiled_error:
        wide.dump_compiled(record)
    # marshmallow's own error for the same value, at the same path
    with pytest.raises(ValidationError) as marshmallow_error:
        wide.load(record)
    assert compiled_error.value.messages.keys() == {name}
    assert compiled_error.value.messages == {name: marshmallow_error.value.messages[name]}


def test_a_missing_required_field_in_the_last_part(wide):
    record = _mm_record(2)
    del record[f"f{WIDTH - 2:03d}"]
    with pytest.raises(ValidationError) as error:
        wide.dump_compiled(record)
    assert error.value.messages == {f"f{WIDTH - 2:03d}": ["Missing data for required field."]}


def test_truncated_bytes_fail_in_a_later_part(wide):
    from roastedavro import DecodeError

    data = wide.dump_compiled(_mm_record(3))
    with pytest.raises(DecodeError):
        wide.load_compiled(data[: len(data) - 4])


# -- AvroCodec: the same split for plain Avro schemas and resolution pairs --


def _avro_type(number: int):
    if number == NESTED_AT:
        return {
            "type": "record",
            "name": "Point",
            "fields": [{"name": "x", "type": "int"}, {"name": "y", "type": "double"}],
        }
    return ["long", ["null", "string"], "double", "boolean", {"type": "array", "items": "long"}][number % 5]


AVRO_WIDE = {
    "type": "record",
    "name": "AvroWide",
    "fields": [{"name": f"f{n:03d}", "type": _avro_type(n)} for n in range(WIDTH)],
}


def _avro_record(seed: int) -> dict:
    values = {}
    for number in range(WIDTH):
        if number == NESTED_AT:
            values[f"f{number:03d}"] = {"x": seed, "y": seed / 4}
        else:
            values[f"f{number:03d}"] = [
                seed * number,
                None if seed % 2 else f"s{number}",
                number / 8,
                bool(number % 2),
                [seed, number],
            ][number % 5]
    return values


def _fastavro_write(schema, record) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), record)
    return out.getvalue()


@pytest.fixture(scope="module")
def avro_wide():
    return AvroCodec(AVRO_WIDE)


@pytest.mark.parametrize("seed", [0, 1, -77, 10**9])
def test_avro_codec_matches_fastavro(avro_wide, seed):
    record = _avro_record(seed)
    data = avro_wide.dump(record)
    assert data == _fastavro_write(AVRO_WIDE, record)
    assert avro_wide.load(data) == fastavro.schemaless_reader(
        io.BytesIO(data), fastavro.parse_schema(AVRO_WIDE), None
    )


def test_avro_codec_error_path_in_the_last_part(avro_wide):
    from roastedavro.errors import DatumError

    record = _avro_record(1)
    record[f"f{WIDTH - 1:03d}"] = "not an array"
    with pytest.raises(DatumError) as error:
        avro_wide.dump(record)
    assert f"f{WIDTH - 1:03d}" in str(error.value)


def test_a_wide_resolution_pair_matches_fastavro():
    # the reader drops the first field of each part and adds one with a default
    dropped = {f"f{n:03d}" for n in (0, FIELDS_PER_FUNCTION, 2 * FIELDS_PER_FUNCTION)}
    reader = {
        "type": "record",
        "name": "AvroWide",
        "fields": [field for field in AVRO_WIDE["fields"] if field["name"] not in dropped]
        + [{"name": "added", "type": "string", "default": "dflt"}],
    }
    codec = AvroCodec(reader, writer_schema=AVRO_WIDE)
    assert len(re.findall(r"cdef int part_read_", codec.compile_to_string())) >= 3
    # the generated module passes its check whether or not a build of it is cached
    # (a cached build is loaded without it)
    from roastedavro.avro import parse_schema
    from roastedavro.resolvegen import generate_resolving_module

    generate_resolving_module(parse_schema(AVRO_WIDE), parse_schema(reader)).verify()
    for seed in (0, 5):
        data = _fastavro_write(AVRO_WIDE, _avro_record(seed))
        expected = fastavro.schemaless_reader(
            io.BytesIO(data), fastavro.parse_schema(AVRO_WIDE), fastavro.parse_schema(reader)
        )
        assert codec.load(data) == expected


def test_no_binding_takes_a_part_function_name():
    from roastedavro.codegen import ModuleEmitter

    module = ModuleEmitter()
    # bindings are named after records and fields; a record called "part"
    # would give part_... names, which the wide records' functions use
    assert module.bind(object(), "part_write_Wide_1") == "self.bound.bound_part_write_Wide_1"
    assert module.bind(object(), "part_read_Wide_2_field") == "self.bound.bound_part_read_Wide_2_field"
    assert module.bind(object(), "partial_field") == "self.bound.partial_field"
