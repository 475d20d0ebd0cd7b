"""Softmax's transforms without temporaries the size of the margins: the metrics'
probabilities (``shifted_exp_rows``, kernels/cpu/softmax_rows.py, against its twin; then
``Softprob.transform_for_metric`` against the former ``_softmax(SAME_BITS, ...)``) and the
predictions written over the prediction's own margins (``transform_in_place``), all bit
for bit the former results."""
import numba
import numpy as np
import pytest

import gbm
from gbm.kernels import cpu, reference
from gbm.numerics.elementwise import SAME_BITS
from gbm.objectives import get_objective
from gbm.objectives.pointwise import _softmax


def _bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def _margins(rng, n, k):
    """Margins of every scale, with rows holding NaN, +-inf, -0.0, ties and huge gaps."""
    m = rng.normal(size=(n, k)) * 10.0 ** rng.integers(-3, 3, (n, 1))
    if n > 6 and k > 2:
        m[1, 1] = np.nan
        m[2, 0] = np.inf
        m[3, -1] = -np.inf
        m[4, :] = -0.0
        m[5, :] = 7.25
        m[6, 0] = 800.0  # the others' exps underflow to 0
    return m


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n, k", [(0, 3), (1, 1), (9, 1), (40, 3), (130, 17), (33, 1000)])
def test_shifted_exp_rows_matches_reference(n, k, threads):
    m = _margins(np.random.default_rng(n + k), n, k)
    fast, slow = np.full((n, k), 5.0), np.full((n, k), 5.0)
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        if n:
            cpu.shifted_exp_rows(m, fast)
    finally:
        numba.set_num_threads(before)
    if n:
        reference.shifted_exp_rows(m, slow)
    assert np.array_equal(_bits(fast), _bits(slow))
    if n > 6 and k > 2:  # the hand rows: NaN and inf - inf spread NaN, ties give 1
        assert np.isnan(fast[1]).all() and np.isnan(fast[2, 0])
        assert (fast[4] == 1.0).all() and (fast[5] == 1.0).all()
        assert fast[6, 0] == 1.0 and (fast[6, 1:] == 0.0).all()


@pytest.mark.parametrize("objective", ["multi:softprob", "multi:softmax"])
@pytest.mark.parametrize("n, k", [(0, 4), (1, 1), (50, 3), (64, 1000)])
def test_metric_probabilities_same_bits(objective, n, k):
    """``transform_for_metric`` (mlogloss's probabilities) as the former
    ``_softmax(SAME_BITS, margin)``: gbm's exp via ``exp_into``, NumPy's max, sum, division."""
    m = _margins(np.random.default_rng(k), n, k)
    obj = get_objective({"objective": objective, "num_class": k})
    kept = m.copy()
    got = obj.transform_for_metric(m)
    assert np.array_equal(_bits(got), _bits(_softmax(SAME_BITS, kept)))
    assert np.array_equal(_bits(m), _bits(kept))  # the margins untouched
    # other layouts and dtypes (NumPy's row sums add in a layout's order): as before
    for other in (np.asfortranarray(m), m.astype(np.float32), m[:, ::-1]):
        got, expected = obj.transform_for_metric(other), _softmax(SAME_BITS, other)
        assert got.dtype == expected.dtype
        assert np.array_equal(np.ascontiguousarray(got).view(np.uint8),
                              np.ascontiguousarray(expected).view(np.uint8))


@pytest.mark.parametrize("params", [
    {"objective": "multi:softprob", "num_class": 7}, {"objective": "multi:softmax", "num_class": 7},
    {"objective": "binary:logistic"}, {"objective": "reg:squarederror"}])
def test_transform_in_place_same_bits(params):
    k = params.get("num_class", 1)
    m = _margins(np.random.default_rng(3), 80, k)
    obj = get_objective(params)
    expected = obj.transform(m.copy(), np)
    got = obj.transform_in_place(m, np)
    assert np.array_equal(_bits(got), _bits(expected))
    if params["objective"] == "multi:softprob":
        assert got is m  # written over the margins: no second (n_rows, k) array


@pytest.mark.parametrize("strategy", ["multi_output_tree", "one_output_per_tree"])
def test_predictions_same_bits(strategy):
    """A model's predictions are NumPy's softmax of its margins, as before (NumPy's exp:
    predictions are not in a model file), with and without the rows' own start."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 5)).astype(np.float32)
    y = np.argmax(X[:, :4] + rng.normal(size=(500, 4)), axis=1)
    booster = gbm.train({"objective": "multi:softprob", "num_class": 4, "max_depth": 3,
                         "multi_strategy": strategy}, X, y, 6)
    start = rng.normal(size=(500, 4))
    kept = start.copy()
    for base_margin in (None, start):
        margin = booster.predict(X, output_margin=True, base_margin=base_margin)
        got = booster.predict(X, base_margin=base_margin)
        assert np.array_equal(_bits(got), _bits(_softmax(np, margin)))
        assert np.array_equal(_bits(booster.inplace_predict(X, base_margin=base_margin)),
                              _bits(got))
    assert np.array_equal(start, kept)  # the caller's start is not written over
