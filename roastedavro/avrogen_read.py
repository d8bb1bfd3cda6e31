"""The reader and skipper functions' statements of an AvroCodec module, per
Avro type: part of the generator (roastedavro.avrogen), as a mixin of its
_Generator."""

from __future__ import annotations

from roastedavro import blocks
from roastedavro.avro.types import (
    Array,
    AvroType,
    Enum,
    Fixed,
    Map,
    Primitive,
    Record,
    Union,
)
from roastedavro.avrogen_function import _Function
from roastedavro.codetext import (
    MAX_SIZE as _MAX_SIZE,
)
from roastedavro.codetext import (
    checked_int,
    literal,
)

_READERS = {
    "null": "None",
    "boolean": "read_boolean(r)",
    "int": "read_int(r)",
    "long": "read_long(r)",
    "float": "read_float(r)",
    "double": "read_double(r)",
    "bytes": "read_bytes(r)",
    "string": "read_str(r)",
}


class ReadCode:
    """How a value is read and skipped: the reader and skipper functions' statements per Avro type."""

    def read_value(self, fn: _Function, avro: AvroType, target: str) -> None:
        """Lines that read one value of ``avro`` into ``target`` (an assignable expression)."""
        avro = self.schema.deref(avro)
        if isinstance(avro, Array):
            with fn.collection() as level:
                items = fn.local("list", f"items{level}")
                with blocks.read_items(fn, items, *self.block_locals(fn, level), self.sizes.of(avro.items)):
                    expression = self.read_expression(avro.items)
                    if expression is not None:
                        fn.line(f"put_item({items}, {expression})")
                    else:
                        item = fn.local("object", f"item{level}")
                        self.read_value(fn, avro.items, item)
                        fn.line(f"put_item({items}, {item})")
                fn.line(f"{target} = {items}")
        elif isinstance(avro, Map):
            with fn.collection() as level:
                entries = fn.local("dict", f"entries{level}")
                key = fn.local("str", f"key{level}")
                with blocks.read_entries(
                    fn, entries, *self.block_locals(fn, level), key, self.sizes.of(avro.values)
                ):
                    self.read_value(fn, avro.values, f"{entries}[{key}]")
                fn.line(f"{target} = {entries}")
        elif isinstance(avro, Union) and self.shared_union(avro) is None:
            self.dispatch(fn, avro, lambda branch: self.read_value(fn, branch, target))
        else:
            fn.line(f"{target} = {self.read_expression(avro)}")

    def read_expression(self, avro: AvroType) -> str | None:
        """The expression that reads one value of a type that needs no statements."""
        avro = self.schema.deref(avro)
        if isinstance(avro, Record):
            self.called["read"].setdefault(avro.name, avro)
            return f"self.{self.function('read', self.idents[avro.name])}(r, depth + 1)"
        if isinstance(avro, Union):
            shared = self.shared_union(avro)
            if shared is None:
                return None
            return f"self.{self.function('read', shared)}(r, depth)"
        if isinstance(avro, Enum):
            symbols = self.enum_constants(avro)[0]
            return f"read_enum(r, <tuple>{symbols})"
        if isinstance(avro, Fixed):
            size = checked_int(avro.size, "a fixed size", 0, _MAX_SIZE)
            name = avro.logical.name if avro.logical is not None else None
            if name == "decimal":
                return f"{self.decimal_reader}(r, {self.decimal_args(avro.logical)}, {size})"
            if name == "uuid":
                return "read_uuid(r, True)"
            if name == "duration":
                return "read_duration(r)"
            return f"read_fixed(r, {size})"
        if not isinstance(avro, Primitive):
            return None
        name = avro.logical.name if avro.logical is not None else None
        if name in (
            "timestamp-millis",
            "timestamp-micros",
            "local-timestamp-millis",
            "local-timestamp-micros",
        ):
            unit = "1000" if name.endswith("millis") else "1"
            return f"read_timestamp(r, {unit}, {'False' if name.startswith('local') else 'True'})"
        if name == "date":
            return "read_date(r)"
        if name in ("time-millis", "time-micros"):
            return f"read_time(r, {'1000' if name == 'time-millis' else '1'})"
        if name == "decimal":
            return f"{self.decimal_reader}(r, {self.decimal_args(avro.logical)}, 0)"
        if name == "big-decimal":
            return "read_big_decimal(r)"
        if name == "uuid":
            return "read_uuid(r, False)"
        # timestamp-nanos and local-timestamp-nanos: ints, as fastavro reads them
        return _READERS[avro.name]

    @staticmethod
    def block_locals(fn: _Function, level: int) -> tuple[str, str]:
        """The C locals of the block loop at nesting ``level``: the block's
        count and the position in it (roastedavro.blocks)."""
        return fn.local("long long", f"count{level}"), fn.local("long long", f"position{level}")

    def dispatch(self, fn: _Function, avro: Union, emit) -> None:
        """Read a union's branch index, then ``emit(branch type)`` in its arm."""
        count = len(avro.branches)
        if count == 2:
            fn.line(f"if read_index(r, 2) == 0:  {self.branch_comment(avro, 0)}")
            with fn.indent():
                emit(avro.branches[0])
            fn.line(f"else:  {self.branch_comment(avro, 1)}")
            with fn.indent():
                emit(avro.branches[1])
            return
        with fn.union() as branch:
            fn.line(f"{branch} = read_index(r, {checked_int(count, 'branches', 0, _MAX_SIZE)})")
            for index, branch_type in enumerate(avro.branches):
                keyword = "if" if index == 0 else "elif" if index < count - 1 else "else"
                test = f" {branch} == {index}" if keyword != "else" else ""
                fn.line(f"{keyword}{test}:  {self.branch_comment(avro, index)}")
                with fn.indent():
                    emit(branch_type)

    # -- skipping --------------------------------------------------------------

    def skip_value(self, fn: _Function, avro: AvroType) -> None:
        avro = self.schema.deref(avro)
        if isinstance(avro, Record):
            self.called["skip"].setdefault(avro.name, avro)
            fn.line(f"self.{self.function('skip', self.idents[avro.name])}(r, depth + 1)")
        elif isinstance(avro, (Array, Map)):
            inner = avro.items if isinstance(avro, Array) else avro.values
            with fn.collection() as level:
                min_size = self.sizes.of(inner) + (1 if isinstance(avro, Map) else 0)
                with blocks.read_blocks(fn, *self.block_locals(fn, level), min_size):
                    if isinstance(avro, Map):
                        fn.line("skip_length(r)")
                    self.skip_value(fn, inner)
        elif isinstance(avro, Union):
            shared = self.shared_union(avro)
            if shared is not None and "skip" in self.kinds:
                fn.line(f"self.{self.function('skip', shared)}(r, depth)")
            else:
                self.dispatch(fn, avro, lambda branch: self.skip_value(fn, branch))
        elif isinstance(avro, Enum):
            fn.line(f"read_index(r, {checked_int(len(avro.symbols), 'symbols', 0, _MAX_SIZE)})")
        elif isinstance(avro, Fixed):
            fn.line(f"skip_raw(r, {checked_int(avro.size, 'a fixed size', 0, _MAX_SIZE)})")
        else:
            kind = avro.name
            if kind in ("bytes", "string"):
                fn.line("skip_length(r)")
            elif kind in ("float", "double"):
                fn.line(f"skip_raw(r, {4 if kind == 'float' else 8})")
            elif kind == "long":
                fn.line("skip_long(r)")
            elif kind != "null":
                fn.line(f"{_READERS[kind]}")
            else:
                fn.line("pass  # null: no bytes")

    # -- functions -------------------------------------------------------------

    def read_field(self, fn: _Function, avro: AvroType, index: int, name: str) -> None:
        """Lines that read a record's index-th field into its entry of ``record``."""
        loaded = fn.local("object", "loaded_value")
        self.read_value(fn, avro, loaded)
        fn.line(f"set_field(record, values, {index}, {literal(name)}, {loaded})")
