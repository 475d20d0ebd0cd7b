"""The AFT formulas (kernels/survival_math.py, kernels/special.py) against independent
oracles: the C library's erfc, SciPy's distributions (the loss in closed form, its
derivatives by finite differences), hand cases, XGBoost's own gradients (read back from
one-row trees); and the reference, CPU and metric kernels against each other."""
import math

import numpy as np
import pytest
from scipy import stats

from gbm.kernels import cpu, layout, reference, special, survival_math

xgb = pytest.importorskip("xgboost")

DISTRIBUTIONS = {layout.AFT_NORMAL: stats.norm, layout.AFT_LOGISTIC: stats.logistic,
                 layout.AFT_EXTREME: stats.gumbel_l}  # XGBoost's "extreme": 1 - exp(-e^z)
NAMES = dict(enumerate(layout.AFT_DISTRIBUTIONS))
INF = math.inf


@pytest.mark.parametrize("impl", [special.python, special.cpu], ids=["python", "cpu"])
def test_erfc_against_the_c_library(impl):
    rng = np.random.default_rng(0)
    x = np.concatenate([np.linspace(-6.0, 27.5, 6701), rng.normal(scale=4, size=2000),
                        [0.0, -0.0, 1.5, 2.0, 3.0, 5.0, 27.2]])
    ours = np.array([impl.erfc(v) for v in x])
    theirs = np.array([math.erfc(v) for v in x])
    normal = theirs > 2.3e-308
    assert np.max(np.abs(ours[normal] / theirs[normal] - 1)) < 3e-14
    assert np.max(np.abs(ours[~normal] - theirs[~normal])) < 1e-308
    assert impl.erfc(0.0) == 1.0 and impl.erfc(30.0) == 0.0 and impl.erfc(-30.0) == 2.0
    assert math.isnan(impl.erfc(math.nan)) and impl.erfc(INF) == 0.0


def test_one_minus_exp_neg_against_expm1():
    w = np.concatenate([np.logspace(-300, 3, 2000), [0.0, 0.35, np.nextafter(0.35, 0)]])
    for impl in (special.python, special.cpu):
        ours = np.array([impl.one_minus_exp_neg(v) for v in w])
        np.testing.assert_allclose(ours, -np.expm1(-w), rtol=4e-16, atol=0)


def _oracle_loss(dist, sigma, lower, upper, m):
    """-log likelihood from SciPy (log-densities; the tail that keeps the digits)."""
    d = DISTRIBUTIONS[dist]
    if lower == upper:
        return -(d.logpdf((math.log(lower) - m) / sigma) - math.log(sigma * lower))
    z_l = (math.log(lower) - m) / sigma if lower > 0 else -INF
    z_u = (math.log(upper) - m) / sigma if upper < INF else INF
    # log(P(z_l < Z <= z_u)) = a + log(1 - e^(b - a)), a >= b the logs of two tail masses
    a, b = (d.logsf(z_l), d.logsf(z_u)) if z_l > 0 else (d.logcdf(z_u), d.logcdf(z_l))
    return -(a + math.log1p(-math.exp(b - a)))


def _random_rows(rng, n):
    """Rows of every censoring kind: exact, right, interval, left."""
    lower = rng.lognormal(size=n)
    kind = rng.integers(4, size=n)
    upper = np.where(kind == 0, lower, np.where(kind == 1, INF, lower * rng.uniform(1.05, 6, n)))
    lower = np.where(kind == 3, 0.0, lower)
    return lower, upper, rng.normal(scale=1.5, size=n)


@pytest.mark.parametrize("dist", list(DISTRIBUTIONS))
def test_gradient_and_hessian_are_the_derivatives_of_the_loss(dist):
    rng = np.random.default_rng(dist)
    step = 1e-4
    compared = 0
    for lower, upper, m in zip(*_random_rows(rng, 300)):
        sigma = float(rng.choice([0.5, 1.0, 2.0]))
        g, h = survival_math.python.aft_gradient_hessian(dist, sigma, lower, upper, m)
        loss = [_oracle_loss(dist, sigma, lower, upper, m + k * step) for k in (-1, 0, 1)]
        fd_g = (loss[2] - loss[0]) / (2 * step)
        fd_h = (loss[2] - 2 * loss[1] + loss[0]) / step ** 2
        ours = survival_math.python.aft_loss(dist, sigma, lower, upper, m)
        if loss[1] < -math.log(survival_math.MIN_LIKELIHOOD):  # not floored
            assert ours == pytest.approx(loss[1], rel=1e-12, abs=1e-12)
        if abs(fd_g) < 14.9:  # not clipped
            assert g == pytest.approx(fd_g, rel=1e-6, abs=1e-7)
        if 1e-5 < fd_h < 14.9:
            assert h == pytest.approx(fd_h, rel=2e-4, abs=1e-5)
            compared += 1
    assert compared > 200  # most rows are neither clipped nor floored


