"""A whole depthwise tree in one compiled call, its leaf values added to the margins.

On a small table a tree level is little work, and ``gbm.tree.grower.TreeGrower`` spends
more on each level's Python, NumPy and kernel dispatch than on the rows (5,000 rows:
about 1 ms a tree, most of a round; bench/PROFILE_small.md). ``grow_tree`` runs the
same algorithm (its reference, the oracle of the tests: ``TreeGrower`` with the level
kernels) without leaving compiled code: per level the feature masks, every node's best
split (``evaluate_splits``), the choice of the nodes to split (``max_leaves``: the best
gains first), the rows partitioned (``partition_rows``), the smaller children's
histograms built (``build_histograms``) and their siblings' subtracted; then the tree's
arrays, and the leaves' values added to the margins (``add_split_values`` on the last
level). Node ids follow ``TreeGrower``'s order of creation (a level's smaller children,
in their parents' order, then their siblings), so the model file is the same, byte for
byte.

The level kernels are called as they are (compiled once, for both paths); a step whose
work is under ``MIN_WORK`` cells runs on one thread (a parallel region's wake-up costs
more than such work), as ``Backend.threads`` decides for ``TreeGrower``. Every sum is an
integer sum, so neither changes a bit. The glue is inlined into this one function: Numba
links and optimises a callee's code again in every function above it, so helpers in
between would multiply the compile time.
"""
import numpy as np

from ..jit import helper, kernel
from ..split_math import cpu as _split_math
from .histogram import build_histograms
from .node_masks import feature_masks
from .partition import add_split_values, partition_rows
from .partition_steps import chunk_tasks
from .split import evaluate_splits
from .thread_count import set_thread_count, thread_count
from .tree_level import deal, parent_cost, run_level
from .views import flat

bounded_weight = _split_math.bounded_weight
_MIN_GAIN = 1e-6  # gbm.tree.grower._MIN_GAIN (XGBoost's kRtEps)
_EVALUATION_COST = 8  # a histogram slot's split evaluation, in accumulated cells
_LOWEST = np.finfo(np.float32).min  # the threshold of split bin -1

# a level of more rows keeps the level kernels (balanced over rows): fused, 200,000-row
# fits measured 4-14% slower on two threads (loaded machine); 20,000-50,000 rows 1-4% faster
_FUSED_MAX_ROWS = 131072
# settings: int64 (8,); FUSED: 1 a level fused where that is estimated faster, 0 never,
# 2 wherever it has two threads (tests compare the three)
MAX_DEPTH, MAX_LEAVES, MAX_CAT_TO_ONEHOT, MAX_CAT_THRESHOLD, MIN_WORK, ALL_FEATURES, \
    EVERY_ROW, FUSED = range(8)
# numbers: float64 (9,): layout.SPLIT_PARAMS, then these
LEARNING_RATE, GAMMA, SCALE_G, SCALE_H, BY_NODE = range(4, 9)
# nodes: the tree under construction, one entry per node
START, END, DEPTH, SUMS, BOUNDS, FEATURE, SPLIT_BIN, DEFAULT_LEFT, SPLIT_TYPE, GAIN, LEFT, \
    CAT_BITS, PATH = range(13)
# level: a level's work arrays, one entry per node of the level
IDS, CHOSEN, NODE_SUMS, NODE_BOUNDS, NODE_SCALES, MASK, BEST_GAIN, BEST_FEATURE, BEST_BIN, \
    BEST_DEFAULT_LEFT, LEFT_SUMS, BEST_BITS, STARTS, ENDS, P_FEATURE, P_BIN, P_DEFAULT_LEFT, \
    P_TYPE, P_BITS, N_LEFT, LEFT_VALUES, RIGHT_VALUES, NEXT_IDS = range(23)


