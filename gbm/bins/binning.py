"""Bin edges that spend the whole ``max_bin`` budget, and the mapping of feature values to
``uint8`` bins, as a bin matrix of either layout (``gbm.bins``).

Edges (``feature_cuts``, ``gbm.bins.cuts``): a feature with at most ``max_bin`` distinct
values gets one bin per value. Otherwise each value holding at least a bin's share of the
weight (a point mass: a round value, zero, a cap) gets a bin of its own, and the other bins
follow the weight of the other values, so that a feature gets ``max_bin`` bins (weighted
quantiles alone collapse onto repeated values and leave bins unused). Each cut lies halfway
between the two adjacent training values it separates, so an unseen value between them
goes to the nearer one. A sparse matrix's features get the cuts of their stored values,
which are the non-missing values of its dense form: the same cuts.

Bin edges depend only on the data, the weights and the seed, never on how rows are split
among threads, chunks or workers:

* up to ``sample_size`` rows, the edges come from all rows;
* above it, from the rows whose hash of (seed, global row index) falls below
  ``sample_size / n_rows`` of the hash range: the same rows wherever they live;
* ``feature_cuts`` depends only on the multiset of (value, weight) pairs, not their order.

Layout of one feature with ``n`` value bins (``cuts`` holds ``n - 1`` increasing values)::

    bin:    0          1                 n-1          n
    value:  x < c[0] | c[0] <= x < c[1] | ... | x >= c[n-2] | NaN (missing)

so "bin <= b goes left" is exactly "x < cuts[b]": XGBoost's ``split_condition``. With
``max_bin <= 256`` bins are ``uint8``: a feature that holds missing values keeps at most 255
value bins so that its missing bin still fits in one byte; a feature with no missing values
may use all 256 (its missing bin, 256, is then never stored and reads as an empty histogram
slot). Above 256 bins (``max_bin`` up to 1,024, or a categorical feature with more than 256
categories) the whole matrix is ``uint16``, and only a feature with all 65,536 codes is left
without a missing bin (gbm.data.categorical refuses missing values there).
"""
import contextlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..collective import LOCAL
from ..data.inputs import is_device_array, to_host
from ..data.sparse import SparseMatrix, from_dense
from ..kernels.hashing import splitmix64
from .bundled import BundledBins
from .csr import CsrBins
from .dense import DenseBins
from .bundling import code_slots
from .cuts import cut_midpoints, feature_cuts

BIN_DTYPE = np.uint8  # 256 symbols: a quarter of float32's memory traffic per cell
WIDE_BIN_DTYPE = np.uint16  # for a feature with more than 256 bins (one slot is missing)


_BLOCK_ROWS = 1 << 16  # rows tested for missing values at a time: a bounded temporary


def missing_columns(X):
    """bool (n_features,): which columns of a 2-d NumPy array hold NaN, block by block
    of rows (no boolean copy of the whole matrix)."""
    out = np.zeros(X.shape[1], dtype=bool)
    for lo in range(0, X.shape[0], _BLOCK_ROWS):
        nan = np.isnan(X[lo:lo + _BLOCK_ROWS])
        # the block as a whole first: a contiguous reduction, where the per-column one
        # strides across the rows (rows-50k: 0.74 -> 0.08 ms); columns only when it has NaN
        if nan.any():
            out |= nan.any(axis=0)
    return out


_POOLS = {}  # thread count -> ThreadPoolExecutor: the features' cuts' threads, kept
_POOLS_LOCK = threading.Lock()
os.register_at_fork(after_in_child=_POOLS.clear)  # a forked child starts its own


@contextlib.contextmanager
def _cut_threads(n_threads):
    """A pool of ``n_threads`` threads kept for the process (yielded; not shut down).

    A thread's freed memory stays with its own malloc arena (glibc keeps an arena's top,
    and ``malloc_trim`` does not return it): threads made for each fit took fresh arenas
    whenever Numba's threads had taken the last fit's, and a fit grew by their size (10
    MB on 200,000 rows). The same threads each fit reuse the same arenas."""
    n = max(1, int(n_threads))
    with _POOLS_LOCK:
        pool = _POOLS.get(n)
        if pool is None:
            pool = _POOLS[n] = ThreadPoolExecutor(max_workers=n, thread_name_prefix="gbm-cuts")
    yield pool


