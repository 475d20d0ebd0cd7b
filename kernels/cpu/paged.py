"""A paged bin matrix's level work, one compiled call a page (``gbm.bins.paged``).

A paged fit streams the pages once a level; per page it partitions each node's run of
rows (the node's rows within the page: one run, the rows being increasing) and sums the
smaller children's rows into histograms. Done with the whole-matrix kernels that cost a
page some Python and NumPy around them: each node's run found and copied out as
page-local rows, the partitioned runs copied back, a histogram zeroed and added per
page (at 2,000,000 x 28 rows in 7 pages, about a third of the level time; measured).
These kernels take the tree's rows as they are (global row numbers, the page's first row
``lo`` subtracted on reading its bins) and put the partitioned rows straight in place,
and the histograms add up over the pages in per-thread copies that the caller zeroes
once a level and adds up once a level. Every sum is an integer sum: neither the pages
nor the threads change a bit. The partition alone (``page_partition``) and a prediction
on the binned rows (``page_predict_binned``) are one call a page too. Twins:
``kernels/reference/paged.py``.
"""
import numpy as np
from numba import prange

from ..jit import helper, kernel
from .partition_steps import goes_left
from .prefetch import DISTANCE, prefetch
from .tree_walk import add_leaf_values_of_rows
from .views import flat

_CHUNK = 16384  # rows per partition task (as partition.py): small enough to balance


@helper
def _run_end(rows, a, end, hi):
    """The first position in ``a .. end`` whose row is ``hi`` or more (``rows[a:end]``
    increasing): where a node's run in a page ending before row ``hi`` stops."""
    lo_, hi_ = a, end
    while lo_ < hi_:
        mid = (lo_ + hi_) // 2
        if rows[mid] < hi:
            lo_ = mid + 1
        else:
            hi_ = mid
    return lo_


@helper
def _add_ids(flat_bins, flat_gpair, ids, a, b, lo, n_f, slot2, h):
    """Add the gradient pairs of rows ``ids[a:b]`` (global row numbers; their bins at
    ``ids[p] - lo`` in the page) into the flat histogram ``h``: two rows a step, the
    rows ``DISTANCE`` ahead prefetched (as ``histogram_steps.accumulate``)."""
    one, two = np.uint64(1), np.uint64(2)
    base = np.uint64(lo)
    n_features = slot2.shape[0]
    p = a
    while p + 1 < b:
        if p + DISTANCE + 1 < b:
            for q in range(2):
                ahead = np.uint64(ids[p + DISTANCE + q])
                prefetch(flat_bins, (ahead - base) * n_f)
                prefetch(flat_gpair, two * ahead)
        r0, r1 = np.uint64(ids[p]), np.uint64(ids[p + 1])
        g0, h0 = flat_gpair[two * r0], flat_gpair[two * r0 + one]
        g1, h1 = flat_gpair[two * r1], flat_gpair[two * r1 + one]
        row0, row1 = (r0 - base) * n_f, (r1 - base) * n_f
        for f in range(n_features):
            first, uf = slot2[f], np.uint64(f)
            at0 = first + two * np.uint64(flat_bins[row0 + uf])
            at1 = first + two * np.uint64(flat_bins[row1 + uf])
            h[at0] += g0
            h[at0 + one] += h0
            h[at1] += g1
            h[at1 + one] += h1
        p += 2
    if p < b:  # an odd row left
        r = np.uint64(ids[p])
        g, hess = flat_gpair[two * r], flat_gpair[two * r + one]
        row = (r - base) * n_f
        for f in range(n_features):
            at = slot2[f] + two * np.uint64(flat_bins[row + np.uint64(f)])
            h[at] += g
            h[at + one] += hess


