"""The training data in one form, whichever way ``gbm.train`` was given it: arrays
(``X, y, sample_weight, ...``) or XGBoost's ``DMatrix`` (``train(params, dtrain, 100)``)."""
import dataclasses

import numpy as np

from .dmatrix import DMatrix


@dataclasses.dataclass
class TrainingData:
    """What a fit trains on, unchecked (``gbm.data.inputs`` checks it where it is used).

    ``row_ids``: int64 (n_rows,), each row's index in the whole data set when these rows
    are one part of it (a rank of a distributed fit); None: its position. ``dmatrix``: the
    DMatrix it came from (what a user's ``obj(predt, dtrain)`` reads), or None.
    ``label_lower_bound`` / ``label_upper_bound``: a DMatrix's interval labels
    (``survival:aft``), or None.
    """

    X: object
    y: object
    sample_weight: object = None
    group: object = None
    qid: object = None
    base_margin: object = None
    feature_names: object = None
    categorical_features: object = None
    row_ids: object = None
    dmatrix: object = None
    label_lower_bound: object = None
    label_upper_bound: object = None


def training_data(X, y, num_boost_round, dtrain, sample_weight=None, group=None, qid=None,
                  base_margin=None, feature_names=None, categorical_features=None,
                  row_ids=None):
    """``(TrainingData, num_boost_round)`` from ``train``'s arguments, a ``DMatrix``
    unpacked.

    ``train(params, dtrain, 100)`` (XGBoost's positional form) puts the round count where
    gbm's ``y`` is: an integer there, with a DMatrix, is the round count.
    """
    if dtrain is not None:
        if X is not None:
            raise TypeError("pass the training data once: as X (and y) or as dtrain")
        X = dtrain
    if isinstance(X, tuple):
        raise TypeError("X is a tuple; gbm.train takes the features and labels as separate "
                        "arguments, gbm.train(params, X, y), or a gbm.DMatrix(X, label=y)")
    data = TrainingData(X, y, sample_weight, group, qid, base_margin, feature_names,
                        categorical_features, row_ids)
    if not isinstance(X, DMatrix):
        if X is None:
            raise TypeError("train() needs the training data: train(params, X, y) or "
                            "train(params, gbm.DMatrix(X, label=y))")
        if y is None:
            raise TypeError("y is None; pass the labels: train(params, X, y), or a "
                            "gbm.DMatrix(X, label=y) as X")
        return data, num_boost_round
    if isinstance(y, (int, np.integer)) and not isinstance(y, bool):
        if num_boost_round != 10:
            raise TypeError("the round count is given twice: after the DMatrix and as "
                            "num_boost_round")
        num_boost_round, y = int(y), None
    if y is not None:
        raise TypeError("y is given but X is a DMatrix: its labels are its label field")
    bounds = (X.label_lower_bound, X.label_upper_bound)
    if X.label is None and bounds[0] is None and bounds[1] is None:
        raise ValueError("the DMatrix has no labels: gbm.DMatrix(X, label=y) (or, for "
                         "survival:aft, label_lower_bound= and label_upper_bound=)")
    data.X, data.y, data.dmatrix = X.data, X.label, X
    data.label_lower_bound, data.label_upper_bound = bounds
    for name, value in (("sample_weight", X.weight), ("group", X.group), ("qid", X.qid),
                        ("base_margin", X.base_margin), ("feature_names", X.feature_names),
                        ("categorical_features", X.categorical_features())):
        if value is None:
            continue
        if getattr(data, name) is not None:
            raise TypeError(f"{name} is given both as an argument and in the DMatrix; pass "
                            "it once")
        setattr(data, name, value)
    return data, num_boost_round
