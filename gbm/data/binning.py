"""Bin edges that spend the whole ``max_bin`` budget, and the mapping of feature values to
``uint8`` bins.

Edges (``feature_cuts``): a feature with at most ``max_bin`` distinct values gets one bin
per value. Otherwise each value holding at least a bin's share of the weight (a point mass:
a round value, zero, a cap) gets a bin of its own, and the other bins follow the weight of
the other values, so that a feature gets ``max_bin`` bins (weighted quantiles alone collapse
onto repeated values and leave bins unused). Each cut lies halfway between the two adjacent
training values it separates, so an unseen value between them goes to the nearer one.

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
import heapq
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..collective import LOCAL
from .inputs import is_device_array, to_host
from ..kernels.hashing import splitmix64

BIN_DTYPE = np.uint8  # 256 symbols: a quarter of float32's memory traffic per cell
WIDE_BIN_DTYPE = np.uint16  # for a feature with more than 256 bins (one slot is missing)


_BLOCK_ROWS = 1 << 16  # rows tested for missing values at a time: a bounded temporary


def _missing_columns(X):
    """bool (n_features,): which columns of a 2-d NumPy array hold NaN, block by block
    of rows (no boolean copy of the whole matrix)."""
    out = np.zeros(X.shape[1], dtype=bool)
    for lo in range(0, X.shape[0], _BLOCK_ROWS):
        out |= np.isnan(X[lo:lo + _BLOCK_ROWS]).any(axis=0)
    return out


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

    The distinct values are split into ``min(max_bin, n_distinct)`` bins, so the whole
    budget is spent (see ``_bin_starts``); each cut lies halfway between the two adjacent
    distinct values it separates (see ``_midpoints``). The result depends only on the
    multiset of (value, weight) pairs: not on their order, hence not on threads, chunks or
    workers. Rows with zero weight are ignored.

    Parameters
    ----------
    values : ndarray of float32, shape (m,)
        Non-missing values (any order).
    weights : ndarray of float64, shape (m,)
        Non-negative weights of ``values``.
    max_bin : int
        Most value bins; the result has at most ``max_bin - 1`` cuts.

    Returns
    -------
    ndarray of float32, shape (min(max_bin, n_distinct) - 1,), strictly increasing. Empty
    for a constant or empty column.
    """
    values = np.asarray(values, dtype=np.float32)
    weights = np.asarray(weights, dtype=np.float64)
    keep = weights > 0
    # + 0.0 turns -0.0 into 0.0: the two compare equal, and which one a distinct value
    # would show must not depend on row order.
    values, weights = values[keep] + np.float32(0.0), weights[keep]
    if values.size == 0:
        return np.empty(0, dtype=np.float32)
    distinct, mass = _distinct_values(values, weights)
    if distinct.size <= max_bin:
        starts = np.arange(1, distinct.size)  # exact bins: one per distinct value
    else:
        starts = _bin_starts(mass, max_bin)
    return _midpoints(distinct, starts)


def _distinct_values(values, weights):
    """Sorted distinct values and their weights: float32 (k,), float64 (k,).

    The weights are whole numbers, so that every sum of them (per value, cumulative) is
    exact in float64 and cannot depend on the order of the rows: equal weights become
    row counts; others are scaled by a power of two that puts the total below ``2**52``
    and rounded up (a relative change below ``n * 2**-52`` of the largest weight; no
    positive weight becomes zero). The idea of gbm's fixed-point gradients.
    """
    if weights[0] == weights.min() == weights.max():
        values, units = np.sort(values), None
    else:
        # n * max < 2**(e_n + e_max), without forming the product (it could overflow)
        exponent = np.frexp(float(weights.size))[1] + np.frexp(weights.max())[1]
        units = np.ceil(np.ldexp(weights, 52 - exponent))
        order = np.argsort(values)
        values, units = values[order], units[order]
    first = np.empty(values.size, dtype=bool)  # first row of each distinct value
    first[0] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    start = np.flatnonzero(first)
    if units is None:
        mass = np.diff(np.append(start, values.size)).astype(np.float64)
    else:
        mass = np.add.reduceat(units, start)
    return values[start], mass


def _point_masses(mass, n_bins):
    """Which distinct values get a bin of their own: bool (k,).

    A value is a point mass when its weight is at least a bin's share of the weight that
    is not in point masses, ``rest / (n_bins - n_point_masses)``. Taking values out lowers
    the share of the rest, which can make more values point masses: repeated to a fixed
    point (LightGBM's greedy bin finding does one round of this). The heaviest values are
    point masses first, so only the ``n_bins`` heaviest are candidates; with more distinct
    values than bins, fewer than ``n_bins`` are point masses.
    """
    k = mass.size
    heavy = np.zeros(k, dtype=bool)
    total = np.cumsum(mass)[-1]
    if mass.max() * n_bins < total:
        return heavy  # nothing reaches a bin's share: a continuous feature
    top = np.argpartition(-mass, n_bins - 1)[:n_bins]
    top = top[np.lexsort((top, -mass[top]))]  # heaviest first, ties by position
    top_mass = mass[top]
    before = np.concatenate(([0.0], np.cumsum(top_mass)))  # weight of the h heaviest
    h = 0
    while True:
        share = (total - before[h]) / (n_bins - h)
        h_next = min(int(np.count_nonzero(top_mass >= share)), n_bins - 1)
        if h_next <= h:
            break
        h = h_next
    heavy[top[:h]] = True
    return heavy


