"""What a fit no longer holds or copies (issue 28, item 3; bench/PROFILE_small.md): the
float matrix after the start, row ids nobody gave, whole-matrix temporaries of the input
checks and the binning; with the same values and the same models as before."""
import numpy as np
import pytest

import gbm
from gbm.data.binning import BinMapper, _missing_columns
from gbm.data.inputs import _first_infinity, check_X
from gbm.data.training_data import training_data
from gbm.runtime.memory import release_free_memory
from gbm.training.prepare import Fit


def _fit(X, y, **kwargs):
    data, rounds = training_data(X, y, 2, None, None, None, None, None, None, None, None)
    return Fit(dict({"max_depth": 3}, **kwargs), data, rounds)


def test_the_float_matrix_is_dropped_when_the_fit_starts():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(300, 3)), columns=list("abc"))
    fit = _fit(frame, rng.normal(size=300))
    assert fit.X.dtype == np.float32  # the converted copy, until start()
    with fit:
        fit.start()
    assert fit.X is None


def test_no_row_ids_are_made_when_none_are_given():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3))
    assert _fit(X, X[:, 0]).row_ids is None
    given = np.arange(400) * 3
    data, rounds = training_data(X, X[:, 0], 1, None, None, None, None, None, None, None,
                                 given)
    np.testing.assert_array_equal(Fit({}, data, rounds).row_ids, given)


