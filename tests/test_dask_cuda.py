"""Dask training on real GPUs, when this machine has them (skipped otherwise, e.g. in CI):

* dask-cuda's ``LocalCUDACluster``, one worker per GPU: with two GPUs or more the ranks
  all-reduce over NCCL, with one over host memory (a single rank);
* two ``LocalCluster`` worker processes on one GPU: the host-memory path.

Both end with the local CPU model, bit for bit. ``bench/gpu_check.sh`` runs this file.
"""
import numpy as np
import pytest

pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
cupy = pytest.importorskip("cupy")
dask_cuda = pytest.importorskip("dask_cuda")

from distributed import Client, LocalCluster  # noqa: E402

import gbm  # noqa: E402
import gbm.dask  # noqa: E402
from gbm.dask.spmd import alive_workers  # noqa: E402

PARAMS = {"max_depth": 4, "max_bin": 64, "bin_sample_size": 2000, "learning_rate": 0.3}


def _gpus():
    """How many GPUs CuPy sees (0 without a driver or device)."""
    try:
        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 - no driver / no device: CUDARuntimeError
        return 0


pytestmark = pytest.mark.skipif(_gpus() == 0, reason="no GPU on this machine")


def _data(n=6000):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 6)).astype(np.float32)
    return X, X[:, 0] - np.abs(X[:, 1]) + rng.normal(scale=0.5, size=n)


def _fit_on(cluster, X, y, params=PARAMS):
    with Client(cluster) as client:
        n = len(alive_workers(client))
        chunks = (len(X) // 3, len(X) // 6, len(X) - len(X) // 3 - len(X) // 6)
        dX = da.from_array(X, chunks=(chunks, -1)).map_blocks(cupy.asarray)
        dy = da.from_array(y, chunks=(chunks,)).map_blocks(cupy.asarray)
        stats = {}
        model = gbm.dask.train(client, dict(params, device="cuda"), dX, dy, 5, _stats=stats)
        return n, model, [r["device_allreduce"] for r in stats["ranks"]]


def test_one_worker_per_gpu_with_dask_cuda():
    X, y = _data()
    local = gbm.train(PARAMS, X, y, 5).to_json()
    try:
        cluster = dask_cuda.LocalCUDACluster(threads_per_worker=1, dashboard_address=None)
    except Exception as err:  # noqa: BLE001 - e.g. NVMLError_LibraryNotFound without NVML
        pytest.skip(f"dask-cuda could not start: {type(err).__name__}: {err}")
    with cluster:
        n, model, paths = _fit_on(cluster, X, y)
    assert model.to_json() == local
    assert paths == (["nccl"] * n if n > 1 else ["host"])


def test_two_workers_sharing_one_gpu_use_host_memory():
    X, y = _data()
    local = gbm.train(PARAMS, X, y, 5).to_json()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:  # both see GPU 0
        n, model, paths = _fit_on(cluster, X, y)
    assert n == 2 and model.to_json() == local
    assert paths == ["host", "host"]


def test_vector_leaf_trees_on_two_workers_sharing_one_gpu():
    """``multi_strategy="multi_output_tree"``: the CUDA vector-leaf kernels on each rank,
    the k-channel histograms summed over host memory."""
    X, y = _data()
    classes = np.digitize(y, [-1.0, 0.0, 1.0]).astype(np.float64)
    params = dict(PARAMS, objective="multi:softprob", num_class=4,
                  multi_strategy="multi_output_tree")
    local = gbm.train(params, X, classes, 5).to_json()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        n, model, paths = _fit_on(cluster, X, classes, params)
    assert n == 2 and model.to_json() == local
