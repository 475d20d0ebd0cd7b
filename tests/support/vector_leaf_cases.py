"""What the vector-leaf kernel tests share (``tests/test_vector_leaf.py`` on the CPU and
its twin, ``tests/cuda/test_cuda_vector_leaf.py`` under the CUDA simulator)."""
import numpy as np


def evaluate_splits(kernels, hist, offsets, sums, mask, scales, split_params):
    """``kernels.evaluate_vector_splits`` on fresh outputs; returns them: gain float64,
    feature and bin int32, default-left uint8 (n_nodes,), left sums int64 (n_nodes, k, 2)."""
    n, k = hist.shape[0], hist.shape[2]
    out = (np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.uint8),
           np.empty((n, k, 2), np.int64))
    kernels.evaluate_vector_splits(hist, offsets, sums, mask, scales, split_params, *out)
    return out
