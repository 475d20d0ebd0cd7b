"""One Spark rank's training over the rows its barrier task read (``gbm.spark.data``):
the rows put in their global order, split into the rows trained on and the validation
set, labels encoded as the local estimator encodes them (a classifier's classes gathered
from every rank), and ``gbm.cluster.rank.train_rank``."""
import numpy as np

from ..cluster.rank import train_rank
from ..data.eval_sets import EvalSpec
from . import data as sd


def train_on_rows(collective, rows, layout, estimator, resume):
    """This rank's result: ``{"booster" (rank 0's, else None), "digest", "classes",
    "rows"}``. ``estimator``: the local gbm estimator whose parameters the fit uses."""
    n_features, sparse = sd.feature_count(collective, rows)
    ids = sd.global_ids(collective, rows, layout["n_parts"])
    parts = {}
    for name, mask in (("train", ~rows["valid"]), ("validation", rows["valid"])):
        take = np.flatnonzero(mask)
        take = take[np.argsort(ids[take], kind="stable")]
        parts[name] = _part(rows, take, ids[take], n_features, sparse)
    train, valid = parts["train"], parts["validation"]
    y, y_valid, extra, classes = _encode(collective, estimator, train["y"], valid["y"])
    ranking = type(estimator).__name__ == "GBMRanker"
    if ranking:
        estimator._check_objective()
    params = dict(estimator._train_params(), **extra)
    evals = []
    if int(collective.allreduce(np.array([len(valid["ids"])], np.int64))[0]):
        evals = [EvalSpec("validation", valid["X"], y_valid,
                          sample_weight=_weights(valid, ranking), base_margin=valid["margin"],
                          qid=valid["qid"], row_ids=valid["ids"])]
    booster, digest = train_rank(
        collective, params, train["X"], y, estimator._boost_rounds(), row_ids=train["ids"],
        evals=evals, early_stopping_rounds=estimator.early_stopping_rounds,
        callbacks=estimator.callbacks, resume=resume, sample_weight=_weights(train, ranking),
        base_margin=train["margin"], qid=train["qid"], feature_names=layout["feature_names"],
        categorical_features=estimator.categorical_features)
    return {"booster": booster if collective.rank == 0 else None, "digest": digest,
            "classes": classes, "rows": int(len(y))}


def _part(rows, take, ids, n_features, sparse):
    def pick(name):
        values = rows[name]
        return None if values is None else values[take]

    return {"X": sd.matrix(rows, take, n_features, sparse), "y": rows["y"][take], "ids": ids,
            "w": pick(sd.W), "margin": pick(sd.MARGIN), "qid": pick(sd.QID)}


def _encode(collective, estimator, y, y_valid):
    """``(encoded y, encoded validation labels, extra train parameters, classes or
    None)``: a classifier's classes are the labels seen on any rank (as gbm.dask finds
    them), the objective the local classifier's choice for them."""
    if type(estimator).__name__ != "GBMClassifier":
        return y, y_valid, estimator._encode_y(y)[1], None
    seen = np.unique(np.concatenate([np.unique(u) for u in collective.allgather(np.unique(y))]))
    _, extra = estimator._encode_y(seen)  # sets classes_, checks there are two or more
    classes = estimator.classes_
    return (_codes(y, classes, "label_col"), _codes(y_valid, classes, "validation rows'"),
            extra, classes)


def _codes(y, classes, what):
    codes = np.searchsorted(classes, y)
    bad = (codes >= len(classes)) | (classes[np.minimum(codes, len(classes) - 1)] != y)
    if bad.any():
        raise ValueError(f"{what} labels {sorted(set(y[bad].tolist()))[:5]} are not among the "
                         "classes of the rows trained on")
    return codes.astype(np.float64)


def _weights(part, ranking):
    """Row weights, or a ranker's one weight per query (the same on each of its rows)."""
    w = part["w"]
    if w is None or not ranking:
        return w
    qid = part["qid"]
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]]) if len(qid) else np.empty(0, int)
    if len(starts) and not np.array_equal(np.maximum.reduceat(w, starts),
                                          np.minimum.reduceat(w, starts)):
        raise ValueError("weight_col: a ranker's weights are one per query; rows of one qid "
                         "hold different weights")
    return w[starts]
