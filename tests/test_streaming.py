"""Data given as batches (issue 26): ``gbm.DataIter``, ``gbm.QuantileDMatrix`` and
``gbm.ExtMemQuantileDMatrix`` train the model of the in-memory fit of the concatenated
batches, byte for byte, whatever the batch sizes and the pages; and the stream's failures
give clear errors and leave no page file behind."""
import gc
import os

import numpy as np
import pytest

import gbm
from gbm.bins.paged import PagedBins

N_ROWS, N_FEATURES = 500, 5
SAMPLE = 200  # below the row count: the hash-chosen binning sample is a subset


class Batches(gbm.DataIter):
    """The rows of ``fields`` (arrays or DataFrames, one row each) cut at ``sizes``."""

    def __init__(self, sizes, cache_prefix=None, page_bytes=None, **fields):
        super().__init__(cache_prefix=cache_prefix, min_cache_page_bytes=page_bytes)
        self.bounds = np.cumsum([0] + list(sizes))
        self.fields, self.i, self.resets = fields, 0, 0

    def next(self, input_data):
        if self.i >= len(self.bounds) - 1:
            return False
        lo, hi = self.bounds[self.i], self.bounds[self.i + 1]
        input_data(**{k: (v.iloc[lo:hi] if hasattr(v, "iloc") else v[lo:hi])
                      for k, v in self.fields.items() if v is not None})
        self.i += 1
        return True

    def reset(self):
        self.i = 0
        self.resets += 1


class Typed(Batches):
    """``Batches`` whose every batch gives ``feature_types``."""

    def __init__(self, sizes, types, **kw):
        super().__init__(sizes, **kw)
        self.types = types

    def next(self, input_data):
        return super().next(lambda **batch: input_data(feature_types=self.types, **batch))


def _data(seed=0, n=N_ROWS, n_classes=2, regression=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
    X[:, 3] = np.round(X[:, 3] * 2)  # few distinct values
    X[rng.random((n, N_FEATURES)) < 0.15] = np.nan
    score = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) + 0.5 * rng.normal(size=n)
    if regression:
        y = score
    else:
        y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    w = rng.uniform(0.5, 2.0, n)
    return X, y.astype(np.float64), w


def _params(objective, **extra):
    p = {"objective": objective, "max_depth": 3, "learning_rate": 0.5,
         "bin_sample_size": SAMPLE}
    if objective.startswith("multi"):
        p["num_class"] = 3
    p.update(extra)
    return p


def _model(params, dtrain, rounds=3, **kw):
    return gbm.train(params, dtrain, rounds, **kw).to_json()


