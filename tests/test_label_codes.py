"""The classifier's labels encoded in one pass (``gbm.sklearn.boosting._label_codes``)
against scikit-learn's own three calls (the oracle): the same classes, codes and errors."""
import warnings

import numpy as np
import pytest
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import check_classification_targets

from gbm.sklearn.boosting import _label_codes

rng = np.random.default_rng(3)
LABELS = [
    np.array([0, 1, 1, 0, 1]),
    rng.integers(-5, 5, 200),
    rng.integers(0, 3, 100).astype(np.uint8),
    rng.integers(0, 2, 50).astype(np.float32),
    np.array([2.0, -1.0, 7.0, 2.0, 1e15]),
    np.array([-0.0, 0.0, 1.0]),
    np.array(["b", "a", "c", "a"]),
    np.array([True, False, True]),
    np.array([-100, 100, 0, -100], dtype=np.int8),  # a range wider than int8 holds
    np.array([2**64 - 1, 2**64 - 3, 2**64 - 1], dtype=np.uint64),
    np.array([-2**62, 2**62, 5]),  # a range too wide for a table: np.unique
    rng.integers(0, 10**6, 1000),  # more classes than half the labels: a warning
    rng.integers(0, 40, 50).astype(np.float64),
    np.array([3, 1, 2, 3], dtype=">u4"),  # big-endian: classes_ keeps the byte order
    np.array([-3, 1, 2], dtype=">i8"),
]


@pytest.mark.parametrize("y", LABELS, ids=lambda y: f"{y.dtype}-{y.size}")
def test_label_codes_are_label_encoders(y):
    with warnings.catch_warnings(record=True) as expected_warnings:
        warnings.simplefilter("always")
        check_classification_targets(y)
    expected = LabelEncoder().fit(y)
    with warnings.catch_warnings(record=True) as got_warnings:
        warnings.simplefilter("always")
        encoder, codes = _label_codes(y)
    # the same warnings (more classes than half the labels), none of the cast's own
    assert [str(w.message) for w in got_warnings] == [str(w.message) for w in expected_warnings]
    np.testing.assert_array_equal(encoder.classes_, expected.classes_)
    assert encoder.classes_.dtype == expected.classes_.dtype
    assert codes.dtype == np.float64
    np.testing.assert_array_equal(codes, expected.transform(y).astype(np.float64))
    np.testing.assert_array_equal(encoder.transform(y), expected.transform(y))  # eval sets


@pytest.mark.parametrize("y", [np.array([0.0, 0.5, 1.0]), np.array([0.0, np.inf, 1.0]),
                               np.array([0.0, np.nan, 1.0]), np.array([0.0, 1e30, 1.0]),
                               np.array([3, 1, 2], dtype=object)])
def test_label_codes_raise_as_sklearn(y):
    with pytest.raises(ValueError) as expected:
        check_classification_targets(y)
    with pytest.raises(ValueError) as got:
        _label_codes(y)
    assert str(got.value) == str(expected.value)
