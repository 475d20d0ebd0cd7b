"""Twins of ``cpu/partition.py``."""
import numpy as np

from .predict import codes_of


def partition_rows(bins_by_feature, rows, node_starts, node_ends, split_feature, split_bin,
                   default_left, split_type, cat_bits, n_bins, scratch, out_n_left):
    for k in range(node_starts.shape[0]):
        seg = rows[node_starts[k]:node_ends[k]].copy()
        f = split_feature[k]
        b = bins_by_feature[f, seg].astype(np.int64)
        if split_type[k] == 1:
            value_left = ~np.isin(b, sorted(codes_of(cat_bits[k])))
        else:
            value_left = b <= split_bin[k]
        left = np.where(b == n_bins[f], default_left[k] == 1, value_left)
        rows[node_starts[k]:node_ends[k]] = np.concatenate([seg[left], seg[~left]])
        out_n_left[k] = left.sum()


def add_leaf_values(rows, leaf_starts, leaf_ends, leaf_values, out):
    for k in range(leaf_starts.shape[0]):
        out[rows[leaf_starts[k]:leaf_ends[k]]] += leaf_values[k]


def add_split_values(bins_by_feature, rows, node_starts, node_ends, split_feature, split_bin,
                     default_left, split_type, cat_bits, n_bins, left_values, right_values, out):
    """The rows partitioned as ``partition_rows`` does (on a copy), then each child's value
    added to its rows as ``add_leaf_values`` does."""
    moved = rows.copy()
    n_left = np.empty(node_starts.shape[0], dtype=np.int64)
    partition_rows(bins_by_feature, moved, node_starts, node_ends, split_feature, split_bin,
                   default_left, split_type, cat_bits, n_bins, None, n_left)
    middle = node_starts + n_left
    add_leaf_values(moved, node_starts, middle, left_values, out)
    add_leaf_values(moved, middle, node_ends, right_values, out)
