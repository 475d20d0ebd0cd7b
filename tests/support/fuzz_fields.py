"""Hypothesis fuzzing of both importers field by field, run by
``test_fuzz_model_files.py`` in a fresh interpreter (a crash, a hang or an allocation
past the memory limit must fail the test, not the run):
``python -m tests.support.fuzz_fields {gbm|xgboost} MAX_EXAMPLES``.

Files: gbm's own model files (those of ``fuzz_models``, and an estimator's file), and
XGBoost JSON models that xgboost trains (regression with feature names, multiclass,
dart, categorical with string and integer categories, early stopping) and that gbm
exports (string and by-value categories, a forest, a dart model).

One mutation per example, of one field: the field drawn first (each field of the file
alike, with a tree drawn for a tree's field), then what happens to it: its value
replaced (huge and negative integers, NaN, infinities, strings, numbers as XGBoost's
strings, null, lists, objects), the key dropped, a list item dropped, added or replaced
(an index out of range), or a child pointed back at an ancestor (a cycle).

Property: the file either loads, predicts finite margins that agree with its leaf
indices, explains, dumps and round-trips (gbm's file; an XGBoost model exported again
and imported back, predicting the same when its categories came back the same), or
raises ``ValueError`` whose message names the mutated field (the innermost key of its
path) and, for a tree's field, the tree (``trees[3]``). Each example in at most a
second of CPU time; the interpreter under an address-space limit (``RLIMIT_AS``,
``MEMORY_HEADROOM`` above what it holds after the warm-up).
"""
import json
import math
import resource
import signal
import sys
import time

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gbm
from tests.support import fuzz_models

MEMORY_HEADROOM = 1 << 30  # bytes of address space an example may add
CPU_SECONDS = 1.0  # per example
ALARM_SECONDS = 10.0  # CPU time after which a (hung) example is interrupted

SPECIAL = [2 ** 31, 2 ** 31 - 1, 2 ** 63 - 1, 2 ** 64, 10 ** 30, -1, -2, -(2 ** 31) - 1, 0,
           1e39, 1e308, -1e308, math.nan, math.inf, -math.inf, 0.5, True, None,
           "", "abc", "3", "-1", "0", "1000000000", "2147483648", "1e400", "nan", "inf",
           "[1,2]", [], [0], [1, 2, 3], {}, {"a": 1}]
NUMBER_TEXT = ["4", "2", "1", "-1", "0", "1000000000", "2147483648", "1e3", "0.5", "nan",
               "-inf", "[0.5]", "[]", "3.5"]


# --- the files ---------------------------------------------------------------------------

def _gbm_files():
    from gbm.io import gbm_json
    from gbm.sklearn.files import estimator_section

    files = {name: text for name, (text, _) in fuzz_models._base_models().items()}
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    est = gbm.GBMClassifier(n_estimators=2, max_depth=2).fit(X, (X[:, 0] > 0).astype(int))
    files["estimator"] = gbm_json.dumps(est.get_booster(), estimator_section(est))
    return files


def _xgboost_files():
    import pandas as pd
    import xgboost as xgb

    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 4)).astype(np.float32)
    X[::11, 1] = np.nan
    y = X[:, 0] + np.nan_to_num(X[:, 1]) ** 2
    frame = pd.DataFrame({"c": pd.Categorical(rng.choice(list("pqrst"), 300)),
                          "k": pd.Categorical(rng.choice([3, 5, 9], 300)), "x": X[:, 0]})
    yc = frame["c"].cat.codes.to_numpy() % 2 + frame["x"].to_numpy()

    def raw(booster):
        return bytes(booster.save_raw(raw_format="json")).decode("utf-8")

    def trained(params, data, rounds=3, **kw):
        return raw(xgb.train(dict(params, max_depth=3), data, rounds, **kw))

    named = xgb.DMatrix(X, label=y, feature_names=["a", "b", "c", "d"])
    label3 = np.digitize(y, [0.0, 1.0]).astype(float)
    files = {
        "named": trained({}, named),
        "multi": trained({"objective": "multi:softprob", "num_class": 3},
                         xgb.DMatrix(X, label=label3), 2),
        "dart": trained({"booster": "dart", "rate_drop": 0.5}, xgb.DMatrix(X, label=y)),
        "categorical": trained({"max_cat_to_onehot": 1, "tree_method": "hist"},
                               xgb.DMatrix(frame, label=yc, enable_categorical=True)),
        "stopped": trained({"objective": "binary:logistic"},
                           xgb.DMatrix(X[:200], label=y[:200] > 0.5), 20,
                           evals=[(xgb.DMatrix(X[200:], label=y[200:] > 0.5), "v")],
                           early_stopping_rounds=2, verbose_eval=False),
    }
    files.update(_gbm_exports(rng, X, y))
    return files


