"""Features used together: continued training with categories, objectives with several
outputs, eval sets of continued models, the estimators' shared arguments."""
import json

import numpy as np
import pytest

import gbm

pd = pytest.importorskip("pandas")
rng = np.random.default_rng(0)
N = 1000
CODES = rng.integers(0, 5, N).astype(float)
X = np.column_stack([CODES, rng.normal(size=N)])
Y = np.array([0.0, 2.0, -1.0, 3.0, 1.0])[CODES.astype(int)] + X[:, 1]


def test_continuing_a_categorical_model_on_data_without_a_category():
    first = gbm.train({"max_depth": 3}, X, Y, 3, categorical_features=[0])
    part = CODES != 4  # the new batch lacks category 4
    for again in (None, [0], [True, False]):
        more = gbm.train({"max_depth": 3}, X[part], Y[part], 2, init_model=first,
                         categorical_features=again)
        assert more.categories == first.categories and more.num_boosted_rounds == 5
    with pytest.raises(ValueError, match=r"categorical_features selects features \[1\], but "
                                         r"init_model treats features \[0\] as categorical"):
        gbm.train({}, X, Y, 1, init_model=first, categorical_features=[1])


def test_estimator_continues_a_categorical_model():
    first = gbm.GBMRegressor(n_estimators=3, categorical_features=[0]).fit(X, Y)
    part = CODES != 4
    more = gbm.GBMRegressor(n_estimators=2, categorical_features=[0]).fit(
        X[part], Y[part], xgb_model=first)
    assert more.get_booster().num_boosted_rounds == 5


def test_continuing_needs_the_same_quantile_levels():
    first = gbm.train({"objective": "reg:quantileerror", "quantile_alpha": 0.5}, X, Y, 2)
    for alphas in ([0.1, 0.9], [0.9]):
        with pytest.raises(ValueError, match="init_model was trained with quantile_alpha=\\[0.5\\]"):
            gbm.train({"objective": "reg:quantileerror", "quantile_alpha": alphas}, X, Y, 1,
                      init_model=first)


def test_eval_scores_of_a_continued_model_on_new_bin_edges():
    first = gbm.train({"max_bin": 16}, X, Y, 5)
    shifted = X + np.array([0.0, 0.7])  # other bin edges for the second part
    E, yE = X[:300] + np.array([0.0, 0.3]), Y[:300]
    more = gbm.train({"max_bin": 16}, shifted, Y, 1, init_model=first, evals=[(E, yE, "e")])
    rmse = np.sqrt(np.mean((more.predict(E) - yE) ** 2))
    assert more.evals_result["e"]["rmse"][-1] == pytest.approx(rmse, rel=1e-9)


def test_all_missing_categorical_column_at_fit_reads_any_value_as_missing():
    Xa = X.copy()
    Xa[:, 0] = np.nan
    booster = gbm.train({"max_depth": 2}, Xa, Y, 2, categorical_features=[0])
    np.testing.assert_array_equal(booster.predict(X[:50]), booster.predict(Xa[:50]))


def test_ranker_takes_categorical_features():
    qid = np.repeat(np.arange(N // 10), 10)
    labels = np.clip(np.round(Y - Y.min()), 0, 4)
    frame = pd.DataFrame({"c": pd.Categorical(CODES.astype(int)), "x": X[:, 1]})
    by_frame = gbm.GBMRanker(n_estimators=3, max_depth=3).fit(frame, labels, qid=qid)
    by_index = gbm.GBMRanker(n_estimators=3, max_depth=3, categorical_features=[0]).fit(
        X, labels, qid=qid, eval_set=[(X, labels)], eval_qid=[qid])
    assert by_frame.get_booster().categories[0] == [0, 1, 2, 3, 4]
    assert by_index.get_booster().categories[0] == [0, 1, 2, 3, 4]
    np.testing.assert_array_equal(by_frame.predict(frame), by_index.predict(X))


def test_shared_estimator_arguments():
    ranker = gbm.GBMRanker(num_parallel_tree=2, n_estimators=2)
    assert ranker.get_params()["num_parallel_tree"] == 2
    qid = np.repeat(np.arange(N // 10), 10)
    fitted = ranker.fit(X, np.clip(np.round(Y - Y.min()), 0, 4), qid=qid).get_booster()
    assert fitted.iteration_indptr == [0, 2, 4]
    forest = gbm.GBMRFRegressor(objective="reg:absoluteerror", n_estimators=4).fit(X, Y)
    params = forest.get_booster().params
    assert params["objective"] == "reg:absoluteerror" and params["num_parallel_tree"] == 4
    d = json.loads(forest.get_booster().to_json())
    assert len(d["trees"]) == 4


def test_eval_set_errors_name_the_eval_set():
    with pytest.raises(ValueError, match=r"evals\['e'\] X has 1 features, but the model was "
                                         r"trained with 2"):
        gbm.train({}, X, Y, 1, evals=[(X[:, :1], Y, "e")])
    frame = pd.DataFrame({"c": pd.Categorical(CODES.astype(int)), "x": X[:, 1]})
    with pytest.raises(ValueError, match=r"evals\['v'\] X column 'c' \(position 0\) has dtype "
                                         r"'category' but the model has no categorical"):
        gbm.train({}, X, Y, 1, feature_names=["c", "x"], evals=[(frame, Y, "v")])
