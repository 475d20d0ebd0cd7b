"""What a fit no longer holds or copies (issue 28, item 3; bench/PROFILE_small.md): the
float matrix after the start, row ids nobody gave, whole-matrix temporaries of the input
checks and the binning; with the same values and the same models as before."""
import numpy as np
import pytest

import gbm
from gbm.bins.binning import BinMapper, missing_columns
from gbm.data.inputs import first_infinity, check_X
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
    from gbm.bins import binning
    from gbm.data import inputs

    monkeypatch.setattr(inputs, "_CHECK_ROWS", 7)
    monkeypatch.setattr(binning, "_BLOCK_ROWS", 7)
    X = np.zeros((30, 4), np.float32)
    assert first_infinity(X) is None
    X[22, 3], X[25, 1] = np.inf, -np.inf
    assert first_infinity(X) == (22, 3)
    X[29, 2] = np.nan
    np.testing.assert_array_equal(missing_columns(X), [False, False, True, False])


@pytest.mark.parametrize("n_rows", [500, 3000])  # every row in the bin-edge sample, or not
def test_cuts_from_each_features_sample_are_the_cuts_of_the_sample_matrix(n_rows):
    rng = np.random.default_rng(n_rows)
    X = rng.normal(size=(n_rows, 5)).astype(np.float32)
    X[rng.uniform(size=X.shape) < 0.1] = np.nan
    X[:, 2] = np.round(X[:, 2])
    w = rng.uniform(0.5, 2.0, n_rows)
    mapper = BinMapper(max_bin=32, sample_size=1000, seed=3).fit(X, w)
    # the sample matrix the cuts were taken from before: X[mask], its weights w[mask]
    from gbm.bins.binning import feature_cuts, sample_mask

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
    from gbm.runtime.memory import TRIM_MIN_BYTES

    # a small input's set-up leaves little to return: not asked
    assert release_free_memory(TRIM_MIN_BYTES - 1) is False
    assert release_free_memory(TRIM_MIN_BYTES) == glibc.startswith("glibc")


