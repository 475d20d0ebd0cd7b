"""Twin of ``cpu/auc.py``: boolean masks and binary searches."""
import numpy as np


def split_by_label(y, score, pos, neg):
    if not (np.all((y == 0.0) | (y == 1.0)) and np.all(np.isfinite(score))):
        return -1
    one = y == 1.0
    n_pos = int(np.count_nonzero(one))
    pos[:n_pos] = score[one]
    neg[:y.shape[0] - n_pos] = score[~one]
    return n_pos


def twice_mann_whitney(pos, neg):
    # per positive: the negatives below it, plus those at or below it (ties count once)
    below = np.searchsorted(neg, pos, side="left")
    upto = np.searchsorted(neg, pos, side="right")
    return int(below.sum() + upto.sum())
