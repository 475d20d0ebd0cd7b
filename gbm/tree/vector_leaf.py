"""Vector-leaf trees (XGBoost's ``multi_strategy="multi_output_tree"``): one tree per round
for all ``k`` outputs (classes, targets, labels), each leaf holding one value per output.

A split's gain is the sum over outputs of the single-output gain (XGBoost's multi-target
rule, ``kernels/cpu/vector_leaf.py``); leaf values are each output's usual weight (with
``reg_lambda``, ``reg_alpha``, ``max_delta_step`` and the learning rate; 0 in an output
whose hessian in the leaf is below ``min_child_weight``). Gradients are
quantised per output (each its own fixed-point scales), histograms hold one integer pair
per output in each bin and are built in one pass over a node batch's rows, so every sum,
and the tree, is the same on any thread count.

With ``gradient_projection`` (``gbm.tree.projection``) the split search reads a
projection of the ``k`` gradients to ``d`` columns instead (the histograms' cost follows
``d``), while every node's sums and the leaf values come from all ``k``.

Growth is depthwise (level by level, the smaller child's histograms built and its
sibling's subtracted; ``grow_policy="lossguide"``: ``gbm.tree.vector_lossguide``), on a
dense bin matrix (a sparse or bundled one expanded to it: ``dense_data``; an
``ExtMemQuantileDMatrix``'s pages summed page by page: ``gbm.tree.vector_paged``), with the
backend's kernels (the CPU's, or CUDA's: ``kernels/cuda/vector_leaf.py``). Node ids
follow creation order: the children of a level's split nodes get consecutive ids, left
then right. On several ranks (Dask) every histogram and node sum is an integer sum over
the ranks (``backend.collective``), and every rank makes the same exchanges, so each grows
the tree of all rows.

Categorical features (XGBoost 3.4's vector rule, ``kernels/cpu/vector_categorical.py``
and its CUDA twin): a node's best split may be a set of categories going right, kept per
node as the tree's category bitsets (``Tree.cat_bits``), so prediction, SHAP and the
model files read them as a one-output tree's.

Monotone constraints (XGBoost 3.4's vector rule): per-output bounds on every node,
``gbm.tree.vector_monotone``.
"""
import dataclasses

import numpy as np

from ..kernels.cpu import vector_leaf as _kernels
from .constraints import allowed_features
from .nodes import Nodes
from .structure import NODE_FIELDS, Tree
from .vector_gradients import FloatOutputs
from .vector_monotone import VectorMonotone
from .vector_paged import paged_vector_histograms

_MIN_GAIN = 1e-6  # as gbm.tree.grower: XGBoost's kRtEps


def check_supported(p, data, backend, objective):
    """``NotImplementedError`` naming the parameter combination that vector-leaf trees do
    not support yet (never a model grown by other rules)."""
    def refuse(what):
        raise NotImplementedError(f"multi_strategy='multi_output_tree' does not support {what} "
                                  "yet; use multi_strategy='one_output_per_tree'")

    if p["booster"] != "gbtree":
        refuse(f"booster={p['booster']!r}")
    if data.matrix.layout == "paged":  # pages summed on the host (gbm.tree.vector_paged)
        if backend.name != "cpu":
            refuse(f"an ExtMemQuantileDMatrix with device={backend.name!r} (its pages are "
                   "summed on the host only)")


def dense_data(data, xp=np):
    """``data`` with its bin matrix as dense bins (the vector-leaf grower reads dense bins
    only): a sparse or bundled matrix expanded (``to_dense``, on the host, then on ``xp``'s
    device: the same bins, so the model of a dense fit; memory of ``n_rows * n_features``
    bins), a dense or paged one as it is."""
    if data.matrix.layout in ("dense", "paged"):  # pages: gbm.tree.vector_paged
        return data
    return dataclasses.replace(data, matrix=data.matrix.to_dense(xp))


