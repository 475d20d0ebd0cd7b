"""The vector-leaf split rule on CUDA (twin of ``cpu/vector_split.py``), shared by
``vector_leaf.py``, ``vector_monotone.py`` and ``vector_categorical.py``: each output's
gain and weight and their monotone forms as device functions (every product through
``mul``: never fused into an FMA), a candidate's gain, and the kernels of a node's gain
(``parent_kernel``) and of every (node, feature)'s best threshold (``feature_kernel``)."""
import math

from numba import cuda, float64, int64

from ._device import mul, split_math

node_gain = split_math.node_gain
leaf_weight = split_math.leaf_weight
gain_given_weight = split_math.gain_given_weight


@cuda.jit(device=True)
def output_gain(g, h, reg_lambda, reg_alpha, max_delta_step, min_child_weight):
    """``cpu.output_gain``: 0 for an output whose hessian is not positive or below
    ``min_child_weight``."""
    if not (h > 0.0 and h >= min_child_weight):
        return 0.0
    return node_gain(g, h, reg_lambda, reg_alpha, max_delta_step)


@cuda.jit(device=True)
def output_weight(g, h, reg_lambda, reg_alpha, max_delta_step, min_child_weight):
    """``cpu.output_weight``."""
    if not (h > 0.0 and h >= min_child_weight):
        return 0.0
    return leaf_weight(g, h, reg_lambda, reg_alpha, max_delta_step)


@cuda.jit(device=True)
def bounded_output_weight(g, h, reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                          lower, upper):
    """``cpu.bounded_output_weight``: ``output_weight`` clamped into ``[lower, upper]``."""
    w = output_weight(g, h, reg_lambda, reg_alpha, max_delta_step, min_child_weight)
    if w < lower:
        return lower
    if w > upper:
        return upper
    return w


@cuda.jit(device=True)
def bounded_output_gain(g, h, reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                        lower, upper):
    """``cpu.bounded_output_gain``: the plain gain when both bounds are infinite."""
    if lower == -math.inf and upper == math.inf:
        return output_gain(g, h, reg_lambda, reg_alpha, max_delta_step, min_child_weight)
    return gain_given_weight(g, h, reg_lambda, reg_alpha,
                             bounded_output_weight(g, h, reg_lambda, reg_alpha, max_delta_step,
                                                   min_child_weight, lower, upper))


@cuda.jit(device=True)
def split_weights(gl, hl, gr, hr, g, h, sign, reg_lambda, reg_alpha, max_delta_step,
                  min_child_weight, lower, upper):
    """``cpu.split_weights``: ``(wl, wr, pooled)``."""
    wl = bounded_output_weight(gl, hl, reg_lambda, reg_alpha, max_delta_step,
                               min_child_weight, lower, upper)
    wr = bounded_output_weight(gr, hr, reg_lambda, reg_alpha, max_delta_step,
                               min_child_weight, lower, upper)
    if (sign > 0 and wl > wr) or (sign < 0 and wl < wr):
        w = bounded_output_weight(g, h, 2.0 * reg_lambda, 2.0 * reg_alpha, max_delta_step,
                                  min_child_weight, lower, upper)
        return w, w, True
    return wl, wr, False


@cuda.jit(device=True)
def _split_gain(left, task, sums, node, scales, reg_lambda, reg_alpha, max_delta_step,
                min_child_weight, parent):
    """``cpu._split_gain`` of task ``task``'s running left sums ``left[task]`` in node
    ``node`` (sums ``sums[node]``)."""
    k = scales.shape[0]
    gain = 0.0
    for j in range(k):
        inv_g, inv_h = 1.0 / scales[j, 0], 1.0 / scales[j, 1]
        gl = mul(float64(left[task, j, 0]), inv_g)
        hl = mul(float64(left[task, j, 1]), inv_h)
        gr = mul(float64(sums[node, j, 0] - left[task, j, 0]), inv_g)
        hr = mul(float64(sums[node, j, 1] - left[task, j, 1]), inv_h)
        gain += output_gain(gl, hl, reg_lambda, reg_alpha, max_delta_step, min_child_weight)
        gain += output_gain(gr, hr, reg_lambda, reg_alpha, max_delta_step, min_child_weight)
    return gain - parent


