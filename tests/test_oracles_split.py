"""The split formulas against oracles that share no code with them.

``kernels/split_math.py`` is compiled into the kernels and into their NumPy twins alike,
so a twin test cannot see a mistake in it. Here the oracle is the definition: a node's
weight minimises its regularised second-order loss

    loss(w) = G w + (H + lambda) w^2 / 2 + alpha |w|,   |w| <= max_delta_step (if > 0),
                                                         lower <= w <= upper (monotone),

and its gain is ``-2 min loss``; the minimum is found numerically (bounded Brent search,
so weights agree to its tolerance, 1e-6 relative, and gains far closer: the loss is flat
at its minimum), never with split_math. A few values are also written out by hand. Then the split kernels
(both the Numba one and its twin) are run on small hand-made histograms and must pick the
threshold this oracle picks, with its gain.
"""
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from gbm.kernels import cpu, reference
from gbm.kernels.layout import CAT_WORDS
from gbm.kernels.split_math import cpu as compiled
from gbm.kernels.split_math import python as plain

FORMULAS = [pytest.param(plain, id="python"), pytest.param(compiled, id="numba")]
KERNELS = [pytest.param(cpu, id="cpu"), pytest.param(reference, id="reference")]


# --- the oracle ----------------------------------------------------------------------------

def oracle_weight(G, H, lam=0.0, alpha=0.0, mds=0.0, lower=-np.inf, upper=np.inf):
    """argmin of the regularised loss over the allowed interval, by a numeric search."""
    D = H + lam
    if D <= 0:
        return 0.0
    reach = (abs(G) + alpha) / D + 1.0  # the minimiser is inside [-reach, reach]
    lo, hi = -reach, reach
    if mds > 0:
        lo, hi = max(lo, -mds), min(hi, mds)
    lo, hi = max(lo, lower), min(hi, upper)
    if lo == hi:
        return lo
    loss = lambda w: G * w + 0.5 * D * w * w + alpha * abs(w)
    res = minimize_scalar(loss, bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-13, "maxiter": 2000})
    best = res.x
    for edge in (lo, hi, 0.0):  # Brent may stop just inside an active bound or the kink
        if lo <= edge <= hi and loss(edge) <= loss(best):
            best = edge
    return best


def oracle_loss(G, H, lam, alpha, w):
    return G * w + 0.5 * (H + lam) * w * w + alpha * abs(w)


def oracle_gain(G, H, lam=0.0, alpha=0.0, mds=0.0, lower=-np.inf, upper=np.inf):
    if H + lam <= 0:
        return 0.0
    return -2.0 * oracle_loss(G, H, lam, alpha, oracle_weight(G, H, lam, alpha, mds, lower, upper))


# --- the scalar formulas ----------------------------------------------------------------------

@pytest.mark.parametrize("sm", FORMULAS)
def test_hand_computed_values(sm):
    # G = 3, H = 2, lambda = 1: w = -3 / 3 = -1, gain = 9 / 3 = 3
    assert sm.leaf_weight(3.0, 2.0, 1.0, 0.0, 0.0) == -1.0
    assert sm.node_gain(3.0, 2.0, 1.0, 0.0, 0.0) == 3.0
    # lambda moves the weight: lambda = 4 -> w = -3 / 6, gain = 9 / 6
    assert sm.leaf_weight(3.0, 2.0, 4.0, 0.0, 0.0) == -0.5
    assert sm.node_gain(3.0, 2.0, 4.0, 0.0, 0.0) == 1.5
    # L1 shrinks |G| by alpha towards 0, on both signs: alpha = 1.5
    assert sm.leaf_weight(3.0, 2.0, 1.0, 1.5, 0.0) == -0.5  # -(3 - 1.5) / 3
    assert sm.leaf_weight(-3.0, 2.0, 1.0, 1.5, 0.0) == 0.5  # -(-3 + 1.5) / 3
    assert sm.node_gain(3.0, 2.0, 1.0, 1.5, 0.0) == 0.75  # 1.5^2 / 3
    assert sm.node_gain(-3.0, 2.0, 1.0, 1.5, 0.0) == 0.75
    assert sm.leaf_weight(1.0, 2.0, 1.0, 1.5, 0.0) == 0.0  # |G| <= alpha: no weight
    assert sm.leaf_weight(-1.0, 2.0, 1.0, 1.5, 0.0) == 0.0
    assert sm.node_gain(-1.0, 2.0, 1.0, 1.5, 0.0) == 0.0
    # max_delta_step caps |w| and keeps its sign: w = -1 -> -0.25, w = +1 -> +0.25
    assert sm.leaf_weight(3.0, 2.0, 1.0, 0.0, 0.25) == -0.25
    assert sm.leaf_weight(-3.0, 2.0, 1.0, 0.0, 0.25) == 0.25
    assert sm.leaf_weight(3.0, 2.0, 1.0, 0.0, 2.0) == -1.0  # the cap does not bind
    # capped gain: -2 loss(w) = -(2 G w + (H + lambda) w^2) = -(2*3*-0.25 + 3/16) = 1.3125
    assert sm.node_gain(3.0, 2.0, 1.0, 0.0, 0.25) == 1.3125
    assert sm.node_gain(-3.0, 2.0, 1.0, 0.0, 0.25) == 1.3125
    # cap and L1: w = -0.25, -(2*3*-0.25 + 3/16 + 2*1*0.25) = 0.8125
    assert sm.node_gain(3.0, 2.0, 1.0, 1.0, 0.25) == 0.8125
    assert sm.node_gain(-3.0, 2.0, 1.0, 1.0, 0.25) == 0.8125
    # H + lambda = 0: an empty node, no weight and no gain
    assert sm.leaf_weight(3.0, 0.0, 0.0, 0.0, 0.0) == 0.0
    assert sm.node_gain(3.0, 0.0, 0.0, 0.0, 0.0) == 0.0


