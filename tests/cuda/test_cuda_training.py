"""``device="cuda"`` trains the same model file as the CPU: the reference cases of
``tests/support/model_cases.py`` (every objective family and tree feature), on fewer rows and
rounds so that the simulator's Python threads finish in seconds."""
import json

import numpy as np
import pytest

import gbm
from tests.support.device_arrays import SIMULATOR, device_array, host
from tests.support.model_cases import CASES, Spec, first_difference

pytest.importorskip("pandas")

N_ROWS, ROUNDS, MAX_DEPTH = 160, 3, 4
FEWER_ROUNDS = {"forest_multiclass": 1, "softprob": 2, "softmax": 2}  # trees per round: 3-6


def small(spec, n_rows=N_ROWS, rounds=ROUNDS):
    """The case on its first ``n_rows`` rows (whole query groups for ranking), at most
    ``rounds`` rounds, 32 bins and depth 4."""
    kwargs = dict(spec.kwargs)
    n = n_rows
    if "group" in kwargs:
        sizes = np.asarray(kwargs["group"])
        keep = int(np.searchsorted(np.cumsum(sizes), n_rows, side="right"))
        kwargs["group"] = sizes[:max(1, keep)]
        n = int(np.sum(kwargs["group"]))
    if "sample_weight" in kwargs:
        kwargs["sample_weight"] = kwargs["sample_weight"][:n]
    if "evals" in kwargs:
        kwargs["evals"] = [(X[:n_rows], y[:n_rows], name) for X, y, name in kwargs["evals"]]
    X = spec.X.iloc[:n] if hasattr(spec.X, "iloc") else spec.X[:n]
    params = dict(spec.params, max_bin=min(spec.params.get("max_bin", 32), 32),
                  max_depth=min(spec.params.get("max_depth", MAX_DEPTH), MAX_DEPTH))
    return Spec(params, X, spec.y[:n], min(spec.rounds, rounds), kwargs)


def assert_same_model(spec):
    cpu = spec.train()
    on_gpu = gbm.train(dict(spec.params, device="cuda"), spec.X, spec.y, spec.rounds,
                       **spec.kwargs)
    a, b = on_gpu.to_json(), cpu.to_json()
    if a != b:
        pytest.fail(f"the CUDA model differs: {first_difference(json.loads(a), json.loads(b))}")
    assert sum(t.n_nodes for t in cpu.trees) > len(cpu.trees)  # the trees did split
    return cpu, on_gpu


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_model_as_the_cpu(name):
    cpu, on_gpu = assert_same_model(small(CASES[name](), rounds=FEWER_ROUNDS.get(name, ROUNDS)))
    if name == "early_stopping":
        assert on_gpu.evals_result == cpu.evals_result


NEW_OBJECTIVES = [  # issue 29's objectives (no reference fixture of their own)
    {"objective": "reg:logistic"}, {"objective": "binary:logitraw"},
    {"objective": "binary:hinge"}, {"objective": "reg:squaredlogerror"},
    {"objective": "reg:expectileerror", "expectile_alpha": [0.2, 0.7]},
    {"objective": "rank:map"}, {"objective": "rank:map", "lambdarank_pair_method": "mean"},
]


