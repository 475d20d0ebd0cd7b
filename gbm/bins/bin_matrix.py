"""Bin matrices: the binned rows a fit trains on, in one of several layouts behind one small
interface, so that the grower, the margins and the eval sets never ask which
(docs/architecture.md, "Bin matrices"):

* ``DenseBins``: ``bins[n_rows, n_features]`` (uint8/uint16, a missing value in its
  feature's missing bin ``n_bins[f]``), and the same feature-major for the partition;
  each feature's histogram slots are its value bins, then its missing slot.
* ``CsrBins``: CSR over the stored (non-missing) entries only, each entry the histogram
  slot of its (feature, value bin); an absent entry is missing. Histograms have value
  slots only: a feature's missing sums are the node's less its value bins' (integers,
  so exactly what a missing slot would hold). Memory grows with the stored entries.
* ``BundledBins``: exactly exclusive features bundled (``gbm.bins.bundling``), a column
  of codes per bundle (row- and bundle-major), code 0 where none of the bundle's
  features is stored; histograms as ``CsrBins``' (value slots in feature order), so the
  memory and the work of a histogram pass follow the bundles, not the columns.

Every layout gives the same histograms of value bins, the same rows to each child and
the same leaf for each row, so the layout never changes a model (the tests train every
layout and compare the model files). The interface, which a paged layout (a sequence of
such matrices, streamed) implements too:

``n_rows``, ``n_features``, ``nbytes``; ``feature_offsets`` (the histogram layout: feature
``f``'s slots) and ``missing_slots`` (1: its last slot is its missing slot; 0: none);
``row_cost`` (work per row of a histogram pass); ``build_histograms``, ``partition_rows``,
``add_split_values``, ``predict_binned`` (the kernels over it); ``tile`` (the rows
repeated, for a round's groups grown in lockstep). A layout without missing slots also
builds histograms of some features only (``slot_map``: each slot's place in the smaller
histogram, or -1; ``gbm.tree.active``).
"""
import numpy as np


def _missing_bins(n_rows, n_bins):
    """Feature-major bins (n_features, n_rows), every entry its feature's missing bin
    ``n_bins[f]``, in the narrowest dtype holding every bin (a dense layout's)."""
    dtype = np.uint8 if np.max(n_bins, initial=0) < 256 else np.uint16
    by_feature = np.empty((len(n_bins), n_rows), dtype=dtype)
    by_feature[...] = np.asarray(n_bins)[:, None]
    return by_feature


def _on(xp, by_feature, n_bins):
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
        by_feature = _missing_bins(self.n_rows, self.n_bins)
        by_feature[features, rows] = slots - offsets[features]
        return _on(xp, by_feature, self.n_bins)

    def tile(self, n, xp):
        """The rows repeated ``n`` times (row ``g * n_rows + i`` is row ``i``)."""
        nnz = self.slots.shape[0]
        shifts = xp.repeat(xp.arange(n, dtype=np.int64) * nnz, self.n_rows)
        indptr = xp.concatenate([xp.tile(self.indptr[:-1], n) + shifts,
                                 xp.asarray([n * nnz], dtype=np.int64)])
        return CsrBins(indptr, xp.tile(self.slots, n), self.feature_offsets)


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
        by_feature = _missing_bins(self.n_rows, n_bins)
        for f in range(n_bins.size):  # one column at a time: no int64 copy of the matrix
            code = by_bundle[bundle[f]].astype(np.int64) - int(first[f])
            inside = (code >= 0) & (code < n_bins[f])
            by_feature[f, inside] = code[inside]
        return _on(xp, by_feature, n_bins)

    def tile(self, n, xp):
        """The rows repeated ``n`` times (row ``g * n_rows + i`` is row ``i``)."""
        return BundledBins(xp.tile(self.bins, (n, 1)), xp.tile(self.bins_by_bundle, (1, n)),
                           self.code_slot, self.code_base, self.feature_bundle,
                           self.feature_code, self.feature_offsets)

