"""Ranking batches with ``qid=`` and ``weight=`` (issue 26): each batch gives one weight
per query group it holds, as XGBoost's ``DataIter`` does; the streamed model is the
in-memory ``DMatrix(X, qid=qid, weight=group_weights)`` one, byte for byte, for any batch
cuts (a query group split between batches stays one group, its weight given in both)."""
import numpy as np
import pytest

import gbm

N_ROWS, SAMPLE = 500, 200


def _ranking(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_ROWS, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.clip(np.round(np.nan_to_num(X[:, 0]) + rng.normal(size=N_ROWS)), 0, 3)
    sizes = rng.integers(1, 25, 60)
    sizes = sizes[np.cumsum(sizes) <= N_ROWS]
    sizes = np.r_[sizes, N_ROWS - sizes.sum()]
    qid = np.repeat(np.arange(sizes.shape[0]), sizes)
    return X, y.astype(np.float64), qid, rng.uniform(0.2, 3.0, sizes.shape[0])


class QueryBatches(gbm.DataIter):
    """Rows cut at ``bounds``; each batch's weight is ``weights(lo, hi)``."""

    def __init__(self, X, y, qid, bounds, weights):
        super().__init__(min_cache_page_bytes=500)
        self.X, self.y, self.qid, self.bounds, self.weights = X, y, qid, bounds, weights
        self.i = 0

    def next(self, input_data):
        if self.i >= len(self.bounds) - 1:
            return False
        lo, hi = self.bounds[self.i], self.bounds[self.i + 1]
        input_data(data=self.X[lo:hi], label=self.y[lo:hi], qid=self.qid[lo:hi],
                   weight=self.weights(lo, hi))
        self.i += 1
        return True

    def reset(self):
        self.i = 0


def _per_group(qid, group_weight):
    """Each batch's weights: one per query group it holds (XGBoost's form)."""
    return lambda lo, hi: group_weight[np.unique(qid[lo:hi])]


@pytest.mark.parametrize("bounds", [[0, N_ROWS], [0, 101, 250, 251, 252, N_ROWS],
                                    [0, 7, 8, N_ROWS]])
@pytest.mark.parametrize("kind", [gbm.QuantileDMatrix, gbm.ExtMemQuantileDMatrix])
def test_query_weights_in_batches_give_the_in_memory_model(bounds, kind):
    """Cuts inside query groups, batches of one row; a binning sample
    smaller than the data (its rows weighted by their groups); an eval set with ``ref=``
    and its own group weights scores as in memory."""
    X, y, qid, group_weight = _ranking()
    Xv, yv, qv, wv = _ranking(1)
    p = {"objective": "rank:ndcg", "max_depth": 3, "bin_sample_size": SAMPLE,
         "eval_metric": "ndcg@5"}
    want_log, got_log = {}, {}
    expected = gbm.train(p, gbm.DMatrix(X, label=y, qid=qid, weight=group_weight), 3,
                         evals=[(gbm.DMatrix(Xv, label=yv, qid=qv, weight=wv), "v")],
                         evals_result=want_log, verbose_eval=False).to_json()
    assert expected != gbm.train(p, gbm.DMatrix(X, label=y, qid=qid), 3).to_json()
    dtrain = kind(QueryBatches(X, y, qid, bounds, _per_group(qid, group_weight)),
                  bin_sample_size=SAMPLE)
    np.testing.assert_array_equal(dtrain.weight, group_weight)
    dvalid = kind(QueryBatches(Xv, yv, qv, [0, 230, N_ROWS], _per_group(qv, wv)), ref=dtrain)
    got = gbm.train(p, dtrain, 3, evals=[(dvalid, "v")], evals_result=got_log,
                    verbose_eval=False).to_json()
    assert got == expected and got_log == want_log


def test_per_row_weights_and_disagreeing_halves_are_refused():
    """Per-row weights beside ``qid=`` (XGBoost refuses them too: one weight per query
    group) and a group split between batches with two weights: errors naming the batch."""
    X, y, qid, group_weight = _ranking()
    per_row = np.repeat(group_weight, np.bincount(qid))
    with pytest.raises(ValueError, match="batch 0: weight has 101 values but the batch has "
                                         r"\d+ query groups"):
        gbm.QuantileDMatrix(QueryBatches(X, y, qid, [0, 101, N_ROWS],
                                         lambda lo, hi: per_row[lo:hi]))
    cut = int(np.flatnonzero(np.diff(qid) == 0)[3]) + 1  # inside a query group
    split = qid[cut]

    def halves(lo, hi):
        w = group_weight[np.unique(qid[lo:hi])].copy()
        if lo == cut:
            w[0] += 1.0
        return w

    with pytest.raises(ValueError, match=f"batch 1: query group qid={split} goes on from "
                                         "batch 0"):
        gbm.QuantileDMatrix(QueryBatches(X, y, qid, [0, cut, N_ROWS], halves))


def test_xgboost_takes_the_same_batches():
    """The batch form is XGBoost's: its QuantileDMatrix of these batches (cut between
    query groups) reads the weights as the groups' and trains on them (its model depends
    on the batching: its sketch is per batch), and it refuses per-row weights."""
    xgb = pytest.importorskip("xgboost")
    X, y, qid, group_weight = _ranking()

    class XgbBatches(xgb.DataIter):
        def __init__(self, weights):
            super().__init__()
            self.inner = QueryBatches(X, y, qid, [0, int(np.searchsorted(qid, 20)), N_ROWS],
                                      weights)

        def next(self, input_data):
            return self.inner.next(input_data)

        def reset(self):
            self.inner.reset()

    d = xgb.QuantileDMatrix(XgbBatches(_per_group(qid, group_weight)), nthread=1)
    np.testing.assert_array_equal(d.get_weight(), group_weight.astype(np.float32))  # a group
    np.testing.assert_array_equal(d.get_group(), np.bincount(qid))
    xgb.train({"objective": "rank:ndcg", "max_depth": 3, "nthread": 1}, d, 1)
    per_row = np.repeat(group_weight, np.bincount(qid))
    with pytest.raises(xgb.core.XGBoostError, match="number of query groups"):
        xgb.QuantileDMatrix(XgbBatches(lambda lo, hi: per_row[lo:hi]))


def test_parquet_files_with_qid_and_weight_columns(tmp_path):
    """``ParquetIter(..., weight="w", qid="q")``: a weight column holds each row's group
    weight, given to the stream as one per group of a batch (batches of 64 rows cut
    groups); the in-memory model. A group whose rows carry two weights is refused (the
    stream's error for an iterator that raises, naming the batch)."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    X, y, qid, group_weight = _ranking(2)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame["y"], frame["q"] = y, qid
    frame["w"] = np.repeat(group_weight, np.bincount(qid))
    frame.to_parquet(tmp_path / "rank.parquet")
    p = {"objective": "rank:ndcg", "max_depth": 3, "bin_sample_size": SAMPLE}
    expected = gbm.train(p, gbm.DMatrix(X, label=y, qid=qid, weight=group_weight,
                                        feature_names=list(frame.columns[:4]),
                                        feature_types=["float"] * 4),  # the frame's dtypes'
                         3).to_json()
    it = gbm.ParquetIter(tmp_path / "rank.parquet", label="y", weight="w", qid="q",
                         batch_rows=64)
    assert gbm.train(p, gbm.QuantileDMatrix(it, bin_sample_size=SAMPLE), 3).to_json() == expected
    frame.loc[frame.index[qid == 5][-1], "w"] += 1.0
    frame.to_parquet(tmp_path / "rank.parquet")
    with pytest.raises(RuntimeError, match="batch 0: .* query group qid=5 whose first row"):
        gbm.QuantileDMatrix(gbm.ParquetIter(tmp_path / "rank.parquet", label="y", weight="w",
                                            qid="q", batch_rows=64))
