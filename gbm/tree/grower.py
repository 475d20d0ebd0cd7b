"""Grow one tree, a whole level at a time.

The tree under construction is a struct of arrays (``Nodes``: row ranges, integer sums,
weight bounds, constraint paths, splits). Each level, whatever its node count, is a fixed
number of kernel and array calls: build the smaller children's histograms (one kernel
call, one all-reduce), subtract them from their parents' for the siblings, evaluate every
node's best split (one kernel call), choose, partition the rows (one kernel call) and
create the children, all vectorised. Two expansion orders, as XGBoost's ``grow_policy``:

* ``depthwise``: every splittable node of a level is split (the best ``max_leaves`` ones
  when that limit binds);
* ``lossguide``: the leaf with the largest loss reduction is split first, until
  ``max_leaves``; each expansion is the same fixed number of calls.

Only the child with the smaller hessian sum gets a histogram built from its rows; its
sibling's is the parent's minus it (hessian sums are known exactly everywhere, so no row
count has to be agreed on between workers).

Node ids, and so the model file, follow the order of creation: a level's nodes are its
smaller children (in their parents' order) and then their siblings, and the children of
the nodes split at a level get consecutive ids in that order.

Several trees can grow in lockstep (depthwise only): the trees of one round's output
groups, each on its own segment of the rows and with its own fixed-point scales and
column draws. Their nodes share every level's kernel calls; each tree's nodes keep the
order they would have grown in alone, and each node its tree-local id, so every tree is
the one a grower of that tree alone would make, bit for bit (``tests/test_lockstep.py``).
"""
import heapq
from dataclasses import dataclass

import numpy as np

from .active import (HistogramLayout, active_layout, candidate_layout, gather_slots,
                     largest_hessians, level_layout)
from .constraints import allowed_features
from .nodes import Nodes
from .structure import NODE_FIELDS, Tree
from .tree_data import TreeData  # noqa: F401  (gbm.tree.grower.TreeData: where it was)

_MIN_GAIN = 1e-6  # a split must reduce the loss by more than this (XGBoost's kRtEps)
_MAX_BATCH_BYTES = 256 << 20  # cap on one batch's histograms (and each thread's copy)
_RANGE_BLOCK = 1 << 20  # rows given as a range: written this many at a time


class HistogramBuffers:
    """Two buffers that successive tree levels take turns in (depthwise growth: level
    ``d + 2`` may overwrite level ``d``), kept from tree to tree: a level's histograms are
    megabytes, and fresh memory costs a page fault per 4 KiB on first touch."""

    def __init__(self, xp=np):
        self.xp = xp  # the backend's array module: the buffers live where the kernels run
        self._buffers = [xp.empty(0, np.int64), xp.empty(0, np.int64)]
        self._turn = 0

    def take(self, n_nodes, n_slots):
        """An int64 (n_nodes, n_slots, 2) array in the next buffer (contents undefined)."""
        self._turn ^= 1
        size = n_nodes * n_slots * 2
        if self._buffers[self._turn].shape[0] < size:
            # the size asked for (a level's histograms are the largest thing a wide sparse
            # fit holds: no doubling), the old buffer let go first
            self._buffers[self._turn] = None
            self._buffers[self._turn] = self.xp.empty(size, np.int64)
        return self._buffers[self._turn][:size].reshape(n_nodes, n_slots, 2)


@dataclass
class _Splits:
    """Best splits of some nodes (``evaluate_splits``' outputs) and which are worth it."""

    gain: np.ndarray
    feature: np.ndarray
    split_bin: np.ndarray
    default_left: np.ndarray
    left_sums: np.ndarray
    cat_bits: np.ndarray
    ok: np.ndarray  # gain > _MIN_GAIN and >= gamma


