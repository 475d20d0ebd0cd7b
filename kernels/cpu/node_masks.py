"""Which features each node of a level may split on, inside ``grow_tree``
(kernels/cpu/grow_tree.py): the column sampling of ``gbm.tree.sampling.ColumnSampler``
and the interaction constraints of ``gbm.tree.constraints``, computed node by node in
compiled code from the same counter-based draws, so the masks are the same."""
import numpy as np

from ..hashing import mix
from ..jit import helper
from .sorting import merge_sort

_UNIT = 1.0 / 2.0**53  # a uniform draw's step (gbm.tree.sampling._uniform)


@helper
def feature_masks(ids, n_ids, depth, level_features, level_sizes, node_key, by_node,
                  interaction, paths, masks):
    """``masks[i]``: 1 for the features node ``ids[i]`` may split on (``gbm.tree.sampling
    .ColumnSampler.masks`` and ``gbm.tree.constraints.allowed_features``, node by node).

    level_features : int64 (n_levels, n_features); level_sizes : int64 (n_levels,)
        the features ``colsample_bytree`` and ``colsample_bylevel`` leave at each depth,
        increasing (the first ``level_sizes[d]`` entries of row ``d``)
    node_key : uint64, the tree's ``colsample_bynode`` key; by_node : float64, its rate
    interaction : uint8 (n_sets, n_features), the constraint sets (no rows: none)
    paths : uint8 (n_nodes, n_features), each node's features split on above it
    masks : uint8 (>= n_ids, n_features)   # OUT
    """
    n_features = masks.shape[1]
    size = level_sizes[depth]
    draws = np.empty(size)
    order = np.empty(size, dtype=np.int64)
    k = max(1, np.int64(by_node * size))
    for i in range(n_ids):
        node = ids[i]
        for f in range(n_features):
            masks[i, f] = 0
        if by_node >= 1.0:
            for j in range(size):
                masks[i, level_features[depth, j]] = 1
        else:  # the node's draws, one per level feature; the k smallest win (stable)
            key = mix(node_key ^ np.uint64(node))  # node ids are tree-local
            for j in range(size):
                h = mix(np.uint64(level_features[depth, j]) ^ key)
                draws[j] = np.float64(h >> np.uint64(11)) * _UNIT
            merge_sort(draws, size, order)
            for j in range(k):
                masks[i, level_features[depth, order[j]]] = 1
        if interaction.shape[0]:
            _allow_interactions(interaction, paths[node], masks[i])


@helper
def _allow_interactions(interaction, path, mask):
    """``mask &=`` the features a node with ``path`` may use: those of every set holding
    the whole path, and the path's own; any at the root (empty path)."""
    n_features = mask.shape[0]
    if not path.any():
        return
    allowed = np.zeros(n_features, dtype=np.uint8)
    for s in range(interaction.shape[0]):
        holds = True
        for f in range(n_features):
            if path[f] and not interaction[s, f]:
                holds = False
                break
        if holds:
            for f in range(n_features):
                allowed[f] |= interaction[s, f]
    for f in range(n_features):
        if not (allowed[f] or path[f]):
            mask[f] = 0
