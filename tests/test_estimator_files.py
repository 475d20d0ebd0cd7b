"""Estimator model files (issue 11, item 1): ``save_model`` / ``load_model`` on every
estimator, ``Booster()`` then ``load_model``, booster slicing, ``num_boosted_rounds()``
and ``.ubj`` files."""
import json

import numpy as np
import pytest

import gbm
from gbm.io import gbm_json as model_io

pytest.importorskip("sklearn")


def _data(n=240, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    return X, X[:, 0] * 2 - X[:, 1] + rng.normal(scale=0.3, size=n)


SMALL = dict(n_estimators=4, max_depth=3)


@pytest.mark.parametrize("make, labels", [
    (lambda: gbm.GBMRegressor(**SMALL), "reg"),
    (lambda: gbm.GBMClassifier(**SMALL), "strings"),
    (lambda: gbm.GBMClassifier(**SMALL), "three"),
    (lambda: gbm.GBMRanker(**SMALL), "rank"),
    (lambda: gbm.GBMRFRegressor(n_estimators=3, max_depth=3), "reg"),
    (lambda: gbm.GBMRFClassifier(n_estimators=3, max_depth=3), "strings"),
])
def test_estimator_round_trip(tmp_path, make, labels):
    X, signal = _data()
    est = make()
    kwargs = {}
    if labels == "strings":
        y = np.where(signal > 0, "high", "low")
    elif labels == "three":
        y = np.digitize(signal, [-1.0, 1.0]) * 10 + 5  # classes 5, 15, 25
    elif labels == "rank":
        y = np.clip(np.round(signal / 2 + 1), 0, 3)
        kwargs["group"] = [40] * 6
    else:
        y = signal
    est.set_params(learning_rate=0.5)
    est.fit(X, y, **kwargs)
    path = tmp_path / "model.json"
    est.save_model(path)
    loaded = type(est)().load_model(path)
    assert loaded.get_params()["learning_rate"] == 0.5
    assert loaded.get_params()["n_estimators"] == est.n_estimators
    assert loaded.n_features_in_ == 4
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    if hasattr(est, "classes_"):
        np.testing.assert_array_equal(loaded.classes_, est.classes_)
        assert type(loaded.classes_[0]) is type(est.classes_[0])
        np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    # the file is a booster file too: Booster.load_model reads it
    booster = gbm.Booster.load_model(path)
    assert booster.num_boosted_rounds() == est.get_booster().num_boosted_rounds()


def test_best_iteration_feature_names_and_categories_kept(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = _data(300)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    frame["kind"] = pd.Categorical(np.where(X[:, 2] > 0, "up", "down"))
    est = gbm.GBMRegressor(n_estimators=60, learning_rate=0.8, early_stopping_rounds=3)
    est.fit(frame[:200], y[:200], eval_set=[(frame[200:], y[200:])])
    assert est.best_iteration < 59  # stopped early: the best round is in the file
    est.save_model(tmp_path / "m.json")
    loaded = gbm.GBMRegressor().load_model(tmp_path / "m.json")
    assert loaded.best_iteration == est.best_iteration
    assert loaded.early_stopping_rounds == 3
    assert list(loaded.feature_names_in_) == ["a", "b", "c", "d", "kind"]
    assert loaded.get_booster().categories[4] == ["down", "up"]
    np.testing.assert_array_equal(loaded.predict(frame), est.predict(frame))


def test_wrong_class_is_a_clear_error(tmp_path):
    X, y = _data()
    gbm.GBMClassifier(**SMALL).fit(X, y > 0).save_model(tmp_path / "clf.json")
    with pytest.raises(ValueError, match="holds a fitted GBMClassifier, not a GBMRegressor"):
        gbm.GBMRegressor().load_model(tmp_path / "clf.json")
    with pytest.raises(ValueError, match="not a GBMRFClassifier"):
        gbm.GBMRFClassifier().load_model(tmp_path / "clf.json")
    # a plain booster file loads into an estimator whose objective fits, not another
    gbm.train({"max_depth": 2}, X, y, 2).save_model(tmp_path / "booster.json")
    reg = gbm.GBMRegressor().load_model(tmp_path / "booster.json")
    assert reg.predict(X).shape == (X.shape[0],)
    with pytest.raises(ValueError, match="objective 'reg:squarederror'"):
        gbm.GBMClassifier().load_model(tmp_path / "booster.json")


def test_estimator_section_is_validated(tmp_path):
    X, y = _data()
    est = gbm.GBMClassifier(**SMALL).fit(X, np.where(y > 0, "a", "b"))
    est.save_model(tmp_path / "m.json")
    d = json.loads((tmp_path / "m.json").read_text())
    for change, match in [(lambda s: s.update({"class": "os.system"}), "estimator.class"),
                          (lambda s: s.update({"classes": ["a", "a"]}), "distinct"),
                          (lambda s: s.update({"classes": ["a", 1]}), "one kind"),
                          (lambda s: s.update({"n_features_in": 7}), "n_features_in"),
                          (lambda s: s.update({"extra": 1}), "unknown fields")]:
        bad = json.loads(json.dumps(d))
        change(bad["estimator"])
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=match):
            gbm.GBMClassifier().load_model(tmp_path / "bad.json")


def test_booster_idioms(tmp_path):
    X, y = _data()
    booster = gbm.train({"max_depth": 3}, X, y, 6)
    booster.save_model(tmp_path / "b.json")
    # XGBoost's idiom: an empty Booster, then load_model into it
    empty = gbm.Booster()
    with pytest.raises(ValueError, match="empty"):
        empty.predict(X)
    assert empty.load_model(tmp_path / "b.json") is empty
    np.testing.assert_array_equal(empty.predict(X), booster.predict(X))
    np.testing.assert_array_equal(gbm.Booster(model_file=tmp_path / "b.json").predict(X),
                                  booster.predict(X))
    # num_boosted_rounds: a method (XGBoost) and still an int attribute (gbm's first form)
    assert booster.num_boosted_rounds() == 6 and booster.num_boosted_rounds == 6
    # slicing: rounds [1, 4) predict as iteration_range (1, 4)
    part = booster[1:4]
    assert part.num_boosted_rounds() == 3
    np.testing.assert_array_equal(part.predict(X), booster.predict(X, iteration_range=(1, 4)))
    np.testing.assert_array_equal(booster[-1].predict(X),
                                  booster.predict(X, iteration_range=(5, 6)))
    with pytest.raises(IndexError):
        booster[6]
    with pytest.raises(ValueError, match="Invalid slice"):
        booster[4:2]
    # .ubj: the same model in UBJSON (gbm.io.ubjson), read back by its name
    booster.save_model(tmp_path / "m.ubj")
    np.testing.assert_array_equal(gbm.Booster(model_file=tmp_path / "m.ubj").predict(X),
                                  booster.predict(X))


def test_slicing_matches_xgboost():
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    ours = gbm.train({"max_depth": 3}, X, y, 6)
    theirs = xgb.train({"max_depth": 3}, xgb.DMatrix(X, label=y), 6)
    for sl in (slice(0, 2), slice(2, 5), slice(0, 6, 2), slice(3, None)):
        assert ours[sl].num_boosted_rounds() == theirs[sl].num_boosted_rounds()
    # a stepped slice keeps rounds 1, 3, 5: its margin is the base plus those rounds'
    step = ours[1:6:2].predict(X, output_margin=True)
    rounds = [ours.predict(X, output_margin=True, iteration_range=(r, r + 1)) for r in (1, 3, 5)]
    base = ours.base_margin[0]
    np.testing.assert_allclose(step, sum(r - base for r in rounds) + base, rtol=1e-12)


def test_files_without_new_params_unchanged():
    """A model that uses none of the new parameters writes none of them (the fixtures
    stay byte for byte); one that does records them."""
    X, y = _data()
    plain = model_io.to_dict(gbm.train({"max_depth": 2}, X, y, 1))
    assert "scale_pos_weight" not in plain["params"] and "tree_method" not in plain["params"]
    weighted = model_io.to_dict(gbm.train({"objective": "binary:logistic", "max_depth": 2,
                                           "scale_pos_weight": 3.0}, X, y > 0, 1))
    assert weighted["params"]["scale_pos_weight"] == 3.0
