"""DART training (``booster="dart"``: gbm/tree/dart.py, gbm/training/dropout.py): the drop
rules and the weights against closed forms and hand cases, training whose drops are
certain, every prediction path at the tree weights, the same model on any thread count,
rank count and continued fit, eval scores at the weights of their round, early stopping,
the estimators and the parameter checks. XGBoost's dart: tests/test_dart_xgboost.py."""
import json

import numpy as np
import pytest

import gbm
from gbm.collective import ThreadGroup
from gbm.params import validate_params
from gbm.tree.dart import drop_trees, normalized_weights


def _data(n=600, seed=0, f=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f)).astype(np.float32)
    X[rng.uniform(size=X.shape) < 0.03] = np.nan
    y = np.nan_to_num(X[:, 0]) * 2 - np.nan_to_num(X[:, 1]) ** 2 + rng.normal(scale=0.3, size=n)
    return X, y


def _params(**kw):
    return validate_params(dict({"booster": "dart"}, **kw))


# --- the drop rules ----------------------------------------------------------------------

def test_uniform_drops_each_tree_with_chance_rate_drop():
    p = _params(rate_drop=0.3, random_state=4)
    counts = np.zeros(50)
    for round_ in range(2000):
        counts[drop_trees([1.0] * 50, p, round_)] += 1
    # 100,000 draws: the share's standard error is 0.0014; each tree's (2,000) 0.01
    assert abs(counts.sum() / 100_000 - 0.3) < 0.007
    assert np.abs(counts / 2000 - 0.3).max() < 0.05
    # a tree's draw is keyed by its index, not by how many trees there are
    for round_ in range(20):
        longer = drop_trees([1.0] * 80, p, round_)
        np.testing.assert_array_equal(longer[longer < 50], drop_trees([1.0] * 50, p, round_))
    other = _params(rate_drop=0.3, random_state=5)
    assert any(not np.array_equal(drop_trees([1.0] * 50, p, r), drop_trees([1.0] * 50, other, r))
               for r in range(5))


def test_skip_drop_and_one_drop():
    weights = [1.0] * 10
    always = _params(rate_drop=1.0, skip_drop=1.0, one_drop=True)
    assert all(drop_trees(weights, always, r).size == 0 for r in range(50))
    half = _params(rate_drop=1.0, skip_drop=0.5)
    skipped = [drop_trees(weights, half, r).size == 0 for r in range(2000)]
    assert abs(np.mean(skipped) - 0.5) < 0.04  # standard error 0.011
    assert all(drop_trees(weights, half, r).size in (0, 10) for r in range(50))
    one = _params(one_drop=True)  # rate_drop 0: exactly one tree, uniformly
    picks = [drop_trees(weights, one, r) for r in range(3000)]
    assert all(p.size == 1 for p in picks)
    counts = np.bincount(np.concatenate(picks), minlength=10)
    assert np.abs(counts / 3000 - 0.1).max() < 0.03  # standard error 0.0055
    assert drop_trees([], one, 3).size == 0  # nothing to drop in the first round


def test_weighted_drops_follow_the_weights():
    # chance rate_drop * n * w / sum(w): 0.25 * 4 * 1 / 1 = 1 for tree 0, 0 for the others
    p = _params(rate_drop=0.25, sample_type="weighted")
    assert all(drop_trees([1.0, 0.0, 0.0, 0.0], p, r).tolist() == [0] for r in range(100))
    one = _params(one_drop=True, sample_type="weighted")
    picks = np.concatenate([drop_trees([0.0, 0.0, 3.0, 1.0], one, r) for r in range(4000)])
    counts = np.bincount(picks, minlength=4)
    assert counts[0] == counts[1] == 0
    assert abs(counts[2] / 4000 - 0.75) < 0.03  # standard error 0.007
    # every weight 0: drawn as "uniform" (rate_drop 1: every tree)
    assert drop_trees([0.0, 0.0], _params(rate_drop=1.0, sample_type="weighted"), 0).tolist() \
        == [0, 1]


def _drops_by_the_rule(weights, p, rng):
    """XGBoost's rule written out, drawing from NumPy's generator (an oracle for the
    hashes' draws: the weights after many rounds must have the same distribution)."""
    n = len(weights)
    if n == 0 or rng.uniform() < p["skip_drop"]:
        return []
    w = np.asarray(weights)
    weighted = p["sample_type"] == "weighted"
    chance = p["rate_drop"] * n * w / w.sum() if weighted else p["rate_drop"]
    dropped = np.flatnonzero(rng.uniform(size=n) < chance)
    if dropped.size == 0 and p["one_drop"]:
        dropped = [rng.choice(n, p=w / w.sum() if weighted else None)]
    return dropped


