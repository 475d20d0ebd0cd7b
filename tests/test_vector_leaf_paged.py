"""Vector-leaf trees (``multi_strategy="multi_output_tree"``) on an
``ExtMemQuantileDMatrix`` (issues 26 and 27): the model file is the in-memory fit of the
concatenated batches, byte for byte, for any batch sizes and on 1 or 2 threads; the
paged histograms are the dense kernel's sums (the monotone re-check's one-feature ones too)."""
import numpy as np
import pytest

import gbm
from gbm.bins.dense import DenseBins
from gbm.bins.paged import PagedBins
from gbm.kernels.cpu import vector_leaf as cpu_kernels
from gbm.kernels.reference import vector_leaf as reference_kernels
from gbm.tree.vector_paged import paged_feature_histograms, paged_vector_histograms
from tests.test_streaming import Batches

VL = {"multi_strategy": "multi_output_tree", "max_depth": 3, "learning_rate": 0.5,
      "bin_sample_size": 200}


def _data(n=400, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)).astype(np.float32)
    X[:, 3] = np.round(X[:, 3] * 2)
    X[rng.random(X.shape) < 0.1] = np.nan
    a, b = np.nan_to_num(X[:, 0]), np.nan_to_num(X[:, 1] - X[:, 2])
    targets = np.stack([a, b, a * b], 1) + 0.3 * rng.normal(size=(n, 3))
    classes = np.digitize(a - b, [-1.0, 0.0, 1.0]).astype(np.float64)  # 4 classes
    return X, targets, classes, rng.uniform(0.5, 2.0, n)


