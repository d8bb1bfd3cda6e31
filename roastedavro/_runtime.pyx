# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: embedsignature=True, embedsignature.format=clinic
"""The out-of-line half of the C-level Avro primitives (see _runtime.pxd).

Everything here is on a cold path: growing a buffer past its inline
capacity, multi-byte varints, and turning failures into the library's
exceptions with the byte offset or field path they belong to. Also the
base class of CompiledSchema's codecs (SchemaCodec), once per message.
"""

import collections.abc
import datetime
import decimal
import io
import numbers
import sys
import uuid

cimport cython
from libc.stdint cimport uint64_t
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE
from cpython.pyport cimport PY_SSIZE_T_MAX
from cpython.datetime cimport (
    import_datetime, datetime_new, date_new, time_new, timedelta_new,
    datetime_year, datetime_month, datetime_day, datetime_hour, datetime_minute,
    datetime_second, datetime_microsecond, datetime_tzinfo,
    date_year, date_month, date_day, time_hour, time_minute, time_second,
    time_microsecond, time_tzinfo, timedelta_days, timedelta_seconds,
    timedelta_microseconds, PyDateTime_Check, PyDate_Check, PyTime_Check,
)
from cpython.dict cimport PyDict_Next
from cpython.object cimport PyObject, PyObject_GenericSetAttr, PyTypeObject
from cpython.long cimport PyLong_AsUnsignedLongLongMask, PyLong_FromUnsignedLongLong
from cpython.tuple cimport PyTuple_GET_ITEM
from cpython.exc cimport PyErr_Clear
from cpython.unicode cimport PyUnicode_CheckExact, PyUnicode_DecodeASCII, PyUnicode_DecodeUTF8
from cpython.ref cimport Py_INCREF, Py_XDECREF, Py_REFCNT
from libc.string cimport memcmp
from libc.time cimport tm, mktime, time_t
from cpython.mem cimport PyMem_Malloc, PyMem_Realloc, PyMem_Free

# marshmallow is imported on first use: codecs of plain Avro schemas
# (AvroCodec, roastedavro.fastavro) never use it, and it is ~3 MB
cdef object _ValidationError = None
cdef object _get_value = None
cdef object _Validator = None
# marshmallow 3 also fails a plain callable that returns False; 4 ignores
# what validators return
cdef bint FALSE_FAILS = False


cdef int load_marshmallow() except -1:
    global _ValidationError, _get_value, _Validator, FALSE_FAILS
    import importlib.metadata
    from marshmallow import ValidationError
    from marshmallow.utils import get_value
    from marshmallow.validate import Validator

    FALSE_FAILS = int(importlib.metadata.version("marshmallow").split(".")[0]) < 4
    _get_value, _Validator = get_value, Validator
    _ValidationError = ValidationError
    return 0


cdef inline object validation_error_type():
    """marshmallow's ValidationError (only error paths and marshmallow codecs ask)."""
    if _ValidationError is None:
        load_marshmallow()
    return _ValidationError

cdef extern from *:
    # GCC and clang's 128-bit integers: decimals of up to 38 digits in C
    ctypedef long long int128 "__int128"
    ctypedef unsigned long long uint128 "unsigned __int128"

cdef extern from *:
    """
    /* A 128-bit unsigned int from 16 big-endian bytes, in one step:
       CPython 3.13 made this public; before, int.from_bytes's own helper. */
    static PyObject* roasted_uint128_from_bytes(const unsigned char* bytes) {
    #if PY_VERSION_HEX >= 0x030D0000
        return PyLong_FromUnsignedNativeBytes(bytes, 16, Py_ASNATIVEBYTES_BIG_ENDIAN);
    #else
        return _PyLong_FromByteArray(bytes, 16, 0, 0);
    #endif
    }

    /* The same from its two 64-bit halves. */
    static PyObject* roasted_uint128(unsigned long long high, unsigned long long low) {
        unsigned char bytes[16];
        for (int i = 0; i < 8; i++) {
            bytes[i] = (unsigned char)(high >> (56 - 8 * i));
            bytes[8 + i] = (unsigned char)(low >> (56 - 8 * i));
        }
        return roasted_uint128_from_bytes(bytes);
    }
    """
    object roasted_uint128_from_bytes(const unsigned char* data)
    object roasted_uint128(unsigned long long high, unsigned long long low)

cdef extern from *:
    """
    /* How many bits a 128-bit magnitude needs (0 for 0): one instruction
       per half instead of a loop over the bits. */
    static int roasted_uint128_bits(unsigned __int128 value) {
        unsigned long long high = (unsigned long long)(value >> 64);
        unsigned long long low = (unsigned long long)value;
        if (high)
            return 128 - __builtin_clzll(high);
        return low ? 64 - __builtin_clzll(low) : 0;
    }
    """
    int uint128_bits "roasted_uint128_bits"(uint128 value) noexcept

cdef extern from *:
    """
    #include <structmember.h>

    /* uuid.UUID keeps its value in two __slots__, `int` and `is_safe`. Their
       offsets, found once from the class's member descriptors, let a UUID
       be built and read like a C struct: no attribute lookup, no
       __setattr__ (which UUID refuses anyway). -1: not found, the slow
       path is used. */
    static Py_ssize_t roasted_uuid_int_offset = -1;
    static Py_ssize_t roasted_uuid_safe_offset = -1;

    static Py_ssize_t roasted_member_offset(PyObject* type, const char* name) {
        PyObject* descriptor = PyDict_GetItemString(((PyTypeObject*)type)->tp_dict, name);
        if (descriptor == NULL || Py_TYPE(descriptor) != &PyMemberDescr_Type)
            return -1;
        PyMemberDef* member = ((PyMemberDescrObject*)descriptor)->d_member;
        if (member->type != T_OBJECT_EX || (member->flags & READONLY))
            return -1;
        return member->offset;
    }

    static void roasted_uuid_init(PyObject* type) {
        Py_ssize_t int_offset = roasted_member_offset(type, "int");
        Py_ssize_t safe_offset = roasted_member_offset(type, "is_safe");
        if (int_offset > 0 && safe_offset > 0) {
            roasted_uuid_int_offset = int_offset;
            roasted_uuid_safe_offset = safe_offset;
        }
    }

    /* A new UUID from its 128-bit int (a new reference); NULL on error. */
    static PyObject* roasted_uuid_new(PyObject* type, PyObject* number, PyObject* safe) {
        PyObject* value = ((PyTypeObject*)type)->tp_alloc((PyTypeObject*)type, 0);
        if (value == NULL)
            return NULL;
        Py_INCREF(number);
        *(PyObject**)((char*)value + roasted_uuid_int_offset) = number;
        Py_INCREF(safe);
        *(PyObject**)((char*)value + roasted_uuid_safe_offset) = safe;
        return value;
    }

    /* A UUID's int slot, borrowed; NULL if the slot is empty. */
    static PyObject* roasted_uuid_int(PyObject* value) {
        return *(PyObject**)((char*)value + roasted_uuid_int_offset);
    }

    /* The 16 big-endian bytes of an int in [0, 2**128); -1 (an exception
       set) for any other int. */
    static int roasted_uint128_bytes(PyObject* number, unsigned char* out) {
        if (!PyLong_CheckExact(number) || _PyLong_Sign(number) < 0) {
            PyErr_SetString(PyExc_ValueError, "UUID int out of range");
            return -1;
        }
    #if PY_VERSION_HEX >= 0x030D0000
        Py_ssize_t needed = PyLong_AsNativeBytes(number, out, 16,
            Py_ASNATIVEBYTES_BIG_ENDIAN | Py_ASNATIVEBYTES_UNSIGNED_BUFFER);
        if (needed < 0)
            return -1;
        if (needed > 16) {
            PyErr_SetString(PyExc_ValueError, "UUID int out of range");
            return -1;
        }
        return 0;
    #else
        return _PyLong_AsByteArray((PyLongObject*)number, out, 16, 0, 0);
    #endif
    }

    /* Two lowercase hex digits per byte value, and each text byte's hex
       value (256: not a hex digit). */
    static char roasted_hex_pairs[513];
    static short roasted_hex_values[256];

    static void roasted_hex_init(void) {
        static const char digits[] = "0123456789abcdef";
        for (int i = 0; i < 256; i++) {
            roasted_hex_pairs[2 * i] = digits[i >> 4];
            roasted_hex_pairs[2 * i + 1] = digits[i & 15];
            roasted_hex_values[i] = 256;
        }
        for (int i = 0; i < 10; i++)
            roasted_hex_values['0' + i] = i;
        for (int i = 0; i < 6; i++) {
            roasted_hex_values['a' + i] = 10 + i;
            roasted_hex_values['A' + i] = 10 + i;
        }
    }

    /* The canonical 36-character form (8-4-4-4-12, lowercase) of 16 bytes. */
    static void roasted_uuid_format(const unsigned char* bytes, unsigned char* out) {
        int position = 0;
        for (int i = 0; i < 16; i++) {
            if (i == 4 || i == 6 || i == 8 || i == 10)
                out[position++] = '-';
            out[position++] = roasted_hex_pairs[2 * bytes[i]];
            out[position++] = roasted_hex_pairs[2 * bytes[i] + 1];
        }
    }

    /* 16 bytes from a 36-character 8-4-4-4-12 hex form (either case);
       0 if `text` is not one. */
    static int roasted_uuid_parse(const unsigned char* text, unsigned char* out) {
        static const unsigned char starts[16] = {0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34};
        int bad = 0;
        if (text[8] != '-' || text[13] != '-' || text[18] != '-' || text[23] != '-')
            return 0;
        for (int i = 0; i < 16; i++) {
            int high = roasted_hex_values[text[starts[i]]];
            int low = roasted_hex_values[text[starts[i] + 1]];
            bad |= high | low;
            out[i] = (unsigned char)((high << 4) | low);
        }
        return !(bad & 256);
    }
    """
    void roasted_uuid_init(object uuid_type)
    Py_ssize_t roasted_uuid_int_offset
    object roasted_uuid_new(object uuid_type, object number, object safe)
    PyObject* roasted_uuid_int(object value)
    int roasted_uint128_bytes(object number, unsigned char* out) except -1
    void roasted_hex_init()
    void roasted_uuid_format(const unsigned char* data, unsigned char* out)
    int roasted_uuid_parse(const unsigned char* text, unsigned char* out)

cdef extern from *:
    """
    #include <stdint.h>

    /* The value of `key` if it is the dict's next entry after `*cursor`
       (borrowed, and the cursor moved past it); NULL otherwise. A key that
       is not the very object is compared by its cached hash, then its
       characters: str keys built at run time (json.loads, f-strings) are
       equal to the field's name without being it. */
    static PyObject* roasted_next_value(PyObject* dict, Py_ssize_t* cursor, PyObject* key) {
        Py_ssize_t position = *cursor;
        PyObject* found_key;
        PyObject* found_value;
        if (!PyDict_Next(dict, &position, &found_key, &found_value))
            return NULL;
        if (found_key != key && !roasted_same_key(found_key, key))
            return NULL;
        *cursor = position;
        return found_value;
    }
    """
    PyObject* roasted_next_value(object mapping, Py_ssize_t* cursor, object key)

cdef extern from *:
    """
    #include <stdint.h>

    /* The number behind a C `decimal.Decimal` (libmpdec's mpd_t as _decimal
       embeds it, 64-bit configuration: words of 19 decimal digits). Read
       only where roasted_decimal_layout_ok says the layout is this one:
       checked at import against as_tuple() on sample values. */
    typedef struct {
        uint8_t flags;
        int64_t exp;
        int64_t digits;
        int64_t len;
        int64_t alloc;
        uint64_t* data;
    } roasted_mpd;

    typedef struct {
        PyObject_HEAD
        Py_hash_t hash;
        roasted_mpd dec;
    } roasted_decimal_object;

    static int roasted_decimal_layout_ok = 0;

    /* A finite Decimal's sign, coefficient (up to 38 digits) and exponent;
       0 for anything else (NaN, Infinity, longer coefficients). */
    static int roasted_decimal_parts(PyObject* value, int* negative, __int128* coefficient,
                                     long long* exponent, long long* digits) {
        const roasted_mpd* dec = &((roasted_decimal_object*)value)->dec;
        if (dec->flags & 14 || dec->len < 1 || dec->len > 2)
            return 0;
        unsigned __int128 number = dec->data[0];
        if (dec->len == 2)
            number += (unsigned __int128)dec->data[1] * 10000000000000000000ULL;
        if (number >> 127)
            return 0;
        *negative = dec->flags & 1;
        *coefficient = (__int128)number;
        *exponent = dec->exp;
        *digits = number ? dec->digits : 0;
        return 1;
    }
    """
    int roasted_decimal_layout_ok
    int roasted_decimal_parts(object value, int* negative, int128* coefficient,
                              long long* exponent, long long* digits)
    Py_ssize_t ROASTED_DECIMAL_OBJECT_SIZE "sizeof(roasted_decimal_object)"

from roastedavro import _support as support
from roastedavro import _datum as datums
from roastedavro.errors import (
    DecodeError, DumpError, IndexDecodeError, LengthDecodeError, TextDecodeError, TruncatedError,
    UnreadableDatumError,
)

import_datetime()

cdef object UTC = datetime.timezone.utc
cdef type DATETIME = datetime.datetime
cdef type DATE = datetime.date
cdef type TIME = datetime.time
cdef type TIMEDELTA = datetime.timedelta
cdef type UUID = uuid.UUID
cdef object UUID_FROM_BYTES = uuid.UUID
cdef object SAFE_UNKNOWN = uuid.SafeUUID.unknown
roasted_uuid_init(UUID)
roasted_hex_init()
cdef tuple EMPTY_TUPLE = ()
cdef type DECIMAL = decimal.Decimal


def _decimal_layout_matches():
    # Only the C implementation (_decimal) has the layout; then every sample
    # must read back as as_tuple() says, or the text path stays in use.
    cdef int negative
    cdef int128 coefficient
    cdef long long exponent, digits
    try:
        import _decimal
    except ImportError:
        return False
    if decimal.Decimal is not _decimal.Decimal or decimal.Decimal.__basicsize__ < ROASTED_DECIMAL_OBJECT_SIZE:
        return False
    samples = ["0", "-0", "0.00", "1", "-1", "1.5", "-123.4500", "9999999999999999999",
               "10000000000000000000", "-12345678901234567890.123456", "1E+5", "-7E-30",
               "99999999999999999999999999999999999999", "-0.00000000000000000000000000000000000001"]
    for text in samples:
        value = decimal.Decimal(text)
        sign, figures, expected_exponent = value.as_tuple()
        if not roasted_decimal_parts(value, &negative, &coefficient, &exponent, &digits):
            return False
        expected = int("".join(map(str, figures)))
        if (negative != sign or exponent != expected_exponent
                or roasted_uint128(<unsigned long long>(coefficient >> 64),
                                   <unsigned long long>coefficient) != expected
                or digits != (len(str(expected)) if expected else 0)):
            return False
    for text in ("NaN", "-Infinity", "sNaN", "1" * 40):
        if roasted_decimal_parts(decimal.Decimal(text), &negative, &coefficient, &exponent, &digits):
            return False
    return True