def test_hand_cases():
    python = survival_math.python
    # normal, exact time: g = -z / sigma, h = 1 / sigma^2 (z = (log t - m) / sigma)
    g, h = python.aft_gradient_hessian(layout.AFT_NORMAL, 2.0, math.e, math.e, 0.0)
    assert (g, h) == (pytest.approx(-0.25, rel=1e-15), 0.25)
    # logistic, exact time at the margin: z = 0, g = 0, h = 2 pdf(0) / sigma^2 = 1/2
    assert python.aft_gradient_hessian(layout.AFT_LOGISTIC, 1.0, 1.0, 1.0, 0.0) == (0.0, 0.5)
    # extreme, exact time at the margin: g = (1 - e^0) / sigma = 0, h = e^0 / sigma^2
    assert python.aft_gradient_hessian(layout.AFT_EXTREME, 1.0, 1.0, 1.0, 0.0) == (0.0, 1.0)
    # normal, right-censored at the margin: g = -pdf(0) / (sigma sf(0)) = -2 pdf(0)
    g, _ = python.aft_gradient_hessian(layout.AFT_NORMAL, 1.0, 1.0, INF, 0.0)
    assert g == pytest.approx(-2 * stats.norm.pdf(0.0), rel=1e-14)
    # left-censored at 0 and right-censored: the whole line, no information
    assert python.aft_gradient_hessian(layout.AFT_NORMAL, 1.0, 0.0, INF, 3.0) == (0.0, 1e-16)
    assert python.aft_loss(layout.AFT_NORMAL, 1.0, 0.0, INF, 3.0) == 0.0


def _xgboost_gradient(dist, sigma, lower, upper, m):
    """XGBoost's (g, h) at margin m, from the leaf of a one-row tree with reg_lambda 0 and
    1 (leaf = -g / (h + lambda)): float32 precision."""
    leaves = []
    for lam in (0.0, 1.0):
        d = xgb.DMatrix(np.zeros((1, 1), np.float32), base_margin=np.array([m], np.float32))
        d.set_float_info("label_lower_bound", np.array([lower], np.float32))
        d.set_float_info("label_upper_bound", np.array([upper], np.float32))
        b = xgb.train({"objective": "survival:aft", "aft_loss_distribution": NAMES[dist],
                       "aft_loss_distribution_scale": sigma, "reg_lambda": lam,
                       "min_child_weight": 0, "learning_rate": 1.0, "max_depth": 1}, d, 1)
        leaves.append(float(b.predict(d, output_margin=True)[0]) - float(np.float32(m)))
    h = leaves[1] / (leaves[0] - leaves[1])
    return -leaves[0] * h, h


@pytest.mark.parametrize("dist", list(DISTRIBUTIONS))
def test_gradients_equal_xgboosts(dist):
    cases = [(2.0, 2.0, 0.3), (2.0, INF, 0.1), (0.0, 3.0, 1.0), (1.0, 4.0, -0.5),
             (2.0, 2.0, -1.0), (1.0, INF, -2.0), (0.5, 0.5, 1.5)]
    for lower, upper, m in cases:
        m32 = float(np.float32(m))
        ours = survival_math.python.aft_gradient_hessian(dist, 0.8, lower, upper, m32)
        theirs = _xgboost_gradient(dist, 0.8, lower, upper, m)
        np.testing.assert_allclose(ours, theirs, rtol=3e-6, atol=1e-6)


@pytest.mark.parametrize("dist", list(DISTRIBUTIONS))
def test_tails_are_finite_clipped_and_xgboosts_limits(dist):
    python = survival_math.python
    for m in (-1e4, -800.0, -300.0, -60.0, -25.0, 25.0, 60.0, 300.0, 800.0, 1e4):
        for lower, upper in ((1.0, 1.0), (1.0, INF), (0.0, 2.0), (1.0, 3.0), (1e-30, 1e30)):
            g, h = python.aft_gradient_hessian(dist, 1.0, lower, upper, m)
            loss = python.aft_loss(dist, 1.0, lower, upper, m)
            assert np.isfinite([g, h, loss]).all(), (m, lower, upper)
            assert -15.0 <= g <= 15.0 and 1e-16 <= h <= 15.0
            assert loss <= -math.log(1e-12) + 1e-9
    # far below a right-censored time: pushed up at the clip (normal, extreme) or at
    # -1/sigma (logistic); far above it: no push
    up = {layout.AFT_NORMAL: -15.0, layout.AFT_LOGISTIC: -1.0, layout.AFT_EXTREME: -15.0}
    assert python.aft_gradient_hessian(dist, 1.0, 1.0, INF, -1e4)[0] == up[dist]
    assert python.aft_gradient_hessian(dist, 1.0, 1.0, INF, 1e4)[0] == 0.0
    # and left-censored: the mirror image
    down = {layout.AFT_NORMAL: 15.0, layout.AFT_LOGISTIC: 1.0, layout.AFT_EXTREME: 1.0}
    assert python.aft_gradient_hessian(dist, 1.0, 0.0, 1.0, 1e4)[0] == down[dist]
    assert python.aft_gradient_hessian(dist, 1.0, 0.0, 1.0, -1e4)[0] == 0.0


