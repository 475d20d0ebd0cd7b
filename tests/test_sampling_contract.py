"""The sampling contract (docs/parameters.md "Sampling", gbm/tree/sampling.py): every tree
draws its own rows and columns, keyed by (seed, round, output group, parallel tree), so
the draws differ between groups, rounds and parallel trees, are the same for the same
key, and the first parallel tree keeps the key it had before ``num_parallel_tree``.

The rows and column sets each tree is grown on are recorded from the trainer's calls
(a spy on ``TreeGrower``, which grows one tree or a round's groups' trees in lockstep,
and on ``WholeTrees.grow``, which grows one tree in one compiled call), so these tests
see what training did, not what the sampling functions would return.
"""
import itertools
import threading

import numpy as np
import pytest

import gbm
from gbm.tree import lockstep, whole_tree
from gbm.training import rounds

N_ROWS, N_FEATURES = 2000, 12


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N_ROWS, N_FEATURES))
    y = rng.integers(0, 3, N_ROWS).astype(float)
    return X, y


class _Record:
    def __init__(self):
        self.trees = []  # per tree: (rows as a frozenset, the tree's column set, sampler)
        self.lock = threading.Lock()  # a round's groups may grow in threads at once

    def add(self, entry):
        """``entry`` in the trainer's tree order, (round, group, parallel tree), whatever
        thread grew it first."""
        key = lambda e: _padded(e[2].parts)  # noqa: E731
        with self.lock:
            self.trees.append(entry)
            self.trees.sort(key=key)


def _padded(parts):
    return tuple(parts) + (0,) * (3 - len(parts))


@pytest.fixture
def spy(monkeypatch):
    """Records each grown tree's rows and tree-level columns, in training order."""
    record = _Record()
    original = rounds.TreeGrower

    class Spy(original):
        def __init__(self, data, gpair, scales, rows, params, backend, column_sampler,
                     *args, **kwargs):
            segments = kwargs.get("segments")
            if segments is None:  # one tree
                record.add((frozenset(np.asarray(rows).tolist()),
                            tuple(column_sampler.tree.tolist()), column_sampler))
            else:  # trees in lockstep: tree t's rows are numbered from t * n_rows
                n_rows = data.matrix.n_rows // len(column_sampler)
                for t, sampler in enumerate(column_sampler):
                    own = np.asarray(rows[segments[t]:segments[t + 1]]) - t * n_rows
                    record.add((frozenset(own.tolist()), tuple(sampler.tree.tolist()),
                                sampler))
            super().__init__(data, gpair, scales, rows, params, backend, column_sampler,
                             *args, **kwargs)

    grow = whole_tree.WholeTrees.grow

    def whole(self, gpair, scales, rows, params, sampler, *args):
        record.add((frozenset(np.asarray(rows).tolist()), tuple(sampler.tree.tolist()),
                    sampler))
        return grow(self, gpair, scales, rows, params, sampler, *args)

    monkeypatch.setattr(rounds, "TreeGrower", Spy)
    monkeypatch.setattr(lockstep, "TreeGrower", Spy)
    monkeypatch.setattr(whole_tree.WholeTrees, "grow", whole)
    return record


MULTI = {"objective": "multi:softprob", "num_class": 3, "max_depth": 2, "subsample": 0.5,
         "colsample_bytree": 0.5, "colsample_bylevel": 0.5, "colsample_bynode": 0.5,
         "seed": 11}


def _by_key(record, n_groups, n_parallel):
    """{(round, group, parallel): (rows, columns, sampler)} in the trainer's tree order."""
    keys = ((r, g, p) for r in itertools.count() for g in range(n_groups)
            for p in range(n_parallel))
    return dict(zip(keys, record.trees))


def _overlap_ok(a, b, rate=0.5):
    """Two independent draws of rate 0.5 share about a quarter of the rows."""
    shared = len(a & b) / N_ROWS
    return abs(shared - rate * rate) < 0.05


