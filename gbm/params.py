"""Every training hyperparameter: its name, default, allowed values and XGBoost alias.

Parameters are validated here, once; the rest of the package trusts a validated dict.
Names follow XGBoost's learning API (``eta`` and friends are accepted as aliases).
"""
import numbers

import numpy as np

from .kernels.layout import AFT_DISTRIBUTIONS
from .metrics.names import SURVIVAL_METRICS, check_metric_name
from . import param_checks as checks
from .config import default_threads
from .param_checks import boolean as _bool, choice as _choice, integer as _int, optional as _optional
from .param_checks import real as _real

OBJECTIVES = ("reg:squarederror", "reg:absoluteerror", "reg:quantileerror", "reg:pseudohubererror",
              "count:poisson", "reg:gamma", "reg:tweedie", "binary:logistic", "multi:softprob",
              "multi:softmax", "rank:pairwise", "rank:ndcg",
              "reg:logistic", "binary:logitraw", "binary:hinge", "reg:squaredlogerror",
              "reg:expectileerror", "rank:map", "survival:cox",
              "survival:aft")
MULTICLASS = ("multi:softprob", "multi:softmax")
REGRESSION = ("reg:squarederror", "reg:absoluteerror", "reg:quantileerror",
              "reg:pseudohubererror", "count:poisson", "reg:gamma", "reg:tweedie",
              "reg:logistic", "reg:squaredlogerror", "reg:expectileerror")
RANKING = ("rank:pairwise", "rank:ndcg", "rank:map")
SURVIVAL = ("survival:cox", "survival:aft")
# multi-label classification: y of 0/1 of shape (n, k), one output per label (XGBoost 3.2
# takes all three)
MULTI_LABEL = ("binary:logistic", "binary:logitraw", "binary:hinge")
# the logistic losses, whose rows labelled 1 scale_pos_weight weighs (as XGBoost's)
POSITIVE_WEIGHTED = ("binary:logistic", "reg:logistic", "binary:logitraw")
PAIR_METHODS = ("topk", "mean")
GROW_POLICIES = ("depthwise", "lossguide")
DEVICES = ("cpu", "cuda")
TREE_METHODS = ("hist", "auto")  # XGBoost's "auto" is "hist" since 2.0
# Where and how fast a model is trained or used, or how talkative, not what it is: kept
# out of model files, so a file is the same whatever the hardware and thread count, and
# loads anywhere.
RUN_SETTINGS = ("n_jobs", "device", "tree_method", "verbosity", "validate_parameters")
# How the binned rows are stored (gbm.bins): never changes a model
BIN_LAYOUTS = ("auto", "dense", "sparse", "bundled")
RUN_SETTINGS += ("bin_layout",)
# XGBoost's settings of how its own code runs, accepted and without effect in gbm (see
# their SPEC entries), and disable_default_eval_metric (what is scored, not the model)
RUN_SETTINGS += ("max_cached_hist_node", "debug_synchronize", "updater",
                 "disable_default_eval_metric")
# Per-feature weights of the column sampling (XGBoost's DMatrix field): they shape the
# model but, as in XGBoost, belong to the data, and model files leave them out.
RUN_SETTINGS += ("feature_weights",)
# Parameters added after model file version 4: a file records them only when they differ
# from their default, so files of models that do not use them stay as they were.
OMITTED_AT_DEFAULT = ("scale_pos_weight", "num_target", "expectile_alpha",
                      "aft_loss_distribution", "aft_loss_distribution_scale")
# DART (booster="dart", gbm.tree.dart): written to model files only when set, like the above.
DART_PARAMS = ("rate_drop", "one_drop", "skip_drop", "sample_type", "normalize_type")
OMITTED_AT_DEFAULT += ("booster",) + DART_PARAMS
BOOSTERS = ("gbtree", "dart")
# XGBoost's multi_strategy (gbm.tree.vector_leaf): one tree per output group and round, or
# one tree per round whose leaves hold one value per output (vector leaves)
MULTI_STRATEGIES = ("one_output_per_tree", "multi_output_tree")
OMITTED_AT_DEFAULT += ("multi_strategy", "gradient_projection", "projection_dim")
# XGBoost's parameters that gbm takes at their defaults only (gbm.param_checks), and the
# bias norm that only lambdarank_unbiased reads
OMITTED_AT_DEFAULT += ("sampling_method", "process_type", "lambdarank_unbiased",
                       "lambdarank_bias_norm")


