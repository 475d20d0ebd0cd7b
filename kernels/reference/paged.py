"""Twins of ``cpu/paged.py``, in NumPy: the same rows in the same places, the same sums
(all in ``private[0]``: the threads' shares are the CPU kernels' affair)."""
import numpy as np

from .predict import predict_binned


def _run(rows, a, end, hi):
    """``rows[a:b]``: the run of ``rows[a:end]`` (increasing) below row ``hi``."""
    return a + int(np.searchsorted(rows[a:end], hi))


def _add(bins, gpair, ids, lo, feature_offsets, h):
    """Add rows ``ids`` (global; bins at ``ids - lo``) into ``h`` (n_slots, 2)."""
    ids = np.asarray(ids, dtype=np.int64)
    for f in range(bins.shape[1]):
        slots = feature_offsets[f] + bins[ids - lo, f].astype(np.int64)
        np.add.at(h[:, 0], slots, gpair[ids, 0])
        np.add.at(h[:, 1], slots, gpair[ids, 1])


def page_histograms(bins, lo, gpair, rows, node_starts, node_ends, seen, feature_offsets,
                    private):
    hi = lo + bins.shape[0]
    for j in range(node_starts.shape[0]):
        a = int(node_starts[j] + seen[j])
        b = _run(rows, a, int(node_ends[j]), hi)
        seen[j] += b - a
        _add(bins, gpair, rows[a:b], lo, feature_offsets, private[0, j])


def _goes_left(b, f, split_bin, default_left, split_type, cat_bits, n_bins, j):
    """bool (len(b),): the rows with bins ``b`` of feature ``f`` that node ``j`` sends left."""
    b = b.astype(np.int64)
    if split_type[j] == 1:
        go = ((cat_bits[j][b >> 5] >> (b & 31).astype(np.uint32)) & 1) == 0
    else:
        go = b <= split_bin[j]
    return np.where(b == n_bins[f], default_left[j] == 1, go)


def page_partition_build(bins, bins_by_feature, lo, gpair, rows, scratch, work, node_starts,
                         node_ends, seen_left, seen_right, split_feature, split_bin,
                         default_left, split_type, cat_bits, n_bins, small_is_left,
                         feature_offsets, private):
    hi = lo + bins.shape[0]
    for j in range(node_starts.shape[0]):
        left, right = _split_run(bins_by_feature, lo, hi, rows, scratch, node_starts,
                                 node_ends, seen_left, seen_right, split_feature, split_bin,
                                 default_left, split_type, cat_bits, n_bins, j)
        _add(bins, gpair, left if small_is_left[j] else right, lo, feature_offsets,
             private[0, j])


def page_partition(bins_by_feature, lo, rows, scratch, work, node_starts, node_ends, seen_left,
                   seen_right, split_feature, split_bin, default_left, split_type, cat_bits,
                   n_bins):
    hi = lo + bins_by_feature.shape[1]
    for j in range(node_starts.shape[0]):
        _split_run(bins_by_feature, lo, hi, rows, scratch, node_starts, node_ends, seen_left,
                   seen_right, split_feature, split_bin, default_left, split_type, cat_bits,
                   n_bins, j)


def _split_run(bins_by_feature, lo, hi, rows, scratch, node_starts, node_ends, seen_left,
               seen_right, split_feature, split_bin, default_left, split_type, cat_bits,
               n_bins, j):
    """Node ``j``'s rows on the page ``[lo, hi)``: its left ones placed after those of the
    pages before in ``rows``, its right ones in ``scratch``; returns (left, right)."""
    start = int(node_starts[j])
    a = int(start + seen_left[j] + seen_right[j])
    run = rows[a:_run(rows, a, int(node_ends[j]), hi)].copy()
    f = int(split_feature[j])
    go = _goes_left(bins_by_feature[f, run - lo], f, split_bin, default_left, split_type,
                    cat_bits, n_bins, j)
    left, right = run[go], run[~go]
    at = start + int(seen_left[j])
    rows[at:at + left.shape[0]] = left
    at = start + int(seen_right[j])
    scratch[at:at + right.shape[0]] = right
    seen_left[j] += left.shape[0]
    seen_right[j] += right.shape[0]
    return left, right


def page_predict_binned(bins, lo, rows, seen, n_bins, walk, cat_bits, value, tree_offsets,
                        tree_group, tree_depth, out):
    a = int(seen[0])
    b = _run(rows, a, rows.shape[0], lo + bins.shape[0])
    seen[0] = b
    local = np.asarray(rows[a:b], np.int64) - lo
    predict_binned(bins, local, n_bins, walk, cat_bits, value, tree_offsets, tree_group,
                   tree_depth, out[lo:lo + bins.shape[0]])


def sum_private(private, hist):
    hist[...] = private.sum(axis=0)


def move_right_rows(rows, scratch, node_starts, n_left, n_right):
    for k in range(node_starts.shape[0]):
        s, nl, nr = int(node_starts[k]), int(n_left[k]), int(n_right[k])
        rows[s + nl:s + nl + nr] = scratch[s:s + nr]


def page_add_split_values(bins_by_feature, lo, rows, node_starts, node_ends, seen,
                          split_feature, split_bin, default_left, split_type, cat_bits, n_bins,
                          left_values, right_values, out):
    hi = lo + bins_by_feature.shape[1]
    for k in range(node_starts.shape[0]):
        a = int(node_starts[k] + seen[k])
        run = rows[a:_run(rows, a, int(node_ends[k]), hi)].astype(np.int64)
        seen[k] += run.shape[0]
        f = int(split_feature[k])
        go = _goes_left(bins_by_feature[f, run - lo], f, split_bin, default_left, split_type,
                        cat_bits, n_bins, k)
        out[run] += np.where(go, left_values[k], right_values[k])
