"""``gbm.DMatrix`` (issue 11, item 4): XGBoost's data container, accepted by ``train``,
by ``evals`` and by ``Booster.predict``."""
import numpy as np
import pytest

import gbm


def _data(n=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    return X, X[:, 0] * 2 - X[:, 1] + rng.normal(scale=0.3, size=n), rng


def test_dmatrix_is_the_same_as_arrays():
    X, y, rng = _data()
    w = rng.uniform(0.5, 2.0, size=len(y))
    bm = rng.normal(scale=0.1, size=len(y))
    params = {"max_depth": 3}
    ref = gbm.train(params, X, y, 5, sample_weight=w, base_margin=bm,
                    feature_names=["a", "b", "c", "d"],
                    evals=[{"X": X, "y": y, "name": "v", "sample_weight": w, "base_margin": bm}])
    d = gbm.DMatrix(X, label=y, weight=w, base_margin=bm, feature_names=["a", "b", "c", "d"])
    assert (d.num_row(), d.num_col()) == X.shape
    np.testing.assert_array_equal(d.get_label(), y.astype(np.float32))
    for booster in (gbm.train(params, d, 5, evals=[(d, "v")]),  # xgboost's positional form
                    gbm.train(params, dtrain=d, num_boost_round=5, evals=[(d, "v")])):
        assert booster.to_json() == ref.to_json()
        assert booster.evals_result == ref.evals_result
        # predict on a DMatrix takes its base margins
        np.testing.assert_array_equal(booster.predict(d), ref.predict(X, base_margin=bm))


def test_dmatrix_groups_and_feature_types():
    X, y, rng = _data()
    rel = np.clip(np.round(y / 2 + 1), 0, 3)
    params = {"objective": "rank:ndcg", "max_depth": 3}
    ref = gbm.train(params, X, rel, 3, group=[50] * 6)
    ranked = gbm.train(params, gbm.DMatrix(X, label=rel, group=[50] * 6), 3)
    assert ranked.to_json() == ref.to_json()
    codes = X.copy()
    codes[:, 3] = rng.randint(0, 5, size=len(y))
    typed = gbm.train({"max_depth": 3}, gbm.DMatrix(codes, label=y,
                                                    feature_types=["q", "q", "q", "c"]), 3)
    assert typed.categories[3] is not None and typed.categories[:3] == [None] * 3
    same = gbm.train({"max_depth": 3}, codes, y, 3, categorical_features=[3])
    # the same model; the DMatrix's types are recorded too (XGBoost's feature_types)
    assert typed.feature_types == ["q", "q", "q", "c"] and same.feature_types is None
    typed.feature_types = None
    assert typed.to_json() == same.to_json()


def test_clear_errors():
    X, y, _ = _data()
    with pytest.raises(TypeError, match="X is a tuple"):
        gbm.train({}, (X, y))
    with pytest.raises(TypeError, match="y is given but X is a DMatrix"):
        gbm.train({}, gbm.DMatrix(X, label=y), y)
    with pytest.raises(ValueError, match="has no labels"):
        gbm.train({}, gbm.DMatrix(X))
    with pytest.raises(TypeError, match="both as an argument and in the DMatrix"):
        gbm.train({}, gbm.DMatrix(X, label=y, weight=np.ones(len(y))), sample_weight=np.ones(len(y)))
    with pytest.raises(ValueError, match="feature_types"):
        gbm.DMatrix(X, feature_types=["q", "x", "q", "q"])
    with pytest.raises(TypeError, match="y is None"):
        gbm.train({}, X)
