"""Monotone constraints (XGBoost 3.4's vector rule, ``kernels/cpu/vector_leaf.py``): each
node keeps a lower and an upper bound per output (float64 (k, 2); the root's infinite),
its weights are clamped into them, and a split on a constrained feature sets its
children's bounds from its split weights. Every rank computes them from the same global
sums. With ``gradient_projection`` the search reads projected columns, which have no
per-output bounds: it searches them unbounded, and each chosen split on a constrained
feature is checked by its monotone gain over every output on the full sums (the node's
rows partitioned, the children's sums added up), replaced by the node's best split on the
other features when not worth it; its full sums set the children's bounds and the leaves
are clamped as above, so every output's predictions respect the constraints. On CUDA the
same steps run the CUDA twins of the kernels (``kernels/cuda/vector_leaf.py``).

``VectorMonotone`` holds these steps; ``VectorLeafGrower`` (``gbm.tree.vector_leaf``)
inherits them (without constraints the bounds stay infinite and nothing is checked).
"""
import numpy as np


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
        """Monotone constraints with the projected search: each chosen split on a
        constrained feature is checked on the full sums (``vector_constrained_gains``:
        XGBoost 3.4's monotone gain over every output); one not worth it (gain at most
        the minimum, or below ``gamma``) is replaced by the node's best split on the other
        features, checked in turn, until one passes or none is left. ``result``
        (``_search``'s arrays) is updated in place."""
        gain, feature, split_bin, default_left, left_sums, ok, cat_bits = result
        excluded = np.zeros((len(ids), self.data.n_features), dtype=np.uint8)
        todo = np.arange(len(ids))
        while todo.size:
            todo = todo[ok[todo] & (self.monotone[np.maximum(feature[todo], 0)] != 0)]
            if not todo.size:
                break
            todo = todo[~self._full_gain_ok(ids, todo, feature, split_bin, default_left)]
            if not todo.size:
                break
            excluded[todo, feature[todo]] = 1  # each round refuses one more feature
            again = self._search([ids[i] for i in todo], hist[todo], excluded[todo])
            for array, new in zip(result, again):
                array[todo] = new

    def _full_gain_ok(self, ids, at, feature, split_bin, default_left):
        """bool (len(at),): whether the splits of nodes ``ids[at]`` (on constrained
        numeric features) are worth it by their gain on the full sums; the full sums of
        those that are kept for their children's bounds. Partitions the nodes' rows
        (the split, if chosen, partitions them again: the same rows go left)."""
        nodes = [ids[i] for i in at]
        starts, middles, ends = self._partition(nodes, feature[at], split_bin[at],
                                                default_left[at])
        sums = self._segment_sums(np.concatenate([starts, starts]),
                                  np.concatenate([middles, ends]))
        left, total = sums[:len(at)], sums[len(at):]
        gains = np.empty(len(at))
        self.k.vector_constrained_gains(total, left, self._bounds(nodes),
                                        self.monotone[feature[at]], self.scales,
                                        self.split_params, gains)
        worth = (gains > self.min_gain) & (gains >= self.params["gamma"])
        for i, node in enumerate(nodes):
            if worth[i]:
                self._checked_sums[node] = (total[i], left[i])
        return worth

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
