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

The tree's state is in named records (``tree_records.py``: ``Nodes``, ``Level``,
``Search``, ``Parents``, ``TreeArrays``; the read-only ``Features``, ``Sampling``,
``Settings`` and ``Numbers``): Numba named tuples of arrays and numbers, passed by value,
compiled and cached as any tuple. ``grow_tree`` is a loop of short named steps over them (``_choose``,
``_split_nodes``, ``_next_level``, ``_child_segments``, ...), which only keep the
books; the level kernels are called from the loop itself, each at one place: Numba links
and optimises a callee's code again in every function above it, so a step that called a
kernel would compile that kernel's code once more.

The level kernels are called as they are (compiled once, for both paths); a step whose
work is under ``Settings.min_work`` cells runs on one thread (a parallel region's wake-up
costs more than such work), as ``Backend.threads`` decides for ``TreeGrower``. Every sum
is an integer sum, so neither changes a bit.
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
from .tree_records import (Features, Fused, Level, Nodes, Numbers, Parents, Sampling, Search,
                           Settings, TreeArrays)
from .views import flat

bounded_weight = _split_math.bounded_weight
_MIN_GAIN = 1e-6  # gbm.tree.grower._MIN_GAIN (XGBoost's kRtEps)
_EVALUATION_COST = 8  # a histogram slot's split evaluation, in accumulated cells
_LOWEST = np.finfo(np.float32).min  # the threshold of split bin -1

# a level of more rows keeps the level kernels (balanced over rows): fused, 200,000-row
# fits measured 4-14% slower on two threads (loaded machine); 20,000-50,000 rows 1-4% faster
_FUSED_MAX_ROWS = 131072

