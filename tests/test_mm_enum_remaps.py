"""load_compiled(data, writer_schema=...) where an enum's symbols are numbered
otherwise by the writer (symbols reordered, added, dropped): read in one
pass by the pair's compiled codec, each written index renumbered as the
schema's before the field's own code reads it. Java Avro 1.12's
GenericDatumReader(writer, reader) is the oracle: what it reads, written in
the reader's schema, loads as the one-pass codec's result; a symbol the
reader lacks is the pair's AvroCodec's error, at the same offset."""

from __future__ import annotations

import enum
import io

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import fields

from pair_checks import assert_same_decode_error, loads_as_java_resolves
from roastedavro import AvroCodec, CompiledSchema, CompileFlags, DecodeError


def _written_enum():
    class Colour(enum.Enum):  # the writer's version of the enum: the same Avro name
        RED = "RED"
        GREEN = "GREEN"
        BLUE = "BLUE"
        BLACK = "BLACK"

    return Colour


OldColour = _written_enum()


class Colour(enum.Enum):  # reordered, WHITE added, BLACK dropped
    BLUE = "BLUE"
    WHITE = "WHITE"
    RED = "RED"
    GREEN = "GREEN"


class Size(enum.Enum):
    S = "S"
    M = "M"


class SwatchV1(CompiledSchema):
    class Meta:
        avro_name = "Swatch"

    colour = fields.Enum(OldColour, required=True)


class SwatchV2(CompiledSchema):
    class Meta:
        avro_name = "Swatch"

    colour = fields.Enum(Colour, required=True)
    grams = fields.Integer(load_default=5)


class PaintV1(CompiledSchema):
    class Meta:
        avro_name = "Paint"

    colour = fields.Enum(OldColour, required=True)
    trim = fields.Enum(OldColour, allow_none=True)  # ["null", Colour]
    size = fields.Enum(Size, required=True)
    swatch = fields.Nested(SwatchV1, required=True)
    sizes = fields.List(fields.Enum(Size))
    note = fields.String()


class PaintV2(CompiledSchema):
    class Meta:
        avro_name = "Paint"

    note = fields.String()
    sizes = fields.List(fields.Enum(Size))
    swatch = fields.Nested(SwatchV2, required=True)
    trim = fields.Enum(Colour, allow_none=True)
    size = fields.Enum(Size, required=True)
    colour = fields.Enum(Colour, required=True)


known = st.sampled_from([OldColour.RED, OldColour.GREEN, OldColour.BLUE])
paints = st.fixed_dictionaries(
    {
        "colour": known,
        "trim": st.none() | known,
        "size": st.sampled_from(list(Size)),
        "swatch": st.fixed_dictionaries({"colour": known}),
        "sizes": st.lists(st.sampled_from(list(Size)), max_size=3),
        "note": st.text(max_size=4),
    }
)


@pytest.fixture(scope="module")
def schemas():
    return PaintV1(), PaintV2()


def served(schema) -> list[str]:
    return [type(pair).__name__ for pair in schema.load_compiled.__self__.pairs.args[2].by_json.values()]


def test_the_pair_is_read_in_one_pass(schemas):
    v1, v2 = schemas
    data = v1.dump_compiled(
        {
            "colour": OldColour.GREEN,
            "trim": OldColour.RED,
            "size": Size.M,
            "swatch": {"colour": OldColour.BLUE},
            "sizes": [Size.S],
            "note": "",
        }
    )
    loaded = v2.load_compiled(data, writer_schema=PaintV1)
    assert loaded["colour"] is Colour.GREEN and loaded["trim"] is Colour.RED
    assert loaded["swatch"] == {"colour": Colour.BLUE, "grams": 5}
    assert served(v2) == ["Codec"]  # a generated module, not read and written again


