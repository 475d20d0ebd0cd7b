"""XGBoost's other objectives (issue 29, item 2): reg:logistic, binary:logitraw,
binary:hinge, reg:squaredlogerror, reg:expectileerror and rank:map.

Gradients and hessians against closed forms written here with NumPy (not the kernel's
code), the kernels' twins against each other, the label and parameter checks, the
expectile's fitted constant against the expectile found by bisection, and the model on
1 and 2 threads. Parity with xgboost is in ``test_objectives_xgboost_parity.py``.
"""
import json

import numpy as np
import pytest

import gbm
from gbm.collective import ThreadGroup
from gbm.data.queries import make_queries
from gbm.kernels import cpu, layout, reference
from gbm.metrics import get_metric
from gbm.objectives import get_objective
from gbm.objectives.expectile import margins_to_scores, scores_to_margins
from gbm.params import validate_params
from tests.support.kernel_inputs import kernel_gradients

FLT_MIN = float(np.finfo(np.float32).tiny)


def _gradients(params, margin, y, w):
    margin = np.asarray(margin, np.float64).reshape(len(y), -1)
    return get_objective(validate_params(params)).gradients(margin, np.asarray(y, np.float64),
                                                            np.asarray(w, np.float64))


def _sigmoid(m):
    return 1.0 / (1.0 + np.exp(-m))


# --- gradients and hessians against closed forms -------------------------------------------