roasted_decimal_layout_ok = _decimal_layout_matches()
#: whether Decimals are written from their coefficient and exponent (the C
#: layout checked above), rather than from their text
DECIMAL_LAYOUT_VERIFIED = bool(roasted_decimal_layout_ok)
# Decimal from its text through a context that cannot round (the largest
# precision and exponents): the same value as Decimal(text), without the
# constructor's keyword-argument parsing
cdef object DECIMAL_FROM_TEXT = decimal.Context(
    prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN).create_decimal

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


cdef int write_str_slow(Writer* w, str value) except -1:
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
    if _get_value is None:
        load_marshmallow()
    return _get_value(obj, key, default)


cdef object next_field_slow(object obj, int source, Py_ssize_t* cursor, str key, object default):
    cdef PyObject* found
    if source != SOURCE_DICT:
        return field_value(obj, source, key, default)
    # A dict next_entry walks in place was walked there already: the field
    # is not next, so it is looked up. Others are walked with PyDict_Next,
    # which checks the cursor against the dict's current entries, so a dict
    # changed by a field's own code is still read safely.
    if not dict_walkable(obj):
        found = roasted_next_value(obj, cursor, key)
        if found != NULL:
            return <object>found
    return (<dict>obj).get(key, default)


cdef object convert(object field, object value, object obj, type expected):
    return support.serialize_value(field, value, obj, expected)


cdef bint passes(object validator, object value) except -1:
    # as marshmallow's And: a ValidationError fails; any other exception
    # propagates as it does from marshmallow
    try:
        result = validator(value)
    except validation_error_type():
        return False
    if result is not False:
        return True
    if _Validator is None:
        load_marshmallow()
    return not (FALSE_FAILS and not isinstance(validator, _Validator))


cdef bint email_passes(object validator, object value) except -1:
    # The accepting branch of marshmallow's Email, with its own patterns,
    # minus the error message it formats on every call; any value that
    # branch does not accept outright is the validator's to judge.
    cdef Py_ssize_t at
    if type(value) is str and value:
        at = (<str>value).rfind(u"@")
        if at >= 0 and validator.USER_REGEX.match(value[:at]) is not None:
            domain = value[at + 1:]
            if domain in validator.DOMAIN_WHITELIST or validator.DOMAIN_REGEX.match(domain) is not None:
                return True
    return passes(validator, value)


cdef bint validation_passes(object field, object value) except -1:
    try:
        field._validate(value)
    except validation_error_type():
        return False
    return True


cdef int write_long_value_slow(Writer* w, object value, object field, object obj) except -1:
    if type(value) is not int:
        value = convert(field, value, obj, int)
    return write_long(w, as_long(value))


cdef int write_int_value_slow(Writer* w, object value, object field, object obj) except -1:
    if type(value) is not int:
        value = convert(field, value, obj, int)
    return write_long(w, as_int(value))


cdef int write_double_value_slow(Writer* w, object value, object field, object obj) except -1:
    if type(value) is not float:
        value = convert(field, value, obj, float)
    return write_double(w, PyFloat_AS_DOUBLE(value))


cdef int write_float_value(Writer* w, object value, object field, object obj) except -1:
    if type(value) is not float:
        value = convert(field, value, obj, float)
    return write_float(w, PyFloat_AS_DOUBLE(value))


cdef int write_str_value_slow(Writer* w, object value, object field, object obj) except -1:
    if type(value) is not str:
        value = convert(field, value, obj, str)
    return write_str(w, <str>value)


cdef int write_boolean_value_slow(Writer* w, object value, object field, object obj) except -1:
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


cdef object as_dump_error(object error):
    if isinstance(error, DumpError):
        return error
    return DumpError(error.messages)


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


cdef int raise_dump_error(object message) except -1:
    raise DumpError(message)


cdef object choose_branch(object chooser, object value, int* branch):
    cdef tuple chosen = chooser.choose(value)
    branch[0] = chosen[0]
    return chosen[1]


cdef str int_text(object value):
    # past 4300 digits Python refuses to turn an int into text (a bare ValueError)
    return u"%d" % value if value.bit_length() <= 128 else datums.shown(value)


cdef long long long_out_of_range(object value) except? -1:
    raise DumpError(
        u"Number out of range for Avro long (-2**63 .. 2**63-1): %s." % int_text(value))


cdef int int_out_of_range(long long value) except -1:
    raise DumpError(
        u"Number out of range for Avro int (-2**31 .. 2**31-1): %d." % value)


cdef extern from "Python.h":
    int unicode_is_compact_ascii "PyUnicode_IS_COMPACT_ASCII"(PyObject* text)
    const void* unicode_data "PyUnicode_DATA"(PyObject* text)
    Py_ssize_t unicode_length "PyUnicode_GET_LENGTH"(PyObject* text)

cdef extern from *:
    """
    #include <stdint.h>

    /* Map keys of 1 to 32 ASCII bytes, cached as str objects (owned
       references, only touched with the GIL held) in 512 sets of two: a key
       is found by a hash of a few overlapping words, and a key that
       collides with another in use does not evict it (the older of the two
       goes). */
    #define ROASTED_KEY_SETS 512
    #define ROASTED_KEY_MAX_LENGTH 32

    static PyObject* roasted_key_cache[2 * ROASTED_KEY_SETS];

    /* Bytes [0, n) of `t` as at most four overlapping words (every byte in
       at least one), for hashing and comparing without a loop per byte. */
    static inline void roasted_key_words(const unsigned char* t, Py_ssize_t n, uint64_t* w) {
        if (n >= 8) {
            memcpy(&w[0], t, 8);
            memcpy(&w[1], t + n - 8, 8);
            if (n > 16) {
                memcpy(&w[2], t + 8, 8);
                memcpy(&w[3], t + n - 16, 8);
            }
            else
                w[2] = w[3] = 0;
        }
        else if (n >= 4) {
            uint32_t x, y;
            memcpy(&x, t, 4);
            memcpy(&y, t + n - 4, 4);
            w[0] = x;
            w[1] = y;
            w[2] = w[3] = 0;
        }
        else {
            w[0] = (uint64_t)t[0] | ((uint64_t)t[n >> 1] << 8) | ((uint64_t)t[n - 1] << 16);
            w[1] = w[2] = w[3] = 0;
        }
    }

    static inline unsigned int roasted_key_set(const uint64_t* w, Py_ssize_t n) {
        uint64_t h = (w[0] ^ ((uint64_t)n << 56)) * 0x9E3779B97F4A7C15ULL;
        h ^= (w[1] + w[2] * 0xD6E8FEB86659FD93ULL + w[3]) * 0xC2B2AE3D27D4EB4FULL;
        h ^= h >> 31;
        return (unsigned int)(h >> 17) & (ROASTED_KEY_SETS - 1);
    }

    static inline int roasted_key_is(PyObject* cached, const uint64_t* w, Py_ssize_t n) {
        uint64_t c[4];
        if (cached == NULL || PyUnicode_GET_LENGTH(cached) != n)
            return 0;
        roasted_key_words((const unsigned char*)(((PyASCIIObject*)cached) + 1), n, c);
        return c[0] == w[0] && c[1] == w[1] && c[2] == w[2] && c[3] == w[3];
    }

    /* The cached str with these bytes (borrowed), or NULL. */
    static inline PyObject* roasted_cached_key(const uint64_t* w, Py_ssize_t n, unsigned int set) {
        PyObject** pair = &roasted_key_cache[2 * set];
        if (roasted_key_is(pair[0], w, n))
            return pair[0];
        if (roasted_key_is(pair[1], w, n))
            return pair[1];
        return NULL;
    }

    /* `key` (a compact ASCII str) becomes its set's first; the second goes. */
    static void roasted_cache_key(PyObject* key, unsigned int set) {
        PyObject** pair = &roasted_key_cache[2 * set];
        PyObject* old = pair[1];
        Py_INCREF(key);
        pair[1] = pair[0];
        pair[0] = key;
        Py_XDECREF(old);  /* a str: freeing it runs no Python code */
    }
    """
    enum: ROASTED_KEY_MAX_LENGTH
    void key_words "roasted_key_words"(const unsigned char* t, Py_ssize_t n, uint64_t* w) noexcept
    unsigned int key_set "roasted_key_set"(const uint64_t* w, Py_ssize_t n) noexcept
    PyObject* cached_key "roasted_cached_key"(const uint64_t* w, Py_ssize_t n, unsigned int set) noexcept
    void cache_key "roasted_cache_key"(object key, unsigned int set) noexcept
    bint key_is "roasted_key_is"(PyObject* cached, const uint64_t* w, Py_ssize_t n) noexcept


def _key_matches(str cached, bytes text):
    """Test hook: whether the key cache takes `text` (1 to 32 bytes) for the
    compact ASCII str `cached`."""
    cdef uint64_t words[4]
    if not 0 < len(text) <= ROASTED_KEY_MAX_LENGTH or not unicode_is_compact_ascii(<PyObject*>cached):
        raise ValueError("1 to 32 bytes, and a compact ASCII str")
    key_words(<const unsigned char*>text, len(text), words)
    return key_is(<PyObject*>cached, words, len(text))


cdef str read_key(Reader* r):
    cdef Py_ssize_t start = r.pos
    cdef Py_ssize_t n = read_length(r)
    cdef uint64_t words[4]
    cdef unsigned int key_set_index
    cdef PyObject* cached
    if n == 0 or n > ROASTED_KEY_MAX_LENGTH:
        r.pos = start
        return read_str(r)
    key_words(r.data + r.pos, n, words)
    key_set_index = key_set(words, n)
    cached = cached_key(words, n, key_set_index)
    if cached != NULL:
        r.pos += n
        return <str>cached    # a new reference for the caller
    r.pos = start
    value = read_str(r)
    if unicode_is_compact_ascii(<PyObject*>value):
        hash(value)  # kept in the str: dict inserts of a cached key skip hashing
        cache_key(value, key_set_index)
    return value


cdef int raise_bad_value(Reader* r, int kind, long long value, long long bound, Py_ssize_t offset) except -1:
    if kind == BAD_INT:
        message = u"value %d out of range for Avro int" % value
    elif kind == BAD_INDEX:
        raise IndexDecodeError(u"index %d out of range (expected 0..%d)" % (value, bound - 1),
                               offset)
    elif kind == BAD_BOOLEAN:
        message = u"invalid boolean byte 0x%02x" % value
    elif kind == NEGATIVE_LENGTH:
        raise LengthDecodeError(u"negative length %d" % value, offset)
    elif kind == LONG_LENGTH:
        raise TruncatedError(u"length %d exceeds the %d bytes that remain" % (value, bound), offset)
    else:
        message = u"invalid block count"
    return raise_decode_error(r, message, offset)


cdef int raise_decode_error(Reader* r, str message, Py_ssize_t offset) except -1:
    raise DecodeError(message, offset)


cdef int raise_unreadable(Reader* r, str message, Py_ssize_t offset) except -1:
    raise UnreadableDatumError(message, offset)


cdef int raise_truncated(Reader* r, Py_ssize_t needed) except -1:
    raise TruncatedError(
        u"truncated data: %d more bytes needed, %d remain" % (needed, r.end - r.pos), r.pos)


cdef extern from *:
    """
    /* The 7-bit groups of up to eight varint bytes, joined into 56 bits:
       pairs, then quads, then the two halves, without a loop per byte. */
    static inline unsigned long long roasted_varint_groups(unsigned long long word) {
        word &= 0x7F7F7F7F7F7F7F7FULL;
        word = (word & 0x007F007F007F007FULL) | ((word & 0x7F007F007F007F00ULL) >> 1);
        word = (word & 0x00003FFF00003FFFULL) | ((word & 0x3FFF00003FFF0000ULL) >> 2);
        return (word & 0x000000000FFFFFFFULL) | ((word & 0x0FFFFFFF00000000ULL) >> 4);
    }

    /* A varint read where at least ten bytes remain: one 8-byte load finds
       the last byte (the first without its top bit) and gives the value;
       only a 9- or 10-byte varint (values of 2**55 and more) reads on. The
       zig-zag encoded value goes to *value. Returns the varint's length, or
       0 for a varint longer than 64 bits. */
    static inline int roasted_read_varint10(const unsigned char* data, unsigned long long* value) {
        unsigned long long word, last, byte;
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(&word, data, 8);
    #else
        word = 0;
        for (int i = 7; i >= 0; i--)
            word = (word << 8) | data[i];
    #endif
        last = ~word & 0x8080808080808080ULL;
        if (last) {
            /* keep the bytes up to and including the last one */
            *value = roasted_varint_groups(word & (last ^ (last - 1)));
            return (__builtin_ctzll(last) >> 3) + 1;
        }
        *value = roasted_varint_groups(word);
        byte = data[8];
        *value |= (byte & 0x7F) << 56;
        if (byte < 0x80)
            return 9;
        byte = data[9];
        /* the tenth byte may only carry the top bit of a 64-bit value */
        if (byte > 1)
            return 0;
        *value |= byte << 63;
        return 10;
    }
    """
    int read_varint10 "roasted_read_varint10"(const unsigned char* data, unsigned long long* value) noexcept


cdef long long read_long_slow(Reader* r) except? -1:
    cdef Py_ssize_t start = r.pos
    cdef unsigned long long n = 0
    cdef unsigned long long b
    cdef int shift = 0
    cdef int length
    if r.end - r.pos >= 10:
        # room for the longest varint: decoded without a loop
        length = read_varint10(r.data + r.pos, &n)
        if length == 0:
            raise DecodeError(u"varint longer than 64 bits", start)
        r.pos += length
        return <long long>(n >> 1) ^ -<long long>(n & 1)
    while True:
        if r.pos >= r.end:
            raise TruncatedError(u"truncated data: varint runs past the end", start)
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


cdef str invalid_utf8(Reader* r, Py_ssize_t n):
    # The decoder left a UnicodeDecodeError pending: replace it with ours,
    # naming the offset of the first bad byte.
    PyErr_Clear()
    cdef Py_ssize_t bad = r.pos
    cdef bytes text = (<const char*>r.data)[r.pos:r.pos + n]
    cdef Py_ssize_t start = 0, end = 0
    try:
        text.decode("utf-8")
    except UnicodeDecodeError as error:
        bad, start, end = r.pos + error.start, error.start, error.end
    raise TextDecodeError(u"invalid UTF-8 in string", bad, text, start, end)


cdef int check_count(Reader* r, long long count, Py_ssize_t min_item_size, Py_ssize_t max_items, Py_ssize_t offset) except -1:
    # Called before any item is read, so no allocation or loop is ever sized
    # by a count that the remaining bytes cannot back.
    if count > max_items:
        raise DecodeError(
            u"block of %d items exceeds the limit of %d items per block "
            u"(CompileFlags.max_items)" % (count, max_items), offset)
    if min_item_size and count > (r.end - r.pos) // min_item_size:
        # the data ends before the items it announces (fastavro's EOFError)
        raise TruncatedError(
            u"block of %d items needs at least %d bytes, %d remain"
            % (count, <object>count * min_item_size, r.end - r.pos), offset)
    # every item, of every collection in the message, is paid for from one
    # budget: items that take no bytes cannot multiply the cost of a message
    r.budget -= count
    if r.budget < 0:
        raise_over_budget(r, offset)
    return 0