@helper
def _add_span(flat_bins, flat_gpair, a, b, lo, n_f, slot2, h):
    """``_add_ids`` for the page rows ``a .. b - 1`` themselves (global ``lo + a ..``): no
    row ids to read (a node holding every row of the page, as a root does). Two rows a
    step, as ``histogram_steps._accumulate_span``: their independent additions overlap (one
    thread, 500,000 x 28 uint8 bins, interleaved: 0.82 -> 0.77 ns a cell)."""
    one, two = np.uint64(1), np.uint64(2)
    n_features = slot2.shape[0]
    p, end, base = np.uint64(a), np.uint64(b), np.uint64(lo)
    while p + one < end:
        at_g = two * (p + base)
        g0, h0 = flat_gpair[at_g], flat_gpair[at_g + one]
        g1, h1 = flat_gpair[at_g + two], flat_gpair[at_g + np.uint64(3)]
        row0 = p * n_f
        row1 = row0 + n_f
        for f in range(n_features):
            first, uf = slot2[f], np.uint64(f)
            at0 = first + two * np.uint64(flat_bins[row0 + uf])
            at1 = first + two * np.uint64(flat_bins[row1 + uf])
            h[at0] += g0
            h[at0 + one] += h0
            h[at1] += g1
            h[at1 + one] += h1
        p += two
    if p < end:  # an odd row left
        at_g = two * (p + base)
        g, hess = flat_gpair[at_g], flat_gpair[at_g + one]
        row = p * n_f
        for f in range(n_features):
            at = slot2[f] + two * np.uint64(flat_bins[row + np.uint64(f)])
            h[at] += g
            h[at + one] += hess


@helper
def _slot2(feature_offsets, n_features):
    slot2 = np.empty(n_features, dtype=np.uint64)
    for f in range(n_features):
        slot2[f] = np.uint64(2 * feature_offsets[f])
    return slot2


@helper(parallel=True)
def _add_parts(bins, gpair, ids, other_ids, run_starts, run_ends, kinds, lo, feature_offsets,
               private):
    """Thread ``t`` adds its share of the runs ``ids[run_starts[j]:run_ends[j]]`` (all
    nodes' runs cut into ``private.shape[0]`` equal shares by position) into
    ``private[t, j]``. ``kinds[j]``: 0, the run in ``ids``; 1, in ``other_ids``; 2, the
    page's rows ``run_starts[j] ..`` themselves (no ids read)."""
    n_parts, n_nodes = np.int64(private.shape[0]), run_starts.shape[0]
    cumulative = np.zeros(n_nodes + 1, dtype=np.int64)
    for j in range(n_nodes):
        cumulative[j + 1] = cumulative[j] + (run_ends[j] - run_starts[j])
    total = cumulative[n_nodes]
    n_f = np.uint64(bins.shape[1])
    slot2 = _slot2(feature_offsets, bins.shape[1])
    flat_bins, flat_gpair = flat(bins), flat(gpair)
    # a parallel loop whose body is one call compiles fast (``histogram._accumulate_parts``)
    for t in prange(n_parts):
        _add_share(np.int64(t), n_parts, total, cumulative, flat_bins, flat_gpair, ids,
                   other_ids, run_starts, kinds, lo, n_f, slot2, private)


@helper
def _add_share(t, n_parts, total, cumulative, flat_bins, flat_gpair, ids, other_ids,
               run_starts, kinds, lo, n_f, slot2, private):
    """Thread ``t``'s share of ``_add_parts``."""
    first, last = total * t // n_parts, total * (t + 1) // n_parts
    for j in range(run_starts.shape[0]):
        a, b = max(first, cumulative[j]), min(last, cumulative[j + 1])
        if a >= b:
            continue
        a += run_starts[j] - cumulative[j]
        b += run_starts[j] - cumulative[j]
        h = flat(private[t, j])
        if kinds[j] == 2:
            _add_span(flat_bins, flat_gpair, a, b, lo, n_f, slot2, h)
        elif kinds[j] == 1:
            _add_ids(flat_bins, flat_gpair, other_ids, a, b, lo, n_f, slot2, h)
        else:
            _add_ids(flat_bins, flat_gpair, ids, a, b, lo, n_f, slot2, h)