@pytest.mark.parametrize("extra", [
    {"rate_drop": 0.1},
    {"rate_drop": 0.3, "sample_type": "weighted", "normalize_type": "forest"},
    {"rate_drop": 0.05, "skip_drop": 0.5, "one_drop": True, "sample_type": "weighted"},
])
def test_weights_after_many_rounds_have_the_rules_distribution(extra):
    """3000 fits of 20 rounds (no data: the drops depend on the weights alone): the mean
    weight and the share of trees never reweighted, from the hashes and from NumPy's
    generator, within 4 standard errors (about 0.003 and 0.005)."""
    p = _params(**extra)
    rng = np.random.default_rng(0)
    stats = {"hashes": [], "rule": []}
    for seed in range(3000):
        for kind in stats:
            weights = []
            for round_ in range(20):
                dropped = (drop_trees(weights, dict(p, random_state=seed), round_)
                           if kind == "hashes" else _drops_by_the_rule(weights, p, rng))
                weights = normalized_weights(weights, dropped, 1, 0.3, p["normalize_type"])
            stats[kind].append((np.mean(weights), np.mean(np.array(weights) == 1.0)))
    ours, rule = np.array(stats["hashes"]), np.array(stats["rule"])
    error = np.sqrt(ours.var(axis=0) / 3000 + rule.var(axis=0) / 3000)
    assert (np.abs(ours.mean(axis=0) - rule.mean(axis=0)) <= 4 * error).all(), (
        ours.mean(axis=0), rule.mean(axis=0), error)


def test_normalized_weights_closed_forms():
    eta = 0.3
    assert normalized_weights([0.5, 1.0], [], 2, eta, "tree") == [0.5, 1.0, 1.0, 1.0]
    # "tree": k = 2 dropped, scaled by k / (k + eta), new trees weigh 1 / (k + eta)
    assert normalized_weights([1.0, 0.5, 1.0], np.array([0, 2]), 2, eta, "tree") == [
        2 / 2.3, 0.5, 2 / 2.3, 1 / 2.3, 1 / 2.3]
    # "forest": the dropped and the new scaled by 1 / (1 + eta)
    assert normalized_weights([1.0, 0.5, 1.0], np.array([1]), 1, eta, "forest") == [
        1.0, 0.5 / 1.3, 1.0, 1 / 1.3]


# --- training whose drops are certain ----------------------------------------------------

def test_rate_drop_zero_and_skip_drop_one_train_the_gbtree_model():
    X, y = _data()
    plain = gbm.train({"max_depth": 3}, X, y, 6)
    for extra in ({}, {"rate_drop": 0.0}, {"skip_drop": 1.0, "rate_drop": 0.7}):
        dart = gbm.train(dict({"max_depth": 3, "booster": "dart"}, **extra), X, y, 6)
        assert json.loads(dart.to_json())["trees"] == json.loads(plain.to_json())["trees"]
        assert dart.weight_drop == [1.0] * 6
        np.testing.assert_array_equal(dart.predict(X), plain.predict(X))


@pytest.mark.parametrize("normalize_type", ["tree", "forest"])
def test_every_tree_dropped_hand_case(normalize_type):
    """rate_drop=1: every round drops every earlier tree, so its gradients are those at
    the base margin and every tree is the first one; the weights follow the closed-form
    recursion (k = the round's earlier trees)."""
    X, y = _data(seed=1)
    eta = 0.4
    model = gbm.train({"booster": "dart", "rate_drop": 1.0, "normalize_type": normalize_type,
                       "learning_rate": eta, "max_depth": 3}, X, y, 5)
    first = model.trees[0].to_dict()
    assert all(t.to_dict() == first for t in model.trees)
    weights = []
    for k in range(5):
        if k == 0:
            weights = [1.0]
        elif normalize_type == "tree":
            weights = [w * k / (k + eta) for w in weights] + [1 / (k + eta)]
        else:
            weights = [w / (1 + eta) for w in weights] + [1 / (1 + eta)]
    np.testing.assert_allclose(model.weight_drop, weights, rtol=1e-15)
    one_tree = model.trees[0].value[model.predict(X, pred_leaf=True)[:, 0]]
    np.testing.assert_allclose(model.predict(X, output_margin=True),
                               model.base_margin[0] + one_tree * sum(weights), rtol=1e-12)


