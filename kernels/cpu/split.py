"""Split finding: the best split of every node over its allowed features, numeric
(a threshold bin) or categorical (a set of codes), in one kernel; and node weights.

The formulas are ``split_math``'s; each task is a node and a run of ``_CHUNK`` features,
the features taken in order and the tasks' bests reduced per node in order, so the best
is the first of the highest gains in feature order whatever the thread count (and the
tasks' memory is a few per node, however many features there are).
"""
import numpy as np
from numba import prange

from ..jit import helper, kernel
from ..split_math import cpu as _split_math
from .sorting import merge_sort
from .split_scan import plain_best

# module-level names: Numba resolves globals, not attributes
bounded_gain = _split_math.bounded_gain
bounded_weight = _split_math.bounded_weight
gain_given_weight = _split_math.gain_given_weight
leaf_weight = _split_math.leaf_weight


_CHUNK = 256  # features per task


@helper
def _numeric_best(h, n, miss_g, miss_h, used, n_used, total_g, total_h, parent, direction_sign,
                  lower, upper, scales, reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                  out, task):
    """Best threshold of one numeric feature (value bins ``h[:n]``, missing sums
    ``miss_g, miss_h``); writes ``out`` row ``task`` when any.

    Thresholds are scanned from the lowest bin up, first with missing values right, then
    (only if the node has missing values here) with them left; a candidate replaces the
    best only if strictly better. On a monotone feature, a split whose (bounded) child
    weights go the wrong way is skipped, as in XGBoost. An empty bin above bin 0 is the
    split of the bin before it, not strictly better: skipped. ``used[:n_used]`` (when
    ``n_used >= 0``) lists the bins ``1 .. n - 2`` that are not empty, in order: only
    those are read (a sparse node's features have few); ``n_used < 0``: every bin is
    read and the empty ones skipped, the same candidates. A feature with one value bin
    has one candidate: its value rows right, its missing ones left (split bin -1: no bin
    goes left), when the node has both.
    """
    task_gain, task_bin, task_left, task_sum = out
    # the best so far stays in locals, written to the task's row of ``out`` once at the end
    best_bin, best_left, best_g, best_h = 0, 0, 0, 0
    # the scales are powers of two: multiplying by their inverses is exact, as dividing is
    inv_g, inv_h = 1.0 / scales[0], 1.0 / scales[1]
    # no L1 term, no cap, no bounds: each child's gain is G^2 / (H + lambda), the value
    # bounded_gain returns then, bit for bit, without its branches (the common case; every
    # bin of a dense feature is scanned in vectorised blocks, split_scan.py)
    plain = (direction_sign == 0 and reg_alpha == 0.0 and max_delta_step == 0.0
             and lower == -np.inf and upper == np.inf)
    single = n == 1
    if plain and n_used < 0 and not single:  # a dense feature's every bin: in blocks
        plain_best(h, n, miss_g, miss_h, total_g, total_h, parent, inv_g, inv_h, reg_lambda,
                   min_child_weight, out, task)
        return
    n_directions = 2 if (miss_g != 0 or miss_h != 0) else 1
    best = -np.inf
    n_steps = 1 if single else (n - 1 if n_used < 0 else min(n - 1, n_used + 1))
    for direction in range(n_directions):
        left_g = miss_g if direction == 1 else 0
        left_h = miss_h if direction == 1 else 0
        for i in range(n_steps):
            if single:
                b = -1  # no value bin left: with missing values left, the missing rows alone
            elif n_used < 0:
                b = i
                if b > 0 and h[b, 0] == 0 and h[b, 1] == 0:
                    continue  # an empty bin: the split before it, not strictly better
            else:
                b = 0 if i == 0 else used[i - 1]
            if b >= 0:
                left_g += h[b, 0]
                left_h += h[b, 1]
            right_g = total_g - left_g
            right_h = total_h - left_h
            if left_h <= 0 or right_h <= 0:
                continue
            hl = left_h * inv_h
            hr = right_h * inv_h
            if hl < min_child_weight or hr < min_child_weight:
                continue
            gl, gr = left_g * inv_g, right_g * inv_g
            if plain:  # a sparse feature's used bins, or a one-bin feature
                gain = gl * gl / (hl + reg_lambda) + gr * gr / (hr + reg_lambda) - parent
            elif direction_sign == 0:
                gain = (bounded_gain(gl, hl, reg_lambda, reg_alpha, max_delta_step, lower, upper)
                        + bounded_gain(gr, hr, reg_lambda, reg_alpha, max_delta_step, lower,
                                       upper) - parent)
            else:
                wl = bounded_weight(gl, hl, reg_lambda, reg_alpha, max_delta_step, lower, upper)
                wr = bounded_weight(gr, hr, reg_lambda, reg_alpha, max_delta_step, lower, upper)
                if (direction_sign > 0 and wl > wr) or (direction_sign < 0 and wl < wr):
                    continue
                gain = (gain_given_weight(gl, hl, reg_lambda, reg_alpha, wl)
                        + gain_given_weight(gr, hr, reg_lambda, reg_alpha, wr) - parent)
            if gain > best:
                best = gain
                best_bin, best_left, best_g, best_h = b, direction, left_g, left_h
    if best > -np.inf:
        task_gain[task] = best
        task_bin[task] = best_bin
        task_left[task] = best_left
        task_sum[task, 0] = best_g
        task_sum[task, 1] = best_h