@kernel
def page_histograms(bins, lo, gpair, rows, node_starts, node_ends, seen, feature_offsets,
                    private):
    """Add each node's rows within one page into the threads' histograms.

    bins : uint8/uint16 (n, n_features)    # IN  the page: rows lo .. lo + n - 1
    lo : int64                             # IN  the page's first row
    gpair : int64 (n_rows, 2)              # IN  every row's fixed-point (g, h)
    rows : int32 (m,)                      # IN  node k's rows rows[node_starts[k]:
    node_starts, node_ends : int64         #     node_ends[k]], increasing
    seen : int64 (n_nodes,)                # IN/OUT each node's rows in the pages before
                                           #     (0 at the first page); + this page's
    feature_offsets : int32 (n_features + 1,)
    private : int64 (n_parts, n_nodes, n_slots, 2)   # IN/OUT += this page's sums, thread
                                           #     t's share into private[t] (zeroed by the
                                           #     caller before the first page; the node's
                                           #     histogram: the sum over t)
    """
    n_nodes = node_starts.shape[0]
    hi = lo + bins.shape[0]
    run_starts = np.empty(n_nodes, dtype=np.int64)
    run_ends = np.empty(n_nodes, dtype=np.int64)
    kinds = np.zeros(n_nodes, dtype=np.uint8)
    for j in range(n_nodes):
        a = node_starts[j] + seen[j]
        b = _run_end(rows, a, node_ends[j], hi)
        seen[j] += b - a
        run_starts[j], run_ends[j] = a, b
        if b - a == bins.shape[0]:  # every row of the page, in order: read no ids
            kinds[j] = 2
            run_starts[j], run_ends[j] = 0, b - a
    _add_parts(bins, gpair, rows, rows, run_starts, run_ends, kinds, lo, feature_offsets,
               private)


@kernel(parallel=True)
def page_partition_build(bins, bins_by_feature, lo, gpair, rows, scratch, work, node_starts,
                         node_ends, seen_left, seen_right, split_feature, split_bin,
                         default_left, split_type, cat_bits, n_bins, small_is_left,
                         feature_offsets, private):
    """One page's part of a level: each node's run of rows in the page partitioned, its
    left rows put after the node's left rows of the pages before (in ``rows``), its right
    rows after their right rows (in ``scratch``), and the smaller children's new rows
    added into the threads' histograms.

    bins : (n, n_features), bins_by_feature : (n_features, n)   # IN  the page, rows
                                           #     lo .. lo + n - 1, uint8/uint16
    lo : int64; gpair : int64 (n_rows, 2)
    rows : int32 (m,)                      # IN/OUT the tree's rows, node k's segment
                                           #     rows[node_starts[k]:node_ends[k]]
                                           #     increasing where not yet read
    scratch : int32 (m,)                   # IN/OUT node k's right rows so far from
                                           #     node_starts[k]
    work : int32 (>= n,)                   # work space
    seen_left, seen_right : int64 (n_nodes,)   # IN/OUT each node's left and right rows
                                           #     so far (0 before the first page)
    split_feature, split_bin : int32; default_left, split_type : uint8; cat_bits : uint32
        (n_nodes, n_words); n_bins : int32 (n_features,)   # the nodes' splits
    small_is_left : uint8 (n_nodes,)       # whose rows the histograms sum
    feature_offsets : int32 (n_features + 1,)
    private : int64 (n_parts, n_nodes, n_slots, 2)   # IN/OUT += the page's sums
                                           #     (``page_histograms``)

    The partition is ``partition.partition_rows``' two passes over chunks, reading each
    run from ``rows`` into ``work`` first, so that no write in ``rows`` lands on a row not
    yet read: a node's left rows so far are at most its rows read so far, which come
    first in its segment.
    """
    n_nodes = node_starts.shape[0]
    cumulative = np.zeros(n_nodes + 1, dtype=np.int64)
    new_left = np.zeros(n_nodes, dtype=np.int64)
    _partition_page(bins_by_feature, lo, rows, scratch, work, node_starts, node_ends,
                    seen_left, seen_right, split_feature, split_bin, default_left, split_type,
                    cat_bits, n_bins, cumulative, new_left)
    # the smaller children's rows of this page: now one run in ``rows`` or ``scratch``
    h_starts = np.empty(n_nodes, dtype=np.int64)
    h_ends = np.empty(n_nodes, dtype=np.int64)
    kinds = np.zeros(n_nodes, dtype=np.uint8)  # 0: the left rows, in ``rows``; 1: ``scratch``
    for j in range(n_nodes):
        n_new = cumulative[j + 1] - cumulative[j]
        if small_is_left[j]:
            h_starts[j] = node_starts[j] + seen_left[j]
            h_ends[j] = h_starts[j] + new_left[j]
        else:
            kinds[j] = 1
            h_starts[j] = node_starts[j] + seen_right[j]
            h_ends[j] = h_starts[j] + n_new - new_left[j]
        seen_left[j] += new_left[j]
        seen_right[j] += n_new - new_left[j]
    _add_parts(bins, gpair, rows, scratch, h_starts, h_ends, kinds, lo, feature_offsets,
               private)


