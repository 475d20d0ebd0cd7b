"""XGBoost's calling conventions for ``gbm.train``: a ``DMatrix`` in place of ``X, y``,
eval sets as ``(DMatrix, name)``, and user objectives and metrics written as
``f(predt, dtrain)``. Each is turned here into gbm's own form, so ``train`` sees one.
"""
import inspect

import numpy as np

from .dmatrix import DMatrix


def training_data(X, y, num_boost_round, dtrain, sample_weight, group, qid, base_margin,
                  feature_names, categorical_features):
    """The training arguments with a ``DMatrix`` unpacked: a dict with ``X``, ``y``,
    ``num_boost_round``, ``sample_weight``, ``group``, ``qid``, ``base_margin``,
    ``feature_names``, ``categorical_features`` and ``dmatrix`` (the DMatrix or None).

    ``train(params, dtrain, 100)`` (XGBoost's positional form) puts the round count where
    gbm's ``y`` is: an integer there, with a DMatrix, is the round count.
    """
    if dtrain is not None:
        if X is not None:
            raise TypeError("pass the training data once: as X (and y) or as dtrain")
        X = dtrain
    if isinstance(X, tuple):
        raise TypeError("X is a tuple; gbm.train takes the features and labels as separate "
                        "arguments, gbm.train(params, X, y), or a gbm.DMatrix(X, label=y)")
    out = dict(X=X, y=y, num_boost_round=num_boost_round, sample_weight=sample_weight,
               group=group, qid=qid, base_margin=base_margin, feature_names=feature_names,
               categorical_features=categorical_features, dmatrix=None)
    if not isinstance(X, DMatrix):
        if X is None:
            raise TypeError("train() needs the training data: train(params, X, y) or "
                            "train(params, gbm.DMatrix(X, label=y))")
        if y is None:
            raise TypeError("y is None; pass the labels: train(params, X, y), or a "
                            "gbm.DMatrix(X, label=y) as X")
        return out
    if isinstance(y, (int, np.integer)) and not isinstance(y, bool):
        if num_boost_round != 10:
            raise TypeError("the round count is given twice: after the DMatrix and as "
                            "num_boost_round")
        out["num_boost_round"], y = int(y), None
    if y is not None:
        raise TypeError("y is given but X is a DMatrix: its labels are its label field")
    if X.label is None:
        raise ValueError("the DMatrix has no labels: gbm.DMatrix(X, label=y)")
    out.update(X=X.data, y=X.label, dmatrix=X)
    for name, value in (("sample_weight", X.weight), ("group", X.group), ("qid", X.qid),
                        ("base_margin", X.base_margin), ("feature_names", X.feature_names),
                        ("categorical_features", X.categorical_features())):
        if value is None:
            continue
        if out[name] is not None:
            raise TypeError(f"{name} is given both as an argument and in the DMatrix; pass "
                            "it once")
        out[name] = value
    return out


def eval_entry(entry, index):
    """An ``evals`` entry with a DMatrix as ``(DMatrix, name)`` made gbm's dict form;
    other entries as they are. Returns ``(entry, base_margin or None)``: a dict entry
    may hold ``base_margin`` (each row's starting margin)."""
    if isinstance(entry, (tuple, list)) and len(entry) == 2 and isinstance(entry[0], DMatrix):
        d, name = entry
        if d.label is None:
            raise ValueError(f"evals[{index}] ({name!r}): the DMatrix has no labels")
        entry = {"X": d.data, "y": d.label, "name": name, "sample_weight": d.weight,
                 "group": d.group, "qid": d.qid, "base_margin": d.base_margin}
        entry = {k: v for k, v in entry.items() if v is not None}
    if isinstance(entry, dict) and "base_margin" in entry:
        entry = dict(entry)
        return entry, entry.pop("base_margin")
    return entry, None


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
    if obj is None or not is_xgboost_form(obj):
        return obj
    if not callable(obj):
        raise TypeError(f"obj must be callable, got {obj!r}")

    def gbm_form(margin, y, w):
        return obj(margin, dtrain)

    return gbm_form


def metric_function(metric, raw_margin):
    """A user metric as gbm's evaluator calls it, ``f(y, prediction, w)``, returning
    ``(name, value)`` or a list of such pairs.

    An XGBoost-form ``metric(predt, dmatrix)`` gets a DMatrix with the eval set's labels
    and weights; ``predt`` is the margin when ``raw_margin`` (a custom objective is used,
    as XGBoost does), else the prediction.
    """
    if metric is None:
        return None
    if not callable(metric):
        raise TypeError(f"custom_metric must be callable, got {metric!r}")
    if not is_xgboost_form(metric):
        return metric

    def gbm_form(y, prediction, w):
        return metric(prediction, DMatrix._of_labels(y, w))

    gbm_form.wants_margin = bool(raw_margin)
    return gbm_form


def check_base_margin(base_margin, n_rows, n_groups, name="base_margin"):
    """Per-row starting margins as float64 (n_groups, n_rows), contiguous: XGBoost's
    ``base_margin``, of shape (n_rows,) for one output group or (n_rows, n_groups)."""
    bm = np.asarray(base_margin, dtype=np.float64)
    if bm.ndim == 1 and n_groups == 1:
        bm = bm[:, None]
    elif bm.ndim == 1 and bm.shape[0] == n_rows * n_groups:
        bm = bm.reshape(n_rows, n_groups)  # XGBoost also accepts it flattened
    if bm.shape != (n_rows, n_groups):
        raise ValueError(f"{name} has shape {np.shape(base_margin)}; expected ({n_rows},)"
                         if n_groups == 1 else
                         f"{name} has shape {np.shape(base_margin)}; expected "
                         f"({n_rows}, {n_groups}): one margin per row and output group")
    if not np.isfinite(bm).all():
        raise ValueError(f"{name} holds NaN or infinity; margins must be finite")
    return np.array(bm.T, order="C")  # a copy: the caller's array is never written