@kernel
def grow_tree(bins, bins_by_feature, gpair, rows, scratch, features, sampling, settings,
              numbers, nodes, level, search, parents, hist_a, hist_b, column, tree):
    """Grow one depthwise tree on ``rows`` and add its leaf values to ``column``.

    bins : uint8/uint16 (n_rows, n_features); bins_by_feature : the same, (n_features, n_rows)
    gpair : int64 (n_rows, 2)              # IN  fixed-point (g, h)
    rows : int32 (m,)                      # IN/OUT the tree's rows; partitioned in place
    scratch : int32 (m,)                   # work space
    features, sampling, settings, numbers  # IN  ``Features``, ``Sampling``, ``Settings``,
                                           #     ``Numbers``
    nodes, level, search, parents          # work space: ``Nodes``, ``Level``, ``Search``,
                                           #     ``Parents``
    hist_a, hist_b : int64 (k, n_slots, 2)   # work space: a level's histograms
    column : float64 (n_rows,)             # IN/OUT margins: + each row's leaf value
    tree : ``TreeArrays``                  # OUT
    The records (``tree_records.py``) come as plain tuples of their fields: Numba types a
    named tuple argument in Python at every call, a tuple in C (measured 27 us a tree).

    Returns ``(n_nodes, n_categorical_nodes, hist_a, hist_b, n_fused)``: the tree is the
    first ``n_nodes`` entries of ``tree`` (``cat_bits``: its first ``n_categorical_nodes``
    rows); the histogram buffers are new ones when a level needed more room; ``n_fused``
    levels ran fused (``tree_level.py``).
    """
    features, sampling, settings, numbers = (Features(*features), Sampling(*sampling),
                                             Settings(*settings), Numbers(*numbers))
    nodes, level, search, parents, tree = (Nodes(*nodes), Level(*level), Search(*search),
                                           Parents(*parents), TreeArrays(*tree))
    n_threads, min_work = thread_count(), settings.min_work
    # counts as int64 values, not literals: a callee typed with a literal compiles twice
    one = np.int64(1)
    n_nodes, n_ids, n_leaves, n_fused = one, one, one, 0
    cur, spare = _room(hist_a, one), hist_b
    _start(rows, settings.every_row, nodes, level)
    set_thread_count(_threads(n_threads, rows.shape[0] * bins.shape[1], min_work))
    if settings.every_row:  # rows[i] == i: read in order, no ids (histogram.py)
        build_histograms(bins, gpair, None, nodes.start[:1], nodes.end[:1], features.offsets,
                         cur[:1], thread_count())
    else:
        build_histograms(bins, gpair, rows, nodes.start[:1], nodes.end[:1], features.offsets,
                         cur[:1], thread_count())
    _root_sums(nodes, cur, features.offsets)
    fused = _fused_space(n_threads, level.ids.shape[0], bins, gpair, features.offsets)
    while True:
        # -- every node's best split (TreeGrower._evaluate) ---------------------------------
        _search_inputs(level.ids, n_ids, nodes, numbers, settings, sampling, features, search)
        set_thread_count(_threads(n_threads, _EVALUATION_COST * n_ids * cur.shape[1],
                                  min_work))
        evaluate_splits(cur[:n_ids], features.offsets, one, features.is_categorical,
                        search.sums[:n_ids], search.mask[:n_ids], features.monotone,
                        search.bounds[:n_ids], search.scales[:n_ids], numbers.split_params,
                        settings.max_cat_to_onehot, settings.max_cat_threshold,
                        search.gain[:n_ids], search.feature[:n_ids], search.split_bin[:n_ids],
                        search.default_left[:n_ids], search.left_sums[:n_ids],
                        search.cat_bits[:n_ids])
        # -- the nodes to split (TreeGrower._grow_depthwise), their splits and children -----
        c = _choose(search.gain, level.ids, n_ids, settings.max_leaves, numbers.gamma,
                    n_leaves, level.chosen)
        if c == 0:
            break
        n_leaves += c
        work = _split_nodes(c, n_nodes, nodes, level, search, parents, features, numbers)
        first_child, n_nodes = n_nodes, n_nodes + 2 * c
        if settings.max_depth > 0 and nodes.depth[n_nodes - 1] >= settings.max_depth:
            # children that are leaves: their values go straight into the margins, where
            # the partition would send each row; the leaves keep no rows
            set_thread_count(_threads(n_threads, 4 * work, min_work))
            _leaf_values(c, first_child, nodes, numbers, parents)
            add_split_values(bins_by_feature, rows, parents.starts[:c], parents.ends[:c],
                             parents.feature[:c], parents.split_bin[:c],
                             parents.default_left[:c], parents.split_type[:c],
                             parents.cat_bits[:c], features.n_bins, parents.left_values[:c],
                             parents.right_values[:c], column)
            break
        # -- the next level: smaller children (by hessian sum) first, then their siblings ---
        total = _next_level(c, first_child, nodes, level, parents, fused, bins.shape[1])
        n_ids, spare = 2 * c, _room(spare, 2 * c)
        workers = _threads(n_threads, total, min_work)
        if _fuses(settings.fused, workers, n_threads, min_work, work, total, fused, c):
            # partition, histograms and subtraction a parent at a time (tree_level.py)
            part, hists = _fused_level(c, first_child, bins_by_feature, rows, scratch,
                                       features.n_bins, nodes, level, parents, fused, cur,
                                       spare)
            set_thread_count(workers)
            run_level(workers, fused.plan, fused.counts, part, hists)
            n_fused += 1
        else:  # the level kernels, each parallel over rows
            set_thread_count(_threads(n_threads, 4 * work, min_work))
            partition_rows(bins_by_feature, rows, parents.starts[:c], parents.ends[:c],
                           parents.feature[:c], parents.split_bin[:c],
                           parents.default_left[:c], parents.split_type[:c],
                           parents.cat_bits[:c], features.n_bins, scratch, parents.n_left[:c])
            work = _child_segments(c, first_child, nodes, level, parents)
            set_thread_count(_threads(n_threads, work * bins.shape[1], min_work))
            build_histograms(bins, gpair, rows, parents.starts[:c], parents.ends[:c],
                             features.offsets, spare[:c], thread_count())
            _subtract_siblings(c, cur, spare, level.chosen)
        level.ids[:n_ids] = level.next_ids[:n_ids]
        cur, spare = spare, cur
    set_thread_count(n_threads)
    n_cat = _finish(n_nodes, nodes, features, numbers, rows, column, tree)
    return n_nodes, n_cat, cur, spare, n_fused


