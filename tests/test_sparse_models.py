"""Sparse input is never densified, and gives the model its dense form gives (issue 25):
the same data as a dense matrix with NaN where entries are absent, as SciPy CSR, CSC and
COO, binned in the dense or the sparse layout, on 1 and 2 threads: the same model file,
byte for byte, for every kind of fit (objectives, categories given as sparse columns,
weights, eval sets and early stopping, continued training, forests, ranking, sampling,
several targets). ``tests/cuda/test_cuda_sparse.py`` adds the CUDA simulator."""
import numpy as np
import pytest
import scipy.sparse as sp

import gbm

pytest.importorskip("pandas")


def sparse_data(n=700, n_features=24, density=0.15, seed=0, categorical=()):
    """(dense float32 with NaN where absent, CSR of the same entries): rounded values (ties,
    exact bins), a continuous column, explicit zeros among the stored values, and
    integer codes in the ``categorical`` columns."""
    rng = np.random.default_rng(seed)
    stored = rng.random((n, n_features)) < density
    stored[:, 0] = rng.random(n) < 0.6  # a denser column
    values = np.round(rng.normal(size=(n, n_features)) * 3) / 2
    values[:, 1] = rng.normal(size=n)  # continuous: quantile bins
    for f in categorical:
        values[:, f] = rng.integers(0, 7, n)
    dense = np.where(stored, values, np.nan).astype(np.float32)
    rows, cols = np.nonzero(stored)
    csr = sp.csr_matrix((dense[rows, cols].astype(np.float64), (rows, cols)), shape=dense.shape)
    return dense, csr


def _label(dense, rng, kind="regression"):
    x = np.nan_to_num(dense)
    signal = x[:, 0] * 1.5 + x[:, 1] - np.isnan(dense[:, 2]) * 2 + x[:, 3] * x[:, 4]
    if kind == "binary":
        return (signal + rng.logistic(size=len(signal)) > 0.3).astype(float)
    if kind == "multiclass":
        return np.digitize(signal + rng.normal(size=len(signal)), [-1.0, 0.5, 2.0]).astype(float)
    if kind == "counts":
        return rng.poisson(np.exp(np.clip(signal, -3, 3) * 0.4)).astype(float)
    return signal + rng.normal(scale=0.3, size=len(signal))


def forms(dense, csr):
    """(name, X, params added) of every form of the same data that must give one model."""
    return [("dense NaN, dense bins", dense, {"bin_layout": "dense", "n_jobs": 2}),
            ("dense NaN, sparse bins", dense, {"bin_layout": "sparse", "n_jobs": 1}),
            ("CSR, auto", csr, {"n_jobs": 2}),
            ("CSR, dense bins", csr, {"bin_layout": "dense", "n_jobs": 1}),
            ("CSC", csr.tocsc(), {"bin_layout": "sparse", "n_jobs": 1}),
            ("COO", csr.tocoo(), {"n_jobs": 2}),
            ("CSR, bundled", csr, {"bin_layout": "bundled", "n_jobs": 2}),
            ("dense NaN, bundled", dense, {"bin_layout": "bundled", "n_jobs": 1})]


def same_models(params, dense, csr, y, rounds=4, **kwargs):
    """Train every form; assert one model file; return it."""
    files = {}
    for name, X, extra in forms(dense, csr):
        files[name] = gbm.train(dict(params, **extra), X, y, rounds, **kwargs).to_json()
    first = next(iter(files.values()))
    for name, text in files.items():
        assert text == first, f"{name}: a different model file"
    return first


