"""Text from a schema declaration never becomes code.

Every declaration input that reaches the code generator (names, data_key,
attribute, Avro names and namespaces, enum class and member names, symbols,
logical types, sizes, precision and scale, error messages, defaults,
constants, doc, the schema class's module and qualname, what a custom
encoder passes on) is tried with payloads that would create a file if they
were executed, at each indentation the templates use. Declarations that
break Avro's rules are a CompileError naming the field and the rule, before
any code is generated; the others compile, dump and load, and the file is
never created.
"""

from __future__ import annotations

import enum
import io
import re
import tokenize

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import ValidationError, fields, validate

from roastedavro import CompiledSchema, CompileError, Encoder
from roastedavro.codetext import IDENTIFIER, Code, check_function, checked_int, comment, identifier, literal


def payloads(marker) -> list[str]:
    """Code that touches ``marker`` if run, shaped to leave a comment, a
    string literal or a line at each indentation the templates use."""
    code = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    shapes = [
        "\n{code}",  # a new line at the module level
        "\n    {code}",  # in the codec class body
        "\n        {code}",  # in a method / record function body
        "\n            {code}",  # inside the try block of a writer
        "\n                {code}",  # inside a loop or an if
        "'); {code} #",  # out of a single-quoted literal
        '"); {code} #',  # out of a double-quoted literal
        '"""\n{code}\n"""',  # out of a docstring
        "\r{code}",  # other line ends
        "\x0c\n{code}",
        "\u2028{code}",
        "0); {code}; (0",  # out of a call's arguments
    ]
    return [shape.format(code=code) for shape in shapes]


@pytest.fixture
def marker(tmp_path):
    path = tmp_path / "executed"
    yield path
    assert not path.exists(), "declaration text was executed"


def code_names(source: str) -> set[str]:
    """Every name in the source, outside string literals and comments."""
    return {
        token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.NAME
    }


def assert_inert(source: str, marker) -> None:
    names = code_names(source)
    assert "__import__" not in names and "pathlib" not in names and "touch" not in names
    for line in source.splitlines():
        if line.lstrip().startswith("#"):
            # comments hold printable ASCII only: nothing ends them early
            assert re.fullmatch(r"[ -~]*", line), line
    assert not marker.exists()


# -- declarations that compile: one schema with every input, built once -------


class Mood(enum.Enum):
    HAPPY = "happy"
    SAD = "sad"


def hostile_schema(marker):
    """A schema class with one field per (input, payload) pair."""
    attrs: dict = {}
    for i, p in enumerate(payloads(marker)):
        mood = enum.Enum("Mood", {"HAPPY": p, "SAD": "sad"})
        mood.__name__ = mood.__qualname__ = p
        mood.__module__ = p
        plucked = p.replace(".", "_")  # marshmallow reads dots in Pluck as paths
        inner = CompiledSchema.from_dict({plucked: fields.String(data_key="value")}, name=f"Inner{i}")
        inner.Meta = type("Meta", (), {"avro_name": f"Inner{i}"})
        attrs.update(
            {
                # a field whose name is the payload (marshmallow reads dots in
                # names as paths, so without them), written as a valid Avro name
                p.replace(".", "_"): fields.String(data_key=f"named{i}", load_default="x"),
                f"attr{i}": fields.String(attribute=p + "x", load_default="y"),
                f"messages{i}": fields.String(
                    allow_none=False,
                    load_default="z",
                    error_messages={"required": p, "null": p, "invalid": p},
                ),
                f"dict_message{i}": fields.Integer(
                    load_default=1, error_messages={"required": {"nested": [p]}, "null": [p, {"x": p}]}
                ),
                f"default{i}": fields.String(load_default=p, dump_default=p),
                f"constant{i}": fields.Constant(p),
                f"logical{i}": fields.Raw(metadata={"avro": {"type": "long", "logicalType": p}}),
                f"doc{i}": fields.Raw(
                    metadata={
                        "avro": {
                            "type": "record",
                            "name": f"Doc{i}",
                            "doc": p,
                            "fields": [{"name": "a", "type": "string", "default": p, "doc": p}],
                        }
                    }
                ),
                f"by_value{i}": fields.Enum(mood, by_value=True),
                f"choice{i}": fields.String(
                    validate=[
                        validate.OneOf([p, "ok"]),
                        validate.Regexp(re.escape(p) + "|ok"),
                        validate.Equal("ok") if i % 2 else validate.Length(min=0),
                    ]
                ),
                f"keys{i}": fields.Dict(
                    keys=fields.String(validate=validate.NoneOf([p + "x"])), values=fields.String()
                ),
                f"pluck{i}": fields.Pluck(inner, plucked),
                # one argument: marshmallow 3 passes the context to a second one
                f"function{i}": fields.Function(
                    (lambda value: lambda obj: value)(p), metadata={"avro": "string"}
                ),
            }
        )
    schema_class = type("Hostile", (CompiledSchema,), attrs)
    # the class's own names reach the module header
    schema_class.__qualname__ = payloads(marker)[0]
    schema_class.__module__ = payloads(marker)[4]
    schema_class.Meta = type("Meta", (), {"avro_name": "Hostile"})
    return schema_class


