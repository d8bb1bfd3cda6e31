# C-level Avro primitives shared by every generated codec module.
#
# Small hot functions are `inline` here so that the C compiler can fold them
# into the generated record functions; the rarely taken paths (growing the
# buffer, raising errors) live in _runtime.pyx and are reached through
# Cython's C-API capsule, so they are compiled once.

cimport cython
from libc.string cimport memcpy
from libc.stdint cimport uint64_t
from libc.math cimport isinf
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_Check, PyBytes_GET_SIZE
from cpython.bytearray cimport PyByteArray_Check, PyByteArray_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.long cimport PyLong_AsLongLong
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.object cimport PyObject, PyTypeObject, Py_TYPE
from cpython.ref cimport Py_DECREF, Py_INCREF
from cpython.list cimport PyList_New, PyList_GET_SIZE, PyList_Append


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object s, Py_ssize_t* size) except NULL
    long long PyLong_AsLongLongAndOverflow(object o, int* overflow) except? -1
    bint PyUnicode_IS_COMPACT_ASCII(object s)
    Py_ssize_t PyUnicode_GET_LENGTH(object s)
    void* PyUnicode_DATA(object s)
    # NULL with a UnicodeDecodeError set on invalid UTF-8: read_str turns it
    # into a DecodeError with the offset, out of line
    PyObject* decode_utf8_or_null "PyUnicode_DecodeUTF8"(const char* s, Py_ssize_t size, const char* errors)
    PyObject* decode_ascii_or_null "PyUnicode_DecodeASCII"(const char* s, Py_ssize_t size, const char* errors)
    # a dict with room for n keys: no resize while a record is filled in
    dict new_record_dict "_PyDict_NewPresized"(Py_ssize_t n)

# ------------------------------------------------------ loaded records --

cdef extern from "Python.h":
    ctypedef struct PyDictObject:
        void* ma_keys
        void* ma_values
    int PyObject_GC_IsTracked(object o)
    void PyObject_GC_Track(object o)
    bint is_gc_type "PyType_IS_GC"(PyTypeObject* t)
    void take_ref "Py_INCREF"(object o)
    void release_ref "Py_DECREF"(PyObject* o)
    dict copy_dict "PyDict_Copy"(object d)
    int set_item "PyDict_SetItem"(object d, object key, object value) except -1

# A record type's loaded keys, in order. A load copies `template` (each key
# to None), so the copy comes with its key table built, then writes every
# value straight into its entry: no hash lookup and insert per key (about
# 200 instructions each). `values_offset` locates the first value from the
# copy's key table; it is checked against the running interpreter's dicts
# when the object is made (see _runtime.pyx) and is -1 where that check
# fails: set_field then uses PyDict_SetItem, with the same result.
cdef class RecordKeys:
    cdef readonly tuple keys
    cdef readonly dict template
    cdef Py_ssize_t values_offset

cdef inline dict new_record(RecordKeys keys):
    return copy_dict(keys.template)

cdef inline PyObject** record_values(dict record, RecordKeys keys) noexcept:
    # NULL unless the copy has a key table of its own: never write into
    # the template's
    cdef PyDictObject* copy = <PyDictObject*>record
    if (keys.values_offset < 0 or copy.ma_values != NULL
            or copy.ma_keys == (<PyDictObject*>keys.template).ma_keys):
        return NULL
    return <PyObject**>(<char*>copy.ma_keys + keys.values_offset)

cdef inline int set_field(dict record, PyObject** values, Py_ssize_t index,
                          object key, object value) except -1:
    # record[key] = value, where `key` is the index-th of the record's keys
    cdef PyObject* old
    if values == NULL:
        return set_item(record, key, value)
    old = values[2 * index]
    take_ref(value)
    values[2 * index] = <PyObject*>value
    release_ref(old)
    # the copy of a template of Nones is not tracked by the garbage
    # collector; PyDict_SetItem would start tracking it for such a value
    if is_gc_type(Py_TYPE(value)) and not PyObject_GC_IsTracked(record):
        PyObject_GC_Track(record)
    return 0

# any message marshmallow allows: a string, or a list or dict of them
cdef int raise_dump_error(object message) except -1

# the branch a union's chooser (avro._datum.UnionChooser) picks for a value its
# exact type does not decide: stores the branch index, returns the value to
# write. One call here keeps the tuple unpacking out of every generated union.
cdef object choose_branch(object chooser, object value, int* branch)

# ---------------------------------------------------------------- writing --

cdef struct Writer:
    char* data          # points at `small` until the record outgrows it
    Py_ssize_t size
    Py_ssize_t capacity
    char small[256]     # most records fit here: no malloc for them

cdef int writer_grow(Writer* w, Py_ssize_t extra) except -1
cdef bytes writer_finish(Writer* w)
cdef void writer_release(Writer* w) noexcept

cdef inline void writer_init(Writer* w) noexcept:
    w.data = w.small
    w.size = 0
    w.capacity = sizeof(w.small)

cdef inline int writer_reserve(Writer* w, Py_ssize_t extra) except -1:
    if w.size + extra > w.capacity:
        return writer_grow(w, extra)
    return 0

cdef inline int write_long(Writer* w, long long value) except -1:
    # zig-zag, then base-128 varint: at most 10 bytes
    cdef unsigned long long n = (<unsigned long long>value << 1) ^ <unsigned long long>(value >> 63)
    cdef unsigned char* out
    if w.size + 10 > w.capacity:
        writer_grow(w, 10)
    out = <unsigned char*>w.data + w.size
    while n >= 0x80:
        out[0] = <unsigned char>((n & 0x7F) | 0x80)
        out += 1
        n >>= 7
    out[0] = <unsigned char>n
    w.size = (<char*>out - w.data) + 1
    return 0

cdef inline int write_byte(Writer* w, unsigned char value) except -1:
    if w.size + 1 > w.capacity:
        writer_grow(w, 1)
    w.data[w.size] = <char>value
    w.size += 1
    return 0

