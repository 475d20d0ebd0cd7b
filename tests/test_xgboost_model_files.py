"""XGBoost's model files read into gbm: JSON and UBJSON by their bytes, without xgboost
(``Booster.from_xgboost`` and ``load_model`` take the same path), and XGBoost's old binary
format only through an installed xgboost that reads it, else a clear error."""
import json
import sys

import numpy as np
import pytest

import gbm

xgb = pytest.importorskip("xgboost")

rng = np.random.default_rng(3)
X = rng.normal(size=(300, 5)).astype(np.float32)
y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(float)


@pytest.fixture(scope="module")
def theirs(tmp_path_factory):
    """An XGBoost model, its files (.json, .ubj) and its predictions."""
    booster = xgb.train({"objective": "binary:logistic", "max_depth": 3},
                        xgb.DMatrix(X, label=y), 6)
    folder = tmp_path_factory.mktemp("xgb")
    for suffix in ("json", "ubj"):
        booster.save_model(str(folder / f"m.{suffix}"))
    return booster, folder, booster.predict(xgb.DMatrix(X))


@pytest.fixture
def no_xgboost(monkeypatch):
    """``import xgboost`` fails, as where it is not installed."""
    monkeypatch.setitem(sys.modules, "xgboost", None)


def test_ubjson_files_and_bytes_read_without_xgboost(theirs, no_xgboost):
    booster, folder, expected = theirs
    reference = gbm.Booster.from_xgboost(str(folder / "m.json"))
    for source in (folder / "m.ubj", str(folder / "m.ubj"), bytes(booster.save_raw("ubj")),
                   bytearray(booster.save_raw("ubj")), bytes(booster.save_raw("json"))):
        ours = gbm.Booster.from_xgboost(source)
        assert ours.to_json() == reference.to_json()
    np.testing.assert_allclose(reference.predict(X), expected, rtol=1e-6)
    # load_model reads them the same way (the same model)
    for name in ("m.ubj", "m.json"):
        assert gbm.Booster(model_file=folder / name).to_json() == reference.to_json()
    assert gbm.Booster().load_model(bytes(booster.save_raw("ubj"))).to_json() == \
        reference.to_json()


def test_an_xgboost_ubjson_file_under_another_name_is_read_by_its_bytes(theirs, tmp_path):
    _, folder, _ = theirs
    (tmp_path / "model.bin").write_bytes((folder / "m.ubj").read_bytes())
    ours = gbm.Booster.from_xgboost(tmp_path / "model.bin")
    assert ours.to_json() == gbm.Booster.from_xgboost(folder / "m.json").to_json()


def test_bad_xgboost_files(theirs, tmp_path):
    _, folder, _ = theirs
    data = (folder / "m.ubj").read_bytes()
    (tmp_path / "cut.ubj").write_bytes(data[:len(data) // 2])
    with pytest.raises(ValueError, match=r"cut.ubj is not a valid XGBoost UBJSON model"):
        gbm.Booster.from_xgboost(tmp_path / "cut.ubj")
    with pytest.raises(FileNotFoundError, match="no model file"):
        gbm.Booster.from_xgboost(tmp_path / "absent.ubj")
    with pytest.raises(ValueError, match="no model file"):  # XGBoostError is a ValueError
        gbm.Booster.from_xgboost(tmp_path / "absent.json")
    with pytest.raises(TypeError, match="got int"):
        gbm.Booster.from_xgboost(3)


OLD_BINARY = b"binf" + bytes(range(7, 207))  # neither JSON nor UBJSON


def test_old_binary_format_without_xgboost_is_refused_clearly(tmp_path, no_xgboost):
    path = tmp_path / "old.model"
    path.write_bytes(OLD_BINARY)
    message = (r"old.model is neither JSON nor UBJSON: XGBoost's old binary model format is "
               r"read only through an installed xgboost; load it with an xgboost that reads "
               r"it \(before 3.1\) and save it there as .json or .ubj")
    with pytest.raises(ValueError, match=message):
        gbm.Booster.from_xgboost(path)
    with pytest.raises(ValueError, match=message):
        gbm.Booster(model_file=path)
    with pytest.raises(ValueError, match="neither JSON nor UBJSON: XGBoost's old binary"):
        gbm.Booster().load_model(bytearray(OLD_BINARY))


def test_old_binary_format_that_the_installed_xgboost_refuses(tmp_path):
    """xgboost 3.1 and later no longer read the format: its error is passed on, named."""
    path = tmp_path / "old.model"
    path.write_bytes(OLD_BINARY)
    with pytest.raises(ValueError, match=rf"the installed xgboost {xgb.__version__} cannot "
                                         r"read it as XGBoost's old binary model format"):
        gbm.Booster.from_xgboost(path)


def test_old_binary_format_goes_through_the_installed_xgboost(theirs, tmp_path, monkeypatch):
    """An xgboost that reads the format (before 3.1; a stand-in here, as 3.2 is installed)
    is given the file's bytes, and what it loads is imported."""
    booster, folder, expected = theirs
    given = []

    class OldXGBoost:
        __version__ = "1.7.6"

        class Booster:
            def __init__(self, model_file):
                given.append(bytes(model_file))

            def save_raw(self, raw_format):
                assert raw_format == "json"
                return booster.save_raw("json")

    monkeypatch.setitem(sys.modules, "xgboost", OldXGBoost)
    path = tmp_path / "old.model"
    path.write_bytes(OLD_BINARY)
    for load in (gbm.Booster.from_xgboost, lambda p: gbm.Booster(model_file=p)):
        ours = load(path)
        np.testing.assert_allclose(ours.predict(X), expected, rtol=1e-6)
    assert given == [OLD_BINARY, OLD_BINARY]
    assert json.loads(ours.to_json())["n_features"] == 5