@kernel
def grow_tree(bins, bins_by_feature, gpair, rows, scratch, features, sampling, settings, numbers,
              nodes, level, hist_a, hist_b, column, tree):
    """Grow one depthwise tree on ``rows`` and add its leaf values to ``column``.

    bins : uint8/uint16 (n_rows, n_features); bins_by_feature : the same, (n_features, n_rows)
    gpair : int64 (n_rows, 2)              # IN  fixed-point (g, h)
    rows : int32 (m,)                      # IN/OUT the tree's rows; partitioned in place
                                           #     (settings[EVERY_ROW]: written 0 .. m - 1
                                           #     first: no array of every row to copy)
    scratch : int32 (m,)                   # work space
    features : (feature_offsets int32 (n_features + 1,), n_bins int32 (n_features,),
                is_categorical uint8, monotone int8, cut_values float32 (n_cuts,),
                cut_offsets int64 (n_features + 1,): feature f's bin edges
                cut_values[cut_offsets[f]:cut_offsets[f + 1]],
                interaction uint8 (n_sets, n_features): no rows, no constraints)   # IN
    sampling : (level_features int64 (max_depth, n_features), level_sizes int64
                (max_depth,), node_key uint64): ``node_masks.feature_masks``   # IN
    settings : int64 (8,), numbers : float64 (9,)   # IN  see the constants above
    nodes : 13 arrays of c entries (c: the most nodes the tree can have): start, end
            int64; depth int32; sums int64 (c, 2); bounds float64 (c, 2); feature,
            split_bin int32; default_left, split_type uint8; gain float64; left int32;
            cat_bits uint32 (c, n_words); path uint8 (c, n_features), or no rows without
            interaction constraints   # work space
    level : 23 arrays of (c + 1) // 2 entries, the most nodes of a level (see ``IDS``
            .. ``NEXT_IDS``; dtypes and shapes as ``evaluate_splits`` and
            ``partition_rows`` take them)   # work space
    hist_a, hist_b : int64 (k, n_slots, 2)   # work space: a level's histograms
    column : float64 (n_rows,)             # IN/OUT margins: + each row's leaf value
    tree : (split_feature int32, split_bin int32, threshold float32, default_left uint8,
            left_child int32, right_child int32, value float64, gain float64,
            cover float64, split_type uint8, cat_bits uint32 (c, n_words))   # OUT

    Returns ``(n_nodes, n_categorical_nodes, hist_a, hist_b, n_fused)``: the tree is the
    first ``n_nodes`` entries of ``tree`` (``cat_bits``: its first ``n_categorical_nodes``
    rows); the histogram buffers are new ones when a level needed more room; ``n_fused``
    levels ran fused (``tree_level.py``).
    """
    feature_offsets, n_bins, is_categorical, monotone, cut_values, cut_offsets, \
        interaction = features
    start, end, depth, sums, bounds, feature, split_bin, default_left, split_type, gain, \
        left, cat_bits, path = nodes
    ids, chosen, node_sums, node_bounds, node_scales, mask, best_gain, best_feature, best_bin, \
        best_default_left, left_sums, best_bits, starts, ends, p_feature, p_bin, \
        p_default_left, p_type, p_bits, n_left, left_values, right_values, next_ids = level
    split_params = numbers[:4]
    max_depth, max_leaves, min_work = settings[MAX_DEPTH], settings[MAX_LEAVES], settings[MIN_WORK]
    n_threads = thread_count()
    n_features = bins.shape[1]
    # counts as int64 values, not literals: a callee typed with a literal compiles twice
    one = np.int64(1)
    n_nodes, n_ids, n_leaves = one, one, one
    n_fused = 0  # levels run fused (tree_level.py)
    root = n_nodes - one
    if settings[EVERY_ROW]:
        for i in range(rows.shape[0]):
            rows[i] = i
    _init_node(nodes, root, root)
    end[root] = rows.shape[0]
    for f in range(n_features if path.shape[0] else 0):  # the root's path: no feature yet
        path[root, f] = 0
    ids[root] = root
    hist_a = _room(hist_a, one)
    set_thread_count(_threads(n_threads, rows.shape[0] * n_features, min_work))
    if settings[EVERY_ROW]:  # rows[i] == i: read in order, no ids (histogram.py)
        build_histograms(bins, gpair, None, start[:1], end[:1], feature_offsets, hist_a[:1],
                         thread_count())
    else:
        build_histograms(bins, gpair, rows, start[:1], end[:1], feature_offsets, hist_a[:1],
                         thread_count())
    for i in range(feature_offsets[0], feature_offsets[1]):  # every feature holds all rows
        sums[root, 0] += hist_a[root, i, 0]
        sums[root, 1] += hist_a[root, i, 1]
    cur, spare = hist_a, hist_b
    # the fused levels' work space (tree_level.py): the threads' parents
    width = ids.shape[0]
    plan = np.empty((n_threads, width), dtype=np.int64)
    counts = np.empty(n_threads, dtype=np.int64)
    costs = np.empty(width, dtype=np.int64)
    small_left = np.empty(width, dtype=np.uint8)
    slot2 = np.empty(n_features, dtype=np.uint64)
    for f in range(n_features):
        slot2[f] = np.uint64(2 * feature_offsets[f])
    flat_bins, flat_gpair, n_f = flat(bins), flat(gpair), np.uint64(n_features)
    # -- the root's best split (TreeGrower._evaluate) ---------------------------------------
    _level_inputs(ids, n_ids, nodes, numbers, settings, sampling, interaction, node_sums,
                  node_bounds, node_scales, mask)
    set_thread_count(_threads(n_threads, _EVALUATION_COST * n_ids * cur.shape[1], min_work))
    evaluate_splits(cur[:n_ids], feature_offsets, one, is_categorical, node_sums[:n_ids],
                    mask[:n_ids], monotone, node_bounds[:n_ids], node_scales[:n_ids],
                    split_params, settings[MAX_CAT_TO_ONEHOT], settings[MAX_CAT_THRESHOLD],
                    best_gain[:n_ids], best_feature[:n_ids], best_bin[:n_ids],
                    best_default_left[:n_ids], left_sums[:n_ids], best_bits[:n_ids])
    while True:
        # -- the nodes to split (TreeGrower._grow_depthwise) --------------------------------
        c = _choose(best_gain, ids, n_ids, max_leaves, numbers[GAMMA], n_leaves, chosen)
        if c == 0:
            break
        n_leaves += c
        # -- their splits (_record) and children (_split, _child_bounds) --------------------
        work = 0
        for i in range(c):
            at, node = chosen[i], ids[chosen[i]]
            f = best_feature[at]
            feature[node], gain[node], default_left[node] = f, best_gain[at], best_default_left[at]
            if _categorical(is_categorical, f):
                split_type[node] = 1
                for w in range(cat_bits.shape[1]):
                    cat_bits[node, w] = best_bits[at, w]
            else:
                split_bin[node] = best_bin[at]
            child = n_nodes + 2 * i
            left[node] = child
            _init_node(nodes, child, depth[node] + 1)
            _init_node(nodes, child + 1, depth[node] + 1)
            for j in range(2):
                sums[child, j] = left_sums[at, j]
                sums[child + 1, j] = sums[node, j] - left_sums[at, j]
                bounds[child, j] = bounds[child + 1, j] = bounds[node, j]
            if monotone[f] != 0:  # the bound between the children: the mean of their weights
                mid = 0.5 * (_weight(sums[child], bounds[node], numbers)
                             + _weight(sums[child + 1], bounds[node], numbers))
                if monotone[f] > 0:
                    bounds[child, 1] = bounds[child + 1, 0] = mid
                else:
                    bounds[child, 0] = bounds[child + 1, 1] = mid
            if path.shape[0]:
                for g in range(n_features):
                    path[child, g] = path[child + 1, g] = path[node, g]
                path[child, f] = path[child + 1, f] = 1
            starts[i], ends[i] = start[node], end[node]
            p_feature[i], p_bin[i] = f, split_bin[node]
            p_default_left[i], p_type[i] = default_left[node], split_type[node]
            for w in range(cat_bits.shape[1]):
                p_bits[i, w] = cat_bits[node, w]
            work += end[node] - start[node]
        first_child = n_nodes
        n_nodes += 2 * c
        if max_depth > 0 and depth[n_nodes - 1] >= max_depth:
            # children that are leaves: their values go straight into the margins, where
            # the partition would send each row; the leaves keep no rows
            set_thread_count(_threads(n_threads, 4 * work, min_work))
            for i in range(c):
                child = first_child + 2 * i
                left_values[i] = numbers[LEARNING_RATE] * _weight(sums[child], bounds[child],
                                                                  numbers)
                right_values[i] = numbers[LEARNING_RATE] * _weight(
                    sums[child + 1], bounds[child + 1], numbers)
            add_split_values(bins_by_feature, rows, starts[:c], ends[:c], p_feature[:c],
                             p_bin[:c], p_default_left[:c], p_type[:c], p_bits[:c], n_bins,
                             left_values[:c], right_values[:c], column)
            break
        # -- the next level: smaller children (by hessian sum) first, then their siblings ---
        total = 0
        for i in range(c):
            child = first_child + 2 * i
            small_left[i] = sums[child, 1] <= sums[child + 1, 1]
            small = child if small_left[i] else child + 1
            next_ids[i], next_ids[c + i] = small, 2 * child + 1 - small
            parent = ids[chosen[i]]
            m = ends[i] - starts[i]
            share = sums[small, 1] / sums[parent, 1] if sums[parent, 1] > 0 else 0.5
            costs[i] = parent_cost(m, np.int64(m * share), n_features)
            total += costs[i]
        n_ids = 2 * c
        spare = _room(spare, n_ids)
        workers = _threads(n_threads, total, min_work)
        # fused on several threads when its largest thread's parents cost no more than
        # the level kernels' two steps would take (each on the threads its own work earns:
        # balanced over rows, but at 20,000-50,000 rows mostly on one), for a level of
        # fewer than _FUSED_MAX_ROWS rows; on one thread the level kernels (measured as
        # fast or faster there)
        fused = False
        if workers > 1 and (settings[FUSED] == 2
                            or (settings[FUSED] == 1 and work < _FUSED_MAX_ROWS)):
            steps = (_on_threads(4 * work, n_threads, min_work)
                     + _on_threads(total - 4 * work, n_threads, min_work))
            fused = deal(costs, c, workers, plan, counts) <= steps or settings[FUSED] == 2
        if fused:  # partition, histograms and subtraction a parent at a time
            first_chunk, task_node = chunk_tasks(starts[:c], ends[:c])
            n_tasks = task_node.shape[0]
            part = (first_chunk, task_node, np.empty(n_tasks, dtype=np.int64),
                    np.empty(n_tasks, dtype=np.int64), bins_by_feature, rows, starts[:c],
                    ends[:c], p_feature[:c], p_bin[:c], p_default_left[:c], p_type[:c],
                    p_bits[:c], n_bins, scratch, n_left[:c], start, end, first_child,
                    small_left)
            hists = (flat_bins, flat_gpair, n_f, slot2, cur, spare, chosen, np.int64(c))
            set_thread_count(workers)
            run_level(workers, plan, counts, part, hists)
            n_fused += 1
        else:  # the level kernels, each parallel over rows
            set_thread_count(_threads(n_threads, 4 * work, min_work))
            partition_rows(bins_by_feature, rows, starts[:c], ends[:c], p_feature[:c],
                           p_bin[:c], p_default_left[:c], p_type[:c], p_bits[:c], n_bins,
                           scratch, n_left[:c])
            work = 0
            for i in range(c):
                child = first_child + 2 * i
                start[child], end[child] = starts[i], starts[i] + n_left[i]
                start[child + 1], end[child + 1] = starts[i] + n_left[i], ends[i]
                starts[i], ends[i] = start[next_ids[i]], end[next_ids[i]]
                work += ends[i] - starts[i]
            set_thread_count(_threads(n_threads, work * n_features, min_work))
            build_histograms(bins, gpair, rows, starts[:c], ends[:c], feature_offsets,
                             spare[:c], thread_count())
            for i in range(c):  # the siblings': the parent's minus the smaller child's
                # flat views: one loop of plain integer subtractions, which vectorises
                # (measured 13-17% less subtraction time than indexing (slot, 0 / 1))
                parent_hist = flat(cur[chosen[i]])
                smaller, sibling = flat(spare[i]), flat(spare[c + i])
                for s in range(sibling.shape[0]):
                    sibling[s] = parent_hist[s] - smaller[s]
        # -- every child's best split (TreeGrower._evaluate) --------------------------------
        for i in range(n_ids):
            ids[i] = next_ids[i]
        _level_inputs(ids, n_ids, nodes, numbers, settings, sampling, interaction, node_sums,
                      node_bounds, node_scales, mask)
        set_thread_count(_threads(n_threads, _EVALUATION_COST * n_ids * cur.shape[1],
                                  min_work))
        evaluate_splits(spare[:n_ids], feature_offsets, one, is_categorical, node_sums[:n_ids],
                        mask[:n_ids], monotone, node_bounds[:n_ids], node_scales[:n_ids],
                        split_params, settings[MAX_CAT_TO_ONEHOT], settings[MAX_CAT_THRESHOLD],
                        best_gain[:n_ids], best_feature[:n_ids], best_bin[:n_ids],
                        best_default_left[:n_ids], left_sums[:n_ids], best_bits[:n_ids])
        cur, spare = spare, cur
    set_thread_count(n_threads)
    n_cat = _finish(n_nodes, nodes, cut_values, cut_offsets, numbers, rows, column, tree)
    return n_nodes, n_cat, cur, spare, n_fused


