"""Hypothesis fuzzing of model files and of training input, run by
``test_fuzz_model_files.py`` in a fresh interpreter (a crash must fail the test, not end
the run): ``python -m tests.support.fuzz_models {model-files|inputs} MAX_EXAMPLES``.

Properties:

* **model files**: a valid model file with 1-3 random mutations (a value replaced by
  another JSON value, a key or item dropped or added, a number nudged, a child index
  moved) either loads, or raises ``ValueError`` from one of gbm.io.validation's checks. A
  model that loads predicts finite margins that equal the base margin plus the values of
  the leaves ``pred_leaf`` names (in tree order; times each tree's weight in a dart
  model), explains its predictions, dumps, and writes the text it was read from.
* **inputs**: random X, y, sample_weight and one random parameter either train a model
  with finite predictions that round-trips through its model file, or raise
  ``ValueError`` / ``TypeError`` (``FloatingPointError`` for a diverging fit).
"""
import json
import math
import sys

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbm
from gbm.params import SPEC

# --- model files -----------------------------------------------------------------------

def _base_models():
    import pandas as pd

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    X[::9, 2] = np.nan
    y = X[:, 0] + X[:, 1] ** 2
    multi = gbm.train({"objective": "multi:softprob", "num_class": 3, "max_depth": 3}, X,
                      np.digitize(y, [0.0, 1.0]).astype(float), 2)
    forest = gbm.train({"num_parallel_tree": 2, "subsample": 0.8, "max_depth": 2}, X, y, 2)
    stopped = gbm.train({"max_depth": 2}, X[:200], y[:200], 6, evals=[(X[200:], y[200:], "v")],
                        early_stopping_rounds=2)
    frame = pd.DataFrame({"c": pd.Categorical.from_codes(rng.integers(0, 5, 300), list("abcde")),
                          "x": X[:, 0]})
    categorical = gbm.train({"max_depth": 3, "max_cat_to_onehot": 1}, frame,
                            frame["c"].cat.codes.to_numpy() % 3 + X[:, 0], 2)
    dart = gbm.train({"booster": "dart", "rate_drop": 0.5, "max_depth": 2}, X, y, 4)
    rows = {"multi": X[:20], "forest": X[:20], "stopped": X[:20], "categorical": frame[:20],
            "dart": X[:20]}
    return {name: (booster.to_json(), rows[name]) for name, booster in
            (("multi", multi), ("forest", forest), ("stopped", stopped),
             ("categorical", categorical), ("dart", dart))}


JSON_SCALARS = st.one_of(
    st.none(), st.booleans(),
    st.integers(-3, 40), st.sampled_from([-1, 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 2 ** 63 - 1]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1e-300, 3.5e38, 1e308, -1e308]),
    st.text(max_size=4), st.sampled_from(["3", "0.5", "gbm-model", "NaN"]))
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=6)


def _containers(doc, path=()):
    """Every list and dict in the document, with its path."""
    out = [(path, doc)]
    items = doc.items() if isinstance(doc, dict) else enumerate(doc)
    for key, value in items:
        if isinstance(value, (dict, list)):
            out += _containers(value, path + (key,))
    return out


def _same_type_value(data, array, name):
    """A value an element of a node array could hold: an integer near the node range for
    integer fields, a float (0, tiny, huge, negative) for number fields."""
    if name in ("threshold", "value", "gain", "cover"):
        return data.draw(st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                                   st.sampled_from([0.0, -0.0, 1e-300, -1.0, 3e38, 1e300])),
                         label="number")
    if name == "cat_bits":
        return data.draw(st.lists(st.integers(0, 2 ** 32 - 1), min_size=8, max_size=8),
                         label="words")
    return data.draw(st.integers(-2, len(array) + 2), label="integer")


def _mutate(data, doc):
    containers = _containers(doc)
    # trees hold most of the structure: pick a node array half of the time, and mostly
    # keep its types, so that many mutated files load and reach the kernels
    arrays = [c for c in containers if len(c[0]) == 3 and c[0][0] == "trees" and c[1]]
    if arrays and data.draw(st.booleans(), label="node array"):
        path, target = data.draw(st.sampled_from(arrays), label="target")
        key = data.draw(st.integers(0, len(target) - 1), label="node")
        if data.draw(st.integers(0, 9), label="kind") < 8:
            target[key] = _same_type_value(data, target, path[-1])
            return
    else:
        path, target = data.draw(st.sampled_from(containers), label="target")
    keys = list(target) if isinstance(target, dict) else list(range(len(target)))
    action = data.draw(st.sampled_from(["replace", "nudge", "drop", "add"]), label="action")
    if action == "add" or not keys:
        if isinstance(target, dict):
            target[data.draw(st.sampled_from(["extra", "group", "version", "cat_bits"] + keys),
                             label="key")] = data.draw(JSON_VALUES, label="value")
        else:
            target.insert(data.draw(st.integers(0, len(target)), label="at"),
                          data.draw(JSON_VALUES, label="value"))
        return
    key = data.draw(st.sampled_from(keys), label="key")
    if action == "drop":
        del target[key]
    elif action == "nudge" and type(target[key]) in (int, float):
        if type(target[key]) is int:
            target[key] += data.draw(st.sampled_from([1, -1, 2, -2]), label="step")
        else:
            target[key] = data.draw(st.sampled_from(
                [target[key] * 2, -target[key], 0.0, target[key] + 1e-7]), label="nudged")
    else:
        target[key] = data.draw(JSON_VALUES, label="value")


