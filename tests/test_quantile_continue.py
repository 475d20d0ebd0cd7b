"""A model continued on rows binned before the fit (issue 26): ``init_model`` on a
``QuantileDMatrix`` / ``ExtMemQuantileDMatrix`` and a continued model's binned eval sets
give the model file and the scores of the in-memory continued fit, byte for byte, when
every split threshold of the model is one of the matrix's bin edges (``gbm.tree.rebin``);
otherwise the fit is refused, where XGBoost continues from approximate margins."""
import numpy as np
import pytest

import gbm
from gbm.tree.rebin import rebinned_forest

N_ROWS, N_FEATURES, SAMPLE = 500, 5, 200


class Batches(gbm.DataIter):
    """The rows of ``fields`` cut at ``sizes``."""

    def __init__(self, sizes, **fields):
        super().__init__(min_cache_page_bytes=700)  # several pages a matrix
        self.bounds = np.cumsum([0] + list(sizes))
        self.fields, self.i = fields, 0

    def next(self, input_data):
        if self.i >= len(self.bounds) - 1:
            return False
        lo, hi = self.bounds[self.i], self.bounds[self.i + 1]
        input_data(**{k: v.iloc[lo:hi] if hasattr(v, "iloc") else v[lo:hi]
                      for k, v in self.fields.items()})
        self.i += 1
        return True

    def reset(self):
        self.i = 0


def _data(seed, n=N_ROWS, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
    X[:, 3] = np.round(X[:, 3] * 2)
    X[rng.random(X.shape) < 0.15] = np.nan
    score = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) + 0.5 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y.astype(np.float64)


def _matrix(kind, ref=None, max_bin=None, **fields):
    it = Batches([130, 1, 369] if len(fields["data"]) == N_ROWS else [len(fields["data"])],
                 **fields)
    if kind == "qdm":
        return gbm.QuantileDMatrix(it, bin_sample_size=SAMPLE, ref=ref, max_bin=max_bin)
    return gbm.ExtMemQuantileDMatrix(it, bin_sample_size=SAMPLE, ref=ref, max_bin=max_bin)


CASES = [
    {"objective": "binary:logistic"},
    {"objective": "multi:softprob", "num_class": 3},
    {"objective": "multi:softprob", "num_class": 3, "multi_strategy": "multi_output_tree"},
    {"objective": "binary:logistic", "booster": "dart", "rate_drop": 0.3},
    {"objective": "binary:logistic", "subsample": 0.7, "max_bin": 16},
]


@pytest.mark.parametrize("extra", CASES)
@pytest.mark.parametrize("kind", ["qdm", "extmem"])
def test_continued_fit_and_eval_set_are_the_in_memory_ones(extra, kind, tmp_path):
    """Train 3 rounds, save, continue 2 more on the matrix (its eval set too): the model
    file and every round's scores of the same continuation in memory; both equal the
    uninterrupted fit of 5 rounds where that one is defined (no DART draws in between)."""
    n_classes = extra.get("num_class", 2)
    X, y = _data(0, n_classes=n_classes)
    Xv, yv = _data(1, n=200, n_classes=n_classes)
    p = dict(extra, max_depth=3, learning_rate=0.5, bin_sample_size=SAMPLE)
    path = str(tmp_path / "old.json")
    gbm.train(p, gbm.DMatrix(X, label=y), 3).save_model(path)
    want_log, got_log = {}, {}
    expected = gbm.train(p, gbm.DMatrix(X, label=y), 2, init_model=path,
                         evals=[(gbm.DMatrix(Xv, label=yv), "v")], evals_result=want_log,
                         verbose_eval=False).to_json()
    dtrain = _matrix(kind, data=X, label=y, max_bin=p.get("max_bin"))
    dvalid = _matrix(kind, ref=dtrain, data=Xv, label=yv)
    got = gbm.train(p, dtrain, 2, init_model=path, evals=[(dvalid, "v")],
                    evals_result=got_log, verbose_eval=False).to_json()
    assert got == expected
    assert got_log == want_log and len(got_log["v"]) == 1
    if p.get("booster") != "dart" and "subsample" not in p:  # no draw keyed by round
        assert got == gbm.train(p, gbm.DMatrix(X, label=y), 5).to_json()


