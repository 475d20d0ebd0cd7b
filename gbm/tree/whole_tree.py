"""Depthwise trees grown in one compiled call each (``kernels/cpu/grow_tree.py``), where
that path applies (``gbm.tree.growers``); ``TreeGrower`` (level by level) everywhere else.

``TreeGrower`` makes a fixed number of kernel calls per level, each with Python and NumPy
around it; on a table of a few thousand rows that costs more than the rows
(bench/PROFILE_small.md). ``grow_tree`` runs the same algorithm in one call and makes
the same tree, bit for bit (``tests/test_whole_tree.py`` compares the model files with
``TreeGrower``'s over random settings). It takes: the CPU backend on one rank (no
histogram to all-reduce), dense bins, depthwise growth to a depth limit, leaves that keep
their values (no leaf refresh).
"""
import threading
from typing import NamedTuple

import numba
import numpy as np

from ..kernels.cpu import tree_records as records

from ..runtime.threads import PARALLEL_MIN_WORK
from .structure import Tree

MAX_NODES = 1 << 16  # more nodes a tree (deep trees on large tables): TreeGrower
# cells a step inside grow_tree needs before it takes a second thread: twice the level
# kernels' PARALLEL_MIN_WORK. The steps come tens of microseconds apart, and a parallel
# region's start and imbalance cost about what the second thread saves on small ones.
# Measured (rows curve, n_jobs 2, the two thresholds alternating in one process, best of
# 3-5): 20,000 rows faster in 3 runs of 4 (0.281 -> 0.235, 0.311 -> 0.273, 0.279 -> 0.247
# s; once 0.242 -> 0.248), 50,000 rows within 3% either way, 5,000 rows 0.165 -> 0.151
# (bench/PROFILE_small.md). The thread count never changes a result (integer sums).
TREE_MIN_WORK = 2 * PARALLEL_MIN_WORK


def capacity(params, n_rows):
    """The most nodes a tree can have: a full tree of ``max_depth``, ``2 max_leaves - 1``
    and ``2 n_rows - 1`` (every leaf holds a row)."""
    cap = 2 ** (min(params["max_depth"], 40) + 1) - 1
    if params["max_leaves"]:
        cap = min(cap, 2 * params["max_leaves"] - 1)
    return max(1, min(cap, 2 * n_rows - 1))


