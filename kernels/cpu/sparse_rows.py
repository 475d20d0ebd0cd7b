"""How a kernel reads the rows of a sparse bin matrix, one implementation per layout,
chosen when Numba types the call (``numba.extending.overload``): the histogram, partition
and prediction loops of ``csr.py`` and ``bundled.py`` are written once over ``add_row``
and ``row_bin``.

A layout's arrays travel as one tuple, ``matrix``, its last array ``feature_offsets``
(n_features + 1: feature ``f``'s value slots in the histogram, no missing slot):

* CSR, 3 arrays: ``(indptr, slots, feature_offsets)``: row ``r``'s entries are
  ``slots[indptr[r]:indptr[r + 1]]``, each the histogram slot of its (feature, bin),
  increasing along the row; for histograms and for a row's bins alike; for histograms
  also 4, ``(indptr, slots, slot_map, feature_offsets)``: an entry goes to slot
  ``slot_map[slot]``, none when negative (a histogram of some features only);
* bundled, 4 arrays: for histograms ``(bins, code_slot, code_base, feature_offsets)``:
  ``bins[r, j]`` is row ``r``'s code in bundle ``j`` (0: none of the bundle's features is
  stored there), ``code_slot[code_base[j] + code]`` its histogram slot (none when
  negative); for a row's bins
  ``(bins_by_bundle, feature_bundle, feature_code, feature_offsets)``: the codes
  bundle-major, and feature ``f`` holds codes ``feature_code[f] .. feature_code[f] +
  n_bins[f] - 1`` of bundle ``feature_bundle[f]``.

A row with no entry of a feature is missing there. The layouts are told apart by their
first array: a bundled matrix's is 2-d.
"""
import numpy as np
from numba.extending import overload

from ..jit import helper


def add_row(matrix, r, g, hess, h):
    """Add ``(g, hess)`` to the flat histogram ``h`` at each stored entry of row ``r``."""


def row_bin(matrix, r, f):
    """Row ``r``'s bin of feature ``f``, or ``n_bins[f]`` when it has no entry there."""


def feature_offsets_of(matrix):
    """The layout's ``feature_offsets`` (its last array)."""


@overload(feature_offsets_of)
def _feature_offsets_of(matrix):
    last = len(matrix) - 1
    return lambda matrix: matrix[last]


@helper
def entry_bin(indptr, slots, r, first, n):
    """Row ``r``'s bin of the feature whose slots are ``first .. first + n - 1``: its
    stored entry's ``slot - first``, or ``n`` (missing) when it has none there."""
    lo = indptr[r]
    end = indptr[r + 1]
    hi = end
    while lo < hi:  # the first entry at or after the feature's first slot
        mid = (lo + hi) >> 1
        if slots[mid] < first:
            lo = mid + 1
        else:
            hi = mid
    if lo < end and slots[lo] < first + n:
        return np.int32(slots[lo] - first)
    return np.int32(n)


@overload(add_row)
def _add_row(matrix, r, g, hess, h):
    if matrix[0].ndim == 2:
        def bundled(matrix, r, g, hess, h):
            bins, code_slot, code_base = matrix[0], matrix[1], matrix[2]
            for j in range(bins.shape[1]):
                code = np.int64(bins[r, j])
                if code != 0:
                    slot = code_slot[code_base[j] + code]
                    if slot >= 0:
                        at = np.uint64(2) * np.uint64(slot)
                        h[at] += g
                        h[at + np.uint64(1)] += hess
        return bundled
    if len(matrix) == 4:
        def csr_mapped(matrix, r, g, hess, h):
            indptr, slots, slot_map = matrix[0], matrix[1], matrix[2]
            for j in range(indptr[r], indptr[r + np.uint64(1)]):
                slot = slot_map[slots[j]]
                if slot >= 0:
                    at = np.uint64(2) * np.uint64(slot)
                    h[at] += g
                    h[at + np.uint64(1)] += hess
        return csr_mapped

    def csr(matrix, r, g, hess, h):
        indptr, slots = matrix[0], matrix[1]
        for j in range(indptr[r], indptr[r + np.uint64(1)]):
            at = np.uint64(2) * np.uint64(slots[j])
            h[at] += g
            h[at + np.uint64(1)] += hess
    return csr


@overload(row_bin)
def _row_bin(matrix, r, f):
    if matrix[0].ndim == 1:
        def csr(matrix, r, f):
            offsets = matrix[2]
            first = offsets[f]
            return entry_bin(matrix[0], matrix[1], r, first, offsets[f + 1] - first)
        return csr

    def bundled(matrix, r, f):
        by_bundle, feature_bundle, feature_code, offsets = matrix
        n = offsets[f + 1] - offsets[f]
        b = np.int64(by_bundle[feature_bundle[f], r]) - feature_code[f]
        if b < 0 or b >= n:  # none of the bundle, or another of its features
            return np.int32(n)
        return np.int32(b)
    return bundled
