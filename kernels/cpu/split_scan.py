"""The threshold scan of one numeric feature in the common case (no L1 term, no weight
cap, no monotone bounds): ``split._numeric_best``'s results, bit for bit, in blocks that
vectorise.

``_numeric_best`` walks the bins one at a time: a running sum, two divisions, a test,
and a jump over each empty bin (a branch the processor cannot predict at deep nodes,
where bins are sparse). Here a block of ``_BLOCK`` bins goes in three passes: the
running sums (integers, in order); every threshold's gain at once, with no branch (the
divisions in SIMD lanes; an invalid threshold gets -inf); then the scan for the first
strictly larger gain. Empty bins are not skipped: an empty bin's threshold has its
predecessor's sums, so the same gain, which is never strictly larger than the best so
far; the winner is the same threshold. The gain is the same expression in the same
order, ``gl * gl / (hl + lambda) + gr * gr / (hr + lambda) - parent``, so the same bits.
"""
import numpy as np

from ..jit import helper
from .stack import stack_array

_BLOCK = 64  # thresholds a pass: a few cache lines of scratch on the stack


@helper
def plain_best(h, n, miss_g, miss_h, total_g, total_h, parent, inv_g, inv_h, reg_lambda,
               min_child_weight, out, task):
    """Best threshold of one numeric feature with ``n`` value bins (``h``: int64 (n, 2) or
    more, its value bins' sums; ``miss_g, miss_h``: its missing rows'); writes ``out`` row
    ``task`` when any (see ``split._numeric_best``, whose plain case this is)."""
    task_gain, task_bin, task_left, task_sum = out
    left_g = stack_array(_BLOCK, np.int64)
    left_h = stack_array(_BLOCK, np.int64)
    gains = stack_array(_BLOCK, np.float64)
    n_directions = 2 if (miss_g != 0 or miss_h != 0) else 1
    best = -np.inf
    best_bin, best_left, best_g, best_h = 0, 0, 0, 0
    for direction in range(n_directions):
        running_g = miss_g if direction == 1 else 0
        running_h = miss_h if direction == 1 else 0
        for first in range(0, n - 1, _BLOCK):
            m = min(_BLOCK, n - 1 - first)
            for j in range(m):
                running_g += h[first + j, 0]
                running_h += h[first + j, 1]
                left_g[j] = running_g
                left_h[j] = running_h
            _gains(left_g, left_h, m, total_g, total_h, parent, inv_g, inv_h, reg_lambda,
                   min_child_weight, gains)
            for j in range(m):
                if gains[j] > best:
                    best = gains[j]
                    best_bin, best_left = first + j, direction
                    best_g, best_h = left_g[j], left_h[j]
    if best > -np.inf:
        task_gain[task] = best
        task_bin[task] = best_bin
        task_left[task] = best_left
        task_sum[task, 0] = best_g
        task_sum[task, 1] = best_h


@helper(error_model="numpy")
def _gains(left_g, left_h, m, total_g, total_h, parent, inv_g, inv_h, reg_lambda,
           min_child_weight, gains):
    """``gains[j]``: the gain of the threshold with left sums ``(left_g[j], left_h[j])``,
    -inf where a child is empty or lighter than ``min_child_weight`` (``_numeric_best``'s
    tests). No branch, NumPy's division rules (a masked-off lane may divide by zero):
    the loop vectorises."""
    for j in range(m):
        lg, lh = left_g[j], left_h[j]
        rg, rh = total_g - lg, total_h - lh
        hl, hr = lh * inv_h, rh * inv_h
        gl, gr = lg * inv_g, rg * inv_g
        gain = gl * gl / (hl + reg_lambda) + gr * gr / (hr + reg_lambda) - parent
        ok = (lh > 0) & (rh > 0) & (hl >= min_child_weight) & (hr >= min_child_weight)
        gains[j] = gain if ok else -np.inf
