"""The Encoder base class: what every field type's code generator provides.

An encoder is created once per field occurrence while a schema is compiled.
It states the Avro type the field is written as and emits the Cython lines
that write and read one value of it. The surrounding record function, null
handling and missing values are the same for every field and are generated
by the visitor and the templates, so an encoder only deals with a value that
is present and not None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from marshmallow import ValidationError, fields

from roastedavro._support import coerce
from roastedavro.errors import CompileError, DumpError

if TYPE_CHECKING:
    from roastedavro.codegen import FunctionEmitter
    from roastedavro.visitor import NamedTypes, SchemaVisitor


class Encoder:
    """Base class of the code generators for one marshmallow field class.

    Subclasses set ``field_class`` and implement :meth:`avro_type`,
    :meth:`emit_write` and :meth:`emit_read`. Register them with
    :func:`roastedavro.register_encoder`.

    Inside emitted code these names are available:

    ``w``     the ``Writer*`` being written to (write side)
    ``r``     the ``Reader*`` being read from (read side)
    ``obj``   the object the current record is dumped from (write side)
    ``depth`` the nesting depth of the current record
    ``self``  the codec, holding every object bound with ``fn.bind``

    plus every primitive of ``roastedavro._runtime`` (``write_long``,
    ``read_str``, ``convert``, ...).
    """

    #: the marshmallow field class this encoder handles (and its subclasses,
    #: unless a more specific encoder is registered)
    field_class: ClassVar[type[fields.Field]] = fields.Field
    #: Avro types the field may be written as, chosen with
    #: ``metadata={"avro": ...}``; the first one is the default
    avro_types: ClassVar[tuple[Any, ...]] = ()
    #: the fewest bytes one value takes on the wire; collection counts are
    #: checked against it before anything is read
    min_size: ClassVar[int] = 1
    #: the Avro type already says whether null is allowed: no ["null", T]
    #: union around it for allow_none
    never_null: ClassVar[bool] = False
    #: emit_write handles None itself (otherwise None is "Field may not be null.")
    accepts_none: ClassVar[bool] = False
    #: emit_read already runs the field's validators (through the field's
    #: own ``deserialize``); otherwise the generated code checks them after it
    validates_itself: ClassVar[bool] = False
    #: the Python type the field loads (datetime, Decimal, UUID, ...), for
    #: encoders whose writer converts a value of another type with the
    #: field's own dump form read back (``coerce``): their defaults are
    #: converted the same way and must read back as themselves
    python_type: ClassVar[type | None] = None

    @classmethod
    def specialized(cls, field: fields.Field) -> type[Encoder]:
        """The encoder class for this field: ``cls``, unless the field's
        options call for another (a Nested field of a OneOfSchema)."""
        return cls

    def __init__(self, field: fields.Field, visitor: SchemaVisitor, path: str):
        self.field = field
        self.visitor = visitor
        self.path = path
        self.avro = self.choose_avro_type(field.metadata.get("avro"))

    # -- the Avro side ---------------------------------------------------

    def choose_avro_type(self, override: Any) -> Any:
        """The Avro type for this field, honouring a metadata override."""
        if override is None:
            if not self.avro_types:
                raise self.error("has no default Avro type; set metadata={'avro': ...}")
            return self.avro_types[0]
        if override in self.avro_types:
            return override
        choices = ", ".join(repr(t) for t in self.avro_types)
        raise self.error(
            f"metadata avro={override!r} is not a type this field can be written as "
            f"(choose one of {choices})"
        )

    def avro_type(self, names: NamedTypes) -> Any:
        """The Avro schema of a (non-null) value of this field."""
        return self.avro

    def describe(self) -> str:
        """A short text for the comment above the field's generated code."""
        if isinstance(self.avro, dict):
            return self.avro.get("logicalType") or self.avro.get("type", "value")
        return str(self.avro)

    def load_input(self, raw: Any) -> Any:
        """What marshmallow's ``load`` takes for one Avro value of this field.

        ``raw`` is the value as fastavro decodes it without logical types.
        Used only when a schema's load runs through marshmallow (hooks,
        validators): the compiled reader has checked the bytes first.
        """
        return raw

    def dump_datum(self, dumped: Any) -> Any:
        """The Avro value (as fastavro writes it without logical types) of
        marshmallow's ``dump`` output for one value of this field.

        Used only when a schema's dump runs through marshmallow (``post_dump``,
        hooks on nested schemas); must write what the compiled writer writes
        for the same object. Raises ``ValidationError`` or ``DumpError``.
        """
        return dumped

    def writer_value(self, value: Any) -> Any:
        """``value`` as the compiled writer converts it before it writes it.

        Unchanged, except for encoders with a ``python_type``: there a value of
        another type (every value, for a subclass with its own
        ``_serialize``) goes through the field's dump form read back, as the
        runtime's ``coerce`` does. Raises ``DumpError``.
        """
        if self.python_type is not None and (self.custom_serialize
                                             or type(value) is not self.python_type):
            return coerce(self.field, value, None, self.python_type)
        return value

    def default_datum(self, value: Any) -> Any:
        """The Avro value (as fastavro writes it without logical types) of
        ``value`` given as the field's ``load_default``/``dump_default``.

        A default is the deserialized value (a datetime, a Decimal, an enum
        member, as marshmallow's ``load`` returns it); this converts it as the
        compiled writer converts that value (:meth:`writer_value`, then
        :meth:`dump_datum`), so the schema's default holds the bytes the
        writer would write. For encoders with a ``python_type`` the default
        must also read back as itself (a timestamp-millis drops
        microseconds, a DateTime loads aware UTC values): otherwise the
        error says what to write instead. Raises ``CompileError``.
        """
        try:
            converted = self.writer_value(value)
            datum = self.dump_datum(converted)
        except (DumpError, ValidationError) as error:
            raise self.error(f"the default {value!r} cannot be written as {self.describe()}: "
                             f"{_message_text(error.messages)}. {self.default_hint()}") from None
        if self.python_type is not None:
            loaded = self.loaded_value(datum)
            if loaded != converted:
                raise self.error(
                    f"the default {value!r} does not read back as itself from {self.describe()} "
                    f"(it loads as {loaded!r}); write load_default={loaded!r}")
        return datum

    def load_default_datum(self, value: Any) -> Any:
        """:meth:`default_datum` of the field's own ``load_default``, which
        marshmallow's ``load({})`` returns as it is given: an encoder whose
        load returns another form (Pluck) checks it reads back as itself."""
        return self.default_datum(value)

    def check_dump_default(self, value: Any) -> None:
        """Raise ``CompileError`` for a constant ``dump_default`` that is not
        the Avro default (a load_default is) and that the writer could never
        write; most encoders leave it to the writer."""

    def loaded_value(self, datum: Any) -> Any:
        """What the compiled reader returns for one Avro value (as fastavro
        decodes it without logical types) of this field, before validators."""
        return self.field._deserialize(self.load_input(datum), self.field.name, None)

    def default_hint(self) -> str:
        """What a default of this field is, for the error when one cannot be written."""
        if self.python_type is None:
            return "A default is the value load returns"
        kind = self.python_type
        name = (kind.__qualname__ if kind.__module__ == "builtins"
                else f"{kind.__module__}.{kind.__qualname__}")
        return f"A default is the value load returns: a {name}"

    def object_from_dump(self, dumped: Any, python_type: type) -> Any:
        """The Python value behind a dumped one (text for a date, ...), read by the field."""
        if isinstance(dumped, python_type):
            return dumped
        return self.field._deserialize(dumped, self.field.name, None)

    def fetch(self, fn: FunctionEmitter, dump_key: str) -> str | None:
        """An expression for the field's value on dump, if not the default lookup.

        Fields that compute their value (Function, Method) return one; the
        default looks ``dump_key`` up on the object being dumped.
        """
        return None

    # -- the code --------------------------------------------------------

    def emit_write(self, fn: FunctionEmitter, value: str) -> None:
        """Emit lines that write the Python object in variable ``value``."""
        raise NotImplementedError

    def emit_read(self, fn: FunctionEmitter, target: str) -> None:
        """Emit lines that read one value and assign it to ``target``."""
        raise NotImplementedError

    # -- helpers for subclasses -------------------------------------------

    @property
    def custom_serialize(self) -> bool:
        """True when the field's class overrides ``_serialize`` below us.

        Then the exact-type fast path would skip the user's conversion, so
        every value goes through the field's own ``_serialize``.
        """
        return type(self.field)._serialize is not self.field_class._serialize

    @property
    def custom_deserialize(self) -> bool:
        return type(self.field)._deserialize is not self.field_class._deserialize

    def emit_write_value(self, fn: FunctionEmitter, value: str, writer: str,
                         python_type: type) -> None:
        """Write ``value`` with one of the runtime's ``write_*_value`` functions.

        They take values of the exact Python type straight to the wire and
        convert others with the field's ``_serialize``, as marshmallow's dump
        does. A subclass that overrides ``_serialize`` gets it called for
        every value first.
        """
        field = fn.bind(self.field, "field")
        if self.custom_serialize:
            fn.line(f"{value} = convert({field}, {value}, obj, {python_type.__name__})")
        fn.line(f"{writer}(w, {value}, {field}, obj)")

    def emit_coerce(self, fn: FunctionEmitter, value: str, python_type: str) -> None:
        """Logical types: a user subclass's own ``_serialize`` runs for every value."""
        if self.custom_serialize:
            field = fn.bind(self.field, "field")
            fn.line(f"{value} = coerce({field}, {value}, obj, {python_type})")

    def emit_deserialize(self, fn: FunctionEmitter, target: str) -> None:
        """Run a user subclass's ``_deserialize`` on a value just read."""
        if self.custom_deserialize:
            field = fn.bind(self.field, "field")
            fn.line(f"{target} = deserialize_value({field}, {target})")
            fn.flag_invalid(target)

    def error(self, message: str) -> CompileError:
        return CompileError(f"field {self.path!r} ({type(self.field).__name__}): {message}")


def _message_text(messages: Any) -> str:
    """A DumpError's or ValidationError's messages as one line."""
    if isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        return " ".join(messages).rstrip(".")
    return str(messages).rstrip(".")
