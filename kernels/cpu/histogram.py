"""Histograms of gradient pairs per node and feature bin (ragged layout, see layout.py).

Every sum is an integer sum, so the thread count cannot change any result.
"""
import numpy as np
from numba import prange

from ..jit import helper, kernel
from .histogram_steps import accumulate, segment_of
from .views import flat


@kernel
def build_histograms(bins, gpair, rows, node_starts, node_ends, feature_offsets, hist, n_threads):
    """Sum the gradient pairs of each node's rows into per-feature bin histograms.

    Parameters
    ----------
    bins : uint8 or uint16 (n_rows, n_features)    # IN  C order
    gpair : int64 (n_rows, 2)                      # IN  fixed-point (g, h)
    rows : int32 (m,)                              # IN  row ids grouped by node; None:
                                                   #     rows[i] == i (every row, in order)
    node_starts, node_ends : int64 (n_nodes,)      # IN  each node's segment of ``rows``
    feature_offsets : int32 (n_features + 1,)      # IN  feature f's slots (layout.py)
    hist : int64 (n_nodes, n_slots, 2)             # OUT overwritten
    n_threads : int

    The batch's rows, all nodes together, are cut into ``n_threads`` equal pieces; each
    thread sums its piece into a private histogram, and the private histograms are added
    (integers: the order does not matter). With many nodes, each thread instead takes the
    whole nodes that start in its piece.
    """
    n_nodes = node_starts.shape[0]
    n_features = bins.shape[1]
    n_slots = hist.shape[1]
    cumulative = np.zeros(n_nodes + 1, dtype=np.int64)
    for k in range(n_nodes):
        cumulative[k + 1] = cumulative[k] + (node_ends[k] - node_starts[k])
    total = cumulative[n_nodes]
    n_parts = max(1, min(n_threads, total // 4096 + 1))
    flat_bins = flat(bins)
    flat_gpair = flat(gpair)
    n_f = np.uint64(n_features)
    slot2 = np.empty(n_features, dtype=np.uint64)
    for f in range(n_features):
        slot2[f] = np.uint64(2 * feature_offsets[f])
    if n_parts == 1:
        for k in range(n_nodes):
            h = flat(hist[k])
            for i in range(h.shape[0]):
                h[i] = 0
            accumulate(flat_bins, flat_gpair, rows, node_starts[k], node_ends[k], n_f, slot2, h)
        return
    # Many nodes: each thread sums whole nodes (those whose rows start in its share of the
    # batch) straight into ``hist``; no private copies to clear and add up. Few nodes:
    # each thread sums its share of the rows into a private copy, added up afterwards.
    whole_nodes = n_nodes >= 4 * n_parts
    private = np.zeros((0 if whole_nodes else n_parts, n_nodes, 2 * n_slots), dtype=np.int64)
    _accumulate_parts(n_parts, whole_nodes, total, cumulative, flat_bins, flat_gpair, rows,
                      node_starts, node_ends, n_f, slot2, hist, private)
    if not whole_nodes:
        _add_private(private, hist)


@helper(parallel=True)
def _accumulate_parts(n_parts, whole_nodes, total, cumulative, flat_bins, flat_gpair, rows,
                      node_starts, node_ends, n_f, slot2, hist, private):
    """The threads' parts, in parallel: a function that is only the loop compiles fast
    (see ``split._evaluate_tasks``)."""
    for t in prange(n_parts):
        _accumulate_part(np.uint64(t), n_parts, whole_nodes, total, cumulative, flat_bins,
                         flat_gpair, rows, node_starts, node_ends, n_f, slot2, hist, private)


@helper
def _accumulate_part(t, n_parts, whole_nodes, total, cumulative, flat_bins, flat_gpair, rows,
                     node_starts, node_ends, n_f, slot2, hist, private):
    """Thread ``t``'s share of the batch: its whole nodes into ``hist``, or its rows into
    ``private[t]``."""
    lo = total * t // n_parts
    hi = total * (t + 1) // n_parts
    n_nodes = node_starts.shape[0]
    if whole_nodes:
        for k in range(n_nodes):
            if not (lo <= cumulative[k] < hi or (t == n_parts - 1 and cumulative[k] == total)):
                continue
            h = flat(hist[k])
            for i in range(h.shape[0]):
                h[i] = 0
            accumulate(flat_bins, flat_gpair, rows, node_starts[k], node_ends[k], n_f, slot2, h)
        return
    if lo >= hi:
        return
    k = segment_of(lo, cumulative)
    position = lo
    while position < hi:
        seg_end = min(hi, cumulative[k + 1])
        offset = node_starts[k] - cumulative[k]
        accumulate(flat_bins, flat_gpair, rows, position + offset, seg_end + offset, n_f,
                   slot2, private[t, k])
        position = seg_end
        k += 1


@helper
def _add_private(private, hist):
    """``hist`` = the sum of the threads' private copies (few nodes: a few hundred
    kilobytes at most, one pass)."""
    n_parts, n_nodes, width = private.shape
    for k in range(n_nodes):
        out = flat(hist[k])
        first = private[0, k]
        for i in range(width):
            out[i] = first[i]
        for t in range(1, n_parts):
            part = private[t, k]
            for i in range(width):
                out[i] += part[i]


def subtract_histograms(parent, child, out):
    """``out = parent - child``: the sibling's histogram without touching its rows.

    parent, child : int64 (n_nodes, n_slots, 2)  # IN
    out : int64, same shape                      # OUT

    NumPy's vectorised subtraction: as fast as a kernel, and nothing to compile.
    """
    np.subtract(parent, child, out=out)
