"""LambdaMART gradients of ``rank:pairwise``, ``rank:ndcg`` and ``rank:map``: one thread per query
group (twin of ``cpu/rank.py``: the same rank lists, pairs, draws and arithmetic, in
the same order, with the shared ``exp``/``log2`` and unfused products).

A group's rank list (its documents by score, best first, ties in input order) and its
labels' orders come from a stable merge sort in per-row scratch arrays, so the lists
are exactly NumPy's stable ``argsort``; each thread writes only its group's rows.
"""
import math

import numpy as np
from numba import cuda, float64, int64, uint64

from ..layout import MAP, NDCG
from ._device import (THREADS, array_module, blocks_for, device_output, elementary, mul,
                      to_device)

_exp, _log2 = elementary.exp, elementary.log2
_TINY = 1e-16
_SCORE_GAP = 0.01


@cuda.jit(device=True)
def _mix(z):
    z = z + uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> uint64(27))) * uint64(0x94D049BB133111EB)
    return z ^ (z >> uint64(31))


@cuda.jit(device=True)
def _gain(label, exp_gain):
    """2**label - 1 (or the label): with ``exp_gain`` labels are integers in [0, 31]
    (``rank:ndcg`` checks them), where ``ldexp`` is exact, as the CPU's ``2.0 ** label``;
    libdevice's ``pow`` would bring its own roundings (and FMAs)."""
    if not exp_gain:
        return label
    return math.ldexp(1.0, int(label)) - 1.0


@cuda.jit(device=True)
def _sort_descending(keys, lo, n, by, use_by, idx, tmp):
    """``idx[lo:lo+n]`` = the local indices 0..n-1 ordered by decreasing key, ties in
    index order (a stable bottom-up merge sort). The key of ``i`` is
    ``keys[lo + by[lo + i]]`` when ``use_by``, else ``keys[lo + i]``."""
    for i in range(n):
        idx[lo + i] = i
    width = 1
    while width < n:
        for start in range(0, n, 2 * width):
            mid = min(start + width, n)
            end = min(start + 2 * width, n)
            i, j, at = start, mid, start
            while i < mid and j < end:
                a, b = idx[lo + i], idx[lo + j]
                key_a = keys[lo + by[lo + a]] if use_by else keys[lo + a]
                key_b = keys[lo + by[lo + b]] if use_by else keys[lo + b]
                if key_b > key_a:
                    tmp[lo + at] = b
                    j += 1
                else:
                    tmp[lo + at] = a
                    i += 1
                at += 1
            while i < mid:
                tmp[lo + at] = idx[lo + i]
                i += 1
                at += 1
            while j < end:
                tmp[lo + at] = idx[lo + j]
                j += 1
                at += 1
        for i in range(n):
            idx[lo + i] = tmp[lo + i]
        width *= 2


@cuda.jit(device=True)
def _map_stats(labels, lo, n, order, n_rel, acc):
    """``n_rel`` / ``acc`` at ``lo .. lo + n - 1`` along the group's rank list (as the
    CPU's ``_map_stats``)."""
    first = labels[lo + order[lo]]
    n_rel[lo] = first
    acc[lo] = first / 1.0
    for k in range(1, n):
        label = labels[lo + order[lo + k]]
        n_rel[lo + k] = n_rel[lo + k - 1] + label
        acc[lo + k] = acc[lo + k - 1] + label / (k + 1.0)


@cuda.jit(device=True)
def _delta_map(label_hi, label_lo, rank_hi, rank_lo, lo, n, n_rel, acc):
    """The CPU's ``_delta_map`` on the group's stretch ``lo .. lo + n - 1``."""
    top, bottom, label_top, label_bottom = rank_hi, rank_lo, label_hi, label_lo
    if top > bottom:
        top, bottom, label_top, label_bottom = rank_lo, rank_hi, label_lo, label_hi
    r_top, r_bottom = top + 1.0, bottom + 1.0
    count_top, count_bottom = n_rel[lo + top], n_rel[lo + bottom]
    between = acc[lo + bottom - 1] - acc[lo + top]
    if label_top < label_bottom:
        change = (count_bottom / r_bottom - (count_top + 1.0) / r_top) - between
    else:
        change = (count_top / r_top - count_bottom / r_bottom) + between
    return change / n_rel[lo + n - 1]


@cuda.jit(device=True)
def _add_pair(margin, labels, lo, n, order, a, b, delta_kind, exp_gain, inv_idcg, n_rel, acc,
              by_gap, grad, hess):
    hi_row, lo_row = lo + order[lo + a], lo + order[lo + b]
    if labels[hi_row] == labels[lo_row]:
        return 0.0
    rank_hi, rank_lo = a, b
    if labels[hi_row] < labels[lo_row]:
        hi_row, lo_row, rank_hi, rank_lo = lo_row, hi_row, b, a
    diff = margin[hi_row] - margin[lo_row]
    sigmoid = 1.0 / (1.0 + _exp(-diff))
    delta = 1.0
    if delta_kind == NDCG:
        gain_gap = _gain(labels[hi_row], exp_gain) - _gain(labels[lo_row], exp_gain)
        disc_gap = 1.0 / _log2(rank_hi + 2.0) - 1.0 / _log2(rank_lo + 2.0)
        delta = abs(mul(mul(gain_gap, disc_gap), inv_idcg))
    elif delta_kind == MAP:
        delta = abs(_delta_map(labels[hi_row], labels[lo_row], rank_hi, rank_lo, lo, n, n_rel,
                               acc))
    if by_gap:
        delta /= abs(diff) + _SCORE_GAP
    lam = mul(sigmoid - 1.0, delta)
    h = mul(mul(max(mul(sigmoid, 1.0 - sigmoid), _TINY), delta), 2.0)
    grad[hi_row] += lam
    hess[hi_row] += h
    grad[lo_row] -= lam
    hess[lo_row] += h
    return mul(-2.0, lam)


