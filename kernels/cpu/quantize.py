"""Fixed-point gradient pairs (see gbm.tree.quantize)."""
import numpy as np
from numba import prange

from ..jit import helper, kernel
from .views import flat


@kernel
def max_abs(values):
    """Largest |value| of a float64 array (0 for an empty one; NaN values are passed
    over). Order-free: a maximum. One thread: a pass at memory speed, and a serial kernel
    compiles in a fraction of a parallel one's time.

    On the values' bits: a non-negative float's bits, read as an unsigned integer, order
    as the float does, so the largest |value| is the largest of the bits with the sign
    cleared (NaN's, above +inf's, counted as 0). Integer maxima vectorise, a float
    comparison with a branch does not (measured 5x faster on 200,000 values)."""
    bits = values.view(np.uint64)
    sign_off = np.uint64(0x7FFFFFFFFFFFFFFF)  # every bit of a float64 but its sign
    inf = np.uint64(0x7FF0000000000000)  # +inf's bits; |NaN|'s are larger
    best = np.uint64(0)
    for i in range(bits.shape[0]):
        b = bits[i] & sign_off
        best = max(best, b if b <= inf else np.uint64(0))
    out = np.empty(1, dtype=np.uint64)
    out[0] = best
    return out.view(np.float64)[0]


_BLOCK = 8192  # rows a task: the threads take blocks


@kernel(parallel=True)
def quantize_gradients(grad, hess, scales, out):
    """Fixed-point gradient pairs: ``out[i] = (rint(grad[i] * scales[0]), rint(hess[i] * scales[1]))``.

    grad, hess : float64 (n,)   # IN
    scales : float64 (2,)       # IN  powers of two (see gbm.tree.quantize)
    out : int64 (n, 2)          # OUT C order

    Blocks of rows in parallel, each a plain loop over ``out``'s flat view, which
    vectorises: indexing ``out[i, 0]`` and ``out[i, 1]`` in a ``prange`` loop did not
    (measured one thread, 50,000 rows: 1.43 -> 0.47 ns a row). Each value is the same
    ``rint`` of the same product: the same pairs.
    """
    n = grad.shape[0]
    s0, s1 = scales[0], scales[1]
    pairs = flat(out)
    for b in prange((n + _BLOCK - 1) // _BLOCK):
        lo, hi = b * _BLOCK, min(n, (b + 1) * _BLOCK)
        _quantize_block(grad[lo:hi], hess[lo:hi], s0, s1, pairs[2 * lo:2 * hi])


@helper
def _quantize_block(grad, hess, s0, s1, pairs):
    """A block's rows of ``quantize_gradients`` into ``pairs`` (their part of ``out``,
    flat). Indices from 0: the loop has no wrap-around test and vectorises."""
    for i in range(grad.shape[0]):
        pairs[2 * i] = np.int64(np.rint(grad[i] * s0))
        pairs[2 * i + 1] = np.int64(np.rint(hess[i] * s1))