def _sizes(kind, n):
    if kind == "one":
        return [n]
    if kind == "uneven":
        return [1, n // 3, 7, n - n // 3 - 9, 1]
    if kind == "rows":  # a row a batch
        return [1] * n
    raise AssertionError(kind)


def _quantile(kind, it, **kw):
    if kind == "qdm":
        return gbm.QuantileDMatrix(it, bin_sample_size=SAMPLE, **kw)
    return gbm.ExtMemQuantileDMatrix(it, bin_sample_size=SAMPLE, **kw)


@pytest.mark.parametrize("objective", ["binary:logistic", "reg:squarederror",
                                       "multi:softprob"])
@pytest.mark.parametrize("sizes", ["one", "uneven", "rows"])
@pytest.mark.parametrize("kind", ["qdm", "extmem"])
def test_same_model_as_in_memory(objective, sizes, kind):
    """Missing values, weights and a binning sample smaller than the data: the streamed
    model file is the in-memory one (pages of a few hundred bytes: several per fit)."""
    n = 120 if sizes == "rows" else N_ROWS
    X, y, w = _data(n=n, n_classes=3 if objective.startswith("multi") else 2,
                    regression=objective.startswith("reg"))
    p = _params(objective)
    expected = _model(p, gbm.DMatrix(X, label=y, weight=w))
    it = Batches(_sizes(sizes, n), page_bytes=700, data=X, label=y, weight=w)
    dtrain = _quantile(kind, it)
    assert dtrain.num_row() == n and dtrain.num_col() == N_FEATURES
    if kind == "extmem":
        assert isinstance(dtrain.data.matrix, PagedBins)
        assert dtrain.data.matrix.files.n_pages > 1 or sizes == "one"  # a batch is not split
    assert _model(p, dtrain) == expected


def test_a_page_a_row():
    """Pages of one row each (the smallest page size)."""
    X, y, w = _data(n=40)
    p = _params("binary:logistic", bin_sample_size=20)
    expected = _model(p, gbm.DMatrix(X, label=y))
    it = Batches([40], page_bytes=1, data=X, label=y)
    d = gbm.ExtMemQuantileDMatrix(Batches([1] * 40, page_bytes=1, data=X, label=y),
                                  bin_sample_size=20)
    assert d.data.matrix.files.n_pages == 40
    assert _model(p, d) == expected
    d.data.matrix.prefetch = False  # each page read when it is used: the same
    assert _model(p, d) == expected
    one_page = gbm.ExtMemQuantileDMatrix(it, bin_sample_size=20)
    assert one_page.data.matrix.files.n_pages == 1
    assert _model(p, one_page) == expected


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_threads_and_eval_set_with_ref(n_jobs):
    """An eval set made with ``ref=``: the same scores every round and the same model as
    the in-memory fit with an in-memory eval set (early stopping on it), on 1 and 2
    threads."""
    X, y, w = _data(1)
    Xv, yv, _ = _data(2, n=200)
    p = _params("binary:logistic", n_jobs=n_jobs, eval_metric=["logloss", "auc"])
    ref_log = {}
    expected = _model(p, gbm.DMatrix(X, label=y), 8,
                      evals=[(gbm.DMatrix(Xv, label=yv), "valid")], evals_result=ref_log,
                      early_stopping_rounds=2, verbose_eval=False)
    for kind in ("qdm", "extmem"):
        dtrain = _quantile(kind, Batches([100, 250, 150], page_bytes=500, data=X, label=y))
        dvalid = _quantile(kind, Batches([60, 140], page_bytes=500, data=Xv, label=yv),
                           ref=dtrain)
        log = {}
        got = _model(p, dtrain, 8, evals=[(dvalid, "valid")], evals_result=log,
                     early_stopping_rounds=2, verbose_eval=False)
        assert log == ref_log
        assert got == expected


def test_eval_set_without_ref_is_refused():
    X, y, _ = _data(1)
    dtrain = gbm.QuantileDMatrix(X, label=y, bin_sample_size=SAMPLE)
    dvalid = gbm.QuantileDMatrix(X[:100] * 2, label=y[:100], bin_sample_size=SAMPLE)
    with pytest.raises(ValueError, match="ref="):
        gbm.train(_params("binary:logistic"), dtrain, 2, evals=[(dvalid, "v")],
                  verbose_eval=False)


def test_array_input_and_prediction():
    """``QuantileDMatrix(X, label=...)`` from an array: the in-memory model; the booster
    predicts raw floats as the in-memory one."""
    X, y, w = _data(3)
    p = _params("binary:logistic")
    booster = gbm.train(p, gbm.QuantileDMatrix(X, label=y, weight=w, bin_sample_size=SAMPLE), 3)
    expected = gbm.train(p, gbm.DMatrix(X, label=y, weight=w), 3)
    assert booster.to_json() == expected.to_json()
    np.testing.assert_array_equal(booster.predict(X), expected.predict(X))


def test_pandas_categorical_batches():
    """DataFrame batches with a ``category`` column (one dtype; a batch may lack some
    categories) and an integer-coded categorical feature: the in-memory model."""
    pd = pytest.importorskip("pandas")
    X, y, _ = _data(4)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(N_FEATURES)])
    labels = np.array(["a", "b", "c", "d", "e"])
    codes = np.random.default_rng(4).integers(0, 5, N_ROWS)
    codes[:150] = np.minimum(codes[:150], 1)  # the first batch sees two categories
    frame["colour"] = pd.Categorical(labels[codes], categories=list(labels))
    frame.loc[::17, "colour"] = None
    y = y + (codes == 3)
    y = (y > 0.5).astype(float)
    p = _params("binary:logistic", max_cat_to_onehot=1)
    expected = _model(p, gbm.DMatrix(frame, label=y, enable_categorical=True))
    for kind in ("qdm", "extmem"):
        it = Batches([150, 200, 150], page_bytes=400, data=frame, label=y)
        assert _model(p, _quantile(kind, it)) == expected
    types = ["q"] * N_FEATURES
    types[3] = "c"  # column 3 holds small rounded values: as integer codes
    Xc = X.copy()
    Xc[:, 3] = np.abs(Xc[:, 3])
    expected = _model(p, gbm.DMatrix(Xc, label=y, feature_types=types))
    for kind in ("qdm", "extmem"):
        it = Typed([100, 400], types, page_bytes=400, data=Xc, label=y)
        assert _model(p, _quantile(kind, it)) == expected
        with pytest.raises(ValueError, match="feature_types given beside a DataIter.* batch"):
            _quantile(kind, it, feature_types=types)  # XGBoost's rule: the batches give them


