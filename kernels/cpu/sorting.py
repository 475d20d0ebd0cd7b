"""A stable sort that kernels share (the categorical split searches' orders of codes,
``split.py`` and ``vector_categorical.py``; a node's column draws, ``node_masks.py``)."""
import numpy as np

from ..jit import helper


@helper
def merge_sort(weight, n, order):
    """``order`` = codes ``0 .. n-1`` by increasing ``weight``, ties in code order (a
    bottom-up merge sort: stable, as NumPy's ``argsort(kind="mergesort")``, whose own
    compiled form costs seconds of compile time)."""
    src = np.empty(n, dtype=np.int64)
    dst = np.empty(n, dtype=np.int64)
    for c in range(n):
        src[c] = c
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j = lo, mid
            for out in range(lo, hi):
                # the left run's element first unless the right one is strictly lighter
                if i < mid and (j >= hi or weight[src[j]] >= weight[src[i]]):
                    dst[out] = src[i]
                    i += 1
                else:
                    dst[out] = src[j]
                    j += 1
        src, dst = dst, src
        width *= 2
    for c in range(n):
        order[c] = src[c]
