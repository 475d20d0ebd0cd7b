"""Monotone constraints of vector-leaf trees on CUDA: ``vector_bounded_weights``,
``vector_child_bounds`` and ``build_vector_feature_histograms``, twins of
``cpu/vector_leaf.py``'s (names, arguments and results, bit for bit), one thread per
output cell (per (node, output) for the histograms: integer sums of one thread each) with
the device functions of ``vector_leaf.py``, every product through ``mul`` (never fused).
The monotone split search is in ``vector_leaf.py`` (``evaluate_vector_splits_monotone``).
"""
import numpy as np
from numba import cuda, float64, int64

from ._device import THREADS, blocks_for, device_output, mul, to_device
from .vector_split import bounded_output_weight, split_weights


@cuda.jit
def _bounded_weights_kernel(node_sums, node_bounds, scales, split_params, out):
    n_nodes, k = out.shape
    for cell in range(cuda.grid(1), n_nodes * k, cuda.gridsize(1)):
        node = cell // k
        j = cell - node * k
        out[node, j] = bounded_output_weight(
            node_sums[node, j, 0] / scales[j, 0], node_sums[node, j, 1] / scales[j, 1],
            split_params[0], split_params[1], split_params[2], split_params[3],
            node_bounds[node, j, 0], node_bounds[node, j, 1])


def vector_bounded_weights(node_sums, node_bounds, scales, split_params, out):
    """Each node's weight per output clamped into its bounds; as
    ``cpu.vector_bounded_weights``."""
    d_out, finish = device_output(out)
    n_cells = int(out.shape[0]) * int(out.shape[1])
    if n_cells:
        _bounded_weights_kernel[blocks_for(n_cells), THREADS](
            to_device(node_sums), to_device(node_bounds), to_device(scales),
            to_device(np.asarray(split_params, dtype=np.float64)), d_out)
    finish()


@cuda.jit
def _child_bounds_kernel(node_sums, left_sums, node_bounds, signs, scales, split_params,
                         out_left, out_right):
    n, k = node_sums.shape[0], node_sums.shape[1]
    lam, alpha, mds, mcw = split_params[0], split_params[1], split_params[2], split_params[3]
    for cell in range(cuda.grid(1), n * k, cuda.gridsize(1)):
        i = cell // k
        j = cell - i * k
        lo, hi = node_bounds[i, j, 0], node_bounds[i, j, 1]
        out_left[i, j, 0], out_left[i, j, 1] = lo, hi
        out_right[i, j, 0], out_right[i, j, 1] = lo, hi
        sign = int64(signs[i])
        if sign == 0:
            continue
        inv_g, inv_h = 1.0 / scales[j, 0], 1.0 / scales[j, 1]
        gl = mul(float64(left_sums[i, j, 0]), inv_g)
        hl = mul(float64(left_sums[i, j, 1]), inv_h)
        gr = mul(float64(node_sums[i, j, 0] - left_sums[i, j, 0]), inv_g)
        hr = mul(float64(node_sums[i, j, 1] - left_sums[i, j, 1]), inv_h)
        wl, wr, _ = split_weights(gl, hl, gr, hr, mul(float64(node_sums[i, j, 0]), inv_g),
                                  mul(float64(node_sums[i, j, 1]), inv_h), sign, lam, alpha,
                                  mds, mcw, lo, hi)
        mid = wl + mul(0.5, wr - wl)  # never fused: the CPU rounds the product first
        if sign > 0:
            out_left[i, j, 1] = mid
            out_right[i, j, 0] = mid
        else:
            out_left[i, j, 0] = mid
            out_right[i, j, 1] = mid


def vector_child_bounds(node_sums, left_sums, node_bounds, signs, scales, split_params,
                        out_left, out_right):
    """The children's bounds of split nodes; as ``cpu.vector_child_bounds``."""
    (d_left, finish_left), (d_right, finish_right) = device_output(out_left), \
        device_output(out_right)
    n_cells = int(node_sums.shape[0]) * int(node_sums.shape[1])
    if n_cells:
        _child_bounds_kernel[blocks_for(n_cells), THREADS](
            to_device(node_sums), to_device(left_sums), to_device(node_bounds),
            to_device(signs), to_device(scales),
            to_device(np.asarray(split_params, dtype=np.float64)), d_left, d_right)
    finish_left()
    finish_right()


@cuda.jit
def _feature_histogram_kernel(bins_by_feature, gpair, rows, node_starts, node_ends, features,
                              hist):
    n_nodes, n_slots, k, _ = hist.shape
    for task in range(cuda.grid(1), n_nodes * k, cuda.gridsize(1)):
        node = task // k
        j = task - node * k
        for s in range(n_slots):
            hist[node, s, j, 0] = 0
            hist[node, s, j, 1] = 0
        f = features[node]
        for p in range(node_starts[node], node_ends[node]):
            r = rows[p]
            s = int64(bins_by_feature[f, r])
            hist[node, s, j, 0] += gpair[j, r, 0]
            hist[node, s, j, 1] += gpair[j, r, 1]


def build_vector_feature_histograms(bins_by_feature, gpair, rows, node_starts, node_ends,
                                    features, hist):
    """One feature's histogram per node over every output (one thread per (node,
    output): integer sums of one thread each); as
    ``cpu.build_vector_feature_histograms``."""
    d_hist, finish = device_output(hist)
    n_tasks = int(hist.shape[0]) * int(hist.shape[2])
    if n_tasks:
        _feature_histogram_kernel[blocks_for(n_tasks), THREADS](
            to_device(bins_by_feature), to_device(gpair), to_device(rows),
            to_device(np.asarray(node_starts, dtype=np.int64)),
            to_device(np.asarray(node_ends, dtype=np.int64)),
            to_device(np.asarray(features, dtype=np.int32)), d_hist)
    finish()