def test_rows_and_columns_differ_between_groups_and_rounds(data, spy):
    X, y = data
    gbm.train(MULTI, X, y, 3)
    trees = _by_key(spy, 3, 1)
    assert len(spy.trees) == 9
    for (k1, t1), (k2, t2) in itertools.combinations(trees.items(), 2):
        assert t1[0] != t2[0], f"trees {k1} and {k2} share their row sample"
        assert _overlap_ok(t1[0], t2[0]), (k1, k2)  # independent draws, not shifted copies
        assert 0.45 < len(t1[0]) / N_ROWS < 0.55
    column_sets = {t[1] for t in trees.values()}
    assert all(len(c) == N_FEATURES // 2 for c in column_sets)
    assert len(column_sets) >= 7  # 9 draws of 6 of 12 features: nearly all distinct
    # per group across rounds, and per round across groups
    for g in range(3):
        assert len({trees[(r, g, 0)][1] for r in range(3)}) == 3
    for r in range(3):
        assert len({trees[(r, g, 0)][1] for g in range(3)}) == 3


def test_rows_and_columns_differ_between_parallel_trees(data, spy):
    X, y = data
    params = dict(MULTI, objective="reg:squarederror", num_parallel_tree=3)
    del params["num_class"]
    gbm.train(params, X, y, 2)
    trees = _by_key(spy, 1, 3)
    assert len(spy.trees) == 6
    for (k1, t1), (k2, t2) in itertools.combinations(trees.items(), 2):
        assert t1[0] != t2[0], f"trees {k1} and {k2} share their row sample"
        assert _overlap_ok(t1[0], t2[0]), (k1, k2)
    for r in range(2):
        assert len({trees[(r, 0, p)][1] for p in range(3)}) == 3


def test_level_and_node_draws_differ_and_nest(data, spy):
    X, y = data
    gbm.train(MULTI, X, y, 1)
    samplers = [t[2] for t in spy.trees]
    for sampler in samplers:
        tree = set(sampler.tree.tolist())
        masks = sampler.masks(np.arange(6), np.array([0, 1, 1, 2, 2, 2]))
        level_sets = [set(sampler._level(d).tolist()) for d in range(3)]
        assert all(s <= tree and len(s) == 3 for s in level_sets)
        for mask, depth in zip(masks, [0, 1, 1, 2, 2, 2]):
            chosen = set(np.flatnonzero(mask).tolist())
            assert len(chosen) == 1 and chosen <= level_sets[depth]
    # levels of one tree, and nodes of one level, are not all the same draw
    many = samplers[0].masks(np.arange(40), np.full(40, 1))
    assert len({tuple(m) for m in many}) > 1
    levels = {tuple(samplers[0]._level(d).tolist()) for d in range(8)}
    assert len(levels) > 1


def test_same_key_same_draw_and_other_seed_other_draw(data, spy):
    X, y = data
    gbm.train(MULTI, X, y, 2)
    first = [t[:2] for t in spy.trees]
    spy.trees.clear()
    gbm.train(dict(MULTI, n_jobs=1), X, y, 2)
    assert [t[:2] for t in spy.trees] == first
    spy.trees.clear()
    gbm.train(dict(MULTI, seed=12), X, y, 2)
    assert all(a[0] != b[0] for a, b in zip(first, [t[:2] for t in spy.trees]))


def test_first_parallel_tree_keeps_its_key(data, spy):
    """``num_parallel_tree=1`` models are unchanged by the parameter's existence: the
    first parallel tree of each round draws what the single tree draws."""
    X, y = data
    params = {"max_depth": 2, "subsample": 0.5, "colsample_bytree": 0.5, "seed": 3}
    gbm.train(params, X, y, 2)
    single = [t[:2] for t in spy.trees]
    spy.trees.clear()
    gbm.train(dict(params, num_parallel_tree=2), X, y, 2)
    assert [spy.trees[i][:2] for i in (0, 2)] == single
