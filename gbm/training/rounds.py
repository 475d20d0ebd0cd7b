"""One boosting round: the gradients at the current margins, then each output group's
trees (``num_parallel_tree`` of them), their leaf values added to the margins.

The fit's grower (``gbm.tree.growers``: chosen once per fit) grows them: a round's groups
in lockstep (``gbm.tree.lockstep``: a level of every group's tree per kernel call), or
each group's trees in one compiled call each (``gbm.tree.whole_tree``) or level by level
(``TreeGrower``), the groups concurrently where that pays (``gbm.tree.group_threads``),
each thread with its own histograms. A DART fit
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
    lockstep = fit.grower.lockstep
    if lockstep is not None:
        by_group = [[tree] for tree in lockstep.grow_round(
            grad, hess, fit.margins, round_, fit.row_ids, fit.n_rows_total, fit.params,
            fit.runner.buffers())]
    else:
        by_group = fit.runner.map(
            lambda group, group_backend, buffers: _grow_group(
                fit, group, round_, grad[group], hess[group], group_backend, buffers,
                local_max),
            range(objective.n_groups))
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
    if (fit.grower.lockstep is not None or fit.objective.n_groups != 1 or backend.workspace is None
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


def _grow_group(fit, group, round_, grad, hess, backend, buffers, local_max=None):
    """Grow round ``round_``'s trees of output group ``group`` (``num_parallel_tree`` of
    them, sharing the round's gradients ``grad``, ``hess``, as XGBoost does) with the fit's
    grower, and add their leaf values to the group's margins (``fit.margins[group]``,
    contiguous, updated in place); returns the trees, for the caller to add to the booster
    in group order. ``backend``, ``buffers``: the thread's (``GroupRunner``);
    ``local_max``: this rank's ``max |g|``, ``max |h|`` when the objective's kernel
    recorded them (``quantize``)."""
    gpair, scales = quantize(grad, hess, backend, fit.n_rows_total,
                             out=backend.buffer("gpair", (grad.shape[0], 2), GPAIR_DTYPE),
                             local_max=local_max)
    p = fit.params
    n_parallel = p["num_parallel_tree"]
    # Each parallel tree's leaves carry learning_rate / num_parallel_tree, so a round
    # adds learning_rate times the mean of its trees (XGBoost scales them the same way).
    tree_params = p if n_parallel == 1 else dict(p, learning_rate=p["learning_rate"] / n_parallel)
    column, trees = fit.margins[group], []
    residual = None  # absolute / quantile loss: leaves become residual quantiles
    if fit.objective.leaf_alphas is not None:  # (of the margins before the round's trees)
        y = fit.y if fit.y.ndim == 1 else fit.y[:, group]
        residual = (y - backend.to_host(column), fit.objective.leaf_alphas[group])
    for parallel in range(n_parallel):
        kept = sample_rows(p, round_, group, fit.row_ids, grad.shape[0], parallel)
        columns = ColumnSampler(p, fit.data.n_features, round_, group, parallel)
        if fit.grower.whole_trees is not None:
            tree = _grow_whole(fit, (gpair, scales), kept, tree_params, columns, column,
                               backend)
        else:
            tree = _grow_levels(fit, (gpair, scales), kept, tree_params, columns, column,
                                backend, buffers, residual)
        trees.append(tree)
    return trees


def _grow_whole(fit, pairs, kept, params, columns, column, backend):
    """One tree grown in one compiled call (``WholeTrees``) from ``pairs`` (the quantized
    gradients and their scales) on the rows ``kept`` (a mask; None: every row), its leaf
    values added to ``column``; returns it."""
    rows = None if kept is None else np.flatnonzero(kept).astype(np.int32)
    tree = fit.grower.whole_trees.grow(*pairs, rows, params, columns, column, backend)
    if kept is not None:  # rows left out of the sample: walk them through the tree
        with backend.threads(column.shape[0]):
            add_tree(backend, fit.data, tree, np.flatnonzero(~kept), column)
    return tree


def _grow_levels(fit, pairs, kept, params, columns, column, backend, buffers, residual):
    """One tree grown level by level (``TreeGrower``) as ``_grow_whole``, its leaf values
    made ``residual``'s quantiles (``(y - margins, alpha)``: an absolute or quantile loss;
    None: kept) before they are added to ``column``."""
    n_rows = column.shape[0]
    # every row: a range, which the grower writes into its own row list (no index of
    # every row held beside it)
    rows = (range(n_rows) if kept is None
            else backend.asarray(np.flatnonzero(kept).astype(np.int32)))
    # without a leaf refresh, the last level's leaves go straight into the margins
    grower = TreeGrower(fit.data, *pairs, rows, params, backend, columns, buffers,
                        column=column if residual is None else None)
    (tree,), rows, starts, ends, values = grower.grow()
    if residual is not None:
        values = refresh_leaves(values, backend.to_host(rows), starts, ends, residual[0],
                                residual[1], params["learning_rate"], fit.refresh_weights,
                                backend.collective)
        tree.value[grower.leaf_ids[0]] = values
    with backend.threads(rows.shape[0]):
        backend.kernels.add_leaf_values(rows, starts, ends, values, column)
        if kept is not None:  # rows left out of the sample: walk them through the tree
            add_tree(backend, fit.data, tree, np.flatnonzero(~kept), column)
    return tree


def sample_rows(p, round_, group, row_ids, n_rows, parallel=0):
    """``row_sample``'s mask of one tree's rows (None: every row), its rows' ids being
    ``row_ids`` (None: their positions ``0 .. n_rows - 1``)."""
    if p["subsample"] >= 1.0:
        return None
    ids = np.arange(n_rows) if row_ids is None else row_ids
    return row_sample(p["random_state"], round_, group, ids, p["subsample"], parallel)
