"""``CompiledSchema.load_compiled(data, writer_schema=...)``: one codec per
(writer schema, reader schema) pair, found from the writer schema as the
caller gives it, in one pass where the layouts allow and two otherwise."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any


from roastedavro._runtime import SchemaShape
from roastedavro._tier0 import Interpreter, Rearranger, ResolvingInterpreter
from roastedavro.avro.parse import parse_schema
from roastedavro.avro.types import Schema as AvroSchema
from roastedavro.errors import DatumError, DecodeError
from roastedavro.flags import CompileFlags

if TYPE_CHECKING:  # annotations only: roastedavro.schema imports this module
    from roastedavro.schema import CompiledSchema as _CompiledSchema
    from roastedavro.schema import EntryPoints

#: the CompiledSchema class, set by roastedavro.schema when it defines it (a
#: writer schema may be one; this module is imported by that one, not the
#: other way round)
CompiledSchema: type = type(None)


class _Pairs:
    """One reader schema's pair codecs, by the writer schema's JSON and many.

    ``given`` finds a pair from the writer schema as the caller gives it,
    without parsing it again: by the object (a class, an instance, JSON text,
    a parsed Schema), or a dict by its id, checked against a copy taken when
    it was first met, so a dict changed since, or a new dict at a reused
    address, is parsed again. Both are bounded for callers that make up
    schemas.
    """

    LIMIT = 256

    def __init__(
        self, schema: _CompiledSchema | None = None, codec: Any = None, switches: EntryPoints | None = None
    ):
        self.by_json: dict = {}
        self.given: dict = {}
        #: the compiled schema and its codec's entry points, whose pairs of
        #: records that only move fields get one-pass codecs (roastedavro.evolved)
        self.schema = schema
        self.switches = switches
        self.codec = codec
        self.evolved: list = []

    def replace(self, old: Any, new: Any) -> None:
        """A compiled pair now serves what ``old`` served (also where ``old``
        is still held: a call under way, or not stored here yet)."""
        old.replaced_by = new
        for key, pair in list(self.by_json.items()):
            if pair is old:
                self.by_json[key] = new
        for key, (snapshot, shape, pair) in list(self.given.items()):
            if pair is old:
                self.given[key] = (snapshot, shape, new)
        if self.codec is not None:
            self.codec.forget_pair()

    def bind(self, pair_codec: Any, rearranger: Any) -> None:
        """A one-pass codec's entry points: the schema codec's, with
        marshmallow's path given the bytes in this schema's layout."""
        load = self.codec.load_with_marshmallow
        # (switches: given where one-pass codecs are made)
        self.switches.bind(  # type: ignore[union-attr]
            pair_codec, lambda data, many: load(rearranger.transcode(data), many)
        )

    def find(self, writer_schema: Any, many: bool):
        key = _given_key(writer_schema, many)
        if key is None:
            return None
        found = self.given.get(key)
        if found is None:
            return None
        snapshot, shape, pair = found
        if snapshot is None or (shape is not None and shape.matches(writer_schema)):
            return pair
        if shape is None:
            # a dict SchemaShape cannot take (a value that is not JSON's):
            # compared in full each call, never shaped again
            return pair if snapshot == writer_schema else None
        shape = SchemaShape.of(writer_schema)  # first: what is compared next
        if snapshot != writer_schema:
            return None
        # changed in place and back to an equal value: checked cheaply again
        # from now on
        self.given[key] = (snapshot, shape, pair)
        return pair

    @staticmethod
    def taken(writer_schema: Any) -> tuple:
        """What keep() stores to check a dict with later: a copy and its
        SchemaShape, taken before the pair is made from it (a change made
        meanwhile, by another thread, is then seen at the next call)."""
        if isinstance(writer_schema, dict):
            return copy.deepcopy(writer_schema), SchemaShape.of(writer_schema)
        return None, None

    def keep(self, writer_schema: Any, many: bool, pair, taken: tuple) -> None:
        key = _given_key(writer_schema, many)
        if key is None:
            return
        if len(self.given) >= self.LIMIT:
            self.given.clear()
        self.given[key] = (*taken, pair)


def _given_key(writer_schema: Any, many: bool):
    if isinstance(writer_schema, dict):
        return ("dict", id(writer_schema), many)
    # a class, JSON text, a parsed Schema (immutable), a CompiledSchema
    # instance (its plan is made once, as the instance's own codec's)
    try:
        hash(writer_schema)
    except TypeError:
        return None
    return (writer_schema, many)


def _pair_for(
    schema: AvroSchema,
    flags: CompileFlags,
    codecs: _Pairs,
    writer_schema: Any,
    many: bool,
    compile: str | None = None,
):
    """What reads data written with ``writer_schema`` as this schema's: a
    one-pass codec, or what turns the data into this schema's bytes (its
    ``transcode(data)``), made once per writer schema (``compile="never"``:
    served without compiling); and how the caller may keep it by the
    object: True for one that cannot change (a class, an instance, text, a
    parsed Schema), a dict's SchemaShape to check it with before each use
    (it may have changed in place), False for neither."""
    pair = codecs.find(writer_schema, many)
    if pair is None:
        taken = codecs.taken(writer_schema)
        pair = _pair_codecs(schema, flags, codecs, writer_schema, many, compile)
        codecs.keep(writer_schema, many, pair, taken)
    # dicts first: isinstance against a Schema class goes through ABCMeta (slow)
    if isinstance(writer_schema, dict):
        kept = codecs.given.get(_given_key(writer_schema, many))
        return pair, kept[1] if kept is not None and kept[1] is not None else False
    lasting = not isinstance(writer_schema, list) and isinstance(
        writer_schema, (str, type, AvroSchema, CompiledSchema)
    )
    return pair, lasting


def _named_branches(schema: AvroSchema) -> bool:
    """Whether a union of ``schema`` has two named types or more."""
    from roastedavro.avro.types import Enum, Fixed, NamedRef, Record, Union

    named = (Enum, Fixed, NamedRef, Record)
    return any(
        isinstance(avro, Union) and sum(isinstance(b, named) for b in avro.branches) > 1
        for avro in schema.walk()
    )


class _SameLayout:
    """A writer schema whose Parsing Canonical Form is the reader's: its bytes
    are laid out as the reader's (the canonical form keeps exactly what
    decides the bytes), so they are read as they are."""

    @staticmethod
    def transcode(data):
        return data


_SAME_LAYOUT = _SameLayout()


class _ReadAndWrite:
    """A pair the Rearranger cannot convert (a schema nested past Python's
    recursion limit while its moves are planned): read by the pair's
    resolving reader, written by the reader's. Like the
    Rearranger, it counts the bytes it reads, for the ``hot`` policy
    (``watch``), and tells whoever holds it what replaced it
    (``replaced_by``)."""

    def __init__(self, resolving, plain):
        self.resolving = resolving
        self.plain = plain
        self.replaced_by = None
        self._work = 0
        self._hot_at = 0
        self._on_hot = None

    def watch(self, hot_at: int, on_hot) -> None:
        """Calls ``on_hot()`` once, from the call that brings the bytes read
        to ``hot_at``; 0 stops watching (as the Rearranger's watch)."""
        self._on_hot = on_hot
        self._hot_at = hot_at

    def transcode(self, data):
        if self._hot_at:
            self._work += len(data)
            if self._work >= self._hot_at:
                callback, self._on_hot, self._hot_at = self._on_hot, None, 0
                if callback is not None:
                    try:
                        callback()
                    except Exception:  # noqa: BLE001 - it reports its own errors
                        pass
        resolved = self.resolving.load(data)
        try:
            return self.plain.dump(resolved)
        except DatumError as error:
            # a value the writer's data holds that this schema's bytes cannot
            # (a decimal past the reader's precision): the data is not this
            # schema's, as when it is read without a writer schema
            raise DecodeError(f"the writer's data holds a value this schema cannot: {error}", 0) from None


def _pair_codecs(
    schema: AvroSchema,
    flags: CompileFlags,
    codecs: _Pairs,
    writer_schema: Any,
    many: bool,
    compile: str | None,
):
    from roastedavro.codec import AvroCodec

    if isinstance(writer_schema, CompiledSchema) or (
        isinstance(writer_schema, type) and issubclass(writer_schema, CompiledSchema)
    ):
        writer = writer_schema().avro_model if isinstance(writer_schema, type) else writer_schema.avro_model  # type: ignore[attr-defined]  # a CompiledSchema
    elif isinstance(writer_schema, AvroSchema):
        writer = writer_schema
    else:
        writer = parse_schema(writer_schema)
    key = (writer.to_json(), many)
    pair = codecs.by_json.get(key)
    if pair is None:
        if len(codecs.by_json) >= _Pairs.LIMIT:
            codecs.by_json.clear()
        if writer.canonical_form() == schema.canonical_form():
            codecs.by_json[key] = _SAME_LAYOUT
            return _SAME_LAYOUT
        reader, original = schema, writer
        if many:  # many records are one Avro array of them
            writer = parse_schema({"type": "array", "items": writer.to_dict()})
            reader = parse_schema({"type": "array", "items": schema.to_dict()})
        # the writer's bytes moved and converted into the reader's layout
        # (fields added, dropped, reordered; numbers promoted, enums
        # renumbered, union branches renumbered), one value at a time in C;
        # read by the pair's codec and written again only where that fails
        pair = Rearranger.build(writer, reader, flags)
        if pair is not None and compile != "never":
            pair = _one_pass(codecs, schema, flags, original, pair)
        if pair is None and _named_branches(reader):
            # the values keep the branch they were read as, (name, value),
            # where a union has several named types the writer would choose
            # between by their content (two records with the same fields)
            pair = _ReadAndWrite(
                ResolvingInterpreter(writer, reader, flags, naming=(False, False, True, False)),
                Interpreter(reader, flags),
            )
        elif pair is None:
            pair = _ReadAndWrite(
                AvroCodec(reader, flags, writer_schema=writer, compile=compile),
                AvroCodec(reader, flags, compile=compile),
            )
        if isinstance(pair, _ReadAndWrite) and compile != "never":
            # read in one pass once the pair's codec is built, where it can
            # be; read and written again until then
            pair = _one_pass(codecs, schema, flags, original, pair)
        codecs.by_json[key] = pair
    return pair


def _one_pass(
    codecs: _Pairs, schema: AvroSchema, flags: CompileFlags, writer: AvroSchema, rearranger: Any
) -> Any:
    """What serves a pair: a one-pass compiled codec where the schema's load
    is its compiled reader's and each field's bytes can be read by its own
    code, after at most one number promoted or one symbol renumbered, or
    once the Rearranger has moved the value into the schema's bytes
    (roastedavro.evolved); until it is built, and for other pairs,
    ``rearranger`` (the Rearranger; a _ReadAndWrite only for a pair the
    Rearranger's moves do not cover)."""
    from roastedavro.evolved import EvolvedPair, written_layout

    owner, codec = codecs.schema, codecs.codec
    if owner is None or codec is None or codec.load_through_marshmallow:
        return rearranger
    plan = owner._plan()
    # the Rearranger also moves what one pass cannot read with the field's
    # own code alone (a _ReadAndWrite has no moves)
    mover = rearranger if isinstance(rearranger, Rearranger) else None
    layout = written_layout(plan.root, plan.records, schema, writer, flags, mover)
    if layout is None:
        return rearranger
    evolved = EvolvedPair(
        owner,
        flags,
        layout,
        rearranger,
        bind=lambda made: codecs.bind(made, rearranger),
        on_change=codecs.replace,
    )
    if len(codecs.evolved) >= _Pairs.LIMIT:
        del codecs.evolved[0]
    codecs.evolved.append(evolved)
    return evolved.start()
