"""A round's output groups (the classes of a multiclass model, the targets of a
multi-target one) grown as one batch of trees, a level of every tree per kernel call.

On a small table a tree level is little work: a kernel call and the Python around it
cost about as much as the rows. Growing the groups' trees in lockstep makes every
level's calls G times larger and G times fewer, and gives the kernels' threads enough
work to share.

How: the binned rows are stacked once per fit, one copy per group (row ``g * n + i`` is
row ``i`` of group ``g``: the bin matrix's ``tile``), so that one row number addresses a
group's bins, its gradient pair and its margin (``by_group`` is group-major: ``by_group.reshape(-1)[g * n + i]``).
The kernels need no change; the grower keeps each node's tree, its tree-local id and its
tree's fixed-point scales. Each tree is the one the grower makes for that group alone
(``tests/test_lockstep.py`` compares the model files).

Used on the CPU backend on one rank, for depthwise trees without leaf refresh and
without parallel trees, when the stacked copy is small (``MAX_STACKED_BYTES``): it is
where per-call costs dominate; larger tables keep one tree per call
(``gbm.tree.growers.use_lockstep``).
"""
import dataclasses

import numpy as np

from .grower import TreeGrower
from .margins import add_tree
from .quantize import GPAIR_DTYPE, quantize
from .sampling import ColumnSampler, row_sample

MAX_STACKED_BYTES = 64 << 20  # the stacked bin matrix (a dense one's row- and feature-major copies)


class Lockstep:
    """The stacked data of a fit and the buffers its rounds reuse."""

    def __init__(self, data, n_groups, backend):
        xp = backend.xp
        self.n_groups, self.n_rows = n_groups, data.matrix.n_rows
        self.data = data
        self.stacked = dataclasses.replace(data, matrix=data.matrix.tile(n_groups, xp))
        self.gpair = xp.empty((n_groups * self.n_rows, 2), dtype=GPAIR_DTYPE)
        self.every_row = xp.arange(n_groups * self.n_rows, dtype=np.int32)  # never written
        self.backend = backend

    def grow_round(self, grad, hess, by_group, round_, row_ids, n_rows_total, params,
                   buffers):
        """The round's trees, one per group (in group order), their leaf values added to
        ``by_group`` (float64 (n_groups, n_rows), contiguous)."""
        backend, n = self.backend, self.n_rows
        scales = np.empty((self.n_groups, 2))
        samplers, kept, segments, rows = [], [], [0], []
        for g in range(self.n_groups):
            _, scales[g] = quantize(grad[g], hess[g], backend, n_rows_total,
                                    out=self.gpair[g * n:(g + 1) * n])
            keep = (None if params["subsample"] >= 1.0 else  # row_ids None: positions
                    row_sample(params["random_state"], round_, g,
                               np.arange(n) if row_ids is None else row_ids,
                               params["subsample"]))
            kept.append(keep)
            rows.append(self.every_row[g * n:(g + 1) * n] if keep is None
                        else (g * n + np.flatnonzero(keep)).astype(np.int32))
            segments.append(segments[-1] + rows[-1].shape[0])
            samplers.append(ColumnSampler(params, self.data.n_features, round_, g))
        if not by_group.flags.c_contiguous:  # the margins must be updated in place
            raise ValueError("by_group must be C-contiguous")
        column = by_group.reshape(-1)
        rows = self.every_row if all(k is None for k in kept) else np.concatenate(rows)
        grower = TreeGrower(self.stacked, self.gpair, scales, rows, params,
                            backend, samplers, buffers, column=column, segments=segments)
        trees, rows, starts, ends, values = grower.grow()
        with backend.threads(rows.shape[0]):
            backend.kernels.add_leaf_values(rows, starts, ends, values, column)
            for g, keep in enumerate(kept):
                if keep is not None:  # rows left out of the sample: walk them through
                    add_tree(backend, self.data, trees[g], np.flatnonzero(~keep),
                              by_group[g])
        return trees