class WholeTrees:
    """Grows a fit's trees with ``grow_tree``; the arrays a tree works in are kept from
    tree to tree, one set per thread (``GroupRunner`` grows groups in threads).
    ``fused_levels``: a level's partition and histograms in one parallel region, a parent
    per task (kernels/cpu/tree_level.py): 1 where estimated faster than the level kernels
    one after the other, 0 never, 2 wherever a level has two threads
    (``gbm.tree.growers.SWITCHES``)."""

    def __init__(self, data, params, n_rows, fused_levels=1):
        from ..kernels.cpu.grow_tree import grow_tree

        self.data, self.kernel, self.params = data, grow_tree, params
        self.fuse = fused_levels
        self.capacity = capacity(params, n_rows)
        self._local = threading.local()
        self._every_feature = None  # _sampling's arrays when every feature is drawn
        self.fused_levels = 0  # levels grown fused (kernels/cpu/tree_level.py), all trees
        # no categorical feature: None, whose kernels leave the categorical code out
        categorical = data.is_categorical if np.any(data.is_categorical) else None
        self.features = records.Features(
            data.feature_offsets, data.n_bins, categorical, data.monotone, data.cuts.values,
            data.cuts.offsets, np.zeros((0, data.n_features), np.uint8)
            if data.interaction is None else data.interaction.astype(np.uint8))
        self._features = tuple(self.features)

    def _workspace(self):
        """The thread's work space (``_Space``), made at its first tree."""
        space = getattr(self._local, "space", None)
        if space is None:
            space = self._local.space = _work_space(self.capacity, self.data)
        return space

    def grow(self, gpair, scales, rows, params, sampler, column, backend):
        """One tree on ``rows`` (int32, the tree's rows; copied; None: every row), its
        leaf values added to ``column`` (float64 (n_rows,), contiguous); returns the
        ``Tree``.

        gpair : int64 (n_rows, 2); scales : float64 (2,); params : the tree's parameters
        (``learning_rate`` already divided among parallel trees); sampler :
        ``ColumnSampler``; backend : the thread's ``Backend`` (its thread count).
        """
        m = gpair.shape[0] if rows is None else len(rows)
        work_rows = backend.buffer("rows", m, np.int32)
        if rows is not None:
            work_rows[...] = rows
        scratch = backend.buffer("rows_scratch", m, np.int32)
        args = self._arguments(gpair, work_rows, scratch, scales, params, sampler, column,
                               rows is None)
        with backend.threads():
            n, n_cat, hist_a, hist_b, n_fused = self.kernel(*args)
        self.fused_levels += n_fused
        space = self._workspace()
        space.hist[:] = hist_a, hist_b  # grown when a level needed more room
        t = space.tree
        return Tree(split_feature=t.split_feature[:n].copy(), split_bin=t.split_bin[:n].copy(),
                    threshold=t.threshold[:n].copy(), default_left=t.default_left[:n].copy(),
                    left_child=t.left_child[:n].copy(), right_child=t.right_child[:n].copy(),
                    value=t.value[:n].copy(), gain=t.gain[:n].copy(), cover=t.cover[:n].copy(),
                    split_type=t.split_type[:n].copy(), cat_bits=t.cat_bits[:n_cat].copy())

    def _arguments(self, gpair, rows, scratch, scales, params, sampler, column, every_row):
        """``grow_tree``'s arguments, in the thread's work space (``every_row``: ``rows``
        to be numbered 0 .. n - 1 by the kernel)."""
        data, space = self.data, self._workspace()
        # the records (kernels/cpu/tree_records.py) as plain tuples of their fields: Numba
        # types a named tuple argument in Python at every call (27 us a tree measured for
        # these), a tuple in C; grow_tree names them again. Settings (int64) and Numbers:
        settings = (int(params["max_depth"]), int(params["max_leaves"]),
                    int(params["max_cat_to_onehot"]), int(params["max_cat_threshold"]),
                    TREE_MIN_WORK, int(sampler.trivial and data.interaction is None),
                    int(every_row), int(self.fuse))
        numbers = (np.array([params["reg_lambda"], params["reg_alpha"], params["max_delta_step"],
                             params["min_child_weight"]]), float(params["learning_rate"]),
                   float(params["gamma"]), float(scales[0]), float(scales[1]),
                   float(sampler.by_node))
        nodes, level, search, parents, tree = space.plain
        return (data.matrix.bins, data.matrix.bins_by_feature, gpair, rows, scratch,
                self._features, self._sampling(sampler, params), settings, numbers, nodes,
                level, search, parents, space.hist[0], space.hist[1], column, tree)

    def kernel_key(self):
        """``(module, name, signature)`` of the kernel this fit calls: the Numba types of
        its arguments (``compile_ahead.compile_later``)."""
        empty_rows = np.empty(0, np.int32)
        args = self._arguments(np.empty((0, 2), np.int64), empty_rows, empty_rows,
                               np.ones(2), self.params, _AllFeatures(), np.empty(0), True)
        return ("gbm.kernels.cpu.grow_tree", "grow_tree", _numba_types(args))

    def _sampling(self, sampler, params):
        """``node_masks.feature_masks``' view of the tree's column draws: a ``Sampling``
        record's fields, as a plain tuple."""
        f, depths = self.data.n_features, params["max_depth"]
        if sampler.trivial:  # every feature at every depth (interaction constraints aside)
            if self._every_feature is None:
                self._every_feature = tuple(records.Sampling(
                    np.tile(np.arange(f, dtype=np.int64), (depths, 1)),
                    np.full(depths, f, np.int64), np.uint64(0)))
            return self._every_feature
        levels = np.zeros((depths, f), np.int64)
        sizes = np.empty(depths, np.int64)
        for d in range(depths):
            features = sampler.level_features(d)
            levels[d, :features.shape[0]] = features
            sizes[d] = features.shape[0]
        return tuple(records.Sampling(levels, sizes, np.uint64(sampler.node_key())))


class _Space(NamedTuple):
    """A thread's work space (``grow_tree``'s records, ``kernels/cpu/tree_records.py``),
    kept from tree to tree; ``hist``: its two histogram buffers."""

    nodes: records.Nodes
    level: records.Level
    search: records.Search
    parents: records.Parents
    tree: records.TreeArrays
    hist: list
    plain: tuple  # the records as tuples (``WholeTrees._arguments``)