def _sizes(kind, n):
    return {"uneven": [1, n // 3, 7, n - n // 3 - 9, 1], "rows": [1] * n}[kind]


def _both(p, X, y, w, sizes, rounds=3):
    """(in-memory model file, external-memory model file, the paged matrix)."""
    expected = gbm.train(p, gbm.DMatrix(X, label=y, weight=w), rounds).to_json()
    pages = gbm.ExtMemQuantileDMatrix(
        Batches(sizes, page_bytes=300, data=X, label=y, weight=w), bin_sample_size=200)
    got = gbm.train(p, pages, rounds).to_json()
    return expected, got, pages.data.matrix


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("case", ["targets", "softprob", "softprob_projected", "sampled"])
def test_same_model_as_in_memory(case, n_jobs):
    """Multi-target regression, softprob with and without the gradient projection, and
    row/column sampling: the streamed model file equals the in-memory one; several pages,
    each level a pass over them."""
    n = 120 if case == "sampled" else 400
    X, targets, classes, w = _data(n)
    p = dict(VL, n_jobs=n_jobs)
    if case == "targets":
        y = targets
        p["objective"] = "reg:squarederror"
    else:
        y = classes
        p.update(objective="multi:softprob", num_class=4)
    if case == "softprob_projected":
        p.update(gradient_projection=True, projection_dim=2)
    if case == "sampled":
        p.update(subsample=0.7, colsample_bynode=0.6, colsample_bytree=0.8)
    sizes = _sizes("rows" if case == "sampled" else "uneven", n)
    expected, got, matrix = _both(p, X, y, w, sizes)
    assert isinstance(matrix, PagedBins) and matrix.files.n_pages > 2
    assert matrix.passes > 3  # the trees read the pages (not a dense copy)
    assert got == expected


def test_eval_set_with_ref_and_early_stopping():
    """An ``ExtMemQuantileDMatrix`` eval set made with ``ref=``: the in-memory fit's scores
    every round, its best iteration and its model file."""
    X, targets, _, w = _data(300, seed=5)
    Xv, targets_v, _, _ = _data(150, seed=6)
    p = dict(VL, objective="reg:squarederror", eval_metric="rmse")
    ref_log, log = {}, {}
    expected = gbm.train(p, gbm.DMatrix(X, label=targets, weight=w), 12,
                         evals=[(gbm.DMatrix(Xv, label=targets_v), "valid")],
                         evals_result=ref_log, early_stopping_rounds=2, verbose_eval=False)
    pages = gbm.ExtMemQuantileDMatrix(
        Batches([100, 200], page_bytes=300, data=X, label=targets, weight=w),
        bin_sample_size=200)
    valid = gbm.ExtMemQuantileDMatrix(
        Batches([70, 80], page_bytes=300, data=Xv, label=targets_v), ref=pages,
        bin_sample_size=200)
    got = gbm.train(p, pages, 12, evals=[(valid, "valid")], evals_result=log,
                    early_stopping_rounds=2, verbose_eval=False)
    assert log == ref_log and len(log["valid"]["rmse"]) > 2
    assert got.best_iteration == expected.best_iteration
    assert got.to_json() == expected.to_json()


def test_lossguide_monotone_and_batch_sizes():
    """Leaf-by-leaf growth with a monotone constraint (no projection), two batchings:
    the in-memory model."""
    X, targets, _, w = _data(300, seed=7)
    p = dict(VL, objective="reg:squarederror", grow_policy="lossguide", max_leaves=6,
             max_depth=0, monotone_constraints="(1,0,0,0,0)")
    for kind in ("uneven", "rows"):
        expected, got, _ = _both(p, X, targets[:, :2], w, _sizes(kind, 300), rounds=2)
        assert got == expected


@pytest.mark.parametrize("max_cat_to_onehot", [1, 8])
def test_categorical_batches(max_cat_to_onehot):
    """A pandas ``category`` column (a batch lacking some categories, missing values):
    partitioned by category sets page by page, one-hot and partition splits, the
    in-memory model."""
    pd = pytest.importorskip("pandas")
    X, _, classes, w = _data(300, seed=9)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    labels = np.array(list("abcde"))
    codes = np.random.default_rng(9).integers(0, 5, 300)
    codes[:100] = np.minimum(codes[:100], 1)
    frame["colour"] = pd.Categorical(labels[codes], categories=list(labels))
    frame.loc[::13, "colour"] = None
    y = np.where(codes == 3, 3.0, classes)
    p = dict(VL, objective="multi:softprob", num_class=4, max_cat_to_onehot=max_cat_to_onehot)
    expected = gbm.train(p, gbm.DMatrix(frame, label=y, enable_categorical=True), 3)
    assert any(t.cat_bits is not None for t in expected.trees)  # category splits made
    pages = gbm.ExtMemQuantileDMatrix(Batches([100, 120, 80], page_bytes=300, data=frame,
                                              label=y), bin_sample_size=200)
    assert pages.data.matrix.files.n_pages > 1
    assert gbm.train(p, pages, 3).to_json() == expected.to_json()


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_monotone_with_projection(n_jobs, monkeypatch):
    """Monotone constraints with the gradient projection: the projected splits on the
    constrained feature are re-checked from one-feature histograms summed page by page
    (some are, each round), and the model file is the in-memory fit's for two batchings."""
    import gbm.tree.vector_monotone as vector_monotone
    calls = []

    def spy(*args):
        calls.append(len(args[7]))  # the nodes re-checked in one pass
        return paged_feature_histograms(*args)

    monkeypatch.setattr(vector_monotone, "paged_feature_histograms", spy)
    X, _, classes, w = _data(300, seed=13)
    p = dict(VL, objective="multi:softprob", num_class=4, gradient_projection=True,
             projection_dim=2, monotone_constraints="(1,-1,0,0,0)", n_jobs=n_jobs)
    for kind in ("uneven", "rows"):
        calls.clear()
        expected, got, matrix = _both(p, X, classes, w, _sizes(kind, 300))
        assert matrix.files.n_pages > 2
        assert len(calls) >= 3 and sum(calls) > len(calls)  # checks made on the pages
        assert got == expected


@pytest.mark.parametrize("kernels", [cpu_kernels, reference_kernels])
def test_paged_histograms_are_the_dense_sums(kernels, tmp_path):
    """Three nodes whose rows (each node's increasing) span pages of uneven sizes,
    one node empty: the paged sums equal the dense kernel's on the whole matrix; rows out
    of order within a node are refused, not summed wrong."""
    rng = np.random.default_rng(11)
    n, n_features, k = 90, 4, 3
    bins = rng.integers(0, 6, size=(n, n_features)).astype(np.uint8)
    n_bins = np.full(n_features, 5, np.int32)
    cuts = [0, 1, 31, 32, 70, 90]
    files = gbm.bins.paged.PageFiles([tmp_path / f"p{i}" for i in range(len(cuts) - 1)],
                                     cuts, n_features, np.uint8)
    for i in range(len(cuts) - 1):
        page = bins[cuts[i]:cuts[i + 1]]
        with open(files.paths[i], "wb") as fh:
            fh.write(np.ascontiguousarray(page).tobytes())
            fh.write(np.ascontiguousarray(page.T).tobytes())
    matrix = PagedBins(files, n_bins)
    dense = DenseBins(bins, np.ascontiguousarray(bins.T), n_bins)
    gpair = rng.integers(-1000, 1000, size=(n, k, 2)).astype(np.int64)
    node = rng.integers(0, 2, size=n)
    rows = np.concatenate([np.flatnonzero(node == 0), np.flatnonzero(node == 1)]).astype(np.int32)
    m0 = int((node == 0).sum())
    starts = np.array([0, m0, n], np.int64)
    ends = np.array([m0, n, n], np.int64)
    shape = (3, int(matrix.feature_offsets[-1]), k, 2)
    expected = np.empty(shape, np.int64)
    kernels.build_vector_histograms(dense.bins_by_feature, gpair, rows, starts, ends,
                                    matrix.feature_offsets, expected)
    got = np.full(shape, 7, np.int64)
    paged_vector_histograms(matrix, kernels, gpair, rows, starts, ends, got)
    np.testing.assert_array_equal(got, expected)
    assert got[0].sum() != 0 and not got[2].any()
    with pytest.raises(RuntimeError, match="out of order"):
        paged_vector_histograms(matrix, kernels, gpair, rows[::-1].copy(), starts[:1],
                                ends[:1], got[:1])
    matrix.close()


@pytest.mark.parametrize("kernels", [cpu_kernels, reference_kernels])
def test_paged_feature_histograms_are_the_dense_sums(kernels, tmp_path):
    """One feature's histogram per node over every output (the monotone re-check's),
    nodes on different features of different widths and one node empty, rows across
    uneven pages: the paged sums equal the dense kernel's on the whole matrix, each node's
    slots past its feature's width zero; rows out of order are refused."""
    rng = np.random.default_rng(17)
    n, k = 80, 3
    n_bins = np.array([3, 6, 2], np.int32)
    bins = np.stack([rng.integers(0, b + 1, n) for b in n_bins], 1).astype(np.uint8)
    cuts = [0, 25, 26, 60, 80]
    files = gbm.bins.paged.PageFiles([tmp_path / f"p{i}" for i in range(len(cuts) - 1)],
                                     cuts, 3, np.uint8)
    for i in range(len(cuts) - 1):
        page = bins[cuts[i]:cuts[i + 1]]
        with open(files.paths[i], "wb") as fh:
            fh.write(np.ascontiguousarray(page).tobytes())
            fh.write(np.ascontiguousarray(page.T).tobytes())
    matrix = PagedBins(files, n_bins)
    by_feature = np.ascontiguousarray(bins.T)
    gpair = rng.integers(-1000, 1000, size=(k, n, 2)).astype(np.int64)  # output-major
    node = rng.integers(0, 3, size=n)
    rows = np.concatenate([np.flatnonzero(node == j) for j in range(3)]).astype(np.int32)
    counts = np.bincount(node, minlength=3)
    starts = np.array([0, counts[0], counts[0] + counts[1], n], np.int64)
    ends = np.array([counts[0], counts[0] + counts[1], n, n], np.int64)
    features = np.array([1, 0, 2, 1], np.int32)
    got = np.full((4, 7, k, 2), 5, np.int64)
    paged_feature_histograms(matrix, kernels, gpair, rows, starts, ends, features, got)
    for j, f in enumerate(features):
        width = int(n_bins[f]) + 1
        expected = np.empty((1, width, k, 2), np.int64)
        kernels.build_vector_feature_histograms(by_feature, gpair, rows, starts[j:j + 1],
                                                ends[j:j + 1], features[j:j + 1], expected)
        np.testing.assert_array_equal(got[j, :width], expected[0])
        assert not got[j, width:].any()
    assert got[0].any() and not got[3].any()
    with pytest.raises(RuntimeError, match="out of order"):
        paged_feature_histograms(matrix, kernels, gpair, rows[::-1].copy(), starts[:1],
                                 ends[:1], features[:1], got[:1])
    matrix.close()
