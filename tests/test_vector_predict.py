"""Vector-leaf prediction (``gbm.model.vector_predict``): the ``add_leaf_vectors`` kernel
against its NumPy twin, and predictions, margins and leaves bit for bit those of the
plain per-output path (each vector-leaf tree packed as ``k`` one-output trees,
``Forest``, walked by the one-output kernels), on hand-made trees and a trained model."""
import numpy as np
import pytest

import gbm
from gbm.data.sparse import SparseMatrix
from gbm.kernels import cpu, reference
from gbm.model.booster import add_raw_margins
from gbm.model.vector_predict import VectorTrees, add_vector_margins, vector_leaves
from gbm.objectives import get_objective
from gbm.runtime.backend import get_backend
from gbm.tree.structure import Forest, NODE_FIELDS, Tree
from tests.support.leaf_vectors import leaf_vector_inputs
from tests.support.random_trees import random_tree, with_categorical_splits


def _vector_tree(rng, n_splits, n_features, k, categorical=False):
    """A random tree (``random_tree``) with a random vector of ``k`` values per node."""
    tree = random_tree(rng, n_splits, n_features)
    if categorical:
        tree = with_categorical_splits(rng, tree)
    fields = {name: getattr(tree, name) for name in NODE_FIELDS}
    fields["value"] = rng.normal(size=(tree.n_nodes, k)) * 10.0 ** rng.integers(-3, 3, k)
    return Tree(**fields, split_type=tree.split_type, cat_bits=tree.cat_bits)


def _rows(rng, n_rows, n_features):
    """float32 rows around the trees' thresholds (0.5 .. 3.5), codes 0..5, some NaN."""
    X = rng.integers(-1, 6, (n_rows, n_features)).astype(np.float32)
    X[rng.random(X.shape) < 0.15] = np.nan
    return X


def _per_output_margins(kernels, X, trees, start):
    """The plain path: each tree as ``k`` one-output trees (``Forest``), walked once per
    output by ``predict`` (``predict_csr`` for sparse rows)."""
    out = start.copy()
    add_raw_margins(kernels, X, Forest(trees, [0] * len(trees)), out)
    return out


def _old_margins(X, trees, start):
    """The former ``add_vector_margins``: leaves of every tree, then ``out +=
    tree.value[leaves]`` tree after tree (NumPy additions, row by row)."""
    shapes = Forest([tree.output(0) for tree in trees], [0] * len(trees))
    leaves = np.empty((X.shape[0], len(trees)), dtype=np.int32)
    reference.predict_leaf(X, shapes.walk, shapes.cat_bits, shapes.tree_offsets,
                           shapes.tree_depth, leaves)
    out = start.copy()
    for t, tree in enumerate(trees):
        out += tree.value[leaves[:, t]]
    return out


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("n_rows, n_trees, k, n_nodes", [
    (1, 1, 1, 3), (130, 5, 7, 9), (300, 12, 64, 41), (0, 3, 4, 5), (17, 0, 3, 1)])
def test_add_leaf_vectors_matches_reference(n_rows, n_trees, k, n_nodes, n_threads):
    leaves, tree_offsets, leaf_row, leaf_values, start = leaf_vector_inputs(
        np.random.default_rng(n_rows * 31 + k), n_rows, n_trees, k, n_nodes)
    expected, got = start.copy(), start.copy()
    reference.add_leaf_vectors(leaves, tree_offsets, leaf_row, leaf_values, expected)
    with get_backend("cpu", n_threads).threads():
        cpu.add_leaf_vectors(leaves, tree_offsets, leaf_row, leaf_values, got)
    np.testing.assert_array_equal(got, expected)
    if n_rows and n_trees:  # the twin is not a copy of the start: the leaves were added
        assert not np.array_equal(expected, start)