def _gbm_exports(rng, X, y):
    """gbm models exported to XGBoost's format: string and by-value categories, a forest,
    a dart model."""
    import pandas as pd

    from gbm.io.xgboost_json import to_xgboost

    ints = rng.choice([3, 5, 7, 10], 300)
    mixed = pd.DataFrame({"s": pd.Categorical(rng.choice(list("abc"), 300)), "n": ints,
                          "x": X[:, 2]})
    categorical = gbm.train({"max_depth": 3, "max_cat_to_onehot": 1}, mixed,
                            (ints == 5) + (mixed["s"] == "b") + X[:, 2], 2,
                            categorical_features=["n"])
    forest = gbm.train({"num_parallel_tree": 2, "subsample": 0.8, "max_depth": 2}, X, y, 2)
    dart = gbm.train({"booster": "dart", "rate_drop": 0.5, "max_depth": 2}, X, y, 3)
    return {"gbm_categorical": json.dumps(to_xgboost(categorical)),
            "gbm_forest": json.dumps(to_xgboost(forest)), "gbm_dart": json.dumps(to_xgboost(dart))}


# --- the mutation ------------------------------------------------------------------------

def _fields(doc, path=()):
    """Every (path, container, key) of a value in a dict of the document."""
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc)
    for key, value in items:
        if isinstance(doc, dict):
            out.append((path + (key,), doc, key))
        if isinstance(value, (dict, list)):
            out += _fields(value, path + (key,))
    return out


def _pattern(path):
    """A field's path with the tree index left out: the same field of every tree."""
    return tuple("*" if isinstance(k, int) else k for k in path)


def _ancestors(left, right, node):
    """The nodes above ``node`` (XGBoost ids or gbm's), from the children lists."""
    parent = {}
    for p, (a, b) in enumerate(zip(left, right)):
        if isinstance(a, int) and a >= 0:
            parent[a] = p
        if isinstance(b, int) and b >= 0:
            parent[b] = p
    out = []
    while node in parent and parent[node] not in out:
        node = parent[node]
        out.append(node)
    return out


def _cycle(data, path, container):
    """Point a child of a split node back at one of its ancestors (or itself)."""
    key = path[-1]
    children = container[key]
    other = {"left_children": "right_children", "right_children": "left_children",
             "left_child": "right_child"}[key]
    inner = [i for i, c in enumerate(children) if isinstance(c, int) and c >= 0]
    if not inner:
        return None
    node = data.draw(st.sampled_from(inner), label="node")
    left = container["left_children" if "left_children" in container else "left_child"]
    right = container["right_children" if "right_children" in container else "right_child"]
    target = data.draw(st.sampled_from([node] + _ancestors(left, right, node)), label="ancestor")
    children[node] = target
    if key == "left_child":  # gbm: the right child is the left one + 1
        container[other][node] = target + 1
    return path + (node,)


def _item_value(data, items):
    """A replacement for one item of a list: a special value, an index just out of range,
    or an item of the same list."""
    return data.draw(st.one_of(st.sampled_from(SPECIAL),
                               st.sampled_from([len(items), len(items) + 1, -2, -1]),
                               st.sampled_from(items)), label="item")


def _mutate(data, doc):
    """Mutate one field of ``doc`` in place; returns the path whose field is mutated."""
    located = _fields(doc)
    patterns = sorted({_pattern(p) for p, _, _ in located}, key=repr)
    pattern = data.draw(st.sampled_from(patterns), label="field")
    path, container, key = data.draw(st.sampled_from(
        [f for f in located if _pattern(f[0]) == pattern]), label="where")
    value = container[key]
    actions = ["replace", "drop"] + (["item", "drop item", "add item"] if type(value) is list
                                     and value else ["add item"] if type(value) is list else [])
    if type(value) is str:
        actions.append("number text")
    if key in ("left_children", "right_children", "left_child"):
        actions.append("cycle")
    action = data.draw(st.sampled_from(actions), label="action")
    if action == "cycle":
        mutated = _cycle(data, path, container)
        if mutated is not None:
            return mutated
        action = "replace"
    if action == "replace":
        container[key] = data.draw(st.one_of(st.sampled_from(SPECIAL), fuzz_models.JSON_VALUES),
                                   label="value")
    elif action == "number text":
        container[key] = data.draw(st.sampled_from(NUMBER_TEXT), label="text")
    elif action == "drop":
        del container[key]
    elif action == "drop item":
        del value[data.draw(st.integers(0, len(value) - 1), label="at")]
    elif action == "add item":
        value.insert(data.draw(st.integers(0, len(value)), label="at"),
                     _item_value(data, value or [0]))
    else:
        at = data.draw(st.integers(0, len(value) - 1), label="at")
        value[at] = _item_value(data, value)
        return path + (at,)
    return path