@pytest.mark.parametrize("sm", FORMULAS)
def test_monotone_bounds_by_hand(sm):
    # unbounded w = -1 (G = 3, H = 2, lambda = 1); bounds [-0.5, 2] clip it to -0.5:
    # gain = -(2*3*-0.5 + 3*0.25) = 2.25
    assert sm.bounded_weight(3.0, 2.0, 1.0, 0.0, 0.0, -0.5, 2.0) == -0.5
    assert sm.bounded_gain(3.0, 2.0, 1.0, 0.0, 0.0, -0.5, 2.0) == 2.25
    assert sm.bounded_weight(-3.0, 2.0, 1.0, 0.0, 0.0, -2.0, 0.5) == 0.5  # the upper bound
    assert sm.bounded_gain(-3.0, 2.0, 1.0, 0.0, 0.0, -2.0, 0.5) == 2.25
    assert sm.bounded_weight(3.0, 2.0, 1.0, 0.0, 0.0, -2.0, 2.0) == -1.0  # not binding
    assert sm.bounded_gain(3.0, 2.0, 1.0, 0.0, 0.0, -np.inf, np.inf) == 3.0
    # a weight forced to the far side of 0 costs loss: w = 0.5 when w* = -1
    assert sm.bounded_gain(3.0, 2.0, 1.0, 0.0, 0.0, 0.5, 1.0) == -(3.0 + 0.75)


def _grid():
    rng = np.random.default_rng(0)
    cases = []
    for G in (-7.5, -1.2, -0.3, 0.0, 0.4, 2.0, 9.0):
        for H, lam in ((0.5, 0.0), (2.0, 1.0), (10.0, 0.25)):
            for alpha in (0.0, 0.5, 3.0):
                for mds in (0.0, 0.2, 5.0):
                    cases.append((G, H, lam, alpha, mds))
    bounds = [(-np.inf, np.inf), (-0.1, np.inf), (-np.inf, 0.15), (-0.3, 0.05)]
    return cases, bounds, rng


@pytest.mark.parametrize("sm", FORMULAS)
def test_formulas_equal_the_loss_minimum(sm):
    """Every parameter and both signs of G: the weight is the loss minimiser, the gain
    minus twice the minimum (an off-sign L1 threshold or a cap that loses its sign
    gives a weight with a higher loss)."""
    cases, bounds, _ = _grid()
    for G, H, lam, alpha, mds in cases:
        w = sm.leaf_weight(G, H, lam, alpha, mds)
        assert w == pytest.approx(oracle_weight(G, H, lam, alpha, mds), rel=1e-6, abs=1e-9), (G, H, lam, alpha, mds)
        assert sm.node_gain(G, H, lam, alpha, mds) == pytest.approx(
            oracle_gain(G, H, lam, alpha, mds), rel=1e-9, abs=1e-12), (G, H, lam, alpha, mds)
        for lower, upper in bounds:
            if mds and (lower > mds or upper < -mds):
                continue
            args = (G, H, lam, alpha, mds, lower, upper)
            assert sm.bounded_weight(*args) == pytest.approx(oracle_weight(*args), rel=1e-6,
                                                                  abs=1e-9), args
            assert sm.bounded_gain(*args) == pytest.approx(oracle_gain(*args), rel=1e-9,
                                                           abs=1e-12), args


