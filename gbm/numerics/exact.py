"""Float sums that do not depend on how the values are split or ordered.

A float sum's rounding depends on the order of the additions, so a base score or a metric
summed over 1 thread, 2 workers or 3 chunks would differ in its last bits. Here every
float64 ``x = m * 2**e`` (``m`` an integer of at most 53 bits) is added exactly into
integer bins indexed by ``e`` (a "superaccumulator", as in Demmel & Nguyen's reproducible
summation): the bins are integers, so ranks add theirs with an integer all-reduce, and the
exact total is rounded to the nearest float64 once, at the end. The result is the
correctly rounded sum of all the values: the same whatever the split and order.
"""
import numpy as np

from ..collective import LOCAL
from ..kernels.jit import kernel

_E_MIN = -1126  # bin k weighs 2**(k + _E_MIN); the smallest value bit, 2**-1074, is bin 52
_HALF = 26  # a 53-bit mantissa is added as two halves of 27 and 26 bits
_N_BINS = 1024 + _HALF - _E_MIN - 52  # up to the high half of the largest finite float


def sum_parts(values):
    """The exact sum of a float64 array, as int64 bins (n_sums, n_bins) ready for an
    integer all-reduce. ``values``: (n,) for one sum or (n_sums, n) for several."""
    values = np.asarray(values, dtype=np.float64)
    matrix = np.ascontiguousarray(values.reshape(1, -1) if values.ndim == 1 else values)
    if not np.isfinite(matrix).all():
        raise ValueError("an exact sum needs finite values; got NaN or infinity")
    out = np.zeros((matrix.shape[0], _N_BINS), dtype=np.int64)
    _add_parts(matrix.view(np.int64), out)
    return out


@kernel
def _add_parts(bits, out):
    """Each finite value, from its IEEE 754 bits ``bits[i, j]``: an integer of at most 53
    bits times ``2**(k + _E_MIN)``, added into row ``i`` of ``out`` as two integer halves,
    bins ``k`` (the low 26 bits) and ``k + 26`` (the high 27). Integer adds: exact, in any
    order (a bin takes at most 2**27 a value: no overflow before 2**36 values)."""
    low_mask = np.int64((1 << _HALF) - 1)
    fraction_mask = np.int64((1 << 52) - 1)
    for i in range(bits.shape[0]):
        for j in range(bits.shape[1]):
            b = bits[i, j]
            field = (b >> 52) & 0x7FF
            magnitude = b & fraction_mask
            if field:  # normal: the implicit leading bit
                magnitude |= np.int64(1) << 52
            else:  # subnormal (or zero): the exponent of the smallest normal
                field = 1
            k = field - 1075 - _E_MIN  # the value is magnitude * 2**(field - 1075)
            high, low = magnitude >> _HALF, magnitude & low_mask
            if b < 0:
                high, low = -high, -low
            out[i, k + _HALF] += high
            out[i, k] += low


def parts_to_float(parts):
    """The float64 nearest to the exact value of one row of ``sum_parts`` bins."""
    total = 0
    for shift in np.flatnonzero(parts).tolist():
        total += int(parts[shift]) << shift
    return total / (1 << -_E_MIN)  # int / int is correctly rounded in Python


def exact_sums(values, collective=LOCAL):
    """Correctly rounded sums of the rows of ``values`` (n_sums, n) over every rank: a
    list of floats, the same whatever the ranks, chunks and order."""
    parts = collective.allreduce(sum_parts(values), "sum")
    return [parts_to_float(row) for row in parts]


def exact_sum(values, collective=LOCAL):
    """Correctly rounded sum of ``values`` (n,) over every rank."""
    return exact_sums(np.asarray(values, dtype=np.float64).reshape(1, -1), collective)[0]


def exact_mean(values, weights=None, collective=LOCAL):
    """Weighted mean ``sum(w * v) / sum(w)`` from exact sums (unweighted: ``w = 1``, and
    the row count, an integer, is the exact weight)."""
    values = np.asarray(values, dtype=np.float64)
    if weights is None:
        total = exact_sum(values, collective)
        count = collective.allreduce(np.array([values.shape[0]], dtype=np.int64), "sum")[0]
        return total / float(count)
    weights = np.asarray(weights, np.float64)
    total, weight = exact_sums(np.stack([weights * values, weights]), collective)
    return total / weight
