"""``DMatrix``'s XGBoost methods beside training (issue 43): meta info by name, query
group offsets, feature weights, feature names and types, ``slice``, ``num_nonmissing``,
``get_data``, ``get_categories``, the input checks made when it is built, and a
``DataIter`` as its data. Real xgboost is the oracle where it is installed."""
import warnings

import numpy as np
import pytest

import gbm

xgb = pytest.importorskip("xgboost")


def _X(n=12, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def test_group_ptr_and_uint_info_as_xgboost():
    X = _X(6)
    for setter in (lambda d: d.set_uint_info("group", [2, 4]),
                   lambda d: d.set_group(np.array([2, 4], np.uint32)),
                   lambda d: d.set_info(qid=[0, 0, 1, 1, 1, 2]),
                   lambda d: d.set_uint_info("qid", [3, 3, 5, 5, 5, 5])):
        ours, theirs = gbm.DMatrix(X), xgb.DMatrix(X)
        setter(ours)
        setter(theirs)
        got, want = ours.get_uint_info("group_ptr"), theirs.get_uint_info("group_ptr")
        assert got.dtype == want.dtype == np.uint32
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(ours.get_group(), theirs.get_group())
    empty = gbm.DMatrix(X).get_uint_info("group_ptr")
    assert empty.shape == (0,) and empty.dtype == np.uint32
    with pytest.raises(ValueError, match="group_ptr"):
        gbm.DMatrix(X).get_uint_info("qid")
    with pytest.raises(ValueError, match="unknown uint field 'foo'"):
        gbm.DMatrix(X).get_uint_info("foo")


def test_float_info_every_field():
    X = _X(4, 2)
    d = gbm.DMatrix(X)
    values = {"label": [1, 2, 3, 4], "weight": [1, 1, 2, 2], "base_margin": [0, 0.5, 1, 1],
              "label_lower_bound": [1, 1, 1, 1], "label_upper_bound": [2, 2, np.inf, 2],
              "feature_weights": [0.5, 2.0]}
    for field, value in values.items():
        assert d.get_float_info(field).shape == (0,)  # empty before, as XGBoost's
        d.set_float_info(field, value)
        got = d.get_float_info(field)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, np.asarray(value, np.float32))
    assert d.feature_weights is not None  # what column sampling reads
    with pytest.raises(ValueError, match="unknown float field 'foo'"):
        d.set_float_info("foo", [1])
    # a one-column frame or matrix is a vector, as XGBoost reads it
    d.set_info(weight=np.ones((4, 1)))
    assert d.get_weight().shape == (4,)


def test_feature_weights_checked_when_set():
    X = _X(5, 4)
    d = gbm.DMatrix(X, feature_weights=[1, 2, 3, 4])
    np.testing.assert_array_equal(d.get_float_info("feature_weights"), [1, 2, 3, 4])
    d.set_info(feature_weights=np.empty(0))  # cleared, as XGBoost's
    assert d.get_float_info("feature_weights").shape == (0,)
    with pytest.raises(ValueError, match=r"feature_weights\[1\] is -1.0.*>= 0"):
        d.set_info(feature_weights=[1, -1, 1, 1])
    with pytest.raises(ValueError, match="feature_weights has 2 entries but the data has 4"):
        d.set_info(feature_weights=[1, 1])  # XGBoost takes it and fails later
    q = gbm.QuantileDMatrix(X, feature_weights=[0, 1, 0, 1])
    np.testing.assert_array_equal(q.get_float_info("feature_weights"), [0, 1, 0, 1])


def test_label_and_base_margin_checked_when_set():
    X = _X(4, 2)
    with pytest.raises(ValueError, match=r"Label contains NaN: label\[2\]"):
        gbm.DMatrix(X, label=[1, 2, np.nan, 4])
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="Label contains NaN"):
        gbm.DMatrix(X, label=pd.Series([1, None, 2, 3], dtype="Float32"))
    d = gbm.DMatrix(X, base_margin=X)  # (4, 2): per output group, kept as given
    assert d.get_base_margin().shape == (4, 2)
    with pytest.raises(ValueError, match="base_margin must be 1- or 2-dimensional"):
        d.set_base_margin(np.ones((2, 2, 2)))