@cuda.jit
def _rank_kernel(margin, labels, group_ptr, group_first_row, group_scale, delta_kind, exp_gain,
                 topk, num_pair, score_normalization, normalization, key, grad, hess, order,
                 by_label, tmp, n_rel, acc):
    for g in range(cuda.grid(1), group_ptr.shape[0] - 1, cuda.gridsize(1)):
        lo, hi = group_ptr[g], group_ptr[g + 1]
        n = hi - lo
        for r in range(lo, hi):
            grad[r] = 0.0
            hess[r] = 0.0
        if n >= 2:
            _sort_descending(margin, lo, n, order, False, order, tmp)
            by_gap = score_normalization and \
                margin[lo + order[lo]] != margin[lo + order[lo + n - 1]]
            inv_idcg = 0.0
            if delta_kind == NDCG:
                _sort_descending(labels, lo, n, order, False, by_label, tmp)  # the ideal order
                idcg = 0.0
                for r in range(min(n, num_pair if topk else n)):
                    idcg += _gain(labels[lo + by_label[lo + r]], exp_gain) / _log2(r + 2.0)
                inv_idcg = 1.0 / idcg if idcg != 0.0 else 0.0
            if delta_kind == MAP:
                _map_stats(labels, lo, n, order, n_rel, acc)
            sum_lambda = 0.0
            if topk:
                for a in range(min(n, num_pair)):
                    for b in range(a + 1, n):
                        sum_lambda += _add_pair(margin, labels, lo, n, order, a, b, delta_kind,
                                                exp_gain, inv_idcg, n_rel, acc, by_gap, grad,
                                                hess)
            else:
                # ranks by label (then rank): the labels of the rank list, sorted stably
                _sort_descending(labels, lo, n, order, True, by_label, tmp)
                i = 0
                while i < n:
                    label_i = labels[lo + order[lo + by_label[lo + i]]]
                    j = i + 1
                    while j < n and labels[lo + order[lo + by_label[lo + j]]] == label_i:
                        j += 1
                    others = n - (j - i)
                    if others > 0:
                        for k in range(num_pair):
                            for p in range(i, j):
                                row = uint64(group_first_row[g] + order[lo + by_label[lo + p]])
                                u = _mix(_mix(key ^ row) ^ uint64(k))
                                pick = min(int64(mul(float64(u >> uint64(11)),
                                                     others / 2.0 ** 53)), others - 1)
                                if pick >= i:
                                    pick += j - i
                                sum_lambda += _add_pair(margin, labels, lo, n, order,
                                                        by_label[lo + p], by_label[lo + pick],
                                                        delta_kind, exp_gain, inv_idcg, n_rel,
                                                        acc, by_gap, grad, hess)
                    i = j
            if normalization:
                norm = 1.0
                if not topk:
                    norm = 1.0 / num_pair
                elif sum_lambda > 0.0:
                    norm = _log2(1.0 + sum_lambda) / sum_lambda
                for r in range(lo, hi):
                    grad[r] = mul(grad[r], norm)
                    hess[r] = mul(hess[r], norm)
        for r in range(lo, hi):
            grad[r] = mul(grad[r], group_scale[g])
            hess[r] = mul(hess[r], group_scale[g])


def lambdarank_gradients(margin, labels, group_ptr, group_first_row, group_scale, delta_kind,
                         exp_gain, topk, num_pair, score_normalization, normalization, key, grad,
                         hess, n_threads=1):
    """LambdaMART gradients and hessians of every row, one thread per query group.

    Arguments as in ``cpu.lambdarank_gradients`` (``n_threads`` is ignored).
    """
    xp = array_module()
    n_rows = margin.shape[0]
    n_groups = group_ptr.shape[0] - 1
    d_grad, finish_grad = device_output(grad)
    d_hess, finish_hess = device_output(hess)
    if n_groups > 0:
        scratch = [xp.empty(max(1, n_rows), dtype=np.int64) for _ in range(3)]
        # rank:map's counts along each group's rank list (unused by the other kinds)
        n_map = max(1, n_rows) if delta_kind == MAP else 1
        scratch += [xp.empty(n_map, dtype=np.float64) for _ in range(2)]
        _rank_kernel[blocks_for(n_groups), THREADS](
            to_device(margin), to_device(labels), to_device(group_ptr),
            to_device(group_first_row), to_device(group_scale), int(delta_kind), bool(exp_gain),
            bool(topk), int(num_pair), bool(score_normalization), bool(normalization),
            np.uint64(key), d_grad, d_hess, *scratch)
    finish_grad()
    finish_hess()
