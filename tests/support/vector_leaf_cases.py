"""What the vector-leaf kernel tests share (``tests/test_vector_leaf.py`` on the CPU and
its twin, ``tests/test_vector_leaf_monotone.py``, ``tests/cuda/test_cuda_vector_leaf.py`` under the CUDA simulator)."""
import numpy as np


def evaluate_splits(kernels, hist, offsets, sums, mask, scales, split_params):
    """``kernels.evaluate_vector_splits`` on fresh outputs; returns them: gain float64,
    feature and bin int32, default-left uint8 (n_nodes,), left sums int64 (n_nodes, k, 2)."""
    n, k = hist.shape[0], hist.shape[2]
    out = (np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.uint8),
           np.empty((n, k, 2), np.int64))
    kernels.evaluate_vector_splits(hist, offsets, sums, mask, scales, split_params, *out)
    return out


def random_case(rng, n_rows=60, n_features=4, k=3, n_nodes=3, missing=True):
    """Random kernel inputs: bins uint8 (n_features, n_rows) (the missing bin too when
    ``missing``), integer gradient pairs int64 (n_rows, k, 2), a row permutation int32
    cut into ``n_nodes`` segments (starts, ends int64) and each feature's slot offsets
    int32 (n_features + 1,)."""
    n_bins = rng.integers(1, 6, n_features).astype(np.int32)
    offsets = np.concatenate(([0], np.cumsum(n_bins + 1))).astype(np.int32)
    bins = np.empty((n_features, n_rows), dtype=np.uint8)
    for f in range(n_features):
        bins[f] = rng.integers(0, n_bins[f] + (1 if missing else 0), n_rows)
    gpair = np.empty((n_rows, k, 2), dtype=np.int64)
    gpair[:, :, 0] = rng.integers(-1000, 1000, (n_rows, k))
    gpair[:, :, 1] = rng.integers(0, 500, (n_rows, k))
    rows = rng.permutation(n_rows).astype(np.int32)
    cuts = np.sort(rng.choice(np.arange(1, n_rows), n_nodes - 1, replace=False))
    starts = np.concatenate(([0], cuts)).astype(np.int64)
    ends = np.concatenate((cuts, [n_rows])).astype(np.int64)
    return bins, gpair, rows, starts, ends, offsets
