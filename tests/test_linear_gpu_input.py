"""GPU input (CuPy, or anything with ``__cuda_array_interface__``) to the linear
estimators: fit copies X, y and sample_weight to the host once and trains the model host
input trains; predictions on GPU input come back on the device (labels CuPy cannot hold,
strings, come back as NumPy). ``fake_gpu`` stands in for CuPy: its arrays refuse implicit
host conversion as CuPy's do, so any path that forgets the copy fails here."""
import numpy as np
import pytest

from tests.support import fake_gpu
from tests.support.fake_gpu import FakeDeviceArray, device
from gbm.linear import ElasticNet, Lasso, LinearSVC, LogisticRegression, Ridge


@pytest.fixture
def gpu(monkeypatch):
    return fake_gpu.install(monkeypatch)


def _data(n=300, d=5, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X @ rng.normal(size=d)
    y_reg = score + 0.1 * rng.normal(size=n)
    y_clf = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    w = rng.uniform(0.5, 2.0, size=n)
    return X, y_reg, y_clf.astype(np.float64), w


ESTIMATORS = [
    (lambda: LogisticRegression(C=0.5), "clf", ("predict", "predict_proba",
                                                 "predict_log_proba", "decision_function")),
    (lambda: LogisticRegression(penalty="l1", C=0.5), "clf3", ("predict", "predict_proba")),
    (lambda: LinearSVC(C=0.5), "clf", ("predict", "decision_function")),
    (lambda: Ridge(alpha=2.0), "reg", ("predict",)),
    (lambda: Lasso(alpha=0.05), "reg", ("predict",)),
    (lambda: ElasticNet(alpha=0.05, l1_ratio=0.5), "reg", ("predict",)),
]


@pytest.mark.parametrize("make, kind, methods", ESTIMATORS)
def test_gpu_input_trains_the_host_model_and_predicts_on_the_device(gpu, make, kind, methods):
    X, y_reg, y_clf, w = _data()
    if kind == "clf3":
        _, _, y_clf, _ = _data(classes=3)
    y = y_reg if kind == "reg" else y_clf
    host = make().fit(X, y, sample_weight=w)
    on_gpu = make().fit(device(X), device(y), sample_weight=device(w))
    np.testing.assert_array_equal(on_gpu.coef_, host.coef_)
    np.testing.assert_array_equal(on_gpu.intercept_, host.intercept_)
    assert on_gpu.n_features_in_ == X.shape[1]
    for name in methods:
        got = getattr(on_gpu, name)(device(X))
        assert isinstance(got, FakeDeviceArray), (name, type(got))
        np.testing.assert_array_equal(got.get(), getattr(host, name)(X))
        assert not isinstance(getattr(on_gpu, name)(X), FakeDeviceArray)  # host in, host out


def test_string_labels_of_gpu_input_come_back_on_the_host(gpu):
    X, _, y_clf, _ = _data()
    labels = np.array(["no", "yes"])[y_clf.astype(int)]
    model = LogisticRegression().fit(device(X), labels)
    got = model.predict(device(X))
    assert isinstance(got, np.ndarray) and got.dtype.kind == "U"
    np.testing.assert_array_equal(got, LogisticRegression().fit(X, labels).predict(X))


def test_cuda_device_fit_on_gpu_input_reaches_the_cpu_optimum(gpu):
    """device="cuda" (the fake's kernels on the device arrays' memory) on GPU input: the
    same problem as the CPU fit, solved to the same certificate."""
    X, y_reg, _, w = _data()
    cpu = Ridge(alpha=2.0, tol=1e-10).fit(X, y_reg, sample_weight=w)
    cuda = Ridge(alpha=2.0, tol=1e-10, device="cuda").fit(device(X), device(y_reg),
                                                          sample_weight=device(w))
    np.testing.assert_allclose(cuda.coef_, cpu.coef_, rtol=1e-8, atol=1e-10)
    assert cuda.duality_gap_ <= 1e-10 * max(1.0, abs(cuda.objective_))
    assert isinstance(cuda.predict(device(X)), FakeDeviceArray)


def test_bad_gpu_input_gets_the_host_input_error(gpu):
    X, y_reg, _, _ = _data()
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Ridge().fit(device(X), device(y_reg))
    X = np.nan_to_num(X)
    model = Ridge().fit(X, y_reg)
    with pytest.raises(ValueError, match="3 features, but Ridge is expecting 5"):
        model.predict(device(X[:, :3]))
