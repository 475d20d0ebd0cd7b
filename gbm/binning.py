"""Bin edges from weighted quantiles, and the mapping of feature values to ``uint8`` bins.

Bin edges depend only on the data, the weights and the seed, never on how rows are split
among threads, chunks or workers:

* up to ``sample_size`` rows, the quantiles are exact over all rows;
* above it, over the rows whose hash of (seed, global row index) falls below
  ``sample_size / n_rows`` of the hash range: the same rows wherever they live.

Layout of one feature with ``n`` value bins (``cuts`` holds ``n - 1`` increasing values)::

    bin:    0          1                 n-1          n
    value:  x < c[0] | c[0] <= x < c[1] | ... | x >= c[n-2] | NaN (missing)

so "bin <= b goes left" is exactly "x < cuts[b]": XGBoost's ``split_condition``. A feature
that holds missing values keeps at most 255 value bins so that its missing bin still fits
in one byte; a feature with no missing values may use all 256 (its missing bin, 256, is then
never stored and reads as an empty histogram slot).
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .collective import LOCAL
from .data import is_device_array, to_host
from .kernels.hashing import splitmix64

BIN_DTYPE = np.uint8  # 256 symbols: a quarter of float32's memory traffic per cell
WIDE_BIN_DTYPE = np.uint16  # for a feature with more than 256 bins (one slot is missing)


def sample_mask(row_ids, n_rows_total, sample_size, seed):
    """Which of the global rows ``row_ids`` belong to the binning sample.

    A row is in the sample when its hash of (seed, row id) is below
    ``sample_size / n_rows_total`` of the 64-bit range, so the choice of one row never
    depends on any other row or on where it is stored.
    """
    row_ids = np.asarray(row_ids, dtype=np.uint64)
    if n_rows_total <= sample_size:
        return np.ones(row_ids.shape[0], dtype=bool)
    key = splitmix64(np.uint64(seed) ^ np.uint64(0x5DEECE66D))
    h = splitmix64(row_ids ^ key)
    limit = np.uint64(int(sample_size / n_rows_total * 2.0**64))
    return h < limit


def feature_cuts(values, weights, max_bin):
    """Cut points of one feature from its non-missing sampled values and weights.

    Parameters
    ----------
    values : ndarray of float32, shape (m,)
        Non-missing values (any order).
    weights : ndarray of float64, shape (m,)
    max_bin : int
        Most value bins; the result has at most ``max_bin - 1`` cuts.

    Returns
    -------
    ndarray of float32, strictly increasing. Empty for a constant or empty column.
    """
    keep = weights > 0
    values, weights = values[keep], weights[keep]
    if values.size == 0:
        return np.empty(0, dtype=np.float32)
    if weights[0] == weights.min() == weights.max():
        values = np.sort(values)  # equal weights: no need to carry them through a sort
        weights = np.broadcast_to(weights[:1], values.shape)
    else:
        order = np.argsort(values, kind="stable")
        values, weights = values[order], weights[order]
    first = np.empty(values.size, dtype=bool)  # first row of each distinct value
    first[0] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    start = np.flatnonzero(first)
    distinct = values[start]
    if distinct.size <= max_bin:
        # Exact bins: every distinct value but the smallest opens a bin.
        return distinct[1:].astype(np.float32)
    w_distinct = np.add.reduceat(weights, start)
    before = np.concatenate(([0.0], np.cumsum(w_distinct)[:-1]))  # weight strictly below
    total = before[-1] + w_distinct[-1]
    targets = total * np.arange(1, max_bin) / max_bin
    # A cut at the first distinct value with at least `target` weight below it.
    idx = np.searchsorted(before, targets, side="left")
    idx = np.unique(idx[(idx > 0) & (idx < distinct.size)])
    return distinct[idx].astype(np.float32)


class BinMapper:
    """Learns per-feature cut points and maps feature values to bins.

    Attributes (after ``fit``)
    --------------------------
    cuts : list of ndarray of float32, one per feature
    n_bins : ndarray of int32, shape (n_features,)
        Value bins per feature (``len(cuts[f]) + 1``); also the feature's missing bin.
    """

    def __init__(self, max_bin=256, sample_size=200_000, seed=0):
        self.max_bin = max_bin
        self.sample_size = sample_size
        self.seed = seed

    def fit(self, X, sample_weight=None, row_offset=0, n_rows_total=None, n_threads=1,
            n_categories=None, row_ids=None, collective=LOCAL):
        """Learn cuts from ``X`` (float32, NaN = missing).

        ``row_offset`` (or ``row_ids``, int64 (n,): each row's index in the whole data
        set) and ``n_rows_total`` place these rows in a larger data set, so a shard binned
        alone selects the same sample rows as the whole; with a ``collective`` the ranks
        gather their sample rows (ordered by row id) and all learn the same cuts.
        ``n_categories``: int (n_features,), optional; ``>= 0`` marks a categorical
        feature holding codes ``0 .. n - 1`` (gbm.categorical): its cuts put code ``c``
        in bin ``c``, whatever ``max_bin``.
        """
        n, n_features = X.shape
        if n_rows_total is None:
            n_rows_total = int(collective.allreduce(np.array([n], dtype=np.int64), "sum")[0])
        w = np.ones(n) if sample_weight is None else sample_weight
        rows = np.arange(row_offset, row_offset + n) if row_ids is None else row_ids
        mask = sample_mask(rows, n_rows_total, self.sample_size, self.seed)
        if is_device_array(X):  # a GPU matrix: only the sample rows come to the host
            import cupy

            Xs = to_host(X[cupy.asarray(mask)])
            local_missing = to_host(cupy.isnan(X).any(axis=0))
        else:
            Xs = X[mask]
            local_missing = np.isnan(X).any(axis=0)
        ws = w[mask]
        has_missing = collective.allreduce(local_missing.astype(np.uint8), "max")
        if collective.world_size > 1:  # the sample of the whole data set, in row order
            parts = collective.allgather((rows[mask], Xs, ws))
            order = np.argsort(np.concatenate([p[0] for p in parts]), kind="stable")
            Xs = np.concatenate([p[1] for p in parts])[order]
            ws = np.concatenate([p[2] for p in parts])[order]

        def cuts_of(f):
            if n_categories is not None and n_categories[f] >= 0:
                return np.arange(1, max(1, n_categories[f]), dtype=np.float32)
            col = Xs[:, f]
            ok = ~np.isnan(col)
            limit = min(self.max_bin, 255) if has_missing[f] else self.max_bin
            return feature_cuts(col[ok], ws[ok], limit)

        # NumPy's sorts release the GIL: features are cut in parallel threads.
        with ThreadPoolExecutor(max_workers=max(1, n_threads)) as pool:
            self.cuts = list(pool.map(cuts_of, range(n_features)))
        self._set_layout()
        return self

    def _set_layout(self):
        """``n_bins``, the histogram layout and the bins' dtype, from ``cuts``."""
        self.n_bins = np.array([c.size + 1 for c in self.cuts], dtype=np.int32)
        self.feature_offsets = np.concatenate(([0], np.cumsum(self.n_bins + 1))).astype(np.int32)
        self.bin_dtype = BIN_DTYPE if self.n_bins.max(initial=1) <= 256 else WIDE_BIN_DTYPE

    def padded_cuts(self):
        """float32 (n_features, width): each feature's cuts, then +inf; ``width`` a power
        of two >= every feature's bin count (the binning kernel's fixed search)."""
        width = 1 << max(1, int(self.n_bins.max(initial=1)) - 1).bit_length()
        padded = np.full((len(self.cuts), width), np.inf, dtype=np.float32)
        for f, cuts in enumerate(self.cuts):
            padded[f, :cuts.size] = cuts
        return padded

    @classmethod
    def from_cuts(cls, cuts, max_bin=256):
        mapper = cls(max_bin=max_bin)
        mapper.cuts = [np.asarray(c, dtype=np.float32) for c in cuts]
        mapper._set_layout()
        return mapper

    def transform(self, X, kernels=None, xp=np):
        """Bins of ``X``: uint8 (uint16 when a feature has more than 256 bins), shape
        (n_samples, n_features), C order; with ``xp`` (the backend's array module, CuPy on a
        GPU) and ``kernels`` (its kernels) the bins are made and kept where ``xp`` lives.

        A value is placed by its position among the cuts; NaN goes to the missing bin
        ``n_bins[f]``. A feature that had no missing values at fit and 256 value bins
        cannot store a missing bin in a byte: such rows are rejected.
        """
        if kernels is None:
            from .kernels import cpu as kernels
        if self.bin_dtype == BIN_DTYPE:
            for f in np.flatnonzero(self.n_bins > 255):
                if np.isnan(X[:, f]).any():
                    raise ValueError(
                        f"feature {f} has missing values here but had none when the bins were "
                        "learned with 256 value bins; bin it together with the training data"
                    )
        out = xp.empty(X.shape, dtype=self.bin_dtype)
        X = xp.ascontiguousarray(xp.asarray(X), dtype=np.float32)
        kernels.bin_values(X, self.padded_cuts(), self.n_bins, out)
        return out

    def fit_transform(self, X, sample_weight=None):
        return self.fit(X, sample_weight).transform(X)