cdef extern from *:
    """
    #include <stdint.h>

    /* n bytes copied between buffers that do not overlap. Strings, names
       and codes are mostly short: up to 32 bytes they are moved as
       overlapping words (or singly, below 4), which costs less than the
       call to memcpy. Reads and writes stay within [0, n). */
    static inline void roasted_copy_bytes(unsigned char* out, const unsigned char* in, Py_ssize_t n) {
        uint64_t a, b, c, d;
        uint32_t a4, b4;
        if (n >= 8 && n <= 16) {
            memcpy(&a, in, 8);
            memcpy(&b, in + n - 8, 8);
            memcpy(out, &a, 8);
            memcpy(out + n - 8, &b, 8);
        }
        else if (n >= 4 && n < 8) {
            memcpy(&a4, in, 4);
            memcpy(&b4, in + n - 4, 4);
            memcpy(out, &a4, 4);
            memcpy(out + n - 4, &b4, 4);
        }
        else if (n > 0 && n < 4) {
            out[0] = in[0];
            out[n >> 1] = in[n >> 1];
            out[n - 1] = in[n - 1];
        }
        else if (n > 16 && n <= 32) {
            memcpy(&a, in, 8);
            memcpy(&b, in + 8, 8);
            memcpy(&c, in + n - 16, 8);
            memcpy(&d, in + n - 8, 8);
            memcpy(out, &a, 8);
            memcpy(out + 8, &b, 8);
            memcpy(out + n - 16, &c, 8);
            memcpy(out + n - 8, &d, 8);
        }
        else if (n > 32)
            memcpy(out, in, (size_t)n);
    }
    """
    void copy_bytes "roasted_copy_bytes"(unsigned char* out, const unsigned char* src, Py_ssize_t n) noexcept

cdef inline int write_raw(Writer* w, const char* src, Py_ssize_t n) except -1:
    if w.size + n > w.capacity:
        writer_grow(w, n)
    copy_bytes(<unsigned char*>w.data + w.size, <const unsigned char*>src, n)
    w.size += n
    return 0

cdef inline int write_double(Writer* w, double value) except -1:
    # Avro doubles are little-endian IEEE 754; the runtime refuses to load on
    # big-endian machines, so the in-memory bytes are the wire bytes.
    return write_raw(w, <const char*>&value, 8)

cdef inline int write_float(Writer* w, double value) except -1:
    cdef float narrowed = <float>value
    if isinf(narrowed) and not isinf(value):
        raise_dump_error(u"Number out of range for Avro float (32-bit IEEE 754).")
    return write_raw(w, <const char*>&narrowed, 4)

cdef int write_str_slow(Writer* w, str value) except -1

cdef inline int write_str(Writer* w, str value) except -1:
    # ASCII strings (most keys, symbols, codes) are their own UTF-8: copied
    # straight from the str object. Others take CPython's cached UTF-8.
    cdef Py_ssize_t n
    if PyUnicode_IS_COMPACT_ASCII(value):
        n = PyUnicode_GET_LENGTH(value)
        write_long(w, n)
        return write_raw(w, <const char*>PyUnicode_DATA(value), n)
    return write_str_slow(w, value)

cdef inline int write_encoded(Writer* w, bytes value) except -1:
    # bytes already in Avro form (a constant, say)
    return write_raw(w, PyBytes_AS_STRING(value), len(value))

cdef inline int write_bytes(Writer* w, bytes value) except -1:
    cdef Py_ssize_t n = len(value)
    write_long(w, n)
    return write_raw(w, PyBytes_AS_STRING(value), n)


# ------------------------------------------------- Python to Avro values --

cdef long long long_out_of_range(object value) except? -1
cdef int int_out_of_range(long long value) except -1

cdef extern from *:
    """
    /* An int of |value| < 2**63 (at most three 30-bit digits, the third
       below 2**3) read from its digits in place, through the layout
       CPython's public cpython/longintrepr.h gives each version; 0 for any
       other (-2**63 and out-of-range ints), which
       PyLong_AsLongLongAndOverflow then converts or refuses. */
    static inline int roasted_small_long(PyObject* value, long long* out) {
    #if PyLong_SHIFT != 30
        return 0;
    #else
    #if PY_VERSION_HEX >= 0x030C0000
        uintptr_t tag = ((PyLongObject*)value)->long_value.lv_tag;
        Py_ssize_t digits = (Py_ssize_t)(tag >> _PyLong_NON_SIZE_BITS);
        const digit* digit_of = ((PyLongObject*)value)->long_value.ob_digit;
        long long sign = 1 - (long long)(tag & _PyLong_SIGN_MASK);
    #else
        Py_ssize_t size = Py_SIZE(value);
        Py_ssize_t digits = size < 0 ? -size : size;
        const digit* digit_of = ((PyLongObject*)value)->ob_digit;
        long long sign = size < 0 ? -1 : 1;
    #endif
        unsigned long long magnitude;
        if (digits > 3 || !PyLong_Check(value))
            return 0;
        if (digits == 0) {
            *out = 0;
            return 1;
        }
        magnitude = digit_of[0];
        if (digits >= 2) {
            magnitude |= (unsigned long long)digit_of[1] << PyLong_SHIFT;
            if (digits == 3) {
                if (digit_of[2] >= 8)
                    return 0;
                magnitude |= (unsigned long long)digit_of[2] << (2 * PyLong_SHIFT);
            }
        }
        *out = sign * (long long)magnitude;
        return 1;
    #endif
    }
    """
    bint small_long "roasted_small_long"(object value, long long* out) noexcept

cdef inline long long as_long(object value) except? -1:
    # `value` is an exact int; Avro "long" is a signed 64-bit integer
    cdef int overflow = 0
    cdef long long n
    if small_long(value, &n):
        return n
    n = PyLong_AsLongLongAndOverflow(value, &overflow)
    if overflow:
        return long_out_of_range(value)
    return n

cdef inline long long as_int(object value) except? -1:
    # Avro "int" is a signed 32-bit integer
    cdef long long n = as_long(value)
    if n < -2147483648 or n > 2147483647:
        int_out_of_range(n)
    return n

# ------------------------------------------- where dump finds the values --

# How a record's fields are looked up, decided once per record: dicts by
# key, plain objects by attribute, anything else (mappings that are not
# dicts, objects with __getitem__) by marshmallow's own get_value.
cdef enum:
    SOURCE_DICT = 0
    SOURCE_ATTRIBUTES = 1
    SOURCE_OTHER = 2

cdef int value_source(object obj) except -1
cdef object field_value(object obj, int source, str key, object default)

