"""The fast paths behind dump and load, checked against fastavro:

- dict records are read field by field in the dict's own order when it is
  the schema's (a cursor over the entries), else by lookup: any key order,
  extra keys, missing optional keys, keys equal to the field names but not
  the same objects (each field remembers the last such key object, so rows
  built from the same keys match by identity), non-str keys, deleted
  entries, split tables, dict subclasses and a field whose own code changes
  the dict while it is written all give fastavro's bytes (combined tables
  of str keys are walked in place where the layout check passed at import);
- UUIDs are written from and built into their slots directly: the values
  equal uuid.UUID's, behave as UUIDs (hash, pickle, str, is_safe), and any
  text that is not the canonical 36-character form still goes through
  uuid.UUID (or is a DecodeError);
- ASCII strings are copied into a new str after a check 8 bytes at a time;
  any other byte sends the string to the UTF-8 decoder, whose errors keep
  their offsets;
- varints are decoded from one 8-byte load when ten bytes remain: every
  64-bit value and every length from 1 to 10 bytes (padded ones too, as
  fastavro reads them), and the same errors as before for overlong ones.
"""

from __future__ import annotations

import io
import pickle
import sys
import uuid
from decimal import Context, Decimal

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import ValidationError, fields

from roastedavro import AvroCodec, CompiledSchema, DecodeError

NAMES = ("alpha", "bravo", "charlie", "delta", "echo")


class FiveSchema(CompiledSchema):
    class Meta:
        avro_name = "Five"

    alpha = fields.Integer(required=True)
    bravo = fields.String(required=True)
    charlie = fields.Float(allow_none=True)
    delta = fields.Boolean(required=True)
    echo = fields.UUID(allow_none=True)


FIVE_AVRO = {
    "type": "record",
    "name": "Five",
    "fields": [
        {"name": "alpha", "type": "long"},
        {"name": "bravo", "type": "string"},
        {"name": "charlie", "type": ["null", "double"]},
        {"name": "delta", "type": "boolean"},
        {"name": "echo", "type": ["null", {"type": "string", "logicalType": "uuid"}]},
    ],
}


@pytest.fixture(scope="module")
def five():
    schema = FiveSchema()
    schema.compile()
    return schema


@pytest.fixture(scope="module")
def five_codec():
    return AvroCodec(FIVE_AVRO)


def oracle(schema, datum) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), datum)
    return out.getvalue()


def fresh(text: str) -> str:
    # an equal str that is not the interned constant
    return "".join(list(text))


values = st.fixed_dictionaries(
    {
        "alpha": st.integers(-(2**63), 2**63 - 1),
        "bravo": st.text(max_size=20),
        "charlie": st.none() | st.floats(allow_nan=False),
        "delta": st.booleans(),
        "echo": st.none() | st.uuids(),
    }
)


@settings(max_examples=150, deadline=None)
@given(
    values=values,
    order=st.permutations(NAMES),
    copies=st.lists(st.booleans(), min_size=5, max_size=5),
    extra=st.lists(st.sampled_from(["zulu", "alpha_", "", "bravo "]), max_size=3),
    drop=st.sets(st.sampled_from(["charlie", "echo"])),
)
def test_dict_records_in_any_shape_give_fastavros_bytes(five, five_codec, values, order, copies, extra, drop):
    record = {}
    for position, name in enumerate(order):
        if extra and position == 2:
            for key in extra:
                record[key] = "extra"
        if name not in drop:
            record[fresh(name) if copies[position] else name] = values[name]
    expected = oracle(FIVE_AVRO, {name: values[name] if name not in drop else None for name in NAMES})
    assert five.dump_compiled(record) == expected
    assert five_codec.dump(record) == expected


def test_non_str_keys_and_equal_hashes_fall_back_to_lookup(five):
    record = {1: "one", "alpha": 5, (2, 3): None, "bravo": "b", "charlie": 1.5, "delta": True, "echo": None}
    expected = oracle(FIVE_AVRO, {"alpha": 5, "bravo": "b", "charlie": 1.5, "delta": True, "echo": None})
    assert five.dump_compiled(record) == expected

    # a str subclass equal to the name is found by lookup, as marshmallow finds it
    class Key(str):
        pass

    record = {Key("alpha"): 7, "bravo": "b", "charlie": None, "delta": False, "echo": None}
    assert five.dump_compiled(record) == oracle(
        FIVE_AVRO, {"alpha": 7, "bravo": "b", "charlie": None, "delta": False, "echo": None}
    )


