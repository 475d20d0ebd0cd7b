"""Ranking metrics ``ndcg``, ``map`` and ``pre`` (precision), with XGBoost's name forms
``ndcg@k`` (top k only), ``ndcg-`` / ``ndcg@k-`` (a query with no relevant document scores
0 instead of 1), and the same for ``map`` and ``pre`` (a query without relevant documents
has precision 0 either way).

Scores are computed per query group and averaged with the groups' weights (exact sums,
over every rank: a query group is never split between ranks). Documents are
ranked by prediction, best first; ties keep their input order (a stable sort, as
XGBoost's). Without query groups the whole set is one query.
"""
import numpy as np

from ..collective import LOCAL
from ..numerics.elementwise import log2
from ..numerics.exact import exact_sums
from .names import parse_ranking

_MAX_EXP_LABEL = 31


def _ranked_positions(keys, ptr):
    """Row order sorting each group by ``keys`` descending (stable), and each sorted
    row's 0-based position within its group."""
    group_of = np.repeat(np.arange(ptr.shape[0] - 1), np.diff(ptr))
    order = np.lexsort((-keys, group_of))  # groups are consecutive: blocks stay in place
    return order, np.arange(keys.shape[0]) - ptr[group_of], group_of


def ndcg_per_group(y, pred, ptr, k=None, minus=False, exp_gain=True):
    """NDCG@k of each group, float64 (n_groups,): DCG of the predicted order over DCG of
    the ideal order, gain ``2^label - 1`` (or ``label``), discount ``1 / log2(pos + 2)``."""
    n_groups = ptr.shape[0] - 1
    gain = (np.exp2(y) - 1.0) if exp_gain else y
    top = np.inf if k is None else k
    dcg = []
    for keys in (pred, y):
        order, pos, group_of = _ranked_positions(keys, ptr)
        term = np.where(pos < top, gain[order] / log2(pos + 2.0), 0.0)
        dcg.append(np.bincount(group_of, weights=term, minlength=n_groups))
    dcg, idcg = dcg
    empty = 0.0 if minus else 1.0  # XGBoost's score of a query without relevant documents
    return np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), empty)


def map_per_group(y, pred, ptr, k=None, minus=False):
    """Average precision@k of each group, float64 (n_groups,), binary labels: the sum of
    precision@i over the relevant documents at positions i <= k, divided by
    ``min(number of relevant documents, k)`` (XGBoost's convention)."""
    n_groups = ptr.shape[0] - 1
    order, pos, group_of = _ranked_positions(pred, ptr)
    rel = y[order]
    cumulative = np.concatenate(([0.0], np.cumsum(rel)))
    hits = cumulative[1:] - cumulative[ptr[group_of]]  # relevant documents at positions <= pos
    top = np.inf if k is None else k
    term = np.where(pos < top, hits / (pos + 1.0) * rel, 0.0)
    ap = np.bincount(group_of, weights=term, minlength=n_groups)
    n_rel = np.bincount(group_of, weights=rel, minlength=n_groups)
    denominator = np.minimum(n_rel, top)
    return np.where(n_rel > 0, ap / np.where(n_rel > 0, denominator, 1.0), 0.0 if minus else 1.0)


def precision_per_group(y, pred, ptr, k=None):
    """Precision@k of each group, float64 (n_groups,), binary labels: the relevant
    documents among the top ``min(k, group size)`` over that count (XGBoost's convention:
    a group shorter than k is not penalised for it)."""
    n_groups = ptr.shape[0] - 1
    order, pos, group_of = _ranked_positions(pred, ptr)
    top = np.inf if k is None else k
    hits = np.bincount(group_of, weights=np.where(pos < top, y[order], 0.0), minlength=n_groups)
    return hits / np.minimum(np.diff(ptr), top).clip(1)


class RankingMetric:
    """A ranking metric called as ``metric(y, pred, w, queries)``: ``queries`` is a
    ``gbm.data.queries.QueryGroups`` (or None: one query, weight 1)."""

    needs_queries = True
    maximize = True

    def __init__(self, name, exp_gain=True):
        self.name = name
        self.kind, self.k, self.minus = parse_ranking(name)
        self.exp_gain = exp_gain

    def check_labels(self, y):
        if self.kind in ("map", "pre"):
            if not np.isin(y, (0.0, 1.0)).all():
                row = int(np.flatnonzero(~np.isin(y, (0.0, 1.0)))[0])
                raise ValueError(f"y[{row}] = {y[row]}; eval_metric {self.name!r} needs binary "
                                 "relevance labels (0 or 1), as in XGBoost")
        elif self.exp_gain:
            bad = (y < 0) | (y != np.floor(y)) | (y > _MAX_EXP_LABEL)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise ValueError(f"y[{row}] = {y[row]}; eval_metric {self.name!r} needs integer "
                                 f"relevance labels in [0, {_MAX_EXP_LABEL}] with ndcg_exp_gain=True")

    def __call__(self, y, pred, w, queries=None, collective=LOCAL):
        self.check_labels(y)
        pred = np.asarray(pred, dtype=np.float64)
        if queries is None:
            ptr, weight = np.array([0, y.shape[0]], dtype=np.int64), np.ones(1)
        else:
            ptr, weight = queries.ptr, queries.weight
        if self.kind == "ndcg":
            scores = ndcg_per_group(y, pred, ptr, self.k, self.minus, self.exp_gain)
            # XGBoost 3.2 adds an empty query's score (1, or 0 for "ndcg-") unweighted
            # while its weight still counts in the denominator; followed for parity
            weighted = np.where(_has_gain(y, ptr, self.exp_gain), scores * weight, scores)
        elif self.kind == "map":
            weighted = map_per_group(y, pred, ptr, self.k, self.minus) * weight
        else:
            weighted = precision_per_group(y, pred, ptr, self.k) * weight
        total, weight_sum = exact_sums(np.stack([weighted, weight]), collective)
        return float(min(1.0, total / weight_sum))


def _has_gain(y, ptr, exp_gain):
    """bool (n_groups,): whether a group's ideal DCG is > 0 (a relevant document)."""
    gain = (np.exp2(y) - 1.0) if exp_gain else y
    return np.add.reduceat(gain, ptr[:-1]) > 0
