"""GPU input (CuPy, or anything with ``__cuda_array_interface__``) flows through predict,
the estimators, continued training and eval sets, and comes back on the device.

No GPU is needed: ``fake_gpu`` stands in for CuPy (NumPy memory behind CuPy's interface,
refusing implicit host conversion as CuPy does) and runs the CPU kernels where the CUDA
launchers would run; what is exercised is gbm's own dispatch from the input's location to
the ``device="cuda"`` backend and back. On a GPU, ``tests/cuda`` repeats the predictions
with real CuPy arrays (``GBM_TEST_GPU=1``, as ``bench/gpu_check.sh`` runs it)."""
import numpy as np
import pytest

import gbm
from tests.support import fake_gpu
from tests.support.fake_gpu import FakeDeviceArray, device


@pytest.fixture
def gpu(monkeypatch):
    return fake_gpu.install(monkeypatch)


def _data(n=240, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    X[::7, 1] = np.nan
    X[:, 3] = rng.integers(0, 6, n)  # category codes
    y = ((X[:, 0] + (X[:, 3] % 2)) > 0.5).astype(np.float32)
    return X, y


class _Foreign:
    """A GPU array of another library: only ``__cuda_array_interface__``."""

    def __init__(self, array):
        self._array = array

    @property
    def __cuda_array_interface__(self):
        return self._array.__cuda_array_interface__


def _host(value):
    assert isinstance(value, FakeDeviceArray), f"expected a device array, got {type(value)}"
    return value.get()


@pytest.mark.parametrize("objective", ["binary:logistic", "multi:softprob"])
def test_predict_on_gpu_input_is_on_the_device_and_the_cpus(gpu, objective):
    X, y = _data()
    params = {"objective": objective, "max_depth": 3}
    if objective == "multi:softprob":
        params["num_class"] = 3
        y = (X[:, 3] % 3).astype(np.float32)
    model = gbm.train(params, X, y, 4, categorical_features=[3])
    n_groups = model.n_groups
    margin = np.random.default_rng(1).normal(size=(len(X), n_groups) if n_groups > 1 else len(X))
    for kwargs, host_kwargs in (({}, {}), ({"output_margin": True}, {}),
                                ({"pred_leaf": True}, {}), ({"pred_contribs": True}, {}),
                                ({"iteration_range": (1, 3)}, {}),
                                ({"base_margin": device(margin)}, {"base_margin": margin})):
        gpu.calls.clear()
        on_device = model.predict(device(X), **kwargs)
        assert gpu.calls, "the prediction did not run on the cuda backend"
        np.testing.assert_array_equal(_host(on_device),
                                      model.predict(X, **(host_kwargs or kwargs)))
    # a DMatrix holding GPU data, and another library's GPU array
    np.testing.assert_array_equal(_host(model.predict(gbm.DMatrix(device(X)))), model.predict(X))
    np.testing.assert_array_equal(_host(model.predict(_Foreign(device(X)))), model.predict(X))


def test_unseen_and_invalid_category_codes_on_gpu_input_as_on_the_host(gpu):
    X, y = _data()
    model = gbm.train({"max_depth": 3}, X, y, 3, categorical_features=[3])
    unseen = X.copy()
    unseen[:5, 3] = 9  # not seen at fit: the missing direction
    np.testing.assert_array_equal(_host(model.predict(device(unseen))), model.predict(unseen))
    bad = X.copy()
    bad[2, 3] = 1.5
    with pytest.raises(ValueError, match="column 3 is categorical but holds 1.5 at row 2"):
        model.predict(device(bad))


def test_gpu_input_keeps_its_category_values(gpu):
    """The codes are written into a copy on the device, not into the caller's array."""
    X, y = _data()
    X[:, 3] = 2 * X[:, 3] + 1  # values 1, 3, ...: their codes differ from them
    model = gbm.train({"max_depth": 3}, X, y, 3, categorical_features=[3])
    Xd = device(X)
    first = _host(model.predict(Xd))
    np.testing.assert_array_equal(Xd.get(), X)
    np.testing.assert_array_equal(_host(model.predict(Xd)), first)
    np.testing.assert_array_equal(first, model.predict(X))


def test_the_predict_check_reads_a_gpu_arrays_interface(gpu):
    """``_predict_checked`` (what the estimators, eval sets and continued training call)
    takes a C-ordered float32 GPU matrix and refuses other layouts, as for NumPy."""
    X, y = _data()
    model = gbm.train({"max_depth": 2}, X, y, 2)
    np.testing.assert_array_equal(_host(model._predict_checked(device(X))), model.predict(X))
    for bad in (device(X.astype(np.float64)), device(np.asfortranarray(X)), device(X[:, :3])):
        with pytest.raises(ValueError, match="C-ordered float32 matrix with 4 columns"):
            model._predict_checked(bad)


def test_estimators_fit_and_predict_on_gpu_input(gpu):
    X, y = _data()
    Xd, yd = device(X), device(y)
    kwargs = {"n_estimators": 3, "max_depth": 3}
    reg = gbm.GBMRegressor(device="cuda", **kwargs).fit(Xd, yd)
    cpu = gbm.GBMRegressor(**kwargs).fit(X, y)
    assert reg.get_booster().to_json() == cpu.get_booster().to_json()
    np.testing.assert_array_equal(_host(reg.predict(Xd)), cpu.predict(X))

    clf = gbm.GBMClassifier(device="cuda", **kwargs).fit(Xd, yd, eval_set=[(Xd, yd)])
    cpu = gbm.GBMClassifier(**kwargs).fit(X, y, eval_set=[(X, y)])
    assert clf.evals_result() == cpu.evals_result()
    np.testing.assert_array_equal(_host(clf.predict_proba(Xd)), cpu.predict_proba(X))
    np.testing.assert_array_equal(_host(clf.predict(Xd)), cpu.predict(X))
    labels = np.array(["no", "yes"])[y.astype(int)]  # labels CuPy cannot hold come back in NumPy
    named = gbm.GBMClassifier(**kwargs).fit(X, labels)
    np.testing.assert_array_equal(named.predict(Xd), named.predict(X))


def test_continued_training_and_eval_sets_on_gpu_input(gpu):
    """Both start from the model's predictions on the (GPU) rows."""
    X, y = _data()
    Xd, yd = device(X), device(y)
    params = {"objective": "binary:logistic", "max_depth": 3}
    first = gbm.train(params, X, y, 2)
    runs = []
    for device_name, X_, y_ in (("cuda", Xd, yd), ("cpu", X, y)):
        result = {}
        model = gbm.train(dict(params, device=device_name), X_, y_, 2, init_model=first,
                          evals=[(X_, y_, "valid")], evals_result=result)
        runs.append((model, result))
    (gpu_model, gpu_result), (cpu_model, cpu_result) = runs
    assert gpu_model.to_json() == cpu_model.to_json()
    assert gpu_result == cpu_result


def test_dask_predict_on_gpu_blocks(gpu):
    da = pytest.importorskip("dask.array")
    from gbm.dask import DaskGBMRegressor
    from gbm.sklearn.boosting import FITTED_ATTRIBUTES

    X, y = _data()
    local = gbm.GBMRegressor(n_estimators=3, max_depth=3).fit(X, y)
    est = DaskGBMRegressor(n_estimators=3, max_depth=3)
    for name in FITTED_ATTRIBUTES:
        if name in local.__dict__:
            setattr(est, name, local.__dict__[name])
    Xd = device(X)
    blocks = da.from_array(Xd, chunks=(100, 4), asarray=False, meta=Xd[:0])
    out = est.predict(blocks).compute(scheduler="synchronous")
    np.testing.assert_array_equal(_host(out), local.predict(X))


def test_a_cpu_fit_on_gpu_input_copies_it_to_the_host(gpu):
    X, y = _data()
    params = {"objective": "binary:logistic", "max_depth": 3, "device": "cpu"}
    for categorical in (None, [3]):
        on_host = gbm.train(params, X, y, 4, categorical_features=categorical)
        from_device = gbm.train(params, device(X), y, 4, categorical_features=categorical,
                                evals=[(device(X), y, "train")])
        assert from_device.to_json() == on_host.to_json()