LONG_NAMES = (
    "abcdefgh",
    "abcdefghi",
    "field_number_sixteen",
    "field_number_seventeen_",
    "a_field_name_of_thirty_one_chars",
)
LONG_NAMED = {
    "type": "record",
    "name": "LongNames",
    "fields": [{"name": name, "type": ["null", "long"], "default": None} for name in LONG_NAMES],
}


@settings(max_examples=150, deadline=None)
@given(
    values=st.lists(st.integers(-(2**63), 2**63 - 1), min_size=5, max_size=5),
    copies=st.lists(st.booleans(), min_size=5, max_size=5),
    misses=st.lists(st.none() | st.integers(0, 40), min_size=5, max_size=5),
)
def test_equal_keys_that_are_other_objects_match_byte_for_byte(values, copies, misses):
    # keys built at run time are compared by their bytes (8 at a time, then
    # the tail): an equal key is the field's, a key that differs in any one
    # character (in a whole word or in the tail) is not, and the field is
    # missing as fastavro sees it
    record = {}
    for name, value, copy, miss in zip(LONG_NAMES, values, copies, misses):
        key = fresh(name) if copy else name
        if miss is not None:
            at = miss % len(name)
            key = key[:at] + ("X" if key[at] != "X" else "Y") + key[at + 1 :]
        record[key] = value
    assert AvroCodec(LONG_NAMED).dump(record) == oracle(LONG_NAMED, record)


# two sets of equal keys that are not the interned names, made once: each
# field's slot remembers the one it matched last, by identity
KEY_SETS = ({name: fresh(name) for name in NAMES}, {name: fresh(name) for name in NAMES})


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            values,
            st.permutations(NAMES),
            st.lists(st.sampled_from(["interned", "first", "second", "new"]), min_size=5, max_size=5),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_key_objects_reused_from_record_to_record_match_byte_for_byte(five, five_codec, rows):
    # rows built from the same key objects (csv.DictReader, dict(zip(...)))
    # match by the slot's identity; other equal keys, in any order, replace
    # what the slot holds; every row gives fastavro's bytes
    for row, order, spellings in rows:
        record = {}
        for name, spelling in zip(order, spellings):
            key = {
                "interned": name,
                "first": KEY_SETS[0][name],
                "second": KEY_SETS[1][name],
                "new": fresh(name),
            }[spelling]
            record[key] = row[name]
        expected = oracle(FIVE_AVRO, row)
        assert five.dump_compiled(record) == expected
        assert five_codec.dump(record) == expected


def _walks_in_place() -> bool:
    import roastedavro._runtime as runtime

    return bool(runtime.DICT_LAYOUT_VERIFIED)


def _held_key_counts(dump) -> tuple[list[str], list[int]]:
    # the slot holds one reference to the last equal key it matched (again
    # after the same keys), and drops it for the next such key; returns the
    # first keys and their counts without the slot's reference
    row = [1, "b", None, True, None]
    first = [fresh(name) for name in NAMES]
    second = [fresh(name) for name in NAMES]
    counts = [sys.getrefcount(key) for key in first]
    for keys, expected in ((first, 1), (first, 1), (second, 0)):
        dump(dict(zip(keys, row)))
        assert [sys.getrefcount(key) for key in first] == [count + expected for count in counts]
    dump(dict(zip(first, row)))
    return first, counts


NO_WALK = (
    "the dict layout check did not pass on this interpreter (free-threaded, or a CPython "
    "it does not know): dicts are walked with PyDict_Next and no key is remembered"
)


@pytest.mark.skipif(not _walks_in_place(), reason=NO_WALK)
def test_a_remembered_key_is_held_once_and_let_go():
    # ... and the codec drops it when it is freed
    import gc

    schema = FiveSchema()
    schema.compile()
    first, counts = _held_key_counts(schema.dump_compiled)
    del schema
    gc.collect()
    assert [sys.getrefcount(key) for key in first] == counts


