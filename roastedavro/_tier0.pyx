# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, binding=False, auto_pickle=False
"""Tier 0: an interpreter of plain Avro schemas, compiled once with the package.

``Interpreter(schema, flags)`` writes and reads values of a parsed Avro
schema (roastedavro.avro) as the codec AvroCodec generates for it does: the
same datum conventions (fastavro's, roastedavro._datum), bytes, values,
errors (DatumError with the value's path, DecodeError with the byte offset)
and bounds (max_depth, max_items, the message's item budget), with the same
runtime primitives. It needs no compiler: the schema becomes a flat program,
an array of nodes (one per named type, so a recursive schema is a cycle; one
per use of any other type) that recursive C functions walk, with no
Python-level call per field.

Its entry points are those of a compiled AvroCodec module's Codec: dump,
dump_prefixed, dump_block, load, load_from, load_one, load_block and
load_block_within.
"""

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_Next
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdlib cimport calloc, free

from roastedavro._runtime cimport (
    Reader, Writer, DatumCodec, Transcoder, open_reader, close_reader, check_finished, check_count,
    check_write_stack, check_read_stack,
    writer_init, writer_reserve, writer_finish, writer_release,
    write_long, write_byte, write_raw, write_str, write_encoded,
    write_long_datum, write_int_datum, write_double_datum, write_float_datum,
    write_boolean_datum, write_string_datum, write_bytes_datum, write_fixed_datum,
    write_enum_datum, record_datum, array_datum, map_datum, check_map_key, int_size,
    write_timestamp_datum, write_date_datum, write_time_datum, write_decimal_datum,
    write_uuid_datum, write_big_decimal_datum, write_duration_datum,
    UNIT_MILLIS, UNIT_MICROS, UNIT_NANOS,
    read_long, read_int, read_index, read_boolean, read_double, read_float, read_str, pass_str, read_key,
    read_bytes, read_fixed, read_enum, read_length, new_record_dict, read_block_count, new_items, put_item,
    new_record, record_values, set_field, RecordKeys,
    read_timestamp, read_date, read_time, read_decimal_exact, read_uuid, read_big_decimal,
    read_duration, skip_raw, skip_length, skip_long,
    valid_integer, valid_real, valid_bytes, valid_fixed, valid_symbol, valid_date,
    raise_dump_error, raise_decode_error, raise_unreadable, promote_into, remap_into, set_move_hook,
    PROMOTE_INT_FLOAT, PROMOTE_INT_DOUBLE, PROMOTE_LONG_FLOAT, PROMOTE_LONG_DOUBLE, PROMOTE_FLOAT_DOUBLE,
    next_field, enable_dict_walk, forget_keys, SOURCE_DICT,
)

from roastedavro._runtime import DICT_LAYOUT_VERIFIED

import datetime
import decimal
import uuid

from roastedavro.avro.types import Array, Fixed, Map, Primitive, Record, Schema, Union
from roastedavro.avroplan import _MinSizes
from roastedavro.errors import DecodeError, DumpError
from roastedavro._datum import Duration, datum_error
from roastedavro._defaults import encode_default
from roastedavro._unionrule import UnionChooser, Validator

cdef object MISSING = object()    # a field the record does not have

# record writers walk dicts in place where the runtime's layout check passed
enable_dict_walk(DICT_LAYOUT_VERIFIED, MISSING)
cdef type DATETIME = datetime.datetime
cdef type DATE = datetime.date
cdef type TIME = datetime.time
cdef type DECIMAL = decimal.Decimal
cdef type UUID = uuid.UUID
cdef type DURATION = Duration

# node kinds
cdef enum:
    K_NULL = 0
    K_BOOLEAN = 1
    K_INT = 2
    K_LONG = 3
    K_FLOAT = 4
    K_DOUBLE = 5
    K_BYTES = 6
    K_STRING = 7
    K_FIXED = 8
    K_ENUM = 9
    K_ARRAY = 10
    K_MAP = 11
    K_UNION = 12
    K_RECORD = 13

# logical kinds
cdef enum:
    L_NONE = 0
    L_TIMESTAMP = 1     # millis and micros: datetimes both ways
    L_TIMESTAMP_NANOS = 2   # datetimes written, ints read (as fastavro)
    L_DATE = 3
    L_TIME = 4
    L_DECIMAL = 5
    L_BIG_DECIMAL = 6
    L_UUID = 7
    L_DURATION = 8

cdef enum:
    DICT_ARM = -3       # a union's table: a dict's branch is the validation's choice (dict_branch)

# the Python types a union's exact-type dispatch tells apart (avrogen._TYPE_TESTS)
_PY_TYPES = ("None", "str", "int", "float", "dict", "list", "bool", "bytes", "datetime", "date",
             "time", "Decimal", "UUID", "Duration")

cdef struct Node:
    int kind
    int logical
    int unit            # timestamps and times: UNIT_*
    long long read_unit # timestamps and times: read_timestamp's / read_time's unit
    bint flag           # float, double: lenient (a record's field); timestamps: local;
                        # union: an int's branch depends on its size
    int scale
    int precision
    Py_ssize_t size     # fixed: bytes; enum: symbols; union: branches; record: fields
    Py_ssize_t first    # union: first branch in links; record: first field; array, map: the child
    Py_ssize_t min_size # array, map: the fewest bytes an item takes
    PyObject* obj       # enum: symbol -> index; record: RecordKeys; union: UnionChooser
    PyObject* obj2      # enum: symbols; union: the name each branch's value is paired
                        # with (None: none), fastavro's naming options, else NULL
    PyObject* validator # fastavro's validation of the type (roastedavro._datum.Validator)
    PyObject* name      # record: its full name
    int table[17]   # union (14 types, then an int's by its size): the branch of each exact Python type, -1: the chooser's

cdef struct Field:
    Py_ssize_t node
    PyObject* name      # str
    PyObject* default   # the default's encoding (bytes), or NULL
    bint nullable       # missing is null (fastavro's rule for unions with null)
    PyObject* check_default  # the default as JSON (None if none): what validation checks


cdef inline int py_type(object value) noexcept:
    """The value's exact type among _PY_TYPES (its index), -1 for any other."""
    if value is None:
        return 0
    cdef type t = type(value)
    if t is str:
        return 1
    if t is int:
        return 2
    if t is float:
        return 3
    if t is dict:
        return 4
    if t is list:
        return 5
    if t is bool:
        return 6
    if t is bytes:
        return 7
    if t is DATETIME:
        return 8
    if t is DATE:
        return 9
    if t is TIME:
        return 10
    if t is DECIMAL:
        return 11
    if t is UUID:
        return 12
    if t is DURATION:
        return 13
    return -1


def union_names(union, schema, naming, reader=None, reader_branches=None):
    """The name fastavro's reader pairs each branch's value of a writer's
    union with under its naming options ``naming`` (return_record_name,
    return_record_name_override, return_named_type,
    return_named_type_override), None for a value left as it is; None when
    no branch is named. fastavro's rules (read_union) look at the writer's
    union as written: a branch naming a type defined before counts as a
    record (even an enum's or fixed's), an "error" is named by
    return_named_type only and counts for neither override. The names are
    the reader's union branches' where a reader's union is given
    (``reader_branches``: each writer branch's reader branch or None)."""
    from roastedavro.avro.types import Enum, Fixed, NamedRef, Record
    record_name, record_override, named_type, named_override = naming
    kinds = []
    for branch in union.branches:
        if isinstance(branch, NamedRef):
            kinds.append("ref")
        elif isinstance(branch, Record):
            kinds.append("error" if branch.kind == "error" else "record")
        elif isinstance(branch, (Enum, Fixed)):
            kinds.append("named")
        else:
            kinds.append(None)
    named = sum(kind in ("record", "named", "ref") for kind in kinds)
    records = sum(kind in ("record", "ref") for kind in kinds)
    names = []
    for number, kind in enumerate(kinds):
        if named_override and named == 1:
            paired = False
        elif named_type and kind is not None:
            paired = True
        elif record_override and records == 1:
            paired = False
        else:
            paired = bool(record_name) and kind in ("record", "ref")
        if not paired:
            names.append(None)
        elif reader_branches is not None and reader_branches[number] is not None:
            names.append(reader.deref(reader_branches[number]).name)
        else:
            names.append(schema.deref(union.branches[number]).name)
    return tuple(names) if any(name is not None for name in names) else None


def branch_indexes(union):
    """The names of ``union``'s branches where every value is read as
    (branch index, value): the indexes; None for a null and one other type,
    whose values say their branch."""
    branches = union.branches
    nulls = sum(getattr(branch, "name", None) == "null" for branch in branches)
    return None if (len(branches) == 2 and nulls == 1) else tuple(range(len(branches)))


def _naming(naming):
    """fastavro's four naming options as a tuple of bools, None for none."""
    if naming is None:
        return None
    naming = tuple(bool(option) for option in naming)
    if len(naming) != 4:
        raise ValueError("naming takes fastavro's four options: (return_record_name, "
                         "return_record_name_override, return_named_type, "
                         "return_named_type_override)")
    return naming if any(naming) else None


class _Cycle(Exception):
    pass


class _Sizes(_MinSizes):
    """_MinSizes's figures (the fewest bytes a value of each type takes),
    each record's computed once, after the records it holds, where no record
    holds itself other than through an array or map; otherwise _MinSizes's,
    which settle by iteration (a 500-field record: one pass over its fields
    instead of two). ``of`` is _MinSizes's, over the figures found here."""

    def __init__(self, schema):
        self.schema = schema
        self.records = {}
        try:
            for avro in schema.named.values():
                if isinstance(avro, Record):
                    self.record(avro, set())
        except (_Cycle, RecursionError):
            self.records = _MinSizes(schema).records

    def record(self, avro, active):
        known = self.records.get(avro.name)
        if known is not None:
            return known
        if avro.name in active:
            raise _Cycle()
        active.add(avro.name)
        size = min(sum(self.size(field.type, active) for field in avro.fields), 2**40)
        active.discard(avro.name)
        self.records[avro.name] = size
        return size

    def size(self, avro, active):
        # as ``of``, with the records held computed first
        avro = self.schema.deref(avro)
        if isinstance(avro, Record):
            return self.record(avro, active)
        if isinstance(avro, Union):
            return 1 + min((self.size(branch, active) for branch in avro.branches), default=0)
        return self.of(avro)


_KINDS = {"null": K_NULL, "boolean": K_BOOLEAN, "int": K_INT, "long": K_LONG,
          "float": K_FLOAT, "double": K_DOUBLE, "bytes": K_BYTES, "string": K_STRING}
_UNITS = {"millis": UNIT_MILLIS, "micros": UNIT_MICROS, "nanos": UNIT_NANOS}


