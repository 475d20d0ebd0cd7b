"""Model-file corruption, completing tests/test_model_validation.py: child indices past
the end of a tree, the remaining fields, the loader's own checks (model_io), and a test
that every check of the loader (gbm/io/validation.py, tree_checks.py, typed_json.py) is
reached by some corruption, each rejected with its own message.
"""
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from gbm import Booster
from gbm.io import tree_checks, typed_json
from gbm.io import validation as model_check
from tests.support.corruptions import CHECKS, corrupted, first_cat, reject
from tests.support.corruptions import models as build_models

pytest.importorskip("pandas")  # the categorical model of tests/support/corruptions.py


def _tree0(d):
    return d["trees"][0]


def _child_past_end(offset):
    """The last inner node's left child at ``n - 1 + offset``: its right child (left + 1)
    lies past the end of the tree (offset 0: exactly one past)."""
    def mutate(d):
        tree = _tree0(d)
        n = len(tree["left_child"])
        last = max(i for i, c in enumerate(tree["left_child"]) if c >= 0)
        tree["left_child"][last] = n - 1 + offset
        tree["right_child"][last] = n + offset
    return mutate


def _child_before_parent(d):
    """The last inner node points back at node 1 (a cycle, if it loaded)."""
    tree = _tree0(d)
    last = max(i for i, c in enumerate(tree["left_child"]) if c >= 0)
    tree["left_child"][last], tree["right_child"][last] = 1, 2


def _inner_feature(value):
    def mutate(d):
        tree = _tree0(d)
        tree["split_feature"][0] = value
    return mutate


def _estimator(section):
    return lambda d: d.__setitem__("estimator", section)


def _first_threshold(text, value):
    """Text mutation: tree 0's first threshold replaced by ``value`` (a JSON token)."""
    head, tail = text.split('"threshold": [', 1)
    return head + '"threshold": [' + value + tail[tail.index(","):]


