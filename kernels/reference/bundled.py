"""Twins of ``cpu/bundled.py``: the bundled matrix decoded to dense bins (a feature's
missing bin ``n_bins[f]`` where its bundle's code is another feature's or none), then the
dense reference kernels; histograms as the CSR twin sums them, entry by entry."""
import numpy as np

from .partition import add_split_values, partition_rows
from .predict import predict_binned


def decoded_bins(bins_by_bundle, feature_bundle, feature_code, feature_offsets):
    """int64 (n_features, n_rows): each feature's bins, feature-major."""
    n_bins = np.diff(np.asarray(feature_offsets, np.int64))
    codes = bins_by_bundle[feature_bundle].astype(np.int64) - feature_code[:, None]
    inside = (codes >= 0) & (codes < n_bins[:, None])
    return np.where(inside, codes, n_bins[:, None])


def build_histograms_bundled(bins, code_slot, code_base, feature_offsets, gpair, rows,
                             node_starts, node_ends, hist, n_threads=1):
    hist[...] = 0
    for k in range(node_starts.shape[0]):
        for r in rows[node_starts[k]:node_ends[k]]:
            for j in range(bins.shape[1]):
                code = int(bins[r, j])
                if code and code_slot[code_base[j] + code] >= 0:
                    hist[k, code_slot[code_base[j] + code]] += gpair[r]


def partition_rows_bundled(bins_by_bundle, feature_bundle, feature_code, feature_offsets, rows,
                           node_starts, node_ends, split_feature, split_bin, default_left,
                           split_type, cat_bits, scratch, out_n_left):
    partition_rows(decoded_bins(bins_by_bundle, feature_bundle, feature_code, feature_offsets),
                   rows, node_starts, node_ends, split_feature, split_bin, default_left,
                   split_type, cat_bits, np.diff(feature_offsets), scratch, out_n_left)


def add_split_values_bundled(bins_by_bundle, feature_bundle, feature_code, feature_offsets,
                             rows, node_starts, node_ends, split_feature, split_bin,
                             default_left, split_type, cat_bits, left_values, right_values,
                             out):
    add_split_values(decoded_bins(bins_by_bundle, feature_bundle, feature_code,
                                  feature_offsets),
                     rows, node_starts, node_ends, split_feature, split_bin, default_left,
                     split_type, cat_bits, np.diff(feature_offsets), left_values, right_values,
                     out)


def predict_binned_bundled(bins_by_bundle, feature_bundle, feature_code, feature_offsets, rows,
                           walk, cat_bits, value, tree_offsets, tree_group, tree_depth, out):
    predict_binned(decoded_bins(bins_by_bundle, feature_bundle, feature_code,
                                feature_offsets).T,
                   rows, np.diff(feature_offsets), walk, cat_bits, value, tree_offsets,
                   tree_group, tree_depth, out)