@pytest.mark.parametrize("params", NEW_OBJECTIVES, ids=lambda p: "-".join(map(str, p.values())))
def test_same_model_as_the_cpu_for_the_new_objectives(params):
    rng = np.random.default_rng(11)
    X = rng.integers(0, 6, size=(N_ROWS, 3)).astype(np.float32)
    signal = X[:, 0] / 3 - X[:, 1] / 4 + rng.normal(size=N_ROWS)
    objective = params["objective"]
    y = (signal > 0.3) * 1.0
    if objective == "reg:logistic":
        y = 1 / (1 + np.exp(-signal))
    elif objective.startswith("reg:"):
        y = np.exp(signal)
    kwargs = {"group": [20] * (N_ROWS // 20)} if objective.startswith("rank:") else {}
    assert_same_model(Spec(dict(params, max_depth=MAX_DEPTH, max_bin=32), X, y, ROUNDS, kwargs))


def test_same_predictions_on_the_cuda_backend():
    spec = small(CASES["softprob"](), rounds=1)
    model = gbm.train(dict(spec.params, device="cuda"), spec.X, spec.y, spec.rounds, **spec.kwargs)
    cpu_model = gbm.Booster.from_json(model.to_json())
    cpu_model.params = dict(cpu_model.params, device="cpu")
    X = spec.X
    for kwargs in ({"output_margin": True}, {"pred_leaf": True}, {"pred_contribs": True}, {}):
        np.testing.assert_array_equal(model.predict(X, **kwargs), cpu_model.predict(X, **kwargs))


def test_gpu_input_is_predicted_on_the_device():
    """A GPU matrix is predicted on the GPU whatever the model's device, and the result
    stays there (a CuPy array); margins, leaves and contributions are the CPU's, bit for
    bit. Under the simulator ``device_array`` is NumPy: this then checks the values only
    (``tests/test_gpu_input.py`` covers the dispatch without a GPU)."""
    spec = small(CASES["binary"](), rounds=2)
    model = spec.train()  # a CPU model
    X = np.ascontiguousarray(spec.X, dtype=np.float32)
    for kwargs in ({"output_margin": True}, {"pred_leaf": True}, {"pred_contribs": True}, {}):
        out = model.predict(device_array(X), **kwargs)
        if not SIMULATOR:
            assert type(out).__module__.startswith("cupy"), type(out)
        expected = model.predict(X, **kwargs)
        if kwargs:
            np.testing.assert_array_equal(host(out), expected)
        else:  # transformed by CuPy's exp on a GPU: the last bit may differ (docs/gpu.md)
            np.testing.assert_allclose(host(out), expected, rtol=1e-14)


def test_many_categories_are_refused_on_cuda_and_max_bin_1024_trains():
    """More than 256 categories: a clear error on device="cuda" (the CPU takes them);
    numeric features with more than 256 bins (uint16) give the CPU's model."""
    rng = np.random.default_rng(0)
    codes = rng.permutation(400) % 300  # every one of the 300 categories is seen
    X = np.column_stack([rng.normal(size=400), codes]).astype(np.float32)
    y = X[:, 0] + (codes % 3)
    with pytest.raises(ValueError, match="at most 256 categories, but feature 1 has 300; "
                                         "train with device='cpu'"):
        gbm.train({"device": "cuda", "max_depth": 2}, X, y, 1, categorical_features=[1])
    params = {"max_bin": 1024, "max_depth": 3}
    wide = gbm.train(dict(params, device="cuda"), X, y, 2)
    assert wide.to_json() == gbm.train(params, X, y, 2).to_json()
    assert max(int(t.split_bin.max()) for t in wide.trees) > 255  # a uint16 bin split


def test_dart_on_the_device_gives_the_cpus_model():
    """DART on device="cuda": the drops (hashes of seed, round and tree), the margins
    computed again without the dropped trees on the device, the weights and the eval
    margins are the CPU's, bit for bit; with rows' own base margins, and for a fit
    continued from a dart model."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(N_ROWS, 4)).astype(np.float32)
    y = X[:, 0] - X[:, 1] ** 2 + rng.normal(scale=0.3, size=N_ROWS)
    offset = rng.normal(scale=0.2, size=N_ROWS)
    params = {"booster": "dart", "rate_drop": 0.5, "one_drop": True, "max_depth": 3,
              "max_bin": 32, "subsample": 0.8}
    kwargs = {"base_margin": offset, "evals": [(X[:60], y[:60], "valid")]}
    cpu = gbm.train(params, X, y, 4, **kwargs)
    on_gpu = gbm.train(dict(params, device="cuda"), X, y, 4, **kwargs)
    assert on_gpu.to_json() == cpu.to_json()
    assert on_gpu.evals_result == cpu.evals_result
    assert min(cpu.weight_drop) < 1.0  # trees were dropped
    more_cpu = gbm.train(params, X, y, 2, init_model=cpu)
    more_gpu = gbm.train(dict(params, device="cuda"), X, y, 2, init_model=on_gpu)
    assert more_gpu.to_json() == more_cpu.to_json()