@pytest.mark.java
@settings(max_examples=60, deadline=None)
@given(st.lists(paints, min_size=1, max_size=8))
def test_renumbered_symbols_are_javas(java, schemas, records):
    v1, v2 = schemas
    for record, loaded in zip(records, loads_as_java_resolves(java, v1, v2, records, PaintV1)):
        assert loaded["colour"].name == record["colour"].name
        assert (loaded["trim"] and loaded["trim"].name) == (record["trim"] and record["trim"].name)


def test_a_symbol_the_reader_lacks_is_the_pairs_error_at_its_offset(schemas):
    v1, v2 = schemas
    record = {
        "colour": OldColour.RED,
        "trim": None,
        "size": Size.S,
        "swatch": {"colour": OldColour.BLACK},
        "sizes": [],
        "note": "",
    }
    data = v1.dump_compiled(record)
    pair = AvroCodec(v2.avro_schema(), writer_schema=v1.avro_schema())
    with pytest.raises(DecodeError) as theirs:
        pair.load(data)
    with pytest.raises(DecodeError) as ours:
        v2.load_compiled(data, writer_schema=PaintV1)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value) and ours.value.offset == theirs.value.offset == 3
    assert "BLACK not found in reader symbol list Colour" in str(ours.value)
    # the nullable field's symbol, after its branch index
    record = {**record, "swatch": {"colour": OldColour.RED}, "trim": OldColour.BLACK}
    with pytest.raises(DecodeError) as ours:
        v2.load_compiled(v1.dump_compiled(record), writer_schema=PaintV1)
    assert ours.value.offset == 2 and "BLACK" in str(ours.value)  # after the branch index
    assert served(v2) == ["Codec"]


def test_a_writer_index_past_its_symbols_is_a_decode_error_at_its_offset(schemas):
    v1, v2 = schemas
    data = v1.dump_compiled(
        {
            "colour": OldColour.RED,
            "trim": None,
            "size": Size.S,
            "swatch": {"colour": OldColour.RED},
            "sizes": [],
            "note": "",
        }
    )
    bad = bytes([2 * 4]) + data[1:]  # symbol 4 of the writer's 4
    with pytest.raises(DecodeError) as raised:
        v2.load_compiled(bad, writer_schema=PaintV1)
    assert raised.value.offset == 0


def test_many_records_are_read_in_one_pass_too(schemas):
    v1, v2 = schemas
    records = [
        {
            "colour": colour,
            "trim": colour,
            "size": Size.M,
            "swatch": {"colour": colour},
            "sizes": [Size.M, Size.S],
            "note": colour.name,
        }
        for colour in (OldColour.BLUE, OldColour.GREEN, OldColour.RED)
    ]
    loaded = v2.load_compiled(v1.dump_compiled(records, many=True), many=True, writer_schema=PaintV1)
    assert [paint["colour"] for paint in loaded] == [Colour.BLUE, Colour.GREEN, Colour.RED]
    assert [paint["swatch"]["colour"] for paint in loaded] == [Colour.BLUE, Colour.GREEN, Colour.RED]


class ListedV1(CompiledSchema):
    class Meta:
        avro_name = "Listed"

    sizes = fields.List(fields.Enum(Size))
    size = fields.Enum(Size, allow_none=True)


def _grown_enum():
    class Size(enum.Enum):  # symbols added at the end only: the same indexes
        S = "S"
        M = "M"
        L = "L"

    return Size


GrownSize = _grown_enum()


class ListedV2(CompiledSchema):
    class Meta:
        avro_name = "Listed"

    sizes = fields.List(fields.Enum(GrownSize))
    size = fields.Enum(GrownSize, allow_none=True)


