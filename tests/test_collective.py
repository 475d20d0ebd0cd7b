"""Training split over ranks gives the local model, byte for byte.

Each reference case of ``model_cases`` (every objective family, categorical data, row and
column sampling, constraints, forests, early stopping, continued training) is trained
once locally and once as 2 and 3 ranks in threads of this process (``ThreadGroup``), each
rank holding an uneven slice of the rows (one rank holding none). Every exchange goes
through the collective, so the model files must be identical.
"""
import math

import numpy as np
import pytest

from gbm.collective import LOCAL, CollectiveError, ThreadGroup
from gbm.numerics.exact import exact_mean, exact_sum, exact_sums
from tests.support.model_cases import CASES

pd = pytest.importorskip("pandas")


# -- the collective and exact sums ----------------------------------------------------------
def test_thread_group_exchanges():
    def rank_fn(c):
        total = c.allreduce(np.array([c.rank + 1, 10], np.int64), "sum")
        top = c.allreduce(np.array([float(c.rank), -1.0]), "max")
        names = c.allgather(f"rank{c.rank}")
        root = c.broadcast(c.rank * 7, root=2)
        return total.tolist(), top.tolist(), names, root

    results = ThreadGroup(3).run(rank_fn)
    assert all(r == ([6, 30], [2.0, -1.0], ["rank0", "rank1", "rank2"], 14) for r in results)


def test_float_sums_are_refused():
    with pytest.raises(TypeError, match="integer arrays"):
        LOCAL.allreduce(np.ones(3), "sum")
    with pytest.raises(ValueError, match="op must be one of"):
        LOCAL.allreduce(np.ones(3, np.int64), "mean")


def test_a_failing_rank_releases_the_others():
    def rank_fn(c):
        if c.rank == 1:
            raise RuntimeError("rank 1 broke")
        c.allgather(c.rank)  # would wait forever without the abort
        return c.rank

    with pytest.raises(RuntimeError, match="rank 1 broke"):
        ThreadGroup(3, timeout=30).run(rank_fn)


def test_a_missing_rank_times_out():
    def rank_fn(c):
        if c.rank == 0:
            c.allgather(0)

    with pytest.raises(CollectiveError):
        ThreadGroup(2, timeout=0.5).run(rank_fn)


@pytest.mark.parametrize("seed", range(5))
def test_exact_sum_is_the_correctly_rounded_sum(seed):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=5000) * 10.0 ** rng.integers(-300, 300, 5000)
    values[:10] = [1e308, -1e308, 5e-324, -5e-324, 0.0, 1.0, 1e-16, -1.0, 3.0, -0.0]
    assert exact_sum(values) == math.fsum(values)
    shuffled = rng.permutation(values)
    assert exact_sum(shuffled) == exact_sum(values)
    # split over 3 ranks, unevenly
    parts = np.split(shuffled, [7, 4000])
    results = ThreadGroup(3).run(lambda c: exact_sum(parts[c.rank], c))
    assert results == [math.fsum(values)] * 3


def test_exact_sums_and_means():
    rng = np.random.default_rng(1)
    v, w = rng.normal(size=1000), rng.uniform(size=1000)
    a, b = exact_sums(np.stack([v, w]))
    assert (a, b) == (math.fsum(v), math.fsum(w))
    assert exact_mean(v, w) == math.fsum(w * v) / math.fsum(w)
    assert exact_mean(v) == math.fsum(v) / 1000
    with pytest.raises(ValueError, match="finite"):
        exact_sum(np.array([1.0, np.inf]))


# -- training over ranks ---------------------------------------------------------------------
def _cuts(n_rows, world, group=None):
    """Uneven row boundaries of ``world`` ranks; with 3 ranks the middle one is empty.
    With query groups, the boundaries fall between groups (a group is never split)."""
    shares = {1: [0.0, 1.0], 2: [0.0, 0.3, 1.0], 3: [0.0, 0.55, 0.55, 1.0]}[world]
    cuts = [int(round(s * n_rows)) for s in shares]
    if group is not None:
        ptr = np.concatenate(([0], np.cumsum(group)))
        cuts = [int(ptr[np.abs(ptr - c).argmin()]) for c in cuts]
    return cuts


def _rows(value, lo, hi):
    if value is None:
        return None
    return value.iloc[lo:hi] if hasattr(value, "iloc") else np.asarray(value)[lo:hi]


def _shard_eval(entry, rank, world):
    X, y, name = entry
    c = _cuts(len(y), world)
    return _rows(X, c[rank], c[rank + 1]), _rows(y, c[rank], c[rank + 1]), name


def _train_on_ranks(spec, world):
    kwargs = dict(spec.kwargs)
    group = kwargs.pop("group", None)
    n = len(spec.y)
    cuts = _cuts(n, world, group)

    def rank_fn(c):
        lo, hi = cuts[c.rank], cuts[c.rank + 1]
        kw = dict(kwargs)
        if "sample_weight" in kw:
            kw["sample_weight"] = _rows(kw["sample_weight"], lo, hi)
        if group is not None:
            ptr = np.concatenate(([0], np.cumsum(group)))
            kw["group"] = [int(s) for s, start in zip(group, ptr[:-1]) if lo <= start < hi]
        if "evals" in kw:
            kw["evals"] = [_shard_eval(e, c.rank, world) for e in kw["evals"]]
        return spec.__class__(spec.params, _rows(spec.X, lo, hi), _rows(spec.y, lo, hi),
                              spec.rounds, kw).train(collective=c,
                                                     row_ids=np.arange(lo, hi))

    return ThreadGroup(world).run(rank_fn)


@pytest.mark.parametrize("world", [1, 2, 3])
@pytest.mark.parametrize("name", sorted(CASES))
def test_training_over_ranks_gives_the_local_model(name, world):
    spec = CASES[name]()
    local = spec.train().to_json()
    boosters = _train_on_ranks(spec, world)
    for rank, booster in enumerate(boosters):
        assert booster.to_json() == local, f"rank {rank} of {world}"
