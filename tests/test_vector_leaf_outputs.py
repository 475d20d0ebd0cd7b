"""The kernels of a CPU vector-leaf round on the float gradients of many outputs
(``kernels/cpu/vector_outputs.py``) against their NumPy twins and against independent
oracles (hand cases, the one-output kernels they stand for, bit for bit)."""
import numpy as np
import pytest

from gbm.kernels import cpu, reference as ref
from gbm.tree.projection import project_gradients, sketch


def _gradients(k, n, seed=0):
    rng = np.random.default_rng(seed)
    grad = rng.normal(size=(k, n)) * rng.uniform(0.01, 10.0, (k, 1))
    hess = rng.random((k, n)) * rng.uniform(0.01, 10.0, (k, 1))
    return grad, hess


def test_max_abs_outputs_is_each_outputs_max_abs():
    grad, hess = _gradients(7, 1000)
    grad[2, 17], hess[3, 5] = np.nan, np.inf  # NaN passed over, inf counted (max_abs's rule)
    grad[4] = 0.0
    fast, slow = np.empty((7, 2)), np.empty((7, 2))
    cpu.max_abs_outputs(grad, hess, fast)
    ref.max_abs_outputs(np.nan_to_num(grad, nan=0.0), hess, slow)
    np.testing.assert_array_equal(fast, slow)
    for j in range(7):
        assert fast[j, 0] == cpu.max_abs(grad[j]) and fast[j, 1] == cpu.max_abs(hess[j])
    assert fast[4, 0] == 0.0 and fast[3, 1] == np.inf
    assert fast[0, 0] == np.abs(grad[0]).max()  # hand oracle: a plain maximum
    empty = np.empty((3, 2))
    cpu.max_abs_outputs(np.empty((3, 0)), np.empty((3, 0)), empty)
    np.testing.assert_array_equal(empty, 0.0)