def _names(path):
    """What a message must name: the innermost key, and the tree of a tree's field."""
    field = next(k for k in reversed(path) if isinstance(k, str))
    names = [field]
    for a, b in zip(path, path[1:]):
        if a == "trees" and isinstance(b, int) and path[-1] != "trees":
            names.append(f"trees[{b}]")
    return names


# --- the property ------------------------------------------------------------------------

def _rows(booster, n=20):
    """Rows the model can predict, some missing: numbers for numeric features, labels
    for categorical ones (a DataFrame 'category' column unless all labels are integers
    that a numeric column may hold)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, booster.n_features))
    X[::5, 0] = np.nan
    columns = {}
    for f, labels in enumerate(booster.categories or []):
        if labels and all(type(v) is int and 0 <= v < 2 ** 24 for v in labels):
            X[:, f] = rng.choice(np.asarray(labels, dtype=np.float64), n)
        elif labels:
            import pandas as pd

            picks = [labels[i] for i in rng.integers(0, len(labels), n)]
            columns[f] = pd.Categorical(picks, categories=labels)
    if not columns:
        return X
    import pandas as pd

    frame = pd.DataFrame({f: columns.get(f, X[:, f]) for f in range(booster.n_features)})
    frame.columns = booster.feature_names or [f"f{f}" for f in range(booster.n_features)]
    return frame  # (feature names may repeat)


def _check_xgboost_round_trip(booster, rows):
    from gbm.io.xgboost_json import to_xgboost

    back = gbm.Booster.from_xgboost(json.dumps(to_xgboost(booster)))
    margin = booster.predict(rows, output_margin=True)
    again = back.predict(rows, output_margin=True)
    assert again.shape == margin.shape and np.isfinite(again).all()
    if back.categories == booster.categories:
        scale = 1e-6 * (1.0 + float(np.abs(margin).max(initial=0.0)))
        np.testing.assert_allclose(again, margin, rtol=1e-5, atol=scale)


def _load(kind, text):
    if kind == "gbm":
        return gbm.Booster.from_json(text)
    return gbm.Booster.from_xgboost(text)


class _Overran(Exception):
    pass


def _alarm(signum, frame):
    raise _Overran(f"an example ran past {ALARM_SECONDS} s of CPU time")


def _limit_memory():
    with open("/proc/self/status") as fh:
        size = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (size + MEMORY_HEADROOM, resource.RLIM_INFINITY))


def fuzz_fields(kind, max_examples):
    files = _gbm_files() if kind == "gbm" else _xgboost_files()
    for text in files.values():  # warm-up: every kernel compiled (or read from the cache)
        booster = _load(kind, text)
        fuzz_models._check_loaded(booster, _rows(booster))
    signal.signal(signal.SIGPROF, _alarm)
    _limit_memory()

    @settings(max_examples=max_examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def one_field_mutated(data):
        name = data.draw(st.sampled_from(sorted(files)), label="file")
        doc = json.loads(files[name])
        path = _mutate(data, doc)
        text = json.dumps(doc)
        start = time.process_time()
        signal.setitimer(signal.ITIMER_PROF, ALARM_SECONDS)
        try:
            booster = _load(kind, text)
        except ValueError as err:
            message = str(err)
            missing = [n for n in _names(path) if n not in message]
            assert not missing, f"{path}: the message does not name {missing}: {message}"
            return
        else:
            rows = _rows(booster)
            fuzz_models._check_loaded(booster, rows)
            if kind == "xgboost":
                _check_xgboost_round_trip(booster, rows)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            spent = time.process_time() - start
            assert spent <= CPU_SECONDS, f"{path}: {spent:.2f} s of CPU time"

    one_field_mutated()


if __name__ == "__main__":
    fuzz_fields(sys.argv[1], int(sys.argv[2]))
    print("ok")