@helper
def _set_gain(left_g, left_h, right_g, right_h, parent, scales, reg_lambda, reg_alpha,
              max_delta_step, min_child_weight, lower, upper):
    """Gain of one categorical candidate; -inf when a child is empty or too light."""
    if left_h <= 0 or right_h <= 0:
        return -np.inf
    hl, hr = left_h / scales[1], right_h / scales[1]
    if hl < min_child_weight or hr < min_child_weight:
        return -np.inf
    return (bounded_gain(left_g / scales[0], hl, reg_lambda, reg_alpha, max_delta_step, lower,
                         upper)
            + bounded_gain(right_g / scales[0], hr, reg_lambda, reg_alpha, max_delta_step,
                           lower, upper) - parent)


_INSERTION_SORT_CODES = 256  # up to here an insertion sort; above, a merge sort (O(n log n))


@helper
def _order_by_weight(h, n, scales, reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                     order):
    """Codes ``0 .. n-1`` into ``order`` by increasing leaf weight of their own (G, H),
    a stable sort (ties keep code order): insertion for a byte's codes, merge sort for
    more (thousands of categories); both give the same order. A category lighter than
    min_child_weight counts as weight 0, as in XGBoost's ``CalcWeight``."""
    weight = np.empty(n)
    for c in range(n):
        hess = h[c, 1] / scales[1]
        w = 0.0
        if hess > 0.0 and hess >= min_child_weight:
            w = leaf_weight(h[c, 0] / scales[0], hess, reg_lambda, reg_alpha, max_delta_step)
        weight[c] = w
    if n > _INSERTION_SORT_CODES:
        merge_sort(weight, n, order)
        return
    for c in range(n):
        w = weight[c]
        j = c
        while j > 0 and weight[j - 1] > w:
            weight[j] = weight[j - 1]
            order[j] = order[j - 1]
            j -= 1
        weight[j] = w
        order[j] = c


@helper
def _categorical_best(h, n, miss_g, miss_h, total_g, total_h, parent, lower, upper, scales,
                      reg_lambda, reg_alpha, max_delta_step, min_child_weight, max_cat_to_onehot,
                      max_cat_threshold, out, task_bits, task, bits_row):
    """Best set of one categorical feature (XGBoost's ``hist`` evaluator candidates):

    * fewer than ``max_cat_to_onehot`` categories: one-hot, each category alone on the
      right, missing values first with the other categories (left), then, when the node
      has any, with the category (right);
    * otherwise, partitions: categories sorted by the weight of their own (G, H); then
      for ``j = 1 .. min(max_cat_threshold, n) - 1`` the ``j`` lowest, and then the ``j``
      highest, form the set (right), missing values with the others (left). Sorted this
      way the best split of the categories into two groups is a prefix of the order
      (Fisher 1958).

    A candidate replaces the best only if strictly better: the first in this order wins ties.
    The set goes to row ``bits_row`` of ``task_bits`` (zeroed by the caller).
    """
    task_gain, task_bin, task_left, task_sum = out
    n_directions = 2 if (miss_g != 0 or miss_h != 0) else 1
    best = -np.inf
    if n < max_cat_to_onehot:
        best_code = -1
        for c in range(n):
            for direction in range(n_directions):  # 0: missing left, 1: missing right
                right_g = h[c, 0] + (miss_g if direction == 1 else 0)
                right_h = h[c, 1] + (miss_h if direction == 1 else 0)
                gain = _set_gain(total_g - right_g, total_h - right_h, right_g, right_h,
                                 parent, scales, reg_lambda, reg_alpha, max_delta_step,
                                 min_child_weight, lower, upper)
                if gain > best:
                    best = gain
                    best_code = c
                    task_left[task] = 1 - direction
                    task_sum[task, 0] = total_g - right_g
                    task_sum[task, 1] = total_h - right_h
        if best_code >= 0:
            task_bits[bits_row, best_code >> 5] = np.uint32(1 << (best_code & 31))
    else:
        order = np.empty(n, dtype=np.int64)
        _order_by_weight(h, n, scales, reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                         order)
        limit = min(max_cat_threshold, n)
        best_end, best_size = -1, 0
        for end in range(2):  # 0: the lowest weights go right, 1: the highest
            right_g = 0
            right_h = 0
            for j in range(limit - 1):
                c = order[j] if end == 0 else order[n - 1 - j]
                right_g += h[c, 0]
                right_h += h[c, 1]
                gain = _set_gain(total_g - right_g, total_h - right_h, right_g, right_h,
                                 parent, scales, reg_lambda, reg_alpha, max_delta_step,
                                 min_child_weight, lower, upper)
                if gain > best:
                    best = gain
                    best_end, best_size = end, j + 1
                    task_sum[task, 0] = total_g - right_g
                    task_sum[task, 1] = total_h - right_h
        if best_end >= 0:
            task_left[task] = 1  # missing values stay with the categories outside the set
            for j in range(best_size):
                c = order[j] if best_end == 0 else order[n - 1 - j]
                task_bits[bits_row, c >> 5] |= np.uint32(1 << (c & 31))
    task_gain[task] = best


