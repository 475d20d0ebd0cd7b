"""Categorical splits of vector-leaf trees (``multi_strategy="multi_output_tree"``): the
best split of every node over numeric and categorical features of a dense layout's
vector histograms.

Twin of ``kernels/reference/vector_categorical.py``. The rule is XGBoost's multi-target
one (``HistMultiEvaluator`` in ``src/tree/hist/evaluate_splits.h``, XGBoost 3.4; 3.2
refuses categorical features with ``multi_output_tree``); a candidate's gain is the
vector-leaf gain of ``kernels/cpu/vector_leaf.py`` (sum over outputs, each output's
weight kept within the node's bounds; the set's split is never monotone). For a
categorical feature of ``n`` categories (code ``c`` in bin ``c``, then the missing slot):

* ``n < max_cat_to_onehot``: one-hot. Each category in code order alone on the right,
  first with the missing rows on the left, then with them on the right.
* otherwise, partitions. The categories are ordered (stably, ties in code order) by the
  score ``s_c = sum_t w_p[t] * w_c[t]``: the node's weight vector ``w_p`` projected on the
  category's own weight vector ``w_c`` (each weight as XGBoost's ``CalcWeightCat``, a
  float32; each product a float32 product, summed in float64 as XGBoost does). With
  ``m = min(max_cat_threshold, n)``: first, for ``j = 1 .. m - 1`` the ``j`` lowest
  categories go right, the missing rows left; then the ``j`` highest go left and the
  others right with the missing rows.

A candidate replaces the best only if strictly better (the first in this order wins
ties); per node the lowest feature wins ties. Each task is one (node, feature) pair
writing only its own row of the task outputs, reduced per node in feature order: the
result is the same on any thread count. The set (categories that go right) is a bitset:
code ``c`` is bit ``c & 31`` of word ``c >> 5`` (``gbm.tree.structure.Tree``).
"""
import numpy as np
from numba import prange

from ..jit import helper, kernel
from .sorting import merge_sort
from .vector_split import (bounded_parent_gain, bounded_split_gain, feature_best,
                           output_weight, reduce_tasks)


@helper
def _set_bits(bits, order, lo, hi):
    """Set the bits of codes ``order[lo:hi]`` in ``bits`` (uint32 words, zeroed)."""
    for i in range(lo, hi):
        c = order[i]
        bits[c >> 5] |= np.uint32(1) << np.uint32(c & 31)


@helper
def _scores(h, n, total, scales, lam, alpha, mds, mcw, out):
    """``out[c]`` = category ``c``'s score (module docstring), ``c < n``."""
    k = total.shape[0]
    parent_w = np.empty(k, np.float32)
    for j in range(k):
        parent_w[j] = np.float32(output_weight(total[j, 0] / scales[j, 0],
                                               total[j, 1] / scales[j, 1], lam, alpha, mds, mcw))
    for c in range(n):
        score = 0.0
        for j in range(k):
            w = np.float32(output_weight(h[c, j, 0] / scales[j, 0], h[c, j, 1] / scales[j, 1],
                                         lam, alpha, mds, mcw))
            score += np.float64(parent_w[j] * w)
        out[c] = score


@helper
def _categorical_best(h, n, total, bounds, scales, lam, alpha, mds, mcw, parent,
                      max_cat_to_onehot, max_cat_threshold, best_sums, bits):
    """Best set of one categorical feature (``h``: its ``n`` category bins then the
    missing slot) of one node: ``(gain, default left)``, the left sums in ``best_sums``
    and the set in ``bits`` (zeroed by the caller); gain -inf when none."""
    k = total.shape[0]
    miss = n
    left = np.empty((k, 2), np.int64)
    best, best_left = -np.inf, 0
    if n < max_cat_to_onehot:
        best_code = -1
        for c in range(n):
            for direction in range(2):  # 0: missing rows left, 1: right (with the category)
                for j in range(k):
                    right_g = h[c, j, 0] + (h[miss, j, 0] if direction == 1 else 0)
                    right_h = h[c, j, 1] + (h[miss, j, 1] if direction == 1 else 0)
                    left[j, 0] = total[j, 0] - right_g
                    left[j, 1] = total[j, 1] - right_h
                gain = bounded_split_gain(left, total, bounds, 0, scales, lam, alpha, mds,
                                          mcw, parent)
                if gain > best:
                    best, best_left, best_code = gain, 1 - direction, c
                    best_sums[:, :] = left
        if best_code >= 0:
            bits[best_code >> 5] = np.uint32(1) << np.uint32(best_code & 31)
        return best, best_left
    scores = np.empty(n)
    _scores(h, n, total, scales, lam, alpha, mds, mcw, scores)
    order = np.empty(n, np.int64)
    merge_sort(scores, n, order)  # stable: ties in code order
    limit = min(max_cat_threshold, n)
    best_end, best_size = -1, 0
    for end in range(2):  # 0: the lowest scores go right, 1: the highest go left
        acc = np.zeros((k, 2), np.int64)
        for i in range(limit - 1):
            c = order[i] if end == 0 else order[n - 1 - i]
            for j in range(k):
                acc[j, 0] += h[c, j, 0]
                acc[j, 1] += h[c, j, 1]
                if end == 0:  # acc is the right child's (missing rows left)
                    left[j, 0] = total[j, 0] - acc[j, 0]
                    left[j, 1] = total[j, 1] - acc[j, 1]
                else:
                    left[j, 0] = acc[j, 0]
                    left[j, 1] = acc[j, 1]
            gain = bounded_split_gain(left, total, bounds, 0, scales, lam, alpha, mds, mcw,
                                      parent)
            if gain > best:
                best, best_end, best_size = gain, end, i + 1
                best_sums[:, :] = left
    if best_end == 0:
        best_left = 1
        _set_bits(bits, order, 0, best_size)
    elif best_end == 1:
        best_left = 0
        _set_bits(bits, order, 0, n - best_size)  # all but the highest best_size
    return best, best_left


