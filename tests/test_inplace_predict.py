"""``Booster.inplace_predict``, XGBoost's: the data itself (NumPy, lists, pandas with
category columns, SciPy sparse, GPU arrays), no DMatrix, with a ``missing`` value.

The oracle is xgboost's own ``inplace_predict`` on the model gbm imported from it, and
gbm's ``predict`` on the same rows with the missing entries written as NaN."""
import numpy as np
import pytest

import gbm
from tests.support import fake_gpu
from tests.support.fake_gpu import FakeDeviceArray, device

xgb = pytest.importorskip("xgboost")


def _numeric(objective="reg:squarederror", rounds=8):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 4)).astype(np.float32)
    X[:, 3] = rng.integers(0, 4, 400)  # small integers: a missing value can hit them
    X[rng.random(X.shape) < 0.05] = np.nan
    clean = np.nan_to_num(X)
    signal = clean[:, 0] + clean[:, 1] * clean[:, 2] + clean[:, 3]
    params = {"objective": objective, "max_depth": 4, "nthread": 1}
    if objective == "multi:softprob":
        params["num_class"] = 3
        y = np.digitize(signal, [0.5, 2.5]).astype(float)
    else:
        y = signal
    theirs = xgb.train(params, xgb.DMatrix(X, y), rounds)
    return theirs, gbm.Booster.from_xgboost(theirs), X


def _categorical():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(4)
    n = 400
    codes = rng.integers(0, 5, n)
    X = pd.DataFrame({"c": pd.Categorical.from_codes(codes, [f"k{i}" for i in range(5)]),
                      "x": rng.normal(size=n), "z": rng.integers(0, 4, n).astype(float)})
    y = rng.normal(size=5)[codes] + X["x"] + X["z"]
    theirs = xgb.train({"max_depth": 4, "max_cat_to_onehot": 1, "nthread": 1},
                       xgb.DMatrix(X, y, enable_categorical=True), 8)
    return theirs, gbm.Booster.from_xgboost(theirs), X


@pytest.mark.parametrize("objective", ["reg:squarederror", "binary:logistic", "multi:softprob"])
@pytest.mark.parametrize("form", ["numpy", "float64", "list", "csr", "frame"])
def test_matches_xgboost(objective, form):
    theirs, ours, X = _numeric("reg:squarederror" if objective == "binary:logistic" else objective)
    if objective == "binary:logistic":  # labels in [0, 1]
        theirs = xgb.train({"objective": objective, "max_depth": 3, "nthread": 1},
                           xgb.DMatrix(X, (np.nan_to_num(X[:, 0]) > 0).astype(float)), 6)
        ours = gbm.Booster.from_xgboost(theirs)
    if form == "float64":
        data = X.astype(np.float64)
    elif form == "list":
        data = X.tolist()
    elif form == "csr":
        sparse = pytest.importorskip("scipy.sparse")
        data = sparse.csr_matrix(np.nan_to_num(X, nan=0.0))  # zeros absent: missing
    elif form == "frame":
        pd = pytest.importorskip("pandas")
        data = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    else:
        data = X
    for kwargs in ({}, {"predict_type": "margin"}, {"missing": 0.0}, {"missing": 2.0},
                   {"iteration_range": (2, 6)}, {"strict_shape": True},
                   {"predict_type": "margin", "strict_shape": True}):
        expected = theirs.inplace_predict(data, **kwargs)
        got = ours.inplace_predict(data, **kwargs)
        assert got.shape == expected.shape, kwargs
        np.testing.assert_allclose(got, expected, rtol=0, atol=2e-6, err_msg=str(kwargs))


def test_base_margin_matches_xgboost():
    theirs, ours, X = _numeric("multi:softprob")
    margin = np.random.default_rng(0).normal(size=(len(X), 3))
    for predict_type in ("value", "margin"):
        np.testing.assert_allclose(
            ours.inplace_predict(X, base_margin=margin, predict_type=predict_type),
            theirs.inplace_predict(X, base_margin=margin, predict_type=predict_type),
            rtol=0, atol=2e-6)


def test_category_columns_match_xgboost():
    """A DataFrame's category columns, missing values among the numbers; XGBoost also
    reads a category whose code equals ``missing`` as missing, and so does gbm."""
    theirs, ours, X = _categorical()
    for kwargs in ({}, {"missing": 0.0}, {"missing": 1.0}, {"missing": 3.0},
                   {"predict_type": "margin", "strict_shape": True}):
        expected = theirs.inplace_predict(X, **kwargs)
        got = ours.inplace_predict(X, **kwargs)
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=0, atol=2e-6, err_msg=str(kwargs))
    # missing=1.0: the rows of category k1 and the rows with z == 1 read as missing
    marked = X.copy()
    marked["z"] = marked["z"].where(marked["z"] != 1.0)
    marked["c"] = marked["c"].where(marked["c"] != "k1")
    np.testing.assert_array_equal(ours.inplace_predict(X, missing=1.0), ours.predict(marked))
    assert not np.array_equal(ours.predict(marked), ours.predict(X))


