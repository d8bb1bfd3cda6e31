"""The writer functions' statements of an AvroCodec module, per Avro type:
part of the generator (roastedavro.avrogen), as a mixin of its _Generator."""

from __future__ import annotations

from typing import Any

from roastedavro import blocks
from roastedavro._defaults import encode_default
from roastedavro.avro.types import (
    Array,
    AvroType,
    Enum,
    Fixed,
    Map,
    Primitive,
    Record,
    Union,
    describe,
)
from roastedavro.avrogen_function import _Function
from roastedavro.avroplan import (
    _TIMESTAMPS,
    _TYPE_TESTS,
    _is_primitive,
    _lenient,
    _nullable,
    _UnionPlan,
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

_UNITS = {"millis": "UNIT_MILLIS", "micros": "UNIT_MICROS", "nanos": "UNIT_NANOS"}
_WRITERS = {"boolean": "boolean", "int": "int", "long": "long", "bytes": "bytes", "string": "string"}


class WriteCode:
    """How a value is written: the writer functions' statements per Avro type."""

    def write_value(self, fn: _Function, avro: AvroType, value: str, lenient: bool = False) -> None:
        """Lines that write the Python value in local ``value`` as ``avro``."""
        avro = self.schema.deref(avro)
        if isinstance(avro, Record):
            fn.line(f"self.{self.function('write', self.idents[avro.name])}(w, {value}, depth + 1)")
        elif isinstance(avro, Array):
            self.write_array(fn, avro, value)
        elif isinstance(avro, Map):
            self.write_map(fn, avro, value)
        elif isinstance(avro, Union):
            shared = self.shared_union(avro)
            if shared is not None:
                fn.line(f"self.{self.function('write', shared)}(w, {value}, depth)")
            else:
                self.write_union(fn, avro, value)
        elif isinstance(avro, Enum):
            indexes = self.enum_constants(avro)[1]
            fn.line(f"write_enum_datum(w, {value}, <dict>{indexes})")
        elif isinstance(avro, Primitive) and avro.name == "null":
            fn.line(f"if {value} is not None:")
            fn.line('    raise_dump_error(u"expected None for an Avro null")')
        else:
            fn.line(self.write_call(avro, value, lenient))

    def write_call(self, avro: AvroType, value: str, lenient: bool) -> str:
        logical = avro.logical
        name = logical.name if logical is not None else None
        if isinstance(avro, Fixed):
            size = checked_int(avro.size, "a fixed size", 0, _MAX_SIZE)
            if name == "decimal":
                return f"write_decimal_datum(w, {value}, {self.decimal_args(logical)}, {size})"
            if name == "uuid":
                return f"write_uuid_datum(w, {value}, True)"
            if name == "duration":
                return f"write_duration_datum(w, {value})"
            return f"write_fixed_datum(w, {value}, {size})"
        kind = avro.name
        if name in _TIMESTAMPS:
            local = "True" if name.startswith("local") else "False"
            return f"write_timestamp_datum(w, {value}, {_UNITS[name.rpartition('-')[2]]}, {local})"
        if name == "date":
            return f"write_date_datum(w, {value})"
        if name in ("time-millis", "time-micros"):
            return f"write_time_datum(w, {value}, {_UNITS[name.rpartition('-')[2]]})"
        if name == "decimal":
            return f"write_decimal_datum(w, {value}, {self.decimal_args(logical)}, 0)"
        if name == "big-decimal":
            return f"write_big_decimal_datum(w, {value})"
        if name == "uuid":
            return f"write_uuid_datum(w, {value}, False)"
        if kind in ("float", "double"):
            return f"write_{kind}_datum(w, {value}, {'True' if lenient else 'False'})"
        return f"write_{_WRITERS[kind]}_datum(w, {value})"

    @property
    def decimal_reader(self) -> str:
        return "read_decimal_exact" if self.exact_decimals else "read_decimal"

    def decimal_args(self, logical) -> str:
        scale = checked_int(logical.scale, "a decimal scale", 0, _MAX_SIZE)
        precision = checked_int(logical.precision, "a decimal precision", 1, _MAX_SIZE)
        return f"{scale}, {precision}"

    def write_array(self, fn: _Function, avro: Array, value: str) -> None:
        with fn.collection() as level:
            items = fn.local("list", f"items{level}")
            count = fn.local("Py_ssize_t", f"count{level}")
            item = fn.local("object", f"item{level}")
            fn.line(f"{items} = array_datum({value})")
            with blocks.write_items(
                fn,
                items,
                count,
                item,
                f"part{level}",
                f"index{level}",
                "the list changed size while it was being written",
            ):
                self.write_value(fn, avro.items, item)

    def write_map(self, fn: _Function, avro: Map, value: str) -> None:
        with fn.collection() as level:
            entries = fn.local("dict", f"entries{level}")
            count = fn.local("Py_ssize_t", f"count{level}")
            position = fn.local("Py_ssize_t", f"position{level}")
            refs = (fn.local("PyObject*", f"key_ref{level}"), fn.local("PyObject*", f"item_ref{level}"))
            item = fn.local("object", f"item{level}")
            fn.line(f"{entries} = map_datum({value})")
            with blocks.write_entries(
                fn,
                entries,
                count,
                position,
                refs,
                f"key{level}",
                item,
                f"part{level}",
                f"index{level}",
                True,
                "the dict changed size while it was being written",
            ):
                self.write_value(fn, avro.values, item)

    def write_union(self, fn: _Function, avro: Union, value: str) -> None:
        plan = _UnionPlan(avro, self.schema)
        with fn.union() as branch:
            chooser = self.union_chooser(avro)
            choose = f"{value} = choose_branch({chooser}, {value}, &{branch})"
            arms = []
            for python_type, test in _TYPE_TESTS.items():
                if python_type == "dict" and len(plan.dict_branches()) > 1:
                    arms.append((test, "dict"))
                    continue
                if python_type == "int":
                    by_size = plan.for_int()
                    if any(index is not None for index in by_size):
                        arms.append((test, by_size))
                    continue
                index = plan.static(python_type)
                if index is not None:
                    arms.append((test, index))
            keyword = "if"
            for test, index in arms:
                fn.line(f"{keyword} {test.format(value=value)}:")
                with fn.indent():
                    if isinstance(index, list):
                        self.int_arm(fn, avro, branch, index, choose, value)
                    elif index == "dict":
                        self.dict_arm(fn, avro, plan, branch, choose, value)
                    else:
                        fn.line(f"{branch} = {index}  {self.branch_comment(avro, index)}")
                keyword = "elif"
            if arms:
                fn.line("else:")
                with fn.indent():
                    # fastavro's validation decides (roastedavro._datum.UnionChooser)
                    fn.line(choose)
            else:
                fn.line(choose)
            fn.line(f"write_long(w, {branch})")
            keyword = "if"
            for index, branch_type in enumerate(avro.branches):
                if _is_primitive(branch_type, "null"):
                    continue
                fn.line(f"{keyword} {branch} == {index}:  {self.branch_comment(avro, index)}")
                with fn.indent():
                    self.write_value(fn, branch_type, value)
                keyword = "elif"

    def dict_arm(
        self, fn: _Function, avro: Union, plan: _UnionPlan, branch: str, choose: str, value: str
    ) -> None:
        """fastavro's choice for a dict among records and maps: each in order that
        its validation accepts the dict; a record sharing more field names with
        the dict than the ones before it, or a map outright (then no later one)."""
        most, fields = fn.local("int", "most"), fn.local("int", "fields")
        fn.line(f"{branch} = -1")
        fn.line(f"{most} = -1")

        def emit(indexes):
            if not indexes:
                return
            index, rest = indexes[0], indexes[1:]
            definition = plan.branches[index]
            accepted = self.check(fn, definition, value)
            # fastavro counts shared names for "record"s only: an "error" it
            # takes outright, as a map
            if isinstance(definition, Record) and definition.kind == "record":
                fn.line(f"if {accepted}:  {self.branch_comment(avro, index)}")
                with fn.indent():
                    # the record's field names the dict has
                    name = fn.local("object", "field_name")
                    fn.line(f"{fields} = 0")
                    fn.line(f"for {name} in {self.record_keys(definition)}.keys:")
                    fn.line(f"    if {name} in <dict>{value}:")
                    fn.line(f"        {fields} += 1")
                    fn.line(f"if {fields} > {most}:")
                    fn.line(f"    {most} = {fields}")
                    fn.line(f"    {branch} = {index}")
                emit(rest)
            else:
                fn.line(f"if {accepted}:  {self.branch_comment(avro, index)}")
                fn.line(f"    {branch} = {index}")
                if rest:
                    fn.line("else:")
                    with fn.indent():
                        emit(rest)

        emit(plan.dict_branches())
        fn.line(f"if {branch} < 0:")
        with fn.indent():
            fn.line(choose)  # none: fastavro's validation says why

    # -- fastavro's validation -------------------------------------------------

    def int_arm(
        self, fn: _Function, avro: Union, branch: str, by_size: list, choose: str, value: str
    ) -> None:
        """An int's branch by its size: what fits an Avro int, a long, neither."""

        def assign(index):
            if index is None:
                fn.line(choose)
            else:
                fn.line(f"{branch} = {index}  {self.branch_comment(avro, index)}")

        fits_int, fits_long, larger = by_size
        if fits_int == fits_long == larger:
            assign(fits_int)
            return
        size = fn.local("int", "size")
        fn.line(f"{size} = int_size({value})  # 0: fits an int, 1: a long, 2: neither")
        if fits_long == larger:
            conditions = [(f"{size} == 0", fits_int), (None, fits_long)]
        elif fits_int == fits_long:
            conditions = [(f"{size} <= 1", fits_int), (None, larger)]
        else:
            conditions = [(f"{size} == 0", fits_int), (f"{size} == 1", fits_long), (None, larger)]
        for number, (condition, index) in enumerate(conditions):
            fn.line(f"{'if' if number == 0 else 'elif'} {condition}:" if condition else "else:")
            with fn.indent():
                assign(index)

    def branch_comment(self, avro: Union, index: int) -> str:
        return f"# {comment(describe(avro.branches[index]))}"

    # -- reading ---------------------------------------------------------------

    def literal_or_bound(self, value: Any) -> Code:
        try:
            return literal(value)
        except TypeError:
            return self.bind(value, "default")

    def write_field(self, fn: _Function, record: Record, field) -> None:
        dereffed = self.schema.deref(field.type)
        if field.has_default:
            where = f"{record.name}.{field.name}"
            encoded = encode_default(field.type, field.default, self.schema, where)
            fn.line("if value is MISSING:")
            fn.line(f"    write_encoded(w, {literal(encoded)})  # the default")
            fn.line("else:")
            with fn.indent():
                self.write_value(fn, field.type, "value", lenient=_lenient(dereffed))
            return
        fn.line("if value is MISSING:")
        if _nullable(dereffed):
            # fastavro's rule: a union with null, missing, is null
            fn.line("    value = None")
        else:
            fn.line('    raise_dump_error(u"no value and no default for the field")')
        self.write_value(fn, field.type, "value", lenient=_lenient(dereffed))