def test_sparse_batches():
    """SciPy CSR batches (absent entries missing): the in-memory model of the whole CSR."""
    sp = pytest.importorskip("scipy.sparse")
    X, y, _ = _data(5)
    X[np.random.default_rng(5).random(X.shape) < 0.5] = 0.0
    csr = sp.csr_matrix(np.nan_to_num(X, nan=0.0))
    p = _params("binary:logistic")
    expected = _model(p, gbm.DMatrix(csr, label=y))
    for kind in ("qdm", "extmem"):
        it = Batches([200, 1, 299], page_bytes=600, data=csr, label=y)
        assert _model(p, _quantile(kind, it)) == expected


def test_ranking_with_qid_batches():
    X, _, _ = _data(6)
    rng = np.random.default_rng(6)
    qid = np.repeat(np.arange(50), 10)
    y = rng.integers(0, 4, N_ROWS).astype(float)
    p = _params("rank:ndcg")
    expected = _model(p, gbm.DMatrix(X, label=y, qid=qid))
    for kind in ("qdm", "extmem"):
        it = Batches([120, 380], page_bytes=600, data=X, label=y, qid=qid)
        assert _model(p, _quantile(kind, it)) == expected


def test_binning_parameters_must_agree():
    X, y, _ = _data(7)
    d = gbm.QuantileDMatrix(X, label=y, max_bin=32)
    with pytest.raises(ValueError, match="max_bin=32"):
        gbm.train({"objective": "binary:logistic"}, d, 1)
    assert gbm.train({"objective": "binary:logistic", "max_bin": 32}, d, 1).num_boosted_rounds \
        == 1


def test_xgboost_next_returning_ints():
    """XGBoost's older iterators return 1 / 0."""
    X, y, _ = _data(8)

    class Old(Batches):
        def next(self, input_data):
            return int(super().next(input_data))

    p = _params("binary:logistic")
    assert _model(p, gbm.QuantileDMatrix(Old([250, 250], data=X, label=y),
                                         bin_sample_size=SAMPLE)) == \
        _model(p, gbm.DMatrix(X, label=y))


def test_quantile_dmatrix_holds_no_floats():
    """Only bins are kept: a byte a cell twice (row- and feature-major), no float matrix;
    an external-memory matrix holds two page buffers (a page read row- or feature-major)."""
    X, y, _ = _data(9)
    d = gbm.QuantileDMatrix(Batches([250, 250], data=X, label=y), bin_sample_size=SAMPLE)
    held = [v for v in vars(d).values() if isinstance(v, np.ndarray)]
    assert all(a.size < X.size for a in held)
    assert d.data.matrix.nbytes == 2 * X.size
    e = gbm.ExtMemQuantileDMatrix(Batches([100] * 5, page_bytes=1000, data=X, label=y),
                                  bin_sample_size=SAMPLE)
    assert e.data.matrix.files.n_pages == 5
    assert e.data.matrix.nbytes == 2 * 100 * N_FEATURES  # two buffers of one page's bins


# -- failures -------------------------------------------------------------------------------

def _page_files(folder):
    return sorted(os.listdir(folder))


def test_iterator_that_raises_names_the_batch(tmp_path):
    X, y, _ = _data(10)

    class Raises(Batches):
        def next(self, input_data):
            if self.i == 2 and self.resets >= self.fail_on_reset:
                raise OSError("disk read failed")
            return super().next(input_data)

    for fail_on_reset in (1, 2):  # in the first pass; in the second, after pages were written
        it = Raises([100] * 5, cache_prefix=str(tmp_path), page_bytes=1, data=X, label=y)
        it.fail_on_reset = fail_on_reset
        with pytest.raises(RuntimeError, match="batch 2: disk read failed"):
            gbm.ExtMemQuantileDMatrix(it)
        assert _page_files(tmp_path) == []


