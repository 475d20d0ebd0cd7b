"""One metric's score of a model's predictions on one eval set: what ``gbm.train``'s eval
sets (``gbm.training.evaluation``) and ``Booster.eval_set`` both compute."""
import numpy as np


def margin_view(margin):
    """float64 (n_rows, n_groups) margins as a metric reads them: (n_rows,) for one group."""
    return margin[:, 0] if margin.shape[1] == 1 else margin


def score(metric, es, pred, margin, collective):
    """One metric on one eval set ``es`` (its ``y``, ``w`` and ``queries``; over every
    rank); ranking metrics also get its query groups (``auc`` and ``aucpr`` are scored
    per group when it has them), survival metrics its margins
    (``reads_margin``) in place of the predictions. With several targets, a pointwise
    metric is over every (row, target) entry, each with its row's weight (as XGBoost
    scores multi-target regression)."""
    if getattr(metric, "reads_margin", False):
        return metric(es.y, margin_view(margin), es.w, collective)
    if getattr(metric, "needs_queries", False):
        return metric(es.y, pred, es.w, es.queries, collective)
    by_query = getattr(metric, "by_query", None)  # auc, aucpr: per query group
    if by_query is not None and es.queries is not None:
        return by_query(es.y, np.asarray(pred, dtype=np.float64), es.queries, collective)
    if es.y.ndim == 2:
        k = es.y.shape[1]
        w = None if es.w is None else np.repeat(es.w, k)
        return metric(es.y.reshape(-1), np.asarray(pred).reshape(-1), w, collective)
    return metric(es.y, pred, es.w, collective)
