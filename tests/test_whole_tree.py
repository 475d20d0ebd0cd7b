"""Trees grown in one compiled call (gbm/tree/whole_tree.py, kernels/cpu/grow_tree.py)
against their oracle, ``TreeGrower`` level by level: the same model file, byte for byte,
over random settings of everything that changes what a tree does; the path taken only
where it may be; its kernel compiled in the background for later fits."""
import collections
import json
import os
import subprocess
import sys

import numba
import numpy as np
import pandas as pd
import pytest

import gbm
import gbm.params
from gbm.collective import ThreadCollective, ThreadGroup
from gbm.bins.dense import DenseBins
from gbm.bins.binning import BinMapper, RaggedCuts
from gbm.kernels.cpu.node_masks import feature_masks
from gbm.runtime import compile_ahead
from gbm.runtime.backend import get_backend
from gbm.tree import growers, whole_tree
from gbm.tree.constraints import allowed_features
from gbm.tree.sampling import ColumnSampler
from gbm.tree.tree_data import TreeData


@pytest.fixture(autouse=True)
def _compiled_at_once(monkeypatch):
    """The kernel compiled at the first fit that needs it (not in the background, which
    would leave that fit on the level path): every fit here takes the path it may. A
    background compile an earlier test module's fit started (its key in ``_background``,
    not yet in the cache on a busy machine) is not waited for either."""
    monkeypatch.setenv("GBM_COMPILE_PROCESSES", "1")
    monkeypatch.setattr(compile_ahead, "_background", {})


def _both(monkeypatch, params, X, y, rounds=4, **kwargs):
    """(model file grown in one call per tree, model file grown level by level, trees
    grown in one call)."""
    calls = []
    grow = whole_tree.WholeTrees.grow
    monkeypatch.setattr(whole_tree.WholeTrees, "grow",
                        lambda self, *a: calls.append(1) or grow(self, *a))
    whole = gbm.train(params, X, y, rounds, **kwargs).to_json()
    with monkeypatch.context() as m:
        m.setattr(growers.SWITCHES, "whole_trees", False)
        levels = gbm.train(params, X, y, rounds, **kwargs).to_json()
    return whole, levels, len(calls)


def _random_case(seed):
    """A random table and parameters: objective, depth and leaf limits, regularisation,
    sampling, constraints, categories, missing values, weights, bins, threads."""
    rng = np.random.default_rng(seed)
    n, f = int(rng.integers(200, 1500)), int(rng.integers(2, 9))
    X = rng.normal(size=(n, f))
    X[:, 0] = np.round(X[:, 0] * 2)  # ties: empty bins, repeated thresholds
    if rng.uniform() < 0.5:
        X[rng.uniform(size=X.shape) < 0.1] = np.nan
    categorical = []
    if f > 2 and rng.uniform() < 0.4:  # an integer column of categories
        categorical = [f - 1]
        X[:, f - 1] = rng.integers(0, int(rng.choice([3, 12, 40])), n)
    signal = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) ** 2 + np.sin(np.nan_to_num(X[:, -1]))
    kind = rng.choice(["reg", "binary", "multi", "poisson", "targets", "huber"])
    params = {"max_depth": int(rng.integers(1, 8)), "n_jobs": int(rng.choice([1, 2])),
              "learning_rate": float(rng.choice([0.3, 1.0])),
              "max_bin": int(rng.choice([8, 64, 256, 300])),
              "min_child_weight": float(rng.choice([0.0, 0.5, 1.0, 5.0])),
              "gamma": float(rng.choice([0.0, 0.0, 0.1, 1.0])),
              "reg_lambda": float(rng.choice([0.0, 0.5, 1.0, 3.0])),
              "reg_alpha": float(rng.choice([0.0, 0.0, 0.3])),
              "max_delta_step": float(rng.choice([0.0, 0.0, 0.5])),
              "subsample": float(rng.choice([1.0, 1.0, 0.7])),
              "colsample_bytree": float(rng.choice([1.0, 0.8])),
              "colsample_bylevel": float(rng.choice([1.0, 0.7])),
              "colsample_bynode": float(rng.choice([1.0, 0.6])),
              "num_parallel_tree": int(rng.choice([1, 1, 2])),
              "max_cat_to_onehot": int(rng.choice([1, 4, 64])), "seed": seed}
    if params["reg_lambda"] == 0.0 and params["min_child_weight"] == 0.0:
        params["reg_lambda"] = 0.1  # a child of zero hessian would have no weight
    if rng.uniform() < 0.4:
        params["max_leaves"] = int(rng.integers(2, 20))
    numeric = [j for j in range(f) if j not in categorical]
    if rng.uniform() < 0.3:
        params["monotone_constraints"] = [int(rng.choice([-1, 0, 1])) if j in numeric else 0
                                          for j in range(f)]
    if rng.uniform() < 0.3:
        cut = int(rng.integers(1, f))
        params["interaction_constraints"] = [list(range(cut)), list(range(cut - 1, f))]
    y = signal + rng.normal(scale=0.5, size=n)
    if kind == "binary":
        params["objective"] = "binary:logistic"
        y = (y > np.median(y)).astype(float)
    elif kind == "multi":
        params.update(objective="multi:softprob", num_class=3)
        y = np.digitize(y, np.quantile(y, [0.33, 0.66])).astype(float)
    elif kind == "poisson":
        params["objective"] = "count:poisson"
        y = rng.poisson(np.exp(np.clip(signal, -3, 3) / 3)).astype(float)
    elif kind == "targets":
        y = np.column_stack([y, -signal + rng.normal(size=n)])
    elif kind == "huber":
        params["objective"] = "reg:pseudohubererror"
    weights = rng.uniform(0.2, 3.0, n) if rng.uniform() < 0.4 else None
    return params, X, y, weights, categorical