def _bin_starts(mass, n_bins):
    """Where each bin but the first starts: int64 (n_bins - 1,), strictly increasing
    indices into the ``k > n_bins`` distinct values.

    Point masses get one bin each. The runs of other values between them ("segments")
    share the remaining bins, handed out one at a time to the segment with the highest
    priority: its weight per bin, ``mass / bins``, or twice its weight while it has none
    (at most one bin per distinct value). This minimises the largest weight per bin, and a
    segment gets a bin of its own only if it holds at least half the weight per bin of
    the others (LightGBM's greedy bin finding likewise puts a run lighter than half a bin
    into the next point mass's bin). A segment left without a bin joins the bin of its
    heavier neighbouring point mass, whose statistics it changes least. Inside a segment
    the bins follow its weight (``_segment_starts``).
    """
    k = mass.size
    heavy = _point_masses(mass, n_bins)
    before = np.concatenate(([0.0], np.cumsum(mass)))  # weight below each distinct value
    edges = np.diff(np.concatenate(([1], heavy.view(np.int8), [1])))
    seg_lo, seg_hi = np.flatnonzero(edges == -1), np.flatnonzero(edges == 1)
    seg_mass = before[seg_hi] - before[seg_lo]
    room = seg_hi - seg_lo  # distinct values per segment: the most bins it can use
    bins = np.zeros(seg_lo.size, dtype=np.int64)
    queue = [(-2.0 * seg_mass[s], s) for s in range(seg_lo.size)]  # ties: leftmost first
    heapq.heapify(queue)
    for _ in range(n_bins - int(heavy.sum())):  # more room than bins: the queue never empties
        _, s = heapq.heappop(queue)
        bins[s] += 1
        if bins[s] < room[s]:
            heapq.heappush(queue, (-seg_mass[s] / bins[s], s))
    # A boundary before and after every point mass, inside the value range ...
    point = np.flatnonzero(heavy)
    starts = set(point.tolist()) | set((point + 1).tolist())
    starts -= {0, k}
    for s in np.flatnonzero(bins == 0):  # ... but not between a point mass and a run it takes in
        lo, hi = seg_lo[s], seg_hi[s]  # neighbours: point masses lo - 1 and hi
        left = mass[lo - 1] if lo > 0 else -np.inf
        right = mass[hi] if hi < k else -np.inf
        starts.discard(lo if left >= right else hi)
    for s in np.flatnonzero(bins > 1):
        starts.update(_segment_starts(before, seg_lo[s], seg_hi[s], bins[s]).tolist())
    return np.array(sorted(starts), dtype=np.int64)


def _segment_starts(before, lo, hi, n_bins):
    """Bin starts inside distinct values ``lo .. hi - 1`` split into ``n_bins`` bins of
    near-equal weight: int64 (n_bins - 1,), strictly increasing, in ``lo + 1 .. hi - 1``.

    Each start is the boundary whose weight below it is nearest to ``j / n_bins`` of the
    segment's weight; where two land on one boundary (a value near a bin's share), the
    later ones move up so that no bin is empty.
    """
    below = before[lo + 1:hi] - before[lo]  # weight of the segment below each boundary
    targets = (before[hi] - before[lo]) * np.arange(1, n_bins) / n_bins
    right = np.minimum(np.searchsorted(below, targets), below.size - 1)
    left = np.maximum(right - 1, 0)
    nearest = np.where(targets - below[left] <= below[right] - targets, left, right)
    j = np.arange(1, n_bins)
    # Boundary j (1-based) may sit at positions j - 1 .. n_values - n_bins + j - 1 of
    # `below`; "strictly increasing" is "position - j non-decreasing".
    shifted = np.clip(nearest - (j - 1), 0, hi - lo - n_bins)
    return lo + 1 + np.maximum.accumulate(shifted) + (j - 1)


