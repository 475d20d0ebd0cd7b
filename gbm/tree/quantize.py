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


def quantize(grad, hess, backend, n_rows_total=None, out=None, max_abs=None, local_max=None):
    """Turn float64 gradients and hessians into int64 pairs, with scales agreed by every
    rank (the global ``max |g|``, ``max |h|`` and row count, through the collective).

    Parameters
    ----------
    grad, hess : float64 (n,), on the backend's device; on the CPU they may be the float64
        slots ``2i``, ``2i + 1`` of ``out``'s memory (converted in place: ``_in_pair_slots``)
    backend : gbm.runtime.backend.Backend (kernels ``max_abs``, ``quantize_gradients``; collective)
    n_rows_total : int, rows over all ranks (default: this rank's, with one rank)
    out : int64 (n, 2), optional, where to write ``gpair`` (on the device)
    max_abs : float64 (2,), optional
        The global ``max |g|``, ``max |h|`` when the caller has agreed them already (one
        exchange for several outputs: ``gbm.tree.vector_gradients.quantize_outputs``).
    local_max : float64 (2,), optional
        This rank's ``max |g|``, ``max |h|`` (NaN passed over), when the objective's kernel
        recorded them as it wrote the pairs' slots (``logistic_pair_gradients``): the same
        values ``max_abs_pairs`` would read, without a second pass; still agreed through
        the collective.

    Returns
    -------
    gpair : ndarray of int64, shape (n, 2)
    scales : ndarray of float64, shape (2,)
        Multiply a float by it to get the fixed-point value; divide to go back.
    """
    kernels, collective = backend.kernels, backend.collective
    xp = backend.xp
    in_place = out is not None and _in_pair_slots(grad, hess, out)
    if not in_place:
        grad, hess = xp.ascontiguousarray(grad), xp.ascontiguousarray(hess)
    with backend.threads(2 * grad.shape[0]):  # two values a row
        if max_abs is None:
            if local_max is None:
                local_max = (kernels.max_abs_pairs(out) if in_place
                             else np.array([kernels.max_abs(grad), kernels.max_abs(hess)]))
            max_abs = collective.allreduce(local_max, "max")
        n = grad.shape[0] if n_rows_total is None else n_rows_total
        scales = np.array([quantization_scale(max_abs[0], n), quantization_scale(max_abs[1], n)])
        gpair = xp.empty((grad.shape[0], 2), dtype=GPAIR_DTYPE) if out is None else out
        if in_place:
            kernels.quantize_pairs_in_place(gpair, scales)
        else:
            kernels.quantize_gradients(grad, hess, scales, gpair)
    return gpair, scales


def _in_pair_slots(grad, hess, gpair):
    """Whether ``grad`` and ``hess`` are the float64 slots ``2i`` and ``2i + 1`` of
    ``gpair``'s memory (int64 (n, 2), C order): row ``i``'s pair's own two slots, where a
    CPU round of one output group has its objective write them (``gbm.training.rounds``):
    no float gradient or hessian array is held besides the pairs (16 bytes a row), and
    each row is converted where it lies (``quantize_pairs_in_place``)."""
    if not all(isinstance(a, np.ndarray) for a in (grad, hess, gpair)):
        return False
    n = grad.shape[0]
    base = gpair.ctypes.data
    return (n > 0 and gpair.flags.c_contiguous and gpair.shape == (n, 2)
            and gpair.dtype == GPAIR_DTYPE and grad.dtype == hess.dtype == np.float64
            and grad.shape == hess.shape == (n,) and grad.strides == hess.strides == (16,)
            and grad.ctypes.data == base and hess.ctypes.data == base + 8)
