"""Vector-leaf trees (``multi_strategy="multi_output_tree"``): histograms with one
gradient pair per output in each bin, built in one pass over a node's rows, and the
best split of every node by the sum over outputs of the single-output gain.

Twins of ``kernels/reference/vector_leaf.py``. Each task is one node and a block of its
features (histograms) or one (node, feature) pair (splits) and writes only its own slots
or its own row of the task outputs; the tasks' bests are reduced per node in feature
order with a strict ``>``, so the result is the same on any thread count. Histogram sums
are integer sums.

The split rule is XGBoost's multi-target one (``src/tree/split_evaluator.h``,
``MultiCalcSplitGain`` in ``src/tree/hist/evaluate_splits.h`` of XGBoost 3.2 and 3.3):
gain = sum over outputs ``t`` of ``output_gain(G_t, H_t)`` for both children less the
parent's, where an output whose hessian ``H_t`` is not positive or is below
``min_child_weight`` counts 0 (``CalcWeight`` in ``src/tree/param.h`` gives it weight 0,
and its gain is ``-w_t * G_t``). No other check: ``min_child_weight`` never refuses a
split outright, and a node's weight is 0 in each output lighter than it.

Monotone constraints (XGBoost 3.4's vector rule, ``src/tree/split_evaluator.h``): every
node has a lower and an upper bound per output, and each output's weight is clamped into
them. On a constrained feature, an output whose two clamped child weights are in the wrong
order has both replaced by one pooled weight, the weight of the node's sums with twice
``reg_lambda`` and ``reg_alpha`` (each child still pays its own penalty), clamped; the
output's gain is then each child's loss at that weight (``gain_given_weight``). The
children's bounds: ``mid = wl + 0.5 * (wr - wl)`` per output (the split weights) is the
left child's upper and the right child's lower bound for +1, the other way round for -1.
"""
import numpy as np
from numba import prange

from ..jit import helper, kernel
from .vector_split import (bounded_output_weight, bounded_parent_gain, feature_best,
                           output_weight, parent_gain, reduce_tasks, split_weights)


@kernel(parallel=True)
def build_vector_histograms(bins_by_feature, gpair, rows, node_starts, node_ends,
                            feature_offsets, hist):
    """Sum each node's rows' gradient pairs, one pair per output, per feature bin.

    Parameters
    ----------
    bins_by_feature : uint8 or uint16 (n_features, n_rows)   # IN  dense bins, feature-major
    gpair : int64 (n_rows, k, 2)                             # IN  fixed-point, per output
    rows : int32 (m,)                                        # IN  row ids grouped by node
    node_starts, node_ends : int64 (n_nodes,)                # IN  each node's segment of rows
    feature_offsets : int32 (n_features + 1,)                # IN  feature f's slots
    hist : int64 (n_nodes, n_slots, k, 2)                    # OUT

    A task is one node and a block of features (its slots are its own: no races); it reads
    each of its rows' ``2k`` pairs once for the whole block (a row's pairs are 128 bytes
    at k = 8: read once per feature they were most of the traffic), chunk by chunk of rows
    whose bins are first gathered into a small row-major table of slots.
    """
    n_nodes = node_starts.shape[0]
    n_features = bins_by_feature.shape[0]
    n_rows, k = gpair.shape[0], gpair.shape[1]
    width = 2 * k
    flat_pairs = gpair.reshape(n_rows, width)
    flat_hist = hist.reshape(n_nodes, hist.shape[1], width)
    n_blocks = _feature_blocks(n_features, n_nodes)
    for task in prange(n_nodes * n_blocks):
        node = task // n_blocks
        block = task - node * n_blocks
        f0 = block * n_features // n_blocks  # blocks of near-equal size, in feature order
        f1 = (block + 1) * n_features // n_blocks
        h = flat_hist[node]
        for s in range(feature_offsets[f0], feature_offsets[f1]):
            for c in range(width):
                h[s, c] = 0
        slots = np.empty((_ROW_CHUNK, f1 - f0), np.int64)
        for p0 in range(node_starts[node], node_ends[node], _ROW_CHUNK):
            m = min(_ROW_CHUNK, node_ends[node] - p0)
            for i in range(f1 - f0):
                lo = np.int64(feature_offsets[f0 + i])
                line = bins_by_feature[f0 + i]
                for q in range(m):
                    slots[q, i] = lo + np.int64(line[rows[p0 + q]])
            for q in range(m):
                pairs = flat_pairs[rows[p0 + q]]
                for i in range(f1 - f0):
                    s = slots[q, i]
                    for c in range(width):
                        h[s, c] += pairs[c]