@cuda.jit(device=True)
def _bounded_split_gain(left, task, sums, node, bounds, sign, scales, reg_lambda, reg_alpha,
                        max_delta_step, min_child_weight, parent):
    """``cpu.bounded_split_gain`` of ``left[task]`` in node ``node`` (bounds
    ``bounds[node]``, the split feature's constraint ``sign``)."""
    k = scales.shape[0]
    gain = 0.0
    for j in range(k):
        inv_g, inv_h = 1.0 / scales[j, 0], 1.0 / scales[j, 1]
        gl = mul(float64(left[task, j, 0]), inv_g)
        hl = mul(float64(left[task, j, 1]), inv_h)
        gr = mul(float64(sums[node, j, 0] - left[task, j, 0]), inv_g)
        hr = mul(float64(sums[node, j, 1] - left[task, j, 1]), inv_h)
        lo, hi = bounds[node, j, 0], bounds[node, j, 1]
        wl, wr, pooled = split_weights(gl, hl, gr, hr, mul(float64(sums[node, j, 0]), inv_g),
                                       mul(float64(sums[node, j, 1]), inv_h), sign,
                                       reg_lambda, reg_alpha, max_delta_step,
                                       min_child_weight, lo, hi)
        if pooled:
            gain += gain_given_weight(gl, hl, reg_lambda, reg_alpha, wl)
            gain += gain_given_weight(gr, hr, reg_lambda, reg_alpha, wr)
        else:
            gain += bounded_output_gain(gl, hl, reg_lambda, reg_alpha, max_delta_step,
                                        min_child_weight, lo, hi)
            gain += bounded_output_gain(gr, hr, reg_lambda, reg_alpha, max_delta_step,
                                        min_child_weight, lo, hi)
    return gain - parent


@cuda.jit(device=True)
def candidate_gain(left, task, sums, node, bounds, bounded, sign, scales, reg_lambda,
                   reg_alpha, max_delta_step, min_child_weight, parent):
    """A candidate's gain: ``_bounded_split_gain`` (``bounded``) or ``_split_gain``."""
    if bounded:
        return _bounded_split_gain(left, task, sums, node, bounds, sign, scales, reg_lambda,
                                   reg_alpha, max_delta_step, min_child_weight, parent)
    return _split_gain(left, task, sums, node, scales, reg_lambda, reg_alpha, max_delta_step,
                       min_child_weight, parent)


@cuda.jit(device=True)
def _parent(node_sums, node, bounds, bounded, scales, split_params):
    """``cpu.parent_gain`` of node ``node``, or (``bounded``) ``cpu.bounded_parent_gain``."""
    gain = 0.0
    for j in range(node_sums.shape[1]):
        g = node_sums[node, j, 0] / scales[j, 0]
        h = node_sums[node, j, 1] / scales[j, 1]
        if bounded:
            gain += bounded_output_gain(g, h, split_params[0], split_params[1],
                                        split_params[2], split_params[3], bounds[node, j, 0],
                                        bounds[node, j, 1])
        else:
            gain += output_gain(g, h, split_params[0], split_params[1], split_params[2],
                                split_params[3])
    return gain


@cuda.jit
def parent_kernel(node_sums, node_bounds, bounded, scales, split_params, parents):
    for node in range(cuda.grid(1), node_sums.shape[0], cuda.gridsize(1)):
        parents[node] = _parent(node_sums, node, node_bounds, bounded, scales, split_params)


@cuda.jit
def feature_kernel(hist, feature_offsets, node_sums, mask, node_bounds, monotone, bounded,
                   scales, split_params, parents, left, task_gain, task_bin, task_left,
                   task_sums):
    n_nodes, _, k, _ = hist.shape
    n_features = feature_offsets.shape[0] - 1
    lam, alpha, mds, mcw = split_params[0], split_params[1], split_params[2], split_params[3]
    for task in range(cuda.grid(1), n_nodes * n_features, cuda.gridsize(1)):
        node = task // n_features
        f = task - node * n_features
        task_gain[task] = -math.inf
        task_bin[task] = 0
        task_left[task] = 0
        for j in range(k):
            task_sums[task, j, 0] = 0
            task_sums[task, j, 1] = 0
        if mask[node, f] == 0:
            continue
        lo, hi = feature_offsets[f], feature_offsets[f + 1]
        n = hi - lo - 1  # value bins; slot hi - 1 holds the missing rows
        miss = hi - 1
        has_missing = False
        for j in range(k):
            if hist[node, miss, j, 0] != 0 or hist[node, miss, j, 1] != 0:
                has_missing = True
        best = -math.inf
        n_steps = 1 if n == 1 else n - 1
        for direction in range(2 if has_missing else 1):
            for j in range(k):
                left[task, j, 0] = hist[node, miss, j, 0] if direction == 1 else 0
                left[task, j, 1] = hist[node, miss, j, 1] if direction == 1 else 0
            for i in range(n_steps):
                b = -1 if n == 1 else i
                if b > 0:
                    empty = True
                    for j in range(k):
                        if hist[node, lo + b, j, 0] != 0 or hist[node, lo + b, j, 1] != 0:
                            empty = False
                    if empty:
                        continue
                if b >= 0:
                    for j in range(k):
                        left[task, j, 0] += hist[node, lo + b, j, 0]
                        left[task, j, 1] += hist[node, lo + b, j, 1]
                gain = candidate_gain(left, task, node_sums, node, node_bounds, bounded,
                                      int64(monotone[f]), scales, lam, alpha, mds, mcw,
                                      parents[node])
                if gain > best:
                    best = gain
                    task_gain[task] = gain
                    task_bin[task] = b
                    task_left[task] = direction
                    for j in range(k):
                        task_sums[task, j, 0] = left[task, j, 0]
                        task_sums[task, j, 1] = left[task, j, 1]