@pytest.mark.parametrize("seed", range(40))
def test_the_model_of_trees_grown_level_by_level(seed, monkeypatch):
    params, X, y, weights, categorical = _random_case(seed)
    whole, levels, calls = _both(monkeypatch, params, X, y, sample_weight=weights,
                                 categorical_features=categorical or None)
    assert calls > 0
    assert whole == levels


def test_large_nodes_take_the_parallel_steps(monkeypatch):
    """Enough rows that the histograms, the partition and the split evaluation of the
    first levels run on two threads inside the call."""
    rng = np.random.default_rng(3)
    # 36,000 rows sampled: a partition's 4 x 36,000 cells pass whole_tree.TREE_MIN_WORK
    assert 4 * 36_000 >= whole_tree.TREE_MIN_WORK
    X = rng.normal(size=(40_000, 8))
    X[::7, 2] = np.nan
    y = X[:, 0] + np.nan_to_num(X[:, 2]) ** 2 + rng.normal(size=len(X))
    params = {"max_depth": 5, "n_jobs": 2, "max_bin": 256, "subsample": 0.9}
    whole, levels, calls = _both(monkeypatch, params, X, y, rounds=3)
    assert calls == 3
    assert whole == levels


@pytest.mark.parametrize("seed", range(12))
def test_fused_levels_the_same_model(seed, monkeypatch):
    """Levels whose partition and histograms run a parent per task on two threads
    (kernels/cpu/tree_level.py; every step given a second thread, whatever its size):
    the model of the level kernels' path and of TreeGrower, byte for byte."""
    params, X, y, weights, categorical = _random_case(100 + seed)
    if y.ndim == 2 or "num_class" in params:  # one output: several run in threads of one
        y = y[:, 0] if y.ndim == 2 else y
        params.pop("num_class", None)
        params["objective"] = "reg:squarederror"
    params["n_jobs"] = 2
    params["max_depth"] = max(params["max_depth"], 5)
    monkeypatch.setattr(whole_tree, "TREE_MIN_WORK", 1)
    monkeypatch.setattr(growers.SWITCHES, "fused_levels", 2)
    trees = []
    grow = whole_tree.WholeTrees.grow
    monkeypatch.setattr(whole_tree.WholeTrees, "grow",
                        lambda self, *a: trees.append(self) or grow(self, *a))
    kwargs = {"sample_weight": weights, "categorical_features": categorical or None}
    fused = gbm.train(params, X, y, 4, **kwargs).to_json()
    assert sum(t.fused_levels for t in set(trees)) > 0
    with monkeypatch.context() as m:
        m.setattr(growers.SWITCHES, "fused_levels", 0)
        trees.clear()
        steps = gbm.train(params, X, y, 4, **kwargs).to_json()
        assert trees and sum(t.fused_levels for t in set(trees)) == 0
    with monkeypatch.context() as m:
        m.setattr(growers.SWITCHES, "whole_trees", False)
        levels = gbm.train(params, X, y, 4, **kwargs).to_json()
    assert fused == steps == levels