class _Program:
    """The nodes of a schema as Python lists, before they become C arrays."""

    def __init__(self, schema, naming=None, defaults=True, branches=False):
        """``defaults=False``: the fields' defaults are not encoded (a
        writer's schema in a resolution reads and skips, never writes, and
        its defaults are not looked at, as Java does not look at them).
        ``branches``: unions (other than a null and one type) read as
        (branch index, value)."""
        from roastedavro import avroplan as avrogen
        from roastedavro.avro.types import Array, Enum, Fixed, Map, NamedRef, Primitive, Record, Union

        if tuple(avrogen._TYPE_TESTS) != _PY_TYPES:
            raise AssertionError("the union dispatch's Python types changed")
        self.avrogen = avrogen
        self.types = (Array, Enum, Fixed, Map, Primitive, Record, Union, NamedRef)
        self.schema = schema
        self.sizes = _Sizes(schema)
        self.nodes = []     # dicts of Node's fields
        self.links = []     # union branches
        self.fields = []    # tuples of Field's fields
        self.named = {}     # full name -> node index
        self.keep = []      # the Python objects nodes point to
        self.unions = {}    # union -> its dispatch (union_dispatch)
        self.plain = {}     # (primitive's name, lenient) -> its node, for plain primitives
        self.naming = naming if naming is not None and any(naming) else None
        self.branches = branches
        self.defaults = defaults
        self.root = self.node(schema.root)

    def add(self, avro, **values):
        validator = Validator(avro, self.schema)
        self.keep.append(validator)
        self.nodes.append(dict(values, validator=validator))
        return len(self.nodes) - 1

    def node(self, avro, lenient=False):
        Array, Enum, Fixed, Map, Primitive, Record, Union, NamedRef = self.types
        avrogen = self.avrogen
        schema = self.schema
        avro = schema.deref(avro)
        if type(avro) is Primitive and avro.logical is None:
            # a plain primitive's node is shared by all its uses (nodes are
            # read-only once built): one node, not one per field
            key = (avro.name, lenient)
            index = self.plain.get(key)
            if index is None:
                index = self.plain[key] = self.leaf(avro, lenient)
            return index
        name = getattr(avro, "name", None)
        if isinstance(avro, (Record, Enum, Fixed)) and name in self.named:
            return self.named[name]
        if isinstance(avro, Record):
            index = self.named[name] = self.add(avro, kind=K_RECORD, size=len(avro.fields))
            keys = RecordKeys(field.name for field in avro.fields)
            self.keep.append(keys)
            # the record's fields take consecutive entries: claim them first
            first = len(self.fields)
            self.fields.extend([None] * len(avro.fields))
            self.keep.append(avro.name)
            # flag: an "error", which fastavro takes outright in a union (no
            # count of shared field names)
            self.nodes[index].update(first=first, obj=keys, name=avro.name,
                                     flag=avro.kind == "error")
            fields = self.fields
            for number, field in enumerate(avro.fields):
                dereffed = schema.deref(field.type)
                # avrogen's _lenient and _nullable, inline (a 500-field record: 0.3 ms)
                lenient = nullable = False
                if isinstance(dereffed, Primitive):
                    lenient = dereffed.name in ("float", "double") and dereffed.logical is None
                    nullable = dereffed.name == "null"
                elif isinstance(dereffed, Union):
                    for branch in dereffed.branches:
                        if isinstance(branch, Primitive) and branch.name == "null":
                            nullable = True
                            break
                child = self.node(dereffed, lenient)
                default = check_default = None
                if field.has_default and self.defaults:
                    default = encode_default(field.type, field.default, schema,
                                             f"{avro.name}.{field.name}")
                    check_default = field.default
                    self.keep += [default, check_default]
                # Field's members: node, name, default, nullable, check_default
                fields[first + number] = (child, field.name, default, nullable, check_default)
            return index
        if isinstance(avro, Enum):
            symbols = tuple(avro.symbols)
            indexes = {symbol: number for number, symbol in enumerate(symbols)}
            self.keep += [symbols, indexes]
            index = self.named[name] = self.add(avro, kind=K_ENUM, size=len(symbols), obj=indexes,
                                                obj2=symbols)
            return index
        if isinstance(avro, Array):
            index = self.add(avro, kind=K_ARRAY, min_size=self.sizes.of(avro.items))
            self.nodes[index]["first"] = self.node(avro.items)
            return index
        if isinstance(avro, Map):
            index = self.add(avro, kind=K_MAP, min_size=1 + self.sizes.of(avro.values))
            self.nodes[index]["first"] = self.node(avro.values)
            return index
        if isinstance(avro, Union):
            # equal unions share a dispatch; a union of plain primitives and
            # references is keyed by their names (hashing the union itself
            # hashes its branches' dataclasses: 2 us a union)
            key = []
            for branch in avro.branches:
                if type(branch) is Primitive and branch.logical is None and not branch.props:
                    key.append(branch.name)
                elif type(branch) is NamedRef:
                    key.append((branch.name,))
                else:
                    key = avro
                    break
            else:
                key = tuple(key)
            known = self.unions.get(key)
            if known is None:
                known = self.unions[key] = self.union_dispatch(avro)
            table, by_size, chooser = known
            names = None
            if self.branches:
                names = branch_indexes(avro)
                self.keep.append(names)
            elif self.naming is not None:
                names = union_names(avro, schema, self.naming)
                self.keep.append(names)
            index = self.add(avro, kind=K_UNION, size=len(avro.branches), obj=chooser, table=table,
                             flag=not (by_size[0] == by_size[1] == by_size[2]), obj2=names)
            branches = [self.node(branch) for branch in avro.branches]
            self.nodes[index]["first"] = len(self.links)
            self.links.extend(branches)
            return index
        return self.leaf(avro, lenient)

    def union_dispatch(self, avro):
        """The branch of each exact Python type (avrogen's plan), the branches
        of an int by its size, the chooser for the rest; equal unions share them."""
        plan = self.avrogen._UnionPlan(avro, self.schema)
        table = []
        by_size = [None, None, None]
        for python_type in _PY_TYPES:
            chosen = None
            if python_type == "int":
                by_size = plan.for_int()
            elif python_type == "dict" and len(plan.dict_branches()) > 1:
                # several records and maps: fastavro's validation decides
                chosen = DICT_ARM
            else:
                chosen = plan.static(python_type)
            table.append(-1 if chosen is None else chosen)
        table += [-1 if index is None else index for index in by_size]
        chooser = UnionChooser(avro, self.schema)
        self.keep.append(chooser)
        return table, by_size, chooser

    def plain_node(self, avro):
        """The node reading ``avro``'s values without its logical type (a
        fixed: its bytes, shared by every plain fixed of its size)."""
        import dataclasses
        if type(avro) is self.types[4]:    # Primitive
            return self.node(dataclasses.replace(avro, logical=None))
        key = ("fixed", avro.size)
        index = self.plain.get(key)
        if index is None:
            index = self.plain[key] = self.add(dataclasses.replace(avro, logical=None),
                                               kind=K_FIXED, size=avro.size)
        return index

    def leaf(self, avro, lenient):
        Fixed = self.types[2]
        avrogen = self.avrogen
        name = getattr(avro, "name", None)
        logical = avro.logical
        lname = logical.name if logical is not None else None
        if isinstance(avro, Fixed):
            values = dict(kind=K_FIXED, size=avro.size)
            if lname == "decimal":
                values.update(logical=L_DECIMAL, scale=logical.scale, precision=logical.precision)
            elif lname == "uuid":
                values.update(logical=L_UUID)
            elif lname == "duration":
                values.update(logical=L_DURATION)
            index = self.named[name] = self.add(avro, **values)
            return index
        values = dict(kind=_KINDS[avro.name], flag=lenient)
        if lname is None:
            return self.add(avro, **values)
        units = _UNITS
        if lname in avrogen._TIMESTAMPS:
            unit = lname.rpartition("-")[2]
            values.update(logical=L_TIMESTAMP_NANOS if unit == "nanos" else L_TIMESTAMP,
                          unit=units[unit], read_unit=1000 if unit == "millis" else 1,
                          flag=lname.startswith("local"))
        elif lname == "date":
            values.update(logical=L_DATE)
        elif lname in ("time-millis", "time-micros"):
            unit = lname.rpartition("-")[2]
            values.update(logical=L_TIME, unit=units[unit], read_unit=1000 if unit == "millis" else 1)
        elif lname == "decimal":
            values.update(logical=L_DECIMAL, scale=logical.scale, precision=logical.precision)
        elif lname == "big-decimal":
            values.update(logical=L_BIG_DECIMAL)
        elif lname == "uuid":
            values.update(logical=L_UUID)
        return self.add(avro, **values)


cdef extern from *:
    """
    /* the field's name appended to the path of the DumpError being raised;
       apart from the recursive writers (never inlined) so that their frames
       stay small. -1 always. */
    static __attribute__((noinline)) int tier0_field_failed(PyObject* name, PyObject* kind) {
        PyObject *type, *value, *trace, *path;
        PyErr_Fetch(&type, &value, &trace);
        PyErr_NormalizeException(&type, &value, &trace);
        if (value != NULL && PyObject_IsInstance(value, kind) == 1) {
            path = PyObject_GetAttrString(value, "path");
            if (path == NULL || PyList_Append(path, name) < 0)
                PyErr_Clear();
            Py_XDECREF(path);
        } else {
            PyErr_Clear();
        }
        PyErr_Restore(type, value, trace);
        return -1;
    }

    /* the same with a list item's index */
    static __attribute__((noinline)) int tier0_item_failed(Py_ssize_t index, PyObject* kind) {
        PyObject *type, *value, *trace;
        PyObject *number;
        PyErr_Fetch(&type, &value, &trace);
        number = PyLong_FromSsize_t(index);
        PyErr_Restore(type, value, trace);
        if (number == NULL)
            return -1;
        tier0_field_failed(number, kind);
        Py_DECREF(number);
        return -1;
    }
    """
    int tier0_field_failed(PyObject* name, PyObject* kind) noexcept
    int tier0_item_failed(Py_ssize_t index, PyObject* kind) noexcept


ctypedef int (*ValueWriter)(Interpreter, Writer*, Py_ssize_t, object, int) noexcept


cdef int write_value_of(Interpreter self, Writer* w, Py_ssize_t index, object value,
                        int depth) except -1:
    return self.write_value(w, index, value, depth)


cdef int no_value_error() except -1:
    raise_dump_error(u"no value and no default for the field")


cdef int resized_error() except -1:
    raise_dump_error(u"the list changed size while it was being written")


ctypedef int (*Raiser)() noexcept

# set at import: calls the compiler cannot inline, whose -1 write_record
# sees rather than Cython's error handling (see write_record)
cdef ValueWriter value_writer = NULL
cdef Raiser no_value = NULL
cdef Raiser resized = NULL


# -- counting the work done (the tiers' statistics and hot policy) -------------

@cython.final
cdef class Heat:
    """The work a tier-0 codec has done (bytes written, read or transcoded),
    and the callback that fires once when it reaches a threshold: what the
    hot policy compiles on (roastedavro.tiers)."""

    cdef readonly unsigned long long work
    cdef unsigned long long hot_at     # work at which on_hot is called (0: never)
    cdef object on_hot

    def watch(self, unsigned long long hot_at, on_hot):
        """Calls ``on_hot()`` once, from the call that brings the work done
        to ``hot_at``; 0 stops watching."""
        self.on_hot = on_hot
        self.hot_at = hot_at

    cdef inline int add(self, Py_ssize_t size) except -1:
        self.work += <unsigned long long>size
        if self.hot_at and self.work >= self.hot_at:
            self.fire()
        return 0

    cdef int fire(self) except -1:
        callback = self.on_hot
        self.hot_at = 0
        self.on_hot = None
        if callback is not None:
            try:
                callback()
            except Exception:
                # the caller's value is served all the same; the callback reports its own errors
                pass
        return 0


