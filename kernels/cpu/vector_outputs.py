"""Vector-leaf rounds with many outputs, on the float gradients (float64 (k, n_rows),
output-major) without their fixed-point pairs: every output's maxima in one call, the
projected gradients, each leaf's pair sums quantized as they are read, and the leaf
values added to every output's margins.

Twins of ``kernels/reference/vector_outputs.py``. Every task is one output (or one
projected column over a block of rows) and writes only its own cells; the pair sums are integer sums of the same
``rint(value * scale)`` that ``quantize_gradients`` writes, so any order gives the same
sums; each margin gets one float addition, and each projected column its outputs' values
added in output order: the same bits on any thread count.
"""
import numpy as np
from numba import prange

from ..jit import helper, kernel

_SIGN_OFF = np.uint64(0x7FFFFFFFFFFFFFFF)  # every bit of a float64 but its sign
_INF_BITS = np.uint64(0x7FF0000000000000)  # +inf's bits; |NaN|'s are larger


@helper
def _largest_bits(bits):
    """The largest |value|'s bits of float64 values given as uint64 bits (NaN passed
    over; 0 for none): ``kernels/cpu/quantize.py``'s ``max_abs`` rule."""
    best = np.uint64(0)
    for i in range(bits.shape[0]):
        b = bits[i] & _SIGN_OFF
        best = max(best, b if b <= _INF_BITS else np.uint64(0))
    return best


@kernel(parallel=True)
def max_abs_outputs(grad, hess, out):
    """Every output's ``[max |g|, max |h|]`` (each as ``max_abs``: NaN passed over, 0 for
    no rows), one output a task.

    grad, hess : float64 (k, n_rows)   # IN  C order
    out : float64 (k, 2)               # OUT
    """
    k = grad.shape[0]
    bits = out.view(np.uint64)
    for j in prange(k):
        bits[j, 0] = _largest_bits(grad[j].view(np.uint64))
        bits[j, 1] = _largest_bits(hess[j].view(np.uint64))


@kernel(parallel=True)
def project_outputs(grad, hess, columns, signs, out_grad, out_hess, out_maxima):
    """The count sketch's columns (``gbm.tree.projection``): column ``c``'s gradient the
    signed sum of its outputs' gradients, its hessian the sum of their hessians, each
    from 0.0 in output order (the NumPy loop's float sums, bit for bit); and, from the
    same pass, every output's ``[max |g|, max |h|]`` (``max_abs_outputs``' values).

    grad, hess : float64 (k, n_rows)              # IN  C order
    columns : int64 (k,), signs : float64 (k,)    # IN  output j's column and sign
    out_grad, out_hess : float64 (d, n_rows)      # OUT
    out_maxima : float64 (k, 2)                   # OUT

    A task is one column over a block of rows: its outputs' rows of the block read in
    order (long runs, prefetched), the block's two sums in cache; each output's maxima
    are the largest of its blocks' (a maximum: any order).
    """
    k, n = grad.shape
    d = out_grad.shape[0]
    n_blocks = (n + _ROW_BLOCK - 1) // _ROW_BLOCK
    block_bits = np.zeros((k, max(n_blocks, 1), 2), np.uint64)
    for task in prange(d * n_blocks):
        c = task // n_blocks
        b = task - c * n_blocks
        lo, hi = b * _ROW_BLOCK, min(n, (b + 1) * _ROW_BLOCK)
        g, h = out_grad[c], out_hess[c]
        for i in range(lo, hi):
            g[i] = 0.0
            h[i] = 0.0
        for j in range(k):
            if columns[j] != c:
                continue
            gj, hj = grad[j], hess[j]
            if signs[j] > 0:
                for i in range(lo, hi):
                    g[i] += gj[i]
            else:
                for i in range(lo, hi):
                    g[i] -= gj[i]
            for i in range(lo, hi):
                h[i] += hj[i]
            # the block's values again, from cache
            block_bits[j, b, 0] = _largest_bits(gj[lo:hi].view(np.uint64))
            block_bits[j, b, 1] = _largest_bits(hj[lo:hi].view(np.uint64))
    bits = out_maxima.view(np.uint64)
    for j in range(k):
        bits[j, 0] = _largest_bits(block_bits[j, :, 0])
        bits[j, 1] = _largest_bits(block_bits[j, :, 1])


