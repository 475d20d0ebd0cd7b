"""The trees under construction as a struct of arrays, one row per node in creation order
(``Nodes``): row segments, integer sums, weight bounds, constraint paths, splits; each
node's tree and its id within that tree (trees grown in lockstep share one ``Nodes``).
Every grower keeps its nodes so: ``TreeGrower`` (a gradient pair a node), the vector-leaf
growers (a pair an output: ``sums_shape`` and ``bounds_shape``)."""
import numpy as np


class Nodes:
    """The trees under construction: one row per node, in creation order; ``tree`` is a
    node's tree, ``local`` its id within that tree.

    A new node has no rows (``start`` = ``end`` = 0), depth 0, zero sums and bounds, no
    split (``feature`` -1, ``left`` -1: a leaf) and an empty path. ``sums`` is int64
    (capacity,) + ``sums_shape``, ``bounds`` float64 (capacity,) + ``bounds_shape``;
    ``path`` bool (capacity, n_features), None without ``with_paths``. The arrays grow
    (doubling) as nodes are added: read them through ``[:n]`` or node ids.
    """

    def __init__(self, n_features, capacity, with_paths, cat_words, n_trees=1,
                 sums_shape=(2,), bounds_shape=(2,)):
        self.n = 0
        self.sums_shape, self.bounds_shape = tuple(sums_shape), tuple(bounds_shape)
        self.path = None
        self.next_local = np.zeros(n_trees, dtype=np.int64)  # each tree's next node id
        self.capacity = 0
        self.n_features = n_features
        self.cat_words = cat_words
        self.with_paths = with_paths
        self._grow(max(capacity, 1))

    def _grow(self, capacity):
        def resized(name, shape, dtype, fill):
            new = np.full((capacity,) + shape, fill, dtype=dtype)
            if self.capacity:
                new[:self.n] = getattr(self, name)[:self.n]
            setattr(self, name, new)

        for name, shape, dtype, fill in (
                ("start", (), np.int64, 0), ("end", (), np.int64, 0),
                ("depth", (), np.int32, 0), ("sums", self.sums_shape, np.int64, 0),
                ("bounds", self.bounds_shape, np.float64, 0.0), ("feature", (), np.int32, -1),
                ("split_bin", (), np.int32, 0), ("default_left", (), np.uint8, 0),
                ("split_type", (), np.uint8, 0), ("gain", (), np.float64, 0.0),
                ("left", (), np.int32, -1), ("cat_bits", (self.cat_words,), np.uint32, 0),
                ("tree", (), np.int32, 0), ("local", (), np.int64, 0)):
            resized(name, shape, dtype, fill)
        if self.with_paths:  # features split on between the root and each node
            resized("path", (self.n_features,), bool, False)
        self.capacity = capacity

    def add(self, trees):
        """Ids of new nodes (consecutive) of trees ``trees`` (int, one per node); each
        gets the next id of its tree, in order."""
        count = trees.shape[0]
        if self.n + count > self.capacity:
            self._grow(max(2 * self.capacity, self.n + count))
        ids = np.arange(self.n, self.n + count, dtype=np.int64)
        self.n += count
        self.tree[ids] = trees
        # each node's rank among the new nodes of its tree, after its tree's earlier nodes
        order = np.argsort(trees, kind="stable")
        sorted_trees = trees[order]
        first = np.searchsorted(sorted_trees, sorted_trees)
        self.local[ids[order]] = self.next_local[sorted_trees] + np.arange(count) - first
        self.next_local += np.bincount(trees, minlength=self.next_local.shape[0])
        return ids
