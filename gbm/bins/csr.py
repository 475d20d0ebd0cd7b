"""``CsrBins``: the stored (non-missing) entries of the binned rows as CSR (the bin matrices'
interface: ``gbm.bins``)."""
import numpy as np

from .dense import missing_bins, dense_on


class CsrBins:
    """The stored entries of the binned rows as CSR, on the backend's device.

    indptr : int64 (n_rows + 1,); slots : int32 (nnz,), each entry's histogram slot
        ``feature_offsets[f] + bin``, increasing along each row
    feature_offsets : int32 (n_features + 1,), feature ``f``'s value slots (no missing slot)
    """

    layout = "sparse"
    missing_slots = 0

    def __init__(self, indptr, slots, feature_offsets):
        self.indptr, self.slots = indptr, slots
        self.feature_offsets = np.asarray(feature_offsets, dtype=np.int32)
        self._no_map = np.zeros(0, dtype=np.int32)
        self._counts = None

    @property
    def n_bins(self):
        """int32 (n_features,): value bins per feature (made when read: 4 bytes a
        feature, not held beside ``feature_offsets``)."""
        return np.diff(self.feature_offsets).astype(np.int32)

    def feature_counts(self):
        """int32 (n_features,) on the host: each feature's stored entries (counted once,
        kept: what bounds a feature's hessian sum in ``gbm.tree.active``)."""
        if self._counts is None:
            from ..data.inputs import to_host
            from ..data.sparse import count_values

            per_slot = count_values(to_host(self.slots), int(self.feature_offsets[-1]))
            counts = np.add.reduceat(per_slot, self.feature_offsets[:-1]) if per_slot.size \
                else np.zeros(self.n_features, np.int64)
            counts[self.feature_offsets[1:] == self.feature_offsets[:-1]] = 0  # reduceat
            # reads a slot for a width of 0
            self._counts = counts.astype(np.int32)
        return self._counts

    @property
    def n_rows(self):
        return self.indptr.shape[0] - 1

    @property
    def n_features(self):
        return self.feature_offsets.shape[0] - 1

    @property
    def nbytes(self):
        return self.indptr.nbytes + self.slots.nbytes

    @property
    def row_cost(self):
        """Stored entries per row (at least one): what a histogram pass reads per row."""
        return max(1, -(-int(self.slots.shape[0]) // max(1, self.n_rows)))

    def build_histograms(self, k, gpair, rows, starts, ends, hist, n_threads, slot_map=None):
        k.build_histograms_csr(self.indptr, self.slots, self._no_map if slot_map is None
                               else slot_map, gpair, rows, starts, ends, hist, n_threads)

    def partition_rows(self, k, rows, starts, ends, feature, split_bin, default_left,
                       split_type, cat_bits, scratch, out_n_left):
        k.partition_rows_csr(self.indptr, self.slots, self.feature_offsets, rows, starts, ends,
                             feature, split_bin, default_left, split_type, cat_bits, scratch,
                             out_n_left)

    def add_split_values(self, k, rows, starts, ends, feature, split_bin, default_left,
                         split_type, cat_bits, left_values, right_values, out):
        k.add_split_values_csr(self.indptr, self.slots, self.feature_offsets, rows, starts,
                               ends, feature, split_bin, default_left, split_type, cat_bits,
                               left_values, right_values, out)

    def predict_binned(self, k, rows, walk, cat_bits, value, tree_offsets, tree_group,
                       tree_depth, out):
        k.predict_binned_csr(self.indptr, self.slots, self.feature_offsets, rows, walk,
                             cat_bits, value, tree_offsets, tree_group, tree_depth, out)

    def to_dense(self, xp=np):
        """The same rows as ``DenseBins`` (an absent entry in its feature's missing bin),
        made on the host, its arrays then ``xp``'s (the backend's device): for a grower
        that reads dense bins only (vector-leaf trees)."""
        from ..data.inputs import to_host

        indptr, slots = to_host(self.indptr), to_host(self.slots).astype(np.int64)
        offsets = self.feature_offsets.astype(np.int64)
        rows = np.repeat(np.arange(self.n_rows), np.diff(indptr))
        features = np.searchsorted(offsets, slots, side="right") - 1
        by_feature = missing_bins(self.n_rows, self.n_bins)
        by_feature[features, rows] = slots - offsets[features]
        return dense_on(xp, by_feature, self.n_bins)

    def tile(self, n, xp):
        """The rows repeated ``n`` times (row ``g * n_rows + i`` is row ``i``)."""
        nnz = self.slots.shape[0]
        shifts = xp.repeat(xp.arange(n, dtype=np.int64) * nnz, self.n_rows)
        indptr = xp.concatenate([xp.tile(self.indptr[:-1], n) + shifts,
                                 xp.asarray([n * nnz], dtype=np.int64)])
        return CsrBins(indptr, xp.tile(self.slots, n), self.feature_offsets)
