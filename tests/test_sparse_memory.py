"""What a wide sparse fit holds (issue 25, hashed text in at most twice the input's memory):
histograms of the features that can split only, from the root on (bounded before any
histogram by each feature's stored entries times the largest hessian) and narrowed level
by level; histogram buffers of the levels' sizes; no copy of the input's values through
the rounds. Every such saving leaves the model as it was: the layouts are compared
bit for bit with the dense fit's here and in ``test_sparse_models.py``."""
import gc
import types

import numpy as np
import pytest
import scipy.sparse as sp

import gbm
from gbm.callback import TrainingCallback
from gbm.data.sparse import SparseMatrix
from gbm.kernels import cpu
from gbm.runtime.backend import Backend
from gbm.tree import active
from gbm.tree.grower import HistogramBuffers

BASE = {"max_depth": 5, "learning_rate": 0.3, "n_jobs": 1, "objective": "binary:logistic"}


def hashed(n=800, n_features=4000, per_row=12, seed=0):
    """Counts of Zipf tokens hashed into columns: a few frequent, most in a row or two;
    the label from some frequent columns."""
    rng = np.random.default_rng(seed)
    cols = (np.minimum(rng.zipf(1.2, n * per_row), 10**6) * 7919) % n_features
    X = sp.csr_matrix((np.ones(n * per_row), (np.repeat(np.arange(n), per_row), cols)),
                      shape=(n, n_features))
    X.sum_duplicates()
    hot = np.argsort(-np.bincount(X.indices, minlength=n_features), kind="stable")[3:30]
    signal = X[:, hot[::2]].sum(axis=1).A.ravel() - X[:, hot[1::2]].sum(axis=1).A.ravel()
    return X, (signal + 0.3 * rng.normal(size=n) > 0).astype(float)


def _fake_data(counts, widths):
    """What ``candidate_layout`` / ``active_layout`` read of a ``TreeData``: a sparse
    matrix's layout (no missing slots) and its features' stored entries."""
    offsets = np.concatenate(([0], np.cumsum(widths))).astype(np.int32)
    n = len(widths)
    matrix = types.SimpleNamespace(feature_counts=lambda: np.asarray(counts, np.int32))
    return types.SimpleNamespace(matrix=matrix, missing_slots=0, feature_offsets=offsets,
                                 is_categorical=np.zeros(n, np.uint8),
                                 monotone=np.zeros(n, np.int8), n_features=n)


def _backend():
    backend = Backend("cpu", np, cpu)
    backend.workspace = {}
    return backend


