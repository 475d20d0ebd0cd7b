"""Dumps, importances and split histograms named by a feature map (``fmap``) or by the
model's feature names and types, checked against XGBoost on the same trees (an XGBoost
model imported into gbm: ``Booster.from_xgboost``)."""
import io
import json
import re

import numpy as np
import pytest

import gbm

xgb = pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def pair():
    """(gbm booster, xgboost booster, X): the same trees. Feature 1 is 0/1 (an indicator),
    feature 2 integers."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(500, 4))
    X[:, 1] = rng.integers(0, 2, 500)
    X[:, 2] = rng.integers(0, 9, 500) + 0.5 * (rng.random(500) < 0.1)
    y = X[:, 0] + 2 * X[:, 1] + X[:, 2] + rng.normal(scale=0.1, size=500)
    theirs = xgb.train({"max_depth": 3, "base_score": 0.5}, xgb.DMatrix(X, y), 3)
    return gbm.Booster.from_xgboost(theirs), theirs, X


@pytest.fixture
def fmap(tmp_path):
    path = tmp_path / "featmap.txt"
    path.write_text("0\tx0\tq\n1\tx1\ti\n2\tx2\tint\n3\tx3\tfloat\n")
    return str(path)


_NUMBER = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?")


def _same_text(a, b, indent=True, rtol=1e-7):
    """Two dumps' lines equal, their numbers to a relative ``rtol`` (XGBoost
    prints float32 values with 9; gbm its float64 values, here the float32 values of the
    imported model read from XGBoost's shortest text, with 9 too); ``indent=False``:
    leading tabs ignored (XGBoost writes an indicator's line without them)."""
    lines_a, lines_b = a.splitlines(), b.splitlines()
    if not indent:
        lines_a, lines_b = [x.lstrip("\t") for x in lines_a], [x.lstrip("\t") for x in lines_b]
    assert len(lines_a) == len(lines_b)
    for x, y in zip(lines_a, lines_b):
        assert _NUMBER.sub("#", x) == _NUMBER.sub("#", y), (x, y)
        for u, v in zip(_NUMBER.findall(x), _NUMBER.findall(y)):
            assert np.isclose(float(u), float(v), rtol=rtol, atol=0), (x, y)


def test_text_dump_equals_xgboosts(pair, fmap):
    """Line for line, with and without a feature map and statistics (an indicator's line
    aside: XGBoost writes it without its indentation, gbm indents it as every other)."""
    ours, theirs, _ = pair
    for a, b in zip(ours.get_dump(), theirs.get_dump()):
        _same_text(a, b)
    mine, ref = ours.get_dump(fmap), theirs.get_dump(fmap)
    for a, b in zip(mine, ref):
        _same_text(a, b, indent=False)
    assert any("[x1] yes=" in d for d in mine) and any("[x2<" in d for d in mine)
    # statistics: gbm prints 6 significant digits
    for a, b in zip(ours.get_dump(fmap, with_stats=True), theirs.get_dump(fmap, with_stats=True)):
        _same_text(a, b, indent=False, rtol=1e-5)


def _same_json(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return np.float32(a) == np.float32(b) or abs(a - b) <= 1e-5 * max(abs(a), abs(b))
    return a == b


@pytest.mark.parametrize("with_stats", [False, True])
def test_json_dump_equals_xgboosts(pair, fmap, with_stats):
    ours, theirs, _ = pair
    for path in ("", fmap):
        for a, b in zip(ours.get_dump(path, with_stats, "json"),
                        theirs.get_dump(path, with_stats, "json")):
            assert _same_json(json.loads(a), json.loads(b))


def test_special_characters_in_names(pair):
    """Quotes, tabs, newlines, backslashes, control and non-ASCII characters are escaped
    as XGBoost escapes them; the JSON dump stays valid JSON with the names themselves."""
    ours, theirs, _ = pair
    names = ['"feature 0"', "\tfeature\n1", 'feature "2".', "모델\\x\x01"]
    ours, theirs = ours.copy(), theirs.copy()
    ours.feature_names = theirs.feature_names = names
    for a, b in zip(ours.get_dump(), theirs.get_dump()):
        _same_text(a, b)
    for tree in ours.get_dump(dump_format="json"):
        def splits(node):
            return ([node["split"]] if "split" in node else []) + [
                s for child in node.get("children", []) for s in splits(child)]
        assert set(splits(json.loads(tree))) <= set(names)
    assert any('feature \\"2\\"' in d for d in ours.get_dump(dump_format="dot"))


def test_dump_model_file(pair, tmp_path):
    ours, theirs, _ = pair
    for fmt in ("text", "json"):
        ours.dump_model(tmp_path / "ours.txt", dump_format=fmt)
        theirs.dump_model(str(tmp_path / "theirs.txt"), dump_format=fmt)
        mine, ref = (tmp_path / "ours.txt").read_text(), (tmp_path / "theirs.txt").read_text()
        if fmt == "text":
            _same_text(mine, ref)
        else:
            assert _same_json(json.loads(mine), json.loads(ref))
    buffer = io.StringIO()
    ours.dump_model(buffer, with_stats=True)
    assert buffer.getvalue().startswith("booster[0]:\n0:[f")


def test_importances_with_a_feature_map(pair, fmap):
    ours, theirs, _ = pair
    assert ours.get_fscore(fmap) == theirs.get_fscore(fmap)
    for kind in ("gain", "cover", "total_gain", "total_cover"):
        a, b = ours.get_score(fmap, importance_type=kind), theirs.get_score(fmap, importance_type=kind)
        assert a.keys() == b.keys()
        np.testing.assert_allclose([a[k] for k in a], [b[k] for k in a], rtol=1e-5)


def test_split_value_histogram(pair):
    ours, theirs, _ = pair
    for feature in ("f0", "f2", "not_there"):
        for bins in (None, 0, 1, 2, 5):
            a = ours.get_split_value_histogram(feature, bins=bins, as_pandas=False)
            b = theirs.get_split_value_histogram(feature, bins=bins, as_pandas=False)
            np.testing.assert_allclose(a, b, rtol=1e-6)
    frame = ours.get_split_value_histogram("f0")
    assert list(frame.columns) == ["SplitValue", "Count"]


def test_types_from_the_model(pair):
    """Without a feature map, the model's names and types shape the dump, as XGBoost."""
    ours, theirs, _ = pair
    ours, theirs = ours.copy(), theirs.copy()
    for b in (ours, theirs):
        b.feature_names = ["a", "b", "c", "d"]
        b.feature_types = ["q", "i", "int", "float"]
    for a, b in zip(ours.get_dump(), theirs.get_dump()):
        _same_text(a, b, indent=False)


def test_bad_feature_maps(pair, tmp_path):
    ours, _, _ = pair
    with pytest.raises(FileNotFoundError, match="no feature map file") as err:
        ours.get_dump(fmap=str(tmp_path / "foo"))
    assert isinstance(err.value, ValueError)  # XGBoost's XGBoostError is a ValueError
    short = tmp_path / "short.txt"
    short.write_text("0 a q\n1 b q\n")
    with pytest.raises(ValueError, match="lists 2 features but the model has 4"):
        ours.get_score(fmap=str(short))
    wrong = tmp_path / "wrong.txt"
    wrong.write_text("0 a q\n1 b zz\n2 c q\n3 d q\n")
    with pytest.raises(ValueError, match="type 'zz'"):
        ours.get_dump(fmap=str(wrong))
    with pytest.raises(ValueError, match=r"arguments are \(fmap, with_stats, dump_format\).*"
                                         r"dump_format='json'"):
        ours.get_dump("json")
    with pytest.raises(ValueError, match=r"importance_type='gain'"):
        ours.get_score("gain")


def test_split_value_histogram_of_a_categorical_feature_is_refused():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"c": pd.Categorical(rng.choice(list("abcd"), 300)),
                      "x": rng.normal(size=300)})
    y = (X["c"] == "b") + X["x"]
    booster = gbm.train({"max_depth": 3}, X, y, 3)
    with pytest.raises(ValueError, match="doesn't support categorical splits: feature 'c'"):
        booster.get_split_value_histogram("c")
    assert booster.get_split_value_histogram("x", as_pandas=False).shape[1] == 2