cdef extern from *:
    """
    #include <stdint.h>

    /* CPython 3.11-3.14's PyDictKeysObject header (Objects/dict-common.h,
       then Include/internal/pycore_dict.h), without the free-threaded
       build's mutex. Private: RecordKeys (roasted_dict_values_offset)
       checks every field it relies on against real dicts at import, and
       the walk below is enabled only once that check has passed. */
    typedef struct {
        Py_ssize_t dk_refcnt;
        uint8_t dk_log2_size;
        uint8_t dk_log2_index_bytes;
        uint8_t dk_kind;
        uint32_t dk_version;
        Py_ssize_t dk_usable;
        Py_ssize_t dk_nentries;
        char dk_indices[];
    } roasted_dict_keys;

    #if defined(_MSC_VER)
    #define ROASTED_NOINLINE __declspec(noinline)
    #else
    #define ROASTED_NOINLINE __attribute__((noinline))
    #endif

    /* Each module's copy of the runtime's verdict on that check. */
    static int roasted_dict_walk_ok = 0;

    /* Whether the walk reads `dict`'s entries in place: a combined table of
       str keys, the layout check passed. Every other dict is walked with
       PyDict_Next. */
    static inline int roasted_dict_walkable(PyObject* dict) {
    #ifdef Py_GIL_DISABLED
        /* never where entries and the key slots could change under us */
        return 0;
    #else
        PyDictObject* d = (PyDictObject*)dict;
        return roasted_dict_walk_ok && d->ma_values == NULL
            && ((roasted_dict_keys*)d->ma_keys)->dk_kind == 1;
    #endif
    }

    /* A combined table's entries, (key, value) pairs in insertion order,
       after its index table. */
    static inline PyObject** roasted_dict_entries(PyObject* dict) {
        roasted_dict_keys* keys = (roasted_dict_keys*)((PyDictObject*)dict)->ma_keys;
        return (PyObject**)(keys->dk_indices + ((size_t)1 << keys->dk_log2_index_bytes));
    }

    /* Whether a dict's str key equals a field name that is another object
       (keys from json.loads or built at run time are not the interned
       names): cached hashes first, then, for two compact ASCII strs (field
       names nearly always are), their bytes compared in place, 8 at a time. */
    static CYTHON_UNUSED int roasted_same_key(PyObject* found_key, PyObject* key) {
        Py_hash_t hash = ((PyASCIIObject*)key)->hash;
        Py_hash_t found_hash;
        Py_ssize_t length = PyUnicode_GET_LENGTH(key);
        if (!PyUnicode_CheckExact(found_key) || PyUnicode_GET_LENGTH(found_key) != length)
            return 0;
        found_hash = ((PyASCIIObject*)found_key)->hash;
        if (hash != -1 && found_hash != -1 && hash != found_hash)
            return 0;
        if (PyUnicode_IS_COMPACT_ASCII(key) && PyUnicode_IS_COMPACT_ASCII(found_key)) {
            const unsigned char* a = (const unsigned char*)(((PyASCIIObject*)key) + 1);
            const unsigned char* b = (const unsigned char*)(((PyASCIIObject*)found_key) + 1);
            unsigned long long x, y;
            Py_ssize_t i = 0;
            for (; i + 8 <= length; i += 8) {
                memcpy(&x, a + i, 8);
                memcpy(&y, b + i, 8);
                if (x != y)
                    return 0;
            }
            for (; i < length; i++)
                if (a[i] != b[i])
                    return 0;
            return 1;
        }
        return PyUnicode_KIND(found_key) == PyUnicode_KIND(key)
            && memcmp(PyUnicode_DATA(found_key), PyUnicode_DATA(key),
                      length * PyUnicode_KIND(key)) == 0;
    }

    /* The walk past the common case: deleted entries skipped, then the key
       compared by value. An equal key is remembered in the field's `seen`
       slot, with a reference, so the next dict built from the same key
       objects (rows of one csv.DictReader, dict(zip(names, row)), one
       literal's dicts) matches it by identity; holding the reference keeps
       that identity from being reused by another object. */
    static CYTHON_UNUSED ROASTED_NOINLINE PyObject* roasted_next_entry_slow(
            PyObject** entry, Py_ssize_t left, Py_ssize_t* cursor, PyObject* key, PyObject** seen) {
        Py_ssize_t skipped = 0;
        PyObject* old;
        while (skipped < left && entry[1] == NULL) {
            entry += 2;
            skipped++;
        }
        if (skipped == left)
            return NULL;
        if (entry[0] != key && entry[0] != *seen) {
            if (!roasted_same_key(entry[0], key))
                return NULL;
            old = *seen;
            Py_INCREF(entry[0]);
            *seen = entry[0];
            Py_XDECREF(old);  /* a str: freeing it runs no Python code */
        }
        *cursor += skipped + 1;
        return entry[1];
    }

    /* The next entry of a walkable dict, inline in each record writer: its
       value (borrowed, the cursor moved past it) when its key is the
       field's name: the very object, the key this field last matched, or
       (out of line) an equal str. NULL when the dict is not walkable (the
       caller walks it with PyDict_Next) or the field is not next (the
       caller looks it up). */
    static inline PyObject* roasted_next_entry(PyObject* dict, Py_ssize_t* cursor, PyObject* key,
                                               PyObject** seen) {
        Py_ssize_t position = *cursor;
        Py_ssize_t used;
        PyObject** entry;
        if (!roasted_dict_walkable(dict))
            return NULL;
        used = ((roasted_dict_keys*)((PyDictObject*)dict)->ma_keys)->dk_nentries;
        if (position < 0 || position >= used)
            return NULL;
        entry = roasted_dict_entries(dict) + 2 * position;
        if (entry[1] != NULL && (entry[0] == key || entry[0] == *seen)) {
            *cursor = position + 1;
            return entry[1];
        }
        return roasted_next_entry_slow(entry, used - position, cursor, key, seen);
    }

    /* Each module's pointer to the runtime's next_field_slow, and its own
       marker of a missing value (a reference held for the module's life). */
    typedef PyObject* (*roasted_field_lookup)(PyObject*, int, Py_ssize_t*, PyObject*, PyObject*);
    static roasted_field_lookup roasted_next_field_slow = NULL;
    static PyObject* roasted_missing = NULL;

    static inline void roasted_enable_dict_walk(int verified, roasted_field_lookup slow,
                                                PyObject* missing) {
        roasted_dict_walk_ok = verified;
        roasted_next_field_slow = slow;
        Py_INCREF(missing);
        Py_XSETREF(roasted_missing, missing);
    }

    /* A record field's value (a new reference; NULL with an exception set),
       or the module's missing marker: the walk's common case, else
       next_field_slow. Source 0 is SOURCE_DICT.
       Whether it is inlined is the C compiler's choice: forcing it into
       every field of a 500-field record cut 8% of the instructions but made
       the dump slower (more code to fetch per record). */
    static inline PyObject* roasted_next_field(
            PyObject* obj, int source, Py_ssize_t* cursor, PyObject* key, PyObject** seen) {
        if (source == 0) {
            PyObject* found = roasted_next_entry(obj, cursor, key, seen);
            if (found != NULL) {
                Py_INCREF(found);
                return found;
            }
        }
        return roasted_next_field_slow(obj, source, cursor, key, roasted_missing);
    }

    /* Drops the references a codec's `seen` slots hold. */
    static CYTHON_UNUSED void roasted_forget_keys(PyObject** seen, Py_ssize_t count) {
        Py_ssize_t i;
        for (i = 0; i < count; i++)
            Py_CLEAR(seen[i]);
    }
    """
    ctypedef object (*field_lookup "roasted_field_lookup")(object, int, Py_ssize_t*, str, object)
    void set_dict_walk "roasted_enable_dict_walk"(bint verified, field_lookup slow, object missing) noexcept
    bint dict_walkable "roasted_dict_walkable"(object d) noexcept
    PyObject* next_entry "roasted_next_entry"(object d, Py_ssize_t* cursor, object key, PyObject** seen) noexcept
    void forget_keys "roasted_forget_keys"(PyObject** seen, Py_ssize_t count) noexcept

