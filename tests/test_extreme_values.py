"""Extreme but finite inputs: a clear error up front, or a model that equals the one from
scaled-down inputs; never a silently wrong model (gains overflowing to inf - inf used to
drop every split without a word)."""
import numpy as np
import pytest

import gbm
from gbm.params import validate_params

RNG = np.random.default_rng(0)
X = RNG.normal(size=(500, 4))
Y = X[:, 0] * 3 + X[:, 1] ** 2 + RNG.normal(scale=0.1, size=500)
W = RNG.uniform(0.5, 2.0, size=500)
LIMIT = float(np.finfo(np.float32).max)


@pytest.mark.parametrize("scale", [1e160, 1e39])
def test_huge_weights_are_rejected(scale):
    with pytest.raises(ValueError, match=r"sample_weight contains .* at row 0; weights must be "
                                         r"at most 3\.402823e\+38"):
        gbm.train({}, X, Y, 2, sample_weight=W * scale)


def test_huge_weights_are_rejected_by_the_estimators_and_eval_sets():
    with pytest.raises(ValueError, match="weights must be at most"):
        gbm.GBMRegressor(n_estimators=2).fit(X, Y, sample_weight=W * 1e160)
    with pytest.raises(ValueError, match="weights must be at most"):
        gbm.GBMRegressor(n_estimators=2).fit(X, Y, eval_set=[(X, Y)],
                                             sample_weight_eval_set=[W * 1e160])


@pytest.mark.parametrize("label", [1e300, -1e39])
def test_huge_labels_are_rejected(label):
    y = Y.copy()
    y[7] = label
    with pytest.raises(ValueError, match=r"y contains .* at row 7; labels must be at most "
                                         r"3\.402823e\+38 in magnitude"):
        gbm.train({}, X, y, 2)


def test_huge_features_are_named():
    X_big = X.copy()
    X_big[3, 2] = 1e300
    with pytest.raises(ValueError, match=r"X contains 1e\+300 at row 3, column 2, beyond "
                                         r"float32's range"):
        gbm.train({}, X_big, Y, 2)


def test_huge_features_of_a_dataframe_are_named():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    frame["c2"] = frame["c2"].astype(np.float64)
    frame.loc[3, "c2"] = -1e300
    with pytest.raises(ValueError, match=r"X contains -1e\+300 at row 3, column 2, beyond "
                                         r"float32's range"):
        gbm.train({}, frame, Y, 2)
    frame.loc[3, "c2"] = np.inf
    with pytest.raises(ValueError, match=r"X contains infinity at row 3, column 2"):
        gbm.train({}, frame, Y, 2)


def test_weights_near_the_limit_give_the_model_of_scaled_down_weights():
    """Weights of ~1e36 (a power-of-two multiple of W) train the same trees as W: the
    gradient pairs are quantised with a power-of-two scale, so only cover and gain scale."""
    params = {"max_depth": 3, "reg_lambda": 0.0, "min_child_weight": 0.0}
    scale = 2.0 ** 120
    small = gbm.train(params, X, Y, 5, sample_weight=W)
    large = gbm.train(params, X, Y, 5, sample_weight=W * scale)
    assert max(t.n_leaves for t in large.trees) > 4  # the splits are found
    np.testing.assert_array_equal(large.predict(X), small.predict(X))
    for a, b in zip(small.trees, large.trees):
        np.testing.assert_array_equal(a.split_feature, b.split_feature)
        np.testing.assert_array_equal(a.cover * scale, b.cover)


def test_labels_near_the_limit_give_the_model_of_scaled_down_labels():
    """Labels of ~1e37 (a power-of-two multiple of Y): every leaf value and prediction is
    that multiple of the one from Y, exactly."""
    scale = 2.0 ** 120
    small = gbm.train({"max_depth": 3}, X, Y, 5)
    large = gbm.train({"max_depth": 3}, X, Y * scale, 5)
    assert max(t.n_leaves for t in large.trees) > 4
    np.testing.assert_array_equal(large.predict(X), small.predict(X) * scale)


@pytest.mark.parametrize("name, value", [
    ("learning_rate", 1e300), ("reg_lambda", 1e300), ("reg_alpha", 1e39), ("gamma", 1e300),
    ("min_child_weight", 1e300), ("max_delta_step", 1e300), ("base_score", -1e300),
    ("huber_slope", 1e300),
])
def test_real_parameters_beyond_float32_are_rejected_up_front(name, value):
    with pytest.raises(ValueError, match=f"{name} must be at most 3.402823e\\+38 in magnitude"):
        validate_params({name: value})


def test_tiny_huber_slope_is_rejected():
    with pytest.raises(ValueError, match=r"huber_slope must be >= 1\.17549"):
        validate_params({"objective": "reg:pseudohubererror", "huber_slope": 1e-300})


@pytest.mark.parametrize("name", ["max_depth", "max_leaves", "bin_sample_size", "num_class",
                                  "max_cat_threshold", "num_parallel_tree"])
def test_integer_parameters_beyond_int64_are_rejected(name):
    with pytest.raises(ValueError, match=f"{name} must be <= {2 ** 63 - 1}"):
        validate_params({name: 2 ** 70})


def test_diverging_fit_stops_with_a_clear_error():
    """learning_rate 1e30 is legal but makes squared error diverge; the margins grow by
    1e30 a round until the gradient sums would overflow: an error, not NaN trees."""
    with pytest.raises(FloatingPointError, match="gradients too large|training overflowed"):
        gbm.train({"learning_rate": 1e30, "max_depth": 2}, X, Y, 20)


def test_largest_legal_values_train_a_finite_round():
    """Labels, weights and learning_rate at float32's limit: the first round's leaves
    (about 1e77) are finite and the model saves; the fit then diverges, and stops with an
    error rather than lose splits to overflowing gains."""
    y = np.where(Y > 0, 3e38, -3e38)
    params = {"learning_rate": 3e38, "max_depth": 2}
    one = gbm.train(params, X, y, 1, sample_weight=np.full(500, 3e38))
    assert np.isfinite(one.predict(X)).all() and one.trees[0].n_leaves > 1
    assert gbm.Booster.from_json(one.to_json()).to_json() == one.to_json()
    with pytest.raises(FloatingPointError, match="gradients too large"):
        gbm.train(params, X, y, 5, sample_weight=np.full(500, 3e38))