def test_batches_of_different_widths(tmp_path):
    X, y, _ = _data(11)

    class Narrow(Batches):
        def next(self, input_data):
            if self.i == 1:
                self.i += 1
                input_data(data=X[:10, :3], label=y[:10])
                return True
            return super().next(input_data)

    with pytest.raises(ValueError, match="batch 1 has 3 columns but batch 0 has 5"):
        gbm.ExtMemQuantileDMatrix(Narrow([100] * 3, cache_prefix=str(tmp_path), data=X,
                                         label=y))
    assert _page_files(tmp_path) == []


def test_reset_that_does_not_restart(tmp_path):
    X, y, _ = _data(12)

    class NoRestart(Batches):
        def reset(self):
            self.resets += 1  # forgets to go back to the first batch

    with pytest.raises(ValueError, match="reset\\(\\) must start again"):
        gbm.ExtMemQuantileDMatrix(NoRestart([200, 300], cache_prefix=str(tmp_path),
                                            page_bytes=1, data=X, label=y))
    assert _page_files(tmp_path) == []

    class Shorter(Batches):  # restarts, but gives a batch of other rows the second time
        def next(self, input_data):
            if self.resets == 2 and self.i == 1:
                self.i += 1
                input_data(data=X[:5], label=y[:5])
                return True
            return super().next(input_data)

    with pytest.raises(ValueError, match="batch 1 has shape \\(5, 5\\) after reset"):
        gbm.QuantileDMatrix(Shorter([200, 300], data=X, label=y))


def test_cache_folder_missing_or_vanishing(tmp_path):
    X, y, _ = _data(13)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        gbm.ExtMemQuantileDMatrix(Batches([500], data=X, label=y),
                                  cache_prefix=str(tmp_path / "nowhere" / "cache"))
    folder = tmp_path / "cache"
    folder.mkdir()
    d = gbm.ExtMemQuantileDMatrix(Batches([250, 250], page_bytes=1, data=X, label=y),
                                  cache_prefix=str(folder / "train"), bin_sample_size=SAMPLE)
    files = _page_files(folder)
    assert len(files) == 2 and all(f.startswith("train-") and f.endswith(".page")
                                   for f in files)
    for f in files:
        os.remove(folder / f)
    with pytest.raises(FileNotFoundError, match="page 0 of the external-memory cache"):
        gbm.train(_params("binary:logistic"), d, 1)


