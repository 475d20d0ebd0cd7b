"""``Booster.update`` and ``Booster.boost``: training round by round, as XGBoost's, gives
the model ``gbm.train`` gives (the oracle: the same model file, byte for byte)."""
import gc
import json
import pickle
import warnings

import numpy as np
import pytest

import gbm
from gbm.objectives import get_objective
from gbm.params import validate_params

rng = np.random.default_rng(7)
X = rng.normal(size=(400, 6)).astype(np.float32)
W = rng.uniform(0.5, 2.0, 400)
LABELS = {"reg:squarederror": X[:, 0] + 0.3 * rng.normal(size=400),
          "binary:logistic": (X[:, 1] + 0.5 * rng.normal(size=400) > 0).astype(float),
          "multi:softprob": rng.integers(0, 3, 400).astype(float)}
CASES = [{"objective": "reg:squarederror"},
         {"objective": "binary:logistic", "subsample": 0.7, "colsample_bynode": 0.6},
         {"objective": "multi:softprob", "num_class": 3}]


def _params(case):
    return {"max_depth": 3, "learning_rate": 0.3, **case}


def _dmatrix(case, weighted=False):
    return gbm.DMatrix(X, label=LABELS[case["objective"]], weight=W if weighted else None)


def _raw(booster):
    return bytes(booster.save_raw("json"))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["objective"])
def test_n_updates_are_train_of_n_rounds(case):
    params, d = _params(case), _dmatrix(case, weighted=True)
    booster = gbm.Booster(params, [d])
    for i in range(4):
        booster.update(d, i)
    assert booster.num_boosted_rounds() == 4
    assert _raw(booster) == _raw(gbm.train(params, d, 4))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["objective"])
def test_boost_with_the_objectives_gradients_is_train(case):
    params, d = _params(case), _dmatrix(case, weighted=True)
    objective = get_objective(validate_params(params))
    booster = gbm.Booster(params, [d])
    for i in range(3):
        if booster.num_boosted_rounds() == 0:  # the first round: from the base margin
            booster.update(d, i)
            continue
        margin = booster.predict(d, output_margin=True).reshape(400, -1)
        grad, hess = objective.gradients(margin, LABELS[case["objective"]], W)
        shape = (400,) if objective.n_groups == 1 else (400, objective.n_groups)
        booster.boost(d, i, grad.reshape(shape), hess.reshape(shape))
    assert _raw(booster) == _raw(gbm.train(params, d, 3))


def test_boost_from_the_first_round_and_flat_multiclass_gradients():
    case = CASES[2]
    params, d = _params(case), _dmatrix(case)
    objective = get_objective(validate_params(params))
    reference = gbm.train(params, d, 2)
    for flat in (False, True):
        booster = gbm.Booster(params, [d])
        for i in range(2):
            margin = np.tile(reference.base_margin, (400, 1)) if i == 0 else \
                booster.predict(d, output_margin=True)
            grad, hess = objective.gradients(margin, LABELS[case["objective"]], np.ones(400))
            if flat:  # XGBoost's older layout: taken row by row, with its FutureWarning
                with pytest.warns(FutureWarning, match="n_groups"):
                    booster.boost(d, i, grad=grad.ravel(), hess=hess.ravel())
            else:
                booster.boost(d, i, grad=grad, hess=hess)
        assert _raw(booster) == _raw(reference)


def _squared_error_xgboost_form(predt, dtrain):
    return predt - dtrain.get_label(), np.ones_like(predt)


def _squared_error_gbm_form(margin, y, w):
    return (margin - y) * w, w.copy()


@pytest.mark.parametrize("fobj", [_squared_error_xgboost_form, _squared_error_gbm_form])
def test_update_with_a_custom_objective_is_train_with_obj(fobj):
    case = CASES[0]
    params, d = _params(case), _dmatrix(case)
    booster = gbm.Booster(params, [d])
    for i in range(3):
        booster.update(d, i, fobj)
    assert _raw(booster) == _raw(gbm.train(params, d, 3, obj=fobj))
    via_boost = gbm.Booster(params, [d])
    for i in range(3):
        via_boost.boost(d, i, fobj=fobj)
    assert _raw(via_boost) == _raw(booster)


