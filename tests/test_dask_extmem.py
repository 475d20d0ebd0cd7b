"""``gbm.dask.train(..., external_memory=True)``: each worker keeps its rows' bins in page
files (``gbm.dask.paged``) and the model file is the local in-memory one, byte for byte,
on 1, 2 and 3 workers with uneven chunking (one chunk empty)."""
import os

import numpy as np
import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask.array")

from distributed import wait  # noqa: E402

import gbm  # noqa: E402
import gbm.dask  # noqa: E402
from tests.support.dask_cases import (N_ROWS, PARAMS, as_dask, client,  # noqa: E402,F401
                                     first_workers, regression_data, three_workers)


def test_paged_ranks_give_the_local_model_on_one_two_and_three_workers(client, tmp_path):
    X, y = regression_data()
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=N_ROWS)
    local = gbm.train(PARAMS, X, y, 4, sample_weight=w).to_json()
    dX, dy, dw = as_dask(X, y, w)
    for n in (1, 2):
        # a page per few hundred rows: every rank reads several pages a pass
        stats = {}
        model = gbm.dask.train(client, PARAMS, dX, dy, 4, sample_weight=dw,
                               workers=first_workers(client, n), external_memory=True,
                               cache_dir=str(tmp_path), min_cache_page_bytes=1000,
                               _stats=stats)
        assert model.to_json() == local, f"{n} workers"
        # a page per non-empty partition (each is over 1000 bytes), each read every pass
        assert sum(r["pages"] for r in stats["ranks"]) == 3
        assert all(r["page_passes"] > 4 for r in stats["ranks"] if r["rows"])
        assert os.listdir(tmp_path) == [], "page files left behind"
    with three_workers(client):
        dX, dy, dw = as_dask(X, y, w, chunks=(300, 900, 200, 1000))
        model = gbm.dask.train(client, PARAMS, dX, dy, 4, sample_weight=dw,
                               external_memory=True)
        assert model.to_json() == local, "3 workers"


def test_paged_ranks_subsample_and_early_stopping_on_an_eval_set(client):
    X, y = regression_data(3)
    yb = (y > 0).astype(np.float64)
    Xe, ye = regression_data(4, n=500)
    yeb = (ye > 0).astype(np.float64)
    params = dict(PARAMS, objective="binary:logistic", subsample=0.7)
    local = gbm.train(params, X, yb, 30, evals=[(Xe, yeb, "v")], early_stopping_rounds=2)
    dX, dy = as_dask(X, yb)
    dXe, dye = as_dask(Xe, yeb, chunks=(200, 300))
    model = gbm.dask.train(client, params, dX, dy, 30, evals=[(dXe, dye, "v")],
                           early_stopping_rounds=2, external_memory=True)
    assert model.to_json() == local.to_json()
    assert model.best_iteration == local.best_iteration


def test_external_memory_must_be_a_bool(client):
    X, y = regression_data()
    dX, dy = as_dask(X, y)
    with pytest.raises(TypeError, match="external_memory"):
        gbm.dask.train(client, PARAMS, dX, dy, 1, external_memory="yes")


def test_a_rank_without_rows_pages_nothing_and_gives_the_local_model(client):
    X, y = regression_data(2)
    local = gbm.train(PARAMS, X, y, 3).to_json()
    a = first_workers(client, 1)
    dX, dy = (client.persist(v, workers=a) for v in as_dask(X, y))
    wait([dX, dy])
    stats = {}
    model = gbm.dask.train(client, PARAMS, dX, dy, 3, workers=first_workers(client, 2),
                           balance=False, external_memory=True, _stats=stats)
    assert model.to_json() == local
    assert sorted(r["rows"] for r in stats["ranks"]) == [0, N_ROWS]