def test_multiclass_rounds_normalise_with_the_learning_rate():
    """Three classes, every tree dropped: in round 1 k = 3 (the three trees of round 0),
    and each new tree weighs 1 / (k + eta) (XGBoost 3.4's rule; 3.2 used eta / 3)."""
    X, y = _data(seed=2)
    labels = np.digitize(y, [-1.0, 1.0]).astype(float)
    model = gbm.train({"booster": "dart", "rate_drop": 1.0, "objective": "multi:softprob",
                       "num_class": 3, "learning_rate": 0.3, "max_depth": 2}, X, labels, 2)
    np.testing.assert_allclose(model.weight_drop, [3 / 3.3] * 3 + [1 / 3.3] * 3, rtol=1e-15)


def test_gradients_are_taken_without_the_dropped_trees():
    """Each round's gradients see the base margin plus every tree the round did not drop,
    at its weight before the round: rounds that drop, skip or follow a drop alike (an
    objective that records its margins, against the drops ``drop_trees`` draws)."""
    X, y = _data(seed=12)
    params = {"booster": "dart", "rate_drop": 0.4, "skip_drop": 0.5, "max_depth": 3,
              "random_state": 0}
    seen, weights_before = [], [[]]

    def squared_error(margin, y_, w):
        seen.append(margin.copy())
        return margin - y_, np.ones_like(margin)

    class Weights(gbm.callback.TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            weights_before.append(list(model.weight_drop))
            return False

    model = gbm.train(params, X, y, 12, obj=squared_error, callbacks=[Weights()])
    leaves = model.predict(X, pred_leaf=True)
    kinds = set()
    for round_, margin in enumerate(seen):
        weights = weights_before[round_]
        dropped = drop_trees(weights, validate_params(params), round_).tolist()
        expected = np.full(len(y), model.base_margin[0])
        for t, w in enumerate(weights):
            if t not in dropped:
                expected += model.trees[t].value[leaves[:, t]] * w
        np.testing.assert_allclose(margin, expected, rtol=1e-12, atol=1e-12)
        kinds.add((bool(dropped), round_ > 1 and bool(drop_trees(
            weights_before[round_ - 1], validate_params(params), round_ - 1).size)))
    assert kinds == {(False, False), (False, True), (True, False), (True, True)}


# --- predictions at the weights ---------------------------------------------------------

@pytest.fixture(scope="module")
def multiclass():
    X, y = _data(seed=3)
    labels = np.digitize(y, [-1.0, 1.0]).astype(float)
    model = gbm.train({"booster": "dart", "rate_drop": 0.4, "objective": "multi:softprob",
                       "num_class": 3, "max_depth": 3, "sample_type": "weighted"}, X,
                      labels, 6)
    assert len(set(model.weight_drop)) > 3
    return model, X


def _margins_by_hand(model, X, lo=0, hi=None):
    """The base margin plus each tree's leaf value times its weight, in tree order."""
    leaves = model.predict(X, pred_leaf=True)
    margin = np.tile(model.base_margin, (X.shape[0], 1))
    for t in range(lo, len(model.trees) if hi is None else hi):
        value = model.trees[t].value[leaves[:, t]] * model.weight_drop[t]
        margin[:, model.tree_group[t]] += value
    return margin


def test_predictions_add_each_tree_at_its_weight(multiclass, tmp_path):
    model, X = multiclass
    np.testing.assert_array_equal(model.predict(X, output_margin=True),
                                  _margins_by_hand(model, X))
    lo, hi = model.iteration_indptr[2], model.iteration_indptr[5]
    ranged = model.predict(X, output_margin=True, iteration_range=(2, 5))
    expected = _margins_by_hand(model, X, lo, hi)
    np.testing.assert_array_equal(ranged, expected)
    sliced = model[2:5]
    assert sliced.weight_drop == model.weight_drop[lo:hi]
    np.testing.assert_array_equal(sliced.predict(X, output_margin=True), expected)
    path = tmp_path / "sliced.json"
    sliced.save_model(path)
    np.testing.assert_array_equal(gbm.Booster.load_model(path).predict(X), sliced.predict(X))
    contribs = model.predict(X, pred_contribs=True)
    np.testing.assert_allclose(contribs.sum(axis=2), model.predict(X, output_margin=True),
                               rtol=1e-9, atol=1e-9)
    unweighted = gbm.Booster.from_json(model.to_json())
    unweighted.set_tree_weights([1.0] * len(model.trees))
    np.testing.assert_array_equal(model.predict(X, pred_leaf=True),
                                  unweighted.predict(X, pred_leaf=True))
    # a tree's contributions scale with its weight (TreeSHAP is linear in the leaf values)
    halved = gbm.Booster.from_json(model.to_json())
    halved.set_tree_weights([w / 2 for w in model.weight_drop])
    np.testing.assert_allclose(halved.predict(X, pred_contribs=True)[..., :-1],
                               contribs[..., :-1] / 2, rtol=1e-12, atol=1e-15)


def test_model_file_round_trip(multiclass, tmp_path):
    model, X = multiclass
    model.save_model(tmp_path / "dart.json")
    loaded = gbm.Booster.load_model(tmp_path / "dart.json")
    assert loaded.weight_drop == model.weight_drop
    assert loaded.to_json() == model.to_json()
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    d = json.loads(model.to_json())
    assert d["params"]["booster"] == "dart" and d["params"]["sample_type"] == "weighted"
    assert "normalize_type" not in d["params"]  # at its default: not written
    plain = json.loads(gbm.train({"max_depth": 2}, X, np.nan_to_num(X[:, 0]), 2).to_json())
    assert "weight_drop" not in plain and "booster" not in plain["params"]


# --- the same model everywhere ------------------------------------------------------------

DETERMINISM = {"booster": "dart", "rate_drop": 0.3, "skip_drop": 0.2, "one_drop": True,
               "subsample": 0.8, "colsample_bynode": 0.8, "max_depth": 4, "random_state": 3}


def test_same_model_on_one_and_two_threads():
    X, y = _data(5000, seed=4, f=6)
    evals = [(X[:500], y[:500], "valid")]
    one = gbm.train(dict(DETERMINISM, n_jobs=1), X, y, 8, evals=evals)
    two = gbm.train(dict(DETERMINISM, n_jobs=2), X, y, 8, evals=evals)
    assert one.to_json() == two.to_json()
    assert one.evals_result == two.evals_result
    assert min(one.weight_drop) < 1.0


def test_same_model_on_two_ranks():
    X, y = _data(seed=5)
    local = gbm.train(DETERMINISM, X, y, 6)
    cut = 250

    def rank_fn(c):
        lo, hi = (0, cut) if c.rank == 0 else (cut, len(y))
        return gbm.train(DETERMINISM, X[lo:hi], y[lo:hi], 6, collective=c,
                         row_ids=np.arange(lo, hi))

    for booster in ThreadGroup(2).run(rank_fn):
        assert booster.to_json() == local.to_json()


@pytest.mark.parametrize("with_offset", [False, True])
def test_ten_then_five_rounds_equal_fifteen(tmp_path, with_offset):
    """The drops are keyed by the round and the weights are in the model, so a continued
    fit draws what the whole fit drew; its first round computes the margins again, so they
    are the whole fit's bits (split after a round that dropped trees or not, and before
    one that drops or not: with these settings rounds 7 and 11 drop, 8 and 10 do not)."""
    X, y = _data(seed=6)
    offset = np.random.default_rng(6).normal(size=len(y)) if with_offset else None
    params = dict(DETERMINISM, sample_type="weighted", skip_drop=0.5)
    evals = [(X[:100], y[:100], "valid")]
    once = gbm.train(params, X, y, 15, base_margin=offset, evals=evals)
    for split in (8, 10, 11):
        first = gbm.train(params, X, y, split, base_margin=offset)
        first.save_model(tmp_path / "first.json")
        for init in (first, tmp_path / "first.json"):
            continued = gbm.train(params, X, y, 15 - split, init_model=init,
                                  base_margin=offset, evals=evals)
            assert continued.to_json() == once.to_json(), split
            np.testing.assert_allclose(continued.evals_result["valid"]["rmse"],
                                       once.evals_result["valid"]["rmse"][split:], rtol=1e-12)


def test_continuing_across_boosters():
    X, y = _data(seed=7)
    gbtree = gbm.train({"max_depth": 3}, X, y, 3)
    dart = gbm.train({"booster": "dart", "rate_drop": 0.5, "max_depth": 3}, X, y, 3,
                     init_model=gbtree)
    assert dart.weight_drop[:3] != [1.0] * 3 or dart.weight_drop[3:] != [1.0] * 3
    assert [t.to_dict() for t in dart.trees[:3]] == [t.to_dict() for t in gbtree.trees]
    with pytest.raises(ValueError, match="init_model is a dart model .* booster='dart'"):
        gbm.train({"max_depth": 3}, X, y, 1, init_model=dart)


# --- eval sets, early stopping, estimators ----------------------------------------------

def test_each_rounds_eval_score_is_the_model_of_that_round():
    """The eval margins are kept at the weights of every round (computed again after a
    round that changes earlier trees' weights): each round's score is the metric of the
    model's predictions right after that round."""
    X, y = _data(seed=8)
    Xv, yv = _data(300, seed=9)
    seen = []

    class Predict(gbm.callback.TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            seen.append(np.sqrt(np.mean((model.predict(Xv) - yv) ** 2)))
            return False

    model = gbm.train({"booster": "dart", "rate_drop": 0.5, "max_depth": 3}, X, y, 10,
                      evals=[(Xv, yv, "valid")], callbacks=[Predict()])
    np.testing.assert_allclose(model.evals_result["valid"]["rmse"], seen, rtol=1e-12)


def test_early_stopping_and_the_estimators():
    X, y = _data(800, seed=10)
    Xv, yv = _data(300, seed=11)
    params = {"booster": "dart", "rate_drop": 0.2, "max_depth": 4, "learning_rate": 0.5,
              "random_state": 2}
    booster = gbm.train(params, X, y, 60, evals=[(Xv, yv, "valid")], early_stopping_rounds=3)
    assert booster.best_iteration is not None
    assert booster.num_boosted_rounds == booster.best_iteration + 4
    scores = booster.evals_result["valid"]["rmse"]
    assert booster.best_score == min(scores) == scores[booster.best_iteration]
    est = gbm.GBMRegressor(n_estimators=60, max_depth=4, learning_rate=0.5, random_state=2,
                           booster="dart", rate_drop=0.2, early_stopping_rounds=3)
    est.fit(X, y, eval_set=[(Xv, yv)])
    fitted = json.loads(est.get_booster().to_json())
    trained = json.loads(booster.to_json())
    for key in ("trees", "weight_drop", "best_iteration", "base_margin"):
        assert fitted[key] == trained[key], key
    np.testing.assert_array_equal(est.predict(Xv), booster.predict(
        Xv, iteration_range=(0, booster.best_iteration + 1)))
    labels = (y > 0).astype(int)
    clf = gbm.GBMClassifier(n_estimators=5, max_depth=3, booster="dart", one_drop=True,
                            normalize_type="forest").fit(X, labels)
    same = gbm.train({"objective": "binary:logistic", "max_depth": 3, "booster": "dart",
                      "one_drop": True, "normalize_type": "forest"}, X, labels, 5)
    np.testing.assert_array_equal(clf.predict_proba(X)[:, 1], same.predict(X))


# --- parameter checks -----------------------------------------------------------------------

@pytest.mark.parametrize("params, message", [
    ({"booster": "dart", "rate_drop": 1.5}, "rate_drop must be <= 1, got 1.5"),
    ({"booster": "dart", "rate_drop": -0.1}, "rate_drop must be >= 0"),
    ({"booster": "dart", "skip_drop": 2}, "skip_drop must be <= 1"),
    ({"booster": "dart", "one_drop": 2}, "one_drop must be True or False"),
    ({"booster": "dart", "sample_type": "random"}, "sample_type must be one of"),
    ({"booster": "dart", "normalize_type": "trees"}, "normalize_type must be one of"),
    ({"booster": "gbdt"}, "booster must be one of"),
    ({"booster": "gblinear"}, "booster='gblinear' is not a tree booster"),
    ({"rate_drop": 0.1}, "rate_drop=0.1 applies to booster='dart' only"),
    ({"one_drop": True}, "one_drop=True applies to booster='dart' only"),
])
def test_bad_parameters_are_named(params, message):
    X, y = _data(50)
    with pytest.raises((ValueError, TypeError), match=message):
        gbm.train(params, X, y, 1)
    with pytest.raises((ValueError, TypeError), match=message):
        gbm.GBMRegressor(n_estimators=1, **params).fit(X, y)
