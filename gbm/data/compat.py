"""XGBoost's calling convention for user objectives and metrics, ``f(predt, dtrain)``,
turned into gbm's own (``f(margin, y, w)``, ``f(y, prediction, w)``), so ``train`` sees
one form. (A ``DMatrix`` in place of ``X, y``: ``gbm.data.training_data``; eval sets as
``(DMatrix, name)``: ``gbm.data.eval_sets``.)
"""
import inspect

from .dmatrix import DMatrix


def _n_required_positional(func):
    """How many positional parameters ``func`` requires, or None when it takes ``*args``
    or its signature cannot be read."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    kinds = [p for p in sig.parameters.values()]
    if any(p.kind is p.VAR_POSITIONAL for p in kinds):
        return None
    return sum(1 for p in kinds if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               and p.default is p.empty)


def is_xgboost_form(func):
    """Whether a user's objective or metric is written as XGBoost's ``f(predt, dtrain)``
    (two required positional parameters) rather than gbm's ``f(margin, y, weight)`` /
    ``f(y, prediction, weight)`` (three)."""
    return _n_required_positional(func) == 2


def objective_function(obj, dtrain):
    """A user objective as gbm calls it, ``f(margin, y, w) -> (grad, hess)``.

    An XGBoost-form ``obj(predt, dtrain)`` gets the training DMatrix (the one passed to
    ``train``, or one holding the labels, weights and base margins given as arrays).
    """
    if obj is None:
        return None
    if not callable(obj):
        raise TypeError(f"obj must be callable, got {obj!r}")
    if not is_xgboost_form(obj):
        return obj

    def gbm_form(margin, y, w):
        return obj(margin, dtrain)

    return gbm_form


def metric_function(metric, raw_margin, intervals=False):
    """A user metric as gbm's evaluator calls it, ``f(y, prediction, w)``, returning
    ``(name, value)`` or a list of such pairs.

    An XGBoost-form ``metric(predt, dmatrix)`` gets a DMatrix with the eval set's labels
    and weights (``intervals``: survival:aft's labels, (n, 2), as its
    ``label_lower_bound`` / ``label_upper_bound``); ``predt`` is the margin when
    ``raw_margin`` (a custom objective is used, as XGBoost does), else the prediction.
    """
    if metric is None:
        return None
    if not callable(metric):
        raise TypeError(f"custom_metric must be callable, got {metric!r}")
    if not is_xgboost_form(metric):
        return metric

    labels = DMatrix._of_intervals if intervals else DMatrix._of_labels

    def gbm_form(y, prediction, w):
        return metric(prediction, labels(y, w))

    gbm_form.wants_margin = bool(raw_margin)
    return gbm_form
