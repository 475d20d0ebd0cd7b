"""What the Dask test modules share: one module's ``LocalCluster`` client (two spawned
worker processes, one thread each) and the continuous data they train on, with more rows
than the binning sample so that bin edges come from the hash-chosen rows."""
import contextlib
import time

import numpy as np
import pytest

from gbm.dask.spmd import alive_workers

PARAMS = {"max_depth": 3, "max_bin": 32, "bin_sample_size": 1000, "learning_rate": 0.3}
N_ROWS = 2400
CHUNKS = (700, 0, 1100, 600)  # uneven, one empty


@contextlib.contextmanager
def module_client(module):
    """A client of a two-worker local cluster; ``module``'s functions travel to the
    workers by value (the workers cannot import tests/)."""
    import cloudpickle
    from distributed import Client, LocalCluster

    cloudpickle.register_pickle_by_value(module)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def client(request):
    """The module's client (import this fixture into a Dask test module)."""
    with module_client(request.module) as c:
        yield c


def regression_data(seed=0, n=N_ROWS, f=5):
    """``X`` float32 (n, f) with 3% missing values and ``y`` float64 (n,)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f)).astype(np.float32)
    X[rng.uniform(size=X.shape) < 0.03] = np.nan
    signal_ = np.nan_to_num(X[:, 0]) * 2 + np.sin(np.nan_to_num(X[:, 1])) - np.nan_to_num(X[:, 2])
    return X, signal_ + rng.normal(scale=0.3, size=n)


def as_dask(*arrays, chunks=CHUNKS):
    """Each array as a dask array chunked by rows ``chunks``."""
    import dask.array as da

    return [da.from_array(a, chunks=(chunks,) + a.shape[1:]) for a in arrays]


def first_workers(client, n):
    """The addresses of ``client``'s first ``n`` workers, sorted."""
    return sorted(alive_workers(client))[:n]


@contextlib.contextmanager
def three_workers(client):
    """The module's cluster scaled to three workers, and back to two afterwards."""
    cluster = client.cluster
    cluster.scale(3)
    try:
        client.wait_for_workers(3, timeout=120)
        yield
    finally:
        cluster.scale(2)
        deadline = time.monotonic() + 60
        while len(alive_workers(client)) > 2 and time.monotonic() < deadline:
            time.sleep(0.2)
