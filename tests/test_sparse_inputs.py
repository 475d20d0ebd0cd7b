"""Sparse input read without a dense copy (gbm/data/sparse.py, gbm/data/inputs.py): every
SciPy format and pandas sparse columns become the same ``SparseMatrix``, with the dense
input's checks and messages; and the bin edges of a sparse matrix are its dense form's
(gbm/bins/binning.py), with and without weights, sampling and categories."""
import numpy as np
import pytest
import scipy.sparse as sp

from gbm.collective import ThreadGroup
from gbm.bins.binning import BinMapper
from gbm.data.categorical import encode_X, fit_categories
from gbm.data.inputs import check_X
from gbm.data.sparse import SparseMatrix, from_dense

pd = pytest.importorskip("pandas")


def _dense(X):
    return X.dense_rows(0, X.shape[0]) if isinstance(X, SparseMatrix) else X


def _random(n=60, n_features=7, density=0.3, seed=0):
    rng = np.random.default_rng(seed)
    stored = rng.random((n, n_features)) < density
    dense = np.where(stored, np.round(rng.normal(size=(n, n_features)), 1), np.nan)
    rows, cols = np.nonzero(stored)
    return dense.astype(np.float32), sp.csr_matrix((dense[rows, cols], (rows, cols)),
                                                   shape=dense.shape)


@pytest.mark.parametrize("form", ["csr", "csc", "coo", "lil", "csr_array", "coo_array"])
def test_every_scipy_format_is_the_same_matrix(form):
    dense, csr = _random()
    X = {"csr_array": lambda m: sp.csr_array(m), "coo_array": lambda m: sp.coo_array(m)}.get(
        form, lambda m: m.asformat(form))(csr)
    got = check_X(X)
    assert isinstance(got, SparseMatrix) and got.shape == dense.shape
    np.testing.assert_array_equal(got.dense_rows(0, dense.shape[0]), dense)
    assert got.indptr.dtype == np.int64 and got.indices.dtype == np.int32
    assert got.data.dtype == np.float32
    for r in range(got.shape[0]):  # canonical: each row's columns increasing
        assert (np.diff(got.indices[got.indptr[r]:got.indptr[r + 1]]) > 0).all()


def test_duplicates_are_summed_unsorted_rows_sorted_and_the_input_kept():
    X = sp.csr_matrix((np.array([1.0, 2.0, 3.0, 4.0]), np.array([2, 0, 2, 1]),
                       np.array([0, 3, 4])), shape=(2, 3))
    assert not X.has_canonical_format
    before = X.data.copy(), X.indices.copy()
    got = check_X(X)
    np.testing.assert_array_equal(got.dense_rows(0, 2), [[2.0, np.nan, 4.0],
                                                         [np.nan, 4.0, np.nan]])
    np.testing.assert_array_equal(X.data, before[0])  # the caller's matrix is unchanged
    np.testing.assert_array_equal(X.indices, before[1])


def test_zeros_are_values_and_stored_nan_is_missing():
    # row 0 column 1 stored as NaN, row 1 column 1 as an explicit zero
    X = sp.csr_matrix((np.array([np.nan, 2.0, 0.0]), np.array([1, 0, 1]), np.array([0, 1, 3])),
                      shape=(2, 2))
    got = check_X(X)
    assert got.nnz == 2  # the NaN dropped, the explicit zero kept
    np.testing.assert_array_equal(got.dense_rows(0, 2), [[np.nan, np.nan], [2.0, 0.0]])


def test_bad_values_are_named_with_their_row_and_column():
    X = sp.csr_matrix(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, np.inf]]))
    with pytest.raises(ValueError, match="X contains infinity at row 1, column 2; use NaN"):
        check_X(X)
    X = sp.csc_matrix(np.array([[0.0, 0.0], [1e300, 0.0]]))
    with pytest.raises(ValueError, match=r"X contains 1e\+300 at row 1, column 0, beyond "
                                         "float32's range"):
        check_X(X)
    with pytest.raises(ValueError, match="Complex data not supported"):
        check_X(sp.csr_matrix(np.array([[1j, 0]])))
    with pytest.raises(ValueError, match="X has 0 sample"):
        check_X(sp.csr_matrix((0, 3)))
    assert check_X(sp.csr_matrix((0, 3)), shard=True).shape == (0, 3)
    with pytest.raises(ValueError, match="X has 0 feature"):
        check_X(sp.csr_matrix((3, 0)))


