"""The histogram kernels' steps that other kernels share (``histogram.py``, ``csr.py``,
``tree_level.py``): a batch's row position to its node, and one node's rows' gradient
pairs added into a flat histogram."""
import numpy as np

from ..jit import helper
from .prefetch import DISTANCE, prefetch


@helper
def segment_of(position, cumulative):
    """Index of the node whose segment holds the ``position``-th row of the batch."""
    lo, hi = 0, cumulative.shape[0] - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cumulative[mid] <= position:
            lo = mid
        else:
            hi = mid - 1
    return lo


@helper
def accumulate(flat_bins, flat_gpair, rows, lo, hi, n_features, slot2, h):
    """Add the gradient pairs of ``rows[lo:hi]`` into one flat histogram ``h``.

    ``slot2[f]`` is 2 * feature f's first slot. Flat inputs and unsigned indices: Numba
    then skips the negative-index wrap-around test on every access (measured 9% faster).
    Two rows a step, feature by feature: each ``slot2[f]`` is read once for both, and the
    two rows' independent additions overlap (measured 15-20% faster a cell on one thread,
    20,000 and 200,000 rows x 10 features; four rows a step gained little more). The
    rows ``DISTANCE`` places ahead are prefetched (see prefetch.py). Integer sums: the
    order of the additions does not change a bit.
    """
    if rows is None:  # the rows lo .. hi - 1 themselves (a whole-tree root: every row)
        _accumulate_span(flat_bins, flat_gpair, lo, hi, n_features, slot2, h)
        return
    one, two = np.uint64(1), np.uint64(2)
    p = lo
    while p + 1 < hi:
        if p + DISTANCE + 1 < hi:
            for q in range(2):
                ahead = np.uint64(rows[p + DISTANCE + q])
                prefetch(flat_bins, ahead * n_features)
                prefetch(flat_gpair, two * ahead)
        r0, r1 = np.uint64(rows[p]), np.uint64(rows[p + 1])
        g0, h0 = flat_gpair[two * r0], flat_gpair[two * r0 + one]
        g1, h1 = flat_gpair[two * r1], flat_gpair[two * r1 + one]
        row0, row1 = r0 * n_features, r1 * n_features
        for f in range(n_features):
            first = slot2[f]
            uf = np.uint64(f)
            at0 = first + two * np.uint64(flat_bins[row0 + uf])
            at1 = first + two * np.uint64(flat_bins[row1 + uf])
            h[at0] += g0
            h[at0 + one] += h0
            h[at1] += g1
            h[at1 + one] += h1
        p += 2
    if p < hi:  # an odd row left
        r = np.uint64(rows[p])
        g, hess = flat_gpair[two * r], flat_gpair[two * r + one]
        row = r * n_features
        for f in range(n_features):
            at = slot2[f] + two * np.uint64(flat_bins[row + np.uint64(f)])
            h[at] += g
            h[at + one] += hess


@helper
def _accumulate_span(flat_bins, flat_gpair, lo, hi, n_features, slot2, h):
    """``accumulate`` for the rows ``lo .. hi - 1`` themselves, in order: no row ids to
    read and nothing to prefetch (the hardware follows a plain stride). Measured alone on
    50,000 and 200,000 rows x 10 features (uint8 bins, one thread): 0.76 -> 0.62 ns a
    cell against ``accumulate`` on ``arange`` rows. The same integer sums."""
    one, two = np.uint64(1), np.uint64(2)
    p, end = np.uint64(lo), np.uint64(hi)
    while p + one < end:
        g0, h0 = flat_gpair[two * p], flat_gpair[two * p + one]
        g1, h1 = flat_gpair[two * p + two], flat_gpair[two * p + np.uint64(3)]
        row0 = p * n_features
        row1 = row0 + n_features
        for f in range(n_features):
            first = slot2[f]
            uf = np.uint64(f)
            at0 = first + two * np.uint64(flat_bins[row0 + uf])
            at1 = first + two * np.uint64(flat_bins[row1 + uf])
            h[at0] += g0
            h[at0 + one] += h0
            h[at1] += g1
            h[at1 + one] += h1
        p += two
    if p < end:  # an odd row left
        row = p * n_features
        g, hess = flat_gpair[two * p], flat_gpair[two * p + one]
        for f in range(n_features):
            at = slot2[f] + two * np.uint64(flat_bins[row + np.uint64(f)])
            h[at] += g
            h[at + one] += hess
