"""``gbm.DMatrix`` read from a file named as XGBoost names it (``gbm.data.uri``,
``gbm.data.text_formats``): LIBSVM and CSV text with their URI parameters, paths as str
or ``os.PathLike``, and the errors for files that are missing or malformed. Oracles:
hand-written files with their contents spelled out, scikit-learn's LIBSVM reader, and
xgboost's own ``DMatrix`` on the same files."""
import os
import pathlib

import numpy as np
import pytest
import scipy.sparse as sp

import gbm
from gbm.data.text_formats import FileFormatError
from gbm.data.uri import MissingFileError

DEMO = pathlib.Path("/work/shared/xgb_suite/demo/data")


def _write(folder, name, text):
    path = folder / name
    path.write_text(text)
    return str(path)


def _dense(d):
    """The DMatrix's features with NaN where an entry is absent."""
    X = d.get_data()
    out = np.full(X.shape, np.nan, dtype=np.float32)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    out[rows, X.indices] = X.data
    return out


def test_libsvm_hand_made(tmp_path):
    path = _write(tmp_path, "a.svm", "1 qid:3 1:0.5 3:2 # a comment\n"
                                     "\n"
                                     "0 qid:3 0:1 2:nan\n"
                                     "2.5 qid:7 3:0 1:-4e1\n")
    d = gbm.DMatrix(path + "?format=libsvm")
    nan = np.nan
    np.testing.assert_array_equal(_dense(d), [[nan, 0.5, nan, 2], [1, nan, nan, nan],
                                              [nan, -40, nan, 0]])
    np.testing.assert_array_equal(d.get_label(), [1, 0, 2.5])
    np.testing.assert_array_equal(d.qid, [3, 3, 7])
    assert d.get_weight().shape == (0,) and (d.num_row(), d.num_col()) == (3, 4)
    assert d.get_data().nnz == 5  # the NaN entry dropped, the stored 0 kept


def test_libsvm_weights_and_indexing(tmp_path):
    path = _write(tmp_path, "w.svm", "1:0.25 1:7 2:8\n0:2 3:9\n")
    zero_based = gbm.DMatrix(path + "?format=libsvm")
    np.testing.assert_array_equal(zero_based.get_label(), [1, 0])
    np.testing.assert_array_equal(zero_based.get_weight(), [0.25, 2])
    assert zero_based.num_col() == 4
    for query in ("?indexing_mode=1&format=libsvm", "?format=libsvm&indexing_mode=-1"):
        one_based = gbm.DMatrix(path + query)
        np.testing.assert_array_equal(_dense(one_based), [[7, 8, np.nan], [np.nan, np.nan, 9]])
    # the heuristic reads a file with index 0 as 0-based
    path = _write(tmp_path, "z.svm", "1 0:1 2:2\n")
    assert gbm.DMatrix(path + "?format=libsvm&indexing_mode=-1").num_col() == 3


def test_csv_hand_made(tmp_path):
    path = _write(tmp_path, "a.csv", "1, 2,3\r\n4,,6\n\n7,nan,0\n")
    d = gbm.DMatrix(path + "?format=csv")
    np.testing.assert_array_equal(_dense(d), [[1, 2, 3], [4, np.nan, 6], [7, np.nan, 0]])
    assert d.get_label().shape == (0,)
    d = gbm.DMatrix(path + "?format=csv&label_column=2&weight_column=0")
    np.testing.assert_array_equal(_dense(d), [[2], [np.nan], [np.nan]])
    np.testing.assert_array_equal(d.get_label(), [3, 6, 0])
    np.testing.assert_array_equal(d.get_weight(), [1, 4, 7])
    tab = _write(tmp_path, "a.tsv", "1\t2\n3\t4\n")
    np.testing.assert_array_equal(_dense(gbm.DMatrix(tab + "?format=csv&delimiter=\t")),
                                  [[1, 2], [3, 4]])