_ROW_CHUNK = 256  # rows whose slots a histogram task gathers at a time
_BLOCK_FEATURES = 8  # about the features a histogram task sums (measured 6 .. 13 at k = 8)


@helper
def _feature_blocks(n_features, n_nodes):
    """How many blocks of features a node's histogram is cut into: blocks of about
    ``_BLOCK_FEATURES``; with fewer than 4 nodes, a multiple of 4 of them (so 1, 2 or 4
    threads share a root's work evenly). The blocks change the work's order only: the
    histograms are integer sums, the same on any thread count."""
    n_blocks = (n_features + _BLOCK_FEATURES - 1) // _BLOCK_FEATURES
    if n_nodes < 4:
        n_blocks = (n_blocks + 3) // 4 * 4
    return max(1, min(n_blocks, n_features))


@helper(error_model="numpy")
def _add_gain_terms(lg, lh, tg, th, inv_g, inv_h, lam, alpha, mcw, gains, m):
    """Add one output's two ``output_gain`` terms (left child, then right) to each of
    ``m`` candidates' running sums ``gains`` (float64), the left sums ``lg, lh`` (int64)
    and the node's ``tg, th``; uncapped weights (``max_delta_step`` 0) only. The same
    operations as ``output_gain`` (``split_math``'s ``node_gain``, uncapped) in the same
    order, written without calls or early returns: a tight loop over the candidates
    (measured: a 100,000-row tree's split searches 42 -> 27 ms of CPU). ``error_model``
    numpy: a quotient is only used where its divisor is positive. The twin tests hold it
    to the reference's formulas."""
    for i in range(m):
        gl, hl = lg[i] * inv_g, lh[i] * inv_h
        gr, hr = (tg - lg[i]) * inv_g, (th - lh[i]) * inv_h
        dl, dr = hl + lam, hr + lam
        tl = gl - alpha if gl > alpha else (gl + alpha if gl < -alpha else 0.0)
        tr = gr - alpha if gr > alpha else (gr + alpha if gr < -alpha else 0.0)
        vl = tl * tl / dl if dl > 0.0 else 0.0
        vr = tr * tr / dr if dr > 0.0 else 0.0
        gains[i] += vl if (hl > 0.0 and hl >= mcw) else 0.0
        gains[i] += vr if (hr > 0.0 and hr >= mcw) else 0.0