@cython.final
cdef class Interpreter(DatumCodec):
    """Writes and reads values of one plain Avro schema, as its AvroCodec does."""

    cdef Node* nodes
    cdef Py_ssize_t* links
    cdef Field* fields
    cdef PyObject** seen        # per record field: the dict key it last matched (next_field)
    cdef Py_ssize_t field_count
    cdef Py_ssize_t root
    cdef list keep              # the Python objects the nodes point to
    cdef readonly object schema
    #: the bytes the entry points wrote or read (DatumCodec counts the calls)
    cdef Heat heat
    # fastavro's handle_unicode_errors: the error handler strings and map keys
    # are decoded with (NULL: strict, the codecs' UTF-8 check)
    cdef const char* errors
    cdef bytes errors_name
    # fastavro's writer options: 1 strict (every field given, no others),
    # 2 strict_allow_default (fields with defaults may be left out); 0 neither
    cdef int strict
    cdef dict named             # a named type's full name -> its node
    cdef Py_ssize_t node_count

    def __cinit__(self):
        self.nodes = NULL
        self.links = NULL
        self.fields = NULL
        self.seen = NULL
        self.heat = Heat.__new__(Heat)

    def __init__(self, schema, flags=None, naming=None, unicode_errors=None, strict=0, branches=False):
        """``branches``: each union's value (other than a null and one
        type's) read as (branch index, value), for readers that keep the
        branch written (Arrow's dense unions).
        ``strict``: fastavro's writer options, 1 for strict (a record
        must give every field and no other key), 2 for strict_allow_default
        (fields with a default may be left out); 0 for neither.
        ``naming``: fastavro's reader options (return_record_name,
        return_record_name_override, return_named_type,
        return_named_type_override), whose unions' values are read as
        (name, value) as fastavro reads them; None: none.
        ``unicode_errors``: fastavro's handle_unicode_errors, the error
        handler of the UTF-8 decoding of strings and map keys ("replace",
        "ignore", ...); None or "strict": invalid UTF-8 is a DecodeError."""
        if not isinstance(schema, Schema):
            raise TypeError(f"an Interpreter takes a parsed schema (roastedavro.avro.parse_schema), "
                            f"not {type(schema).__name__}")
        if branches and naming is not None and any(naming):
            raise ValueError("an Interpreter reads unions' branches by index or by fastavro's names, not both")
        self.load_program(_Program(schema, _naming(naming), branches=branches), flags)
        self.set_unicode_errors(unicode_errors)
        if strict not in (0, 1, 2):
            raise ValueError(f"strict is 0, 1 (strict) or 2 (strict_allow_default), not {strict!r}")
        self.strict = strict

    cdef int set_unicode_errors(self, errors) except -1:
        if errors is None or errors == "strict":
            return 0
        if not isinstance(errors, str):
            raise TypeError(f"handle_unicode_errors is the name of an error handler (a str), "
                            f"not {type(errors).__name__}")
        # an unknown name is a LookupError at the first invalid byte, as in fastavro
        self.errors_name = errors.encode("ascii", "replace")
        self.errors = self.errors_name
        return 0

    cdef str read_text(self, Reader* r):
        """A string or map key under the ``unicode_errors`` handler."""
        cdef Py_ssize_t n = read_length(r)
        cdef const char* start = <const char*>r.data + r.pos
        r.pos += n
        return PyUnicode_DecodeUTF8(start, n, self.errors)

    cdef object read_lenient(self, Reader* r, int logical):
        cdef Py_ssize_t start = r.pos
        text = self.read_text(r)
        if logical != L_UUID:
            return text
        try:
            return UUID(text)
        except ValueError:
            raise DecodeError(u"not a valid UUID", start) from None

    cdef int load_program(self, program, flags) except -1:
        """Takes the nodes of ``program`` (a _Program) as C arrays."""
        cdef Py_ssize_t index, slot
        cdef Node* node
        cdef Field* field
        self.counts_work = True
        if flags is None:
            from roastedavro.flags import CompileFlags
            flags = CompileFlags()
        if self.nodes != NULL:
            raise TypeError("an Interpreter is initialised once")
        schema = program.schema
        self.schema = schema
        self.keep = program.keep
        self.keep.append(program.fields)     # the fields' names and defaults
        self.max_depth = flags.max_depth
        self.max_items = flags.max_items
        self.item_allowance = flags.item_allowance
        self.root = program.root
        self.named = program.named
        self.min_size = program.sizes.of(schema.root)
        self.nodes = <Node*>calloc(max(len(program.nodes), 1), sizeof(Node))
        self.links = <Py_ssize_t*>calloc(max(len(program.links), 1), sizeof(Py_ssize_t))
        self.fields = <Field*>calloc(max(len(program.fields), 1), sizeof(Field))
        self.seen = <PyObject**>calloc(max(len(program.fields), 1), sizeof(PyObject*))
        if self.nodes == NULL or self.links == NULL or self.fields == NULL or self.seen == NULL:
            raise MemoryError()
        self.field_count = len(program.fields)
        self.node_count = len(program.nodes)
        for index, values in enumerate(program.nodes):
            node = &self.nodes[index]
            node.kind = values["kind"]
            node.logical = values.get("logical", L_NONE)
            node.unit = values.get("unit", 0)
            node.read_unit = values.get("read_unit", 0)
            node.flag = values.get("flag", False)
            node.scale = values.get("scale") or 0
            node.precision = values.get("precision") or 0
            node.size = values.get("size", 0)
            node.first = values.get("first", 0)
            node.min_size = values.get("min_size", 0)
            node.obj = <PyObject*>values["obj"] if values.get("obj") is not None else NULL
            node.obj2 = <PyObject*>values["obj2"] if values.get("obj2") is not None else NULL
            node.validator = <PyObject*>values["validator"]
            node.name = <PyObject*>values["name"] if values.get("name") is not None else NULL
            for slot, branch in enumerate(values.get("table", ())):
                node.table[slot] = branch
        for index, link in enumerate(program.links):
            self.links[index] = link
        for index, values in enumerate(program.fields):
            field = &self.fields[index]
            field.node = values[0]
            field.name = <PyObject*>values[1]   # held by the schema, kept with the program
            field.default = <PyObject*>values[2] if values[2] is not None else NULL
            field.nullable = values[3]
            field.check_default = <PyObject*>values[4]
        return 0

    def __dealloc__(self):
        if self.seen != NULL:
            forget_keys(self.seen, self.field_count)
        free(self.nodes)
        free(self.links)
        free(self.fields)
        free(self.seen)

    # -- writing -----------------------------------------------------------

    cdef int write_record(self, Writer* w, Node* node, object datum, int depth) except -1:
        cdef dict record = record_datum(datum)
        cdef Py_ssize_t cursor = 0
        cdef Py_ssize_t number = 0
        cdef Field* field = NULL
        cdef object value
        if depth > self.max_depth:
            raise_dump_error(u"records are nested more than %d levels deep, or the value contains "
                             u"itself (CompileFlags.max_depth)" % self.max_depth)
        if (depth & 31) == 31:
            check_write_stack(depth)
        if self.strict:
            self.check_strict(node, record)
        for number in range(node.first, node.first + node.size):
            field = &self.fields[number]
            value = next_field(record, SOURCE_DICT, &cursor, <str>field.name, &self.seen[number])
            if value is MISSING:
                if field.default != NULL:
                    write_encoded(w, <bytes>field.default)
                    continue
                if field.nullable:
                    value = None
                else:
                    no_value()
                    return tier0_field_failed(field.name, <PyObject*>DumpError)
            # called through a pointer, as a plain C function: a failure (-1,
            # the exception set) gets the field's name from a function of its
            # own, with no try block taking room in each level's frame
            if value_writer(self, w, field.node, value, depth) == -1:
                return tier0_field_failed(field.name, <PyObject*>DumpError)
        return 0

    cdef int check_strict(self, Node* node, dict record) except -1:
        # fastavro's strict checks, with its messages: keys that are not
        # fields first, then the first field left out that may not be
        cdef Py_ssize_t number
        cdef Field* field
        names = [<str>self.fields[number].name
                 for number in range(node.first, node.first + node.size)]
        extras = [key for key in record if key not in names]
        if extras:
            raise_dump_error(u"record contains more fields than the schema specifies: "
                             + u", ".join([str(key) for key in extras]))
        for number in range(node.first, node.first + node.size):
            field = &self.fields[number]
            if <str>field.name not in record and (self.strict == 1 or field.default == NULL):
                raise_dump_error(u"Field %s is specified in the schema but missing from the record"
                                 % <str>field.name)
        return 0

    cdef int write_value(self, Writer* w, Py_ssize_t index, object value, int depth) except -1:
        cdef Node* node = &self.nodes[index]
        cdef int kind = node.kind
        cdef int logical
        if kind == K_UNION:
            # the branch's value is written in this frame, not one more per union
            index = self.write_union(w, node, value, depth)
            if index < 0:
                return 0    # written by the chooser's path
            node = &self.nodes[index]
            kind = node.kind
        logical = node.logical
        if kind == K_RECORD:
            return self.write_record(w, node, value, depth + 1)
        if kind == K_STRING:
            if logical == L_UUID:
                return write_uuid_datum(w, value, False)
            return write_string_datum(w, value)
        if kind == K_LONG:
            if logical == L_NONE:
                return write_long_datum(w, value)
            if logical == L_TIMESTAMP or logical == L_TIMESTAMP_NANOS:
                return write_timestamp_datum(w, value, node.unit, node.flag)
            if logical == L_TIME:
                return write_time_datum(w, value, node.unit)
            return write_long_datum(w, value)
        if kind == K_INT:
            if logical == L_DATE:
                return write_date_datum(w, value)
            if logical == L_TIME:
                return write_time_datum(w, value, node.unit)
            return write_int_datum(w, value)
        if kind == K_DOUBLE:
            return write_double_datum(w, value, node.flag)
        if kind == K_FLOAT:
            return write_float_datum(w, value, node.flag)
        if kind == K_BOOLEAN:
            return write_boolean_datum(w, value)
        if kind == K_ARRAY:
            return self.write_array(w, node, value, depth)
        if kind == K_MAP:
            return self.write_map(w, node, value, depth)
        if kind == K_ENUM:
            return write_enum_datum(w, value, <dict>node.obj)
        if kind == K_BYTES:
            if logical == L_DECIMAL:
                return write_decimal_datum(w, value, node.scale, node.precision, 0)
            if logical == L_BIG_DECIMAL:
                return write_big_decimal_datum(w, value)
            return write_bytes_datum(w, value)
        if kind == K_FIXED:
            if logical == L_DECIMAL:
                return write_decimal_datum(w, value, node.scale, node.precision, node.size)
            if logical == L_UUID:
                return write_uuid_datum(w, value, True)
            if logical == L_DURATION:
                return write_duration_datum(w, value)
            return write_fixed_datum(w, value, node.size)
        # null
        if value is not None:
            raise_dump_error(u"expected None for an Avro null")
        return 0

    cdef int write_array(self, Writer* w, Node* node, object value, int depth) except -1:
        cdef list items = array_datum(value)
        cdef Py_ssize_t count = len(items)
        cdef Py_ssize_t index = 0
        cdef Py_ssize_t child = node.first
        if count:
            write_long(w, count)
            # no try block (see write_record): a failure gets the item's index
            for item in items:
                if value_writer(self, w, child, item, depth) == -1:
                    return tier0_item_failed(index, <PyObject*>DumpError)
                index += 1
            # the count is already written: a list resized under us must
            # not leave bytes that promise more or fewer items than follow
            if index != count:
                resized()
                return tier0_item_failed(index, <PyObject*>DumpError)
        write_byte(w, 0)
        return 0

    cdef int write_map(self, Writer* w, Node* node, object value, int depth) except -1:
        cdef dict entries = map_datum(value)
        cdef Py_ssize_t count = len(entries)
        cdef Py_ssize_t child = node.first
        cdef Py_ssize_t position = 0, written = 0
        cdef PyObject* key_ref
        cdef PyObject* item_ref
        cdef object key = None, item
        if count:
            write_long(w, count)
            try:
                while PyDict_Next(entries, &position, &key_ref, &item_ref):
                    # new references: writing a value may run Python code
                    key = <object>key_ref
                    item = <object>item_ref
                    if type(key) is not str:
                        check_map_key(key)
                    write_str(w, <str>key)
                    self.write_value(w, child, item, depth)
                    written += 1
            except DumpError as error:
                error.path.append(key)
                raise
            if written != count:
                # the count is out: the bytes must not promise other entries than follow
                raise_dump_error(u"the dict changed size while it was being written")
        write_byte(w, 0)
        return 0

    cdef Py_ssize_t write_union(self, Writer* w, Node* node, object value, int depth) except -2:
        """Writes a union's branch index: the branch's node, to write
        ``value`` with; -1 where the chooser took the value (then written
        here, from its own frame)."""
        cdef int python_type = py_type(value)
        cdef Py_ssize_t branch
        if python_type == 2:
            branch = node.table[14 + int_size(value)] if node.flag else node.table[14]
        elif python_type >= 0:
            branch = node.table[python_type]
            if branch == DICT_ARM:
                branch = self.dict_branch(node, <dict>value, depth)
        else:
            branch = -1
        if branch < 0:
            return self.write_chosen(w, node, value, depth)
        write_long(w, branch)
        return self.links[node.first + branch]

    cdef Py_ssize_t write_chosen(self, Writer* w, Node* node, object value, int depth) except -2:
        # fastavro's validation decides (roastedavro._datum.UnionChooser)
        cdef Py_ssize_t branch
        cdef Py_ssize_t child
        branch, value = (<object>node.obj).choose(value)
        write_long(w, branch)
        child = self.links[node.first + branch]
        if self.nodes[child].kind != K_NULL:
            self.write_value(w, child, value, depth)
        return -1

    cdef Py_ssize_t dict_branch(self, Node* node, dict value, int depth) except -2:
        # fastavro's choice for a dict among records and maps: each in order
        # that its validation accepts the dict; a record sharing more field
        # names with the dict than the ones before it, or a map outright
        # (then no later one); -1: none (the chooser says why)
        cdef Py_ssize_t branch = -1
        cdef Py_ssize_t number, child, first
        cdef Py_ssize_t most = -1
        cdef Py_ssize_t fields
        cdef Node* definition
        for number in range(node.size):
            child = self.links[node.first + number]
            definition = &self.nodes[child]
            if definition.kind == K_RECORD and not definition.flag:
                if self.accepts(child, value, depth):
                    fields = 0
                    first = definition.first
                    for child in range(first, first + definition.size):
                        if <object>self.fields[child].name in value:
                            fields += 1
                    if fields > most:
                        most = fields
                        branch = number
            elif definition.kind == K_MAP or definition.kind == K_RECORD:
                # a map, or an "error": taken outright
                if self.accepts(child, value, depth):
                    return number
        return branch

    # -- fastavro's validation (what the generated union dispatch checks) ----

    cdef bint accepts_record(self, Node* node, object datum, int depth) except -1:
        cdef dict record
        cdef Field* field
        cdef Py_ssize_t number
        if type(datum) is not dict:
            return (<object>node.validator)(datum)    # other mappings: in Python
        record = <dict>datum
        if depth > self.max_depth:
            raise_dump_error(u"records are nested more than %d levels deep, or the value contains "
                             u"itself (CompileFlags.max_depth)" % self.max_depth)
        if (depth & 31) == 31:
            check_write_stack(depth)
        value = record.get(u"-type", MISSING)
        if value is not MISSING and value != <object>node.name:
            return False
        for number in range(node.first, node.first + node.size):
            field = &self.fields[number]
            value = record.get(<object>field.name, <object>field.check_default)
            if not self.accepts(field.node, value, depth):
                return False
        return True

    cdef bint accepts(self, Py_ssize_t index, object value, int depth) except -1:
        cdef Node* node = &self.nodes[index]
        cdef int kind = node.kind
        cdef int logical = node.logical
        cdef Py_ssize_t number
        if kind == K_RECORD:
            return self.accepts_record(node, value, depth + 1)
        if kind == K_ENUM:
            return valid_symbol(value, <dict>node.obj)
        if kind == K_FIXED:
            if logical == L_NONE:
                return valid_fixed(value, node.size)
            return (<object>node.validator)(value)
        if kind == K_ARRAY:
            if type(value) is list or type(value) is tuple:
                for item in value:
                    if not self.accepts(node.first, item, depth):
                        return False
                return True
            return (<object>node.validator)(value)    # other sequences, as fastavro says
        if kind == K_MAP:
            if type(value) is dict:
                for key, item in (<dict>value).items():
                    if not isinstance(key, str):
                        return False
                    if not self.accepts(node.first, item, depth):
                        return False
                return True
            return (<object>node.validator)(value)    # other mappings, as fastavro says
        if kind == K_UNION:
            if isinstance(value, tuple):    # a branch named in tuple notation
                return (<object>node.validator)(value)
            for number in range(node.size):
                if self.accepts(self.links[node.first + number], value, depth):
                    return True
            return False
        if logical == L_TIMESTAMP or logical == L_TIMESTAMP_NANOS:
            return isinstance(value, DATETIME) or valid_integer(value, 64)
        if logical == L_DATE:
            return valid_date(value)
        if logical == L_TIME:
            return isinstance(value, TIME) or valid_integer(value, 32 if node.unit == UNIT_MILLIS else 64)
        if logical == L_UUID:
            return isinstance(value, str) or isinstance(value, UUID)
        if logical != L_NONE:    # decimals: converted first, which may fail as fastavro's does
            return (<object>node.validator)(value)
        if kind == K_NULL:
            return value is None
        if kind == K_BOOLEAN:
            return type(value) is bool
        if kind == K_INT:
            return valid_integer(value, 32)
        if kind == K_LONG:
            return valid_integer(value, 64)
        if kind == K_FLOAT or kind == K_DOUBLE:
            return valid_real(value)
        if kind == K_BYTES:
            return valid_bytes(value)
        return isinstance(value, str)

    cdef int write_datum(self, Writer* w, object datum) except -1:
        cdef Node* node = &self.nodes[self.root]
        if node.kind == K_RECORD:
            return self.write_record(w, node, datum, 0)
        return self.write_value(w, self.root, datum, 0)

    # -- reading -----------------------------------------------------------

    cdef dict read_record(self, Reader* r, Node* node, int depth):
        cdef RecordKeys keys = <RecordKeys>node.obj
        cdef dict record = new_record(keys)
        cdef PyObject** values = record_values(record, keys)
        cdef Py_ssize_t number
        cdef Field* field
        if depth > self.max_depth:
            raise_decode_error(r, u"records nested more than %d levels deep (CompileFlags.max_depth)"
                               % self.max_depth, r.pos)
        if (depth & 31) == 31:
            check_read_stack(r, depth)
        for number in range(node.size):
            field = &self.fields[node.first + number]
            set_field(record, values, number, <object>field.name,
                      self.read_value(r, field.node, depth))
        return record

    cdef object read_value(self, Reader* r, Py_ssize_t index, int depth):
        cdef Node* node = &self.nodes[index]
        cdef int kind = node.kind
        cdef int logical
        if kind == K_UNION:
            if node.obj2 != NULL:
                return self.read_named(r, node, depth)
            # the branch is read in this frame, not one more per union
            node = &self.nodes[self.links[node.first + read_index(r, node.size)]]
            kind = node.kind
        logical = node.logical
        if kind == K_RECORD:
            return self.read_record(r, node, depth + 1)
        if kind == K_STRING:
            if self.errors != NULL:
                return self.read_lenient(r, logical)
            if logical == L_UUID:
                return read_uuid(r, False)
            return read_str(r)
        if kind == K_LONG:
            if logical == L_TIMESTAMP:
                return read_timestamp(r, node.read_unit, not node.flag)
            if logical == L_TIME:
                return read_time(r, node.read_unit)
            return read_long(r)
        if kind == K_INT:
            if logical == L_DATE:
                return read_date(r)
            if logical == L_TIME:
                return read_time(r, node.read_unit)
            return read_int(r)
        if kind == K_DOUBLE:
            return read_double(r)
        if kind == K_FLOAT:
            return read_float(r)
        if kind == K_BOOLEAN:
            return read_boolean(r)
        if kind == K_ARRAY:
            return self.read_array(r, node, depth)
        if kind == K_MAP:
            return self.read_map(r, node, depth)
        if kind == K_ENUM:
            return read_enum(r, <tuple>node.obj2)
        if kind == K_BYTES:
            if logical == L_DECIMAL:
                return read_decimal_exact(r, node.scale, node.precision, 0)
            if logical == L_BIG_DECIMAL:
                return read_big_decimal(r)
            return read_bytes(r)
        if kind == K_FIXED:
            if logical == L_DECIMAL:
                return read_decimal_exact(r, node.scale, node.precision, node.size)
            if logical == L_UUID:
                return read_uuid(r, True)
            if logical == L_DURATION:
                return read_duration(r)
            return read_fixed(r, node.size)
        return None

    cdef object read_named(self, Reader* r, Node* node, int depth):
        """A union's value under fastavro's naming options: (name, value)
        where the branch has a name (node.obj2)."""
        cdef Py_ssize_t branch = read_index(r, node.size)
        value = self.read_value(r, self.links[node.first + branch], depth)
        name = (<tuple>node.obj2)[branch]
        return value if name is None else (name, value)

    cdef list read_array(self, Reader* r, Node* node, int depth):
        cdef Py_ssize_t child = node.first
        cdef long long count = read_block_count(r, node.min_size, self.max_items)
        cdef long long position
        cdef list items = new_items(count)
        while count:
            for position in range(count):
                put_item(items, self.read_value(r, child, depth))
            count = read_block_count(r, node.min_size, self.max_items)
        return items

    cdef dict read_map(self, Reader* r, Node* node, int depth):
        cdef Py_ssize_t child = node.first
        cdef long long count = read_block_count(r, node.min_size, self.max_items)
        cdef long long position
        cdef dict entries = new_record_dict(count)
        cdef str key
        while count:
            for position in range(count):
                key = read_key(r) if self.errors == NULL else self.read_text(r)
                entries[key] = self.read_value(r, child, depth)
            count = read_block_count(r, node.min_size, self.max_items)
        return entries

    cdef object read_datum(self, Reader* r):
        cdef Node* node = &self.nodes[self.root]
        if node.kind == K_RECORD:
            return self.read_record(r, node, 0)
        return self.read_value(r, self.root, 0)

    cdef int skip_datum(self, Reader* r) except -1:
        return self.skip_value(r, self.root, 0)

    cdef int skip_at(self, Reader* r, Py_ssize_t node, int depth) except -1:
        # a field of a record at depth - 1 (a one-pass reader's dropped field)
        if node < 0 or node >= self.node_count:
            raise IndexError(u"not a node of this schema")
        return self.skip_value(r, node, depth)

    def record_node(self, str name):
        """The node of the record named ``name`` (its full name), for
        accepts_record_at."""
        index = self.named.get(name)
        if index is None or self.nodes[<Py_ssize_t>index].kind != K_RECORD:
            raise KeyError(f"the schema has no record named {name!r}")
        return index

    def field_node(self, str record, Py_ssize_t position):
        """The node of the type of the field at ``position`` (0 the first) in
        the record named ``record`` (its full name), for skip_at. By
        position: a (fastavro dialect) record may repeat a field's name."""
        cdef Node* node = &self.nodes[<Py_ssize_t>self.record_node(record)]
        if position < 0 or position >= node.size:
            raise IndexError(f"the record {record!r} has no field at {position}")
        return self.fields[node.first + position].node

    cdef bint accepts_record_at(self, Py_ssize_t node, object value, int depth) except -1:
        # as the generated accepts_<record>(value, depth + 1)
        if node < 0 or node >= self.node_count or self.nodes[node].kind != K_RECORD:
            raise IndexError(u"not a record's node")
        return self.accepts(node, value, depth)

    # -- skipping (schema resolution: a writer's fields the reader lacks) ----

    cdef int skip_value(self, Reader* r, Py_ssize_t index, int depth) except -1:
        """Checks one value's bytes as reading it would (the compiled
        skippers' checks: ints' range, booleans, indexes, counts and the item
        budget, lengths), building nothing; logical types are not converted."""
        return self.pass_value(r, index, depth, False)

    cdef int check_value(self, Reader* r, Py_ssize_t index, int depth) except -1:
        """skip_value's checks and the others reading the value makes, at the
        same offsets: strings' and map keys' UTF-8, and logical types (their
        values are made and dropped). Builds no records, lists or dicts."""
        return self.pass_value(r, index, depth, True)

    cdef int pass_value(self, Reader* r, Py_ssize_t index, int depth, bint check) except -1:
        cdef Node* node = &self.nodes[index]
        cdef int kind = node.kind
        cdef long long count
        cdef long long position
        cdef Py_ssize_t number
        if check and node.logical:
            self.read_value(r, index, depth)
            return 0
        if kind == K_RECORD:
            depth += 1
            if depth > self.max_depth:
                raise_decode_error(r, u"records nested more than %d levels deep (CompileFlags.max_depth)"
                                   % self.max_depth, r.pos)
            if (depth & 31) == 31:
                check_read_stack(r, depth)
            for number in range(node.first, node.first + node.size):
                self.pass_value(r, self.fields[number].node, depth, check)
            return 0
        if kind == K_LONG:
            return skip_long(r)
        if kind == K_STRING:
            if check:
                return pass_str(r)
            return skip_length(r)
        if kind == K_BYTES:
            return skip_length(r)
        if kind == K_INT:
            read_int(r)
            return 0
        if kind == K_DOUBLE:
            return skip_raw(r, 8)
        if kind == K_FLOAT:
            return skip_raw(r, 4)
        if kind == K_BOOLEAN:
            read_boolean(r)
            return 0
        if kind == K_UNION:
            return self.pass_value(r, self.links[node.first + read_index(r, node.size)], depth, check)
        if kind == K_ARRAY or kind == K_MAP:
            count = read_block_count(r, node.min_size, self.max_items)
            while count:
                for position in range(count):
                    if kind == K_MAP:
                        if check:
                            pass_str(r)
                        else:
                            skip_length(r)
                    self.pass_value(r, node.first, depth, check)
                count = read_block_count(r, node.min_size, self.max_items)
            return 0
        if kind == K_ENUM:
            read_index(r, node.size)
            return 0
        if kind == K_FIXED:
            return skip_raw(r, node.size)
        return 0    # null: no bytes

    # -- counting the work done (the tiers' statistics and hot policy) ---------

    @property
    def work(self):
        """The bytes the entry points wrote or read."""
        return self.heat.work

    def watch(self, unsigned long long hot_at, on_hot):
        """Calls ``on_hot()`` once, from the call that brings the work done
        (bytes written and read) to ``hot_at``; 0 stops watching."""
        self.heat.watch(hot_at, on_hot)

    cdef int count_work(self, Py_ssize_t size) except -1:
        return self.heat.add(size)