@pytest.mark.skipif(not _walks_in_place(), reason=NO_WALK)
def test_an_avro_codec_remembers_keys_per_field(five_codec):
    # AvroCodec's record writers hold the same per-field slots
    first, counts = _held_key_counts(five_codec.dump)
    assert [sys.getrefcount(key) for key in first] == [count + 1 for count in counts]


def test_non_ascii_attribute_keys_are_matched_by_their_characters():
    # keys that are not ASCII are compared by kind and characters
    euro, yen = "prix_€", "価格_円_" + "x" * 9

    class Prices(CompiledSchema):
        class Meta:
            avro_name = "Prices"

        a = fields.Float(attribute=euro, required=True)
        b = fields.Float(attribute=yen, required=True)

    schema = Prices()
    expected = oracle("double", 1.5) + oracle("double", 2.5)
    assert schema.dump_compiled({euro: 1.5, yen: 2.5}) == expected
    assert schema.dump_compiled({fresh(euro): 1.5, fresh(yen): 2.5}) == expected
    with pytest.raises(ValidationError) as caught:
        schema.dump_compiled({fresh(euro): 1.5, yen[:-1] + "y": 2.5})
    assert "b" in caught.value.messages


class Holder:
    """Instances share their __dict__'s keys (a split table in CPython)."""

    def __init__(self, values):
        self.__dict__.update(values)


class Ordered(dict):
    pass


@settings(max_examples=60, deadline=None)
@given(
    values=values,
    holes=st.lists(st.sampled_from(NAMES + ("zulu", "yankee")), max_size=4),
    grown=st.integers(0, 40),
)
def test_dicts_with_deleted_entries_and_other_tables_give_fastavros_bytes(
    five, five_codec, values, holes, grown
):
    # entries deleted before, between and after the fields' (a walk in place
    # skips them as PyDict_Next does), a dict grown and shrunk again, a
    # split table, a subclass
    record = {}
    for name in NAMES:
        if name in holes:
            record["hole_" + name] = 0
        record[name] = values[name]
        if name in holes:
            del record["hole_" + name]
    for number in range(grown):
        record[f"grown_{number}"] = number
    for number in range(grown):
        del record[f"grown_{number}"]
    expected = oracle(FIVE_AVRO, values)
    for shape in (record, vars(Holder(values)), vars(Holder(values)), Ordered(record)):
        assert five.dump_compiled(shape) == expected
        assert five_codec.dump(shape) == expected


def test_the_dict_walk_is_checked_at_import():
    import sysconfig

    import roastedavro._runtime as runtime

    free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    if sys.implementation.name == "cpython" and (3, 11) <= sys.version_info < (3, 15) and not free_threaded:
        assert runtime.DICT_LAYOUT_VERIFIED


class Mutating(fields.Integer):
    """A field whose serialization changes the record being written."""

    def _serialize(self, value, attr, obj, **kwargs):
        obj.clear()
        obj.update({"after": 1, "charlie": 2.5, "bravo": "z", "delta": True})
        return 42


class MutatingSchema(CompiledSchema):
    class Meta:
        avro_name = "Mutating"

    alpha = Mutating(required=True)
    bravo = fields.String(required=True)
    charlie = fields.Float(allow_none=True)
    delta = fields.Boolean(required=True)


def test_a_dict_changed_while_it_is_written_is_read_by_its_current_entries():
    schema = MutatingSchema()
    record = {"alpha": "41", "bravo": "b", "charlie": None, "delta": False}
    data = schema.dump_compiled(record)
    avro = {"type": "record", "name": "Mutating", "fields": FIVE_AVRO["fields"][:4]}
    # marshmallow's own dump reads each field after the one before it ran
    assert data == oracle(avro, {"alpha": 42, "bravo": "z", "charlie": 2.5, "delta": True})


@settings(max_examples=300, deadline=None)
@given(value=st.uuids() | st.builds(uuid.UUID, int=st.sampled_from([0, 1, 2**128 - 1, 2**127])))
def test_uuids_round_trip_as_uuid_objects(five, value):
    record = {"alpha": 1, "bravo": "", "charlie": None, "delta": True, "echo": value}
    data = five.dump_compiled(record)
    assert data == oracle(FIVE_AVRO, record)
    loaded = five.load_compiled(data)["echo"]
    assert type(loaded) is uuid.UUID and loaded == value and loaded.int == value.int
    assert str(loaded) == str(value) and hash(loaded) == hash(value)
    assert loaded.is_safe is uuid.SafeUUID.unknown
    assert pickle.loads(pickle.dumps(loaded)) == value
    with pytest.raises(TypeError):
        loaded.int = 5  # still immutable