BASE = {"max_depth": 4, "learning_rate": 0.5}
OBJECTIVES = {
    "squared": ({}, "regression"),
    "binary": ({"objective": "binary:logistic"}, "binary"),
    "softprob": ({"objective": "multi:softprob", "num_class": 4}, "multiclass"),
    "poisson": ({"objective": "count:poisson"}, "counts"),
    "quantile": ({"objective": "reg:quantileerror", "quantile_alpha": [0.2, 0.8]},
                 "regression"),
    "lossguide": ({"grow_policy": "lossguide", "max_depth": 0, "max_leaves": 9}, "regression"),
    "sampled": ({"subsample": 0.7, "colsample_bytree": 0.8, "colsample_bylevel": 0.8,
                 "colsample_bynode": 0.7, "random_state": 3}, "binary"),
    "binning_sample": ({"bin_sample_size": 300, "max_bin": 8, "random_state": 5},
                       "regression"),
    "constrained": ({"monotone_constraints": {0: 1, 3: -1},
                     "interaction_constraints": [[0, 1, 2], [3, 4, 5]]}, "regression"),
    "forest": ({"num_parallel_tree": 3, "subsample": 0.8, "colsample_bynode": 0.8,
                "learning_rate": 1.0}, "binary"),
    "dart": ({"booster": "dart", "rate_drop": 0.3, "random_state": 2}, "regression"),
}


@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_one_model_for_every_form(name):
    params, kind = OBJECTIVES[name]
    dense, csr = sparse_data(seed=len(name))
    y = _label(dense, np.random.default_rng(1), kind)
    text = same_models(dict(BASE, **params), dense, csr, y)
    assert '"split_feature"' in text and gbm.Booster.from_json(text).num_boosted_rounds == 4


def test_weights_eval_sets_and_early_stopping():
    dense, csr = sparse_data(seed=3)
    y = _label(dense, np.random.default_rng(2), "binary")
    w = np.random.default_rng(4).uniform(0.2, 3.0, len(y))
    valid_dense, valid_csr = sparse_data(n=300, seed=9)
    y_valid = _label(valid_dense, np.random.default_rng(5), "binary")
    files = set()
    for (_, X, extra), valid in zip(forms(dense, csr),
                                    [valid_dense, valid_csr, valid_csr, valid_dense,
                                     valid_csr.tocsc(), valid_csr.tocoo(), valid_csr,
                                     valid_dense]):
        booster = gbm.train(dict(BASE, objective="binary:logistic", learning_rate=0.9, **extra),
                            X, y, 40, sample_weight=w, evals=[(valid, y_valid, "valid")],
                            early_stopping_rounds=2)
        assert booster.best_iteration < 39  # it stopped early
        files.add(booster.to_json())
    assert len(files) == 1


def test_categorical_features_as_sparse_columns():
    dense, csr = sparse_data(seed=5, categorical=(2, 5))
    y = _label(dense, np.random.default_rng(3)) + np.nan_to_num(dense[:, 5] % 3)
    for onehot in (4, 16):  # partition splits, then one-hot splits
        text = same_models(dict(BASE, max_cat_to_onehot=onehot), dense, csr, y,
                           categorical_features=[2, 5])
        assert '"categories"' in text and '"split_type": [' in text


def test_continued_training():
    dense, csr = sparse_data(seed=6)
    y = _label(dense, np.random.default_rng(6))
    files = set()
    for _, X, extra in forms(dense, csr):
        first = gbm.train(dict(BASE, **extra), X, y, 3)
        files.add(gbm.train(dict(BASE, **extra), X, y, 3, init_model=first).to_json())
    assert len(files) == 1


def test_ranking():
    dense, csr = sparse_data(n=600, seed=7)
    y = np.clip(np.round(_label(dense, np.random.default_rng(7)) / 2 + 1), 0, 4)
    same_models(dict(BASE, objective="rank:ndcg"), dense, csr, y, group=[40] * 15)


def test_several_targets():
    dense, csr = sparse_data(seed=8)
    rng = np.random.default_rng(8)
    y = np.column_stack([_label(dense, rng), _label(dense, rng) * -0.5])
    same_models(BASE, dense, csr, y)


