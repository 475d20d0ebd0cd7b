"""Random forests: ``GBMRFRegressor`` and ``GBMRFClassifier``, XGBoost's ``XGBRF*``.

A forest is one boosting round of ``n_estimators`` parallel trees (``num_parallel_tree``),
all grown from the gradients at the starting margin, each from its own row sample
(``subsample``) and per-node feature samples (``colsample_bynode``). With
``learning_rate=1`` every tree's leaves carry ``1 / n_estimators`` of its Newton step,
so the forest predicts the base margin plus the mean of its trees. The defaults are
XGBoost's random-forest defaults; everything else is the boosting estimators'.
"""
from .boosting import GBMClassifier, GBMRegressor
from .parameters import FOREST_PARAMS, N_POSITIONAL, estimator_init


class _RandomForestMixin:
    """Turns a boosting estimator into a random forest: one round, ``n_estimators`` trees."""

    __init__ = estimator_init(FOREST_PARAMS, N_POSITIONAL)

    num_parallel_tree = property(lambda self: self.n_estimators,
                                 doc="The forest's trees: ``n_estimators``, in one round.")

    def _boost_rounds(self):
        return 1

    def fit(self, X, y, sample_weight=None, xgb_model=None, eval_set=None,
            sample_weight_eval_set=None, verbose=False, callbacks=(), base_margin=None,
            base_margin_eval_set=None):
        """Fit one forest of ``n_estimators`` trees; returns self.

        Arguments as for the boosting estimators. ``xgb_model`` adds the forest as one
        more round to that model. Early stopping and callbacks are refused, as XGBoost's
        random-forest estimators refuse them: there is one round, nothing to stop.
        """
        callbacks = list(self.callbacks or []) + list(callbacks or [])
        if self.early_stopping_rounds is not None or callbacks:
            raise NotImplementedError(
                f"early_stopping_rounds and callbacks are not implemented for {type(self).__name__} "
                f"(a random forest trains one round); got early_stopping_rounds="
                f"{self.early_stopping_rounds!r}, callbacks={list(callbacks)!r}")
        return super().fit(X, y, sample_weight=sample_weight, xgb_model=xgb_model,
                           eval_set=eval_set, sample_weight_eval_set=sample_weight_eval_set,
                           verbose=verbose, callbacks=(), base_margin=base_margin,
                           base_margin_eval_set=base_margin_eval_set)


class GBMRFRegressor(_RandomForestMixin, GBMRegressor):
    """Random forest for regression (squared error), like ``xgboost.XGBRFRegressor``.

    Parameters
    ----------
    n_estimators : int, default 100
        Trees in the forest (``num_parallel_tree``; trained as one boosting round).
    learning_rate : float, default 1.0
        Each tree's leaves are scaled by ``learning_rate / n_estimators``.
    subsample : float, default 0.8
        Share of rows drawn for each tree (each row kept with this probability).
    colsample_bynode : float, default 0.8
        Share of features drawn for each node.
    reg_lambda : float, default 1e-5
        L2 penalty on leaf values (next to none: a leaf is about its rows' mean).
    max_depth, max_leaves, grow_policy, min_child_weight, reg_alpha, gamma, max_delta_step,
    colsample_bytree, colsample_bylevel, max_bin, base_score, n_jobs, random_state,
    device, eval_metric, interaction_constraints, monotone_constraints, max_cat_to_onehot,
    max_cat_threshold, categorical_features, enable_categorical, objective, quantile_alpha,
    huber_slope, tweedie_variance_power, expectile_alpha, tree_method, scale_pos_weight,
    missing, verbosity, validate_parameters, importance_type, aft_loss_distribution,
    aft_loss_distribution_scale, booster, rate_drop, one_drop, skip_drop, sample_type,
    normalize_type
        As for ``GBMRegressor`` / ``GBMClassifier`` (see ``docs/parameters.md``).
    early_stopping_rounds, callbacks : None
        Must stay None: ``fit`` raises ``NotImplementedError`` otherwise (as XGBoost).
    """


class GBMRFClassifier(_RandomForestMixin, GBMClassifier):
    """Random forest for binary and multiclass classification, like
    ``xgboost.XGBRFClassifier``: one round of ``n_estimators`` trees per class column
    (binary: one column). Parameters as for ``GBMRFRegressor``; labels as for
    ``GBMClassifier``.
    """