@pytest.mark.parametrize("objective", ["reg:logistic", "binary:logitraw"])
def test_logistic_variants_have_the_logistic_gradients(objective):
    rng = np.random.default_rng(0)
    m, y, w = rng.normal(0, 3, 200), rng.random(200), rng.uniform(0.5, 2, 200)
    m[:3] = [40.0, -40.0, 0.0]  # p (1 - p) below the floor at both ends
    grad, hess = _gradients({"objective": objective}, m, y, w)
    p = _sigmoid(m)
    np.testing.assert_allclose(grad[:, 0], (p - y) * w, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(hess[:, 0], np.maximum(p * (1 - p), 1e-16) * w, rtol=1e-13,
                               atol=0)


def test_hinge_gradients_by_hand():
    # s = 2y - 1; the margin is met when m s >= 1: gradient 0, hessian FLT_MIN (unweighted)
    m = np.array([0.0, 0.5, 1.0, 1.5, -1.0, -0.2, -3.0, 0.999])
    y = np.array([1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0])
    w = np.array([1.0, 2.0, 3.0, 1.0, 0.5, 2.0, 1.0, 4.0])
    grad, hess = _gradients({"objective": "binary:hinge"}, m, y, w)
    np.testing.assert_array_equal(grad[:, 0], [-1.0, -2.0, 0.0, 0.0, 0.0, 2.0, -1.0, -4.0])
    np.testing.assert_array_equal(hess[:, 0], [1.0, 2.0, FLT_MIN, FLT_MIN, FLT_MIN, 2.0, 1.0, 4.0])


def test_squared_log_error_gradients_closed_form_and_xgboost_floors():
    rng = np.random.default_rng(1)
    y = rng.uniform(-0.9, 20, 300)
    m = rng.uniform(-0.5, 6, 300)
    m[:4] = [-5.0, -1.0, 1e4, 0.0]  # clipped at -1 + 1e-6; a hessian under its floor
    w = rng.uniform(0.5, 2, 300)
    grad, hess = _gradients({"objective": "reg:squaredlogerror"}, m, y, w)
    p = np.maximum(m, -1 + 1e-6)
    expected_g = (np.log1p(p) - np.log1p(y)) / (p + 1) * w
    expected_h = np.maximum((np.log1p(y) - np.log1p(p) + 1) / (p + 1) ** 2, 1e-6) * w
    np.testing.assert_allclose(grad[:, 0], expected_g, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(hess[:, 0], expected_h, rtol=1e-12)
    assert hess[2, 0] == 1e-6 * w[2]
    # and they are the derivatives of (log1p(m) - log1p(y))^2 / 2 where not clipped or floored
    loss = lambda mm: 0.5 * (np.log1p(mm) - np.log1p(y[4:])) ** 2 * w[4:]  # noqa: E731
    mm, e = m[4:], 1e-6
    np.testing.assert_allclose(grad[4:, 0], (loss(mm + e) - loss(mm - e)) / (2 * e), rtol=1e-5,
                               atol=1e-9)
    d2 = (loss(mm + 1e-3) - 2 * loss(mm) + loss(mm - 1e-3)) / 1e-6
    free = (np.log1p(y[4:]) - np.log1p(mm) + 1) > 1e-3  # the floor does not bind
    np.testing.assert_allclose(hess[4:, 0][free], d2[free], rtol=1e-3, atol=1e-6)


def _expectile_loss(m, y, w, alphas):
    """Half the expectile loss of XGBoost's reparametrised predictions, summed."""
    q = np.cumsum(np.column_stack([m[:, 0]] + [1e-6 + np.logaddexp(0.0, m[:, k])
                                                for k in range(1, m.shape[1])]), axis=1)
    d = q - y[:, None]
    s = np.where(d >= 0, 1.0 - np.asarray(alphas), np.asarray(alphas))
    return 0.5 * np.sum(s * d * d * w[:, None])


@pytest.mark.parametrize("alphas", [[0.3], [0.1, 0.5, 0.95]])
def test_expectile_gradients_are_the_reparametrised_losss_derivatives(alphas):
    rng = np.random.default_rng(2)
    n, k = 60, len(alphas)
    y, w = rng.normal(size=n), rng.uniform(0.5, 2, n)
    m = np.column_stack([rng.normal(size=n)] + [rng.normal(-1, 1, n) for _ in range(k - 1)])
    grad, hess = _gradients({"objective": "reg:expectileerror", "expectile_alpha": alphas},
                            m, y, w)
    for i in range(n):  # one row at a time: the loss is a sum of rows
        for j in range(k):
            step = np.zeros_like(m)
            step[i, j] = 1e-6
            fd = (_expectile_loss(m + step, y, w, alphas)
                  - _expectile_loss(m - step, y, w, alphas)) / 2e-6
            assert grad[i, j] == pytest.approx(fd, rel=1e-5, abs=1e-8)
    # XGBoost's diagonal Gauss-Newton hessian, its loop written out: c_j^2 sum_(k >= j) s_k w
    q = m[:, 0].copy()
    expected = np.zeros_like(m)
    sides = []
    for kk in range(k):
        if kk:
            q = q + 1e-6 + np.logaddexp(0.0, m[:, kk])
        sides.append(np.where(q - y >= 0, 1 - alphas[kk], alphas[kk]) * w)
    for j in range(k):
        c = 1.0 if j == 0 else _sigmoid(m[:, j])
        expected[:, j] = c * c * np.sum(sides[j:], axis=0)
    np.testing.assert_allclose(hess, expected, rtol=1e-12)


def test_expectile_scores_and_margins_are_inverse():
    scores = [-2.0, -1.5, 0.25, 0.25, 7.0]
    margins = scores_to_margins(scores)
    assert margins[0] == -2.0
    back = margins_to_scores(margins)
    # equal neighbours come back 2e-6 apart: the least gap XGBoost keeps (1e-6 + 1e-6)
    np.testing.assert_allclose(back, [-2.0, -1.5, 0.25, 0.25 + 2e-6, 7.0 + 2e-6], rtol=0,
                               atol=1e-9)
    # the gap's inverse: softplus(m) = gap - 1e-6, by NumPy's own functions
    np.testing.assert_allclose(np.logaddexp(0.0, margins[1:3]), [0.5 - 1e-6, 1.75 - 1e-6],
                               rtol=1e-12)


def _average_precision(ranked):
    hits = np.cumsum(ranked)
    return np.sum(hits / np.arange(1.0, len(ranked) + 1) * ranked) / ranked.sum()


def _map_lambdas(s, y, k, normalization, score_normalization):
    """rank:map's gradients by brute force: each pair's |delta AP| from the two ranked
    lists, before and after the swap."""
    order = np.argsort(-s, kind="stable")
    ranked = y[order]
    grad, hess, total = np.zeros(len(s)), np.zeros(len(s)), 0.0
    for a in range(min(k, len(s))):
        for b in range(a + 1, len(s)):
            i, j = order[a], order[b]
            if y[i] == y[j]:
                continue
            if y[i] < y[j]:
                i, j = j, i
            swapped = ranked.copy()
            swapped[[a, b]] = swapped[[b, a]]
            delta = abs(_average_precision(swapped) - _average_precision(ranked))
            if score_normalization and s[order[0]] != s[order[-1]]:
                delta /= abs(s[i] - s[j]) + 0.01
            p = _sigmoid(s[i] - s[j])
            lam, h = (p - 1) * delta, 2 * max(p * (1 - p), 1e-16) * delta
            grad[i] += lam
            grad[j] -= lam
            hess[[i, j]] += h
            total -= 2 * lam
    norm = np.log2(1 + total) / total if normalization and total > 0 else 1.0
    return grad * norm, hess * norm


@pytest.mark.parametrize("normalization", [False, True])
@pytest.mark.parametrize("k", [3, 32])
def test_map_gradients_by_brute_force(normalization, k):
    rng = np.random.default_rng(4)
    sizes = [9, 1, 6, 12]
    n = sum(sizes)
    s, y = np.round(rng.normal(size=n), 1), (rng.random(n) < 0.4).astype(np.float64)
    y[9:10] = 1.0
    params = {"objective": "rank:map", "lambdarank_num_pair_per_sample": k,
              "lambdarank_normalization": normalization,
              "lambdarank_score_normalization": normalization}
    objective = get_objective(validate_params(params))
    queries = make_queries(sizes, None, None, n).locate()
    grad, hess = objective.gradients(s[:, None], y, np.ones(n), queries=queries)
    start = 0
    for size in sizes:
        part = slice(start, start + size)
        g, h = _map_lambdas(s[part], y[part], k, normalization, normalization)
        np.testing.assert_allclose(grad[part, 0], g, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(hess[part, 0], h, rtol=1e-12, atol=1e-15)
        start += size
    assert np.abs(grad).max() > 0.01


# --- the kernels' twins --------------------------------------------------------------------

@pytest.mark.parametrize("kind, alphas", [(layout.HINGE, [0.0]), (layout.SQUARED_LOG, [0.0]),
                                          (layout.EXPECTILE, [0.4]),
                                          (layout.EXPECTILE, [0.0, 0.2, 0.5, 1.0])])
def test_pointwise_kernel_twins_agree(kind, alphas):
    """CPU on 1 and 2 threads, bit for bit with the reference, extremes included."""
    rng = np.random.default_rng(kind)
    n, k = 300, len(alphas) if kind == layout.EXPECTILE else 1
    margin = rng.normal(0, 3, (n, k))
    margin[:4] = [[-800.0], [800.0], [-1.0], [1.0]]  # exp under- and overflow, the hinge edge
    y = rng.uniform(-0.99, 9, n) if kind == layout.SQUARED_LOG else rng.normal(size=n)
    if kind == layout.HINGE:
        y = (y > 0).astype(np.float64)
    w = rng.uniform(0.5, 2, n)
    params = np.array(alphas, np.float64)
    out = []
    for module, threads in ((reference, 1), (cpu, 1), (cpu, 2)):
        grad, hess = np.empty((n, k)), np.empty((n, k))
        module.pointwise_gradients(kind, margin, y, w, params, grad, hess, threads)
        out.append((grad, hess))
    for grad, hess in out[1:]:
        np.testing.assert_array_equal(grad, out[0][0])
        np.testing.assert_array_equal(hess, out[0][1])
    assert np.isfinite(out[0][0]).all() and np.isfinite(out[0][1]).all()


@pytest.mark.parametrize("params", [
    {}, {"lambdarank_num_pair_per_sample": 3},
    {"lambdarank_normalization": False, "lambdarank_score_normalization": False},
    {"lambdarank_pair_method": "mean"},
    {"lambdarank_pair_method": "mean", "lambdarank_num_pair_per_sample": 4},
])
def test_map_kernel_twins_agree(params):
    rng = np.random.default_rng(5)
    sizes = np.concatenate(([1, 2, 40], rng.integers(1, 12, 30)))
    n = int(sizes.sum())
    margin = np.round(rng.normal(size=n), 1)  # ties
    y = (rng.random(n) < 0.3).astype(np.float64)
    scale = rng.uniform(0.5, 2, len(sizes))
    params = dict(params, objective="rank:map")
    slow = kernel_gradients(reference, margin, y, sizes, params, scale=scale)
    for threads in (1, 2):
        fast = kernel_gradients(cpu, margin, y, sizes, params, scale=scale, n_threads=threads)
        np.testing.assert_allclose(fast[0], slow[0], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(fast[1], slow[1], rtol=1e-12, atol=1e-15)
    one = kernel_gradients(cpu, margin, y, sizes, params, scale=scale, n_threads=1)
    two = kernel_gradients(cpu, margin, y, sizes, params, scale=scale, n_threads=2)
    np.testing.assert_array_equal(one[0], two[0])
    np.testing.assert_array_equal(one[1], two[1])
    assert np.abs(one[0]).max() > 0


# --- labels and parameters -----------------------------------------------------------------

@pytest.mark.parametrize("objective, bad, message", [
    ("reg:logistic", 1.5, r"y\[3\] = 1.5; reg:logistic needs labels in \[0, 1\]"),
    ("binary:logitraw", -0.25, r"y\[3\] = -0.25; binary:logitraw needs labels in \[0, 1\]"),
    ("binary:hinge", 2.0, r"y\[3\] = 2.0; binary:hinge needs labels in \[0, 1\]"),
    ("reg:squaredlogerror", -1.0, r"y\[3\] = -1.0; reg:squaredlogerror needs labels > -1"),
    ("rank:map", 2.0, r"y\[3\] = 2.0; rank:map needs binary relevance labels \(0 or 1\)"),
    ("rank:map", 0.5, r"y\[3\] = 0.5; rank:map needs binary relevance labels"),
])
def test_bad_labels_name_the_row_and_the_objective(objective, bad, message):
    X = np.arange(12.0).reshape(6, 2)
    y = np.array([0.0, 1.0, 0.0, bad, 1.0, 0.0])
    extra = {"group": [3, 3]} if objective.startswith("rank:") else {}
    with pytest.raises(ValueError, match=message):
        gbm.train({"objective": objective}, X, y, 1, **extra)


@pytest.mark.parametrize("alpha, message", [
    (None, "needs expectile_alpha"), ([], "non-empty list"), (1.5, "must be <= 1"),
    ([0.9, 0.1], "ascending order"), ("half", "must be a real number"),
])
def test_bad_expectile_alpha(alpha, message):
    params = {"objective": "reg:expectileerror"}
    if alpha is not None:
        params["expectile_alpha"] = alpha
    with pytest.raises((ValueError, TypeError), match=message):
        validate_params(params)


def test_expectile_metric_by_hand_and_without_levels():
    y = np.array([0.0, 1.0, 2.0])
    pred = np.array([[1.0, 1.0], [0.0, 2.0], [2.0, 3.0]])
    w = np.array([1.0, 2.0, 1.0])
    # alpha 0.2: d = 1, -1, 0 -> 0.8, 0.2, 0; alpha 0.9: d = 1, 1, 1 -> 0.1 each
    rows = np.array([(0.8 + 0.1) / 2, (0.2 + 0.1) / 2, (0.0 + 0.1) / 2])
    metric = get_metric("expectile", validate_params({"objective": "reg:expectileerror",
                                                      "expectile_alpha": [0.2, 0.9]}))
    assert metric(y, pred, w) == pytest.approx(np.sum(rows * w) / w.sum(), rel=1e-15)
    with pytest.raises(ValueError, match="reads expectile_alpha"):
        get_metric("expectile", validate_params({}))


# --- the expectile: the fitted constant is the labels' expectile ---------------------------

def _expectile_by_bisection(y, w, alpha):
    """The q with sum w (alpha (y - q)_+ - (1 - alpha) (q - y)_+) = 0 (decreasing in q)."""
    low, high = y.min(), y.max()
    for _ in range(200):
        q = (low + high) / 2
        if np.sum(w * np.where(y > q, alpha * (y - q), -(1 - alpha) * (q - y))) > 0:
            low = q
        else:
            high = q
    return q


NO_SPLIT = {"objective": "reg:expectileerror", "reg_lambda": 0.0, "min_child_weight": 0.0}


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("alpha", [0.05, 0.5, 0.9])
def test_one_level_fits_the_labels_expectile(alpha, weighted):
    """One constant feature: each round's leaf is a Newton step on the piecewise quadratic
    loss, which lands on the expectile in a few steps."""
    rng = np.random.default_rng(6)
    y = rng.standard_t(3, 500)
    w = rng.uniform(0.2, 3, 500) if weighted else np.ones(500)
    booster = gbm.train(dict(NO_SPLIT, expectile_alpha=alpha, learning_rate=1.0),
                        np.zeros((500, 1)), y, 10, sample_weight=w if weighted else None)
    expected = _expectile_by_bisection(y, w, alpha)
    assert booster.predict(np.zeros((1, 1)))[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)
    if alpha == 0.5:
        assert expected == pytest.approx(np.sum(w * y) / np.sum(w), rel=1e-12)


def test_several_levels_approach_each_levels_expectile():
    """With several levels the reparametrised steps are coupled (a diagonal Gauss-Newton
    hessian): they converge with a learning rate below 1, slowly."""
    rng = np.random.default_rng(6)
    y, w = rng.standard_t(3, 500), rng.uniform(0.2, 3, 500)
    alphas = [0.05, 0.3, 0.5, 0.9]
    booster = gbm.train(dict(NO_SPLIT, expectile_alpha=alphas, learning_rate=0.5),
                        np.zeros((500, 1)), y, 400, sample_weight=w)
    got = booster.predict(np.zeros((1, 1)))[0]
    expected = [_expectile_by_bisection(y, w, a) for a in alphas]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-3)
    assert got.shape == (4,) and np.all(np.diff(got) > 0)


def test_expectile_base_score_is_xgboosts_newton_step_from_the_mean():
    rng = np.random.default_rng(7)
    y, w = rng.exponential(size=400), rng.uniform(0.5, 2, 400)
    alphas = [0.1, 0.5, 0.5, 0.8]  # a repeated level: XGBoost allows it
    booster = gbm.train(dict(NO_SPLIT, expectile_alpha=alphas), np.zeros((400, 1)), y, 0,
                        sample_weight=w)
    mean = np.sum(w * y) / np.sum(w)
    steps = []
    for a in alphas:
        s = np.where(mean - y >= 0, 1 - a, a) * w
        steps.append(mean - np.sum(s * (mean - y)) / np.sum(s))
    scores = np.maximum.accumulate(steps)
    margins = [scores[0]] + [x + np.log(-np.expm1(-x))  # softplus's inverse, gaps >= 1e-6
                             for x in np.maximum(np.diff(scores) - 1e-6, 1e-6)]
    np.testing.assert_allclose(booster.base_margin, margins, rtol=1e-9)


# --- the same model on 1 and 2 threads; estimators -------------------------------------------

THREADED = [
    ({"objective": "reg:logistic"}, "probability"), ({"objective": "binary:logitraw"}, "binary"),
    ({"objective": "binary:hinge"}, "binary"), ({"objective": "reg:squaredlogerror"}, "positive"),
    ({"objective": "reg:expectileerror", "expectile_alpha": [0.2, 0.6]}, "positive"),
    ({"objective": "rank:map"}, "binary"),
    ({"objective": "rank:map", "lambdarank_pair_method": "mean"}, "binary"),
]


@pytest.mark.parametrize("params, labels", THREADED, ids=lambda v: str(v))
def test_one_and_two_threads_give_the_same_model(params, labels):
    # 70,000 rows: above gbm.runtime.threads.PARALLEL_MIN_WORK, the kernels do use 2 threads
    rng = np.random.default_rng(8)
    n = 70_000
    X = rng.integers(0, 16, size=(n, 4)).astype(np.float32)
    signal = X[:, 0] / 8 - X[:, 1] / 10 + rng.normal(size=n)
    y = {"probability": 1 / (1 + np.exp(-signal)), "binary": (signal > 0.5) * 1.0,
         "positive": np.exp(signal)}[labels]
    extra = {"group": [50] * (n // 50)} if params["objective"].startswith("rank:") else {}
    params = dict(params, max_depth=4, subsample=0.8)
    one = gbm.train(dict(params, n_jobs=1), X, y, 3, **extra).to_json()
    two = gbm.train(dict(params, n_jobs=2), X, y, 3, **extra).to_json()
    assert one == two
    assert len(json.loads(one)["trees"]) >= 3


@pytest.mark.parametrize("params, labels", THREADED, ids=lambda v: str(v))
def test_three_ranks_train_the_local_model(params, labels):
    """Rows split unevenly over 3 ranks (threads with a collective, as gbm.dask's
    workers): the base margins are exact sums over every rank, so the model is the
    local one, bit for bit."""
    rng = np.random.default_rng(10)
    n = 600
    X = rng.integers(0, 8, size=(n, 3)).astype(np.float32)
    signal = X[:, 0] / 4 - X[:, 1] / 5 + rng.normal(size=n)
    y = {"probability": 1 / (1 + np.exp(-signal)), "binary": (signal > 0.3) * 1.0,
         "positive": np.exp(signal)}[labels]
    ranking = params["objective"].startswith("rank:")
    w = None if ranking else rng.uniform(0.5, 2, n)
    params = dict(params, max_depth=3)
    cuts = [0, 120, 420, n]  # whole query groups of 20 rows
    extra = {"group": [20] * (n // 20)} if ranking else {"sample_weight": w}
    local = gbm.train(params, X, y, 3, **extra).to_json()

    def rank_fn(collective):
        lo, hi = cuts[collective.rank], cuts[collective.rank + 1]
        part = {"group": [20] * ((hi - lo) // 20)} if ranking else {"sample_weight": w[lo:hi]}
        return gbm.train(params, X[lo:hi], y[lo:hi], 3, collective=collective,
                         row_ids=np.arange(lo, hi), **part).to_json()

    assert ThreadGroup(3).run(rank_fn) == [local] * 3


def test_estimators_take_the_new_objectives():
    rng = np.random.default_rng(9)
    X = rng.integers(0, 8, size=(300, 3)).astype(np.float64)
    y = X[:, 0] + rng.normal(size=300)
    est = gbm.GBMRegressor(n_estimators=5, objective="reg:expectileerror",
                           expectile_alpha=[0.2, 0.8]).fit(X, y)
    pred = est.predict(X)
    assert pred.shape == (300, 2) and np.all(pred[:, 1] > pred[:, 0])
    assert est.get_booster().params["expectile_alpha"] == [0.2, 0.8]
    for objective, target in (("reg:logistic", 1 / (1 + np.exp(-y))),
                              ("reg:squaredlogerror", np.exp(y / 3))):
        fitted = gbm.GBMRegressor(n_estimators=5, objective=objective).fit(X, target)
        assert fitted.get_booster().params["objective"] == objective
    ranker = gbm.GBMRanker(objective="rank:map", n_estimators=5).fit(
        X, (y > 3) * 1.0, group=[30] * 10)
    assert ranker.get_booster().params["objective"] == "rank:map"
    with pytest.raises(ValueError, match="rank:map"):
        gbm.GBMRanker(objective="rank:mapp").fit(X, (y > 3) * 1.0, group=[30] * 10)


def test_continuing_needs_the_same_expectile_levels():
    X, y = np.zeros((50, 1)), np.arange(50.0)
    first = gbm.train({"objective": "reg:expectileerror", "expectile_alpha": [0.3]}, X, y, 2)
    with pytest.raises(ValueError, match=r"init_model was trained with expectile_alpha=\[0.3\]"):
        gbm.train({"objective": "reg:expectileerror", "expectile_alpha": 0.4}, X, y, 1,
                  init_model=first)