# -- schema resolution: a writer's bytes read as a reader's values ---------------

# plan node kinds (roastedavro.avro.resolve's plan, one node per use; one per
# pair of records, so recursive pairs are cycles)
cdef enum:
    P_READ = 0          # the reader's node `node` reads the writer's bytes (Read)
    P_TO_FLOAT = 1      # an int or long read as a float (Promote)
    P_TO_DOUBLE = 2     # an int or long read as a double
    P_FLOAT_TO_DOUBLE = 3
    P_ENUM = 4          # obj: the reader's symbol of each writer's index (None: none),
                        # obj2: the message of each None; size: the writer's symbols
    P_ARRAY = 5         # first: the items' plan; min_size: the writer's item size
    P_MAP = 6
    P_WRITER_UNION = 7  # size: the writer's branches, their plans in links from first
    P_RECORD = 8        # a pair of records: size steps from first; obj: the reader's RecordKeys
    P_FAIL = 9          # obj: the message of an unreadable part (Unreadable)
    P_WRITTEN = 10      # the writer's node `node` reads the bytes, logical type and all
                        # (fastavro's rule, taken by the drop-in)

# a pair's steps, the writer's fields in order, then the reader's defaults
cdef enum:
    S_READ = 0          # plan node `node` into the reader's field `slot`
    S_SKIP = 1          # the writer's node `node` skipped (the reader has no such field)
    S_CONSTANT = 2      # `value`, shared (an immutable default)
    S_LIST = 3          # a new []
    S_DICT = 4          # a new {}
    S_DEFAULT = 5       # the reader's node `node` read from `value`, the default's encoding

