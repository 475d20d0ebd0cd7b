"""The estimators' constructor parameters: their names and defaults, written out by hand,
positional calls, and clear errors for what a constructor cannot take."""
import math

import pytest

from gbm.sklearn import GBMClassifier, GBMRanker, GBMRegressor, GBMRFClassifier, GBMRFRegressor

# GBMRegressor's and GBMClassifier's parameters and defaults (XGBoost's), written out by
# hand: a change to any of them shows here.
BOOSTING = {
    "base_score": None, "callbacks": None, "categorical_features": None,
    "colsample_bylevel": 1.0, "colsample_bynode": 1.0, "colsample_bytree": 1.0,
    "device": "cpu", "early_stopping_rounds": None, "enable_categorical": False,
    "eval_metric": None, "expectile_alpha": None, "gamma": 0.0, "grow_policy": "depthwise",
    "huber_slope": None, "importance_type": None, "interaction_constraints": None, "learning_rate": 0.3,
    "max_bin": 256, "max_cat_threshold": 64, "max_cat_to_onehot": 4, "max_delta_step": None,
    "max_depth": 6, "max_leaves": 0, "min_child_weight": 1.0, "missing": math.nan,
    "monotone_constraints": None, "n_estimators": 100, "n_jobs": None,
    "num_parallel_tree": 1, "objective": None, "quantile_alpha": None, "random_state": None,
    "reg_alpha": 0.0, "reg_lambda": 1.0, "scale_pos_weight": None, "subsample": 1.0,
    "tree_method": "hist", "tweedie_variance_power": None, "validate_parameters": None,
    "verbosity": None, "aft_loss_distribution": None, "aft_loss_distribution_scale": None,
    # DART (booster="dart"): None = XGBoost's defaults
    "booster": None, "rate_drop": None, "one_drop": None, "skip_drop": None,
    "sample_type": None, "normalize_type": None,
    # several outputs (multi_strategy="multi_output_tree"): None = XGBoost's defaults
    "multi_strategy": None, "gradient_projection": None, "projection_dim": None,
}
# GBMRanker: its own objective and LambdaMART's parameters, none of the pointwise
# objectives' parameters.
RANKER = dict({k: v for k, v in BOOSTING.items()
               if k not in ("huber_slope", "quantile_alpha", "scale_pos_weight",
                            "tweedie_variance_power", "expectile_alpha",
                            "aft_loss_distribution", "aft_loss_distribution_scale")},
              objective="rank:ndcg", lambdarank_pair_method="topk",
              lambdarank_num_pair_per_sample=None, ndcg_exp_gain=True,
              lambdarank_normalization=True, lambdarank_score_normalization=True)
# The random forests: XGBRF*'s defaults; num_parallel_tree is n_estimators, not a parameter.
FOREST = dict({k: v for k, v in BOOSTING.items() if k != "num_parallel_tree"},
              learning_rate=1.0, subsample=0.8, colsample_bynode=0.8, reg_lambda=1e-5)
DASK = {"client": None, "checkpoint_dir": None, "max_recoveries": 3,
        "external_memory": False, "cache_dir": None}

LOCAL = [(GBMRegressor, BOOSTING), (GBMClassifier, BOOSTING), (GBMRanker, RANKER),
         (GBMRFRegressor, FOREST), (GBMRFClassifier, FOREST)]


def _dask_estimators():
    pytest.importorskip("distributed")
    import gbm.dask

    return [(gbm.dask.DaskGBMRegressor, dict(BOOSTING, **DASK)),
            (gbm.dask.DaskGBMClassifier, dict(BOOSTING, **DASK)),
            (gbm.dask.DaskGBMRanker, dict(RANKER, **DASK))]


def _assert_defaults(cls, expected):
    got = cls().get_params()
    assert sorted(got) == sorted(expected), cls.__name__
    for name, value in expected.items():
        # repr: 1.0 and 1 differ, and NaN equals NaN
        assert repr(got[name]) == repr(value), f"{cls.__name__}.{name}"


@pytest.mark.parametrize("cls, expected", LOCAL, ids=lambda v: getattr(v, "__name__", ""))
def test_get_params_names_and_defaults(cls, expected):
    _assert_defaults(cls, expected)


def test_dask_get_params_names_and_defaults():
    for cls, expected in _dask_estimators():
        _assert_defaults(cls, expected)