@kernel(parallel=True)
def page_partition(bins_by_feature, lo, rows, scratch, work, node_starts, node_ends, seen_left,
                   seen_right, split_feature, split_bin, default_left, split_type, cat_bits,
                   n_bins):
    """``page_partition_build`` without the histograms (the partition of a level whose
    children get none: the last level of a ``lossguide`` tree, a level of too many
    nodes for one batch): only the page's feature-major bins are read, the columns of
    the split features. Arguments as there."""
    n_nodes = node_starts.shape[0]
    cumulative = np.zeros(n_nodes + 1, dtype=np.int64)
    new_left = np.zeros(n_nodes, dtype=np.int64)
    _partition_page(bins_by_feature, lo, rows, scratch, work, node_starts, node_ends,
                    seen_left, seen_right, split_feature, split_bin, default_left, split_type,
                    cat_bits, n_bins, cumulative, new_left)
    for j in range(n_nodes):
        seen_left[j] += new_left[j]
        seen_right[j] += cumulative[j + 1] - cumulative[j] - new_left[j]


@helper(parallel=True)
def _partition_page(bins_by_feature, lo, rows, scratch, work, node_starts, node_ends,
                    seen_left, seen_right, split_feature, split_bin, default_left, split_type,
                    cat_bits, n_bins, cumulative, new_left):
    """The partition of ``page_partition_build``: each node's run of the page into place
    (``seen_left``, ``seen_right`` read, not yet advanced). OUT ``cumulative`` (n_nodes +
    1,), zeros in: each run's place in ``work`` (run ``j``: its rows ``cumulative[j] ..
    cumulative[j + 1]``); ``new_left`` (n_nodes,), zeros in: its rows going left."""
    n_nodes = node_starts.shape[0]
    hi = lo + bins_by_feature.shape[1]
    run_starts = np.empty(n_nodes, dtype=np.int64)  # each run's place in ``rows``
    first_chunk = np.zeros(n_nodes + 1, dtype=np.int64)
    for j in range(n_nodes):
        a = node_starts[j] + seen_left[j] + seen_right[j]
        b = _run_end(rows, a, node_ends[j], hi)
        run_starts[j] = a
        cumulative[j + 1] = cumulative[j] + (b - a)
        first_chunk[j + 1] = first_chunk[j] + (b - a + _CHUNK - 1) // _CHUNK
    n_tasks = first_chunk[n_nodes]
    task_node = np.empty(n_tasks, dtype=np.int64)
    for j in range(n_nodes):
        for c in range(first_chunk[j], first_chunk[j + 1]):
            task_node[c] = j
    left_count = np.zeros(n_tasks, dtype=np.int64)
    for task in prange(n_tasks):
        left_count[task] = _split_chunk(np.uint64(task), task_node, first_chunk, cumulative,
                                        run_starts, bins_by_feature, lo, rows, work,
                                        split_feature, split_bin, default_left, split_type,
                                        cat_bits, n_bins)
    left_before = np.zeros(n_tasks, dtype=np.int64)
    for j in range(n_nodes):
        for task in range(first_chunk[j], first_chunk[j + 1]):
            left_before[task] = new_left[j]
            new_left[j] += left_count[task]
    for task in prange(n_tasks):
        _place_chunk(np.uint64(task), task_node, first_chunk, cumulative, node_starts, rows,
                     scratch, work, seen_left, seen_right, left_count, left_before)


