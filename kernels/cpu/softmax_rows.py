"""Softmax's numerators for the metrics: each row's ``exp(margin - max of the row)`` with
gbm's exp (``kernels/elementary.py``, the same bits on every CPU), rows in parallel.

A host kernel (``gbm.objectives.pointwise``: an eval set's probabilities at many classes,
every round): the same bits as ``exp_into`` on ``margin - margin.max(axis=1)``, which it
replaces, in one pass and without that ``(n_rows, k)`` temporary; each element is its own
(no sum), so any thread count gives the same bits.
"""
from numba import prange

from ..elementary import cpu as _elementary
from ..jit import helper, kernel

_EXP = _elementary.exp
_ROWS_PER_TASK = 16  # rows per parallel task (a row is k exps: at 1,000 classes ~10 us)


@kernel(parallel=True)
def shifted_exp_rows(margin, out):
    """``out[i, j] = exp(margin[i, j] - max(margin[i]))``, the max as NumPy's (a NaN in
    the row makes it NaN).

    margin : float64 (n_rows, k), C order, k >= 1   # IN
    out : float64 (n_rows, k), C order              # OUT
    """
    n_rows = margin.shape[0]
    n_tasks = (n_rows + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK
    for task in prange(n_tasks):
        lo = task * _ROWS_PER_TASK
        for i in range(lo, min(lo + _ROWS_PER_TASK, n_rows)):
            _shifted_exp_row(margin[i], out[i])


@helper
def _shifted_exp_row(row, out):
    top = row[0]
    for j in range(1, row.shape[0]):
        v = row[j]
        if v > top or v != v:  # a NaN stays (NumPy's max propagates it)
            top = v
            if v != v:
                break
    for j in range(row.shape[0]):
        out[j] = _EXP(row[j] - top)
