"""Split finding over every (node, feature) pair at once, and node weights (twin of
``cpu/split.py``: the same candidates in the same order, the same ``split_math``
formulas compiled as device functions with unfused products).

One thread per (node, feature) task scans the feature's bins (numeric: both missing
directions; categorical: one-hot or the sorted-partition candidates, with a per-thread
order of at most 256 codes); a second kernel, one thread per node, takes the best task in
feature order, so ties go to the lowest feature as on the CPU.

A categorical feature with more than 256 categories (uint16 codes) is not supported here:
``evaluate_splits`` refuses it with a ``ValueError`` naming the feature (train it with
``device="cpu"``), rather than scanning a truncated order.
"""
import math

import numpy as np
from numba import cuda, float64, int64, uint32

from ..layout import CAT_WORDS
from ._device import (THREADS, array_module, blocks_for, device_output, split_math,
                      to_device, to_host)

bounded_gain = split_math.bounded_gain
bounded_weight = split_math.bounded_weight
gain_given_weight = split_math.gain_given_weight
leaf_weight = split_math.leaf_weight
_MAX_CODES = 32 * CAT_WORDS


@cuda.jit(device=True)
def _numeric_best(hist, k, first, n, miss_g, miss_h, total_g, total_h, parent, direction_sign,
                  lower, upper, scale_g, scale_h, reg_lambda, reg_alpha, max_delta_step,
                  min_child_weight, task, task_gain, task_bin, task_left, task_sum):
    n_directions = 2 if (miss_g != 0 or miss_h != 0) else 1
    best = -math.inf
    for direction in range(n_directions):
        left_g = miss_g if direction == 1 else int64(0)
        left_h = miss_h if direction == 1 else int64(0)
        for i in range(1 if n == 1 else n - 1):
            b = -1 if n == 1 else i  # one value bin: the missing rows alone on the left
            if b >= 0:
                left_g += hist[k, first + b, 0]
                left_h += hist[k, first + b, 1]
            right_g = total_g - left_g
            right_h = total_h - left_h
            if left_h <= 0 or right_h <= 0:
                continue
            hl = left_h / scale_h
            hr = right_h / scale_h
            if hl < min_child_weight or hr < min_child_weight:
                continue
            gl = left_g / scale_g
            gr = right_g / scale_g
            if direction_sign == 0:
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
                task_gain[task] = gain
                task_bin[task] = b
                task_left[task] = direction
                task_sum[task, 0] = left_g
                task_sum[task, 1] = left_h


@cuda.jit(device=True)
def _set_gain(left_g, left_h, right_g, right_h, parent, scale_g, scale_h, reg_lambda, reg_alpha,
              max_delta_step, min_child_weight, lower, upper):
    if left_h <= 0 or right_h <= 0:
        return -math.inf
    hl = left_h / scale_h
    hr = right_h / scale_h
    if hl < min_child_weight or hr < min_child_weight:
        return -math.inf
    return (bounded_gain(left_g / scale_g, hl, reg_lambda, reg_alpha, max_delta_step, lower,
                         upper)
            + bounded_gain(right_g / scale_g, hr, reg_lambda, reg_alpha, max_delta_step,
                           lower, upper) - parent)