cdef struct PlanNode:
    int kind
    Py_ssize_t node
    Py_ssize_t size
    Py_ssize_t first
    Py_ssize_t min_size
    PyObject* obj
    PyObject* obj2

cdef struct Step:
    int action
    Py_ssize_t node
    Py_ssize_t slot
    PyObject* name
    PyObject* value


def _unreadable_message(plan):
    """An Unreadable part's message where data reaches it (resolvegen's)."""
    where = ", ".join(part for part in (
        f"writer's {plan.writer_path}" if plan.writer_path else "",
        f"reader's {plan.reader_path}" if plan.reader_path else "") if part)
    return f"{plan.reason}" + (f" ({where})" if where else "")


#: the logical types fastavro 1.13 converts when it reads (its LOGICAL_READERS);
#: it reads the others (timestamp-nanos, big-decimal, uuid on fixed, duration)
#: as their underlying type's values. A model of the fastavro dialect has no
#: others; one of the specification's (the Kafka deserializer's) may.
from roastedavro.avro.parse import FASTAVRO_LOGICAL as _FASTAVRO_LOGICAL


def _fastavro_logical(avro):
    """The logical type fastavro converts ``avro``'s values by, or None."""
    logical = avro.logical
    if logical is None:
        return None
    kind = "fixed" if hasattr(avro, "size") else avro.name
    return logical if (kind, logical.name) in _FASTAVRO_LOGICAL else None


class _ResolutionProgram:
    """The plan of a (writer, reader) pair as Python lists, before they
    become C arrays; the reader's and the writer's plain programs read and
    skip the values the plan leaves to them."""

    def __init__(self, resolution, naming=None, fastavro_values=False, branches=False):
        import importlib
        plans = importlib.import_module("roastedavro.avro.resolve")    # the plan's node classes
        from roastedavro.resolvegen import _NOT_CONSTANT, _constant_default

        self.p = plans
        self.constant_default = _constant_default
        self.not_constant = _NOT_CONSTANT
        self.resolution = resolution
        self.reader = _Program(resolution.reader, branches=branches)
        self.writer = _Program(resolution.writer, defaults=False)
        self.branches = branches
        self.plans = []     # dicts of PlanNode's fields
        self.links = []     # a writer union's branch plans
        self.steps = []     # dicts of Step's fields
        self.pairs = {}     # (writer name, reader name) -> plan node index
        self.keep = []
        self.naming = naming if naming is not None and any(naming) else None
        # fastavro's values: the writer's logical types convert, the reader's
        # are not looked at, and an int promoted to float is not rounded
        self.fastavro_values = fastavro_values or self.naming is not None
        # whether those values differ from the resolution's (Java's) for some datum
        self.fastavro_differs = False
        root = resolution.root
        # a record at the root is read at depth 0, anything else's records at 1
        self.root_record = isinstance(root, plans.RecordRef) and resolution.record(root).error is None
        self.root = self.plan(root)

    def add(self, **values):
        self.plans.append(values)
        return len(self.plans) - 1

    def fail(self, unreadable):
        message = _unreadable_message(unreadable)
        self.keep.append(message)
        return self.add(kind=P_FAIL, obj=message)

    def plan(self, plan):
        p = self.p
        if isinstance(plan, p.ReaderUnion):
            return self.plan(plan.plan)
        if isinstance(plan, p.Read):
            if self.fastavro_values:
                return self.fastavro_read(plan)
            return self.add(kind=P_READ, node=self.reader.node(plan.reader))
        if isinstance(plan, p.Promote):
            if self.fastavro_values:
                if _fastavro_logical(plan.writer) is not None:
                    # fastavro converts by the writer's logical type and promotes no further
                    self.fastavro_differs = True
                    return self.add(kind=P_WRITTEN, node=self.writer.node(plan.writer))
                if plan.writer.name in ("int", "long"):
                    # fastavro's float(value) is a double, whatever the reader says
                    self.fastavro_differs = self.fastavro_differs or plan.reader.name == "float"
                    return self.add(kind=P_TO_DOUBLE)
            if plan.writer.name == "float":
                return self.add(kind=P_FLOAT_TO_DOUBLE)
            return self.add(kind=P_TO_FLOAT if plan.reader.name == "float" else P_TO_DOUBLE)
        if isinstance(plan, p.EnumMap):
            symbols = tuple(plan.symbols)
            messages = plan.unknown_messages()
            self.keep += [symbols, messages]
            return self.add(kind=P_ENUM, obj=symbols, obj2=messages, size=len(plan.writer.symbols))
        if isinstance(plan, p.Container):
            is_map = hasattr(plan.writer, "values")
            element = plan.writer.values if is_map else plan.writer.items
            index = self.add(kind=P_MAP if is_map else P_ARRAY,
                             min_size=self.writer.sizes.of(element) + (1 if is_map else 0))
            self.plans[index]["first"] = self.plan(plan.element)
            return index
        if isinstance(plan, p.WriterUnion):
            names = None
            reader = self.resolution.reader.deref(plan.reader)
            if self.branches and isinstance(reader, p.Union) and branch_indexes(reader) is not None:
                # the reader's branch each writer's branch is read as
                names = tuple(
                    branch.index if isinstance(branch, p.ReaderUnion)
                    else None if isinstance(branch, p.Unreadable)
                    else number
                    for number, branch in enumerate(plan.branches))
                self.keep.append(names)
            elif self.naming is not None:
                # the names of the reader's branches where the reader has a union
                reader_branches = None
                reader = self.resolution.reader.deref(plan.reader)
                if isinstance(reader, p.Union):
                    # a branch's plan picks one (ReaderUnion), or the unions
                    # are equivalent, branch for branch
                    reader_branches = [
                        branch.reader.branches[branch.index] if isinstance(branch, p.ReaderUnion)
                        else None if isinstance(branch, p.Unreadable)
                        else reader.branches[number]
                        for number, branch in enumerate(plan.branches)]
                names = union_names(plan.writer, self.resolution.writer, self.naming,
                                    self.resolution.reader, reader_branches)
                self.keep.append(names)
            index = self.add(kind=P_WRITER_UNION, size=len(plan.branches), obj=names)
            branches = [self.plan(branch) for branch in plan.branches]
            self.plans[index]["first"] = len(self.links)
            self.links.extend(branches)
            return index
        if isinstance(plan, p.RecordRef):
            error = self.resolution.record(plan).error
            if error is not None:
                return self.fail(error)
            return self.pair(plan)
        if isinstance(plan, p.Unreadable):
            return self.fail(plan)
        raise AssertionError(f"no node for {plan!r}")    # pragma: no cover

    def fastavro_read(self, plan):
        """A Read by fastavro's rule: the writer's logical type and its
        parameters (a decimal's scale) convert the value, whatever the
        reader's says; without one the value is the reader's plain type (a
        string read as bytes is bytes, even where the reader's say decimal)."""
        writer_logical = _fastavro_logical(plan.writer)
        if writer_logical is not None:
            if writer_logical != plan.reader.logical:
                self.fastavro_differs = True
            return self.add(kind=P_WRITTEN, node=self.writer.node(plan.writer))
        if plan.reader.logical is not None or plan.writer.logical is not None:
            self.fastavro_differs = True
        return self.add(kind=P_READ, node=self.reader.plain_node(plan.reader))

    def pair(self, ref):
        known = self.pairs.get(ref.key)
        if known is not None:
            return known
        pair = self.resolution.record(ref)
        # the keys in the reader's order, or fastavro's (the plan's)
        keys = RecordKeys(pair.order)
        self.keep.append(keys)
        count = len(pair.steps) + len(pair.defaults)
        first = len(self.steps)
        self.steps.extend([None] * count)   # the pair's steps take consecutive entries
        index = self.pairs[ref.key] = self.add(kind=P_RECORD, obj=keys, size=count, first=first)
        slots = {name: slot for slot, name in enumerate(pair.order)}
        written = self.writer.nodes[self.writer.named[pair.writer.name]]["first"]
        for number, step in enumerate(pair.steps):
            if step.reader is None:
                # the writer's own node of the field: skipped as the writer wrote it
                self.steps[first + number] = dict(
                    action=S_SKIP, node=self.writer.fields[written + number][0])
            else:
                self.keep.append(step.reader.name)
                self.steps[first + number] = dict(
                    action=S_READ, node=self.plan(step.plan), slot=slots[step.reader.name],
                    name=step.reader.name)
        for number, field in enumerate(pair.defaults, len(pair.steps)):
            self.steps[first + number] = self.default(field, pair.reader, slots[field.name])
        return index

    def default(self, field, record, slot):
        """A reader's field the writer lacks: its default as the compiled
        resolving reader gives it (resolvegen's default)."""
        from roastedavro.avro.types import Array, Map
        reader = self.resolution.reader
        avro = reader.deref(field.type)
        value = field.default
        step = dict(slot=slot, name=field.name)
        self.keep.append(field.name)
        constant = self.constant_default(avro, value)
        if constant is not self.not_constant:
            self.keep.append(constant)
            step.update(action=S_CONSTANT, value=constant)
        elif isinstance(avro, Array) and value == []:
            step.update(action=S_LIST)
        elif isinstance(avro, Map) and value == {}:
            step.update(action=S_DICT)
        else:
            # read from its encoding each time, as Java reads a default
            encoded = encode_default(field.type, value, reader, f"{record.name}.{field.name}")
            self.keep.append(encoded)
            step.update(action=S_DEFAULT, node=self.reader.node(field.type), value=encoded)
        return step


