# cython: language_level=3, boundscheck=False, wraparound=False
"""Arrow columns written as Avro records (roastedavro.arrow's write_table).

A tree of ``Source``s, one per Avro type in the schema (made by
roastedavro.arrow._writer from the Avro model and the table's Arrow
types), reads values straight from an Arrow array's buffers (validity
bits, fixed-width values, offsets, variable-length data) and writes them
with the runtime's primitives: no Python object is made per value.
``RowWriter.encode`` writes a batch's rows, one Avro record each.

The buffers are read as Arrow's format lays them out; the arrays are
validated in full (offsets within their data, UTF-8 strings) before a
Source is bound to them, so a value never reads outside its buffer.
"""

cimport cython
from cpython.object cimport PyObject
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.math cimport isinf
from libc.stdlib cimport free
from libc.string cimport memcpy

from roastedavro._children cimport borrowed_array
from roastedavro._runtime cimport (
    Writer, writer_init, writer_finish, writer_release, writer_reserve, write_long, write_byte, write_raw,
    write_double, write_uuid_datum, uuid_text, uuid_bytes, all_ascii,
)
from roastedavro._datum import datum_error, refused
from roastedavro.errors import DatumError, DumpError
import uuid

include "_always_inline.pxi"


cdef bytes uuid_text_bytes(str text):
    """The 16 bytes of a uuid's text in a spelling uuid.UUID takes."""
    try:
        return uuid.UUID(text).bytes
    except ValueError:
        raise refused("a UUID", text) from None

# source kinds (roastedavro.arrow._writer names them)
cdef enum:
    S_NULL = 0
    S_BOOLEAN = 1
    S_INT = 2        # an Arrow integer (width, signedness) as an Avro int or long
    S_FLOAT32 = 3    # an Arrow float or double as an Avro float
    S_FLOAT64 = 4    # an Arrow float or double as an Avro double
    S_BINARY = 5     # string or binary, 32- or 64-bit offsets
    S_FIXED = 6
    S_ENUM = 7       # a dictionary's indices, through a table of symbol indexes
    S_STRUCT = 8
    S_LIST = 9       # list, 32- or 64-bit offsets
    S_MAP = 10       # children: keys, items
    S_UNION = 11     # a dense or sparse union: type ids (and offsets), through a table of branches
    S_CONST = 12     # a field with no column: its default's bytes
    S_DECIMAL = 13   # decimal128 or decimal256 (width 16 or 32) as Avro bytes (size 0) or fixed (its size)
    S_UUID_TEXT = 14 # uuid text (string, 32- or 64-bit offsets) as an Avro uuid on string (size 0) or fixed(16)
    S_UUID_RAW = 15  # 16-byte uuids (fixed_size_binary(16), pa.uuid()) as an Avro uuid on string


cdef int out_of_int_range(long long integer) except -1:
    # (out of line: write_leaf stays small enough to inline)
    raise DatumError(u"Number out of range for Avro int (-2**31 .. 2**31-1): %d." % integer)


cdef inline Py_ssize_t address(object buffer):
    return 0 if buffer is None else <Py_ssize_t>buffer.address