@helper
def _start(rows, every_row, nodes, level):
    """The root: node 0, every row (``rows`` written 0 .. m - 1 first when ``every_row``),
    no feature on its path; the first level is the root alone."""
    root = np.int64(0)  # not a literal: _init_node compiles once
    if every_row:
        for i in range(rows.shape[0]):
            rows[i] = i
    _init_node(nodes, root, root)
    nodes.end[root] = rows.shape[0]
    for f in range(nodes.path.shape[1] if nodes.path.shape[0] else 0):
        nodes.path[root, f] = 0
    level.ids[root] = root


@helper
def _root_sums(nodes, hist, feature_offsets):
    """The root's sums from its histogram: every feature's slots hold all the rows."""
    for i in range(feature_offsets[0], feature_offsets[1]):
        nodes.sums[0, 0] += hist[0, i, 0]
        nodes.sums[0, 1] += hist[0, i, 1]


@helper
def _fused_space(n_threads, width, bins, gpair, feature_offsets):
    """The fused levels' work space (``tree_level.py``): the threads' parents, each
    feature's first slot times 2 and the flat bins and pairs."""
    n_features = bins.shape[1]
    slot2 = np.empty(n_features, dtype=np.uint64)
    for f in range(n_features):
        slot2[f] = np.uint64(2 * feature_offsets[f])
    return Fused(np.empty((n_threads, width), dtype=np.int64),
                 np.empty(n_threads, dtype=np.int64), np.empty(width, dtype=np.int64),
                 np.empty(width, dtype=np.uint8), slot2, flat(bins), flat(gpair),
                 np.uint64(n_features))


@helper
def _search_inputs(ids, n_ids, nodes, numbers, settings, sampling, features, search):
    """A level's nodes' sums, bounds, scales and feature masks, in ``ids`` order
    (``TreeGrower._evaluate``)."""
    for i in range(n_ids):
        for j in range(2):
            search.sums[i, j] = nodes.sums[ids[i], j]
            search.bounds[i, j] = nodes.bounds[ids[i], j]
        search.scales[i, 0], search.scales[i, 1] = numbers.scale_g, numbers.scale_h
        for f in range(search.mask.shape[1]):
            search.mask[i, f] = 1
    if not settings.all_features:
        feature_masks(ids, n_ids, nodes.depth[ids[0]], sampling.level_features,
                      sampling.level_sizes, sampling.node_key, numbers.by_node,
                      features.interaction, nodes.path, search.mask)


@helper
def _split_nodes(c, n_nodes, nodes, level, search, parents, features, numbers):
    """Record the splits of the ``c`` chosen nodes (``TreeGrower._record``), create their
    children from ``n_nodes`` on (``_split``, ``_child_bounds``) and copy each parent's
    segment and split into ``parents``; returns the parents' rows."""
    work = 0
    for i in range(c):
        at, node = level.chosen[i], level.ids[level.chosen[i]]
        f = search.feature[at]
        nodes.feature[node], nodes.gain[node] = f, search.gain[at]
        nodes.default_left[node] = search.default_left[at]
        if _categorical(features.is_categorical, f):
            nodes.split_type[node] = 1
            for w in range(nodes.cat_bits.shape[1]):
                nodes.cat_bits[node, w] = search.cat_bits[at, w]
        else:
            nodes.split_bin[node] = search.split_bin[at]
        _add_children(nodes, node, n_nodes + 2 * i, search.left_sums[at], features.monotone,
                      numbers)
        parents.starts[i], parents.ends[i] = nodes.start[node], nodes.end[node]
        parents.feature[i], parents.split_bin[i] = f, nodes.split_bin[node]
        parents.default_left[i] = nodes.default_left[node]
        parents.split_type[i] = nodes.split_type[node]
        for w in range(nodes.cat_bits.shape[1]):
            parents.cat_bits[i, w] = nodes.cat_bits[node, w]
        work += nodes.end[node] - nodes.start[node]
    return work


