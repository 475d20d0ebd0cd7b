"""One boosting round: the gradients at the current margins, then each output group's
trees (``num_parallel_tree`` of them), their leaf values added to the margins.

A round's groups grow in lockstep on small tables (``gbm.tree.lockstep``: a level of
every group's tree per kernel call), else concurrently where that pays
(``gbm.tree.group_threads``), each thread with its own histograms. A DART fit
(``fit.dropout``, ``gbm.training.dropout``) drops trees from the margins before the
gradients and weighs the trees after the round.
"""
import numpy as np

from ..objectives.adaptive import refresh_leaves
from ..tree.grower import TreeGrower
from ..tree.margins import add_tree
from ..tree.quantize import GPAIR_DTYPE, quantize
from ..tree.sampling import ColumnSampler, row_sample


def grow_round(fit, booster, round_):
    """Train round ``round_`` of ``fit`` (a ``gbm.training.prepare.Fit``): its trees are
    added to ``booster`` in group order, ``fit.margins`` updated in place."""
    backend, objective, xp = fit.backend, fit.objective, fit.backend.xp
    if fit.dropout is not None:
        fit.dropout.begin_round(fit, booster, round_)
    slots = _gradients_in_pairs(fit)
    grad, hess = objective.gradients(fit.margins.T, fit.y_fit, fit.w_fit, backend=backend,
                                     queries=fit.queries, round_=round_)
    # group-major: no copy when the objective wrote them so (gbm.objectives.gradients),
    # nor when it wrote them into the pairs' slots (quantize converts them in place)
    local_max = None
    if slots is None or not (np.may_share_memory(grad, slots) and np.may_share_memory(hess, slots)):
        grad, hess = xp.ascontiguousarray(grad.T), xp.ascontiguousarray(hess.T)
    else:
        grad, hess = grad.T, hess.T
        local_max = _recorded_maxima(backend)
    if fit.lockstep is not None:
        by_group = [[tree] for tree in fit.lockstep.grow_round(
            grad, hess, fit.margins, round_, fit.row_ids, fit.n_rows_total, fit.params,
            fit.runner.buffers())]
    else:
        def grow(group, group_backend, buffers):
            residual = None  # absolute / quantile loss: leaves become residual quantiles
            if objective.leaf_alphas is not None:
                y = fit.y if fit.y.ndim == 1 else fit.y[:, group]
                residual = (y - backend.to_host(fit.margins[group]), objective.leaf_alphas[group])
            return _grow_group(fit.data, grad[group], hess[group], fit.margins[group], group,
                               round_, residual, fit.row_ids, fit.n_rows_total,
                               fit.refresh_weights, fit.params, group_backend, buffers,
                               fit.whole_trees, local_max)

        by_group = fit.runner.map(grow, range(objective.n_groups))
    for group, trees in enumerate(by_group):
        for tree in trees:
            booster.add_tree(tree, group)
    booster.end_round()
    if fit.dropout is not None:
        fit.dropout.end_round(fit, booster)


def _gradients_in_pairs(fit):
    """One output group grown by ``_grow_group`` on the CPU: the objective's gradients
    and hessians are written where their pairs go, row ``i``'s into the float64 slots
    ``2i``, ``2i + 1`` of the workspace's "gpair" (its "grad" and "hess" are the two
    columns of that memory seen as float64 (n, 2)), and ``quantize`` turns each row into
    its pair in place, so the round holds no float gradient or hessian array besides the
    pairs (16 bytes a row). Returns that float64 (n, 2) view, or None."""
    backend = fit.backend
    if (fit.lockstep is not None or fit.objective.n_groups != 1 or backend.workspace is None
            or backend.name != "cpu" or backend.xp is not np):
        return None
    n = fit.margins.shape[1]
    slots = backend.buffer("gpair", (n, 2), GPAIR_DTYPE).view(np.float64)
    backend.workspace["grad"], backend.workspace["hess"] = slots[:, 0], slots[:, 1]
    # the logistic loss's kernel records max |g|, max |h| here as it writes the slots
    # (gbm.objectives.gradients._fused_pairs); NaN: not recorded this round
    backend.workspace["pair_maxima"] = np.full(2, np.nan)
    backend.workspace["pair_slots"] = slots
    return slots