@helper
def _split_chunk(task, task_node, first_chunk, cumulative, run_starts, bins_by_feature, lo,
                 rows, work, split_feature, split_bin, default_left, split_type, cat_bits,
                 n_bins):
    """One chunk of a node's run into its stretch of ``work``: left rows forward from its
    start, right rows backward from its end (``partition_steps.split_chunk``); returns the
    rows going left."""
    j = task_node[task]
    f = split_feature[j]
    column = bins_by_feature[f]
    missing_bin = n_bins[f]
    threshold = split_bin[j]
    missing_left = default_left[j] == 1
    categorical = split_type[j] == 1
    at = (task - first_chunk[j]) * _CHUNK  # the chunk's first place in the run
    n = min(_CHUNK, cumulative[j + 1] - cumulative[j] - at)
    src = run_starts[j] + at
    left = cumulative[j] + at
    right = left + n - 1
    first = left
    base = np.uint64(lo)
    for i in range(n):
        r = rows[np.uint64(src + i)]
        b = np.int32(column[np.uint64(r) - base])
        go = np.int64(goes_left(b, missing_bin, threshold, missing_left, categorical,
                                cat_bits, j))
        work[np.uint64(left)] = r
        work[np.uint64(right)] = r
        left += go
        right -= 1 - go
    return left - first


@helper
def _place_chunk(task, task_node, first_chunk, cumulative, node_starts, rows, scratch, work,
                 seen_left, seen_right, left_count, left_before):
    """One chunk's left run into ``rows`` after the node's left rows so far, its right run
    (read backward) into ``scratch`` after its right rows so far."""
    j = task_node[task]
    at = (task - first_chunk[j]) * _CHUNK
    n = min(_CHUNK, cumulative[j + 1] - cumulative[j] - at)
    src = cumulative[j] + at
    n_left = left_count[task]
    dest = node_starts[j] + seen_left[j] + left_before[task]
    for i in range(n_left):
        rows[np.uint64(dest + i)] = work[np.uint64(src + i)]
    dest = node_starts[j] + seen_right[j] + (at - left_before[task])
    for i in range(n - n_left):
        scratch[np.uint64(dest + i)] = work[np.uint64(src + n - 1 - i)]


@kernel(parallel=True)
def sum_private(private, hist):
    """``hist[k] = private[0, k] + private[1, k] + ...``: the threads' histograms added
    (integers: any order)."""
    n_parts, n_nodes = private.shape[0], private.shape[1]
    for k in prange(n_nodes):
        out, first = flat(hist[k]), flat(private[0, k])
        for i in range(out.shape[0]):
            out[i] = first[i]
        for t in range(1, n_parts):
            part = flat(private[t, k])
            for i in range(out.shape[0]):
                out[i] += part[i]


@kernel(parallel=True)
def move_right_rows(rows, scratch, node_starts, n_left, n_right):
    """``rows[s + n_left[k]:s + n_left[k] + n_right[k]] = scratch[s:s + n_right[k]]``
    (``s = node_starts[k]``): each node's right rows after its left ones, in chunks over
    the threads."""
    n_nodes = node_starts.shape[0]
    first_chunk = np.zeros(n_nodes + 1, dtype=np.int64)
    for k in range(n_nodes):
        first_chunk[k + 1] = first_chunk[k] + (n_right[k] + _CHUNK - 1) // _CHUNK
    task_node = np.empty(first_chunk[n_nodes], dtype=np.int64)
    for k in range(n_nodes):
        for c in range(first_chunk[k], first_chunk[k + 1]):
            task_node[c] = k
    for task in prange(task_node.shape[0]):
        _move_chunk(np.uint64(task), task_node, first_chunk, rows, scratch, node_starts,
                    n_left, n_right)


@helper
def _move_chunk(task, task_node, first_chunk, rows, scratch, node_starts, n_left, n_right):
    k = task_node[task]
    at = (task - first_chunk[k]) * _CHUNK
    n = min(_CHUNK, n_right[k] - at)
    src = node_starts[k] + at
    dest = src + n_left[k]
    for i in range(n):
        rows[np.uint64(dest + i)] = scratch[np.uint64(src + i)]


