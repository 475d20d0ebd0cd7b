"""Learning to rank: rank:pairwise / rank:ndcg gradients, query groups, ranking metrics,
GBMRanker, and parity with XGBoost."""
import json

import numpy as np
import pytest

import gbm
from gbm.kernels import cpu, reference
from gbm.objectives import get_objective
from gbm.params import validate_params
from gbm.data.queries import QueryGroups
from gbm.metrics.ranking import RankingMetric
from tests.support.kernel_inputs import kernel_gradients

xgb = pytest.importorskip("xgboost")

XGB = {"tree_method": "hist", "base_score": 0.0, "nthread": 1}  # one thread: busy CI machines


def make_ranking(n_queries, seed, sizes=(4, 17), n_features=6):
    """Graded relevance 0-4 from a noisy score; features on a 1/16 grid, so that every
    feature has fewer than 256 values and gbm and XGBoost bin them identically."""
    rng = np.random.default_rng(seed)
    group = rng.integers(sizes[0], sizes[1], n_queries)
    n = int(group.sum())
    X = (np.round(rng.normal(size=(n, n_features)) * 16) / 16).astype(np.float32)
    s = X[:, 0] + 0.7 * X[:, 1] * X[:, 2] - 0.5 * np.abs(X[:, 3]) + rng.normal(size=n)
    y = np.digitize(s, [-0.5, 0.5, 1.2, 2.0]).astype(np.float64)
    return X, y, group


@pytest.fixture(scope="module")
def data():
    return make_ranking(300, 0), make_ranking(150, 100)


def _ptr(sizes):
    return np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)


# ---------------------------------------------------------------- kernel vs reference

KERNEL_CASES = [
    {"objective": "rank:ndcg"},
    {"objective": "rank:pairwise"},
    {"objective": "rank:ndcg", "lambdarank_num_pair_per_sample": 3},
    {"objective": "rank:ndcg", "ndcg_exp_gain": False, "lambdarank_normalization": False},
    {"objective": "rank:pairwise", "lambdarank_score_normalization": False},
    {"objective": "rank:ndcg", "lambdarank_pair_method": "mean"},
    {"objective": "rank:pairwise", "lambdarank_pair_method": "mean",
     "lambdarank_num_pair_per_sample": 4},
]