@helper
def _feature_best_uncapped(h, lo, hi, total, inv_scales, reg_lambda, reg_alpha,
                           min_child_weight, parent, best_sums, gains, lg, lh):
    """``feature_best`` (unbounded, ``max_delta_step`` 0), its candidates' gains summed
    output by output over all candidates at once (``_add_gain_terms``): each candidate's
    sum takes the same terms in the same order (outputs in turn, left then right), so the
    same gains, bests and ties. ``gains``, ``lg``, ``lh``: scratch of at least ``hi - lo``.
    """
    k = total.shape[0]
    n = hi - lo - 1  # value bins
    miss = hi - 1
    has_missing = False
    for j in range(k):
        if h[miss, j, 0] != 0 or h[miss, j, 1] != 0:
            has_missing = True
    best, best_bin, best_left = -np.inf, 0, 0
    m = 1 if n == 1 else n - 1  # candidates: as feature_best's steps
    for direction in range(2 if has_missing else 1):
        for i in range(m):
            gains[i] = 0.0
        for j in range(k):
            ag = h[miss, j, 0] if direction == 1 else 0
            ah = h[miss, j, 1] if direction == 1 else 0
            if n == 1:  # the missing rows alone on the left
                lg[0], lh[0] = ag, ah
            else:
                for i in range(m):
                    ag += h[lo + i, j, 0]
                    ah += h[lo + i, j, 1]
                    lg[i], lh[i] = ag, ah
            _add_gain_terms(lg, lh, total[j, 0], total[j, 1], inv_scales[j, 0],
                            inv_scales[j, 1], reg_lambda, reg_alpha, min_child_weight, gains, m)
        for i in range(m):
            b = -1 if n == 1 else i
            if b > 0:  # an empty bin above bin 0: no candidate
                empty = True
                for j in range(k):
                    if h[lo + b, j, 0] != 0 or h[lo + b, j, 1] != 0:
                        empty = False
                        break
                if empty:
                    continue
            gain = gains[i] - parent
            if gain > best:
                best, best_bin, best_left = gain, b, direction
    if best > -np.inf:  # the winner's left sums
        for j in range(k):
            best_sums[j, 0] = h[miss, j, 0] if best_left == 1 else 0
            best_sums[j, 1] = h[miss, j, 1] if best_left == 1 else 0
            for b in range(best_bin + 1):
                best_sums[j, 0] += h[lo + b, j, 0]
                best_sums[j, 1] += h[lo + b, j, 1]
    return best, best_bin, best_left


@kernel(parallel=True)
def evaluate_vector_splits(hist, feature_offsets, node_sums, mask, scales, split_params,
                           out_gain, out_feature, out_bin, out_left, out_left_sums):
    """Best split of every node of a dense layout's vector histograms.

    Parameters
    ----------
    hist : int64 (n_nodes, n_slots, k, 2)          # IN  value bins then missing, per feature
    feature_offsets : int32 (n_features + 1,)      # IN
    node_sums : int64 (n_nodes, k, 2)              # IN
    mask : uint8 (n_nodes, n_features)             # IN  features each node may split on
    scales : float64 (k, 2)                        # IN  each output's fixed-point scales
    split_params : float64 (4,)                    # IN  lambda, alpha, max_delta_step, min_child_weight
    out_gain : float64 (n_nodes,)                  # OUT -inf: no valid split
    out_feature, out_bin : int32 (n_nodes,)        # OUT feature -1: none
    out_left : uint8 (n_nodes,)                    # OUT missing values go left
    out_left_sums : int64 (n_nodes, k, 2)          # OUT the left child's sums
    """
    n_nodes, _, k, _ = hist.shape
    n_features = feature_offsets.shape[0] - 1
    lam, alpha, mds, mcw = split_params[0], split_params[1], split_params[2], split_params[3]
    n_tasks = n_nodes * n_features
    task_gain = np.full(n_tasks, -np.inf)
    task_bin = np.zeros(n_tasks, np.int32)
    task_left = np.zeros(n_tasks, np.uint8)
    task_sums = np.zeros((n_tasks, k, 2), np.int64)
    parents = np.empty(n_nodes)
    for node in range(n_nodes):
        parents[node] = parent_gain(node_sums[node], scales, lam, alpha, mds, mcw)
    no_bounds = np.zeros((k, 2))
    inv_scales = np.empty((k, 2))
    for j in range(k):
        inv_scales[j, 0], inv_scales[j, 1] = 1.0 / scales[j, 0], 1.0 / scales[j, 1]
    width = 1
    for f in range(n_features):
        width = max(width, np.int64(feature_offsets[f + 1] - feature_offsets[f]))
    for task in prange(n_tasks):
        node = task // n_features
        f = task - node * n_features
        if mask[node, f] == 0:
            continue
        if mds == 0.0:  # every candidate's gain at once, output by output
            gains = np.empty(width)
            lg, lh = np.empty(width, np.int64), np.empty(width, np.int64)
            gain, b, d = _feature_best_uncapped(hist[node], feature_offsets[f],
                                                feature_offsets[f + 1], node_sums[node],
                                                inv_scales, lam, alpha, mcw, parents[node],
                                                task_sums[task], gains, lg, lh)
        else:
            left = np.empty((k, 2), np.int64)
            gain, b, d = feature_best(hist[node], feature_offsets[f], feature_offsets[f + 1],
                                      node_sums[node], scales, lam, alpha, mds, mcw,
                                      parents[node], left, task_sums[task], False, no_bounds,
                                      0)
        task_gain[task], task_bin[task], task_left[task] = gain, b, d
    reduce_tasks(task_gain, task_bin, task_left, task_sums, n_features, out_gain,
                 out_feature, out_bin, out_left, out_left_sums)


