"""Model files by their names (gbm.io.model_file), as XGBoost chooses: ``.json`` gbm's
JSON, ``.ubj`` the same content in UBJSON, another name UBJSON with a warning; the bytes
of ``save_raw``; XGBoost's schema in either; errors for missing and mismatched files."""
import json
import os
import pickle
import warnings

import numpy as np
import pytest

import gbm
from gbm.io import ubjson


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 5))
    y = (X[:, 0] + rng.normal(size=400) > 0).astype(float)
    booster = gbm.train({"objective": "binary:logistic", "max_depth": 3}, X, y, 4,
                        feature_names=list("abcde"))
    return booster, X


@pytest.mark.parametrize("suffix", [".json", ".ubj", ".UBJ"])
def test_each_format_round_trips_bit_for_bit(model, tmp_path, suffix):
    booster, X = model
    path = tmp_path / f"m{suffix}"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a known suffix warns of nothing
        booster.save_model(path)
        loaded = gbm.Booster(model_file=path)
    assert loaded.to_json() == booster.to_json()
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    head = path.read_bytes()[:2]
    assert head == (b'{"' if suffix == ".json" else b"{L")


def test_ubj_is_the_json_files_content(model, tmp_path):
    booster, _ = model
    booster.save_model(tmp_path / "m.ubj")
    booster.save_model(tmp_path / "m.json")
    content = ubjson.loads((tmp_path / "m.ubj").read_bytes(), 16)
    assert content == json.loads((tmp_path / "m.json").read_text())
    assert (tmp_path / "m.ubj").stat().st_size < (tmp_path / "m.json").stat().st_size


def test_save_raw_and_bytes(model):
    booster, X = model
    raw = booster.save_raw()  # XGBoost's default: UBJSON
    assert isinstance(raw, bytearray) and raw[:2] == b"{L"
    assert booster.save_raw("json").decode() == booster.to_json()
    for data in (raw, bytes(raw), booster.save_raw("json"),
                 bytearray(json.dumps(json.loads(booster.to_json()), indent=2) + "\n\n",
                           "ascii")):
        assert gbm.Booster(model_file=data).to_json() == booster.to_json()
        empty = gbm.Booster()
        assert empty.load_model(data) is empty and empty.to_json() == booster.to_json()
    with pytest.raises(ValueError, match="Unknown model format.*'deprecated'"):
        booster.save_raw(raw_format="deprecated")


def test_other_names_warn_and_are_read_by_their_bytes(model, tmp_path):
    booster, _ = model
    path = tmp_path / "model"
    with pytest.warns(UserWarning, match="Saving model in the UBJSON format"):
        booster.save_model(path)
    with pytest.warns(UserWarning, match=r"Using UBJSON \(`ubj`\) as a guess"):
        assert gbm.Booster(model_file=path).to_json() == booster.to_json()
    booster.save_model(tmp_path / "m.json")
    os.replace(tmp_path / "m.json", path)
    with pytest.warns(UserWarning, match=r"Using JSON \(`json`\) as a guess"):
        assert gbm.Booster(model_file=path).to_json() == booster.to_json()
    with pytest.warns(UserWarning, match="UBJSON"):
        booster.save_model(tmp_path / "model.deprecated")


def test_a_name_that_lies_about_the_format(model, tmp_path):
    """As XGBoost: no guessing for a .json or .ubj name, the parser's error instead."""
    booster, _ = model
    booster.save_model(tmp_path / "m.ubj")
    os.replace(tmp_path / "m.ubj", tmp_path / "m.json")
    with pytest.raises(ValueError, match=r"not JSON text: it starts as a UBJSON .*named .ubj"):
        gbm.Booster(model_file=tmp_path / "m.json")
    booster.save_model(tmp_path / "n.json")
    os.replace(tmp_path / "n.json", tmp_path / "n.ubj")
    with pytest.raises(ValueError, match=r"not a valid gbm UBJSON model file: at byte 1: .*"
                                         r"a JSON model file is named .json"):
        gbm.Booster(model_file=tmp_path / "n.ubj")


def test_missing_file_is_both_errors(tmp_path):
    """Python's FileNotFoundError, and a ValueError as XGBoost's XGBoostError."""
    for path in ("incorrect_path", tmp_path / "不正なパス.json"):
        with pytest.raises(FileNotFoundError) as err:
            gbm.Booster(model_file=path)
        assert isinstance(err.value, ValueError) and err.value.filename == os.fspath(path)
    with pytest.raises(TypeError, match="model_file must be a path"):
        gbm.Booster(model_file=3)


def test_unicode_and_pathlib_paths(model, tmp_path):
    booster, _ = model
    for name in ("모델.ubj", "がうる・ぐら.json"):
        booster.save_model(tmp_path / name)
        assert gbm.Booster(model_file=tmp_path / name).get_dump() == booster.get_dump()


def test_estimator_files_take_both_formats(tmp_path):
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(200, 3)), rng.integers(0, 3, 200)
    est = gbm.GBMClassifier(n_estimators=3, max_depth=2).fit(X, y)
    for name in ("e.json", "e.ubj"):
        est.save_model(tmp_path / name)
        back = gbm.GBMClassifier()
        back.load_model(tmp_path / name)
        np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))


def test_xgboost_schema_in_both_formats(model, tmp_path):
    """save_model(format="xgboost") writes XGBoost's schema as JSON or UBJSON by the name;
    XGBoost loads both and predicts what gbm predicts; gbm loads XGBoost's own files of
    either format (they are imported) and predicts what XGBoost predicts."""
    xgb = pytest.importorskip("xgboost")
    booster, X = model
    d = xgb.DMatrix(X, feature_names=list("abcde"))
    for name in ("x.json", "x.ubj"):
        booster.save_model(tmp_path / name, format="xgboost")
        theirs = xgb.Booster(model_file=str(tmp_path / name))
        np.testing.assert_allclose(theirs.predict(d), booster.predict(X), rtol=1e-6)
        theirs.save_model(str(tmp_path / f"their_{name}"))
        ours = gbm.Booster(model_file=tmp_path / f"their_{name}")
        np.testing.assert_allclose(ours.predict(X), theirs.predict(d), rtol=1e-6)


def test_pickle_and_copies(model):
    booster, X = model
    booster = booster.copy()
    booster.set_attr(note="kept")
    for other in (pickle.loads(pickle.dumps(booster)), booster.copy(),
                  __import__("copy").copy(booster), __import__("copy").deepcopy(booster),
                  gbm.Booster(model_file=booster)):
        assert other is not booster and other.to_json() == booster.to_json()
        np.testing.assert_array_equal(other.predict(X), booster.predict(X))
        other.set_attr(note=None)
        other.trees.pop()
        assert booster.attr("note") == "kept" and len(booster.trees) == 4
    assert "_forest" not in booster.__getstate__()  # a cache, rebuilt on demand