@kernel
def evaluate_splits(hist, feature_offsets, missing_slots, is_categorical, node_sums,
                    feature_mask, monotone, node_bounds, scales, split_params,
                    max_cat_to_onehot, max_cat_threshold, out_gain, out_feature, out_bin,
                    out_default_left, out_left_sum, out_cat_bits):
    """Best split of each node over its allowed features, missing values tried both ways.

    Parameters
    ----------
    hist : int64 (n_nodes, n_slots, 2)                  # IN  ragged layout (layout.py)
    feature_offsets : int32 (n_features + 1,)           # IN  feature f's slots: its value
                                                        #     bins from offsets[f] on, then
                                                        #     (missing_slots) its missing slot
    missing_slots : int                                 # IN  1: each feature's last slot
                                                        #     holds its missing rows' sums (a
                                                        #     dense bin matrix); 0: value bins
                                                        #     only, the missing sums are the
                                                        #     node's less the value bins' (a
                                                        #     sparse one stores no missing entry)
    is_categorical : uint8 (n_features,) or None        # IN  1: bins are category codes;
                                                        #     None: no categorical feature
                                                        #     (the categorical code is then
                                                        #     not compiled: a first fit's
                                                        #     cold compile, 1 s CPU less)
    node_sums : int64 (n_nodes, 2)                      # IN  (G, H) of each node
    feature_mask : uint8 (n_nodes, n_features)          # IN  1 = may split on it
    monotone : int8 (n_features,)                       # IN  +1 increasing, -1 decreasing
    node_bounds : float64 (n_nodes, 2)                  # IN  [lower, upper] on each node's
                                                        #     weight (monotone constraints)
    scales : float64 (n_nodes, 2)                       # IN  each node's fixed-point scales
                                                        #     of g and h, powers of two
                                                        #     (gbm.tree.quantize; the nodes of
                                                        #     one call may come from trees
                                                        #     of different output groups)
    split_params : float64 (4,)                         # IN  layout.SPLIT_PARAMS
    max_cat_to_onehot, max_cat_threshold : int          # IN  categorical candidates
    out_gain : float64 (n_nodes,)                       # OUT loss reduction; -inf = none
    out_feature : int32 (n_nodes,)                      # OUT -1 = no split
    out_bin : int32 (n_nodes,)                          # OUT numeric: bins <= it go left
    out_default_left : uint8 (n_nodes,)                 # OUT where missing values go
    out_left_sum : int64 (n_nodes, 2)                   # OUT (G, H) of the left child
    out_cat_bits : uint32 (n_nodes, n_words)            # OUT categorical: the set (goes
                                                        #     right); zeros for numeric;
                                                        #     n_words >= layout.cat_words
                                                        #     of the widest categorical
                                                        #     feature's bins

    Among equal gains the lowest feature wins. A numeric feature with one value bin
    splits its value rows (right) from its missing rows (left) with ``out_bin`` -1.
    A feature whose value bins are all empty in a node (a sparse feature without rows
    there) has no candidate: every split leaves one child with its value rows only.
    """
    n_nodes = hist.shape[0]
    n_features = feature_offsets.shape[0] - 1
    n_chunks = max(1, (n_features + _CHUNK - 1) // _CHUNK)
    n_tasks = n_nodes * n_chunks
    # two rows per task: 2t its best so far, 2t + 1 the feature being evaluated
    task_gain = np.full(2 * n_tasks, -np.inf)
    task_feature = np.full(2 * n_tasks, -1, dtype=np.int32)
    task_bin = np.zeros(2 * n_tasks, dtype=np.int32)
    task_left = np.zeros(2 * n_tasks, dtype=np.uint8)
    task_sum = np.zeros((2 * n_tasks, 2), dtype=np.int64)
    task_bits = np.zeros((2 * n_tasks, out_cat_bits.shape[1]), dtype=np.uint32)
    out = (task_gain, task_bin, task_left, task_sum)
    # value bins of the widest feature: the room of a task's list of used bins; an int64
    # value, not the literal 1, which would type (and compile) the callees twice
    widest = np.int64(1)
    for f in range(n_features):
        widest = max(widest, feature_offsets[f + 1] - feature_offsets[f])
    _evaluate_tasks(n_tasks, n_chunks, widest, hist, feature_offsets, missing_slots,
                    is_categorical, node_sums, feature_mask, monotone, node_bounds, scales,
                    split_params, max_cat_to_onehot, max_cat_threshold, out, task_feature,
                    task_bits)
    for k in range(n_nodes):  # a few tasks a node: not worth a parallel loop to compile
        _best_of_node(k, n_chunks, out, task_feature, task_bits, is_categorical, out_gain,
                      out_feature, out_bin, out_default_left, out_left_sum, out_cat_bits)


@helper(parallel=True)
def _evaluate_tasks(n_tasks, n_chunks, widest, hist, feature_offsets, missing_slots,
                    is_categorical, node_sums, feature_mask, monotone, node_bounds, scales,
                    split_params, max_cat_to_onehot, max_cat_threshold, out, task_feature,
                    task_bits):
    """Every task, in parallel. Numba's parallel passes analyse the whole function they
    compile, so the loop has a function of its own; its body is one call, the index cast
    to uint64 (its type in the parallel code), so that the callee compiles once, not for
    the typing pass's int64 as well."""
    for task in prange(n_tasks):
        _evaluate_task(np.uint64(task), n_chunks, widest, hist, feature_offsets,
                       missing_slots, is_categorical, node_sums, feature_mask, monotone,
                       node_bounds, scales, split_params, max_cat_to_onehot,
                       max_cat_threshold, out, task_feature, task_bits)


@helper
def _evaluate_task(task, n_chunks, widest, hist, feature_offsets, missing_slots, is_categorical,
                   node_sums, feature_mask, monotone, node_bounds, scales, split_params,
                   max_cat_to_onehot, max_cat_threshold, out, task_feature, task_bits):
    """The best split of node ``task // n_chunks`` over its run of features ``task %
    n_chunks``, in feature order, into row ``2 * task`` of ``out``."""
    task_gain, task_bin, task_left, task_sum = out
    n_features = feature_offsets.shape[0] - 1
    k = task // n_chunks
    f0 = (task % n_chunks) * _CHUNK
    f1 = min(f0 + _CHUNK, n_features)
    best, now = 2 * task, 2 * task + 1
    reg_lambda, reg_alpha = split_params[0], split_params[1]
    max_delta_step, min_child_weight = split_params[2], split_params[3]
    total_g, total_h = node_sums[k, 0], node_sums[k, 1]
    lower, upper = node_bounds[k, 0], node_bounds[k, 1]
    node_scales = scales[k]
    parent = bounded_gain(total_g / node_scales[0], total_h / node_scales[1], reg_lambda,
                          reg_alpha, max_delta_step, lower, upper)
    used = np.empty(widest, dtype=np.int32)  # a sparse feature's non-empty bins
    n_words = task_bits.shape[1]
    for f in range(f0, f1):
        n = feature_offsets[f + 1] - feature_offsets[f] - missing_slots  # value bins
        if feature_mask[k, f] == 0 or n < 1:
            continue
        h = hist[k, feature_offsets[f]:feature_offsets[f + 1]]
        n_used = -1
        if missing_slots:
            miss_g, miss_h = h[n, 0], h[n, 1]
        else:  # no slot: the node's sums less the value bins' (integers: exact)
            miss_g, miss_h, n_used, any_value = _missing_sums(h, n, total_g, total_h, used)
            if not any_value:
                continue  # no value row here: every candidate leaves a child empty
        task_gain[now] = -np.inf
        task_bin[now] = 0
        task_left[now] = 0
        task_sum[now, 0] = 0
        task_sum[now, 1] = 0
        if is_categorical is not None and is_categorical[f]:
            for i in range(n_words):
                task_bits[now, i] = 0
            _categorical_best(h, n, miss_g, miss_h, total_g, total_h, parent, lower, upper,
                              node_scales, reg_lambda, reg_alpha, max_delta_step,
                              min_child_weight, max_cat_to_onehot, max_cat_threshold, out,
                              task_bits, now, now)
        else:
            _numeric_best(h, n, miss_g, miss_h, used, n_used, total_g, total_h, parent,
                          monotone[f], lower, upper, node_scales, reg_lambda, reg_alpha,
                          max_delta_step, min_child_weight, out, now)
        if task_gain[now] > task_gain[best]:
            task_gain[best] = task_gain[now]
            task_feature[best] = f
            task_bin[best] = task_bin[now]
            task_left[best] = task_left[now]
            task_sum[best, 0] = task_sum[now, 0]
            task_sum[best, 1] = task_sum[now, 1]
            for i in range(n_words):
                task_bits[best, i] = 0
            if is_categorical is not None and is_categorical[f]:
                for i in range(n_words):
                    task_bits[best, i] = task_bits[now, i]


@helper
def _missing_sums(h, n, total_g, total_h, used):
    """A feature's missing rows' (G, H) in a node without a missing slot, the node's sums
    less its value bins' (integers: exact); how many of its bins ``1 .. n - 2`` are not
    empty, listed in order in ``used``; and whether any of its bins is not empty."""
    value_g, value_h = 0, 0
    n_used = 0
    any_value = False
    for b in range(n):
        g, hess = h[b, 0], h[b, 1]
        if g != 0 or hess != 0:
            value_g += g
            value_h += hess
            any_value = True
            if b > 0 and b < n - 1:
                used[n_used] = b
                n_used += 1
    return total_g - value_g, total_h - value_h, n_used, any_value


@helper
def _best_of_node(k, n_chunks, out, task_feature, task_bits, is_categorical, out_gain,
                  out_feature, out_bin, out_default_left, out_left_sum, out_cat_bits):
    """Node ``k``'s best over its tasks' bests, in feature order: the highest gain, the
    lowest feature among equal gains."""
    task_gain, task_bin, task_left, task_sum = out
    out_gain[k] = -np.inf
    out_feature[k] = -1
    out_bin[k] = 0
    out_default_left[k] = 0
    out_left_sum[k, 0] = 0
    out_left_sum[k, 1] = 0
    n_words = out_cat_bits.shape[1]
    for i in range(n_words):  # loops, not slice assignments: no broadcast error path to compile
        out_cat_bits[k, i] = 0
    chosen = -1
    for c in range(n_chunks):
        row = 2 * (k * n_chunks + c)
        if task_gain[row] > out_gain[k]:
            out_gain[k] = task_gain[row]
            chosen = row
    if chosen < 0:
        return
    f = task_feature[chosen]
    out_feature[k] = f
    out_bin[k] = task_bin[chosen]
    out_default_left[k] = task_left[chosen]
    out_left_sum[k, 0] = task_sum[chosen, 0]
    out_left_sum[k, 1] = task_sum[chosen, 1]
    if is_categorical is not None and is_categorical[f]:
        for i in range(n_words):
            out_cat_bits[k, i] = task_bits[chosen, i]


@kernel
def node_weights(node_sums, node_bounds, scales, split_params, out):
    """Each node's weight (before the learning rate), kept within its bounds.

    node_sums : int64 (n_nodes, 2); node_bounds : float64 (n_nodes, 2)   # IN
    scales : float64 (n_nodes, 2); split_params : float64 (4,)           # IN
    out : float64 (n_nodes,)                                             # OUT
    """
    for k in range(node_sums.shape[0]):
        out[k] = bounded_weight(node_sums[k, 0] / scales[k, 0], node_sums[k, 1] / scales[k, 1],
                                split_params[0], split_params[1], split_params[2],
                                node_bounds[k, 0], node_bounds[k, 1])
