"""GPU-backed dask collections: lazy predictions are declared CuPy-backed when their
blocks are, and classifier labels on GPU blocks are encoded on the host.

No GPU is needed: ``fake_gpu`` stands in for CuPy (see ``tests/test_gpu_input.py``); the
graphs run on dask's synchronous scheduler, in this process, where the fake is installed.
"""
import numpy as np
import pytest

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

from tests.support import fake_gpu  # noqa: E402
from tests.support.fake_gpu import FakeDeviceArray, device  # noqa: E402

import gbm  # noqa: E402
import gbm.dask  # noqa: E402
from gbm.dask.estimators import _map_labels  # noqa: E402
from gbm.sklearn.boosting import FITTED_ATTRIBUTES  # noqa: E402


@pytest.fixture
def gpu(monkeypatch):
    return fake_gpu.install(monkeypatch)


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    return X, X[:, 0] + np.sin(X[:, 1]) + rng.normal(scale=0.3, size=n)


def _gpu_blocks(X, chunks=(100, 0, 200)):
    Xd = device(X)
    return da.from_array(Xd, chunks=(chunks,) + X.shape[1:], asarray=False, meta=Xd[:0])


def _dask_twin(cls, local):
    est = cls(**local.get_params())
    for name in FITTED_ATTRIBUTES:
        if name in local.__dict__:
            setattr(est, name, local.__dict__[name])
    return est


def _computed(lazy, on_device):
    assert isinstance(lazy._meta, FakeDeviceArray) == on_device, type(lazy._meta)
    out = lazy.compute(scheduler="synchronous")
    assert isinstance(out, FakeDeviceArray) == on_device, type(out)  # as declared
    return out.get() if on_device else out


def test_lazy_predictions_on_gpu_blocks_are_declared_on_the_device(gpu):
    X, y = _data()
    blocks = _gpu_blocks(X)
    kw = dict(n_estimators=3, max_depth=3)
    reg = gbm.GBMRegressor(**kw).fit(X, y)
    pred = _dask_twin(gbm.dask.DaskGBMRegressor, reg).predict(blocks)
    np.testing.assert_array_equal(_computed(pred, True), reg.predict(X))
    two = gbm.GBMRegressor(**kw).fit(X, np.column_stack([y, -y]))  # (n, 2) predictions
    pred = _dask_twin(gbm.dask.DaskGBMRegressor, two).predict(blocks)
    assert pred.shape == (300, 2)
    np.testing.assert_array_equal(_computed(pred, True), two.predict(X))
    for labels in (np.array([3, 7, 9]), np.array(["low", "mid", "high"])):
        classes = labels[np.digitize(y, [-0.5, 0.5])]
        clf = gbm.GBMClassifier(**kw).fit(X, classes)
        est = _dask_twin(gbm.dask.DaskGBMClassifier, clf)
        np.testing.assert_array_equal(_computed(est.predict_proba(blocks), True),
                                      clf.predict_proba(X))
        # labels CuPy cannot hold (strings) come back as NumPy, as the local predict's
        numeric = labels.dtype.kind in "biuf"
        np.testing.assert_array_equal(_computed(est.predict(blocks), numeric), clf.predict(X))
    # host blocks (an empty one too) stay declared and computed as NumPy
    host = da.from_array(X, chunks=((100, 0, 200), (4,)))
    np.testing.assert_array_equal(_computed(est.predict_proba(host), False),
                                  clf.predict_proba(X))
    np.testing.assert_array_equal(_computed(est.predict(host), False), clf.predict(X))


def test_predictions_of_a_dataframe_with_an_empty_partition():
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y = _data()
    df = pd.DataFrame(X, columns=list("abcd"))
    reg = gbm.GBMRegressor(n_estimators=2, max_depth=2).fit(df, y)
    parts = dd.from_pandas(df, npartitions=3)
    empty = parts.partitions[0].map_partitions(lambda p: p.iloc[:0])
    ddf = dd.concat([parts.partitions[0], empty, parts.partitions[1:]])
    pred = _dask_twin(gbm.dask.DaskGBMRegressor, reg).predict(ddf)
    np.testing.assert_array_equal(pred.compute(scheduler="synchronous").to_numpy(),
                                  reg.predict(df))


def test_classifier_labels_on_gpu_blocks_are_encoded_on_the_host(gpu):
    labels = np.array([2.0, 5.0, 2.0, 9.0, 5.0, 9.0])
    blocks = _gpu_blocks(labels, chunks=(2, 0, 4))
    codes = _map_labels(blocks, np.array([2.0, 5.0, 9.0]))
    assert isinstance(codes._meta, np.ndarray)
    np.testing.assert_array_equal(codes.compute(scheduler="synchronous"), [0, 1, 0, 2, 1, 2])