def hostile_record(schema, marker) -> dict:
    record = {}
    for i, p in enumerate(payloads(marker)):
        mood = schema.fields[f"by_value{i}"].enum
        record.update(
            {
                p.replace(".", "_"): p,
                f"messages{i}": p,
                f"dict_message{i}": 3,
                f"logical{i}": 5,
                f"doc{i}": {"a": p},
                f"by_value{i}": mood["HAPPY" if i % 2 else "SAD"],
                f"choice{i}": "ok",
                f"keys{i}": {p: p},
                f"pluck{i}": {p.replace(".", "_"): p},
            }
        )
    return record


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    marker = tmp_path_factory.mktemp("hostile") / "executed"
    schema = hostile_schema(marker)()
    schema.compile()
    yield schema, marker
    assert not marker.exists(), "declaration text was executed"


def test_hostile_declarations_compile_to_inert_code(hostile):
    schema, marker = hostile
    assert_inert(schema.compile_to_string(), marker)


def test_hostile_declarations_dump_and_load_as_data(hostile):
    schema, marker = hostile
    record = hostile_record(schema, marker)
    data = schema.dump_compiled(record)
    loaded = schema.load_compiled(data)
    for i, p in enumerate(payloads(marker)):
        # payloads are data: written and read back as the strings they are
        assert loaded[p.replace(".", "_")] == p
        assert loaded[f"default{i}"] == p
        assert loaded[f"constant{i}"] == p
        assert loaded[f"doc{i}"] == {"a": p}
        assert loaded[f"keys{i}"] == {p: p}
        assert loaded[f"pluck{i}"] == {p.replace(".", "_"): p}
        assert loaded[f"by_value{i}"].value == (p if i % 2 else "sad")
    assert not marker.exists()


def test_hostile_messages_are_reported_as_data(hostile):
    schema, marker = hostile
    p = payloads(marker)[3]
    for key, expected in (("messages3", [p]), ("dict_message3", [p, {"x": p}])):
        record = hostile_record(schema, marker)
        record[key] = None
        with pytest.raises(ValidationError) as caught:
            schema.dump_compiled(record)
        assert caught.value.messages == {key: expected}
    assert not marker.exists()


# -- declarations that break Avro's rules: a CompileError, nothing generated --


def compile_error(attrs: dict, meta: dict | None = None) -> str:
    schema_class = type("Bad", (CompiledSchema,), dict(attrs))
    if meta:
        schema_class.Meta = type("Meta", (), meta)
    with pytest.raises(CompileError) as caught:
        schema_class().compile_to_string()
    return str(caught.value)


def bad_declarations(p):
    """(attrs, meta, what the error must say) for each invalid declaration."""
    hostile_enum = enum.Enum("Mood", {"HAPPY": "h"})
    hostile_enum.__name__ = p
    member_enum = enum.Enum("Mood", {p: 1})
    raw = lambda avro: {"f": fields.Raw(metadata={"avro": avro})}  # noqa: E731
    return [
        ({"f": fields.String()}, {"avro_name": p}, "record name"),
        ({"f": fields.String()}, {"avro_name": "Ok", "avro_namespace": p}, "namespace"),
        ({"f": fields.String(data_key=p)}, None, "field name"),
        (raw({"type": "fixed", "name": p, "size": 4}), None, "valid name"),
        (raw({"type": "fixed", "name": "ok", "size": f"4); {p}"}), None, "size"),
        (raw({"type": "fixed", "name": "ok", "size": True}), None, "size"),
        (raw({"type": "fixed", "name": "ok", "size": -1}), None, "size"),
        (raw({"type": "fixed", "name": "ok", "namespace": p, "size": 4}), None, "namespace"),
        (raw({"type": "fixed", "name": "ok", "aliases": [p], "size": 4}), None, "alias"),
        (raw({"type": "enum", "name": "ok", "symbols": ["A", p]}), None, "enum symbol"),
        (raw({"type": "record", "name": "ok", "fields": [{"name": p, "type": "int"}]}), None, "field name"),
        (raw({"type": "array", "items": p}), None, "type name"),
        (raw({"type": "long", "logicalType": ["x"]}), None, "logicalType"),
        (raw({"type": "bytes", "logicalType": "decimal", "precision": f"10); {p}"}), None, "precision"),
        (raw({"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": True}), None, "scale"),
        ({"f": fields.Decimal(places=2, metadata={"precision": f"10); {p}"})}, None, "precision"),
        ({"f": fields.Decimal(places=2, metadata={"precision": True})}, None, "precision"),
        (
            {
                "f": fields.Decimal(
                    metadata={
                        "avro": {
                            "type": "fixed",
                            "name": p,
                            "size": 8,
                            "logicalType": "decimal",
                            "precision": 4,
                        }
                    }
                )
            },
            None,
            "name",
        ),
        (
            {
                "f": fields.Decimal(
                    metadata={
                        "avro": {
                            "type": "fixed",
                            "name": "ok",
                            "size": f"8); {p}",
                            "logicalType": "decimal",
                            "precision": 4,
                        }
                    }
                )
            },
            None,
            "size",
        ),
        ({"f": fields.Enum(hostile_enum)}, None, "enum name"),
        ({"f": fields.Enum(member_enum)}, None, "enum symbols"),
    ]


