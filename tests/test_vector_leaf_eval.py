"""Eval sets of vector-leaf models (``multi_strategy="multi_output_tree"``) scored with
each round's trees walked once per row (``gbm.model.vector_predict``), never packed once
per output: scores (``evals_result``), early stopping's ``best_iteration`` and the model
bit for bit those of the per-output path (``Forest`` of one-output trees, walked by the
one-output kernels), which ``_per_output`` brings back for the reference run."""
import numpy as np
import pytest
import scipy.sparse as sp

import gbm
import gbm.training.evaluation as evaluation

VL = {"multi_strategy": "multi_output_tree", "max_depth": 3, "eta": 0.3, "seed": 3}


def _data(kind, n=900, k=4, seed=0):
    """Rows (some NaN) and labels of ``kind``: "softprob" (k classes), "regression"
    ((n, k) targets) or "multilabel" ((n, k) of 0/1)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6)).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = np.nan
    z = np.nan_to_num(X[:, :k] if k <= 6 else X[:, np.arange(k) % 6] * (1 + np.arange(k) % 5))
    if kind == "softprob":
        y = np.argmax(z + rng.normal(scale=0.8, size=z.shape), axis=1)
        return X, y, {"objective": "multi:softprob", "num_class": k}
    if kind == "regression":
        return X, z + rng.normal(scale=0.3, size=z.shape), {"objective": "reg:squarederror"}
    return X, (z + rng.normal(scale=0.8, size=z.shape) > 0).astype(np.float64), \
        {"objective": "binary:logistic"}


def _unbinnable(X):
    """An eval set the training bins cannot hold: NaN in a feature with none in training
    and 256 bins (no missing slot), so it is scored on raw rows."""
    X = X.copy()
    X[::5, 0] = np.nan
    return X


def _per_output(monkeypatch):
    """The former path: every round's trees packed once per output (``booster.forest``)."""
    monkeypatch.setattr(evaluation, "_walks_vectors", lambda booster: False)


def _fit(params, X, y, rounds, evals, **kw):
    """The booster and its ``evals_result``, with the eval sets' last margins (float64
    (n_rows, k) each) under the key "margins" (scores can round a last-bit difference
    away; the margins cannot)."""
    result, sets = {}, []
    init = evaluation.EvalSet.__init__

    def kept(self, *args):
        init(self, *args)
        sets.append(self)

    evaluation.EvalSet.__init__ = kept
    try:
        booster = gbm.train(params, X, y, rounds, evals=evals, evals_result=result, **kw)
    finally:
        evaluation.EvalSet.__init__ = init
    result["margins"] = {es.name: es.margin.reshape(-1) for es in sets}
    return booster, result


def _count_vector_calls(monkeypatch):
    """Counts of the vector-leaf margin functions' calls from the eval sets."""
    calls = {"binned": 0, "raw": 0}

    def wrap(name, key):
        inner = getattr(evaluation, name)

        def counted(*args):
            calls[key] += 1
            return inner(*args)
        monkeypatch.setattr(evaluation, name, counted)

    wrap("add_binned_vector_margins", "binned")
    wrap("add_vector_margins", "raw")
    return calls


def _same(a, b):
    """Two ``evals_result`` dicts equal bit for bit (floats compared by their bits)."""
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].keys() == b[name].keys()
        for metric in a[name]:
            x, y = np.array(a[name][metric]), np.array(b[name][metric])
            assert x.shape == y.shape and x.size > 0
            assert np.array_equal(x.view(np.int64), y.view(np.int64)), (name, metric)


CASES = [
    ("softprob", {}),
    ("softprob", {"gradient_projection": True, "projection_dim": 3}),
    ("softprob", {"gradient_projection": False, "num_parallel_tree": 2, "subsample": 0.7,
                  "colsample_bynode": 0.6}),
    ("regression", {}),
    ("multilabel", {"n_jobs": 2}),
]


@pytest.mark.parametrize("kind, extra", CASES, ids=[
    "softprob", "softprob-projected", "softprob-parallel-trees", "regression",
    "multilabel-2-threads"])
def test_eval_scores_and_early_stopping_same_bits(kind, extra, monkeypatch):
    k = 9 if extra.get("gradient_projection") else 4
    X, y, obj = _data(kind, k=k)
    params = dict(VL, **obj, **extra)
    Xt, yt, Xv, yv = X[:600], y[:600], X[600:], y[600:]
    sparse = sp.csr_matrix(np.nan_to_num(Xv, nan=0.0))  # sparse bins
    evals = [(Xv, yv, "dense"), (sparse, yv, "sparse")]
    kw = {"early_stopping_rounds": 2}
    calls = _count_vector_calls(monkeypatch)
    new, new_result = _fit(params, Xt, yt, 40, evals, **kw)
    assert calls["binned"] == 2 * new.num_boosted_rounds and calls["raw"] == 0
    if "num_parallel_tree" in extra:
        assert len(new.trees) == 2 * new.num_boosted_rounds
    _per_output(monkeypatch)
    old, old_result = _fit(params, Xt, yt, 40, evals, **kw)
    _same(new_result, old_result)
    assert new.best_iteration == old.best_iteration
    assert new.num_boosted_rounds == old.num_boosted_rounds
    assert new.to_json() == old.to_json()


@pytest.mark.parametrize("kind", ["softprob", "multilabel"])
def test_eval_set_on_raw_rows_same_bits(kind, monkeypatch):
    """An eval set the training bins cannot hold is scored on its raw rows."""
    X, y, obj = _data(kind)
    X[:, 0] = np.nan_to_num(X[:, 0])  # no NaN in training: feature 0 has all 256 bins
    params = dict(VL, **obj, max_bin=256)
    evals = [(_unbinnable(X[600:]), y[600:], "raw")]
    calls = _count_vector_calls(monkeypatch)
    _, new_result = _fit(params, X[:600], y[:600], 6, evals)
    assert calls == {"binned": 0, "raw": 6}
    _per_output(monkeypatch)
    _, old_result = _fit(params, X[:600], y[:600], 6, evals)
    _same(new_result, old_result)


def test_continued_training_same_bits(monkeypatch):
    """``init_model``: the eval sets start from the model's margins (raw rows, a
    ``QuantileDMatrix`` binned with the training edges, rows with their own start), then
    the new rounds' trees are added."""
    X, y, obj = _data("softprob", k=5)
    params = dict(VL, **obj, seed=0)  # the QuantileDMatrix's seed
    train = gbm.QuantileDMatrix(X[:600], label=y[:600])
    first = gbm.train(params, train, num_boost_round=4)
    margin = np.random.default_rng(1).normal(size=(300, 5))

    def evals():
        return [(gbm.QuantileDMatrix(X[600:], label=y[600:], ref=train), "quantile"),
                (gbm.QuantileDMatrix(X[600:], label=y[600:], base_margin=margin, ref=train),
                 "quantile_start"),
                (X[600:], y[600:], "raw")]

    calls = _count_vector_calls(monkeypatch)
    new, new_result = _fit(params, train, None, 5, evals(), init_model=first)
    assert calls["binned"] == 2 + 3 * 5  # the two QuantileDMatrix's starts, then each round
    _per_output(monkeypatch)
    old, old_result = _fit(params, train, None, 5, evals(), init_model=first)
    _same(new_result, old_result)
    assert new.to_json() == old.to_json()
    # the start holds the first model's margins: its scores are those of predict
    p = first.predict(X[600:], output_margin=True)
    after = new[:4].predict(X[600:], output_margin=True)
    assert np.array_equal(p, after)
