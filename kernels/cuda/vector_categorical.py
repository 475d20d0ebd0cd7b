"""Categorical splits of vector-leaf trees on CUDA: twin of ``cpu/vector_categorical.py``
(its name, arguments and results, bit for bit).

Numeric features go through ``vector_split``'s split kernel (their tasks' scans); then one
thread per (node, categorical feature) task scans the feature's candidates in the CPU's
order with the same formulas: one-hot, or the partitions of the categories ordered by
their score (a per-thread stable insertion sort of at most 256 codes, as the
single-output CUDA kernel's; the CPU's merge sort gives the same order, both stable);
a last kernel, one thread per node, takes the best task in feature order with a strict
``>``. Each task's running sums live in its own rows of global scratch arrays (``k`` is
known only at run time).

Monotone constraints: with finite bounds or a constrained feature every candidate's gain
is the bounded one (``vector_split.candidate_gain``; a set's split has no constraint of its
own), as on the CPU; without, the plain gains, which are the same bits.
"""
import math

import numpy as np
from numba import cuda, float32, float64, int64, uint32

from ..layout import CAT_WORDS
from ._device import THREADS, array_module, blocks_for, device_output, to_device, to_host
from .vector_split import candidate_gain, feature_kernel, output_weight, parent_kernel

_MAX_CODES = 32 * CAT_WORDS


@cuda.jit(device=True)
def _score(hist, node, lo, c, node_sums, scales, lam, alpha, mds, mcw):
    """Category ``c``'s score: sum over outputs of float32(w_node) * float32(w_c)."""
    score = 0.0
    for j in range(scales.shape[0]):
        wp = float32(output_weight(node_sums[node, j, 0] / scales[j, 0],
                                   node_sums[node, j, 1] / scales[j, 1], lam, alpha, mds, mcw))
        wc = float32(output_weight(hist[node, lo + c, j, 0] / scales[j, 0],
                                   hist[node, lo + c, j, 1] / scales[j, 1], lam, alpha, mds,
                                   mcw))
        score += float64(wp * wc)
    return score


@cuda.jit(device=True)
def _set_left(left, acc, task, node, node_sums, k, acc_is_right):
    """``left[task]`` = the node's sums less ``acc[task]`` (``acc_is_right``), else
    ``acc[task]``."""
    for j in range(k):
        for s in range(2):
            left[task, j, s] = node_sums[node, j, s] - acc[task, j, s] if acc_is_right \
                else acc[task, j, s]


@cuda.jit(device=True)
def _keep(left, task, task_sums, k):
    for j in range(k):
        task_sums[task, j, 0] = left[task, j, 0]
        task_sums[task, j, 1] = left[task, j, 1]


