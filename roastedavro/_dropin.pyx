# cython: language_level=3
"""roastedavro.fastavro's per-call paths, in C.

``schemaless_writer`` and ``schemaless_reader`` are called once per message:
written in Python they cost more than the codec they call. Here the schema
object's codec is found by its id in the drop-in's cache, the datum is
written or read by the codec's engine (a DatumCodec: compiled or tier 0)
through its C methods, and a BytesIO is read in place. Everything else
(fastavro's options, other streams, the first call with a schema) goes to
the Python functions of roastedavro.fastavro.
"""

cimport cython
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject

from roastedavro._runtime cimport DatumCodec, SchemaShape
from roastedavro._runtime import schema_shape

from io import BytesIO

from roastedavro.errors import DatumError, UnreadableDatumError

# CPython's BytesIO object (Modules/_io/bytesio.c, the same from 3.5 to
# 3.13): its buffer (a bytes object, NULL once closed), the position and the
# stream's length. Reading it here spares a datum three method calls
# (tell, read, seek); the layout is checked at import (bytesio_layout_holds)
# and the methods are called where it does not hold.
cdef extern from *:
    """
    typedef struct {
        PyObject_HEAD
        PyObject *buf;
        Py_ssize_t pos;
        Py_ssize_t string_size;
    } roastedavro_bytesio;
    """
    ctypedef struct roastedavro_bytesio:
        PyObject* buf
        Py_ssize_t pos
        Py_ssize_t string_size

cdef type BYTES_IO = BytesIO
# BytesIO.write itself: called without looking it up on the stream
cdef object bytes_io_write = BytesIO.write


cdef bint bytesio_layout_holds():
    # a BytesIO made from bytes shares them until written to (since 3.5)
    cdef bytes probe = b"0123456789"
    stream = BytesIO(probe)
    stream.seek(3)
    cdef roastedavro_bytesio* state = <roastedavro_bytesio*><PyObject*>stream
    if state.buf != <PyObject*>probe or state.pos != 3 or state.string_size != 10:
        return False
    stream.write(b"abc")
    stream.seek(1)
    return (state.buf != NULL and type(<object>state.buf) is bytes and state.pos == 1
            and state.string_size == 10)


cdef bint bytesio_layout_known = bytesio_layout_holds()
cdef bint read_bytesio_in_place = bytesio_layout_known


def bytesio_in_place(enabled=None):
    """Whether a BytesIO is read in place (its layout is CPython's known
    one); ``enabled=False`` reads it through its methods instead, ``True``
    in place again where the layout allows."""
    global read_bytesio_in_place
    if enabled is not None:
        read_bytesio_in_place = bool(enabled) and bytesio_layout_known
    return read_bytesio_in_place

# set by roastedavro.fastavro at import (bind): its cache and slow paths
cdef dict by_object = None
cdef object codec_for = None
cdef object pair_codec = None
cdef object with_options = None
cdef object named_read = None
cdef object read_stream = None
cdef object unreadable_error = None    # an UnreadableDatumError as fastavro's error
cdef object fastavro_error = None


def bind(dict cache, codec_of, pair_of, dump_with_options, read_named, read_other, error,
         unreadable):
    """The drop-in's cache of codecs by schema object and its Python paths."""
    global by_object, codec_for, pair_codec, with_options, named_read, read_stream
    global fastavro_error, unreadable_error
    by_object = cache
    codec_for = codec_of
    pair_codec = pair_of
    with_options = dump_with_options
    named_read = read_named
    read_stream = read_other
    fastavro_error = error
    unreadable_error = unreadable


# fastavro's registries of logical types (LOGICAL_WRITERS, LOGICAL_READERS)
# and their sizes when the cached codecs were made: a key added or removed
# calls logical_changed, which forgets those codecs
cdef dict logical_writers = None
cdef dict logical_readers = None
cdef Py_ssize_t writers_seen = 0
cdef Py_ssize_t readers_seen = 0
cdef object logical_changed = None