@pytest.mark.parametrize("params", KERNEL_CASES)
def test_kernel_matches_reference(params):
    rng = np.random.default_rng(1)
    sizes = np.concatenate(([1, 2, 40], rng.integers(1, 20, 25)))  # one-row and long groups
    n = int(sizes.sum())
    margin = np.round(rng.normal(size=n), 1)  # ties in the scores
    margin[:3] = 0.0
    y = rng.integers(0, 5, n).astype(np.float64)
    y[1:3] = 2.0  # group 1 (rows 1-2): equal labels, no pair, zero gradient
    scale = rng.random(len(sizes)) + 0.5
    fast = kernel_gradients(cpu, margin, y, sizes, params, scale=scale, n_threads=2)
    slow = kernel_gradients(reference, margin, y, sizes, params, scale=scale)
    np.testing.assert_allclose(fast[0], slow[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fast[1], slow[1], rtol=1e-12, atol=1e-14)
    assert np.abs(fast[0]).max() > 0
    assert (fast[0][1:3] == 0).all()  # equal labels: no pair
    one = kernel_gradients(cpu, margin, y, sizes, params, scale=scale, n_threads=1)
    assert np.array_equal(one[0], fast[0]) and np.array_equal(one[1], fast[1])


def test_gradients_follow_documents_not_row_order():
    """With distinct scores, shuffling rows inside each query permutes the gradients."""
    rng = np.random.default_rng(2)
    sizes = rng.integers(2, 15, 20)
    n = int(sizes.sum())
    margin, y = rng.normal(size=n), rng.integers(0, 5, n).astype(np.float64)
    perm = np.concatenate([lo + rng.permutation(hi - lo) for lo, hi in
                           zip(_ptr(sizes)[:-1], _ptr(sizes)[1:])])
    for params in ({"objective": "rank:ndcg"}, {"objective": "rank:pairwise"}):
        g, h = kernel_gradients(cpu, margin, y, sizes, params)
        gp, hp = kernel_gradients(cpu, margin[perm], y[perm], sizes, params)
        np.testing.assert_allclose(gp, g[perm], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(hp, h[perm], rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------- finite differences

def _pair_loss(s, y, pair_weight):
    """sum over pairs y_i > y_j of w_ij log(1 + exp(-(s_i - s_j)))."""
    total = 0.0
    for i in range(len(s)):
        for j in range(len(s)):
            if y[i] > y[j]:
                total += pair_weight(i, j) * np.log1p(np.exp(-(s[i] - s[j])))
    return total


def _delta_ndcg_weights(s, y):
    """|delta NDCG| of swapping i and j in the ranking by s (held fixed while
    differentiating: LambdaMART's lambda-weighted loss)."""
    rank = np.empty(len(s), dtype=int)
    rank[np.argsort(-s, kind="stable")] = np.arange(len(s))
    gain = 2.0 ** y - 1.0
    ideal = np.sort(gain)[::-1]
    idcg = np.sum(ideal / np.log2(np.arange(len(s)) + 2.0))
    disc = 1.0 / np.log2(rank + 2.0)
    return lambda i, j: abs((gain[i] - gain[j]) * (disc[i] - disc[j])) / idcg


@pytest.mark.parametrize("objective", ["rank:pairwise", "rank:ndcg"])
def test_gradients_are_derivatives_of_the_pairwise_loss(objective):
    """Without XGBoost's two normalisations, grad = dL/ds exactly and hess = 2 d2L/ds2
    (XGBoost's factor 2), for all pairs (topk with k >= group size)."""
    rng = np.random.default_rng(3)
    s = rng.normal(size=9)
    y = np.array([0, 1, 2, 3, 4, 1, 0, 2, 3], dtype=np.float64)
    params = {"objective": objective, "lambdarank_normalization": False,
              "lambdarank_score_normalization": False}
    grad, hess = kernel_gradients(cpu, s, y, [9], params)
    weight = _delta_ndcg_weights(s, y) if objective == "rank:ndcg" else (lambda i, j: 1.0)
    middle = _pair_loss(s, y, weight)
    for i in range(9):
        step = np.zeros(9)
        step[i] = 1e-5
        up, down = _pair_loss(s + step, y, weight), _pair_loss(s - step, y, weight)
        assert grad[i] == pytest.approx((up - down) / 2e-5, rel=1e-6, abs=1e-9)
        step[i] = 1e-3  # a wider step for the second difference: less round-off
        up, down = _pair_loss(s + step, y, weight), _pair_loss(s - step, y, weight)
        assert hess[i] == pytest.approx(2 * (up - 2 * middle + down) / 1e-6, rel=1e-5)


# ---------------------------------------------------------------- metrics

def _xgb_metric(name, y, pred, sizes, weight=None):
    """XGBoost's value of ``name`` on fixed predictions (base_margin, no trees)."""
    d = xgb.DMatrix(np.zeros((len(y), 1), np.float32), y, group=sizes, base_margin=pred,
                    weight=weight)
    booster = xgb.train({"objective": "rank:ndcg", "eval_metric": name, **XGB}, d, 0)
    return float(booster.eval(d).split(":")[-1])


@pytest.mark.parametrize("name", ["ndcg", "ndcg@3", "ndcg@5-", "ndcg-", "map", "map@3",
                                  "map@5-", "map-", "pre", "pre@3", "pre@5-", "pre-", "pre@20"])
@pytest.mark.parametrize("weighted", [False, True])
def test_metrics_equal_xgboost(name, weighted):
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 15, 40)
    ptr = _ptr(sizes)
    y = rng.integers(0, 4, ptr[-1]).astype(np.float64)
    y[ptr[3]:ptr[4]] = 0  # queries without any relevant document
    y[ptr[7]:ptr[8]] = 0
    if name.startswith(("map", "pre")):
        y = (y > 1).astype(np.float64)  # map and pre need binary labels
    pred = np.round(rng.normal(size=ptr[-1]), 1)  # float32-exact, with ties
    weight = rng.random(40) + 0.1 if weighted else None
    ours = RankingMetric(name)(y, pred, None, QueryGroups(ptr, weight))
    assert ours == pytest.approx(_xgb_metric(name, y, pred, sizes, weight), abs=1e-6)


def test_metric_of_a_query_without_relevant_documents():
    y, pred, q = np.zeros(3), np.array([0.3, 0.2, 0.1]), QueryGroups([0, 3])
    assert RankingMetric("ndcg")(y, pred, None, q) == 1.0
    assert RankingMetric("ndcg-")(y, pred, None, q) == 0.0
    assert RankingMetric("map@2")(y, pred, None, q) == 1.0
    assert RankingMetric("map@2-")(y, pred, None, q) == 0.0
    assert RankingMetric("pre@2")(y, pred, None, q) == RankingMetric("pre@2-")(y, pred, None, q) == 0


def test_precision_at_k_by_hand():
    """Group 1: top 2 of (1, 1, 0) ranked -> 2/2; group 2 (ties keep the input order):
    (1, 0, 0, 1, 0) -> 1/2; group 3, shorter than k=5: 2 relevant of 4 -> 2/4."""
    y = np.array([1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1], dtype=np.float64)
    pred = np.array([0.3, 0.1, 0.2, 0.5, 0.5, 0.1, 0.9, 0.2, 0.4, 0.3, 0.2, 0.1])
    q = QueryGroups([0, 3, 8, 12], [1.0, 2.0, 3.0])
    assert RankingMetric("pre@2")(y, pred, None, q) == pytest.approx((1 + 2 * 0.5 + 3 * 0.5) / 6)
    assert RankingMetric("pre@5")(y, pred, None, q) == pytest.approx(
        (2 / 3 + 2 * 2 / 5 + 3 * 2 / 4) / 6)
    with pytest.raises(ValueError, match="binary"):
        RankingMetric("pre@2")(y * 2, pred, None, q)


# ---------------------------------------------------------------- parity with xgboost

@pytest.mark.parametrize("objective", ["rank:ndcg", "rank:pairwise"])
def test_ndcg_at_10_matches_xgboost(data, objective):
    (X, y, group), (Xv, yv, gv) = data
    params = {"objective": objective, "learning_rate": 0.1, "max_depth": 4,
              "eval_metric": "ndcg@10", "n_jobs": 1}
    result = {}
    xgb.train(dict(params, **XGB), xgb.DMatrix(X, y, group=group),
              30, evals=[(xgb.DMatrix(Xv, yv, group=gv), "valid")], evals_result=result,
              verbose_eval=False)
    model = gbm.train(params, X, y, 30, group=group,
                      evals=[{"X": Xv, "y": yv, "group": gv, "name": "valid"}])
    theirs, ours = result["valid"]["ndcg@10"][-1], model.evals_result["valid"]["ndcg@10"][-1]
    assert abs(ours - theirs) / theirs < 0.01
    assert ours > model.evals_result["valid"]["ndcg@10"][0]  # it learned


def test_mean_pair_method_matches_xgboost_on_two_document_queries():
    """With two documents per query the 'mean' method's partner is forced: the first
    tree (leaf values included: normalised by 1 / num_pair) equals XGBoost's."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 12, size=(600, 4)).astype(np.float32)
    y = np.zeros(600)
    y[1::2] = rng.integers(1, 4, 300)
    params = {"objective": "rank:ndcg", "lambdarank_pair_method": "mean",
              "lambdarank_num_pair_per_sample": 3, "learning_rate": 1.0, "max_depth": 3,
              "min_child_weight": 0.0}
    group = np.full(300, 2)
    theirs = xgb.train(dict(params, **XGB),
                       xgb.DMatrix(X, y, group=group), 1).predict(xgb.DMatrix(X), output_margin=True)
    ours = gbm.train(params, X, y, 1, group=group).predict(X, output_margin=True)
    np.testing.assert_allclose(ours, theirs, atol=1e-6)


def test_group_weights_match_xgboost():
    X, y, group = make_ranking(80, 6)
    w = np.random.default_rng(6).random(80) + 0.2
    params = {"objective": "rank:ndcg", "learning_rate": 1.0, "max_depth": 3}
    theirs = xgb.train(dict(params, **XGB),
                       xgb.DMatrix(X, y, group=group, weight=w), 2)
    ours = gbm.train(params, X, y, 2, group=group, sample_weight=w)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(xgb.DMatrix(X), output_margin=True),
                               atol=1e-5)
    unweighted = gbm.train(params, X, y, 2, group=group)
    assert not np.allclose(unweighted.predict(X), ours.predict(X))
    same = gbm.train(params, X, y, 2, group=group, sample_weight=np.full(80, 3.0))
    assert same.to_json() == unweighted.to_json()  # weights are normalised to mean 1


def test_early_stopping_picks_xgboost_best_iteration():
    X, y, group = make_ranking(150, 1)
    Xv, yv, gv = make_ranking(60, 101)
    params = {"objective": "rank:ndcg", "learning_rate": 0.3, "max_depth": 4,
              "eval_metric": "ndcg@10"}
    theirs = xgb.train(dict(params, **XGB),
                       xgb.DMatrix(X, y, group=group), 100,
                       evals=[(xgb.DMatrix(Xv, yv, group=gv), "v")], early_stopping_rounds=5,
                       verbose_eval=False)
    ours = gbm.train(params, X, y, 100, group=group, early_stopping_rounds=5,
                     evals=[{"X": Xv, "y": yv, "group": gv, "name": "v"}])
    assert ours.best_iteration == theirs.best_iteration
    assert ours.best_score == pytest.approx(theirs.best_score, abs=1e-6)
    assert ours.num_boosted_rounds == ours.best_iteration + 6  # stopped 5 rounds after


# ---------------------------------------------------------------- training behaviour

def test_default_metric_and_base_score(data):
    (X, y, group), _ = data
    for objective in ("rank:ndcg", "rank:pairwise"):
        model = gbm.train({"objective": objective}, X, y, 2, group=group,
                          evals=[{"X": X, "y": y, "group": group, "name": "train"}])
        assert list(model.evals_result["train"]) == ["ndcg@32"]  # XGBoost's default
        assert model.base_margin.tolist() == [0.0]
    mean = gbm.train({"objective": "rank:ndcg", "lambdarank_pair_method": "mean"}, X, y, 1,
                     group=group, evals=[{"X": X, "y": y, "group": group, "name": "t"}])
    assert list(mean.evals_result["t"]) == ["ndcg"]


def test_qid_and_group_give_the_same_model(data):
    (X, y, group), _ = data
    qid = np.repeat(np.arange(len(group)) * 3 + 7, group)  # any sorted ids
    params = {"objective": "rank:ndcg", "max_depth": 3}
    assert gbm.train(params, X, y, 3, group=group).to_json() == \
        gbm.train(params, X, y, 3, qid=qid).to_json()


@pytest.mark.parametrize("method", ["topk", "mean"])
def test_thread_count_does_not_change_the_model(data, method):
    (X, y, group), _ = data
    params = {"objective": "rank:ndcg", "lambdarank_pair_method": method, "max_depth": 4,
              "subsample": 0.8}
    one = json.loads(gbm.train(dict(params, n_jobs=1), X, y, 4, group=group).to_json())
    two = json.loads(gbm.train(dict(params, n_jobs=2), X, y, 4, group=group).to_json())
    assert "n_jobs" not in one["params"] and one == two


def test_mean_pairs_are_drawn_from_the_seed(data):
    (X, y, group), _ = data
    params = {"objective": "rank:pairwise", "lambdarank_pair_method": "mean", "max_depth": 3}
    a = gbm.train(dict(params, random_state=1), X, y, 3, group=group)
    b = gbm.train(dict(params, random_state=1), X, y, 3, group=group)
    c = gbm.train(dict(params, random_state=2), X, y, 3, group=group)
    assert a.to_json() == b.to_json()
    assert not np.array_equal(a.predict(X), c.predict(X))


def test_save_load_and_continue(data, tmp_path):
    (X, y, group), _ = data
    params = {"objective": "rank:pairwise", "max_depth": 3, "lambdarank_num_pair_per_sample": 8}
    model = gbm.train(params, X, y, 4, group=group)
    path = tmp_path / "rank.json"
    model.save_model(path)
    loaded = gbm.Booster.load_model(path)
    assert np.array_equal(loaded.predict(X), model.predict(X))
    assert loaded.params["objective"] == "rank:pairwise"
    assert loaded.params["lambdarank_num_pair_per_sample"] == 8
    both = gbm.train(params, X, y, 2, group=group, init_model=loaded)
    assert both.to_json() == gbm.train(params, X, y, 6, group=group).to_json()


# ---------------------------------------------------------------- bad input

def _tiny():
    X = np.arange(12, dtype=np.float32).reshape(6, 2)
    return X, np.array([0, 1, 2, 0, 1, 1.0])


@pytest.mark.parametrize("kwargs, message", [
    ({}, "needs query groups"),
    ({"group": [3, 3], "qid": [0, 0, 0, 1, 1, 1]}, "either group or qid"),
    ({"group": [3, 2]}, "sum to 5 but the data has 6"),
    ({"group": [3, 0, 3]}, r"group\[1\] = 0"),
    ({"group": [3.5, 2.5]}, "must hold integers"),
    ({"qid": [0, 0, 1, 1, 0, 0]}, r"sorted in non-decreasing order.*qid\[4\] = 0"),
    ({"qid": [0, 0, 1]}, "qid has 3 entries but the data has 6"),
    ({"group": [3, 3], "sample_weight": np.ones(6)}, "per query group"),
    ({"group": [3, 3], "sample_weight": [1.0, -1.0]}, "finite and >= 0"),
])
def test_bad_groups_are_rejected(kwargs, message):
    X, y = _tiny()
    with pytest.raises(ValueError, match=message):
        gbm.train({"objective": "rank:ndcg"}, X, y, 1, **kwargs)


def test_bad_labels_params_and_eval_sets_are_rejected():
    X, y = _tiny()
    group = [3, 3]
    with pytest.raises(ValueError, match=r"integer relevance labels in \[0, 31\]. Set "
                                         r"`ndcg_exp_gain` to False"):
        gbm.train({"objective": "rank:ndcg"}, X, y + 0.5, 1, group=group)
    with pytest.raises(ValueError, match="labels >= 0"):
        gbm.train({"objective": "rank:pairwise"}, X, y - 1, 1, group=group)
    gbm.train({"objective": "rank:ndcg", "ndcg_exp_gain": False}, X, y + 0.5, 1, group=group)
    with pytest.raises(ValueError, match="binary relevance labels"):
        gbm.train({"objective": "rank:ndcg", "eval_metric": "map"}, X, y, 1, group=group,
                  evals=[{"X": X, "y": y, "group": group, "name": "v"}])
    with pytest.raises(ValueError, match="has no query groups"):
        gbm.train({"objective": "rank:ndcg"}, X, y, 1, group=group, evals=[(X, y, "v")])
    with pytest.raises(ValueError, match="unknown keys"):
        gbm.train({"objective": "rank:ndcg"}, X, y, 1, group=group,
                  evals=[{"X": X, "y": y, "name": "v", "groups": group}])
    with pytest.raises(ValueError, match=r"evals\['v'\] group sizes sum to 5"):
        gbm.train({"objective": "rank:ndcg"}, X, y, 1, group=group,
                  evals=[{"X": X, "y": y, "name": "v", "group": [2, 3]}])
    with pytest.raises(ValueError, match="must be >= 1"):
        gbm.train({"objective": "rank:ndcg", "eval_metric": "ndcg@0"}, X, y, 1, group=group)
    with pytest.raises(ValueError, match="lambdarank_pair_method must be one of"):
        gbm.train({"objective": "rank:ndcg", "lambdarank_pair_method": "all"}, X, y, 1, group=group)
    with pytest.raises(ValueError, match="lambdarank_num_pair_per_sample must be >= 1"):
        gbm.train({"objective": "rank:ndcg", "lambdarank_num_pair_per_sample": 0}, X, y, 1,
                  group=group)
    with pytest.raises(TypeError, match="ndcg_exp_gain must be True or False"):
        gbm.train({"objective": "rank:ndcg", "ndcg_exp_gain": "yes"}, X, y, 1, group=group)


def test_ranking_metric_on_a_regression_eval_set_is_one_query():
    X, y = _tiny()
    model = gbm.train({"eval_metric": ["rmse", "ndcg@3"]}, X, y, 2, evals=[(X, y, "t")])
    pred = model.predict(X)
    assert model.evals_result["t"]["ndcg@3"][-1] == pytest.approx(
        RankingMetric("ndcg@3")(y, pred, None, QueryGroups([0, 6])))


# ---------------------------------------------------------------- GBMRanker

def test_ranker_fit_predict_and_early_stopping(data):
    (X, y, group), (Xv, yv, gv) = data
    qid = np.repeat(np.arange(len(group)), group)
    ranker = gbm.GBMRanker(n_estimators=40, learning_rate=0.3, max_depth=4,
                           eval_metric="ndcg@10", early_stopping_rounds=3)
    assert ranker.get_params()["objective"] == "rank:ndcg"  # XGBRanker's default
    ranker.fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_group=[gv])
    scores = ranker.predict(Xv)
    assert scores.shape == (len(yv),)
    history = ranker.evals_result()["validation_0"]["ndcg@10"]
    assert ranker.best_iteration == int(np.argmax(history))
    assert ranker.best_score == max(history)
    best = ranker.get_booster().predict(Xv, output_margin=True,
                                        iteration_range=(0, ranker.best_iteration + 1))
    assert np.array_equal(scores, best)
    by_group = gbm.GBMRanker(n_estimators=3, max_depth=3).fit(X, y, group=group)
    by_qid = gbm.GBMRanker(n_estimators=3, max_depth=3).fit(X, y, qid=qid)
    assert np.array_equal(by_group.predict(X), by_qid.predict(X))


def test_ranker_takes_a_qid_column_and_rejects_bad_input(data):
    pd = pytest.importorskip("pandas")
    (X, y, group), _ = data
    qid = np.repeat(np.arange(len(group)), group)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    with_qid = frame.assign(qid=qid)
    ranker = gbm.GBMRanker(n_estimators=2, objective="rank:pairwise").fit(with_qid, y)
    plain = gbm.GBMRanker(n_estimators=2, objective="rank:pairwise").fit(frame, y, qid=qid)
    assert np.array_equal(ranker.predict(with_qid), plain.predict(frame))
    assert list(ranker.feature_names_in_) == list(frame.columns)
    with pytest.raises(ValueError, match="needs a ranking objective"):
        gbm.GBMRanker(objective="reg:squarederror").fit(X, y, group=group)
    with pytest.raises(ValueError, match="needs query groups"):
        gbm.GBMRanker(n_estimators=1).fit(X, y)
    with pytest.raises(ValueError, match="eval_group has 2 entries but eval_set has 1"):
        gbm.GBMRanker(n_estimators=1).fit(X, y, group=group, eval_set=[(X, y)],
                                          eval_group=[group, group])
    with pytest.raises(ValueError, match="both a 'qid' column"):
        gbm.GBMRanker(n_estimators=1).fit(with_qid, y, qid=qid)


def test_ranker_follows_the_estimator_api():
    from sklearn.base import clone
    from sklearn.utils.estimator_checks import (check_no_attributes_set_in_init,
                                                check_parameters_default_constructible)

    ranker = gbm.GBMRanker(objective="rank:pairwise", lambdarank_num_pair_per_sample=5,
                           ndcg_exp_gain=False, n_estimators=7)
    check_no_attributes_set_in_init("GBMRanker", ranker)
    check_parameters_default_constructible("GBMRanker", gbm.GBMRanker())
    assert clone(ranker).get_params() == ranker.get_params()
    params = ranker._train_params()
    assert params["objective"] == "rank:pairwise"
    assert params["lambdarank_num_pair_per_sample"] == 5 and params["ndcg_exp_gain"] is False
