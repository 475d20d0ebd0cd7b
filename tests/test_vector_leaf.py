"""Vector-leaf trees (``multi_strategy="multi_output_tree"``, gbm.tree.vector_leaf): the
k-channel kernels against their reference twins, the split gain against a hand-computed
oracle and XGBoost's rules, parity with xgboost's multi_output_tree on exact bins, and
the model's life cycle (files, threads, continued training, predictions of every kind)."""
import numpy as np
import pytest

import gbm
from gbm.kernels.cpu import vector_leaf as cpu
from gbm.kernels.reference import vector_leaf as ref
from tests.support.vector_leaf_cases import evaluate_splits, random_case

VL = {"multi_strategy": "multi_output_tree"}




@pytest.mark.parametrize("seed", range(6))
def test_histogram_kernel_matches_reference(seed):
    rng = np.random.default_rng(seed)
    bins, gpair, rows, starts, ends, offsets = random_case(rng, k=1 + seed % 4)
    shape = (starts.shape[0], int(offsets[-1]), gpair.shape[1], 2)
    fast, slow = np.full(shape, -7, np.int64), np.empty(shape, np.int64)
    cpu.build_vector_histograms(bins, gpair, rows, starts, ends, offsets, fast)
    ref.build_vector_histograms(bins, gpair, rows, starts, ends, offsets, slow)
    np.testing.assert_array_equal(fast, slow)
    # every node's histogram of each feature sums to the node's rows' sums (an oracle)
    for node in range(starts.shape[0]):
        total = gpair[rows[starts[node]:ends[node]]].sum(axis=0)
        for f in range(bins.shape[0]):
            np.testing.assert_array_equal(fast[node, offsets[f]:offsets[f + 1]].sum(axis=0), total)


@pytest.mark.parametrize("n_rows, n_features, n_nodes, k", [
    (1200, 21, 1, 8), (1500, 50, 5, 2), (700, 9, 3, 1), (900, 3, 7, 5)])
def test_histogram_kernel_blocks_and_chunks_match_reference(n_rows, n_features, n_nodes, k):
    # the kernel cuts a node's features into blocks and its rows into chunks of 256: nodes
    # of several chunks, block counts that do not divide the features, uint16 bins above
    # 255, every other node built alone (a level's smaller children), an empty node
    rng = np.random.default_rng(n_rows + n_features)
    bins, gpair, rows, starts, ends, offsets = random_case(rng, n_rows, n_features, k,
                                                           n_nodes)
    wide = bins.astype(np.uint16)
    wide[0] = rng.integers(0, 300, n_rows)
    offsets = offsets.copy()
    offsets[1:] += 300 - (offsets[1] - offsets[0])
    for starts_, ends_ in ((starts, ends), (starts[::2], ends[::2]),
                           (np.append(starts, 5), np.append(ends, 5))):
        shape = (starts_.shape[0], int(offsets[-1]), k, 2)
        fast, slow = np.full(shape, -7, np.int64), np.empty(shape, np.int64)
        cpu.build_vector_histograms(wide, gpair, rows, starts_, ends_, offsets, fast)
        ref.build_vector_histograms(wide, gpair, rows, starts_, ends_, offsets, slow)
        np.testing.assert_array_equal(fast, slow)
        for node in range(starts_.shape[0]):  # each feature's bins sum to the node's rows'
            total = gpair[rows[starts_[node]:ends_[node]]].sum(axis=0)
            for f in range(n_features):
                np.testing.assert_array_equal(
                    fast[node, offsets[f]:offsets[f + 1]].sum(axis=0), total)


