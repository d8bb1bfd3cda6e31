# The children of a column reader's or writer's node as a C array of
# borrowed references: a row then calls each child directly, with no list
# iteration and no type test per value (roastedavro._columns, ._columnwriter).

from cpython.object cimport PyObject
from libc.stdlib cimport malloc


cdef inline PyObject** borrowed_array(list items) except NULL:
    # the items' addresses in a malloc'd array (free() it); borrowed: the
    # caller keeps the list, checked, as long as the array
    cdef PyObject** array = <PyObject**>malloc(max(len(items), 1) * sizeof(PyObject*))
    cdef Py_ssize_t position
    if array == NULL:
        raise MemoryError()
    for position in range(len(items)):
        array[position] = <PyObject*>items[position]
    return array
