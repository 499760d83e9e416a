"""Keep fetch-sized buffers in the heap of a Spark Python worker (glibc's mallopt).

A worker reading a topic receives each Fetch answer (up to `FETCH_MAX_BYTES`) into a fresh buffer; glibc
serves allocations above its mmap threshold with a new mapping whose pages fault in one by one and are
unmapped when freed. Raising the mmap and trim thresholds above the fetch size makes the worker reuse heap
memory instead. The broker tunes its own process the same way (`broker/runtime/allocator.py`); this is the
executors' copy because the Spark source may import nothing of the broker but its wire formats.
"""

from __future__ import annotations

import ctypes
import ctypes.util

# mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def keep_buffers_in_heap(mmap_threshold: int, trim_threshold: int) -> bool:
    """Apply the thresholds to this process; False where the C library is not glibc (nothing changes)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, mmap_threshold)) and bool(
        mallopt(_M_TRIM_THRESHOLD, trim_threshold)
    )