def test_explicit_zeros_are_values_and_stored_nan_missing():
    dense, csr = sparse_data(n=400, seed=10)
    y = _label(dense, np.random.default_rng(10))
    csr = csr.copy()
    csr.data[::7] = 0.0  # stored zeros: values
    dense = dense.copy()
    rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
    dense[rows[::7], csr.indices[::7]] = 0.0
    with_nan = csr.copy()
    with_nan.data[1::11] = np.nan  # stored NaN: missing, as an absent entry
    dense_nan = dense.copy()
    dense_nan[rows[1::11], csr.indices[1::11]] = np.nan
    a = gbm.train(dict(BASE, bin_layout="dense"), dense_nan, y, 3).to_json()
    assert gbm.train(BASE, with_nan, y, 3).to_json() == a
    assert gbm.train(BASE, csr, y, 3).to_json() != a  # the NaN made a difference


def test_predictions_on_raw_sparse_rows():
    dense, csr = sparse_data(seed=11, categorical=(4,))
    y = _label(dense, np.random.default_rng(11), "multiclass")
    booster = gbm.train(dict(BASE, objective="multi:softprob", num_class=4), csr, y, 4,
                        categorical_features=[4])
    test_dense, test_csr = sparse_data(n=200, seed=12, categorical=(4,))
    for X in (test_csr, test_csr.tocsc(), test_csr.tocoo()):
        np.testing.assert_array_equal(booster.predict(X), booster.predict(test_dense))
        for kind in ("output_margin", "pred_leaf", "pred_contribs", "pred_interactions"):
            np.testing.assert_array_equal(booster.predict(X, **{kind: True}),
                                          booster.predict(test_dense, **{kind: True}))
        np.testing.assert_array_equal(booster.predict(X, pred_contribs=True,
                                                      approx_contribs=True),
                                      booster.predict(test_dense, pred_contribs=True,
                                                      approx_contribs=True))
        np.testing.assert_array_equal(booster.inplace_predict(X),
                                      booster.inplace_predict(test_dense))
    with_missing = test_csr.copy()
    with_missing.data[with_missing.data == 1.0] = -7.0
    expected = test_dense.copy()
    expected[expected == 1.0] = np.nan
    np.testing.assert_array_equal(booster.inplace_predict(with_missing, missing=-7.0),
                                  booster.predict(expected))


def test_sparse_training_never_makes_a_dense_copy(monkeypatch):
    # the dense conversions a sparse fit must not reach: SciPy's and SparseMatrix's own
    dense, csr = sparse_data(n=500, seed=13)
    y = _label(dense, np.random.default_rng(13))

    def refuse(*args, **kwargs):
        raise AssertionError("densified")

    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)
    monkeypatch.setattr(gbm.data.sparse.SparseMatrix, "dense_rows", refuse)
    booster = gbm.train(BASE, csr, y, 3, evals=[(csr, y, "train")])
    booster.predict(csr)
    booster.predict(csr, pred_leaf=True)
    monkeypatch.undo()
    np.testing.assert_array_equal(booster.predict(csr), booster.predict(dense))


def _layout(params, X, y):
    from gbm.data.training_data import TrainingData
    from gbm.training.prepare import Fit

    return Fit(params, TrainingData(X, y), 1).data.matrix.layout


def test_the_layout_follows_the_density_unless_forced():
    from gbm.bins.layout import SPARSE_BELOW

    sparse_dense, csr = sparse_data(n=300, density=0.05, seed=14)
    y = _label(sparse_dense, np.random.default_rng(14))
    assert csr.nnz < SPARSE_BELOW * np.prod(csr.shape)
    assert _layout({}, csr, y) == "sparse"
    assert _layout({}, sparse_dense, y) == "sparse"  # a dense matrix mostly NaN
    assert _layout({"bin_layout": "dense"}, csr, y) == "dense"
    full = np.nan_to_num(sparse_dense)  # every cell a value
    assert _layout({}, full, y) == "dense"
    rows, cols = np.indices(full.shape).reshape(2, -1)
    every = sp.csr_matrix((full.ravel(), (rows, cols)), shape=full.shape)  # zeros stored
    assert _layout({}, every, y) == "dense"
    assert _layout({"bin_layout": "sparse"}, full, y) == "sparse"
    with pytest.raises(ValueError, match="bin_layout"):
        gbm.train({"bin_layout": "csr"}, csr, y, 1)
    # a run setting: not in the model file
    assert "bin_layout" not in gbm.train({"bin_layout": "sparse"}, csr, y, 1).to_json()