def test_positional_arguments_in_their_order():
    est = GBMRegressor(50, 0.1, 4)
    assert (est.n_estimators, est.learning_rate, est.max_depth) == (50, 0.1, 4)
    assert GBMClassifier(7).n_estimators == 7
    ranker = GBMRanker("rank:pairwise", 20, 0.5)
    assert (ranker.objective, ranker.n_estimators, ranker.learning_rate) == (
        "rank:pairwise", 20, 0.5)
    forest = GBMRFRegressor(30, 0.5)
    assert (forest.n_estimators, forest.learning_rate, forest.num_parallel_tree) == (30, 0.5, 30)
    # the tree parameters keep their places, up to monotone_constraints
    names = ["n_estimators", "learning_rate", "max_depth", "max_leaves", "grow_policy",
             "min_child_weight", "reg_lambda", "reg_alpha", "gamma", "max_delta_step",
             "subsample", "colsample_bytree", "colsample_bylevel", "colsample_bynode",
             "max_bin", "base_score", "n_jobs", "random_state", "device", "eval_metric",
             "early_stopping_rounds", "interaction_constraints", "monotone_constraints"]
    values = list(range(len(names)))
    for cls, leading in ((GBMRegressor, []), (GBMClassifier, []), (GBMRFRegressor, []),
                         (GBMRFClassifier, []), (GBMRanker, ["rank:ndcg"])):
        params = cls(*leading, *values).get_params()
        assert [params[n] for n in names] == values, cls.__name__


@pytest.mark.parametrize("cls", [c for c, _ in LOCAL], ids=lambda c: c.__name__)
def test_unknown_keyword_is_a_type_error_naming_it(cls):
    with pytest.raises(TypeError, match="max_dpeth"):
        cls(max_dpeth=3)


@pytest.mark.parametrize("cls, n", [(GBMRegressor, 23), (GBMRFClassifier, 23), (GBMRanker, 24)],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_the_other_parameters_are_keyword_only(cls, n):
    # their positions differed between the estimators: by position they would go astray
    with pytest.raises(TypeError, match=rf"{cls.__name__} takes at most {n} positional "
                                        r"arguments .* got 25; pass the others by keyword"):
        cls(*range(25))
    with pytest.raises(TypeError, match=f"{cls.__name__} got multiple values for argument "
                                        "'n_estimators'"):
        cls(*(["rank:ndcg"] if cls is GBMRanker else []), 5, n_estimators=6)
    assert cls(missing=0.0, callbacks=[]).missing == 0.0


def test_unknown_keyword_suggests_the_parameter_meant():
    with pytest.raises(TypeError, match="GBMRegressor got an unexpected keyword argument "
                                        "'max_dpeth' \\(did you mean 'max_depth'\\?\\)"):
        GBMRegressor(max_dpeth=3)
    with pytest.raises(TypeError, match="GBMRanker got an unexpected keyword argument "
                                        "'quantile_alpha'"):
        GBMRanker(quantile_alpha=0.5)  # a pointwise objective's parameter
    with pytest.raises(TypeError, match="GBMRFRegressor got an unexpected keyword argument "
                                        "'num_parallel_tree'"):
        GBMRFRegressor(num_parallel_tree=3)  # a forest's is n_estimators


def test_scikit_learn_reads_the_declared_signature():
    from sklearn.base import clone

    est = GBMRanker(n_estimators=3, lambdarank_pair_method="mean", missing=-1.0)
    copy = clone(est)
    assert copy.get_params() == est.get_params() and copy is not est
    copy.set_params(ndcg_exp_gain=False, learning_rate=0.5)
    assert (copy.ndcg_exp_gain, copy.learning_rate) == (False, 0.5)
    with pytest.raises(ValueError, match="Invalid parameter 'quantile_alpha'"):
        copy.set_params(quantile_alpha=0.5)
    assert "lambdarank_pair_method='mean'" in repr(est)  # repr lists what differs


def test_dask_twins_take_the_local_arguments():
    for cls, _ in _dask_estimators():
        leading = ["rank:ndcg"] if "Ranker" in cls.__name__ else []
        est = cls(*leading, 12, client=None, checkpoint_dir="ck", max_depth=2)
        assert (est.n_estimators, est.max_depth, est.checkpoint_dir) == (12, 2, "ck")
        with pytest.raises(TypeError, match=f"{cls.__name__} got an unexpected keyword "
                                            "argument 'max_dpeth'"):
            cls(max_dpeth=3)
