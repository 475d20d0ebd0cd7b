"""feature_weights: colsample_* draws without replacement in proportion to per-feature
weights (XGBoost's DMatrix field), from the same counter-based hashes as the unweighted
draw, and equal weights give the unweighted model bit for bit."""
import numpy as np
import pytest

import gbm
from gbm.io import gbm_json
from gbm.params import validate_params
from gbm.training.arguments import with_feature_weights
from gbm.tree.sampling import ColumnSampler, race_order

WEIGHTS = np.array([1.0, 2.0, 3.0, 4.0, 0.0, 10.0])
N_DRAWS = 20_000


def _sampler(rate_name, rate, weights=WEIGHTS, round_=0):
    p = validate_params({rate_name: rate, "feature_weights": weights})
    return ColumnSampler(p, weights.shape[0], round_, 0)


def _within(counts, expected, n):
    """Each count within 5 binomial standard deviations of n * expected."""
    sd = np.sqrt(n * expected * (1.0 - expected))
    return np.all(np.abs(counts - n * expected) <= 5.0 * sd + 1e-9)


def test_one_feature_per_tree_is_drawn_in_proportion_to_the_weights():
    counts = np.zeros(6)
    for r in range(N_DRAWS):
        counts[_sampler("colsample_bytree", 1 / 6, round_=r).tree] += 1
    assert counts[4] == 0  # weight 0: never while another feature is left
    assert _within(counts, WEIGHTS / WEIGHTS.sum(), N_DRAWS)


def test_one_feature_per_node_and_per_level():
    masks = _sampler("colsample_bynode", 1 / 6).masks(np.arange(N_DRAWS), np.zeros(N_DRAWS, int))
    assert np.all(masks.sum(axis=1) == 1)
    assert _within(masks.sum(axis=0), WEIGHTS / WEIGHTS.sum(), N_DRAWS)
    counts = np.zeros(6)
    for r in range(N_DRAWS // 4):
        counts[_sampler("colsample_bylevel", 1 / 6, round_=r).level_features(0)] += 1
    assert _within(counts, WEIGHTS / WEIGHTS.sum(), N_DRAWS // 4)


def test_two_of_three_match_the_inclusion_probabilities():
    """k = 2 of weights (1, 1, 2): P(feature 2 drawn) = 1/2 + 2 * (1/4 * 2/3) = 5/6."""
    w = np.array([1.0, 1.0, 2.0])
    counts = np.zeros(3)
    for r in range(N_DRAWS):
        counts[_sampler("colsample_bytree", 2 / 3, w, round_=r).tree] += 1
    expected = np.array([7 / 12, 7 / 12, 5 / 6])
    assert _within(counts, expected, N_DRAWS)


def test_zero_weights_are_drawn_last_in_hash_order():
    draws = np.array([[0.9, 0.1, 0.5, 0.3]])
    order = race_order(draws, np.array([[0.0, 0.0, 1.0, 0.0]]))
    assert order.tolist() == [[2, 1, 3, 0]]


def test_equal_weights_are_the_unweighted_draw_bit_for_bit():
    rng = np.random.default_rng(1)
    X = rng.random((400, 8))
    y = X @ rng.random(8) + 0.1 * rng.random(400)
    params = {"colsample_bytree": 0.8, "colsample_bylevel": 0.7, "colsample_bynode": 0.5,
              "max_depth": 4}
    plain = gbm_json.to_dict(gbm.train(params, X, y, 5))
    weighted = gbm_json.to_dict(gbm.train(dict(params, feature_weights=np.full(8, 3.0)), X, y, 5))
    assert plain == weighted
    assert validate_params({"feature_weights": np.zeros(8)})["feature_weights"] is None


def test_a_zero_weight_feature_is_never_split_on():
    rng = np.random.default_rng(2)
    X = rng.random((500, 6))
    y = 5.0 * X[:, 0] + X[:, 1] + 0.1 * rng.random(500)  # feature 0 is the best split
    w = np.array([0.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    for rates in ({"colsample_bytree": 0.5}, {"colsample_bylevel": 0.5},
                  {"colsample_bynode": 0.5}):
        booster = gbm.train(dict(rates, feature_weights=w, max_depth=3), X, y, 8)
        split = np.concatenate([t.split_feature[t.left_child >= 0] for t in booster.trees])
        assert split.size and not np.any(split == 0), rates
    booster = gbm.train({"colsample_bynode": 0.5, "max_depth": 3}, X, y, 8)
    assert any(np.any(t.split_feature[t.left_child >= 0] == 0) for t in booster.trees)


def test_feature_weights_stay_out_of_model_files():
    X = np.random.default_rng(3).random((100, 3))
    booster = gbm.train({"feature_weights": [1.0, 2.0, 3.0], "colsample_bytree": 0.7},
                        X, X[:, 0], 2)
    assert "feature_weights" not in gbm_json.to_dict(booster)["params"]


@pytest.mark.parametrize("weights, error, message", [
    ([1.0, -1.0, 2.0], ValueError, r"finite and >= 0, got -1.0 for feature 1"),
    ([1.0, np.nan, 2.0], ValueError, r"finite and >= 0, got nan for feature 1"),
    ([[1.0, 2.0], [3.0, 4.0]], ValueError, "1-dimensional"),
    (["a", "b"], TypeError, "an array of numbers"),
])
def test_bad_weights_are_refused(weights, error, message):
    with pytest.raises(error, match=message):
        validate_params({"feature_weights": weights})


def test_weights_of_another_feature_count_are_refused():
    X = np.random.default_rng(4).random((50, 3))
    with pytest.raises(ValueError, match="feature_weights has 2 weights but the data has 3"):
        gbm.train({"feature_weights": [1.0, 2.0], "colsample_bytree": 0.5}, X, X[:, 0], 1)


def test_a_column_of_weights_is_accepted():
    w = validate_params({"feature_weights": np.array([[1.0], [2.0]])})["feature_weights"]
    assert w.tolist() == [1.0, 2.0]


class _WithWeights:
    feature_weights = np.array([1.0, 2.0])


def test_a_dmatrix_brings_its_weights_once():
    assert with_feature_weights({}, _WithWeights())["feature_weights"].tolist() == [1.0, 2.0]
    assert with_feature_weights({"eta": 1}, None) == {"eta": 1}
    with pytest.raises(TypeError, match="feature_weights is given both"):
        with_feature_weights({"feature_weights": [1.0, 1.0]}, _WithWeights())
