"""Vector-leaf trees (``multi_strategy="multi_output_tree"``) on sparse and bundled bin
layouts: the bins expanded to dense ones (``gbm.tree.vector_leaf.dense_data``,
``CsrBins.to_dense``, ``BundledBins.to_dense``), so the model file is the dense fit's
(on CUDA too: ``tests/cuda/test_cuda_vector_leaf.py``)."""
import numpy as np
import pytest

import gbm
from gbm.collective import LOCAL
from gbm.bins.binning import BinMapper
from gbm.data.inputs import check_X
from gbm.bins.layout import binned_rows
from gbm.kernels import cpu

sp = pytest.importorskip("scipy.sparse")

VL = {"multi_strategy": "multi_output_tree"}


def _sparse(n=800, n_features=12, seed=0):
    """CSR rows with exclusive groups of features (so that bundles form) and their
    targets (3 outputs) and classes (4)."""
    rng = np.random.default_rng(seed)
    X = np.full((n, n_features), np.nan)
    group = rng.integers(0, 4, n)  # features 3g .. 3g + 2 stored in group g's rows only
    for g in range(4):
        rows = np.flatnonzero(group == g)
        X[np.ix_(rows, [3 * g, 3 * g + 1, 3 * g + 2])] = rng.normal(size=(rows.size, 3))
    Z = np.nan_to_num(X)
    Y = np.stack([Z[:, 0] + Z[:, 4], Z[:, 7] ** 2 - Z[:, 9], (group == 2) * 1.0 + Z[:, 1]], 1)
    classes = (group + (Z[:, 3] > 0)) % 4
    stored = ~np.isnan(X)
    csr = sp.csr_matrix((X[stored], np.nonzero(stored)), shape=X.shape)
    return csr, Y, classes.astype(np.float64)


CASES = {
    "targets": dict(VL, max_depth=4),
    "softprob": dict(VL, max_depth=3, objective="multi:softprob", num_class=4),
    "lossguide": dict(VL, grow_policy="lossguide", max_leaves=8, subsample=0.8),
    "projected": dict(VL, max_depth=3, objective="multi:softprob", num_class=4,
                      gradient_projection=True, projection_dim=2),
}


@pytest.mark.parametrize("layout", ["sparse", "bundled"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_sparse_and_bundled_layouts_give_the_dense_model(layout, name):
    X, Y, classes = _sparse()
    y = classes if "num_class" in CASES[name] else Y
    dense = gbm.train(dict(CASES[name], bin_layout="dense"), X, y, 4)
    other = gbm.train(dict(CASES[name], bin_layout=layout), X, y, 4)
    assert other.to_json() == dense.to_json()
    assert sum(t.n_nodes for t in dense.trees) > 4  # the trees did split
    np.testing.assert_array_equal(other.predict(X), dense.predict(X))


def test_categorical_features_on_a_sparse_layout():
    X, Y, _ = _sparse()
    X = X.toarray()
    stored = ~np.isnan(X[:, 5])  # feature 5: categories 1 .. 6 where stored
    X[stored, 5] = np.random.default_rng(3).integers(1, 7, stored.sum())
    Y = Y.copy()
    Y[stored, 0] += 3.0 * np.isin(X[stored, 5], (1, 4, 6))  # no order: a set splits
    Xs = sp.csr_matrix(np.nan_to_num(X, nan=0.0))  # zeros: absent entries
    p = dict(VL, max_depth=4, max_cat_to_onehot=2)
    dense = gbm.train(dict(p, bin_layout="dense"), Xs, Y, 3, categorical_features=[5])
    sparse = gbm.train(dict(p, bin_layout="sparse"), Xs, Y, 3, categorical_features=[5])
    assert sparse.to_json() == dense.to_json()
    assert any(t.has_categorical for t in dense.trees)


@pytest.mark.parametrize("layout", ["sparse", "bundled"])
def test_to_dense_gives_the_dense_layouts_bins(layout):
    X = check_X(_sparse(300)[0])
    mapper = BinMapper().fit(X)
    other = binned_rows(mapper, X, layout, cpu, np, LOCAL)
    dense = binned_rows(mapper, X, "dense", cpu, np, LOCAL)
    assert other.layout == layout and dense.layout == "dense"
    expanded = other.to_dense()
    np.testing.assert_array_equal(expanded.bins, dense.bins)
    np.testing.assert_array_equal(expanded.bins_by_feature, dense.bins_by_feature)
    np.testing.assert_array_equal(expanded.feature_offsets, dense.feature_offsets)
    assert expanded.bins.dtype == dense.bins.dtype and expanded.bins.flags.c_contiguous