class TreeGrower:
    """Grows one tree, or several in lockstep (``segments``).

    Parameters
    ----------
    data : TreeData
    gpair : int64 (n_rows, 2), fixed-point gradients of one output group (on the device)
    scales : float64 (2,), their scales; (n_trees, 2) with ``segments``: each tree's
    rows : int32 (m,), the rows this tree grows on (a row sample: the others are not read),
        or a ``range`` (every row: no index array of them needed)

    Where the arrays live: the rows, gradients, bins and histograms on the backend's
    device (``backend.xp``); the tree under construction (``Nodes``) and each level's
    per-node arrays on the host, handed to the kernels, which copy them over (once per
    kernel call, not per node).
    params : validated parameter dict
    backend : gbm.runtime.backend.Backend (kernels, collective, threads)
    column_sampler : gbm.tree.sampling.ColumnSampler
    buffers : HistogramBuffers, optional
        Where depthwise levels keep their histograms (shared by the trees of a fit).
    column : float64 (n_rows,), optional
        Margins the tree's leaf values go into (on the device). Given, a depthwise tree's
        last level adds its leaves' values to it in the same pass that would partition its
        rows (``add_split_values``), and those leaves get empty row segments; the caller
        adds the other leaves' values. None (e.g. when leaves are refreshed from their rows
        later): every leaf keeps its rows.
    segments : int64 (n_trees + 1,), optional
        Grow ``n_trees`` trees in lockstep (depthwise): tree ``t`` on
        ``rows[segments[t]:segments[t + 1]]``, with ``scales[t]`` and
        ``column_sampler[t]`` (a list). ``data``, ``gpair`` and ``column`` then index
        every tree's rows by the same numbers: one row may appear in several trees under
        different numbers (``gbm.tree.lockstep`` stacks each group's copy of the data).
    """

    def __init__(self, data, gpair, scales, rows, params, backend, column_sampler,
                 buffers=None, column=None, segments=None):
        self.data, self.gpair = data, gpair
        self.tree_scales = np.array(scales, dtype=np.float64).reshape(-1, 2)
        self.n_trees = n_trees = self.tree_scales.shape[0]
        self.samplers = list(column_sampler) if segments is not None else [column_sampler]
        self.segments = (np.array([0, len(rows)], np.int64) if segments is None
                         else np.asarray(segments, np.int64))
        if not (len(self.samplers) == n_trees == self.segments.shape[0] - 1):
            raise ValueError("segments, scales and column samplers disagree on the number "
                             "of trees")
        depthwise = params["grow_policy"] == "depthwise"
        if n_trees > 1 and not depthwise:
            raise ValueError("only depthwise trees grow in lockstep")
        # lossguide keeps waiting leaves' histograms: those get memory of their own
        self.buffers = buffers if buffers is not None and depthwise else None
        self.params, self.backend, self.k = params, backend, backend.kernels
        self.xp = backend.xp
        # the tree's own copy of its rows (partitioned in place), in memory the backend
        # may keep from tree to tree (Backend.buffer)
        self.rows = backend.buffer("rows", len(rows), np.int32)
        if isinstance(rows, range):  # every row in order: written a block at a time
            for lo in range(0, len(rows), _RANGE_BLOCK):
                hi = min(lo + _RANGE_BLOCK, len(rows))
                self.rows[lo:hi] = self.xp.arange(rows[lo], rows[lo] + (hi - lo),
                                                  dtype=np.int32)
        else:
            self.rows[...] = self.xp.asarray(rows, dtype=np.int32)
        self.scratch = backend.buffer("rows_scratch", len(rows), np.int32)
        self.split_params = np.array([params["reg_lambda"], params["reg_alpha"],
                                      params["max_delta_step"], params["min_child_weight"]])
        max_depth, max_leaves = params["max_depth"], params["max_leaves"]
        capacity = 2 * max_leaves - 1 if max_leaves else 2 ** (min(max_depth, 10) + 1) - 1
        self.nodes = Nodes(data.n_features, n_trees * capacity, data.interaction is not None,
                           data.cat_words, n_trees)
        self.has_monotone = bool(data.monotone.any())
        self.has_categorical = bool(np.asarray(data.is_categorical).any())
        self.column = column if depthwise else None
        # the histograms' features: every one, or (sparse layouts) those that can split in
        # the tree, found at the root (gbm.tree.active)
        self.layout = HistogramLayout.of(data)
        self._narrow_levels = False

    def _can_split_deeper(self, depth):
        max_depth = self.params["max_depth"]
        return max_depth == 0 or depth < max_depth

    # -- the steps of a level ------------------------------------------------------------
    def _histograms(self, n_nodes):
        """Room for ``n_nodes`` histograms: int64 (n_nodes, n_slots, 2), contents undefined."""
        if self.buffers is not None:
            return self.buffers.take(n_nodes, self.layout.n_slots)
        return self.xp.empty((n_nodes, self.layout.n_slots, 2), dtype=np.int64)

    def _build(self, ids, hist=None):
        """Histograms of nodes ``ids`` from their rows, summed over every rank, into
        ``hist`` (int64 (len(ids), n_slots, 2); new room when None); returns it."""
        nodes, data = self.nodes, self.data
        if hist is None:
            hist = self._histograms(ids.shape[0])
        starts, ends = nodes.start[ids], nodes.end[ids]
        per_node = max(1, self.layout.n_slots) * 16 * max(1, self.backend.n_threads)
        size = max(1, _MAX_BATCH_BYTES // per_node)
        for lo in range(0, ids.shape[0], size):
            hi = min(lo + size, ids.shape[0])
            work = int((ends[lo:hi] - starts[lo:hi]).sum()) * data.matrix.row_cost
            with self.backend.threads(work) as n:
                data.matrix.build_histograms(self.k, self.gpair, self.rows, starts[lo:hi],
                                             ends[lo:hi], hist[lo:hi], n,
                                             self.layout.slot_map)
        if self.backend.collective.world_size > 1:
            hist[...] = self.backend.collective.allreduce(hist, "sum")
        return hist

    def _scales(self, ids):
        """float64 (len(ids), 2): the fixed-point scales of each node's tree."""
        return self.tree_scales[self.nodes.tree[ids]]

    def _feature_mask(self, ids):
        """uint8 (len(ids), n_features): the features each node may split on."""
        nodes, data = self.nodes, self.data
        if self.samplers[0].trivial and data.interaction is None:  # every feature
            return np.ones((ids.shape[0], data.n_features), dtype=np.uint8)
        mask = np.empty((ids.shape[0], data.n_features), dtype=np.uint8)
        trees = nodes.tree[ids]
        for t in np.unique(trees):  # each tree's draws, keyed by its own node ids
            at = ids[trees == t]
            mask[trees == t] = self.samplers[t].masks(nodes.local[at], nodes.depth[at])
        if data.interaction is not None:
            mask &= allowed_features(data.interaction, nodes.path[ids])
        return mask

    def _evaluate(self, ids, hist):
        nodes, layout, p = self.nodes, self.layout, self.params
        n = ids.shape[0]
        out = _Splits(np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32),
                      np.empty(n, np.uint8), np.empty((n, 2), np.int64),
                      np.empty((n, nodes.cat_words), np.uint32), None)
        if layout.features is None:
            mask = self._feature_mask(ids)
        elif self.samplers[0].trivial and self.data.interaction is None:
            mask = np.ones((n, layout.features.shape[0]), dtype=np.uint8)
        else:  # histograms of some features: their columns
            mask = np.ascontiguousarray(self._feature_mask(ids)[:, layout.features])
        # no categorical feature, on the CPU: None (the CPU kernel then compiles without
        # its categorical code, as grow_tree calls it)
        categorical = layout.is_categorical
        if not self.has_categorical and self.backend.name == "cpu":
            categorical = None
        with self.backend.threads(hist.size // 2):
            self.k.evaluate_splits(hist, layout.feature_offsets, layout.missing_slots,
                                   categorical, nodes.sums[ids], mask,
                                   layout.monotone, nodes.bounds[ids], self._scales(ids),
                                   self.split_params, p["max_cat_to_onehot"],
                                   p["max_cat_threshold"], out.gain, out.feature,
                                   out.split_bin, out.default_left, out.left_sums,
                                   out.cat_bits)
        if layout.features is not None:  # back to the features' own ids
            found = out.feature >= 0
            out.feature[found] = layout.features[out.feature[found]]
        out.ok = (out.gain > _MIN_GAIN) & (out.gain >= p["gamma"])
        return out

    def _record(self, ids, splits, chosen):
        """Store the splits at positions ``chosen`` of ``splits`` as nodes ``ids``' splits."""
        nodes, data = self.nodes, self.data
        feature = splits.feature[chosen]
        nodes.feature[ids] = feature
        nodes.gain[ids] = splits.gain[chosen]
        nodes.default_left[ids] = splits.default_left[chosen]
        if not self.has_categorical:  # split types and sets stay 0 (numeric)
            nodes.split_bin[ids] = splits.split_bin[chosen]
            return
        is_cat = data.is_categorical[feature] == 1
        nodes.split_type[ids] = is_cat
        nodes.split_bin[ids] = np.where(is_cat, 0, splits.split_bin[chosen])
        nodes.cat_bits[ids] = np.where(is_cat[:, None], splits.cat_bits[chosen], 0)

    def _split(self, ids, left_sums, level_hist, positions=None):
        """Partition the rows of nodes ``ids`` (their splits recorded) and create their
        children. ``level_hist[positions]`` are the nodes' histograms (``positions`` None:
        all of ``level_hist``, in order). Returns the next level: ``(child ids, their
        histograms)``, smaller children first, or empty arrays when the children may not
        split further."""
        nodes, data = self.nodes, self.data
        starts, ends = nodes.start[ids], nodes.end[ids]
        depth = nodes.depth[ids] + 1
        last = not self._can_split_deeper(int(depth[0]))  # the children will be leaves
        children = nodes.add(np.repeat(nodes.tree[ids], 2))
        left, right = children[0::2], children[1::2]
        nodes.left[ids] = left
        nodes.depth[left] = nodes.depth[right] = depth
        nodes.sums[left] = left_sums
        nodes.sums[right] = nodes.sums[ids] - left_sums
        nodes.bounds[left], nodes.bounds[right] = self._child_bounds(ids, left, right)
        if nodes.with_paths:
            path = nodes.path[ids]
            path[np.arange(ids.shape[0]), nodes.feature[ids]] = True
            nodes.path[left] = nodes.path[right] = path
        split = (self.k, self.rows, starts, ends, nodes.feature[ids], nodes.split_bin[ids],
                 nodes.default_left[ids], nodes.split_type[ids], nodes.cat_bits[ids])
        work = 4 * int((ends - starts).sum())
        if last and self.column is not None:  # leaves: add their values, leave the rows
            values = self._leaf_values(children)
            with self.backend.threads(work):
                data.matrix.add_split_values(*split, np.ascontiguousarray(values[0::2]),
                                             np.ascontiguousarray(values[1::2]), self.column)
            nodes.start[children] = nodes.end[children] = 0
            return np.empty(0, np.int64), None
        n_left = np.empty(ids.shape[0], dtype=np.int64)
        small_is_left = nodes.sums[left, 1] <= nodes.sums[right, 1]
        c = ids.shape[0]  # the smaller children's histograms, then their siblings'
        if not last and self._fuses(c):  # one pass over a paged matrix (gbm.bins.paged)
            hist = self._histograms(2 * c)
            rows_work = int((ends - starts).sum()) * data.matrix.row_cost
            with self.backend.threads(max(work, rows_work)) as n:
                data.matrix.partition_and_build(*split, self.scratch, n_left, small_is_left,
                                                self.gpair, hist[:c], n)
            if self.backend.collective.world_size > 1:
                hist[:c] = self.backend.collective.allreduce(hist[:c], "sum")
        else:
            hist = None
            with self.backend.threads(work):
                data.matrix.partition_rows(*split, self.scratch, n_left)
        middle = starts + n_left
        nodes.start[left], nodes.end[left] = starts, middle
        nodes.start[right], nodes.end[right] = middle, ends
        if last:
            return np.empty(0, np.int64), None
        level = np.concatenate([np.where(small_is_left, left, right),
                                np.where(small_is_left, right, left)])
        kept_slots = None
        if hist is None:
            kept_slots = self._narrow_level(ids, level_hist, positions)
            hist = self._histograms(level.shape[0])
            self._build(level[:c], hist[:c])
        parent_hist = level_hist
        if kept_slots is not None:  # the parents' kept slots, where the siblings go
            parent_hist = gather_slots(level_hist, positions, kept_slots, hist[c:],
                                       self.backend)
        elif positions is not None:  # the parents' histograms, gathered where the siblings go
            # NumPy buffers ``out`` of a take in its default mode ("raise"): a second copy,
            # 3x the time (measured); the positions are valid, so "clip" changes nothing
            mode = {"mode": "clip"} if self.xp is np else {}  # CuPy's take has no mode
            parent_hist = self.xp.take(level_hist, self.backend.asarray(positions), axis=0,
                                       out=hist[c:], **mode)
        with self.backend.threads(hist.size // 4):
            self.k.subtract_histograms(parent_hist, hist[:c], hist[c:])
        return level, hist

    def _fuses(self, n_nodes):
        """Whether this level's partition and its children's histograms are one pass over
        the bin matrix (a paged one: ``partition_and_build``): every feature's histograms
        (no narrowed layout), all ``n_nodes`` in one batch of ``_build``'s size."""
        if getattr(self.data.matrix, "partition_and_build", None) is None:
            return False
        if self._narrow_levels or self.layout.slot_map is not None:
            return False
        per_node = max(1, self.layout.n_slots) * 16 * max(1, self.backend.n_threads)
        return n_nodes <= max(1, _MAX_BATCH_BYTES // per_node)

    def _narrow_level(self, ids, level_hist, positions):
        """Narrow the histogram layout to the features that can split in the children of
        nodes ``ids`` (depthwise, when the roots' layout was narrowed): a child's value
        rows are some of its parent's, so a feature whose value rows weigh less than
        ``min_child_weight`` in every parent (``gbm.tree.active``) can split in none of
        them. Returns the kept slots of the parents' layout (their histograms
        ``level_hist[positions]``), or None when the layout stays."""
        if not self._narrow_levels:
            return None
        found = level_layout(self.layout, level_hist, positions, self._scales(ids),
                             self.params["min_child_weight"], self.backend)
        if found is None:
            return None
        self.layout, kept_slots = found
        return kept_slots

    def _leaf_values(self, ids):
        """Leaf values of nodes ``ids``: the learning rate times their (bounded) weights,
        as ``_finish`` computes them."""
        weights = np.empty(ids.shape[0])
        self.k.node_weights(self.nodes.sums[ids], self.nodes.bounds[ids], self._scales(ids),
                            self.split_params, weights)
        return self.params["learning_rate"] * weights

    def _child_bounds(self, ids, left, right):
        """Children's weight bounds (XGBoost's rule): on a monotone feature the bound
        between them is the mean of their weights; otherwise they inherit the parent's."""
        nodes = self.nodes
        bounds = nodes.bounds[ids]
        if not self.has_monotone:
            return bounds, bounds
        sign = self.data.monotone[nodes.feature[ids]]
        if not sign.any():
            return bounds, bounds
        weights = np.empty(2 * ids.shape[0])
        self.k.node_weights(np.concatenate([nodes.sums[left], nodes.sums[right]]),
                            np.concatenate([bounds, bounds]),
                            self._scales(np.concatenate([left, right])), self.split_params,
                            weights)
        mid = 0.5 * (weights[:ids.shape[0]] + weights[ids.shape[0]:])
        left_bounds, right_bounds = bounds.copy(), bounds.copy()
        up, down = sign > 0, sign < 0
        left_bounds[up, 1] = right_bounds[up, 0] = mid[up]
        left_bounds[down, 0] = right_bounds[down, 1] = mid[down]
        return left_bounds, right_bounds

    # -- growth policies ------------------------------------------------------------------
    def grow(self):
        """Grow the tree(s); returns ``(trees, rows, leaf_starts, leaf_ends, leaf_values)``:
        a list of trees, and every leaf's segment of ``rows`` and value (tree after tree),
        and sets ``leaf_ids``: each tree's leaves' node ids."""
        nodes, segments = self.nodes, self.segments
        roots = nodes.add(np.arange(segments.shape[0] - 1, dtype=np.int32))
        nodes.start[roots], nodes.end[roots] = segments[:-1], segments[1:]
        nodes.bounds[roots] = (-np.inf, np.inf)
        ids, hist = np.empty(0, np.int64), None
        self.layout = HistogramLayout.of(self.data)
        if self._can_split_deeper(0):
            h_max = None if self.data.missing_slots else largest_hessians(
                self.gpair, self.rows, self.segments, self.backend)
            narrow = h_max is not None and bool((h_max >= 0).all())  # none negative
            if narrow:  # the roots' histograms of the features that may split only
                mcw = self.params["min_child_weight"]
                self.layout = candidate_layout(self.data, h_max, self.tree_scales, mcw,
                                               self.backend) or self.layout
            hist = self._build(roots)
            ids = roots
            # depthwise levels narrow further from their parents' histograms (lossguide
            # keeps waiting leaves' histograms in the layout they were built in)
            self._narrow_levels = narrow and self.params["grow_policy"] == "depthwise"
            if narrow:
                found = active_layout(self.data, hist, self.tree_scales, mcw, self.backend,
                                      self.layout)
                if found is not None:
                    self.layout, hist = found
        if hist is not None and self.data.missing_slots:
            offsets = self.data.feature_offsets  # every feature's slots hold all the rows
            nodes.sums[roots] = self.backend.to_host(
                hist[:, offsets[0]:offsets[1]].sum(axis=1))
        else:  # no slot holds the missing rows: the roots' sums from their rows
            for t in roots:
                rows = self.rows[segments[t]:segments[t + 1]]
                nodes.sums[t] = self.backend.collective.allreduce(
                    self.backend.to_host(self.gpair[rows].sum(axis=0)), "sum")
        if self.params["grow_policy"] == "lossguide":
            self._grow_lossguide(ids, hist)
        else:
            self._grow_depthwise(ids, hist)
        return self._finish()

    def _grow_depthwise(self, ids, hist):
        max_leaves = self.params["max_leaves"]
        n_leaves = np.ones(self.n_trees, dtype=np.int64)  # per tree
        while ids.shape[0]:
            splits = self._evaluate(ids, hist)
            chosen = np.flatnonzero(splits.ok)
            if max_leaves and chosen.size:  # each tree's best gains (ties: lower id), by id
                trees = self.nodes.tree[ids[chosen]]
                best = np.lexsort((ids[chosen], -splits.gain[chosen], trees))
                ranked = trees[best]
                rank = np.arange(best.shape[0]) - np.searchsorted(ranked, ranked)
                chosen = chosen[best[rank < max_leaves - n_leaves[ranked]]]
                chosen = chosen[np.argsort(ids[chosen])]
            if not chosen.size:
                break
            n_leaves += np.bincount(self.nodes.tree[ids[chosen]],
                                    minlength=n_leaves.shape[0])
            self._record(ids[chosen], splits, chosen)
            every = chosen.size == ids.size and (chosen == np.arange(ids.size)).all()
            ids, hist = self._split(ids[chosen], splits.left_sums[chosen], hist,
                                    None if every else chosen)

    def _grow_lossguide(self, ids, hist):
        max_leaves = self.params["max_leaves"]
        n_leaves = 1
        heap, waiting = [], {}  # (-gain, id) of leaves with a split; their splits, histograms
        while True:
            if ids.shape[0]:
                splits = self._evaluate(ids, hist)
                for i in np.flatnonzero(splits.ok):
                    heapq.heappush(heap, (-float(splits.gain[i]), int(ids[i])))
                    waiting[int(ids[i])] = (splits, i, hist[i])
            if not heap or (max_leaves and n_leaves >= max_leaves):
                break
            _, node = heapq.heappop(heap)
            splits, i, node_hist = waiting.pop(node)
            node_ids = np.array([node], dtype=np.int64)
            self._record(node_ids, splits, np.array([i]))
            ids, hist = self._split(node_ids, splits.left_sums[i:i + 1], node_hist[None])
            n_leaves += 1

    def _finish(self):
        """Every tree's ``Tree``, from all the trees' nodes at once (NumPy operations over
        all of them, then one slice per tree: the trees of a lockstep round share them)."""
        nodes, p = self.nodes, self.params
        n = nodes.n
        weights = np.empty(n)
        self.k.node_weights(nodes.sums[:n], nodes.bounds[:n], self._scales(np.arange(n)),
                            self.split_params, weights)
        sel = np.argsort(nodes.tree[:n], kind="stable")  # tree by tree, in creation order:
        tree_of = nodes.tree[sel]                         # a tree's nodes are its local ids
        bounds = np.searchsorted(tree_of, np.arange(self.n_trees + 1))
        weights = weights[sel]
        inner = nodes.left[sel] >= 0
        left = np.where(inner, nodes.local[np.maximum(nodes.left[sel], 0)], -1)
        arrays = {name: np.zeros(n, dtype=dtype) for name, dtype in NODE_FIELDS.items()}
        arrays["cover"][:] = nodes.sums[sel, 1] / self.tree_scales[tree_of, 1]
        arrays["value"][:] = np.where(inner, weights, p["learning_rate"] * weights)
        feature = nodes.feature[sel]
        split_bin = nodes.split_bin[sel]
        arrays["split_feature"][:] = np.where(inner, feature, -1)
        arrays["left_child"][:] = left
        arrays["right_child"][:] = np.where(inner, left + 1, -1)
        arrays["default_left"][:] = np.where(inner, nodes.default_left[sel], 0)
        arrays["gain"][:] = np.where(inner, nodes.gain[sel], 0.0)
        split_type = np.where(inner, nodes.split_type[sel], 0).astype(np.uint8)
        numeric = inner & (split_type == 0)
        arrays["split_bin"][numeric] = split_bin[numeric]
        arrays["threshold"][numeric] = self.data.thresholds(feature[numeric],
                                                            split_bin[numeric])
        categorical = split_type == 1
        cat_bits = nodes.cat_bits[sel][categorical]
        cat_bounds = np.concatenate([[0], np.cumsum(categorical)])[bounds]
        leaves = np.flatnonzero(~inner)  # all trees' leaves, tree by tree
        leaf_bounds = np.searchsorted(leaves, bounds)
        trees, self.leaf_ids = [], []
        for t in range(self.n_trees):
            lo, hi = bounds[t], bounds[t + 1]
            trees.append(Tree(**{name: a[lo:hi] for name, a in arrays.items()},
                              split_type=split_type[lo:hi],
                              cat_bits=cat_bits[cat_bounds[t]:cat_bounds[t + 1]]))
            self.leaf_ids.append(leaves[leaf_bounds[t]:leaf_bounds[t + 1]] - lo)
        return trees, self.rows, nodes.start[sel[leaves]], nodes.end[sel[leaves]], \
            arrays["value"][leaves]
