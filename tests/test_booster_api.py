"""XGBoost's Booster methods on gbm's Booster: attributes, feature names and types,
num_features, set_param, save_config / load_config, XGBoost's constructor forms and
slicing. XGBoost (installed) is the oracle where the two can be compared."""
import json

import numpy as np
import pytest

import gbm
from gbm.io import gbm_json


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, X[:, 0] - 2 * X[:, 1] + rng.normal(scale=0.1, size=n)


@pytest.fixture
def booster():
    X, y = _data()
    return gbm.train({"max_depth": 3}, X, y, 5)


def test_attributes_are_strings_saved_only_when_set(booster, tmp_path):
    assert booster.attributes() == {} and booster.attr("foo") is None
    assert "attributes" not in gbm_json.to_dict(booster)  # files as before without them
    booster.set_attr(foo="bar", n=3)
    assert booster.attributes() == {"foo": "bar", "n": "3"} and booster.attr("n") == "3"
    for name in ("a.json", "a.ubj"):
        booster.save_model(tmp_path / name)
        assert gbm.Booster(model_file=tmp_path / name).attributes() == {"foo": "bar", "n": "3"}
    booster.set_attr(foo=None)
    assert booster.attributes() == {"n": "3"}


def test_best_iteration_and_score_are_attributes_too(booster):
    """XGBoost keeps them as attributes; gbm in its fields, which attr() reads and
    set_attr() writes (checked)."""
    booster.set_attr(best_iteration=2, best_score="0.25")
    assert booster.best_iteration == 2 and booster.best_score == 0.25
    assert booster.attributes() == {"best_iteration": "2", "best_score": "0.25"}
    with pytest.raises(ValueError, match=r"best_iteration must be a round of the model, in "
                                         r"\[0, 5\), got 9"):
        booster.set_attr(best_iteration=9)
    with pytest.raises(ValueError, match="best_score must be a number"):
        booster.set_attr(best_score="high")
    booster.set_attr(best_iteration=None, best_score=None)
    assert booster.attributes() == {} and booster.best_iteration is None


def test_feature_names_and_types(booster, tmp_path):
    X, y = _data()
    assert booster.num_features() == 4 and booster.feature_types is None
    booster.feature_names = ["a", "b", "c", "d"]
    booster.feature_types = ["q", "int", "float", "i"]
    for name in ("f.json", "f.ubj"):
        booster.save_model(tmp_path / name)
        back = gbm.Booster(model_file=tmp_path / name)
        assert back.feature_names == ["a", "b", "c", "d"]
        assert back.feature_types == ["q", "int", "float", "i"]
    with pytest.raises(ValueError, match="feature_types holds 'x'"):
        booster.feature_types = ["q", "x", "q", "q"]
    with pytest.raises(TypeError, match="feature_names must be a list of str"):
        booster.feature_names = "abcd"
    # as XGBoost: a count that does not fit is refused where the names are used
    booster.feature_names = ["F0"]
    with pytest.raises(ValueError, match="feature_names has 1 entries but the model has 4"):
        booster.get_fscore()
    with pytest.raises(ValueError, match="cannot save this model: its feature_names has 1"):
        booster.save_model(tmp_path / "bad.json")
    booster.feature_names = None
    assert set(booster.get_fscore()) <= {"f0", "f1", "f2", "f3"}
    # a DMatrix's types reach the trained booster
    typed = gbm.train({"max_depth": 2}, gbm.DMatrix(X, y, feature_types=["q", "q", "int", "q"]), 2)
    assert typed.feature_types == ["q", "q", "int", "q"]


def test_dmatrix_feature_names_are_checked_as_xgboost():
    X, y = _data()
    named = gbm.train({"max_depth": 2}, gbm.DMatrix(X, y, feature_names=list("abcd")), 2)
    named.predict(gbm.DMatrix(X, feature_names=list("abcd")))
    with pytest.raises(ValueError, match="feature_names mismatch"):
        named.predict(gbm.DMatrix(X, feature_names=list("abce")))
    with pytest.raises(ValueError, match="data did not contain feature names"):
        named.predict(gbm.DMatrix(X))
    named.predict(gbm.DMatrix(X), validate_features=False)
    plain = gbm.train({"max_depth": 2}, X, y, 2)
    plain.predict(gbm.DMatrix(X, feature_names=list("abcd")))  # a model without names


