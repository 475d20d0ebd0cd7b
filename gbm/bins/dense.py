"""``DenseBins``: every cell of the binned rows, row- and feature-major (the bin
matrices' interface: ``gbm.bins``), and the dense form the other layouts give a grower
that reads dense bins only (``missing_bins``, ``dense_on``)."""
import numpy as np


def missing_bins(n_rows, n_bins):
    """Feature-major bins (n_features, n_rows), every entry its feature's missing bin
    ``n_bins[f]``, in the narrowest dtype holding every bin (a dense layout's)."""
    dtype = np.uint8 if np.max(n_bins, initial=0) < 256 else np.uint16
    by_feature = np.empty((len(n_bins), n_rows), dtype=dtype)
    by_feature[...] = np.asarray(n_bins)[:, None]
    return by_feature


def dense_on(xp, by_feature, n_bins):
    """``DenseBins`` of host feature-major bins, its two arrays ``xp``'s."""
    return DenseBins(xp.asarray(np.ascontiguousarray(by_feature.T)), xp.asarray(by_feature),
                     n_bins)


class DenseBins:
    """``bins`` (n_rows, n_features) C order and ``bins_by_feature`` (its transpose, C
    order: a split reads one feature), uint8 or uint16, on the backend's device.

    n_bins : int32 (n_features,), value bins per feature (bin ``n_bins[f]`` = missing)
    """

    layout = "dense"
    missing_slots = 1

    def __init__(self, bins, bins_by_feature, n_bins):
        self.bins, self.bins_by_feature = bins, bins_by_feature
        self.n_bins = np.asarray(n_bins, dtype=np.int32)
        self.feature_offsets = np.concatenate(
            ([0], np.cumsum(self.n_bins + 1))).astype(np.int32)

    @property
    def n_rows(self):
        return self.bins.shape[0]

    @property
    def n_features(self):
        return self.bins.shape[1]

    @property
    def nbytes(self):
        return self.bins.nbytes + self.bins_by_feature.nbytes

    @property
    def row_cost(self):
        return self.n_features

    def build_histograms(self, k, gpair, rows, starts, ends, hist, n_threads, slot_map=None):
        if slot_map is not None:
            raise ValueError("a dense bin matrix builds histograms of every feature")
        k.build_histograms(self.bins, gpair, rows, starts, ends, self.feature_offsets, hist,
                           n_threads)

    def partition_rows(self, k, rows, starts, ends, feature, split_bin, default_left,
                       split_type, cat_bits, scratch, out_n_left):
        k.partition_rows(self.bins_by_feature, rows, starts, ends, feature, split_bin,
                         default_left, split_type, cat_bits, self.n_bins, scratch, out_n_left)

    def add_split_values(self, k, rows, starts, ends, feature, split_bin, default_left,
                         split_type, cat_bits, left_values, right_values, out):
        k.add_split_values(self.bins_by_feature, rows, starts, ends, feature, split_bin,
                           default_left, split_type, cat_bits, self.n_bins, left_values,
                           right_values, out)

    def predict_binned(self, k, rows, walk, cat_bits, value, tree_offsets, tree_group,
                       tree_depth, out):
        k.predict_binned(self.bins, rows, self.n_bins, walk, cat_bits, value, tree_offsets,
                         tree_group, tree_depth, out)

    def tile(self, n, xp):
        """The rows repeated ``n`` times (row ``g * n_rows + i`` is row ``i``)."""
        return DenseBins(xp.tile(self.bins, (n, 1)), xp.tile(self.bins_by_feature, (1, n)),
                         self.n_bins)
