"""The unweighted binary AUC's loops (gbm.metrics.pointwise): the two classes' scores
apart, then the Mann-Whitney count of their sorted scores in one merge. Host kernels: the
metrics are computed on the host on every backend (no CUDA twin, by design)."""
import numpy as np

from ..jit import kernel


@kernel
def split_by_label(y, score, pos, neg):
    """The scores of 0/1-labelled rows into ``pos`` (label 1) and ``neg`` (label 0), in
    row order, in one pass without a branch on the label.

    y : float64 (n,)      # IN  labels
    score : float64 (n,)  # IN
    pos, neg : float64 (n,)  # OUT ``pos[:count]``, ``neg[:n - count]``; the slots after
                             #     them (all of them on -1) hold no result

    Returns the count of label-1 rows, or -1 when a label is not 0 or 1 or a score is not
    finite.
    """
    n_pos = n_neg = 0
    for i in range(y.shape[0]):
        s, label = score[i], y[i]
        if not (label == 0.0 or label == 1.0) or not np.isfinite(s):
            return -1
        one = np.int64(label == 1.0)
        pos[n_pos] = s  # both written, one kept: the counts move on instead of a branch
        neg[n_neg] = s
        n_pos += one
        n_neg += 1 - one
    return n_pos


@kernel
def twice_mann_whitney(pos, neg):
    """2U, U the Mann-Whitney count: for every positive, the negatives below it plus half
    of those tied with it. One merge pass.

    pos, neg : float64 (n_pos,), (n_neg,)  # IN  sorted ascending, finite

    Returns 2U, an integer (exact: halves are counted twice).
    """
    total = 0
    below = upto = 0  # negatives < and <= the current positive
    for i in range(pos.shape[0]):
        s = pos[i]
        while below < neg.shape[0] and neg[below] < s:
            below += 1
        upto = max(upto, below)
        while upto < neg.shape[0] and neg[upto] <= s:
            upto += 1
        total += below + upto
    return total
