"""Reduced gradients for vector-leaf trees with many outputs (SketchBoost, Iosipoi &
Vakhrushev 2022; XGBoost 3.2's reduced-gradient training): the split search reads a
projection of the ``k`` outputs' gradients to ``d`` columns, the leaf values all ``k``.

The projection is a count sketch: output ``j`` goes to column ``c(j)`` with sign
``s(j)``, both drawn by ``splitmix64`` from the seed only (``random_state``), so the
model is the same on any hardware and thread count. A column's gradient is the signed
sum of its outputs' gradients, its hessian the sum of their hessians, each summed in
output order (float64, a fixed order: the same bits everywhere).
"""
import numpy as np

from ..kernels.hashing import splitmix64

# gradient_projection="auto" projects above this many outputs (bench/RESULTS_multiclass.md)
PROJECTION_AUTO_OUTPUTS = 64

_PROJECTION_KEY = 0x5EC7_0B00  # keeps these draws apart from the samplers'


def projection_for(p, k):
    """``(columns int64 (k,), signs float64 (k,), d)`` of the fit's projection, or None
    when the split search reads every output (off, or ``k <= d``)."""
    on = p["gradient_projection"]
    if on == "auto":
        on = k > PROJECTION_AUTO_OUTPUTS
    d = p["projection_dim"]
    if not on or k <= d:
        return None
    return sketch(p["random_state"], k, d)


def sketch(seed, k, d):
    """The count sketch of ``k`` outputs to ``d`` columns for ``seed``."""
    base = splitmix64(np.uint64(seed) ^ np.uint64(_PROJECTION_KEY))
    draws = splitmix64(np.arange(k, dtype=np.uint64) ^ base)
    columns = (draws % np.uint64(d)).astype(np.int64)
    signs = np.where((draws >> np.uint64(63)) == 1, -1.0, 1.0)
    return columns, signs, d


def project_gradients(grad, hess, projection, backend=None, maxima=None):
    """grad, hess float64 (k, n) -> float64 (d, n) each, on the gradients' device (see the
    module's docstring). With the CPU ``backend``: its ``project_outputs`` kernel (the
    same sums in the same order as the NumPy loop here, its twin: the same bits), which
    also writes every output's ``[max |g|, max |h|]`` into ``maxima`` (float64 (k, 2),
    optional; untouched elsewhere)."""
    columns, signs, d = projection
    if backend is not None and backend.name == "cpu":
        grad, hess = np.ascontiguousarray(grad), np.ascontiguousarray(hess)
        g, h = np.empty((d, grad.shape[1])), np.empty((d, grad.shape[1]))
        out = np.empty((grad.shape[0], 2)) if maxima is None else maxima
        with backend.threads(2 * grad.size):
            backend.kernels.project_outputs(grad, hess, np.ascontiguousarray(columns, np.int64),
                                            np.ascontiguousarray(signs, np.float64), g, h, out)
        return g, h
    # where the gradients are (NumPy, or CuPy on device="cuda": the same IEEE sums)
    g = np.zeros_like(grad, shape=(d, grad.shape[1]))
    h = np.zeros_like(hess, shape=(d, grad.shape[1]))
    for j in range(grad.shape[0]):  # output order: a fixed order of the float sums
        c = columns[j]
        if signs[j] > 0:
            g[c] += grad[j]
        else:
            g[c] -= grad[j]
        h[c] += hess[j]
    return g, h
