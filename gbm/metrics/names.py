"""Metric names: which exist and which are better larger. Imports nothing of gbm's, so
that the parameter checks (``gbm.params``) read it without loading the metrics."""
import math
import re

# the metrics whose formula needs nothing but labels, predictions and weights
POINTWISE = ("rmse", "rmsle", "mae", "mape", "error", "auc", "aucpr", "logloss", "mlogloss",
             "merror", "poisson-nloglik", "gamma-nloglik", "gamma-deviance")
# metrics whose formula takes a training parameter: name -> that parameter
PARAMETRIC = {"quantile": "quantile_alpha", "mphe": "huber_slope",
              "expectile": "expectile_alpha"}
# survival metrics: name -> the objective whose labels they read
SURVIVAL_METRICS = {"cox-nloglik": "survival:cox", "aft-nloglik": "survival:aft",
                    "interval-regression-accuracy": "survival:aft"}
_MAXIMIZED = ("auc", "aucpr", "interval-regression-accuracy")
_RANKING = re.compile(r"^(ndcg|map|pre)(?:@(\d+))?(-)?$")
_TWEEDIE = "tweedie-nloglik@"
# metrics with a number after '@': name -> the number's allowed range (closed)
_AT_NUMBER = {"error": (-math.inf, math.inf), "ams": (0.0, 1.0)}


def at_number(name, kind):
    """The number of ``error@t`` (a threshold) or ``ams@k`` (a share of the rows in [0,
    1]) when ``name`` is of ``kind`` ("error" or "ams") with a number in its range, else
    None."""
    prefix = kind + "@"
    if not isinstance(name, str) or not name.startswith(prefix):
        return None
    try:
        value = float(name[len(prefix):])
    except ValueError:
        return None
    low, high = _AT_NUMBER[kind]
    return value if low <= value <= high else None


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
    return (name in _MAXIMIZED or parse_ranking(name) is not None
            or at_number(name, "ams") is not None)


def check_metric_name(name):
    """``name`` if it names a metric, else a ValueError listing the known ones."""
    if isinstance(name, str) and (name in POINTWISE or name in PARAMETRIC
                                  or name in SURVIVAL_METRICS
                                  or parse_ranking(name) is not None
                                  or tweedie_power(name) is not None
                                  or any(at_number(name, k) is not None for k in _AT_NUMBER)):
        return name
    raise ValueError(f"eval_metric {name!r} is not a known metric; known: "
                     f"{sorted(POINTWISE) + sorted(PARAMETRIC) + sorted(SURVIVAL_METRICS)}, "
                     "tweedie-nloglik@rho with rho in [1, 2), error@t (threshold t), "
                     "ams@k with k in [0, 1], and the ranking metrics "
                     "ndcg, map, pre, ndcg@k, map@k, pre@k (each also with a '-' suffix)")