def _projection(name, value):
    """``gradient_projection``: True, False or "auto"."""
    if isinstance(value, str):
        if value != "auto":
            raise ValueError(f"{name} must be True, False or 'auto', got {value!r}")
        return value
    return _bool(name, value)


def _num_pair(name, value):
    if value is None:
        return None  # 32 for lambdarank_pair_method="topk", 1 for "mean" (XGBoost's defaults)
    return _int(1)(name, value)


def _n_jobs(name, value):
    if value is None:
        return None
    value = _int()(name, value)
    if value == 0:
        raise ValueError(f"{name} must be a positive thread count, -1 (all cores) or None, got 0")
    return value


def _eval_metric(name, value):
    if value is None:
        return None
    names = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else None
    if not names:
        raise TypeError(f"{name} must be a metric name or a non-empty list of them, got {value!r}")
    return [check_metric_name(v) for v in names]


def _quantile_alpha(name, value):
    """One quantile level or a non-empty list of them, each in (0, 1); kept as a list."""
    values = list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value]
    if not values:
        raise ValueError(f"{name} must be a number in (0, 1) or a non-empty list of them, got {value!r}")
    return [_real(0, 1, low_open=True, high_open=True)(name, v) for v in values]


def _expectile_alpha(name, value):
    """None, or one expectile level or a non-empty ascending list of them, each in [0, 1]
    (XGBoost's rules); kept as a list."""
    if value is None:
        return None  # required by reg:expectileerror, checked in validate_params
    values = list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value]
    if not values:
        raise ValueError(f"{name} must be a number in [0, 1] or a non-empty list of them, "
                         f"got {value!r}")
    values = [_real(0, 1)(name, v) for v in values]
    if values != sorted(values):
        raise ValueError(f"{name} must be in ascending order (as XGBoost requires), got {values}")
    return values


def _passthrough(name, value):
    # Checked against the data's features in gbm.tree.constraints.
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def _interaction_constraints(name, value):
    # The shape is checked here; the features against the data in gbm.tree.constraints.
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, (list, tuple)) or not all(isinstance(s, (list, tuple)) for s in value):
        raise ValueError(f"{name} must be a list of lists of features, got {value!r}")
    return [list(s) for s in value]


def _tree_method(name, value):
    if value in TREE_METHODS:
        return value
    if value in ("exact", "approx"):
        raise ValueError(f"{name}={value!r} is not implemented: gbm grows trees from "
                         "histograms only; use tree_method='hist' (or 'auto', the same)")
    if value == "gpu_hist":
        raise ValueError(f"{name}='gpu_hist' is XGBoost's old spelling; use "
                         "tree_method='hist' with device='cuda'")
    raise ValueError(f"{name} must be one of {list(TREE_METHODS)}, got {value!r}")


def _booster(name, value):
    if value in BOOSTERS:
        return value
    if value == "gblinear":
        raise ValueError(f"{name}='gblinear' is not a tree booster: gbm's linear models are "
                         "the estimators in gbm.linear (see docs/linear.md)")
    raise ValueError(f"{name} must be one of {list(BOOSTERS)}, got {value!r}")


def _seed(name, value):
    if value is None:
        return 0
    if hasattr(value, "randint") and not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be an integer seed; a RandomState is not accepted because "
            "gbm's random draws must not depend on a generator's hidden state"
        )
    return _int(0, 2**63 - 1)(name, value)


