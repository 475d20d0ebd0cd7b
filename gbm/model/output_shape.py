"""Which kind of prediction ``Booster.predict`` was asked for, and the shape of its
result: XGBoost's, with and without ``strict_shape`` (its ``CalcPredictShape``)."""
import numpy as np


def _check_flag(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def prediction_kind(pred_leaf, pred_contribs, pred_interactions, approx_contribs,
                    strict_shape, output_margin):
    """The one kind of output asked for: "leaf", "contribs", "interactions", "margin" or
    "value". Each flag must be a bool; at most one of ``pred_contribs``,
    ``pred_interactions`` and ``pred_leaf`` may be set (as XGBoost: "one kind of
    prediction at a time"), and ``approx_contribs`` needs one of the first two (XGBoost
    ignores it alone; here that is an error, not a silent plain prediction)."""
    flags = {"pred_contribs": pred_contribs, "pred_interactions": pred_interactions,
             "pred_leaf": pred_leaf, "approx_contribs": approx_contribs,
             "strict_shape": strict_shape}
    flags = {name: _check_flag(name, value) for name, value in flags.items()}
    chosen = [name for name in ("pred_contribs", "pred_interactions", "pred_leaf")
              if flags[name]]
    if len(chosen) > 1:
        raise ValueError(f"{chosen[0]}=True and {chosen[1]}=True cannot be combined; ask for "
                         "one kind of prediction at a time")
    if flags["approx_contribs"] and not (flags["pred_contribs"] or flags["pred_interactions"]):
        raise ValueError("approx_contribs=True selects Saabas's approximation of "
                         "pred_contribs or pred_interactions; set one of them too")
    if chosen:
        return chosen[0][len("pred_"):]
    return "margin" if output_margin else "value"


def shape_output(result, kind, n_groups, strict_shape, rounds=1):
    """``result`` in XGBoost's shape for ``kind``.

    Parameters
    ----------
    result : array (NumPy or CuPy) as computed: "value" (n_rows,) or (n_rows, k) from the
        objective's transform; "margin" (n_rows, n_groups); "leaf" (n_rows, n_trees);
        "contribs" (n_rows, n_groups, n_features + 1); "interactions" (n_rows, n_groups,
        n_features + 1, n_features + 1)
    kind : str, from ``prediction_kind``
    n_groups : int, the model's output groups
    strict_shape : bool
        True: always the full shape, "value" (n_rows, k), "margin" (n_rows, n_groups),
        "leaf" (n_rows, rounds, n_groups, trees per group and round), "contribs" and
        "interactions" with their group axis. False: one output group drops its axis
        ("value" and "margin" become (n_rows,)); "leaf" stays (n_rows, n_trees).
    rounds : int, the rounds predicted with (for "leaf")
    """
    n_rows = result.shape[0]
    if kind == "leaf":
        if not strict_shape:
            return result
        per_round = max(1, result.shape[1] // max(1, rounds * n_groups))
        if rounds * n_groups * per_round != result.shape[1]:
            raise ValueError(f"strict_shape=True: {result.shape[1]} trees do not divide into "
                             f"{rounds} rounds of {n_groups} output groups")
        return result.reshape(n_rows, rounds, n_groups, per_round)
    if kind == "value":
        if not strict_shape:
            return result
        # a value per output, or one (a class label): the columns told without -1, which
        # no reshape of 0 rows can infer
        return result.reshape(n_rows, result.shape[1] if result.ndim == 2 else 1)
    if strict_shape or n_groups > 1:
        return result
    return result[:, 0].copy()  # contiguous, as the arrays of several groups are
