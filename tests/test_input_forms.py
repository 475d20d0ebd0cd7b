"""Input forms that failed (issue 44): an Arrow table's feature names, sparse pandas
columns filled with ``pd.NA``, query ids of 2**63 or more, and predictions for no rows."""
import numpy as np
import pytest

import gbm

pd = pytest.importorskip("pandas")


def _data(seed=0, n=80):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[rng.random(X.shape) < 0.4] = np.nan
    return X, np.nan_to_num(X[:, 0]) + 0.1 * rng.normal(size=n)


def test_arrow_table_feature_names():
    """An Arrow table's ``columns`` are its data: the names are ``column_names`` (before:
    the printed columns, and the model refused to predict on the same table)."""
    pa = pytest.importorskip("pyarrow")
    X, y = _data()
    table = pa.table({"alpha": X[:, 0], "beta": X[:, 1], "gamma": X[:, 2]})
    d = gbm.DMatrix(table, y)
    assert d.feature_names == ["alpha", "beta", "gamma"]
    model = gbm.train({"max_depth": 2}, d, 2)
    assert model.feature_names == ["alpha", "beta", "gamma"]
    np.testing.assert_array_equal(model.predict(table), model.predict(X.astype(np.float32)))


def test_sparse_float64_columns_filled_with_na_train_as_the_dense_frame():
    """Sparse columns made from nullable ``Float64`` ones (fill value ``pd.NA``; before:
    TypeError "float() argument must be ... not 'NAType'"): the dense frame's model."""
    X, y = _data(1)
    dense = pd.DataFrame(X, columns=list("abc")).astype("Float64")
    sparse = pd.DataFrame({c: pd.arrays.SparseArray(dense[c].array) for c in "abc"})
    assert all(dtype.fill_value is pd.NA for dtype in sparse.dtypes)
    params = {"max_depth": 3}
    expected = gbm.train(params, gbm.DMatrix(dense, y), 3).to_json()
    assert gbm.train(params, gbm.DMatrix(sparse, y), 3).to_json() == expected
    model = gbm.train(params, sparse, y, 3)
    np.testing.assert_array_equal(model.predict(sparse), model.predict(dense))


@pytest.mark.parametrize("as_list", [False, True])
def test_query_ids_beyond_int64(as_list):
    """uint64 query ids of 2**63 and more (XGBoost keeps ids as uint64; before: a bare
    OverflowError from a list, a wrong "not sorted" error from an array): the model of
    the same groups under small ids."""
    X, _ = _data(2, n=30)
    y = np.arange(30) % 3
    sizes = [10, 8, 12]
    big = np.repeat(np.array([2**63 - 1, 2**63, 2**64 - 1], np.uint64), sizes)
    small = np.repeat([0, 1, 2], sizes)
    params = {"objective": "rank:ndcg", "max_depth": 2}
    expected = gbm.train(params, gbm.DMatrix(X, y, qid=small), 2).to_json()
    qid = [int(v) for v in big] if as_list else big
    assert gbm.train(params, gbm.DMatrix(X, y, qid=qid), 2).to_json() == expected
    assert gbm.train(params, X, y, 2, qid=qid).to_json() == expected


def test_query_ids_no_64_bit_type_holds_are_named():
    X, _ = _data(3, n=20)
    y = np.arange(20) % 2
    for qid in ([-1] * 10 + [2**63] * 10, [2**64] * 20):
        with pytest.raises(ValueError, match="qid holds values beyond 64-bit integers"):
            gbm.train({"objective": "rank:ndcg"}, X, y, 1, qid=qid)
    with pytest.raises(ValueError, match="qid must hold integers"):
        gbm.train({"objective": "rank:ndcg"}, X, y, 1, qid=[0.5] * 20)


@pytest.mark.parametrize("params,labels", [
    ({}, "regression"),
    ({"objective": "multi:softprob", "num_class": 3}, "classes"),
    ({"multi_strategy": "multi_output_tree"}, "targets"),
    ({"booster": "dart", "rate_drop": 0.5}, "regression")])
def test_predict_on_no_rows(params, labels):
    """No rows to predict: an empty array of the prediction's shape for 0 rows, every
    kind (before: "X has 0 sample(s) ... a minimum of 1 is required"; xgboost returns
    an empty array)."""
    X, y = _data(4)
    y = {"regression": y, "classes": np.arange(80) % 3,
         "targets": np.column_stack([y, -y])}[labels]
    model = gbm.train(dict(params, max_depth=2), X, y, 3)
    kinds = [{}, {"output_margin": True}, {"pred_leaf": True}, {"pred_contribs": True},
             {"pred_interactions": True}, {"strict_shape": True},
             {"pred_contribs": True, "approx_contribs": True}]
    for kw in kinds:
        some = model.predict(X[:2], **kw)
        none = model.predict(X[:0], **kw)
        assert none.shape == (0,) + some.shape[1:], kw
        assert model.predict(gbm.DMatrix(X[:0]), **kw).shape == none.shape, kw
    assert model.inplace_predict(X[:0]).shape == model.predict(X[:0]).shape
    assert model.inplace_predict(pd.DataFrame(X[:0])).shape == model.predict(X[:0]).shape