def test_feature_names_and_types_checked_as_xgboost():
    X = _X(5, 5)
    with pytest.raises(ValueError, match="feature_names has 6 names but the data has 5"):
        gbm.DMatrix(X, feature_names=list("abcdef"))
    with pytest.raises(ValueError, match=r"feature_names must be unique. Duplicates found: "
                                         r"\['d'\]"):
        gbm.DMatrix(X, feature_names=list("abcdd"))
    with pytest.raises(ValueError, match="may not contain"):
        gbm.DMatrix(X, feature_names=["a", "b", "c", "d", "e<1"])
    d = gbm.DMatrix(X)
    d.feature_names = list("abcde")
    with pytest.raises(ValueError, match=r"Duplicates found: \['bar'\]"):
        d.feature_names = ["bar"] * 3 + ["a", "b"]
    assert d.feature_names == list("abcde")  # a refused name leaves the old ones
    d.feature_types = list("qiqiq")
    with pytest.raises(ValueError, match="feature_types holds 'a'"):
        d.feature_types = list("abcde")
    d.feature_names = d.feature_types = None
    assert d.feature_names is None and d.feature_types is None
    # every message here is one XGBoost raises on the same input
    for bad in (list("abcdd"), ["a", "b", "c", "d", "e<1"], list("abcdef")):
        with pytest.raises(ValueError):
            xgb.DMatrix(X, feature_names=bad)


def test_default_feature_types_of_a_frame_as_xgboost():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({
        "a": [1, 2], "b": [1.0, 2.0], "c": [True, False], "d": pd.Categorical(["x", "y"]),
        "e": pd.array([1, None], dtype="Int64"), "f": pd.array([1.0, None], dtype="Float32"),
        "g": pd.array([True, None], dtype="boolean"), "h": np.array([1, 2], np.uint8)})
    want = xgb.DMatrix(frame, enable_categorical=True).feature_types
    assert gbm.DMatrix(frame).feature_types == want
    assert gbm.QuantileDMatrix(frame).feature_types == want
    assert gbm.DMatrix(_X()).feature_types is None


def test_slice_is_the_dmatrix_of_the_rows():
    X, y = _X(30, 4), np.arange(30.0)
    margin = np.random.default_rng(1).normal(size=(30, 3))
    d = gbm.DMatrix(X, y, weight=np.arange(30) + 1.0, base_margin=margin,
                    feature_names=list("abcd"), feature_weights=[1, 2, 3, 4])
    rows = [5, 1, 7]
    s = d.slice(rows)
    np.testing.assert_array_equal(s.get_label(), y[rows])
    np.testing.assert_array_equal(s.get_weight(), np.arange(30.0)[rows] + 1)
    np.testing.assert_array_equal(s.get_base_margin(), margin[rows].astype(np.float32))
    np.testing.assert_array_equal(s.get_data().toarray(), X[rows].astype(np.float32))
    assert s.feature_names == list("abcd")
    np.testing.assert_array_equal(s.get_float_info("feature_weights"), [1, 2, 3, 4])
    assert s.slice(np.array([2])).get_label()[0] == y[7]
    with pytest.raises(IndexError, match=r"rindex holds 30; row indices are in \[0, 30\)"):
        d.slice([30])
    # the sliced DMatrix trains as the DMatrix of those rows
    d.set_base_margin(margin[:, 0])
    p = {"max_depth": 2}
    assert gbm.train(p, d.slice(rows), 2).to_json() == gbm.train(
        p, gbm.DMatrix(X[rows], y[rows], weight=np.arange(30.0)[rows] + 1,
                       base_margin=margin[rows, 0], feature_names=list("abcd")), 2).to_json()


def test_slice_with_query_groups():
    X, y = _X(6, 2), np.arange(6.0)
    d = gbm.DMatrix(X, y, qid=[0, 0, 1, 1, 1, 2], weight=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="slice does not support group structure"):
        d.slice([0, 1])
    s = d.slice([5, 0, 1], allow_groups=True)
    np.testing.assert_array_equal(s.get_group(), [1, 2])
    np.testing.assert_array_equal(s.get_weight(), [3, 1])  # each group's weight moves with it
    with pytest.raises(ValueError, match="query group 1"):
        d.slice([2, 3], allow_groups=True)  # part of a group: XGBoost drops the groups