@kernel(parallel=True)
def evaluate_vector_splits_monotone(hist, feature_offsets, node_sums, mask, node_bounds,
                                    monotone, scales, split_params, out_gain, out_feature,
                                    out_bin, out_left, out_left_sums):
    """``evaluate_vector_splits`` under monotone constraints (the rule in the module
    docstring); the extra inputs:

    node_bounds : float64 (n_nodes, k, 2)   # IN  each node's lower, upper bound per output
    monotone : int8 (n_features,)           # IN  +1 / -1 / 0
    """
    n_nodes, _, k, _ = hist.shape
    n_features = feature_offsets.shape[0] - 1
    lam, alpha, mds, mcw = split_params[0], split_params[1], split_params[2], split_params[3]
    n_tasks = n_nodes * n_features
    task_gain = np.full(n_tasks, -np.inf)
    task_bin = np.zeros(n_tasks, np.int32)
    task_left = np.zeros(n_tasks, np.uint8)
    task_sums = np.zeros((n_tasks, k, 2), np.int64)
    parents = np.empty(n_nodes)
    for node in range(n_nodes):
        parents[node] = bounded_parent_gain(node_sums[node], node_bounds[node], scales, lam,
                                            alpha, mds, mcw)
    for task in prange(n_tasks):
        node = task // n_features
        f = task - node * n_features
        if mask[node, f] == 0:
            continue
        left = np.empty((k, 2), np.int64)
        gain, b, d = feature_best(hist[node], feature_offsets[f], feature_offsets[f + 1],
                                  node_sums[node], scales, lam, alpha, mds, mcw,
                                  parents[node], left, task_sums[task], True,
                                  node_bounds[node], np.int64(monotone[f]))
        task_gain[task], task_bin[task], task_left[task] = gain, b, d
    reduce_tasks(task_gain, task_bin, task_left, task_sums, n_features, out_gain,
                 out_feature, out_bin, out_left, out_left_sums)


@kernel
def vector_bounded_weights(node_sums, node_bounds, scales, split_params, out):
    """``vector_node_weights`` clamped into each node's bounds.

    node_bounds : float64 (n_nodes, k, 2)   # IN  lower, upper per output
    (the other arguments as ``vector_node_weights``)
    """
    for node in range(node_sums.shape[0]):
        for j in range(node_sums.shape[1]):
            out[node, j] = bounded_output_weight(
                node_sums[node, j, 0] / scales[j, 0], node_sums[node, j, 1] / scales[j, 1],
                split_params[0], split_params[1], split_params[2], split_params[3],
                node_bounds[node, j, 0], node_bounds[node, j, 1])