class VectorLeafGrower(VectorMonotone):
    """Grows one vector-leaf tree.

    Parameters
    ----------
    data : TreeData (a dense bin matrix)
    gpair : int64 (n_rows, k, 2), scales : float64 (k, 2)
        Every output's fixed-point gradients: the nodes' sums and leaf values (with
        ``search``, output-major instead: int64 (k, n_rows, 2), or a ``FloatOutputs``
        whose pairs are quantized as they are read).
    rows : int32 (m,), the rows the tree grows on
    params : validated parameters
    backend : gbm.runtime.backend.Backend (its collective sums over the ranks)
    column_sampler : gbm.tree.sampling.ColumnSampler
    search : (int64 (n_rows, d, 2), float64 (d, 2)), optional
        Projected gradients the split search reads instead of ``gpair``
        (``gbm.tree.projection``); None: the split search reads ``gpair``.
    kernels : module, optional
        ``kernels.cpu.vector_leaf`` (default), its reference twin, or any backend's
        kernels module (``backend.kernels``: the CUDA kernels).
    """

    min_gain = _MIN_GAIN  # a split's least gain (VectorMonotone's checks read it too)

    def __init__(self, data, gpair, scales, rows, params, backend, column_sampler,
                 search=None, kernels=_kernels):
        self.data, self.scales = data, np.asarray(scales, np.float64)
        self.outputs = gpair if isinstance(gpair, FloatOutputs) else None
        self._gpair = None if self.outputs is not None else gpair
        self.output_major = search is not None
        self.search_gpair, self.search_scales = (gpair, self.scales) if search is None \
            else (search[0], np.asarray(search[1], np.float64))
        self.rows = np.ascontiguousarray(rows, dtype=np.int32).copy()
        self.scratch = np.empty_like(self.rows)
        self.params, self.backend, self.sampler, self.k = params, backend, column_sampler, kernels
        self.split_params = np.array([params["reg_lambda"], params["reg_alpha"],
                                      params["max_delta_step"], params["min_child_weight"]])
        # the nodes as the grower's (gbm.tree.nodes): sums of the searched columns, a pair
        # each (k_search, 2); bounds per output (monotone constraints only)
        max_depth, max_leaves = params["max_depth"], params["max_leaves"]
        capacity = 2 * max_leaves - 1 if max_leaves else 2 ** (min(max_depth, 10) + 1) - 1
        self.nodes = Nodes(data.n_features, capacity, data.interaction is not None,
                           data.cat_words, sums_shape=(self.search_gpair.shape[1], 2),
                           bounds_shape=(self.scales.shape[0], 2))
        self.monotone = np.ascontiguousarray(data.monotone, dtype=np.int8) \
            if data.monotone.any() else None
        # categorical features: their kernel (gbm.kernels.cpu.vector_categorical)
        self.categorical = np.ascontiguousarray(data.is_categorical, dtype=np.uint8) \
            if np.asarray(data.is_categorical).any() else None
        # monotone constraints: bounds per output, so the projected search cannot apply
        # them; its chosen splits on constrained features are searched again on the full
        # gradients (gbm.tree.vector_monotone)
        self.check_splits = self.monotone is not None and search is not None
        self._checked_sums = {}  # node -> its full (total, left) sums, refined splits only
        self._buffers = [np.empty(0, np.int64)] * 3  # see _take
        self._turn = 0

    @property
    def gpair(self):
        """The full pairs (``FloatOutputs``: written at the first read)."""
        return self._gpair if self.outputs is None else self.outputs.pairs()

    # -- the steps of a level --------------------------------------------------------------
    def _build(self, ids, scratch=False):
        """int64 (len(ids), n_slots, d, 2): the nodes' histograms from their rows."""
        nodes, matrix = self.nodes, self.data.matrix
        d = self.search_gpair.shape[1]
        hist = self._take(len(ids), (int(matrix.feature_offsets[-1]), d, 2), scratch)
        starts = np.array([nodes.start[i] for i in ids], dtype=np.int64)
        ends = np.array([nodes.end[i] for i in ids], dtype=np.int64)
        work = int((ends - starts).sum()) * matrix.n_features * d
        with self.backend.threads(work):
            if matrix.layout == "paged":  # summed page by page (gbm.tree.vector_paged)
                paged_vector_histograms(matrix, self.k, self.search_gpair, self.rows, starts,
                                        ends, hist)
            else:
                self.k.build_vector_histograms(matrix.bins_by_feature, self.search_gpair,
                                               self.rows, starts, ends,
                                               matrix.feature_offsets, hist)
        if self.backend.collective.world_size > 1:  # every rank's rows (integer sums)
            hist[...] = self.backend.collective.allreduce(hist, "sum")
        return hist

    def _mask(self, ids, exclude=None):
        """uint8 (len(ids), n_features): the features each node may split on (less
        ``exclude``'s, uint8 of the same shape: features set aside for the node)."""
        nodes = self.nodes
        mask = self.sampler.masks(np.asarray(ids), np.array([nodes.depth[i] for i in ids]))
        if nodes.path is not None:
            mask &= allowed_features(self.data.interaction, np.array([nodes.path[i] for i in ids]))
        if exclude is not None:
            mask &= exclude == 0
        return np.ascontiguousarray(mask, dtype=np.uint8)

    def _evaluate(self, ids, hist):
        """Each node's best split: ``(gain, feature, split_bin, default_left, left_sums,
        ok, cat_bits)``, one entry per node (``ok``: worth splitting)."""
        result = self._search(ids, hist)
        if self.check_splits:
            self._check_projected(ids, hist, result)
        return result

    def _search(self, ids, hist, exclude=None):
        n, d = len(ids), self.search_gpair.shape[1]
        gain, feature = np.empty(n), np.empty(n, np.int32)
        split_bin, default_left = np.empty(n, np.int32), np.empty(n, np.uint8)
        left_sums = np.empty((n, d, 2), np.int64)
        cat_bits = np.zeros((n, self.data.cat_words), np.uint32)
        sums = np.array([self.nodes.sums[i] for i in ids], dtype=np.int64).reshape(n, d, 2)
        mask = self._mask(ids, exclude)
        with self.backend.threads(hist.size // 2):
            if self.categorical is not None:
                self._evaluate_categorical(ids, hist, sums, mask, gain, feature, split_bin,
                                           default_left, left_sums, cat_bits)
            elif not self._bounded_search:
                self.k.evaluate_vector_splits(hist, self.data.matrix.feature_offsets, sums,
                                              mask, self.search_scales,
                                              self.split_params, gain, feature, split_bin,
                                              default_left, left_sums)
            else:
                self.k.evaluate_vector_splits_monotone(
                    hist, self.data.matrix.feature_offsets, sums, mask,
                    self._bounds(ids), self.monotone, self.search_scales, self.split_params,
                    gain, feature, split_bin, default_left, left_sums)
        ok = (feature >= 0) & (gain > _MIN_GAIN) & (gain >= self.params["gamma"])
        return gain, feature, split_bin, default_left, left_sums, ok, cat_bits

    def _evaluate_categorical(self, ids, hist, sums, mask, *out):
        """``_search``'s kernel call with categorical features (numeric ones as the
        other kernels: with the nodes' bounds, infinite without monotone constraints)."""
        if not self._bounded_search:
            bounds = np.empty((len(ids), self.search_gpair.shape[1], 2))
            bounds[..., 0], bounds[..., 1] = -np.inf, np.inf
            monotone = np.zeros(self.data.n_features, np.int8)
        else:
            bounds, monotone = self._bounds(ids), self.monotone
        self.k.evaluate_vector_splits_categorical(
            hist, self.data.matrix.feature_offsets, sums, mask, bounds, monotone,
            self.categorical, self.search_scales, self.split_params,
            self.params["max_cat_to_onehot"], self.params["max_cat_threshold"], *out)

    def _cat_split(self, feature, bits):
        """A chosen split's set (uint32 (n_words,)), or None on a numeric feature."""
        if self.categorical is None or not self.categorical[feature]:
            return None
        return bits.copy()

    def _choose(self, ids, gain, ok, n_leaves):
        """Positions (into ``ids``) of the nodes to split, increasing: every one worth it,
        or the best ``max_leaves - n_leaves`` of them (ties: the lower id)."""
        chosen = np.flatnonzero(ok)
        max_leaves = self.params["max_leaves"]
        if max_leaves and chosen.size > max_leaves - n_leaves:
            order = np.lexsort((np.asarray(ids)[chosen], -gain[chosen]))
            chosen = np.sort(chosen[order[:max(0, max_leaves - n_leaves)]])
        return chosen

    def _partition(self, ids, feature, split_bin, default_left):
        nodes, matrix = self.nodes, self.data.matrix
        n = len(ids)
        starts = np.array([nodes.start[i] for i in ids], dtype=np.int64)
        ends = np.array([nodes.end[i] for i in ids], dtype=np.int64)
        n_left = np.empty(n, dtype=np.int64)
        split_type, cat_bits = nodes.split_type[ids], nodes.cat_bits[ids]  # numeric: zeros
        with self.backend.threads(4 * int((ends - starts).sum())):
            matrix.partition_rows(self.backend.kernels, self.rows, starts, ends,
                                  np.ascontiguousarray(feature, dtype=np.int32),
                                  np.ascontiguousarray(split_bin, dtype=np.int32),
                                  np.ascontiguousarray(default_left, dtype=np.uint8),
                                  split_type, cat_bits, self.scratch, n_left)
        return starts, starts + n_left, ends

    # -- growth ----------------------------------------------------------------------------
    def grow(self):
        """The tree, and its leaves' row segments and values: ``(tree, rows, leaf_starts,
        leaf_ends, leaf_values float64 (n_leaves, k))``."""
        nodes, p = self.nodes, self.params
        self._add_root()
        max_depth = p["max_depth"]
        ids, hist, n_leaves = [0], None, 1
        if max_depth != 0 and self._any_rows():
            hist = self._build(ids)
        else:
            ids = []
        while ids:
            gain, feature, split_bin, default_left, left_sums, ok, cat_bits = \
                self._evaluate(ids, hist)
            chosen = self._choose(ids, gain, ok, n_leaves)
            if not chosen.size:
                break
            n_leaves += chosen.size
            parents = [ids[c] for c in chosen]
            for c, node in zip(chosen, parents):
                self._record(node, feature[c], split_bin[c], default_left[c], gain[c],
                             self._cat_split(feature[c], cat_bits[c]))
            split = self._partition(parents, feature[chosen], split_bin[chosen],
                                    default_left[chosen])
            children = self._add_children(parents, split, left_sums[chosen])
            self._set_child_bounds(parents)
            if max_depth and nodes.depth[children[0]] >= max_depth:
                break
            every = chosen.size == len(ids)
            hist = self._children_histograms(children, hist if every else hist[chosen])
            ids = [c + s for c in children for s in (0, 1)]
        return self._finish()

    def _add_root(self):
        """The root (node 0): every row, the sums over them on every rank, no bounds."""
        nodes = self.nodes
        root = nodes.add(np.zeros(1, np.int32))[0]
        nodes.end[root] = self.rows.shape[0]
        nodes.sums[root] = self.backend.collective.allreduce(
            self.search_gpair[self.rows].sum(axis=0))
        self._root_bounds()

    def _record(self, node, feature, split_bin, default_left, gain, cat_bits=None):
        """Node ``node``'s split: a threshold bin, or (``cat_bits`` uint32 (n_words,)) the
        set of categories that go right (its ``split_bin`` is then 0)."""
        nodes = self.nodes
        nodes.feature[node], nodes.default_left[node] = feature, default_left
        nodes.split_bin[node] = 0 if cat_bits is not None else split_bin
        nodes.gain[node] = gain
        if cat_bits is not None:
            nodes.split_type[node], nodes.cat_bits[node] = 1, cat_bits

    def _add_children(self, parents, split, left_sums):
        """The children of split nodes ``parents`` (their splits recorded; ``split``: their
        rows' ``(starts, middles, ends)`` after the partition; ``left_sums``: the left
        children's sums), the next ids: each parent's left child, then its right one.
        Returns the left children's ids."""
        nodes, parents = self.nodes, np.asarray(parents, dtype=np.int64)
        starts, middles, ends = split
        children = nodes.add(np.zeros(2 * parents.shape[0], np.int32))
        left, right = children[0::2], children[1::2]
        nodes.start[left], nodes.end[left] = starts, middles
        nodes.start[right], nodes.end[right] = middles, ends
        nodes.depth[left] = nodes.depth[right] = nodes.depth[parents] + 1
        nodes.sums[left] = left_sums
        nodes.sums[right] = nodes.sums[parents] - left_sums
        if nodes.path is not None:  # the features split on above each child
            path = nodes.path[parents]
            path[np.arange(parents.shape[0]), nodes.feature[parents]] = True
            nodes.path[left] = nodes.path[right] = path
        nodes.left[parents] = left
        return left

    def _children_histograms(self, lefts, parent_hist):
        """The histograms of children ``lefts[i]`` and ``lefts[i] + 1``, in that order: the
        smaller child's (by hessian sum over the searched columns) built from its rows,
        its sibling's the parent's less it."""
        nodes = self.nodes
        inv_h = 1.0 / self.search_scales[:, 1]
        small_is_right = np.zeros(len(lefts), dtype=np.uint8)
        for i, left in enumerate(lefts):  # the right child when it is strictly lighter
            h_left = float((nodes.sums[left][:, 1] * inv_h).sum())
            h_right = float((nodes.sums[left + 1][:, 1] * inv_h).sum())
            small_is_right[i] = h_right < h_left
        # deep levels (few rows a node, histograms as large as ever): building the larger
        # children from their rows too costs less memory traffic than reading the parents'
        # histograms and the smaller children's again (the same integers either way)
        larger = sum(max(nodes.end[left] - nodes.start[left],
                         nodes.end[left + 1] - nodes.start[left + 1]) for left in lefts)
        n_slots = int(self.data.matrix.feature_offsets[-1])
        # (one rank only: the ranks' row counts differ, their exchanges must not)
        if self.backend.collective.world_size == 1 and \
                larger * self.data.n_features < 6 * len(lefts) * n_slots:
            return self._build([c + s for c in lefts for s in (0, 1)])
        built = self._build([left + int(r) for left, r in zip(lefts, small_is_right)],
                            scratch=True)
        hist = self._take(2 * len(lefts), built.shape[1:])
        with self.backend.threads(hist.size // 4):
            self.k.vector_children_histograms(parent_hist, built, small_is_right, hist)
        return hist

    def _take(self, n_nodes, shape, scratch=False):
        """int64 (n_nodes,) + shape in memory kept from level to level (contents
        undefined): levels take turns in two buffers (a level's children are computed
        from its parents' histograms), the built smaller children use a third."""
        size = n_nodes * int(np.prod(shape))
        if scratch:
            slot = 2
        else:
            self._turn ^= 1
            slot = self._turn
        if self.backend.xp is np:  # the fit's workspace: the same pages every tree (a
            # fresh level's histograms cost more in page faults than in the sums, measured)
            return self.backend.buffer(f"vector_hist_{slot}", (n_nodes,) + tuple(shape),
                                       np.int64)
        if self._buffers[slot].size < size:
            self._buffers[slot] = None
            self._buffers[slot] = np.empty(size, dtype=np.int64)
        return self._buffers[slot][:size].reshape((n_nodes,) + tuple(shape))

    def _any_rows(self):
        """Whether any rank grows the tree on rows (each rank asks the same)."""
        n = np.array([self.rows.shape[0]], dtype=np.int64)
        return bool(self.backend.collective.allreduce(n)[0])

    def _full_sums(self):
        """int64 (n_nodes, k, 2): every node's sums over all outputs (the leaves' from
        their rows, an inner node's its children's total)."""
        nodes, k, n = self.nodes, self.scales.shape[0], self.nodes.n
        if not self.output_major:
            # the search read every output: each node's sums are its rows' already (the
            # root's summed from its rows, a child's from the histograms and its parent's,
            # over every rank), the same integers a pass over the leaves' rows would give
            return np.ascontiguousarray(nodes.sums[:n]).reshape(n, k, 2)
        sums = np.zeros((n, k, 2), dtype=np.int64)
        left = nodes.left[:n]
        leaves = np.flatnonzero(left < 0)
        sums[leaves] = self._segment_sums(nodes.start[:n][leaves], nodes.end[:n][leaves])
        for node in range(n - 1, -1, -1):  # children after parents: bottom up
            if left[node] >= 0:
                sums[node] = sums[left[node]] + sums[left[node] + 1]
        return sums

    def _segment_sums(self, starts, ends):
        """int64 (len(starts), k, 2): the sums over every output of row segments
        ``rows[starts[i]:ends[i]]``, over all ranks."""
        k = self.scales.shape[0]
        out = np.empty((len(starts), k, 2), dtype=np.int64)
        if self.outputs is not None:  # quantized as read: every output's rows in order
            with self.backend.threads(self.outputs.grad.size):
                self.k.quantized_segment_sums(self.outputs.grad, self.outputs.hess,
                                              self.scales, self.rows, starts, ends, out)
            return self.backend.collective.allreduce(out)
        by_output = self.gpair if self.output_major else \
            np.ascontiguousarray(self.gpair.transpose(1, 0, 2))
        with self.backend.threads(int((ends - starts).sum()) * k):
            self.k.vector_segment_sums(by_output, self.rows, starts, ends, out)
        return self.backend.collective.allreduce(out)

    def _finish(self):
        nodes, p = self.nodes, self.params
        n, k = nodes.n, self.scales.shape[0]
        sums = self._full_sums()
        weights = np.empty((n, k))
        if self.monotone is None:
            self.k.vector_node_weights(sums, self.scales, self.split_params, weights)
        else:
            self.k.vector_bounded_weights(sums, self._bounds(range(n)), self.scales,
                                          self.split_params, weights)
        left = nodes.left[:n]
        inner = left >= 0
        arrays = {name: np.zeros(n, dtype=dtype) for name, dtype in NODE_FIELDS.items()}
        feature, split_bin = nodes.feature[:n], nodes.split_bin[:n]
        split_type = nodes.split_type[:n].copy()
        numeric = inner & (split_type == 0)
        arrays["split_feature"][:] = np.where(inner, feature, -1)
        arrays["split_bin"][:] = np.where(numeric, split_bin, 0)
        if numeric.any():
            arrays["threshold"][numeric] = self.data.thresholds(feature[numeric],
                                                                split_bin[numeric])
        arrays["default_left"][:] = np.where(inner, nodes.default_left[:n], 0)
        arrays["left_child"][:] = left
        arrays["right_child"][:] = np.where(inner, left + 1, -1)
        arrays["gain"][:] = np.where(inner, nodes.gain[:n], 0.0)
        # cover: the hessian sum over every output (each output's in its own scale)
        cover = np.zeros(n)
        for j in range(k):
            cover += sums[:, j, 1] / self.scales[j, 1]
        arrays["cover"][:] = cover
        values = np.where(inner[:, None], weights, p["learning_rate"] * weights)
        arrays["value"] = values
        sets = nodes.cat_bits[:n][split_type == 1]  # in node order
        tree = Tree(**arrays, split_type=split_type, cat_bits=sets if sets.shape[0] else None)
        leaves = np.flatnonzero(~inner)
        self.leaf_ids = leaves
        return (tree, self.rows, nodes.start[:n][leaves], nodes.end[:n][leaves],
                values[leaves])