def watch_logical(dict writers, dict readers, changed):
    """Call ``changed()`` when keys are added to or removed from ``writers``
    or ``readers`` (fastavro's custom logical types), before a call is served."""
    global logical_writers, logical_readers, writers_seen, readers_seen, logical_changed
    logical_writers, logical_readers, logical_changed = writers, readers, changed
    writers_seen, readers_seen = len(writers), len(readers)


# the last schema object written and read with, and its codec: (schema,
# codec), (writer schema, reader schema, codec); one object each, so that a
# thread sees a pair or the one before it, never half of each
cdef tuple last_written = (None, None, None)
cdef tuple last_read = (None, None, None, None, None)


def forget():
    """Forget the codecs of the last calls (the cache they came from was cleared)."""
    global last_written, last_read
    last_written = (None, None, None)
    last_read = (None, None, None, None, None)


cdef inline int check_logical() except -1:
    global writers_seen, readers_seen
    if logical_writers is not None and (len(logical_writers) != writers_seen
                                        or len(logical_readers) != readers_seen):
        writers_seen, readers_seen = len(logical_writers), len(logical_readers)
        forget()
        logical_changed()
    return 0


cdef inline bint unchanged(object shape, object schema):
    # a schema given as dicts and lists may have been changed in place since
    # (roastedavro._runtime.schema_shape)
    return shape is None or (<SchemaShape>shape).matches(schema)


cdef inline tuple cached(object key, object schema, object reader_schema):
    """The entry of by_object for these schema objects, unchanged, or None."""
    cdef PyObject* entry
    # the entry holds the schema objects themselves, so their ids stay theirs
    entry = PyDict_GetItem(by_object, key)
    if (entry != NULL and (<tuple>entry)[0] is schema and (<tuple>entry)[1] is reader_schema
            and unchanged((<tuple>entry)[3], schema)
            and unchanged((<tuple>entry)[4], reader_schema)):
        return <tuple>entry
    return None


cdef object writing_codec(object schema):
    global last_written
    check_logical()
    cdef tuple last = last_written
    if last[0] is schema and unchanged(last[2], schema):
        return last[1]
    entry = cached(id(schema), schema, None)
    if entry is not None:
        last_written = (schema, entry[2], entry[3])
        return entry[2]
    # the shape first: what the codec is made from
    shape = schema_shape(schema)
    codec = codec_for(schema)
    last_written = (schema, codec, shape)
    return codec


cdef object reading_codec(object writer_schema, object reader_schema):
    global last_read
    check_logical()
    cdef tuple last = last_read
    if (last[0] is writer_schema and last[1] is reader_schema
            and unchanged(last[3], writer_schema) and unchanged(last[4], reader_schema)):
        return last[2]
    if reader_schema is None or reader_schema is writer_schema:
        entry = cached(id(writer_schema), writer_schema, None)
    else:
        entry = cached((id(writer_schema), id(reader_schema)), writer_schema, reader_schema)
    if entry is not None:
        last_read = (writer_schema, reader_schema, entry[2], entry[3], entry[4])
        return entry[2]
    # the shapes first: what the codec is made from
    shapes = (schema_shape(writer_schema),
              None if reader_schema is None or reader_schema is writer_schema
              else schema_shape(reader_schema))
    if reader_schema is None or reader_schema is writer_schema:
        codec = codec_for(writer_schema)
    else:
        codec = pair_codec(writer_schema, reader_schema)
    last_read = (writer_schema, reader_schema, codec, *shapes)
    return codec