@pytest.mark.parametrize("seed", range(8))
def test_split_kernel_matches_reference(seed):
    rng = np.random.default_rng(100 + seed)
    k = 1 + seed % 3
    bins, gpair, rows, starts, ends, offsets = random_case(rng, k=k, missing=seed % 2 == 0)
    hist = np.empty((starts.shape[0], int(offsets[-1]), k, 2), np.int64)
    ref.build_vector_histograms(bins, gpair, rows, starts, ends, offsets, hist)
    sums = hist[:, offsets[0]:offsets[1]].sum(axis=1)
    mask = (rng.random((starts.shape[0], bins.shape[0])) < 0.8).astype(np.uint8)
    scales = np.ldexp(1.0, rng.integers(4, 8, (k, 2))).astype(np.float64)
    split_params = np.array([[1.0, 0.0, 0.0, 1.0], [0.5, 2.0, 0.0, 0.0], [1.0, 0.5, 0.7, 3.0],
                             [0.0, 0.0, 0.0, 40.0]][seed % 4])
    fast = evaluate_splits(cpu, hist, offsets, sums, mask, scales, split_params)
    slow = evaluate_splits(ref, hist, offsets, sums, mask, scales, split_params)
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a, b)
    weights_fast, weights_slow = np.empty((sums.shape[0], k)), np.empty((sums.shape[0], k))
    cpu.vector_node_weights(sums, scales, split_params, weights_fast)
    ref.vector_node_weights(sums, scales, split_params, weights_slow)
    np.testing.assert_array_equal(weights_fast, weights_slow)