# name: (default, validator, doc)
SPEC = {
    "objective": ("reg:squarederror", _choice(OBJECTIVES), "learning task"),
    "num_class": (1, _int(1), "number of classes for multi:softprob and multi:softmax"),
    "tweedie_variance_power": (1.5, _real(1, 2, high_open=True), "power of reg:tweedie, in [1, 2)"),
    "quantile_alpha": (0.5, _quantile_alpha, "quantile level(s) of reg:quantileerror, each in (0, 1); "
                       "a list trains one output column per level"),
    "expectile_alpha": (None, _expectile_alpha, "expectile level(s) of reg:expectileerror "
                        "(required for it), each in [0, 1], ascending; a list trains one output "
                        "column per level"),
    # at least float32's smallest normal: (residual / huber_slope)^2 must stay finite
    "huber_slope": (1.0, _real(float(np.finfo(np.float32).tiny)),
                    "slope (delta) of reg:pseudohubererror, > 0"),
    "aft_loss_distribution": ("normal", _choice(AFT_DISTRIBUTIONS),
                              "survival:aft: the distribution of the log-time noise"),
    # at least float32's smallest normal: sigma^2 and sigma times a bound stay > 0
    "aft_loss_distribution_scale": (1.0, _real(float(np.finfo(np.float32).tiny)),
                                    "survival:aft: the scale sigma of that noise, > 0"),
    "learning_rate": (0.3, _real(0, None), "shrinkage of each tree's leaf values (0, as in "
                      "XGBoost: trees that add nothing)"),
    "max_depth": (6, _int(0), "deepest level a tree may grow; 0 = no limit (lossguide only)"),
    "max_leaves": (0, _int(0), "most leaves per tree; 0 = no limit"),
    "grow_policy": ("depthwise", _choice(GROW_POLICIES), "level by level, or best leaf first"),
    "min_child_weight": (1.0, _real(0), "least hessian sum a child must hold"),
    "reg_lambda": (1.0, _real(0), "L2 penalty on leaf values"),
    "reg_alpha": (0.0, _real(0), "L1 penalty on leaf values"),
    "gamma": (0.0, _real(0), "least loss reduction for a split"),
    "max_delta_step": (None, _optional(_real(0)), "largest absolute leaf value before shrinkage; 0 = no "
                       "cap; default 0, or 0.7 for count:poisson (as XGBoost)"),
    "subsample": (1.0, _real(0, 1, low_open=True), "share of rows drawn for each tree"),
    "colsample_bytree": (1.0, _real(0, 1, low_open=True), "share of features drawn for each tree"),
    "colsample_bylevel": (1.0, _real(0, 1, low_open=True), "share of the tree's features drawn for each level"),
    "colsample_bynode": (1.0, _real(0, 1, low_open=True), "share of the level's features drawn for each node"),
    "num_parallel_tree": (1, _int(1), "trees grown per round and output group from the same "
                          "gradients, each from its own row and column sample; > 1 with "
                          "learning_rate 1 and one round is a random forest"),
    "max_bin": (256, _int(2, 1024), "most value bins per numeric feature (one more holds missing "
                "values); above 256 the bins are stored as uint16"),
    "base_score": (None, checks.base_score, "initial prediction; None = estimated from the "
                   "labels; a list: one per output (XGBoost 3.2)"),
    "n_jobs": (None, _n_jobs, "CPU threads; None or -1 = all cores (None: the global "
               "nthread of gbm.set_config, when set)"),
    "random_state": (0, _seed, "seed of the binning sample and of row and column sampling"),
    "device": ("cpu", _choice(DEVICES), "where training runs"),
    "monotone_constraints": (None, _passthrough, "+1 / -1 / 0 per feature (see gbm.tree.constraints)"),
    "interaction_constraints": (None, _interaction_constraints,
                                "lists of features allowed to interact (see gbm.tree.constraints)"),
    "eval_metric": (None, _eval_metric, "metric(s) for eval sets; None = the objective's"),
    "lambdarank_pair_method": ("topk", _choice(PAIR_METHODS),
                               "rank:*: pairs among the model's top k, or k sampled per document"),
    "lambdarank_num_pair_per_sample": (None, _num_pair, "rank:*: k above; None = 32 for topk, "
                                       "1 for mean"),
    "ndcg_exp_gain": (True, _bool, "NDCG gain 2^label - 1 (True) or label (False)"),
    "lambdarank_normalization": (True, _bool, "rank:*: scale each query's lambdas (see docs)"),
    "lambdarank_score_normalization": (True, _bool,
                                       "rank:*: divide each pair's delta by its score gap + 0.01"),
    "bin_sample_size": (200_000, _int(1), "rows in the binning sample (hash-selected) above which quantiles are approximate"),
    "bin_layout": ("auto", _choice(BIN_LAYOUTS), "how the binned rows are stored: 'dense' "
                   "(every cell), 'sparse' (the non-missing entries, CSR), 'bundled' "
                   "(exactly exclusive features share columns) or 'auto' (by the share of "
                   "non-missing entries and the bundles' size); the model is the same"),
    "max_cat_to_onehot": (4, _int(1), "a categorical feature with fewer categories than this gets "
                          "one-hot splits (one category vs the rest), else partition splits"),
    "max_cat_threshold": (64, _int(1), "partition splits scan at most this many categories from "
                          "either end of the gradient order (see gbm.data.categorical)"),
    "scale_pos_weight": (1.0, _real(0, low_open=True),
                         "binary:logistic: weight of the positive rows' gradients (as XGBoost)"),
    "num_target": (1, _int(1), "regression targets (columns of y); each gets its own trees"),
    "multi_strategy": ("one_output_per_tree", _choice(MULTI_STRATEGIES),
                       "several outputs (classes, targets): one tree per output and round, "
                       "or 'multi_output_tree': one tree per round with a value per output "
                       "in each leaf"),
    "gradient_projection": ("auto", _projection,
                            "multi_output_tree: split search on a projection of the outputs' "
                            "gradients to projection_dim columns (leaf values from all of "
                            "them); 'auto': above 64 outputs"),
    "projection_dim": (16, _int(1), "multi_output_tree with gradient_projection: columns of "
                       "the projected gradients"),
    "tree_method": ("hist", _tree_method, "'hist' or 'auto' (the same); 'exact' and "
                    "'approx' are refused"),
    "sampling_method": ("uniform", checks.sampling_method, "how subsample draws rows: 'uniform' "
                        "(XGBoost's 'gradient_based' is refused)"),
    "feature_weights": (None, checks.feature_weights, "one weight >= 0 per feature: colsample_* "
                        "draw features in proportion to them (a DMatrix's feature_weights "
                        "too); a zero-weight feature only when no other is left to draw"),
    "updater": (None, checks.updater, "XGBoost's updater sequence: 'grow_quantile_histmaker' (or "
                "'grow_gpu_hist' with device='cuda'), optionally ',prune' / ',sync': "
                "gbm's hist growth either way"),
    "process_type": ("default", checks.process_type, "'default' only (XGBoost's 'update' is "
                     "refused)"),
    "max_cached_hist_node": (65536, _int(1), "XGBoost's cap on cached histograms: accepted, "
                             "no effect (gbm keeps a level's histograms)"),
    "debug_synchronize": (False, _bool, "XGBoost's GPU debugging switch: accepted, no "
                          "effect"),
    "disable_default_eval_metric": (False, _bool, "True: without eval_metric, eval sets are "
                                    "scored by custom_metric only (not the objective's "
                                    "metric)"),
    "lambdarank_unbiased": (False, checks.lambdarank_unbiased, "False only (XGBoost's position-debiased "
                            "LambdaMART is refused)"),
    "lambdarank_bias_norm": (1.0, _real(0), "XGBoost's p-norm of the position-bias "
                             "regulariser: used only with lambdarank_unbiased"),
    "verbosity": (1, _int(0, 3), "0 silent, 1 warnings, 2 info, 3 debug (as XGBoost)"),
    "validate_parameters": (True, _bool, "False: unknown parameter names are ignored "
                            "instead of raising"),
    # DART (Rashmi & Gilad-Bachrach 2015): XGBoost's names, defaults and ranges
    "booster": ("gbtree", _booster, "'gbtree', or 'dart': trees dropped out while "
                "training, each tree weighted (see gbm.tree.dart)"),
    "rate_drop": (0.0, _real(0, 1), "dart: chance of each earlier tree to be dropped in a round"),
    "one_drop": (False, _bool, "dart: drop at least one tree in every round that drops"),
    "skip_drop": (0.0, _real(0, 1), "dart: chance of a round without dropout"),
    "sample_type": ("uniform", _choice(("uniform", "weighted")),
                    "dart: trees dropped alike, or in proportion to their weights"),
    "normalize_type": ("tree", _choice(("tree", "forest")),
                       "dart: new trees weighted as one dropped tree, or as all of them"),
}

