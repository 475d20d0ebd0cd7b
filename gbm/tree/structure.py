"""A fitted tree as flat arrays, and a forest of them packed for the prediction kernels."""
from dataclasses import dataclass

import numpy as np

from ..kernels.layout import CAT_WORDS, FLAG_CATEGORICAL, FLAG_DEFAULT_LEFT

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
    """One regression tree. Every ``NODE_FIELDS`` field is an array of length ``n_nodes``.

    Categorical splits (see gbm.data.categorical): ``split_type`` (uint8, per node) is 1 at a
    categorical node, 0 elsewhere; ``cat_bits`` (uint32, (n categorical nodes, n_words))
    holds their sets, in node order: code ``c`` is bit ``c & 31`` of word ``c >> 5``, and
    rows whose category is in the set go to the right child; ``n_words`` is ``CAT_WORDS``
    (codes below 256), or more for features with more categories. ``split_bin`` and
    ``threshold`` are 0 at categorical nodes. Both default to "no categorical node".
    """

    split_feature: np.ndarray
    split_bin: np.ndarray
    threshold: np.ndarray
    default_left: np.ndarray
    left_child: np.ndarray
    right_child: np.ndarray
    value: np.ndarray
    gain: np.ndarray
    cover: np.ndarray
    split_type: np.ndarray = None
    cat_bits: np.ndarray = None

    def __post_init__(self):
        if self.split_type is None:
            self.split_type = np.zeros(self.left_child.shape[0], dtype=np.uint8)
        if self.cat_bits is None:
            self.cat_bits = np.zeros((0, CAT_WORDS), dtype=np.uint32)

    @property
    def n_outputs(self):
        """Values per leaf: 1, or k for a vector-leaf tree (``value`` (n_nodes, k),
        ``multi_strategy="multi_output_tree"``, gbm.tree.vector_leaf)."""
        return 1 if self.value.ndim == 1 else self.value.shape[1]

    def output(self, j):
        """Output ``j`` of a vector-leaf tree as a one-output tree (the same structure,
        ``value[:, j]``); the tree itself when it has one output."""
        if self.value.ndim == 1:
            return self
        fields = {name: getattr(self, name) for name in NODE_FIELDS}
        fields["value"] = np.ascontiguousarray(self.value[:, j])
        return Tree(**fields, split_type=self.split_type, cat_bits=self.cat_bits)

    @property
    def has_categorical(self):
        return bool(self.split_type.any())

    def node_categories(self, node):
        """The codes in a categorical node's set (those that go right), increasing."""
        row = int(self.split_type[:node].sum())
        bits = self.cat_bits[row]
        words = np.ascontiguousarray(bits, dtype="<u4")  # little-endian: code c is bit c
        return np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little")).tolist()

    @property
    def n_nodes(self):
        return self.left_child.shape[0]

    @property
    def n_leaves(self):
        return int((self.left_child < 0).sum())

    def depth(self):
        """Edges on the longest path from the root to a leaf, from the children arrays.

        Children come after their parents, so one pass in node order sees every parent
        of a node before the node; taking the deepest parent makes this the real depth
        even of a structure that is not a tree (gbm.io.validation rejects those).
        """
        depth = [0] * self.n_nodes
        for node, left in enumerate(self.left_child.tolist()):
            if left >= 0:
                below = depth[node] + 1
                for child in (left, left + 1):
                    if below > depth[child]:
                        depth[child] = below
        return max(depth)

    def to_dict(self):
        """The node arrays as lists; ``split_type`` and ``cat_bits`` only for a tree with
        categorical nodes (so numeric trees are written as before). ``cat_bits`` rows are
        cut to the words the tree's highest code needs, never fewer than ``CAT_WORDS``."""
        d = {name: getattr(self, name).tolist() for name in NODE_FIELDS}
        if self.has_categorical:
            d["split_type"] = self.split_type.tolist()
            used = np.flatnonzero(self.cat_bits.any(axis=0))
            width = max(CAT_WORDS, int(used[-1]) + 1 if used.size else 0)
            d["cat_bits"] = self.cat_bits[:, :width].tolist()
        return d


