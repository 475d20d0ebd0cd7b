"""Exclusive Feature Bundling (Ke et al. 2017, LightGBM's ``FastFeatureBundling``), made
exact: the greedy proposal of bundles from the binning sample, and the check of every row
that flags the features of a bundle stored in one row together (``gbm.bins.bundling``
splits them off). Host kernels: they run once per fit, on the CPU whatever the device.
"""
import numpy as np
from numba import prange

from ..jit import helper, kernel


@kernel
def propose_bundles(col_ptr, col_rows, n_rows, order, n_bins, max_codes, max_search,
                    out_bundle):
    """Greedy bundles: each feature, in ``order``, joins the newest bundle (of the
    ``max_search`` newest with room for its bins) that holds no row it holds, else starts
    a bundle; returns the number of bundles.

    col_ptr : int64 (n_features + 1,); col_rows : int32 (nnz,)   # IN  the sample's entries
                                                           #     by feature (CSC)
    n_rows : int                                           # IN  the sample's rows
    order : int64 (n_features,)                            # IN  the features, in turn
    n_bins : int32 (n_features,)                           # IN  codes a feature takes
    max_codes : int                                        # IN  most codes in a bundle,
                                                           #     code 0 (none) included
    max_search : int                                       # IN  bundles tried per feature
    out_bundle : int32 (n_features,)                       # OUT each feature's bundle,
                                                           #     numbered as started
    A deterministic function of the sample and the order: no thread, no randomness.
    """
    words = (n_rows + 63) // 64
    capacity = 16
    marks = np.zeros((capacity, words), dtype=np.uint64)
    widths = np.zeros(capacity, dtype=np.int64)
    open_ = np.empty(capacity, dtype=np.int64)  # bundles that may still take a feature
    n_open = 0
    n_bundles = 0
    for i in range(order.shape[0]):
        f = order[i]
        lo, hi = col_ptr[f], col_ptr[f + 1]
        chosen = -1
        tried = 0
        for o in range(n_open - 1, -1, -1):  # the newest bundles first
            j = open_[o]
            if widths[j] + n_bins[f] > max_codes:
                continue
            if tried == max_search:
                break
            tried += 1
            if not _overlaps(marks[j], col_rows, lo, hi):
                chosen = j
                break
        if chosen < 0:
            if n_bundles == capacity:
                capacity *= 2
                marks = _grown(marks, capacity)
                widths = _grown_1d(widths, capacity)
                open_ = _grown_1d(open_, capacity)
            chosen = n_bundles
            n_bundles += 1
            widths[chosen] = 1
            open_[n_open] = chosen
            n_open += 1
        for p in range(lo, hi):
            r = col_rows[p]
            marks[chosen, r >> 6] |= np.uint64(1) << np.uint64(r & 63)
        widths[chosen] += n_bins[f]
        out_bundle[f] = chosen
        if widths[chosen] >= max_codes:  # full: out of the open list, order kept
            kept = 0
            for o in range(n_open):
                if open_[o] != chosen:
                    open_[kept] = open_[o]
                    kept += 1
            n_open = kept
    return n_bundles


@helper
def _overlaps(mark, col_rows, lo, hi):
    for p in range(lo, hi):
        r = col_rows[p]
        if (mark[r >> 6] >> np.uint64(r & 63)) & np.uint64(1):
            return True
    return False


@helper
def _grown(marks, capacity):
    out = np.zeros((capacity, marks.shape[1]), dtype=np.uint64)
    out[:marks.shape[0]] = marks
    return out


@helper
def _grown_1d(values, capacity):
    out = np.zeros(capacity, dtype=np.int64)
    out[:values.shape[0]] = values
    return out


_CHECK_ROWS = 65536  # rows per task of the conflict check


@kernel(parallel=True)
def bundle_conflicts(indptr, indices, bundle_of, n_bundles, out_flags):
    """Flag every feature stored in a row together with another feature of its bundle.

    indptr : int64 (n_rows + 1,); indices : int32 (nnz,)   # IN  the rows' entries (CSR)
    bundle_of : int32 (n_features,)                        # IN  each feature's bundle
    n_bundles : int                                        # IN
    out_flags : uint8 (n_features,)                        # OUT 1 = in a conflict
    Tasks of rows in parallel, each with its own record of the bundles seen in the row;
    a flag is only ever set to 1, so the result does not depend on the threads.
    """
    for f in range(out_flags.shape[0]):
        out_flags[f] = 0
    n_rows = indptr.shape[0] - 1
    n_tasks = (n_rows + _CHECK_ROWS - 1) // _CHECK_ROWS
    for task in prange(n_tasks):
        _check_rows(np.uint64(task), indptr, indices, bundle_of, n_bundles, out_flags)


@helper
def _check_rows(task, indptr, indices, bundle_of, n_bundles, out_flags):
    seen = np.full(n_bundles, -1, dtype=np.int64)  # the last row holding the bundle
    first = np.zeros(n_bundles, dtype=np.int64)  # its feature there
    lo = np.int64(task) * _CHECK_ROWS
    hi = min(lo + _CHECK_ROWS, indptr.shape[0] - 1)
    for r in range(lo, hi):
        for p in range(indptr[r], indptr[r + 1]):
            f = indices[p]
            b = bundle_of[f]
            if seen[b] == r:
                out_flags[f] = 1
                out_flags[first[b]] = 1
            else:
                seen[b] = r
                first[b] = f