def test_normal_right_censoring_keeps_its_digits_where_xgboost_loses_them():
    """z = 10 above the margin: the inverse Mills ratio pdf(z) / sf(z) ~ z is the gradient
    (XGBoost's 1 - 0.5 (1 + erf) rounds to 0 there, and its gradient jumps to -15)."""
    g, h = survival_math.python.aft_gradient_hessian(layout.AFT_NORMAL, 1.0, math.exp(10.0),
                                                      INF, 0.0)
    mills = stats.norm.pdf(10.0) / stats.norm.sf(10.0)
    assert g == pytest.approx(-mills, rel=1e-12)
    assert h == pytest.approx(mills * (mills - 10.0), rel=1e-10)


def _interleaved(lower, upper):
    return np.ascontiguousarray(np.column_stack([lower, upper])).reshape(-1)


@pytest.mark.parametrize("dist", list(DISTRIBUTIONS))
def test_reference_and_cpu_kernels_agree_bit_for_bit(dist):
    rng = np.random.default_rng(10 + dist)
    lower, upper, m = _random_rows(rng, 400)
    m = np.concatenate([m[:-6], [-900.0, 900.0, -40.0, 40.0, 0.0, 1e5]])
    w = rng.random(400) + 0.5
    params = np.array([dist, 0.7])
    out = []
    for module, threads in ((reference, 1), (cpu, 1), (cpu, 3)):
        g, h = np.empty((400, 1)), np.empty((400, 1))
        module.pointwise_gradients(layout.AFT, m[:, None], _interleaved(lower, upper), w, params,
                                   g, h, threads)
        out.append((g, h))
    for g, h in out[1:]:
        np.testing.assert_array_equal(g, out[0][0])
        np.testing.assert_array_equal(h, out[0][1])
    expected = [survival_math.python.aft_gradient_hessian(dist, 0.7, lo, hi, mm)
                for lo, hi, mm in zip(lower, upper, m)]
    np.testing.assert_array_equal(out[0][0][:, 0], [e[0] * wi for e, wi in zip(expected, w)])
    loss_ref, loss_cpu = np.empty(400), np.empty(400)
    reference.aft_loss_into(lower, upper, m, params, loss_ref)
    cpu.aft_loss_into(lower, upper, m, params, loss_cpu)
    np.testing.assert_array_equal(loss_cpu, loss_ref)
    assert np.isfinite(loss_cpu).all()


@pytest.mark.parametrize("dist", list(DISTRIBUTIONS))
def test_extreme_inputs_stay_finite(dist):
    """The smallest scale and bounds the checks let through, huge margins: no division by
    zero, nothing NaN or infinite."""
    tiny = float(np.finfo(np.float32).tiny)
    bounds = [(tiny, tiny), (tiny, INF), (0.0, tiny), (tiny, 3e38), (3e38, 3e38)]
    rows = [(lo, hi, m) for lo, hi in bounds for m in (-1e300, -1e4, 0.0, 1e4, 1e300)]
    lower, upper, m = (np.array(column) for column in zip(*rows))
    for sigma in (tiny, 1e-10, 1.0, 3e38):
        params = np.array([dist, sigma])
        g, h = np.empty((len(m), 1)), np.empty((len(m), 1))
        cpu.pointwise_gradients(layout.AFT, m[:, None], _interleaved(lower, upper),
                                np.ones(len(m)), params, g, h, 1)
        loss = np.empty(len(m))
        cpu.aft_loss_into(lower, upper, m, params, loss)
        assert np.isfinite(g).all() and np.isfinite(h).all() and np.isfinite(loss).all()
        with np.errstate(all="ignore"):  # the Python twin on NumPy scalars warns about inf
            expected = [survival_math.python.aft_gradient_hessian(dist, sigma, *row[:2],
                                                                   row[2]) for row in rows]
        np.testing.assert_array_equal(g[:, 0], [e[0] for e in expected])
        np.testing.assert_array_equal(h[:, 0], [e[1] for e in expected])