def test_deal_gives_the_costliest_parents_first_to_the_least_loaded_thread():
    from gbm.kernels.cpu.tree_level import deal

    costs = np.array([5, 9, 2, 9, 4], dtype=np.int64)
    plan = np.full((2, 5), -1, dtype=np.int64)
    counts = np.zeros(2, dtype=np.int64)
    # by cost: 1 (9), 3 (9), 0 (5), 4 (4), 2 (2); loads 9|9 -> 14|9 -> 14|13 -> 14|15
    assert deal(costs, 5, 2, plan, counts) == 15
    assert counts.tolist() == [2, 3]
    assert plan[0, :2].tolist() == [1, 0]
    assert plan[1, :3].tolist() == [3, 4, 2]


def test_deep_trees_grow_their_histogram_room(monkeypatch):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(3000, 5))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + rng.normal(scale=0.1, size=len(X))
    params = {"max_depth": 11, "min_child_weight": 0.0, "reg_lambda": 0.1, "max_bin": 64}
    whole, levels, calls = _both(monkeypatch, params, X, y, rounds=3)
    assert calls == 3
    assert whole == levels
    assert max(json.loads(whole)["trees"][0]["split_feature"].count(-1), 0) > 100  # wide


def test_categories_of_a_dataframe_and_early_stopping(monkeypatch):
    rng = np.random.default_rng(5)
    n = 2500
    frame = pd.DataFrame(rng.normal(size=(n, 3)), columns=list("abc"))
    codes = rng.integers(0, 30, n)
    frame["cat"] = pd.Categorical.from_codes(codes, [f"c{i}" for i in range(30)])
    y = frame["a"].to_numpy() + (codes % 5) + rng.normal(size=n)
    evals = [(frame[2000:], y[2000:], "valid")]
    params = {"max_depth": 4, "learning_rate": 0.8, "max_cat_to_onehot": 4}
    whole, levels, calls = _both(monkeypatch, params, frame[:2000], y[:2000], rounds=60,
                                 evals=evals, early_stopping_rounds=3)
    assert 3 < calls < 60
    assert whole == levels


def test_continued_training_and_base_margins(monkeypatch):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(800, 4))
    y = (X[:, 0] + rng.logistic(size=800) > 0).astype(float)
    first = gbm.train({"objective": "binary:logistic"}, X, y, 3)
    params = {"objective": "binary:logistic", "max_depth": 3}
    whole, levels, calls = _both(monkeypatch, params, X, y, init_model=first,
                                 base_margin=rng.normal(size=800))
    assert calls == 4
    assert whole == levels


def _tree_data(n_rows=100, n_features=4, layout="dense"):
    bins = np.zeros((n_rows, n_features), np.uint8)
    n_bins = np.full(n_features, 4, np.int32)
    cuts = RaggedCuts(np.zeros(3 * n_features, np.float32), np.arange(0, 3 * n_features + 1, 3))
    if layout == "dense":
        matrix = DenseBins(bins, bins.T.copy(), n_bins)
    else:
        matrix = BinMapper.from_cuts(list(np.zeros((n_features, 3), np.float32))).bin_matrix(
            np.where(np.eye(n_rows, n_features) == 1, 0.5, np.nan).astype(np.float32),
            "sparse")
    return TreeData(matrix, n_bins, cuts, np.zeros(n_features, np.uint8),
                    np.zeros(n_features, np.int8))


def test_used_only_where_it_may_be():
    p = gbm.params.validate_params({})
    cpu, data = get_backend("cpu", 2), _tree_data()
    assert growers.use_whole_trees(p, cpu, data, False)
    assert not growers.use_whole_trees(p, cpu, data, True)  # leaves refreshed
    for change in ({"grow_policy": "lossguide"}, {"max_depth": 0, "max_leaves": 8}):
        assert not growers.use_whole_trees(gbm.params.validate_params(change), cpu, data,
                                           False)
    rank = ThreadCollective(ThreadGroup(2), 0)
    assert not growers.use_whole_trees(p, get_backend("cpu", 2, rank), data, False)
    deep = gbm.params.validate_params({"max_depth": 20})  # 2**21 nodes: level by level
    assert not growers.use_whole_trees(deep, cpu, _tree_data(10**6, 2), False)
    assert growers.use_whole_trees(deep, cpu, _tree_data(1000, 2), False)  # 1,999 at most
    assert not growers.use_whole_trees(p, cpu, _tree_data(layout="sparse"), False)


