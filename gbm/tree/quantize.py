"""Fixed-point gradient pairs, so that every histogram is an exact integer sum.

Integer addition is associative: a histogram summed by 1 thread, 2 threads, a GPU or N
workers is the same number, and so are the splits chosen from it (reproducible summation,
Demmel & Nguyen 2013; XGBoost's GPU quantiser does the same).

Each round, gradients ``g`` and hessians ``h`` get their own scale, a power of two
chosen from the global ``max |g|`` and the global row count ``n`` such that
``n * max|g| * scale <= 2**60``: no sum of any subset of rows can overflow int64, and the
scale depends only on a maximum and a count, which every worker can agree on exactly.
A power of two makes ``g * scale`` and ``G / scale`` exact in floating point.
"""
import math

import numpy as np

GPAIR_DTYPE = np.int64  # (g, h) as 64-bit fixed point: exact, order-independent sums
_HEADROOM_BITS = 60  # leaves 3 bits of int64 for rounding error and sign
# Largest max|g| * n allowed: any sum G of the values is then below 2**500, and G^2 (the
# split gain's numerator) below 2**1000, inside float64's range. Labels and weights within
# gbm.data's limits stay far below; only a diverging fit (e.g. a huge learning_rate) gets
# here, and it stops with an error instead of silently losing splits to inf - inf.
_MAX_SUM_BITS = 500


def quantization_scale(max_abs, n_rows):
    """Power-of-two scale for values whose absolute sum is at most ``max_abs * n_rows``."""
    bound = float(max_abs) * max(int(n_rows), 1)
    if not math.isfinite(bound):
        raise FloatingPointError(
            f"gradients are not finite (max |value| = {max_abs}); check labels, weights and base_score"
        )
    if bound > math.ldexp(1.0, _MAX_SUM_BITS):
        raise FloatingPointError(
            f"gradients too large: max |value| {max_abs:.3g} over {n_rows} rows could sum past "
            f"2**{_MAX_SUM_BITS}, and squared in the split gain, overflow; the fit diverged "
            "(lower learning_rate) or the labels, weights or base_score are too large")
    if bound <= 0.0:
        return 1.0
    exponent = math.floor(_HEADROOM_BITS - math.log2(bound))
    return math.ldexp(1.0, min(exponent, 1000))


def quantize(grad, hess, backend, n_rows_total=None, out=None, max_abs=None):
    """Turn float64 gradients and hessians into int64 pairs, with scales agreed by every
    rank (the global ``max |g|``, ``max |h|`` and row count, through the collective).

    Parameters
    ----------
    grad, hess : float64 (n,), on the backend's device
    backend : gbm.runtime.backend.Backend (kernels ``max_abs``, ``quantize_gradients``; collective)
    n_rows_total : int, rows over all ranks (default: this rank's, with one rank)
    out : int64 (n, 2), optional, where to write ``gpair`` (on the device)
    max_abs : float64 (2,), optional
        The global ``max |g|``, ``max |h|`` when the caller has agreed them already (one
        exchange for several outputs: ``gbm.tree.vector_leaf.quantize_outputs``).

    Returns
    -------
    gpair : ndarray of int64, shape (n, 2)
    scales : ndarray of float64, shape (2,)
        Multiply a float by it to get the fixed-point value; divide to go back.
    """
    kernels, collective = backend.kernels, backend.collective
    xp = backend.xp
    grad, hess = xp.ascontiguousarray(grad), xp.ascontiguousarray(hess)
    with backend.threads(grad.shape[0]):
        if max_abs is None:
            local_max = np.array([kernels.max_abs(grad), kernels.max_abs(hess)])
            max_abs = collective.allreduce(local_max, "max")
        n = grad.shape[0] if n_rows_total is None else n_rows_total
        scales = np.array([quantization_scale(max_abs[0], n), quantization_scale(max_abs[1], n)])
        gpair = xp.empty((grad.shape[0], 2), dtype=GPAIR_DTYPE) if out is None else out
        if _in_front_of(grad, gpair):
            _quantize_over(kernels, grad, hess, scales, gpair)
        else:
            kernels.quantize_gradients(grad, hess, scales, gpair)
    return gpair, scales


def _in_front_of(grad, gpair):
    """Whether ``grad`` lies in the first ``n`` float64 slots of ``gpair``'s memory
    (int64 (n, 2)): a caller that wrote its gradients there (``gbm.training.rounds``)
    holds no float gradient array besides the pairs (8 bytes a row)."""
    n = grad.shape[0]
    return (isinstance(grad, np.ndarray) and isinstance(gpair, np.ndarray)
            and n > 0 and gpair.flags.c_contiguous and grad.flags.c_contiguous
            and grad.dtype == np.float64 and gpair.shape == (n, 2)
            and grad.__array_interface__["data"][0] == gpair.__array_interface__["data"][0])


# rows below this are quantized from a copy of their gradients (a few pages)
_OVER_COPY_ROWS = 8192


def _quantize_over(kernels, grad, hess, scales, gpair):
    """``quantize_gradients`` where ``grad`` lies in the first half of ``gpair``'s memory
    (``_in_front_of``): row ``i``'s pair takes float slots ``2i, 2i + 1``. Rows
    ``lo .. hi - 1`` with ``2 lo >= hi`` read slots below ``hi`` and write slots from
    ``2 lo`` on, which no row still to come reads: the upper half first, then halves
    of the rest, and the last rows from a copy. Each row is the same ``rint`` of the same
    value as from separate arrays: the same pairs."""
    hi = grad.shape[0]
    while hi > _OVER_COPY_ROWS:
        lo = (hi + 1) // 2
        kernels.quantize_gradients(grad[lo:hi], hess[lo:hi], scales, gpair[lo:hi])
        hi = lo
    kernels.quantize_gradients(grad[:hi].copy(), hess[:hi], scales, gpair[:hi])
