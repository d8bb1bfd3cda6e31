"""The checks of an AvroCodec module: validators, and fastavro's branch rule
for dicts in unions of records. Part of the generator (roastedavro.avrogen),
as a mixin of its _Generator."""

from __future__ import annotations

from typing import Any

from roastedavro._unionrule import Validator
from roastedavro.avro.types import (
    Array,
    AvroType,
    Enum,
    Fixed,
    Map,
    Record,
    Union,
    describe,
)
from roastedavro.avrogen_function import _Function
from roastedavro.avroplan import (
    _TIMESTAMPS,
)
from roastedavro.codetext import (
    MAX_SIZE as _MAX_SIZE,
)
from roastedavro.codetext import (
    Code,
    checked_int,
    comment,
    literal,
)


class CheckCode:
    """How a value is checked before anything is written (fastavro's branch rule for dicts in unions of records, validators)."""

    def check(self, fn: _Function, avro: AvroType, value: str) -> str:
        """A bint expression: whether fastavro's validation accepts ``value`` as
        ``avro``. Lines it needs first are emitted before it."""
        avro = self.schema.deref(avro)
        logical = getattr(avro, "logical", None)
        name = logical.name if logical is not None else None
        if isinstance(avro, Record):
            validation = self.validation()
            if validation is not None:
                interpreter, bound = validation
                node = checked_int(interpreter.record_node(avro.name), "a record's node", 0, 2**62)
                return f"(<DatumCodec>{bound}).accepts_record_at({node}, {value}, depth)"
            self.validated.setdefault(avro.name, avro)
            return f"self.{self.function('accepts', self.idents[avro.name])}({value}, depth + 1)"
        if isinstance(avro, Enum):
            return f"valid_symbol({value}, <dict>{self.enum_constants(avro)[1]})"
        if isinstance(avro, Fixed):
            if name is None:
                return f"valid_fixed({value}, {checked_int(avro.size, 'a fixed size', 0, _MAX_SIZE)})"
            return f"{self.validator(avro)}({value})"
        if isinstance(avro, Array):
            return self.check_array(fn, avro, value)
        if isinstance(avro, Map):
            return self.check_map(fn, avro, value)
        if isinstance(avro, Union):
            shared = self.shared_union(avro)
            if shared is not None:
                return f"self.{self.function('accepts', shared)}({value}, depth)"
            return self.check_union(fn, avro, value)
        kind = avro.name
        if name in _TIMESTAMPS:
            return f"(isinstance({value}, DATETIME) or valid_integer({value}, 64))"
        if name == "date":
            return f"valid_date({value})"
        if name in ("time-millis", "time-micros"):
            bits = 32 if name == "time-millis" else 64
            return f"(isinstance({value}, TIME) or valid_integer({value}, {bits}))"
        if name == "uuid":
            return f"(isinstance({value}, str) or isinstance({value}, UUID))"
        if name is not None:  # decimals: converted first, which may fail as fastavro's does
            return f"{self.validator(avro)}({value})"
        return {
            "null": "{value} is None",
            "boolean": "type({value}) is bool",
            "int": "valid_integer({value}, 32)",
            "long": "valid_integer({value}, 64)",
            "float": "valid_real({value})",
            "double": "valid_real({value})",
            "bytes": "valid_bytes({value})",
            "string": "isinstance({value}, str)",
        }[kind].format(value=value)

    def validation(self) -> tuple[Any, Code] | None:
        """Tier 0's interpreter of the schema and its binding, where it
        validates records (tier0_validates); None where accepts_ functions do."""
        if self.tier0_validates and self._validation is None:
            from roastedavro._tier0 import Interpreter

            try:
                interpreter = Interpreter(self.schema)
            except Exception:  # a schema tier 0 refuses: validated here, as always
                self.tier0_validates = False
                return None
            self._validation = (
                interpreter,
                self.module.bind_interpreter(interpreter, f"{self.prefix or 'const'}_validation"),
            )
        return self._validation

    def validator(self, avro: AvroType) -> Code:
        """fastavro's validation of ``avro`` in Python, bound once per distinct type."""
        known = self._validators.get(avro)
        if known is None:
            known = self._validators[avro] = self.bind(Validator(avro, self.schema), "validator")
        return known

    def check_array(self, fn: _Function, avro: Array, value: str) -> str:
        with fn.check_level() as level:
            ok, item = fn.local("bint", f"ok{level}"), fn.local("object", f"checked{level}")
            fn.line(f"if type({value}) is list or type({value}) is tuple:")
            with fn.indent():
                fn.line(f"{ok} = True")
                fn.line(f"for {item} in {value}:")
                with fn.indent():
                    accepted = self.check(fn, avro.items, item)
                    fn.line(f"if not {accepted}:")
                    fn.line(f"    {ok} = False")
                    fn.line("    break")
            fn.line("else:  # other sequences, as fastavro says")
            fn.line(f"    {ok} = {self.validator(avro)}({value})")
        return ok

    def check_map(self, fn: _Function, avro: Map, value: str) -> str:
        with fn.check_level() as level:
            ok, item = fn.local("bint", f"ok{level}"), fn.local("object", f"checked{level}")
            key = fn.local("object", f"checked_key{level}")
            fn.line(f"if type({value}) is dict:")
            with fn.indent():
                fn.line(f"{ok} = True")
                fn.line(f"for {key}, {item} in (<dict>{value}).items():")
                with fn.indent():
                    fn.line(f"if not isinstance({key}, str):")
                    fn.line(f"    {ok} = False")
                    fn.line("    break")
                    accepted = self.check(fn, avro.values, item)
                    fn.line(f"if not {accepted}:")
                    fn.line(f"    {ok} = False")
                    fn.line("    break")
            fn.line("else:  # other mappings, as fastavro says")
            fn.line(f"    {ok} = {self.validator(avro)}({value})")
        return ok

    def check_union(self, fn: _Function, avro: Union, value: str) -> str:
        with fn.check_level() as level:
            ok = fn.local("bint", f"ok{level}")
            fn.line(f"if isinstance({value}, tuple):  # a branch named in tuple notation")
            fn.line(f"    {ok} = {self.validator(avro)}({value})")
            fn.line("else:")
            with fn.indent():
                # the first branch that accepts it; later ones only if none has
                # (one level of indentation however many branches there are)
                fn.line(f"{ok} = False")
                for branch in avro.branches:
                    fn.line(f"if not {ok}:")
                    with fn.indent():
                        accepted = self.check(fn, branch, value)
                        fn.line(f"{ok} = {accepted}")
        return ok

    def validator_function(self, record: Record) -> Code:
        ident = self.idents[record.name]
        fn = _Function(self, "check", self.function("accepts", ident))
        fn.local("object", "value")
        fields = []
        for field in record.fields:
            heading = Code(f"# {comment(field.name + ': ' + describe(field.type))}")
            # the default's JSON value as fastavro validates it, or None
            default = self.literal_or_bound(field.default if field.has_default else None)

            def body(field=field):
                accepted = self.check(fn, field.type, "value")
                fn.line(f"if not {accepted}:")
                fn.line("    return False")

            fields.append(
                {"comment": heading, "key": literal(field.name), "default": default, "body": fn.collect(body)}
            )
        return self.render(
            "avro_validator.pyx.j2",
            fn,
            {"name": comment(record.name)},
            fields=fields,
            full_name=literal(record.name),
            fallback=self.validator(record),
        )

    def validator_functions(self) -> list[Code]:
        """The validators the union dispatch uses so far, and those they use
        in turn, each once."""
        functions = []
        while len(self._validators_done) < len(self.validated):
            for name, record in list(self.validated.items()):
                if name not in self._validators_done:
                    self._validators_done.add(name)
                    functions.append(self.validator_function(record))
        return functions

    def union_validator_function(self, union: Union, ident: Code) -> Code:
        """accepts_<ident>: whether fastavro's validation accepts a value as the union."""
        fn = _Function(self, "check", self.function("accepts", ident))
        fn.local("object", "value")
        result: list[str] = []
        body = fn.collect(lambda: result.append(self.check_union(fn, union, "value")))
        return self.render(
            "avro_union_validator.pyx.j2",
            fn,
            {"name": comment(describe(union))},
            body=body,
            result=Code(result[0]),
        )

    # -- writing ---------------------------------------------------------------
