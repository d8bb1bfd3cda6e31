# cython: language_level=3, boundscheck=False, wraparound=False
"""Avro records read straight into Arrow's buffers (roastedavro.arrow).

A tree of ``Column``s, one per Avro type in the schema (made by
roastedavro.arrow._columns from the Avro model), reads a block's records
with the runtime's primitives (their checks, bounds and errors) and appends
each value to its column's buffers: validity bytes, fixed-width values,
offsets, variable-length data. No Python object is made per value.
``buffers()`` hands a column's bytes over for ``pyarrow.Array.from_buffers``
and starts the column again empty.
"""

cimport cython
from cpython.buffer cimport PyBuffer_FillInfo
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from cpython.object cimport PyObject
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memset

from roastedavro._children cimport borrowed_array
from roastedavro._runtime cimport (
    Reader, open_reader, close_reader, check_count, check_read_stack, read_long, read_int, read_index,
    read_boolean, read_double, read_float, read_length, read_block_count, skip_raw, skip_long, skip_length,
    pass_str, raise_decode_error, read_uuid, uuid_text, uuid_bytes,
)
from roastedavro.errors import DecodeError

include "_always_inline.pxi"

# column kinds (roastedavro.arrow._columns names them)
cdef enum:
    C_NULL = 0
    C_BOOLEAN = 1
    C_INT32 = 2      # int, date, time-millis: a varint read as an int, stored in 4 bytes
    C_INT64 = 3      # long, time-micros, timestamps
    C_FLOAT32 = 4
    C_FLOAT64 = 5
    C_STRING = 6     # UTF-8 checked
    C_BINARY = 7
    C_FIXED = 8
    C_ENUM = 9       # the symbol's index (a dictionary's indices)
    C_STRUCT = 10
    C_LIST = 11
    C_MAP = 12       # children: the keys' string column, the values' column
    C_UNION = 13     # dense: a type id and an offset per value, a child per branch
    C_DECIMAL = 14   # bytes (size 0) or fixed (its size): decimal128/256 (width 16 or 32 bytes)
    C_UUID = 15      # string (size 0) or fixed (16): its lower-case 36-character text, a string


cdef inline int enter_record(Reader* r, int depth, int max_depth) except -1:
    # a record's depth (reading or skipping it), within max_depth and the C stack
    depth += 1
    if depth > max_depth:
        raise_decode_error(r, u"records nested more than %d levels deep (CompileFlags.max_depth)"
                           % max_depth, r.pos)
    if (depth & 31) == 31:
        check_read_stack(r, depth)
    return depth


@cython.final
cdef class Bytes:
    """A growable byte buffer; handed to Arrow as it is (the buffer
    protocol, read-only), once filled."""
    cdef char* data
    cdef Py_ssize_t size
    cdef Py_ssize_t capacity

    def __dealloc__(self):
        PyMem_Free(self.data)

    def __getbuffer__(self, Py_buffer* view, int flags):
        self.room(0)    # never a NULL address: Arrow aborts on one, even for no bytes
        PyBuffer_FillInfo(view, self, self.data, self.size, 1, flags)

    cdef inline char* room(self, Py_ssize_t extra) except NULL:
        # where the next ``extra`` bytes go (the caller adds them to size)
        cdef Py_ssize_t wanted = self.size + extra
        cdef Py_ssize_t capacity
        cdef char* grown
        if wanted > self.capacity or self.data == NULL:    # (NULL would read as the error)
            capacity = max(wanted, 2 * self.capacity, 64)
            grown = <char*>PyMem_Realloc(self.data, capacity)
            if grown == NULL:
                raise MemoryError()
            self.data = grown
            self.capacity = capacity
        return self.data + self.size

    cdef inline int add(self, const void* value, Py_ssize_t n) except -1:
        memcpy(self.room(n), value, n)
        self.size += n
        return 0

    # fixed widths: a constant-size copy the C compiler makes one store
    cdef inline int add4(self, const void* value) except -1:
        if self.size + 4 > self.capacity:
            self.room(4)
        memcpy(self.data + self.size, value, 4)
        self.size += 4
        return 0

    cdef inline int add8(self, const void* value) except -1:
        if self.size + 8 > self.capacity:
            self.room(8)
        memcpy(self.data + self.size, value, 8)
        self.size += 8
        return 0

    cdef inline int add_byte(self, char value) except -1:
        if self.size >= self.capacity:
            self.room(1)
        self.data[self.size] = value
        self.size += 1
        return 0


