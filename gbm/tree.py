"""A fitted tree as flat arrays, and a forest of them packed for the prediction kernels."""
from dataclasses import dataclass

import numpy as np

# name -> dtype of every per-node array; node 0 is the root, children come after parents.
NODE_FIELDS = {
    "split_feature": np.int32,  # -1 at leaves
    "split_bin": np.int32,  # rows with bin <= split_bin go left
    "threshold": np.float32,  # the same rule on raw values: x < threshold goes left
    "default_left": np.uint8,  # where missing values go
    "left_child": np.int32,  # -1 at leaves
    "right_child": np.int32,  # always left_child + 1 at inner nodes (prediction relies on it)
    "value": np.float64,  # leaf value (learning rate applied); at inner nodes, the node's weight
    "gain": np.float64,  # loss reduction of the split, 0 at leaves
    "cover": np.float64,  # hessian sum of the node's training rows
}


@dataclass
class Tree:
    """One regression tree. Every field is an array of length ``n_nodes``."""

    split_feature: np.ndarray
    split_bin: np.ndarray
    threshold: np.ndarray
    default_left: np.ndarray
    left_child: np.ndarray
    right_child: np.ndarray
    value: np.ndarray
    gain: np.ndarray
    cover: np.ndarray

    @property
    def n_nodes(self):
        return self.left_child.shape[0]

    @property
    def n_leaves(self):
        return int((self.left_child < 0).sum())

    def depth(self):
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        for node in np.flatnonzero(self.left_child >= 0):
            if self.left_child[node] >= 0:
                depth[self.left_child[node]] = depth[self.right_child[node]] = depth[node] + 1
        return int(depth.max())

    def to_dict(self):
        return {name: getattr(self, name).tolist() for name in NODE_FIELDS}

    @classmethod
    def from_dict(cls, d):
        return cls(**{name: np.asarray(d[name], dtype=dtype) for name, dtype in NODE_FIELDS.items()})


class Forest:
    """Trees packed end to end, the layout the prediction kernels read.

    ``tree_offsets[t]`` is the index of tree ``t``'s root; ``tree_group[t]`` the output
    column (class) it adds to; ``tree_depth[t]`` its depth. ``walk`` and ``walk_binned``
    are int32 tables of 4 entries per node, ``(feature, left child, default left, test)``
    with the test a threshold's float32 bits (``walk``) or a split bin (``walk_binned``).
    At a leaf the entry is ``(0, own id - 1, 0, NaN or -1)``: every row "goes right" to the
    leaf itself, so a walk can take a fixed number of steps without asking where it is.
    """

    def __init__(self, trees, groups):
        self.n_trees = len(trees)
        sizes = np.array([t.n_nodes for t in trees], dtype=np.int64)
        self.tree_offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        self.tree_group = np.asarray(groups, dtype=np.int32)
        self.tree_depth = np.array([t.depth() for t in trees], dtype=np.int32)
        for name, dtype in NODE_FIELDS.items():
            parts = [getattr(t, name) for t in trees]
            setattr(self, name, np.concatenate(parts).astype(dtype) if parts else np.empty(0, dtype))
        self.walk = self._walk_table(self.threshold.view(np.int32), np.float32(np.nan).view(np.int32))
        self.walk_binned = self._walk_table(self.split_bin, -1)

    def _walk_table(self, test, leaf_test):
        inner = self.left_child >= 0
        own_id = np.arange(inner.size) - np.repeat(self.tree_offsets[:-1], np.diff(self.tree_offsets))
        table = np.empty((inner.size, 4), dtype=np.int32)
        table[:, 0] = np.where(inner, self.split_feature, 0)
        table[:, 1] = np.where(inner, self.left_child, own_id - 1)
        table[:, 2] = np.where(inner, self.default_left, 0)
        table[:, 3] = np.where(inner, test, leaf_test)
        return table.reshape(-1)