@pytest.mark.parametrize("n", [1, 5001, 16384, 16385])
def test_project_outputs_is_the_numpy_projection_bit_for_bit(n):
    grad, hess = _gradients(300, n, seed=n)
    columns, signs, d = sketch(5, 300, 16)
    grad[7, n // 2], hess[9, n - 1] = np.nan, 1e300  # NaN passed over by the maxima
    fast_g, fast_h = np.full((d, n), np.nan), np.full((d, n), np.nan)
    fast_max, slow_max, each = np.empty((300, 2)), np.empty((300, 2)), np.empty((300, 2))
    cpu.project_outputs(grad, hess, columns, signs, fast_g, fast_h, fast_max)
    slow_g, slow_h = np.empty((d, n)), np.empty((d, n))
    ref.project_outputs(grad, hess, columns, signs, slow_g, slow_h, slow_max)
    numpy_g, numpy_h = project_gradients(grad, hess, (columns, signs, d))
    for fast, slow, loop in ((fast_g, slow_g, numpy_g), (fast_h, slow_h, numpy_h)):
        assert fast.tobytes() == slow.tobytes() == loop.tobytes()
    cpu.max_abs_outputs(grad, hess, each)
    np.testing.assert_array_equal(fast_max, each)
    np.testing.assert_array_equal(np.delete(fast_max, 7, 0), np.delete(slow_max, 7, 0))
    assert fast_max[9, 1] == 1e300
    assert fast_max[7, 0] == np.abs(np.nan_to_num(grad[7], nan=0.0)).max()


def test_project_outputs_hand_case():
    # outputs 0 and 2 go to column 1 (signs +, -), output 1 to column 0 (+); column 2 empty
    grad = np.array([[1.0, 2.0], [10.0, 20.0], [0.5, 4.0]])
    hess = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    g, h, maxima = np.empty((3, 2)), np.empty((3, 2)), np.empty((3, 2))
    cpu.project_outputs(grad, hess, np.array([1, 0, 1]), np.array([1.0, 1.0, -1.0]), g, h,
                        maxima)
    np.testing.assert_array_equal(g, [[10.0, 20.0], [0.5, -2.0], [0.0, 0.0]])
    np.testing.assert_array_equal(h, [[2.0, 2.0], [4.0, 4.0], [0.0, 0.0]])
    np.testing.assert_array_equal(maxima, [[2.0, 1.0], [20.0, 2.0], [4.0, 3.0]])


def _segments(n=400):
    rng = np.random.default_rng(3)
    m = n * 31 // 40  # the rest in no segment
    rows = rng.permutation(n)[:m].astype(np.int32)
    starts = np.array([0, m // 6, m // 6, m * 2 // 3], np.int64)
    ends = np.array([m // 6, m // 6, m * 2 // 3, m], np.int64)
    return rows, starts, ends


@pytest.mark.parametrize("n", [400, 3000])
def test_quantized_segment_sums_are_the_quantized_pairs_sums(n):
    grad, hess = _gradients(9, n, seed=1)
    scales = np.ldexp(1.0, np.random.default_rng(2).integers(10, 40, (9, 2))).astype(float)
    rows, starts, ends = _segments(n)
    fast, slow = np.full((4, 9, 2), -7, np.int64), np.full((4, 9, 2), -7, np.int64)
    cpu.quantized_segment_sums(grad, hess, scales, rows, starts, ends, fast)
    ref.quantized_segment_sums(grad, hess, scales, rows, starts, ends, slow)
    np.testing.assert_array_equal(fast, slow)
    # the kernel it stands for: every output quantized (quantize_gradients), then summed
    pairs = np.empty((9, n, 2), np.int64)
    for j in range(9):
        cpu.quantize_gradients(grad[j], hess[j], scales[j], pairs[j])
    by_pairs = np.empty((4, 9, 2), np.int64)
    cpu.vector_segment_sums(pairs, rows, starts, ends, by_pairs)
    np.testing.assert_array_equal(fast, by_pairs)
    np.testing.assert_array_equal(fast[1], 0)  # an empty segment


def test_quantized_segment_sums_hand_case():
    grad = np.array([[0.25, -1.5, 2.0, 7.0]])
    hess = np.array([[1.0, 0.5, 0.25, 3.0]])
    scales = np.array([[4.0, 8.0]])
    out = np.empty((2, 1, 2), np.int64)
    # segment 0: rows 2, 0; segment 1: row 1; row 3 in none
    cpu.quantized_segment_sums(grad, hess, scales, np.array([2, 0, 1], np.int32),
                               np.array([0, 2], np.int64), np.array([2, 3], np.int64), out)
    np.testing.assert_array_equal(out[:, 0], [[1 + 8, 8 + 2], [-6, 4]])


def test_add_outputs_leaf_values_is_add_leaf_values_per_output():
    rng = np.random.default_rng(5)
    rows, starts, ends = _segments()
    values = rng.normal(size=(4, 6))
    margins = rng.normal(size=(6, 400))
    fast, slow = margins.copy(), margins.copy()
    cpu.add_outputs_leaf_values(rows, starts, ends, values, fast)
    ref.add_outputs_leaf_values(rows, starts, ends, values, slow)
    assert fast.tobytes() == slow.tobytes()
    one = margins.copy()
    for j in range(6):
        cpu.add_leaf_values(rows, starts, ends, np.ascontiguousarray(values[:, j]), one[j])
    assert fast.tobytes() == one.tobytes()
    out = np.setdiff1d(np.arange(400), rows)
    np.testing.assert_array_equal(fast[:, out], margins[:, out])  # rows in no leaf
    r = rows[60]  # segment 2's: one addition of its value
    np.testing.assert_array_equal(fast[:, r], margins[:, r] + values[2])


def _classes(n=600, k=70, seed=8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6)).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.argmax(np.nan_to_num(X) @ rng.normal(size=(6, k)) + rng.normal(size=(n, k)), 1)
    return X, y.astype(np.float64)


@pytest.mark.parametrize("extra", [{}, {"subsample": 0.7}, {"grow_policy": "lossguide",
                                   "max_leaves": 9, "max_depth": 0},
                                   {"monotone_constraints": (1, 0, -1, 0, 0, 0)},
                                   {"num_parallel_tree": 2, "colsample_bynode": 0.6}])
def test_projected_cpu_round_is_the_model_of_the_written_pairs(extra, monkeypatch):
    """A projected CPU round reads the full gradients as floats (``FloatOutputs``): the
    model file of the round that writes every output's pairs (``quantize_outputs``,
    output-major), byte for byte; the pairs written only for the monotone re-check."""
    import gbm
    from gbm.training import vector_round
    from gbm.tree import vector_gradients
    X, y = _classes()
    p = dict({"multi_strategy": "multi_output_tree", "objective": "multi:softprob",
              "num_class": 70, "max_depth": 3, "learning_rate": 0.5, "n_jobs": 2}, **extra)
    written = []
    pairs = vector_gradients.FloatOutputs.pairs
    monkeypatch.setattr(vector_gradients.FloatOutputs, "pairs",
                        lambda self: written.append(1) or pairs(self))
    floats = gbm.train(p, X, y, 3).to_json()
    assert bool(written) == ("monotone_constraints" in extra)
    monkeypatch.setattr(vector_round, "output_gradients",
                        lambda grad, hess, backend, n, _: vector_gradients.quantize_outputs(
                            grad, hess, backend, n, row_major=False))
    assert gbm.train(p, X, y, 3).to_json() == floats
    assert gbm.train(dict(p, n_jobs=1), X, y, 3).to_json() == floats