def test_a_one_valued_feature_splits_from_its_missing_rows(monkeypatch):
    """A feature with one value and missing rows has one split, value rows against
    missing ones (split bin -1, threshold float32's lowest): the same in one call."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 3))
    X[:, 1] = np.where(rng.uniform(size=600) < 0.4, np.nan, 1.0)
    y = np.isnan(X[:, 1]) * 3.0 + 0.1 * X[:, 0]
    whole, levels, calls = _both(monkeypatch, {"max_depth": 3}, X, y, rounds=2)
    assert calls == 2
    assert whole == levels
    tree = json.loads(whole)["trees"][0]
    root = tree["split_feature"][0]
    assert root == 1 and tree["split_bin"][0] == -1
    assert np.float32(tree["threshold"][0]) == np.finfo(np.float32).min


def test_absolute_error_refreshes_leaves_level_by_level(monkeypatch):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(500, 3))
    y = X[:, 0] + rng.laplace(size=500)
    _, _, calls = _both(monkeypatch, {"objective": "reg:absoluteerror"}, X, y)
    assert calls == 0


def test_the_kernel_key_is_the_signature_a_fit_compiles(monkeypatch):
    """What ``compile_later`` compiles is what the fit calls (else a fit would compile
    again, at once)."""
    from gbm.kernels.cpu.grow_tree import grow_tree

    made = []
    real = growers.WholeTrees
    monkeypatch.setattr(growers, "WholeTrees", lambda *a: made.append(real(*a)) or made[-1])
    rng = np.random.default_rng(8)
    for max_bin in (256, 1000):  # uint8 and uint16 bins
        X = rng.normal(size=(3000, 3))
        gbm.train({"max_bin": max_bin}, X, X[:, 0], 1)
        module, name, signature = made[-1].kernel_key()
        assert (module, name) == ("gbm.kernels.cpu.grow_tree", "grow_tree")
        assert signature in grow_tree.overloads


def test_a_fit_leaves_numbas_thread_count_as_it_was():
    X = np.random.default_rng(9).normal(size=(30_000, 4))
    numba.set_num_threads(1)
    try:
        backend = get_backend("cpu", 2)
        with backend.threads() as n:
            gbm.train({"n_jobs": 2, "max_depth": 3}, X, X[:, 0], 2)
            assert numba.get_num_threads() == n == 2
        assert numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


@pytest.mark.parametrize("seed", range(6))
def test_feature_masks_are_the_samplers_and_constraints(seed):
    """``node_masks.feature_masks`` against ``ColumnSampler.masks`` and
    ``allowed_features`` (its Python twin), node by node."""
    rng = np.random.default_rng(seed)
    f = int(rng.integers(3, 30))
    params = gbm.params.validate_params({"colsample_bytree": 0.8, "colsample_bylevel": 0.7,
                                         "colsample_bynode": float(rng.choice([1.0, 0.5]))})
    sampler = ColumnSampler(params, f, int(rng.integers(0, 100)), 1)
    depth = int(rng.integers(0, 4))
    levels = np.zeros((4, f), np.int64)
    sizes = np.zeros(4, np.int64)
    for d in range(4):
        features = sampler.level_features(d)
        levels[d, :features.size], sizes[d] = features, features.size
    ids = rng.choice(200, size=12, replace=False).astype(np.int64)
    paths = (rng.uniform(size=(200, f)) < 0.15).astype(np.uint8)
    paths[ids[0]] = 0  # a node with no feature above it
    sets = (rng.uniform(size=(3, f)) < 0.4)
    masks = np.empty((12, f), np.uint8)
    feature_masks(ids, 12, depth, levels, sizes, np.uint64(sampler.node_key()),
                  sampler.by_node, sets.astype(np.uint8), paths, masks)
    expected = sampler.masks(ids, np.full(12, depth)) & allowed_features(sets, paths[ids])
    np.testing.assert_array_equal(masks, expected)


# In a process with an empty cache: a cheap kernel compiled later, in the background or
# (one process) at once.
_LATER = r"""
import json, time
from gbm.runtime import compile_ahead as ca
entry = next(e for e in ca.STANDARD if e[1] == "max_abs_pairs")
key = (entry[0], entry[1], entry[2])
first = ca.compile_later(*key)
again = ca.compile_later(*key)
for _ in range(600):
    if ca.ready(*key):
        break
    time.sleep(0.1)
