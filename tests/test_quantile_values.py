"""A ``QuantileDMatrix``'s values (issue 43): ``get_data``, ``get_quantile_cut`` in
XGBoost's layout, ``num_nonmissing``, predicting on its bins, and ``ref=`` a DMatrix.

Oracles: the raw rows (a model trained on the matrix's edges predicts the same on its
bins), gbm's own walk of trees on bins (``gbm.tree.rebin``, what continued training
uses), and real xgboost for the layout of the cuts and the entry counts."""
import numpy as np
import pytest

import gbm
from gbm.bins.quantile_values import bin_values
from gbm.runtime.backend import get_backend
from gbm.tree.rebin import binned_margins, rebinned_forest

xgb = pytest.importorskip("xgboost")


def _data(n=2000, d=5, seed=0, missing=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[:, 1] = np.round(X[:, 1] * 3)  # few distinct values: a bin each
    X[rng.random((n, d)) < missing] = np.nan
    y = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) + rng.normal(scale=0.3, size=n)
    return X, y


def _dense(csr):
    """A CSR matrix's stored entries in a dense float32 matrix, NaN where absent."""
    out = np.full(csr.shape, np.nan, np.float32)
    rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
    out[rows, csr.indices] = csr.data
    return out


def test_get_data_gives_each_bin_a_value_inside_it():
    X, y = _data()
    q = gbm.QuantileDMatrix(X, y, max_bin=32)
    got = q.get_data()
    mapper = q.data.mapper
    assert got.nnz == int((~np.isnan(X)).sum()) == q.num_nonmissing()
    dense = _dense(got)
    # every value lies in the bin of the row's own value
    np.testing.assert_array_equal(mapper.transform(dense.astype(np.float32)),
                                  q.data.matrix.bins)
    # a feature with a bin per distinct value gets its values back
    np.testing.assert_array_equal(dense[:, 1], X[:, 1].astype(np.float32))


def test_bin_values_are_the_least_sampled_value_of_each_bin():
    X = np.array([[0.0], [1.0], [1.0], [5.0], [7.0], [7.5]], np.float32)
    q = gbm.QuantileDMatrix(X, max_bin=3)
    cuts = q.data.mapper.cuts[0]
    bins = q.data.mapper.transform(X)[:, 0]
    want = [X[bins == b, 0].min() for b in range(len(cuts) + 1)]
    np.testing.assert_array_equal(q.data.values.values, want)
    again = bin_values(q.data.mapper, X, None)  # the function itself, on the same sample
    np.testing.assert_array_equal(again.values, want)


def test_quantile_cut_layout_as_xgboost():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.integers(0, 6, 500), rng.integers(-3, 3, 500),
                         np.full(500, 7.0)]).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    ours = gbm.QuantileDMatrix(X).get_quantile_cut()
    theirs = xgb.QuantileDMatrix(X).get_quantile_cut()
    assert ours[0].dtype == theirs[0].dtype == np.uint64
    assert ours[1].dtype == theirs[1].dtype == np.float32
    # a bin per distinct value in both: the same number of bounds per feature
    np.testing.assert_array_equal(ours[0], theirs[0])
    # the bounds hold each value's bin: bounds[b] <= x < bounds[b + 1]
    q = gbm.QuantileDMatrix(X)
    indptr, values = ours
    for f in range(X.shape[1]):
        bounds = values[indptr[f]:indptr[f + 1]]
        bins = q.data.matrix.bins[:, f]
        ok = ~np.isnan(X[:, f])
        assert (bounds[bins[ok]] <= X[ok, f]).all() and (X[ok, f] < bounds[bins[ok] + 1]).all()
        assert (np.diff(bounds) > 0).all()


def test_quantile_cut_of_categorical_features_as_xgboost():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"c": pd.Categorical(rng.choice(list("abcdefg"), 300)),
                          "x": rng.normal(size=300)})
    ours = gbm.QuantileDMatrix(frame).get_quantile_cut()
    theirs = xgb.QuantileDMatrix(frame, enable_categorical=True).get_quantile_cut()
    np.testing.assert_array_equal(ours[1][:7], np.arange(7))
    np.testing.assert_array_equal(ours[1][:7], theirs[1][:7])
    assert ours[0][1] == theirs[0][1] == 7


