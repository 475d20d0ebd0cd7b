"""Bad input gets a clear error that names the argument and the problem."""
import numpy as np
import pytest

import gbm

pd = pytest.importorskip("pandas")

X = np.random.default_rng(0).normal(size=(50, 3))
y = (X[:, 0] > 0).astype(float)


@pytest.mark.parametrize("bad_y, message", [
    (np.where(np.arange(50) == 17, np.nan, y), "y contains nan at row 17"),
    (np.where(np.arange(50) == 3, np.inf, y), "y contains inf at row 3"),
    (y[:49], "y has 49 rows but X has 50"),
])
def test_bad_labels(bad_y, message):
    with pytest.raises(ValueError, match=message):
        gbm.GBMRegressor(n_estimators=2).fit(X, bad_y)


@pytest.mark.parametrize("w, message", [
    (np.ones(49), "sample_weight has 49 entries but X has 50 rows"),
    (np.where(np.arange(50) == 4, -1.0, 1.0), r"sample_weight contains -1.0 at row 4"),
    (np.where(np.arange(50) == 9, np.nan, 1.0), r"sample_weight contains nan at row 9"),
    (np.zeros(50), "zero for every row"),
])
def test_bad_weights(w, message):
    with pytest.raises(ValueError, match=message):
        gbm.GBMRegressor(n_estimators=2).fit(X, y, sample_weight=w)


@pytest.mark.parametrize("bad_X, message", [
    (np.empty((0, 3)), r"0 sample\(s\)"),
    (np.empty((5, 0)), r"0 feature\(s\)"),
    (np.where(np.arange(150).reshape(50, 3) == 31, np.inf, X), "infinity at row 10, column 1"),
])
def test_empty_or_infinite_X(bad_X, message):
    with pytest.raises(ValueError, match=message):
        gbm.train({}, bad_X, np.zeros(bad_X.shape[0]), 2)


def test_string_columns_are_named():
    df = pd.DataFrame({"a": X[:, 0], "city": ["x", "y"] * 25})
    with pytest.raises(ValueError, match="X column 'city' .* has dtype"):
        gbm.GBMRegressor(n_estimators=2).fit(df, y)
    obj = np.array([[1.0, "a"], [2.0, "b"]], dtype=object)
    with pytest.raises(ValueError, match="X column 1 has non-numeric values"):
        gbm.GBMRegressor(n_estimators=2).fit(obj, [0.0, 1.0])
    with pytest.raises(ValueError, match="strings"):
        gbm.GBMRegressor(n_estimators=2).fit(np.array([["1", "2"]]), [0.0])


def test_predict_with_other_columns_is_rejected():
    model = gbm.GBMRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but GBMRegressor is expecting 3"):
        model.predict(X[:, :2])
    booster = model.get_booster()
    with pytest.raises(ValueError, match="X has 2 features, but the model was trained with 3"):
        booster.predict(X[:, :2])
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    named = gbm.GBMRegressor(n_estimators=2).fit(df, y)
    with pytest.raises(ValueError, match="feature names should match"):
        named.predict(df.rename(columns={"c": "z"}))
    with pytest.raises(ValueError, match=r"X has feature names \['a', 'b', 'z'\]"):
        named.get_booster().predict(df.rename(columns={"c": "z"}))


def test_classifier_with_one_class():
    with pytest.raises(ValueError, match="only 1 class"):
        gbm.GBMClassifier(n_estimators=2).fit(X, np.zeros(50))


@pytest.mark.parametrize("params, error, message", [
    ({"learning_rate": -0.1}, ValueError, "learning_rate must be >= 0"),  # 0: as XGBoost
    ({"max_bin": 1025}, ValueError, "max_bin must be <= 1024"),
    ({"max_bin": 1}, ValueError, "max_bin must be >= 2"),
    ({"max_depth": -1}, ValueError, "max_depth must be >= 0"),
    ({"max_depth": 2.5}, TypeError, "max_depth must be an integer"),
    ({"reg_lambda": -1}, ValueError, "reg_lambda must be >= 0"),
    ({"min_child_weight": float("nan")}, ValueError, "min_child_weight must be finite"),
    ({"reg_lambda": float("inf")}, ValueError, "reg_lambda must be finite"),
    ({"grow_policy": "best"}, ValueError, "grow_policy must be one of"),
    ({"n_jobs": 0}, ValueError, "n_jobs must be a positive thread count"),
    ({"max_leaves": 1}, ValueError, "max_leaves must be 0"),
    ({"device": "tpu"}, ValueError, "device must be one of"),
    ({"random_state": np.random.RandomState(0)}, TypeError, "random_state must be an integer seed"),
])
def test_out_of_range_parameters(params, error, message):
    with pytest.raises(error, match=message):
        gbm.GBMRegressor(n_estimators=2, **params).fit(X, y)


def test_unknown_and_duplicate_parameters():
    with pytest.raises(ValueError, match="unknown parameter 'max_dept'"):
        gbm.train({"max_dept": 3}, X, y, 2)
    with pytest.raises(ValueError, match="given twice"):
        gbm.train({"eta": 0.1, "learning_rate": 0.2}, X, y, 2)
    with pytest.raises(ValueError, match="n_estimators must be an integer >= 1"):
        gbm.GBMRegressor(n_estimators=0).fit(X, y)
    with pytest.raises(ValueError, match="num_boost_round must be an integer >= 0"):
        gbm.train({}, X, y, -1)


def test_objective_label_checks():
    with pytest.raises(ValueError, match="binary:logistic needs labels in"):
        gbm.train({"objective": "binary:logistic"}, X, y * 2, 2)
    with pytest.raises(ValueError, match=r"multi:softprob needs integer labels in \[0, 3\)"):
        gbm.train({"objective": "multi:softprob", "num_class": 3}, X, y * 3, 2)
    with pytest.raises(ValueError, match="num_class must be >= 2"):
        gbm.train({"objective": "multi:softprob"}, X, y, 2)


def test_cuda_device_gives_a_clear_error():
    from tests.support.device_arrays import gpu_here

    if gpu_here():
        pytest.skip("a GPU and the CUDA packages are here")
    with pytest.raises(RuntimeError, match=r"device='cuda' .*'detgbm\[gpu\]'"):
        gbm.GBMRegressor(n_estimators=2, device="cuda").fit(X, y)
