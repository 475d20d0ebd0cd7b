"""Grow one tree from binned data and fixed-point gradient pairs.

Two expansion orders, as in XGBoost's ``grow_policy``:

* ``depthwise``: every splittable node of a level is split, then all the next level's
  histograms are built in one kernel call;
* ``lossguide``: the leaf with the largest loss reduction is split first, until
  ``max_leaves``.

Either way only the child with the smaller hessian sum gets a histogram built from its
rows; its sibling's is the parent's minus it (hessian sums are known exactly everywhere,
so no row count has to be agreed on between workers). The grower owns every buffer and
calls only the backend's kernels.
"""
import heapq

import numpy as np

from .constraints import allowed_features
from .kernels.split_math import python as split_math
from .threads import numba_threads, threads_for
from .tree import CAT_WORDS, NODE_FIELDS, Tree

_MIN_GAIN = 1e-6  # a split must reduce the loss by more than this (XGBoost's kRtEps)
_MAX_BATCH_BYTES = 256 << 20  # cap on one batch's histograms (and each thread's copy)


class _Node:
    __slots__ = ("id", "start", "end", "depth", "sums", "hist", "split", "path", "bounds",
                 "cat_bits")

    def __init__(self, node_id, start, end, depth, sums, path=frozenset(),
                 bounds=(-np.inf, np.inf)):
        self.id, self.start, self.end, self.depth = node_id, start, end, depth
        self.path = path  # features split on between the root and this node
        self.bounds = bounds  # (lower, upper) on the node's weight: monotone constraints
        self.sums = sums  # int64 (2,): fixed-point (G, H)
        self.hist = None
        self.split = None  # (gain, feature, bin, default_left, left_sums)
        self.cat_bits = None  # uint32 (CAT_WORDS,): the set of a categorical split, else None