def test_reference_twin_hand_case():
    # two trees: tree 0 (3 nodes, leaves 1 and 2), tree 1 (a lone root leaf)
    tree_offsets = np.array([0, 3, 4])
    leaf_row = np.array([-1, 0, 1, 2], dtype=np.int32)
    leaf_values = np.array([[1.0, 10.0], [2.0, 20.0], [0.5, 0.25]])
    leaves = np.array([[1, 0], [2, 0]], dtype=np.int32)
    out = np.array([[100.0, 200.0], [300.0, 400.0]])
    reference.add_leaf_vectors(leaves, tree_offsets, leaf_row, leaf_values, out)
    np.testing.assert_array_equal(out, [[101.5, 210.25], [302.5, 420.25]])


@pytest.mark.parametrize("categorical", [False, True])
@pytest.mark.parametrize("k", [1, 3, 40])
def test_hand_made_trees_match_the_per_output_path(k, categorical):
    rng = np.random.default_rng(k + 100 * categorical)
    n_features = 6
    trees = [_vector_tree(rng, int(rng.integers(0, 12)), n_features, k, categorical)
             for _ in range(7)]
    X = _rows(rng, 333, n_features)
    start = rng.normal(size=(X.shape[0], k))
    expected = _per_output_margins(reference, X, trees, start)
    np.testing.assert_array_equal(_old_margins(X, trees, start), expected)
    for n_threads in (1, 2):
        got = start.copy()
        with get_backend("cpu", n_threads).threads():
            add_vector_margins(cpu, X, trees, got)
        np.testing.assert_array_equal(got, expected)
    # raw CSR rows (absent = missing): the same leaves, so the same margins
    sparse = _csr_of(X)
    got = start.copy()
    add_vector_margins(cpu, sparse, trees, got)
    np.testing.assert_array_equal(got, _per_output_margins(cpu, sparse, trees, start))
    np.testing.assert_array_equal(got, expected)


def _csr_of(X):
    """``X``'s non-NaN entries as a ``SparseMatrix`` (a NaN becomes an absent entry)."""
    present = ~np.isnan(X)
    rows, cols = np.nonzero(present)
    indptr = np.concatenate(([0], np.cumsum(present.sum(axis=1))))
    return SparseMatrix(indptr, cols, X[rows, cols], X.shape)


def test_leaves_are_the_per_output_forests_leaves():
    rng = np.random.default_rng(5)
    k = 4
    trees = [_vector_tree(rng, int(rng.integers(0, 9)), 5, k, True) for _ in range(6)]
    X = _rows(rng, 200, 5)
    per_output = Forest(trees, [0] * len(trees))
    expected = np.empty((X.shape[0], per_output.n_trees), dtype=np.int32)
    reference.predict_leaf(X, per_output.walk, per_output.cat_bits, per_output.tree_offsets,
                           per_output.tree_depth, expected)
    got = vector_leaves(cpu, X, VectorTrees(trees))
    np.testing.assert_array_equal(got, expected[:, ::k])
    for j in range(k):  # every output's copy of a tree has the same leaves
        np.testing.assert_array_equal(got, expected[:, j::k])


@pytest.fixture(scope="module")
def classes_200():
    """A 200-class vector-leaf model (3 rounds, depth 3) and rows to predict (some NaN)."""
    rng = np.random.default_rng(7)
    X = rng.random((1200, 6)).astype(np.float32)
    y = np.minimum((X[:, 0] * 150 + X[:, 1] * 50).astype(int), 199)
    y[:200] = np.arange(200)  # every class seen
    X[rng.random(X.shape) < 0.05] = np.nan  # missing values at fit: eval rows may have them
    model = gbm.train({"max_depth": 3, "learning_rate": 0.3, "n_jobs": 2,
                       "multi_strategy": "multi_output_tree", "objective": "multi:softprob",
                       "num_class": 200}, X, y, 3)
    Xt = rng.random((500, 6)).astype(np.float32)
    Xt[rng.random(Xt.shape) < 0.1] = np.nan
    return model, Xt


