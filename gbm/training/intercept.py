"""The starting margins of a user's ``base_score``: one number for every output, or
XGBoost 3.2's vector of one per output."""
import numpy as np


def base_score_margins(objective, base_score):
    """float64 (n_groups,): the margins ``objective`` starts from for ``base_score`` (a
    number, or a list of one per output group, each through the objective's link)."""
    if not isinstance(base_score, list):
        return objective.base_score_to_margin(base_score)
    n = objective.n_groups
    if len(base_score) != n:
        raise ValueError(f"base_score has {len(base_score)} values but the model has {n} "
                         f"output(s) (targets, classes or quantile levels); give one value "
                         "or one per output")
    return np.array([objective.base_score_to_margin(score)[j]
                     for j, score in enumerate(base_score)], dtype=np.float64)