@cython.final
cdef class Source:
    """One Avro type's values read from an Arrow array (see the module's docstring)."""
    cdef int kind
    cdef int width          # bytes per value: ints, floats; offsets (4 or 8); an enum's indices
    cdef bint signed        # ints, an enum's indices
    cdef bint narrow        # an Avro int: values outside 32 bits refused
    cdef int null_index     # a ["null", T] union's null branch; -1: not nullable
    cdef bint leaf          # of a kind write_leaf writes (no children, no errors of its own but ints')
    cdef Py_ssize_t size    # fixed, decimal fixed: the size; enum: the dictionary's length
    cdef Py_ssize_t offset  # the array's offset
    cdef const uint8_t* validity
    cdef const char* values
    cdef const char* offsets
    cdef const char* data
    cdef const int32_t* table  # enum: symbol index per dictionary entry (-1: none);
                               # union: Avro branch per type id (-1: none)
    cdef list children
    cdef PyObject** child_array   # the children, borrowed from the list (no type test per row)
    cdef Py_ssize_t child_count
    cdef tuple names        # struct: its fields' names (for error paths)
    cdef bytes constant     # S_CONST: the default's bytes
    cdef object what        # the Avro type's name, for errors
    cdef list symbols       # enum: the dictionary's values (for errors)
    cdef bytes table_bytes  # what table points into
    cdef list held          # the buffers read from, kept alive

    def __init__(self, int kind, str what, int null_index=-1, int width=0, bint signed=True,
                 bint narrow=False, Py_ssize_t size=0, children=(), names=(), bytes constant=b"",
                 bytes table=None, list symbols=None):
        self.kind = kind
        self.leaf = kind in (S_INT, S_BINARY, S_FLOAT64, S_FLOAT32, S_BOOLEAN, S_FIXED)
        self.what = what
        self.null_index = null_index
        self.width = width
        self.signed = signed
        self.narrow = narrow
        self.size = size
        self.set_children(list(children))
        self.names = tuple(names)
        self.constant = constant
        self.symbols = symbols
        self.held = []
        if table is not None:
            self.set_table(table)

    def __dealloc__(self):
        free(self.child_array)

    cdef int set_children(self, list children) except -1:
        # checked and laid out before either is swapped in: the array
        # borrows from the list it is stored with
        cdef PyObject** array
        for child in children:
            # a union's type ids without a branch have None
            if not (isinstance(child, Source) or (child is None and self.kind == S_UNION)):
                raise TypeError(f"a Source's children are Sources, not {type(child).__name__}")
        array = borrowed_array(children)
        free(self.child_array)
        self.child_array = array
        self.child_count = len(children)
        self.children = children
        return 0

    cdef set_table(self, bytes table):
        self.table_bytes = table
        self.table = <const int32_t*><const char*>table

    def bind(self, array, bytes table=None, list symbols=None):
        """Reads from ``array`` (already validated) from now on; children
        are bound by the caller (roastedavro.arrow._writer). An enum's
        ``table`` (int32 symbol indexes, -1: none) and ``symbols`` are its
        dictionary's."""
        buffers = array.buffers()
        self.held = [b for b in buffers if b is not None]
        if table is not None:
            if len(table) < 4 * len(symbols):
                raise ValueError("an enum's table is shorter than its dictionary")
            self.set_table(table)
            self.symbols = symbols
            self.size = len(symbols)
        self.offset = array.offset
        self.validity = NULL
        if array.null_count and buffers[0] is not None:
            self.validity = <const uint8_t*><Py_ssize_t>address(buffers[0])
        kind = self.kind
        if kind in (S_INT, S_FLOAT32, S_FLOAT64, S_BOOLEAN, S_FIXED, S_ENUM, S_DECIMAL, S_UUID_RAW):
            self.values = <const char*><Py_ssize_t>address(buffers[1])
        elif kind == S_BINARY or kind == S_UUID_TEXT:
            self.offsets = <const char*><Py_ssize_t>address(buffers[1])
            self.data = <const char*><Py_ssize_t>address(buffers[2])
        elif kind == S_LIST or kind == S_MAP:
            self.offsets = <const char*><Py_ssize_t>address(buffers[1])
        elif kind == S_UNION:
            self.data = <const char*><Py_ssize_t>address(buffers[1])       # type ids
            # a dense union's offsets; a sparse one has none (value i of each
            # child, which pyarrow's field() gives sliced as the union)
            self.offsets = (<const char*><Py_ssize_t>address(buffers[2])
                            if array.type.mode == "dense" else NULL)

    cdef inline bint is_null(self, Py_ssize_t i) noexcept:
        cdef Py_ssize_t j = i + self.offset
        return self.validity != NULL and not ((self.validity[j >> 3] >> (j & 7)) & 1)

    cdef inline long long integer(self, Py_ssize_t j) except? -1:
        cdef int width = self.width
        cdef uint64_t unsigned_
        if self.signed:
            if width == 8:
                return (<const int64_t*>self.values)[j]
            if width == 4:
                return (<const int32_t*>self.values)[j]
            if width == 2:
                return (<const int16_t*>self.values)[j]
            return (<const int8_t*>self.values)[j]
        if width == 8:
            unsigned_ = (<const uint64_t*>self.values)[j]
            if unsigned_ > <uint64_t>9223372036854775807:
                raise DatumError(u"Number out of range for Avro long: %d." % unsigned_)
            return <long long>unsigned_
        if width == 4:
            return (<const uint32_t*>self.values)[j]
        if width == 2:
            return (<const uint16_t*>self.values)[j]
        return (<const uint8_t*>self.values)[j]

    cdef inline Py_ssize_t offset_at(self, Py_ssize_t j) noexcept:
        if self.width == 8:
            return <Py_ssize_t>(<const int64_t*>self.offsets)[j]
        return (<const int32_t*>self.offsets)[j]

    cdef inline int write(self, Writer* w, Py_ssize_t i) except -1:
        """Writes value ``i`` of the array (its offset not applied). Inlined
        in a struct's, list's or map's loop, where a leaf's value is written."""
        cdef Py_ssize_t j = i + self.offset
        if self.validity != NULL and not ((self.validity[j >> 3] >> (j & 7)) & 1):
            if self.null_index < 0:
                raise DatumError(u"a null where the Avro type (%s) has no null" % self.what)
            return write_byte(w, <unsigned char>(2 * self.null_index))
        if self.null_index >= 0:
            write_byte(w, <unsigned char>(2 - 2 * self.null_index))    # the other branch: 1 or 0
        if self.leaf:
            return self.write_leaf(w, j)
        return self.write_value(w, j)

    cdef inline int write_leaf(self, Writer* w, Py_ssize_t j) except -1:
        # the value of a kind without children (self.leaf's kinds)
        cdef int kind = self.kind
        cdef long long integer
        cdef Py_ssize_t start
        cdef Py_ssize_t end
        # one if/elif chain over the kind: Cython makes it a C switch
        if kind == S_INT:
            integer = self.integer(j)
            if self.narrow and (integer > 2147483647 or integer < -2147483648):
                return out_of_int_range(integer)
            return write_long(w, integer)
        elif kind == S_BINARY:
            start = self.offset_at(j)
            end = self.offset_at(j + 1)
            write_long(w, end - start)
            return write_raw(w, self.data + start, end - start)
        elif kind == S_FLOAT64:
            if self.width == 8:
                return write_double(w, (<const double*>self.values)[j])
            return write_double(w, (<const float*>self.values)[j])
        elif kind == S_FLOAT32:
            if self.width == 8:
                return self.write_narrowed(w, (<const double*>self.values)[j])
            return write_raw(w, self.values + 4 * j, 4)
        elif kind == S_BOOLEAN:
            return write_byte(w, ((<const uint8_t*>self.values)[j >> 3] >> (j & 7)) & 1)
        elif kind == S_FIXED:
            return write_raw(w, self.values + self.size * j, self.size)
        return 0

    cdef int write_value(self, Writer* w, Py_ssize_t j) except -1:
        cdef int kind = self.kind
        cdef long long integer
        cdef Py_ssize_t start
        cdef Py_ssize_t end
        cdef Py_ssize_t position
        cdef int32_t index
        cdef int type_id
        cdef Source child
        # (write writes a leaf itself)
        # one if/elif chain over the kind: Cython makes it a C switch
        if kind == S_STRUCT:
            return self.write_fields(w, j)
        elif kind == S_ENUM:
            integer = self.integer(j)
            if integer < 0 or integer >= self.size:
                raise DatumError(u"dictionary index %d outside its %d values" % (integer, self.size))
            index = self.table[integer]
            if index < 0:
                raise DatumError(u"%r is not a symbol of the enum %s"
                                 % (self.symbols[integer], self.what))
            return write_long(w, index)
        elif kind == S_LIST:
            return self.write_items(w, j)
        elif kind == S_MAP:
            return self.write_entries(w, j)
        elif kind == S_UNION:
            type_id = (<const int8_t*>self.data)[j]
            index = self.table[type_id & 127] if type_id >= 0 else -1
            if index < 0:
                raise DatumError(u"the Arrow union's type id %d is no branch of the Avro union (%s)"
                                 % (type_id, self.what))
            child = self.children[type_id]
            position = (<const int32_t*>self.offsets)[j] if self.offsets != NULL else j - self.offset
            if child.is_null(position):
                if self.size == 0:    # size: the union's null branch + 1, 0 for none
                    raise DatumError(u"a null where the Avro type (%s) has no null" % self.what)
                return write_long(w, self.size - 1)
            write_long(w, index)
            return child.write(w, position)
        elif kind == S_CONST:
            return write_raw(w, self.constant, len(self.constant))
        elif kind == S_DECIMAL:
            return self.write_decimal(w, j)
        elif kind == S_UUID_TEXT:
            start = self.offset_at(j)
            end = self.offset_at(j + 1)
            return self.write_uuid_text(w, self.data + start, end - start)
        elif kind == S_UUID_RAW:
            write_byte(w, 72)    # the text's length, 36, as a zig-zag varint
            writer_reserve(w, 36)
            uuid_text(<const unsigned char*>self.values + 16 * j, <unsigned char*>w.data + w.size)
            w.size += 36
            return 0
        return 0    # null: no bytes

    cdef int write_uuid_text(self, Writer* w, const char* text, Py_ssize_t n) except -1:
        # the usual spelling (36 characters) parsed in C: on a string written
        # as it is (the record writer's rule), on a fixed as its 16 bytes
        cdef unsigned char raw[16]
        if n == 36 and uuid_bytes(<const unsigned char*>text, raw):
            if self.size:
                return write_raw(w, <const char*>raw, 16)
            write_byte(w, 72)
            return write_raw(w, text, 36)
        # other spellings uuid.UUID takes (braces, no hyphens, "urn:uuid:")
        # and text that is no uuid: the record writer's rule and error
        cdef bytes packed
        value = PyUnicode_DecodeUTF8(text, n, NULL)
        try:
            if self.size:
                packed = uuid_text_bytes(value)
                return write_raw(w, <const char*>packed, 16)
            return write_uuid_datum(w, value, False)
        except DumpError as error:
            raise datum_error(error) from None

    cdef int write_narrowed(self, Writer* w, double value) except -1:
        cdef float narrowed = <float>value
        if isinf(narrowed) and not isinf(value):
            raise DatumError(u"Number out of range for Avro float (32-bit IEEE 754).")
        return write_raw(w, <const char*>&narrowed, 4)

    cdef int write_fields(self, Writer* w, Py_ssize_t j) except -1:
        cdef Py_ssize_t position = 0
        # the children are sliced as the struct: its offset is theirs already
        cdef Py_ssize_t i = j - self.offset
        try:
            while position < self.child_count:
                (<Source>self.child_array[position]).write(w, i)
                position += 1
        except DatumError as error:
            raise DatumError(error.reason, (self.names[position],) + error.path) from None
        return 0

    cdef int write_items(self, Writer* w, Py_ssize_t j) except -1:
        cdef Py_ssize_t start = self.offset_at(j)
        cdef Py_ssize_t end = self.offset_at(j + 1)
        cdef Py_ssize_t position = start
        cdef Source items = self.children[0]
        if end > start:
            write_long(w, end - start)
            try:
                while position < end:
                    items.write(w, position)
                    position += 1
            except DatumError as error:
                raise DatumError(error.reason, (position - start,) + error.path) from None
        return write_byte(w, 0)

    cdef int write_entries(self, Writer* w, Py_ssize_t j) except -1:
        cdef Py_ssize_t start = (<const int32_t*>self.offsets)[j]
        cdef Py_ssize_t end = (<const int32_t*>self.offsets)[j + 1]
        cdef Py_ssize_t position = start
        cdef Source keys = self.children[0]
        cdef Source items = self.children[1]
        if end > start:
            write_long(w, end - start)
            try:
                while position < end:
                    keys.write(w, position)
                    items.write(w, position)
                    position += 1
            except DatumError as error:
                key = keys.key(position)
                raise DatumError(error.reason, (key,) + error.path) from None
        return write_byte(w, 0)

    cdef str key(self, Py_ssize_t i):
        cdef Py_ssize_t j = i + self.offset
        cdef Py_ssize_t start = self.offset_at(j)
        return (self.data + start)[:self.offset_at(j + 1) - start].decode("utf-8", "replace")

    cdef int write_decimal(self, Writer* w, Py_ssize_t j) except -1:
        # Arrow's decimal128 and decimal256: 16 or 32 bytes, little-endian
        # two's complement. Avro's bytes decimal: big-endian, the fewest bytes
        # Python's int.to_bytes would use ((bits of |v|) + 8) // 8, as the
        # library's writer; a fixed decimal: sign-extended to its size.
        cdef int width = self.width
        cdef uint64_t limbs[4]
        cdef unsigned char big[32]
        cdef int bits = 0
        cdef int k
        cdef uint64_t carry = 1
        cdef Py_ssize_t n
        cdef const unsigned char* wide = <const unsigned char*>self.values + width * j
        for k in range(width):
            big[k] = wide[width - 1 - k]
        memcpy(limbs, wide, width)
        if big[0] & 0x80:    # |v| of a negative: its two's complement negated
            for k in range(width // 8):
                limbs[k] = ~limbs[k] + carry
                carry = 1 if (carry and limbs[k] == 0) else 0
        for k in range(width // 8 - 1, -1, -1):
            if limbs[k]:
                bits = 64 * k + 64 - __builtin_clzll(limbs[k])
                break
        n = (bits + 8) // 8
        if self.size == 0:
            write_long(w, n)
        elif n > self.size:
            raise DatumError(u"the decimal does not fit in the fixed's %d bytes" % self.size)
        else:
            for k in range(self.size - n):
                write_byte(w, 0xFF if big[0] & 0x80 else 0)
        writer_reserve(w, n)
        memcpy(w.data + w.size, big + width - n, n)
        w.size += n
        return 0


def ascii_values(array, bint large):
    """True where every byte of a string array's values (from its first
    offset to its last) is ASCII, so each value is UTF-8 wherever the
    offsets cut them; False where a value may not be (roastedavro.arrow
    then has pyarrow check it). Its offsets must be checked already."""
    cdef Py_ssize_t first
    cdef Py_ssize_t last
    cdef Py_ssize_t n = len(array)
    cdef Py_ssize_t at = array.offset
    if n == 0:
        return True
    buffers = array.buffers()
    cdef const char* offsets = <const char*><Py_ssize_t>address(buffers[1])
    if offsets == NULL:
        return False
    if large:
        first = <Py_ssize_t>(<const int64_t*>offsets)[at]
        last = <Py_ssize_t>(<const int64_t*>offsets)[at + n]
    else:
        first = (<const int32_t*>offsets)[at]
        last = (<const int32_t*>offsets)[at + n]
    if last == first:
        return True
    if buffers[2] is None or first < 0 or last < first or last > buffers[2].size:
        return False
    return all_ascii(<const unsigned char*><Py_ssize_t>address(buffers[2]) + first, last - first)


cdef extern from *:
    int __builtin_clzll(unsigned long long) nogil


cdef class RowWriter:
    """Writes the rows of a batch, one Avro record each, from the struct
    Source of its columns."""
    cdef Source root

    def __init__(self, Source root):
        self.root = root

    def encode(self, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t limit):
        """The bytes of rows ``start`` up to the one that brings them to
        ``limit`` bytes or to ``stop``, and the row after the last written
        (a FileWriter block ends as its dict writer ends it)."""
        cdef Writer w
        cdef Py_ssize_t row = start
        writer_init(&w)
        try:
            # the block's room at once (bounded: sync_interval may be large),
            # not grown by doubling from a record's 256 bytes
            writer_reserve(&w, min(limit, 1 << 20) + 1024)
            while row < stop:
                self.root.write_fields(&w, row)
                row += 1
                if w.size >= limit:
                    break
            return writer_finish(&w), row
        finally:
            writer_release(&w)
