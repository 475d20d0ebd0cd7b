"""Metrics of the rows ranked by score: ``auc``, ``aucpr`` and ``ams(k)``, called as the
pointwise metrics are (``metric(y, pred, w, collective=LOCAL)``); on an eval set with
query groups, ``auc`` and ``aucpr`` are their ``by_query`` forms (per group, averaged). They rank all rows: the ranks
gather them, and ties are put in one canonical order.
"""
import numpy as np

from ..collective import LOCAL
from ..numerics.elementwise import log
from ..numerics.exact import exact_sum, exact_sums


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
    as XGBoost does (``segment_areas``)."""
    return float(np.sum(segment_areas(tps[:-1], tps[1:], fps[:-1], fps[1:], tps[-1])))


def segment_areas(tp0, tp1, fp0, fp1, total):
    """Each segment's area under the precision-recall curve from ``(tp0, fp0)`` to
    ``(tp1, fp1)`` (true and false positive counts; ``total``: the positives, a number
    or one per segment): along it ``h`` false positives per true positive, so that at
    recall ``r`` the precision is ``r / (a r + b)`` with ``a = 1 + h`` and ``b = (fp0 - h
    tp0) / total``, whose integral over recall is closed-form (Keilwagen et al. 2014, eq.
    6). A segment with no true positive adds no recall and no area."""
    total = np.broadcast_to(np.asarray(total, dtype=np.float64), tp0.shape)
    moving = tp1 > tp0
    tp0, tp1, fp0, fp1, total = tp0[moving], tp1[moving], fp0[moving], fp1[moving], total[moving]
    h = (fp1 - fp0) / (tp1 - tp0)
    a, b = 1.0 + h, (fp0 - h * tp0) / total
    r0, r1 = tp0 / total, tp1 / total
    shift = np.where(b != 0.0, b / a, 0.0)
    # at b == 0 the log term vanishes (and log(a r0) is -inf at the origin)
    logs = np.zeros_like(b)
    curved = b != 0.0
    logs[curved] = (log(a[curved] * r1[curved] + b[curved])
                    - log(a[curved] * r0[curved] + b[curved]))
    out = np.zeros(moving.shape[0])
    out[moving] = (r1 - r0 - shift * logs) / a
    return out


def aucpr_by_query(y, pred, queries, collective=LOCAL):
    """``aucpr`` of an eval set with query groups, XGBoost's: each group's area on its
    own rows (binary relevance, labels in [0, 1]; a group's weight scales both counts
    and changes nothing), averaged over the groups with both labels, on every rank."""
    bad = (y < 0.0) | (y > 1.0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"y[{row}] = {y[row]}; aucpr with query groups needs relevance "
                         "labels in [0, 1] (binary relevance), as in XGBoost")
    ptr = queries.ptr
    n_groups = ptr.shape[0] - 1
    group_of = np.repeat(np.arange(n_groups), np.diff(ptr))
    order = np.lexsort((-y, -pred, group_of))  # each group's rows, best score first
    group, score, label = group_of[order], pred[order], y[order]
    tps, fps = np.cumsum(label), np.cumsum(1.0 - label)
    start_tp = np.concatenate(([0.0], tps))[ptr[:-1]][group]  # counts before each group
    start_fp = np.concatenate(([0.0], fps))[ptr[:-1]][group]
    tps, fps = tps - start_tp, fps - start_fp
    last = np.ones(order.shape[0], dtype=bool)  # the last row of each score in a group
    last[:-1] = (group[1:] != group[:-1]) | (score[1:] != score[:-1])
    g, tp1, fp1 = group[last], tps[last], fps[last]
    first = np.ones(g.shape[0], dtype=bool)  # a group's first point starts from (0, 0)
    first[1:] = g[1:] != g[:-1]
    tp0 = np.where(first, 0.0, np.concatenate(([0.0], tp1[:-1])))
    fp0 = np.where(first, 0.0, np.concatenate(([0.0], fp1[:-1])))
    positives = np.bincount(group_of, weights=y, minlength=n_groups)
    negatives = np.diff(ptr) - positives
    areas = np.bincount(g, weights=segment_areas(tp0, tp1, fp0, fp1, positives[g]),
                        minlength=n_groups)
    valid = (positives > 0) & (negatives > 0)
    return _mean_of_groups(np.where(valid, areas, 0.0), valid, collective, "aucpr")


def auc_by_query(y, pred, queries, collective=LOCAL):
    """``auc`` of an eval set with query groups: in each group, the share of its pairs of
    documents with different labels that the scores order as the labels (a tie counts
    half), averaged over the groups that have such a pair, on every rank. (XGBoost also
    counts the pairs of equal labels, in the order the rows are given, and leaves out
    groups of fewer than 3 documents.)"""
    ptr = queries.ptr
    scores = np.zeros(ptr.shape[0] - 1)
    valid = np.zeros(ptr.shape[0] - 1, dtype=bool)
    for g in range(ptr.shape[0] - 1):
        labels, preds = y[ptr[g]:ptr[g + 1]], pred[ptr[g]:ptr[g + 1]]
        right = pairs = 0.0
        for level in np.unique(labels)[1:]:  # each label against the lower ones
            lower = np.sort(preds[labels < level])
            above = preds[labels == level]
            below = np.searchsorted(lower, above, "left")
            ties = np.searchsorted(lower, above, "right") - below
            right += np.sum(below) + 0.5 * np.sum(ties)
            pairs += above.shape[0] * lower.shape[0]
        if pairs > 0:
            scores[g], valid[g] = right / pairs, True
    return _mean_of_groups(scores, valid, collective, "auc")


def _mean_of_groups(scores, valid, collective, name):
    """The mean of the valid groups' scores over every rank (exact sums)."""
    total, count = exact_sums(np.stack([scores, valid.astype(np.float64)]), collective)
    if count == 0:
        raise ValueError(f"{name} with query groups needs a group with two labels (a "
                         "relevant and a less relevant document)")
    return float(total / count)


auc.by_query = auc_by_query
aucpr.by_query = aucpr_by_query


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
