"""Bin edges of one feature (``feature_cuts``) that spend the whole ``max_bin`` budget:
a feature with at most ``max_bin`` distinct values gets one bin per value; otherwise each
value holding at least a bin's share of the weight (a point mass: a round value, zero, a
cap) gets a bin of its own, and the other bins follow the weight of the other values (see
``gbm.bins.binning`` for the layout of the bins and the row sample they come from).
"""
import heapq

import numpy as np


def feature_cuts(values, weights, max_bin):
    """Cut points of one feature from its non-missing sampled values and weights.

    The distinct values are split into ``min(max_bin, n_distinct)`` bins, so the whole
    budget is spent (see ``_bin_starts``); each cut lies halfway between the two adjacent
    distinct values it separates (see ``cut_midpoints``). The result depends only on the
    multiset of (value, weight) pairs: not on their order, hence not on threads, chunks or
    workers. Rows with zero weight are ignored.

    Parameters
    ----------
    values : ndarray of float32, shape (m,)
        Non-missing values (any order); with ``weights`` None they may hold NaN
        (missing), which are left out.
    weights : ndarray of float64, shape (m,), or None
        Non-negative weights of ``values``; None: every value weighs the same (positive),
        the same cuts without the weights' copies.
    max_bin : int
        Most value bins; the result has at most ``max_bin - 1`` cuts.

    Returns
    -------
    ndarray of float32, shape (min(max_bin, n_distinct) - 1,), strictly increasing. Empty
    for a constant or empty column.
    """
    before = None  # weight below each distinct value, then the total: made when needed
    if weights is None:
        distinct, mass, before = _distinct_unweighted(values)
    else:
        values = np.asarray(values, dtype=np.float32)
        weights = np.asarray(weights, dtype=np.float64)
        keep = weights > 0
        # + 0.0 turns -0.0 into 0.0: the two compare equal, and which one a distinct value
        # would show must not depend on row order.
        values, weights = values[keep] + np.float32(0.0), weights[keep]
        if values.size == 0:
            return np.empty(0, dtype=np.float32)
        distinct, mass = _distinct_values(values, weights)
    if distinct.size == 0:
        return np.empty(0, dtype=np.float32)
    if distinct.size <= max_bin:
        starts = np.arange(1, distinct.size)  # exact bins: one per distinct value
    else:
        starts = _bin_starts(mass, max_bin, before)
    return cut_midpoints(distinct, starts)


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


def _distinct_unweighted(values):
    """``_distinct_values`` of values of equal weights, NaN left out: the sorted distinct
    values, float32 (k,), their row counts, float64 (k,), and the rows below each
    distinct value then the row count, float64 (k + 1,) (``_bin_starts``' ``before``:
    the run starts themselves, no cumulative sum). One sorted copy of the values and the
    run starts are its temporaries (a feature's cuts are made in a thread of their own,
    whose freed memory glibc keeps: the fewer, the less a fit holds)."""
    values = np.sort(np.asarray(values, dtype=np.float32))  # NaN sort last
    values = values[:np.searchsorted(values, np.float32(np.nan))]
    values += np.float32(0.0)  # -0.0 -> 0.0, as _distinct_values' input (sorted still)
    if values.size == 0:
        return values, np.empty(0, dtype=np.float64), np.zeros(1)
    first = np.empty(values.size, dtype=bool)  # first row of each distinct value
    first[0] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    before = np.empty(np.count_nonzero(first) + 1, dtype=np.float64)
    before[:-1] = np.flatnonzero(first)  # whole numbers below 2**53: exact in float64
    before[-1] = values.size
    # the counts: differences of whole numbers, exact (the values a running sum of them
    # would give back, bit for bit)
    return values[first], np.subtract(before[1:], before[:-1]), before


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
    # whole numbers below 2**53 (_distinct_values): any order of the additions gives the
    # same exact total, so NumPy's pairwise sum (vectorised) instead of a running sum
    total = mass.sum()
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


def _bin_starts(mass, n_bins, before=None):
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
    the bins follow its weight (``_segment_starts``). ``before``: float64 (k + 1,), the
    weight below each distinct value then the total, if known (``np.cumsum`` of ``mass``
    after a 0, which is exact: whole numbers, ``_distinct_values``).
    """
    k = mass.size
    if before is None:
        before = np.concatenate(([0.0], np.cumsum(mass)))  # weight below each distinct value
    # before[-1] is mass.sum() (exact sums), what _point_masses compares with
    if mass.max() * n_bins < before[-1]:
        # no point mass (a continuous feature: the common case): one segment takes every
        # bin, as the general path below gives it (0.3 ms a feature of 50,000 values)
        return (_segment_starts(before, 0, k, n_bins) if n_bins > 1
                else np.empty(0, dtype=np.int64))
    heavy = _point_masses(mass, n_bins)
    edges = np.diff(np.concatenate(([1], heavy.view(np.int8), [1])))
    seg_lo, seg_hi = np.flatnonzero(edges == -1), np.flatnonzero(edges == 1)
    seg_mass = before[seg_hi] - before[seg_lo]
    room = seg_hi - seg_lo  # distinct values per segment: the most bins it can use
    bins = np.zeros(seg_lo.size, dtype=np.int64)
    n_free = n_bins - int(heavy.sum())
    if seg_lo.size == 1:
        # one segment (a continuous feature: the common case) takes every free bin, as the
        # queue below would hand them out one by one (its room, k - h > n_bins - h, is
        # never reached); the loop cost 0.3 ms a feature of 50,000 distinct values
        bins[0] = n_free
    else:
        queue = [(-2.0 * seg_mass[s], s) for s in range(seg_lo.size)]  # ties: leftmost first
        heapq.heapify(queue)
        for _ in range(n_free):  # more room than bins: the queue never empties
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


def cut_midpoints(distinct, starts):
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