def test_set_param_forms(booster):
    booster.set_param("eta", 0.1)
    booster.set_param({"nthread": 2, "max_depth": None})  # None: skipped, as XGBoost
    booster.set_param([("eval_metric", "mae"), ("eval_metric", "rmse")])
    booster.set_param("eval_metric", "mae")  # already there: kept once
    p = booster.params
    assert p["learning_rate"] == 0.1 and p["n_jobs"] == 2 and p["max_depth"] == 3
    assert p["eval_metric"] == ["mae", "rmse"]
    with pytest.raises(TypeError, match=r"set_param\('eta'\) needs a value"):
        booster.set_param("eta")
    with pytest.raises(ValueError, match="unknown parameter 'no_such'"):
        booster.set_param("no_such", 1)


def test_set_param_keeps_the_model_whole(booster):
    with pytest.raises(ValueError, match="cannot give this model 3 outputs"):
        booster.set_param({"objective": "multi:softprob", "num_class": 3})
    with pytest.raises(ValueError, match="cannot change base_score of a trained model"):
        booster.set_param("base_score", 0.5)
    before = booster.predict(_data()[0])
    booster.set_param("booster", "dart")  # a gbtree model's trees weigh 1 as a dart model
    assert booster.weight_drop == [1.0] * 5
    np.testing.assert_array_equal(booster.predict(_data()[0]), before)
    booster.set_tree_weights([0.5] * 5)
    with pytest.raises(ValueError, match="weights other than 1"):
        booster.set_param("booster", "gbtree")


def test_save_config_reads_as_xgboosts():
    """The fields XGBoost's users read, with XGBoost's values for the same model: an
    XGBoost model imported into gbm gives XGBoost's base_score, counts and names."""
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    yb = (y > 0).astype(float)
    params = {"objective": "binary:logistic", "num_parallel_tree": 2, "max_depth": 2,
              "interaction_constraints": "[[0, 1], [2, 3]]", "eval_metric": ["auc", "error"]}
    theirs = xgb.train(params, xgb.DMatrix(X, yb), 3)
    ours = gbm.Booster.from_xgboost(theirs)
    ours.set_param(params)
    mine, ref = json.loads(ours.save_config())["learner"], json.loads(theirs.save_config())["learner"]
    np.testing.assert_allclose(json.loads(mine["learner_model_param"]["base_score"]),
                               json.loads(ref["learner_model_param"]["base_score"]), rtol=1e-6)
    for section, key in (("learner_model_param", "num_feature"),
                         ("learner_model_param", "num_target"),
                         ("learner_model_param", "num_class"),
                         ("learner_train_param", "objective"), ("learner_train_param", "booster")):
        assert mine[section][key] == ref[section][key], (section, key)
    for key in ("num_parallel_tree", "num_trees"):
        assert (mine["gradient_booster"]["gbtree_model_param"][key]
                == ref["gradient_booster"]["gbtree_model_param"][key])
    mine_tree, ref_tree = (c["gradient_booster"]["tree_train_param"] for c in (mine, ref))
    assert mine_tree["max_depth"] == ref_tree["max_depth"] == "2"
    assert mine_tree["interaction_constraints"] == "[[0, 1], [2, 3]]"
    assert [m["name"] for m in mine["metrics"]] == [m["name"] for m in ref["metrics"]]
    assert mine["objective"]["name"] == ref["objective"]["name"]
    assert float(mine["objective"]["reg_loss_param"]["scale_pos_weight"]) == float(
        ref["objective"]["reg_loss_param"]["scale_pos_weight"])
    assert mine["gradient_booster"]["name"] == ref["gradient_booster"]["name"] == "gbtree"


def test_config_round_trips_the_parameters(booster):
    other = gbm.Booster.from_json(booster.to_json())
    booster.set_param({"eta": 0.05, "eval_metric": ["mae"], "subsample": 0.5, "nthread": 1})
    text = booster.save_config()
    assert other.params != booster.params
    other.load_config(text)
    assert other.params == booster.params
    with pytest.raises(ValueError, match="has no 'gbm_params' object"):
        other.load_config(json.dumps({"learner": {}}))
    with pytest.raises(TypeError, match="config must be the JSON text"):
        other.load_config({"gbm_params": {}})
    with pytest.raises(ValueError, match="has no parameters yet"):
        gbm.Booster().save_config()