@cuda.jit(device=True)
def _categorical_best(hist, k, first, n, miss_g, miss_h, total_g, total_h, parent, lower, upper,
                      scale_g, scale_h, reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                      max_cat_to_onehot, max_cat_threshold, task, task_gain, task_left,
                      task_sum, task_bits):
    n_directions = 2 if (miss_g != 0 or miss_h != 0) else 1
    best = -math.inf
    if n < max_cat_to_onehot:
        best_code = -1
        for c in range(n):
            for direction in range(n_directions):  # 0: missing left, 1: missing right
                right_g = hist[k, first + c, 0] + (miss_g if direction == 1 else int64(0))
                right_h = hist[k, first + c, 1] + (miss_h if direction == 1 else int64(0))
                gain = _set_gain(total_g - right_g, total_h - right_h, right_g, right_h, parent,
                                 scale_g, scale_h, reg_lambda, reg_alpha, max_delta_step,
                                 min_child_weight, lower, upper)
                if gain > best:
                    best = gain
                    best_code = c
                    task_left[task] = 1 - direction
                    task_sum[task, 0] = total_g - right_g
                    task_sum[task, 1] = total_h - right_h
        if best_code >= 0:
            task_bits[task, best_code >> 5] = uint32(1) << uint32(best_code & 31)
    else:
        # codes by increasing weight of their own (G, H): a stable insertion sort
        order = cuda.local.array(_MAX_CODES, int64)
        weight = cuda.local.array(_MAX_CODES, float64)
        for c in range(n):
            hess = hist[k, first + c, 1] / scale_h
            w = 0.0
            if hess > 0.0 and hess >= min_child_weight:
                w = leaf_weight(hist[k, first + c, 0] / scale_g, hess, reg_lambda, reg_alpha,
                                max_delta_step)
            j = c
            while j > 0 and weight[j - 1] > w:
                weight[j] = weight[j - 1]
                order[j] = order[j - 1]
                j -= 1
            weight[j] = w
            order[j] = c
        limit = min(max_cat_threshold, n)
        best_end = -1
        best_size = 0
        for end in range(2):  # 0: the lowest weights go right, 1: the highest
            right_g = int64(0)
            right_h = int64(0)
            for j in range(limit - 1):
                c = order[j] if end == 0 else order[n - 1 - j]
                right_g += hist[k, first + c, 0]
                right_h += hist[k, first + c, 1]
                gain = _set_gain(total_g - right_g, total_h - right_h, right_g, right_h,
                                 parent, scale_g, scale_h, reg_lambda, reg_alpha,
                                 max_delta_step, min_child_weight, lower, upper)
                if gain > best:
                    best = gain
                    best_end = end
                    best_size = j + 1
                    task_sum[task, 0] = total_g - right_g
                    task_sum[task, 1] = total_h - right_h
        if best_end >= 0:
            task_left[task] = 1
            for j in range(best_size):
                c = order[j] if best_end == 0 else order[n - 1 - j]
                task_bits[task, c >> 5] |= uint32(1) << uint32(c & 31)
    task_gain[task] = best


@cuda.jit
def _task_kernel(hist, feature_offsets, missing_slots, is_categorical, node_sums, feature_mask,
                 monotone, node_bounds, scales, split_params, max_cat_to_onehot,
                 max_cat_threshold, task_gain, task_bin, task_left, task_sum, task_bits):
    n_nodes = hist.shape[0]
    n_features = feature_offsets.shape[0] - 1
    reg_lambda, reg_alpha = split_params[0], split_params[1]
    max_delta_step, min_child_weight = split_params[2], split_params[3]
    for task in range(cuda.grid(1), n_nodes * n_features, cuda.gridsize(1)):
        k = task // n_features
        f = task - k * n_features
        scale_g, scale_h = scales[k, 0], scales[k, 1]
        task_gain[task] = -math.inf
        task_bin[task] = 0
        task_left[task] = 0
        task_sum[task, 0] = 0
        task_sum[task, 1] = 0
        for word in range(CAT_WORDS):
            task_bits[task, word] = 0
        first = feature_offsets[f]
        n = feature_offsets[f + 1] - first - missing_slots  # value bins
        if feature_mask[k, f] == 0 or n < 1:
            continue
        total_g, total_h = node_sums[k, 0], node_sums[k, 1]
        if missing_slots:
            miss_g = hist[k, first + n, 0]
            miss_h = hist[k, first + n, 1]
        else:  # no missing slot: the node's sums less the value bins' (integers: exact)
            miss_g = total_g
            miss_h = total_h
            for b in range(n):
                miss_g -= hist[k, first + b, 0]
                miss_h -= hist[k, first + b, 1]
        lower, upper = node_bounds[k, 0], node_bounds[k, 1]
        parent = bounded_gain(total_g / scale_g, total_h / scale_h, reg_lambda, reg_alpha,
                              max_delta_step, lower, upper)
        if is_categorical[f]:
            _categorical_best(hist, k, first, n, miss_g, miss_h, total_g, total_h, parent, lower,
                              upper, scale_g, scale_h, reg_lambda, reg_alpha, max_delta_step,
                              min_child_weight, max_cat_to_onehot, max_cat_threshold, task,
                              task_gain, task_left, task_sum, task_bits)
        else:
            _numeric_best(hist, k, first, n, miss_g, miss_h, total_g, total_h, parent,
                          monotone[f], lower, upper, scale_g, scale_h, reg_lambda, reg_alpha,
                          max_delta_step, min_child_weight, task, task_gain, task_bin,
                          task_left, task_sum)