@pytest.mark.parametrize("seed", range(6))
def test_split_kernel_many_bins_matches_reference(seed):
    # features of up to 70 bins (some empty, one of a single bin), missing values or none,
    # k up to 8: the uncapped search sums every candidate's gain at once, output by output;
    # the capped one (max_delta_step > 0) candidate by candidate: both as the twin
    rng = np.random.default_rng(300 + seed)
    k = (1, 3, 8)[seed % 3]
    n_rows, n_features = 900, 5
    n_bins = np.array([70, 1, 33, 2, 50])
    offsets = np.concatenate(([0], np.cumsum(n_bins + 1))).astype(np.int32)
    bins = np.empty((n_features, n_rows), np.uint8)
    for f in range(n_features):
        used = rng.choice(n_bins[f], max(1, n_bins[f] // 2), replace=False)  # empty bins
        bins[f] = rng.choice(used, n_rows)
        if seed % 2 == 0:
            bins[f, rng.random(n_rows) < 0.1] = n_bins[f]  # missing
    gpair = np.empty((n_rows, k, 2), np.int64)
    gpair[:, :, 0] = rng.integers(-1000, 1000, (n_rows, k))
    gpair[:, :, 1] = rng.integers(0, 500, (n_rows, k))
    rows = rng.permutation(n_rows).astype(np.int32)
    starts, ends = np.array([0, 300, 310], np.int64), np.array([300, 310, 900], np.int64)
    hist = np.empty((3, int(offsets[-1]), k, 2), np.int64)
    ref.build_vector_histograms(bins, gpair, rows, starts, ends, offsets, hist)
    sums = hist[:, offsets[0]:offsets[1]].sum(axis=1)
    mask = np.ones((3, n_features), np.uint8)
    mask[1, 0] = 0
    scales = np.ldexp(1.0, rng.integers(4, 8, (k, 2))).astype(np.float64)
    for split_params in ([1.0, 0.0, 0.0, 1.0], [0.0, 3.0, 0.0, 0.0], [0.5, 0.5, 0.0, 200.0],
                         [1.0, 0.5, 0.7, 3.0]):
        split_params = np.array(split_params)
        fast = evaluate_splits(cpu, hist, offsets, sums, mask, scales, split_params)
        slow = evaluate_splits(ref, hist, offsets, sums, mask, scales, split_params)
        for a, b in zip(fast, slow):
            np.testing.assert_array_equal(a, b)
        assert (fast[1] >= 0).any()  # some node found a split


def _hand_gain(left, right, lam):
    """Sum over outputs of G_L^2/(H_L+lam) + G_R^2/(H_R+lam) - G^2/(H+lam): the closed
    form (no L1 term, no cap), written out here, independent of split_math."""
    total = 0.0
    for (gl, hl), (gr, hr) in zip(left, right):
        total += gl * gl / (hl + lam) + gr * gr / (hr + lam) - (gl + gr) ** 2 / (hl + hr + lam)
    return total


def test_gain_is_the_sum_over_outputs_hand_case():
    # one feature with 3 value bins (+ missing), one node, 2 outputs; scales 1
    hist = np.zeros((1, 4, 2, 2), np.int64)
    hist[0, 0] = [[-6, 2], [4, 2]]    # bin 0: output 0 (g, h), output 1 (g, h)
    hist[0, 1] = [[-2, 3], [-3, 3]]
    hist[0, 2] = [[9, 4], [-5, 4]]
    offsets = np.array([0, 4], np.int32)
    sums = hist.sum(axis=1)
    scales = np.ones((2, 2))
    gain, feature, split_bin, left, left_sums = evaluate_splits(
        cpu, hist, offsets, sums, np.ones((1, 1), np.uint8), scales,
        np.array([1.0, 0.0, 0.0, 0.0]))
    candidates = {0: _hand_gain([(-6, 2), (4, 2)], [(7, 7), (-8, 7)], 1.0),
                  1: _hand_gain([(-8, 5), (1, 5)], [(9, 4), (-5, 4)], 1.0)}
    best = max(candidates, key=candidates.get)
    assert (feature[0], split_bin[0], left[0]) == (0, best, 0)
    assert gain[0] == pytest.approx(candidates[best], rel=1e-12)
    np.testing.assert_array_equal(left_sums[0], hist[0, :best + 1].sum(axis=0))


def _one_split_case():
    # one feature, 2 value bins (+ an empty missing slot), one node, 2 outputs; scales 1.
    # Left child: output 0 (g -4, h 3), output 1 (g 2, h 1).
    hist = np.zeros((1, 3, 2, 2), np.int64)
    hist[0, 0] = [[-4, 3], [2, 1]]
    hist[0, 1] = [[5, 10], [-6, 10]]
    return (hist, np.array([0, 3], np.int32), hist.sum(axis=1), np.ones((1, 1), np.uint8),
            np.ones((2, 2)))


@pytest.mark.parametrize("kernels", [cpu, ref])
@pytest.mark.parametrize("mcw, counted_left", [(0.0, (True, True)), (2.0, (True, False)),
                                               (2.5, (True, False)), (3.5, (False, False))])
def test_min_child_weight_zeroes_each_lighter_output(kernels, mcw, counted_left):
    # XGBoost 3.2 (MultiCalcSplitGain, evaluate_splits.h; CalcWeight, param.h): an output
    # whose hessian in a node is below min_child_weight has weight 0 there and adds 0 to
    # the gain; no split is refused for it. Parent outputs: h 13 and 11; right: 10 and 10.
    # At 2.5 the mean rule of XGBoost 3.4 (mean 2 < 2.5) would refuse this split, at 3.5
    # no output of the left child counts and the split is still taken.
    lam = 1.0
    gain, feature, split_bin, left, left_sums = evaluate_splits(
        kernels, *_one_split_case(), np.array([lam, 0.0, 0.0, mcw]))
    left_terms = [16 / (3 + lam), 4 / (1 + lam)]
    expected = (sum(t for t, c in zip(left_terms, counted_left) if c)
                + 25 / (10 + lam) + 36 / (10 + lam) - 1 / (13 + lam) - 16 / (11 + lam))
    assert (feature[0], split_bin[0], left[0]) == (0, 0, 0)
    assert gain[0] == pytest.approx(expected, rel=1e-12)
    weights = np.empty((1, 2))
    kernels.vector_node_weights(left_sums, np.ones((2, 2)), np.array([lam, 0.0, 0.0, mcw]),
                                weights)
    np.testing.assert_allclose(weights[0], [w if c else 0.0 for w, c in
                                            zip([4 / (3 + lam), -2 / (1 + lam)], counted_left)],
                               rtol=1e-15)


def _exact_bins_data(n=1500, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 16, (n, 5)).astype(np.float32)  # 16 values: every value its own bin
    Y = np.stack([X[:, 0] * 0.2 + X[:, 1] * 0.1 + rng.normal(size=n) * 0.3,
                  np.sin(X[:, 2] / 3) + rng.normal(size=n) * 0.2, (X[:, 3] > 10) * 1.0], 1)
    return X, Y


@pytest.mark.parametrize("params", [{"max_depth": 4}, {"max_depth": 3, "reg_alpha": 0.5},
                                    {"max_depth": 5, "gamma": 1.0, "reg_lambda": 3.0}])
def test_same_model_as_xgboost_multi_output_tree(params):
    xgb = pytest.importorskip("xgboost")
    X, Y = _exact_bins_data()
    p = dict(params, learning_rate=0.3, base_score=0.5)
    theirs = xgb.train(dict(p, tree_method="hist", **VL), xgb.DMatrix(X, Y), 8)
    ours = gbm.train(dict(p, **VL), X, Y, 8)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(xgb.DMatrix(X)), atol=2e-5)


@pytest.mark.parametrize("mcw", [0.25, 1.0, 4.0, 10.0, 30.0])
def test_min_child_weight_matches_xgboost_multi_output_tree(mcw):
    # each output's weight and gain are 0 where its hessian is below min_child_weight
    # (XGBoost 3.2's rule): with the mean hessian over outputs instead, max |diff| was 0.14
    # at min_child_weight 1 (depth 5) and 0.06 for a single depth-4 tree
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(3)
    X = rng.integers(0, 12, (1200, 4)).astype(np.float32)
    y = ((X[:, 0] + X[:, 1] + rng.integers(0, 6, 1200)) % 4).astype(np.float64)
    p = {"objective": "multi:softprob", "num_class": 4, "max_depth": 5, "base_score": 0.5,
         "min_child_weight": mcw}
    theirs = xgb.train(dict(p, tree_method="hist", **VL), xgb.DMatrix(X, y), 6)
    ours = gbm.train(dict(p, **VL), X, y, 6)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(xgb.DMatrix(X)), atol=2e-6)


