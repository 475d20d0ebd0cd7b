"""Dask workers holding SciPy sparse partitions (issue 25): the model ``gbm.train`` makes
on the whole matrix, byte for byte, on one and two workers and any chunking (an empty
chunk, a worker without rows), in every bin layout; bundles checked on every worker's
rows, with a conflict on one worker's rows only."""
import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

import gbm  # noqa: E402
import gbm.dask  # noqa: E402
from gbm.dask.spmd import alive_workers  # noqa: E402
from tests.support.dask_cases import client  # noqa: E402,F401 (the fixture)

PARAMS = {"max_depth": 3, "max_bin": 16, "bin_sample_size": 500, "learning_rate": 0.5}
CHUNKS = (300, 0, 450, 250)


def _sparse_dask(X, chunks=CHUNKS):
    """A dask array of SciPy CSR chunks (from a dense copy: test data only)."""
    dense = da.from_array(X.toarray(), chunks=(chunks, -1))
    return dense.map_blocks(sp.csr_matrix, dtype=X.dtype, meta=sp.csr_matrix((0, X.shape[1])))


def _data(seed=0, n=1000):
    from tests.test_bundling import one_hot

    X, codes = one_hot(n=n, levels=(9, 6), seed=seed, extra=3)
    X = X.tolil()
    # a second level of the first variable in a row of the last chunk: a conflict there only
    X[n - 100, (codes[0][n - 100] + 1) % 9] = 1.0
    X = X.tocsr()
    X.eliminate_zeros()  # as the chunks made from a dense copy are (_sparse_dask)
    rng = np.random.default_rng(seed)
    y = codes[0] % 3 - (codes[1] == 2) * 1.5 + X[:, 15].toarray().ravel() \
        + rng.normal(scale=0.2, size=n)
    return X, y


@pytest.mark.parametrize("layout", ["auto", "sparse", "bundled", "dense"])
def test_same_model_as_local_on_one_and_two_workers(client, layout):
    X, y = _data()
    params = dict(PARAMS, bin_layout=layout)
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=X.shape[0])
    local = gbm.train(params, X, y, 4, sample_weight=w).to_json()
    dX = _sparse_dask(X)
    dy, dw = (da.from_array(a, chunks=(CHUNKS,)) for a in (y, w))
    workers = sorted(alive_workers(client))
    for n in (1, 2):
        model = gbm.dask.train(client, params, dX, dy, 4, sample_weight=dw,
                               workers=workers[:n])
        assert model.to_json() == local, f"{n} workers"


def test_eval_set_and_a_worker_without_rows(client):
    X, y = _data(seed=2)
    Xv, yv = _data(seed=3, n=300)
    local = gbm.train(PARAMS, X, y, 30, evals=[(Xv, yv, "valid")],
                      early_stopping_rounds=2)
    chunks = (1000,)  # one partition: the second worker holds no rows (a dense empty block)
    model = gbm.dask.train(client, PARAMS, _sparse_dask(X, chunks),
                           da.from_array(y, chunks=chunks), 30,
                           evals=[(_sparse_dask(Xv, (120, 180)), da.from_array(yv, chunks=(120, 180)),
                                   "valid")],
                           early_stopping_rounds=2, balance=False)
    assert model.to_json() == local.to_json()
    assert model.evals_result == local.evals_result


def test_bundles_are_checked_on_every_workers_rows():
    from gbm.collective import LOCAL, ThreadGroup
    from gbm.bins.binning import BinMapper, sample_mask
    from gbm.bins.bundling import find_bundles
    from gbm.data.inputs import check_X
    from gbm.kernels import cpu

    from tests.test_bundling import one_hot

    X, _ = one_hot(n=1000, levels=(9, 6), extra=3)  # no conflict yet
    in_sample = sample_mask(np.arange(1000), 1000, 500, 0)
    r = 600 + int(np.flatnonzero(~in_sample[600:])[0])  # rank 1's, outside the sample
    own = int(X[r, :9].nonzero()[1][0])
    X = X.tolil()
    X[r, (own + 1) % 9] = 1.0  # two levels of the first variable in that row
    whole = check_X(X.tocsr())
    mapper = BinMapper(sample_size=500, seed=0).fit(whole)
    expected = find_bundles(mapper.sample, whole, mapper.n_bins, LOCAL, cpu)
    parts = [whole.take_rows(np.arange(0, 600)), whole.take_rows(np.arange(600, 1000))]

    def run(collective):
        ids = np.arange(0, 600) if collective.rank == 0 else np.arange(600, 1000)
        ranked = BinMapper(sample_size=500, seed=0).fit(parts[collective.rank], row_ids=ids,
                                                         n_rows_total=1000,
                                                         collective=collective)
        return find_bundles(ranked.sample, parts[collective.rank], ranked.n_bins, collective,
                            cpu)

    for bundles in ThreadGroup(2).run(run):
        np.testing.assert_array_equal(bundles.bundle_of, expected.bundle_of)
        np.testing.assert_array_equal(bundles.feature_code, expected.feature_code)
    # the proposal (from the sample) bundled the variable's levels; the check of rank 1's
    # rows found the pair, and each of the two is alone now
    for f in (own, (own + 1) % 9):
        assert (expected.bundle_of == expected.bundle_of[f]).sum() == 1
    others = [f for f in range(9) if f not in (own, (own + 1) % 9)]
    assert np.unique(expected.bundle_of[others]).size == 1