def test_unwritable_cache_folder(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes to read-only folders")
    X, y, _ = _data(14)
    folder = tmp_path / "ro"
    folder.mkdir()
    os.chmod(folder, 0o500)
    try:
        with pytest.raises(OSError, match="writing the external-memory page"):
            gbm.ExtMemQuantileDMatrix(Batches([500], data=X, label=y),
                                      cache_prefix=str(folder))
        assert _page_files(folder) == []
    finally:
        os.chmod(folder, 0o700)


def test_pages_removed_when_closed_or_collected(tmp_path):
    X, y, _ = _data(15)
    with gbm.ExtMemQuantileDMatrix(Batches([250, 250], page_bytes=1, data=X, label=y),
                                   cache_prefix=str(tmp_path)) as d:
        assert len(_page_files(tmp_path)) == 2
    assert _page_files(tmp_path) == []
    d = gbm.ExtMemQuantileDMatrix(Batches([250, 250], page_bytes=1, data=X, label=y),
                                  cache_prefix=str(tmp_path))
    assert len(_page_files(tmp_path)) == 2
    del d
    gc.collect()
    assert _page_files(tmp_path) == []
    d = gbm.ExtMemQuantileDMatrix(Batches([250, 250], page_bytes=1, data=X, label=y))
    folder = os.path.dirname(d.data.matrix.files.paths[0])  # a temporary folder of its own
    d.close()
    assert not os.path.exists(folder)


def test_bad_iterators():
    X, y, _ = _data(16)

    class Silent(Batches):
        def next(self, input_data):
            return True  # never gives a batch

    with pytest.raises(ValueError, match="did not call input_data"):
        gbm.QuantileDMatrix(Silent([1], data=X, label=y))
    with pytest.raises(ValueError, match="no batches"):
        gbm.QuantileDMatrix(Batches([], data=X, label=y))
    with pytest.raises(TypeError, match="label given beside a DataIter"):
        gbm.QuantileDMatrix(Batches([500], data=X), label=y)
    with pytest.raises(TypeError, match="ExtMemQuantileDMatrix reads a gbm.DataIter"):
        gbm.ExtMemQuantileDMatrix(X)
    with pytest.raises(ValueError, match="batch 1 has no label but batch 0 does"):
        class HalfLabelled(Batches):
            def next(self, input_data):
                if self.i == 1:
                    self.i += 1
                    input_data(data=X[:3])
                    return True
                return super().next(input_data)

        gbm.QuantileDMatrix(HalfLabelled([100, 100], data=X, label=y))


def test_full_disk_leaves_no_page(tmp_path, monkeypatch):
    """The disk fills while the second page is written: a clear error, and neither that
    page's temporary file nor the first page is left."""
    import errno

    import gbm.bins.quantile as quantile

    X, y, _ = _data(17)
    opened = []

    def filling_open(path, mode="r", *args, **kwargs):
        f = open(path, mode, *args, **kwargs)
        opened.append(path)
        if len(opened) == 2:
            f.write(b"half a page")
            f.close()
            raise OSError(errno.ENOSPC, "No space left on device")
        return f

    monkeypatch.setattr(quantile, "open", filling_open, raising=False)
    with pytest.raises(OSError, match="up to batch 1 .*No space left on device"):
        gbm.ExtMemQuantileDMatrix(Batches([250, 250], page_bytes=1, data=X, label=y),
                                  cache_prefix=str(tmp_path))
    assert len(opened) == 2 and opened[1].endswith(".tmp")
    assert _page_files(tmp_path) == []


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_multiclass_groups_in_threads(n_jobs):
    """A round's output groups may stream the pages from several threads at once (each
    thread its own page buffers): the in-memory model on 1 and 2 threads."""
    X, y, w = _data(18, n_classes=3)
    p = _params("multi:softprob", n_jobs=n_jobs)
    expected = _model(p, gbm.DMatrix(X, label=y, weight=w), 4)
    d = gbm.ExtMemQuantileDMatrix(Batches([130, 1, 369], page_bytes=300, data=X, label=y,
                                          weight=w), bin_sample_size=SAMPLE)
    assert _model(p, d, 4) == expected


def test_arrow_batches():
    """pyarrow Tables (a dictionary column: categories) as batches: the in-memory model."""
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    X, y, _ = _data(19)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(N_FEATURES)])
    frame["kind"] = pd.Categorical(np.array(["u", "v", "w"])[np.arange(N_ROWS) % 3])
    p = _params("binary:logistic")
    expected = _model(p, gbm.DMatrix(frame, label=y, enable_categorical=True))

    class Tables(Batches):
        def next(self, input_data):
            if self.i >= len(self.bounds) - 1:
                return False
            lo, hi = self.bounds[self.i], self.bounds[self.i + 1]
            input_data(data=pa.Table.from_pandas(frame.iloc[lo:hi], preserve_index=False),
                        label=y[lo:hi])
            self.i += 1
            return True

    for kind in ("qdm", "extmem"):
        assert _model(p, _quantile(kind, Tables([200, 300], page_bytes=100))) == expected


def test_what_a_quantile_dmatrix_cannot_do():
    """Its float values are gone: cv (whose folds learn their own edges) refuses it, as
    XGBoost's does (continuing a model: tests/test_quantile_continue.py; predicting on
    its bins: tests/test_quantile_values.py)."""
    X, y, _ = _data(20)
    d = gbm.QuantileDMatrix(X, label=y, bin_sample_size=SAMPLE)
    p = _params("binary:logistic")
    with pytest.raises(ValueError, match="cv on a QuantileDMatrix .* own training rows"):
        gbm.cv(p, d, 2, nfold=2)


@pytest.mark.parametrize("extra", [
    {"subsample": 0.6, "colsample_bylevel": 0.7},  # rows left out: their margins by walking
    {"grow_policy": "lossguide", "max_leaves": 6, "max_depth": 0},
    # the leaves at max_depth: a partition without histograms (``page_partition``)
    {"grow_policy": "lossguide", "max_leaves": 7, "max_depth": 3, "subsample": 0.8},
    {"booster": "dart", "rate_drop": 0.3},  # margins computed again from the trees
    {"monotone_constraints": "(1,0,0,0,-1)", "min_child_weight": 3.0},
])
def test_tree_options_on_pages(extra):
    X, y, w = _data(21, regression=True)
    p = _params("reg:squarederror", **extra)
    expected = _model(p, gbm.DMatrix(X, label=y, weight=w), 4)
    d = gbm.ExtMemQuantileDMatrix(Batches([123, 1, 376], page_bytes=300, data=X, label=y,
                                          weight=w), bin_sample_size=SAMPLE)
    assert _model(p, d, 4) == expected