cdef int too_large_for_offsets() except -1:
    # (out of line: add_offset stays small enough to inline)
    raise DecodeError(u"more than 2 GiB of values in one Arrow column of a batch: "
                      u"read with a smaller batch_size", 0)


cdef Bytes handed_over(Bytes full):
    # a new empty buffer as large as ``full`` was (the next batch is
    # likely alike: no growing, no copying as it fills)
    cdef Bytes fresh = Bytes()
    if full.size:
        fresh.room(full.size)
    return fresh


@cython.final
cdef class Column:
    """The buffers of one Avro type's values (see the module's docstring)."""
    cdef readonly int kind
    cdef readonly Py_ssize_t length
    cdef readonly Py_ssize_t null_count
    cdef int null_index         # a ["null", T] union's null branch; -1: not nullable
    cdef Py_ssize_t size        # FIXED: its size; ENUM: the symbols; UNION: the branches
    cdef Py_ssize_t min_size    # LIST, MAP: the fewest bytes an item takes
    cdef list children
    cdef PyObject** child_array # the children, borrowed from the list (no type test per value)
    cdef Py_ssize_t child_count
    cdef int width              # DECIMAL: 16 or 32 bytes per value
    cdef uint64_t limit[4]      # DECIMAL: 10**precision, the least magnitude refused (little-endian limbs)
    cdef str path               # DECIMAL: where the column is, for its error
    cdef readonly bint keep     # False: a column not asked for, its values skipped (checked as skipping
                                # checks them: strings' UTF-8 is not), nothing stored
    cdef bint leaf              # kept, of a kind read by read_leaf: read in its parent's frame
    cdef Bytes valid            # a byte per value, 1 where it is not null (once `tracking`)
    cdef bint tracking          # valid holds every value's byte: set at the first null, as a
                                # column without nulls needs no validity (most columns)
    cdef Bytes values           # fixed-width values, or offsets, or a union's offsets
    cdef Bytes data             # strings' and bytes' bytes; a union's type ids

    def __init__(self, int kind, int null_index=-1, Py_ssize_t size=0, Py_ssize_t min_size=0,
                 children=(), bint keep=True, int precision=0, int width=16, str path=u""):
        children = list(children)
        # a list's items, a map's keys and values are read from the C array unchecked
        if len(children) < (2 if kind == C_MAP else 1 if kind == C_LIST else 0):
            raise ValueError(u"a column of kind %d with %d children" % (kind, len(children)))
        self.kind = kind
        if kind == C_DECIMAL:
            if width not in (16, 32) or not 0 < precision <= (38 if width == 16 else 76):
                raise ValueError(u"a decimal column of %d bytes and precision %d" % (width, precision))
            self.width = width
            self.path = path
            bound = (<object>10) ** precision    # a Python int (a C power would be a double)
            for k in range(4):
                self.limit[k] = <uint64_t>((bound >> (64 * k)) & 0xFFFFFFFFFFFFFFFF)
        self.keep = keep
        self.leaf = keep and kind in (C_NULL, C_BOOLEAN, C_INT32, C_INT64, C_FLOAT32, C_FLOAT64, C_STRING,
                                      C_BINARY, C_FIXED, C_ENUM)
        self.null_index = null_index
        self.size = size
        self.min_size = min_size
        self.set_children(children)
        self.valid = Bytes()
        self.values = Bytes()
        self.data = Bytes()
        self.start()

    def __dealloc__(self):
        free(self.child_array)

    cdef int set_children(self, list children) except -1:
        # checked and laid out before either is swapped in: the array
        # borrows from the list it is stored with
        cdef PyObject** array
        for child in children:
            if not isinstance(child, Column):
                raise TypeError(f"a Column's children are Columns, not {type(child).__name__}")
        array = borrowed_array(children)
        free(self.child_array)
        self.child_array = array
        self.child_count = len(children)
        self.children = children
        return 0

    cdef int start(self) except -1:
        cdef int32_t zero = 0
        self.length = 0
        self.null_count = 0
        self.tracking = False
        self.valid.size = 0
        if self.kind in (C_STRING, C_BINARY, C_LIST, C_MAP, C_UUID):
            self.values.add(&zero, 4)    # offsets start at 0
        return 0

    cdef inline int read(self, Reader* r, int depth, int max_depth, Py_ssize_t max_items) except -1:
        """Reads one value at r and appends it. Inlined in a struct's, list's
        or map's loop: a leaf's value (most values) is read there, with no call."""
        if not self.keep:
            return self.skip(r, depth, max_depth, max_items)
        if self.null_index >= 0:
            if read_index(r, 2) == self.null_index:
                return self.append_null()
        if self.tracking:
            self.valid.add_byte(1)
        self.length += 1
        if self.leaf:
            return self.read_leaf(r)
        return self.read_value(r, depth, max_depth, max_items)

    cdef inline int read_leaf(self, Reader* r) except -1:
        # the value of a kind without children (self.leaf's kinds)
        cdef int kind = self.kind
        cdef int32_t small
        cdef int64_t wide
        cdef float single
        cdef double double_
        cdef char flag
        cdef Py_ssize_t start
        cdef Py_ssize_t n
        # one if/elif chain over the kind: Cython makes it a C switch
        if kind == C_INT64:
            wide = read_long(r)
            return self.values.add8(&wide)
        elif kind == C_INT32:
            small = <int32_t>read_int(r)
            return self.values.add4(&small)
        elif kind == C_STRING or kind == C_BINARY:
            start = r.pos
            n = read_length(r)
            if kind == C_STRING:
                r.pos = start
                pass_str(r)    # its UTF-8 checked, the error at its offset
            else:
                skip_raw(r, n)
            self.data.add(r.data + r.pos - n, n)
            return self.add_offset(self.data.size)
        elif kind == C_FLOAT64:
            double_ = read_double(r)
            return self.values.add8(&double_)
        elif kind == C_FLOAT32:
            single = <float>read_float(r)
            return self.values.add4(&single)
        elif kind == C_BOOLEAN:
            flag = read_boolean(r)
            return self.values.add_byte(flag)
        elif kind == C_ENUM:
            small = read_index(r, self.size)
            return self.values.add4(&small)
        elif kind == C_FIXED:
            start = r.pos
            skip_raw(r, self.size)
            return self.data.add(r.data + start, self.size)
        return 0    # null: no bytes

    cdef int read_value(self, Reader* r, int depth, int max_depth, Py_ssize_t max_items) except -1:
        cdef int kind = self.kind
        cdef Py_ssize_t n
        cdef long long count
        cdef long long position
        cdef Column child
        cdef Column second
        cdef int branch
        # (a leaf's value is read by read; a column not kept is skipped there)
        # one if/elif chain over the kind: Cython makes it a C switch
        if kind == C_STRUCT:
            depth = enter_record(r, depth, max_depth)
            for position in range(self.child_count):
                (<Column>self.child_array[position]).read(r, depth, max_depth, max_items)
            return 0
        elif kind == C_DECIMAL:
            n = self.size if self.size else read_length(r)
            skip_raw(r, n)
            return self.add_decimal(<const unsigned char*>r.data + r.pos - n, n)
        elif kind == C_UUID:
            return self.read_uuid_text(r)
        elif kind == C_LIST or kind == C_MAP:
            # (a list's items, a map's keys; then a map's values)
            child = <Column>self.child_array[0]
            second = <Column>self.child_array[1] if kind == C_MAP else None
            count = read_block_count(r, self.min_size, max_items)
            while count:
                if kind == C_MAP:
                    for position in range(count):
                        child.read(r, depth, max_depth, max_items)
                        second.read(r, depth, max_depth, max_items)
                else:
                    for position in range(count):
                        child.read(r, depth, max_depth, max_items)
                count = read_block_count(r, self.min_size, max_items)
            return self.add_offset(child.length)
        elif kind == C_UNION:
            branch = read_index(r, self.size)
            child = self.children[branch]
            return self.add_branch(branch, child, r, depth, max_depth, max_items)
        raise ValueError(u"a column of kind %d cannot be read" % kind)

    cdef int skip(self, Reader* r, int depth, int max_depth, Py_ssize_t max_items) except -1:
        """Passes over one value at r with the checks skipping makes (the
        writer's skippers': ints' range, booleans, indexes, counts and the
        item budget, lengths)."""
        cdef int kind = self.kind
        cdef long long count
        cdef long long position
        cdef Column child
        if self.null_index >= 0:
            if read_index(r, 2) == self.null_index:
                return 0
        # one if/elif chain over the kind: Cython makes it a C switch
        if kind == C_INT64:
            return skip_long(r)
        elif kind == C_STRING or kind == C_BINARY:
            return skip_length(r)
        elif kind == C_INT32:
            read_int(r)
            return 0
        elif kind == C_FLOAT64:
            return skip_raw(r, 8)
        elif kind == C_FLOAT32:
            return skip_raw(r, 4)
        elif kind == C_BOOLEAN:
            read_boolean(r)
            return 0
        elif kind == C_ENUM:
            read_index(r, self.size)
            return 0
        elif kind == C_FIXED:
            return skip_raw(r, self.size)
        elif kind == C_DECIMAL or kind == C_UUID:
            return skip_raw(r, self.size) if self.size else skip_length(r)
        elif kind == C_STRUCT:
            depth = enter_record(r, depth, max_depth)
            for position in range(self.child_count):
                (<Column>self.child_array[position]).skip(r, depth, max_depth, max_items)
            return 0
        elif kind == C_LIST or kind == C_MAP:
            # a list's items, a map's values (its keys are strings)
            child = <Column>self.child_array[1 if kind == C_MAP else 0]
            count = read_block_count(r, self.min_size, max_items)
            while count:
                for position in range(count):
                    if kind == C_MAP:
                        skip_length(r)
                    child.skip(r, depth, max_depth, max_items)
                count = read_block_count(r, self.min_size, max_items)
            return 0
        elif kind == C_UNION:
            return (<Column>self.children[read_index(r, self.size)]).skip(r, depth, max_depth, max_items)
        return 0    # null: no bytes

    cdef int read_uuid_text(self, Reader* r) except -1:
        # the text the record reader's uuid.UUID gives (str()): from 16
        # bytes, or from the canonical text in C; other spellings uuid.UUID
        # takes (braces, no hyphens, "urn:uuid:") go through it
        cdef unsigned char raw[16]
        cdef Py_ssize_t start = r.pos
        cdef Py_ssize_t n
        if self.size:
            skip_raw(r, 16)
            uuid_text(<const unsigned char*>r.data + start, <unsigned char*>self.data.room(36))
        else:
            n = read_length(r)
            if n == 36 and r.end - r.pos >= 36 and uuid_bytes(<const unsigned char*>r.data + r.pos, raw):
                r.pos += 36
                uuid_text(raw, <unsigned char*>self.data.room(36))
            else:
                r.pos = start
                text = str(read_uuid(r, False)).encode("ascii")
                memcpy(self.data.room(36), <const char*>text, 36)
        self.data.size += 36
        return self.add_offset(self.data.size)

    cdef int add_decimal(self, const unsigned char* big, Py_ssize_t n) except -1:
        # Avro's big-endian two's complement (any length) to Arrow's
        # little-endian decimal128/256, refused where it has more digits
        # than the precision (as pyarrow refuses it on the Python-values path)
        cdef int width = self.width
        cdef unsigned char out[32]
        cdef uint64_t limbs[4]
        cdef uint64_t carry = 1
        cdef bint negative = n > 0 and (big[0] & 0x80)
        cdef unsigned char fill = 0xFF if negative else 0
        cdef Py_ssize_t k
        cdef int top
        for k in range(n - width):
            if big[k] != fill:
                return self.too_many_digits(big, n)
        if n > width and ((big[n - width] & 0x80) != 0) != negative:
            return self.too_many_digits(big, n)
        memset(out, fill, width)
        for k in range(min(n, width)):
            out[k] = big[n - 1 - k]
        memcpy(limbs, out, width)
        if negative:    # the magnitude: its two's complement negated
            for k in range(width // 8):
                limbs[k] = ~limbs[k] + carry
                carry = 1 if (carry and limbs[k] == 0) else 0
        for top in range(width // 8 - 1, -1, -1):
            if limbs[top] != self.limit[top]:
                if limbs[top] > self.limit[top]:
                    return self.too_many_digits(big, n)
                break
        else:
            return self.too_many_digits(big, n)    # exactly 10**precision
        return self.values.add(out, width)

    cdef int too_many_digits(self, const unsigned char* big, Py_ssize_t n) except -1:
        unscaled = int.from_bytes(big[:n], "big", signed=True)
        raise ValueError(u"%s: cannot be held as Arrow's decimal%d: the unscaled value %d has more "
                         u"digits than the precision" % (self.path or u"the value", 8 * self.width, unscaled))

    cdef int add_branch(self, int branch, Column child, Reader* r, int depth, int max_depth,
                        Py_ssize_t max_items) except -1:
        cdef char type_id = <char>branch
        cdef int32_t offset = <int32_t>child.length
        self.data.add_byte(type_id)
        self.values.add4(&offset)
        if r == NULL:
            return child.append_null()
        return child.read(r, depth, max_depth, max_items)

    cdef inline int add_offset(self, Py_ssize_t end) except -1:
        cdef int32_t offset
        if end > 2147483647:
            return too_large_for_offsets()
        offset = <int32_t>end
        return self.values.add4(&offset)

    cdef int append_null(self) except -1:
        """A null."""
        return self.append_zero(0)

    cdef int append_hidden(self) except -1:
        """A placeholder under a null record, which its validity hides: a
        null where the column's Arrow field is nullable, else a zero value
        that is valid (as pyarrow fills a null struct's non-nullable
        children, which Parquet's writer requires)."""
        if self.null_index >= 0 or self.kind == C_NULL:
            return self.append_zero(0)
        return self.append_zero(1)

    cdef int append_zero(self, char valid) except -1:
        """A zero value, null unless ``valid``."""
        cdef char filler[32]
        cdef Column child
        if not valid and not self.tracking:
            # the first null: every value before it was valid
            memset(self.valid.room(self.length), 1, self.length)
            self.valid.size += self.length
            self.tracking = True
        if self.tracking:
            self.valid.add(&valid, 1)
        self.length += 1
        if not valid:
            self.null_count += 1
        kind = self.kind
        memset(filler, 0, 32)
        if kind == C_DECIMAL:
            return self.values.add(filler, self.width)
        if kind == C_INT64 or kind == C_FLOAT64:
            return self.values.add(filler, 8)
        if kind == C_INT32 or kind == C_FLOAT32 or kind == C_ENUM:
            return self.values.add(filler, 4)
        if kind == C_BOOLEAN:
            return self.values.add(filler, 1)
        if kind == C_STRING or kind == C_BINARY or kind == C_UUID:
            return self.add_offset(self.data.size)
        if kind == C_FIXED:
            memset(self.data.room(self.size), 0, self.size)
            self.data.size += self.size
            return 0
        if kind == C_STRUCT:
            for child in self.children:
                child.append_hidden()
            return 0
        if kind == C_LIST or kind == C_MAP:
            return self.add_offset((<Column>self.children[0]).length)
        if kind == C_UNION:
            return self.add_branch(0, self.children[0], NULL, 0, 0, 0)
        return 0

    def buffers(self):
        """(length, null_count, validity bits or None, values, data: the
        buffers as they are, no copy), and the column empty again, in new
        buffers; children's are their own."""
        length, nulls = self.length, self.null_count
        validity = self.bits(self.valid) if nulls else None
        if self.kind == C_BOOLEAN:
            values = self.bits(self.values)
            self.values.size = 0
        else:
            values = self.values
            self.values = handed_over(values)
        data = self.data
        self.data = handed_over(data)
        self.start()
        return length, nulls, validity, values, data

    cdef bytearray bits(self, Bytes flags):
        # Arrow's bitmaps: a bit per value, least significant first
        cdef Py_ssize_t n = flags.size
        cdef Py_ssize_t i
        cdef uint64_t eight
        cdef const unsigned char* p
        packed = bytearray((n + 7) // 8)
        cdef unsigned char* out = packed
        # eight flags (each byte 0 or 1) at a time, flag k as byte k of a
        # word (assembled so on any byte order; one load where it is little-
        # endian): the multiply moves it to bit 56 + k, and no two products
        # share a bit, so nothing carries
        for i in range(n >> 3):
            p = <const unsigned char*>flags.data + 8 * i
            eight = (<uint64_t>p[0] | (<uint64_t>p[1] << 8) | (<uint64_t>p[2] << 16) | (<uint64_t>p[3] << 24)
                     | (<uint64_t>p[4] << 32) | (<uint64_t>p[5] << 40) | (<uint64_t>p[6] << 48)
                     | (<uint64_t>p[7] << 56))
            out[i] = <unsigned char>((eight * <uint64_t>0x0102040810204080) >> 56)
        for i in range(n & ~7, n):
            if flags.data[i]:
                out[i >> 3] |= <unsigned char>(1 << (i & 7))
        return packed


cdef class BlockReader:
    """Reads blocks of records into a struct Column (the records' columns):
    ``load_block_within``, as the codecs' (roastedavro.container's
    FileReader.decode_block), returns the rows read and what is left of
    the item budget. ``cut_every(n, on_full)`` calls ``on_full()`` each
    time the columns hold n rows, within a block too: it takes the rows
    (roastedavro.arrow makes a batch of them, which starts the columns
    again empty), so batches of exactly n rows need no copying."""
    cdef Column root
    cdef Py_ssize_t min_size
    cdef int max_depth
    cdef Py_ssize_t max_items
    cdef Py_ssize_t batch_size    # 0: no cuts (a row count is never 0 after a read)
    cdef object on_full

    def __init__(self, Column root, Py_ssize_t min_size, int max_depth, Py_ssize_t max_items):
        self.root = root
        self.min_size = min_size
        self.max_depth = max_depth
        self.max_items = max_items

    def cut_every(self, Py_ssize_t batch_size, on_full):
        if batch_size < 1:
            raise ValueError(u"batch_size must be at least 1, not %d" % batch_size)
        self.batch_size = batch_size
        self.on_full = on_full

    def load_block_within(self, data, long long count, long long allowance):
        cdef Reader r
        cdef Py_buffer view
        cdef long long number
        cdef Column root = self.root
        if allowance < 0:
            raise ValueError(u"a negative item allowance")
        cdef int acquired = open_reader(&r, data, &view, allowance)
        try:
            if count < 0:
                raise DecodeError(u"a block of %d values" % count, 0)
            check_count(&r, count, self.min_size, 9223372036854775807, 0)
            for number in range(count):
                root.read(&r, 0, self.max_depth, self.max_items)
                if root.length == self.batch_size:
                    self.on_full()
                    if root.length:
                        raise ValueError(u"on_full left %d rows in the columns" % root.length)
            if r.pos != r.end:
                raise DecodeError(u"%d bytes left in the block after its %d values"
                                  % (r.end - r.pos, count), r.pos)
        finally:
            close_reader(&view, acquired)
        return count, r.budget