ALIASES = {
    "eta": "learning_rate",
    "lambda": "reg_lambda",
    "alpha": "reg_alpha",
    "min_split_loss": "gamma",
    "seed": "random_state",
    "nthread": "n_jobs",
    "max_bins": "max_bin",
}


def with_default(params, name, value):
    """``params`` with ``name`` set to ``value`` unless the caller gave it a value (not None)
    under its name or one of its aliases (``nthread`` for ``n_jobs``); a None under an
    alias is dropped, so the result names the parameter once."""
    keys = [key for key in params if ALIASES.get(key, key) == name]
    if any(params[key] is not None for key in keys):
        return dict(params)
    out = {key: v for key, v in params.items() if key not in keys}
    out[name] = value
    return out


def params_dict(params):
    """``params`` as a dict: None is ``{}``, a dict is itself, and XGBoost's list of
    ``(name, value)`` pairs is read in order, a name given again replacing its value except
    ``eval_metric``, whose values accumulate (as XGBoost sets them one by one)."""
    if params is None:
        return {}
    if isinstance(params, dict):
        return params
    if not isinstance(params, (list, tuple)):
        raise TypeError(f"params must be a dict or a list of (name, value) pairs, got "
                        f"{type(params).__name__}")
    out = {}
    for i, pair in enumerate(params):
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[0], str)):
            raise TypeError(f"params[{i}] must be a (name, value) pair, got {pair!r}")
        key, value = pair
        if key == "eval_metric" and out.get(key) is not None and value is not None:
            out[key] = _as_list(out[key]) + _as_list(value)
        else:
            out[key] = value
    return out


