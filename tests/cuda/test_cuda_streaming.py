"""Streamed data on ``device="cuda"`` (issue 26): a ``QuantileDMatrix`` built from batches
trains the CPU's in-memory model file on the device (its bins copied there once); an
``ExtMemQuantileDMatrix``'s pages are read one at a time and copied to the device, the
same model again. Under Numba's CUDA simulator in CI, on a GPU with ``GBM_TEST_GPU=1``."""
import numpy as np
import pytest

import gbm


class _Batches(gbm.DataIter):
    def __init__(self, X, y, sizes):
        super().__init__()
        self.X, self.y, self.bounds, self.i = X, y, np.cumsum([0] + sizes), 0

    def next(self, input_data):
        if self.i >= len(self.bounds) - 1:
            return False
        lo, hi = self.bounds[self.i], self.bounds[self.i + 1]
        input_data(data=self.X[lo:hi], label=self.y[lo:hi])
        self.i += 1
        return True

    def reset(self):
        self.i = 0


def _data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + 0.3 * rng.normal(size=120) > 0).astype(float)
    return X, y


def test_quantile_dmatrix_on_the_device_is_the_cpu_model():
    X, y = _data()
    p = {"objective": "binary:logistic", "max_depth": 3, "max_bin": 32,
         "bin_sample_size": 60}
    cpu_model = gbm.train(p, gbm.DMatrix(X, label=y), 2)
    d = gbm.QuantileDMatrix(_Batches(X, y, [50, 1, 69]), max_bin=32, bin_sample_size=60)
    on_device = gbm.train(dict(p, device="cuda"), d, 2)
    on_device.params = dict(on_device.params, device="cpu")
    cpu_model.params = dict(cpu_model.params, device="cpu")
    assert on_device.to_json() == cpu_model.to_json()


@pytest.mark.parametrize("extra", [{}, {"subsample": 0.7, "grow_policy": "lossguide",
                                       "max_leaves": 6}])
def test_external_memory_on_the_device_is_the_cpu_model(tmp_path, extra):
    """Pages read from disk one at a time and copied to the device: several pages (one
    per batch of 2 x 40 x 4 bytes), the CPU's in-memory model file."""
    X, y = _data()
    p = dict({"objective": "binary:logistic", "max_depth": 3, "max_bin": 32,
              "bin_sample_size": 60}, **extra)
    cpu_model = gbm.train(p, gbm.DMatrix(X, label=y), 3)
    it = _Batches(X, y, [40, 1, 39, 40])
    with gbm.ExtMemQuantileDMatrix(it, max_bin=32, bin_sample_size=60,
                                   cache_prefix=str(tmp_path), min_cache_page_bytes=200) as d:
        assert d.data.matrix.files.n_pages >= 3
        on_device = gbm.train(dict(p, device="cuda"), d, 3)
    on_device.params = dict(on_device.params, device="cpu")
    cpu_model.params = dict(cpu_model.params, device="cpu")
    assert on_device.to_json() == cpu_model.to_json()


@pytest.mark.parametrize("kind", ["qdm", "extmem"])
def test_a_continued_model_on_the_device_is_the_cpu_model(tmp_path, kind):
    """``init_model`` on a ``QuantileDMatrix`` / ``ExtMemQuantileDMatrix`` with
    ``device="cuda"``, with an eval set made with ``ref=``: the old trees walked on the
    bins on the device (``gbm.tree.rebin``), the CPU's in-memory continued model and
    scores."""
    X, y = _data()
    p = {"objective": "binary:logistic", "max_depth": 3, "max_bin": 32,
         "bin_sample_size": 60}
    old = gbm.train(p, gbm.DMatrix(X, label=y), 2)
    want_log, got_log = {}, {}
    cpu_model = gbm.train(p, gbm.DMatrix(X, label=y), 2, init_model=old,
                          evals=[(gbm.DMatrix(X[:50], label=y[:50]), "v")],
                          evals_result=want_log, verbose_eval=False)
    kw = dict(max_bin=32, bin_sample_size=60)
    if kind == "qdm":
        d = gbm.QuantileDMatrix(_Batches(X, y, [50, 1, 69]), **kw)
    else:
        d = gbm.ExtMemQuantileDMatrix(_Batches(X, y, [40, 1, 39, 40]), **kw,
                                      cache_prefix=str(tmp_path), min_cache_page_bytes=200)
    dv = gbm.QuantileDMatrix(_Batches(X[:50], y[:50], [50]), ref=d)
    on_device = gbm.train(dict(p, device="cuda"), d, 2, init_model=old, evals=[(dv, "v")],
                          evals_result=got_log, verbose_eval=False)
    on_device.params = dict(on_device.params, device="cpu")
    cpu_model.params = dict(cpu_model.params, device="cpu")
    assert on_device.to_json() == cpu_model.to_json()
    assert got_log == want_log