@cython.final
cdef class ResolvingInterpreter(DatumCodec):
    """Reads data written with one plain Avro schema as another's values, as
    the compiled resolving codec (AvroCodec(reader, writer_schema=writer))
    does: from the same resolution plan (roastedavro.avro.resolve), with the
    same values, errors and bounds.

    Its entry points are those of a compiled resolving module's Codec: load,
    load_from, load_one, load_block and load_block_within. ``calls``,
    ``work`` and ``watch`` count and watch its work as an Interpreter's do.
    """

    cdef PlanNode* plans
    cdef Py_ssize_t* links
    cdef Step* steps
    cdef Py_ssize_t root
    cdef bint root_record
    cdef list keep
    cdef Interpreter reader     # reads the reader's types and defaults; counts this one's work
    cdef Interpreter writer     # skips the writer's values the reader has no field for
    cdef readonly object schema
    cdef readonly object writer_schema
    cdef readonly bint fastavro_differs    # see __init__

    def __cinit__(self):
        self.plans = NULL
        self.links = NULL
        self.steps = NULL

    def __init__(self, writer_schema, reader_schema, flags=None, naming=None, unicode_errors=None,
                 fastavro_values=False, branches=False):
        """``branches``: each value of a reader's union (other than a null
        and one type's) read as (the reader's branch index, value), as
        Interpreter's; a writer's value read into a reader's union that the
        writer did not have is left as it is.
        ``naming``: fastavro's naming options, as Interpreter's; the names
        are the reader's where the reader has a union. ``unicode_errors``:
        as Interpreter's. ``fastavro_values`` (and any naming option) reads
        fastavro's values where they are not the resolution's: the writer's
        logical types convert, the reader's are not looked at, and an int
        read as a float is not rounded to 32 bits. ``fastavro_differs`` then
        says whether the pair has such a place."""
        cdef Py_ssize_t index
        cdef PlanNode* plan
        cdef Step* step
        from roastedavro.avro.resolve import resolve
        from roastedavro.errors import CompileError
        if flags is None:
            from roastedavro.flags import CompileFlags
            flags = CompileFlags()
        if self.plans != NULL:
            raise TypeError("a ResolvingInterpreter is initialised once")
        for schema in (writer_schema, reader_schema):
            if not isinstance(schema, Schema):
                raise TypeError(f"a ResolvingInterpreter takes parsed schemas "
                                f"(roastedavro.avro.parse_schema), not {type(schema).__name__}")
        try:
            resolution = resolve(writer_schema, reader_schema)
        except RecursionError:
            raise CompileError("the schemas nest too deeply to resolve within Python's recursion "
                               "limit; no reader is built for the pair") from None
        # a pair no datum can be read across: SchemaResolutionError, as the compiled codec
        resolution.check()
        if branches and naming is not None and any(naming):
            raise ValueError("a ResolvingInterpreter reads unions' branches by index or by fastavro's "
                             "names, not both")
        program = _ResolutionProgram(resolution, _naming(naming), fastavro_values, branches)
        self.fastavro_differs = program.fastavro_differs
        self.schema = reader_schema
        self.writer_schema = writer_schema
        self.keep = program.keep
        self.max_depth = flags.max_depth
        self.max_items = flags.max_items
        self.item_allowance = flags.item_allowance
        self.root = program.root
        self.root_record = program.root_record
        self.min_size = program.writer.sizes.of(writer_schema.root)
        self.counts_work = True
        self.reader = Interpreter.__new__(Interpreter)
        self.reader.load_program(program.reader, flags)
        self.writer = Interpreter.__new__(Interpreter)
        self.writer.load_program(program.writer, flags)
        self.reader.set_unicode_errors(unicode_errors)
        self.writer.set_unicode_errors(unicode_errors)
        self.plans = <PlanNode*>calloc(max(len(program.plans), 1), sizeof(PlanNode))
        self.links = <Py_ssize_t*>calloc(max(len(program.links), 1), sizeof(Py_ssize_t))
        self.steps = <Step*>calloc(max(len(program.steps), 1), sizeof(Step))
        if self.plans == NULL or self.links == NULL or self.steps == NULL:
            raise MemoryError()
        for index, values in enumerate(program.plans):
            plan = &self.plans[index]
            plan.kind = values["kind"]
            plan.node = values.get("node", 0)
            plan.size = values.get("size", 0)
            plan.first = values.get("first", 0)
            plan.min_size = values.get("min_size", 0)
            plan.obj = <PyObject*>values["obj"] if values.get("obj") is not None else NULL
            plan.obj2 = <PyObject*>values["obj2"] if values.get("obj2") is not None else NULL
        for index, link in enumerate(program.links):
            self.links[index] = link
        for index, values in enumerate(program.steps):
            step = &self.steps[index]
            step.action = values["action"]
            step.node = values.get("node", 0)
            step.slot = values.get("slot", 0)
            step.name = <PyObject*>values["name"] if values.get("name") is not None else NULL
            # a constant default may be None (kept, as every value, by self.keep)
            value = values.get("value")
            step.value = <PyObject*>value

    def __dealloc__(self):
        free(self.plans)
        free(self.links)
        free(self.steps)

    # -- reading -----------------------------------------------------------

    cdef dict read_pair(self, Reader* r, PlanNode* plan, int depth):
        cdef RecordKeys keys = <RecordKeys>plan.obj
        cdef dict record = new_record(keys)
        cdef PyObject** values = record_values(record, keys)
        cdef Py_ssize_t number
        cdef Step* step
        cdef PlanNode* target
        cdef int action
        cdef object value
        if depth > self.max_depth:
            raise_decode_error(r, u"records nested more than %d levels deep (CompileFlags.max_depth)"
                               % self.max_depth, r.pos)
        if (depth & 31) == 31:
            check_read_stack(r, depth)
        for number in range(plan.first, plan.first + plan.size):
            step = &self.steps[number]
            action = step.action
            if action == S_READ:
                target = &self.plans[step.node]
                if target.kind == P_READ:    # a value of a type both share: the reader's read
                    value = self.reader.read_value(r, target.node, depth)
                else:
                    value = self.read_plan(r, step.node, depth)
                set_field(record, values, step.slot, <object>step.name, value)
            elif action == S_SKIP:
                self.writer.skip_value(r, step.node, depth)
            elif action == S_CONSTANT:
                set_field(record, values, step.slot, <object>step.name, <object>step.value)
            elif action == S_LIST:
                set_field(record, values, step.slot, <object>step.name, [])
            elif action == S_DICT:
                set_field(record, values, step.slot, <object>step.name, {})
            else:
                set_field(record, values, step.slot, <object>step.name, self.read_default(step, depth))
        return record

    cdef object read_default(self, Step* step, int depth):
        cdef Reader reader
        cdef Py_buffer view
        cdef int acquired = open_reader(&reader, <bytes>step.value, &view, self.item_allowance)
        try:
            return self.reader.read_value(&reader, step.node, depth)
        finally:
            close_reader(&view, acquired)

    cdef object read_plan(self, Reader* r, Py_ssize_t index, int depth):
        cdef PlanNode* plan = &self.plans[index]
        cdef int kind = plan.kind
        cdef Py_ssize_t start
        cdef int symbol
        if kind == P_WRITER_UNION:
            if plan.obj != NULL:
                return self.read_named(r, plan, depth)
            # the branch is read in this frame, not one more per union
            plan = &self.plans[self.links[plan.first + read_index(r, plan.size)]]
            kind = plan.kind
        if kind == P_READ:
            return self.reader.read_value(r, plan.node, depth)
        if kind == P_WRITTEN:
            return self.writer.read_value(r, plan.node, depth)
        if kind == P_RECORD:
            return self.read_pair(r, plan, depth + 1)
        if kind == P_TO_DOUBLE:
            return <double>read_long(r)
        if kind == P_TO_FLOAT:
            return <double><float>read_long(r)
        if kind == P_FLOAT_TO_DOUBLE:
            return read_float(r)
        if kind == P_ENUM:
            start = r.pos
            symbol = read_index(r, plan.size)
            value = (<tuple>plan.obj)[symbol]
            if value is None:
                raise_unreadable(r, <str>(<tuple>plan.obj2)[symbol], start)
            return value
        if kind == P_ARRAY:
            return self.read_array(r, plan, depth)
        if kind == P_MAP:
            return self.read_map(r, plan, depth)
        raise_unreadable(r, <str>plan.obj, r.pos)    # P_FAIL

    cdef object read_named(self, Reader* r, PlanNode* plan, int depth):
        """A writer's union's value under fastavro's naming options (plan.obj)."""
        cdef Py_ssize_t branch = read_index(r, plan.size)
        value = self.read_plan(r, self.links[plan.first + branch], depth)
        name = (<tuple>plan.obj)[branch]
        return value if name is None else (name, value)

    cdef list read_array(self, Reader* r, PlanNode* plan, int depth):
        cdef Py_ssize_t child = plan.first
        cdef long long count = read_block_count(r, plan.min_size, self.max_items)
        cdef long long position
        cdef list items = new_items(count)
        while count:
            for position in range(count):
                put_item(items, self.read_plan(r, child, depth))
            count = read_block_count(r, plan.min_size, self.max_items)
        return items

    cdef dict read_map(self, Reader* r, PlanNode* plan, int depth):
        cdef Py_ssize_t child = plan.first
        cdef long long count = read_block_count(r, plan.min_size, self.max_items)
        cdef long long position
        cdef dict entries = new_record_dict(count)
        cdef str key
        while count:
            for position in range(count):
                key = read_key(r) if self.reader.errors == NULL else self.reader.read_text(r)
                entries[key] = self.read_plan(r, child, depth)
            count = read_block_count(r, plan.min_size, self.max_items)
        return entries

    cdef object read_datum(self, Reader* r):
        if self.root_record:
            return self.read_pair(r, &self.plans[self.root], 0)
        return self.read_plan(r, self.root, 0)

    # -- counting: the reader's Interpreter counts for the pair ---------------

    @property
    def work(self):
        """The bytes the calls read."""
        return self.reader.work

    def watch(self, unsigned long long hot_at, on_hot):
        """Calls ``on_hot()`` once, from the call that brings the work done
        (bytes read) to ``hot_at``; 0 stops watching (Interpreter.watch)."""
        self.reader.watch(hot_at, on_hot)

    cdef int count_work(self, Py_ssize_t size) except -1:
        self.reader.calls += 1
        return self.reader.count_work(size)


value_writer = <ValueWriter>write_value_of
no_value = <Raiser>no_value_error
resized = <Raiser>resized_error


# -- rearranging: another writer's bytes as the reader's, without values ---------