@pytest.mark.parametrize("kind", ["qdm", "extmem"])
def test_a_model_trained_on_the_matrix_continues_with_base_margins(kind):
    """A model trained on the QuantileDMatrix itself, continued on it with the rows' own
    base margins (training and eval set): the in-memory continued model."""
    X, y = _data(2)
    Xv, yv = _data(3, n=200)
    rng = np.random.default_rng(2)
    bm, bmv = rng.normal(size=N_ROWS), rng.normal(size=200)
    p = {"objective": "binary:logistic", "max_depth": 3, "bin_sample_size": SAMPLE}
    dtrain = _matrix(kind, data=X, label=y, base_margin=bm)
    dvalid = _matrix(kind, ref=dtrain, data=Xv, label=yv, base_margin=bmv)
    old = gbm.train(p, dtrain, 2)
    want_log, got_log = {}, {}
    expected = gbm.train(p, gbm.DMatrix(X, label=y, base_margin=bm), 3, init_model=old,
                         evals=[(gbm.DMatrix(Xv, label=yv, base_margin=bmv), "v")],
                         evals_result=want_log, verbose_eval=False).to_json()
    got = gbm.train(p, dtrain, 3, init_model=old, evals=[(dvalid, "v")],
                    evals_result=got_log, verbose_eval=False).to_json()
    assert got == expected and got_log == want_log


def test_categorical_splits_continue_and_categories_must_agree():
    """Pandas ``category`` columns: their codes are their bins, so categorical splits
    continue exactly; a matrix whose categories differ from the model's is refused."""
    pd = pytest.importorskip("pandas")
    X, y = _data(4)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(N_FEATURES)])
    codes = np.random.default_rng(4).integers(0, 4, N_ROWS)
    frame["colour"] = pd.Categorical(np.array(list("abcd"))[codes], categories=list("abcd"))
    y = ((y + (codes == 2)) > 0.5).astype(np.float64)
    p = {"objective": "binary:logistic", "max_depth": 3, "bin_sample_size": SAMPLE,
         "max_cat_to_onehot": 1}
    old = gbm.train(p, gbm.DMatrix(frame, label=y, enable_categorical=True), 3)
    assert any(t.has_categorical for t in old.trees)
    expected = gbm.train(p, gbm.DMatrix(frame, label=y, enable_categorical=True), 2,
                         init_model=old).to_json()
    assert gbm.train(p, _matrix("qdm", data=frame, label=y), 2,
                     init_model=old).to_json() == expected
    other = frame.copy()
    other["colour"] = pd.Categorical(other["colour"].astype(str), categories=list("dcba"))
    with pytest.raises(ValueError, match="categories"):
        gbm.train(p, _matrix("qdm", data=other, label=y), 1, init_model=old)


@pytest.mark.parametrize("kind", ["qdm", "extmem"])
def test_thresholds_off_the_edges_are_refused(kind):
    """A model trained on other data splits between this matrix's edges: the bins cannot
    place its rows exactly, so training and an eval set refuse it, naming the tree, the
    feature and what to do; the raw arrays still continue it."""
    X, y = _data(5)
    p = {"objective": "binary:logistic", "max_depth": 3, "bin_sample_size": SAMPLE}
    old = gbm.train(p, gbm.DMatrix(X * 1.1 + 0.01, label=y), 2)
    dtrain = _matrix(kind, data=X, label=y)
    with pytest.raises(ValueError, match=r"init_model's tree 0 splits feature 'f\d' at .*"
                                         r"not one of the QuantileDMatrix's bin edges"):
        gbm.train(p, dtrain, 1, init_model=old)
    with pytest.raises(ValueError, match="base_margin"):
        gbm.train(p, dtrain, 1, init_model=old)
    dvalid = _matrix(kind, ref=dtrain, data=X[:200], label=y[:200])
    with pytest.raises(ValueError, match="the model's tree 0 .* bin edges"):
        # the raw rows, binned as dtrain: the eval set's edges are the fit's
        gbm.train(p, gbm.DMatrix(X, label=y), 1, init_model=old, evals=[(dvalid, "v")],
                  verbose_eval=False)
    gbm.train(p, gbm.DMatrix(X, label=y), 1, init_model=old)  # raw values: no edge needed