def test_num_nonmissing_as_xgboost():
    sp = pytest.importorskip("scipy.sparse")
    X, _ = _data(300, 4, seed=4, missing=0.3)
    csr = sp.csr_matrix(np.nan_to_num(X + 10, nan=0.0))
    for data in (X, csr):
        assert gbm.QuantileDMatrix(data).num_nonmissing() == \
            xgb.QuantileDMatrix(data).num_nonmissing()


@pytest.mark.parametrize("kind", ["value", "margin", "leaf", "contribs"])
def test_predict_on_the_bins_is_predict_on_the_rows(kind):
    X, y = _data(seed=5)
    q = gbm.QuantileDMatrix(X, y, max_bin=16)
    booster = gbm.train({"max_depth": 4, "max_bin": 16}, q, 6)
    args = {"value": {}, "margin": {"output_margin": True}, "leaf": {"pred_leaf": True},
            "contribs": {"pred_contribs": True}}[kind]
    np.testing.assert_array_equal(booster.predict(q, **args), booster.predict(X, **args))
    # a model trained on the raw rows with the same max_bin splits at the same edges
    raw = gbm.train({"max_depth": 4, "max_bin": 16}, gbm.DMatrix(X, y), 6)
    np.testing.assert_array_equal(raw.predict(q, **args), raw.predict(X, **args))


def test_predict_on_the_bins_is_the_walk_on_the_bins():
    """gbm.tree.rebin's walk of the trees on the bins (continued training's) is an
    independent oracle: no values are made."""
    X, y = _data(seed=6)
    q = gbm.QuantileDMatrix(X, y)
    booster = gbm.train({"max_depth": 5}, q, 8)
    backend = get_backend("cpu", 1)
    forest = rebinned_forest(booster.trees, booster.tree_group, booster.weight_drop,
                             q.data.mapper.cuts)
    walked = binned_margins(backend, q.data.matrix, forest, booster.base_margin, None, 1)
    np.testing.assert_array_equal(booster.predict(q, output_margin=True), walked[:, 0])


def test_predict_with_other_edges_uses_each_bins_value():
    """A model trained on other data: each row is predicted from its bin's value (as
    XGBoost predicts from a bin's bound), not refused."""
    X, y = _data(seed=7)
    other, y2 = _data(seed=8)
    booster = gbm.train({"max_depth": 4}, other, y2, 5)
    q = gbm.QuantileDMatrix(X, y, max_bin=8)
    values = _dense(q.get_data())
    np.testing.assert_array_equal(booster.predict(q), booster.predict(values))
    assert not np.array_equal(booster.predict(q), booster.predict(X))  # approximate


def test_predict_on_pages_and_on_categories():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(9)
    frame = pd.DataFrame({"c": pd.Categorical(rng.choice(list("pqrst"), 600)),
                          "x": rng.normal(size=600)})
    y = (frame["c"] == "r") * 2.0 + frame["x"] + rng.normal(scale=0.1, size=600)
    booster = gbm.train({"max_depth": 3}, gbm.DMatrix(frame, y), 5)
    # the matrix's categories in another order: matched by category, not by code
    shuffled = frame.assign(c=frame["c"].cat.reorder_categories(list("tsrqp")))
    q = gbm.QuantileDMatrix(shuffled, y)
    np.testing.assert_array_equal(booster.predict(q), booster.predict(frame))

    class Two(gbm.DataIter):
        def __init__(self):
            super().__init__(min_cache_page_bytes=200)
            self.i = 0

        def next(self, input_data):
            if self.i == 2:
                return False
            input_data(data=frame.iloc[self.i * 300:(self.i + 1) * 300],
                       label=y.iloc[self.i * 300:(self.i + 1) * 300])
            self.i += 1
            return True

        def reset(self):
            self.i = 0

    with gbm.ExtMemQuantileDMatrix(Two()) as paged:
        np.testing.assert_array_equal(booster.predict(paged), booster.predict(frame))


