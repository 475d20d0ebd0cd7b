"""NumPy twins of ``kernels/cpu/vector_outputs.py``: a vector-leaf round's steps on the
float gradients of every output (float64 (k, n_rows)), written plainly: each output's
maxima as ``max_abs``, the projection as the NumPy loop over outputs, the segments' sums
from the quantized pairs, the leaf values added segment by segment."""
import numpy as np

from .partition import add_leaf_values
from .quantize import max_abs, quantize_gradients


def max_abs_outputs(grad, hess, out):
    for j in range(grad.shape[0]):
        out[j, 0], out[j, 1] = max_abs(grad[j]), max_abs(hess[j])


def project_outputs(grad, hess, columns, signs, out_grad, out_hess, out_maxima):
    max_abs_outputs(grad, hess, out_maxima)
    out_grad[...] = 0.0
    out_hess[...] = 0.0
    for j in range(grad.shape[0]):  # output order
        c = columns[j]
        if signs[j] > 0:
            out_grad[c] += grad[j]
        else:
            out_grad[c] -= grad[j]
        out_hess[c] += hess[j]


def quantized_segment_sums(grad, hess, scales, rows, starts, ends, out):
    for j in range(grad.shape[0]):
        pairs = np.empty((grad.shape[1], 2), np.int64)
        quantize_gradients(grad[j], hess[j], scales[j], pairs)
        for s in range(starts.shape[0]):
            out[s, j] = pairs[rows[starts[s]:ends[s]]].sum(axis=0)


def add_outputs_leaf_values(rows, leaf_starts, leaf_ends, leaf_values, margins):
    for j in range(margins.shape[0]):
        add_leaf_values(rows, leaf_starts, leaf_ends, np.ascontiguousarray(leaf_values[:, j]),
                        margins[j])
