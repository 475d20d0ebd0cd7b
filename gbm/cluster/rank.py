"""One rank's training, for the engines whose ranks hold their rows as arrays
(``gbm.spark``, ``gbm.ray``): the same ``gbm.train`` as local training, with the rank's
collective and its rows' global ids, going on from a ``Resume`` when a previous attempt
lost ranks."""
import hashlib

from ..collective import CollectiveError
from ..training.loop import train
from .errors import RankStopped
from .progress import Progress, resumed


def train_rank(collective, params, X, y, num_boost_round, *, row_ids, evals=(),
               early_stopping_rounds=None, callbacks=(), resume=None, progress=None,
               after=(), **kwargs):
    """``(booster, digest of its model file)`` of this rank's part of a training.

    ``resume``: a ``gbm.cluster.progress.Resume`` to go on from (its model continued as
    ``init_model``, its eval scores and early stopping's state put back), or None. A
    collective that loses a peer stops the rank with ``RankStopped``, carrying the state
    of its last completed round (``Progress``: ``progress``, or a new one). ``after``:
    callbacks run after it (which may read its ``state()``, e.g. to checkpoint it).
    ``kwargs`` go to ``gbm.train``.
    """
    progress = Progress(early_stopping_rounds) if progress is None else progress
    first = []
    if resume is not None:
        kwargs.pop("xgb_model", None)  # the state holds the model continued from
        kwargs["init_model"] = resume.booster
        num_boost_round = resume.rounds_left()
        first = [resumed(resume)]
    try:
        booster = train(params, X, y, num_boost_round=num_boost_round, evals=evals,
                        early_stopping_rounds=early_stopping_rounds,
                        callbacks=first + list(callbacks or ()) + [progress] + list(after),
                        collective=collective, row_ids=row_ids, **kwargs)
    except CollectiveError as err:
        raise RankStopped.of(err, progress.state(), progress.times()) from None
    return booster, hashlib.sha256(booster.to_json().encode()).hexdigest()
