"""``BundledBins``: exactly exclusive features sharing a column of codes (``gbm.bins.bundling``;
the bin matrices' interface: ``gbm.bins``)."""
import numpy as np

from .csr import CsrBins
from .dense import missing_bins, dense_on


class BundledBins:
    """Bundle codes of the binned rows (``gbm.bins.bundling``), on the backend's device.

    bins : uint8/uint16 (n_rows, n_bundles) C order; bins_by_bundle : its transpose, C
    code_slot : int32 (n_codes,), code_base : int64 (n_bundles + 1,): bundle ``j``'s code
        ``c`` is histogram slot ``code_slot[code_base[j] + c]``
    feature_bundle, feature_code : int32 (n_features,): feature ``f``'s bundle and its
        first code there (its bin ``b`` is code ``feature_code[f] + b``)
    feature_offsets : int32 (n_features + 1,), value slots (as ``CsrBins``')
    """

    layout = "bundled"
    missing_slots = 0

    def __init__(self, bins, bins_by_bundle, code_slot, code_base, feature_bundle,
                 feature_code, feature_offsets):
        self.bins, self.bins_by_bundle = bins, bins_by_bundle
        self.code_slot, self.code_base = code_slot, code_base
        self.feature_bundle, self.feature_code = feature_bundle, feature_code
        self.feature_offsets = np.asarray(feature_offsets, dtype=np.int32)
        self._mapped = None  # (slot_map, code_slot through it): the last one asked for

    @property
    def n_rows(self):
        return self.bins.shape[0]

    @property
    def n_features(self):
        return self.feature_offsets.shape[0] - 1

    n_bins = CsrBins.n_bins

    @property
    def n_bundles(self):
        return self.bins.shape[1]

    @property
    def nbytes(self):
        return self.bins.nbytes + self.bins_by_bundle.nbytes + self.code_slot.nbytes

    @property
    def row_cost(self):
        return max(1, self.n_bundles)

    def _rows(self):
        return (self.bins_by_bundle, self.feature_bundle, self.feature_code,
                self.feature_offsets)

    def build_histograms(self, k, gpair, rows, starts, ends, hist, n_threads, slot_map=None):
        code_slot = self.code_slot
        if slot_map is not None:  # the codes' slots in the smaller histogram (kept a tree)
            if self._mapped is None or self._mapped[0] is not slot_map:
                self._mapped = (slot_map, slot_map[code_slot] * (code_slot >= 0)
                                - (code_slot < 0))
            code_slot = self._mapped[1]
        k.build_histograms_bundled(self.bins, code_slot, self.code_base, self.feature_offsets,
                                   gpair, rows, starts, ends, hist, n_threads)

    def partition_rows(self, k, rows, starts, ends, feature, split_bin, default_left,
                       split_type, cat_bits, scratch, out_n_left):
        k.partition_rows_bundled(*self._rows(), rows, starts, ends, feature, split_bin,
                                 default_left, split_type, cat_bits, scratch, out_n_left)

    def add_split_values(self, k, rows, starts, ends, feature, split_bin, default_left,
                         split_type, cat_bits, left_values, right_values, out):
        k.add_split_values_bundled(*self._rows(), rows, starts, ends, feature, split_bin,
                                   default_left, split_type, cat_bits, left_values,
                                   right_values, out)

    def predict_binned(self, k, rows, walk, cat_bits, value, tree_offsets, tree_group,
                       tree_depth, out):
        k.predict_binned_bundled(*self._rows(), rows, walk, cat_bits, value, tree_offsets,
                                 tree_group, tree_depth, out)

    def to_dense(self, xp=np):
        """The same rows as ``DenseBins`` (a feature's code outside its range in its
        bundle: its missing bin), as ``CsrBins.to_dense``."""
        from ..data.inputs import to_host

        by_bundle, n_bins = to_host(self.bins_by_bundle), self.n_bins
        bundle, first = to_host(self.feature_bundle), to_host(self.feature_code)
        by_feature = missing_bins(self.n_rows, n_bins)
        for f in range(n_bins.size):  # one column at a time: no int64 copy of the matrix
            code = by_bundle[bundle[f]].astype(np.int64) - int(first[f])
            inside = (code >= 0) & (code < n_bins[f])
            by_feature[f, inside] = code[inside]
        return dense_on(xp, by_feature, n_bins)

    def tile(self, n, xp):
        """The rows repeated ``n`` times (row ``g * n_rows + i`` is row ``i``)."""
        return BundledBins(xp.tile(self.bins, (n, 1)), xp.tile(self.bins_by_bundle, (1, n)),
                           self.code_slot, self.code_base, self.feature_bundle,
                           self.feature_code, self.feature_offsets)
