"""DART (Rashmi & Gilad-Bachrach 2015, "DART: Dropouts meet Multiple Additive Regression
Trees"), as XGBoost's ``booster="dart"`` does it: which trees a round drops, and the tree
weights after the round.

A round of DART: some earlier trees are dropped; the gradients are taken at the margins
without them; the round's new trees are grown; then the dropped trees and the new ones
are weighted so that together they add about what the dropped ones added before
(``normalized_weights``). Every tree keeps its weight (``Booster.weight_drop``), and a
prediction adds each tree's leaf value times its weight.

The drops are counter-based hashes of (seed, round, tree index) (``gbm.tree.sampling``),
never a generator's state, so every thread count, rank and device draws the same drops,
and a continued fit draws what the whole fit would have drawn. Each draw is a uniform in
[0, 1) from its own stream: one per tree, one for the skip, one for ``one_drop``'s pick.
XGBoost draws from one generator (``std::mt19937``), so its drops differ; the rules are
the same (``src/gbm/gbtree.cc``, ``Dart::DropTrees`` and ``NormalizeTrees``).
"""
import itertools
import math

import numpy as np

from .sampling import hash_key, uniform_of

_DROP, _SKIP, _ONE = 5, 6, 7  # stream ids, after gbm.tree.sampling's


def drop_trees(weights, params, round_):
    """The trees round ``round_`` drops: sorted int64 indices into ``weights``.

    Parameters
    ----------
    weights : sequence of float (n_trees,)
        Every earlier tree's weight (``Booster.weight_drop``).
    params : dict, validated: ``random_state``, ``rate_drop``, ``one_drop``, ``skip_drop``,
        ``sample_type``.
    round_ : int, the round being trained (counted over a continued fit's rounds too).

    Returns
    -------
    int64 (n_dropped,). XGBoost's rules: with chance ``skip_drop`` none; else each tree
    with chance ``rate_drop`` ("uniform") or ``rate_drop * n_trees * weight / sum of
    weights`` ("weighted", capped at 1 by the comparison); and with ``one_drop``, when that
    drew none, one tree: uniformly, or in proportion to its weight ("weighted" draws
    as "uniform" when every weight is 0).
    """
    n = len(weights)
    seed = params["random_state"]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if params["skip_drop"] > 0.0 and _draw(seed, _SKIP, round_) < params["skip_drop"]:
        return np.zeros(0, dtype=np.int64)
    w = np.asarray(weights, dtype=np.float64)
    total = math.fsum(weights)  # exact: the same on every machine
    weighted = params["sample_type"] == "weighted" and total > 0.0
    draws = uniform_of(hash_key(seed, _DROP, round_), np.arange(n))
    chance = params["rate_drop"] * n * w / total if weighted else params["rate_drop"]
    dropped = np.flatnonzero(draws < chance).astype(np.int64)
    if dropped.size or not params["one_drop"]:
        return dropped
    u = _draw(seed, _ONE, round_)
    if weighted:  # the first tree whose cumulative weight passes u * total
        cumulative = list(itertools.accumulate(weights))
        pick = next((i for i, c in enumerate(cumulative) if u * total < c), n - 1)
    else:
        pick = min(int(u * n), n - 1)
    return np.array([pick], dtype=np.int64)


def _draw(seed, stream, round_):
    """One uniform [0, 1) number for (seed, stream, round)."""
    return float(uniform_of(hash_key(seed, stream, round_), np.zeros(1, dtype=np.int64))[0])


def normalized_weights(weights, dropped, n_new, learning_rate, normalize_type):
    """Every tree's weight after a round that dropped ``dropped`` and grew ``n_new`` trees.

    Parameters
    ----------
    weights : sequence of float (n_trees,), the earlier trees' weights before the round
    dropped : int array, the round's dropped trees (``drop_trees``)
    n_new : int, the trees the round grew (``num_parallel_tree`` per output group)
    learning_rate : float (``eta``; the new trees' leaves already carry it)
    normalize_type : "tree" or "forest"

    Returns
    -------
    list of float (n_trees + n_new,). With ``k`` trees dropped (XGBoost's
    ``NormalizeTrees``, doc/tutorials/dart.rst): none dropped, the new trees weigh 1;
    "tree": the dropped trees are scaled by ``k / (k + eta)`` and the new ones weigh
    ``1 / (k + eta)``; "forest": the dropped trees are scaled by ``1 / (1 + eta)`` and the
    new ones weigh that. (XGBoost 3.4 uses ``eta``; before, ``eta`` divided by the round's
    tree count, which differs for rounds of several trees: multiclass, several targets,
    ``num_parallel_tree``.)
    """
    out = [float(v) for v in weights]
    k = len(dropped)
    if k == 0:
        return out + [1.0] * n_new
    if normalize_type == "forest":
        factor = 1.0 / (1.0 + learning_rate)
        new = factor
    else:
        factor = k / (k + learning_rate)
        new = 1.0 / (k + learning_rate)
    for i in np.asarray(dropped).tolist():
        out[i] *= factor
    return out + [new] * n_new