cdef int raise_over_budget(Reader* r, Py_ssize_t offset) except -1:
    raise DecodeError(
        u"item budget exceeded: a message may announce at most its length in bytes plus "
        u"CompileFlags.item_allowance array and map items in all (%d + %d here); "
        u"compile with a larger item_allowance to accept more" % (r.end, r.allowance), offset)


cdef int check_finished(Reader* r) except -1:
    if r.pos != r.end:
        raise DecodeError(u"%d trailing bytes after the record" % (r.end - r.pos), r.pos)
    return 0


cdef Py_ssize_t promote_into(Reader* r, unsigned char* out, int kind) except -1:
    # the writer's number read, its encoding in the reader's type written at
    # `out` (at most 8 bytes); as Java's resolving decoder promotes: (float)
    # and (double) casts, rounded to nearest; an int's range checked
    cdef Py_ssize_t start = r.pos
    cdef long long whole = 0
    cdef float single
    cdef double wide
    if kind == PROMOTE_INT_LONG:
        read_int(r)
        memcpy(out, r.data + start, r.pos - start)    # the same varint
        return r.pos - start
    if kind == PROMOTE_INT_FLOAT or kind == PROMOTE_INT_DOUBLE:
        whole = read_int(r)
    elif kind == PROMOTE_LONG_FLOAT or kind == PROMOTE_LONG_DOUBLE:
        whole = read_long(r)
    if kind == PROMOTE_INT_FLOAT or kind == PROMOTE_LONG_FLOAT:
        single = <float>whole
        memcpy(out, &single, 4)
        return 4
    if kind == PROMOTE_FLOAT_DOUBLE:
        wide = read_float(r)
    elif kind == PROMOTE_INT_DOUBLE or kind == PROMOTE_LONG_DOUBLE:
        wide = <double>whole
    else:
        raise ValueError(f"no promotion {kind}")
    memcpy(out, &wide, 8)
    return 8


cdef inline void open_promoted(Reader* r, Promoted* promoted, Py_ssize_t size) noexcept:
    promoted.reader.data = promoted.room
    promoted.reader.pos = 0
    promoted.reader.end = size
    promoted.reader.invalid = 0
    promoted.reader.budget = r.budget
    promoted.reader.allowance = r.allowance


cdef int read_promoted(Reader* r, Promoted* promoted, int kind) except -1:
    open_promoted(r, promoted, promote_into(r, promoted.room, kind))
    return 0


cdef int read_promoted_nullable(Reader* r, Promoted* promoted, int null_index, int kind) except -1:
    cdef int index = read_index(r, 2)
    cdef Py_ssize_t size = 1
    promoted.room[0] = <unsigned char>(index * 2)    # the index, zig-zagged: one byte
    if index != null_index:
        size += promote_into(r, promoted.room + 1, kind)
    open_promoted(r, promoted, size)
    return 0


cdef Py_ssize_t remap_into(Reader* r, unsigned char* out, tuple indexes, tuple messages) except -1:
    # the writer's enum index read and renumbered as the reader's symbol
    # (``indexes[i]``: the reader's index of the writer's i-th symbol, or -1
    # where the reader has neither it nor a default: then ``messages[i]``
    # at the index's offset); its varint written at `out` (at most 5 bytes)
    cdef Py_ssize_t start = r.pos
    cdef int written = read_index(r, len(indexes))
    cdef long long index = <long long>indexes[written]
    cdef unsigned long long zigzag
    cdef Py_ssize_t size = 0
    if index < 0:
        raise_unreadable(r, <str>messages[written], start)
    zigzag = <unsigned long long>index << 1
    while zigzag >= 0x80:
        out[size] = <unsigned char>((zigzag & 0x7F) | 0x80)
        zigzag >>= 7
        size += 1
    out[size] = <unsigned char>zigzag
    return size + 1


cdef int read_remapped(Reader* r, Promoted* promoted, tuple indexes, tuple messages) except -1:
    open_promoted(r, promoted, remap_into(r, promoted.room, indexes, messages))
    return 0


cdef int read_remapped_nullable(Reader* r, Promoted* promoted, int null_index, tuple indexes,
                                tuple messages) except -1:
    cdef int index = read_index(r, 2)
    cdef Py_ssize_t size = 1
    promoted.room[0] = <unsigned char>(index * 2)    # the index, zig-zagged: one byte
    if index != null_index:
        size += remap_into(r, promoted.room + 1, indexes, messages)
    open_promoted(r, promoted, size)
    return 0


cdef MoveHook move_hook = NULL


cdef void set_move_hook(MoveHook hook) noexcept:
    global move_hook
    move_hook = hook


cdef object move_written(Reader* r, object mover, Py_ssize_t move, int depth, Writer* room, Reader* out):
    # The value at r moved by the mover (tier 0's Rearranger) into the
    # schema's bytes, and `out` opened on them: in `room` (the caller's
    # stack) where they fit, None returned; else in the bytes returned, which
    # the caller holds while `out` reads them. `room` owns no memory after.
    # `out` has r's item budget from before the move: the value's items are
    # counted once, on the writer's bytes.
    cdef long long budget = r.budget
    cdef Py_ssize_t size = 0
    cdef object moved = None
    if move_hook == NULL:
        raise RuntimeError("roastedavro._tier0 is not loaded: no Rearranger to move the value")
    writer_init(room)
    try:
        move_hook(mover, r, move, depth, room)
        size = room.size
        if room.data != room.small:
            moved = writer_finish(room)
    finally:
        writer_release(room)
    if moved is None:
        out.data = <const unsigned char*>room.small
    else:
        out.data = <const unsigned char*>PyBytes_AS_STRING(moved)
    out.pos = 0
    out.end = size
    out.invalid = 0
    out.budget = budget
    out.allowance = r.allowance
    return moved


cdef int open_reader(Reader* r, object data, Py_buffer* view, long long allowance) except -1:
    # bytes are read in place; bytearray, memoryview and other buffers through
    # the buffer protocol. Returns 1 when a buffer view was taken, which the
    # caller hands back to close_reader.
    r.invalid = 0
    if type(data) is bytes:
        r.data = <const unsigned char*>PyBytes_AS_STRING(data)
        r.end = PyBytes_GET_SIZE(data)
        r.pos = 0
        r.budget = r.end + allowance
        r.allowance = allowance
        return 0
    try:
        PyObject_GetBuffer(data, view, PyBUF_SIMPLE)
    except TypeError:
        raise TypeError(
            "expected bytes or a bytes-like object, got %s" % type(data).__name__) from None
    except BufferError:
        # a strided memoryview (view[::2], a column of an array) has no
        # contiguous bytes to read in place
        raise TypeError(
            "expected a contiguous buffer, got a non-contiguous %s; pass bytes(data)"
            % type(data).__name__) from None
    r.data = <const unsigned char*>view.buf
    r.end = view.len
    r.pos = 0
    r.budget = r.end + allowance
    r.allowance = allowance
    return 1


cdef void close_reader(Py_buffer* view, int acquired) noexcept:
    if acquired:
        PyBuffer_Release(view)


# ------------------------------------------------------ logical types --

cdef enum:
    # datetime's range, 0001-01-01 .. 9999-12-31, in days from 1970-01-01
    FIRST_DAY = -719162
    LAST_DAY = 2932896
cdef long long MICROS_PER_DAY = 86400000000
# typed: a bare literal above 2**31 would make Cython divide Python ints
cdef long long MICROS_PER_HOUR = 3600000000


cdef object coerce(object field, object value, object obj, type expected):
    return support.coerce(field, value, obj, expected)


cdef inline long long floor_div(long long a, long long b) noexcept:
    cdef long long q = a // b
    if (a % b != 0) and ((a < 0) != (b < 0)):
        q -= 1
    return q


cdef long long days_from_civil(long long y, long long m, long long d) noexcept:
    # days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)
    cdef long long era, yoe, doy, doe
    if m <= 2:
        y -= 1
    era = floor_div(y, 400)
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


