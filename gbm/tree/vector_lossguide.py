"""Vector-leaf trees grown leaf by leaf (``grow_policy="lossguide"`` with
``multi_strategy="multi_output_tree"``): the leaf whose best split reduces the loss most
(the sum over outputs, as in ``gbm.tree.vector_leaf``) is split first, ties to the lower
node id, until ``max_leaves`` leaves (0: no limit) or no leaf has a split worth its gain;
``max_depth`` still bounds the depth (0: none). XGBoost's lossguide order
(``src/tree/driver.h``: one leaf a step from a queue ordered by loss change, then node id).

Each step is the depthwise grower's steps on one node: partition its rows, build the
smaller child's histograms and subtract them for its sibling, evaluate both children. A
waiting leaf keeps its own copy of its histograms (the depthwise grower's buffers are
reused from level to level). Node ids follow creation order: each split's children get
the next two ids, left then right.
"""
import heapq

import numpy as np

from .vector_leaf import VectorLeafGrower


class VectorLossguideGrower(VectorLeafGrower):
    """``VectorLeafGrower`` (same arguments) with the lossguide expansion order."""

    def _can_split_deeper(self, depth):
        max_depth = self.params["max_depth"]
        return max_depth == 0 or depth < max_depth

    def _queue(self, ids, hist, heap, waiting):
        """Evaluate nodes ``ids`` (histograms ``hist``) and queue those with a split."""
        gain, feature, split_bin, default_left, left_sums, ok, cat_bits = \
            self._evaluate(ids, hist)
        for i in np.flatnonzero(ok):
            node = int(ids[i])
            heapq.heappush(heap, (-float(gain[i]), node))
            waiting[node] = (float(gain[i]), int(feature[i]), int(split_bin[i]),
                             int(default_left[i]), left_sums[i].copy(), hist[i].copy(),
                             self._cat_split(feature[i], cat_bits[i]))

    def grow(self):
        """As ``VectorLeafGrower.grow``: ``(tree, rows, leaf_starts, leaf_ends,
        leaf_values float64 (n_leaves, k))``."""
        nodes, p = self.nodes, self.params
        self._add_root()
        heap, waiting = [], {}
        if self._can_split_deeper(0) and self._any_rows():  # every rank asks (Dask)
            self._queue([0], self._build([0]), heap, waiting)
        max_leaves, n_leaves = p["max_leaves"], 1
        while heap and not (max_leaves and n_leaves >= max_leaves):
            _, node = heapq.heappop(heap)
            gain, feature, split_bin, default_left, left_sum, hist, bits = waiting.pop(node)
            left = self._split_one(node, gain, feature, split_bin, default_left, left_sum,
                                   bits)
            n_leaves += 1
            if self._can_split_deeper(nodes.depth[left]):
                children = self._children_histograms([left], hist[None])
                self._queue([left, left + 1], children, heap, waiting)
        return self._finish()

    def _split_one(self, node, gain, feature, split_bin, default_left, left_sum, cat_bits):
        """Record ``node``'s split (``cat_bits``: its set, or None), partition its rows, add
        its two children; returns the left child's id (the right one's is the next)."""
        self._record(node, feature, split_bin, default_left, gain, cat_bits)
        split = self._partition(
            [node], np.array([feature], np.int32),
            np.array([self.nodes.split_bin[node]], np.int32), np.array([default_left], np.uint8))
        left = self._add_children([node], split, left_sum[None])[0]
        self._set_child_bounds([node])
        return left
