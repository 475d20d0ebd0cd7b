"""``device="cuda"`` training on Dask workers whose blocks are GPU arrays, without a GPU:
every worker process runs ``fake_gpu`` (CuPy's stand-in; the CPU kernels where the CUDA
launchers would run). The ranks choose the host-memory all-reduce (the fake has no NCCL,
or two workers share one GPU), send device arrays over Dask as host copies, and end with
the local CPU model, a worker without rows included. NCCL itself is in
``tests/test_dask_nccl.py``; real GPUs in ``tests/test_dask_cuda.py``.
"""
import os
import signal
import sys

import numpy as np
import pytest

pytest.importorskip("distributed")
dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

import cloudpickle  # noqa: E402  (a dependency of distributed)
from distributed import Client, LocalCluster, wait  # noqa: E402
from distributed.diagnostics.plugin import WorkerPlugin  # noqa: E402

from tests.support import fake_gpu  # noqa: E402
from tests.support.fake_gpu import FakeDeviceArray  # noqa: E402

import gbm  # noqa: E402
import gbm.dask  # noqa: E402
from gbm.dask.spmd import alive_workers  # noqa: E402
from gbm.callback import TrainingCallback  # noqa: E402

PARAMS = {"max_depth": 3, "max_bin": 32, "bin_sample_size": 800, "learning_rate": 0.3}


def _install_fake_gpu():
    """In a worker: ``cupy`` is the fake, and ``device="cuda"`` runs its kernels."""
    from tests.support import fake_gpu as fake

    import gbm.runtime.backend

    sys.modules["cupy"] = fake.fake_cupy
    gbm.runtime.backend._cuda_kernels = lambda: fake.FakeCudaKernels()
    return True


def _one_gpu_for_all():
    """In a worker: every rank reports the same GPU (two workers on one device)."""
    import gbm.dask.nccl

    gbm.dask.nccl.device_identity = lambda: ("node-a", "GPU-0")
    gbm.dask.nccl.nccl_module = lambda: object()  # "available": never used on this path
    return True


@pytest.fixture(scope="module")
def client():
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        assert all(c.run(_install_fake_gpu).values())
        yield c


def _data(seed=0, n=1500):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    X[rng.uniform(size=X.shape) < 0.04] = np.nan
    return X, np.nan_to_num(X[:, 0]) + np.sin(np.nan_to_num(X[:, 2])) + rng.normal(size=n)


def _gpu_blocks(a, chunks):
    """A dask array whose blocks are (fake) GPU arrays, made on the workers."""
    meta = fake_gpu.fake_cupy.empty((0,) + a.shape[1:], dtype=a.dtype)
    return da.from_array(a, chunks=(chunks,) + a.shape[1:]).map_blocks(fake_gpu.device,
                                                                       meta=meta)


def test_gpu_blocks_train_the_local_model_over_host_memory(client, monkeypatch):
    fake_gpu.install(monkeypatch)  # the client too: it declares the predictions' blocks
    X, y = _data()
    local = gbm.train(PARAMS, X, y, 3)
    dX, dy = _gpu_blocks(X, (500, 0, 1000)), _gpu_blocks(y, (500, 0, 1000))
    stats = {}
    model = gbm.dask.train(client, dict(PARAMS, device="cuda"), dX, dy, 3, _stats=stats)
    assert model.to_json() == local.to_json()
    assert [r["device_allreduce"] for r in stats["ranks"]] == ["host", "host"]
    assert "have no GPU with CuPy's NCCL" in stats["ranks"][0]["device_allreduce_reason"]
    kw = dict(n_estimators=3, max_depth=3, max_bin=32)
    est = gbm.dask.DaskGBMRegressor(device="cuda", **kw).fit(dX, dy)
    reference = gbm.GBMRegressor(**kw).fit(X, y)
    assert est.get_booster().to_json() == reference.get_booster().to_json()
    pred = est.predict(dX)
    assert isinstance(pred._meta, FakeDeviceArray)  # declared on the device, as computed
    out = pred.compute()
    assert isinstance(out, FakeDeviceArray)
    np.testing.assert_array_equal(out.get(), reference.predict(X))


def test_two_workers_on_one_gpu_and_a_worker_without_rows(client):
    X, y = _data(1)
    local = gbm.train(PARAMS, X, y, 3).to_json()
    assert all(client.run(_one_gpu_for_all).values())
    a = sorted(alive_workers(client))[:1]
    dX, dy = (client.persist(v, workers=a) for v in (_gpu_blocks(X, (700, 800)),
                                                     _gpu_blocks(y, (700, 800))))
    wait([dX, dy])
    stats = {}
    model = gbm.dask.train(client, dict(PARAMS, device="cuda"), dX, dy, 3, balance=False,
                           _stats=stats)
    assert model.to_json() == local
    assert sorted(r["rows"] for r in stats["ranks"]) == [0, 1500]
    assert {r["device_allreduce"] for r in stats["ranks"]} == {"host"}
    assert "share GPU GPU-0 on node-a" in stats["ranks"][0]["device_allreduce_reason"]


class _FakeGpuEverywhere(WorkerPlugin):
    """A worker plugin: every worker, a killed one's replacement included, runs the fake."""

    name = "gbm-test-fake-gpu"

    def setup(self, worker):
        _install_fake_gpu()


class _KillAt(TrainingCallback):
    def __init__(self, address, epoch):
        self.address, self.epoch = address, epoch

    def before_iteration(self, booster, epoch, evals_log):
        from distributed import get_worker

        if epoch == self.epoch and get_worker().address == self.address:
            os.kill(os.getpid(), signal.SIGKILL)
        return False


def test_a_lost_gpu_worker_s_fit_goes_on_with_the_local_model(client):
    # last in the module: the killed worker comes back on a new address
    X, y = _data(2)
    local = gbm.train(PARAMS, X, y, 6).to_json()
    client.register_plugin(_FakeGpuEverywhere())
    victim = sorted(alive_workers(client))[1]
    stats = {}
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "600s"}):
        model = gbm.dask.train(client, dict(PARAMS, device="cuda"),
                               _gpu_blocks(X, (700, 800)), _gpu_blocks(y, (700, 800)), 6,
                               callbacks=[_KillAt(victim, 3)], _stats=stats)
        client.wait_for_workers(2, timeout=120)  # the replacement, before the cluster closes
    assert model.to_json() == local
    (record,) = stats["recoveries"]
    assert record["workers"] == [victim] and record["round"] == 3
    assert {r["device_allreduce"] for r in stats["ranks"]} == {"host"}