def test_rebinned_split_bins_select_the_raw_rows():
    """Oracle for ``rebinned_forest``: on a hand-made feature whose cuts are 0, 1 and 2,
    a split at each cut gets the bin ``b`` with ``x < cuts[b]`` exactly for bins ``<= b``;
    float32's lowest threshold gets -1; a threshold between cuts is refused."""
    from gbm.tree.structure import Tree

    cuts = [np.array([0.0, 1.0, 2.0], np.float32)]
    values = np.array([-5.0, 0.0, 0.5, 1.0, 1.5, 2.0, 7.0], np.float32)
    bins = np.array([0, 1, 1, 2, 2, 3, 3])  # the number of cuts <= x

    def stump(threshold):
        return Tree(split_feature=np.array([0, -1, -1], np.int32),
                    split_bin=np.array([99, 0, 0], np.int32),
                    threshold=np.array([threshold, 0, 0], np.float32),
                    default_left=np.zeros(3, np.uint8), left_child=np.array([1, -1, -1]),
                    right_child=np.array([2, -1, -1]), value=np.zeros(3), gain=np.zeros(3),
                    cover=np.zeros(3))

    for threshold in (0.0, 1.0, 2.0):
        b = rebinned_forest([stump(threshold)], [0], None, cuts).walk_binned.reshape(-1, 4)[0, 3]
        np.testing.assert_array_equal(bins <= b, values < threshold)
    lowest = np.finfo(np.float32).min
    assert rebinned_forest([stump(lowest)], [0], None, cuts).walk_binned.reshape(-1, 4)[0, 3] == -1
    with pytest.raises(ValueError, match="at 0.5 .* not one of"):
        rebinned_forest([stump(0.5)], [0], None, cuts)


def test_cv_refuses_a_quantile_dmatrix_and_its_folds_train_by_hand():
    """cv's folds learn their edges from their own training rows, which a QuantileDMatrix
    cannot give: refused (ValueError, as XGBoost's cv). What the message proposes, a
    QuantileDMatrix of each fold's training rows with its test rows binned by ``ref=``,
    trains cv's fold model and scores, byte for byte."""
    X, y = _data(6)
    p = {"objective": "binary:logistic", "max_depth": 3, "bin_sample_size": SAMPLE}
    with pytest.raises(ValueError, match="cv on a QuantileDMatrix is not supported"):
        gbm.cv(p, _matrix("qdm", data=X, label=y), 2, nfold=2)
    rng = np.random.default_rng(6)
    test_rows = [np.sort(part) for part in np.array_split(rng.permutation(N_ROWS), 3)]
    folds = [(np.setdiff1d(np.arange(N_ROWS), rows), rows) for rows in test_rows]

    class Keep(gbm.callback.TrainingCallback):
        def after_training(self, model):
            self.packs = model.cvfolds
            return model

    keep = Keep()
    results = gbm.cv(p, X, y, 3, folds=folds, callbacks=[keep], as_pandas=False)
    for k, (train_rows, test_rows) in enumerate(folds):
        dtrain = gbm.QuantileDMatrix(X[train_rows], label=y[train_rows],
                                     bin_sample_size=SAMPLE)
        dtest = gbm.QuantileDMatrix(X[test_rows], label=y[test_rows], ref=dtrain)
        log = {}
        model = gbm.train(p, dtrain, 3, evals=[(dtrain, "train"), (dtest, "test")],
                          evals_result=log, verbose_eval=False)
        assert model.to_json() == keep.packs[k].bst.to_json()
        assert log["test"]["logloss"] == keep.packs[k].bst.evals_result["test"]["logloss"]
    assert len(results["test-logloss-mean"]) == 3