@kernel(parallel=True)
def page_add_split_values(bins_by_feature, lo, rows, node_starts, node_ends, seen,
                          split_feature, split_bin, default_left, split_type, cat_bits, n_bins,
                          left_values, right_values, out):
    """``partition.add_split_values`` for one page: ``out[r] +=`` the value of the child
    that node ``k``'s split sends row ``r`` to, for node ``k``'s rows within the page
    (rows ``lo .. lo + n - 1``, feature-major bins ``bins_by_feature`` (n_features, n)).

    rows : int32 (m,); node_starts, node_ends : int64 (n_nodes,)   # node k's rows,
                                                   #     increasing (global row numbers)
    seen : int64 (n_nodes,)                        # IN/OUT node k's rows in the pages
                                                   #     before (0 at the first); + this page's
    split_feature ... n_bins : the nodes' splits (``page_partition_build``)
    left_values, right_values : float64 (n_nodes,); out : float64 (n_rows,)   # IN/OUT
    """
    n_nodes = node_starts.shape[0]
    hi = lo + bins_by_feature.shape[1]
    run_starts = np.empty(n_nodes, dtype=np.int64)
    run_ends = np.empty(n_nodes, dtype=np.int64)
    first_chunk = np.zeros(n_nodes + 1, dtype=np.int64)
    for k in range(n_nodes):
        a = node_starts[k] + seen[k]
        b = _run_end(rows, a, node_ends[k], hi)
        seen[k] += b - a
        run_starts[k], run_ends[k] = a, b
        first_chunk[k + 1] = first_chunk[k] + (b - a + _CHUNK - 1) // _CHUNK
    task_node = np.empty(first_chunk[n_nodes], dtype=np.int64)
    for k in range(n_nodes):
        for c in range(first_chunk[k], first_chunk[k + 1]):
            task_node[c] = k
    for task in prange(task_node.shape[0]):
        _add_values_chunk(np.uint64(task), task_node, first_chunk, run_starts, run_ends,
                          bins_by_feature, lo, rows, split_feature, split_bin, default_left,
                          split_type, cat_bits, n_bins, left_values, right_values, out)


@helper
def _add_values_chunk(task, task_node, first_chunk, run_starts, run_ends, bins_by_feature, lo,
                      rows, split_feature, split_bin, default_left, split_type, cat_bits,
                      n_bins, left_values, right_values, out):
    k = task_node[task]
    f = split_feature[k]
    column = bins_by_feature[f]
    missing_bin = n_bins[f]
    threshold = split_bin[k]
    missing_left = default_left[k] == 1
    categorical = split_type[k] == 1
    left_value, right_value = left_values[k], right_values[k]
    a = run_starts[k] + (task - first_chunk[k]) * _CHUNK
    b = min(a + _CHUNK, run_ends[k])
    base = np.uint64(lo)
    for p in range(a, b):
        r = np.uint64(rows[p])
        bin_ = np.int32(column[r - base])
        if goes_left(bin_, missing_bin, threshold, missing_left, categorical, cat_bits, k):
            out[r] += left_value
        else:
            out[r] += right_value


@kernel
def page_predict_binned(bins, lo, rows, seen, n_bins, walk, cat_bits, value, tree_offsets,
                        tree_group, tree_depth, out):
    """``predict.predict_binned`` for one page: every tree's leaf value added to
    ``out[r]`` for the rows ``r`` of ``rows`` within the page (rows ``lo .. lo + n - 1``,
    row-major bins ``bins`` (n, n_features)), each row's trees in their order.

    rows : int32/int64 (m,), increasing        # IN  global row numbers
    seen : int64 (1,)                          # IN/OUT rows of ``rows`` in the pages
                                               #     before (0 at the first); + this page's
    n_bins ... tree_depth : as in ``predict.predict_binned``
    out : float64 (n_rows, n_groups)           # IN/OUT
    """
    hi = lo + bins.shape[0]
    a = seen[0]
    b = _run_end(rows, a, rows.shape[0], hi)
    seen[0] = b
    local = np.empty(b - a, dtype=np.int64)  # page-local row numbers
    for i in range(b - a):
        local[i] = np.int64(rows[a + i]) - lo
    add_leaf_values_of_rows(flat(bins), local, bins.shape[1], walk, cat_bits, value,
                            tree_offsets, tree_group, tree_depth, True, n_bins, out[lo:hi])