# A record field's value, dicts first by position: `cursor` is where the
# previous field was found, so a dict built in field order gives each value
# without hashing or probing; any other dict falls back to a lookup. `seen`
# is the field's own slot in its codec (keys_seen), holding the equal key
# object it last matched. The in-place walk is next_entry's, in C
# (roasted_next_field above); dicts it cannot walk, lookups and attributes
# are next_field_slow's.
cdef object next_field_slow(object obj, int source, Py_ssize_t* cursor, str key, object default)

cdef extern from *:
    object next_field "roasted_next_field"(object obj, int source, Py_ssize_t* cursor, str key,
                                           PyObject** seen)

# Each generated module takes the runtime's verdict on the dict layout, its
# slow path and the module's marker of a missing field (what next_field
# returns for a key the record does not have) at import.
cdef inline void enable_dict_walk(bint verified, object missing) noexcept:
    set_dict_walk(verified, next_field_slow, missing)

# The slow path of every conversion: the field's own marshmallow _serialize
# (for values not already of the exact Python type the Avro type needs).
cdef object convert(object field, object value, object obj, type expected)

# One field value from Python to the wire: the exact-type fast path inline
# (a type check and the write), else, out of line, marshmallow's conversion
# through `field`, then range checks.
cdef int write_long_value_slow(Writer* w, object value, object field, object obj) except -1
cdef int write_int_value_slow(Writer* w, object value, object field, object obj) except -1
cdef int write_double_value_slow(Writer* w, object value, object field, object obj) except -1
cdef int write_float_value(Writer* w, object value, object field, object obj) except -1
cdef int write_str_value_slow(Writer* w, object value, object field, object obj) except -1
cdef int write_boolean_value_slow(Writer* w, object value, object field, object obj) except -1

cdef inline int write_long_value(Writer* w, object value, object field, object obj) except -1:
    cdef long long n
    if type(value) is int and small_long(value, &n):
        return write_long(w, n)
    return write_long_value_slow(w, value, field, obj)

cdef inline int write_int_value(Writer* w, object value, object field, object obj) except -1:
    cdef long long n
    if type(value) is int and small_long(value, &n) and -2147483648 <= n <= 2147483647:
        return write_long(w, n)
    return write_int_value_slow(w, value, field, obj)

cdef inline int write_double_value(Writer* w, object value, object field, object obj) except -1:
    if type(value) is float:
        return write_double(w, PyFloat_AS_DOUBLE(value))
    return write_double_value_slow(w, value, field, obj)

cdef inline int write_str_value(Writer* w, object value, object field, object obj) except -1:
    if type(value) is str:
        return write_str(w, <str>value)
    return write_str_value_slow(w, value, field, obj)

cdef inline int write_boolean_value(Writer* w, object value, object field, object obj) except -1:
    if value is True:
        return write_byte(w, 1)
    if value is False:
        return write_byte(w, 0)
    return write_boolean_value_slow(w, value, field, obj)
cdef dict with_str_keys(dict mapping, object keys_field, object obj, bint always)
# Load-side validation (see validators.py): does the loaded value pass one
# marshmallow validator / the field's own _validate? Only the outcome is
# used; marshmallow's load builds the error.
cdef bint passes(object validator, object value) except -1
cdef bint validation_passes(object field, object value) except -1
cdef bint email_passes(object validator, object value) except -1
# Where a record function is inside its collections, for error paths.
cdef enum:
    PATH_NONE = -1
    PATH_INDEX = 0
    PATH_KEY = 1
    PATH_VALUE = 2

cdef int add_path(object error, int part, Py_ssize_t index, object key) except -1
# a ValidationError raised by a field's own code, as a DumpError with a path
cdef object as_dump_error(object error)

# ------------------------------------------------------ logical types --

# DateTime flavours: naive values taken as UTC / aware values required /
# naive wall-clock time (Avro's local-timestamp-*)
cdef enum:
    TIMESTAMP_UTC = 0
    TIMESTAMP_AWARE = 1
    TIMESTAMP_LOCAL = 2

# the exact Python type of a logical value, else marshmallow's conversion
cdef object coerce(object field, object value, object obj, type expected)

cdef int write_timestamp_value(Writer* w, object value, object field, object obj, int kind, long long unit) except -1
cdef object read_timestamp(Reader* r, long long unit, bint aware)
cdef int write_date_value(Writer* w, object value, object field, object obj) except -1
cdef object read_date(Reader* r)
cdef int write_time_value(Writer* w, object value, object field, object obj, long long unit) except -1
cdef object read_time(Reader* r, long long unit)
cdef int write_timedelta_value(Writer* w, object value, object field, object obj) except -1
cdef object read_timedelta(Reader* r)
cdef int write_decimal_value(Writer* w, object value, object field, object obj, int scale, int precision, Py_ssize_t size) except -1
cdef object read_decimal(Reader* r, int scale, int precision, Py_ssize_t size)
cdef object read_decimal_exact(Reader* r, int scale, int precision, Py_ssize_t size)
cdef int write_uuid_value(Writer* w, object value, object field, object obj, bint fixed) except -1
cdef object read_uuid(Reader* r, bint fixed)
# a uuid's 36-character lower-case text from its 16 bytes; its 16 bytes from
# a 36-character 8-4-4-4-12 hex text of either case (0: it is not one)
cdef void uuid_text(const unsigned char* raw, unsigned char* out) noexcept
cdef bint uuid_bytes(const unsigned char* text, unsigned char* out) noexcept
cdef object enum_value(dict values, object field, object value, object obj)
cdef tuple as_tuple(object field, object value, Py_ssize_t size)
cdef int write_bytes_value(Writer* w, object value, object field, object obj) except -1
cdef int write_fixed_value(Writer* w, object value, object field, object obj, Py_ssize_t size) except -1
cdef int write_enum_value(Writer* w, object value, object field, object obj, tuple members, dict indexes) except -1
cdef object read_enum(Reader* r, tuple members)
cdef bytes read_fixed(Reader* r, Py_ssize_t size)