def test_min_child_weight_with_sample_weights_matches_xgboost():
    xgb = pytest.importorskip("xgboost")
    X, Y = _exact_bins_data()
    w = np.random.default_rng(5).uniform(0.2, 2.0, X.shape[0])
    p = {"max_depth": 6, "min_child_weight": 30.0, "learning_rate": 0.3, "base_score": 0.5}
    theirs = xgb.train(dict(p, tree_method="hist", **VL), xgb.DMatrix(X, Y, weight=w), 8)
    ours = gbm.train(dict(p, **VL), X, Y, 8, sample_weight=w)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(xgb.DMatrix(X)), atol=2e-5)


def test_softprob_matches_xgboost_multi_output_tree():
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(3)
    X = rng.integers(0, 12, (1200, 4)).astype(np.float32)
    y = ((X[:, 0] + X[:, 1] + rng.integers(0, 6, 1200)) % 4).astype(np.float64)
    p = {"objective": "multi:softprob", "num_class": 4, "max_depth": 3, "base_score": 0.5}
    theirs = xgb.train(dict(p, tree_method="hist", **VL), xgb.DMatrix(X, y), 6)
    ours = gbm.train(dict(p, **VL), X, y, 6)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(xgb.DMatrix(X)), atol=2e-5)


@pytest.fixture(scope="module")
def multilabel():
    rng = np.random.default_rng(5)
    X = rng.random((600, 6)).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = np.nan
    Y = (rng.random((600, 3)) < np.nan_to_num(X[:, :3], nan=0.5)).astype(np.float64)
    return X, Y


def test_one_tree_per_round_with_a_value_per_output(multilabel):
    X, Y = multilabel
    booster = gbm.train(dict(VL, objective="binary:logistic", max_depth=3), X, Y, 4)
    assert len(booster.trees) == 4 and booster.iteration_indptr == [0, 1, 2, 3, 4]
    tree = booster.trees[0]
    assert tree.value.shape == (tree.n_nodes, 3)
    margin = booster.predict(X, output_margin=True)
    assert margin.shape == (600, 3)
    np.testing.assert_allclose(booster.predict(X), 1 / (1 + np.exp(-margin)), rtol=1e-12)
    # the margins are the base margin plus each tree's leaf vector, row by row
    leaves = booster.predict(X, pred_leaf=True)
    assert leaves.shape == (600, 4)
    expected = np.tile(booster.base_margin, (600, 1))
    for t, tree in enumerate(booster.trees):
        expected = expected + tree.value[leaves[:, t]]
    np.testing.assert_array_equal(margin, expected)


def test_contributions_per_output_sum_to_margins(multilabel):
    X, Y = multilabel
    booster = gbm.train(dict(VL, objective="binary:logistic", max_depth=3), X, Y, 3)
    contribs = booster.predict(X[:50], pred_contribs=True)
    assert contribs.shape == (50, 3, 7)
    np.testing.assert_allclose(contribs.sum(axis=-1),
                               booster.predict(X[:50], output_margin=True), atol=1e-9)