@cuda.jit
def _categorical_kernel(hist, feature_offsets, node_sums, mask, node_bounds, bounded,
                        is_categorical, scales, split_params, parents, max_cat_to_onehot,
                        max_cat_threshold, left, acc, task_gain, task_bin, task_left, task_sums,
                        task_bits):
    n_nodes, _, k, _ = hist.shape
    n_features = feature_offsets.shape[0] - 1
    n_words = task_bits.shape[1]
    lam, alpha, mds, mcw = split_params[0], split_params[1], split_params[2], split_params[3]
    order = cuda.local.array(_MAX_CODES, int64)
    score = cuda.local.array(_MAX_CODES, float64)
    for task in range(cuda.grid(1), n_nodes * n_features, cuda.gridsize(1)):
        node = task // n_features
        f = task - node * n_features
        if is_categorical[f] == 0:
            continue  # a numeric feature: its task is the numeric kernel's
        for i in range(n_words):
            task_bits[task, i] = 0
        if mask[node, f] == 0:
            continue
        lo, hi = feature_offsets[f], feature_offsets[f + 1]
        n = hi - lo - 1
        miss = hi - 1
        parent = parents[node]
        best = -math.inf
        if n < max_cat_to_onehot:
            best_code = -1
            for c in range(n):
                for direction in range(2):  # 0: missing rows left, 1: right
                    for j in range(k):
                        for s in range(2):
                            acc[task, j, s] = hist[node, lo + c, j, s] + (
                                hist[node, miss, j, s] if direction == 1 else int64(0))
                    _set_left(left, acc, task, node, node_sums, k, True)
                    gain = candidate_gain(left, task, node_sums, node, node_bounds, bounded,
                                          0, scales, lam, alpha, mds, mcw, parent)
                    if gain > best:
                        best = gain
                        best_code = c
                        task_left[task] = 1 - direction
                        _keep(left, task, task_sums, k)
            if best_code >= 0:
                task_bits[task, best_code >> 5] = uint32(1) << uint32(best_code & 31)
            task_gain[task] = best
            continue
        for c in range(n):  # a stable insertion sort by score (ties: code order)
            w = _score(hist, node, lo, c, node_sums, scales, lam, alpha, mds, mcw)
            i = c
            while i > 0 and score[i - 1] > w:
                score[i] = score[i - 1]
                order[i] = order[i - 1]
                i -= 1
            score[i] = w
            order[i] = c
        limit = min(max_cat_threshold, n)
        best_end = -1
        best_size = 0
        for end in range(2):  # 0: the lowest scores go right, 1: the highest go left
            for j in range(k):
                acc[task, j, 0] = 0
                acc[task, j, 1] = 0
            for i in range(limit - 1):
                c = order[i] if end == 0 else order[n - 1 - i]
                for j in range(k):
                    acc[task, j, 0] += hist[node, lo + c, j, 0]
                    acc[task, j, 1] += hist[node, lo + c, j, 1]
                _set_left(left, acc, task, node, node_sums, k, end == 0)
                gain = candidate_gain(left, task, node_sums, node, node_bounds, bounded, 0,
                                      scales, lam, alpha, mds, mcw, parent)
                if gain > best:
                    best = gain
                    best_end = end
                    best_size = i + 1
                    _keep(left, task, task_sums, k)
        if best_end >= 0:
            task_left[task] = 1 if best_end == 0 else 0
            size = best_size if best_end == 0 else n - best_size
            for i in range(size):  # the set going right: the first ``size`` of the order
                c = order[i]
                task_bits[task, c >> 5] |= uint32(1) << uint32(c & 31)
        task_gain[task] = best


@cuda.jit
def _best_kernel(n_features, task_gain, task_bin, task_left, task_sums, task_bits,
                 is_categorical, out_gain, out_feature, out_bin, out_left, out_left_sums,
                 out_cat_bits):
    k = task_sums.shape[1]
    for node in range(cuda.grid(1), out_gain.shape[0], cuda.gridsize(1)):
        best, at = -math.inf, -1
        for f in range(n_features):
            if task_gain[node * n_features + f] > best:
                best, at = task_gain[node * n_features + f], f
        out_gain[node] = best
        out_feature[node] = at
        task = node * n_features + at
        out_bin[node] = task_bin[task] if at >= 0 and is_categorical[at] == 0 else 0
        out_left[node] = task_left[task] if at >= 0 else 0
        for j in range(k):
            out_left_sums[node, j, 0] = task_sums[task, j, 0] if at >= 0 else 0
            out_left_sums[node, j, 1] = task_sums[task, j, 1] if at >= 0 else 0
        for i in range(out_cat_bits.shape[1]):
            out_cat_bits[node, i] = task_bits[task, i] if at >= 0 and is_categorical[at] \
                else uint32(0)


