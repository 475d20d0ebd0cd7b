"""The survival objectives on the CUDA backend (the simulator in CI, a GPU with
``GBM_TEST_GPU=1``): the AFT kind of ``pointwise_gradients`` gives the reference's and the
CPU's bits for every distribution, tails included, and ``device="cuda"`` trains the CPU's
model file for survival:cox (its gradients are computed on the host) and survival:aft."""
import json
import math

import numpy as np
import pytest

import gbm
from gbm.kernels import cpu, cuda, layout, reference
from tests.support.device_arrays import device_array as dev
from tests.support.device_arrays import host
from tests.support.model_cases import first_difference


@pytest.mark.parametrize("dist", range(3))
def test_aft_gradients(dist):
    rng = np.random.default_rng(dist)
    n = 96
    lower = rng.lognormal(size=n)
    kind = rng.integers(4, size=n)
    upper = np.where(kind == 0, lower, np.where(kind == 1, math.inf, lower * 3.0))
    lower = np.where(kind == 3, 0.0, lower)
    y = np.ascontiguousarray(np.column_stack([lower, upper])).reshape(-1)
    margin = rng.normal(scale=2, size=(n, 1))
    margin[:8, 0] = [-900.0, 900.0, -40.0, 40.0, 1e4, -1e4, 12.0, -12.0]  # the tails
    w = rng.random(n) + 0.5
    params = np.array([dist, 0.9])
    results = []
    for module in (reference, cpu, cuda):
        grad, hess = np.empty((n, 1)), np.empty((n, 1))
        if module is cuda:
            grad, hess = dev(grad), dev(hess)
            module.pointwise_gradients(layout.AFT, dev(margin), dev(y), dev(w), params, grad,
                                       hess)
        else:
            module.pointwise_gradients(layout.AFT, margin, y, w, params, grad, hess, 1)
        results.append((host(grad), host(hess)))
    for got in results[1:]:
        np.testing.assert_array_equal(got[0], results[0][0])
        np.testing.assert_array_equal(got[1], results[0][1])
    assert np.isfinite(results[0][0]).all() and (results[0][1] > 0).all()


def _survival_data(n=160):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 5, size=(n, 3)).astype(np.float32)
    t = np.exp(0.4 * X[:, 0] - 0.3 * X[:, 1] + rng.normal(scale=0.5, size=n))
    c = rng.exponential(3.0, n)
    event = t <= c
    observed = np.where(event, t, c)
    return X, np.where(event, observed, -observed), np.column_stack(
        [observed, np.where(event, observed, math.inf)])


@pytest.mark.parametrize("params", [
    {"objective": "survival:cox"},
    {"objective": "survival:aft", "aft_loss_distribution": "normal"},
    {"objective": "survival:aft", "aft_loss_distribution": "extreme",
     "aft_loss_distribution_scale": 0.7},
], ids=["cox", "aft-normal", "aft-extreme"])
def test_same_model_as_the_cpu(params):
    X, signed, intervals = _survival_data()
    y = signed if params["objective"] == "survival:cox" else intervals
    params = dict(params, max_depth=3, max_bin=32)
    on_cpu = gbm.train(params, X, y, 3, evals=[(X, y, "train")])
    on_gpu = gbm.train(dict(params, device="cuda"), X, y, 3, evals=[(X, y, "train")])
    a, b = on_gpu.to_json(), on_cpu.to_json()
    if a != b:
        pytest.fail(f"the CUDA model differs: {first_difference(json.loads(a), json.loads(b))}")
    assert on_gpu.evals_result == on_cpu.evals_result
    assert sum(t.n_nodes for t in on_cpu.trees) > len(on_cpu.trees)  # the trees did split
