"""Monotone constraints (XGBoost 3.4's vector rule, ``kernels/cpu/vector_leaf.py``): each
node keeps a lower and an upper bound per output (float64 (k, 2); the root's infinite),
its weights are clamped into them, and a split on a constrained feature sets its
children's bounds from its split weights. Every rank computes them from the same global
sums. With ``gradient_projection`` the search reads projected columns, which have no
per-output bounds: it searches them unbounded, and a node whose chosen split is on a
constrained feature has that feature searched again with the monotone rule on the full
gradients (one histogram of it over every output), which sets the threshold; its
projected gain, scaled by the share of the full gain the constraint keeps, then competes
with the node's best projected split on the other features, which is taken instead when
it is larger or when the full search finds nothing worth it. The full sums set the
children's bounds and the leaves are clamped as above, so every output's predictions
respect the constraints. On CUDA the same steps run the CUDA twins of the kernels
(``kernels/cuda/vector_leaf.py``, ``vector_monotone.py``).

``VectorMonotone`` holds these steps; ``VectorLeafGrower`` (``gbm.tree.vector_leaf``)
inherits them (without constraints the bounds stay infinite and nothing is checked).
"""
import numpy as np

from .vector_paged import paged_feature_histograms


class VectorMonotone:
    """The monotone-constraint steps of ``VectorLeafGrower`` (a mixin: it reads the
    grower's ``nodes``, ``monotone``, ``scales``, ``split_params``, ``params``, ``k``
    (kernels), ``output_major`` and its ``_search``, ``_partition`` and ``_segment_sums``)."""

    @property
    def _bounded_search(self):
        """Whether the split search applies the monotone bounds itself (the full
        gradients' search; the projected one's splits are checked afterwards)."""
        return self.monotone is not None and not self.output_major

    def _check_projected(self, ids, hist, result):
        """Monotone constraints with the projected search: a node whose chosen split is on
        a constrained feature has that feature searched again on the full gradients
        (``_refine``: XGBoost 3.4's monotone search over every output, for that feature
        only, its gain scaled by what the constraint costs); the node takes its best
        projected split on the other features instead when that one's gain is larger or
        the refined split is not worth it (gain at most the minimum, or below ``gamma``),
        that one checked in turn if constrained too, until one stays or none is left.
        ``result`` (``_search``'s arrays) is updated in place."""
        gain, feature, split_bin, default_left, left_sums, ok, cat_bits = result
        excluded = np.zeros((len(ids), self.data.n_features), dtype=np.uint8)
        todo = np.arange(len(ids))
        while todo.size:
            todo = todo[ok[todo] & (self.monotone[np.maximum(feature[todo], 0)] != 0)]
            if not todo.size:
                break
            kept = np.zeros(len(ids), dtype=bool)
            kept[todo] = self._refine(ids, todo, hist, result)
            excluded[todo, feature[todo]] = 1  # each round refuses one more feature
            again = self._search([ids[i] for i in todo], hist[todo], excluded[todo])
            # a refined split stays unless another feature's projected gain beats its own
            # scaled by what the constraint costs (``_refine``'s ``gain``)
            better = ~kept[todo] | (again[5] & (again[0] > gain[todo]))
            todo = todo[better]
            for i in todo:
                self._checked_sums.pop(ids[i], None)  # its refined split is not taken
            for array, new in zip(result, again):
                array[todo] = new[better]

    def _refine(self, ids, at, hist, result):
        """bool (len(at),): whether nodes ``ids[at]`` have a split worth it on their chosen
        (constrained, numeric) feature by the full gradients' monotone search; for those,
        ``result``'s threshold, missing side and (projected) left sums become that
        search's, its projected gain is scaled by the full constrained gain over the full
        gain without the constraint, and its full sums are kept for the children's
        bounds. One histogram of
        the feature over every output per node (``build_vector_feature_histograms``):
        ``k`` pairs per row of the node; on a paged matrix summed page by page, all the
        nodes in one pass (``_paged_feature_histograms``)."""
        gain, feature, split_bin, default_left, left_sums, _, _ = result
        offsets = np.asarray(self.data.matrix.feature_offsets)
        k = self.scales.shape[0]
        worth = np.zeros(len(at), dtype=bool)
        paged = self._paged_feature_histograms(ids, at, feature, offsets)
        for f in np.unique(feature[at]):  # feature order: every rank the same exchanges
            where = np.flatnonzero(feature[at] == f)
            group = [ids[at[i]] for i in where]
            n, width = len(group), int(offsets[f + 1] - offsets[f])
            if paged is not None:  # this feature's nodes, its slots (the sums are exact)
                full = np.ascontiguousarray(paged[where, :width])
            else:
                full = np.empty((n, width, k, 2), dtype=np.int64)
                starts = np.array([self.nodes.start[i] for i in group], dtype=np.int64)
                ends = np.array([self.nodes.end[i] for i in group], dtype=np.int64)
                with self.backend.threads(int((ends - starts).sum()) * k):
                    self.k.build_vector_feature_histograms(
                        self.data.matrix.bins_by_feature, self.gpair, self.rows, starts,
                        ends, np.full(n, f, dtype=np.int32), full)
            full = self.backend.collective.allreduce(full)
            totals = full.sum(axis=1)
            gains, found, bins = np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32)
            left, full_left = np.empty(n, np.uint8), np.empty((n, k, 2), np.int64)
            self.k.evaluate_vector_splits_monotone(
                full, np.array([0, width], dtype=np.int32), totals, np.ones((n, 1), np.uint8),
                self._bounds(group), np.ascontiguousarray(self.monotone[f:f + 1]),
                self.scales, self.split_params, gains, found, bins, left, full_left)
            good = (found >= 0) & (gains > self.min_gain) & (gains >= self.params["gamma"])
            # the same search without the constraint (the bounds kept): the share of the
            # gain the constraint keeps scales the projected gain, comparable to others'
            free = np.empty(n)
            self.k.evaluate_vector_splits_monotone(
                full, np.array([0, width], dtype=np.int32), totals, np.ones((n, 1), np.uint8),
                self._bounds(group), np.zeros(1, np.int8), self.scales, self.split_params,
                free, np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.uint8),
                np.empty((n, k, 2), np.int64))
            for i in np.flatnonzero(good):
                c = at[where[i]]
                worth[where[i]] = True
                gain[c] *= min(1.0, gains[i] / free[i])
                split_bin[c], default_left[c] = bins[i], left[i]
                left_sums[c] = _left_of(hist[c], int(offsets[f]), int(offsets[f + 1]),
                                        int(bins[i]), bool(left[i]))
                self._checked_sums[group[i]] = (totals[i], full_left[i])
        return worth

    def _paged_feature_histograms(self, ids, at, feature, offsets):
        """int64 (len(at), widest, k, 2): on a paged matrix, nodes ``ids[at]``'s histograms
        of their chosen features over every output, all built in one pass over the pages
        (``gbm.tree.vector_paged``; slots past a feature's own are zero); None on an
        in-memory matrix (``_refine`` builds each feature's there)."""
        if self.data.matrix.layout != "paged":
            return None
        chosen = np.ascontiguousarray(feature[at], dtype=np.int32)
        widths = offsets[chosen + 1] - offsets[chosen]
        hist = np.empty((len(at), int(widths.max()), self.scales.shape[0], 2), np.int64)
        starts = np.array([self.nodes.start[ids[c]] for c in at], dtype=np.int64)
        ends = np.array([self.nodes.end[ids[c]] for c in at], dtype=np.int64)
        with self.backend.threads(int((ends - starts).sum()) * self.scales.shape[0]):
            paged_feature_histograms(self.data.matrix, self.k, self.gpair, self.rows, starts,
                                     ends, chosen, hist)
        return hist

    def _bounds(self, ids):
        """float64 (len(ids), k, 2): the nodes' weight bounds."""
        return np.array([self.nodes.bounds[i] for i in ids], dtype=np.float64)

    def _set_child_bounds(self, parents):
        """Bounds of the children of split nodes ``parents`` (their sums and split
        already recorded): the parent's, narrowed on a monotone feature."""
        nodes = self.nodes
        if self.monotone is None:
            return
        lefts = [nodes.left[node] for node in parents]
        n, k = len(parents), self.scales.shape[0]
        signs = self.monotone[np.array([nodes.feature[i] for i in parents], dtype=np.int64)]
        if self.output_major:  # projected search: the checked splits' full sums
            totals, left_sums = np.zeros((n, k, 2), np.int64), np.zeros((n, k, 2), np.int64)
            for i, node in enumerate(parents):
                if signs[i] != 0:
                    totals[i], left_sums[i] = self._checked_sums.pop(node)
        else:
            totals = np.array([nodes.sums[i] for i in parents], dtype=np.int64)
            left_sums = np.array([nodes.sums[i] for i in lefts], dtype=np.int64)
        left_bounds, right_bounds = np.empty((n, k, 2)), np.empty((n, k, 2))
        self.k.vector_child_bounds(totals, left_sums, self._bounds(parents), signs,
                                   self.scales, self.split_params, left_bounds, right_bounds)
        for i, left in enumerate(lefts):
            nodes.bounds[left], nodes.bounds[left + 1] = left_bounds[i], right_bounds[i]

    def _root_bounds(self):
        """The root's bounds: none (infinite) for every output."""
        bounds = np.empty((self.scales.shape[0], 2))
        bounds[:, 0], bounds[:, 1] = -np.inf, np.inf
        self.nodes.bounds[0] = bounds


def _left_of(h, lo, hi, split_bin, missing_left):
    """int64 (d, 2): a threshold's left sums in one node's histograms ``h`` (slots ``lo ..
    hi - 1`` of the feature, the last its missing rows): bins ``0 .. split_bin`` (none
    for -1: a one-bin feature's missing rows alone), and the missing rows if they go left
    (``feature_best``'s candidates in ``kernels/cpu/vector_split.py``)."""
    left = h[hi - 1].copy() if missing_left else np.zeros_like(h[lo])
    if split_bin >= 0:
        left += h[lo:lo + split_bin + 1].sum(axis=0)
    return left
