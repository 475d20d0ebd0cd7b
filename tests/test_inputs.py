"""Input containers: NumPy dtypes, pandas (nullable), SciPy CSR/CSC, Arrow tables."""
import numpy as np
import pytest
import scipy.sparse as sp

import gbm

rng = np.random.default_rng(0)
DENSE = rng.normal(size=(400, 5))
DENSE[rng.random(DENSE.shape) < 0.15] = np.nan
Y = np.nan_to_num(DENSE[:, 0]) + rng.normal(size=400) * 0.1


def _reference_predictions():
    return gbm.train({"max_depth": 3}, DENSE, Y, 5).predict(DENSE)


def test_arrow_table_with_nulls_equals_numpy_with_nan():
    pa = pytest.importorskip("pyarrow")
    table = pa.table({f"c{j}": pa.array(DENSE[:, j], from_pandas=True) for j in range(5)})
    assert table.column(0).null_count > 0
    booster = gbm.train({"max_depth": 3}, table, Y, 5)
    assert booster.feature_names == [f"c{j}" for j in range(5)]
    np.testing.assert_array_equal(booster.predict(table), _reference_predictions())


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_absent_entries_are_missing(fmt):
    # NaN cells of the dense matrix are the sparse matrix's absent entries.
    data = np.where(np.isnan(DENSE), 0.0, DENSE)
    mask = ~np.isnan(DENSE)
    rows, cols = np.nonzero(mask)
    matrix = sp.coo_matrix((data[rows, cols], (rows, cols)), shape=DENSE.shape).asformat(fmt)
    matrix[5, :] = 0  # an empty row stays empty: all missing
    matrix.eliminate_zeros()
    dense = DENSE.copy()
    dense[5, :] = np.nan
    a = gbm.train({"max_depth": 3}, matrix, Y, 5)
    b = gbm.train({"max_depth": 3}, dense, Y, 5)
    np.testing.assert_array_equal(a.predict(matrix), b.predict(dense))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
def test_numeric_dtypes(dtype):
    X = (np.nan_to_num(DENSE) * 10).astype(dtype)
    a = gbm.train({"max_depth": 3}, X, Y, 3)
    b = gbm.train({"max_depth": 3}, X.astype(np.float32), Y, 3)
    np.testing.assert_array_equal(a.predict(X), b.predict(X.astype(np.float32)))