def test_the_layout_is_decided_over_every_rank():
    from gbm.collective import ThreadGroup
    from gbm.bins.layout import choose_layout

    dense, _ = sparse_data(n=300, density=0.05, seed=15)
    dense[:100] = 1.0  # one rank's rows are full, the others' sparse: 0.37 of the cells
    parts = [dense[:100], dense[100:110], dense[110:]]
    picked = ThreadGroup(3).run(lambda c: choose_layout("auto", parts[c.rank], c))
    assert picked == ["dense"] * 3
    parts = [dense[110:], dense[:0], dense[100:110]]
    assert ThreadGroup(3).run(lambda c: choose_layout("auto", parts[c.rank], c)) == ["sparse"] * 3


def _hashed(n=600, n_features=3000, per_row=12, seed=0):
    """Count columns of hashed tokens (Zipf): a few frequent, most seen in a row or two."""
    rng = np.random.default_rng(seed)
    cols = (np.minimum(rng.zipf(1.2, n * per_row), 10**6) * 7919) % n_features
    X = sp.csr_matrix((np.ones(n * per_row), (np.repeat(np.arange(n), per_row), cols)),
                      shape=(n, n_features))
    X.sum_duplicates()
    counts = np.bincount(X.indices, minlength=n_features)
    hot = np.argsort(-counts, kind="stable")[5:40]  # frequent columns (not the commonest)
    signal = X[:, hot[::2]].sum(axis=1).A.ravel() - X[:, hot[1::2]].sum(axis=1).A.ravel()
    y = (signal + 0.3 * rng.normal(size=n) > 0).astype(float)
    return X, y


@pytest.mark.parametrize("params", [
    {"objective": "binary:logistic", "min_child_weight": 2.0},
    {"min_child_weight": 0.0, "grow_policy": "lossguide", "max_leaves": 12, "max_depth": 0},
    {"objective": "multi:softprob", "num_class": 3, "min_child_weight": 1.5},
])
def test_histograms_of_the_features_that_can_split(monkeypatch, params):
    from gbm.tree import grower

    X, y = _hashed()
    if params.get("num_class"):
        y = (y + (X[:, 0].toarray().ravel() > 0)).astype(float)
    params = dict(BASE, **params)
    kept = []
    real = grower.active_layout

    def spy(*args):  # the features of the layout the tree grows with
        found = real(*args)
        layout = found[0] if found is not None else args[5] if len(args) > 5 else None
        kept.append(None if layout is None or layout.features is None
                    else layout.features.size)
        return found

    monkeypatch.setattr(grower, "active_layout", spy)
    files = {layout: gbm.train(dict(params, bin_layout=layout), X, y, 4).to_json()
             for layout in ("sparse", "bundled")}
    assert kept and all(k is not None and k < X.shape[1] / 2 for k in kept), kept
    trees = gbm.Booster.from_json(files["sparse"]).trees
    assert sum(t.n_nodes >= 5 for t in trees) >= len(trees) // 2  # the trees did split
    monkeypatch.setattr(grower, "active_layout", lambda *args: None)  # every feature
    monkeypatch.setattr(grower, "candidate_layout", lambda *args: None)
    files["every feature"] = gbm.train(dict(params, bin_layout="sparse"), X, y, 4).to_json()
    files["dense"] = gbm.train(dict(params, bin_layout="dense"), X, y, 4).to_json()
    assert len(set(files.values())) == 1, list(files)