# (id, model, kind, mutation, message pattern), as CHECKS
MORE = [
    # the JSON checks name the place of what they refuse
    ("json_nan_in_a_tree", "num", "text", lambda text: _first_threshold(text, "NaN"),
     r"it holds the non-finite number NaN \(at trees\[0\]\.threshold\[0\]\)"),
    ("json_overflow_in_a_tree", "num", "text", lambda text: _first_threshold(text, "-1e999"),
     r"it holds the number -1e999, beyond float64's range \(at trees\[0\]\.threshold\[0\]\)"),
    ("json_key_twice_in_a_tree", "num", "text",
     lambda text: text.replace('"group": 0}', '"group": 0, "group": 1}', 1),
     r"it holds the key 'group' twice in one object \(at trees\[0\]\)"),
    ("child_one_past_end", "num", "dict", _child_past_end(0),
     r"trees\[0\]\.left_child\[\d+\] is (\d+): a child index must be above its parent's and "
     r"both children inside the tree's \d+ nodes"),
    ("child_far_past_end", "num", "dict", _child_past_end(1000),
     r"trees\[0\]\.left_child\[\d+\] is \d+: a child index must be above its parent's and "
     r"both children inside the tree's \d+ nodes"),
    ("child_int32_max", "num", "dict",
     lambda d: (_tree0(d)["left_child"].__setitem__(0, 2**31 - 2),
                _tree0(d)["right_child"].__setitem__(0, 2**31 - 1)),
     r"trees\[0\]\.left_child\[0\] is 2147483646: a child index must be above"),
    ("child_before_parent", "num", "dict", _child_before_parent,
     r"trees\[0\]\.left_child\[\d+\] is 1: a child index must be above its parent's"),
    ("right_child_past_end", "num", "dict",
     lambda d: _tree0(d)["right_child"].__setitem__(0, len(_tree0(d)["right_child"]) + 3),
     r"trees\[0\] has inconsistent children: a right child must be its left sibling \+ 1"),
    ("right_child_at_leaf", "num", "dict",
     lambda d: _tree0(d)["right_child"].__setitem__(-1, 1),
     r"trees\[0\] has inconsistent children: a right child must be its left sibling \+ 1, "
     r"and -1 at leaves"),
    ("inner_feature_negative", "num", "dict", _inner_feature(-1),
     r"trees\[0\] splits on a feature outside \[0, 6\)"),
    ("n_features_zero", "num", "dict", lambda d: d.__setitem__("n_features", 0),
     r"n_features must be an integer in \[1, 2147483647\], got 0"),
    ("version_bool", "num", "dict", lambda d: d.__setitem__("version", True),
     r"version True is not supported"),
    ("version_1_with_indptr", "num", "dict", lambda d: d.__setitem__("version", 1),
     r"unknown fields \['iteration_indptr'\] in a version 1 file"),
    ("indptr_missing", "num", "dict", lambda d: d.pop("iteration_indptr"),
     r"missing fields \['iteration_indptr'\]"),
    ("indptr_not_list", "num", "dict", lambda d: d.__setitem__("iteration_indptr", 6),
     r"iteration_indptr must rise from 0 to the tree count 6"),
    ("cuts_not_numbers", "num", "dict", lambda d: d["cuts"][1].__setitem__(0, None),
     r"cuts\[1\] holds None; expected numbers"),
    ("base_margin_not_list", "num", "dict", lambda d: d.__setitem__("base_margin", 0.5),
     r"base_margin must be a list of numbers, got float"),
    # a vector-leaf model (multi_strategy="multi_output_tree") whose values are not vectors
    ("vector_values_not_vectors", "num", "dict",
     lambda d: d["params"].__setitem__("multi_strategy", "multi_output_tree"),
     r"trees\[0\]\.value must be a list of lists of 3 numbers"),
    ("categories_not_list", "cat", "dict", lambda d: d.__setitem__("categories", "abc"),
     r"categories must be null or a list of 3 entries"),
    ("feature_names_not_strings", "num", "dict",
     lambda d: d.__setitem__("feature_names", list(range(6))),
     r"feature_names must be null or 6 strings"),
    ("header_not_object", "num", "text", lambda text: "[1, 2]",
     r"'format' is not 'gbm-model'"),
    ("params_type_error", "num", "dict", lambda d: d["params"].__setitem__("max_depth", "3"),
     r"params\.max_depth is '3', not in the form gbm writes"),  # text is for train, not files
    ("cat_bits_not_list", "cat", "dict",
     lambda d: next(t for t in d["trees"] if "cat_bits" in t).__setitem__("cat_bits", 5),
     r"trees\[\d+\]\.cat_bits must be a list of lists of integers, all of one length"),
    ("cat_bits_word_range", "cat", "dict",
     lambda d: next(t for t in d["trees"] if "cat_bits" in t)["cat_bits"][0].__setitem__(
         0, 1 << 32),
     r"trees\[\d+\]\.cat_bits holds 4294967296, outside \[0, 4294967295\]"),
    # the optional estimator section (an estimator's save_model); "num" has 3 classes
    ("estimator_not_object", "num", "dict", _estimator(5),
     r"estimator must be an object, got int"),
    ("estimator_missing_params", "num", "dict", _estimator({"class": "GBMClassifier"}),
     r"estimator has missing fields \['params'\] or unknown fields \[\]"),
    ("estimator_unknown_class", "num", "dict", _estimator({"class": "Ridge", "params": {}}),
     r"estimator.class must be one of \['GBMRegressor'"),
    ("estimator_params_not_object", "num", "dict",
     _estimator({"class": "GBMClassifier", "params": [1]}),
     r"estimator.params must be an object of JSON values"),
    ("estimator_feature_names_short", "num", "dict",
     _estimator({"class": "GBMClassifier", "params": {}, "feature_names_in": ["a"]}),
     r"estimator.feature_names_in must be null or 6 strings"),
    ("estimator_classes_mixed", "num", "dict",
     _estimator({"class": "GBMClassifier", "params": {}, "classes": [0, "a", 2]}),
     r"estimator.classes must be a list of labels of one kind"),
    ("estimator_classes_count", "num", "dict",
     _estimator({"class": "GBMClassifier", "params": {}, "classes": [0, 1]}),
     r"estimator.classes must hold 3 distinct labels \(the model's classes\), got 2"),
]
ALL = CHECKS + MORE


@pytest.mark.parametrize("case", MORE, ids=[c[0] for c in MORE])
def test_more_corruptions_are_rejected_with_their_message(case, models):
    message = reject(corrupted(case, models))
    assert re.search(case[4], message), message


def test_child_exactly_one_past_the_end_names_the_index(models):
    d = json.loads(models["num"].to_json())
    _child_past_end(0)(d)
    n = len(_tree0(d)["left_child"])
    message = reject(json.dumps(d))
    assert f"is {n - 1}: a child index must be above its parent's and both children inside " \
           f"the tree's {n} nodes (-1 at leaves)" in message