@helper
def _level_inputs(ids, n_ids, nodes, numbers, settings, sampling, interaction, node_sums,
                  node_bounds, node_scales, mask):
    """A level's nodes' sums, bounds, scales and feature masks, in ``ids`` order
    (``TreeGrower._evaluate``)."""
    sums, bounds = nodes[SUMS], nodes[BOUNDS]
    for i in range(n_ids):
        for j in range(2):
            node_sums[i, j] = sums[ids[i], j]
            node_bounds[i, j] = bounds[ids[i], j]
        node_scales[i, 0], node_scales[i, 1] = numbers[SCALE_G], numbers[SCALE_H]
        for f in range(mask.shape[1]):
            mask[i, f] = 1
    if not settings[ALL_FEATURES]:
        feature_masks(ids, n_ids, nodes[DEPTH][ids[0]], sampling[0], sampling[1], sampling[2],
                      numbers[BY_NODE], interaction, nodes[PATH], mask)


@helper
def _categorical(is_categorical, f):
    """Whether feature ``f`` is categorical; ``is_categorical`` None: no feature is (the
    categorical code is then not compiled, here nor in ``evaluate_splits``)."""
    if is_categorical is not None and is_categorical[f]:
        return True
    return False


@helper
def _threads(n_threads, work, min_work):
    """Threads for a step of ``work`` cells (``gbm.runtime.backend.Backend.threads_for``)."""
    return n_threads if work >= min_work else 1


