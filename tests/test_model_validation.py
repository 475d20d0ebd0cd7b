"""Model-file validation (gbm.io.validation): one test per check, each corruption rejected
with its own message, and every model gbm writes accepted.

``CHECKS`` (tests/support/corruptions.py) holds one corruption per check the loader makes;
``test_each_check`` asserts that the file is rejected with that check's message and with no
other check's message, so that a check that is dropped or merged into another fails here.
"""
import json
import re
from pathlib import Path

import numpy as np
import pytest

from gbm import Booster
from gbm.io import tree_checks
from tests.support.corruptions import CHECKS, IDS, corrupted, reject
from tests.support.corruptions import models as build_models

FIXTURES = Path(__file__).parent / "fixtures" / "models"


@pytest.fixture(scope="module")
def models():
    pytest.importorskip("pandas")  # the categorical model
    return build_models()


@pytest.mark.parametrize("case", CHECKS, ids=IDS)
def test_each_check(case, models):
    message = reject(corrupted(case, models))
    assert re.search(case[4], message), message
    others = [c[0] for c in CHECKS if c is not case and re.search(c[4], message)]
    assert not others, f"the message also matches the checks {others}: {message}"


def test_depth_bound(models, monkeypatch):
    text = models["num"].to_json()
    depth = max(t.depth() for t in models["num"].trees)
    monkeypatch.setattr(tree_checks, "MAX_TREE_DEPTH", depth - 1)
    message = reject(text)
    assert re.search(rf"trees\[\d+\] is {depth} levels deep; at most {depth - 1}", message)
    monkeypatch.setattr(tree_checks, "MAX_TREE_DEPTH", depth)
    Booster.from_json(text)


def test_not_utf8_is_rejected(tmp_path):
    path = tmp_path / "m.json"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    with pytest.raises(ValueError, match="is not a gbm model file: it is not UTF-8 text"):
        Booster.load_model(path)


_INT_FIELDS = ["split_feature", "split_bin", "default_left", "left_child", "right_child"]
_NUMBER_FIELDS = ["threshold", "value", "gain", "cover"]


@pytest.mark.parametrize("field", _INT_FIELDS + _NUMBER_FIELDS)
@pytest.mark.parametrize("bad", ["3", True, None, [1], 0.5])
def test_node_fields_take_no_other_type(models, field, bad):
    """No coercion: strings, booleans, null, lists (and fractions in integer fields)."""
    d = json.loads(models["num"].to_json())
    if bad == 0.5 and field in _NUMBER_FIELDS:
        bad = "0.5"
    d["trees"][0][field][0] = bad
    message = reject(json.dumps(d))
    assert f"trees[0].{field} holds {bad!r}; expected" in message


@pytest.mark.parametrize("field, value, limit", [
    ("split_feature", -(1 << 31) - 1, "-2147483648, 2147483647"),
    ("left_child", 1 << 31, "-2147483648, 2147483647"),
    ("default_left", 256, "0, 255"), ("default_left", -1, "0, 255"),
])
def test_integer_fields_are_range_checked(models, field, value, limit):
    d = json.loads(models["num"].to_json())
    d["trees"][0][field][0] = value
    assert f"trees[0].{field} holds {value}, outside [{limit}]" in reject(json.dumps(d))


def test_threshold_beyond_float32_is_rejected(models):
    d = json.loads(models["num"].to_json())
    d["trees"][0]["threshold"][0] = -3.5e38
    assert "trees[0].threshold holds -3.5e+38, beyond float32's range" in reject(json.dumps(d))


def test_category_label_beyond_int64_is_rejected(models):
    """A label of 10**400 used to load, then make every prediction raise OverflowError."""
    d = json.loads(models["cat"].to_json())
    d["categories"][0][0] = 10 ** 400
    assert "outside the 64-bit range" in reject(json.dumps(d))


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_every_fixture_loads_and_predicts(path):
    """The loader accepts every model gbm writes: the 27 reference files load, write back
    the same text, and predict, leaf-index and explain without error."""
    text = path.read_text()
    booster = Booster.from_json(text)
    assert booster.to_json() == text
    rng = np.random.default_rng(0)
    if booster.categories is None:
        X = rng.normal(size=(50, booster.n_features))
        X[::7, 0] = np.nan
    else:
        pd = pytest.importorskip("pandas")
        columns = {}
        for f, labels in enumerate(booster.categories):
            name = booster.feature_names[f] if booster.feature_names else f
            if labels is None:
                columns[name] = rng.normal(size=50)
            elif all(isinstance(v, str) for v in labels):
                columns[name] = pd.Categorical(rng.choice(labels, 50), categories=labels)
            else:
                columns[name] = rng.choice(labels, 50).astype(float)
        X = pd.DataFrame(columns)
    margin = booster.predict(X, output_margin=True)
    assert np.isfinite(margin).all()
    assert booster.predict(X, pred_leaf=True).shape == (50, len(booster.trees))
    contribs = booster.predict(X, pred_contribs=True)
    np.testing.assert_allclose(contribs.sum(axis=-1), margin, rtol=1e-6, atol=1e-6)