class Forest:
    """Trees packed end to end, the layout the prediction kernels read.

    ``tree_offsets[t]`` is the index of tree ``t``'s root; ``tree_group[t]`` the output
    column (class) it adds to; ``tree_depth[t]`` its depth. ``walk`` and ``walk_binned``
    are int32 tables of 4 entries per node, ``(feature, left child, flags, test)`` with the
    test a threshold's float32 bits (``walk``) or a split bin (``walk_binned``); ``flags``
    bit 0 says where missing values go (kernels/layout.py). At a leaf the entry is ``(0,
    own id - 1, 0, NaN or -1)``: every row "goes right" to the leaf itself, so a walk can
    take a fixed number of steps without asking where it is.

    A categorical node (``split_type`` 1) has flags bit 1 set, and its test is its row of
    ``cat_bits`` (uint32 (n_sets, n_words), all trees' sets stacked, each padded with zero
    words to the widest tree's ``n_words``).

    ``weights`` (DART's tree weights, float (n_trees,); None: all 1) multiply each tree's
    node values as they are packed, so every kernel that reads ``value`` (predictions,
    TreeSHAP) sees the weighted trees; a weight of 1 leaves the values' bits as they are.
    """

    def __init__(self, trees, groups, weights=None):
        if any(t.value.ndim == 2 for t in trees):  # vector leaves: one tree per output
            trees, groups, weights = _per_output(trees, groups, weights)
        self.n_trees = len(trees)
        sizes = np.array([t.n_nodes for t in trees], dtype=np.int64)
        self.tree_offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        self.tree_group = np.asarray(groups, dtype=np.int32)
        self.tree_depth = np.array([t.depth() for t in trees], dtype=np.int32)
        for name, dtype in NODE_FIELDS.items():
            parts = [getattr(t, name) for t in trees]
            setattr(self, name, np.concatenate(parts).astype(dtype) if parts else np.empty(0, dtype))
        if weights is not None:
            self.value = self.value * np.repeat(np.asarray(weights, dtype=np.float64), sizes)
        self.split_type = (np.concatenate([t.split_type for t in trees]).astype(np.uint8)
                           if trees else np.empty(0, np.uint8))
        width = max([CAT_WORDS] + [t.cat_bits.shape[1] for t in trees])
        self.cat_bits = np.ascontiguousarray(np.concatenate(
            [t.cat_bits if t.cat_bits.shape[1] == width
             else np.pad(t.cat_bits, ((0, 0), (0, width - t.cat_bits.shape[1]))) for t in trees])
            if trees else np.empty((0, CAT_WORDS)), dtype=np.uint32)
        self.has_categorical = bool(self.split_type.any())
        is_cat = self.split_type == 1
        # each categorical node's row in cat_bits (-1 elsewhere)
        self.cat_row = np.where(is_cat, np.cumsum(is_cat) - 1, -1).astype(np.int32)
        threshold_test = self.threshold.view(np.int32)
        bin_test = self.split_bin
        if self.has_categorical:
            threshold_test = np.where(is_cat, self.cat_row, threshold_test)
            bin_test = np.where(is_cat, self.cat_row, bin_test)
        self.walk = self._walk_table(threshold_test, np.float32(np.nan).view(np.int32))
        self.walk_binned = self._walk_table(bin_test, -1)

    def _walk_table(self, test, leaf_test):
        inner = self.left_child >= 0
        own_id = np.arange(inner.size) - np.repeat(self.tree_offsets[:-1], np.diff(self.tree_offsets))
        table = np.empty((inner.size, 4), dtype=np.int32)
        table[:, 0] = np.where(inner, self.split_feature, 0)
        table[:, 1] = np.where(inner, self.left_child, own_id - 1)
        flags = self.default_left * FLAG_DEFAULT_LEFT + (self.split_type == 1) * FLAG_CATEGORICAL
        table[:, 2] = np.where(inner, flags, 0)
        table[:, 3] = np.where(inner, test, leaf_test)
        return table.reshape(-1)


def _per_output(trees, groups, weights):
    """Vector-leaf trees as one-output trees: a tree of ``k`` outputs becomes ``k`` trees
    (``Tree.output``), output ``j``'s adding to group ``j`` (the packed layout the
    kernels read: a prediction, a leaf index, a TreeSHAP value per output)."""
    out_trees, out_groups, out_weights = [], [], []
    for i, (tree, group) in enumerate(zip(trees, groups)):
        k = tree.n_outputs
        for j in range(k):
            out_trees.append(tree.output(j))
            out_groups.append(j if tree.value.ndim == 2 else group)
            out_weights.append(1.0 if weights is None else weights[i])
    return out_trees, out_groups, None if weights is None else out_weights