@helper
def _on_threads(work, n_threads, min_work):
    """A step's ``work`` shared by the threads it earns (``_threads``)."""
    return work // _threads(n_threads, work, min_work)


@helper
def _room(hist, n):
    """``hist``, or a larger buffer when it has room for fewer than ``n`` nodes."""
    if hist.shape[0] >= n:
        return hist
    return np.empty((max(n, 2 * hist.shape[0]), hist.shape[1], 2), dtype=np.int64)


@helper
def _init_node(nodes, node, node_depth):
    """A new node: no split, no rows, no sums, unbounded weight."""
    nodes[START][node] = nodes[END][node] = 0
    nodes[DEPTH][node] = node_depth
    nodes[SUMS][node, 0] = nodes[SUMS][node, 1] = 0
    nodes[BOUNDS][node, 0], nodes[BOUNDS][node, 1] = -np.inf, np.inf
    nodes[FEATURE][node], nodes[LEFT][node] = -1, -1
    nodes[SPLIT_BIN][node] = 0
    nodes[DEFAULT_LEFT][node] = nodes[SPLIT_TYPE][node] = 0
    nodes[GAIN][node] = 0.0
    for i in range(nodes[CAT_BITS].shape[1]):
        nodes[CAT_BITS][node, i] = 0


@helper
def _weight(node_sums, node_bounds, numbers):
    """A node's weight before the learning rate (``split.node_weights``)."""
    return bounded_weight(node_sums[0] / numbers[SCALE_G], node_sums[1] / numbers[SCALE_H],
                          numbers[0], numbers[1], numbers[2], node_bounds[0], node_bounds[1])


