"""Metrics of the rows ranked by score: ``auc``, ``aucpr`` and ``ams(k)``, called as the
pointwise metrics are (``metric(y, pred, w, collective=LOCAL)``). They rank all rows: the ranks
gather them, and ties are put in one canonical order.
"""
import numpy as np

from ..collective import LOCAL
from ..numerics.elementwise import log
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
    """Area under the precision-recall curve, XGBoost's: between two thresholds, the
    curve passes through the points of the rows between them (tied scores' rows taken in
    any order, Davis & Goadrich 2006), and its area is exact (``pr_area``). Multiclass
    (``pred`` (n, n_classes)): one class against the rest, averaged over the classes
    (unweighted, as XGBoost), over those present with both labels (XGBoost: NaN when one
    is not)."""
    w = None if w is None else np.asarray(w, dtype=np.float64)
    y, pred = _gathered(collective, np.asarray(y, np.float64), pred)
    if w is not None:
        (w,) = _gathered(collective, w)
    if pred.ndim == 1:
        return float(_binary_aucpr(y, pred, w))
    areas = []
    for c in range(pred.shape[1]):
        labels = (y == c).astype(np.float64)
        if labels.any() and not labels.all():
            areas.append(_binary_aucpr(labels, pred[:, c], w))
    if not areas:
        raise ValueError("aucpr needs a class with both labels in the eval set (rows of it "
                         "and rows of other classes)")
    return float(np.mean(areas))


def _binary_aucpr(y, score, w):
    tps, fps = _curve(y, score, w)
    if tps[-1] <= 0 or fps[-1] <= 0:
        raise ValueError("aucpr needs both classes in the eval set; only one class is present")
    return pr_area(tps, fps)


def pr_area(tps, fps):
    """The area under the precision-recall curve through the points ``(tps, fps)``
    (cumulative true and false positive counts from (0, 0)), each segment interpolated
    as XGBoost does: ``h`` false positives per true positive along it, so that at recall
    ``r`` the precision is ``r / (a r + b)`` with ``a = 1 + h`` and ``b = (fp0 - h tp0) /
    P``, whose integral over recall is closed-form (Keilwagen et al. 2014, eq. 6). A
    segment with no true positive adds no recall and no area."""
    total = tps[-1]
    tp0, tp1, fp0, fp1 = tps[:-1], tps[1:], fps[:-1], fps[1:]
    moving = tp1 > tp0
    tp0, tp1, fp0, fp1 = tp0[moving], tp1[moving], fp0[moving], fp1[moving]
    h = (fp1 - fp0) / (tp1 - tp0)
    a, b = 1.0 + h, (fp0 - h * tp0) / total
    r0, r1 = tp0 / total, tp1 / total
    shift = np.where(b != 0.0, b / a, 0.0)
    # at b == 0 the log term vanishes (and log(a r0) is -inf at the origin)
    logs = np.zeros_like(b)
    curved = b != 0.0
    logs[curved] = (log(a[curved] * r1[curved] + b[curved])
                    - log(a[curved] * r0[curved] + b[curved]))
    return float(np.sum((r1 - r0 - shift * logs) / a))


# AMS's regularisation term b_r (Adam-Bourdarios et al. 2014, the Higgs challenge's)
_AMS_BR = 10.0


def ams(ratio):
    """XGBoost's ``ams@k``: the approximate median significance ``sqrt(2 ((s + b + b_r)
    log(1 + s / (b + b_r)) - s))`` of the rows ranked by score, ``s`` and ``b`` the
    weights of the positive and negative rows selected. ``k`` = 0 (or a share of fewer
    than one row): the best AMS over the cuts between distinct scores (the last row
    never selected, as in XGBoost); else the AMS of the top ``int(k n)`` rows. Tied rows
    are taken label first, then by weight (a canonical order; XGBoost's is arbitrary)."""
    def metric(y, pred, w, collective=LOCAL):
        y, pred = _gathered(collective, np.asarray(y, np.float64), np.asarray(pred))
        w = np.ones_like(y) if w is None else _gathered(collective, np.asarray(w, np.float64))[0]
        n = y.shape[0]
        top = int(ratio * n) or n
        ranked = np.lexsort((w, -y, -pred))  # score descending, positives first in a tie
        chosen = ranked[:min(top, n - 1)]
        positive = y[chosen] > 0.5
        s = np.cumsum(np.where(positive, w[chosen], 0.0))
        b = np.cumsum(np.where(positive, 0.0, w[chosen]))
        values = np.sqrt(2.0 * ((s + b + _AMS_BR) * log(1.0 + s / (b + _AMS_BR)) - s))
        if top < n:
            return float(values[-1]) if values.size else 0.0
        cuts = pred[chosen] != pred[ranked[1:chosen.size + 1]]  # between distinct scores
        return float(values[cuts].max(initial=0.0))

    return metric
