"""Row and column sampling from counter-based random numbers.

Every draw is a hash of (seed, round, output group, parallel tree, and a row, level, node
or feature id), never a generator's state: the same rows and features are chosen
whatever the number of threads or workers, and whatever order they run in.
"""
import numpy as np

from ..kernels.hashing import splitmix64
from ..numerics.elementwise import log

_ROWS, _TREE, _LEVEL, _NODE = 1, 2, 3, 4  # stream ids: each kind of draw its own numbers


def hash_key(*parts):
    """One 64-bit key from small integers, by chaining the hash."""
    key = np.uint64(0x243F6A8885A308D3)
    for part in parts:
        key = splitmix64(np.uint64(key ^ np.uint64(part & 0xFFFFFFFFFFFFFFFF)))
    return key


def _keys(prefix, last):
    """``hash_key(*prefix, x)`` for every ``x`` of the int array ``last``, at once."""
    key = hash_key(*prefix)
    return splitmix64(key ^ np.asarray(last, dtype=np.int64).astype(np.uint64))


def uniform_of(key, ids):
    """Uniform [0, 1) numbers, one per id, from ``key``."""
    h = splitmix64(np.asarray(ids, dtype=np.uint64) ^ key)
    return (h >> np.uint64(11)).astype(np.float64) * (1.0 / 2.0**53)


def _tree_parts(round_, group, parallel):
    """The key parts naming one tree. The first parallel tree of a round (``parallel=0``)
    has the key it had before ``num_parallel_tree`` existed, so models with
    ``num_parallel_tree=1`` are unchanged; the others add their index."""
    return (round_, group) if parallel == 0 else (round_, group, parallel)


def row_sample(seed, round_, group, row_ids, rate, parallel=0):
    """Mask of the rows kept by ``subsample=rate`` in one tree (each row kept with
    probability ``rate``), or None when every row is kept. ``parallel`` is the tree's
    index among the ``num_parallel_tree`` trees of its round and group."""
    if rate >= 1.0:
        return None
    return uniform_of(hash_key(seed, _ROWS, *_tree_parts(round_, group, parallel)), row_ids) < rate


def _choose(key, features, rate, weights=None):
    """The ``max(1, floor(rate * len(features)))`` features first in ``race_order`` of
    their draws (with ``weights``, float64 (n_features,): in proportion to them)."""
    if rate >= 1.0:
        return features
    k = max(1, int(rate * features.size))
    draws = uniform_of(key, features)
    order = race_order(draws, None if weights is None else weights[features])
    return np.sort(features[order[:k]])


def race_order(draws, weights):
    """The candidates' order along the last axis of ``draws`` (uniform [0, 1) numbers):
    by the draws (unweighted, ``weights`` None), or by the times ``-log(1 - u) / w`` of an
    exponential race (Efraimidis & Spirakis 2006), so that the first ``k`` are a draw
    without replacement in proportion to the weights ``w`` (broadcast against the
    draws), as XGBoost's ``feature_weights``. A zero weight comes after every positive
    one (XGBoost floors it at 1e-6), in the order of its draw."""
    if weights is None:
        return np.argsort(draws, axis=-1, kind="stable")
    w = np.broadcast_to(weights, draws.shape)
    positive = w > 0.0
    times = np.full(draws.shape, np.inf)
    times[positive] = -log(1.0 - draws[positive]) / w[positive]  # 1 - u is exact
    return np.lexsort((draws, times), axis=-1)


class ColumnSampler:
    """``colsample_bytree``, ``colsample_bylevel`` and ``colsample_bynode`` for one tree,
    each a subset of the one before, as in XGBoost. ``parallel``: the tree's index among
    the ``num_parallel_tree`` trees of its round and group."""

    def __init__(self, params, n_features, round_, group, parallel=0):
        self.weights = params.get("feature_weights")  # None: every feature alike
        if self.weights is not None and self.weights.shape[0] != n_features:
            raise ValueError(f"feature_weights has {self.weights.shape[0]} weights but the "
                             f"data has {n_features} features; give one per feature")
        self.seed = params["random_state"]
        self.parts = _tree_parts(round_, group, parallel)
        self.by_level, self.by_node = params["colsample_bylevel"], params["colsample_bynode"]
        self.n_features = n_features
        self.by_tree = params["colsample_bytree"]
        self._tree = None  # made when first read: 8 bytes a feature, a million on hashed text
        self._levels = {}
        self.trivial = (params["colsample_bytree"] >= 1.0 and self.by_level >= 1.0
                        and self.by_node >= 1.0)

    @property
    def tree(self):
        """int64: the features ``colsample_bytree`` leaves, increasing."""
        if self._tree is None:
            self._tree = np.arange(self.n_features)
            if self.by_tree < 1.0:  # no key to hash when every feature is kept
                self._tree = _choose(hash_key(self.seed, _TREE, *self.parts), self._tree,
                                     self.by_tree, self.weights)
        return self._tree

    def _level(self, depth):
        if depth not in self._levels:
            key = hash_key(self.seed, _LEVEL, *self.parts, depth)
            self._levels[depth] = _choose(key, self.tree, self.by_level, self.weights)
        return self._levels[depth]

    def level_features(self, depth):
        """int64: the features ``colsample_bytree`` and ``colsample_bylevel`` leave at
        ``depth``, increasing (``colsample_bynode`` draws among them)."""
        return np.asarray(self._level(depth), dtype=np.int64)

    def node_key(self):
        """uint64: the key of this tree's ``colsample_bynode`` draws (a node's key is
        ``splitmix64(node_key ^ node id)``, its draw of feature ``f``
        ``splitmix64(f ^ node's key)``, as ``masks`` computes them)."""
        return hash_key(self.seed, _NODE, *self.parts)

    def mask(self, node_id, depth):
        """uint8 (n_features,): 1 for the features node ``node_id`` may split on."""
        return self.masks(np.array([node_id]), np.array([depth]))[0]

    def masks(self, node_ids, depths):
        """uint8 (len(node_ids), n_features): ``mask`` of every node at once."""
        node_ids, depths = np.asarray(node_ids), np.asarray(depths)
        out = np.zeros((node_ids.shape[0], self.n_features), dtype=np.uint8)
        if self.trivial:
            out[:] = 1
            return out
        for depth in np.unique(depths):
            at = np.flatnonzero(depths == depth)
            level = self._level(int(depth))
            if self.by_node >= 1.0:
                out[at[:, None], level[None, :]] = 1
                continue
            # each node's draws: one uniform per level feature, from its own key
            keys = _keys((self.seed, _NODE, *self.parts), node_ids[at])
            draws = uniform_of(keys[:, None], level[None, :])
            k = max(1, int(self.by_node * level.size))
            weights = None if self.weights is None else self.weights[level][None, :]
            chosen = level[race_order(draws, weights)[:, :k]]
            out[at[:, None], chosen] = 1
        return out
