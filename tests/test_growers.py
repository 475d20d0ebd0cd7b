"""Which grower grows a fit's trees (gbm/tree/growers.py): the first row of its table that
applies, row by row, and the switches tests force a grower with."""
import numpy as np
import pytest

import gbm.params
from gbm.bins.binning import BinMapper, RaggedCuts
from gbm.bins.dense import DenseBins
from gbm.collective import ThreadCollective, ThreadGroup
from gbm.objectives import get_objective
from gbm.runtime.backend import get_backend
from gbm.tree import growers
from gbm.tree.tree_data import TreeData
from gbm.tree.vector_leaf import VectorLeafGrower
from gbm.tree.vector_lossguide import VectorLossguideGrower


def _tree_data(n_rows=100, n_features=4, layout="dense"):
    n_bins = np.full(n_features, 4, np.int32)
    cuts = RaggedCuts(np.zeros(3 * n_features, np.float32), np.arange(0, 3 * n_features + 1, 3))
    if layout == "dense":
        bins = np.zeros((n_rows, n_features), np.uint8)
        matrix = DenseBins(bins, bins.T.copy(), n_bins)
    else:
        matrix = BinMapper.from_cuts(list(np.zeros((n_features, 3), np.float32))).bin_matrix(
            np.where(np.eye(n_rows, n_features) == 1, 0.5, np.nan).astype(np.float32),
            "sparse")
    return TreeData(matrix, n_bins, cuts, np.zeros(n_features, np.uint8),
                    np.zeros(n_features, np.int8))


@pytest.fixture
def compiled(monkeypatch):
    """Whether the whole-tree kernel counts as compiled (no compile here)."""
    state = {"ready": True}
    monkeypatch.setattr(growers, "compile_later", lambda *key: state["ready"])
    return state


def _choose(params, data=None, backend=None):
    p = gbm.params.validate_params(params)
    backend = backend or get_backend("cpu", 2)
    data = data if data is not None else _tree_data()
    return growers.choose_grower(p, backend, data, get_objective(p), data.matrix.n_rows)


MULTI = {"objective": "multi:softprob", "num_class": 3}


def test_vector_leaf_trees_first(compiled):
    depthwise = _choose({"multi_strategy": "multi_output_tree", **MULTI})
    assert (depthwise.name, depthwise.vector) == ("vector", VectorLeafGrower)
    lossguide = _choose({"multi_strategy": "multi_output_tree", "grow_policy": "lossguide",
                         **MULTI})
    assert (lossguide.name, lossguide.vector) == ("vector", VectorLossguideGrower)
    assert lossguide.whole_trees is None and lossguide.lockstep is None


def test_whole_trees_then_lockstep_then_levels(compiled):
    one = _choose({})
    assert one.name == "whole_trees" and one.whole_trees is not None
    assert one.whole_trees.fuse == growers.SWITCHES.fused_levels
    assert _choose(MULTI).name == "whole_trees"  # each group's tree in one call
    compiled["ready"] = False  # compiling in the background meanwhile
    assert _choose({}).name == "levels"
    multi = _choose(MULTI)
    assert multi.name == "lockstep" and multi.lockstep.n_groups == 3


def test_the_switches_leave_a_grower_out(compiled, monkeypatch):
    monkeypatch.setattr(growers.SWITCHES, "whole_trees", False)
    assert _choose({}).name == "levels"
    assert _choose(MULTI).name == "lockstep"
    monkeypatch.setattr(growers.SWITCHES, "lockstep", False)
    assert _choose(MULTI).name == "levels"


@pytest.mark.parametrize("change", [
    {"grow_policy": "lossguide", "max_leaves": 8},  # leaf by leaf
    {"objective": "reg:quantileerror", "quantile_alpha": [0.2, 0.8]},  # leaves refreshed
    {"objective": "reg:absoluteerror"},
])
def test_tree_grower_where_no_other_applies(compiled, change):
    params = dict(MULTI, **change)
    if "quantile_alpha" in change or change.get("objective") == "reg:absoluteerror":
        params.pop("num_class")
    assert _choose(params).name == "levels"


def test_sparse_bins_and_ranks(compiled):
    sparse = _tree_data(layout="sparse")
    assert _choose({}, sparse).name == "levels"
    assert _choose(MULTI, sparse).name == "lockstep"  # stacked as they are
    rank = get_backend("cpu", 2, ThreadCollective(ThreadGroup(2), 0))
    assert _choose({}, backend=rank).name == "levels"
    assert _choose(MULTI, backend=rank).name == "levels"