def schemaless_writer(fo, schema, record, strict=False, strict_allow_default=False,
                      disable_tuple_notation=False):
    """Write ``record`` to ``fo`` as Avro binary without a header (fastavro's).
    ``strict`` and ``strict_allow_default`` check the record's keys as
    fastavro does (in the interpreter, tier 0); ``disable_tuple_notation``
    reads tuples as sequences, never as (branch name, value)."""
    if strict or strict_allow_default or disable_tuple_notation:
        fo.write(with_options(schema, record, strict, strict_allow_default,
                              disable_tuple_notation))
        return
    codec = writing_codec(schema)
    engine = codec._codec
    try:
        if isinstance(engine, DatumCodec):
            data = (<DatumCodec>engine).encode(b"", record)
        else:
            data = codec.dump(record)    # the first call: the codec picks its engine
    except DatumError as error:
        raise fastavro_error(error) from None
    if type(fo) is BYTES_IO:
        bytes_io_write(fo, data)
    else:
        fo.write(data)


def schemaless_reader(fo, writer_schema, reader_schema=None, return_record_name=False,
                      return_record_name_override=False, handle_unicode_errors="strict",
                      return_named_type=False, return_named_type_override=False):
    """Read one datum from ``fo`` (fastavro's).

    As fastavro, it reads one datum and leaves ``fo`` just after it, so a
    stream of datums is read by calling it again; ``EOFError`` at the end
    (a schema whose datums take no bytes, null or a record of no fields,
    reads one from nothing, as fastavro does). Any stream is read, seekable
    or not (a pipe, a socket's file): only the datum's bytes are consumed,
    and nothing is read or allocated for a length or count its bytes do not
    back. With a ``reader_schema`` the datum is resolved by a codec for the
    pair; a pair that cannot be read raises
    :class:`roastedavro.fastavro.SchemaResolutionError` (fastavro's too).
    fastavro's naming options give its ``(name, value)`` tuples, read by
    tier 0 with fastavro's rules; ``handle_unicode_errors`` decodes strings
    and map keys with that error handler, also in tier 0. Malformed bytes
    raise ``DecodeError`` with the offset from the datum's start (from the
    stream's position for a BytesIO); a datum cut short is also an
    ``EOFError`` (roastedavro.errors.TruncatedError), as in fastavro.
    """
    if reader_schema is not None:
        # data the reader's schema cannot read (a symbol, a branch): fastavro's error
        try:
            return read_datum(fo, writer_schema, reader_schema, return_record_name,
                              return_record_name_override, handle_unicode_errors,
                              return_named_type, return_named_type_override)
        except UnreadableDatumError as error:
            raise unreadable_error(error) from None
    return read_datum(fo, writer_schema, None, return_record_name, return_record_name_override,
                      handle_unicode_errors, return_named_type, return_named_type_override)


cdef object read_datum(fo, writer_schema, reader_schema, return_record_name,
                       return_record_name_override, handle_unicode_errors, return_named_type,
                       return_named_type_override):
    cdef Py_ssize_t start, end
    cdef roastedavro_bytesio* state
    cdef bytes buffer
    if return_record_name or return_record_name_override or return_named_type \
            or return_named_type_override or handle_unicode_errors != "strict":
        return named_read(fo, writer_schema, reader_schema, return_record_name,
                          return_record_name_override, handle_unicode_errors,
                          return_named_type, return_named_type_override)
    codec = reading_codec(writer_schema, reader_schema)
    reader = codec._reader
    if type(fo) is BYTES_IO and isinstance(reader, DatumCodec):
        if read_bytesio_in_place:
            state = <roastedavro_bytesio*><PyObject*>fo
            if state.buf != NULL and 0 <= state.pos < state.string_size:
                # held here, the buffer is shared: a write to the stream
                # meanwhile (another thread's) copies it rather than resizing it
                buffer = <bytes>state.buf
                start = state.pos
                datum = (<DatumCodec>reader).decode_in(buffer, start, state.string_size, &end)
                if state.buf != NULL:
                    state.pos = end
                return datum
        else:
            start = fo.tell()
            if start == 0:
                # read() of a whole BytesIO returns the bytes it was made from: no copy
                data = fo.read()
                if not data:
                    return read_stream(fo, codec, reader)    # the end, or a datum of no bytes
                datum = (<DatumCodec>reader).decode(data, 0, False, &end)
                fo.seek(end)
                return datum
    return read_stream(fo, codec, reader)