def test_invalid_declarations_are_compile_errors_naming_field_and_rule(tmp_path):
    marker = tmp_path / "executed"
    for p in payloads(marker):
        for attrs, meta, rule in bad_declarations(p):
            message = compile_error(attrs, meta)
            assert rule in message, (rule, message)
            assert "'f'" in message or "Bad" in message, message
    assert not marker.exists()


# -- custom encoders: the safe way is the easy way; the unsafe way fails ------


class Tagged(fields.String):
    pass


class SafeTaggedEncoder(Encoder):
    """Uses the API: declaration text as a literal, a bound constant, a checked int."""

    field_class = Tagged
    avro_types = ("string",)

    def describe(self):
        return self.field.metadata["tag"]  # comments are sanitized

    def emit_write(self, fn, value):
        field = fn.bind(self.field, "field")
        fn.line(f"if {value} == {fn.literal(self.field.metadata['tag'])}:")
        fn.line(f"    {value} = {fn.bind(self.field.metadata['tag'].upper(), 'upper')}")
        fn.line(f"write_str_value(w, {value}, {field}, obj)")

    def emit_read(self, fn, target):
        size = fn.int(len(self.field.metadata["tag"]), "tag length")
        fn.line(f"{target} = read_str(r)")
        fn.line(f"if len({target}) == {size}:")
        fn.line(f"    {target} = {target}.lower()")


class NaiveTaggedEncoder(SafeTaggedEncoder):
    """Formats declaration text straight into code: refused at compile time."""

    def emit_read(self, fn, target):
        fn.line(f"{target} = read_str(r) + {self.field.metadata['tag']}")


def test_custom_encoder_api_keeps_declaration_text_out_of_code(marker):
    for p in payloads(marker):
        schema_class = type("Tags", (CompiledSchema,), {"t": Tagged(metadata={"tag": p})})
        schema_class.Meta = type("Meta", (), {"avro_encoders": [SafeTaggedEncoder]})
        assert_inert(schema_class().compile_to_string(), marker)
    schema = schema_class().compile()
    assert schema.load_compiled(schema.dump_compiled({"t": p})) == {"t": p.upper().lower()}
    assert schema.load_compiled(schema.dump_compiled({"t": "ab"})) == {"t": "ab"}


def test_naive_custom_encoder_is_refused_before_building(marker):
    refused = 0
    for p in payloads(marker):
        schema_class = type("Tags", (CompiledSchema,), {"t": Tagged(metadata={"tag": p})})
        schema_class.Meta = type("Meta", (), {"avro_encoders": [NaiveTaggedEncoder]})
        try:
            schema = schema_class().compile()
        except CompileError as error:
            assert "generated code" in str(error)
            refused += 1
        else:
            # the text happened to form a plain string literal: inert data
            schema.load_compiled(schema.dump_compiled({"t": "a"}))
        assert not marker.exists()
    assert refused >= len(payloads(marker)) - 1


# -- the channels themselves ---------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_identifier_is_always_an_identifier(text):
    assert IDENTIFIER.match(identifier(text))


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_comment_never_leaves_the_line(text):
    assert re.fullmatch(r"[A-Za-z0-9_ .,:;()<>\[\]|=+*/?-]*", comment(text))


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.text()
        | st.binary()
        | st.floats(allow_nan=False, allow_infinity=False),
        lambda inner: st.tuples(inner, inner),
        max_leaves=8,
    )
)
def test_literal_is_the_value(value):
    import ast

    assert ast.literal_eval(literal(value)) == value


def test_literal_ignores_overridden_repr():
    class Sneaky(str):
        def __repr__(self):
            return "__import__('os')"

        def __str__(self):
            return "__import__('os')"

    assert literal(Sneaky("plain")) == "'plain'"
    with pytest.raises(TypeError):
        literal(object())