@pytest.mark.parametrize("seed", range(6))
def test_candidates_hold_every_feature_the_root_keeps(seed):
    # the bound count * (largest hessian) is never below a feature's value rows' hessian
    # sum, however large the fixed-point hessians (float64 rounding included)
    rng = np.random.default_rng(seed)
    n_features, n_rows = 500, 400
    widths = rng.integers(1, 4, n_features)
    h_top = [50, 2**40, 2**60 // n_rows][seed % 3]
    hess = rng.integers(0, h_top, n_rows, dtype=np.int64)
    hess[rng.random(n_rows) < 0.3] = h_top - 1  # rows at the maximum: tight bounds
    rows_of = [rng.choice(n_rows, rng.integers(0, 30), replace=False) for _ in range(n_features)]
    counts = np.array([r.size for r in rows_of])
    value_h = np.array([int(hess[r].sum()) for r in rows_of], dtype=np.int64)
    data = _fake_data(counts, widths)
    offsets = data.feature_offsets
    root = np.zeros((1, int(offsets[-1]), 2), np.int64)
    root[0, offsets[:-1], 1] = value_h  # a feature's value rows all in its first bin
    scales = np.array([[1.0, 2.0 ** -int(rng.integers(0, 50))]])
    weights = value_h * (1.0 / scales[0, 1])
    for mcw in (0.0, float(np.median(weights)), float(np.quantile(weights, 0.9))):
        backend = _backend()
        kept = active.active_layout(data, root, scales, mcw, backend)
        kept = np.arange(n_features) if kept is None else kept[0].features
        expected = np.flatnonzero((value_h > 0) & (weights >= mcw))
        assert set(expected) <= set(kept)
        found = active.candidate_layout(data, np.array([hess.max()]), scales, mcw, backend)
        candidates = np.arange(n_features) if found is None else found.features
        assert set(expected) <= set(candidates), (mcw, sorted(set(expected) - set(candidates)))


def test_a_feature_exactly_at_the_bound_stays_a_candidate():
    # every row's hessian the largest: a feature's value rows weigh exactly count * h
    h = 3 * 2**45 + 7
    counts = np.array([0, 1, 2, 3, 4, 5, 9, 1, 0, 2] * 4)
    data = _fake_data(counts, np.ones(counts.size, np.int64))
    scales = np.array([[1.0, 2.0 ** -30]])
    mcw = 4 * h * 2.0 ** 30  # count 4 reaches it exactly
    found = active.candidate_layout(data, np.array([h]), scales, mcw, _backend())
    assert found is not None
    assert list(found.features) == list(np.flatnonzero(counts >= 4))


def test_narrowed_maps_take_every_slot_to_its_place():
    # candidates, then the root's features, then a level's: each map of every slot of the
    # bin matrix points into the newest layout, through the maps before it
    rng = np.random.default_rng(3)
    widths = rng.integers(1, 5, 300)
    data = _fake_data(np.ones(300), widths)
    offsets = data.feature_offsets.astype(np.int64)
    layout = active.HistogramLayout.of(data)
    backend = _backend()
    features = np.arange(300)
    for keep_share in (0.4, 0.6, 0.5):
        keep = rng.random(layout.feature_offsets.shape[0] - 1) < keep_share
        found = active._narrowed(layout, keep, backend, share=0.0)
        layout, features = found[0], features[keep]
        expected = np.full(int(offsets[-1]), -1)
        slots = np.concatenate([np.arange(offsets[f], offsets[f + 1]) for f in features])
        expected[slots] = np.arange(slots.size)
        np.testing.assert_array_equal(layout.slot_map, expected)
        np.testing.assert_array_equal(layout.features, features)
        np.testing.assert_array_equal(np.diff(layout.feature_offsets), widths[features])


def _histogram_widths(monkeypatch):
    """The slot counts of every histogram a fit builds, in order."""
    from gbm.bins.csr import CsrBins

    widths = []
    real = CsrBins.build_histograms

    def spy(self, k, gpair, rows, starts, ends, hist, n_threads, slot_map=None):
        widths.append(hist.shape[1])
        return real(self, k, gpair, rows, starts, ends, hist, n_threads, slot_map)

    monkeypatch.setattr(CsrBins, "build_histograms", spy)
    return widths


@pytest.mark.parametrize("params", [
    {"min_child_weight": 1.0},
    {"min_child_weight": 2.0, "subsample": 0.8, "colsample_bynode": 0.7},
    {"objective": "multi:softprob", "num_class": 3, "min_child_weight": 1.5},
])
def test_no_histogram_holds_every_feature(monkeypatch, params):
    X, y = hashed()
    if params.get("num_class"):
        y = (y + (X[:, 0].toarray().ravel() > 0)).astype(float)
    params = dict(BASE, **params)
    dense = gbm.train(dict(params, bin_layout="dense"), X, y, 4).to_json()
    widths = _histogram_widths(monkeypatch)
    model = gbm.train(dict(params, bin_layout="sparse"), X, y, 4)
    n_slots = sum(int(c.size) + 1 for c in model.cuts)  # every feature's value bins
    assert widths and max(widths) < n_slots / 2, (max(widths), n_slots)
    assert min(widths) < max(widths)  # deeper levels narrower than the roots
    assert model.to_json() == dense
    assert sum(t.n_nodes >= 7 for t in model.trees) >= len(model.trees) // 2


def test_histogram_buffers_are_the_levels_sizes():
    buffers = HistogramBuffers(np)
    for n_nodes in (1, 2, 4, 8, 16, 30, 1, 2, 4, 8, 16, 32):
        buffers.take(n_nodes, 100)
    # levels alternate between the buffers: each is the largest level it held, no more
    assert sorted(b.shape[0] for b in buffers._buffers) == [16 * 100 * 2, 32 * 100 * 2]


def _is_sparse(o):
    """Whether a live object is a ``SparseMatrix``; a weakref proxy whose referent is gone
    (left by earlier tests) raises ``ReferenceError`` on any look, and is not one."""
    try:
        return isinstance(o, SparseMatrix)
    except ReferenceError:
        return False


class _NoSparseCopies(TrainingCallback):
    """Counts the ``SparseMatrix`` objects alive after each round."""

    def __init__(self):
        self.alive = []

    def after_iteration(self, model, epoch, evals_log):
        gc.collect()
        self.alive.append(sum(_is_sparse(o) for o in gc.get_objects()))
        return False


@pytest.mark.parametrize("entry", ["train", "sklearn"])
def test_the_input_values_are_not_held_through_the_rounds(entry):
    # the rounds read the bins: the checked float32 copy of a sparse input's values is
    # let go once binned, by train and by the estimators (which check it first)
    X, y = hashed(n=300)
    watch = _NoSparseCopies()
    if entry == "train":
        gbm.train(dict(BASE, bin_layout="sparse"), X, y, 3, callbacks=[watch])
    else:
        gbm.GBMClassifier(n_estimators=3, max_depth=4, n_jobs=1, callbacks=[watch]).fit(X, y)
    assert watch.alive == [0, 0, 0]


def test_sklearn_fit_of_sparse_input_is_trains_model():
    X, y = hashed(n=400, seed=2)
    est = gbm.GBMClassifier(n_estimators=4, max_depth=4, learning_rate=0.3, n_jobs=1)
    est.fit(X, y)
    direct = gbm.train(dict(est.get_booster().params), X, y, 4)
    assert est.get_booster().to_json() == direct.to_json()


def test_chunked_counts_and_entry_runs_are_numpys(monkeypatch):
    from gbm.bins import binning
    from gbm.data import sparse

    rng = np.random.default_rng(5)
    values = rng.integers(0, 50, 1000).astype(np.int32)
    monkeypatch.setattr(sparse, "_COUNT_CHUNK", 64)
    monkeypatch.setattr(binning, "_CUT_CHUNK", 64)
    np.testing.assert_array_equal(sparse.count_values(values, 60),
                                  np.bincount(values, minlength=60))
    np.testing.assert_array_equal(binning._entries_of(values, 10, 20),
                                  np.flatnonzero((values >= 10) & (values < 20)))
    assert sparse.count_values(values[:0], 5).tolist() == [0] * 5