def _check(feature_offsets, is_categorical):
    """``ValueError`` for what this kernel does not do: a categorical feature with more
    codes than a thread's order holds."""
    n_bins = np.diff(to_host(feature_offsets).astype(np.int64)) - 1
    too_many = np.flatnonzero((to_host(is_categorical) == 1) & (n_bins > _MAX_CODES))
    if too_many.size:
        f = int(too_many[0])
        raise ValueError(
            f"device='cuda' supports categorical features with at most {_MAX_CODES} "
            f"categories in vector-leaf trees, but feature {f} has {int(n_bins[f])}; "
            "train with device='cpu' (which takes up to 65,536), or merge rare categories")


def evaluate_vector_splits_categorical(hist, feature_offsets, node_sums, mask, node_bounds,
                                       monotone, is_categorical, scales, split_params,
                                       max_cat_to_onehot, max_cat_threshold, out_gain,
                                       out_feature, out_bin, out_left, out_left_sums,
                                       out_cat_bits):
    """Best split of every node, numeric and categorical features; arguments and results
    as in ``cpu.evaluate_vector_splits_categorical`` (host or device arrays; host outputs
    are copied back)."""
    _check(feature_offsets, is_categorical)
    host_monotone = np.ascontiguousarray(to_host(monotone), dtype=np.int8)
    # the bounded gains only where they can differ (the plain ones are the same bits)
    bounded = bool(np.any(host_monotone != 0)) or not np.all(np.isinf(to_host(node_bounds)))
    d_bounds, d_monotone = to_device(node_bounds), to_device(host_monotone)
    xp = array_module()
    n_nodes, _, k, _ = hist.shape
    n_features = int(feature_offsets.shape[0]) - 1
    n_tasks = max(n_nodes * n_features, 1)
    is_cat = np.ascontiguousarray(to_host(is_categorical), dtype=np.uint8)
    host_mask = np.ascontiguousarray(to_host(mask), dtype=np.uint8)
    d_hist, d_offsets = to_device(hist), to_device(feature_offsets)
    d_sums, d_scales = to_device(node_sums), to_device(scales)
    d_params = to_device(np.asarray(split_params, dtype=np.float64))
    d_cat = to_device(is_cat)
    parents = xp.empty(max(n_nodes, 1), dtype=np.float64)
    task_gain = xp.empty(n_tasks, dtype=np.float64)
    task_bin = xp.empty(n_tasks, dtype=np.int32)
    task_left = xp.empty(n_tasks, dtype=np.uint8)
    task_sums = xp.empty((n_tasks, k, 2), dtype=np.int64)
    task_bits = xp.empty((n_tasks, out_cat_bits.shape[1]), dtype=np.uint32)
    left = xp.empty((n_tasks, k, 2), dtype=np.int64)
    acc = xp.empty((n_tasks, k, 2), dtype=np.int64)
    outs = [device_output(a) for a in (out_gain, out_feature, out_bin, out_left,
                                       out_left_sums, out_cat_bits)]
    if n_nodes:
        parent_kernel[blocks_for(n_nodes), THREADS](d_sums, d_bounds, bounded, d_scales,
                                                    d_params, parents)
    if n_nodes * n_features:
        grid = blocks_for(n_nodes * n_features), THREADS
        numeric = to_device(host_mask * (is_cat == 0)[None, :].astype(np.uint8))
        feature_kernel[grid](d_hist, d_offsets, d_sums, numeric, d_bounds, d_monotone, bounded,
                             d_scales, d_params, parents, left, task_gain, task_bin,
                             task_left, task_sums)
        _categorical_kernel[grid](d_hist, d_offsets, d_sums, to_device(host_mask), d_bounds,
                                  bounded, d_cat,
                                  d_scales, d_params, parents, int64(max_cat_to_onehot),
                                  int64(max_cat_threshold), left, acc, task_gain, task_bin,
                                  task_left, task_sums, task_bits)
    if n_nodes:
        _best_kernel[blocks_for(n_nodes), THREADS](n_features, task_gain, task_bin, task_left,
                                                   task_sums, task_bits, d_cat,
                                                   *(d for d, _ in outs))
    for _, finish in outs:
        finish()