def test_symbols_added_at_the_end_are_read_as_written_even_in_arrays():
    from roastedavro.evolved import written_layout

    v2 = ListedV2()
    data = ListedV1().dump_compiled({"sizes": [Size.M, Size.S], "size": Size.M})
    assert v2.load_compiled(data, writer_schema=ListedV1) == {
        "sizes": [GrownSize.M, GrownSize.S],
        "size": GrownSize.M,
    }
    assert served(v2) == ["Codec"]
    plan = v2._plan()
    layout = written_layout(plan.root, plan.records, plan.schema, ListedV1().avro_model, CompileFlags())
    assert layout is not None and not any(step.remap for step in layout.steps)


def test_under_the_hot_policy_reading_and_writing_serves_until_the_codec_is_built(monkeypatch):
    from roastedavro import tiers

    monkeypatch.setenv("ROASTEDAVRO_COMPILE", "hot")
    # as where nothing was built before (other tests built this pair)
    monkeypatch.setattr(tiers.Engine, "_find", lambda self, where: None)
    monkeypatch.setattr(tiers, "HOT_AFTER", 64)
    started = []
    monkeypatch.setattr(tiers.Engine, "_background", lambda self, make, state: started.append((self, state)))

    class Hot(SwatchV2):
        class Meta:
            avro_name = "Swatch"

    hot = Hot()
    hot.compile()
    data = SwatchV1().dump_compiled({"colour": OldColour.GREEN})
    expected = {"colour": Colour.GREEN, "grams": 5}
    for _ in range(2 * 64 // len(data) + 2):
        assert hot.load_compiled(data, writer_schema=SwatchV1) == expected
    # the Rearranger renumbers the symbols in the bytes meanwhile
    assert served(hot) == ["Rearranger"]
    pairs = hot.load_compiled.__self__.pairs.args[2]
    (evolved,) = pairs.evolved
    assert started.count((evolved.engine, "compiling")) == 1
    monkeypatch.undo()
    evolved.engine.compile()  # what the background does
    assert hot.load_compiled(data, writer_schema=SwatchV1) == expected
    assert served(hot) == ["Codec"]


class PaletteV1(CompiledSchema):
    """The writer's colours inside an array, a map and a union of more than
    null and itself: the field's own code cannot read these; the pair's
    Rearranger renumbers them into the schema's bytes first, in one pass."""

    class Meta:
        avro_name = "Palette"

    colours = fields.List(fields.Enum(OldColour), required=True)
    by_name = fields.Dict(keys=fields.String(), values=fields.Enum(OldColour), required=True)
    first = fields.Raw(
        required=True,
        allow_none=True,
        metadata={
            "avro": [
                "null",
                "long",
                {"type": "enum", "name": "Shade", "symbols": [c.name for c in OldColour]},
            ]
        },
    )


class PaletteV2(CompiledSchema):
    class Meta:
        avro_name = "Palette"

    first = fields.Raw(
        required=True,
        allow_none=True,
        metadata={
            "avro": ["null", {"type": "enum", "name": "Shade", "symbols": [c.name for c in Colour]}, "long"]
        },
    )
    by_name = fields.Dict(keys=fields.String(), values=fields.Enum(Colour), required=True)
    colours = fields.List(fields.Enum(Colour), required=True)


palettes = st.fixed_dictionaries(
    {
        "colours": st.lists(known, max_size=5),
        "by_name": st.dictionaries(st.text(max_size=3), known, max_size=3),
        "first": st.none() | st.integers(-(2**63), 2**63 - 1) | known.map(lambda colour: colour.name),
    }
)


@pytest.fixture(scope="module")
def palette_schemas():
    return PaletteV1(), PaletteV2()


@pytest.mark.java
@settings(max_examples=40, deadline=None)
@given(st.lists(palettes, min_size=1, max_size=6))
def test_enums_renumbered_in_arrays_maps_and_unions_are_javas(java, palette_schemas, records):
    v1, v2 = palette_schemas
    for record, loaded in zip(records, loads_as_java_resolves(java, v1, v2, records, PaletteV1)):
        assert [colour.name for colour in loaded["colours"]] == [colour.name for colour in record["colours"]]
    # one pass: the Rearranger moves these fields' values into the schema's
    # bytes, the fields' own code reads them
    assert served(v2) == ["Codec"]


def test_a_symbol_the_reader_lacks_in_an_array_is_the_pairs_error_at_its_offset(palette_schemas):
    v1, v2 = palette_schemas
    data = v1.dump_compiled({"colours": [OldColour.RED, OldColour.BLACK], "by_name": {}, "first": None})
    pair = AvroCodec(v2.avro_schema(), writer_schema=v1.avro_schema())
    error = assert_same_decode_error(
        lambda: pair.load(data), lambda: v2.load_compiled(data, writer_schema=PaletteV1)
    )
    assert error.offset == 2 and "BLACK" in str(error)  # the count, RED, then BLACK


def test_many_palettes_are_read_in_one_pass_with_their_values_moved(palette_schemas):
    v1, v2 = palette_schemas
    records = [
        {"colours": [OldColour.RED, OldColour.BLUE], "by_name": {"a": OldColour.GREEN}, "first": "BLUE"},
        {"colours": [], "by_name": {}, "first": 7},
    ]
    data = v1.dump_compiled(records, many=True)
    pair = AvroCodec(
        {"type": "array", "items": v2.avro_schema()},
        writer_schema={"type": "array", "items": v1.avro_schema()},
    )
    loaded = v2.load_compiled(data, many=True, writer_schema=PaletteV1)
    assert loaded == [v2.load(value) for value in pair.load(data)]
    assert [palette["colours"] for palette in loaded] == [[Colour.RED, Colour.BLUE], []]


def _wide_fields(names):
    return {name: fields.Integer(required=True) for name in names}


_WIDE_NAMES = [f"f{number:02d}" for number in range(52)]  # wider than one generated function
WideV1 = type(
    "WideV1",
    (CompiledSchema,),
    {"Meta": type("Meta", (), {"avro_name": "Wide"}), **_wide_fields(_WIDE_NAMES)},
)
WideV2 = type(
    "WideV2",
    (CompiledSchema,),
    {"Meta": type("Meta", (), {"avro_name": "Wide"}), **_wide_fields(_WIDE_NAMES[::-1])},
)


class HolderV1(CompiledSchema):
    class Meta:
        avro_name = "Holder"

    wide = fields.Nested(WideV1, required=True)
    colour = fields.Enum(OldColour, required=True)


class HolderV2(CompiledSchema):
    class Meta:
        avro_name = "Holder"

    colour = fields.Enum(Colour, required=True)
    wide = fields.Nested(WideV2, required=True)


def test_a_nested_record_no_written_reader_can_follow_is_moved_whole():
    # the wide record's fields moved: too wide for a reader of the writer's
    # layout, so the Rearranger moves the whole value into the schema's bytes
    v1, v2 = HolderV1(), HolderV2()
    record = {"wide": {name: number for number, name in enumerate(_WIDE_NAMES)}, "colour": OldColour.GREEN}
    data = v1.dump_compiled(record)
    pair = AvroCodec(v2.avro_schema(), writer_schema=v1.avro_schema())
    assert v2.load_compiled(data, writer_schema=HolderV1) == v2.load(pair.load(data))
    assert served(v2) == ["Codec"]


def test_a_map_key_not_utf8_in_a_moved_value_is_the_pairs_error_at_the_writers_offset(palette_schemas):
    # the moved map's keys are copied as written: checked where the writer
    # wrote them, so the offset is in the input, not in the moved bytes
    v1, v2 = palette_schemas
    data = v1.dump_compiled({"colours": [OldColour.RED], "by_name": {"ab": OldColour.RED}, "first": None})
    assert data.count(b"\x04ab") == 1
    bad = data.replace(b"\x04ab", b"\x04\xffb")
    pair = AvroCodec(v2.avro_schema(), writer_schema=v1.avro_schema())
    error = assert_same_decode_error(
        lambda: pair.load(bad), lambda: v2.load_compiled(bad, writer_schema=PaletteV1)
    )
    assert error.offset == bad.index(b"\xff")


class NullsV1(CompiledSchema):
    class Meta:
        avro_name = "Nulls"

    gaps = fields.Raw(required=True, metadata={"avro": {"type": "array", "items": ["null", "long"]}})


class NullsV2(CompiledSchema):
    class Meta:
        avro_name = "Nulls"

    gaps = fields.Raw(required=True, metadata={"avro": {"type": "array", "items": "null"}})


def test_a_moved_values_items_are_counted_once_against_the_messages_budget():
    # 1,000 nulls written as a union's branch take a byte each; moved into
    # the schema's bytes they take none. The moved value is read with the
    # budget the move started with: a reader sized by the moved bytes (a few
    # bytes plus the allowance) would refuse a message the writer's bytes allow
    flags = CompileFlags(item_allowance=10)
    v1, v2 = NullsV1(), NullsV2()
    v2.compile(flags)
    data = v1.dump_compiled({"gaps": [None] * 1000})
    pair = AvroCodec(v2.avro_schema(), writer_schema=v1.avro_schema(), flags=flags)
    assert (
        v2.load_compiled(data, writer_schema=NullsV1) == v2.load(pair.load(data)) == {"gaps": [None] * 1000}
    )
    assert served(v2) == ["Codec"]
    # and the budget still bounds it: the same items announced past the
    # message's length and allowance are refused, as the pair refuses them
    many = b"\xd0\x0f\x00"  # 1,000 items announced, none written
    with pytest.raises(DecodeError) as theirs:
        pair.load(many)
    with pytest.raises(DecodeError) as ours:
        v2.load_compiled(many, writer_schema=NullsV1)
    assert (type(ours.value), ours.value.offset) == (type(theirs.value), theirs.value.offset)


class Item(CompiledSchema):
    class Meta:
        avro_name = "Item"

    x = fields.Integer(required=True, metadata={"avro": "int"})
    y = fields.String(required=True)


class Basket(CompiledSchema):
    class Meta:
        avro_name = "Basket"

    first = fields.Nested(Item, required=True)
    more = fields.List(fields.Nested(Item), required=True)


# two writer records read as the schema's one Item (names match unqualified):
# the first, reordered, is followed by a reader of its layout; the second,
# with a field more, is moved into the schema's bytes and read by Item's own
# reader, so the two layouts never meet in one reader
BASKET_WRITTEN = {
    "type": "record",
    "name": "Basket",
    "fields": [
        {
            "name": "first",
            "type": {
                "type": "record",
                "name": "Item",
                "namespace": "a",
                "fields": [{"name": "y", "type": "string"}, {"name": "x", "type": "int"}],
            },
        },
        {
            "name": "more",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Item",
                    "namespace": "b",
                    "fields": [
                        {"name": "x", "type": "int"},
                        {"name": "y", "type": "string"},
                        {"name": "z", "type": "long"},
                    ],
                },
            },
        },
    ],
}


def test_a_record_read_from_two_writer_records_one_of_them_moved_is_read_in_one_pass():
    basket = Basket()
    datum = {"first": {"y": "p", "x": 1}, "more": [{"x": 2, "y": "q", "z": 9}, {"x": 3, "y": "r", "z": -8}]}
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(BASKET_WRITTEN), datum)
    data = out.getvalue()
    pair = AvroCodec(basket.avro_schema(), writer_schema=BASKET_WRITTEN)
    loaded = basket.load_compiled(data, writer_schema=BASKET_WRITTEN)
    assert loaded == basket.load(pair.load(data))
    assert loaded == {"first": {"x": 1, "y": "p"}, "more": [{"x": 2, "y": "q"}, {"x": 3, "y": "r"}]}
    assert served(basket) == ["Codec"]
