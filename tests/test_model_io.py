"""Model files: exact round trips and clear errors for bad files."""
import json

import numpy as np
import pytest
from sklearn.datasets import make_classification

import gbm
from gbm import Booster


@pytest.fixture(scope="module")
def fitted():
    X, y = make_classification(3000, 6, n_classes=3, n_informative=4, random_state=0)
    X[::5, 1] = np.nan
    return gbm.train({"objective": "multi:softprob", "num_class": 3}, X, y, 5), X


def test_round_trip_predicts_identically(fitted, tmp_path):
    booster, X = fitted
    path = tmp_path / "model.json"
    booster.save_model(path)
    loaded = Booster.load_model(path)
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    assert loaded.to_json() == booster.to_json()


def test_estimator_round_trip_via_booster(tmp_path):
    X, y = make_classification(500, 4, random_state=1)
    clf = gbm.GBMClassifier(n_estimators=5).fit(X, y)
    clf.get_booster().save_model(tmp_path / "m.json")
    loaded = Booster.load_model(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.predict(X), clf.predict_proba(X)[:, 1])


def _write(tmp_path, text, name="bad.json"):
    path = tmp_path / name
    path.write_text(text) if isinstance(text, str) else path.write_bytes(text)
    return path


def test_truncated_file_is_rejected(fitted, tmp_path):
    text = fitted[0].to_json()
    with pytest.raises(ValueError, match="invalid or truncated JSON"):
        Booster.load_model(_write(tmp_path, text[: len(text) // 2]))


def test_foreign_file_is_rejected(tmp_path):
    foreign = json.dumps({"model": {"trees": []}, "version": [3, 0, 0]})
    with pytest.raises(ValueError, match="'format' is not 'gbm-model'"):
        Booster.load_model(_write(tmp_path, foreign))
    # a file in XGBoost's schema goes to its import (gbm.io.xgboost_import), whose checks
    # name what is wrong with it
    xgb_like = json.dumps({"learner": {"gradient_booster": {}}, "version": [3, 0, 0]})
    with pytest.raises(ValueError, match="learner_model_param is missing"):
        Booster.load_model(_write(tmp_path, xgb_like))
    with pytest.raises(ValueError, match="not UTF-8"):
        Booster.load_model(_write(tmp_path, b"\x89PNG\r\n\x1a\n\xff\xfe"))


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(version=99), "version 99 is not supported"),
    (lambda d: d.pop("trees"), "missing fields"),
    (lambda d: d["trees"][0].update(left_child=[0] + d["trees"][0]["left_child"][1:]), "child index"),
    (lambda d: d["trees"][0].update(split_feature=[99] + d["trees"][0]["split_feature"][1:]), "feature outside"),
    (lambda d: d["trees"][0].update(value=[0.0]), "different lengths"),
    (lambda d: d["trees"][1].update(group=7), "group 7"),
    (lambda d: d["params"].update(max_bin=2000), "max_bin must be <= 1024"),
    (lambda d: d["trees"].pop(), "not a multiple of 3"),
    (lambda d: d["trees"][0]["value"].__setitem__(0, float("nan")), "non-finite number NaN"),
    (lambda d: d["trees"][0]["right_child"].__setitem__(0, 5), "inconsistent children"),
    (lambda d: d.update(base_margin=[0.0]), "base_margin has 1 values, expected 3"),
    (lambda d: d.update(feature_names=["a"]), "feature_names must be null or 6 strings"),
])
def test_corrupted_fields_are_rejected(fitted, tmp_path, mutate, message):
    d = json.loads(fitted[0].to_json())
    mutate(d)
    with pytest.raises(ValueError, match=message):
        Booster.load_model(_write(tmp_path, json.dumps(d)))  # json.dumps writes NaN as NaN


def test_older_files_with_run_settings_load(fitted):
    booster, X = fitted
    d = json.loads(booster.to_json())
    assert "n_jobs" not in d["params"] and "device" not in d["params"]
    old = dict(d, version=3, params=dict(d["params"], n_jobs=2, device="cpu"))
    loaded = Booster.from_json(json.dumps(old))
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    assert loaded.to_json() == booster.to_json()  # written back as version 4, without them