def test_num_nonmissing_and_get_data_as_xgboost():
    sp = pytest.importorskip("scipy.sparse")
    X = _X(8, 3)
    X[X > 0.8] = np.nan
    X[0, 0] = 0.0
    csr = sp.csr_matrix(np.where(np.isnan(X), 0, X + 5))
    for data in (X, csr, csr.tocsc(), csr.tocoo()):
        ours, theirs = gbm.DMatrix(data), xgb.DMatrix(data)
        assert ours.num_nonmissing() == theirs.num_nonmissing()
        a, b = ours.get_data(), theirs.get_data()
        for field in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_get_data_and_categories_of_a_category_column():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"c": pd.Categorical(["cdef", None, "abc", "abc"]),
                          "x": [1.0, 2.0, np.nan, 4.0]})
    ours = gbm.DMatrix(frame)
    theirs = xgb.DMatrix(frame, enable_categorical=True)
    a, b = ours.get_data(), theirs.get_data()
    for field in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    cats = dict(ours.get_categories(export_to_arrow=True).to_arrow())
    assert cats["c"].to_pylist() == ["abc", "cdef"] and cats["x"] is None
    want = dict(theirs.get_categories(export_to_arrow=True).to_arrow())
    assert cats["c"].to_pylist() == want["c"].to_pylist()
    with pytest.raises(ValueError, match="export_to_arrow"):
        ours.get_categories().to_arrow()


def test_bad_data_refused_when_made():
    for data, match in ((np.array(1.0), "2-dimensional.*0 dimension"),
                        (np.array([1.0, 2.0]), "2-dimensional.*1 dimension"),
                        (np.ones((2, 2, 2)), "2-dimensional.*3 dimension"),
                        (np.array([["a", "b"]]), "strings"),
                        (np.ones((2, 2), np.complex64), "Complex")):
        with pytest.raises(ValueError, match=match):
            gbm.DMatrix(data)
        with pytest.raises(ValueError):
            xgb.DMatrix(data)  # the oracle refuses each of them too
    X = _X(8, 4)
    X[5, 2] = np.inf
    for make in (gbm.DMatrix, gbm.QuantileDMatrix):
        with pytest.raises(ValueError, match=r"Input data contains `inf` at data\[5, 2\]"):
            make(X)

    class Unknown:
        pass

    with pytest.warns(UserWarning, match="unknown type"), pytest.raises(TypeError,
                                                                        match="cannot read"):
        gbm.DMatrix(Unknown())
    with pytest.raises(ValueError, match="data_split_mode"):
        gbm.DMatrix(_X(), data_split_mode=1)