def test_ref_dmatrix_gives_the_fit_edges():
    X, y = _data(seed=10)
    Xv, yv = _data(400, seed=11)
    dtrain = gbm.DMatrix(X, y)
    p = {"max_depth": 3}
    by_arrays, by_ref = {}, {}
    gbm.train(p, dtrain, 4, evals=[(gbm.DMatrix(Xv, yv), "v")], evals_result=by_arrays)
    valid = gbm.QuantileDMatrix(Xv, yv, ref=dtrain)
    gbm.train(p, dtrain, 4, evals=[(valid, "v")], evals_result=by_ref)
    assert by_ref == by_arrays
    own = gbm.QuantileDMatrix(Xv, yv)  # its own edges: refused as an eval set
    with pytest.raises(ValueError, match="should be used as a reference"):
        gbm.train(p, dtrain, 1, evals=[(own, "v")])
    with pytest.raises(ValueError, match=r"data has 4 features but ref has 5 features\."):
        gbm.QuantileDMatrix(Xv[:, :4], ref=dtrain)
    with pytest.raises(TypeError, match="ref must be the training data"):
        gbm.QuantileDMatrix(Xv, ref=Xv)


def test_ref_with_categories_takes_numbers_as_its_codes():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"c": pd.Categorical(["cdef", "abc", "def"])})
    y = np.array([0.0, 1.0, 2.0])
    for make in (gbm.DMatrix, gbm.QuantileDMatrix):
        train = make(frame, y)
        booster = gbm.train({"min_child_weight": 0}, train, 4)
        reenc = pd.DataFrame({"c": pd.Categorical(["def", "abc"])})
        codes = gbm.QuantileDMatrix(np.array([[2.0], [0.0]]), ref=train, feature_names=["c"])
        np.testing.assert_array_equal(booster.predict(codes),
                                      booster.predict(gbm.QuantileDMatrix(reenc, ref=train)))
        with pytest.raises(ValueError, match=r"data has 2 features but ref has 1 features\."):
            gbm.QuantileDMatrix(np.zeros((2, 2)), ref=train)


def test_group_sizes_and_weights_not_per_row():
    X, y = _data(90, 3, seed=12)
    rel = np.clip(np.round(y), 0, 3)
    w = np.array([1.0, 2.0, 0.5])
    by_group = gbm.QuantileDMatrix(X, rel, group=[30, 30, 30], weight=w)
    by_qid = gbm.QuantileDMatrix(X, rel, qid=np.repeat([0, 1, 2], 30), weight=w)
    np.testing.assert_array_equal(by_group.get_group(), [30, 30, 30])
    p = {"objective": "rank:ndcg", "max_depth": 2}
    assert gbm.train(p, by_group, 2).to_json() == gbm.train(p, by_qid, 2).to_json()
    with pytest.raises(ValueError, match="group sizes sum to 60 but the data has 90 rows"):
        gbm.QuantileDMatrix(X, rel, group=[30, 30])
    # weights that are not one per row (nor per group): kept as given, as a DMatrix keeps
    # them, and refused where a fit reads them
    held = gbm.QuantileDMatrix(X, weight=w)
    np.testing.assert_array_equal(held.get_weight(), w)
    with pytest.raises(ValueError, match="sample weight"):
        gbm.train({}, gbm.QuantileDMatrix(X, y, weight=w), 1)


def test_dmatrix_quantile_cut_after_a_fit():
    X, y = _data(500, 4, seed=13)
    d = gbm.DMatrix(X, y)
    with pytest.raises(ValueError, match="quantile cut hasn't been generated yet"):
        d.get_quantile_cut()
    gbm.train({"max_bin": 16}, d, 1)
    indptr, values = d.get_quantile_cut()
    q_indptr, q_values = gbm.QuantileDMatrix(X, y, max_bin=16).get_quantile_cut()
    np.testing.assert_array_equal(indptr, q_indptr)  # the same edges as the matrix's
    for f in range(4):
        ours, theirs = values[indptr[f]:indptr[f + 1]], q_values[indptr[f]:indptr[f + 1]]
        np.testing.assert_array_equal(ours[1:-1], theirs[1:-1])
        ok = X[~np.isnan(X[:, f]), f].astype(np.float32)
        assert ours[0] == ok.min() and ours[-1] > ok.max()


def test_ref_is_a_weak_reference():
    X, y = _data(100, 3, seed=14)
    train = gbm.QuantileDMatrix(X, y)
    valid = gbm.QuantileDMatrix(X, y, ref=train)
    assert train.ref is None and valid.ref() is train
    del train
    import gc

    gc.collect()
    assert valid.ref() is None  # the eval set does not keep the training bins alive