@pytest.mark.parametrize(
    "text, expected",
    [
        ("ABCDEF01-2345-6789-ABCD-EF0123456789", uuid.UUID("abcdef01-2345-6789-abcd-ef0123456789")),
        ("{abcdef01-2345-6789-abcd-ef0123456789}", uuid.UUID("abcdef01-2345-6789-abcd-ef0123456789")),
        ("abcdef0123456789abcdef0123456789", uuid.UUID("abcdef01-2345-6789-abcd-ef0123456789")),
    ],
)
def test_other_uuid_spellings_go_through_uuid_uuid(text, expected):
    codec = AvroCodec({"type": "string", "logicalType": "uuid"})
    assert codec.load(oracle("string", text)) == expected


@pytest.mark.parametrize(
    "text", ["abcdef01-2345-6789-abcd-ef012345678g", "abcdef01+2345-6789-abcd-ef0123456789", "not a uuid"]
)
def test_text_that_is_no_uuid_is_a_decode_error(text):
    codec = AvroCodec({"type": "string", "logicalType": "uuid"})
    with pytest.raises(DecodeError, match="not a valid UUID"):
        codec.load(oracle("string", text))


LONG_AND_STRING = {
    "type": "record",
    "name": "L",
    "fields": [{"name": "n", "type": "long"}, {"name": "s", "type": "string"}],
}


@settings(max_examples=300, deadline=None)
@given(value=st.integers(-(2**63), 2**63 - 1), tail=st.integers(0, 12))
def test_every_long_decodes_with_and_without_ten_bytes_left(value, tail):
    data = oracle(LONG_AND_STRING, {"n": value, "s": "x" * tail})
    assert AvroCodec(LONG_AND_STRING).load(data) == {"n": value, "s": "x" * tail}


#: every varint length from 1 to 10 bytes, at both ends of each length
BOUNDARY_LONGS = sorted(
    {
        v
        for bits in range(64)
        for v in (2**bits - 1, 2**bits, -(2**bits), -(2**bits) - 1)
        if -(2**63) <= v < 2**63
    }
)


@pytest.mark.parametrize("tail", [0, 1, 8, 9, 12])
def test_longs_at_every_varint_length_boundary(tail):
    # zig-zag values 2**(7k) - 1 and 2**(7k) are the last of k bytes and the
    # first of k + 1: each length is decoded with and without ten bytes left
    schema = {"type": "array", "items": LONG_AND_STRING}
    datum = [{"n": value, "s": "x" * tail} for value in BOUNDARY_LONGS]
    data = oracle(schema, datum)
    assert AvroCodec(schema).load(data) == datum
    lengths = {len(oracle("long", value)) for value in BOUNDARY_LONGS}
    assert lengths == set(range(1, 11))


#: every int size around the 30-bit digits CPython stores: 0 to 4 digits
#: (2**60 and 2**63 are where the in-place conversion gives way)
DIGIT_BOUNDARY_INTS = BOUNDARY_LONGS + [
    2**63,
    -(2**63) - 1,
    2**64 - 1,
    2**64,
    -(2**64),
    2**90 + 5,
    -(2**90),
    2**120,
    3 * 2**60,
    -(7 * 2**60 + 2**30 - 1),
]


@pytest.mark.parametrize("schema", ["long", "int", ["int", "long", "double"], ["null", "long"]])
def test_ints_of_every_digit_count_are_written_as_fastavro_writes_them(schema):
    codec = AvroCodec(schema)
    low, high = (-(2**31), 2**31 - 1) if schema == "int" else (-(2**63), 2**63 - 1)
    for value in DIGIT_BOUNDARY_INTS:
        if low <= value <= high or schema == ["int", "long", "double"]:
            assert codec.dump(value) == oracle(schema, value), value
        else:
            with pytest.raises(ValueError, match="out of range for Avro|matches no branch"):
                codec.dump(value)