def test_model_file_round_trip_and_threads(multilabel, tmp_path):
    X, Y = multilabel
    p = dict(VL, objective="binary:logistic", max_depth=4, subsample=0.8,
             colsample_bynode=0.7)
    one = gbm.train(dict(p, n_jobs=1), X, Y, 5)
    two = gbm.train(dict(p, n_jobs=2), X, Y, 5)
    assert one.to_json() == two.to_json()
    one.save_model(tmp_path / "m.json")
    loaded = gbm.Booster.load_model(tmp_path / "m.json")
    assert loaded.to_json() == one.to_json()
    np.testing.assert_array_equal(loaded.predict(X), one.predict(X))


def test_continued_training_is_the_uninterrupted_fit(multilabel):
    X, Y = multilabel
    p = dict(VL, objective="binary:logistic", max_depth=3)
    whole = gbm.train(p, X, Y, 5)
    first = gbm.train(p, X, Y, 3)
    continued = gbm.train(p, X, Y, 2, xgb_model=first)
    assert continued.to_json() == whole.to_json()
    with pytest.raises(ValueError, match="multi_strategy"):
        gbm.train({"objective": "binary:logistic"}, X, Y, 1, xgb_model=first)


def test_eval_sets_and_early_stopping_multiclass():
    rng = np.random.default_rng(7)
    X = rng.random((500, 5)).astype(np.float32)
    y = (X[:, 0] * 3 + rng.random(500) * 0.5).astype(int) % 3
    p = dict(VL, objective="multi:softprob", num_class=3, max_depth=3, learning_rate=0.5)
    result = {}
    booster = gbm.train(p, X[:400], y[:400], 50, evals=[(X[400:], y[400:], "valid")],
                        early_stopping_rounds=3, evals_result=result)
    scores = result["valid"]["mlogloss"]
    assert booster.best_iteration == int(np.argmin(scores))
    assert len(scores) == booster.num_boosted_rounds()
    # the scores are those of the model's predictions
    proba = booster.predict(X[400:])
    expected = -np.mean(np.log(np.clip(proba[np.arange(100), y[400:]], 1e-15, 1)))
    assert scores[-1] == pytest.approx(expected, rel=1e-9)


def test_feature_importance_and_dumps():
    X, Y = _exact_bins_data(400)
    booster = gbm.train(dict(VL, max_depth=2), X, Y, 2)
    score = booster.get_score(importance_type="weight")
    assert sum(score.values()) == sum(t.n_nodes - t.n_leaves for t in booster.trees)
    text = booster.get_dump()[0]
    assert "leaf=[" in text and text.count(", ") >= 2 * booster.trees[0].n_leaves
    import json
    node = json.loads(booster.get_dump(dump_format="json")[0])
    while "children" in node:
        node = node["children"][0]
    assert len(node["leaf"]) == 3


@pytest.mark.parametrize("params, what", [
    ({"booster": "dart"}, "booster='dart'"),
])
def test_unsupported_combinations_are_refused(params, what):
    X, Y = _exact_bins_data(200)
    with pytest.raises(NotImplementedError, match=what):
        gbm.train(dict(VL, **params), X, Y, 1)


def test_estimators_pass_multi_strategy():
    X, Y = _exact_bins_data(300)
    model = gbm.GBMRegressor(n_estimators=3, max_depth=2, multi_strategy="multi_output_tree")
    model.fit(X, Y)
    assert len(model.get_booster().trees) == 3
    assert model.predict(X).shape == (300, 3)


def _three_kinds():
    rng = np.random.default_rng(11)
    X = rng.random((400, 5)).astype(np.float32)
    Y = np.stack([X[:, 0] * 2, np.sin(3 * X[:, 1]), X[:, 2]], 1)
    X[rng.random(X.shape) < 0.05] = np.nan
    y = rng.integers(0, 3, 400)
    labels = (rng.random((400, 3)) < 0.4).astype(float)
    return X, [({}, Y), ({"objective": "multi:softprob", "num_class": 3}, y),
               ({"objective": "binary:logistic"}, labels)]


