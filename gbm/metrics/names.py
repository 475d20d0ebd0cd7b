"""Metric names: which exist and which are better larger. Imports nothing of gbm's, so
that the parameter checks (``gbm.params``) read it without loading the metrics."""
import re

# the metrics whose formula needs nothing but labels, predictions and weights
POINTWISE = ("rmse", "rmsle", "mae", "mape", "error", "auc", "aucpr", "logloss", "mlogloss",
             "merror", "poisson-nloglik", "gamma-nloglik")
# metrics whose formula takes a training parameter: name -> that parameter
PARAMETRIC = {"quantile": "quantile_alpha", "mphe": "huber_slope",
              "expectile": "expectile_alpha"}
# survival metrics: name -> the objective whose labels they read
SURVIVAL_METRICS = {"cox-nloglik": "survival:cox", "aft-nloglik": "survival:aft",
                    "interval-regression-accuracy": "survival:aft"}
_MAXIMIZED = ("auc", "aucpr", "interval-regression-accuracy")
_RANKING = re.compile(r"^(ndcg|map|pre)(?:@(\d+))?(-)?$")
_TWEEDIE = "tweedie-nloglik@"


def parse_ranking(name):
    """(kind, k or None, minus) for a ranking metric name (``ndcg``, ``map@5``,
    ``ndcg@10-``, ``pre@3``, ...), or None for other names."""
    m = _RANKING.match(name) if isinstance(name, str) else None
    if m is None:
        return None
    k = None if m.group(2) is None else int(m.group(2))
    if k is not None and k < 1:
        raise ValueError(f"eval_metric {name!r}: the cut-off k in {m.group(1)}@k must be >= 1")
    return m.group(1), k, m.group(3) is not None


def tweedie_power(name):
    """rho of ``tweedie-nloglik@rho`` with rho in [1, 2), or None for other names."""
    if not isinstance(name, str) or not name.startswith(_TWEEDIE):
        return None
    try:
        rho = float(name[len(_TWEEDIE):])
    except ValueError:
        return None
    return rho if 1.0 <= rho < 2.0 else None


def maximizes(name):
    """Whether larger values of metric ``name`` are better."""
    return name in _MAXIMIZED or parse_ranking(name) is not None


def check_metric_name(name):
    """``name`` if it names a metric, else a ValueError listing the known ones."""
    if isinstance(name, str) and (name in POINTWISE or name in PARAMETRIC
                                  or name in SURVIVAL_METRICS
                                  or parse_ranking(name) is not None
                                  or tweedie_power(name) is not None):
        return name
    raise ValueError(f"eval_metric {name!r} is not a known metric; known: "
                     f"{sorted(POINTWISE) + sorted(PARAMETRIC) + sorted(SURVIVAL_METRICS)}, "
                     "tweedie-nloglik@rho with rho in [1, 2), and the ranking metrics "
                     "ndcg, map, pre, ndcg@k, map@k, pre@k (each also with a '-' suffix)")
