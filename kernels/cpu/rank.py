"""The LambdaMART gradients of ``rank:pairwise``, ``rank:ndcg`` and ``rank:map``.

Same name, signature and results as the reference twin. Each query group
writes only its own rows and every per-group sum runs in one fixed order, so the thread
count cannot change any result (no atomics, no reduction across threads).

Vocabulary (as in XGBoost's ``lambdarank_obj.h``): the *rank list* of a group is its
documents sorted by score, best first (a stable sort: ties keep their input order); a
*rank* indexes that list, a *row* indexes the data.
"""
import numpy as np
from numba import prange

from ..elementary import cpu as _elementary
from ..hashing import mix as _mix
from ..jit import helper, kernel
from ..layout import MAP, NDCG
# exp and log2: one implementation for every backend (kernels/elementary.py), so the
# lambdas are the same bits on a CPU and a GPU
_exp, _log2 = _elementary.exp, _elementary.log2
_TINY = 1e-16  # floor of sigma (1 - sigma), XGBoost's Eps64
_SCORE_GAP = 0.01  # added to |s_i - s_j| when the delta is divided by the score gap


@helper
def _gain(label, exp_gain):
    return 2.0 ** label - 1.0 if exp_gain else label


@helper
def _inv_idcg(labels, truncation, exp_gain):
    """1 / (DCG of the ideal order, truncated); 0 when the group has no gain at all."""
    ideal = np.sort(labels)[::-1]
    idcg = 0.0
    for r in range(min(ideal.shape[0], truncation)):
        idcg += _gain(ideal[r], exp_gain) / _log2(r + 2.0)
    return 1.0 / idcg if idcg != 0.0 else 0.0


@helper
def _map_stats(labels, order, n_rel, acc):
    """Along the rank list: ``n_rel[k]``, the relevant documents at ranks 0..k, and
    ``acc[k]``, the sum of label / (rank + 1) over them (XGBoost's ``MAPStat``)."""
    n_rel[0] = labels[order[0]]
    acc[0] = labels[order[0]] / 1.0
    for k in range(1, order.shape[0]):
        n_rel[k] = n_rel[k - 1] + labels[order[k]]
        acc[k] = acc[k - 1] + labels[order[k]] / (k + 1.0)


@helper
def _delta_map(label_hi, label_lo, rank_hi, rank_lo, n_rel, acc):
    """Change in average precision when the documents at ranks ``rank_hi`` and
    ``rank_lo`` swap (binary labels; XGBoost's ``DeltaMAP``, up to its sign): ``top``
    is the upper of the two places, ``bottom`` the lower; the relevant documents between
    them each move one count up or down, ``acc[bottom - 1] - acc[top]`` in all."""
    top, bottom, label_top, label_bottom = rank_hi, rank_lo, label_hi, label_lo
    if top > bottom:
        top, bottom, label_top, label_bottom = rank_lo, rank_hi, label_lo, label_hi
    r_top, r_bottom = top + 1.0, bottom + 1.0
    count_top, count_bottom = n_rel[top], n_rel[bottom]
    between = acc[bottom - 1] - acc[top]
    if label_top < label_bottom:  # the relevant document moves up
        change = (count_bottom / r_bottom - (count_top + 1.0) / r_top) - between
    else:  # it moves down
        change = (count_top / r_top - count_bottom / r_bottom) + between
    return change / n_rel[n_rel.shape[0] - 1]


@helper
def _add_pair(scores, labels, order, a, b, delta_kind, exp_gain, inv_idcg, n_rel, acc, by_gap,
              grad, hess):
    """Add the lambda of the pair at ranks ``a`` and ``b`` (local rows ``order[a]``,
    ``order[b]``) into ``grad`` / ``hess``; returns the sum-of-lambdas increment.

    Pairwise logistic loss of Burges (2010), eq. 3-4, weighted by |delta Z| (``n_rel``,
    ``acc``: ``_map_stats`` of the group, read for MAP only):
    ``lambda = (sigma(s_hi - s_lo) - 1) |dZ|``, ``h = 2 sigma (1 - sigma) |dZ|``.
    """
    hi, lo = order[a], order[b]
    if labels[hi] == labels[lo]:
        return 0.0
    rank_hi, rank_lo = a, b
    if labels[hi] < labels[lo]:
        hi, lo, rank_hi, rank_lo = lo, hi, b, a
    diff = scores[hi] - scores[lo]
    sigmoid = 1.0 / (1.0 + _exp(-diff))
    delta = 1.0
    if delta_kind == NDCG:
        # swapping the two documents' positions changes DCG by (g_hi - g_lo)(d_hi - d_lo)
        gain_gap = _gain(labels[hi], exp_gain) - _gain(labels[lo], exp_gain)
        disc_gap = 1.0 / _log2(rank_hi + 2.0) - 1.0 / _log2(rank_lo + 2.0)
        delta = abs(gain_gap * disc_gap * inv_idcg)
    elif delta_kind == MAP:
        delta = abs(_delta_map(labels[hi], labels[lo], rank_hi, rank_lo, n_rel, acc))
    if by_gap:
        delta /= abs(diff) + _SCORE_GAP
    lam = (sigmoid - 1.0) * delta
    h = max(sigmoid * (1.0 - sigmoid), _TINY) * delta * 2.0
    grad[hi] += lam
    hess[hi] += h
    grad[lo] -= lam
    hess[lo] += h
    return -2.0 * lam