def _as_list(value):
    return [value] if isinstance(value, str) else list(value)


def validate_params(params):
    """Return a full, validated copy of ``params`` with defaults filled in.

    Parameters
    ----------
    params : dict, or a list of (name, value) pairs (``params_dict``)
        User parameters, XGBoost names or aliases; numbers may be given as text ("0.1").

    Raises
    ------
    ValueError, TypeError
        Unknown name, a name given twice through an alias, or a value out of range.
    """
    params = params_dict(params)
    out = {}
    lenient = "validate_parameters" in params and not _bool("validate_parameters",
                                                            params["validate_parameters"])
    for key, value in params.items():
        name = ALIASES.get(key, key)
        if name not in SPEC and lenient:
            continue  # XGBoost's validate_parameters=False: unknown names pass unchecked
        if name not in SPEC:
            raise ValueError(f"unknown parameter {key!r}; known parameters: {sorted(SPEC)}")
        if name in out:
            raise ValueError(f"parameter {name!r} given twice (as {key!r} and under another alias)")
        out[name] = SPEC[name][1](name, value)
    for name, (default, check, _) in SPEC.items():
        if name not in out:
            out[name] = check(name, default) if default is not None else None
    if out["n_jobs"] is None:  # the global nthread (gbm.config), 0 there: all cores
        out["n_jobs"] = default_threads()
    if out["lambdarank_num_pair_per_sample"] is None:
        out["lambdarank_num_pair_per_sample"] = 32 if out["lambdarank_pair_method"] == "topk" else 1
    if out["max_delta_step"] is None:
        out["max_delta_step"] = 0.7 if out["objective"] == "count:poisson" else 0.0
    if out["objective"] in MULTICLASS:
        if out["num_class"] < 2:
            raise ValueError(f"num_class must be >= 2 for objective={out['objective']!r}")
    elif "num_class" in params and out["num_class"] != 1:
        raise ValueError(f"num_class is only used with multi:softprob and multi:softmax, got "
                         f"num_class={out['num_class']} with objective={out['objective']!r}")
    if out["grow_policy"] == "depthwise" and out["max_depth"] == 0 and out["max_leaves"] == 0:
        raise ValueError("max_depth=0 (no depth limit) needs grow_policy='lossguide' or max_leaves > 0")
    if out["max_leaves"] == 1:
        raise ValueError("max_leaves must be 0 (no limit) or >= 2, got 1")
    if out["scale_pos_weight"] != 1.0 and out["objective"] not in POSITIVE_WEIGHTED:
        raise ValueError(f"scale_pos_weight applies to {', '.join(POSITIVE_WEIGHTED)} only, "
                         f"got scale_pos_weight={out['scale_pos_weight']} with "
                         f"objective={out['objective']!r}")
    if out["num_target"] > 1 and out["objective"] not in REGRESSION + MULTI_LABEL:
        raise ValueError(f"num_target > 1 (a y with several columns) needs a regression "
                         f"objective {list(REGRESSION)} or {list(MULTI_LABEL)}, got "
                         f"objective={out['objective']!r}")
    _check_survival_metrics(out)
    _check_dart(out)
    if (out["updater"] or "").startswith("grow_gpu_hist") and out["device"] != "cuda":
        raise ValueError(f"updater={out['updater']!r} grows trees on a GPU: set "
                         "device='cuda' (or use 'grow_quantile_histmaker')")
    if out["objective"] in ("binary:logistic", "reg:logistic") and out["base_score"] is not None:
        scores = out["base_score"] if isinstance(out["base_score"], list) else [out["base_score"]]
        if not all(0.0 < s < 1.0 for s in scores):
            raise ValueError(f"base_score must be in (0, 1) for {out['objective']}, got "
                             f"{out['base_score']}")
    if out["objective"] == "reg:expectileerror" and out["expectile_alpha"] is None:
        raise ValueError("objective='reg:expectileerror' needs expectile_alpha: a level in "
                         "[0, 1] or an ascending list of them (XGBoost has no default either)")
    return out