# Any Avro type as a flat table of its nodes (and fastavro's parsed schema,
# from which the table is made), over which the runtime walks a value's bytes,
# bounded, allocating nothing: the fastavro drop-in's reads from streams, a
# Constant field's ignored bytes.
cdef struct GenericNode:
    int kind            # GENERIC_NULL .. GENERIC_RECORD (_runtime.pyx)
    int precision       # > 0 for a decimal on bytes or fixed
    int scale
    Py_ssize_t size     # fixed: bytes; enum: symbols; union: branches; record: fields
    Py_ssize_t first    # union, record: first of its nodes in `links`; array, map: the item node
    Py_ssize_t min_size # the fewest bytes one value takes
    bint zero           # every value takes no bytes (null, fixed(0), records of those)

cdef class GenericType:
    cdef readonly object parsed
    cdef dict named
    cdef readonly str name
    cdef GenericNode* nodes
    cdef Py_ssize_t* links
    cdef Py_ssize_t node_count

# For record writers and readers, every few levels of nesting: an error when
# the calling thread's C stack is nearly used up (threads may have far less
# stack than max_depth levels need).
cdef int check_write_stack(int depth) except -1
# skips one value of the type with the walk's checks; max_depth bounds nesting
# (records, arrays, maps) within the value, lowered to what the calling
# thread's C stack leaves room for
cdef int skip_checked(Reader* r, GenericType avro, int max_depth, Py_ssize_t max_items) except -1
cdef object as_list(object value)
cdef dict as_dict(object value)

# ---------------------------------------------------------------- reading --

cdef struct Reader:
    const unsigned char* data
    Py_ssize_t pos
    Py_ssize_t end
    # set when a value decodes fine but marshmallow's load would reject it
    # (NaN in a Float without allow_nan, ...): the caller lets marshmallow
    # report the error exactly as it would
    bint invalid
    # how many more array/map items the message may announce: its length plus
    # an allowance, so that items encoded in zero bytes (nulls, empty
    # records) cost time and memory in proportion to the input
    long long budget
    # the allowance the budget started with beyond the length, for the error
    long long allowance

cdef int raise_decode_error(Reader* r, str message, Py_ssize_t offset) except -1
# a datum that reaches a part of the writer's schema the reader's cannot read
cdef int raise_unreadable(Reader* r, str message, Py_ssize_t offset) except -1
# The errors of the inline readers below, formatted out of line so that the
# readers stay small enough for the C compiler to inline at -O1.
cdef enum:
    BAD_INT = 0
    BAD_INDEX = 1
    BAD_BOOLEAN = 2
    NEGATIVE_LENGTH = 3
    LONG_LENGTH = 4
    BAD_BLOCK_COUNT = 5
cdef int raise_bad_value(Reader* r, int kind, long long value, long long bound, Py_ssize_t offset) except -1
cdef int raise_truncated(Reader* r, Py_ssize_t needed) except -1
cdef long long read_long_slow(Reader* r) except? -1
cdef int check_count(Reader* r, long long count, Py_ssize_t min_item_size, Py_ssize_t max_items, Py_ssize_t offset) except -1
cdef int check_finished(Reader* r) except -1
cdef int check_read_stack(Reader* r, int depth) except -1

cdef inline long long read_long(Reader* r) except? -1:
    # one-byte varints (values -64..63) are by far the most common
    cdef unsigned char b
    if r.pos < r.end:
        b = r.data[r.pos]
        if b < 0x80:
            r.pos += 1
            return <long long>(b >> 1) ^ -<long long>(b & 1)
    return read_long_slow(r)

cdef inline long long read_int(Reader* r) except? -1:
    cdef Py_ssize_t start = r.pos
    cdef long long n = read_long(r)
    if n < -2147483648 or n > 2147483647:
        raise_bad_value(r, BAD_INT, n, 0, start)
    return n

cdef inline int read_index(Reader* r, long long branches) except -1:
    # a union branch or enum symbol index, checked against the branch count
    cdef Py_ssize_t start = r.pos
    cdef long long index = read_long(r)
    if index < 0 or index >= branches:
        raise_bad_value(r, BAD_INDEX, index, branches, start)
    return <int>index

cdef inline bint read_boolean(Reader* r) except -1:
    cdef unsigned char b
    if r.pos >= r.end:
        raise_truncated(r, 1)
    b = r.data[r.pos]
    if b > 1:
        raise_bad_value(r, BAD_BOOLEAN, b, 0, r.pos)
    r.pos += 1
    return b

cdef inline double read_double(Reader* r) except? -1:
    cdef double value
    if r.end - r.pos < 8:
        raise_truncated(r, 8)
    memcpy(&value, r.data + r.pos, 8)
    r.pos += 8
    return value

cdef inline double read_float(Reader* r) except? -1:
    cdef float value
    if r.end - r.pos < 4:
        raise_truncated(r, 4)
    memcpy(&value, r.data + r.pos, 4)
    r.pos += 4
    return value

cdef inline Py_ssize_t read_length(Reader* r) except -1:
    # a string/bytes length: never negative, never past the end of the data
    cdef Py_ssize_t start = r.pos
    cdef long long n = read_long(r)
    if n < 0:
        raise_bad_value(r, NEGATIVE_LENGTH, n, 0, start)
    if n > r.end - r.pos:
        raise_bad_value(r, LONG_LENGTH, n, r.end - r.pos, start)
    return <Py_ssize_t>n

cdef str invalid_utf8(Reader* r, Py_ssize_t n)