def _recorded_maxima(backend):
    """This round's ``max |g|``, ``max |h|`` as the objective's kernel recorded them while
    writing the pairs' slots (float64 (2,)), or None when it did not (another objective,
    or a custom one): ``quantize`` then reads them off the pairs (``max_abs_pairs``)."""
    maxima = backend.workspace.get("pair_maxima")
    if maxima is None or maxima[0] != maxima[0] or maxima[1] != maxima[1]:  # NaN: not written
        return None
    return maxima


def _grow_group(data, grad, hess, column, group, round_, residual, row_ids, n_rows_total,
                weights, p, backend, buffers, whole_trees=None, local_max=None):
    """Grow one round's trees of one output group (``num_parallel_tree`` of them, sharing
    the round's gradients, as XGBoost does) and add their leaf values to ``column`` (the
    group's margins, contiguous, updated in place); returns the trees, for the caller to
    add to the booster in group order. ``whole_trees``: a ``gbm.tree.whole_tree
    .WholeTrees`` grows each tree in one call (None: ``TreeGrower``). ``local_max``: this
    rank's ``max |g|``, ``max |h|`` when the objective's kernel recorded them (``quantize``)."""
    gpair, scales = quantize(grad, hess, backend, n_rows_total,
                             out=backend.buffer("gpair", (grad.shape[0], 2), GPAIR_DTYPE),
                             local_max=local_max)
    n_parallel = p["num_parallel_tree"]
    # Each parallel tree's leaves carry learning_rate / num_parallel_tree, so a round
    # adds learning_rate times the mean of its trees (XGBoost scales them the same way).
    tree_params = p if n_parallel == 1 else dict(p, learning_rate=p["learning_rate"] / n_parallel)
    xp = backend.xp
    trees = []
    n_rows = grad.shape[0]
    for parallel in range(n_parallel):
        kept = sample_rows(p, round_, group, row_ids, n_rows, parallel)
        columns = ColumnSampler(p, data.n_features, round_, group, parallel)
        if whole_trees is not None:  # rows None: every row, numbered where they are kept
            rows = None if kept is None else np.flatnonzero(kept).astype(np.int32)
            trees.append(whole_trees.grow(gpair, scales, rows, tree_params, columns, column,
                                          backend))
            if kept is not None:  # rows left out of the sample: walk them through the tree
                with backend.threads(n_rows):
                    add_tree(backend, data, trees[-1], np.flatnonzero(~kept), column)
            continue
        # every row: a range, which the grower writes into its own row list (no index of
        # every row held beside it)
        rows = (range(n_rows) if kept is None
                else backend.asarray(np.flatnonzero(kept).astype(np.int32)))
        # without a leaf refresh, the last level's leaves go straight into the margins
        grower = TreeGrower(data, gpair, scales, rows, tree_params, backend, columns, buffers,
                            column=column if residual is None else None)
        (tree,), rows, starts, ends, values = grower.grow()
        if residual is not None:
            values = refresh_leaves(values, backend.to_host(rows), starts, ends, residual[0],
                                    residual[1], tree_params["learning_rate"], weights,
                                    backend.collective)
            tree.value[grower.leaf_ids[0]] = values
        with backend.threads(rows.shape[0]):
            backend.kernels.add_leaf_values(rows, starts, ends, values, column)
            if kept is not None:  # rows left out of the sample: walk them through the tree
                add_tree(backend, data, tree, np.flatnonzero(~kept), column)
        trees.append(tree)
    return trees


def sample_rows(p, round_, group, row_ids, n_rows, parallel=0):
    """``row_sample``'s mask of one tree's rows (None: every row), its rows' ids being
    ``row_ids`` (None: their positions ``0 .. n_rows - 1``)."""
    if p["subsample"] >= 1.0:
        return None
    ids = np.arange(n_rows) if row_ids is None else row_ids
    return row_sample(p["random_state"], round_, group, ids, p["subsample"], parallel)