def _midpoints(distinct, starts):
    """float32 cuts halfway between ``distinct[starts - 1]`` and ``distinct[starts]``.

    Each cut ``c`` satisfies ``lower < c <= upper`` in float32, so ``x < c`` puts every
    training value on the side of its bin; an unseen value between the two goes to the
    nearer one (LightGBM also cuts at midpoints; XGBoost cuts at the upper value).
    """
    lower, upper = distinct[starts - 1], distinct[starts]
    with np.errstate(invalid="ignore"):
        mid = (lower.astype(np.float64) + upper.astype(np.float64)) * 0.5
    mid = np.where(np.isnan(mid), 0.0, mid)  # only for -inf and +inf
    cuts = mid.astype(np.float32)
    # Rounding to float32 can land on `lower` (adjacent floats): take the next float up.
    low = cuts <= lower
    cuts[low] = np.nextafter(lower[low], np.float32(np.inf))
    return cuts


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
        feature holding codes ``0 .. n - 1`` (gbm.data.categorical): its cuts put code ``c``
        in bin ``c``, whatever ``max_bin``.
        """
        n, n_features = X.shape
        if n_rows_total is None:
            n_rows_total = int(collective.allreduce(np.array([n], dtype=np.int64), "sum")[0])
        w = np.ones(n) if sample_weight is None else sample_weight
        rows = np.arange(row_offset, row_offset + n) if row_ids is None else row_ids
        mask = sample_mask(rows, n_rows_total, self.sample_size, self.seed)
        # one rank on the CPU: each feature's sample is taken from X when its cuts are
        # made, not from a copy of the sample matrix (a fit's largest temporary after X)
        local = collective.world_size == 1 and not is_device_array(X)
        everything = bool(mask.all())
        if local:
            Xs = None
            local_missing = _missing_columns(X)
        elif is_device_array(X):  # a GPU matrix: only the sample rows come to the host
            import cupy

            Xs = to_host(X[cupy.asarray(mask)])
            local_missing = to_host(cupy.isnan(X).any(axis=0))
        else:
            Xs = X[mask]
            local_missing = _missing_columns(X)
        ws = w if everything else w[mask]
        has_missing = collective.allreduce(local_missing.astype(np.uint8), "max")
        if collective.world_size > 1:  # the sample of the whole data set, in row order
            parts = collective.allgather((rows[mask], Xs, ws))
            order = np.argsort(np.concatenate([p[0] for p in parts]), kind="stable")
            Xs = np.concatenate([p[1] for p in parts])[order]
            ws = np.concatenate([p[2] for p in parts])[order]

        def cuts_of(f):
            if n_categories is not None and n_categories[f] >= 0:
                return np.arange(1, max(1, n_categories[f]), dtype=np.float32)
            if Xs is not None:
                col = Xs[:, f]
            else:
                col = X[:, f] if everything else X[:, f][mask]
            ok = ~np.isnan(col)
            narrow = has_missing[f] and self.max_bin <= 256  # the missing bin fits a uint8
            limit = min(self.max_bin, 255) if narrow else self.max_bin
            return feature_cuts(col[ok], ws[ok], limit)

        # NumPy's sorts release the GIL: features are cut in parallel threads. Over several
        # ranks each cuts every world_size-th feature of the (same) gathered sample, and
        # the ranks swap their cuts: the same cuts, for a share of the work.
        world, rank = collective.world_size, collective.rank
        with ThreadPoolExecutor(max_workers=max(1, n_threads)) as pool:
            mine = list(pool.map(cuts_of, range(rank, n_features, world)))
        if world > 1:
            shares = collective.allgather(mine)
            mine = [shares[f % world][f // world] for f in range(n_features)]
        self.cuts = mine
        self._set_layout(has_missing)
        return self

    def _set_layout(self, has_missing=None):
        """``n_bins``, the histogram layout and the bins' dtype, from ``cuts``;
        ``has_missing`` (per feature, optional): which features' training rows hold
        missing values, whose missing bin must be stored."""
        self.n_bins = np.array([c.size + 1 for c in self.cuts], dtype=np.int32)
        self.feature_offsets = np.concatenate(([0], np.cumsum(self.n_bins + 1))).astype(np.int32)
        largest = self.n_bins.max(initial=1)
        if has_missing is not None:  # a missing bin 256 (256 categories, or max_bin > 256)
            largest = max(largest, (self.n_bins + 1)[np.asarray(has_missing, bool)].max(initial=1))
        self.bin_dtype = BIN_DTYPE if largest <= 256 else WIDE_BIN_DTYPE

    def padded_cuts(self):
        """float32 (n_features, width): each feature's cuts, then +inf; ``width`` a power
        of two >= 256 and >= every feature's bin count (the binning kernel's fixed search)."""
        width = max(256, 1 << max(1, int(self.n_bins.max(initial=1)) - 1).bit_length())
        padded = np.full((len(self.cuts), width), np.inf, dtype=np.float32)
        for f, cuts in enumerate(self.cuts):
            padded[f, :cuts.size] = cuts
        return padded

    @classmethod
    def from_cuts(cls, cuts, max_bin=256):
        mapper = cls(max_bin=max_bin)
        mapper.cuts = [np.asarray(c, dtype=np.float32) for c in cuts]
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
            for f in np.flatnonzero(self.n_bins > largest):
                if np.isnan(X[:, f]).any():
                    raise ValueError(
                        f"feature {f} has missing values here but had none when the bins were "
                        f"learned with {largest + 1} value bins; bin it together with the "
                        "training data")
        out = xp.empty(X.shape, dtype=self.bin_dtype)
        X = xp.ascontiguousarray(xp.asarray(X), dtype=np.float32)
        kernels.bin_values(X, self.padded_cuts(), self.n_bins, out)
        return out