@kernel
def vector_child_bounds(node_sums, left_sums, node_bounds, signs, scales, split_params,
                        out_left, out_right):
    """The children's bounds of split nodes: the parent's, and on a monotone feature
    ``mid = wl + 0.5 * (wr - wl)`` of each output's ``split_weights`` as the left child's
    upper and the right child's lower bound (+1), the other way round (-1).

    node_sums, left_sums : int64 (n, k, 2)        # IN  the split nodes' and left children's
    node_bounds : float64 (n, k, 2)               # IN
    signs : int8 (n,)                             # IN  the split feature's constraint
    scales : float64 (k, 2), split_params : float64 (4,)
    out_left, out_right : float64 (n, k, 2)       # OUT
    """
    lam, alpha, mds, mcw = split_params[0], split_params[1], split_params[2], split_params[3]
    for i in range(node_sums.shape[0]):
        sign = np.int64(signs[i])
        for j in range(node_sums.shape[1]):
            lo, hi = node_bounds[i, j, 0], node_bounds[i, j, 1]
            out_left[i, j, 0], out_left[i, j, 1] = lo, hi
            out_right[i, j, 0], out_right[i, j, 1] = lo, hi
            if sign == 0:
                continue
            inv_g, inv_h = 1.0 / scales[j, 0], 1.0 / scales[j, 1]
            gl, hl = left_sums[i, j, 0] * inv_g, left_sums[i, j, 1] * inv_h
            gr = (node_sums[i, j, 0] - left_sums[i, j, 0]) * inv_g
            hr = (node_sums[i, j, 1] - left_sums[i, j, 1]) * inv_h
            wl, wr, _ = split_weights(gl, hl, gr, hr, node_sums[i, j, 0] * inv_g,
                                      node_sums[i, j, 1] * inv_h, sign, lam, alpha, mds, mcw,
                                      lo, hi)
            mid = wl + 0.5 * (wr - wl)
            if sign > 0:
                out_left[i, j, 1] = mid
                out_right[i, j, 0] = mid
            else:
                out_left[i, j, 0] = mid
                out_right[i, j, 1] = mid


@kernel
def vector_node_weights(node_sums, scales, split_params, out):
    """Each node's weight per output (``output_weight`` of its sums; no learning rate).

    node_sums : int64 (n_nodes, k, 2)   # IN
    scales : float64 (k, 2)             # IN
    split_params : float64 (4,)         # IN
    out : float64 (n_nodes, k)          # OUT
    """
    for node in range(node_sums.shape[0]):
        for j in range(node_sums.shape[1]):
            out[node, j] = output_weight(node_sums[node, j, 0] / scales[j, 0],
                                         node_sums[node, j, 1] / scales[j, 1], split_params[0],
                                         split_params[1], split_params[2], split_params[3])


@kernel(parallel=True)
def vector_children_histograms(parent_hist, built, small_is_right, out):
    """The histograms of a level's children, pair by pair: the smaller child's (built from
    its rows) and its sibling's (the parent's less it), in child order (left, right).

    parent_hist : int64 (n_pairs, n_slots, k, 2)   # IN  the split nodes' histograms
    built : int64 (n_pairs, n_slots, k, 2)         # IN  each pair's smaller child's
    small_is_right : uint8 (n_pairs,)              # IN  1: the smaller child is the right one
    out : int64 (2 * n_pairs, n_slots, k, 2)       # OUT children 2i (left) and 2i + 1 (right)

    One pass over memory: a task is a run of ``_CELL_RUN`` consecutive cells of one pair
    (every array read and written in order).
    """
    n_pairs = built.shape[0]
    if n_pairs == 0:
        return
    cells = built.size // n_pairs
    parents = parent_hist.reshape(n_pairs, cells)
    smaller = built.reshape(n_pairs, cells)
    children = out.reshape(2 * n_pairs, cells)
    n_runs = (cells + _CELL_RUN - 1) // _CELL_RUN
    for task in prange(n_pairs * n_runs):
        i = task // n_runs
        c0 = (task - i * n_runs) * _CELL_RUN
        c1 = min(c0 + _CELL_RUN, cells)
        small_out = children[2 * i + np.int64(small_is_right[i])]
        other_out = children[2 * i + 1 - np.int64(small_is_right[i])]
        parent, small = parents[i], smaller[i]
        for c in range(c0, c1):
            value = small[c]
            small_out[c] = value
            other_out[c] = parent[c] - value