cdef extern from *:
    """
    /* Whether n bytes are all ASCII, 8 at a time: names, ids, codes and
       currencies nearly always are. The last word overlaps the one before
       it, short strings take two overlapping 4-byte words: no loop per
       byte. */
    static inline int roasted_all_ascii(const unsigned char* text, Py_ssize_t n) {
        uint64_t word, high = 0;
        uint32_t first, last;
        Py_ssize_t i;
        if (n >= 8) {
            for (i = 0; i + 8 < n; i += 8) {
                memcpy(&word, text + i, 8);
                high |= word;
            }
            memcpy(&word, text + n - 8, 8);
            return !((high | word) & 0x8080808080808080ULL);
        }
        if (n >= 4) {
            memcpy(&first, text, 4);
            memcpy(&last, text + n - 4, 4);
            return !((first | last) & 0x80808080U);
        }
        for (i = 0; i < n; i++)
            high |= text[i];
        return high < 0x80;
    }

    /* A new compact ASCII str of n ASCII bytes: allocated at its size and
       copied, without the UTF-8 decoder's dispatch (0 bytes: the empty str).
       Its characters follow the PyASCIIObject header (CPython's own
       _PyUnicode_COMPACT_DATA for ASCII). */
    static inline PyObject* roasted_ascii_str(const unsigned char* text, Py_ssize_t n) {
        PyObject* value = PyUnicode_New(n, 127);
        if (value != NULL)
            roasted_copy_bytes((unsigned char*)(((PyASCIIObject*)value) + 1), text, n);
        return value;
    }
    """
    bint all_ascii "roasted_all_ascii"(const unsigned char* text, Py_ssize_t n) noexcept
    str ascii_str "roasted_ascii_str"(const unsigned char* text, Py_ssize_t n)

cdef inline str read_str(Reader* r):
    cdef Py_ssize_t n = read_length(r)
    cdef PyObject* decoded
    if all_ascii(r.data + r.pos, n):
        r.pos += n
        return ascii_str(r.data + r.pos - n, n)
    decoded = decode_utf8_or_null(<const char*>r.data + r.pos, n, NULL)
    if decoded == NULL:
        return invalid_utf8(r, n)
    r.pos += n
    value = <str>decoded
    Py_DECREF(value)    # the cast above took a second reference
    return value

# A string passed over where only its UTF-8 matters (values copied as
# written): no str made for ASCII; read_str's error and offset otherwise
cdef inline int pass_str(Reader* r) except -1:
    cdef Py_ssize_t start = r.pos
    cdef Py_ssize_t n = read_length(r)
    if all_ascii(r.data + r.pos, n):
        r.pos += n
        return 0
    r.pos = start
    read_str(r)
    return 0

# A map key: short ASCII keys come from a small cache of str objects (with
# their hashes computed), as map keys repeat across messages.
cdef str read_key(Reader* r)

cdef inline bytes read_bytes(Reader* r):
    cdef Py_ssize_t n = read_length(r)
    value = (<const char*>r.data)[r.pos:r.pos + n]
    r.pos += n
    return value

# An array's items: the list is made with room for the first block's items
# (no regrowth while most arrays, one block long, are read) but holds none;
# each item is stored in the next slot and counted, so the list is a whole
# list at every moment (Python code a field calls may see it). Items beyond
# the room, from later blocks, are appended. The count is already checked
# against the bytes that remain, so the room never exceeds what the input
# can fill.
cdef extern from "Python.h":
    ctypedef struct PyListObject:
        PyObject** ob_item
        Py_ssize_t allocated
    void set_size "Py_SET_SIZE"(object o, Py_ssize_t size)

cdef inline list new_items(long long count):
    cdef list items = PyList_New(count)
    set_size(items, 0)    # the slots are empty (NULL); the list holds none
    return items

cdef inline int put_item(list items, object item) except -1:
    cdef PyListObject* room = <PyListObject*>items
    cdef Py_ssize_t size = PyList_GET_SIZE(items)
    if size < room.allocated:
        Py_INCREF(item)
        room.ob_item[size] = <PyObject*>item
        set_size(items, size + 1)
        return 0
    return PyList_Append(items, item)

cdef inline long long read_block_count(Reader* r, Py_ssize_t min_item_size, Py_ssize_t max_items) except? -1:
    # Array and map blocks: a negative count is followed by the block's byte
    # size, which we do not need. 0 ends the collection.
    cdef Py_ssize_t start = r.pos
    cdef long long count = read_long(r)
    if count < 0:
        if count == -9223372036854775807 - 1:
            raise_bad_value(r, BAD_BLOCK_COUNT, count, 0, start)
        count = -count
        read_long(r)
    if count:
        check_count(r, count, min_item_size, max_items, start)
    return count

cdef int open_reader(Reader* r, object data, Py_buffer* view, long long allowance) except -1
cdef void close_reader(Py_buffer* view, int acquired) noexcept

# A number of the writer's type read and promoted to the reader's (or an
# enum's symbol renumbered), for the one-pass readers of another writer's
# data (roastedavro.evolved): its encoding in the reader's type (after a
# nullable union's branch index) is written into `room`, which `reader` then
# reads with the reader's own field code.
cdef struct Promoted:
    Reader reader
    unsigned char room[16]

cdef enum:
    PROMOTE_INT_LONG = 1
    PROMOTE_INT_FLOAT = 2
    PROMOTE_INT_DOUBLE = 3
    PROMOTE_LONG_FLOAT = 4
    PROMOTE_LONG_DOUBLE = 5
    PROMOTE_FLOAT_DOUBLE = 6

cdef int read_promoted(Reader* r, Promoted* promoted, int kind) except -1
# the same for a nullable number: the writer's and the reader's union have
# null at `null_index` and the number at the other
cdef int read_promoted_nullable(Reader* r, Promoted* promoted, int null_index, int kind) except -1
# an enum's symbol written by another version of it: the writer's index read
# and renumbered as the reader's (``indexes``; -1: the reader has neither the
# symbol nor a default, and ``messages`` says so at the index's offset)
cdef int read_remapped(Reader* r, Promoted* promoted, tuple indexes, tuple messages) except -1
# the same conversions into any buffer of at least 16 bytes, returning the
# bytes written (tier 0's Rearranger writes them into the reader's bytes)
cdef Py_ssize_t promote_into(Reader* r, unsigned char* out, int kind) except -1
cdef Py_ssize_t remap_into(Reader* r, unsigned char* out, tuple indexes, tuple messages) except -1
# A writer's value whose bytes need more than one number or symbol converted
# (an array of renumbered enums, a union whose branches changed, ...): moved
# into the reader's encoding by tier 0's Rearranger (`mover`, its `move`),
# which the field's own code then reads. Tier 0 sets the hook at import.
ctypedef int (*MoveHook)(object mover, Reader* r, Py_ssize_t move, int depth, Writer* w) except -1
cdef void set_move_hook(MoveHook hook) noexcept
cdef object move_written(Reader* r, object mover, Py_ssize_t move, int depth, Writer* room, Reader* out)
cdef int read_remapped_nullable(Reader* r, Promoted* promoted, int null_index, tuple indexes,
                                tuple messages) except -1


