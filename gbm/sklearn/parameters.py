"""The boosting estimators' constructor parameters, declared once.

``BOOSTING_PARAMS`` holds every parameter of ``GBMRegressor`` and ``GBMClassifier`` with
its default (XGBoost's; ``docs/parameters.md`` says what each one means).
``RANKER_PARAMS`` is that table with ``GBMRanker``'s objective and LambdaMART's
parameters in place of the pointwise objectives' ones; ``FOREST_PARAMS`` the table with
XGBoost's random-forest defaults, less ``num_parallel_tree`` (a forest's is its
``n_estimators``). The Dask twins add ``client`` and ``checkpoint_dir`` to their local
twin's (``gbm.dask.wrappers.dask_init``).

``estimator_init`` makes an estimator's ``__init__`` from a table. It stores every
argument as given (scikit-learn's rule: ``fit`` checks them) and carries an explicit
``__signature__``, because scikit-learn's ``get_params``, ``clone`` and ``set_params`` read
the parameters from ``inspect.signature(cls.__init__)``, which honours it (and would
refuse the ``*args`` of the function itself).

The tree parameters, ``n_estimators`` to ``monotone_constraints``, may be passed by
position, in the order they have always had in every estimator (``GBMRanker``'s
``objective`` comes first); the others only by keyword, as scikit-learn does with all but
its estimators' first parameters. Their positions used to differ between the estimators,
so a call passing them by position raises ``TypeError`` rather than giving a value to
another parameter. (XGBoost's estimators take keywords only; there a positional argument
goes to the first keyword-only parameter, with a ``FutureWarning``.)
"""
import difflib
import inspect

import numpy as np

BOOSTING_PARAMS = (
    # by position or by keyword, in this order
    ("n_estimators", 100),
    ("learning_rate", 0.3),
    ("max_depth", 6),
    ("max_leaves", 0),
    ("grow_policy", "depthwise"),
    ("min_child_weight", 1.0),
    ("reg_lambda", 1.0),
    ("reg_alpha", 0.0),
    ("gamma", 0.0),
    ("max_delta_step", None),
    ("subsample", 1.0),
    ("colsample_bytree", 1.0),
    ("colsample_bylevel", 1.0),
    ("colsample_bynode", 1.0),
    ("max_bin", 256),
    ("base_score", None),
    ("n_jobs", None),
    ("random_state", None),
    ("device", "cpu"),
    ("eval_metric", None),
    ("early_stopping_rounds", None),
    ("interaction_constraints", None),
    ("monotone_constraints", None),
    # by keyword only
    ("num_parallel_tree", 1),
    ("booster", None),  # None here and below: XGBoost's default ("gbtree"; no dropout)
    ("rate_drop", None),
    ("one_drop", None),
    ("skip_drop", None),
    ("sample_type", None),
    ("normalize_type", None),
    ("objective", None),  # None: the estimator's own choice
    ("quantile_alpha", None),  # None here and below: the objective's or XGBoost's default
    ("expectile_alpha", None),
    ("huber_slope", None),
    ("tweedie_variance_power", None),
    ("max_cat_to_onehot", 4),
    ("max_cat_threshold", 64),
    ("categorical_features", None),
    ("enable_categorical", False),  # accepted for XGBoost compatibility; changes nothing
    ("tree_method", "hist"),
    ("scale_pos_weight", None),
    ("missing", np.nan),
    ("verbosity", None),
    ("validate_parameters", None),
    ("importance_type", None),
    ("callbacks", None),
    ("aft_loss_distribution", None),  # survival:aft's; None: XGBoost's default
    ("aft_loss_distribution_scale", None),
    ("multi_strategy", None),  # None here and below: XGBoost's default (one_output_per_tree)
    ("gradient_projection", None),
    ("projection_dim", None),
)
N_POSITIONAL = [name for name, _ in BOOSTING_PARAMS].index("num_parallel_tree")

# LambdaMART's parameters, XGBoost's defaults
RANKING_PARAMS = (
    ("lambdarank_pair_method", "topk"),
    ("lambdarank_num_pair_per_sample", None),  # None: the pair method's default
    ("ndcg_exp_gain", True),
    ("lambdarank_normalization", True),
    ("lambdarank_score_normalization", True),
)
# a ranker has its own objective and none of the pointwise objectives' parameters
_NOT_RANKING = ("objective", "quantile_alpha", "huber_slope", "tweedie_variance_power",
                "scale_pos_weight", "expectile_alpha", "aft_loss_distribution",
                "aft_loss_distribution_scale")


def without(params, names):
    """``params`` less the parameters ``names``."""
    return tuple((name, default) for name, default in params if name not in names)


def with_defaults(params, **defaults):
    """``params`` with the defaults of the parameters named in ``defaults`` replaced."""
    unknown = set(defaults).difference(name for name, _ in params)
    if unknown:  # a typo here would add no parameter and change no default
        raise ValueError(f"with_defaults: no parameters {sorted(unknown)} in the table")
    return tuple((name, defaults.get(name, default)) for name, default in params)


RANKER_PARAMS = ((("objective", "rank:ndcg"),) + BOOSTING_PARAMS[:N_POSITIONAL]
                 + RANKING_PARAMS + without(BOOSTING_PARAMS[N_POSITIONAL:], _NOT_RANKING))
RANKER_POSITIONAL = N_POSITIONAL + 1  # objective first, then the tree parameters
FOREST_PARAMS = with_defaults(without(BOOSTING_PARAMS, ("num_parallel_tree",)),
                              learning_rate=1.0, subsample=0.8, colsample_bynode=0.8,
                              reg_lambda=1e-5)


def estimator_init(params, n_positional):
    """An estimator's ``__init__`` taking ``params`` ((name, default) pairs, in signature
    order), the first ``n_positional`` of them by position or keyword and the rest by
    keyword only; it stores each argument, or its default, as the attribute of its name.

    Raises ``TypeError`` (naming the estimator class) for too many positional arguments,
    an unknown keyword or a parameter given twice, as Python does for a written-out
    signature.
    """
    names = [name for name, _ in params]
    defaults = dict(params)
    positional = names[:n_positional]

    def __init__(self, *args, **kwargs):
        cls = type(self).__name__
        if len(args) > n_positional:
            raise TypeError(f"{cls} takes at most {n_positional} positional arguments "
                            f"({positional[0]} to {positional[-1]}), got {len(args)}; pass "
                            "the others by keyword")
        values = dict(zip(positional, args))
        for name, value in kwargs.items():
            if name not in defaults:
                close = difflib.get_close_matches(name, names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise TypeError(f"{cls} got an unexpected keyword argument {name!r}{hint}")
            if name in values:
                raise TypeError(f"{cls} got multiple values for argument {name!r}")
            values[name] = value
        for name in names:  # as given: scikit-learn's clone checks they are the same objects
            setattr(self, name, values.get(name, defaults[name]))

    kinds = ([inspect.Parameter.POSITIONAL_OR_KEYWORD] * n_positional
             + [inspect.Parameter.KEYWORD_ONLY] * (len(names) - n_positional))
    __init__.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(name, kind, default=default)
           for (name, default), kind in zip(params, kinds)])
    __init__.__doc__ = ("Store the parameters as given (``fit`` checks them); the class "
                        "docstring says what they mean.")
    return __init__