def test_every_feature_kept_under_negative_hessians(monkeypatch):
    from gbm.tree import grower

    X, y = _hashed(seed=3)

    def objective(predt, dtrain):  # a made-up loss with some negative hessians
        label = dtrain.get_label()
        return predt - label, np.where(label > 0, 1.0, -0.25)

    calls = []
    monkeypatch.setattr(grower, "active_layout", lambda *a: calls.append(1))
    monkeypatch.setattr(grower, "candidate_layout", lambda *a: calls.append(1))
    a = gbm.train(dict(BASE, min_child_weight=0.0), X, y, 3, obj=objective).to_json()
    assert not calls  # no bound holds: not even tried
    monkeypatch.undo()
    assert a == gbm.train(dict(BASE, min_child_weight=0.0, bin_layout="dense"), X, y, 3,
                          obj=objective).to_json()


def test_a_one_valued_feature_splits_its_rows_from_its_missing_ones():
    # indicator columns (one value stored, missing elsewhere: one-hot data): each has one
    # value bin, and splits its rows (right) from its missing ones (left) as XGBoost's do
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    n = 2000
    on = rng.random((n, 6)) < np.array([0.5, 0.3, 0.2, 0.6, 0.1, 0.4])
    y = on[:, 0] * 2 - on[:, 1] + on[:, 2] * on[:, 3] + rng.normal(size=n)
    rows, cols = np.nonzero(on)
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=on.shape)
    for extra in ({}, {"reg_lambda": 5.0}, {"max_delta_step": 0.3}, {"min_child_weight": 50.0}):
        params = dict(max_depth=3, learning_rate=0.5, base_score=0.3, **extra)
        ours = gbm.train(dict(params, eval_metric="rmse"), X, y, 3, evals=[(X, y, "train")])
        theirs = xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X, y), 3)
        np.testing.assert_allclose(ours.predict(X), theirs.predict(xgb.DMatrix(X)), rtol=1e-5,
                                   atol=1e-5)
        tree = ours.trees[0]
        inner = tree.left_child >= 0
        assert inner.sum() >= 3 and (tree.split_bin[inner] == -1).all()
        assert (tree.default_left[inner] == 1).all()
        assert (tree.threshold[inner] == np.finfo(np.float32).min).all()
        # the raw threshold sends every value where its bin went: the score of the
        # training margins (binned) is the score of the predictions (raw)
        rmse = float(np.sqrt(np.mean((ours.predict(X) - y) ** 2)))
        assert ours.evals_result["train"]["rmse"][-1] == pytest.approx(rmse, rel=1e-12)


def test_pandas_sparse_columns_a_dmatrix_and_cv():
    pd = pytest.importorskip("pandas")
    dense, csr = sparse_data(n=500, n_features=8, seed=16)
    y = _label(dense, np.random.default_rng(16))
    expected = gbm.train(dict(BASE, bin_layout="dense"), dense, y, 3).to_json()
    frame = pd.DataFrame({f"c{j}": pd.arrays.SparseArray(dense[:, j].astype(np.float64))
                          for j in range(dense.shape[1])})  # NaN fill: absent = missing
    got = gbm.train(BASE, frame, y, 3)
    assert got.feature_names == list(frame.columns)
    assert got.to_json() == gbm.train(BASE, dense, y, 3,
                                      feature_names=list(frame.columns)).to_json()
    assert gbm.train(BASE, gbm.DMatrix(csr, label=y), 3).to_json() == expected
    folds = [(np.arange(0, 300), np.arange(300, 500)), (np.arange(200, 500), np.arange(0, 200))]
    a = gbm.cv(dict(BASE, bin_layout="dense"), gbm.DMatrix(dense, label=y), 3, folds=folds)
    b = gbm.cv(BASE, gbm.DMatrix(csr, label=y), 3, folds=folds)
    for key in a:
        np.testing.assert_array_equal(np.asarray(a[key]), np.asarray(b[key]))