def test_an_estimators_x_is_tested_for_infinities_once_and_only_inside_its_fit(monkeypatch):
    """``GBMClassifier.fit`` converts and checks X (and each eval set's) once; ``train``
    inside the fit takes them as checked (``checked_already``). Outside that block the same
    array is checked again: an infinity written into it after a fit is found by the next
    fit, and check_X of other arrays inside the block still checks them."""
    from gbm.data import inputs
    from gbm.sklearn import GBMClassifier

    tested = []
    real = inputs.first_infinity
    monkeypatch.setattr(inputs, "first_infinity", lambda a: tested.append(a.shape) or real(a))
    rng = np.random.default_rng(6)
    X = rng.normal(size=(600, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    model = GBMClassifier(n_estimators=2, max_depth=2).fit(X, y, eval_set=[(X[:50], y[:50])])
    assert sorted(tested) == [(50, 4), (600, 4)]
    import gbm.sklearn.boosting as boosting

    with monkeypatch.context() as m:  # train checks them again: the same model
        m.setattr(boosting, "checked_already", lambda *arrays: inputs.checked_already())
        again = GBMClassifier(n_estimators=2, max_depth=2).fit(X, y, eval_set=[(X[:50], y[:50])])
    assert tested.count((600, 4)) >= 3 and tested.count((50, 4)) >= 3  # twice or more
    assert model.get_booster().to_json() == again.get_booster().to_json()
    X[7, 1] = np.inf
    with pytest.raises(ValueError, match="X contains infinity at row 7, column 1"):
        GBMClassifier(n_estimators=2).fit(X, y)
    with inputs.checked_already(X[:10].copy()):
        with pytest.raises(ValueError, match="infinity at row 7"):
            check_X(X)
    with inputs.checked_already(X):  # the caller's word: returned as it is
        assert check_X(X) is X


# --- issue 28 item 3, second pass (bench/PROFILE_memory.md) ---------------------------

@pytest.mark.parametrize("n", [1, 5, 8193, 50_003])
def test_gradients_quantized_in_the_memory_of_their_pairs_give_the_same_pairs(n):
    """``quantize`` with the gradients and hessians in the pairs' own slots (row ``i``'s
    in float64 slots ``2i``, ``2i + 1``: what a CPU round of one output group does) writes
    the pairs and scales that separate arrays give, in place."""
    from gbm.runtime.backend import get_backend
    from gbm.tree.quantize import GPAIR_DTYPE, quantize

    rng = np.random.default_rng(n)
    grad = rng.normal(size=n) * 3.0
    grad[rng.random(n) < 0.1] = -0.0
    grad[n // 2] = -8.0 * np.abs(grad).max()  # the largest |g| in the middle, negative
    hess = rng.random(n)
    backend = get_backend("cpu", 2)
    expected, scales = quantize(grad, hess, backend)
    pairs = np.full((n, 2), -7, dtype=GPAIR_DTYPE)
    slots = pairs.view(np.float64)
    slots[:, 0], slots[:, 1] = grad, hess
    got, got_scales = quantize(slots[:, 0], slots[:, 1], backend, out=pairs)
    assert got is pairs
    np.testing.assert_array_equal(got_scales, scales)
    np.testing.assert_array_equal(got, expected)


def test_a_round_writes_its_gradients_where_their_pairs_go_and_the_model_is_unchanged(
        monkeypatch):
    """One output group: the round's float gradients and hessians are the pairs' own
    slots (no arrays of their own), and the models are those of separate gradients, on
    both tree paths, for the logistic loss's kernel and the other objectives'."""
    import gbm.training.rounds as rounds

    rng = np.random.default_rng(3)
    X = rng.normal(size=(20_000, 5)).astype(np.float32)
    y = (X[:, 0] + rng.normal(size=20_000) > 0).astype(float)
    w = rng.uniform(0.5, 2.0, 20_000)
    cases = ({"objective": "binary:logistic"},
             {"objective": "reg:absoluteerror", "subsample": 0.7},
             {"objective": "reg:squarederror"},
             {"objective": "reg:expectileerror", "expectile_alpha": 0.3})
    seen = []
    shared = rounds._gradients_in_pairs

    def spy(fit):
        slots = shared(fit)
        ws = fit.backend.workspace
        seen.append(slots is not None and np.shares_memory(slots, ws["gpair"])
                    and ws["grad"].ctypes.data + 8 == ws["hess"].ctypes.data)
        return slots

    def fits():
        return [gbm.train(dict(p, max_depth=4), gbm.DMatrix(X, label=y, weight=weights),
                          3).to_json() for p in cases for weights in (None, w)]

    monkeypatch.setattr(rounds, "_gradients_in_pairs", spy)
    models = fits()
    assert len(seen) == 3 * 2 * len(cases) and all(seen)
    monkeypatch.setattr(rounds, "_gradients_in_pairs", lambda fit: None)
    assert models == fits()


@pytest.mark.parametrize("n", [0, 1, 7, 8193, 100_001])
def test_pair_kernels_match_their_twins_and_separate_arrays(n):
    """``max_abs_pairs`` and ``quantize_pairs_in_place`` (float64 ``(g, h)`` rows held in
    the int64 pairs' memory) give what ``max_abs`` and ``quantize_gradients`` give for
    separate arrays, bit for bit, on 1 and 2 threads, and the reference twins agree."""
    from gbm.kernels import cpu, reference
    from gbm.runtime.backend import get_backend

    rng = np.random.default_rng(n)
    grad, hess = rng.normal(size=n) * 3.0, rng.uniform(size=n)
    if n > 5:  # signed zeros, ties of rint (x.5)
        grad[:4] = [-0.0, 0.0, 2.5 / 2**40, -3.5 / 2**40]
    scales = np.array([2.0**40, 2.0**43])
    expected = np.empty((n, 2), np.int64)
    cpu.quantize_gradients(grad, hess, scales, expected)
    for module in (cpu, reference):
        for threads in (1, 2):
            pairs = np.empty((n, 2), np.int64)
            pairs.view(np.float64)[:, 0], pairs.view(np.float64)[:, 1] = grad, hess
            maxima = module.max_abs_pairs(pairs)
            assert maxima.tolist() == [cpu.max_abs(grad), cpu.max_abs(hess)]
            with get_backend("cpu", threads).threads():
                module.quantize_pairs_in_place(pairs, scales)
            np.testing.assert_array_equal(pairs, expected)
    if n > 5:  # by hand: rint rounds halves to even
        assert expected[2, 0] == 2 and expected[3, 0] == -4 and expected[0, 0] == 0
        pairs = np.empty((n, 2), np.int64)  # NaN passed over by the maxima, as max_abs does
        pairs.view(np.float64)[:, 0], pairs.view(np.float64)[:, 1] = grad, hess
        pairs.view(np.float64)[[1, 4], [0, 1]] = np.nan
        for module in (cpu, reference):
            assert module.max_abs_pairs(pairs).tolist() == [
                cpu.max_abs(pairs.view(np.float64)[:, 0].copy()),
                cpu.max_abs(pairs.view(np.float64)[:, 1].copy())]


@pytest.mark.parametrize("kind", ["LOGISTIC", "SQUARED", "EXPECTILE", "AFT"])
def test_gradients_written_into_interleaved_slots_are_the_bits_of_separate_arrays(kind):
    """``pointwise_gradients`` into row ``i``'s float64 slots ``2i``, ``2i + 1`` of one
    array (the logistic loss's own kernel for that layout, the others' through strided
    views) gives the bits of contiguous outputs and of the reference, on 1 and 2 threads,
    exp's under- and overflow included."""
    from gbm.kernels import cpu, layout, reference

    kind = getattr(layout, kind)
    rng = np.random.default_rng(int(kind))
    n = 3001
    margin = rng.normal(0.0, 3.0, (n, 1))
    margin[:4, 0] = [-800.0, 800.0, -1.0, 1.0]
    y = (rng.random(n) < 0.4).astype(np.float64)
    params = np.array([0.3])
    if kind == layout.AFT:  # two bounds a row, params (distribution, sigma)
        y = np.repeat(rng.uniform(1.0, 3.0, n), 2) * np.tile([1.0, 1.5], n)
        params = np.array([0.0, 1.0])
    w = rng.uniform(0.5, 2.0, n)
    expected = np.empty((n, 1)), np.empty((n, 1))
    reference.pointwise_gradients(kind, margin, y, w, params, *expected)
    for threads in (1, 2):
        contiguous = np.empty((n, 1)), np.empty((n, 1))
        cpu.pointwise_gradients(kind, margin, y, w, params, *contiguous, threads)
        slots = np.full((n, 2), np.nan)
        cpu.pointwise_gradients(kind, margin, y, w, params, slots[:, :1], slots[:, 1:],
                                threads)
        for got in (contiguous, (slots[:, :1], slots[:, 1:])):
            assert got[0].tobytes() == expected[0].tobytes()
            assert got[1].tobytes() == expected[1].tobytes()


@pytest.mark.parametrize("n", [0, 1, 7, 3001, 70_000])
def test_logistic_pair_gradients_record_the_maxima_of_what_they_write(n):
    """``logistic_pair_gradients`` writes the bits ``pointwise_gradients`` writes into the
    pairs' slots and raises ``maxima`` to ``max |g|``, ``max |h|`` of them, NaN passed
    over: what ``max_abs_pairs`` reads afterwards and NumPy's ``nanmax`` gives, on 1, 2 and
    3 threads (each thread's maxima combined), from 0 and from a larger start; the
    reference twin the same."""
    from gbm.kernels import cpu, layout, reference

    rng = np.random.default_rng(n)
    margin = rng.normal(0.0, 3.0, n)
    y = (rng.random(n) < 0.4).astype(np.float64)
    w = rng.uniform(0.5, 2.0, n)
    if n > 5:  # exp's under- and overflow; a NaN margin gives NaN g and h
        margin[:4] = [-800.0, 800.0, np.nan, 1.0]
        w[5] = 7.5  # the largest |g| and |h| in the middle of a block
    expected = np.empty((n, 2))
    cpu.pointwise_gradients(layout.LOGISTIC, margin[:, None], y, w, np.zeros(1),
                            expected[:, :1], expected[:, 1:], 1)
    read = cpu.max_abs_pairs(expected.view(np.int64)).tolist()
    oracle = [float(np.nanmax(np.abs(expected[:, k]), initial=0.0)) for k in range(2)]
    assert read == oracle
    if n > 5:
        assert oracle[0] > 0.0 and np.isnan(expected[2]).all()
    for module, threads in ((cpu, 1), (cpu, 2), (cpu, 3), (reference, 1)):
        pairs = np.full((n, 2), np.nan)
        maxima = np.zeros(2)
        module.logistic_pair_gradients(margin, y, w, pairs, threads, maxima)
        assert pairs.tobytes() == expected.tobytes()
        assert maxima.tolist() == oracle
        start = np.array([100.0, 0.25])  # a running maximum over blocks: only raised
        module.logistic_pair_gradients(margin, y, w, pairs, threads, start)
        assert start.tolist() == [100.0, max(0.25, oracle[1])]


def test_a_logistic_round_takes_the_recorded_maxima(monkeypatch):
    """A CPU round of the logistic loss does not read the pairs again for their maxima
    (``max_abs_pairs`` not called: the kernel recorded them); the models are those of the
    maxima read off the pairs, weighted or not, with row sampling, on 1 and 2 threads, and
    over several gradient blocks (more than 65,536 unweighted rows). The squared error
    (no recording kernel) still reads them."""
    import gbm.objectives.gradients as gradients
    from gbm.kernels import cpu

    rng = np.random.default_rng(5)
    n = 70_000
    X = rng.normal(size=(n, 4)).astype(np.float32)
    y = (X[:, 0] + rng.normal(size=n) > 0).astype(float)
    w = rng.uniform(0.5, 2.0, n)
    reads = []
    real = cpu.max_abs_pairs
    monkeypatch.setattr(cpu, "max_abs_pairs", lambda pairs: reads.append(1) or real(pairs))
    cases = [({"objective": "binary:logistic", "nthread": t}, weights)
             for t in (1, 2) for weights in (None, w)]
    cases.append(({"objective": "binary:logistic", "subsample": 0.6}, None))

    def fits():
        return [gbm.train(dict(p, max_depth=3), gbm.DMatrix(X, label=y, weight=weights),
                          3).to_json() for p, weights in cases]

    models = fits()
    assert reads == []
    monkeypatch.setattr(gradients, "_fused_pairs", lambda *args: None)
    assert fits() == models
    assert len(reads) == 3 * len(cases)
    reads.clear()
    gbm.train({"max_depth": 2}, gbm.DMatrix(X[:500], label=X[:500, 1]), 2)
    assert len(reads) == 2


def test_cuts_of_equal_weights_are_the_cuts_of_unit_weights():
    """``feature_cuts(values, None)`` (NaN in the values, no weights: the binning's
    unweighted case) and every equal positive weight give the cuts of unit weights."""
    from gbm.bins.cuts import feature_cuts

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
    from gbm.bins.binning import sample_mask

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
