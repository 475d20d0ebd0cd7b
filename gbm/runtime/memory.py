"""Freed memory given back to the operating system at the end of a fit's set-up.

A fit's set-up (input checks, bin edges, binned rows) makes temporaries of the size of
the data, many of them in threads (the bin edges are cut feature by feature in a thread
pool). glibc keeps what is freed: in the main heap below its sliding thresholds, and in
each thread's own arena. The process then holds the set-up's peak through the rounds,
on top of the rounds' own arrays: measured, 800,000 x 28 rows, 27 MB in the threads'
arenas and 30 MB more in the main heap. ``release_free_memory()`` asks glibc
(``malloc_trim(0)``: every arena) to return the free pages; the rounds then allocate
what they need. Elsewhere than glibc it does nothing. The model does not depend on it.
"""
import ctypes
import os


def _glibc():
    """The process's glibc, when it has ``malloc_trim``; else None."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"):
            return None
        libc = ctypes.CDLL(None)
        return libc if hasattr(libc, "malloc_trim") else None
    except (AttributeError, ValueError, OSError):
        return None


_LIBC = _glibc()


# Below this many bytes of input the set-up's temporaries are a few MB at most, which the
# rounds' own allocations reuse; trimmed, those allocations fault the pages in again:
# measured 1.5-2 ms a fit at 50,000 x 10 (the call itself 0.2 ms), 1 MB more peak memory
# without it (bench/PROFILE_small.md)
TRIM_MIN_BYTES = 8 << 20


def release_free_memory(n_bytes=None):
    """Return the heap's free pages to the operating system (glibc); True if asked.
    ``n_bytes``: the size of the input the set-up worked on (float32 cells x 4); below
    ``TRIM_MIN_BYTES`` nothing is asked."""
    if _LIBC is None or n_bytes is not None and n_bytes < TRIM_MIN_BYTES:
        return False
    _LIBC.malloc_trim(0)
    return True