@pytest.mark.parametrize("extra", [
    {"booster": "dart", "rate_drop": 0.3, "skip_drop": 0.0},
    {"multi_strategy": "multi_output_tree", "num_target": 2},
    {"multi_strategy": "multi_output_tree"},
], ids=["dart", "vector_leaf", "vector_leaf_targets_from_y"])
def test_dart_and_vector_leaf_updates_are_train(extra):
    params = {"max_depth": 3, "objective": "reg:squarederror", **extra}
    y = LABELS["reg:squarederror"]
    if "multi_strategy" in extra:
        y = np.column_stack([y, X[:, 2]])
    d = gbm.DMatrix(X, label=y)
    booster = gbm.Booster(params, [d])
    for i in range(4):
        booster.update(d, i)
    expected = gbm.train(params, d, 4)
    if "num_target" in extra or "multi_strategy" not in extra:
        assert _raw(booster) == _raw(expected)
    else:  # num_target taken from y: the same model, its parameters written in another
        # order (the model file keeps the order the parameters were given in)
        assert json.loads(_raw(booster)) == json.loads(_raw(expected))
        assert booster.params["num_target"] == 2


@pytest.mark.parametrize("objective", ["rank:ndcg", "reg:absoluteerror"])
def test_ranking_and_leaf_refresh_updates_are_train(objective):
    """Query groups (the DMatrix's qid) and leaves refreshed to residual quantiles."""
    y = rng.integers(0, 4, 400).astype(float) if objective == "rank:ndcg" else \
        LABELS["reg:squarederror"]
    d = gbm.DMatrix(X, label=y, qid=np.repeat(np.arange(40), 10))
    params = {"objective": objective, "max_depth": 3}
    booster = gbm.Booster(params, [d])
    for i in range(3):
        booster.update(d, i)
    assert _raw(booster) == _raw(gbm.train(params, d, 3))


def test_updates_on_a_quantile_dmatrix_are_train():
    params = _params(CASES[0])
    q = gbm.QuantileDMatrix(X, label=LABELS["reg:squarederror"])
    booster = gbm.train(params, q, 2)  # continued on the binned rows
    for i in (2, 3):
        booster.update(q, i)
    assert _raw(booster) == _raw(gbm.train(params, q, 4))


def test_updates_continue_a_trained_or_loaded_model(tmp_path):
    case = CASES[1]
    params, d = _params(case), _dmatrix(case)
    once = gbm.train(params, d, 5)
    first = gbm.train(params, d, 3)
    first.save_model(tmp_path / "three.json")
    for booster in (first, gbm.Booster(model_file=tmp_path / "three.json")):
        for i in (3, 4):
            booster.update(d, i)
        assert _raw(booster) == _raw(once)


def test_the_session_is_kept_and_freed_with_the_dmatrix():
    case = CASES[0]
    params, d = _params(case), _dmatrix(case)
    booster = gbm.Booster(params, [d])
    booster.update(d, 0)
    session = booster._session
    booster.update(d, 1)
    assert booster._session is session  # the binned rows and margins kept: not re-binned
    assert session.fit is not None
    # pickles and copies hold the model only
    assert len(pickle.dumps(booster)) == len(pickle.dumps(gbm.train(params, d, 2)))
    assert booster.copy()._session is None
    assert pickle.loads(pickle.dumps(booster))._session is None
    del d
    gc.collect()
    assert session.fit is None  # released with its DMatrix


def test_a_booster_let_go_frees_its_session_at_once():
    """No reference cycle keeps the fit's bins alive until a garbage collection."""
    import weakref

    d = _dmatrix(CASES[0])
    booster = gbm.Booster(_params(CASES[0]), [d])
    booster.update(d, 0)
    session = weakref.ref(booster._session)
    gc.disable()
    try:
        del booster
        assert session() is None
    finally:
        gc.enable()