def test_row_sampling_by_position_is_the_sampling_by_row_ids_of_positions():
    """Row ids not made (None) and row ids 0 .. n - 1 given sample the same rows: the
    same model, on the whole-tree path and level by level (lockstep: multiclass)."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(600, 4))
    y = (X[:, 0] > 0).astype(float) + (X[:, 1] > 0)
    for params in ({"subsample": 0.6}, {"subsample": 0.6, "objective": "multi:softprob",
                                        "num_class": 3}):
        a = gbm.train(params, X, y, 3).to_json()
        b = gbm.train(params, X, y, 3, row_ids=np.arange(600)).to_json()
        assert a == b


def test_a_dataframe_becomes_the_float32_matrix_of_a_float64_cast():
    """Column by column into float32, through float64 (as the whole float64 matrix was
    cast before): integers beyond 2**24 round twice, the same way."""
    pd = pytest.importorskip("pandas")
    big = np.array([2**24 + 1, 2**53 - 1, -(2**40) - 3, 7], dtype=np.int64)
    frame = pd.DataFrame({
        "big": big, "f32": np.array([0.1, 2.5, -3.75, 1e-8], np.float32),
        "f64": [1 / 3, 1e38, -2.0, 0.0], "flag": [True, False, True, True],
        "nullable": pd.array([1, None, 3, 4], dtype="Int64"),
        "cat": pd.Categorical(["x", "y", "x", "z"])})
    got = check_X(frame, allow_category=True)
    numeric = frame.drop(columns="cat")
    expected = np.column_stack(
        [numeric[c].to_numpy(dtype=np.float64, na_value=np.nan) for c in numeric]
        + [np.full(4, np.nan)]).astype(np.float32)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.float32 and got.flags.c_contiguous


def test_infinities_and_missing_columns_are_found_in_any_block(monkeypatch):
    from gbm.data import binning, inputs

    monkeypatch.setattr(inputs, "_CHECK_ROWS", 7)
    monkeypatch.setattr(binning, "_BLOCK_ROWS", 7)
    X = np.zeros((30, 4), np.float32)
    assert _first_infinity(X) is None
    X[22, 3], X[25, 1] = np.inf, -np.inf
    assert _first_infinity(X) == (22, 3)
    X[29, 2] = np.nan
    np.testing.assert_array_equal(_missing_columns(X), [False, False, True, False])


@pytest.mark.parametrize("n_rows", [500, 3000])  # every row in the bin-edge sample, or not
def test_cuts_from_each_features_sample_are_the_cuts_of_the_sample_matrix(n_rows):
    rng = np.random.default_rng(n_rows)
    X = rng.normal(size=(n_rows, 5)).astype(np.float32)
    X[rng.uniform(size=X.shape) < 0.1] = np.nan
    X[:, 2] = np.round(X[:, 2])
    w = rng.uniform(0.5, 2.0, n_rows)
    mapper = BinMapper(max_bin=32, sample_size=1000, seed=3).fit(X, w)
    # the sample matrix the cuts were taken from before: X[mask], its weights w[mask]
    from gbm.data.binning import feature_cuts, sample_mask

    mask = sample_mask(np.arange(n_rows), n_rows, 1000, 3)
    Xs, ws = X[mask], w[mask]
    for f in range(5):
        col = Xs[:, f]
        ok = ~np.isnan(col)
        np.testing.assert_array_equal(mapper.cuts[f], feature_cuts(col[ok], ws[ok], 32))


def test_freed_memory_is_returned_on_glibc():
    import os

    glibc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    assert release_free_memory() == glibc.startswith("glibc")


# --- issue 28 item 3, second pass (bench/PROFILE_memory.md) ---------------------------

@pytest.mark.parametrize("n", [1, 5, 8193, 50_003])
def test_gradients_quantized_in_the_memory_of_their_pairs_give_the_same_pairs(n):
    """``quantize`` with the gradients in the first half of the pairs' own memory (what
    a round of one output group does) writes the pairs that separate arrays give."""
    from gbm.runtime.backend import get_backend
    from gbm.tree.quantize import GPAIR_DTYPE, quantize

    rng = np.random.default_rng(n)
    grad = rng.normal(size=n) * 3.0
    grad[rng.random(n) < 0.1] = -0.0
    hess = rng.random(n)
    backend = get_backend("cpu", 2)
    expected, scales = quantize(grad, hess, backend)
    pairs = np.full((n, 2), -7, dtype=GPAIR_DTYPE)
    front = pairs.reshape(-1).view(np.float64)[:n]
    front[:] = grad
    got, got_scales = quantize(front, hess, backend, out=pairs)
    assert got is pairs
    np.testing.assert_array_equal(got_scales, scales)
    np.testing.assert_array_equal(got, expected)


def test_a_round_writes_its_gradients_where_their_pairs_go_and_the_model_is_unchanged(
        monkeypatch):
    """One output group: the round's float gradients share the pairs' memory (no array of
    their own), and the models are those of separate gradients, on both tree paths."""
    import gbm.training.rounds as rounds

    rng = np.random.default_rng(3)
    X = rng.normal(size=(20_000, 5)).astype(np.float32)
    y = (X[:, 0] + rng.normal(size=20_000) > 0).astype(float)
    cases = ({"objective": "binary:logistic"},
             {"objective": "reg:absoluteerror", "subsample": 0.7})
    seen = []
    shared = rounds._gradients_in_pairs

    def spy(fit):
        shared(fit)
        ws = fit.backend.workspace
        seen.append(np.shares_memory(ws["grad"], ws["gpair"]))

    monkeypatch.setattr(rounds, "_gradients_in_pairs", spy)
    models = [gbm.train(dict(p, max_depth=4), X, y, 3).to_json() for p in cases]
    assert seen and all(seen)
    monkeypatch.setattr(rounds, "_gradients_in_pairs", lambda fit: None)
    assert models == [gbm.train(dict(p, max_depth=4), X, y, 3).to_json() for p in cases]


def test_cuts_of_equal_weights_are_the_cuts_of_unit_weights():
    """``feature_cuts(values, None)`` (NaN in the values, no weights: the binning's
    unweighted case) and every equal positive weight give the cuts of unit weights."""
    from gbm.data.cuts import feature_cuts

    rng = np.random.default_rng(4)
    pool = np.array([np.inf, -np.inf, 1.0, 2.5, -0.0, 0.0], np.float32)
    for trial in range(60):
        n = int(rng.integers(0, 3000))
        v = [rng.normal(size=n), rng.integers(0, 20, n),
             np.round(rng.normal(size=n), 1) * (rng.random(n) < 0.6),
             rng.choice(pool, n)][trial % 4].astype(np.float32)
        v[rng.random(n) < 0.2] = np.nan
        ok = ~np.isnan(v)
        for max_bin in (2, 16, 256):
            unit = feature_cuts(v[ok], np.ones(ok.sum()), max_bin)
            assert feature_cuts(v, None, max_bin).tobytes() == unit.tobytes()
    X = rng.normal(size=(5000, 3)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    for w in (None, np.full(5000, 3.0)):
        mapper = BinMapper(64, 1000).fit(X, w)  # sampled rows, equal weights: no copies
        ok = ~np.isnan(X[mapper._sample_mask])
        for f in range(3):
            col = X[mapper._sample_mask][:, f]
            np.testing.assert_array_equal(
                mapper.cuts[f], feature_cuts(col[ok[:, f]], np.ones(ok[:, f].sum()), 64))


def test_the_binning_sample_of_a_range_of_ids_is_that_of_the_ids():
    """``sample_mask`` hashes ids block by block; a ``range`` (no id array) and the ids as
    an array choose the same rows, across blocks."""
    from gbm.data.binning import sample_mask

    n = 200_001
    a = sample_mask(np.arange(7, 7 + n), 10 * n, 1000, 5)
    b = sample_mask(range(7, 7 + n), 10 * n, 1000, 5)
    np.testing.assert_array_equal(a, b)
    assert 50 < a.sum() < 400  # about n * 1000 / (10 n) = 100 rows


def test_float64_labels_are_not_copied_unless_they_must_be():
    """Contiguous, writable float64 labels are held as given (read, never written);
    others (read-only, strided, other dtypes) are converted copies."""
    from gbm.data.inputs import check_y

    y = np.arange(10, dtype=np.float64)
    assert check_y(y, 10) is y
    frozen = y.copy()
    frozen.flags.writeable = False
    for other in (frozen, np.arange(20.0)[::2], np.arange(10, dtype=np.float32)):
        out = check_y(other, 10)
        assert out is not other and out.dtype == np.float64 and out.flags.c_contiguous
        assert out.flags.writeable


@pytest.mark.parametrize("kind_name, groups", [("LOGISTIC", 1), ("SQUARED", 1),
                                               ("AFT", 1), ("SOFTMAX", 3)])
def test_unit_weights_give_the_gradients_of_an_array_of_ones(kind_name, groups):
    """``unit_weights`` (ones with no memory, stride 0): the kernel runs block by block of
    rows (one group) or on an array of ones (several): the gradients of ``np.ones``."""
    from kernels import layout
    from gbm.objectives.gradients import _BLOCK_ROWS, pointwise, unit_weights
    from gbm.runtime.backend import get_backend

    n = _BLOCK_ROWS + 4_321
    rng = np.random.default_rng(groups)
    margin = np.ascontiguousarray(rng.normal(size=(groups, n))).T
    if kind_name == "AFT":
        lower = rng.random(n) * 5 + 0.1
        y, params = np.column_stack([lower, lower + rng.random(n)]).reshape(-1), (0.0, 1.0)
    else:
        y, params = (rng.integers(0, max(groups, 2), n).astype(float), ())
    kind = getattr(layout, kind_name)
    w = unit_weights(n)
    assert w.strides == (0,) and w.base.nbytes <= 8
    for backend in (None, get_backend("cpu", 2)):
        g1, h1 = (a.copy() for a in pointwise(kind, margin, y, np.ones(n), params, backend))
        g2, h2 = pointwise(kind, margin, y, w, params, backend)
        np.testing.assert_array_equal(g2, g1)
        np.testing.assert_array_equal(h2, h1)


def test_an_unweighted_fit_holds_no_array_of_weights_and_trains_the_same_model(monkeypatch):
    import gbm.training.prepare as prepare

    rng = np.random.default_rng(5)
    X = rng.normal(size=(70_000, 4)).astype(np.float32)
    y = (X[:, 0] + rng.normal(size=70_000) > 0).astype(float)
    fit = _fit(X, y)
    with fit:
        fit.start()
    assert fit.w_fit.strides == (0,) and fit.w is fit.w_fit
    params = {"objective": "binary:logistic", "max_depth": 3}
    model = gbm.train(params, X, y, 3).to_json()
    monkeypatch.setattr(prepare, "unit_weights", lambda n: np.ones(n))
    assert gbm.train(params, X, y, 3).to_json() == model
