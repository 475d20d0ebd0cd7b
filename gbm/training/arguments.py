"""The arguments of ``train`` and ``cv`` that are not hyperparameters, checked: the round count,
early stopping's patience, the printing period, the arguments XGBoost spells two ways, and
XGBoost's order of the positional arguments after a DMatrix."""
import functools

import numpy as np

from ..data.dmatrix import DMatrix

# XGBoost's positional order after ``(params, dtrain)``
XGBOOST_TRAIN_ORDER = ("num_boost_round", "evals", "obj", "maximize", "early_stopping_rounds",
                       "evals_result", "verbose_eval", "xgb_model", "callbacks",
                       "custom_metric")
XGBOOST_CV_ORDER = ("num_boost_round", "nfold", "stratified", "folds", "metrics", "obj",
                    "maximize", "early_stopping_rounds", "fpreproc", "as_pandas",
                    "verbose_eval", "show_stdv", "seed", "callbacks", "shuffle",
                    "custom_metric")


def xgboost_positional(order):
    """Decorator of ``train`` / ``cv(params, X, ...)``: called with a DMatrix as ``X``
    and an integer after it (the round count), the positional arguments after the DMatrix
    are XGBoost's, in ``order`` (``train(params, dtrain, 10, evals)``), passed on by name;
    otherwise gbm's own order (``train(params, X, y, 10)``, ``train(params, dtrain, None,
    10)``; a ``y`` array after a DMatrix gets ``train``'s own error)."""
    def wrap(func):
        @functools.wraps(func)
        def inner(params, *args, **kwargs):
            if len(args) < 2 or not isinstance(args[0], DMatrix) or not _is_int(args[1]):
                return func(params, *args, **kwargs)
            rest = args[1:]
            if len(rest) > len(order):
                raise TypeError(f"{func.__name__}() takes at most {len(order) + 2} positional "
                                f"arguments after a DMatrix (XGBoost's: params, dtrain, "
                                f"{', '.join(order)}), got {len(args) + 1}")
            for name, value in zip(order, rest):
                if name in kwargs:
                    raise TypeError(f"{func.__name__}() got {name} both by position (XGBoost's "
                                    "order after a DMatrix) and by name")
                kwargs[name] = value
            return func(params, args[0], **kwargs)
        return inner
    return wrap


def check_rounds(num_boost_round):
    if isinstance(num_boost_round, bool) or not isinstance(num_boost_round, (int, np.integer)) \
            or num_boost_round < 0:
        raise ValueError(f"num_boost_round must be an integer >= 0, got {num_boost_round!r}")


def either_spelling(name, value, other_name, other):
    """An argument XGBoost spells differently: either spelling, not both."""
    if value is not None and other is not None:
        raise TypeError(f"{name} and {other_name} are the same argument; pass one")
    return other if value is None else value


def check_patience(rounds):
    if rounds is None:
        return None
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"early_stopping_rounds must be an integer >= 1 or None, got {rounds!r}")
    return int(rounds)


def check_period(verbose):
    """``verbose_eval`` as a period in rounds (0: never print)."""
    if isinstance(verbose, bool) or verbose is None:
        return int(bool(verbose))
    if isinstance(verbose, (int, np.integer)) and verbose >= 0:
        return int(verbose)  # XGBoost's verbose_eval=N: every N rounds
    raise ValueError(f"verbose_eval must be True, False or an integer >= 0 (print every "
                     f"that many rounds), got {verbose!r}")


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def with_feature_weights(params, dmatrix):
    """``params`` (a dict) with ``feature_weights`` taken from ``dmatrix`` (XGBoost's
    DMatrix field, ``DMatrix.feature_weights``) when it has them; given in both places,
    a TypeError."""
    weights = None if dmatrix is None else getattr(dmatrix, "feature_weights", None)
    if weights is None or np.size(weights) == 0:
        return params
    if params.get("feature_weights") is not None:
        raise TypeError("feature_weights is given both in params and in the DMatrix; pass "
                        "it once")
    return dict(params, feature_weights=weights)
