"""gbm.numerics.elementwise: exp, log and log2 over arrays, element for element the reference
(``kernels.elementary.python``, plain Python floats: the same bits on any CPU), and the
metrics and metric probabilities built on them."""
import math

import numpy as np
import pytest

from gbm.numerics import elementwise
from gbm.kernels.elementary import python as reference
from gbm.objectives import get_objective
from gbm.metrics import pointwise as metrics


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    special = [0.0, -0.0, 1.0, -1.0, 1e-300, 5e-324, 700.0, -740.0, 709.9, -746.0,
               math.inf, -math.inf, math.nan]
    return np.concatenate([rng.uniform(-30, 30, 4000), rng.normal(size=2000), special])


@pytest.mark.parametrize("name", ["exp", "log", "log2"])
def test_each_element_is_the_reference(name):
    x = _inputs()
    if name != "exp":
        x = np.abs(x)
    got = getattr(elementwise, name)(x.reshape(-1, 7))  # any shape (6013 = 7 x 859)
    want = np.array([getattr(reference, name)(float(v)) for v in x]).reshape(-1, 7)
    np.testing.assert_array_equal(got, want)  # NaN where NaN, bit for bit elsewhere
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_log_split_by_bits_is_log_at_every_exponent():
    """``log`` reads the frexp parts of positive normal values below 2**1022 from their
    bits (``kernels.cpu.log_into``): every exponent, the edges of that range and outside it, bit for
    bit the reference's."""
    rng = np.random.default_rng(4)
    powers = 2.0 ** np.arange(-1074.0, 1024.0)
    x = np.concatenate([powers, powers * 1.4142135623730951, powers[:-1] * 1.9999999,
                        rng.lognormal(0, 60, 3000), rng.uniform(1e-15, 1.0, 3000),
                        [2.2250738585072014e-308, 2.225073858507201e-308, 2.0**1022,
                         2.0**1022 * 1.5, 1.7976931348623157e308, -2.0, -0.0, 0.0,
                         math.inf, -math.inf, math.nan]])
    got = elementwise.log(x)
    want = np.array([reference.log(float(v)) for v in x])
    np.testing.assert_array_equal(got, want)


def test_out_is_written_in_place_and_inputs_are_left_alone():
    x = np.linspace(-3, 3, 50).reshape(5, 10)
    saved = x.copy()
    out = np.empty_like(x)
    assert elementwise.exp(x, out=out) is out
    np.testing.assert_array_equal(out, [[reference.exp(float(v)) for v in row] for row in x])
    np.testing.assert_array_equal(x, saved)
    assert elementwise.exp(x, out=x) is x  # in place, as np.exp(e, out=e)
    np.testing.assert_array_equal(x, out)


def test_close_to_numpy():
    x = _inputs()[:-3]
    x = x[np.abs(x) < 700]  # finite, normal results
    np.testing.assert_allclose(elementwise.exp(x), np.exp(x), rtol=4e-16)
    pos = np.abs(x[x != 0])
    np.testing.assert_allclose(elementwise.log(pos), np.log(pos), rtol=4e-16, atol=1e-300)


def test_metric_probabilities_and_logloss_use_the_reference():
    rng = np.random.default_rng(3)
    margin = rng.normal(scale=3, size=(400, 1))
    y = (rng.random(400) < 0.5).astype(np.float64)
    objective = get_objective({"objective": "binary:logistic"})
    p = objective.transform_for_metric(margin)
    want_p = np.array([1.0 / (1.0 + reference.exp(-float(m))) for m in margin[:, 0]])
    np.testing.assert_array_equal(p, want_p)
    terms = [-(t * reference.log(max(float(q), 1e-16))
               + (1 - t) * reference.log(max(1.0 - float(q), 1e-16))) for t, q in zip(y, want_p)]
    assert metrics.logloss(y, p, None) == math.fsum(terms) / len(terms)


def test_softmax_probabilities_for_the_metric():
    rng = np.random.default_rng(4)
    margin = rng.normal(size=(50, 3))
    objective = get_objective({"objective": "multi:softmax", "num_class": 3})
    p = objective.transform_for_metric(margin)
    e = np.array([[reference.exp(float(v - row.max())) for v in row] for row in margin])
    np.testing.assert_array_equal(p, e / e.sum(axis=1, keepdims=True))


def test_logloss_of_0_1_labels_is_the_general_formula_bit_for_bit():
    """logloss takes one log per row when the labels are 0 and 1: the same number as
    -(y log p + (1 - y) log(1 - p)) summed exactly; soft labels take the general form."""
    rng = np.random.default_rng(5)
    p = np.concatenate([rng.random(3000), [0.0, 1.0, 1e-17, 1 - 1e-17]])
    w = rng.uniform(0.5, 2.0, p.size)

    def general(y, p, w):
        terms = [-(t * reference.log(max(float(a), 1e-16))
                   + (1 - t) * reference.log(max(1.0 - float(a), 1e-16))) for t, a in zip(y, p)]
        return math.fsum(np.multiply(terms, w)) / math.fsum(w)

    hard = (rng.random(p.size) < 0.5).astype(np.float64)
    soft = rng.random(p.size)
    for y in (hard, soft):
        assert metrics.logloss(y, p, w) == general(y, p, w)
