"""Evaluation metrics: their names (``names``), the pointwise formulas (``pointwise``),
the ranking ones (``ranking``) and the survival ones (``survival``); ``get_metric(name,
params)`` picks one."""
from . import curves, names, pointwise
from .names import check_metric_name, maximizes
from .ranking import RankingMetric
from .survival import survival_metric

__all__ = ["check_metric_name", "get_metric", "maximizes"]


def get_metric(name, params=None):
    """The metric function called ``name``: ``metric(y, pred, w, collective)``.

    ``tweedie-nloglik@rho`` carries its power, ``error@t`` its threshold and ``ams@k`` its
    share of the rows; ``quantile``, ``mphe`` and ``expectile``
    take ``quantile_alpha`` / ``huber_slope`` / ``expectile_alpha`` from ``params``
    (validated training parameters, needed for them). Ranking metrics (``ndcg``,
    ``map@k``, ...: ``gbm.metrics.ranking``) are ``RankingMetric`` objects, called with
    the eval set's query groups as well; they read ``ndcg_exp_gain`` from ``params``
    (default True). Survival metrics (``gbm.metrics.survival``) are called with margins
    instead of predictions (``reads_margin``); ``aft-nloglik`` reads the AFT distribution
    and scale from ``params``.
    """
    check_metric_name(name)
    if name in names.SURVIVAL_METRICS:
        return survival_metric(name, params)
    if name in names.PARAMETRIC:
        key = names.PARAMETRIC[name]
        if params is None:
            raise ValueError(f"eval_metric {name!r} reads {key} from the training parameters; "
                             "pass them as params")
        return pointwise.PARAMETRIC[name](params[key])
    if names.parse_ranking(name) is not None:
        return RankingMetric(name, True if params is None else params["ndcg_exp_gain"])
    rho = names.tweedie_power(name)
    if rho is not None:
        return pointwise.tweedie_nloglik(rho)
    threshold = names.at_number(name, "error")
    if threshold is not None:
        return pointwise.error_at(threshold)
    ratio = names.at_number(name, "ams")
    if ratio is not None:
        return curves.ams(ratio)
    return pointwise.METRICS[name]
