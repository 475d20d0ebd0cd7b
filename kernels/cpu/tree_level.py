"""One tree level's partition and its children's histograms in one parallel region,
a parent node per task (``grow_tree``'s fused step).

``grow_tree`` (kernels/cpu/grow_tree.py) otherwise runs these as two kernels, each
parallel over rows: the partition (chunks of 16,384 rows) and the smaller children's
histograms (a share of the rows per thread, each summed into a private copy, the copies
added). At 20,000-50,000 rows a level's work is a few hundred microseconds: each step
alone stays under the second thread's threshold, and where it passes it, the region's
start, its imbalance and the private copies' clearing and adding take about what the
second thread saves (bench/PROFILE_small.md). Here a parent is one task: its rows
partitioned (``partition_steps.split_chunk`` and ``place_chunk`` over its chunks, in order),
its smaller child's histogram summed (``histogram_steps.accumulate``), the sibling's, the
parent's less it, subtracted; the parents are dealt to the threads before the region
(``deal``: the costliest first, each to the least loaded thread). One region a level,
no private copies. The children's split evaluation stays ``evaluate_splits`` (balanced
over nodes; run inside these tasks it measured 5% slower on one thread).

Every parent's work is the same code on the same rows in the same order as the level
kernels' (a stable partition, integer sums), so neither the dealing nor the thread count
changes a bit.
"""
import numpy as np
from numba import prange

from ..jit import helper
from .histogram_steps import accumulate
from .partition_steps import place_chunk, split_chunk
from .views import flat


@helper
def deal(costs, c, n_workers, plan, counts):
    """Parents ``0 .. c - 1`` dealt to ``n_workers`` threads: costliest first (lower
    index first among equal costs), each to the thread with the least cost so far (the
    lowest among equal ones). ``plan[w, :counts[w]]``: thread ``w``'s parents; returns
    the largest thread's cost."""
    order = np.empty(c, dtype=np.int64)
    for i in range(c):
        order[i] = i
    for i in range(1, c):  # insertion sort by cost, decreasing (a level has few parents)
        x = order[i]
        j = i
        while j > 0 and costs[order[j - 1]] < costs[x]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = x
    load = np.zeros(n_workers, dtype=np.int64)
    for w in range(n_workers):
        counts[w] = 0
    for i in range(c):
        w = 0
        for v in range(1, n_workers):
            if load[v] < load[w]:
                w = v
        plan[w, counts[w]] = order[i]
        counts[w] += 1
        load[w] += costs[order[i]]
    largest = 0
    for w in range(n_workers):
        largest = max(largest, load[w])
    return largest


@helper(parallel=True)
def run_level(n_workers, plan, counts, part, hist):
    """Each thread's parents (``plan``), in parallel: a loop whose body is one call
    compiles fast (``split._evaluate_tasks``)."""
    for w in prange(n_workers):
        _run_worker(np.uint64(w), plan, counts, part, hist)


@helper
def _run_worker(w, plan, counts, part, hist):
    """Thread ``w``'s parents (``plan[w, :counts[w]]``), in order: each one's rows
    partitioned (``_partition``), its smaller child's histogram summed into ``spare[i]``,
    the sibling's, the parent's less it, into ``spare[c + i]``.

    part : (first_chunk, task_node, left_count, left_before, bins_by_feature, rows,
            starts, ends, p_feature, p_bin, p_default_left, p_type, p_bits, n_bins,
            scratch, n_left, start, end, first_child, small_left)
    hist : (flat_bins, flat_gpair, n_features uint64, slot2, cur, spare, chosen, c)
    """
    first_chunk, task_node, left_count, left_before, bins_by_feature, rows, starts, ends, \
        p_feature, p_bin, p_default_left, p_type, p_bits, n_bins, scratch, n_left, start, end, \
        first_child, small_left = part
    flat_bins, flat_gpair, n_f, slot2, cur, spare, chosen, c = hist
    for j in range(counts[w]):
        i = plan[w, j]
        _partition(i, first_chunk, task_node, left_count, left_before, bins_by_feature, rows,
                   starts, ends, p_feature, p_bin, p_default_left, p_type, p_bits, n_bins,
                   scratch, n_left, start, end, first_child)
        child = first_child + 2 * i
        lo, hi = (start[child], end[child]) if small_left[i] else (start[child + 1],
                                                                   end[child + 1])
        h = flat(spare[i])
        for s in range(h.shape[0]):
            h[s] = 0
        accumulate(flat_bins, flat_gpair, rows, lo, hi, n_f, slot2, h)
        # flat views: one loop of plain integer subtractions, which vectorises
        parent, sibling = flat(cur[chosen[i]]), flat(spare[c + i])
        for s in range(sibling.shape[0]):
            sibling[s] = parent[s] - h[s]


@helper
def _partition(i, first_chunk, task_node, left_count, left_before, bins_by_feature, rows,
               starts, ends, p_feature, p_bin, p_default_left, p_type, p_bits, n_bins, scratch,
               n_left, start, end, first_child):
    """Parent ``i``'s rows partitioned (``partition_rows``' two passes over its chunks,
    in order) and its children's segments into ``start``, ``end``."""
    for t in range(first_chunk[i], first_chunk[i + 1]):
        left_count[t] = split_chunk(np.uint64(t), task_node, first_chunk, bins_by_feature,
                                    rows, starts, ends, p_feature, p_bin, p_default_left,
                                    p_type, p_bits, n_bins, scratch)
    running = 0
    for t in range(first_chunk[i], first_chunk[i + 1]):
        left_before[t] = running
        running += left_count[t]
    n_left[i] = running
    for t in range(first_chunk[i], first_chunk[i + 1]):
        place_chunk(np.uint64(t), task_node, first_chunk, rows, starts, ends, scratch,
                    left_count, left_before, n_left)
    child = first_child + 2 * i
    middle = starts[i] + running
    start[child], end[child] = starts[i], middle
    start[child + 1], end[child + 1] = middle, ends[i]


@helper
def parent_cost(rows, small_rows, n_features):
    """A parent's work in accumulated cells: partition (4 a row, as ``grow_tree`` counts
    it) and the smaller child's histogram (a cell a row and feature)."""
    return 4 * rows + small_rows * n_features
