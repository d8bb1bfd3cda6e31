# Included by the column reader and writer. gcc keeps their per-value
# methods (Column.read, read_leaf, add_offset; Source.write, write_leaf) out
# of line at -O2, as each is called from several loops, which costs about a
# fifth of reading a file. With gcc and clang the including module's inline
# functions are always inlined, so a leaf's value is read or written in its
# struct's, list's or map's loop; other compilers keep Cython's default.
cdef extern from *:
    """
    #if defined(__GNUC__)
    #undef CYTHON_INLINE
    #define CYTHON_INLINE inline __attribute__((always_inline))
    #endif
    """