# ------------------------------------------ AvroCodec: fastavro's datums --
#
# Python values as fastavro.schemaless_writer takes them (AvroCodec). The
# exact Python type is written inline; anything else goes out of line,
# where it is converted as fastavro converts it (roastedavro._datum) or
# refused with a DumpError, which the codec reports as a DatumError naming
# the value's path. The readers above return what fastavro's reader does.

cdef int write_long_datum_slow(Writer* w, object value, int bits) except -1
cdef int write_double_datum_slow(Writer* w, object value, bint single, bint lenient) except -1
cdef int write_boolean_datum_slow(Writer* w, object value) except -1
cdef int write_string_datum_slow(Writer* w, object value) except -1
cdef int write_bytes_datum_slow(Writer* w, object value) except -1
cdef int write_fixed_datum_slow(Writer* w, object value, Py_ssize_t size) except -1
cdef int write_enum_datum_slow(Writer* w, object value, dict indexes) except -1
cdef dict record_datum_slow(object value)
cdef list array_datum_slow(object value)
cdef dict map_datum_slow(object value)
# a map key that is not an exact str: a str subclass passes, anything else is refused
cdef int check_map_key(object key) except -1

cdef inline int write_long_datum(Writer* w, object value) except -1:
    cdef int overflow = 0
    cdef long long n
    if type(value) is int:
        if small_long(value, &n):
            return write_long(w, n)
        n = PyLong_AsLongLongAndOverflow(value, &overflow)
        if not overflow:
            return write_long(w, n)
    return write_long_datum_slow(w, value, 64)

cdef inline int write_int_datum(Writer* w, object value) except -1:
    cdef int overflow = 0
    cdef long long n
    if type(value) is int:
        if not small_long(value, &n):
            n = PyLong_AsLongLongAndOverflow(value, &overflow)
        if not overflow and -2147483648 <= n <= 2147483647:
            return write_long(w, n)
    return write_long_datum_slow(w, value, 32)

# `lenient`: a record's float or double field, where fastavro applies float()
cdef inline int write_double_datum(Writer* w, object value, bint lenient) except -1:
    if type(value) is float:
        return write_double(w, PyFloat_AS_DOUBLE(value))
    return write_double_datum_slow(w, value, False, lenient)

cdef inline int write_float_datum(Writer* w, object value, bint lenient) except -1:
    if type(value) is float:
        return write_float(w, PyFloat_AS_DOUBLE(value))
    return write_double_datum_slow(w, value, True, lenient)

cdef inline int write_boolean_datum(Writer* w, object value) except -1:
    if value is True:
        return write_byte(w, 1)
    if value is False:
        return write_byte(w, 0)
    return write_boolean_datum_slow(w, value)

cdef inline int write_string_datum(Writer* w, object value) except -1:
    if type(value) is str:
        return write_str(w, <str>value)
    return write_string_datum_slow(w, value)

cdef inline int write_bytes_datum(Writer* w, object value) except -1:
    if type(value) is bytes:
        return write_bytes(w, <bytes>value)
    return write_bytes_datum_slow(w, value)

cdef inline int write_fixed_datum(Writer* w, object value, Py_ssize_t size) except -1:
    if type(value) is bytes and len(<bytes>value) == size:
        return write_raw(w, PyBytes_AS_STRING(value), size)
    return write_fixed_datum_slow(w, value, size)

cdef inline int write_enum_datum(Writer* w, object value, dict indexes) except -1:
    # indexes: symbol -> its index; exact str symbols are found by hash
    cdef PyObject* found
    if type(value) is str:
        found = PyDict_GetItem(indexes, value)
        if found != NULL:
            return write_long(w, PyLong_AsLongLong(<object>found))
    return write_enum_datum_slow(w, value, indexes)

cdef inline dict record_datum(object value):
    if type(value) is dict:
        return <dict>value
    return record_datum_slow(value)

cdef inline list array_datum(object value):
    if type(value) is list:
        return <list>value
    return array_datum_slow(value)

cdef inline dict map_datum(object value):
    if type(value) is dict:
        return <dict>value
    return map_datum_slow(value)

# How an exact int fits: 0 in an Avro int, 1 in a long, 2 in neither (for
# the union branch fastavro chooses among int, long, float and double).
cdef inline int int_size(object value) except -1:
    cdef int overflow = 0
    cdef long long n
    if not small_long(value, &n):
        n = PyLong_AsLongLongAndOverflow(value, &overflow)
    if overflow:
        return 2
    return 0 if -2147483648 <= n <= 2147483647 else 1

# Where a record function is inside its collections, for error paths: an
# array's index, a map's key (PATH_* above).
cdef int add_datum_path(object error, int part, Py_ssize_t index, object key) except -1

cdef enum:
    UNIT_MILLIS = 0
    UNIT_MICROS = 1
    UNIT_NANOS = 2

# timestamp-* and local-timestamp-* (`local`): datetimes as fastavro writes
# them (aware ones in UTC, naive ones as local time, wall-clock time for the
# local types); other values as longs
cdef int write_timestamp_datum(Writer* w, object value, int unit, bint local) except -1
cdef int write_date_datum(Writer* w, object value) except -1
cdef int write_time_datum(Writer* w, object value, int unit) except -1
cdef int write_decimal_datum(Writer* w, object value, int scale, int precision, Py_ssize_t size) except -1
cdef int write_uuid_datum(Writer* w, object value, bint fixed) except -1
cdef int write_big_decimal_datum(Writer* w, object value) except -1
cdef object read_big_decimal(Reader* r)
cdef int write_duration_datum(Writer* w, object value) except -1
cdef object read_duration(Reader* r)

# skipping values (schema resolution): checked as reading them is, nothing built
cdef inline int skip_raw(Reader* r, Py_ssize_t n) except -1:
    if r.end - r.pos < n:
        raise_truncated(r, n)
    r.pos += n
    return 0

