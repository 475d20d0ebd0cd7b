"""The vector-leaf split rule and one feature's threshold search, shared by
``vector_leaf.py`` and ``vector_categorical.py``: each output's gain and weight (0 for an
output lighter than ``min_child_weight``), their monotone forms (weights clamped into a
node's bounds, a wrong-ordered pair pooled), a node's gain summed over the outputs, a
candidate split's gain, the best threshold of one feature and the reduction of the tasks'
bests per node. The rule is XGBoost's (see ``vector_leaf.py``'s module text)."""
import numpy as np

from ..jit import helper
from ..split_math import cpu as _split_math

node_gain = _split_math.node_gain
leaf_weight = _split_math.leaf_weight
gain_given_weight = _split_math.gain_given_weight


@helper
def output_gain(g, h, reg_lambda, reg_alpha, max_delta_step, min_child_weight):
    """``node_gain`` of one output's sums; 0 when ``h`` is not positive or is below
    ``min_child_weight`` (XGBoost 3.2's zero weight for that output)."""
    if not (h > 0.0 and h >= min_child_weight):
        return 0.0
    return node_gain(g, h, reg_lambda, reg_alpha, max_delta_step)


@helper
def output_weight(g, h, reg_lambda, reg_alpha, max_delta_step, min_child_weight):
    """``leaf_weight`` of one output's sums; 0 as in ``output_gain``."""
    if not (h > 0.0 and h >= min_child_weight):
        return 0.0
    return leaf_weight(g, h, reg_lambda, reg_alpha, max_delta_step)


@helper
def bounded_output_weight(g, h, reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                          lower, upper):
    """``output_weight`` clamped into ``[lower, upper]``."""
    w = output_weight(g, h, reg_lambda, reg_alpha, max_delta_step, min_child_weight)
    if w < lower:
        return lower
    if w > upper:
        return upper
    return w


@helper
def bounded_output_gain(g, h, reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                        lower, upper):
    """``output_gain`` with the weight clamped into ``[lower, upper]``: the plain formula,
    bit for bit, when both bounds are infinite; else the loss at the clamped weight."""
    if lower == -np.inf and upper == np.inf:
        return output_gain(g, h, reg_lambda, reg_alpha, max_delta_step, min_child_weight)
    return gain_given_weight(g, h, reg_lambda, reg_alpha,
                             bounded_output_weight(g, h, reg_lambda, reg_alpha, max_delta_step,
                                                   min_child_weight, lower, upper))


@helper
def split_weights(gl, hl, gr, hr, g, h, sign, reg_lambda, reg_alpha, max_delta_step,
                  min_child_weight, lower, upper):
    """One output's child weights ``(wl, wr, pooled)`` under a split on a feature of
    monotone ``sign`` (``g, h``: the node's sums): the clamped weights, or (wrong order)
    both the pooled weight; the third value says whether they were pooled."""
    wl = bounded_output_weight(gl, hl, reg_lambda, reg_alpha, max_delta_step,
                               min_child_weight, lower, upper)
    wr = bounded_output_weight(gr, hr, reg_lambda, reg_alpha, max_delta_step,
                               min_child_weight, lower, upper)
    if (sign > 0 and wl > wr) or (sign < 0 and wl < wr):
        w = bounded_output_weight(g, h, 2.0 * reg_lambda, 2.0 * reg_alpha,
                                  max_delta_step, min_child_weight, lower, upper)
        return w, w, True
    return wl, wr, False


@helper
def parent_gain(sums, scales, reg_lambda, reg_alpha, max_delta_step, min_child_weight):
    """sum over outputs of ``output_gain`` of a node's sums (int64 (k, 2))."""
    gain = 0.0
    for j in range(sums.shape[0]):
        gain += output_gain(sums[j, 0] / scales[j, 0], sums[j, 1] / scales[j, 1], reg_lambda,
                            reg_alpha, max_delta_step, min_child_weight)
    return gain


@helper
def bounded_parent_gain(sums, bounds, scales, reg_lambda, reg_alpha, max_delta_step,
                        min_child_weight):
    """``parent_gain`` with each output's weight clamped into ``bounds`` (float64 (k, 2))."""
    gain = 0.0
    for j in range(sums.shape[0]):
        gain += bounded_output_gain(sums[j, 0] / scales[j, 0], sums[j, 1] / scales[j, 1],
                                    reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                                    bounds[j, 0], bounds[j, 1])
    return gain


