"""Fixed-point gradient pairs (see gbm.quantize)."""
import numpy as np
from numba import prange

from ..jit import kernel


@kernel(parallel=True)
def max_abs(values):
    """Largest |value| of a float64 array (0 for an empty one). Order-free: a maximum."""
    n = values.shape[0]
    n_parts = max(1, min(64, n // 4096))
    part = np.zeros(n_parts)
    for t in prange(n_parts):
        best = 0.0
        for i in range(n * t // n_parts, n * (t + 1) // n_parts):
            v = abs(values[i])
            if v > best:
                best = v
        part[t] = best
    return part.max() if n else 0.0


@kernel(parallel=True)
def quantize_gradients(grad, hess, scales, out):
    """Fixed-point gradient pairs: ``out[i] = (rint(grad[i] * scales[0]), rint(hess[i] * scales[1]))``.

    grad, hess : float64 (n,)   # IN
    scales : float64 (2,)       # IN  powers of two (see gbm.quantize)
    out : int64 (n, 2)          # OUT
    """
    for i in prange(grad.shape[0]):
        out[i, 0] = np.int64(np.rint(grad[i] * scales[0]))
        out[i, 1] = np.int64(np.rint(hess[i] * scales[1]))