def _check_loaded(booster, rows):
    margin = booster.predict(rows, output_margin=True)
    margin = margin.reshape(len(rows), -1)
    assert np.isfinite(margin).all(), margin
    leaves = booster.predict(rows, pred_leaf=True)
    expected = np.tile(booster.base_margin, (len(rows), 1))
    for t, (tree, group) in enumerate(zip(booster.trees, booster.tree_group)):
        assert (tree.left_child[leaves[:, t]] == -1).all(), "pred_leaf names an inner node"
        weight = 1.0 if booster.weight_drop is None else booster.weight_drop[t]
        expected[:, group] += tree.value[leaves[:, t]] * weight  # a dart tree's weight
    np.testing.assert_array_equal(margin, expected)
    contribs = booster.predict(rows, pred_contribs=True)
    assert contribs.shape[-1] == booster.n_features + 1
    booster.get_dump(with_stats=True)
    booster.get_dump(dump_format="json")
    booster.trees_to_dataframe()
    again = booster.to_json()
    assert gbm.Booster.from_json(again).to_json() == again


def fuzz_model_files(max_examples):
    bases = _base_models()

    @settings(max_examples=max_examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def mutated_model_files(data):
        name = data.draw(st.sampled_from(sorted(bases)), label="model")
        text, rows = bases[name]
        doc = json.loads(text)
        for _ in range(data.draw(st.integers(1, 3), label="mutations")):
            _mutate(data, doc)
        mutated = json.dumps(doc)
        try:
            booster = gbm.Booster.from_json(mutated)
        except ValueError as err:
            message = str(err)
            assert "is not a valid gbm model file" in message, message
            return
        _check_loaded(booster, rows)

    mutated_model_files()


# --- training input ----------------------------------------------------------------------

FLOATS = st.one_of(st.floats(width=64), st.sampled_from([1e39, -1e300, 3e38, 1e-320, 0.0]))
PARAM_VALUES = st.one_of(
    st.none(), st.booleans(), st.sampled_from([-1, 0, 1, 2, 3, 7, 2 ** 70, -(2 ** 70)]),
    st.sampled_from([0.5, 1e-300, 1e300, -1e300, math.nan, math.inf, 3.5e38, 0.9]),
    st.sampled_from(["1", "depthwise", "lossguide", "cpu", "rmse", [1], [[0, 1]], {}]))
# parameters whose large legal values train for too long to fuzz: drawn small
SMALL_COUNTS = {"num_parallel_tree", "num_class", "max_leaves", "max_depth",
                "lambdarank_num_pair_per_sample", "bin_sample_size"}


def fuzz_inputs(max_examples):
    from hypothesis.extra.numpy import arrays

    @settings(max_examples=max_examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def random_inputs(data):
        n_rows = data.draw(st.integers(1, 40), label="rows")
        n_cols = data.draw(st.integers(1, 4), label="columns")
        X = data.draw(arrays(np.float64, (n_rows, n_cols), elements=FLOATS), label="X")
        y = data.draw(arrays(np.float64, n_rows, elements=FLOATS), label="y")
        w = data.draw(st.none() | arrays(np.float64, n_rows, elements=FLOATS), label="w")
        objective = data.draw(st.sampled_from(["reg:squarederror", "binary:logistic",
                                               "count:poisson", "reg:pseudohubererror"]))
        params = {"objective": objective, "max_depth": 3}
        name = data.draw(st.sampled_from(sorted(SPEC)), label="param")
        value = data.draw(st.sampled_from([-1, 0, 1, 2, 3]) if name in SMALL_COUNTS
                          else PARAM_VALUES, label="value")
        params[name] = value
        try:
            booster = gbm.train(params, X, y, 3, sample_weight=w)
        except (ValueError, TypeError, FloatingPointError):
            return
        rows = np.nan_to_num(X, posinf=0.0, neginf=0.0)
        prediction = booster.predict(rows)
        assert np.isfinite(prediction).all() or objective == "count:poisson", prediction
        text = booster.to_json()
        assert gbm.Booster.from_json(text).to_json() == text

    random_inputs()


if __name__ == "__main__":
    kind, examples = sys.argv[1], int(sys.argv[2])
    {"model-files": fuzz_model_files, "inputs": fuzz_inputs}[kind](examples)
    print("ok")
