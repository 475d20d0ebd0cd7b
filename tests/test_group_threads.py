"""A round's output groups grown concurrently (gbm/tree/group_threads.py): the same model file
as growing them one after the other, for every kind of multi-group model; used only where
it may be (CPU, one rank, several threads, several groups); errors inside a group's tree
reach the caller. (Where the groups grow in lockstep instead, tests/test_lockstep.py.)"""
import numpy as np
import pytest

import gbm
from gbm.tree import group_threads, growers
from gbm.runtime.backend import get_backend
from gbm.collective import ThreadCollective, ThreadGroup


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    X[::7, 1] = np.nan
    return X, rng


CASES = {
    "softprob": lambda X, rng: ({"objective": "multi:softprob", "num_class": 4},
                                np.digitize(X[:, 0] + rng.normal(size=len(X)), [-1, 0, 1])),
    "sampled": lambda X, rng: ({"objective": "multi:softprob", "num_class": 3,
                                "subsample": 0.7, "colsample_bynode": 0.6},
                               np.digitize(X[:, 2], [-0.5, 0.5])),
    "forest": lambda X, rng: ({"objective": "multi:softmax", "num_class": 3,
                               "num_parallel_tree": 3, "subsample": 0.8},
                              np.digitize(X[:, 3], [-0.5, 0.5])),
    "quantiles": lambda X, rng: ({"objective": "reg:quantileerror",
                                  "quantile_alpha": [0.1, 0.5, 0.9]},
                                 X[:, 0] + rng.standard_t(3, size=len(X))),
    "multi_target": lambda X, rng: ({}, np.column_stack([X[:, 0], X[:, 2] ** 2, -X[:, 4]])),
    "lossguide": lambda X, rng: ({"objective": "multi:softprob", "num_class": 3,
                                  "grow_policy": "lossguide", "max_leaves": 9},
                                 np.digitize(X[:, 1], [-0.5, 0.5])),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_concurrent_groups_give_the_serial_model(case, monkeypatch):
    X, rng = _data()
    params, y = CASES[case](X, rng)
    params = dict(params, max_depth=4, n_jobs=2)
    monkeypatch.setattr(growers.SWITCHES, "lockstep", False)  # see test_lockstep
    used = []
    real = group_threads.concurrent_groups
    monkeypatch.setattr(group_threads, "concurrent_groups",
                        lambda b, n: used.append(real(b, n)) or used[-1])
    concurrent = gbm.train(params, X, y.astype(float), 6).to_json()
    assert used == [2], "the groups were not grown concurrently"
    monkeypatch.setattr(group_threads, "concurrent_groups", lambda b, n: 1)
    serial = gbm.train(params, X, y.astype(float), 6).to_json()
    assert concurrent == serial
    one_thread = gbm.train(dict(params, n_jobs=1), X, y.astype(float), 6).to_json()
    assert concurrent == one_thread


def test_used_only_where_it_may_be():
    cpu2 = get_backend("cpu", 2)
    assert group_threads.concurrent_groups(cpu2, 5) == 2
    assert group_threads.concurrent_groups(cpu2, 1) == 1  # one group: the kernels' threads
    assert group_threads.concurrent_groups(get_backend("cpu", 1), 5) == 1
    ranks = ThreadGroup(2)
    rank = ThreadCollective(ranks, 0)
    assert group_threads.concurrent_groups(get_backend("cpu", 2, rank), 5) == 1


def test_an_error_in_one_group_reaches_the_caller():
    backend = get_backend("cpu", 2)

    def grow(group, group_backend, buffers):
        assert group_backend.n_threads == 1 and buffers == "buffers"
        if group == 2:
            raise ValueError("group 2 failed")
        return [group]

    with group_threads.GroupRunner(backend, 4, lambda: "buffers") as runner:
        assert runner.n_workers == 2
        assert runner.map(lambda g, b, h: [g * 10], range(4)) == [[0], [10], [20], [30]]
        with pytest.raises(ValueError, match="group 2 failed"):
            runner.map(grow, range(4))