print(json.dumps({"first": first, "again": again, "ready": ca.ready(*key),
                  "compiled_here": len(ca._dispatcher(key).overloads),
                  "background": len(ca._background)}))
"""


def _run(code, **env):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, **env), timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_compile_later_in_a_background_process(tmp_path):
    report = _run(_LATER, NUMBA_CACHE_DIR=str(tmp_path), GBM_COMPILE_PROCESSES="2")
    assert report == {"first": False, "again": False, "ready": True, "compiled_here": 0,
                      "background": 1}


def test_compile_later_with_one_process_compiles_at_once(tmp_path):
    report = _run(_LATER, NUMBA_CACHE_DIR=str(tmp_path), GBM_COMPILE_PROCESSES="1")
    assert report == {"first": True, "again": True, "ready": True, "compiled_here": 1,
                      "background": 0}


def test_kernel_types_looked_up_are_numba_typeof():
    """``_numba_types`` (kernel_key's types, looked up by dtype, dimensions, layout,
    writability and alignment) against ``numba.typeof`` of each argument (the oracle),
    over arrays of every layout, read-only arrays, NumPy scalars, None and nested tuples,
    each asked twice (the second from the lookup)."""
    a = np.zeros((4, 3), np.uint8)
    readonly = np.ones(5)
    readonly.flags.writeable = False
    unaligned = np.frombuffer(bytes(17), np.uint8)[1:].view(np.int64)
    cases = [(a, a.T, a[:, ::2], a[0], np.zeros(0, np.int32)),
             (readonly, np.ones(5), unaligned),
             ((np.zeros(2), np.zeros(2)), (np.zeros(2), np.zeros(2, np.int32)), None,
              np.uint64(3), np.float64(1.0), 7, -2**63, 2.5),
             (a.T.copy(order="C"), (a, (None, a.T))),
             (np.memmap, 3, "x", 2**63)]  # not looked up: typeof's own way
    for _ in range(2):
        for args in cases[:4]:
            assert whole_tree._numba_types(args) == tuple(numba.typeof(v) for v in args)
    assert whole_tree._type_key(cases[4]) is None
    assert whole_tree._type_key(2**63) is None and whole_tree._type_key(True) is None
    # equal record dtypes that Numba types apart (aligned or not), and a named tuple (its own
    # Numba type): never looked up
    aligned = np.dtype([("a", "i1"), ("b", "i4")], align=True)
    packed = np.dtype({"names": ["a", "b"], "formats": ["i1", "i4"], "offsets": [0, 4],
                       "itemsize": 8})
    assert aligned == packed and numba.typeof(np.zeros(2, aligned)) != \
        numba.typeof(np.zeros(2, packed))
    for args in [(np.zeros(2, aligned),), (np.zeros(2, packed),)]:
        assert whole_tree._numba_types(args) == tuple(numba.typeof(v) for v in args)
    pair = collections.namedtuple("pair", "x y")
    for args in [((np.zeros(2), np.zeros(2)),), (pair(np.zeros(2), np.zeros(2)),)]:
        assert whole_tree._numba_types(args) == tuple(numba.typeof(v) for v in args)
    # what the fits ask: every key different where the types differ
    keys = {whole_tree._type_key((v,)) for v in cases[0] + cases[1]}
    assert len(keys) == len({numba.typeof(v) for v in cases[0] + cases[1]})
    # a fit's key: the types of its arguments, the same looked up as typed afresh
    data, p = _tree_data(), gbm.params.validate_params({})
    trees = whole_tree.WholeTrees(data, p, data.matrix.n_rows)
    rows = np.empty(0, np.int32)
    args = trees._arguments(np.empty((0, 2), np.int64), rows, rows, np.ones(2), p,
                            whole_tree._AllFeatures(), np.empty(0), True)
    assert trees.kernel_key()[2] == trees.kernel_key()[2] == tuple(numba.typeof(v) for v in args)