@kernel(parallel=True)
def evaluate_vector_splits_categorical(hist, feature_offsets, node_sums, mask, node_bounds,
                                       monotone, is_categorical, scales, split_params,
                                       max_cat_to_onehot, max_cat_threshold, out_gain,
                                       out_feature, out_bin, out_left, out_left_sums,
                                       out_cat_bits):
    """Best split of every node, numeric features as ``evaluate_vector_splits_monotone``
    (infinite bounds and no constraint: ``evaluate_vector_splits``, bit for bit) and
    categorical ones by the rule in the module docstring.

    Parameters
    ----------
    hist : int64 (n_nodes, n_slots, k, 2)          # IN  value bins then missing, per feature
    feature_offsets : int32 (n_features + 1,)      # IN
    node_sums : int64 (n_nodes, k, 2)              # IN
    mask : uint8 (n_nodes, n_features)             # IN  features each node may split on
    node_bounds : float64 (n_nodes, k, 2)          # IN  each output's weight bounds
    monotone : int8 (n_features,)                  # IN  +1 / -1 / 0 (0 on categorical ones)
    is_categorical : uint8 (n_features,)           # IN  1: bins are category codes
    scales : float64 (k, 2)                        # IN  each output's fixed-point scales
    split_params : float64 (4,)                    # IN  lambda, alpha, max_delta_step, min_child_weight
    max_cat_to_onehot, max_cat_threshold : int     # IN
    out_gain : float64 (n_nodes,)                  # OUT -inf: no valid split
    out_feature, out_bin : int32 (n_nodes,)        # OUT feature -1: none; bin 0 at a set
    out_left : uint8 (n_nodes,)                    # OUT missing values go left
    out_left_sums : int64 (n_nodes, k, 2)          # OUT the left child's sums
    out_cat_bits : uint32 (n_nodes, n_words)       # OUT the set going right (0: numeric)
    """
    n_nodes, _, k, _ = hist.shape
    n_features = feature_offsets.shape[0] - 1
    n_words = out_cat_bits.shape[1]
    lam, alpha, mds, mcw = split_params[0], split_params[1], split_params[2], split_params[3]
    n_tasks = n_nodes * n_features
    task_gain = np.full(n_tasks, -np.inf)
    task_bin = np.zeros(n_tasks, np.int32)
    task_left = np.zeros(n_tasks, np.uint8)
    task_sums = np.zeros((n_tasks, k, 2), np.int64)
    task_bits = np.zeros((n_tasks, n_words), np.uint32)
    parents = np.empty(n_nodes)
    for node in range(n_nodes):
        parents[node] = bounded_parent_gain(node_sums[node], node_bounds[node], scales, lam,
                                            alpha, mds, mcw)
    for task in prange(n_tasks):
        node = task // n_features
        f = task - node * n_features
        if mask[node, f] == 0:
            continue
        lo, hi = feature_offsets[f], feature_offsets[f + 1]
        if is_categorical[f]:
            gain, d = _categorical_best(hist[node, lo:hi], hi - lo - 1, node_sums[node],
                                        node_bounds[node], scales, lam, alpha, mds, mcw,
                                        parents[node], max_cat_to_onehot, max_cat_threshold,
                                        task_sums[task], task_bits[task])
            b = 0
        else:
            left = np.empty((k, 2), np.int64)
            gain, b, d = feature_best(hist[node], lo, hi, node_sums[node], scales, lam, alpha,
                                      mds, mcw, parents[node], left, task_sums[task], True,
                                      node_bounds[node], np.int64(monotone[f]))
        task_gain[task], task_bin[task], task_left[task] = gain, b, d
    reduce_tasks(task_gain, task_bin, task_left, task_sums, n_features, out_gain,
                 out_feature, out_bin, out_left, out_left_sums)
    for node in range(n_nodes):  # the winning task's set (none: 0)
        at = out_feature[node]
        for i in range(n_words):
            out_cat_bits[node, i] = task_bits[node * n_features + at, i] if at >= 0 else 0
