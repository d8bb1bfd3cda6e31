"""The size of the calling thread's stack, as the C library reports it.

glibc gives a new thread a cached stack of up to about 4 times the size asked
for (threading.stack_size), so a test of small stacks checks what it got.
"""

from __future__ import annotations

import ctypes
import sys


def current_stack_size() -> int | None:
    """The calling thread's stack size in bytes, or None where unknown."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.pthread_self.restype = ctypes.c_ulong
        attributes = ctypes.create_string_buffer(256)  # pthread_attr_t is 56 bytes on x86-64
        if libc.pthread_getattr_np(ctypes.c_ulong(libc.pthread_self()), attributes) != 0:
            return None
        try:
            address, size = ctypes.c_void_p(), ctypes.c_size_t()
            if libc.pthread_attr_getstack(attributes, ctypes.byref(address), ctypes.byref(size)) != 0:
                return None
            return size.value
        finally:
            libc.pthread_attr_destroy(attributes)
    except (OSError, AttributeError):
        return None