def test_pages_removed_at_exit(tmp_path):
    """A matrix still referenced when the interpreter exits leaves no page file."""
    import subprocess
    import sys

    script = (
        "import numpy as np, gbm\n"
        "class It(gbm.DataIter):\n"
        "    def __init__(self):\n"
        f"        super().__init__(cache_prefix={str(tmp_path)!r}, min_cache_page_bytes=1)\n"
        "        self.i = 0\n"
        "    def next(self, input_data):\n"
        "        if self.i == 2: return False\n"
        "        self.i += 1\n"
        "        input_data(data=np.ones((5, 2)) * self.i, label=np.zeros(5))\n"
        "        return True\n"
        "    def reset(self): self.i = 0\n"
        "KEPT = gbm.ExtMemQuantileDMatrix(It())\n"
        "import os; print(len(os.listdir(" + repr(str(tmp_path)) + ")))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"
    assert _page_files(tmp_path) == []


def test_truncated_page_is_refused(tmp_path):
    """A page file cut short after it was written: a clear error naming the page (a
    memory map past a file's end would crash the process on reading)."""
    X, y, _ = _data(14)
    d = gbm.ExtMemQuantileDMatrix(Batches([250, 250], page_bytes=1, data=X, label=y),
                                  cache_prefix=str(tmp_path), bin_sample_size=SAMPLE)
    path = d.data.matrix.files.paths[1]
    with open(path, "r+b") as fh:
        fh.truncate(os.path.getsize(path) - 1)
    with pytest.raises(ValueError, match="page 1 of the external-memory cache.*shorter"):
        gbm.train(_params("binary:logistic"), d, 1)


def test_a_level_is_one_pass_over_the_pages(monkeypatch):
    """A depthwise tree reads the pages once for its root and once a level (the partition
    and the children's histograms from the same page): ``depth + 1`` passes a tree; the
    same model as a partition pass and a histogram pass a level (the fused pass off)."""
    X, y, w = _data(15, regression=True)
    p = _params("reg:squarederror", max_depth=4)
    expected = _model(p, gbm.DMatrix(X, label=y, weight=w), 3)

    def fit():
        d = gbm.ExtMemQuantileDMatrix(Batches([200, 300], page_bytes=300, data=X, label=y,
                                              weight=w), bin_sample_size=SAMPLE)
        assert d.data.matrix.files.n_pages == 2
        return _model(p, d, 3), d.data.matrix.passes

    model, passes = fit()
    assert model == expected and passes == 3 * (4 + 1)
    monkeypatch.setattr(PagedBins, "partition_and_build", None)
    model, passes = fit()
    assert model == expected and passes == 3 * (2 * 4)


def test_lossguide_partitions_and_left_out_rows_are_one_call_a_page(monkeypatch):
    """A lossguide tree's last-depth partitions and the margins of the rows a row sample
    left out go through the one-call-a-page host kernels (``page_partition``,
    ``page_predict_binned``), a call per page and pass: the in-memory model."""
    from gbm.kernels.cpu import paged as kernels

    X, y, w = _data(16, regression=True)
    p = _params("reg:squarederror", grow_policy="lossguide", max_leaves=8, max_depth=3,
                subsample=0.7)
    expected = _model(p, gbm.DMatrix(X, label=y, weight=w), 3)
    calls = {"page_partition": 0, "page_predict_binned": 0}
    for name in calls:
        def counted(*args, _name=name, _kernel=getattr(kernels, name)):
            calls[_name] += 1
            return _kernel(*args)
        monkeypatch.setattr(kernels, name, counted)
    d = gbm.ExtMemQuantileDMatrix(Batches([200, 300], page_bytes=300, data=X, label=y,
                                          weight=w), bin_sample_size=SAMPLE)
    assert d.data.matrix.files.n_pages == 2
    assert _model(p, d, 3) == expected
    assert calls["page_partition"] > 0 and calls["page_partition"] % 2 == 0
    assert calls["page_predict_binned"] == 3 * 2  # a pass a tree, over both pages
