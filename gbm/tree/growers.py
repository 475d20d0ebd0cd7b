"""Which grower grows a fit's trees: ``choose_grower``, the one place that decides.

Every grower makes the same trees, bit for bit, with the same steps (the smaller
children's histograms built and their siblings' subtracted, every node's best split, the
rows partitioned: the level kernels of ``kernels/``); they differ in how many trees one
kernel call serves and in how much Python runs between the calls. The first row that
applies grows the fit's trees:

=======================  ======================================================================
grower                   runs when, and grows
=======================  ======================================================================
VectorLeafGrower         ``multi_strategy="multi_output_tree"``: one tree for all outputs a
                         round, level by level, a leaf a value an output (``vector_leaf.py``)
VectorLossguideGrower    the same with ``grow_policy="lossguide"``: leaf by leaf
                         (``vector_lossguide.py``)
WholeTrees               CPU, one rank, depthwise with a depth limit, dense bins, no leaf
                         refresh, no ``feature_weights`` with ``colsample_bynode < 1`` (its
                         node draws are unweighted), at most ``MAX_NODES`` nodes a tree, and
                         its kernel compiled
                         (until then, while a background process compiles it: the rows
                         below): each output group's tree in one compiled call, its leaf
                         values added to the margins there (``whole_tree.py`` over
                         ``kernels/cpu/grow_tree.py``)
Lockstep                 CPU, one rank, 2+ output groups, depthwise, one tree a group a round,
                         no leaf refresh, bins in memory whose stacked copies take at most
                         ``MAX_STACKED_BYTES``: a level of every group's tree per kernel call
                         (``lockstep.py``, over ``TreeGrower``)
TreeGrower               anything else (CUDA, several ranks, sparse, bundled or paged bins,
                         lossguide, leaf refresh by the absolute and quantile losses, deep
                         trees on large tables): each group's trees level by level or leaf by
                         leaf, a group a thread where that pays (``grower.py``,
                         ``group_threads.py``)
=======================  ======================================================================

``SWITCHES`` holds what tests and benchmarks may force (a grower left out, the whole-tree
kernel's fused levels); fits run its defaults.
"""
from dataclasses import dataclass

from ..runtime.compile_ahead import compile_later
from .lockstep import MAX_STACKED_BYTES, Lockstep
from .vector_leaf import VectorLeafGrower
from .vector_lossguide import VectorLossguideGrower
from .whole_tree import MAX_NODES, WholeTrees, capacity


@dataclass
class Switches:
    """What a test or a benchmark may force; a fit runs the defaults."""

    whole_trees: bool = True  # False: never WholeTrees (tests compare it with TreeGrower)
    lockstep: bool = True  # False: never Lockstep (tests compare it with trees grown alone)
    # WholeTrees' levels whose partition and histograms run a parent per task
    # (kernels/cpu/tree_level.py): 1 where estimated faster, 0 never, 2 wherever a level
    # has two threads (tests compare the three)
    fused_levels: int = 1


SWITCHES = Switches()


@dataclass(frozen=True)
class Grower:
    """The growers of a fit, as ``choose_grower`` picked them: ``vector`` (the vector-leaf
    grower's class), else ``whole_trees`` (a ``WholeTrees``) or ``lockstep`` (a
    ``Lockstep``), else none of them: ``TreeGrower``."""

    name: str  # "vector", "whole_trees", "lockstep" or "levels": a row of the table
    vector: type = None
    whole_trees: WholeTrees = None
    lockstep: Lockstep = None


def choose_grower(params, backend, data, objective, n_rows):
    """The ``Grower`` of a fit (see the module's table).

    params : validated parameters; backend : ``gbm.runtime.backend.Backend``; data :
    ``TreeData`` (the binned rows); objective : the fit's ``Objective`` (its output groups,
    whether it refreshes leaves); n_rows : the rank's rows.
    """
    if params["multi_strategy"] == "multi_output_tree":
        lossguide = params["grow_policy"] == "lossguide"
        return Grower("vector", vector=VectorLossguideGrower if lossguide else VectorLeafGrower)
    leaf_refresh = objective.leaf_alphas is not None
    if SWITCHES.whole_trees and use_whole_trees(params, backend, data, leaf_refresh):
        trees = WholeTrees(data, params, n_rows, SWITCHES.fused_levels)
        if compile_later(*trees.kernel_key()):  # else compiled in the background meanwhile
            return Grower("whole_trees", whole_trees=trees)
    if SWITCHES.lockstep and use_lockstep(params, backend, objective.n_groups, data,
                                          leaf_refresh):
        return Grower("lockstep", lockstep=Lockstep(data, objective.n_groups, backend))
    return Grower("levels")


def use_whole_trees(params, backend, data, leaf_refresh):
    """Whether this fit's trees can grow in one call each (``WholeTrees``' row of the
    table, its kernel aside)."""
    if leaf_refresh or backend.name != "cpu" or backend.collective.world_size > 1:
        return False
    if params["grow_policy"] != "depthwise" or params["max_depth"] == 0:
        return False
    if params.get("feature_weights") is not None and params["colsample_bynode"] < 1.0:
        return False  # the kernel's node draws are unweighted (gbm.tree.sampling's are not)
    if data.matrix.layout != "dense":
        return False  # another layout of the bins (sparse, bundled): the level kernels read it
    return capacity(params, data.matrix.n_rows) <= MAX_NODES


def use_lockstep(params, backend, n_groups, data, leaf_refresh):
    """Whether a round's ``n_groups`` trees grow in lockstep (``Lockstep``'s row)."""
    if n_groups < 2 or leaf_refresh or backend.name != "cpu":
        return False
    if backend.collective.world_size > 1:  # ranks would have to agree on the size test
        return False
    if params["grow_policy"] != "depthwise" or params["num_parallel_tree"] != 1:
        return False
    if data.matrix.layout == "paged":  # pages on disk are not stacked
        return False
    stacked = n_groups * data.matrix.nbytes
    return stacked <= MAX_STACKED_BYTES and n_groups * data.matrix.n_rows < 2**31  # int32 rows