@helper
def _group_gradients(scores, labels, first_row, delta_kind, exp_gain, topk, num_pair,
                     score_normalization, normalization, key, grad, hess):
    """Gradients of one query group into ``grad`` / ``hess`` (zeroed here)."""
    n = scores.shape[0]
    grad[:] = 0.0
    hess[:] = 0.0
    if n < 2:
        return
    order = np.argsort(-scores, kind="mergesort")  # rank list: stable, best first
    by_gap = score_normalization and scores[order[0]] != scores[order[n - 1]]
    inv_idcg = 0.0
    if delta_kind == NDCG:
        inv_idcg = _inv_idcg(labels, num_pair if topk else n, exp_gain)
    n_rel = np.empty(n if delta_kind == MAP else 0)
    acc = np.empty(n if delta_kind == MAP else 0)
    if delta_kind == MAP:
        _map_stats(labels, order, n_rel, acc)
    sum_lambda = 0.0
    if topk:
        # every pair with at least one document in the model's top num_pair
        for a in range(min(n, num_pair)):
            for b in range(a + 1, n):
                sum_lambda += _add_pair(scores, labels, order, a, b, delta_kind, exp_gain,
                                        inv_idcg, n_rel, acc, by_gap, grad, hess)
    else:
        # num_pair partners per document, drawn among the documents of other labels
        ranked_labels = labels[order]
        by_label = np.argsort(-ranked_labels, kind="mergesort")  # ranks, by label then rank
        i = 0
        while i < n:
            j = i + 1
            while j < n and ranked_labels[by_label[j]] == ranked_labels[by_label[i]]:
                j += 1
            others = n - (j - i)  # documents with another label: i above, n - j below
            if others > 0:
                for k in range(num_pair):
                    for p in range(i, j):
                        row = np.uint64(first_row + order[by_label[p]])
                        u = _mix(_mix(key ^ row) ^ np.uint64(k))
                        pick = min(int(np.float64(u >> np.uint64(11)) * (others / 2.0**53)),
                                   others - 1)
                        if pick >= i:
                            pick += j - i  # skip the document's own label bucket
                        sum_lambda += _add_pair(scores, labels, order, by_label[p],
                                                by_label[pick], delta_kind, exp_gain,
                                                inv_idcg, n_rel, acc, by_gap, grad, hess)
            i = j
    if normalization:
        norm = 1.0
        if not topk:
            norm = 1.0 / num_pair
        elif sum_lambda > 0.0:
            norm = _log2(1.0 + sum_lambda) / sum_lambda  # LightGBM's leaf normalisation
        grad *= norm
        hess *= norm


@kernel(parallel=True)
def lambdarank_gradients(margin, labels, group_ptr, group_first_row, group_scale, delta_kind,
                         exp_gain, topk, num_pair, score_normalization, normalization, key, grad,
                         hess, n_threads):
    """LambdaMART gradients and hessians of every row, query group by query group.

    Parameters
    ----------
    margin : float64 (n_rows,)             # IN  current scores
    labels : float64 (n_rows,)             # IN  relevance degrees
    group_ptr : int64 (n_groups + 1,)      # IN  group g owns rows [group_ptr[g], group_ptr[g+1])
    group_first_row : int64 (n_groups,)    # IN  each group's first row in the whole data set
                                           #     (over all workers): the "mean" draws' row ids
    group_scale : float64 (n_groups,)      # IN  each group's weight (already normalised)
    delta_kind : int                       # IN  PAIRWISE (weight 1), NDCG (|delta NDCG|) or
                                           #     MAP (|delta MAP|, binary labels)
    exp_gain : bool                        # IN  NDCG gain 2^label - 1 (else label)
    topk : bool                            # IN  pair method "topk" (else "mean")
    num_pair : int                         # IN  lambdarank_num_pair_per_sample
    score_normalization : bool             # IN  divide each delta by |s_i - s_j| + 0.01
    normalization : bool                   # IN  scale each group's lambdas (see docs)
    key : uint64                           # IN  hash key of (seed, round), for "mean" draws
    grad, hess : float64 (n_rows,)         # OUT overwritten
    n_threads : int                        # groups are cut into n_threads contiguous blocks
    """
    n_groups = group_ptr.shape[0] - 1
    for t in prange(n_threads):
        i = np.int64(t)  # bounds of one type in the typing pass and the loop: one compile
        for g in range(i * n_groups // n_threads, (i + 1) * n_groups // n_threads):
            lo, hi = group_ptr[g], group_ptr[g + 1]
            _group_gradients(margin[lo:hi], labels[lo:hi], group_first_row[g], delta_kind,
                             exp_gain, topk, num_pair, score_normalization, normalization, key,
                             grad[lo:hi], hess[lo:hi])
            for r in range(lo, hi):
                grad[r] *= group_scale[g]
                hess[r] *= group_scale[g]