def test_paths_and_arguments(tmp_path, monkeypatch):
    path = _write(tmp_path, "a.csv", "0,1,2\n1,3,4\n")
    by_path = gbm.DMatrix(pathlib.Path(path + "?format=csv&label_column=0"))
    np.testing.assert_array_equal(by_path.get_label(), [0, 1])
    monkeypatch.setenv("HOME", str(tmp_path))
    assert gbm.DMatrix("~/a.csv?format=csv").num_col() == 3
    # the arguments override what the file holds
    d = gbm.DMatrix(path + "?format=csv&label_column=0", label=[5, 6],
                    feature_names=["x", "y"], feature_types=["q", "c"])
    np.testing.assert_array_equal(d.get_label(), [5, 6])
    assert d.feature_names == ["x", "y"] and d.feature_types == ["q", "c"]
    # missing applies to a file's values as to an array's
    assert np.isnan(_dense(gbm.DMatrix(path + "?format=csv", missing=1))[0, 1])


def test_training_on_a_file_is_training_on_its_arrays(tmp_path):
    X = sp.random(200, 12, density=0.3, format="csr", random_state=4, dtype=np.float64)
    X.data = np.round(X.data * 10, 3)
    y = (X[:, 0].toarray().ravel() > 2).astype(float)
    lines = [" ".join([f"{y[r]:g}"] + [f"{c}:{v:g}" for c, v in
                                       zip(X[r].indices, X[r].data)]) for r in range(200)]
    path = _write(tmp_path, "t.svm", "\n".join(lines) + "\n")
    params = {"objective": "binary:logistic", "max_depth": 3}
    from_file = gbm.train(params, gbm.DMatrix(path + "?format=libsvm"), 4)
    from_arrays = gbm.train(params, gbm.DMatrix(X, label=y), 4)
    assert from_file.to_json() == from_arrays.to_json()


