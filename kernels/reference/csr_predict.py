"""Twins of ``cpu/csr_predict.py``: the dense reference walks on the rows densified (raw
values NaN, bins the missing bin, where entries are absent)."""
import numpy as np

from .csr import dense_bins
from .predict import predict, predict_binned, predict_leaf


def dense_values(indptr, indices, data, n_features):
    """Raw CSR rows as float32 (n_rows, n_features), NaN where entries are absent."""
    n_rows = indptr.shape[0] - 1
    out = np.full((n_rows, n_features), np.nan, dtype=np.float32)
    out[np.repeat(np.arange(n_rows), np.diff(indptr)), indices] = data
    return out


def _width(indices, walk):
    """Enough columns for every feature the rows or the trees name."""
    named = walk.reshape(-1, 4)[:, 0]
    return int(max(indices.max(initial=-1), named.max(initial=-1)) + 1)


def predict_binned_csr(indptr, slots, feature_offsets, rows, walk, cat_bits, value,
                       tree_offsets, tree_group, tree_depth, out):
    predict_binned(dense_bins(indptr, slots, feature_offsets).T, rows,
                   np.diff(feature_offsets), walk, cat_bits, value, tree_offsets, tree_group,
                   tree_depth, out)


def predict_csr(indptr, indices, data, walk, cat_bits, value, tree_offsets, tree_group,
                tree_depth, out):
    predict(dense_values(indptr, indices, data, _width(indices, walk)), walk, cat_bits, value,
            tree_offsets, tree_group, tree_depth, out)


def predict_leaf_csr(indptr, indices, data, walk, cat_bits, tree_offsets, tree_depth, out):
    predict_leaf(dense_values(indptr, indices, data, _width(indices, walk)), walk, cat_bits,
                 tree_offsets, tree_depth, out)