cdef inline int skip_long(Reader* r) except -1:
    # a long skipped: its bytes scanned to the last one, no value computed; a
    # varint of 10 bytes (whose last may overflow) or a truncated one is
    # read_long's to check, so skipping refuses exactly what reading refuses
    cdef Py_ssize_t p = r.pos
    cdef Py_ssize_t limit = r.pos + 9
    if limit > r.end:
        limit = r.end
    while p < limit:
        if r.data[p] < 0x80:
            r.pos = p + 1
            return 0
        p += 1
    read_long_slow(r)
    return 0

cdef inline int skip_length(Reader* r) except -1:
    r.pos += read_length(r)
    return 0

# fastavro's validation (its _validate), for the branch of a union with
# several records and maps, which it chooses by validating the value against
# each: the exact Python types inline, others as numbers.Integral/Real say
cdef bint valid_integer_slow(object value, int bits) except -1
cdef bint valid_real_slow(object value) except -1
cdef bint valid_symbol(object value, dict indexes) except -1
cdef bint valid_date(object value) except -1

cdef inline bint valid_integer(object value, int bits) except -1:
    cdef int size
    if type(value) is int:
        size = int_size(value)
        return size == 0 or (size == 1 and bits == 64)
    return valid_integer_slow(value, bits)

cdef inline bint valid_real(object value) except -1:
    if type(value) is float or type(value) is int:
        return True
    return valid_real_slow(value)

cdef inline bint valid_bytes(object value) noexcept:
    return PyBytes_Check(value) or PyByteArray_Check(value)

cdef inline bint valid_fixed(object value, Py_ssize_t size) noexcept:
    if PyBytes_Check(value):
        return PyBytes_GET_SIZE(value) == size
    if PyByteArray_Check(value):
        return PyByteArray_GET_SIZE(value) == size
    return False

# ------------------------------------------------------ schema codecs --

# The Python-facing half of a CompiledSchema's codec: dump and load with
# `many`, marshmallow's fallbacks and load hooks, many=True as one Avro
# array, setting up the reader and writer. A generated module's Codec
# subclasses it and adds its record functions and write_root/read_root, so
# no module compiles this plumbing again.
# A check that a schema of dicts and lists is unchanged since it was met
# (see _runtime.pyx): each dict or list held, its length (a list's as
# ~length) and a dict's version tag.
ctypedef struct ShapeEntry:
    PyObject* container
    Py_ssize_t size
    uint64_t version


cdef class SchemaShape:
    cdef list containers
    cdef list entries
    cdef ShapeEntry* table
    cdef PyObject** words
    cdef Py_ssize_t count
    cdef bint collect(self, object value, int depth) except -1
    cpdef bint matches(self, object schema)


# What turns another writer's bytes into a schema's own, called from C by
# SchemaCodec.load (tier 0's Rearranger).
cdef class Transcoder:
    # a compiled codec that now serves its pair (set once, never unset):
    # whoever still holds the Transcoder is sent on to it
    cdef public object replaced_by
    cdef bytes transcode_bytes(self, object data)


cdef class SchemaCodec:
    cdef int max_depth
    cdef Py_ssize_t max_items
    cdef long long item_allowance
    # the fewest bytes one root record takes (bounds many=True counts)
    cdef Py_ssize_t min_size
    # Set by the schema: its `many`; marshmallow's own path, fn(data, many),
    # for a value the compiled load leaves to it; whether a direction always
    # runs through marshmallow (hooks it cannot run itself); whether loads
    # run validators; the root schema's load hooks, fn(result, many,
    # validate) returning the result or INVALID (see hooks.py); and
    # fn(writer_schema, many) giving what turns another writer's bytes into
    # this schema's (its transcode(data)) and whether the writer schema
    # object cannot change, the last such one kept as (writer_schema, many,
    # pair).
    cdef public bint many
    cdef public bint validate
    cdef public object load_hooks
    cdef public object dump_with_marshmallow
    cdef public object load_with_marshmallow
    cdef public object pairs
    cdef tuple last_pair
    cdef public bint dump_through_marshmallow
    cdef public bint load_through_marshmallow

    cdef int write_root(self, Writer* w, object obj, int depth) except -1
    cdef object read_root(self, Reader* r, int depth)
    cdef bytes write_records(self, obj, bint many)
    cdef bytes dump_one(self, obj)
    cdef bytes dump_many(self, objs)
    cdef object load_one(self, data, bint* invalid)
    cdef list load_many(self, data, bint* invalid)


# The entry points of a codec of plain Avro values (fastavro's datums): dump,
# dump_prefixed, dump_block, load, load_from, load_one, skip, load_block and
# load_block_within, with their errors, bounds and counting. A generated
# AvroCodec module's Codec and tier 0's interpreters (roastedavro._tier0)
# subclass it and give write_datum, read_datum and skip_datum, so no module
# compiles this plumbing again.
cdef class DatumCodec:
    cdef int max_depth
    cdef Py_ssize_t max_items
    cdef long long item_allowance
    # the fewest bytes one value takes (bounds a block's count)
    cdef Py_ssize_t min_size
    # entry-point calls served (the tiers' statistics)
    cdef readonly unsigned long long calls

    # tier 0 counts the bytes too (count_work); compiled codecs only the calls
    cdef bint counts_work

    cdef int write_datum(self, Writer* w, object datum) except -1
    cdef object read_datum(self, Reader* r)
    cdef int skip_datum(self, Reader* r) except -1
    # one value of the type at `node` of tier 0's node table (Interpreter.field_node),
    # at `depth` levels of records below the message's root: a one-pass
    # reader's dropped field
    cdef int skip_at(self, Reader* r, Py_ssize_t node, int depth) except -1
    # fastavro's validation of `value` as the record at `node` of tier 0's
    # node table (Interpreter.record_node), at `depth` below the root: what
    # the generated writers of very large schemas choose a union's record by
    cdef bint accepts_record_at(self, Py_ssize_t node, object value, int depth) except -1
    cdef int count_work(self, Py_ssize_t size) except -1
    # counts one call that wrote or read `size` bytes
    @cython.final
    cdef int counted(self, Py_ssize_t size) except -1
    @cython.final
    cdef bytes encode(self, bytes prefix, datum)
    @cython.final
    cdef object decode(self, data, Py_ssize_t start, bint whole, Py_ssize_t *end)
    # one datum from data[start:stop], read in place: a BytesIO's buffer,
    # whose bytes past `stop` are not the stream's
    @cython.final
    cdef object decode_in(self, bytes data, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t *end)