_CELL_RUN = 1 << 14  # cells (int64) of one subtraction task: 128 KiB a stream


@kernel(parallel=True)
def quantize_vector_pairs(grad, hess, scales, out):
    """Every output's fixed-point pairs, row-major: ``out[i, j] = (rint(grad[j, i] *
    scales[j, 0]), rint(hess[j, i] * scales[j, 1]))``, each value the same ``rint`` of the
    same product as ``quantize_gradients`` gives output ``j`` alone (the histograms'
    layout written directly, no output-major copy to transpose).

    grad, hess : float64 (k, n_rows)   # IN  output-major
    scales : float64 (k, 2)            # IN  each output's powers of two
    out : int64 (n_rows, k, 2)         # OUT
    """
    k, n = grad.shape
    for b in prange((n + _QUANTIZE_BLOCK - 1) // _QUANTIZE_BLOCK):
        for i in range(b * _QUANTIZE_BLOCK, min(n, (b + 1) * _QUANTIZE_BLOCK)):
            for j in range(k):
                out[i, j, 0] = np.int64(np.rint(grad[j, i] * scales[j, 0]))
                out[i, j, 1] = np.int64(np.rint(hess[j, i] * scales[j, 1]))


_QUANTIZE_BLOCK = 8192  # rows a task


@kernel(parallel=True)
def vector_segment_sums(gpair, rows, starts, ends, out):
    """Each segment's gradient-pair sums per output (integer sums: any order).

    gpair : int64 (k, n_rows, 2)               # IN  output-major
    rows : int32 (m,)                          # IN
    starts, ends : int64 (n_segments,)         # IN  segment s is rows[starts[s]:ends[s]]
    out : int64 (n_segments, k, 2)             # OUT
    """
    n_segments, k = starts.shape[0], gpair.shape[0]
    for task in prange(n_segments * k):
        s = task // k
        j = task - s * k
        g, h = np.int64(0), np.int64(0)
        for p in range(starts[s], ends[s]):
            r = rows[p]
            g += gpair[j, r, 0]
            h += gpair[j, r, 1]
        out[s, j, 0] = g
        out[s, j, 1] = h


@kernel(parallel=True)
def build_vector_feature_histograms(bins_by_feature, gpair, rows, node_starts, node_ends,
                                    features, hist):
    """One feature's histogram per node over every output, from output-major pairs (the
    projected search's constrained splits, re-searched on the full gradients).

    Parameters
    ----------
    bins_by_feature : uint8 or uint16 (n_features, n_rows)   # IN  dense bins
    gpair : int64 (k, n_rows, 2)                             # IN  output-major
    rows : int32 (m,)                                        # IN
    node_starts, node_ends : int64 (n_nodes,)                # IN  each node's rows
    features : int32 (n_nodes,)                              # IN  each node's feature
    hist : int64 (n_nodes, n_slots, k, 2)                    # OUT slot = bin (the last
                                                             #     value bin + 1: missing)
    """
    n_nodes, n_slots, k, _ = hist.shape
    for task in prange(n_nodes * k):  # a (node, output) task owns its cells: no races
        node = task // k
        j = task - node * k
        for s in range(n_slots):
            hist[node, s, j, 0] = 0
            hist[node, s, j, 1] = 0
        f = features[node]
        for p in range(node_starts[node], node_ends[node]):
            r = rows[p]
            s = np.int64(bins_by_feature[f, r])
            hist[node, s, j, 0] += gpair[j, r, 0]
            hist[node, s, j, 1] += gpair[j, r, 1]