def _work_space(c, data):
    """A ``_Space`` for trees of at most ``c`` nodes on ``data``."""
    f, words, e = data.n_features, data.cat_words, np.empty
    w = (c + 1) // 2  # the most nodes of a level: its leaves
    paths = c if data.interaction is not None else 0
    nodes = records.Nodes(
        start=e(c, np.int64), end=e(c, np.int64), depth=e(c, np.int32),
        sums=e((c, 2), np.int64), bounds=e((c, 2)), feature=e(c, np.int32),
        split_bin=e(c, np.int32), default_left=e(c, np.uint8), split_type=e(c, np.uint8),
        gain=e(c), left=e(c, np.int32), cat_bits=e((c, words), np.uint32),
        path=e((paths, f), np.uint8))
    level = records.Level(ids=e(w, np.int64), chosen=e(w, np.int64), next_ids=e(w, np.int64))
    search = records.Search(
        sums=e((w, 2), np.int64), bounds=e((w, 2)), scales=e((w, 2)), mask=e((w, f), np.uint8),
        gain=e(w), feature=e(w, np.int32), split_bin=e(w, np.int32),
        default_left=e(w, np.uint8), left_sums=e((w, 2), np.int64),
        cat_bits=e((w, words), np.uint32))
    parents = records.Parents(
        starts=e(w, np.int64), ends=e(w, np.int64), feature=e(w, np.int32),
        split_bin=e(w, np.int32), default_left=e(w, np.uint8), split_type=e(w, np.uint8),
        cat_bits=e((w, words), np.uint32), n_left=e(w, np.int64), left_values=e(w),
        right_values=e(w))
    tree = records.TreeArrays(
        split_feature=e(c, np.int32), split_bin=e(c, np.int32), threshold=e(c, np.float32),
        default_left=e(c, np.uint8), left_child=e(c, np.int32), right_child=e(c, np.int32),
        value=e(c), gain=e(c), cover=e(c), split_type=e(c, np.uint8),
        cat_bits=e((c, words), np.uint32))
    return _Space(nodes, level, search, parents, tree,
                  hist=[e((0, data.n_slots, 2), np.int64) for _ in range(2)],
                  plain=tuple(tuple(r) for r in (nodes, level, search, parents, tree)))


_TYPES = {}  # _type_key(arguments) -> their Numba types (kernel_key's, per process)


def _numba_types(args):
    """``tuple(numba.typeof(a) for a in args)``, looked up by what those types depend on
    (``_type_key``): ``numba.typeof`` of the kernel's ~60 arrays took 0.43 ms a fit
    (1.5 ms under cProfile), the lookup 0.02 ms."""
    key = _type_key(args)
    types = _TYPES.get(key) if key is not None else None
    if types is None:
        types = tuple(numba.typeof(a) for a in args)
        if key is not None:
            _TYPES[key] = types
    return types


def _type_key(value):
    """What ``numba.typeof(value)`` depends on, hashable: an array's dtype, dimensions,
    contiguity (Numba's layout), whether it is writable and aligned; a tuple's items'
    keys; a NumPy scalar's dtype; a Python float, or int of int64's range; None. Anything
    else: None (not cached)."""
    if type(value) is np.ndarray:  # a subclass (memmap, ...): typeof's own way
        if value.dtype.fields is not None:  # records: equal dtypes Numba types apart
            return None
        flags = value.flags
        return (np.ndarray, value.dtype, value.ndim, flags.c_contiguous, flags.f_contiguous,
                flags.writeable, flags.aligned)
    if type(value) is tuple:  # a named tuple: typeof's own way (its own Numba type)
        keys = tuple(_type_key(item) for item in value)
        return None if None in keys else (tuple, keys)
    if isinstance(value, np.generic):
        return (np.generic, value.dtype)
    if type(value) is float or (type(value) is int and -2**63 <= value < 2**63):
        return (type(value),)  # float64, int64
    if value is None:
        return (None,)
    return None


class _AllFeatures:
    """A column sampler that keeps every feature (``kernel_key``'s stand-in)."""
    trivial, by_node = True, 1.0