def test_checked_int_refuses_bools_strings_and_out_of_range():
    assert checked_int(16, "size", 0, 100) == "16"
    for bad in (True, "16", 16.0, -1, 101):
        with pytest.raises(CompileError, match="size must be an integer"):
            checked_int(bad, "size", 0, 100)


def test_check_function_refuses_names_nobody_provided():
    check_function("x = read_long(r)\n", {"x"})
    for bad in (
        "x = os.system('a')\n",
        "x = __import__('os')\n",
        "x = r.__class__\n",
        "import os\n",
        "x = f'{r}'\n",
        "x = eval('1')\n",
    ):
        with pytest.raises(CompileError):
            check_function(bad, {"x"})


def test_templates_refuse_unchecked_text():
    from roastedavro.emitter import render

    with pytest.raises(CompileError, match="unchecked text"):
        render(
            "record_reader.pyx.j2",
            ident="plain str",
            name=Code("x"),
            field_count=0,
            parts=[{"function": None, "fields": [], "first": 0, "last": 0, "skips": False}],
            declarations=[],
        )


# -- the fastavro drop-in's names: any text, as fastavro takes them ------------


def lenient_schema(marker) -> tuple[dict, dict, dict]:
    """A schema only fastavro's rules take: the payloads as names, namespaces,
    aliases, field names, docs, orders, properties and defaults; a datum
    (some records without the field whose default is the payload) and the
    value read back."""
    fields, datum, value = [], {}, {}
    for i, p in enumerate(payloads(marker)):
        symbols = {
            "type": "enum",
            "name": f"{p}E{i}",
            "namespace": p,
            "aliases": [p],
            "doc": p,
            "symbols": ["A", "B"],
            p: p,
        }
        inner = {
            "type": "record",
            "name": f"{p}R{i}",
            "aliases": p,
            "doc": p,
            p: p,
            "fields": [
                {"name": p, "type": "string", "default": p, "doc": p, "aliases": [p], "order": p},
                {"name": f"e{i}", "type": symbols},
                {"name": f"f{i}", "type": {"type": "fixed", "name": f"{p}F{i}", "size": 2}},
            ],
        }
        fields.append({"name": f"{p}{i}", "type": inner})
        datum[f"{p}{i}"] = {f"e{i}": "B", f"f{i}": b"ab", **({p: p + "!"} if i % 2 else {})}
        value[f"{p}{i}"] = {p: p + "!" if i % 2 else p, f"e{i}": "B", f"f{i}": b"ab"}
    return {"type": "record", "name": "org.example.Lenient$", "fields": fields}, datum, value


def test_fastavro_dropin_names_compile_to_inert_code(marker):
    import copy

    import fastavro

    from roastedavro import AvroCodec
    from roastedavro.fastavro._models import as_model

    schema, datum, value = lenient_schema(marker)
    model = as_model(copy.deepcopy(schema))  # fastavro takes it: the drop-in's dialect
    codec = AvroCodec(model, compile="eager")
    assert codec.tier == "compiled"
    assert_inert(codec.compile_to_string(), marker)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(copy.deepcopy(schema)), datum)
    data = codec.dump(datum)
    assert data == out.getvalue()
    assert codec.load(data) == value
    # read as a reader's schema with one more field, its default a payload
    p = payloads(marker)[6]
    reader = copy.deepcopy(schema)
    reader["fields"].append({"name": p + "new", "type": "string", "default": p})
    resolving = AvroCodec(as_model(reader), writer_schema=model, compile="eager")
    assert resolving.tier == "compiled"
    assert_inert(resolving.compile_to_string(), marker)
    assert resolving.load(data) == {**value, p + "new": p}


def test_records_named_as_the_codecs_own_functions_compile():
    # write_datum, read_root, read_key, write_long ... are the module's or the
    # runtime's: a record of such a name has its functions named otherwise
    from roastedavro import AvroCodec
    from roastedavro.avro import parse_schema

    names = ["datum", "root", "root_2", "key", "long", "string", "datum_2"]
    fields = [
        {"name": f"f{i}", "type": {"type": "record", "name": name, "fields": [{"name": "v", "type": "int"}]}}
        for i, name in enumerate(names)
    ]
    schema = parse_schema(
        {"type": "record", "name": "Outer", "fields": fields}, dialect="fastavro"
    )  # primitive names: fastavro's rules
    codec = AvroCodec(schema, compile="eager")
    assert codec.tier == "compiled"
    datum = {f"f{i}": {"v": i} for i in range(len(names))}
    assert codec.load(codec.dump(datum)) == datum
    assert codec.dump(datum) == bytes(range(0, 2 * len(names), 2))