def test_changes_between_updates_start_from_the_current_model():
    """A parameter set, another DMatrix, or a field set again: the next round continues
    the model as train's init_model does."""
    case = CASES[0]
    params, d = _params(case), _dmatrix(case)
    other = gbm.DMatrix(X[::-1].copy(), label=LABELS["reg:squarederror"][::-1].copy())
    booster = gbm.Booster(params, [d])
    for i in range(2):
        booster.update(d, i)
    booster.set_param("learning_rate", 0.1)
    booster.update(d, 2)
    booster.update(other, 3)
    expected = gbm.train(params, d, 2)
    expected = gbm.train(dict(params, learning_rate=0.1), d, 1, init_model=expected)
    expected = gbm.train(dict(params, learning_rate=0.1), other, 1, init_model=expected)
    assert _raw(booster) == _raw(expected)
    y_new = LABELS["reg:squarederror"] * 2.0
    other.set_label(y_new)
    booster.update(other, 4)
    expected = gbm.train(dict(params, learning_rate=0.1), gbm.DMatrix(
        X[::-1].copy(), label=y_new), 1, init_model=expected)
    assert _raw(booster) == _raw(expected)


def test_an_empty_booster_trains_with_default_parameters():
    d = _dmatrix(CASES[0])
    booster = gbm.Booster()
    booster.update(d, 0)
    assert _raw(booster) == _raw(gbm.train({}, d, 1))


def test_bad_arguments_are_refused_and_the_model_is_kept():
    case = CASES[0]
    params, d = _params(case), _dmatrix(case)
    booster = gbm.Booster(params, [d])
    booster.update(d, 0)
    with pytest.raises(TypeError, match="Invalid training matrix"):
        booster.update(X, 1)
    with pytest.raises(ValueError, match="iteration must be an int >= 0"):
        booster.update(d, -1)
    with pytest.raises(TypeError, match="iteration must be an int >= 0, got 1.5"):
        booster.update(d, 1.5)
    with pytest.raises(ValueError, match="not both"):
        booster.boost(d, 1, np.zeros(400), np.ones(400), fobj=_squared_error_gbm_form)
    with pytest.raises(ValueError, match="both grad and hess; hess is None"):
        booster.boost(d, 1, grad=np.zeros(400))
    with pytest.raises(ValueError, match="grad=, hess="):
        booster.boost(d, 1)
    with pytest.raises(ValueError, match=r"grad has shape \(399,\); expected \(400,\)"):
        booster.boost(d, 1, np.zeros(399), np.ones(399))
    with pytest.raises(ValueError, match="hess holds NaN"):
        booster.boost(d, 1, np.zeros(400), np.full(400, np.nan))
    with pytest.raises(ValueError, match="gradient has shape"):  # the user's function's
        booster.update(d, 1, lambda predt, dtrain: (np.zeros(3), np.ones(3)))
    with pytest.raises(ValueError, match="no labels"):
        booster.update(gbm.DMatrix(X), 1)
    assert booster.num_boosted_rounds() == 1
    booster.update(d, 1)
    assert _raw(booster) == _raw(gbm.train(params, d, 2))


def test_a_round_that_fails_half_way_adds_no_tree():
    """The third output group's tree overflows after the first two were added: the
    booster takes them back, and the next round starts afresh from its model."""
    case = CASES[2]
    params = dict(_params(case), learning_rate=1e38, reg_lambda=0, min_child_weight=0)
    d = _dmatrix(case)
    booster = gbm.Booster(params, [d])
    grad, hess = np.full((400, 3), 1e-3), np.ones((400, 3))
    grad[:, 2], hess[:, 2] = 1e6, 1e-300
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(FloatingPointError, match="tree 2 has NaN or infinite"):
            booster.boost(d, 0, grad, hess)
    assert booster.trees == [] and booster.tree_group == [] and booster.iteration_indptr == [0]
    assert booster._session.fit is None  # its margins may be part-updated: closed
    good = dict(params, learning_rate=0.3)
    booster.set_param(good)
    booster.update(d, 0)
    assert _raw(booster) == _raw(gbm.train(good, d, 1))