class TreeGrower:
    """Grows one tree.

    Parameters
    ----------
    bins : uint8 (n_rows, n_features)
    bins_by_feature : uint8 (n_features, n_rows), the same bins feature-major
    n_bins : int32 (n_features,)
    cuts : list of float32 arrays, the bin edges (for raw thresholds)
    gpair : int64 (n_rows, 2), fixed-point gradients of one output group
    scales : float64 (2,), their scales
    params : validated parameter dict
    kernels : module with the kernel functions
    n_threads : int
    column_sampler : gbm.sampling.ColumnSampler, optional
    interaction_sets : list of frozensets of feature indices, optional
        ``interaction_constraints`` (see gbm.constraints)
    monotone : int8 (n_features,), optional
        ``monotone_constraints``: +1 increasing, -1 decreasing, 0 free
    cat_features : int32 (n_cat,), optional
        The categorical features (their bins are category codes; see gbm.categorical).
        None: every feature is numeric, and only the numeric kernels run.
    """

    def __init__(self, bins, bins_by_feature, n_bins, cuts, gpair, scales, params, kernels,
                 n_threads, column_sampler=None, interaction_sets=None, monotone=None,
                 cat_features=None):
        self.bins, self.bins_by_feature, self.n_bins, self.cuts = bins, bins_by_feature, n_bins, cuts
        self.gpair, self.scales = gpair, scales
        self.params, self.k, self.n_threads = params, kernels, n_threads
        self.n_slots = int(n_bins.max()) + 1
        self.rows = np.arange(bins.shape[0], dtype=np.int32)
        self.scratch = np.empty_like(self.rows)
        self.nodes = []
        self.column_sampler = column_sampler  # None: every node may use every feature
        self.interaction_sets = interaction_sets  # None: any features may interact
        self.monotone = monotone  # int8 (n_features,) or None: no monotone constraints
        self.no_monotone = np.zeros(bins.shape[1], dtype=np.int8)
        self.cat_features = cat_features if cat_features is not None and len(cat_features) else None

    # -- helpers --------------------------------------------------------------------------
    def _new_node(self, start, end, depth, sums, path=frozenset(), bounds=(-np.inf, np.inf)):
        node = _Node(len(self.nodes), start, end, depth, np.asarray(sums, dtype=np.int64), path,
                     bounds)
        self.nodes.append(node)
        return node

    def _can_split_deeper(self, depth):
        max_depth = self.params["max_depth"]
        return max_depth == 0 or depth < max_depth

    def _build(self, nodes):
        """Build the histograms of ``nodes`` from their rows, as one stacked array.

        Returns int64 (len(nodes), n_features, n_slots, 2); ``node.hist`` is a view of it.
        """
        hist = np.empty((len(nodes), self.bins.shape[1], self.n_slots, 2), dtype=np.int64)
        for lo, hi in self._batches(len(nodes)):
            starts = np.array([n.start for n in nodes[lo:hi]], dtype=np.int64)
            ends = np.array([n.end for n in nodes[lo:hi]], dtype=np.int64)
            n = threads_for(int((ends - starts).sum()) * self.bins.shape[1], self.n_threads)
            with numba_threads(n):
                self.k.build_histograms(self.bins, self.gpair, self.rows, starts, ends,
                                        hist[lo:hi], n)
        for i, node in enumerate(nodes):
            node.hist = hist[i]
        return hist

    def _batches(self, n_nodes):
        """Ranges of nodes whose per-thread histogram copies stay under the memory cap."""
        per_node = self.bins.shape[1] * self.n_slots * 16 * max(1, self.n_threads)
        size = max(1, _MAX_BATCH_BYTES // per_node)
        return [(lo, min(lo + size, n_nodes)) for lo in range(0, n_nodes, size)]

    def _evaluate(self, nodes, hist):
        """Find each node's best split from ``hist`` (stacked in ``nodes`` order); nodes
        that cannot split get ``split = None``."""
        p = self.params
        n = len(nodes)
        if n == 0:
            return
        sums = np.stack([node.sums for node in nodes])
        mask = np.ones((n, self.bins.shape[1]), dtype=np.uint8)
        if self.column_sampler is not None and not self.column_sampler.trivial:
            mask &= np.stack([self.column_sampler.mask(node.id, node.depth) for node in nodes])
        if self.interaction_sets is not None:
            mask &= np.stack([allowed_features(self.interaction_sets, node.path, mask.shape[1])
                              for node in nodes])
        gain = np.empty(n)
        feature = np.empty(n, dtype=np.int32)
        split_bin = np.empty(n, dtype=np.int32)
        default_left = np.empty(n, dtype=np.uint8)
        left_sums = np.empty((n, 2), dtype=np.int64)
        with numba_threads(threads_for(hist.size // 2, self.n_threads)):
            monotone = self.monotone if self.monotone is not None else self.no_monotone
            bounds = np.array([node.bounds for node in nodes], dtype=np.float64)
            numeric_mask = mask
            if self.cat_features is not None:
                numeric_mask = mask.copy()
                numeric_mask[:, self.cat_features] = 0
            self.k.evaluate_splits(hist, sums, self.n_bins, numeric_mask, monotone, bounds,
                                   self.scales, p["reg_lambda"],
                                   p["reg_alpha"], p["max_delta_step"], p["min_child_weight"],
                                   gain, feature, split_bin, default_left, left_sums)
            cat_bits = None
            if self.cat_features is not None:
                cat_bits = self._evaluate_categorical(hist, sums, mask, bounds, gain, feature,
                                                      split_bin, default_left, left_sums)
        for i, node in enumerate(nodes):
            ok = gain[i] > _MIN_GAIN and gain[i] >= p["gamma"]
            node.split = (float(gain[i]), int(feature[i]), int(split_bin[i]),
                          int(default_left[i]), left_sums[i].copy()) if ok else None
            node.cat_bits = cat_bits[i].copy() if ok and cat_bits is not None \
                and cat_bits[i].any() else None

    def _evaluate_categorical(self, hist, sums, mask, bounds, gain, feature, split_bin,
                              default_left, left_sums):
        """Categorical candidates of the same nodes; where one beats the numeric best (or
        ties it on a lower feature), it replaces it in the arrays given. Returns uint32
        (n_nodes, CAT_WORDS): each node's set, all zero where the best split is numeric."""
        p = self.params
        n = hist.shape[0]
        c_gain = np.empty(n)
        c_feature = np.empty(n, dtype=np.int32)
        c_default_left = np.empty(n, dtype=np.uint8)
        c_left_sums = np.empty((n, 2), dtype=np.int64)
        c_bits = np.empty((n, CAT_WORDS), dtype=np.uint32)
        self.k.evaluate_categorical_splits(
            hist, sums, self.n_bins, self.cat_features, mask, bounds, self.scales,
            p["reg_lambda"], p["reg_alpha"], p["max_delta_step"], p["min_child_weight"],
            p["max_cat_to_onehot"], p["max_cat_threshold"], c_gain, c_feature, c_default_left,
            c_left_sums, c_bits)
        better = (c_feature >= 0) & ((c_gain > gain) | ((c_gain == gain) & (c_feature < feature)))
        gain[better] = c_gain[better]
        feature[better] = c_feature[better]
        split_bin[better] = 0
        default_left[better] = c_default_left[better]
        left_sums[better] = c_left_sums[better]
        c_bits[~better] = 0
        return c_bits

    def _apply_splits(self, nodes):
        """Partition the rows of ``nodes`` (which have splits) and create their children.

        Returns the children that may split further as two ``(nodes, hist)`` groups: the
        smaller children, whose histograms were built from their rows, and their
        siblings, whose histograms are the parents' minus those.
        """
        n_left = self._partition(nodes)
        parents, smalls, larges = [], [], []
        for node, count in zip(nodes, n_left):
            left_sums = node.split[4]
            mid = node.start + int(count)
            path = node.path | {node.split[1]}
            left_bounds, right_bounds = self._child_bounds(node, left_sums)
            left = self._new_node(node.start, mid, node.depth + 1, left_sums, path, left_bounds)
            right = self._new_node(mid, node.end, node.depth + 1, node.sums - left_sums, path,
                                   right_bounds)
            node.split = node.split + (left.id, right.id)
            if self._can_split_deeper(node.depth + 1):
                small, large = (left, right) if left.sums[1] <= right.sums[1] else (right, left)
                parents.append(node)
                smalls.append(small)
                larges.append(large)
            else:
                node.hist = None
        if not parents:
            return []
        small_hist = self._build(smalls)
        parent_hist = np.stack([node.hist for node in parents])
        large_hist = np.empty_like(small_hist)
        with numba_threads(threads_for(small_hist.size // 4, self.n_threads)):
            self.k.subtract_histograms(parent_hist, small_hist, large_hist)
        for parent, large, hist in zip(parents, larges, large_hist):
            large.hist = hist
            parent.hist = None
        return [(smalls, small_hist), (larges, large_hist)]

    def _partition(self, nodes):
        """Partition the rows of ``nodes`` by their splits; returns int64 rows sent left per
        node. Numeric splits go to ``partition_rows``, categorical ones (if any) to
        ``partition_rows_categorical``."""
        n_left = np.empty(len(nodes), dtype=np.int64)
        is_cat = np.array([n.cat_bits is not None for n in nodes], dtype=bool)
        for group in (np.flatnonzero(~is_cat), np.flatnonzero(is_cat)):
            if group.size == 0:
                continue
            part = [nodes[i] for i in group]
            starts = np.array([n.start for n in part], dtype=np.int64)
            ends = np.array([n.end for n in part], dtype=np.int64)
            feature = np.array([n.split[1] for n in part], dtype=np.int32)
            default_left = np.array([n.split[3] for n in part], dtype=np.uint8)
            counts = np.empty(len(part), dtype=np.int64)
            with numba_threads(threads_for(4 * int((ends - starts).sum()), self.n_threads)):
                if part[0].cat_bits is None:
                    split_bin = np.array([n.split[2] for n in part], dtype=np.int32)
                    self.k.partition_rows(self.bins_by_feature, self.rows, starts, ends, feature,
                                          split_bin, default_left, self.n_bins, self.scratch,
                                          counts)
                else:
                    bits = np.stack([n.cat_bits for n in part])
                    self.k.partition_rows_categorical(self.bins_by_feature, self.rows, starts,
                                                      ends, feature, bits, default_left,
                                                      self.n_bins, self.scratch, counts)
            n_left[group] = counts
        return n_left

    def _weight(self, sums, bounds):
        """A node's weight (before the learning rate), kept within its bounds."""
        p = self.params
        return split_math.bounded_weight(sums[0] / self.scales[0], sums[1] / self.scales[1],
                                         p["reg_lambda"], p["reg_alpha"], p["max_delta_step"],
                                         *bounds)

    def _child_bounds(self, node, left_sums):
        """Children's weight bounds (XGBoost's rule): on a monotone feature the bound
        between them is the mean of their weights; otherwise they inherit the parent's."""
        sign = 0 if self.monotone is None else self.monotone[node.split[1]]
        if sign == 0:
            return node.bounds, node.bounds
        mid = 0.5 * (self._weight(left_sums, node.bounds)
                     + self._weight(node.sums - left_sums, node.bounds))
        lower, upper = node.bounds
        if sign > 0:
            return (lower, mid), (mid, upper)
        return (mid, upper), (lower, mid)

    # -- growth policies ------------------------------------------------------------------
    def grow(self):
        """Grow the tree; returns ``(tree, rows, leaf_starts, leaf_ends, leaf_ids)``."""
        root = self._new_node(0, self.rows.shape[0], 0, np.zeros(2, dtype=np.int64))
        groups = []
        if self._can_split_deeper(0):
            hist = self._build([root])
            root.sums = hist[0, 0].sum(axis=0)  # every feature's bins hold all the rows
            groups = [([root], hist)]
        else:
            root.sums = self.gpair.sum(axis=0)
        if self.params["grow_policy"] == "lossguide":
            self._grow_lossguide(groups)
        else:
            self._grow_depthwise(groups)
        return self._finish()

    def _grow_depthwise(self, groups):
        max_leaves = self.params["max_leaves"]
        n_leaves = 1
        while groups:
            for nodes, hist in groups:
                self._evaluate(nodes, hist)
            level = [node for nodes, _ in groups for node in nodes]
            candidates = [n for n in level if n.split is not None]
            if max_leaves:
                candidates.sort(key=lambda n: (-n.split[0], n.id))
                candidates = candidates[:max(0, max_leaves - n_leaves)]
                candidates.sort(key=lambda n: n.id)
            chosen = {n.id for n in candidates}
            for n in level:
                if n.id not in chosen:
                    n.split, n.hist = None, None
            if not candidates:
                break
            n_leaves += len(candidates)
            groups = self._apply_splits(candidates)

    def _grow_lossguide(self, groups):
        max_leaves = self.params["max_leaves"]
        n_leaves = 1
        heap = []
        while True:
            for nodes, hist in groups:
                self._evaluate(nodes, hist)
                heap += [(-n.split[0], n.id) for n in nodes if n.split is not None]
            heapq.heapify(heap)
            if not heap or (max_leaves and n_leaves >= max_leaves):
                break
            _, node_id = heapq.heappop(heap)
            groups = self._apply_splits([self.nodes[node_id]])
            n_leaves += 1
        for node in self.nodes:  # leaves that kept a candidate split
            if node.split is not None and len(node.split) == 5:
                node.split, node.hist = None, None

    def _finish(self):
        p = self.params
        arrays = {name: np.zeros(len(self.nodes), dtype=dtype) for name, dtype in NODE_FIELDS.items()}
        arrays["split_feature"][:] = -1
        arrays["left_child"][:] = -1
        arrays["right_child"][:] = -1
        leaves = []
        split_type = np.zeros(len(self.nodes), dtype=np.uint8)
        cat_bits = []  # the categorical nodes' sets, in node order
        for node in self.nodes:
            weight = self._weight(node.sums, node.bounds)
            arrays["cover"][node.id] = node.sums[1] / self.scales[1]
            if node.split is None:
                arrays["value"][node.id] = p["learning_rate"] * weight
                leaves.append(node)
                continue
            gain, f, b, default_left, _, left, right = node.split
            arrays["value"][node.id] = weight
            arrays["split_feature"][node.id] = f
            if node.cat_bits is not None:
                split_type[node.id] = 1
                cat_bits.append(node.cat_bits)
            else:
                arrays["split_bin"][node.id] = b
                arrays["threshold"][node.id] = self.cuts[f][b]
            arrays["default_left"][node.id] = default_left
            arrays["left_child"][node.id] = left
            arrays["right_child"][node.id] = right
            arrays["gain"][node.id] = gain
        tree = Tree(**arrays, split_type=split_type,
                    cat_bits=np.array(cat_bits, dtype=np.uint32).reshape(-1, CAT_WORDS))
        starts = np.array([n.start for n in leaves], dtype=np.int64)
        ends = np.array([n.end for n in leaves], dtype=np.int64)
        self.leaf_ids = np.array([n.id for n in leaves], dtype=np.int64)
        values = tree.value[self.leaf_ids]
        return tree, self.rows, starts, ends, values
