"""Random trees for the explanation kernels' tests (``tests/test_shap.py``,
``tests/test_interactions.py``): any shape, repeated features on a path, categorical
splits."""
import numpy as np

from gbm.tree.structure import NODE_FIELDS, Tree


def random_tree(rng, n_splits, n_features, chain=False, consistent_cover=True):
    """A tree of ``n_splits`` splits on random features (repeats on a path included).

    ``chain``: each split is made on the newest leaf, a path of depth ``n_splits``.
    Covers are positive; with ``consistent_cover`` a parent's cover is its children's sum
    (as in training), else each node's cover is drawn on its own.
    """
    left, feature = [-1], [-1]
    for _ in range(n_splits):
        leaves = [i for i, child in enumerate(left) if child < 0]
        node = leaves[-1] if chain else leaves[rng.integers(0, len(leaves))]
        left[node], feature[node] = len(left), int(rng.integers(0, n_features))
        left += [-1, -1]
        feature += [-1, -1]
    left = np.array(left, np.int32)
    n = left.size
    cover = rng.uniform(0.2, 3.0, n)
    if consistent_cover:
        for node in range(n - 1, -1, -1):
            if left[node] >= 0:
                cover[node] = cover[left[node]] + cover[left[node] + 1]
    return Tree(split_feature=np.array(feature, np.int32), split_bin=np.zeros(n, np.int32),
                threshold=(rng.integers(0, 4, n) + 0.5).astype(np.float32),
                default_left=rng.integers(0, 2, n).astype(np.uint8), left_child=left,
                right_child=np.where(left >= 0, left + 1, -1).astype(np.int32),
                value=rng.normal(size=n), gain=np.zeros(n), cover=cover)


def with_categorical_splits(rng, tree, share=0.5, n_codes=5):
    """``tree`` with about ``share`` of its splits made categorical: random non-empty sets
    of the codes ``0 .. n_codes - 1`` (rows whose code is in the set go right)."""
    inner = np.flatnonzero(tree.left_child >= 0)
    cat = inner[rng.random(inner.size) < share]
    split_type = np.zeros(tree.n_nodes, np.uint8)
    split_type[cat] = 1
    bits = np.zeros((cat.size, 8), np.uint32)
    for row in range(cat.size):
        codes = rng.choice(n_codes, size=rng.integers(1, n_codes), replace=False)
        for code in codes:
            bits[row, code // 32] |= np.uint32(1 << (code % 32))
    return Tree(**{name: getattr(tree, name) for name in NODE_FIELDS}, split_type=split_type,
                cat_bits=bits)