# --- the split kernels on hand-made histograms ----------------------------------------------

SCALES = np.array([4.0, 2.0])  # powers of two, as gbm.tree.quantize makes them


def _evaluate(module, hist, params, monotone=0, bounds=(-np.inf, np.inf), n_bins=None):
    """evaluate_splits on one node of one numeric feature (or several features of the
    same histogram slots). ``hist``: float (n_features, n_bins + 1, 2), real g and h."""
    hist = np.asarray(hist, np.float64)
    n_features, slots = hist.shape[0], hist.shape[1]
    fixed = np.round(hist * SCALES).astype(np.int64).reshape(1, n_features * slots, 2)
    offsets = np.arange(0, n_features * slots + 1, slots, dtype=np.int32)
    sums = fixed[:, :slots].sum(axis=1)
    out = (np.empty(1), np.empty(1, np.int32), np.empty(1, np.int32), np.empty(1, np.uint8),
           np.empty((1, 2), np.int64), np.empty((1, CAT_WORDS), np.uint32))
    module.evaluate_splits(fixed, offsets, 1, np.zeros(n_features, np.uint8), sums,
                           np.ones((1, n_features), np.uint8),
                           np.full(n_features, monotone, np.int8), np.array([bounds], float),
                           SCALES[None, :], np.array(params, np.float64), 4, 64, *out)
    gain, feature, split_bin, default_left, left = (a[0] for a in out[:5])
    return gain, feature, split_bin, default_left, left / SCALES


def _oracle_split(h, lam, alpha, mds, mcw, monotone=0, bounds=(-np.inf, np.inf)):
    """Best (gain, bin) of one feature without missing values, by enumeration."""
    h = np.asarray(h, float)[:-1]
    G, H = h.sum(axis=0)
    parent = oracle_gain(G, H, lam, alpha, mds, *bounds)
    best = (-np.inf, None)
    for b in range(h.shape[0] - 1):
        gl, hl = h[:b + 1].sum(axis=0)
        gr, hr = G - gl, H - hl
        if hl <= 0 or hr <= 0 or hl < mcw or hr < mcw:
            continue
        wl = oracle_weight(gl, hl, lam, alpha, mds, *bounds)
        wr = oracle_weight(gr, hr, lam, alpha, mds, *bounds)
        if (monotone > 0 and wl > wr + 1e-12) or (monotone < 0 and wl < wr - 1e-12):
            continue
        gain = (-2 * oracle_loss(gl, hl, lam, alpha, wl) - 2 * oracle_loss(gr, hr, lam, alpha, wr)
                - parent)
        if gain > best[0] + 1e-9:
            best = (gain, b)
    return best


# six value bins and an empty missing slot; g and h multiples of the scales' inverses
HIST = [[-3.0, 2.0], [-1.5, 1.0], [2.25, 3.0], [0.75, 0.5], [4.0, 2.5], [-0.5, 1.5], [0.0, 0.0]]
PARAMS = [  # reg_lambda, reg_alpha, max_delta_step, min_child_weight
    (0.0, 0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0), (25.0, 0.0, 0.0, 0.0),
    (1.0, 2.0, 0.0, 0.0), (1.0, 6.0, 0.0, 0.0), (0.0, 0.0, 0.3, 0.0), (1.0, 1.0, 0.2, 0.0),
    (1.0, 0.0, 0.0, 4.0), (0.5, 0.5, 0.5, 3.5),
]


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("params", PARAMS)
@pytest.mark.parametrize("sign", [1, -1])
def test_kernel_picks_the_oracle_split(kernels, params, sign):
    """Both signs of the gradients: a sign mistake in L1 or in the cap shows on one."""
    hist = np.array(HIST) * [sign, 1]
    gain, feature, split_bin, _, left = _evaluate(kernels, hist[None], params)
    expected_gain, expected_bin = _oracle_split(hist, *params)
    assert expected_bin is not None
    assert (feature, split_bin) == (0, expected_bin)
    assert gain == pytest.approx(expected_gain, rel=1e-9)
    np.testing.assert_array_equal(left, hist[:expected_bin + 1].sum(axis=0))


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("monotone, bounds", [
    (1, (-np.inf, np.inf)), (-1, (-np.inf, np.inf)), (1, (-0.4, 0.6)), (0, (-0.3, 0.2)),
    (-1, (-1.0, 0.1)),
])
@pytest.mark.parametrize("params", [(1.0, 0.0, 0.0, 0.0), (0.5, 1.0, 0.4, 0.0)])
def test_kernel_respects_monotone_direction_and_bounds(kernels, monotone, bounds, params):
    gain, feature, split_bin, _, _ = _evaluate(kernels, np.array(HIST)[None], params, monotone,
                                               bounds)
    expected_gain, expected_bin = _oracle_split(HIST, *params, monotone, bounds)
    if expected_bin is None:
        assert feature == -1
        return
    assert (feature, split_bin) == (0, expected_bin)
    assert gain == pytest.approx(expected_gain, rel=1e-9)