@helper
def _add_children(nodes, node, child, left_sums, monotone, numbers):
    """Node ``node``'s children ``child`` (left) and ``child + 1``: their depth, sums,
    weight bounds (on a monotone feature the bound between them is the mean of their
    weights) and paths."""
    f = nodes.feature[node]
    nodes.left[node] = child
    _init_node(nodes, child, nodes.depth[node] + 1)
    _init_node(nodes, child + 1, nodes.depth[node] + 1)
    for j in range(2):
        nodes.sums[child, j] = left_sums[j]
        nodes.sums[child + 1, j] = nodes.sums[node, j] - left_sums[j]
        nodes.bounds[child, j] = nodes.bounds[child + 1, j] = nodes.bounds[node, j]
    if monotone[f] != 0:
        mid = 0.5 * (_weight(nodes.sums[child], nodes.bounds[node], numbers)
                     + _weight(nodes.sums[child + 1], nodes.bounds[node], numbers))
        if monotone[f] > 0:
            nodes.bounds[child, 1] = nodes.bounds[child + 1, 0] = mid
        else:
            nodes.bounds[child, 0] = nodes.bounds[child + 1, 1] = mid
    if nodes.path.shape[0]:
        for g in range(nodes.path.shape[1]):
            nodes.path[child, g] = nodes.path[child + 1, g] = nodes.path[node, g]
        nodes.path[child, f] = nodes.path[child + 1, f] = 1


@helper
def _leaf_values(c, first_child, nodes, numbers, parents):
    """The last level's children's leaf values, left and right of each parent."""
    for i in range(c):
        child = first_child + 2 * i
        parents.left_values[i] = numbers.learning_rate * _weight(
            nodes.sums[child], nodes.bounds[child], numbers)
        parents.right_values[i] = numbers.learning_rate * _weight(
            nodes.sums[child + 1], nodes.bounds[child + 1], numbers)


@helper
def _next_level(c, first_child, nodes, level, parents, fused, n_features):
    """The next level's ids (each parent's smaller child by hessian sum, in the parents'
    order, then their siblings) and each parent's cost (``tree_level.parent_cost``);
    returns the level's cost."""
    total = 0
    for i in range(c):
        child = first_child + 2 * i
        fused.small_left[i] = nodes.sums[child, 1] <= nodes.sums[child + 1, 1]
        small = child if fused.small_left[i] else child + 1
        level.next_ids[i], level.next_ids[c + i] = small, 2 * child + 1 - small
        parent = level.ids[level.chosen[i]]
        m = parents.ends[i] - parents.starts[i]
        share = nodes.sums[small, 1] / nodes.sums[parent, 1] if nodes.sums[parent, 1] > 0 \
            else 0.5
        fused.costs[i] = parent_cost(m, np.int64(m * share), n_features)
        total += fused.costs[i]
    return total


@helper
def _fuses(setting, workers, n_threads, min_work, work, total, fused, c):
    """Whether a level runs fused: on several threads, when its largest thread's parents
    cost no more than the level kernels' two steps would take (each on the threads its
    own work earns: balanced over rows, but at 20,000-50,000 rows mostly on one), for a
    level of fewer than ``_FUSED_MAX_ROWS`` rows (``setting`` 1); always (2); never (0).
    On one thread the level kernels (measured as fast or faster there)."""
    if workers <= 1 or not (setting == 2 or (setting == 1 and work < _FUSED_MAX_ROWS)):
        return False
    steps = (_on_threads(4 * work, n_threads, min_work)
             + _on_threads(total - 4 * work, n_threads, min_work))
    return deal(fused.costs, c, workers, fused.plan, fused.counts) <= steps or setting == 2


@helper
def _fused_level(c, first_child, bins_by_feature, rows, scratch, n_bins, nodes, level,
                 parents, fused, cur, spare):
    """``tree_level.run_level``'s arguments for the ``c`` parents' level: their chunks'
    tasks, partition and histogram records."""
    first_chunk, task_node = chunk_tasks(parents.starts[:c], parents.ends[:c])
    n_tasks = task_node.shape[0]
    part = (first_chunk, task_node, np.empty(n_tasks, dtype=np.int64),
            np.empty(n_tasks, dtype=np.int64), bins_by_feature, rows, parents.starts[:c],
            parents.ends[:c], parents.feature[:c], parents.split_bin[:c],
            parents.default_left[:c], parents.split_type[:c], parents.cat_bits[:c], n_bins,
            scratch, parents.n_left[:c], nodes.start, nodes.end, first_child,
            fused.small_left)
    hists = (fused.flat_bins, fused.flat_gpair, fused.n_features, fused.slot2, cur, spare,
             level.chosen, np.int64(c))
    return part, hists


