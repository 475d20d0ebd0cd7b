"""One boosting round of a vector-leaf model (``multi_strategy="multi_output_tree"``):
the gradients of every output at the current margins, one tree for all of them
(``gbm.tree.vector_leaf``; leaf by leaf: ``gbm.tree.vector_lossguide``, as
``gbm.tree.growers`` chose), its leaf values added to each output's margins."""
import numpy as np

from ..objectives.adaptive import refresh_leaves
from ..tree.margins import add_tree
from ..tree.projection import projection_for, project_gradients
from ..tree.sampling import ColumnSampler
from ..tree.vector_gradients import output_gradients, quantize_outputs
from .rounds import sample_rows


def grow_vector_round(fit, booster, round_):
    """Train round ``round_`` of ``fit``: one vector-leaf tree (``num_parallel_tree`` of
    them) added to ``booster``, ``fit.margins`` (float64 (k, n_rows)) updated in place."""
    backend, objective, p = fit.backend, fit.objective, fit.params
    grad, hess = objective.gradients(fit.margins.T, fit.y_fit, fit.w_fit, backend=backend,
                                     queries=fit.queries, round_=round_)
    grad, hess = np.ascontiguousarray(grad.T), np.ascontiguousarray(hess.T)  # (k, n)
    projection = projection_for(p, grad.shape[0])
    search = None
    if projection is None:
        gpair, scales = quantize_outputs(grad, hess, backend, fit.n_rows_total)
    else:  # the full gradients give the nodes' sums only: no row-major pairs (CPU: none)
        # the CPU projection takes every output's maxima in its pass (one read, not two)
        maxima = np.empty((grad.shape[0], 2)) if backend.name == "cpu" else None
        projected = project_gradients(grad, hess, projection, backend, maxima)
        gpair, scales = output_gradients(grad, hess, backend, fit.n_rows_total, maxima)
        search = quantize_outputs(*projected, backend, fit.n_rows_total,
                                  name="vector_search_pairs")
    n_rows = grad.shape[1]
    n_parallel = p["num_parallel_tree"]
    # a forest's trees share the round's gradients, each its own row and column samples;
    # their leaves carry learning_rate / num_parallel_tree (as XGBoost, gbm.training.rounds)
    tree_params = p if n_parallel == 1 else dict(p, learning_rate=p["learning_rate"] / n_parallel)
    residuals = None  # absolute / quantile loss: y - margin at the round's start, per output
    if objective.leaf_alphas is not None:  # (a forest's trees all refresh from it)
        residuals = [(fit.y if fit.y.ndim == 1 else fit.y[:, j]) - fit.margins[j]
                     for j in range(fit.margins.shape[0])]
    for parallel in range(n_parallel):
        kept = sample_rows(p, round_, 0, fit.row_ids, n_rows, parallel)
        rows = (np.arange(n_rows, dtype=np.int32) if kept is None
                else np.flatnonzero(kept).astype(np.int32))
        columns = ColumnSampler(p, fit.data.n_features, round_, 0, parallel)
        grower = fit.grower.vector(fit.data, gpair, scales, rows, tree_params, backend, columns,
                                   search, kernels=backend.kernels)
        tree, rows, starts, ends, values = grower.grow()
        if residuals is not None:  # leaves become residual quantiles
            values = _refreshed(fit, tree, grower.leaf_ids, rows, starts, ends, values,
                                residuals, tree_params["learning_rate"], backend.collective)
        _add_margins(fit, backend, tree, rows, starts, ends, values,
                     None if kept is None else np.flatnonzero(~kept).astype(np.int32))
        booster.add_tree(tree, 0)
    booster.end_round()


def _refreshed(fit, tree, leaf_ids, rows, starts, ends, values, residuals, learning_rate,
               collective):
    """Each output's leaf values made ``learning_rate`` times the ``leaf_alphas[j]``
    quantile of its residuals (``residuals[j]``, float64 (n_rows,)) in the leaf, over every
    rank's rows (``refresh_leaves``, as one-output trees), in ``tree`` too; returns them,
    float64 (n_leaves, k)."""
    out = np.empty_like(values)
    for j in range(values.shape[1]):
        out[:, j] = refresh_leaves(values[:, j], rows, starts, ends, residuals[j],
                                   fit.objective.leaf_alphas[j], learning_rate,
                                   fit.refresh_weights, collective)
    tree.value[leaf_ids] = out
    return out


def _add_margins(fit, backend, tree, rows, starts, ends, values, left_out):
    """Each output's margins (``fit.margins[j]``) plus the tree's leaf values, as predict
    adds them: the grown rows by leaf segment, ``left_out`` rows walked through the tree."""
    k = values.shape[1]
    if backend.name == "cpu":  # every output's grown rows in one call (one task an output)
        with backend.threads(rows.shape[0] * k):
            backend.kernels.add_outputs_leaf_values(rows, starts, ends, values, fit.margins)
    else:
        for j in range(k):
            with backend.threads(rows.shape[0]):
                backend.kernels.add_leaf_values(rows, starts, ends,
                                                np.ascontiguousarray(values[:, j]), fit.margins[j])
    if left_out is not None:  # rows out of the sample (none grown): walked through the tree
        for j in range(k):
            with backend.threads(rows.shape[0]):
                add_tree(backend, fit.data, tree.output(j), left_out, fit.margins[j])
