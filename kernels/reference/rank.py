"""Twin of ``cpu/rank.py``."""
import numpy as np

from ..layout import MAP, NDCG


def _mix(z):
    """splitmix64 on a Python int, modulo 2**64."""
    mask = (1 << 64) - 1
    z = (z + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def _rank_pairs(labels, order, first_row, topk, num_pair, key):
    """The (rank, rank) pairs one group's lambdas are summed over, in kernel order."""
    n = labels.shape[0]
    if topk:
        return [(a, b) for a in range(min(n, num_pair)) for b in range(a + 1, n)]
    ranked = labels[order]
    by_label = sorted(range(n), key=lambda r: -ranked[r])  # Python's sort is stable
    pairs, i = [], 0
    while i < n:
        j = i + 1
        while j < n and ranked[by_label[j]] == ranked[by_label[i]]:
            j += 1
        others = n - (j - i)
        for k in range(num_pair if others else 0):
            for p in range(i, j):
                u = _mix(_mix(int(key) ^ (int(first_row) + int(order[by_label[p]]))) ^ k)
                pick = min(int(float(u >> 11) * (others / 2.0**53)), others - 1)
                pairs.append((by_label[p], by_label[pick + (j - i if pick >= i else 0)]))
        i = j
    return pairs


def _delta_map(ranked, top, bottom):
    """|change in average precision| when ranks ``top`` < ``bottom`` swap, from the
    counts along the rank list (``ranked``: the labels in rank order, 0/1)."""
    n_rel = np.cumsum(ranked)
    acc = np.cumsum(ranked / np.arange(1.0, ranked.shape[0] + 1.0))
    between = acc[bottom - 1] - acc[top]
    if ranked[top] < ranked[bottom]:
        change = (n_rel[bottom] / (bottom + 1.0) - (n_rel[top] + 1.0) / (top + 1.0)) - between
    else:
        change = (n_rel[top] / (top + 1.0) - n_rel[bottom] / (bottom + 1.0)) + between
    return abs(change / n_rel[-1])


def lambdarank_gradients(margin, labels, group_ptr, group_first_row, group_scale, delta_kind,
                         exp_gain, topk, num_pair, score_normalization, normalization, key, grad,
                         hess, n_threads=1):
    gain = (lambda y: 2.0 ** y - 1.0) if exp_gain else (lambda y: y)
    for g in range(group_ptr.shape[0] - 1):
        lo, hi = group_ptr[g], group_ptr[g + 1]
        s, y = margin[lo:hi], labels[lo:hi]
        n = hi - lo
        order = np.argsort(-s, kind="stable")
        ideal = np.sort(y)[::-1][:num_pair if topk else n]
        idcg = float(np.sum(gain(ideal) / np.log2(np.arange(ideal.shape[0]) + 2.0)))
        inv_idcg = 1.0 / idcg if idcg != 0.0 else 0.0
        by_gap = score_normalization and n > 0 and s[order[0]] != s[order[-1]]
        g_grad, g_hess, total = np.zeros(n), np.zeros(n), 0.0
        pairs = _rank_pairs(y, order, group_first_row[g], topk, num_pair, key) if n > 1 else []
        for a, b in pairs:
            i, j = order[a], order[b]
            if y[i] == y[j]:
                continue
            if y[i] < y[j]:
                i, j, a, b = j, i, b, a
            delta = 1.0
            if delta_kind == NDCG:
                dcg = gain(y[i]) / np.log2(a + 2.0) + gain(y[j]) / np.log2(b + 2.0)
                swapped = gain(y[j]) / np.log2(a + 2.0) + gain(y[i]) / np.log2(b + 2.0)
                delta = abs((dcg - swapped) * inv_idcg)
            elif delta_kind == MAP:
                delta = _delta_map(y[order], min(a, b), max(a, b))
            if by_gap:
                delta /= abs(s[i] - s[j]) + 0.01
            p = 1.0 / (1.0 + np.exp(-(s[i] - s[j])))
            g_grad[i] += (p - 1.0) * delta
            g_grad[j] -= (p - 1.0) * delta
            g_hess[[i, j]] += 2.0 * max(p * (1.0 - p), 1e-16) * delta
            total -= 2.0 * (p - 1.0) * delta
        norm = 1.0
        if normalization:
            norm = 1.0 / num_pair if not topk else (np.log2(1.0 + total) / total if total > 0 else 1.0)
        grad[lo:hi] = g_grad * norm * group_scale[g]
        hess[lo:hi] = g_hess * norm * group_scale[g]
