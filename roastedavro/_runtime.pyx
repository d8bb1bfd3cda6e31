# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The out-of-line half of the C-level Avro primitives (see _runtime.pxd).

Everything here is on a cold path: growing a buffer past its inline
capacity, multi-byte varints, and turning failures into the library's
exceptions with the byte offset or field path they belong to.
"""

import sys

from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_Next
from cpython.object cimport PyObject
from cpython.unicode cimport PyUnicode_DecodeUTF8
from cpython.mem cimport PyMem_Malloc, PyMem_Realloc, PyMem_Free

from marshmallow.utils import get_value as marshmallow_get_value

from roastedavro import _support as support
from roastedavro.errors import DecodeError, DumpError

if sys.byteorder != "little":
    # the primitives copy IEEE 754 values as they sit in memory
    raise ImportError("roastedavro's compiled codecs need a little-endian machine")


cdef int writer_grow(Writer* w, Py_ssize_t extra) except -1:
    cdef Py_ssize_t needed = w.size + extra
    cdef Py_ssize_t capacity = w.capacity * 2
    cdef char* grown
    while capacity < needed:
        capacity *= 2
    if w.data == w.small:
        grown = <char*>PyMem_Malloc(capacity)
        if grown == NULL:
            raise MemoryError()
        memcpy(grown, w.small, w.size)
    else:
        grown = <char*>PyMem_Realloc(w.data, capacity)
        if grown == NULL:
            raise MemoryError()
    w.data = grown
    w.capacity = capacity
    return 0


cdef bytes writer_finish(Writer* w):
    return PyBytes_FromStringAndSize(w.data, w.size)


cdef void writer_release(Writer* w) noexcept:
    if w.data != w.small:
        PyMem_Free(w.data)
    w.data = w.small
    w.size = 0
    w.capacity = sizeof(w.small)


cdef int write_str(Writer* w, str value) except -1:
    cdef Py_ssize_t n
    cdef const char* utf8
    try:
        utf8 = PyUnicode_AsUTF8AndSize(value, &n)
    except UnicodeEncodeError as error:
        raise DumpError(u"Not a valid UTF-8 string: %s." % error.reason) from None
    write_long(w, n)
    return write_raw(w, utf8, n)


cdef int value_source(object obj) except -1:
    if type(obj) is dict:
        return SOURCE_DICT
    if not hasattr(obj, "__getitem__"):
        return SOURCE_ATTRIBUTES
    return SOURCE_OTHER


cdef object field_value(object obj, int source, str key, object default):
    if source == SOURCE_DICT:
        return (<dict>obj).get(key, default)
    if source == SOURCE_ATTRIBUTES:
        return getattr(obj, key, default)
    # mappings that are not dicts, objects with __getitem__, dotted keys
    return marshmallow_get_value(obj, key, default)


cdef object convert(object field, object value, object obj, type expected):
    return support.serialize_value(field, value, obj, expected)


cdef int write_long_value(Writer* w, object value, object field, object obj) except -1:
    if type(value) is not int:
        value = convert(field, value, obj, int)
    return write_long(w, as_long(value))


cdef int write_int_value(Writer* w, object value, object field, object obj) except -1:
    if type(value) is not int:
        value = convert(field, value, obj, int)
    return write_long(w, as_int(value))


cdef int write_double_value(Writer* w, object value, object field, object obj) except -1:
    if type(value) is not float:
        value = convert(field, value, obj, float)
    return write_double(w, PyFloat_AS_DOUBLE(value))


cdef int write_float_value(Writer* w, object value, object field, object obj) except -1:
    if type(value) is not float:
        value = convert(field, value, obj, float)
    return write_float(w, PyFloat_AS_DOUBLE(value))


cdef int write_str_value(Writer* w, object value, object field, object obj) except -1:
    if type(value) is not str:
        value = convert(field, value, obj, str)
    return write_str(w, <str>value)


cdef int write_boolean_value(Writer* w, object value, object field, object obj) except -1:
    if value is True:
        return write_byte(w, 1)
    if value is False:
        return write_byte(w, 0)
    value = convert(field, value, obj, bool)
    return write_byte(w, value is True)


cdef dict with_str_keys(dict mapping, object keys_field, object obj, bint always):
    # The mapping itself when every key is an exact str (one C-level pass);
    # otherwise a new dict of converted keys, later keys winning as in
    # marshmallow's Dict. Errors name the key, marshmallow-style.
    cdef Py_ssize_t position = 0
    cdef PyObject* key_ref
    cdef PyObject* value_ref
    if not always:
        while PyDict_Next(mapping, &position, &key_ref, &value_ref):
            if type(<object>key_ref) is not str:
                break
        else:
            return mapping
    converted = {}
    for key, value in mapping.items():
        try:
            if keys_field is None:
                if type(key) is not str:
                    raise DumpError(u"Map keys must be strings.")
                new_key = key
            else:
                new_key = support.serialize_value(keys_field, key, obj, str)
        except DumpError as error:
            error.path.append(u"key")
            error.path.append(key)
            raise
        converted[new_key] = value
    return converted


cdef int add_path(object error, int part, Py_ssize_t index, object key) except -1:
    if part == PATH_INDEX:
        error.path.append(index)
    elif part != PATH_NONE:
        # marshmallow's layout for Dict errors: {key: {"key"|"value": [...]}}
        error.path.append(u"key" if part == PATH_KEY else u"value")
        error.path.append(key)
    return 0


cdef object as_list(object value):
    return support.as_list(value)


cdef dict as_dict(object value):
    return support.as_dict(value)


cdef int raise_dump_error(str message) except -1:
    raise DumpError(message)


cdef long long long_out_of_range(object value) except? -1:
    raise DumpError(
        u"Number out of range for Avro long (-2**63 .. 2**63-1): %d." % value)


cdef int int_out_of_range(long long value) except -1:
    raise DumpError(
        u"Number out of range for Avro int (-2**31 .. 2**31-1): %d." % value)


cdef int raise_decode_error(Reader* r, str message, Py_ssize_t offset) except -1:
    raise DecodeError(message, offset)


cdef int raise_truncated(Reader* r, Py_ssize_t needed) except -1:
    raise DecodeError(
        u"truncated data: %d more bytes needed, %d remain" % (needed, r.end - r.pos), r.pos)


cdef long long read_long_slow(Reader* r) except? -1:
    cdef Py_ssize_t start = r.pos
    cdef unsigned long long n = 0
    cdef unsigned long long b
    cdef int shift = 0
    while True:
        if r.pos >= r.end:
            raise DecodeError(u"truncated data: varint runs past the end", start)
        b = r.data[r.pos]
        r.pos += 1
        if shift == 63 and b > 1:
            # the tenth byte may only carry the top bit of a 64-bit value
            raise DecodeError(u"varint longer than 64 bits", start)
        n |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    return <long long>(n >> 1) ^ -<long long>(n & 1)


cdef str read_str(Reader* r):
    cdef Py_ssize_t n = read_length(r)
    cdef Py_ssize_t bad
    try:
        value = PyUnicode_DecodeUTF8(<const char*>r.data + r.pos, n, NULL)
    except UnicodeDecodeError as error:
        raise DecodeError(u"invalid UTF-8 in string", r.pos + error.start) from None
    r.pos += n
    return value


cdef int check_count(Reader* r, long long count, Py_ssize_t min_item_size, Py_ssize_t max_items, Py_ssize_t offset) except -1:
    # Called before any item is read, so no allocation or loop is ever sized
    # by a count that the remaining bytes cannot back.
    if count > max_items:
        raise DecodeError(
            u"block of %d items exceeds the limit of %d items" % (count, max_items), offset)
    if min_item_size and count > (r.end - r.pos) // min_item_size:
        raise DecodeError(
            u"block of %d items needs at least %d bytes, %d remain"
            % (count, count * min_item_size, r.end - r.pos), offset)
    return 0


cdef int check_finished(Reader* r) except -1:
    if r.pos != r.end:
        raise DecodeError(u"%d trailing bytes after the record" % (r.end - r.pos), r.pos)
    return 0


cdef int open_reader(Reader* r, object data, Py_buffer* view) except -1:
    # bytes are read in place; bytearray, memoryview and other buffers through
    # the buffer protocol. Returns 1 when a buffer view was taken, which the
    # caller hands back to close_reader.
    if type(data) is bytes:
        r.data = <const unsigned char*>PyBytes_AS_STRING(data)
        r.end = PyBytes_GET_SIZE(data)
        r.pos = 0
        return 0
    try:
        PyObject_GetBuffer(data, view, PyBUF_SIMPLE)
    except TypeError:
        raise TypeError(
            "expected bytes or a bytes-like object, got %s" % type(data).__name__) from None
    r.data = <const unsigned char*>view.buf
    r.end = view.len
    r.pos = 0
    return 1


cdef void close_reader(Py_buffer* view, int acquired) noexcept:
    if acquired:
        PyBuffer_Release(view)