def test_category_columns_give_the_local_model(client):
    """pandas ``category`` columns, their categories listed differently in each partition:
    the categories every rank sees, coded as the local fit codes them, the local model."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y = regression_data()
    frame = pd.DataFrame(X[:, :2], columns=["a", "b"])
    frame["c"] = pd.Categorical(np.where(X[:, 3] > 0.5, "x", np.where(X[:, 3] < -0.5, "y",
                                                                      "z")))
    y = y + (frame["c"] == "z").to_numpy() * 2.0
    local = gbm.train(PARAMS, frame, y, 3).to_json()
    dX = dd.from_pandas(frame, npartitions=3)
    dy = dd.from_pandas(pd.Series(y), npartitions=3)
    model = gbm.dask.train(client, PARAMS, dX, dy, 3, external_memory=True)
    assert model.to_json() == local
    assert model.categories == [None, None, ["x", "y", "z"]]
    assert (model.trees_to_dataframe()["Feature"] == "c").any()  # split on


def test_a_missing_cache_dir_is_refused(client, tmp_path):
    X, y = regression_data()
    dX, dy = as_dask(X, y)
    with pytest.raises(FileNotFoundError, match="cache_dir"):
        gbm.dask.train(client, PARAMS, dX, dy, 1, external_memory=True,
                       cache_dir=str(tmp_path / "absent"))


def test_a_numeric_dataframe_gives_the_local_model_with_its_feature_names(client):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y = regression_data(5)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    local = gbm.train(PARAMS, frame, y, 3).to_json()
    dX = dd.from_pandas(frame, npartitions=3)
    dy = dd.from_pandas(pd.Series(y), npartitions=3)
    model = gbm.dask.train(client, PARAMS, dX, dy, 3, external_memory=True)
    assert model.to_json() == local
    assert model.feature_names == list(frame.columns)


def test_estimators_take_external_memory_and_cache_dir(client, tmp_path):
    """``DaskGBMRegressor(external_memory=True, cache_dir=...)``: the local estimator's
    model, its pages under ``cache_dir`` and removed after the fit; the classifier too."""
    X, y = regression_data(6)
    dX, dy = as_dask(X, y)
    kw = dict(n_estimators=3, max_depth=3, max_bin=32)
    local = gbm.GBMRegressor(**kw).fit(X, y).get_booster().to_json()
    est = gbm.dask.DaskGBMRegressor(**kw, external_memory=True, cache_dir=str(tmp_path))
    assert est.get_params()["external_memory"] is True
    assert est.fit(dX, dy).get_booster().to_json() == local
    assert os.listdir(tmp_path) == [], "page files left behind"
    yb = (y > 0).astype(np.float64)
    local = gbm.GBMClassifier(**kw).fit(X, yb).get_booster().to_json()
    clf = gbm.dask.DaskGBMClassifier(**kw, external_memory=True)
    assert clf.fit(dX, as_dask(yb)[0]).get_booster().to_json() == local
    assert clf.to_local().get_booster().to_json() == local
    with pytest.raises(FileNotFoundError, match="cache_dir"):
        gbm.dask.DaskGBMRegressor(**kw, external_memory=True,
                                  cache_dir=str(tmp_path / "absent")).fit(dX, dy)


def test_sparse_partitions_give_the_local_model(client, tmp_path):
    """SciPy CSR partitions (absent entries missing): binned a partition at a time into
    dense pages, the model of the local fit of the same sparse matrix."""
    sp = pytest.importorskip("scipy.sparse")
    import dask.array as da

    X, y = regression_data(7)
    X[np.random.default_rng(7).uniform(size=X.shape) < 0.5] = 0.0  # mostly absent
    Xs = sp.csr_matrix(np.nan_to_num(X))
    Xs.eliminate_zeros()
    local = gbm.train(PARAMS, Xs, y, 3).to_json()
    dense = da.from_array(Xs.toarray(), chunks=((700, 0, 1100, 600), -1))
    dX = dense.map_blocks(sp.csr_matrix, dtype=Xs.dtype, meta=sp.csr_matrix((0, X.shape[1])))
    dy = as_dask(y)[0]
    model = gbm.dask.train(client, PARAMS, dX, dy, 3, external_memory=True,
                           cache_dir=str(tmp_path), min_cache_page_bytes=1000)
    assert model.to_json() == local
    assert os.listdir(tmp_path) == [], "page files left behind"


def test_continuing_a_model_gives_the_local_continued_model(client):
    """``init_model`` (and the estimators' ``xgb_model=``) with ``external_memory=True``:
    the margins come from the rank's raw rows while they are joined, so a model trained on
    other data (thresholds that are not these rows' bin edges) continues as in memory,
    with the rows' own base margins too."""
    X, y = regression_data(11)
    old = gbm.train(PARAMS, X * 1.1 + 0.05, y, 3)  # other edges
    offset = np.random.default_rng(11).normal(size=N_ROWS)
    local = gbm.train(PARAMS, X, y, 2, init_model=old, base_margin=offset).to_json()
    dX, dy, doff = as_dask(X, y, offset)
    model = gbm.dask.train(client, PARAMS, dX, dy, 2, init_model=old, base_margin=doff,
                           external_memory=True, min_cache_page_bytes=1000)
    assert model.to_json() == local
    kw = dict(n_estimators=2, max_depth=3, max_bin=32)
    expected = gbm.GBMRegressor(**kw).fit(X, y, xgb_model=old).get_booster().to_json()
    est = gbm.dask.DaskGBMRegressor(**kw, external_memory=True).fit(dX, dy, xgb_model=old)
    assert est.get_booster().to_json() == expected


def test_ranking_with_query_group_weights_gives_the_local_model(client):
    """``rank:ndcg`` with one weight per query group (groups spanning partitions, a
    binning sample smaller than the data: the edges' sample weighs each row as its
    group): the local model, on one and two workers."""
    X, y = regression_data(12)
    rng = np.random.default_rng(12)
    sizes = rng.integers(5, 40, size=200)
    sizes = sizes[np.cumsum(sizes) <= N_ROWS]
    sizes[-1] += N_ROWS - sizes.sum()
    qid = np.repeat(np.arange(len(sizes)), sizes)
    rel = np.clip(np.round(y), 0, 4)
    group_weight = rng.uniform(0.2, 3.0, len(sizes))
    params = dict(PARAMS, objective="rank:ndcg")
    local = gbm.train(params, X, rel, 3, qid=qid, sample_weight=group_weight).to_json()
    assert local != gbm.train(params, X, rel, 3, qid=qid).to_json()  # the weights matter
    dX, drel, dqid = as_dask(X, rel, qid, chunks=(703, 998, 699))
    for n in (1, 2):
        model = gbm.dask.train(client, params, dX, drel, 3, qid=dqid,
                               sample_weight=group_weight, workers=first_workers(client, n),
                               external_memory=True, min_cache_page_bytes=1000)
        assert model.to_json() == local, f"{n} workers"


class _FailAt(gbm.callback.TrainingCallback):
    def __init__(self, epoch):
        self.epoch = epoch

    def after_iteration(self, booster, epoch, evals_log):
        if epoch == self.epoch:
            raise RuntimeError(f"simulated crash after round {epoch}")
        return False


def test_a_checkpoint_resumes_on_pages(client, tmp_path):
    """A fit with ``checkpoint_dir`` that crashed, run again with ``external_memory=True``:
    it resumes from the checkpoint's model (continued on the pages) and ends as the
    uninterrupted local fit."""
    X, y = regression_data(13)
    local = gbm.train(PARAMS, X, y, 5).to_json()
    dX, dy = as_dask(X, y)
    folder = str(tmp_path / "checkpoints")
    with pytest.raises(RuntimeError, match="simulated crash"):
        gbm.dask.train(client, PARAMS, dX, dy, 5, checkpoint_dir=folder,
                       callbacks=[_FailAt(2)], external_memory=True)
    resumed = gbm.dask.train(client, PARAMS, dX, dy, 5, checkpoint_dir=folder,
                             callbacks=[_FailBefore(3)], external_memory=True)
    assert resumed.to_json() == local


class _FailBefore(gbm.callback.TrainingCallback):
    """Raises in a round before ``epoch``: the fit must resume after them."""

    def __init__(self, epoch):
        self.epoch = epoch

    def before_iteration(self, booster, epoch, evals_log):
        if epoch < self.epoch:
            raise RuntimeError(f"round {epoch} trained again: not resumed")
        return False


def test_nthread_alias_with_external_memory(client):
    """XGBoost's ``nthread`` for ``n_jobs`` on the paged path (before: KeyError 'n_jobs')."""
    X, y = regression_data()
    params = dict(PARAMS, nthread=1)
    local = gbm.train(params, X, y, 3).to_json()
    dX, dy = as_dask(X, y)
    model = gbm.dask.train(client, params, dX, dy, 3, external_memory=True)
    assert model.to_json() == local