# moves
cdef enum:
    M_COPY = 0          # the writer's bytes are the reader's: copied as they are
    M_RECORD = 1        # a pair of records: fields moved to the reader's order
    M_ARRAY = 2         # items moved one by one
    M_MAP = 3
    M_UNION = 4         # the writer's branch to the reader's (or, where the reader
                        # has no union, to the reader's type)
    M_INTO_UNION = 5    # a writer's value as a branch of the reader's union
    M_PROMOTE = 6       # a number promoted (int to float, ...): the runtime's promote_into
    M_ENUM = 7          # an enum's symbol renumbered: the runtime's remap_into
    M_TEXT = 8          # bytes read as a string: copied once checked as UTF-8 where written
    M_FAIL = 9          # a part the reader cannot read (Unreadable): an error where data reaches it

cdef struct Move:
    int kind
    Py_ssize_t node     # COPY: the writer's node, skipped to find the value's end
    Py_ssize_t check    # COPY: -1, or the reader's node, whose reading checks more than
                        # skipping does (UTF-8, logical types): errors at the writer's offsets
    Py_ssize_t first    # RECORD: first place; ARRAY, MAP, INTO_UNION: the element's move;
                        # UNION: first link
    Py_ssize_t size     # RECORD: places; UNION: the writer's branches; INTO_UNION: the branch;
                        # PROMOTE: the runtime's PROMOTE_* kind
    Py_ssize_t slots    # RECORD: the reader's fields; UNION: 1 where the reader has a union
    Py_ssize_t min_size # ARRAY, MAP: the fewest bytes a writer's item takes
    PyObject* value     # ENUM: the reader's index of each writer's symbol; FAIL: the message
    PyObject* value2    # ENUM: the message of each symbol the reader cannot read

cdef struct Place:
    Py_ssize_t move     # the writer field's move; -1: skipped (node); -2: a default (value)
    Py_ssize_t node
    Py_ssize_t slot     # the reader's field
    PyObject* value     # a default's encoding (bytes)

cdef struct Link:
    Py_ssize_t branch   # the reader's branch
    Py_ssize_t move

cdef struct Piece:
    const char* data
    Py_ssize_t size
    PyObject* owner     # a bytes object holding data, else NULL (the input)
    bint ready


class _Unsupported(Exception):
    """A plan the moves have no kind for (none that resolve() makes today:
    a new kind of plan falls back to being read and written again, never
    to wrong bytes)."""


#: the runtime's promotion of a writer's number to a reader's type (Java's)
_PROMOTIONS = {
    ("int", "float"): PROMOTE_INT_FLOAT,
    ("int", "double"): PROMOTE_INT_DOUBLE,
    ("long", "float"): PROMOTE_LONG_FLOAT,
    ("long", "double"): PROMOTE_LONG_DOUBLE,
    ("float", "double"): PROMOTE_FLOAT_DOUBLE,
}


class _MovePlan:
    """A resolution's moves as Python lists, before they become C arrays."""

    def __init__(self, resolution):
        import importlib
        self.p = importlib.import_module("roastedavro.avro.resolve")
        self.resolution = resolution
        self.writer = _Program(resolution.writer, defaults=False)
        self.reader = _Program(resolution.reader, defaults=False)
        self.checked = {}       # reader's named type -> whether reading checks more than skipping
        self.moves = []
        self.places = []
        self.links = []
        self.records = {}       # pair key -> move index
        self.copyable_pairs = {}  # pair key -> bool (True while in progress)
        self.keep = []
        resolver = self.p._Resolver(resolution.writer, resolution.reader)
        self.resolution_equivalent = lambda writer, reader: resolver.equivalent(writer, reader, {})
        self.root = self.move(resolution.root)
        # every pair has its record move, for field_move (one copied whole
        # included), unless the moves cannot convert it
        for key in resolution.records:
            if key not in self.records:
                self.record_or_none(key)

    def record_or_none(self, key):
        sizes = (len(self.moves), len(self.places), len(self.links), len(self.keep))
        records = dict(self.records)
        try:
            self.record_pair(key)
        except _Unsupported:
            del self.moves[sizes[0]:], self.places[sizes[1]:], self.links[sizes[2]:], self.keep[sizes[3]:]
            self.records = records

    def add(self, **values):
        self.moves.append(values)
        return len(self.moves) - 1

    def move(self, plan):
        p = self.p
        if self.copyable(plan):
            check = self.reader.node(plan.reader) if self.checks(plan.reader) else -1
            return self.add(kind=M_COPY, node=self.writer.node(plan.writer), check=check)
        if isinstance(plan, p.RecordRef):
            return self.record(plan)
        if isinstance(plan, p.Container):
            element = self.move(plan.element)
            sizes = self.writer.sizes
            if plan.writer.type_name == "array":
                return self.add(kind=M_ARRAY, first=element, min_size=sizes.of(plan.writer.items))
            return self.add(kind=M_MAP, first=element, min_size=1 + sizes.of(plan.writer.values))
        if isinstance(plan, p.WriterUnion):
            into_union = isinstance(plan.reader, Union)
            links = []
            for number, branch in enumerate(plan.branches):
                if isinstance(branch, p.ReaderUnion):
                    links.append((branch.index, self.move(branch.plan)))
                elif into_union and self.equivalent(plan):
                    # unions alike: each branch read as the reader's same branch
                    links.append((number, self.move(branch)))
                elif not into_union or isinstance(branch, p.Unreadable):
                    # the reader's type itself, or a branch it cannot read
                    links.append((-1, self.move(branch)))
                else:
                    raise _Unsupported()
            first = len(self.links)
            self.links.extend(links)
            return self.add(kind=M_UNION, first=first, size=len(links), slots=int(into_union))
        if isinstance(plan, p.ReaderUnion):
            return self.add(kind=M_INTO_UNION, first=self.move(plan.plan), size=plan.index)
        if isinstance(plan, p.Promote):
            return self.add(kind=M_PROMOTE, size=_PROMOTIONS[plan.writer.name, plan.reader.name])
        if isinstance(plan, p.EnumMap):
            indexes, messages = plan.indexes(), plan.unknown_messages()
            self.keep += [indexes, messages]
            return self.add(kind=M_ENUM, value=indexes, value2=messages)
        if isinstance(plan, p.Read):
            # the one Read that copyable() leaves: bytes read as a string
            return self.add(kind=M_TEXT)
        if isinstance(plan, p.Unreadable):
            return self.fail(plan)
        raise _Unsupported()

    def fail(self, unreadable):
        """An error where data reaches ``unreadable``, in the words of the
        pair's resolving reader (tier 0's and the compiled one's)."""
        message = _unreadable_message(unreadable)
        self.keep.append(message)
        return self.add(kind=M_FAIL, value=message)

    def equivalent(self, plan):
        """Whether the resolver took a writer's union as the reader's, branch
        by branch (its branches' plans then name no reader branch)."""
        return self.resolution_equivalent(plan.writer, plan.reader)

    def checks(self, avro):
        """Whether reading the reader's type ``avro`` checks more than
        skipping the writer's same bytes does: strings and map keys (UTF-8),
        logical types (their ranges and forms)."""
        avro = self.resolution.reader.deref(avro)
        if isinstance(avro, (Primitive, Fixed)):
            return avro.logical is not None or (isinstance(avro, Primitive) and avro.name == "string")
        if isinstance(avro, Map):
            return True
        if isinstance(avro, Array):
            return self.checks(avro.items)
        if isinstance(avro, Union):
            return any(self.checks(branch) for branch in avro.branches)
        if isinstance(avro, Record):
            known = self.checked.get(avro.name)
            if known is None:
                self.checked[avro.name] = False    # met again within itself: its fields say
                known = self.checked[avro.name] = any(self.checks(field.type) for field in avro.fields)
            return known
        return False    # null, enums

    def record(self, ref):
        return self.record_pair(ref.key)

    def record_pair(self, key):
        known = self.records.get(key)
        if known is not None:
            return known
        record = self.resolution.records[key]
        if record.error is not None:
            index = self.records[key] = self.fail(record.error)
            return index
        index = self.records[key] = self.add(kind=M_RECORD)
        slots = {field.name: number for number, field in enumerate(record.reader.fields)}
        places = []
        for step in record.steps:
            if step.reader is None:
                places.append((-1, self.writer.node(step.writer.type), 0, None))
            else:
                places.append((self.move(step.plan), 0, slots[step.reader.name], None))
        for field in record.defaults:
            default = encode_default(field.type, field.default, self.resolution.reader,
                                     f"{record.reader.name}.{field.name}")
            self.keep.append(default)
            places.append((-2, 0, slots[field.name], default))
        first = len(self.places)
        self.places.extend(places)
        self.moves[index].update(first=first, size=len(places), slots=len(record.reader.fields))
        return index

    def copyable(self, plan):
        """Whether the writer's bytes of ``plan`` are the reader's as they are."""
        p = self.p
        if isinstance(plan, p.Read):
            # bytes read as a string are checked as UTF-8 where they are read,
            # so that an error has the writer's offset
            return not (getattr(plan.writer, "name", None) == "bytes"
                        and getattr(plan.reader, "name", None) == "string")
        if isinstance(plan, p.Container):
            return self.copyable(plan.element)
        if isinstance(plan, p.EnumMap):
            return tuple(plan.symbols) == tuple(plan.reader.symbols)
        if isinstance(plan, p.WriterUnion):
            if not isinstance(plan.reader, Union) or len(plan.reader.branches) != len(plan.branches):
                return False
            for number, branch in enumerate(plan.branches):
                if isinstance(branch, p.ReaderUnion):
                    if branch.index != number or not self.copyable(branch.plan):
                        return False
                elif not (self.equivalent(plan) and self.copyable(branch)):
                    return False
            return True
        if isinstance(plan, p.RecordRef):
            known = self.copyable_pairs.get(plan.key)
            if known is not None:
                return known
            # a pair met again while it is checked (recursion) counts as not
            # copyable: a pair checked meanwhile then says "not copyable" at
            # worst, which moves its fields one by one (always right)
            self.copyable_pairs[plan.key] = False
            record = self.resolution.record(plan)
            same = record.error is None and not record.defaults and len(record.steps) == len(
                record.reader.fields) and all(
                step.reader is record.reader.fields[number] and self.copyable(step.plan)
                for number, step in enumerate(record.steps))
            self.copyable_pairs[plan.key] = same
            return same
        return False


cdef int move_hook(object mover, Reader* r, Py_ssize_t index, int depth, Writer* w) except -1:
    # one value at r moved by ``index`` (field_move) into the reader's
    # encoding at w; errors at their offsets in r
    return (<Rearranger>mover).move_value(r, w, index, depth)