cdef void civil_from_days(long long z, int* year, int* month, int* day) noexcept:
    cdef long long era, doe, yoe, doy, mp, y
    z += 719468
    era = floor_div(z, 146097)
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day[0] = <int>(doy - (153 * mp + 2) // 5 + 1)
    month[0] = <int>(mp + 3 if mp < 10 else mp - 9)
    year[0] = <int>(y + (1 if month[0] <= 2 else 0))


cdef int write_timestamp_value(Writer* w, object value, object field, object obj, int kind, long long unit) except -1:
    cdef long long micros
    cdef object tz
    if type(value) is not DATETIME:
        value = coerce(field, value, obj, DATETIME)
    tz = datetime_tzinfo(value)
    if kind == TIMESTAMP_LOCAL:
        if tz is not None:
            value = support.naive_datetime(field, value)
    elif tz is None:
        if kind == TIMESTAMP_AWARE:
            value = support.aware_datetime(field, value)
    elif tz is not UTC:
        value = support.utc_datetime(value)
    micros = (
        (days_from_civil(datetime_year(value), datetime_month(value), datetime_day(value)) * 86400
         + datetime_hour(value) * 3600 + datetime_minute(value) * 60 + datetime_second(value))
        * 1000000 + datetime_microsecond(value))
    return write_long(w, floor_div(micros, unit))


cdef object read_timestamp(Reader* r, long long unit, bint aware):
    cdef Py_ssize_t start = r.pos
    cdef long long n = read_long(r)
    cdef long long days, rest
    cdef int year, month, day
    if n < FIRST_DAY * (MICROS_PER_DAY // unit) or n >= (LAST_DAY + 1) * (MICROS_PER_DAY // unit):
        raise DecodeError(u"timestamp %d is outside the years 1-9999" % n, start)
    days = floor_div(n * unit, MICROS_PER_DAY)
    rest = n * unit - days * MICROS_PER_DAY
    civil_from_days(days, &year, &month, &day)
    return datetime_new(
        year, month, day, <int>(rest // MICROS_PER_HOUR), <int>(rest // 60000000 % 60),
        <int>(rest // 1000000 % 60), <int>(rest % 1000000), UTC if aware else None)


cdef int write_date_value(Writer* w, object value, object field, object obj) except -1:
    if type(value) is not DATE:
        value = coerce(field, value, obj, DATE)
    return write_long(w, days_from_civil(date_year(value), date_month(value), date_day(value)))


cdef object read_date(Reader* r):
    cdef Py_ssize_t start = r.pos
    cdef long long days = read_long(r)
    cdef int year, month, day
    if days < FIRST_DAY or days > LAST_DAY:
        raise DecodeError(u"date %d is outside the years 1-9999" % days, start)
    civil_from_days(days, &year, &month, &day)
    return date_new(year, month, day)


cdef int write_time_value(Writer* w, object value, object field, object obj, long long unit) except -1:
    if type(value) is not TIME:
        value = coerce(field, value, obj, TIME)
    if time_tzinfo(value) is not None:
        raise DumpError(u"Avro times have no time zone; got %s." % value.isoformat())
    return write_long(w, floor_div(
        (time_hour(value) * 3600LL + time_minute(value) * 60 + time_second(value)) * 1000000
        + time_microsecond(value), unit))


cdef object read_time(Reader* r, long long unit):
    cdef Py_ssize_t start = r.pos
    cdef long long micros = read_long(r)
    if micros < 0 or micros >= MICROS_PER_DAY // unit:
        raise DecodeError(u"time of day %d out of range" % micros, start)
    micros *= unit
    return time_new(<int>(micros // MICROS_PER_HOUR), <int>(micros // 60000000 % 60),
                    <int>(micros // 1000000 % 60), <int>(micros % 1000000), None, 0)


cdef int write_timedelta_value(Writer* w, object value, object field, object obj) except -1:
    cdef long long days
    if type(value) is not TIMEDELTA:
        value = coerce(field, value, obj, TIMEDELTA)
    days = timedelta_days(value)
    if -106751991 <= days <= 106751990:
        # the whole sum fits in a signed 64-bit long
        return write_long(w, (days * 86400 + timedelta_seconds(value)) * 1000000
                          + timedelta_microseconds(value))
    total = value // TIMEDELTA(microseconds=1)
    if not -9223372036854775808 <= total <= 9223372036854775807:
        raise DumpError(u"Time span out of range for Avro long microseconds (about 292,000 years).")
    return write_long(w, total)


cdef object read_timedelta(Reader* r):
    cdef long long micros = read_long(r)
    cdef long long days = floor_div(micros, MICROS_PER_DAY)
    cdef long long rest = micros - days * MICROS_PER_DAY
    return timedelta_new(<int>days, <int>(rest // 1000000), <int>(rest % 1000000))


cdef int decimal_unscaled(object value, int scale, int precision, int128* unscaled) except -1:
    # The unscaled integer of a Decimal with at most 38 digits: 1 when done,
    # 0 for the Python path (NaN, more places than the scale, too many
    # digits). From the Decimal's own coefficient and exponent where its C
    # layout was verified at import, else from its text.
    cdef int negative
    cdef int128 coefficient
    cdef long long exponent, digits
    if roasted_decimal_layout_ok:
        if not roasted_decimal_parts(value, &negative, &coefficient, &exponent, &digits):
            return 0
        # value = coefficient * 10**exponent; unscaled = value * 10**scale
        if exponent + scale < 0:
            return 0  # more places than the scale (maybe trailing zeros)
        if digits + exponent + scale > precision or digits + exponent + scale > 38:
            return 0  # too many digits: the Python path explains
        coefficient *= <int128>POWERS_OF_TEN_128[exponent + scale]
        unscaled[0] = -coefficient if negative else coefficient
        return 1
    return decimal_unscaled_from_text(value, scale, precision, unscaled)


def _decimal_unscaled_paths(value, int scale, int precision):
    # For the tests: what each of decimal_unscaled's two paths makes of a
    # Decimal, (done, unscaled) from the coefficient, then from the text.
    cdef int128 unscaled = 0
    results = []
    for from_text in (False, True):
        if from_text or not roasted_decimal_layout_ok:
            done = decimal_unscaled_from_text(value, scale, precision, &unscaled)
        else:
            done = decimal_unscaled(value, scale, precision, &unscaled)
        number = roasted_uint128(<unsigned long long>((-unscaled if unscaled < 0 else unscaled) >> 64),
                                 <unsigned long long>(-unscaled if unscaled < 0 else unscaled))
        results.append((bool(done), (-number if unscaled < 0 else number) if done else None))
    return tuple(results)


cdef int decimal_unscaled_from_text(object value, int scale, int precision, int128* unscaled) except -1:
    # decimal_unscaled from the Decimal's text (Decimal.__str__ is C code)
    cdef str text = str(value)
    cdef Py_ssize_t n, i, fraction = -1
    cdef const char* chars
    cdef int128 result = 0
    cdef int digits = 0, zeros
    cdef bint negative = False
    if not PyUnicode_IS_COMPACT_ASCII(text):
        return 0
    n = PyUnicode_GET_LENGTH(text)
    chars = <const char*>PyUnicode_DATA(text)
    i = 0
    if n and chars[0] == 45:  # '-'
        negative = True
        i = 1
    if i >= n:
        return 0
    while i < n:
        if chars[i] == 46:  # '.'
            if fraction >= 0:
                return 0
            fraction = 0
        elif 48 <= chars[i] <= 57:
            if digits or chars[i] != 48:
                digits += 1
            if digits > 38:
                return 0
            result = result * 10 + (chars[i] - 48)
            if fraction >= 0:
                fraction += 1
        else:
            return 0  # exponent notation, NaN, Infinity
        i += 1
    if fraction < 0:
        fraction = 0
    if fraction > scale:
        return 0  # maybe trailing zeros; the Python path decides
    if digits + scale - fraction > precision or digits + scale - fraction > 38:
        return 0  # too many digits: the Python path explains
    for zeros in range(scale - fraction):
        result *= 10
    unscaled[0] = -result if negative else result
    return 1


cdef long long[19] POWERS_OF_TEN
POWERS_OF_TEN[0] = 1
for _power in range(1, 19):
    POWERS_OF_TEN[_power] = POWERS_OF_TEN[_power - 1] * 10


cdef int write_decimal_value(Writer* w, object value, object field, object obj, int scale, int precision, Py_ssize_t size) except -1:
    cdef int128 unscaled
    if not (type(value) is DECIMAL and decimal_unscaled(value, scale, precision, &unscaled)):
        return write_decimal_slow(w, value, field, obj, scale, precision, size)
    return write_unscaled(w, unscaled, size)


cdef int write_unscaled(Writer* w, int128 unscaled, Py_ssize_t size) except -1:
    # A decimal's unscaled value: `size` bytes (fixed), else Avro bytes of
    # fastavro's length
    cdef uint128 magnitude
    cdef Py_ssize_t length, i
    cdef int bits = 0
    cdef unsigned char* out
    if size:
        length = size
    else:
        # fastavro's length: the magnitude's bits plus a sign bit, in bytes
        magnitude = <uint128>(-unscaled if unscaled < 0 else unscaled)
        bits = uint128_bits(magnitude)
        length = (bits + 8) // 8
        write_long(w, length)
    writer_reserve(w, length)
    out = <unsigned char*>w.data + w.size
    for i in range(length):
        # big-endian two's complement, sign-extended past 16 bytes
        out[length - 1 - i] = <unsigned char>(
            (<uint128>unscaled >> (8 * i)) & 0xFF if i < 16 else (0xFF if unscaled < 0 else 0))
    w.size += length
    return 0


cdef int write_decimal_slow(Writer* w, object value, object field, object obj, int scale, int precision, Py_ssize_t size) except -1:
    cdef bytes encoded = support.decimal_bytes(field, value, obj, scale, precision, size)
    if size:
        return write_raw(w, PyBytes_AS_STRING(encoded), size)
    return write_bytes(w, encoded)


cdef inline int put_digits(char* out, uint128 value) noexcept:
    # The decimal digits of value at out; returns how many. 128-bit division
    # is a library call per digit, so only the digits above 2**64 use it.
    cdef char[40] reversed_digits
    cdef int length = 0, i
    cdef unsigned long long small
    while value >> 64:
        reversed_digits[length] = <char>(48 + <int>(value % 10))
        length += 1
        value //= 10
    small = <unsigned long long>value
    while True:
        reversed_digits[length] = <char>(48 + <int>(small % 10))
        length += 1
        small //= 10
        if small == 0:
            break
    for i in range(length):
        out[i] = reversed_digits[length - 1 - i]
    return length


# 10**0 .. 10**38: the bounds of decimal precisions that fit 128 bits
cdef uint128[39] POWERS_OF_TEN_128
POWERS_OF_TEN_128[0] = 1
for _power in range(1, 39):
    POWERS_OF_TEN_128[_power] = POWERS_OF_TEN_128[_power - 1] * 10


cdef Py_ssize_t decimal_max_bytes(int precision) noexcept:
    # the most bytes the two's complement of a precision-digit value needs:
    # bits of 10**precision (an upper bound by log2(10) < 3.3220), plus sign
    return (<Py_ssize_t>(precision * 3.3220) + 1 + 8) // 8


cdef int raise_out_of_precision(Reader* r, int precision, int scale, Py_ssize_t offset) except -1:
    raise DecodeError(u"decimal value has more digits than decimal(%d, %d) allows"
                      % (precision, scale), offset)


cdef inline int128 unscaled_at(Reader* r, Py_ssize_t n) noexcept:
    # the big-endian two's complement value of n (1 to 16) bytes, sign-extended
    cdef int128 unscaled = -1 if r.data[r.pos] & 0x80 else 0
    cdef Py_ssize_t i
    for i in range(n):
        unscaled = (unscaled << 8) | r.data[r.pos + i]
    return unscaled


cdef inline object decimal_of(int128 unscaled, int scale):
    # "<digits>E-<scale>": Decimal parses text in C, and the exponent is
    # written without snprintf's format parsing
    cdef char[64] text
    cdef int position = 0
    if unscaled < 0:
        text[position] = 45  # '-'
        position += 1
    position += put_digits(text + position, <uint128>(-unscaled if unscaled < 0 else unscaled))
    text[position] = 69  # 'E'
    text[position + 1] = 45  # '-'
    position += 2
    position += put_digits(text + position, <uint128>scale)
    return DECIMAL_FROM_TEXT(PyUnicode_DecodeASCII(text, position, NULL))


cdef object read_decimal(Reader* r, int scale, int precision, Py_ssize_t size):
    cdef Py_ssize_t start = r.pos
    cdef Py_ssize_t n = size if size else read_length(r)
    cdef int128 unscaled
    cdef uint128 magnitude
    if n > r.end - r.pos:
        raise_truncated(r, n)
    if not size and n > decimal_max_bytes(precision):
        # checked before any conversion: a long byte string never costs
        # more than the declared precision allows
        raise_out_of_precision(r, precision, scale, start)
    if 0 < n <= 16:
        unscaled = unscaled_at(r, n)
        magnitude = -(<uint128>unscaled) if unscaled < 0 else <uint128>unscaled
        if precision <= 38 and magnitude >= POWERS_OF_TEN_128[precision]:
            raise_out_of_precision(r, precision, scale, start)
        r.pos += n
        return decimal_of(unscaled, scale)
    encoded = (<const char*>r.data)[r.pos:r.pos + n]
    value = support.decimal_from_bytes(encoded, scale, precision)
    if value is None:
        raise_out_of_precision(r, precision, scale, start)
    r.pos += n
    return value


#: the most bytes a decimal on bytes is read from when its precision needs
#: fewer (at least 614 digits; one converts in about 5 us)
cdef enum:
    DECIMAL_EXACT_BYTES = 256


cdef object read_decimal_exact(Reader* r, int scale, int precision, Py_ssize_t size):
    # Plain Avro (AvroCodec, the fastavro drop-in, container files): the value
    # the bytes hold, even with more digits than the precision allows, as Java
    # reads it (writing refuses such a value). Bounded: bytes longer than both
    # the precision needs and DECIMAL_EXACT_BYTES are refused before any
    # conversion (converting a megabyte of digits took 84 s).
    cdef Py_ssize_t start = r.pos
    cdef Py_ssize_t n = size if size else read_length(r)
    cdef int128 unscaled
    if n > r.end - r.pos:
        raise_truncated(r, n)
    if not size and n > decimal_max_bytes(precision) and n > DECIMAL_EXACT_BYTES:
        raise DecodeError(u"a decimal of %d bytes: more digits than decimal(%d, %d) allows, "
                          u"and more than the %d bytes read beyond a precision"
                          % (n, precision, scale, DECIMAL_EXACT_BYTES), start)
    if 0 < n <= 16:
        unscaled = unscaled_at(r, n)
        r.pos += n
        return decimal_of(unscaled, scale)
    encoded = (<const char*>r.data)[r.pos:r.pos + n]
    value = support.decimal_from_bytes(encoded, scale, None)
    if value is None:
        raise_out_of_precision(r, precision, scale, start)
    r.pos += n
    return value




cdef int write_uuid_value(Writer* w, object value, object field, object obj, bint fixed) except -1:
    # Straight from the UUID's 128-bit int slot: UUID.__str__ is Python code.
    cdef PyObject* slot
    cdef object number
    cdef unsigned char raw[16]
    if type(value) is not UUID:
        value = coerce(field, value, obj, UUID)
    slot = roasted_uuid_int(value) if roasted_uuid_int_offset > 0 else NULL
    number = <object>slot if slot != NULL else value.int
    try:
        roasted_uint128_bytes(number, raw)
    except (ValueError, OverflowError):
        raise_dump_error(u"Not a valid UUID.")
    if fixed:
        write_raw(w, <const char*>raw, 16)
        return 0
    write_byte(w, 72)  # zig-zag varint of the length, 36
    writer_reserve(w, 36)
    roasted_uuid_format(raw, <unsigned char*>w.data + w.size)
    w.size += 36
    return 0


cdef object uuid_from_bytes(const unsigned char* raw):
    # what uuid.UUID(bytes=raw) builds, without its Python-level parsing:
    # the two slots stored directly (UUID's own __setattr__ refuses)
    number = roasted_uint128_from_bytes(raw)
    if roasted_uuid_int_offset > 0:
        return roasted_uuid_new(UUID, number, SAFE_UNKNOWN)
    value = (<PyTypeObject*>UUID).tp_new(UUID, <PyObject*>EMPTY_TUPLE, NULL)
    PyObject_GenericSetAttr(value, u"int", number)
    PyObject_GenericSetAttr(value, u"is_safe", SAFE_UNKNOWN)
    return value


cdef void uuid_text(const unsigned char* raw, unsigned char* out) noexcept:
    roasted_uuid_format(raw, out)


cdef bint uuid_bytes(const unsigned char* text, unsigned char* out) noexcept:
    return roasted_uuid_parse(text, out)


cdef object read_uuid(Reader* r, bint fixed):
    cdef Py_ssize_t start = r.pos
    cdef Py_ssize_t n
    cdef unsigned char raw[16]
    if fixed:
        if r.end - r.pos < 16:
            raise_truncated(r, 16)
        r.pos += 16
        return uuid_from_bytes(r.data + start)
    n = read_length(r)
    if n == 36 and roasted_uuid_parse(r.data + r.pos, raw):
        r.pos += 36
        return uuid_from_bytes(raw)
    # any other spelling uuid.UUID accepts (or not: a decode error)
    r.pos = start
    try:
        return UUID_FROM_BYTES(read_str(r))
    except ValueError:
        raise DecodeError(u"not a valid UUID", start) from None


cdef int write_bytes_value(Writer* w, object value, object field, object obj) except -1:
    if type(value) is not bytes:
        value = support.as_bytes(field, value, obj)
    return write_bytes(w, <bytes>value)


cdef int write_fixed_value(Writer* w, object value, object field, object obj, Py_ssize_t size) except -1:
    if type(value) is not bytes:
        value = support.as_bytes(field, value, obj)
    if len(<bytes>value) != size:
        raise DumpError(u"Must be exactly %d bytes, got %d." % (size, len(<bytes>value)))
    return write_raw(w, PyBytes_AS_STRING(value), size)


cdef int write_enum_value(Writer* w, object value, object field, object obj, tuple members, dict indexes) except -1:
    # Members are singletons: compare identities, which costs no call to
    # Enum.__hash__ (Python code); large enums use the dict.
    cdef Py_ssize_t i
    cdef Py_ssize_t count = len(members)
    if count <= 32:
        for i in range(count):
            if <object>PyTuple_GET_ITEM(members, i) is value:
                return write_long(w, i)
    index = indexes.get(value)
    if index is None:
        index = indexes[support.enum_member(field, value, obj)]
    return write_long(w, <long long>index)


cdef object enum_value(dict values, object field, object value, object obj):
    # by_value enums: the member's value, for the primitive writer
    result = values.get(value)
    if result is None:
        result = values[support.enum_member(field, value, obj)]
    return result


cdef tuple as_tuple(object field, object value, Py_ssize_t size):
    return support.as_tuple(field, value, size)


cdef object read_enum(Reader* r, tuple members):
    return members[read_index(r, len(members))]


cdef bytes read_fixed(Reader* r, Py_ssize_t size):
    if r.end - r.pos < size:
        raise_truncated(r, size)
    value = (<const char*>r.data)[r.pos:r.pos + size]
    r.pos += size
    return value


# ------------------------------------------------------- the generic path --
#
# A walk over one value's bytes against a flat table of the type's nodes
# (GenericType): nesting depth, block counts (against the remaining bytes,
# max_items and the message's item budget), lengths, union and enum indexes,
# UTF-8, decimal digits. It allocates nothing. The fastavro drop-in reads a
# datum from a stream that cannot give bytes back with it, part by part
# (walk_stream), and a Constant field of a non-primitive type checks the
# bytes it ignores with it (skip_checked).
#
# The depth limit is the codec's max_depth, lowered to what the calling
# thread's C stack has room for (about 4 KB per level is allowed for: fastavro
# took up to 2.8 KB when it read these values, and the walk takes less).

cdef extern from *:
    """
    #include <pthread.h>

    /* The bytes of C stack left below the caller, or -1 where unknown. The
       stack's low end is looked up once per thread. */
    static __thread char* roasted_stack_low = NULL;
    static __thread int roasted_stack_state = 0;   /* 0 unknown, 1 known, -1 unavailable */

    static Py_ssize_t roasted_stack_left(void) {
        char here;
        if (roasted_stack_state == 0) {
            roasted_stack_state = -1;
    #if defined(__linux__)
            {
                pthread_attr_t attr;
                void* low = NULL;
                size_t size = 0;
                if (pthread_getattr_np(pthread_self(), &attr) == 0) {
                    if (pthread_attr_getstack(&attr, &low, &size) == 0 && low != NULL) {
                        roasted_stack_low = (char*)low;
                        roasted_stack_state = 1;
                    }
                    pthread_attr_destroy(&attr);
                }
            }
    #elif defined(__APPLE__)
            {
                char* high = (char*)pthread_get_stackaddr_np(pthread_self());
                size_t size = pthread_get_stacksize_np(pthread_self());
                if (high != NULL && size > 0) {
                    roasted_stack_low = high - size;
                    roasted_stack_state = 1;
                }
            }
    #endif
        }
        if (roasted_stack_state != 1)
            return -1;
        return (Py_ssize_t)(&here - roasted_stack_low);
    }

    /* The offset of the first byte that does not belong to valid UTF-8 (as
       Python's strict decoder has it: no overlong forms, no surrogates,
       nothing past U+10FFFF), or -1 when all n bytes are valid. */
    static Py_ssize_t roasted_invalid_utf8(const unsigned char* s, Py_ssize_t n) {
        Py_ssize_t i = 0;
        unsigned char c, c1;
        while (i < n) {
            c = s[i];
            if (c < 0x80) {
                i++;
            } else if (c >= 0xC2 && c <= 0xDF) {
                if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) return i;
                i += 2;
            } else if (c >= 0xE0 && c <= 0xEF) {
                if (i + 2 >= n) return i;
                c1 = s[i + 1];
                if ((c1 & 0xC0) != 0x80 || (c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F)
                        || (s[i + 2] & 0xC0) != 0x80) return i;
                i += 3;
            } else if (c >= 0xF0 && c <= 0xF4) {
                if (i + 3 >= n) return i;
                c1 = s[i + 1];
                if ((c1 & 0xC0) != 0x80 || (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F)
                        || (s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80) return i;
                i += 4;
            } else {
                return i;
            }
        }
        return -1;
    }
    """
    Py_ssize_t roasted_stack_left() noexcept nogil
    Py_ssize_t roasted_invalid_utf8(const unsigned char* s, Py_ssize_t n) noexcept nogil

cdef enum:
    # C stack per level of nesting allowed for, with room to spare (fastavro,
    # which once read these values, took up to 2.8 KB for records through
    # unions), and what is kept back for everything else
    GENERIC_LEVEL_BYTES = 4096
    GENERIC_STACK_RESERVE = 262144
    # what record readers and writers keep back: 32 levels of theirs (well
    # under 8 KB) and the Python code a field may call
    RECORD_STACK_RESERVE = 65536
    # the limit where the stack's size cannot be found
    GENERIC_DEFAULT_DEPTH = 1000

cdef enum:
    GENERIC_NULL = 0
    GENERIC_BOOLEAN = 1
    GENERIC_INT = 2
    GENERIC_LONG = 3
    GENERIC_FLOAT = 4
    GENERIC_DOUBLE = 5
    GENERIC_BYTES = 6
    GENERIC_STRING = 7
    GENERIC_FIXED = 8
    GENERIC_ENUM = 9
    GENERIC_ARRAY = 10
    GENERIC_MAP = 11
    GENERIC_UNION = 12
    GENERIC_RECORD = 13

cdef dict GENERIC_PRIMITIVES = {
    u"null": GENERIC_NULL, u"boolean": GENERIC_BOOLEAN, u"int": GENERIC_INT,
    u"long": GENERIC_LONG, u"float": GENERIC_FLOAT, u"double": GENERIC_DOUBLE,
    u"bytes": GENERIC_BYTES, u"string": GENERIC_STRING,
}
# the fewest bytes of each primitive
cdef dict GENERIC_SIZES = {
    GENERIC_NULL: 0, GENERIC_FLOAT: 4, GENERIC_DOUBLE: 8,
}


cdef int check_write_stack(int depth) except -1:
    # For record writers, every few levels: recursive schemas nest one C
    # call per record, and a thread's stack may be far smaller than
    # max_depth levels need.
    cdef Py_ssize_t left = roasted_stack_left()
    if 0 <= left < RECORD_STACK_RESERVE:
        raise DumpError(u"Records are nested %d levels deep, more than this thread's C stack "
                        u"has room for (lower max_depth, or give the thread a larger stack)." % depth)
    return 0


cdef int check_read_stack(Reader* r, int depth) except -1:
    # the same for record readers
    cdef Py_ssize_t left = roasted_stack_left()
    if 0 <= left < RECORD_STACK_RESERVE:
        raise DecodeError(u"records nested %d levels deep, more than this thread's C stack has "
                          u"room for" % depth, r.pos)
    return 0


cdef int generic_depth(int max_depth) noexcept:
    # max_depth, or fewer levels where the thread's C stack is short of room
    cdef Py_ssize_t left = roasted_stack_left()
    cdef Py_ssize_t levels
    if left < 0:
        levels = GENERIC_DEFAULT_DEPTH
    else:
        levels = (left - GENERIC_STACK_RESERVE) // GENERIC_LEVEL_BYTES
    if levels < 0:
        levels = 0
    return max_depth if max_depth <= levels else <int>levels


cdef str depth_note(int depth, int max_depth):
    if depth < max_depth:
        return (u" (max_depth is %d; this thread's C stack has room for %d levels of this "
                u"field's value)" % (max_depth, depth))
    return u" (the codec's max_depth)"


def _generic_nodes(parsed, dict named):
    """The node table of a fastavro-parsed schema: a list of [kind, precision,
    scale, size, first, min_size, zero] and the list of links (record fields and
    union branches, by node index). Named types are one node each, so
    recursive types are cycles in the table."""
    nodes = []
    links = []
    by_name = {}

    def add(kind, size=0):
        nodes.append([kind, 0, 0, size, 0, 0])
        return len(nodes) - 1

    def build(schema):
        if type(schema) is str:
            if schema in GENERIC_PRIMITIVES:
                return add(GENERIC_PRIMITIVES[schema])
            if schema in by_name:
                return by_name[schema]
            if schema not in named:
                raise ValueError(u"unknown Avro type %r" % (schema,))
            return build(named[schema])
        if type(schema) is list:
            index = add(GENERIC_UNION, len(schema))
            first = len(links)
            links.extend([0] * len(schema))
            nodes[index][4] = first
            for i, branch in enumerate(schema):
                links[first + i] = build(branch)
            return index
        if type(schema) is not dict:
            raise ValueError(u"not an Avro type: %r" % (schema,))
        kind = schema.get("type")
        name = schema.get("name")
        if type(name) is str and kind in ("record", "error", "enum", "fixed") and name in by_name:
            return by_name[name]
        if kind in ("record", "error"):
            fields = schema.get("fields", ())
            index = add(GENERIC_RECORD, len(fields))
            if type(name) is str:
                by_name[name] = index
            first = len(links)
            links.extend([0] * len(fields))
            nodes[index][4] = first
            for i, field in enumerate(fields):
                links[first + i] = build(field["type"])
            return index
        if kind == "enum":
            index = add(GENERIC_ENUM, len(schema["symbols"]))
        elif kind == "fixed":
            index = add(GENERIC_FIXED, schema["size"])
        elif kind == "array" or kind == "map":
            index = add(GENERIC_ARRAY if kind == "array" else GENERIC_MAP)
            nodes[index][4] = build(schema["items" if kind == "array" else "values"])
            return index
        else:
            # a primitive with a logical type, or a type written {"type": T}
            index = build(kind)
            if nodes[index][0] not in (GENERIC_BYTES, GENERIC_FIXED) or index in by_name.values():
                return index
        if type(name) is str and kind in ("enum", "fixed"):
            by_name[name] = index
        if schema.get("logicalType") == "decimal" and nodes[index][0] in (GENERIC_BYTES, GENERIC_FIXED):
            precision = schema.get("precision")
            scale = schema.get("scale", 0)
            if type(precision) is int and type(scale) is int and 1 <= precision <= 2**31 - 1:
                nodes[index][1] = precision
                nodes[index][2] = min(max(scale, 0), 2**31 - 1)
        return index

    build(parsed)
    # the fewest bytes per node: a lower bound, improved until nothing changes
    # (a type that contains itself without a way out never settles: stop)
    for _ in range(64):
        changed = False
        for node in nodes:
            kind = node[0]
            if kind == GENERIC_FIXED:
                size = node[3]
            elif kind == GENERIC_RECORD:
                size = sum(nodes[links[node[4] + i]][5] for i in range(node[3]))
            elif kind == GENERIC_UNION:
                size = 1 + min((nodes[links[node[4] + i]][5] for i in range(node[3])), default=0)
            else:
                size = GENERIC_SIZES.get(kind, 1)
            size = min(size, 2**40)
            if size != node[5]:
                node[5] = size
                changed = True
        if not changed:
            break
    # the types whose every value takes no bytes: null, fixed(0), records of
    # those (a least fixed point: a record that contains itself never is)
    zero = [False] * len(nodes)
    for _ in range(len(nodes) + 1):
        changed = False
        for i, node in enumerate(nodes):
            kind = node[0]
            if zero[i]:
                continue
            if (kind == GENERIC_NULL or (kind == GENERIC_FIXED and node[3] == 0)
                    or (kind == GENERIC_RECORD
                        and all(zero[links[node[4] + j]] for j in range(node[3])))):
                zero[i] = True
                changed = True
        if not changed:
            break
    for i, node in enumerate(nodes):
        node.append(zero[i])
    return nodes, links


cdef class GenericType:
    """An Avro type as a flat table of its nodes, over which the runtime walks
    a value's bytes once with the codec's limits (nesting depth, block sizes,
    the message's item budget, lengths, indexes, UTF-8, decimal digits),
    allocating nothing: the fastavro drop-in's reads from streams that cannot
    give bytes back, a Constant field's ignored bytes."""

    def __init__(self, avro):
        cdef Py_ssize_t i
        # fastavro's parser alone, not the whole of fastavro
        from roastedavro._fastavro_parts import parse_schema

        self.parsed = parse_schema(avro)
        self.named = support.named_types(self.parsed)
        self.name = support.type_name(self.parsed)
        nodes, links = _generic_nodes(self.parsed, self.named)
        self.nodes = <GenericNode*>PyMem_Malloc(len(nodes) * sizeof(GenericNode))
        self.links = <Py_ssize_t*>PyMem_Malloc((len(links) + 1) * sizeof(Py_ssize_t))
        if self.nodes == NULL or self.links == NULL:
            raise MemoryError()
        for i in range(len(nodes)):
            kind, precision, scale, size, first, min_size, zero = nodes[i]
            self.nodes[i].kind = kind
            self.nodes[i].precision = precision
            self.nodes[i].scale = scale
            self.nodes[i].size = size
            self.nodes[i].first = first
            self.nodes[i].min_size = min_size
            self.nodes[i].zero = zero
        for i in range(len(links)):
            self.links[i] = links[i]
        self.node_count = len(nodes)

    def __dealloc__(self):
        PyMem_Free(self.nodes)
        PyMem_Free(self.links)

    def __reduce__(self):
        return (GenericType, (self.parsed,))

    def __repr__(self):
        return u"GenericType(%r)" % (self.parsed,)


# ---------------------------------------------------------- dump: the value --

cdef object MAPPING = collections.abc.Mapping
cdef tuple ITERABLE_ABCS = (collections.abc.Sequence, collections.abc.Set, collections.abc.MappingView)
cdef tuple FLAT_TYPES = (str, bytes, bytearray, memoryview)


cdef int too_deep_to_write(int depth, int max_depth) except -1:
    raise DumpError(u"Nested more than %d levels deep, or contains itself%s."
                    % (depth, depth_note(depth, max_depth)))


cdef int check_value_depth(object value, int remaining, int depth, int max_depth) except -1:
    # Everything fastavro may recurse into: mappings (records and maps),
    # sequences and other sized iterables (arrays), tuples (arrays, and union
    # branches named as (name, value)). Nesting past the limit, a value that
    # contains itself included, would take fastavro's writer down the C stack.
    cdef type kind = type(value)
    if value is None or kind is str or kind is int or kind is float or kind is bool or kind is bytes:
        return 0
    if kind is dict:
        if remaining <= 0:
            too_deep_to_write(depth, max_depth)
        for item in (<dict>value).values():
            check_value_depth(item, remaining - 1, depth, max_depth)
        return 0
    if kind is list or kind is tuple:
        if remaining <= 0:
            too_deep_to_write(depth, max_depth)
        for item in value:
            check_value_depth(item, remaining - 1, depth, max_depth)
        return 0
    if isinstance(value, FLAT_TYPES):
        return 0
    if isinstance(value, MAPPING):
        items = value.values()
    elif isinstance(value, ITERABLE_ABCS):
        items = value
    elif hasattr(kind, "__iter__") and hasattr(kind, "__len__"):
        items = iter(value)
        if items is value:
            return 0    # a one-shot iterator: not consumed here
    else:
        return 0
    if remaining <= 0:
        too_deep_to_write(depth, max_depth)
    for item in items:
        check_value_depth(item, remaining - 1, depth, max_depth)
    return 0


def check_generic_value(value, int max_depth=500):
    """Raise DumpError when fastavro could not safely write ``value``: nested
    deeper than max_depth (or than this thread's C stack allows), or
    containing itself. For values written by fastavro outside a codec."""
    cdef int depth = generic_depth(max_depth)
    check_value_depth(value, depth, depth, max_depth)


# ----------------------------------------------------------- load: the bytes --

cdef int check_decimal(Reader* r, GenericNode* node, Py_ssize_t n, Py_ssize_t start) except -1:
    # fastavro rounds a value with more digits than the precision (silently)
    # and converts long byte strings in quadratic time: both are refused here
    cdef int128 unscaled
    cdef uint128 magnitude
    cdef Py_ssize_t i
    if node.kind == GENERIC_BYTES and n > decimal_max_bytes(node.precision):
        return raise_out_of_precision(r, node.precision, node.scale, start)
    if n == 0:
        return 0
    if n <= 16:
        if node.precision > 38:
            return 0    # 16 bytes hold at most 39 digits, less than 10**39
        unscaled = -1 if r.data[r.pos] & 0x80 else 0
        for i in range(n):
            unscaled = (unscaled << 8) | r.data[r.pos + i]
        magnitude = -(<uint128>unscaled) if unscaled < 0 else <uint128>unscaled
        if magnitude >= POWERS_OF_TEN_128[node.precision]:
            raise_out_of_precision(r, node.precision, node.scale, start)
        return 0
    # long fixed decimals, or bytes within the precision's length: exactly
    if not support.fits_precision(
            int.from_bytes((<const char*>r.data)[r.pos:r.pos + n], "big", signed=True),
            node.precision):
        raise_out_of_precision(r, node.precision, node.scale, start)
    return 0


# A value's bytes may also be walked straight from a stream (a file, a pipe,
# a socket), reading only what each part needs: a varint a byte at a time,
# a float, double or fixed its size, a string or bytes its length in chunks
# that double (from 64 KiB) so that memory grows with the bytes that arrive,
# never with a length the data claims. The walk then holds exactly the
# value's bytes and the stream is left just after them. A block count cannot
# be checked against bytes still to come, so: items that take bytes are
# paid for by reading them; items that take none (null, fixed(0), records of
# those) are not walked one by one, but counted, and all the value's items
# are checked against its length plus the allowance at the end, the
# compiled readers' budget.

cdef struct Source:
    PyObject* fo            # the stream
    PyObject* buffer        # a bytearray: the value's bytes read so far
    long long items         # array and map items announced so far
    bint check_text         # strings must be valid UTF-8
    bint check_decimals     # decimals must fit their precision


# `after`, below: the fewest bytes of the value that follow the part being
# read (the fields still to come, a block's next count, ...). Each read from
# the stream asks for the part's bytes and those: all the value's own, so
# nothing is read past its end, and a value takes few reads.

cdef int pull(Reader* r, Source* src, Py_ssize_t n) except -1:
    # n bytes past r.pos, read from the stream where the buffer holds fewer
    cdef Py_ssize_t want, cap
    cdef bytearray buffer
    if src == NULL or r.end - r.pos >= n:
        return 0
    buffer = <bytearray>src.buffer
    while r.end - r.pos < n:
        want = n - (r.end - r.pos)
        cap = r.end if r.end > 65536 else 65536
        if want > cap:
            want = cap
        chunk = (<object>src.fo).read(want)
        if not chunk:
            if chunk is None:
                raise DecodeError(u"the stream has no bytes ready (a non-blocking stream): "
                                  u"%d more needed" % (n - (r.end - r.pos)), r.end)
            if r.end == 0:
                raise EOFError    # the end of a stream of values
            raise TruncatedError(u"truncated data: the stream ends %d bytes into the value, "
                              u"%d more needed" % (r.end, n - (r.end - r.pos)), r.end)
        if len(chunk) > want:
            raise DecodeError(u"the stream's read(%d) returned %d bytes" % (want, len(chunk)),
                              r.end)
        buffer += chunk
        r.data = <const unsigned char*>PyByteArray_AS_STRING(buffer)
        r.end = PyByteArray_GET_SIZE(buffer)
    return 0


cdef inline Py_ssize_t plus(Py_ssize_t a, Py_ssize_t b) noexcept:
    # a sum of lower bounds, kept well within Py_ssize_t
    cdef Py_ssize_t total = a + b
    return total if total < 1099511627776 else 1099511627776


cdef int pull_varint(Reader* r, Source* src, Py_ssize_t after) except -1:
    # a varint's bytes up to the last (at most ten)
    cdef Py_ssize_t i = 0
    if src == NULL:
        return 0
    while True:
        if r.end - r.pos <= i:
            pull(r, src, plus(i + 1, after))
        if r.data[r.pos + i] < 0x80 or i == 9:
            return 0
        i += 1


cdef Py_ssize_t walk_length(Reader* r, Source* src, Py_ssize_t after) except -1:
    # a string/bytes length, its bytes read from the stream
    cdef Py_ssize_t start = r.pos
    cdef long long n
    if src == NULL:
        return read_length(r)
    pull_varint(r, src, after)
    n = read_long(r)
    if n < 0:
        raise_bad_value(r, NEGATIVE_LENGTH, n, 0, start)
    if n > 1099511627776:
        # more than any stream here holds: read on to its end, in chunks
        try:
            pull(r, src, PY_SSIZE_T_MAX - r.pos)
        except DecodeError:
            raise TruncatedError(u"truncated data: a length of %d, and the stream ends %d bytes "
                              u"into the value" % (n, r.end), r.end) from None
    pull(r, src, plus(<Py_ssize_t>n, after))
    return <Py_ssize_t>n


cdef long long stream_block_count(Reader* r, Source* src, Py_ssize_t item_size,
                                  Py_ssize_t max_items, Py_ssize_t after) except? -1:
    cdef Py_ssize_t start
    cdef long long count
    if src == NULL:
        return read_block_count(r, item_size, max_items)
    pull_varint(r, src, after)
    start = r.pos
    count = read_long(r)
    if count < 0:
        if count == -9223372036854775807 - 1:
            raise_bad_value(r, BAD_BLOCK_COUNT, count, 0, start)
        count = -count
        pull_varint(r, src, after)
        read_long(r)
    if count > max_items:
        raise DecodeError(
            u"block of %d items exceeds the limit of %d items per block "
            u"(CompileFlags.max_items)" % (count, max_items), start)
    # checked against the value's length at the end (never overflows: each
    # count is below 2**63 and the sum stops growing past it)
    if src.items <= 9223372036854775807 - count:
        src.items += count
    else:
        src.items = 9223372036854775807
    return count


cdef int skip_text(Reader* r, Source* src, Py_ssize_t after) except -1:
    # a string or map key: its length, then valid UTF-8
    cdef Py_ssize_t n = walk_length(r, src, after)
    cdef Py_ssize_t bad
    if src == NULL or src.check_text:
        bad = roasted_invalid_utf8(r.data + r.pos, n)
        if bad >= 0:
            raise TextDecodeError(u"invalid UTF-8 in string", r.pos + bad,
                                  (<const char*>r.data)[r.pos:r.pos + n], bad)
    r.pos += n
    return 0


cdef int too_deep_to_read(Reader* r, int depth, int max_depth) except -1:
    raise DecodeError(u"values nested more than %d levels deep%s"
                      % (depth, depth_note(depth, max_depth)), r.pos)


cdef int skip_generic(Reader* r, Source* src, GenericType avro, Py_ssize_t index, int remaining,
                      int depth, int max_depth, Py_ssize_t max_items, Py_ssize_t after) except -1:
    # One value's bytes, checked as the compiled readers check theirs, with
    # every array and map item paid for from the message's budget; from the
    # stream `src` where it is not NULL (else all bytes are in `r`).
    # `remaining`: the levels of records, arrays and maps still allowed.
    cdef GenericNode* node = &avro.nodes[index]
    cdef GenericNode* item
    cdef Py_ssize_t n, start = r.pos, i, item_size, rest, child
    cdef long long count, position
    cdef int kind
    if src != NULL and r.end - r.pos < plus(node.min_size, after):
        # the fewest bytes the value and what follows take, in one read
        pull(r, src, plus(node.min_size, after))
    while node.kind == GENERIC_UNION:
        pull_varint(r, src, plus(node.min_size - 1, after))
        node = &avro.nodes[avro.links[node.first + read_index(r, node.size)]]
    kind = node.kind
    if kind == GENERIC_NULL:
        return 0
    if kind == GENERIC_BOOLEAN:
        pull(r, src, plus(1, after))
        read_boolean(r)
    elif kind == GENERIC_INT:
        pull_varint(r, src, after)
        read_int(r)
    elif kind == GENERIC_LONG:
        pull_varint(r, src, after)
        read_long(r)
    elif kind == GENERIC_FLOAT:
        pull(r, src, plus(4, after))
        read_float(r)
    elif kind == GENERIC_DOUBLE:
        pull(r, src, plus(8, after))
        read_double(r)
    elif kind == GENERIC_STRING:
        skip_text(r, src, after)
    elif kind == GENERIC_BYTES:
        n = walk_length(r, src, after)
        if node.precision and (src == NULL or src.check_decimals):
            check_decimal(r, node, n, start)
        r.pos += n
    elif kind == GENERIC_FIXED:
        pull(r, src, plus(node.size, after))
        if r.end - r.pos < node.size:
            raise_truncated(r, node.size)
        if node.precision and (src == NULL or src.check_decimals):
            check_decimal(r, node, node.size, start)
        r.pos += node.size
    elif kind == GENERIC_ENUM:
        pull_varint(r, src, after)
        read_index(r, node.size)
    else:
        if remaining <= 0:
            too_deep_to_read(r, depth, max_depth)
        if kind == GENERIC_RECORD:
            # `rest`: the fewest bytes of this field and the ones after it
            rest = node.min_size
            for i in range(node.size):
                child = avro.links[node.first + i]
                rest -= avro.nodes[child].min_size
                skip_generic(r, src, avro, child, remaining - 1, depth, max_depth, max_items,
                             plus(rest if rest > 0 else 0, after))
            return 0
        # arrays and maps: each block's count checked before its items
        item = &avro.nodes[node.first]
        item_size = item.min_size + (1 if kind == GENERIC_MAP else 0)
        count = stream_block_count(r, src, item_size, max_items, after)
        while count:
            if src != NULL and count <= 1099511627776 // (item_size + 1):
                # the block's items and the next count
                pull(r, src, plus(<Py_ssize_t>count * item_size + 1, after))
            if src == NULL or kind == GENERIC_MAP or not item.zero:
                for position in range(count):
                    if kind == GENERIC_MAP:
                        skip_text(r, src, plus(item.min_size + 1, after))
                    skip_generic(r, src, avro, node.first, remaining - 1, depth, max_depth,
                                 max_items, plus(1, after))
            count = stream_block_count(r, src, item_size, max_items, after)
    return 0


cdef bytearray walk(fo, GenericType avro, int max_depth, Py_ssize_t max_items,
                    long long item_allowance, bint check_text, bint check_decimals):
    cdef Reader r
    cdef Source src
    cdef bytearray buffer = bytearray()
    cdef int depth = generic_depth(max_depth)
    r.data = <const unsigned char*>PyByteArray_AS_STRING(buffer)
    r.pos = 0
    r.end = 0
    r.invalid = 0
    r.budget = item_allowance
    r.allowance = item_allowance
    src.fo = <PyObject*>fo
    src.buffer = <PyObject*>buffer
    src.items = 0
    src.check_text = check_text
    src.check_decimals = check_decimals
    skip_generic(&r, &src, avro, 0, depth, depth, max_depth, max_items, 0)
    if src.items > r.end + item_allowance:
        raise_over_budget(&r, r.end)
    return buffer


def walk_stream(fo, GenericType avro, int max_depth=500, Py_ssize_t max_items=100_000_000,
                long long item_allowance=1_000_000, bint check_text=True,
                bint check_decimals=True):
    """The bytes of one value of the type ``avro`` read from the stream
    ``fo`` (anything with ``read(n)``), exactly its bytes: the stream is left
    just after it. Each part is checked as it arrives, with the compiled
    readers' limits (max_depth, also lowered to what this thread's C stack
    has room for fastavro; max_items per block; all items against the
    value's length plus ``item_allowance``), and nothing is read or allocated
    for a length or count the bytes do not back. ``check_text`` and
    ``check_decimals``: also check UTF-8 and decimal digits, for bytes that
    fastavro will read (a compiled codec checks them itself). DecodeError
    with the offset from the value's start; EOFError when the stream ends
    before it."""
    return walk(fo, avro, max_depth, max_items, item_allowance, check_text, check_decimals)


@cython.final
cdef class StreamWalker:
    """walk_stream with its arguments bound: ``walker.read(fo)``."""
    cdef GenericType avro
    cdef int max_depth
    cdef Py_ssize_t max_items
    cdef long long item_allowance
    cdef bint check_text
    cdef bint check_decimals

    def __init__(self, GenericType avro, int max_depth=500, Py_ssize_t max_items=100_000_000,
                 long long item_allowance=1_000_000, bint check_text=True,
                 bint check_decimals=True):
        self.avro = avro
        self.max_depth = max_depth
        self.max_items = max_items
        self.item_allowance = item_allowance
        self.check_text = check_text
        self.check_decimals = check_decimals

    def read(self, fo):
        """The bytes of one value read from ``fo`` (see walk_stream)."""
        return walk(fo, self.avro, self.max_depth, self.max_items, self.item_allowance,
                    self.check_text, self.check_decimals)


cdef int skip_checked(Reader* r, GenericType avro, int max_depth, Py_ssize_t max_items) except -1:
    cdef int depth = generic_depth(max_depth)
    return skip_generic(r, NULL, avro, 0, depth, depth, max_depth, max_items, 0)


def check_generic(data, GenericType avro, int max_depth=500, Py_ssize_t max_items=100_000_000,
                  long long item_allowance=1_000_000):
    """Checks that Avro binary ``data`` (all of it) is one value of the type
    ``avro``, as the generic walk checks a value: DecodeError with the offset
    for bytes that fail it, or that nest deeper than max_depth (or than this
    thread's C stack allows)."""
    cdef Reader r
    cdef Py_buffer view
    cdef int acquired = open_reader(&r, data, &view, item_allowance)
    try:
        skip_checked(&r, avro, max_depth, max_items)
        check_finished(&r)
    finally:
        close_reader(&view, acquired)


# ------------------------------------------ AvroCodec: fastavro's datums --
#
# The out-of-line halves of the write_*_datum primitives (_runtime.pxd):
# values that are not of the exact Python type, converted as fastavro
# converts them or refused (roastedavro._datum says which and how).

cdef object DURATION = datums.Duration


cdef int write_long_datum_slow(Writer* w, object value, int bits) except -1:
    return write_long(w, datums.long_datum(value, bits))


cdef int write_double_datum_slow(Writer* w, object value, bint single, bint lenient) except -1:
    cdef double number
    if type(value) is int:
        try:
            number = <double>value
        except OverflowError:
            number = datums.double_datum(value, lenient)  # raises the error
    else:
        number = datums.double_datum(value, lenient)
    if single:
        return write_float(w, number)
    return write_double(w, number)


cdef int write_boolean_datum_slow(Writer* w, object value) except -1:
    return write_byte(w, 1 if datums.boolean_datum(value) else 0)


cdef int write_string_datum_slow(Writer* w, object value) except -1:
    return write_str(w, datums.string_datum(value))


cdef int write_bytes_datum_slow(Writer* w, object value) except -1:
    return write_bytes(w, datums.bytes_datum(value))


cdef int write_fixed_datum_slow(Writer* w, object value, Py_ssize_t size) except -1:
    cdef bytes data = datums.fixed_datum(value, size)
    return write_raw(w, PyBytes_AS_STRING(data), size)


cdef int write_enum_datum_slow(Writer* w, object value, dict indexes) except -1:
    return write_long(w, datums.enum_index(value, indexes))


cdef dict record_datum_slow(object value):
    return datums.record_datum(value)


cdef list array_datum_slow(object value):
    return datums.array_datum(value)


cdef dict map_datum_slow(object value):
    return datums.map_datum(value)


cdef int check_map_key(object key) except -1:
    datums.map_key(key)
    return 0


cdef int add_datum_path(object error, int part, Py_ssize_t index, object key) except -1:
    if part == PATH_INDEX:
        error.path.append(index)
    elif part != PATH_NONE:
        error.path.append(key)
    return 0


cdef int write_timestamp_datum(Writer* w, object value, int unit, bint local) except -1:
    cdef long long micros
    cdef tm fields
    cdef time_t seconds
    cdef object tz
    if not PyDateTime_Check(value):
        return write_long_datum(w, value)
    tz = datetime_tzinfo(value)
    if local or tz is UTC:
        # the fields as they are: wall-clock time, or UTC already
        micros = (
            (days_from_civil(datetime_year(value), datetime_month(value), datetime_day(value)) * 86400
             + datetime_hour(value) * 3600 + datetime_minute(value) * 60 + datetime_second(value))
            * 1000000 + datetime_microsecond(value))
    elif tz is None:
        # fastavro takes a naive datetime as local time, through C's mktime
        fields.tm_year = datetime_year(value) - 1900
        fields.tm_mon = datetime_month(value) - 1
        fields.tm_mday = datetime_day(value)
        fields.tm_hour = datetime_hour(value)
        fields.tm_min = datetime_minute(value)
        fields.tm_sec = datetime_second(value)
        fields.tm_isdst = -1
        seconds = mktime(&fields)
        micros = <long long>seconds * 1000000 + datetime_microsecond(value)
    else:
        return write_long(w, datums.timestamp_datum(value, unit, local))
    if unit == UNIT_MILLIS:
        return write_long(w, floor_div(micros, 1000))
    if unit == UNIT_MICROS:
        return write_long(w, micros)
    if -9223372036854775 <= micros <= 9223372036854775:
        return write_long(w, micros * 1000)
    return write_long(w, datums.timestamp_datum(value, unit, local))  # out of range: raises


cdef int write_date_datum(Writer* w, object value) except -1:
    if PyDate_Check(value):
        # a datetime too: its date, as fastavro
        return write_long(w, days_from_civil(date_year(value), date_month(value), date_day(value)))
    if type(value) is int:
        return write_int_datum(w, value)
    return write_long(w, datums.date_datum(value))


cdef int write_time_datum(Writer* w, object value, int unit) except -1:
    # fastavro ignores a time's tzinfo
    cdef long long micros
    if PyTime_Check(value):
        micros = ((time_hour(value) * 3600LL + time_minute(value) * 60 + time_second(value)) * 1000000
                  + time_microsecond(value))
        return write_long(w, micros // 1000 if unit == UNIT_MILLIS else micros)
    if unit == UNIT_MILLIS:
        return write_int_datum(w, value)
    return write_long_datum(w, value)


cdef int write_decimal_datum(Writer* w, object value, int scale, int precision, Py_ssize_t size) except -1:
    cdef int128 unscaled
    cdef bytes encoded
    if type(value) is DECIMAL and decimal_unscaled(value, scale, precision, &unscaled):
        return write_unscaled(w, unscaled, size)
    encoded = datums.decimal_bytes(value, scale, precision, size)
    if size:
        return write_raw(w, PyBytes_AS_STRING(encoded), size)
    return write_bytes(w, encoded)


cdef bint is_uuid_text(str value) noexcept:
    # xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx in hex digits, the usual spelling
    cdef unsigned char raw[16]
    if not PyUnicode_IS_COMPACT_ASCII(value) or PyUnicode_GET_LENGTH(value) != 36:
        return False
    return roasted_uuid_parse(<const unsigned char*>PyUnicode_DATA(value), raw)


cdef int write_uuid_datum(Writer* w, object value, bint fixed) except -1:
    cdef bytes encoded
    if type(value) is UUID:
        return write_uuid_value(w, value, None, None, fixed)
    if fixed:
        encoded = datums.uuid_bytes(value)
        return write_raw(w, PyBytes_AS_STRING(encoded), 16)
    if type(value) is str and is_uuid_text(<str>value):
        # written as it is, as fastavro writes strings
        return write_str(w, <str>value)
    return write_str(w, datums.uuid_text(value))


cdef int write_big_decimal_datum(Writer* w, object value) except -1:
    return write_bytes(w, datums.big_decimal_bytes(value))


cdef object read_big_decimal(Reader* r):
    # Java's encoding inside the bytes: the unscaled value as Avro bytes
    # (two's complement), then the scale as an Avro int
    cdef Py_ssize_t start = r.pos
    cdef Py_ssize_t n = read_length(r)
    cdef Reader inner = r[0]
    cdef Py_ssize_t length
    cdef long long scale
    inner.end = r.pos + n
    length = read_length(&inner)
    if length == 0:
        raise DecodeError(u"big-decimal without its unscaled value", start)
    unscaled = (<const char*>inner.data)[inner.pos:inner.pos + length]
    inner.pos += length
    scale = read_int(&inner)
    if inner.pos != inner.end:
        raise DecodeError(u"%d bytes after a big-decimal's scale" % (inner.end - inner.pos), inner.pos)
    r.pos = inner.end
    return datums.big_decimal_value(unscaled, scale)


cdef int write_duration_datum(Writer* w, object value) except -1:
    cdef bytes encoded = datums.duration_bytes(value)
    return write_raw(w, PyBytes_AS_STRING(encoded), 12)


cdef object read_duration(Reader* r):
    # three little-endian unsigned 32-bit ints: months, days, milliseconds
    cdef unsigned int parts[3]
    if r.end - r.pos < 12:
        raise_truncated(r, 12)
    memcpy(parts, r.data + r.pos, 12)
    r.pos += 12
    return DURATION(parts[0], parts[1], parts[2])


cdef object INTEGRAL = numbers.Integral
cdef object REAL = numbers.Real


cdef tuple INT_RANGE = (-2**31, 2**31 - 1)
cdef tuple LONG_RANGE = (-2**63, 2**63 - 1)


cdef bint valid_integer_slow(object value, int bits) except -1:
    # numbers.Integral but not bool (numpy's ints, ...), compared as Python ints
    if value is True or value is False or not isinstance(value, INTEGRAL):
        return False
    low, high = INT_RANGE if bits == 32 else LONG_RANGE
    return low <= value <= high


cdef bint valid_real_slow(object value) except -1:
    return isinstance(value, REAL) and not (value is True or value is False)


cdef bint valid_symbol(object value, dict indexes) except -1:
    # `value in symbols`: equality, as fastavro's list membership
    if type(value) is str:
        return value in indexes
    for symbol in indexes:
        if value == symbol:
            return True
    return False


cdef bint valid_date(object value) except -1:
    if PyDate_Check(value):
        return True
    if isinstance(value, str):
        # fastavro converts it first: a string that is no ISO date is an error
        datums.date_datum(value)
        return True
    return valid_integer(value, 32)


# ------------------------------------------------------ schema codecs --

# binding=False: dump and load are C methods as in a generated module, whose
# bound methods Python calls directly (a cyfunction costs each call ~15 ns)
cdef extern from *:
    """
    /* Where the first value of `d` sits, in bytes from its key table, when
       `d` is a combined dict of str keys whose entries (key, value) follow
       its index table in insertion order; -1 otherwise. */
    static Py_ssize_t roasted_dict_values_offset(PyObject* d) {
    #if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030F0000 || defined(Py_GIL_DISABLED)
        return -1;
    #else
        PyDictObject* dict = (PyDictObject*)d;
        roasted_dict_keys* keys;
        PyObject **entries, *key, *value;
        Py_ssize_t used, position = 0, i = 0;
        int log2_size, width;
        if (!PyDict_CheckExact(d) || dict->ma_values != NULL || dict->ma_used == 0)
            return -1;
        keys = (roasted_dict_keys*)dict->ma_keys;
        used = dict->ma_used;
        log2_size = keys->dk_log2_size;
        /* index entries are 1, 2, 4 or 8 bytes by table size (DK_IXSIZE) */
        width = log2_size < 8 ? 0 : log2_size < 16 ? 1 : log2_size < 32 ? 2 : 3;
        if (keys->dk_kind != 1 /* DICT_KEYS_UNICODE */ || log2_size < 3 || log2_size > 40
                || keys->dk_log2_index_bytes != log2_size + width
                || keys->dk_nentries != used || used > ((Py_ssize_t)1 << log2_size))
            return -1;
        entries = roasted_dict_entries(d);
        while (PyDict_Next(d, &position, &key, &value)) {
            if (i >= used || entries[2 * i] != key || entries[2 * i + 1] != value)
                return -1;
            i++;
        }
        if (i != used)
            return -1;
        return (char*)(entries + 1) - (char*)keys;
    #endif
    }
    """
    Py_ssize_t roasted_dict_values_offset(object d)


def _dict_values_offset(dict d):
    """Test hook: roasted_dict_values_offset of a dict (-1: not usable)."""
    return roasted_dict_values_offset(d)


cdef bint writes_back(RecordKeys keys) except -1:
    # A copy filled through set_field must read back, in order and by
    # lookup, as the values written, hold one reference to each and leave
    # the template alone.
    cdef dict record = new_record(keys)
    cdef PyObject** values = record_values(record, keys)
    cdef Py_ssize_t index, count = len(keys.keys)
    if values == NULL:
        return False
    written = [object() for _ in range(count)]
    for index in range(count):
        set_field(record, values, index, keys.keys[index], written[index])
    if list(record) != list(keys.keys) or len(record) != count:
        return False
    for index, value in enumerate(record.values()):
        if value is not written[index] or record[keys.keys[index]] is not value:
            return False
    for value in keys.template.values():
        if value is not None:
            return False
    before = []
    for index in range(count):
        before.append(Py_REFCNT(written[index]))
    record = None
    for index in range(count):
        if Py_REFCNT(written[index]) != before[index] - 1:
            return False
    return True


cdef class RecordKeys:
    """A record type's loaded keys, in order (see the declaration)."""

    def __init__(self, keys, bint direct=True):
        # direct=False: always PyDict_SetItem (tests compare the two paths)
        self.keys = tuple(keys)
        template = {}
        for key in self.keys:
            if type(key) is not str:
                raise TypeError(f"record keys are str, not {type(key).__name__}")
            # interned: the same objects as the generated code's key constants
            template[sys.intern(key)] = None
        self.template = template
        self.values_offset = -1
        # a repeated key: fewer entries than indexes, so never by index
        if direct and self.keys and len(template) == len(self.keys):
            self.values_offset = roasted_dict_values_offset(template)
            if self.values_offset >= 0 and not writes_back(self):
                self.values_offset = -1

    @property
    def direct(self):
        """Whether loads write values straight into the copied dicts."""
        return self.values_offset >= 0

    def __repr__(self):
        return f"RecordKeys({self.keys!r})"

    def __reduce__(self):
        return RecordKeys, (self.keys, self.direct)


# dicts are walked in place (next_field) where RecordKeys' check passes on
# dicts of one, a few and many keys; generated modules take the verdict at
# import (enable_dict_walk)
DICT_LAYOUT_VERIFIED = all(RecordKeys([f"key_{n}" for n in range(size)]).direct
                           for size in (1, 5, 6, 100, 2000))
enable_dict_walk(DICT_LAYOUT_VERIFIED, None)


# ------------------------------------------------------ schema shapes --

# A writer schema given as a dict may be changed in place between calls, so
# the pair kept for it is checked before each use. Comparing it with a copy
# (dict ==) costs more than reading a small record. A SchemaShape instead
# holds the tree's dicts and lists, and records each one's length and
# entries as the objects themselves (keys, leaves, the dicts and lists
# within), checked again in one flat pass without calling Python: a list
# with one memcmp, a dict with PyDict_Next. It holds every object whose
# address it records, so no other object can take that address while it
# lives: an unchanged pass means an equal schema. A changed one (even an
# equal value put in) only sends the call the slow way, which compares
# values.
cdef enum:
    SHAPE_MAX_DEPTH = 200
    SHAPE_MAX_OBJECTS = 1 << 20


cdef extern from *:
    """
    /* A dict's version tag (PEP 509) changes whenever the dict does; it is
       there, if deprecated, up to Python 3.13, and gone from 3.14 on, where
       a dict's entries are compared one by one instead. */
    #if PY_VERSION_HEX < 0x030E0000
    #define ROASTEDAVRO_DICT_VERSIONED 1
    #if defined(__GNUC__)
    #pragma GCC diagnostic push
    #pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    #endif
    static inline uint64_t roastedavro_dict_version(PyObject *d) {
        return ((PyDictObject *)d)->ma_version_tag;
    }
    #if defined(__GNUC__)
    #pragma GCC diagnostic pop
    #endif
    #else
    #define ROASTEDAVRO_DICT_VERSIONED 0
    static inline uint64_t roastedavro_dict_version(PyObject *d) { (void)d; return 0; }
    #endif
    """
    bint DICT_VERSIONED "ROASTEDAVRO_DICT_VERSIONED"
    uint64_t dict_version "roastedavro_dict_version"(PyObject*)
    Py_ssize_t PyDict_GET_SIZE(object)
    Py_ssize_t PyList_GET_SIZE(object)


@cython.final
@cython.auto_pickle(False)
cdef class SchemaShape:
    """What shows, cheaply, that a schema given as dicts and lists is the
    same objects, unchanged, as when the shape was taken (see above)."""

    def __cinit__(self):
        self.containers = []
        self.entries = []
        self.table = NULL
        self.words = NULL
        self.count = 0

    def __dealloc__(self):
        PyMem_Free(self.table)
        PyMem_Free(self.words)

    @staticmethod
    def of(schema):
        """The shape of a JSON-like schema (dicts with str keys, lists, str,
        int, float, bool, None), or None for one with anything else in it,
        or too deep or large to be worth it."""
        cdef SchemaShape shape = SchemaShape()
        cdef Py_ssize_t index
        cdef ShapeEntry* entry
        if not isinstance(schema, (dict, list)) or not shape.collect(schema, 0):
            return None
        shape.count = len(shape.containers)
        shape.table = <ShapeEntry*>PyMem_Malloc(shape.count * sizeof(ShapeEntry))
        shape.words = <PyObject**>PyMem_Malloc(max(len(shape.entries), 1) * sizeof(PyObject*))
        if shape.table is NULL or shape.words is NULL:
            raise MemoryError()
        for index in range(shape.count):
            container = shape.containers[index]
            entry = &shape.table[index]
            entry.container = <PyObject*>container
            if isinstance(container, dict):
                entry.size = PyDict_GET_SIZE(container)
                entry.version = dict_version(<PyObject*>container)
            else:
                entry.size = ~PyList_GET_SIZE(container)
                entry.version = 0
        for index in range(len(shape.entries)):
            shape.words[index] = <PyObject*>shape.entries[index]
        return shape

    cdef bint collect(self, object value, int depth) except -1:
        if depth > SHAPE_MAX_DEPTH or len(self.entries) > SHAPE_MAX_OBJECTS:
            return False
        if isinstance(value, dict):
            self.containers.append(value)
            for key, item in dict.items(value):
                if type(key) is not str:
                    return False
                self.entries.append(key)
                self.entries.append(item)
        elif isinstance(value, list):
            self.containers.append(value)
            self.entries.extend(list.__iter__(value))
        else:
            return value is None or type(value) in (str, int, float, bool)
        # the entries first, then what is within them, as matches() reads them
        for item in (dict.values(value) if isinstance(value, dict) else list.__iter__(value)):
            if not self.collect(item, depth + 1):
                return False
        return True

    cpdef bint matches(self, object schema):
        """Whether ``schema`` is the tree this shape was taken from, with
        the same objects in it, unchanged (an empty shape matches nothing)."""
        cdef Py_ssize_t index, size, position
        cdef PyObject** word = self.words
        cdef PyObject* key
        cdef PyObject* item
        cdef PyObject* container
        cdef PyObject** items
        cdef ShapeEntry* entry = self.table
        if self.count == 0 or <PyObject*>schema != entry.container:
            return False
        for index in range(self.count):
            container = entry.container
            size = entry.size
            if size < 0:
                size = ~size
                if PyList_GET_SIZE(<object>container) != size:
                    return False
                # a schema's lists are short (a union's branches, a record's
                # fields): a loop, not a call to memcmp
                items = (<PyListObject*>container).ob_item
                for position in range(size):
                    if items[position] != word[position]:
                        return False
                word += size
            elif PyDict_GET_SIZE(<object>container) != size:
                return False
            elif DICT_VERSIONED:
                # any change to the dict since has changed its tag
                if dict_version(container) != entry.version:
                    return False
                word += 2 * size
            else:
                # no Python code runs in the loop: PyDict_Next's borrowed
                # pointers hold
                position = 0
                while PyDict_Next(<object>container, &position, &key, &item):
                    if key != word[0] or item != word[1]:
                        return False
                    word += 2
            entry += 1
        return True


#: matches nothing: the shape of a schema whose changes cannot be seen
#: cheaply (anything but JSON's types in it)
UNCHECKABLE = SchemaShape()


def schema_shape(schema):
    """What a cache keyed by a schema object's identity checks before each
    use: None for a schema that cannot change (text, a parsed Schema), the
    SchemaShape of dicts and lists, UNCHECKABLE for dicts and lists whose
    changes cannot be seen cheaply."""
    if not isinstance(schema, (dict, list)):
        return None
    shape = SchemaShape.of(schema)
    return UNCHECKABLE if shape is None else shape


@cython.auto_pickle(False)
cdef class Transcoder:
    """Turns data written with another schema into a schema's own bytes."""

    cdef bytes transcode_bytes(self, object data):
        raise NotImplementedError("a Transcoder turns data into bytes")

    def transcode(self, data):
        """The reader's bytes of ``data``, one datum of the writer's schema."""
        return self.transcode_bytes(data)


cdef inline object load_laid_out(SchemaCodec codec, data, bint many):
    # bytes laid out as the codec's root reader reads them (inline: every
    # load_compiled call takes this path)
    cdef bint invalid = False
    result = codec.load_many(data, &invalid) if many else codec.load_one(data, &invalid)
    if invalid or codec.load_through_marshmallow:
        return codec.load_with_marshmallow(data, many)
    if codec.load_hooks is not None:
        result = codec.load_hooks(result, many, codec.validate)
        if result is support.INVALID:
            # marshmallow's load raises the exact error
            return codec.load_with_marshmallow(data, many)
    return result


@cython.auto_pickle(False)
@cython.binding(False)
@cython.always_allow_keywords(False)
cdef class SchemaCodec:
    """Dump and load for a CompiledSchema; subclassed by each generated module.

    Not picklable: a codec holds the schema's field objects and functions;
    a CompiledSchema is pickled without it and compiles (or loads) it again.
    """

    cdef int write_root(self, Writer* w, object obj, int depth) except -1:
        raise NotImplementedError("a generated codec writes its root record")

    cdef object read_root(self, Reader* r, int depth):
        raise NotImplementedError("a generated codec reads its root record")

    def dump(self, obj, many=None):
        """Avro binary of `obj` (a list of records when many)."""
        if many is None:
            many = self.many
        if self.dump_through_marshmallow:
            return self.dump_with_marshmallow(obj, many)
        return self.write_records(obj, many)

    def dump_records(self, obj, bint many):
        """The compiled writer alone: no marshmallow hooks."""
        return self.write_records(obj, many)

    cdef bytes write_records(self, obj, bint many):
        # not cpdef: a cpdef method of a class that is not final looks for a
        # Python-level override on every call
        try:
            return self.dump_many(obj) if many else self.dump_one(obj)
        except DumpError as error:
            raise support.validation_error(error) from None

    def load(self, data, many=None, writer_schema=None):
        """The loaded record of Avro binary `data` (a list of them when many),
        written with this schema or with `writer_schema`."""
        if many is None:
            many = self.many
        if writer_schema is not None:
            # another writer's bytes, read as this schema's; a service gives
            # the same writer schema object call after call (one that cannot
            # change, or a dict whose SchemaShape is unchanged since it was met)
            last = self.last_pair
            if (last is not None and last[0] is writer_schema and last[1] == many
                    and (last[3] is None or (<SchemaShape?>last[3]).matches(writer_schema))):
                pair = last[2]
            else:
                pair, lasting = self.pairs(writer_schema, many)
                if lasting is True:
                    self.last_pair = (writer_schema, many, pair, None)
                elif lasting is not False:
                    self.last_pair = (writer_schema, many, pair, lasting)
            if isinstance(pair, SchemaCodec):
                # compiled for this writer: its bytes read in one pass
                return load_laid_out(<SchemaCodec>pair, data, many)
            if isinstance(pair, Transcoder):
                if (<Transcoder>pair).replaced_by is not None:
                    # its compiled codec was installed while this call or
                    # the kept pair still had it
                    self.last_pair = None
                    return load_laid_out(<SchemaCodec>(<Transcoder>pair).replaced_by, data, many)
                data = (<Transcoder>pair).transcode_bytes(data)
            else:
                data = pair.transcode(data)
        return load_laid_out(self, data, many)


    def forget_pair(self):
        """Drops the pair kept for the last writer schema object (the pairs
        changed: a compiled one replaced what served it)."""
        self.last_pair = None

    cdef bytes dump_one(self, obj):
        cdef Writer w
        if type(obj) is list:
            # a record is a mapping or an object; a list is many records
            raise validation_error_type()({"_schema": [
                u"Expected a single record, got a list; pass many=True to write a list of records."]})
        writer_init(&w)
        try:
            self.write_root(&w, obj, 0)
            return writer_finish(&w)
        finally:
            writer_release(&w)

    cdef bytes dump_many(self, objs):
        # many=True: the records as one Avro array
        cdef Writer w
        cdef Py_ssize_t count
        cdef Py_ssize_t index = 0
        if type(objs) is not list:
            objs = as_list(objs)
        count = len(<list>objs)
        writer_init(&w)
        try:
            if count:
                write_long(&w, count)
                try:
                    for obj in <list>objs:
                        self.write_root(&w, obj, 0)
                        index += 1
                except DumpError as error:
                    error.path.append(index)
                    raise
            write_byte(&w, 0)
            return writer_finish(&w)
        finally:
            writer_release(&w)

    cdef object load_one(self, data, bint* invalid):
        # `invalid`: the bytes decoded, but marshmallow's load refuses a value
        cdef Reader r
        cdef Py_buffer view
        cdef int acquired = open_reader(&r, data, &view, self.item_allowance)
        try:
            r.invalid = 0
            result = self.read_root(&r, 0)
            if r.pos != r.end:
                check_finished(&r)
        finally:
            close_reader(&view, acquired)
        invalid[0] = r.invalid
        return result

    cdef list load_many(self, data, bint* invalid):
        cdef Reader r
        cdef Py_buffer view
        cdef long long count
        cdef long long index
        cdef list records = []
        cdef int acquired = open_reader(&r, data, &view, self.item_allowance)
        try:
            r.invalid = 0
            count = read_block_count(&r, self.min_size, self.max_items)
            while count:
                for index in range(count):
                    records.append(self.read_root(&r, 0))
                count = read_block_count(&r, self.min_size, self.max_items)
            check_finished(&r)
        finally:
            close_reader(&view, acquired)
        invalid[0] = r.invalid
        return records


# one-argument entry points take their argument without keyword parsing (as
# the generated modules' methods did): dump and load are on every message's path
@cython.always_allow_keywords(False)
cdef class DatumCodec:
    """The entry points of a codec of plain Avro values (see _runtime.pxd):
    subclassed by each generated AvroCodec module's Codec and by tier 0."""

    cdef int write_datum(self, Writer* w, object datum) except -1:
        raise TypeError(u"this codec only reads (a reader schema's codec for another writer's "
                        u"data)")

    cdef object read_datum(self, Reader* r):
        raise NotImplementedError

    cdef int skip_datum(self, Reader* r) except -1:
        raise TypeError(u"this codec does not skip values")

    cdef int skip_at(self, Reader* r, Py_ssize_t node, int depth) except -1:
        raise TypeError(u"only tier 0's interpreter skips by its node table")

    cdef bint accepts_record_at(self, Py_ssize_t node, object value, int depth) except -1:
        raise TypeError(u"only tier 0's interpreter validates by its node table")

    cdef int count_work(self, Py_ssize_t size) except -1:
        return 0

    @cython.final
    cdef int counted(self, Py_ssize_t size) except -1:
        self.calls += 1
        if self.counts_work:
            return self.count_work(size)
        return 0

    def dump(self, datum):
        """The Avro binary of `datum`."""
        return self.encode(b"", datum)

    def dump_prefixed(self, bytes prefix, datum):
        """`prefix` (a single-object header), then the Avro binary of `datum`."""
        return self.encode(prefix, datum)

    def dump_block(self, values):
        """The Avro binary of each of `values` (a list), one after another:
        the data of a container file's block."""
        cdef Writer w
        cdef Py_ssize_t index = 0
        writer_init(&w)
        try:
            for index, value in enumerate(values):
                self.write_datum(&w, value)
            self.counted(w.size)
            return writer_finish(&w)
        except DumpError as error:
            error.path.append(index)
            raise datums.datum_error(error) from None
        finally:
            writer_release(&w)

    def dump_next(self, iterator, Py_ssize_t limit, list rescued=None):
        """The Avro binary of values taken from `iterator` one after another,
        up to and including the value that brings it to `limit` bytes or
        more, or to the iterator's end, and how many values it holds: a
        container file's block from a stream of records, cut as fastavro and
        Java cut it (at the first record that fills the sync interval). Where
        a value cannot be written or the iterator fails, the bytes and count
        of the values written before go to `rescued` (a list), then the
        error is raised: records taken are not lost."""
        cdef Writer w
        cdef Py_ssize_t count = 0
        cdef Py_ssize_t whole = 0     # bytes of the values written whole
        if iter(iterator) is not iterator:
            raise TypeError(u"dump_next takes an iterator (each call goes on from the last)")
        writer_init(&w)
        try:
            for value in iterator:
                self.write_datum(&w, value)
                count += 1
                whole = w.size
                if whole >= limit:
                    break
            self.counted(w.size)
            return writer_finish(&w), count
        except DumpError as error:
            if rescued is not None:
                rescued.append((PyBytes_FromStringAndSize(w.data, whole), count))
            raise datums.datum_error(error) from None
        except BaseException:
            if rescued is not None:
                rescued.append((PyBytes_FromStringAndSize(w.data, whole), count))
            raise
        finally:
            writer_release(&w)

    @cython.final
    cdef bytes encode(self, bytes prefix, datum):
        cdef Writer w
        writer_init(&w)
        try:
            write_encoded(&w, prefix)
            self.write_datum(&w, datum)
            self.counted(w.size)
            return writer_finish(&w)
        except DumpError as error:
            raise datums.datum_error(error) from None
        finally:
            writer_release(&w)

    def load(self, data):
        """The value of Avro binary `data` (all of it)."""
        return self.decode(data, 0, True, NULL)

    def load_from(self, data, Py_ssize_t start):
        """The value of Avro binary `data` from byte `start` to the end."""
        return self.decode(data, start, True, NULL)

    def load_one(self, data, Py_ssize_t start):
        """The value at byte `start` of `data` and the offset after it; bytes
        may follow (a stream of values, as fastavro's schemaless_reader reads)."""
        cdef Py_ssize_t end
        result = self.decode(data, start, False, &end)
        return result, end

    def skip(self, data):
        """Checks Avro binary `data` (all of it) as load does, building nothing
        (the skippers that schema resolution uses for fields it leaves out)."""
        cdef Reader r
        cdef Py_buffer view
        cdef int acquired = open_reader(&r, data, &view, self.item_allowance)
        try:
            self.skip_datum(&r)
            if r.pos != r.end:
                check_finished(&r)
        finally:
            close_reader(&view, acquired)

    def load_block(self, data, long long count):
        """`count` values read one after another from `data`, which they must
        fill exactly (a container file's block, decompressed)."""
        return self.load_block_within(data, count, self.item_allowance)[0]

    def load_block_within(self, data, long long count, long long allowance):
        """The values of load_block, their items (and values that take no
        bytes) paid for from the data's length plus `allowance` instead of
        the codec's item_allowance, and what is left of that sum: the next
        block's allowance, for a budget that holds across a file's blocks."""
        cdef Reader r
        cdef Py_buffer view
        cdef long long number
        if allowance < 0:
            raise ValueError(u"a negative item allowance")
        cdef int acquired = open_reader(&r, data, &view, allowance)
        cdef list values = []
        try:
            if count < 0:
                raise DecodeError(u"a block of %d values" % count, 0)
            # values take at least min_size bytes each; zero-size ones are paid
            # for from the item budget, as array items are
            check_count(&r, count, self.min_size, 9223372036854775807, 0)
            for number in range(count):
                values.append(self.read_datum(&r))
            if r.pos != r.end:
                raise DecodeError(u"%d bytes left in the block after its %d values"
                                  % (r.end - r.pos, count), r.pos)
            self.counted(r.end)
        finally:
            close_reader(&view, acquired)
        return values, r.budget

    @cython.final
    cdef object decode(self, data, Py_ssize_t start, bint whole, Py_ssize_t *end):
        # one datum from byte `start`: `whole` requires it to fill the rest of
        # the data; otherwise the offset after it goes to `end`
        cdef Reader r
        cdef Py_buffer view
        cdef int acquired = open_reader(&r, data, &view, self.item_allowance)
        try:
            if not 0 <= start <= r.end:
                raise DecodeError(u"no value: the data has %d bytes" % r.end, r.end)
            r.pos = start
            result = self.read_datum(&r)
            if whole and r.pos != r.end:
                check_finished(&r)
            self.counted(r.pos - start)
        finally:
            close_reader(&view, acquired)
        if not whole:
            end[0] = r.pos
        return result

    cdef object decode_in(self, bytes data, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t *end):
        cdef Reader r
        r.invalid = 0
        r.data = <const unsigned char*>PyBytes_AS_STRING(data)
        r.end = stop
        r.pos = start
        # as decode(data, start) counts it: the stream's length up to `stop`
        r.budget = stop + self.item_allowance
        r.allowance = self.item_allowance
        result = self.read_datum(&r)
        self.counted(r.pos - start)
        end[0] = r.pos
        return result



cdef inline Py_ssize_t frame_long(const unsigned char* p, Py_ssize_t n, long long* value) noexcept:
    # a zigzag varint of at most 10 bytes from p[:n]: its length, or 0
    # where it is longer or cut short (the careful reader says which)
    cdef unsigned long long raw = 0
    cdef Py_ssize_t k
    for k in range(min(n, 10)):
        raw |= <unsigned long long>(p[k] & 0x7F) << (7 * k)
        if p[k] < 0x80:
            if k == 9 and p[k] > 1:
                return 0    # more than 64 bits
            value[0] = <long long>(raw >> 1) ^ -<long long>(raw & 1)
            return k + 1
    return 0


def block_frame(bytes buffer, Py_ssize_t position, Py_ssize_t max_size):
    """A container file block's frame at ``buffer[position:]``: (record
    count, where its data starts, where it ends), each checked (counts and
    sizes not negative, the size at most ``max_size``); None for anything
    else, which the careful reader (roastedavro.container) reads again to
    say what it is. The data and the sync marker after it may lie past the
    buffer's end."""
    cdef const unsigned char* p = <const unsigned char*>(<char*>buffer)
    cdef Py_ssize_t n = len(buffer)
    cdef long long count
    cdef long long size
    cdef Py_ssize_t used
    if position < 0 or position >= n:
        return None
    used = frame_long(p + position, n - position, &count)
    if used == 0 or count < 0:
        return None
    position += used
    used = frame_long(p + position, n - position, &size)
    if used == 0 or size < 0 or size > max_size:
        return None
    position += used
    return count, position, position + size