@cuda.jit
def _reduce_kernel(n_features, task_gain, task_bin, task_left, task_sum, task_bits, out_gain,
                   out_feature, out_bin, out_default_left, out_left_sum, out_cat_bits):
    for k in range(cuda.grid(1), out_gain.shape[0], cuda.gridsize(1)):
        best = -math.inf
        best_task = -1
        for f in range(n_features):  # feature order: the lowest feature wins ties
            if task_gain[k * n_features + f] > best:
                best = task_gain[k * n_features + f]
                best_task = k * n_features + f
        out_gain[k] = best
        out_feature[k] = -1 if best_task < 0 else best_task - k * n_features
        out_bin[k] = 0
        out_default_left[k] = 0
        out_left_sum[k, 0] = 0
        out_left_sum[k, 1] = 0
        for word in range(out_cat_bits.shape[1]):
            out_cat_bits[k, word] = 0
        if best_task >= 0:
            out_bin[k] = task_bin[best_task]
            out_default_left[k] = task_left[best_task]
            out_left_sum[k, 0] = task_sum[best_task, 0]
            out_left_sum[k, 1] = task_sum[best_task, 1]
            for word in range(CAT_WORDS):
                out_cat_bits[k, word] = task_bits[best_task, word]


def _check_codes_fit(feature_offsets, missing_slots, is_categorical):
    """``ValueError`` for a categorical feature with more codes than a thread's order holds."""
    n_bins = np.diff(to_host(feature_offsets).astype(np.int64)) - missing_slots
    too_many = np.flatnonzero((to_host(is_categorical) == 1) & (n_bins > _MAX_CODES))
    if too_many.size:
        f = int(too_many[0])
        raise ValueError(
            f"device='cuda' supports categorical features with at most {_MAX_CODES} "
            f"categories, but feature {f} has {int(n_bins[f])}; train with device='cpu' "
            "(which takes up to 65,536), or merge rare categories")


def evaluate_splits(hist, feature_offsets, missing_slots, is_categorical, node_sums,
                    feature_mask, monotone, node_bounds, scales, split_params,
                    max_cat_to_onehot, max_cat_threshold, out_gain, out_feature, out_bin,
                    out_default_left, out_left_sum, out_cat_bits):
    """Best split of each node over its allowed features, missing values tried both ways.

    Arguments and results as in ``cpu.evaluate_splits``. ``hist`` lives on the device; the
    per-node arrays may be host arrays (copied in, and the outputs back, once per call).
    """
    _check_codes_fit(feature_offsets, missing_slots, is_categorical)
    xp = array_module()
    n_nodes = hist.shape[0]
    n_features = feature_offsets.shape[0] - 1
    n_tasks = n_nodes * n_features
    task_gain = xp.empty(n_tasks, dtype=np.float64)
    task_bin = xp.empty(n_tasks, dtype=np.int32)
    task_left = xp.empty(n_tasks, dtype=np.uint8)
    task_sum = xp.empty((n_tasks, 2), dtype=np.int64)
    task_bits = xp.empty((n_tasks, CAT_WORDS), dtype=np.uint32)
    outputs = [device_output(a) for a in (out_gain, out_feature, out_bin, out_default_left,
                                          out_left_sum, out_cat_bits)]
    if n_tasks:
        _task_kernel[blocks_for(n_tasks), THREADS](
            to_device(hist), to_device(feature_offsets), int(missing_slots),
            to_device(is_categorical),
            to_device(node_sums), to_device(feature_mask), to_device(monotone),
            to_device(node_bounds), to_device(scales), to_device(split_params),
            int(max_cat_to_onehot), int(max_cat_threshold), task_gain, task_bin, task_left,
            task_sum, task_bits)
    if n_nodes:
        _reduce_kernel[blocks_for(n_nodes), THREADS](
            n_features, task_gain, task_bin, task_left, task_sum, task_bits,
            *(d for d, _ in outputs))
    for _, finish in outputs:
        finish()


@cuda.jit
def _weights_kernel(node_sums, node_bounds, scales, split_params, out):
    for k in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[k] = bounded_weight(node_sums[k, 0] / scales[k, 0], node_sums[k, 1] / scales[k, 1],
                                split_params[0], split_params[1], split_params[2],
                                node_bounds[k, 0], node_bounds[k, 1])


def node_weights(node_sums, node_bounds, scales, split_params, out):
    """Each node's weight (before the learning rate), kept within its bounds (as
    ``cpu.node_weights``)."""
    d_out, finish = device_output(out)
    if out.shape[0]:
        _weights_kernel[blocks_for(out.shape[0]), THREADS](
            to_device(node_sums), to_device(node_bounds), to_device(scales),
            to_device(split_params), d_out)
    finish()