def _padded(value, length):
    # the zig-zag varint of value stretched to length bytes with zero groups,
    # as a writer that does not trim its varints may send it
    n = (value << 1) ^ (value >> 63)
    out = []
    for _ in range(length - 1):
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    assert n < 0x80
    return bytes(out)


@pytest.mark.parametrize(
    "value, length",
    [
        (value, length)
        for value in (0, 1, -1, 63, -64, 2**20, -(2**40), 2**55, 2**62, -(2**63))
        for length in (2, 7, 8, 9, 10)
        if len(oracle("long", value)) < length
    ],
)
@pytest.mark.parametrize("tail", [0, 12])
def test_padded_varints_read_as_fastavro_reads_them(value, length, tail):
    data = _padded(value, length) + oracle("string", "x" * tail)
    expected = fastavro.schemaless_reader(io.BytesIO(data), LONG_AND_STRING)
    assert expected == {"n": value, "s": "x" * tail}
    assert AvroCodec(LONG_AND_STRING).load(data) == expected


@pytest.mark.parametrize(
    "data",
    [
        b"\xff" * 10 + b"\x01",
        b"\xff" * 9 + b"\x02" + b"\x00" * 4,
        b"\x80" * 12,
        b"\xff" * 9 + b"\x02",
        b"\x80" * 9 + b"\x7f" + b"\x00" * 4,
        b"\x80" * 9 + b"\x81\x00" + b"\x00" * 4,
    ],
)
def test_overlong_varints_are_decode_errors(data):
    codec = AvroCodec(LONG_AND_STRING)
    with pytest.raises(DecodeError, match="varint longer than 64 bits") as caught:
        codec.load(data)
    assert caught.value.offset == 0


STRING_AND_LONG = {
    "type": "record",
    "name": "S",
    "fields": [{"name": "s", "type": "string"}, {"name": "n", "type": "long"}],
}


LONG_AND_STRING_LAST = {
    "type": "record",
    "name": "T",
    "fields": [{"name": "n", "type": "long"}, {"name": "s", "type": "string"}],
}


@pytest.mark.parametrize("schema", [STRING_AND_LONG, LONG_AND_STRING_LAST], ids=["first", "last"])
@pytest.mark.parametrize("length", [*range(0, 41), 64, 100])
def test_strings_with_a_non_ascii_character_anywhere_decode_as_utf8(schema, length):
    # ASCII strings are checked and copied in overlapping words (1-3 bytes
    # singly, 4-7 as two 4-byte words, 8-16 as two words, 17-32 as four);
    # one character beyond ASCII at any position sends the string to the
    # UTF-8 decoder. The string comes first (bytes follow it) or last (the
    # input ends with it).
    codec = AvroCodec(schema)
    texts = ["".join(chr(33 + (i * 7) % 90) for i in range(length))]
    texts += [
        texts[0][:at] + odd + texts[0][at + 1 :] for at in range(length) for odd in ("\x80", "é", "€", "😀")
    ]
    for text in texts:
        data = oracle(schema, {"s": text, "n": -3})
        loaded = codec.load(data)
        assert loaded == {"s": text, "n": -3}
        assert type(loaded["s"]) is str and loaded["s"].isascii() == text.isascii()
        assert len(loaded["s"]) == len(text) and hash(loaded["s"]) == hash(text)


@pytest.mark.parametrize("length", [1, 8, 9, 17])
def test_invalid_utf8_after_ascii_is_a_decode_error_at_its_byte(length):
    codec = AvroCodec(STRING_AND_LONG)
    for at in range(length):
        body = bytearray(b"a" * length)
        body[at] = 0xFF
        data = oracle("long", length) + bytes(body) + b"\x00"
        with pytest.raises(DecodeError, match="invalid UTF-8") as caught:
            codec.load(data)
        assert caught.value.offset == 1 + at


def test_decimals_are_read_from_their_coefficient_on_cpython():
    # the import-time check of the C layout passed: the fast path is in use
    from roastedavro import _runtime

    assert _runtime.DECIMAL_LAYOUT_VERIFIED


#: a context that never rounds a 100-digit value
EXACT = Context(prec=100)

decimals = st.decimals(allow_nan=True, allow_infinity=True, places=None) | st.builds(
    lambda sign, digits, exponent: Decimal((sign, tuple(int(d) for d in digits), exponent)),
    st.integers(0, 1),
    st.text("0123456789", min_size=1, max_size=42),
    st.integers(-45, 45),
)


