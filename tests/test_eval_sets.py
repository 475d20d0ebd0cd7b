"""gbm.data.eval_sets: every form of eval set becomes one EvalSpec, and the forms train
the same model and scores."""
import numpy as np
import pytest

import gbm
from gbm.data.eval_sets import EvalSpec, eval_specs, fit_eval_specs

rng = np.random.default_rng(0)
X = rng.normal(size=(600, 4)).astype(np.float32)
y = X[:, 0] - X[:, 1] ** 2 + rng.normal(size=600)
w = rng.uniform(0.5, 2.0, size=600)
m = rng.normal(size=600)


def test_every_train_form_gives_its_spec():
    d = gbm.DMatrix(X, label=y, weight=w, base_margin=m)
    specs = eval_specs([(X, y, "a"), (X, y, w, "b"), (d, "c"),
                        {"X": X, "y": y, "name": "d", "base_margin": m, "row_ids": np.arange(600)},
                        EvalSpec("e", X, y)])
    assert [s.name for s in specs] == list("abcde")
    assert specs[0].sample_weight is None and specs[1].sample_weight is w
    assert specs[2].X is d.data and np.array_equal(specs[2].base_margin, m)
    assert np.array_equal(specs[3].row_ids, np.arange(600))
    assert eval_specs(None) == []


@pytest.mark.parametrize("evals, error, message", [
    ([(X, y)], ValueError, r"evals\[0\] has 2 items"),
    ([X], ValueError, r"evals\[0\] is a ndarray"),
    ([{"X": X, "y": y}], ValueError, r"missing keys \['name'\]"),
    ([{"X": X, "y": y, "name": "v", "weights": w}], ValueError, r"unknown keys \['weights'\]"),
    ((EvalSpec("v", X, y)), TypeError, "a single EvalSpec; put it in a list"),
    ([(gbm.DMatrix(X), "v")], ValueError, "the DMatrix has no labels"),
])
def test_bad_train_forms_are_named(evals, error, message):
    with pytest.raises(error, match=message):
        eval_specs(evals)


def test_estimator_form_names_the_sets_and_takes_one_entry_per_set():
    specs = fit_eval_specs([(X, y), (X[:10], y[:10])], sample_weight_eval_set=[w, None],
                           base_margin_eval_set=[None, m[:10]])
    assert [s.name for s in specs] == ["validation_0", "validation_1"]
    assert specs[0].sample_weight is w and specs[1].sample_weight is None
    assert specs[0].base_margin is None and specs[1].base_margin is not None
    seen = fit_eval_specs([(X, y)], prepare=lambda s: EvalSpec(s.name + "!", s.X, s.y))
    assert seen[0].name == "validation_0!"
    assert fit_eval_specs(None) == []


@pytest.mark.parametrize("kwargs, message", [
    ({"eval_set": None, "sample_weight_eval_set": [w]}, "sample_weight_eval_set is given but eval_set is not"),
    ({"eval_set": None, "eval_qid": [w]}, "eval_qid is given but eval_set is not"),
    ({"eval_set": [(X, y)], "base_margin_eval_set": [m, m]}, "base_margin_eval_set has 2 entries but eval_set has 1"),
    ({"eval_set": [(X, y, w)]}, r"eval_set\[0\] must be a pair \(X, y\)"),
])
def test_bad_estimator_forms_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        fit_eval_specs(**kwargs)


def test_the_forms_give_the_same_scores():
    params = {"max_depth": 3, "eval_metric": ["rmse", "mae"]}
    d = gbm.DMatrix(X[400:], label=y[400:], weight=w[400:], base_margin=m[400:])
    forms = [[(d, "v")],
             [{"X": X[400:], "y": y[400:], "name": "v", "sample_weight": w[400:],
               "base_margin": m[400:]}],
             [EvalSpec("v", X[400:], y[400:], w[400:], base_margin=m[400:])]]
    results = [gbm.train(params, X[:400], y[:400], 5, evals=e).evals_result for e in forms]
    assert results[0] == results[1] == results[2]
    reg = gbm.GBMRegressor(n_estimators=5, max_depth=3, eval_metric=["rmse", "mae"])
    reg.fit(X[:400], y[:400], eval_set=[(X[400:], y[400:])], sample_weight_eval_set=[w[400:]],
            base_margin_eval_set=[m[400:]])
    assert reg.evals_result()["validation_0"] == results[0]["v"]


def test_two_eval_sets_of_one_name_are_refused():
    with pytest.raises(ValueError, match="each needs a name of its own"):
        gbm.train({}, X, y, 2, evals=[(X, y, "v"), (X[:100], y[:100], "v")])
