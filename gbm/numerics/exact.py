"""Float sums that do not depend on how the values are split or ordered.

A float sum's rounding depends on the order of the additions, so a base score or a metric
summed over 1 thread, 2 workers or 3 chunks would differ in its last bits. Here every
float64 ``x = m * 2**e`` (``m`` an integer of at most 53 bits) is added exactly into
integer bins indexed by ``e`` (a "superaccumulator", as in Demmel & Nguyen's reproducible
summation; the loop is ``kernels/cpu/exact.py``, a host kernel on every backend): the
bins are integers, so ranks add theirs with an integer all-reduce, and the exact total
is rounded to the nearest float64 once, at the end. The result is the correctly rounded
sum of all the values: the same whatever the split and order.
"""
import numpy as np

from ..collective import LOCAL
from ..kernels.layout import EXACT_BINS, EXACT_E_MIN


def sum_parts(values):
    """The exact sum of a float64 array, as int64 bins (n_sums, n_bins) ready for an
    integer all-reduce. ``values``: (n,) for one sum or (n_sums, n) for several."""
    values = np.asarray(values, dtype=np.float64)
    matrix = np.ascontiguousarray(values.reshape(1, -1) if values.ndim == 1 else values)
    if not np.isfinite(matrix).all():
        raise ValueError("an exact sum needs finite values; got NaN or infinity")
    from ..kernels import cpu  # on first use: ``import gbm`` stays light

    out = np.zeros((matrix.shape[0], EXACT_BINS), dtype=np.int64)
    cpu.add_exact_parts(matrix.view(np.int64), out)
    return out


def parts_to_float(parts):
    """The float64 nearest to the exact value of one row of ``sum_parts`` bins."""
    total = 0
    for shift in np.flatnonzero(parts).tolist():
        total += int(parts[shift]) << shift
    return total / (1 << -EXACT_E_MIN)  # int / int is correctly rounded in Python


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