def test_same_as_predict_and_the_callers_data_unchanged():
    _, ours, X = _numeric()
    original = X.copy()
    np.testing.assert_array_equal(ours.inplace_predict(X), ours.predict(X))
    marked = np.where(X == 2.0, np.nan, X).astype(np.float32)
    assert np.isnan(marked).sum() > np.isnan(X).sum()
    np.testing.assert_array_equal(ours.inplace_predict(X, missing=2.0), ours.predict(marked))
    np.testing.assert_array_equal(X, original)  # compared bit for bit, NaN included
    series = __import__("pandas").Series(X[:, 0], name="a")
    one_column = gbm.train({"max_depth": 2}, X[:, :1], np.nan_to_num(X[:, 1]), 2)
    np.testing.assert_array_equal(one_column.inplace_predict(series),
                                  one_column.predict(X[:, :1]))


def test_a_1d_array_is_one_column_as_in_xgboost():
    """XGBoost's inplace_predict reads a 1-D array as (n, 1): one value per row."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=200).astype(np.float32)
    theirs = xgb.train({"max_depth": 3, "nthread": 1}, xgb.DMatrix(x[:, None], x ** 2), 4)
    ours = gbm.Booster.from_xgboost(theirs)
    for data in (x[:20], x[:20].tolist()):
        np.testing.assert_allclose(ours.inplace_predict(data), theirs.inplace_predict(x[:20]),
                                   rtol=1e-6)
    np.testing.assert_array_equal(ours.inplace_predict(x[:20]), ours.predict(x[:20, None]))


def test_validate_features():
    pd = pytest.importorskip("pandas")
    _, _, X = _numeric()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    booster = gbm.train({"max_depth": 3}, frame, np.nan_to_num(X[:, 0]), 3)
    renamed = frame.rename(columns={"a": "A"})
    with pytest.raises(ValueError, match="feature names"):
        booster.inplace_predict(renamed)
    np.testing.assert_array_equal(booster.inplace_predict(renamed, validate_features=False),
                                  booster.predict(frame))
    with pytest.raises(ValueError, match="data has 3 features"):
        booster.inplace_predict(frame.iloc[:, :3], validate_features=False)


def test_bad_arguments():
    _, ours, X = _numeric()
    with pytest.raises(TypeError, match="not a DMatrix"):
        ours.inplace_predict(gbm.DMatrix(X))
    with pytest.raises(TypeError, match="not a DMatrix"):
        ours.inplace_predict(xgb.DMatrix(X))
    with pytest.raises(ValueError, match="predict_type must be 'value' or 'margin'"):
        ours.inplace_predict(X, predict_type="contribs")
    with pytest.raises(ValueError, match="data has 3 features"):
        ours.inplace_predict(X[:, :3])
    with pytest.raises(TypeError, match="missing must be a number"):
        ours.inplace_predict(X, missing="NA")
    with pytest.raises(TypeError, match="validate_features must be True or False"):
        ours.inplace_predict(X, validate_features="no")
    with pytest.raises(ValueError, match="iteration_range"):
        ours.inplace_predict(X, iteration_range=(0, 99))
    with pytest.raises(TypeError, match="strict_shape must be True or False"):
        ours.inplace_predict(X, strict_shape="yes")
    with pytest.raises(ValueError, match="2-dimensional"):
        ours.inplace_predict(X[None])
    with pytest.raises(ValueError, match="data has 1 features"):  # a 1-D array: a column
        ours.inplace_predict(X[0])
    with pytest.raises(ValueError, match="infinity"):
        ours.inplace_predict(np.where(X == 2.0, np.inf, X))
    # an infinite missing value marks the infinities as missing instead
    np.testing.assert_array_equal(
        ours.inplace_predict(np.where(X == 2.0, np.inf, X), missing=np.inf),
        ours.inplace_predict(X, missing=2.0))


def test_gpu_input_is_predicted_on_the_device(monkeypatch):
    """CuPy (here the fake of tests/support/fake_gpu.py) in, CuPy out, the missing
    values replaced on the device; the values are the host's."""
    kernels = fake_gpu.install(monkeypatch)
    _, ours, X = _numeric("multi:softprob")
    for kwargs in ({}, {"missing": 2.0, "predict_type": "margin"}, {"strict_shape": True}):
        got = ours.inplace_predict(device(X), **kwargs)
        assert isinstance(got, FakeDeviceArray)
        np.testing.assert_array_equal(got.get(), ours.inplace_predict(X, **kwargs))
    assert "predict" in kernels.calls