@helper
def _choose(gain, ids, n_ids, max_leaves, gamma, n_leaves, chosen):
    """Positions (in ``ids``) of the nodes to split into ``chosen``; returns their count:
    the gains above ``_MIN_GAIN`` and ``gamma``, and with ``max_leaves`` the best
    ``max_leaves - n_leaves`` of those (higher gain, then lower id, first) by node id
    (``TreeGrower._grow_depthwise``)."""
    c = 0
    for i in range(n_ids):
        if gain[i] > _MIN_GAIN and gain[i] >= gamma:
            chosen[c] = i
            c += 1
    if max_leaves == 0 or c == 0:
        return c
    for i in range(1, c):  # insertion sort, best first
        x = chosen[i]
        j = i
        while j > 0 and (gain[chosen[j - 1]] < gain[x] or (
                gain[chosen[j - 1]] == gain[x] and ids[chosen[j - 1]] > ids[x])):
            chosen[j] = chosen[j - 1]
            j -= 1
        chosen[j] = x
    c = max(0, min(c, max_leaves - n_leaves))
    for i in range(1, c):  # the kept ones by node id
        x = chosen[i]
        j = i
        while j > 0 and ids[chosen[j - 1]] > ids[x]:
            chosen[j] = chosen[j - 1]
            j -= 1
        chosen[j] = x
    return c