@helper
def _child_segments(c, first_child, nodes, level, parents):
    """The children's row segments after the partition, and the smaller children's as
    the segments to build histograms of; returns their rows."""
    work = 0
    for i in range(c):
        child, middle = first_child + 2 * i, parents.starts[i] + parents.n_left[i]
        nodes.start[child], nodes.end[child] = parents.starts[i], middle
        nodes.start[child + 1], nodes.end[child + 1] = middle, parents.ends[i]
        parents.starts[i] = nodes.start[level.next_ids[i]]
        parents.ends[i] = nodes.end[level.next_ids[i]]
        work += parents.ends[i] - parents.starts[i]
    return work


@helper
def _subtract_siblings(c, cur, spare, chosen):
    """The siblings' histograms (``spare[c + i]``): their parents' (``cur[chosen[i]]``)
    minus the smaller children's (``spare[i]``). Flat views: one loop of plain integer
    subtractions, which vectorises (measured 13-17% less subtraction time than indexing
    (slot, 0 / 1))."""
    for i in range(c):
        parent_hist = flat(cur[chosen[i]])
        smaller, sibling = flat(spare[i]), flat(spare[c + i])
        for s in range(sibling.shape[0]):
            sibling[s] = parent_hist[s] - smaller[s]


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
    nodes.start[node] = nodes.end[node] = 0
    nodes.depth[node] = node_depth
    nodes.sums[node, 0] = nodes.sums[node, 1] = 0
    nodes.bounds[node, 0], nodes.bounds[node, 1] = -np.inf, np.inf
    nodes.feature[node], nodes.left[node] = -1, -1
    nodes.split_bin[node] = 0
    nodes.default_left[node] = nodes.split_type[node] = 0
    nodes.gain[node] = 0.0
    for i in range(nodes.cat_bits.shape[1]):
        nodes.cat_bits[node, i] = 0


@helper
def _weight(node_sums, node_bounds, numbers):
    """A node's weight before the learning rate (``split.node_weights``)."""
    p = numbers.split_params
    return bounded_weight(node_sums[0] / numbers.scale_g, node_sums[1] / numbers.scale_h,
                          p[0], p[1], p[2], node_bounds[0], node_bounds[1])


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
def _finish(n_nodes, nodes, features, numbers, rows, column, tree):
    """The tree's arrays (``TreeGrower._finish``), and the values of the leaves that hold
    rows (those above the last level) added to their rows' margins; returns the number
    of categorical nodes."""
    n_cat = 0
    for k in range(n_nodes):
        weight = _weight(nodes.sums[k], nodes.bounds[k], numbers)
        tree.cover[k] = nodes.sums[k, 1] / numbers.scale_h
        inner = nodes.left[k] >= 0
        tree.split_feature[k] = nodes.feature[k] if inner else -1
        tree.left_child[k] = nodes.left[k] if inner else -1
        tree.right_child[k] = nodes.left[k] + 1 if inner else -1
        tree.default_left[k] = nodes.default_left[k] if inner else 0
        tree.gain[k] = nodes.gain[k] if inner else 0.0
        tree.split_type[k] = nodes.split_type[k] if inner else 0
        tree.split_bin[k] = 0
        tree.threshold[k] = 0.0
        if inner and tree.split_type[k] == 1:
            for w in range(tree.cat_bits.shape[1]):
                tree.cat_bits[n_cat, w] = nodes.cat_bits[k, w]
            n_cat += 1
        elif inner:
            b = nodes.split_bin[k]
            tree.split_bin[k] = b
            # split bin -1 (a one-bin feature's value rows against its missing ones): no
            # value lies below float32's lowest number (TreeData.thresholds)
            tree.threshold[k] = (_LOWEST if b < 0 else
                                 features.cut_values[features.cut_offsets[nodes.feature[k]] + b])
        if inner:
            tree.value[k] = weight
        else:
            value = numbers.learning_rate * weight
            tree.value[k] = value
            for p in range(nodes.start[k], nodes.end[k]):
                column[rows[p]] += value
    return n_cat