def test_monotone_constraint_changes_the_split():
    """The data above, unconstrained, split where the left weight is larger: the
    constrained answers must differ, or the test above would not test the constraint."""
    free = _oracle_split(HIST, 1.0, 0.0, 0.0, 0.0)[1]
    assert free != _oracle_split(HIST, 1.0, 0.0, 0.0, 0.0, 1)[1]


# --- boundary inputs: exact min_child_weight, ties --------------------------------------------

@pytest.mark.parametrize("kernels", KERNELS)
def test_child_exactly_at_min_child_weight_may_split(kernels):
    # integer hessians: the only useful split leaves exactly 3 on the left
    hist = [[-3.0, 3.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [0.0, 0.0]]
    for mcw, expected in ((3.0, 0), (3.0 + 1e-9, 1), (2.0, 0)):
        _, feature, split_bin, _, _ = _evaluate(kernels, np.array(hist)[None],
                                                (0.0, 0.0, 0.0, mcw))
        if mcw > 3.0:  # no threshold leaves both children 3 or more
            assert feature == -1
        else:
            assert (feature, split_bin) == (0, expected)
    # the right child at the limit: hessians 1, 1, 3 -> the last threshold leaves 3 right
    hist = [[1.0, 1.0], [1.0, 1.0], [-3.0, 3.0], [0.0, 0.0]]
    _, feature, split_bin, _, _ = _evaluate(kernels, np.array(hist)[None], (0.0, 0.0, 0.0, 3.0))
    assert feature == -1  # left 2 (< 3) at bin 1; at bin 0 left is 1
    _, feature, split_bin, _, _ = _evaluate(kernels, np.array(hist)[None], (0.0, 0.0, 0.0, 2.0))
    assert (feature, split_bin) == (0, 1)  # left 2, right 3: both at or above the limit


@pytest.mark.parametrize("kernels", KERNELS)
def test_gain_ties_keep_the_first_threshold_and_the_lowest_feature(kernels):
    # g = 2, -2, 2, -2 with h = 1: thresholds 0 and 2 both give 4/1 + 4/3 exactly
    hist = np.array([[2.0, 1.0], [-2.0, 1.0], [2.0, 1.0], [-2.0, 1.0], [0.0, 0.0]])
    gain, feature, split_bin, _, _ = _evaluate(kernels, hist[None], (0.0, 0.0, 0.0, 0.0))
    assert (feature, split_bin) == (0, 0)
    assert gain == 4.0 + 4.0 / 3.0
    # the same histogram on three features: the lowest wins
    gain, feature, split_bin, _, _ = _evaluate(kernels, np.stack([hist] * 3),
                                               (0.0, 0.0, 0.0, 0.0))
    assert (feature, split_bin) == (0, 0)
    # feature 1 strictly better: it wins over feature 0
    better = hist.copy()
    better[0, 0] = 2.25
    better[1, 0] = -2.25
    _, feature, _, _, _ = _evaluate(kernels, np.stack([hist, better, hist]), (0.0, 0.0, 0.0, 0.0))
    assert feature == 1


@pytest.mark.parametrize("kernels", KERNELS)
def test_missing_values_go_where_the_gain_is_higher(kernels):
    # missing g = -2: it belongs with the negative bins (left); g = +2: right
    for missing_g, left in ((-2.0, 1), (2.0, 0)):
        hist = np.array([[-3.0, 2.0], [-1.0, 1.0], [3.0, 2.0], [1.0, 1.0], [missing_g, 1.0]])
        gain, feature, split_bin, default_left, sums = _evaluate(kernels, hist[None],
                                                                 (1.0, 0.0, 0.0, 0.0))
        assert (feature, split_bin, default_left) == (0, 1, left)
        gl = -4.0 + (missing_g if left else 0.0)
        hl = 3.0 + (1.0 if left else 0.0)
        gr, hr = 0.0 + missing_g - gl, 7.0 - hl
        G, H = missing_g, 7.0
        assert gain == pytest.approx(gl**2 / (hl + 1) + gr**2 / (hr + 1) - G**2 / (H + 1),
                                     rel=1e-12)