@helper
def _finish(n_nodes, nodes, cut_values, cut_offsets, numbers, rows, column, tree):
    """The tree's arrays (``TreeGrower._finish``), and the values of the leaves that hold
    rows (those above the last level) added to their rows' margins; returns the number
    of categorical nodes."""
    start, end, sums, bounds, feature, left = (nodes[START], nodes[END], nodes[SUMS],
                                               nodes[BOUNDS], nodes[FEATURE], nodes[LEFT])
    out_feature, out_bin, out_threshold, out_default_left, out_left, out_right, out_value, \
        out_gain, out_cover, out_type, out_bits = tree
    n_cat = 0
    for k in range(n_nodes):
        weight = _weight(sums[k], bounds[k], numbers)
        out_cover[k] = sums[k, 1] / numbers[SCALE_H]
        inner = left[k] >= 0
        out_feature[k] = feature[k] if inner else -1
        out_left[k] = left[k] if inner else -1
        out_right[k] = left[k] + 1 if inner else -1
        out_default_left[k] = nodes[DEFAULT_LEFT][k] if inner else 0
        out_gain[k] = nodes[GAIN][k] if inner else 0.0
        out_type[k] = nodes[SPLIT_TYPE][k] if inner else 0
        out_bin[k] = 0
        out_threshold[k] = 0.0
        if inner and out_type[k] == 1:
            for w in range(out_bits.shape[1]):
                out_bits[n_cat, w] = nodes[CAT_BITS][k, w]
            n_cat += 1
        elif inner:
            b = nodes[SPLIT_BIN][k]
            out_bin[k] = b
            # split bin -1 (a one-bin feature's value rows against its missing ones): no
            # value lies below float32's lowest number (TreeData.thresholds)
            out_threshold[k] = (_LOWEST if b < 0
                                else cut_values[cut_offsets[feature[k]] + b])
        if inner:
            out_value[k] = weight
        else:
            value = numbers[LEARNING_RATE] * weight
            out_value[k] = value
            for p in range(start[k], end[k]):
                column[rows[p]] += value
    return n_cat
