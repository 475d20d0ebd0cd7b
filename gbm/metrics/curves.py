"""Metrics of the rows ranked by score: ``auc`` and ``aucpr``, called as the pointwise
metrics are (``metric(y, pred, w, collective=LOCAL)``). They rank all rows: the ranks
gather them, and ties are put in one canonical order.
"""
import numpy as np

from ..collective import LOCAL
from ..numerics.exact import exact_sum


def _gathered(collective, *arrays):
    """Every rank's rows of ``arrays``, concatenated (the order is made canonical later)."""
    if collective.world_size == 1:
        return arrays
    parts = collective.allgather(arrays)
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(len(arrays)))


def _curve(y, score, w):
    """Weighted true and false positive counts at each distinct score, highest first,
    starting from (0, 0). With weights, rows are put in a canonical order (score
    descending, then label, then weight), so the sums do not depend on the input order;
    without, the counts are integers, exact in any order."""
    if w is None:  # ties in any order: the counts are integers (introsort: 5x faster)
        order = np.argsort(-score)
        score, y = score[order], y[order]
        positive, negative = y, 1.0 - y
    else:
        order = np.lexsort((w, y, -score))
        score, y, w = score[order], y[order], w[order]
        positive, negative = y * w, (1.0 - y) * w
    ends = np.concatenate((np.flatnonzero(np.diff(score)), [score.shape[0] - 1]))
    tps = np.concatenate(([0.0], np.cumsum(positive)[ends]))
    fps = np.concatenate(([0.0], np.cumsum(negative)[ends]))
    return tps, fps


def _binary_auc(y, score, w):
    if w is None:
        # 0/1 labels, no weights, finite scores: AUC = U / (positives x negatives), from
        # sorts of the two classes' scores and a merge (``kernels/cpu/auc.py``, host
        # kernels on every backend) instead of an argsort of all rows
        # (3.5x faster on 10,000 rows, boolean masks being slow too). The same number as
        # the trapezoids below: both areas are exact integer counts (or halves), divided
        # by the same product.
        from ..kernels import cpu  # on first use: ``import gbm`` stays light

        pos, neg = np.empty(y.shape[0]), np.empty(y.shape[0])
        n_pos = cpu.split_by_label(y, np.ascontiguousarray(score, dtype=np.float64), pos, neg)
        n_neg = y.shape[0] - n_pos
        if n_pos > 0 and n_neg > 0:  # else the curve's path (one class: its error)
            twice = cpu.twice_mann_whitney(np.sort(pos[:n_pos]), np.sort(neg[:n_neg]))
            return twice / 2.0 / (n_pos * n_neg)
    tps, fps = _curve(y, score, w)
    if tps[-1] <= 0 or fps[-1] <= 0:
        raise ValueError("AUC needs both classes in the eval set; only one class is present")
    area = np.sum((fps[1:] - fps[:-1]) * (tps[1:] + tps[:-1])) / 2.0  # trapezoids
    return area / (tps[-1] * fps[-1])


def auc(y, pred, w, collective=LOCAL):
    """Area under the ROC curve (binary), or one-vs-rest weighted by prevalence
    (multiclass), as scikit-learn's ``roc_auc_score(..., multi_class="ovr",
    average="weighted")``."""
    w = None if w is None else np.asarray(w, dtype=np.float64)
    y, pred = _gathered(collective, np.asarray(y, np.float64), pred)
    if w is not None:
        (w,) = _gathered(collective, w)
    if pred.ndim == 1:
        return float(_binary_auc(y, pred, w))
    prevalence = np.array([np.sum(y == c) if w is None else exact_sum(w[y == c])
                           for c in range(pred.shape[1])], dtype=np.float64)
    scores = np.array([_binary_auc((y == c).astype(np.float64), pred[:, c], w) if p > 0 else 0.0
                       for c, p in enumerate(prevalence)])
    return float(np.sum(scores * prevalence) / np.sum(prevalence))


def aucpr(y, pred, w, collective=LOCAL):
    """Area under the precision-recall curve (binary), as average precision: the sum over
    thresholds of (recall step) x precision (scikit-learn's ``average_precision_score``)."""
    w = None if w is None else np.asarray(w, dtype=np.float64)
    y, pred = _gathered(collective, np.asarray(y, np.float64), pred)
    if w is not None:
        (w,) = _gathered(collective, w)
    tps, fps = _curve(y, pred, w)
    if tps[-1] <= 0:
        raise ValueError("aucpr needs positive labels in the eval set")
    precision = tps[1:] / np.maximum(tps[1:] + fps[1:], np.finfo(np.float64).tiny)
    recall = tps / tps[-1]
    return float(np.sum((recall[1:] - recall[:-1]) * precision))