def _check_survival_metrics(p):
    """The survival metrics only with their objective (they read its labels: Cox's signed
    times, AFT's intervals), and survival:aft only with them (its rows have no single
    label for the others to read)."""
    metrics = p["eval_metric"] or []
    aft = p["objective"] == "survival:aft"
    for name in metrics:
        needs = SURVIVAL_METRICS.get(name)
        if needs is not None and needs != p["objective"]:
            raise ValueError(f"eval_metric {name!r} needs objective={needs!r} (it reads its "
                             f"labels), got objective={p['objective']!r}")
        if aft and needs is None:
            raise ValueError(f"eval_metric {name!r} needs one label per row; survival:aft's "
                             "rows have intervals: use 'aft-nloglik' or "
                             "'interval-regression-accuracy'")


def _check_dart(out):
    """Dropout parameters set away from their defaults need ``booster="dart"`` (XGBoost
    up to 3.2 ignores them with ``gbtree``, and from 3.3 drops trees with ``gbtree`` too:
    gbm asks for the booster by name rather than guess)."""
    if out["booster"] == "dart":
        return
    for name in DART_PARAMS:
        if out[name] != SPEC[name][0]:
            raise ValueError(f"{name}={out[name]!r} applies to booster='dart' only, got "
                             f"booster={out['booster']!r}; set booster='dart' to train with "
                             "dropout")