def _plain_margin(model, X, rounds=(0, 0), start=None):
    """``model``'s margins by the per-output path (``Booster.forest``: every tree once per
    output, the one-output ``predict`` kernel)."""
    begin, end = rounds if rounds != (0, 0) else (0, model.num_boosted_rounds)
    margin = (np.tile(model.base_margin, (X.shape[0], 1)) if start is None
              else np.ascontiguousarray(start))
    add_raw_margins(cpu, X, model.forest(begin, end), margin)
    return margin


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("rounds", [(0, 0), (1, 3), (0, 1)])
def test_trained_model_predicts_the_per_output_bits(classes_200, rounds, n_jobs):
    model, X = classes_200
    assert model.n_groups == 200 and len(model.trees) == 3
    margin = model.predict(X, output_margin=True, iteration_range=rounds, n_jobs=n_jobs)
    expected = _plain_margin(model, X, rounds)
    assert np.array_equal(margin, expected)
    lo, hi = rounds if rounds != (0, 0) else (0, 3)
    assert np.array_equal(margin, _old_margins(
        X, model.trees[lo:hi], np.tile(model.base_margin, (X.shape[0], 1))))
    value = model.predict(X, iteration_range=rounds, n_jobs=n_jobs)
    assert np.array_equal(value, get_objective(model.params).transform(expected, np))
    np.testing.assert_allclose(value.sum(axis=1), 1.0)


def test_trained_model_leaves_base_margin_and_sparse_rows(classes_200):
    model, X = classes_200
    per_output = model.forest()
    expected = np.empty((X.shape[0], per_output.n_trees), dtype=np.int32)
    cpu.predict_leaf(X, per_output.walk, per_output.cat_bits, per_output.tree_offsets,
                     per_output.tree_depth, expected)
    leaves = model.predict(X, pred_leaf=True)
    assert leaves.shape == (X.shape[0], 3)
    assert np.array_equal(leaves, expected[:, ::200])
    assert np.array_equal(model.predict(X, pred_leaf=True, iteration_range=(1, 3)),
                          expected[:, 200::200])
    strict = model.predict(X, pred_leaf=True, strict_shape=True)
    assert strict.shape == (X.shape[0], 3, 1, 1)
    assert np.array_equal(strict.reshape(X.shape[0], 3), leaves)
    # each row's own start
    start = np.random.default_rng(3).normal(size=(X.shape[0], 200))
    got = model.predict(X, output_margin=True, base_margin=start)
    assert np.array_equal(got, _plain_margin(model, X, start=start))
    # raw CSR rows: absent entries are missing, as NaN in the dense rows
    sparse = _csr_of(X)
    assert np.array_equal(model.predict(sparse), model.predict(X))
    import scipy.sparse as sp

    present = ~np.isnan(X)
    csr = sp.csr_matrix((X[present], np.nonzero(present)), shape=X.shape)
    assert np.array_equal(model.predict(csr, output_margin=True), _plain_margin(model, X))


@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_binned_rows_match_the_per_output_path(classes_200, layout):
    # the eval sets' path: margins on the training edges' bins, every row or a subset
    from gbm.bins.binning import BinMapper
    from gbm.model.vector_predict import add_binned_vector_margins

    model, X = classes_200
    backend = get_backend("cpu", 2)
    bins = BinMapper.from_cuts(model.cuts).bin_matrix(X, layout, cpu)
    start = np.random.default_rng(4).normal(size=(X.shape[0], 200))
    for rows in (np.arange(X.shape[0]), np.arange(3, X.shape[0], 7)):
        per_output = model.forest(1, 3)
        expected = start.copy()
        with backend.threads():
            bins.predict_binned(cpu, rows, per_output.walk_binned, per_output.cat_bits,
                                per_output.value, per_output.tree_offsets,
                                per_output.tree_group, per_output.tree_depth, expected)
            got = start.copy()
            add_binned_vector_margins(backend, bins, rows, model.trees[1:3], got)
        assert np.array_equal(got, expected)
        assert not np.array_equal(got[rows], start[rows])
    # on the training edges the bins reach the raw values' leaves: the same margins
    assert np.array_equal(_binned_all(model, bins, backend, X), _plain_margin(model, X))


def _binned_all(model, bins, backend, X):
    from gbm.model.vector_predict import add_binned_vector_margins

    out = np.tile(model.base_margin, (X.shape[0], 1))
    add_binned_vector_margins(backend, bins, np.arange(X.shape[0]), model.trees, out)
    return out