def test_dart_config_nests_gbtree_as_xgboost(booster):
    booster.set_param({"booster": "dart", "rate_drop": 0.1})
    gb = json.loads(booster.save_config())["learner"]["gradient_booster"]
    assert gb["name"] == "dart" and gb["dart_train_param"]["rate_drop"] == "0.1"
    assert gb["gbtree"]["gbtree_model_param"]["num_trees"] == "5"


def test_xgboost_constructor_forms(booster, tmp_path):
    X, y = _data()
    booster.save_model(tmp_path / "m.json")
    loaded = gbm.Booster(params={"eta": 0.5, "eval_metric": ["mae"]}, model_file=tmp_path / "m.json")
    assert loaded.params["learning_rate"] == 0.5 and loaded.params["eval_metric"] == ["mae"]
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    d = gbm.DMatrix(X, y, feature_names=list("abcd"), feature_types=["q"] * 4)
    empty = gbm.Booster({"max_depth": 2}, [d])
    assert empty.params["max_depth"] == 2 and empty.feature_names == list("abcd")
    assert empty.feature_types == ["q"] * 4 and empty.num_boosted_rounds() == 0
    with pytest.raises(TypeError, match=r"cache\[0\] must be a DMatrix"):
        gbm.Booster({}, [X])
    with pytest.raises(TypeError, match="cache must be a list of DMatrix"):
        gbm.Booster({}, d)


def test_slicing_follows_xgboost():
    """The same slices give the same rounds as XGBoost's, and the same errors."""
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    theirs = xgb.train({"max_depth": 2, "num_parallel_tree": 2}, xgb.DMatrix(X, y), 8)
    ours = gbm.Booster.from_xgboost(theirs)
    ours.set_attr(kept="yes", best_iteration=5)
    d = xgb.DMatrix(X)
    for index in (slice(1, 3), slice(3, None), slice(None, 5), 2, Ellipsis):
        a, b = ours[index], theirs[index]
        assert len(a.get_dump()) == len(b.get_dump())
        np.testing.assert_allclose(a.predict(X), b.predict(d), rtol=1e-6)
    sliced = ours[1:7:2]
    np.testing.assert_allclose(sliced.predict(X, output_margin=True),
                               sum(ours[r].predict(X, output_margin=True) for r in (1, 3, 5))
                               - 2 * ours.base_margin[0], rtol=1e-12)
    assert sliced.attributes() == {"kept": "yes"}  # best_iteration described the whole
    for index, error, message in ((slice(-1, 0), ValueError, ">= 0"),
                                  (slice(1, 1), ValueError, "Empty slice"),
                                  (slice(3, 0), ValueError, "Invalid slice"),
                                  (slice(3, -1), ValueError, "Invalid slice"),
                                  (slice(0, 2, -1), ValueError, ">= 1"),
                                  (slice(0, 2, 0), ValueError, ">= 1"),
                                  (slice(None, 9), IndexError, "past the model's 8 rounds"),
                                  ((1, 2), ValueError, "one dimension"),
                                  ("x", TypeError, "indexed by an int")):
        with pytest.raises(error, match=message):
            ours[index]
        with pytest.raises(error):
            theirs[index]
    assert [b.num_boosted_rounds() for b in ours] == [1] * 8
    with pytest.raises(TypeError):
        ours[0:2] = ours


def test_get_categories():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"x": rng.normal(size=200),
                          "c": pd.Categorical(rng.choice(["lo", "mid", "hi"], 200),
                                              categories=["lo", "mid", "hi"])})
    booster = gbm.train({"max_depth": 2}, frame, frame["x"] + (frame["c"] == "hi"), 2)
    exported = booster.get_categories(export_to_arrow=True).to_arrow()
    assert [name for name, _ in exported] == ["x", "c"] and exported[0][1] is None
    assert exported[1][1].to_pylist() == booster.categories[1]
    assert set(booster.categories[1]) == {"lo", "mid", "hi"}
    assert not booster.get_categories().empty()
    with pytest.raises(ValueError, match="export_to_arrow=True"):
        booster.get_categories().to_arrow()
    plain = gbm.train({"max_depth": 2}, *_data(), 1)
    assert plain.get_categories().empty()
    assert [n for n, _ in plain.get_categories(True).to_arrow()] == ["0", "1", "2", "3"]


def test_predict_takes_xgboosts_training_flag(booster):
    X, _ = _data()
    d = gbm.DMatrix(X)
    np.testing.assert_array_equal(booster.predict(d, training=True), booster.predict(d))
    with pytest.raises(TypeError, match="training must be True or False"):
        booster.predict(d, training="yes")