@settings(max_examples=1500, deadline=None)
@given(value=decimals, scale=st.integers(0, 38), precision=st.integers(1, 38))
def test_decimal_coefficients_agree_with_their_text(value, scale, precision):
    from roastedavro import _runtime

    precision = max(precision, scale)
    from_coefficient, from_text = _runtime._decimal_unscaled_paths(value, scale, precision)
    if from_coefficient[0] and from_text[0]:
        assert from_coefficient == from_text
    if from_coefficient[0]:
        # whatever the coefficient path writes is the exact value
        assert Decimal(from_coefficient[1]).scaleb(-scale, context=EXACT) == value
    if from_text[0]:
        # the text path never takes a value the coefficient path leaves to Python
        assert from_coefficient[0]


@settings(max_examples=300, deadline=None)
@given(
    value=st.decimals(allow_nan=False, allow_infinity=False, places=4, min_value=-(10**13), max_value=10**13)
)
def test_decimals_written_as_fastavro_writes_them(value):
    schema = {"type": "bytes", "logicalType": "decimal", "precision": 18, "scale": 4}
    codec = AvroCodec(schema)
    assert codec.dump(value) == oracle(schema, value)
    assert codec.load(codec.dump(value)) == value


MAP_OF_LONGS = {"type": "map", "values": "long"}
RECORD_ENDING_IN_A_MAP = {
    "type": "record",
    "name": "M",
    "fields": [{"name": "n", "type": "long"}, {"name": "m", "type": MAP_OF_LONGS}],
}


def _near_misses(key: str) -> list[str]:
    # the key with one character changed at each position (first, middle,
    # last word): equal lengths, equal hashes of some of their words
    return [key[:at] + ("#" if key[at] != "#" else "$") + key[at + 1 :] for at in range(len(key))]


@pytest.mark.parametrize("length", [*range(1, 34), 40])
def test_map_keys_of_every_length_load_as_fastavro_loads_them(length):
    # short ASCII keys come from a cache of str objects in sets of two,
    # found by a hash of overlapping words: keys that differ in any one
    # character are other keys, whichever was cached first, and keys near
    # the end of the input are read there
    codec = AvroCodec(RECORD_ENDING_IN_A_MAP)
    base = "".join(chr(97 + (i * 5) % 26) for i in range(length))
    keys = [base, *_near_misses(base), base + "é"[: max(0, 33 - length)]]
    for round_ in range(2):
        for key in keys:
            datum = {"n": round_, "m": {key: length, base: -length}}
            loaded = codec.load(oracle(RECORD_ENDING_IN_A_MAP, datum))
            assert loaded == datum
            assert all(type(k) is str for k in loaded["m"])


@pytest.mark.parametrize("length", range(1, 33))
def test_the_key_cache_compares_every_byte(length):
    # the cache's comparison itself: the same bytes match, a change in any
    # one byte or a different length does not
    from roastedavro._runtime import _key_matches

    key = "".join(chr(48 + (i * 11) % 75) for i in range(length))
    assert _key_matches(key, key.encode())
    for miss in _near_misses(key):
        assert not _key_matches(key, miss.encode())
    if length < 32:
        assert not _key_matches(key, (key + "x").encode())
    if length > 1:
        assert not _key_matches(key, key[:-1].encode())


@settings(max_examples=40, deadline=None)
@given(
    keys=st.lists(
        st.text(st.characters(codec="ascii"), min_size=1, max_size=33), min_size=1, max_size=60, unique=True
    ),
    extra=st.integers(0, 3000),
)
def test_map_keys_past_the_caches_size_load_as_fastavro_loads_them(keys, extra):
    # more distinct keys than the cache holds evict one another; every load
    # still gives fastavro's map
    codec = AvroCodec(MAP_OF_LONGS)
    many = {f"k{number}_{number * 7919 % 1000}": number for number in range(extra)}
    for datum in (
        {key: index for index, key in enumerate(keys)},
        many,
        {key: -index for index, key in enumerate(keys)},
    ):
        data = oracle(MAP_OF_LONGS, datum)
        assert codec.load(data) == fastavro.schemaless_reader(
            io.BytesIO(data), fastavro.parse_schema(MAP_OF_LONGS)
        )
