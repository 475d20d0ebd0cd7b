"""Fixed-point gradient pairs (see gbm.tree.quantize)."""
import numpy as np
from numba import prange

from ..jit import kernel


@kernel
def max_abs(values):
    """Largest |value| of a float64 array (0 for an empty one). Order-free: a maximum.
    One thread: a pass at memory speed, and a serial kernel compiles in a fraction of a
    parallel one's time."""
    best = 0.0
    for i in range(values.shape[0]):
        v = abs(values[i])
        if v > best:
            best = v
    return best


@kernel(parallel=True)
def quantize_gradients(grad, hess, scales, out):
    """Fixed-point gradient pairs: ``out[i] = (rint(grad[i] * scales[0]), rint(hess[i] * scales[1]))``.

    grad, hess : float64 (n,)   # IN
    scales : float64 (2,)       # IN  powers of two (see gbm.tree.quantize)
    out : int64 (n, 2)          # OUT
    """
    for i in prange(grad.shape[0]):
        out[i, 0] = np.int64(np.rint(grad[i] * scales[0]))
        out[i, 1] = np.int64(np.rint(hess[i] * scales[1]))