cdef class Rearranger(Transcoder):
    """Data written with one schema as the bytes of another (the reader's),
    where resolution only moves bytes: fields reordered, dropped or added
    from their defaults, records nested in arrays, maps and unions, unions
    whose branches are renumbered or that became or stopped being unions,
    promotions (int to long and string to bytes copied, int to double and
    the like converted as Java converts them), enums whose symbols are
    renumbered. No record, list or dict is built: the writer's values are
    skipped (checked as reading them would; where the reader's reading
    checks more, strings' UTF-8 and logical types, as the reader reads them)
    and copied, or converted one number at a time. A part the reader cannot
    read fails where data reaches it, with the pair's resolving reader's
    error and offset.

    ``Rearranger.build(writer, reader, flags)`` is None for a pair the
    reader cannot read at all (SchemaResolutionError, raised by the
    resolving reader), and for schemas nested too deeply to plan within
    Python's recursion limit (the resolving reader then says so).
    """

    cdef Move* moves
    cdef Place* places
    cdef Link* links
    cdef Py_ssize_t root
    cdef Interpreter writer     # skips the writer's values, with its checks and bounds
    cdef Interpreter reader     # checks the values copied where reading them checks more
    cdef list keep
    cdef dict record_moves      # a record pair's key -> its move (field_move)
    cdef int max_depth
    cdef Py_ssize_t max_items
    cdef long long item_allowance
    #: the bytes transcoded (a compiled pair is built once they reach the
    #: threshold given to watch)
    cdef Heat heat
    cdef readonly unsigned long long calls

    def __cinit__(self):
        self.moves = NULL
        self.places = NULL
        self.links = NULL
        self.heat = Heat.__new__(Heat)

    def __dealloc__(self):
        free(self.moves)
        free(self.places)
        free(self.links)

    @staticmethod
    def build(writer_schema, reader_schema, flags=None):
        cdef Rearranger self
        from roastedavro.avro.resolve import resolve
        if flags is None:
            from roastedavro.flags import CompileFlags
            flags = CompileFlags()
        try:
            resolution = resolve(writer_schema, reader_schema)
            resolution.check()
            plan = _MovePlan(resolution)
        except (_Unsupported, RecursionError):
            return None
        except Exception:
            # SchemaResolutionError and the like: the reader that reads the
            # values says it, as before
            return None
        self = Rearranger.__new__(Rearranger)
        self.load(plan, flags)
        return self

    cdef int load(self, plan, flags) except -1:
        cdef Move* move
        cdef Place* place
        self.keep = plan.keep
        self.root = plan.root
        self.record_moves = dict(plan.records)
        self.max_depth = flags.max_depth
        self.max_items = flags.max_items
        self.item_allowance = flags.item_allowance
        self.writer = Interpreter.__new__(Interpreter)
        self.writer.load_program(plan.writer, flags)
        self.reader = Interpreter.__new__(Interpreter)
        self.reader.load_program(plan.reader, flags)
        self.moves = <Move*>calloc(max(len(plan.moves), 1), sizeof(Move))
        self.places = <Place*>calloc(max(len(plan.places), 1), sizeof(Place))
        self.links = <Link*>calloc(max(len(plan.links), 1), sizeof(Link))
        if self.moves == NULL or self.places == NULL or self.links == NULL:
            raise MemoryError()
        for index, values in enumerate(plan.moves):
            move = &self.moves[index]
            move.kind = values["kind"]
            move.node = values.get("node", 0)
            move.check = values.get("check", -1)
            move.first = values.get("first", 0)
            move.size = values.get("size", 0)
            move.slots = values.get("slots", 0)
            move.min_size = values.get("min_size", 0)
            # kept alive by self.keep
            move.value = <PyObject*>values["value"] if "value" in values else NULL
            move.value2 = <PyObject*>values["value2"] if "value2" in values else NULL
        for index, (moved, node, slot, value) in enumerate(plan.places):
            place = &self.places[index]
            place.move = moved
            place.node = node
            place.slot = slot
            place.value = <PyObject*>value if value is not None else NULL
        for index, (branch, moved) in enumerate(plan.links):
            self.links[index].branch = branch
            self.links[index].move = moved
        return 0

    def __init__(self):
        raise TypeError("a Rearranger is made by Rearranger.build(writer, reader, flags)")

    cdef bytes transcode_bytes(self, object data):
        """The reader's bytes of ``data`` (one datum of the writer's schema,
        nothing after it); DecodeError with the offset in ``data`` for bytes
        the writer's schema cannot have written."""
        cdef Reader r
        cdef Py_buffer view
        cdef Writer w
        cdef int acquired
        if self.moves == NULL:
            raise TypeError("a Rearranger is made by Rearranger.build(writer, reader, flags)")
        acquired = open_reader(&r, data, &view, self.item_allowance)
        writer_init(&w)
        try:
            self.move_value(&r, &w, self.root, 0)
            check_finished(&r)
            self.calls += 1
            self.heat.add(r.end)
            return writer_finish(&w)
        finally:
            writer_release(&w)
            close_reader(&view, acquired)

    def transcode_block_within(self, data, long long count, long long allowance):
        """The reader's bytes of a block's ``count`` data of the writer's
        schema (one after another, filling ``data``), and what is left of
        the item budget, as a codec's load_block_within: the data's length
        plus ``allowance`` pays for the data and their items. For a reader
        of the reader's bytes into a form of its own (Arrow columns);
        DecodeError with the offset in ``data``."""
        cdef Reader r
        cdef Py_buffer view
        cdef Writer w
        cdef long long number
        cdef int acquired
        if self.moves == NULL:
            raise TypeError("a Rearranger is made by Rearranger.build(writer, reader, flags)")
        if allowance < 0:
            raise ValueError(u"a negative item allowance")
        acquired = open_reader(&r, data, &view, allowance)
        writer_init(&w)
        try:
            if count < 0:
                raise DecodeError(u"a block of %d values" % count, 0)
            check_count(&r, count, self.writer.min_size, 9223372036854775807, 0)
            for number in range(count):
                self.move_value(&r, &w, self.root, 0)
            if r.pos != r.end:
                raise DecodeError(u"%d bytes left in the block after its %d values"
                                  % (r.end - r.pos, count), r.pos)
            self.calls += 1
            self.heat.add(r.end)
            return writer_finish(&w), r.budget
        finally:
            writer_release(&w)
            close_reader(&view, acquired)

    @property
    def work(self):
        """The bytes transcoded."""
        return self.heat.work

    def field_move(self, tuple pair, Py_ssize_t position):
        """The move of the writer's field at ``position`` (0 the first) in the
        record pair ``pair`` (its key in the resolution: the writer's and the
        reader's full names), for move_written; -1 where the field is not
        read (dropped, or a pair that fails)."""
        cdef Move* move
        cdef Place* place
        index = self.record_moves.get(pair)
        if index is None:
            raise KeyError(f"no record pair {pair!r}")
        move = &self.moves[<Py_ssize_t>index]
        if move.kind != M_RECORD:
            return -1
        if position < 0 or position >= move.size:
            raise IndexError(f"the record pair {pair!r} has no field at {position}")
        place = &self.places[move.first + position]
        return place.move if place.move >= 0 else -1


    def watch(self, unsigned long long hot_at, on_hot):
        """Calls ``on_hot()`` once, from the call that brings the bytes
        transcoded to ``hot_at``; 0 stops watching (Heat.watch)."""
        self.heat.watch(hot_at, on_hot)

    cdef int move_value(self, Reader* r, Writer* w, Py_ssize_t index, int depth) except -1:
        cdef Move* move = &self.moves[index]
        cdef int kind = move.kind
        cdef Py_ssize_t start
        cdef long long count
        cdef long long position
        cdef Link* link
        if kind == M_COPY:
            start = r.pos
            self.pass_over(r, move, depth)
            return write_raw(w, <const char*>(r.data + start), r.pos - start)
        if kind == M_RECORD:
            return self.move_record(r, w, move, depth + 1)
        if kind == M_ARRAY or kind == M_MAP:
            count = read_block_count(r, move.min_size, self.max_items)
            while count:
                write_long(w, count)
                for position in range(count):
                    if kind == M_MAP:
                        start = r.pos
                        pass_str(r)    # its UTF-8 checked where it was written
                        write_raw(w, <const char*>(r.data + start), r.pos - start)
                    self.move_value(r, w, move.first, depth)
                count = read_block_count(r, move.min_size, self.max_items)
            return write_byte(w, 0)
        if kind == M_UNION:
            link = &self.links[move.first + read_index(r, move.size)]
            if move.slots:
                write_long(w, link.branch)
            return self.move_value(r, w, link.move, depth)
        if kind == M_INTO_UNION:
            write_long(w, move.size)
            return self.move_value(r, w, move.first, depth)
        if kind == M_PROMOTE or kind == M_ENUM:
            # converted straight into the output (at most 10 bytes)
            writer_reserve(w, 16)
            if kind == M_PROMOTE:
                w.size += promote_into(r, <unsigned char*>(w.data + w.size), <int>move.size)
            else:
                w.size += remap_into(r, <unsigned char*>(w.data + w.size), <tuple>move.value,
                                     <tuple>move.value2)
            return 0
        if kind == M_TEXT:
            start = r.pos
            pass_str(r)    # its UTF-8 checked, with the error and offset of reading it
            return write_raw(w, <const char*>(r.data + start), r.pos - start)
        # M_FAIL
        return raise_unreadable(r, <str>move.value, r.pos)

    cdef inline int pass_over(self, Reader* r, Move* move, int depth) except -1:
        """Finds the end of a value copied as written, checking it as the
        reader's reading would where that checks more than skipping (so no
        error is left for the bytes moved, at offsets the input does not have)."""
        if move.check >= 0:
            return self.reader.check_value(r, move.check, depth)
        return self.writer.skip_value(r, move.node, depth)

    cdef int move_record(self, Reader* r, Writer* w, Move* move, int depth) except -1:
        cdef Piece few[16]
        cdef Piece* pieces = few
        cdef Py_ssize_t slots = move.slots
        cdef Py_ssize_t number
        cdef Py_ssize_t following = 0     # the reader's next field to write
        cdef Py_ssize_t run = -1          # where the input copied as it is starts, if it does
        cdef Py_ssize_t start
        cdef Place* place
        cdef Piece* piece
        cdef Writer held
        cdef bytes moved
        if depth > self.max_depth:
            raise_decode_error(r, u"records nested more than %d levels deep (CompileFlags.max_depth)"
                               % self.max_depth, r.pos)
        if (depth & 31) == 31:
            check_read_stack(r, depth)
        if slots > 16:
            pieces = <Piece*>calloc(slots, sizeof(Piece))
            if pieces == NULL:
                raise MemoryError()
        else:
            for number in range(slots):
                few[number].ready = 0
                few[number].owner = NULL
        try:
            # the defaults are ready from the start
            for number in range(move.first, move.first + move.size):
                place = &self.places[number]
                if place.move == -2:
                    piece = &pieces[place.slot]
                    piece.data = PyBytes_AS_STRING(<object>place.value)
                    piece.size = PyBytes_GET_SIZE(<object>place.value)
                    piece.ready = 1
            following = self.write_ready(w, pieces, following, slots)
            for number in range(move.first, move.first + move.size):
                place = &self.places[number]
                if place.move == -2:
                    continue
                if place.slot == following and place.move >= 0 \
                        and self.moves[place.move].kind == M_COPY:
                    # in the reader's order and as written: one copy for the run
                    if run < 0:
                        run = r.pos
                    self.pass_over(r, &self.moves[place.move], depth)
                    following += 1
                    if following < slots and pieces[following].ready:
                        write_raw(w, <const char*>(r.data + run), r.pos - run)
                        run = -1
                        following = self.write_ready(w, pieces, following, slots)
                    continue
                if run >= 0:
                    write_raw(w, <const char*>(r.data + run), r.pos - run)
                    run = -1
                if place.move == -1:
                    self.writer.skip_value(r, place.node, depth)
                elif place.slot == following:
                    # in the reader's order: straight to the output
                    self.move_value(r, w, place.move, depth)
                    following = self.write_ready(w, pieces, following + 1, slots)
                else:
                    piece = &pieces[place.slot]
                    if self.moves[place.move].kind == M_COPY:
                        start = r.pos
                        self.pass_over(r, &self.moves[place.move], depth)
                        piece.data = <const char*>(r.data + start)
                        piece.size = r.pos - start
                    else:
                        writer_init(&held)
                        try:
                            self.move_value(r, &held, place.move, depth)
                            moved = writer_finish(&held)
                        finally:
                            writer_release(&held)
                        Py_INCREF(moved)
                        piece.owner = <PyObject*>moved
                        piece.data = PyBytes_AS_STRING(moved)
                        piece.size = PyBytes_GET_SIZE(moved)
                    piece.ready = 1
            if run >= 0:
                write_raw(w, <const char*>(r.data + run), r.pos - run)
            if following != slots:
                raise AssertionError("a field of the reader's record was not written")
            return 0
        finally:
            for number in range(slots):
                Py_XDECREF(pieces[number].owner)
            if pieces != few:
                free(pieces)

    cdef Py_ssize_t write_ready(self, Writer* w, Piece* pieces, Py_ssize_t following,
                                Py_ssize_t slots) except -1:
        """Writes the pieces ready from ``following`` on; the next one to write."""
        while following < slots and pieces[following].ready:
            write_raw(w, pieces[following].data, pieces[following].size)
            following += 1
        return following


# the one-pass readers' fields whose bytes need converting (_runtime.move_written)
set_move_hook(move_hook)