def test_xgboost_export_loads_in_xgboost_and_predicts_the_same(tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, cases = _three_kinds()
    for params, y in cases:
        ours = gbm.train(dict(params, max_depth=3, **VL), X, y, 4)
        ours.save_model(tmp_path / "m.json", format="xgboost")
        theirs = xgb.Booster(model_file=str(tmp_path / "m.json"))
        for margin in (False, True):
            np.testing.assert_allclose(
                theirs.predict(xgb.DMatrix(X), output_margin=margin),
                ours.predict(X, output_margin=margin), atol=1e-6)
        back = gbm.Booster.from_xgboost(str(tmp_path / "m.json"))
        assert back.vector_leaf and len(back.trees) == 4
        np.testing.assert_allclose(back.predict(X), ours.predict(X), atol=1e-6)


def test_xgboost_multi_output_tree_model_imports():
    xgb = pytest.importorskip("xgboost")
    X, cases = _three_kinds()
    for params, y in cases:
        theirs = xgb.train(dict(params, tree_method="hist", max_depth=4, **VL),
                           xgb.DMatrix(X, y), 5)
        ours = gbm.Booster.from_xgboost(theirs)
        assert ours.vector_leaf and len(ours.trees) == 5
        assert ours.trees[0].value.shape[1] == 3
        np.testing.assert_allclose(ours.predict(X), theirs.predict(xgb.DMatrix(X)), atol=1e-6)
        np.testing.assert_array_equal(ours.predict(X, pred_leaf=True).shape, (400, 5))


def test_xgboost_import_refuses_a_bad_leaf_index():
    xgb = pytest.importorskip("xgboost")
    import json
    X, cases = _three_kinds()
    theirs = xgb.train(dict(tree_method="hist", max_depth=2, **VL), xgb.DMatrix(X, cases[0][1]), 1)
    d = json.loads(theirs.save_raw("json"))
    tree = d["learner"]["gradient_booster"]["model"]["trees"][0]
    leaf = tree["left_children"].index(-1)
    tree["right_children"][leaf] = 99
    with pytest.raises(ValueError, match="right_children"):
        gbm.Booster.from_xgboost(d)


def test_children_histograms_kernel_matches_reference():
    rng = np.random.default_rng(21)
    parent = rng.integers(-50, 50, (3, 7, 2, 2))
    built = rng.integers(-50, 50, (3, 7, 2, 2))
    right = np.array([0, 1, 1], np.uint8)
    fast, slow = np.empty((6, 7, 2, 2), np.int64), np.empty((6, 7, 2, 2), np.int64)
    cpu.vector_children_histograms(parent, built, right, fast)
    ref.vector_children_histograms(parent, built, right, slow)
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(fast[0] + fast[1], parent[0])  # siblings sum to the parent
    np.testing.assert_array_equal(fast[3], built[1])  # pair 1's smaller child is its right


def test_children_histograms_kernel_long_pairs_match_reference():
    # a pair longer than one subtraction task (2**14 cells): several tasks a pair
    rng = np.random.default_rng(22)
    parent = rng.integers(-2**40, 2**40, (3, 1100, 8, 2))
    built = rng.integers(-2**40, 2**40, (3, 1100, 8, 2))
    right = np.array([1, 0, 1], np.uint8)
    fast, slow = np.full((6, 1100, 8, 2), -7, np.int64), np.empty((6, 1100, 8, 2), np.int64)
    cpu.vector_children_histograms(parent, built, right, fast)
    ref.vector_children_histograms(parent, built, right, slow)
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(fast[2] + fast[3], parent[1])
    np.testing.assert_array_equal(fast[5], built[2])


def test_quantize_vector_pairs_matches_reference_and_one_output_quantizer():
    # oracle: the one-output quantizer (kernels.cpu.quantize_gradients) on each output
    from gbm.kernels.cpu import quantize_gradients
    rng = np.random.default_rng(23)
    k, n = 5, 20_000  # several row blocks of 8192
    grad, hess = rng.normal(size=(k, n)) * 3.0, rng.random((k, n))
    grad[1, 7], hess[2, 9] = 0.5 * 2.0 ** -30, 2.5 * 2.0 ** -20  # ties: rint to even
    scales = np.ldexp(1.0, rng.integers(20, 40, (k, 2))).astype(np.float64)
    scales[1, 0], scales[2, 1] = 2.0 ** 30, 2.0 ** 20  # those two products: 0.5 and 2.5
    fast, slow = np.full((n, k, 2), -7, np.int64), np.empty((n, k, 2), np.int64)
    cpu.quantize_vector_pairs(grad, hess, scales, fast)
    ref.quantize_vector_pairs(grad, hess, scales, slow)
    np.testing.assert_array_equal(fast, slow)
    for j in range(k):
        one = np.empty((n, 2), np.int64)
        quantize_gradients(grad[j], hess[j], scales[j], one)
        np.testing.assert_array_equal(fast[:, j], one)
    assert fast[7, 1, 0] == 0 and fast[9, 2, 1] == 2


def test_projection_is_a_function_of_the_seed_only():
    from gbm.tree.projection import project_gradients, projection_for, sketch
    columns, signs, d = sketch(7, 100, 8)
    again = sketch(7, 100, 8)
    np.testing.assert_array_equal(columns, again[0])
    np.testing.assert_array_equal(signs, again[1])
    assert d == 8 and set(np.unique(columns)) <= set(range(8)) and len(np.unique(columns)) == 8
    assert not np.array_equal(columns, sketch(8, 100, 8)[0])
    # each output goes to one column with its sign: the projected gradients, by hand
    rng = np.random.default_rng(0)
    grad, hess = rng.normal(size=(100, 30)), rng.random((100, 30))
    g, h = project_gradients(grad, hess, (columns, signs, d))
    for c in range(8):
        at = columns == c
        np.testing.assert_allclose(g[c], (signs[at, None] * grad[at]).sum(axis=0), atol=1e-12)
        np.testing.assert_allclose(h[c], hess[at].sum(axis=0), atol=1e-12)
    p = gbm.params.validate_params({"multi_strategy": "multi_output_tree"})
    assert projection_for(p, 64) is None and projection_for(p, 65) is not None  # "auto"
    assert projection_for(dict(p, gradient_projection=False), 500) is None
    assert projection_for(dict(p, gradient_projection=True, projection_dim=20), 20) is None


def test_projected_model_same_on_threads_and_leaves_from_every_output():
    rng = np.random.default_rng(9)
    X = rng.random((800, 6)).astype(np.float32)
    y = (X[:, 0] * 12).astype(int) % 12
    p = dict(VL, objective="multi:softprob", num_class=12, max_depth=3,
             gradient_projection=True, projection_dim=3)
    one = gbm.train(dict(p, n_jobs=1), X, y, 4)
    two = gbm.train(dict(p, n_jobs=2), X, y, 4)
    assert one.to_json() == two.to_json()
    assert one.trees[0].value.shape[1] == 12
    # leaf values are each output's weight from all its rows' gradients: at the first
    # round (every margin equal) a leaf's value for class c tracks the share of c there
    leaves = one.predict(X, pred_leaf=True)[:, 0]
    tree = one.trees[0]
    for leaf in np.unique(leaves):
        share = np.bincount(y[leaves == leaf], minlength=12) / (leaves == leaf).sum()
        assert np.argmax(tree.value[leaf]) == np.argmax(share)
    plain = gbm.train(dict(p, gradient_projection=False), X, y, 4)
    assert plain.to_json() != one.to_json()


def test_projected_leaf_values_are_every_outputs_weights():
    # oracle: squared error from margin 0 has g = -y, h = 1, so each output's leaf value is
    # learning_rate * sum(y) / (n + reg_lambda) over the leaf's rows, every output's own,
    # however the projected search cut the rows (the full pairs and the projected ones are
    # held side by side in the round's memory: neither may overwrite the other)
    rng = np.random.default_rng(31)
    X = rng.random((600, 5)).astype(np.float32)
    Y = rng.normal(size=(600, 12)) + 3.0 * X[:, :1]
    p = dict(VL, gradient_projection=True, projection_dim=3, max_depth=3, base_score=0.0,
             learning_rate=0.3)
    booster = gbm.train(p, X, Y, 1)
    leaves = booster.predict(X, pred_leaf=True)[:, 0]
    tree = booster.trees[0]
    assert np.unique(leaves).size > 2
    for leaf in np.unique(leaves):
        rows = leaves == leaf
        expected = 0.3 * Y[rows].sum(axis=0) / (rows.sum() + 1.0)
        np.testing.assert_allclose(tree.value[leaf], expected, rtol=1e-6, atol=1e-9)


def test_weights_constraints_sampling_and_one_output():
    xgb = pytest.importorskip("xgboost")
    X, Y = _exact_bins_data(500)
    w = np.random.default_rng(2).random(500) + 0.5
    p = dict(VL, max_depth=3, interaction_constraints=[[0, 1], [2, 3, 4]],
             colsample_bytree=0.8, max_leaves=6)
    booster = gbm.train(p, X, Y, 3, sample_weight=w)
    for tree in booster.trees:
        assert tree.n_leaves <= 6
        for node in np.flatnonzero(tree.left_child >= 0):  # a child splits in its set only
            for child in (tree.left_child[node], tree.right_child[node]):
                if tree.left_child[child] >= 0:
                    pair = {int(tree.split_feature[node]), int(tree.split_feature[child])}
                    assert pair <= {0, 1} or pair <= {2, 3, 4}
    # one output: a vector-leaf tree of one value, exported as XGBoost's one-output tree
    one = gbm.train(VL, X, Y[:, 0], 3)
    assert one.trees[0].value.shape[1] == 1
    path = "one_output.json"
    import os
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        one.save_model(os.path.join(folder, path), format="xgboost")
        theirs = xgb.Booster(model_file=os.path.join(folder, path))
        np.testing.assert_allclose(theirs.predict(xgb.DMatrix(X)), one.predict(X), atol=1e-5)


def test_a_vector_model_file_with_a_bad_value_row_is_refused():
    import json
    X, Y = _exact_bins_data(200)
    d = json.loads(gbm.train(dict(VL, max_depth=2), X, Y, 1).to_json())
    d["trees"][0]["value"][1] = [0.5, 0.5]  # two values, three outputs
    with pytest.raises(ValueError, match=r"trees\[0\]\.value must be a list of lists of 3"):
        gbm.Booster.from_json(json.dumps(d))


def test_segment_sums_kernel_matches_reference():
    rng = np.random.default_rng(4)
    gpair = rng.integers(-100, 100, (3, 50, 2))
    rows = rng.permutation(50).astype(np.int32)
    starts, ends = np.array([0, 10, 10, 35], np.int64), np.array([10, 10, 35, 50], np.int64)
    fast, slow = np.empty((4, 3, 2), np.int64), np.empty((4, 3, 2), np.int64)
    cpu.vector_segment_sums(gpair, rows, starts, ends, fast)
    ref.vector_segment_sums(gpair, rows, starts, ends, slow)
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(fast.sum(axis=0), gpair.sum(axis=1))


def test_one_walk_per_tree_gives_the_bits_of_one_walk_per_output(multilabel):
    from gbm.model.booster import add_raw_margins
    from gbm.runtime.backend import get_backend
    X, Y = multilabel
    booster = gbm.train(dict(VL, objective="binary:logistic", max_depth=4), X, Y, 6)
    per_output = np.tile(booster.base_margin, (X.shape[0], 1))
    add_raw_margins(get_backend("cpu", 1).kernels, X, booster.forest(), per_output)
    np.testing.assert_array_equal(booster.predict(X, output_margin=True), per_output)
    sliced = booster[2:5].predict(X, output_margin=True)
    np.testing.assert_array_equal(booster.predict(X, output_margin=True,
                                                  iteration_range=(2, 5)), sliced)


def test_quantile_dmatrix_and_pages_give_the_in_memory_model():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(600, 5)).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = np.nan
    Y = np.stack([np.nan_to_num(X[:, 0]), np.nan_to_num(X[:, 1] - X[:, 2])], 1)
    p = dict(VL, objective="reg:squarederror", max_depth=3)
    in_memory = gbm.train(p, gbm.DMatrix(X, Y), 4).to_json()
    assert gbm.train(p, gbm.QuantileDMatrix(X, Y), 4).to_json() == in_memory

    class Batches(gbm.DataIter):
        def __init__(self):
            self.i = 0
            super().__init__()

        def next(self, input_data):
            if self.i == 3:
                return False
            input_data(data=X[self.i * 200:(self.i + 1) * 200],
                       label=Y[self.i * 200:(self.i + 1) * 200])
            self.i += 1
            return True

        def reset(self):
            self.i = 0

    with gbm.ExtMemQuantileDMatrix(Batches()) as pages:  # more: test_vector_leaf_paged.py
        assert gbm.train(p, pages, 4).to_json() == in_memory