def _equal_positive(w):
    """Whether every weight of ``w`` (float64, host) is the same positive number: the
    cuts are then those of unweighted values."""
    return w.size > 0 and w[0] > 0 and w.min() == w.max()


def _as_ids(rows):
    """int64 (n,): row ids given as an array or a ``range``."""
    return np.arange(rows.start, rows.stop) if isinstance(rows, range) else np.asarray(rows)


def sample_mask(row_ids, n_rows_total, sample_size, seed):
    """Which of the global rows ``row_ids`` belong to the binning sample.

    A row is in the sample when its hash of (seed, row id) is below
    ``sample_size / n_rows_total`` of the 64-bit range, so the choice of one row never
    depends on any other row or on where it is stored.
    """
    if n_rows_total <= sample_size:
        return np.ones(len(row_ids), dtype=bool)
    key = splitmix64(np.uint64(seed) ^ np.uint64(0x5DEECE66D))
    limit = np.uint64(int(sample_size / n_rows_total * 2.0**64))
    out = np.empty(len(row_ids), dtype=bool)
    # block by block: the hash's uint64 temporaries are a block's, not 40 bytes a row
    for lo in range(0, out.shape[0], _BLOCK_ROWS):
        block = row_ids[lo:lo + _BLOCK_ROWS]  # a range's slice is a range
        ids = (np.arange(block.start, block.stop, dtype=np.uint64) if isinstance(block, range)
               else np.asarray(block, dtype=np.uint64))
        np.less(splitmix64(ids ^ key), limit, out=out[lo:lo + _BLOCK_ROWS])
    return out


class RaggedCuts(Sequence):
    """Every feature's cuts in one array: a sequence of float32 arrays (``cuts[f]`` is a
    view), without a Python object per feature (a million features' cuts are a few
    megabytes, not a list of a million arrays).

    values : float32 (n_cuts,); offsets : int64 (n_features + 1,), feature ``f``'s cuts
    are ``values[offsets[f]:offsets[f + 1]]``
    """

    def __init__(self, values, offsets):
        self.values = np.asarray(values, dtype=np.float32)
        self.offsets = np.asarray(offsets, dtype=np.int64)

    @classmethod
    def of(cls, cuts):
        """``cuts`` (a sequence of arrays) as ``RaggedCuts``."""
        if isinstance(cuts, RaggedCuts):
            return cuts
        sizes = [np.size(c) for c in cuts]
        values = (np.concatenate([np.asarray(c, np.float32).ravel() for c in cuts])
                  if cuts else np.zeros(0, np.float32))
        return cls(values, np.concatenate(([0], np.cumsum(sizes))))

    def __len__(self):
        return self.offsets.shape[0] - 1

    def __getitem__(self, f):
        if isinstance(f, slice):
            return [self[i] for i in range(*f.indices(len(self)))]
        f = range(len(self))[f]  # negative indices, and IndexError past the end
        return self.values[self.offsets[f]:self.offsets[f + 1]]

    def sizes(self):
        """int64 (n_features,): each feature's number of cuts."""
        return np.diff(self.offsets)