def test_pandas_sparse_columns():
    frame = pd.DataFrame({
        "nan_filled": pd.arrays.SparseArray([1.0, np.nan, 0.0, np.nan]),
        "zero_filled": pd.arrays.SparseArray([0.0, 3.0, 0.0, 0.0], fill_value=0.0),
        "dense": [1.0, 2.0, np.nan, 4.0]})
    got = check_X(frame)
    assert isinstance(got, SparseMatrix)
    # absent entries of a NaN-filled column are missing; of a 0-filled one, the value 0
    # (what the dense frame holds: gbm's model of the frame does not change)
    np.testing.assert_array_equal(got.dense_rows(0, 4), [[1.0, 0.0, 1.0], [np.nan, 3.0, 2.0],
                                                         [0.0, 0.0, np.nan],
                                                         [np.nan, 0.0, 4.0]])


def test_categorical_sparse_columns():
    X = sp.csr_matrix(np.array([[3.0, 0.0], [0.0, 1.5], [5.0, 2.0], [3.0, 0.0]]))
    arr, categories = fit_categories(X, categorical_features=[0])
    assert categories == [[3, 5], None]
    np.testing.assert_array_equal(arr.dense_rows(0, 4)[:, 0], [0.0, np.nan, 1.0, 0.0])
    unseen = encode_X(sp.csr_matrix(np.array([[5.0, 0.0], [4.0, 1.0]])), categories)
    np.testing.assert_array_equal(unseen.dense_rows(0, 2)[:, 0], [1.0, np.nan])
    bad = sp.csr_matrix(np.array([[3.0, 0.0], [0.0, 0.0], [-2.0, 0.0]]))
    with pytest.raises(ValueError, match=r"column 0 is categorical but holds -2.0 at row 2"):
        fit_categories(bad, categorical_features=[0])
    frame = pd.DataFrame({"a": pd.arrays.SparseArray([1.0, np.nan, 2.0]),
                          "c": pd.Categorical(["x", None, "y"])})
    arr, categories = fit_categories(frame)
    assert categories == [None, ["x", "y"]]
    np.testing.assert_array_equal(arr.dense_rows(0, 3), [[1.0, 0.0], [np.nan, np.nan],
                                                         [2.0, 1.0]])


def _cuts_equal(a, b):
    assert len(a.cuts) == len(b.cuts)
    for f, (x, y) in enumerate(zip(a.cuts, b.cuts)):
        np.testing.assert_array_equal(x, y, err_msg=f"feature {f}")
    np.testing.assert_array_equal(a.n_bins, b.n_bins)
    assert a.bin_dtype == b.bin_dtype


@pytest.mark.parametrize("max_bin", [4, 32, 256, 1024])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("run", [1 << 20, 97])  # runs of features: one, or many
def test_sparse_cuts_are_the_dense_cuts(monkeypatch, max_bin, weighted, run):
    import gbm.bins.binning

    monkeypatch.setattr(gbm.bins.binning, "_CUT_CHUNK", run)
    rng = np.random.default_rng(max_bin)
    n = 3000
    dense = np.full((n, 6), np.nan, np.float32)
    dense[:, 0] = rng.normal(size=n)  # continuous, no missing value
    dense[rng.random(n) < 0.5, 1] = 1.25  # one value, missing elsewhere
    dense[::3, 2] = np.round(rng.normal(size=1000), 1)  # few distinct values
    dense[::2, 3] = rng.normal(size=1500)  # continuous, half missing
    dense[::5, 4] = -0.0
    dense[1::5, 4] = 0.0  # -0.0 and 0.0 are one value
    dense[:, 5] = rng.integers(0, 6, n)  # codes
    w = rng.uniform(0.0, 2.0, n) if weighted else None
    if weighted:
        w[::17] = 0.0  # rows of weight 0 do not count
    n_categories = np.array([-1, -1, -1, -1, -1, 6])
    for sample_size in (10**6, 700):
        expected = BinMapper(max_bin, sample_size, seed=4).fit(dense, w, n_categories=n_categories)
        got = BinMapper(max_bin, sample_size, seed=4).fit(from_dense(dense), w,
                                                          n_categories=n_categories)
        _cuts_equal(got, expected)
        np.testing.assert_array_equal(got.transform(from_dense(dense)), expected.transform(dense))


def test_sparse_cuts_over_ranks_are_the_whole_data_sets():
    dense, _ = _random(n=900, n_features=5, density=0.4, seed=3)
    expected = BinMapper(16, 400, seed=1).fit(from_dense(dense))
    parts = [dense[:250], dense[250:260], dense[260:]]
    ids = [np.arange(250), np.arange(250, 260), np.arange(260, 900)]

    def fit(collective):
        r = collective.rank
        return BinMapper(16, 400, seed=1).fit(from_dense(parts[r]), row_ids=ids[r],
                                              n_rows_total=900, collective=collective)

    for mapper in ThreadGroup(3).run(fit):
        _cuts_equal(mapper, expected)