@helper
def bounded_split_gain(left, total, bounds, sign, scales, reg_lambda, reg_alpha,
                       max_delta_step, min_child_weight, parent):
    """``_split_gain`` under monotone constraints: each output's children at their
    ``split_weights`` (the losses at the pooled weight when pooled)."""
    k = left.shape[0]
    gain = 0.0
    for j in range(k):
        inv_g, inv_h = 1.0 / scales[j, 0], 1.0 / scales[j, 1]
        gl, hl = left[j, 0] * inv_g, left[j, 1] * inv_h
        gr, hr = (total[j, 0] - left[j, 0]) * inv_g, (total[j, 1] - left[j, 1]) * inv_h
        lo, hi = bounds[j, 0], bounds[j, 1]
        wl, wr, pooled = split_weights(gl, hl, gr, hr, total[j, 0] * inv_g,
                                       total[j, 1] * inv_h, sign, reg_lambda, reg_alpha,
                                       max_delta_step, min_child_weight, lo, hi)
        if pooled:
            gain += gain_given_weight(gl, hl, reg_lambda, reg_alpha, wl)
            gain += gain_given_weight(gr, hr, reg_lambda, reg_alpha, wr)
        else:
            gain += bounded_output_gain(gl, hl, reg_lambda, reg_alpha, max_delta_step,
                                        min_child_weight, lo, hi)
            gain += bounded_output_gain(gr, hr, reg_lambda, reg_alpha, max_delta_step,
                                        min_child_weight, lo, hi)
    return gain - parent


@helper
def _split_gain(left, total, inv_scales, reg_lambda, reg_alpha, max_delta_step,
                min_child_weight, parent):
    """Gain of one candidate (left sums ``left``, node sums ``total``, int64 (k, 2)): the
    children's ``output_gain`` over the outputs less the parent's. ``inv_scales``: float64
    (k, 2), ``1.0 / scales`` (the same quotients as taken here, taken once a task)."""
    k = left.shape[0]
    gain = 0.0
    for j in range(k):
        inv_g, inv_h = inv_scales[j, 0], inv_scales[j, 1]
        gl, hl = left[j, 0] * inv_g, left[j, 1] * inv_h
        gr, hr = (total[j, 0] - left[j, 0]) * inv_g, (total[j, 1] - left[j, 1]) * inv_h
        gain += output_gain(gl, hl, reg_lambda, reg_alpha, max_delta_step, min_child_weight)
        gain += output_gain(gr, hr, reg_lambda, reg_alpha, max_delta_step, min_child_weight)
    return gain - parent


@helper
def feature_best(h, lo, hi, total, scales, reg_lambda, reg_alpha, max_delta_step,
                 min_child_weight, parent, left, best_sums, bounded, bounds, sign):
    """Best threshold of one dense feature (slots ``lo .. hi - 1``, the last its missing
    slot) of one node: ``(gain, split bin, default left)``, the left sums in
    ``best_sums``; gain -inf when none. Candidates in gbm's single-output order: missing
    right, then (when the node has missing values here) missing left; bins from the
    lowest; an empty bin above bin 0 skipped; a one-bin feature's candidate is its missing
    rows alone on the left (split bin -1). ``bounded``: gains by ``bounded_split_gain``
    with the node's ``bounds`` (float64 (k, 2)) and the feature's monotone ``sign``."""
    k = total.shape[0]
    n = hi - lo - 1  # value bins
    miss = hi - 1
    inv_scales = np.empty((k, 2))
    for j in range(k):
        inv_scales[j, 0], inv_scales[j, 1] = 1.0 / scales[j, 0], 1.0 / scales[j, 1]
    has_missing = False
    for j in range(k):
        if h[miss, j, 0] != 0 or h[miss, j, 1] != 0:
            has_missing = True
    best, best_bin, best_left = -np.inf, 0, 0
    n_steps = 1 if n == 1 else n - 1
    for direction in range(2 if has_missing else 1):
        for j in range(k):
            left[j, 0] = h[miss, j, 0] if direction == 1 else 0
            left[j, 1] = h[miss, j, 1] if direction == 1 else 0
        for i in range(n_steps):
            b = -1 if n == 1 else i
            if b > 0:
                empty = True
                for j in range(k):
                    if h[lo + b, j, 0] != 0 or h[lo + b, j, 1] != 0:
                        empty = False
                if empty:
                    continue
            if b >= 0:
                for j in range(k):
                    left[j, 0] += h[lo + b, j, 0]
                    left[j, 1] += h[lo + b, j, 1]
            if bounded:
                gain = bounded_split_gain(left, total, bounds, sign, scales, reg_lambda,
                                          reg_alpha, max_delta_step, min_child_weight, parent)
            else:
                gain = _split_gain(left, total, inv_scales, reg_lambda, reg_alpha,
                                   max_delta_step, min_child_weight, parent)
            if gain > best:
                best, best_bin, best_left = gain, b, direction
                best_sums[:, :] = left
    return best, best_bin, best_left


@helper
def reduce_tasks(task_gain, task_bin, task_left, task_sums, n_features, out_gain,
                 out_feature, out_bin, out_left, out_left_sums):
    """Each node's best task, in feature order (strict ``>``: the lowest feature wins
    ties)."""
    n_nodes = out_gain.shape[0]
    for node in range(n_nodes):
        best, at = -np.inf, -1
        for f in range(n_features):
            if task_gain[node * n_features + f] > best:
                best, at = task_gain[node * n_features + f], f
        out_gain[node] = best
        out_feature[node] = at
        if at >= 0:
            task = node * n_features + at
            out_bin[node], out_left[node] = task_bin[task], task_left[task]
            out_left_sums[node] = task_sums[task]
        else:
            out_bin[node], out_left[node] = 0, 0
            out_left_sums[node] = 0