_ROW_BLOCK = 16384  # rows a projection task: its two sums 256 KiB (in a core's cache)


@helper
def _leaf_of_rows(n_rows, rows, starts, ends, none):
    """int32 (n_rows,): each row's segment (``none``: in no segment)."""
    leaf_of = np.full(n_rows, none, np.int32)
    for s in range(starts.shape[0]):
        for p in range(starts[s], ends[s]):
            leaf_of[rows[p]] = s
    return leaf_of


@kernel(parallel=True)
def quantized_segment_sums(grad, hess, scales, rows, starts, ends, out):
    """Each segment's fixed-point pair sums per output, every row's pair quantized as it
    is read: ``(rint(grad[j, r] * scales[j, 0]), rint(hess[j, r] * scales[j, 1]))``, the
    integers ``quantize_gradients`` writes, so the sums ``vector_segment_sums`` gives
    the quantized pairs.

    grad, hess : float64 (k, n_rows)           # IN  C order
    scales : float64 (k, 2)                    # IN  each output's powers of two
    rows : int32 (m,)                          # IN
    starts, ends : int64 (n_segments,)         # IN  disjoint segments of ``rows``
    out : int64 (n_segments, k, 2)             # OUT

    A task is one output: one pass in row order over its gradients (read once, in
    order), a chunk of rows quantized at a time (a loop that vectorises), then each
    row's pair added to its segment's (rows in no segment to a spare one, dropped):
    measured 1.4x faster than quantizing and adding row by row.
    """
    k, n = grad.shape
    n_segments = starts.shape[0]
    leaf_of = _leaf_of_rows(n, rows, starts, ends, n_segments)
    for j in prange(k):
        sums = np.zeros((n_segments + 1, 2), np.int64)
        chunk_g = np.empty(_SUM_CHUNK, np.int64)
        chunk_h = np.empty(_SUM_CHUNK, np.int64)
        sg, sh = scales[j, 0], scales[j, 1]
        gj, hj = grad[j], hess[j]
        for lo in range(0, n, _SUM_CHUNK):
            m = min(_SUM_CHUNK, n - lo)
            for i in range(m):
                chunk_g[i] = np.int64(np.rint(gj[lo + i] * sg))
                chunk_h[i] = np.int64(np.rint(hj[lo + i] * sh))
            for i in range(m):
                s = leaf_of[lo + i]
                sums[s, 0] += chunk_g[i]
                sums[s, 1] += chunk_h[i]
        for s in range(n_segments):
            out[s, j, 0] = sums[s, 0]
            out[s, j, 1] = sums[s, 1]


_SUM_CHUNK = 1024  # rows quantized at a time by a segment-sum task


@kernel(parallel=True)
def add_outputs_leaf_values(rows, leaf_starts, leaf_ends, leaf_values, margins):
    """``margins[j, r] += leaf_values[s, j]`` for every row ``r`` of leaf ``s``'s segment
    and every output ``j``: ``add_leaf_values`` of each output's column, all in one call
    (one addition per margin: the same bits).

    rows : int32 (m,)                           # IN
    leaf_starts, leaf_ends : int64 (n_leaves,)  # IN  disjoint segments of ``rows``
    leaf_values : float64 (n_leaves, k)         # IN
    margins : float64 (k, n_rows)               # IN/OUT

    A task is one output: its margins in row order (a row in no leaf passed over).
    """
    k, n = margins.shape
    n_leaves = leaf_starts.shape[0]
    leaf_of = _leaf_of_rows(n, rows, leaf_starts, leaf_ends, n_leaves)
    values = np.ascontiguousarray(leaf_values.T)  # (k, n_leaves): a task's values together
    for j in prange(k):
        column, mine = margins[j], values[j]
        for r in range(n):
            s = leaf_of[r]
            if s < n_leaves:
                column[r] += mine[s]
