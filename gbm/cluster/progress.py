"""What a training rank keeps of its work, so that a fit that lost a worker goes on from
the last completed round (``gbm.dask.recovery``).

Every rank of a Dask training grows the same trees: after each round, each one holds the
model that rank 0 holds. ``Progress`` (a callback, run after every other) marks the end
of each completed round: the rounds, how long each eval score list is, early stopping's
best round and score and whether its patience ran out, and a DART model's tree weights
(a round rescales earlier trees' weights, so a later partial round changes them). The
mark is cheap (lengths and scalars; DART: one float per tree), and nothing is copied
until a rank is stopped: then ``state()`` cuts the booster back to the mark, so a round
under way when the loss came (trees added, scores half made) is dropped, never kept.

The client sends that ``Resume`` to the ranks of the next attempt, which continue it as
``init_model`` (10 rounds continued by 5 are 15 at once, bit for bit: row sampling and
DART's drops are keyed by the global round and row ids, the bin edges by global row ids),
with the eval scores and early stopping's state put back before the first new round
(``gbm.dask.checkpoint``'s ``_Resumed``): the model file, ``best_iteration`` and
``evals_result`` an uninterrupted fit ends with.
"""
import copy
import time

import numpy as np

from ..callback import TrainingCallback

DEFAULT_MAX_RECOVERIES = 3


def check_max_recoveries(value):
    """``value`` as an int, or ValueError (an integer >= 0: 0 fails fast at a loss)."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"max_recoveries must be an integer >= 0 (0: fail at the first lost "
                         f"worker), got {value!r}")
    return int(value)


class Resume:
    """A training's state at the end of a round, held in memory.

    booster : Booster, the model of the completed rounds, with its ``evals_result``,
        ``best_iteration`` and ``best_score`` as they were then
    stopped : bool, whether early stopping had run out of patience at that round
    end : int, the round (counted from the model's first) where the fit ends
    """

    def __init__(self, booster, stopped, end):
        self.booster, self.stopped, self.end = booster, bool(stopped), int(end)

    @property
    def rounds(self):
        return int(self.booster.num_boosted_rounds)

    def rounds_left(self):
        return 0 if self.stopped else max(0, self.end - self.rounds)


def newer(a, b):
    """The one of two ``Resume`` (either may be None) with more completed rounds."""
    if a is None or (b is not None and b.rounds > a.rounds):
        return b
    return a


class Progress(TrainingCallback):
    """Marks the end of every completed round (see the module's docstring); last in the
    callbacks. ``patience``: ``early_stopping_rounds`` (None without)."""

    never_stops = True  # it never asks to stop: the ranks need not agree on it

    def __init__(self, patience):
        self.patience = patience
        self.booster, self.mark, self.end = None, None, None
        self.first_round_at = None  # time.time(): compared with the client's clock
        self.marked_at = time.monotonic()

    def plan_rounds(self, begin, end):
        self.end = end

    def before_training(self, booster):
        self.first_round_at = time.time()
        self.marked_at = time.monotonic()
        return booster

    def after_iteration(self, booster, epoch, evals_log):
        self.booster = booster
        lengths = {name: {m: len(v) for m, v in scores.items()}
                   for name, scores in evals_log.items()}
        weights = None if booster.weight_drop is None else list(booster.weight_drop)
        best = (booster.best_iteration, booster.best_score)
        stopped = (self.patience is not None and best[0] is not None
                   and epoch - best[0] >= self.patience)
        self.mark = (int(booster.num_boosted_rounds), lengths, weights, best, stopped)
        self.marked_at = time.monotonic()
        return False

    def times(self):
        """``partial_s`` (seconds since the last mark: work a stop throws away) and
        ``first_round_at``."""
        return {"partial_s": time.monotonic() - self.marked_at,
                "first_round_at": self.first_round_at}

    def state(self):
        """The ``Resume`` of the model cut back to the last completed round (None before
        the first)."""
        if self.mark is None:
            return None
        rounds, lengths, weights, best, stopped = self.mark
        source = self.booster
        booster = source[:rounds]  # the completed rounds' trees, without a partial round's
        if weights is not None:
            booster.set_tree_weights(weights)
        booster.evals_result = {name: {m: list(source.evals_result[name][m][:n])
                                       for m, n in scores.items()}
                                for name, scores in lengths.items()}
        booster.best_iteration, booster.best_score = best
        return Resume(booster, stopped, self.end)


class Checkpoint:
    """A checkpoint file's content: ``booster``, ``fingerprint`` and early stopping's
    ``best_iteration``, ``best_score``, ``stopped``, ``evals_result``."""

    def __init__(self, booster, fingerprint, best_iteration, best_score, stopped, evals_result):
        self.booster, self.fingerprint = booster, fingerprint
        self.best_iteration, self.best_score = best_iteration, best_score
        self.stopped, self.evals_result = stopped, evals_result


def _refuse(path, what):
    return ValueError(f"checkpoint_dir holds {path}, a checkpoint of another training ("
                      f"{'; '.join(what)}); delete it to start afresh, or give another "
                      "checkpoint_dir")


def resumed(resume):
    """The callback that puts a recovery's state (a ``gbm.dask.progress.Resume``) back
    before the first new round, as a resumed checkpoint's (its bin edges checked)."""
    b = resume.booster
    ck = Checkpoint(b, None, b.best_iteration, b.best_score, resume.stopped, b.evals_result)
    return _Resumed(ck, None)


class _Resumed(TrainingCallback):
    """On every rank of a resumed fit: the data's bin edges must be the checkpoint's, and
    the booster goes on with the checkpoint's eval scores and early stopping's best round
    (``EarlyStopping`` counts from the booster's ``best_iteration``). ``path`` None: a
    recovery's state held in memory (``resumed``)."""

    def __init__(self, ck, path):
        self.ck, self.path = ck, path

    def before_training(self, booster):
        saved = self.ck.booster.cuts
        if len(saved) != len(booster.cuts) or not all(
                np.array_equal(a, b) for a, b in zip(saved, booster.cuts)):
            if self.path is None:  # a recovery's state: the same data, in another plan
                raise RuntimeError("the bin edges after a recovery differ from the lost "
                                   "ranks'; the data changed between attempts (a "
                                   "non-deterministic graph?), or this is a bug: please "
                                   "report it")
            raise _refuse(self.path, ["the bin edges: X differs"])
        booster.evals_result = copy.deepcopy(self.ck.evals_result)
        booster.best_iteration, booster.best_score = self.ck.best_iteration, self.ck.best_score
        return booster
