"""AUC: the unweighted 0/1 path (sorted classes and a merge) against the trapezoids of
the ROC curve (the weighted path's code) and scikit-learn, ties and fallbacks included."""
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from gbm.metrics import curves as metrics


def _trapezoids(y, score):
    tps, fps = metrics._curve(y, score, None)
    return np.sum((fps[1:] - fps[:-1]) * (tps[1:] + tps[:-1])) / 2.0 / (tps[-1] * fps[-1])


@pytest.mark.parametrize("seed", range(4))
def test_merge_path_is_the_trapezoid_number_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    for _ in range(150):
        n = int(rng.integers(2, 300))
        y = (rng.random(n) < rng.random()).astype(np.float64)
        if not 0 < y.sum() < n:
            continue
        score = np.round(rng.standard_normal(n), int(rng.integers(0, 4)))  # many ties
        got = metrics.auc(y, score, None)
        assert got == _trapezoids(y, score)
        assert got == pytest.approx(roc_auc_score(y, score), abs=1e-12)


def test_hand_made_case_with_ties():
    # positives 0.8, 0.5, 0.5; negatives 0.5, 0.2: pairs won 2 + 1 + 1, tied 0 + 1 + 1
    y = np.array([1.0, 1.0, 1.0, 0.0, 0.0])
    score = np.array([0.8, 0.5, 0.5, 0.5, 0.2])
    assert metrics.auc(y, score, None) == (4 + 0.5 * 2) / 6


def test_soft_labels_and_non_finite_scores_take_the_curve_path():
    y = np.array([0.0, 0.3, 1.0, 1.0, 0.0])
    score = np.array([0.1, 0.4, 0.35, 0.8, 0.2])
    assert metrics.auc(y, score, None) == _trapezoids(y, score)  # soft labels
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    score = np.array([0.1, np.inf, 0.35, 0.8, np.inf])
    with np.errstate(invalid="ignore"):
        assert metrics.auc(y, score, None) == _trapezoids(y, score)


def test_weighted_and_multiclass_auc_match_scikit_learn():
    rng = np.random.default_rng(5)
    y = (rng.random(400) < 0.4).astype(np.float64)
    score = np.round(rng.random(400), 2)
    w = rng.random(400) + 0.1
    assert metrics.auc(y, score, w) == pytest.approx(roc_auc_score(y, score, sample_weight=w))
    labels = rng.integers(0, 3, 400).astype(np.float64)
    proba = rng.dirichlet(np.ones(3), 400)
    assert metrics.auc(labels, proba, None) == pytest.approx(
        roc_auc_score(labels, proba, multi_class="ovr", average="weighted"))


def test_one_class_is_refused():
    with pytest.raises(ValueError, match="both classes"):
        metrics.auc(np.ones(4), np.arange(4.0), None)


def test_extreme_scores_match_scikit_learn():
    # subnormals, signed zeros (equal: a tie) and the largest floats, through the merge path
    tiny, huge = 5e-324, 1.7976931348623157e308
    score = np.array([-huge, -1.0, -0.0, 0.0, tiny, 2 * tiny, 1e-310, 1.0, huge, huge, 0.0])
    for y in ([0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
              [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0], [1, 0], [0, 1]):
        y = np.asarray(y, dtype=np.float64)
        s = score[:y.size]
        assert metrics.auc(y, s, None) == _trapezoids(y, s)
        assert metrics.auc(y, s, None) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
