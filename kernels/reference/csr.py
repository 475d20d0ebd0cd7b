"""Twins of ``cpu/csr.py``: the histogram summed entry by entry; the partition, the last
level's values and the binning as the dense reference kernels on the matrix densified
(absent entries in the missing bin, ``n_bins[f]``)."""
import numpy as np

from .binning import bin_values
from .partition import add_split_values, partition_rows


def dense_bins(indptr, slots, feature_offsets):
    """The sparse bin matrix as dense bins, int64 (n_features, n_rows) (feature-major,
    as the partition kernels read them): ``n_bins[f]`` where entries are absent."""
    feature_offsets = np.asarray(feature_offsets, np.int64)
    n_bins = np.diff(feature_offsets)
    n_rows = indptr.shape[0] - 1
    out = np.repeat(n_bins[:, None], n_rows, axis=1)
    rows = np.repeat(np.arange(n_rows), np.diff(indptr))
    features = np.searchsorted(feature_offsets, slots, side="right") - 1
    out[features, rows] = slots - feature_offsets[features]
    return out


def build_histograms_csr(indptr, slots, slot_map, gpair, rows, node_starts, node_ends, hist,
                         n_threads=1):
    hist[...] = 0
    for k in range(node_starts.shape[0]):
        for r in rows[node_starts[k]:node_ends[k]]:
            entries = slots[indptr[r]:indptr[r + 1]]
            if slot_map.shape[0]:
                entries = slot_map[entries]
                entries = entries[entries >= 0]
            hist[k, entries, 0] += gpair[r, 0]  # a row's slots are distinct
            hist[k, entries, 1] += gpair[r, 1]


def partition_rows_csr(indptr, slots, feature_offsets, rows, node_starts, node_ends,
                       split_feature, split_bin, default_left, split_type, cat_bits, scratch,
                       out_n_left):
    partition_rows(dense_bins(indptr, slots, feature_offsets), rows, node_starts, node_ends,
                   split_feature, split_bin, default_left, split_type, cat_bits,
                   np.diff(feature_offsets), scratch, out_n_left)


def add_split_values_csr(indptr, slots, feature_offsets, rows, node_starts, node_ends,
                         split_feature, split_bin, default_left, split_type, cat_bits,
                         left_values, right_values, out):
    add_split_values(dense_bins(indptr, slots, feature_offsets), rows, node_starts, node_ends,
                     split_feature, split_bin, default_left, split_type, cat_bits,
                     np.diff(feature_offsets), left_values, right_values, out)


def bin_values_csr(indptr, indices, data, cut_values, cut_offsets, feature_offsets, out):
    """Each stored entry binned alone by ``bin_values`` (a one-cell matrix), plus its
    feature's first slot."""
    for j in range(data.shape[0]):
        f = indices[j]
        cuts = cut_values[cut_offsets[f]:cut_offsets[f + 1]]
        padded = np.full((1, max(256, 1 << int(cuts.size).bit_length())), np.inf, np.float32)
        padded[0, :cuts.size] = cuts
        cell = np.empty((1, 1), dtype=np.int64)
        bin_values(data[j:j + 1, None], padded, np.array([cuts.size + 1]), cell)
        out[j] = feature_offsets[f] + cell[0, 0]
