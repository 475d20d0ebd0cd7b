"""The partition's steps that other kernels share (``partition.py``, ``csr.py``,
``paged.py``, ``tree_level.py``, ``grow_tree.py``): a row's way at a split, the chunks a
batch of nodes' segments is cut into, and a chunk's two passes (its rows sorted into
``scratch``, then placed)."""
import numpy as np

from ..jit import helper
from .prefetch import DISTANCE, prefetch, sparse

PARTITION_CHUNK = 16384  # rows per partition task: small enough to balance, big enough to amortise


@helper
def chunk_tasks(node_starts, node_ends):
    """Cut every node's segment into chunks: ``(first_chunk, task_node)``."""
    n_nodes = node_starts.shape[0]
    first_chunk = np.zeros(n_nodes + 1, dtype=np.int64)
    for k in range(n_nodes):
        size = node_ends[k] - node_starts[k]
        first_chunk[k + 1] = first_chunk[k] + (size + PARTITION_CHUNK - 1) // PARTITION_CHUNK
    task_node = np.empty(first_chunk[n_nodes], dtype=np.int64)
    for k in range(n_nodes):
        for c in range(first_chunk[k], first_chunk[k + 1]):
            task_node[c] = k
    return first_chunk, task_node


@helper
def goes_left(b, missing_bin, threshold, missing_left, categorical, cat_bits, k):
    """One row's way at node ``k``: missing values the default way; numeric, bins up to
    the threshold left; categorical, codes outside the set left (see layout.py)."""
    if b == missing_bin:
        return missing_left
    if categorical:
        return ((cat_bits[k, b >> 5] >> np.uint32(b & 31)) & np.uint32(1)) == 0
    return b <= threshold


@helper
def lefts_before(n_nodes, first_chunk, left_count, out_n_left):
    """int64 (n_tasks,): each chunk's left rows before it in its node, a running sum over
    the node's chunks in order; each node's left rows into ``out_n_left``."""
    left_before = np.zeros(left_count.shape[0], dtype=np.int64)
    for k in range(n_nodes):
        running = 0
        for task in range(first_chunk[k], first_chunk[k + 1]):
            left_before[task] = running
            running += left_count[task]
        out_n_left[k] = running
    return left_before


@helper
def split_chunk(task, task_node, first_chunk, bins_by_feature, rows, node_starts, node_ends,
                split_feature, split_bin, default_left, split_type, cat_bits, n_bins, scratch):
    """One chunk's rows into its stretch of ``scratch``: left rows forward from the start,
    right rows backward from the end; returns the rows going left. No branch on the way:
    each row is written at both free ends and only the end it belongs to moves on (the
    other write lands on a free place, overwritten later)."""
    k = task_node[task]
    column = bins_by_feature[split_feature[k]]
    missing_bin = n_bins[split_feature[k]]
    threshold = split_bin[k]
    missing_left = default_left[k] == 1
    categorical = split_type[k] == 1
    lo = node_starts[k] + (task - first_chunk[k]) * PARTITION_CHUNK
    hi = min(lo + PARTITION_CHUNK, node_ends[k])
    far = sparse(node_ends[k] - node_starts[k], column.shape[0], column.itemsize)
    left = lo
    right = hi - 1
    for p in range(lo, hi):
        if far and p + DISTANCE < hi:
            prefetch(column, np.uint64(rows[p + DISTANCE]))
        r = rows[p]
        b = np.int32(column[np.uint64(r)])  # unsigned: no wrap-around test
        go = np.int64(goes_left(b, missing_bin, threshold, missing_left, categorical,
                                cat_bits, k))
        scratch[np.uint64(left)] = r
        scratch[np.uint64(right)] = r
        left += go
        right -= 1 - go
    return left - lo


@helper
def place_chunk(task, task_node, first_chunk, rows, node_starts, node_ends, scratch,
                left_count, left_before, n_left):
    """One chunk's left run after the left rows of the chunks before it, its right run
    (read backward) after all the node's left rows and the right rows before it."""
    k = task_node[task]
    lo = node_starts[k] + (task - first_chunk[k]) * PARTITION_CHUNK
    hi = min(lo + PARTITION_CHUNK, node_ends[k])
    n = left_count[task]
    at = node_starts[k] + left_before[task]
    for i in range(n):
        rows[np.uint64(at + i)] = scratch[np.uint64(lo + i)]
    at = node_starts[k] + n_left[k] + (lo - node_starts[k]) - left_before[task]
    for i in range(hi - lo - n):
        rows[np.uint64(at + i)] = scratch[np.uint64(hi - 1 - i)]