class BinMapper:
    """Learns per-feature cut points and maps feature values to bins.

    Attributes (after ``fit``)
    --------------------------
    cuts : RaggedCuts (a sequence of float32 arrays), one per feature
    n_bins : ndarray of int32, shape (n_features,)
        Value bins per feature (``len(cuts[f]) + 1``); also the feature's missing bin.
    """

    def __init__(self, max_bin=256, sample_size=200_000, seed=0):
        self.max_bin = max_bin
        self.sample_size = sample_size
        self.seed = seed

    def fit(self, X, sample_weight=None, row_offset=0, n_rows_total=None, n_threads=1,
            n_categories=None, row_ids=None, collective=LOCAL):
        """Learn cuts from ``X`` (float32, NaN = missing; or a ``SparseMatrix``, whose
        absent entries are missing: the same cuts as its dense form).

        ``row_offset`` (or ``row_ids``, int64 (n,): each row's index in the whole data
        set) and ``n_rows_total`` place these rows in a larger data set, so a shard binned
        alone selects the same sample rows as the whole; with a ``collective`` the ranks
        gather their sample rows (ordered by row id) and all learn the same cuts.
        ``n_categories``: int (n_features,), optional; ``>= 0`` marks a categorical
        feature holding codes ``0 .. n - 1`` (gbm.data.categorical): its cuts put code ``c``
        in bin ``c``, whatever ``max_bin``.
        """
        n, n_features = X.shape
        if n_rows_total is None:
            n_rows_total = int(collective.allreduce(np.array([n], dtype=np.int64), "sum")[0])
        w = np.ones(n) if sample_weight is None else sample_weight
        # the rows' ids: a range unless given (no array of 8 bytes a row to hash them)
        rows = range(row_offset, row_offset + n) if row_ids is None else row_ids
        mask = sample_mask(rows, n_rows_total, self.sample_size, self.seed)
        if isinstance(X, SparseMatrix):
            return self._fit_sparse(X, w, rows, mask, n_threads, n_categories, collective)
        # one rank on the CPU: each feature's sample is taken from X when its cuts are
        # made, not from a copy of the sample matrix (a fit's largest temporary after X)
        local = collective.world_size == 1 and not is_device_array(X)
        everything = bool(mask.all())
        if local:
            Xs = None
            local_missing = missing_columns(X)
        elif is_device_array(X):  # a GPU matrix: only the sample rows come to the host
            import cupy

            Xs = to_host(X[cupy.asarray(mask)])
            local_missing = to_host(cupy.isnan(X).any(axis=0))
        else:
            Xs = X[mask]
            local_missing = missing_columns(X)
        ws = None if local and _equal_positive(w) else w if everything else w[mask]
        has_missing = collective.allreduce(local_missing.astype(np.uint8), "max")
        if collective.world_size > 1:  # the sample of the whole data set, in row order
            parts = collective.allgather((_as_ids(rows)[mask], Xs, ws))
            order = np.argsort(np.concatenate([p[0] for p in parts]), kind="stable")
            Xs = np.concatenate([p[1] for p in parts])[order]
            ws = np.concatenate([p[2] for p in parts])[order]
            ws = None if _equal_positive(ws) else ws

        def cuts_of(f):
            if Xs is not None:
                col = Xs[:, f]
            else:
                col = X[:, f] if everything else X[:, f][mask]
            return self._feature_cuts(col, ws, has_missing[f],
                                      None if n_categories is None else n_categories[f])

        # NumPy's sorts release the GIL: features are cut in parallel threads. Over several
        # ranks each cuts every world_size-th feature of the (same) gathered sample, and
        # the ranks swap their cuts: the same cuts, for a share of the work.
        world, rank = collective.world_size, collective.rank
        with _cut_threads(n_threads) as pool:
            mine = list(pool.map(cuts_of, range(rank, n_features, world)))
        if world > 1:
            shares = collective.allgather(mine)
            mine = [shares[f % world][f // world] for f in range(n_features)]
        self.cuts = RaggedCuts.of(mine)
        self._set_layout(has_missing)
        self.sample = Xs  # the (gathered) sample rows: what bundles are proposed from
        self._sample_mask = mask if Xs is None else None  # sample_of(X) takes them
        return self

    def _feature_cuts(self, col, ws, has_missing, n_categories):
        """One feature's cuts from its sample column ``col`` (float32, NaN = missing) and
        the sample's weights ``ws``; ``has_missing``: whether any training row of the
        feature is missing; ``n_categories`` >= 0: a categorical feature's code count."""
        if n_categories is not None and n_categories >= 0:
            return np.arange(1, max(1, n_categories), dtype=np.float32)
        narrow = has_missing and self.max_bin <= 256  # the missing bin fits a uint8
        limit = min(self.max_bin, 255) if narrow else self.max_bin
        if ws is None:  # equal weights: NaN left out by feature_cuts, no copies of w
            return feature_cuts(col, None, limit)
        ok = ~np.isnan(col)
        return feature_cuts(col[ok], ws[ok], limit)

    def fit_sample(self, Xs, ws, has_missing, n_categories=None, n_threads=1):
        """Learn cuts from the binning sample alone: ``Xs`` float32 (n_sample, n_features)
        the sample rows (those ``sample_mask`` chose, in row order), ``ws`` float64
        (n_sample,) their weights, ``has_missing`` (n_features,) whether any row of the
        whole data set is missing there (``n_categories`` as ``fit``'s). The cuts ``fit``
        learns from the whole data set, when it is streamed (``gbm.bins.streaming``)."""
        has_missing = np.asarray(has_missing, np.uint8)
        with ThreadPoolExecutor(max_workers=max(1, n_threads)) as pool:
            cuts = list(pool.map(lambda f: self._feature_cuts(
                Xs[:, f], ws, has_missing[f], None if n_categories is None
                else n_categories[f]), range(Xs.shape[1])))
        self.cuts = RaggedCuts.of(cuts)
        self._set_layout(has_missing)
        self.sample, self._sample_mask = Xs, None
        return self

    def sample_of(self, X):
        """The binning sample's rows, what bundles are proposed from: those ``fit`` kept
        (gathered from several ranks, or sparse), else taken now from ``X``, the matrix
        ``fit`` saw (one rank's dense rows are not copied unless bundling asks)."""
        mask = getattr(self, "_sample_mask", None)
        if self.sample is not None or mask is None:
            return self.sample
        return X if mask.all() else X[mask]

    def _fit_sparse(self, X, w, rows, mask, n_threads, n_categories, collective):
        """``fit`` for a ``SparseMatrix``: the stored values of the sample rows give each
        feature the multiset of values (and weights) its dense form's non-missing sample
        values are, so ``feature_cuts`` gives the same cuts. Features whose distinct
        values each get a bin (most of a wide sparse matrix's) are cut all at once."""
        Xs, ws = (X, w) if mask.all() else (X.take_rows(mask), w[mask])
        has_missing = collective.allreduce(
            (X.stored_per_feature() < X.shape[0]).astype(np.uint8), "max")
        if collective.world_size > 1:  # the sample of the whole data set, in row order
            parts = collective.allgather((_as_ids(rows)[mask], Xs, ws))
            order = np.argsort(np.concatenate([p[0] for p in parts]), kind="stable")
            Xs = SparseMatrix.concatenate([p[1] for p in parts], X.shape[1]).take_rows(order)
            ws = np.concatenate([p[2] for p in parts])[order]
        self.cuts = _sparse_cuts(Xs, ws, self._limits(has_missing), n_categories, n_threads)
        self._set_layout(has_missing)
        self.sample, self._sample_mask = Xs, None
        return self

    def _limits(self, has_missing):
        """int64 (n_features,): most value bins per feature (255 for a feature with missing
        values when bins are bytes: its missing bin must fit)."""
        narrow = (np.asarray(has_missing) == 1) & (self.max_bin <= 256)
        return np.where(narrow, min(self.max_bin, 255), self.max_bin).astype(np.int64)

    def _set_layout(self, has_missing=None):
        """``n_bins``, the histogram layout and the bins' dtype, from ``cuts``;
        ``has_missing`` (per feature, optional): which features' training rows hold
        missing values, whose missing bin must be stored."""
        self.n_bins = (RaggedCuts.of(self.cuts).sizes() + 1).astype(np.int32)
        largest = self.n_bins.max(initial=1)
        if has_missing is not None:  # a missing bin 256 (256 categories, or max_bin > 256)
            largest = max(largest, (self.n_bins + 1)[np.asarray(has_missing, bool)].max(initial=1))
        self.bin_dtype = BIN_DTYPE if largest <= 256 else WIDE_BIN_DTYPE

    @property
    def feature_offsets(self):
        """int32 (n_features + 1,): a dense bin matrix's histogram layout, each feature's
        value bins then its missing slot (made when read: not held through a fit)."""
        return np.concatenate(([0], np.cumsum(self.n_bins + 1))).astype(np.int32)

    def padded_cuts(self):
        """float32 (n_features, width): each feature's cuts, then +inf; ``width`` a power
        of two >= 256 and >= every feature's bin count (the binning kernel's fixed search)."""
        width = max(256, 1 << max(1, int(self.n_bins.max(initial=1)) - 1).bit_length())
        padded = np.full((len(self.cuts), width), np.inf, dtype=np.float32)
        cuts = RaggedCuts.of(self.cuts)
        sizes = cuts.sizes()
        rows = np.repeat(np.arange(len(cuts)), sizes)
        padded[rows, np.arange(cuts.values.size) - np.repeat(cuts.offsets[:-1], sizes)] = \
            cuts.values
        return padded

    @classmethod
    def from_cuts(cls, cuts, max_bin=256):
        mapper = cls(max_bin=max_bin)
        mapper.cuts = RaggedCuts.of(cuts)
        mapper._set_layout()  # uint8 up to 256 value bins: transform refuses a missing bin 256
        return mapper

    def transform(self, X, kernels=None, xp=np, fitted_on_X=False):
        """Bins of ``X``: uint8 (uint16 when a feature has more than 256 bins), shape
        (n_samples, n_features), C order; with ``xp`` (the backend's array module, CuPy on a
        GPU) and ``kernels`` (its kernels) the bins are made and kept where ``xp`` lives.

        A value is placed by its position among the cuts; NaN goes to the missing bin
        ``n_bins[f]``. A feature that had no missing values at fit and as many value bins
        as the dtype has symbols (256 in uint8, 65,536 in uint16) cannot store a missing
        bin: such rows are rejected (``fitted_on_X``: X is the data ``fit`` saw, which
        cannot hold such rows).
        """
        if kernels is None:
            from ..kernels import cpu as kernels
        if not fitted_on_X:
            largest = np.iinfo(self.bin_dtype).max
            stored = X.stored_per_feature() if isinstance(X, SparseMatrix) else None
            for f in np.flatnonzero(self.n_bins > largest):
                if (stored[f] < X.shape[0]) if stored is not None else np.isnan(X[:, f]).any():
                    raise ValueError(
                        f"feature {f} has missing values here but had none when the bins were "
                        f"learned with {largest + 1} value bins; bin it together with the "
                        "training data")
        if isinstance(X, SparseMatrix):  # missing bins, then the stored entries' bins
            out = xp.asarray(np.repeat(self.n_bins[None, :].astype(self.bin_dtype),
                                       X.shape[0], axis=0))
            stored = self._slots(X, kernels, xp, np.zeros(X.shape[1] + 1, np.int32))
            out[xp.asarray(X.row_of_entries()), xp.asarray(X.indices)] = stored
            return out
        out = xp.empty(X.shape, dtype=self.bin_dtype)
        X = xp.ascontiguousarray(xp.asarray(X), dtype=np.float32)
        kernels.bin_values(X, self.padded_cuts(), self.n_bins, out)
        return out

    def _slots(self, X, kernels, xp, feature_offsets):
        """int32 (nnz,) on ``xp``: each stored entry of ``X`` (a ``SparseMatrix``) placed
        among its feature's slots ``feature_offsets[f] + bin``."""
        cuts = RaggedCuts.of(self.cuts)
        out = xp.empty(X.nnz, dtype=np.int32)
        kernels.bin_values_csr(xp.asarray(X.indptr), xp.asarray(X.indices), xp.asarray(X.data),
                               xp.asarray(cuts.values), xp.asarray(cuts.offsets),
                               xp.asarray(feature_offsets), out)
        return out

    def bin_matrix(self, X, layout, kernels=None, xp=np, fitted_on_X=False, bundles=None):
        """``X`` binned as a bin matrix (``gbm.bins``) of ``layout``, on ``xp``'s
        device: "dense" (``DenseBins``, as ``transform``), "sparse" (``CsrBins`` of the
        non-missing entries, whatever the input's own layout) or "bundled"
        (``BundledBins`` of ``bundles``, ``gbm.bins.bundling.Bundles`` found on ``X``)."""
        if kernels is None:
            from ..kernels import cpu as kernels
        if layout == "dense":
            bins = self.transform(X, kernels, xp, fitted_on_X)
            return DenseBins(bins, xp.ascontiguousarray(bins.T), self.n_bins)
        if layout not in ("sparse", "bundled"):
            raise ValueError(f"unknown bin layout {layout!r}")
        if not isinstance(X, SparseMatrix):
            X = from_dense(to_host(X))
        offsets = np.concatenate(([0], np.cumsum(self.n_bins))).astype(np.int64)
        if offsets[-1] > np.iinfo(np.int32).max:
            raise ValueError(f"the features have {int(offsets[-1])} value bins in all; a sparse "
                             f"bin matrix holds at most {np.iinfo(np.int32).max}: lower max_bin")
        offsets = offsets.astype(np.int32)
        if layout == "sparse":
            return CsrBins(xp.asarray(X.indptr), self._slots(X, kernels, xp, offsets), offsets)
        return _bundled(X, bundles, offsets, self._slots(X, kernels, np, np.zeros_like(offsets)),
                        xp)


def _bundled(X, bundles, offsets, bins, xp):
    """``BundledBins`` of the stored entries of ``X`` (their value ``bins``, int32 (nnz,))
    in ``bundles``: each entry's code at (its row, its feature's bundle). The bundles are
    exactly exclusive (checked on every row), so no two entries share a cell."""
    dtype = np.uint8 if bundles.widths.max(initial=1) <= 256 else np.uint16
    codes = np.zeros((X.shape[0], bundles.n_bundles), dtype=dtype)
    codes[X.row_of_entries(), bundles.bundle_of[X.indices]] = \
        bundles.feature_code[X.indices] + bins
    code_slot, code_base = code_slots(bundles, offsets)
    return BundledBins(xp.asarray(codes), xp.ascontiguousarray(xp.asarray(codes.T)),
                       xp.asarray(code_slot), xp.asarray(code_base),
                       xp.asarray(bundles.bundle_of), xp.asarray(bundles.feature_code),
                       offsets)


_CUT_CHUNK = 1 << 19  # stored entries a pass of _sparse_cuts takes (features in runs)


def _sparse_cuts(Xs, ws, limits, n_categories, n_threads):
    """``RaggedCuts`` of every feature from the stored entries of the sample rows ``Xs``
    (a ``SparseMatrix``) and the rows' weights ``ws``, equal to ``feature_cuts`` of each
    feature's values (its dense column's non-missing ones) with at most ``limits[f]``
    bins; categorical features (``n_categories[f] >= 0``) get the cuts of their codes.

    A feature with at most ``limits[f]`` distinct values (weight > 0) gets a cut halfway
    between each two adjacent ones (``feature_cuts``' exact bins): all such features at
    once, from the sorted distinct (feature, value) pairs. The others go through
    ``feature_cuts`` one by one. Runs of features of about ``_CUT_CHUNK`` entries are
    taken in turn, so the working memory is a run's, not the sample's.
    """
    n_features = Xs.shape[1]
    categorical = (np.zeros(n_features, bool) if n_categories is None
                   else np.asarray(n_categories) >= 0)
    # equal positive weights: every entry counts once (feature_cuts' unweighted case)
    uniform = ws.shape[0] == 0 or (ws[0] > 0 and bool((ws == ws[0]).all()))
    counts = np.cumsum(Xs.stored_per_feature())
    ends = np.unique(np.searchsorted(counts, np.arange(1, counts[-1] // _CUT_CHUNK + 1)
                                     * _CUT_CHUNK if counts.size else [], side="right"))
    bounds = np.unique(np.concatenate(([0], ends, [n_features])))
    cut_feature, cut_values = [], []
    with _cut_threads(n_threads) as pool:
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            run_f, run_v = _run_cuts(Xs, ws, uniform, lo, hi, limits, categorical, pool)
            cut_feature += run_f
            cut_values += run_v
    for f in np.flatnonzero(categorical):  # code c in bin c
        cuts = np.arange(1, max(1, n_categories[f]), dtype=np.float32)
        cut_feature.append(np.full(cuts.size, f, dtype=np.int64))
        cut_values.append(cuts)
    cut_feature = np.concatenate(cut_feature) if cut_feature else np.zeros(0, np.int64)
    cut_values = np.concatenate(cut_values) if cut_values else np.zeros(0, np.float32)
    order = np.argsort(cut_feature, kind="stable")  # each feature's cuts stay increasing
    offsets = np.concatenate(([0], np.cumsum(np.bincount(cut_feature, minlength=n_features))))
    return RaggedCuts(cut_values[order], offsets)


def _entries_of(indices, lo, hi):
    """int64: the positions of the entries of features ``lo .. hi - 1`` in ``indices``,
    found a block of entries at a time (masks of a block, not of every entry)."""
    found = []
    for b in range(0, indices.shape[0], _CUT_CHUNK):
        block = indices[b:b + _CUT_CHUNK]
        found.append(np.flatnonzero((block >= lo) & (block < hi)) + b)
    return np.concatenate(found) if found else np.zeros(0, np.int64)


def _run_cuts(Xs, ws, uniform, lo, hi, limits, categorical, pool):
    """Features ``lo .. hi - 1``'s cuts, as lists of (feature ids, cuts) arrays."""
    at = _entries_of(Xs.indices, lo, hi)
    features = Xs.indices[at]
    values = Xs.data[at] + np.float32(0.0)  # -0.0 as 0.0, as feature_cuts does
    weights = None
    if not uniform:
        weights = ws[np.searchsorted(Xs.indptr, at, side="right") - 1]
        keep = weights > 0
        features, values, weights = features[keep], values[keep], weights[keep]
    # (feature, value) as one sortable integer: the feature above the value's bits, the
    # bits of a negative float flipped so that integers order as the floats do
    bits = values.view(np.uint32)
    bits = np.where(bits >> np.uint32(31), ~bits, bits | np.uint32(1 << 31))
    pairs = np.unique((features.astype(np.uint64) << np.uint64(32)) | bits.astype(np.uint64))
    pair_feature = (pairs >> np.uint64(32)).astype(np.int64)
    low = (pairs & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    distinct = np.where(low >> np.uint32(31), low & np.uint32(0x7FFFFFFF), ~low).view(np.float32)
    n_distinct = np.bincount(pair_feature - lo, minlength=hi - lo)
    exact = (n_distinct <= limits[lo:hi]) & ~categorical[lo:hi]
    # a cut between each two adjacent distinct values of an exact feature
    starts = np.flatnonzero((pair_feature[1:] == pair_feature[:-1])
                            & exact[pair_feature[1:] - lo]) + 1
    cut_feature, cut_values = [pair_feature[starts]], [cut_midpoints(distinct, starts)]
    others = lo + np.flatnonzero(~exact & ~categorical[lo:hi])
    if others.size:  # feature_cuts on each of their value (and weight) multisets
        own = np.flatnonzero(~exact[features - lo] & ~categorical[features])
        own = own[np.argsort(features[own], kind="stable")]
        edges = np.searchsorted(features[own], np.append(others, hi))

        def cuts_of(i):
            mine = own[edges[i]:edges[i + 1]]
            w = np.ones(mine.size) if weights is None else weights[mine]
            return feature_cuts(values[mine], w, int(limits[others[i]]))

        for f, cuts in zip(others, pool.map(cuts_of, range(others.size))):
            cut_feature.append(np.full(cuts.size, f, dtype=np.int64))
            cut_values.append(cuts)
    return cut_feature, cut_values