def _agaricus_like(folder, n=500, seed=0):
    """A LIBSVM file like XGBoost's agaricus demo (1-based one-hot indices, 0/1 labels)."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        cols = np.sort(rng.choice(np.arange(1, 127), size=22, replace=False))
        lines.append(" ".join([str(rng.integers(2))] + [f"{c}:1" for c in cols]))
    return _write(folder, "agaricus_like.txt", "\n".join(lines) + "\n")


@pytest.mark.parametrize("query", ["?format=libsvm", "?indexing_mode=1&format=libsvm"])
def test_libsvm_against_scikit_learn(tmp_path, query):
    from sklearn.datasets import load_svmlight_file

    path = _agaricus_like(tmp_path)
    X, y = load_svmlight_file(path, zero_based="indexing_mode=1" not in query)
    d = gbm.DMatrix(path + query)
    mine = d.get_data()
    assert mine.shape == X.shape
    np.testing.assert_array_equal(mine.toarray(), X.toarray())
    np.testing.assert_array_equal(d.get_label(), y)


def _same_as_xgboost(uri):
    xgb = pytest.importorskip("xgboost")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "text file input has been deprecated"
        theirs = xgb.DMatrix(uri)
    mine = gbm.DMatrix(uri)
    assert (mine.num_row(), mine.num_col()) == (theirs.num_row(), theirs.num_col())
    np.testing.assert_array_equal(mine.get_label(), theirs.get_label())
    a, b = mine.get_data(), theirs.get_data()
    for field in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


@pytest.mark.parametrize("query", ["?format=libsvm", "?indexing_mode=1&format=libsvm",
                                   "?format=libsvm&indexing_mode=-1"])
def test_libsvm_against_xgboost(tmp_path, query):
    _same_as_xgboost(_agaricus_like(tmp_path) + query)


@pytest.mark.parametrize("query", ["?format=csv", "?format=csv&label_column=0"])
def test_csv_against_xgboost(tmp_path, query):
    _same_as_xgboost(_write(tmp_path, "a.csv", "1,2,3\n4,,6\n0,8.5,-9\n") + query)


@pytest.mark.skipif(not DEMO.is_dir(), reason="XGBoost's demo files are not here")
@pytest.mark.parametrize("name", ["agaricus.txt.train", "agaricus.txt.test"])
@pytest.mark.parametrize("query", ["?format=libsvm", "?indexing_mode=1&format=libsvm"])
def test_xgboost_demo_files(name, query):
    _same_as_xgboost(str(DEMO / name) + query)


@pytest.mark.parametrize("text, match", [
    ("1 1:2 1:3\n", "line 1: feature index 1 is given twice"),
    ("1 a:2\n", "line 1: feature index 'a' is not an integer"),
    ("1 1:x\n", "line 1: value 'x' is not a number"),
    ("1 1:2\n0 2:3:4\n", "line 2: '2:3:4' is not index:value"),
    ("1 1:2\n0 2\n", "line 2: '2' is not index:value"),
    ("1 -1:2\n", "line 1: feature index -1 is negative"),
    ("x 1:2\n", "line 1: label 'x' is not a number"),
    ("1 1:1e39\n", "line 1: value 1e\\+39 is beyond float32's range"),
    ("1:2 1:2\n0 1:3\n", "line 2: a weight .* not on every line"),
    ("1 qid:1 1:2\n0 1:3\n", "line 2: no qid:"),
    ("# only a comment\n\n", "holds no rows"),
])
def test_malformed_libsvm(tmp_path, text, match):
    path = _write(tmp_path, "bad.svm", text)
    with pytest.raises(FileFormatError, match=match):
        gbm.DMatrix(path + "?format=libsvm")


def test_index_0_in_a_1_based_file(tmp_path):
    path = _write(tmp_path, "bad.svm", "1 0:1\n")
    with pytest.raises(FileFormatError, match="feature index 0 in a file read as 1-based"):
        gbm.DMatrix(path + "?format=libsvm&indexing_mode=1")


@pytest.mark.parametrize("text, query, error, match", [
    ("1,2\n3\n", "", FileFormatError, "line 2: 1 fields, but line 1 has 2"),
    ("a,b\n1,2\n", "", FileFormatError, "line 1: field 'a' is not a number .* header"),
    ("1,2\n", "&label_column=2", ValueError, "label_column=2, but .* has 2 columns"),
    ("1,2\n", "&label_column=0&weight_column=0", ValueError, "both 0"),
    ("1,2\n", "&label_column=x", ValueError, "label_column='x' must be an integer"),
    ("1,2\n", "&delimiter=ab", ValueError, "must be one character"),
    ("1,2\n", "&indexing_mode=1", ValueError, "unknown URI parameter 'indexing_mode'"),
    ("1,2\n", "&format=csv", ValueError, "'format' is given twice"),
    ("1,2\n", "&oops", ValueError, "'oops' is not key=value"),
])
def test_malformed_csv_and_parameters(tmp_path, text, query, error, match):
    path = _write(tmp_path, "bad.csv", text)
    with pytest.raises(error, match=match):
        gbm.DMatrix(path + "?format=csv" + query)


def test_file_errors(tmp_path):
    with pytest.raises(MissingFileError, match="no such file") as caught:
        gbm.DMatrix(str(tmp_path / "absent.txt") + "?format=libsvm")
    # XGBoost raises XGBoostError (a ValueError); a Python user expects FileNotFoundError
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, FileNotFoundError)
    with pytest.raises(ValueError, match="is a folder"):
        gbm.DMatrix(str(tmp_path) + "?format=csv")
    text = _write(tmp_path, "a.csv", "1,2\n")
    with pytest.raises(ValueError, match="`format` is required for loading text data"):
        gbm.DMatrix(text)
    with pytest.raises(ValueError, match="URI parameters .* without format="):
        gbm.DMatrix(text + "?label_column=0")
    with pytest.raises(ValueError, match="unknown format='parquet'"):
        gbm.DMatrix(text + "?format=parquet")
    with pytest.raises(ValueError, match="external memory .* ExtMemQuantileDMatrix"):
        gbm.DMatrix(text + "?format=csv#dtrain.cache")
    with pytest.raises(TypeError, match="data is bytes"):
        gbm.DMatrix(text.encode())


def test_xgboost_binary_buffer_is_named(tmp_path):
    xgb = pytest.importorskip("xgboost")
    path = str(tmp_path / "x.buffer")
    xgb.DMatrix(np.ones((2, 2)), label=[0, 1]).save_binary(path)
    with pytest.raises(ValueError, match="XGBoost binary DMatrix buffer"):
        gbm.DMatrix(path)
    assert os.path.exists(path)
