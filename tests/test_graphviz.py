"""``gbm.to_graphviz``: one tree as Graphviz DOT text, XGBoost's ``to_graphviz`` to the
byte (the oracle: xgboost's own text for the model gbm imported from it, and for a gbm
model exported to XGBoost). Only the text is checked: drawing needs Graphviz's ``dot``
program, which the tests do not."""
import re
import sys
import warnings

import numpy as np
import pytest

import gbm

xgb = pytest.importorskip("xgboost")
pd = pytest.importorskip("pandas")


def _models():
    """An XGBoost model with a numeric feature with missing values, a category column and
    a name that needs escaping, and gbm's import of it."""
    rng = np.random.default_rng(0)
    n = 400
    X = pd.DataFrame({"a": rng.normal(size=n),
                      "c": pd.Categorical(rng.integers(0, 6, n).astype(str)),
                      'q"x': rng.normal(size=n)})
    X.loc[::7, "a"] = np.nan
    y = X["a"].fillna(0) + (X["c"].cat.codes % 2) + X['q"x']
    theirs = xgb.train({"max_depth": 3, "max_cat_to_onehot": 1, "nthread": 1},
                       xgb.DMatrix(X, y, enable_categorical=True), 4)
    return theirs, gbm.Booster.from_xgboost(theirs)


def _as_xgboost_3_4(text, with_stats):
    """XGBoost before 3.4 writes a categorical split's gain and cover even without
    ``with_stats`` (3.4 fixed it; gbm writes what 3.4 does): those lines taken out."""
    version = tuple(int(v) for v in xgb.__version__.split(".")[:2])
    if with_stats or version >= (3, 4):
        return text
    return re.sub(r'(label="[^"]*:\{[^}]*\})\ngain=[^\n]*\ncover=[^"]*"', r'\1"', text)


OPTIONS = [
    {},
    {"with_stats": True},
    {"tree_idx": 1, "with_stats": True, "rankdir": "LR", "yes_color": "#ff0000",
     "no_color": "#00ff00", "condition_node_params": {"style": "filled", "shape": "box"},
     "leaf_node_params": {"shape": "box", "fillcolor": "#e48038"}},
    {"tree_idx": 3, "rankdir": "TB", "size": "5,5", "ratio": "fill"},  # graph attributes
]


@pytest.mark.parametrize("options", OPTIONS, ids=["default", "stats", "styled", "graph"])
def test_dot_text_is_xgboosts(options):
    pytest.importorskip("graphviz")
    theirs, ours = _models()
    assert ours.forest().has_categorical
    expected = _as_xgboost_3_4(xgb.to_graphviz(theirs, **options).source,
                               options.get("with_stats", False))
    got = gbm.to_graphviz(ours, **options)
    assert type(got).__name__ == "Source"
    assert got.source == expected
    assert "c:{" in expected and "missing" in expected and 'q\\"x<' in expected


def test_every_tree_and_the_dot_dump_without_graphviz():
    """``get_dump(dump_format="dot")`` gives each tree's text, as XGBoost's does, without
    the graphviz package."""
    theirs, ours = _models()
    for with_stats in (False, True):
        expected = theirs.get_dump(dump_format="dot", with_stats=with_stats)
        assert ours.get_dump(dump_format="dot", with_stats=with_stats) == \
            [_as_xgboost_3_4(text, with_stats) for text in expected]


def test_a_gbm_model_through_its_xgboost_export(tmp_path):
    pytest.importorskip("graphviz")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 3)).astype(np.float32)
    X[::5, 1] = np.nan
    y = X[:, 0] + np.nan_to_num(X[:, 1]) ** 2
    ours = gbm.train({"max_depth": 3, "learning_rate": 0.3}, X, y, 3)
    path = tmp_path / "model.json"
    ours.save_model(path, format="xgboost")
    theirs = xgb.Booster(model_file=str(path))
    for tree_idx in range(3):
        assert gbm.to_graphviz(ours, tree_idx=tree_idx, with_stats=True).source == \
            xgb.to_graphviz(theirs, tree_idx=tree_idx, with_stats=True).source


def test_feature_map_and_estimators(tmp_path):
    pytest.importorskip("graphviz")
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 2)).astype(np.float32)
    X[:, 1] = rng.integers(0, 2, 300)  # an indicator
    y = X[:, 0] + 2 * X[:, 1]
    theirs = xgb.train({"max_depth": 3, "nthread": 1}, xgb.DMatrix(X, y), 2)
    ours = gbm.Booster.from_xgboost(theirs)
    fmap = tmp_path / "features.txt"
    fmap.write_text("0 size q\n1 is_big i\n")
    expected = xgb.to_graphviz(theirs, fmap=str(fmap), tree_idx=1).source
    assert gbm.to_graphviz(ours, fmap=str(fmap), tree_idx=1).source == expected
    assert 'label="is_big"' in expected and 'label="size<' in expected
    model = gbm.GBMRegressor(n_estimators=2, max_depth=2).fit(X, y)
    assert gbm.to_graphviz(model).source == gbm.to_graphviz(model.get_booster()).source


def test_num_trees_is_the_old_name_of_tree_idx():
    pytest.importorskip("graphviz")
    _, ours = _models()
    with pytest.warns(FutureWarning, match="num_trees"):
        old = gbm.to_graphviz(ours, num_trees=2).source
    assert old == gbm.to_graphviz(ours, tree_idx=2).source
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(ValueError, match="Both `num_trees` and `tree_idx`"):
            gbm.to_graphviz(ours, num_trees=2, tree_idx=1)


def test_bad_arguments(tmp_path):
    pytest.importorskip("graphviz")
    _, ours = _models()
    with pytest.raises(ValueError, match=r"tree_idx must be an int in \[0, 4\)"):
        gbm.to_graphviz(ours, tree_idx=4)
    with pytest.raises(ValueError, match="tree_idx"):
        gbm.to_graphviz(ours, tree_idx=1.5)
    with pytest.raises(TypeError, match="with_stats must be True or False"):
        gbm.to_graphviz(ours, with_stats="yes")
    with pytest.raises(TypeError, match="node parameters must be a dict"):
        gbm.to_graphviz(ours, leaf_node_params="shape=box")
    with pytest.raises(TypeError, match="expected a gbm Booster"):
        gbm.to_graphviz("model.json")
    fmap = tmp_path / "bad.txt"
    fmap.write_text("1 a q\n")
    with pytest.raises(ValueError, match="indices must be 0, 1, 2"):
        gbm.to_graphviz(ours, fmap=str(fmap))
    fmap.write_text("0 a z\n")
    with pytest.raises(ValueError, match="type 'z'"):
        gbm.to_graphviz(ours, fmap=str(fmap))


def test_without_the_graphviz_package(monkeypatch):
    _, ours = _models()
    monkeypatch.setitem(sys.modules, "graphviz", None)  # import graphviz fails
    with pytest.raises(ImportError, match="pip install graphviz"):
        gbm.to_graphviz(ours)