@pytest.mark.parametrize("last", [5, 6])
def test_category_set_may_hold_the_last_code_but_not_one_past(models, last):
    """Feature 0 of the categorical model has the 6 categories a..f (codes 0..5): a set
    holding codes 0 and 5 loads and predicts; one holding code 6, the first past the
    end, is rejected naming that code (a check off by one passes the far-off codes of
    test_model_validation's category_set_codes)."""
    d = json.loads(models["cat"].to_json())
    assert d["categories"][0] == list("abcdef")
    t, _ = first_cat(d)
    words = [0] * len(d["trees"][t]["cat_bits"][0])
    words[0] = 1 | 1 << last  # both codes in the first 32-bit word
    d["trees"][t]["cat_bits"][0] = words
    if last == 5:
        import pandas as pd

        X = pd.DataFrame({"c": pd.Categorical(list("abcdef"), categories=list("abcdef")),
                          "x": np.zeros(6), "z": np.zeros(6)})
        assert np.isfinite(Booster.from_json(json.dumps(d)).predict(X)).all()
    else:
        assert "has a bad category set: it holds code 6, beyond the feature's 6 " \
               "categories" in reject(json.dumps(d))


@pytest.fixture(scope="module")
def models():
    """The two models the corruptions of tests/support/corruptions.py expect."""
    return build_models()


CHECK_MODULES = (model_check, tree_checks, typed_json)  # where the loader's checks raise


def _raise_line(text):
    """The (file, line) of the loader's check whose ``raise InvalidModel`` rejected
    ``text``."""
    files = {Path(m.__file__).name: m.__file__ for m in CHECK_MODULES}
    with pytest.raises(model_check.InvalidModel) as err:
        model_check.check_model(model_check.parse(text))
    tb, line = err.value.__traceback__, None
    while tb is not None:
        name = Path(tb.tb_frame.f_code.co_filename).name
        if files.get(name) == tb.tb_frame.f_code.co_filename:
            line = (name, tb.tb_lineno)
        tb = tb.tb_next
    return line


def _raise_lines():
    lines = set()
    for module in CHECK_MODULES:
        source = Path(module.__file__).read_text().splitlines()
        lines |= {(Path(module.__file__).name, i + 1) for i, line in enumerate(source)
                  if "raise InvalidModel(" in line}
    return lines


def test_every_check_of_the_loader_is_reached(models, monkeypatch):
    """Each ``raise InvalidModel`` of the loader's checks is the one that rejects at least
    one corruption of CHECKS or MORE (the depth bound with a lowered limit): a check
    without a test, or a test whose check was dropped (another check then fires), shows
    here."""
    reached = {}
    for case in ALL:
        reached.setdefault(_raise_line(corrupted(case, models)), []).append(case[0])
    text = models["num"].to_json()
    monkeypatch.setattr(tree_checks, "MAX_TREE_DEPTH", 1)
    reached.setdefault(_raise_line(text), []).append("depth")
    missing = sorted(_raise_lines() - set(reached))
    assert not missing, f"no corruption reaches the checks at (file, line) {missing}"


@pytest.mark.parametrize("case", ALL, ids=[c[0] for c in ALL])
def test_corruption_never_reaches_the_kernels(case, models):
    """Every corruption stops in the loader: none gives a Booster that the prediction
    kernels (which do no bounds checks) would walk."""
    with pytest.raises(ValueError):
        Booster.from_json(corrupted(case, models))


# --- model_io's own checks ----------------------------------------------------------------

def test_text_that_is_not_str_or_bytes_is_a_type_error():
    with pytest.raises(TypeError, match="a model file's text must be str, got int"):
        Booster.from_json(12)


def test_bytes_that_are_not_utf8_are_rejected():
    with pytest.raises(ValueError, match="model text is not a gbm model file: it is not UTF-8"):
        Booster.from_json(b"\xff\xfe{}")


def test_bytes_that_are_utf8_load(models):
    booster = Booster.from_json(models["num"].to_json().encode("utf-8"))
    assert booster.to_json() == models["num"].to_json()


@pytest.mark.parametrize("where", ["base_margin", "value", "threshold"])
def test_a_non_finite_model_is_not_saved(models, where, tmp_path):
    booster = Booster.from_json(models["num"].to_json())
    if where == "base_margin":
        booster.base_margin[0] = math.inf
    else:
        getattr(booster.trees[1], where)[0] = np.nan
    target = tmp_path / "m.json"
    target.write_text("old")
    with pytest.raises(ValueError, match=f"cannot save this model: its .*{where} holds NaN or "
                                         "infinity"):
        booster.save_model(target)
    assert target.read_text() == "old"  # the old file stays whole