def test_other_sparse_formats_warn_and_read():
    sp = pytest.importorskip("scipy.sparse")
    X = _X(10, 10)
    with pytest.warns(UserWarning, match="dok_matrix"):
        d = gbm.DMatrix(sp.dok_matrix(X))
    assert (d.num_row(), d.num_col()) == (10, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gbm.DMatrix(sp.csr_matrix(X))  # the formats read as they are: no warning


class _Iter(gbm.DataIter):
    def __init__(self, parts):
        super().__init__()
        self.parts, self.i = parts, 0

    def next(self, input_data):
        if self.i == len(self.parts):
            return False
        input_data(**self.parts[self.i])
        self.i += 1
        return True

    def reset(self):
        self.i = 0


def test_dmatrix_of_a_data_iter_is_the_joined_batches():
    rng = np.random.default_rng(3)
    X, y, w = rng.normal(size=(90, 4)), rng.normal(size=90), rng.uniform(1, 2, 90)
    cuts = [0, 40, 41, 90]
    parts = [dict(data=X[a:b], label=y[a:b], weight=w[a:b]) for a, b in zip(cuts, cuts[1:])]
    d = gbm.DMatrix(_Iter(parts))
    assert (d.num_row(), d.num_col()) == (90, 4)
    p = {"max_depth": 3}
    assert gbm.train(p, d, 3).to_json() == gbm.train(p, gbm.DMatrix(X, y, weight=w),
                                                      3).to_json()
    with pytest.raises(ValueError, match="at least 1 batch"):
        gbm.DMatrix(_Iter([]))


def test_dmatrix_of_sparse_and_frame_batches():
    sp = pytest.importorskip("scipy.sparse")
    pd = pytest.importorskip("pandas")
    X = _X(20, 3)
    X[X < 0] = np.nan
    parts = [dict(data=sp.csr_matrix(np.nan_to_num(X[:10], nan=0.0))),
             dict(data=X[10:])]  # a sparse batch then a dense one: one sparse matrix
    d = gbm.DMatrix(_Iter(parts))
    want = np.vstack([np.where(np.isnan(X[:10]), np.nan, X[:10]), X[10:]])
    got = d.get_data()
    assert got.nnz == int((~np.isnan(want)).sum())
    frames = [pd.DataFrame({"c": pd.Categorical(["a", "b"]), "x": [1.0, 2.0]}),
              pd.DataFrame({"c": pd.Categorical(["c", "a"]), "x": [3.0, 4.0]})]
    d = gbm.DMatrix(_Iter([dict(data=f) for f in frames]))
    cats = dict(d.get_categories(export_to_arrow=True).to_arrow())
    assert cats["c"].to_pylist() == ["a", "b", "c"]  # the union, first batch's order first
    assert d.feature_types == ["c", "float"]


def test_input_data_takes_keywords_only():
    seen = []

    class Positional(gbm.DataIter):
        def next(self, input_data):
            if seen:
                return False
            with pytest.raises(TypeError, match="Keyword arguments are required"):
                input_data(_X(), np.ones(12))
            seen.append(True)
            input_data(data=_X(), label=np.ones(12))
            return True

        def reset(self):
            seen.clear()

    assert gbm.QuantileDMatrix(Positional()).num_row() == 12


def test_a_column_categorical_in_one_batch_only_is_refused():
    pd = pytest.importorskip("pandas")
    first = pd.DataFrame({"c": pd.Categorical(["a", "b"]), "x": [1.0, 2.0]})
    second = pd.DataFrame({"c": [0.0, 1.0], "x": [3.0, 4.0]})
    for make in (gbm.QuantileDMatrix, gbm.ExtMemQuantileDMatrix):
        with pytest.raises(ValueError, match="Inconsistent number of categories between "
                                             "batches: batch 1 column 'c'"):
            make(_Iter([dict(data=first), dict(data=second)]))
    with pytest.raises(ValueError, match="Inconsistent feature types.*'c' is categorical in "
                                         "batch 0 but not in batch 1"):
        gbm.DMatrix(_Iter([dict(data=first), dict(data=second)]))


def test_categories_as_feature_types_recode_the_columns():
    """XGBoost 3.1's reference encoding: another matrix's categories as feature_types."""
    pd = pytest.importorskip("pandas")
    codes = [1, 1, 2, 3, 0, 2, 2, 3, 0]
    old = pd.DataFrame({"f0": np.arange(9),
                        "f1": pd.Categorical.from_codes(codes, categories=list("abcd"))})
    swapped = [{0: 1, 1: 0}.get(c, c) for c in codes]
    new = pd.DataFrame({"f0": np.arange(9),
                        "f1": pd.Categorical.from_codes(swapped, categories=list("bacd"))})
    for make in (gbm.DMatrix, gbm.QuantileDMatrix):
        a = make(old)
        b = make(new, feature_types=a.get_categories())
        assert b.feature_types == ["int", "c"]
        assert a.get_categories(True).to_arrow() == b.get_categories(True).to_arrow()
        np.testing.assert_array_equal(a.get_data().toarray(), b.get_data().toarray())
    ints = pd.DataFrame({"f0": np.arange(9),
                         "f1": pd.Categorical.from_codes(codes, categories=[5, 6, 7, 8])})
    with pytest.raises(ValueError, match="index type must match"):
        gbm.DMatrix(ints, feature_types=gbm.DMatrix(old).get_categories())


def test_quantile_dmatrix_categories_of_numbers():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"c": pd.Categorical([5, 6, 5])})
    cats = dict(gbm.QuantileDMatrix(frame).get_categories(True).to_arrow())
    assert cats["c"].to_pylist() == [5, 6]
    # numbers marked categorical are codes: no categories, as XGBoost's
    coded = gbm.QuantileDMatrix(np.array([[0.0], [2.0]]), feature_types=["c"])
    assert dict(coded.get_categories(True).to_arrow())["0"] is None


def test_polars_frames_as_data():
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"a": [1, None, 3], "b": [3.0, 4.0, None], "c": [True, False, None]})
    for make in (gbm.DMatrix, gbm.QuantileDMatrix):
        d = make(frame)
        assert d.feature_names == ["a", "b", "c"]
        assert d.feature_types == ["int", "float", "i"]  # nulls keep the integer type
        assert d.num_nonmissing() == 6
    got = gbm.DMatrix(frame).get_data()
    np.testing.assert_array_equal(got.indptr, [0, 3, 5, 6])
    np.testing.assert_array_equal(got.data, [1, 3, 1, 4, 0, 3])
    cats = pl.DataFrame({"f": ["aa", "cc", "bb", "aa"]},
                        schema=[("f", pl.Enum(["cc", "bb", "aa"]))])
    listed = dict(gbm.DMatrix(cats).get_categories(True).to_arrow())
    assert listed["f"].to_pylist() == ["cc", "bb", "aa"]
    y = pl.Series("y", [1.0, 2.0, 3.0])
    d = gbm.DMatrix(frame)
    d.set_info(label=y)
    booster = gbm.train({"min_child_weight": 0}, d, 2)
    np.testing.assert_array_equal(booster.predict(d), booster.inplace_predict(frame))
