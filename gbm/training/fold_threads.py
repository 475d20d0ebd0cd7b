"""The folds of ``gbm.cv`` trained side by side, round by round.

Each fold is one ``gbm.train`` call in a thread of its own, so a fold's model is the one
``gbm.train`` gives on the fold's rows: nothing else touches it. A hook of the fold's
(``FoldHook``, its last training callback) holds the fold after each round until the
caller's thread has every fold's scores of the round and has decided whether to go on
(and before each round, whether to start it): the folds move in lockstep, round by
round, as ``xgboost.cv``'s loop over its folds does, and the caller runs cv's callbacks
(printing, early stopping on the mean test score, the user's) between rounds.

At most ``slots`` folds compute at once: a fold holds a slot while it computes and lets
go of it while it waits for the caller. One slot runs the folds one at a time (round
robin: each fold's round in turn), each on all of the threads; more slots run that many
folds at once, on a share of the threads each (``fold_slots`` chooses). Which fold
computes when changes no model and no score: each fold's sums are integer sums, the same
on any thread count, and the caller reads the scores in fold order.

The kernels release the GIL, so the folds' threads run at the same time; a user's
objective or metric is Python and is called under one lock (``one_at_a_time``): by one
fold at a time, as xgboost.cv calls it, though not in fold order.
"""
import functools
import threading

import numba

from ..callback import TrainingCallback
from ..runtime.threads import resolve_n_threads

_THREADSAFE_LAYERS = ("tbb", "omp")


# Training cells (rows x features) that keep one more thread busy in a fold's kernels:
# below it, a tree level's histograms and partitions are too little work to share (gbm
# runs kernels under PARALLEL_MIN_WORK = 65,536 cells on one thread), so the threads go
# to other folds instead. An estimate, not a measurement on many cores (see fold_slots).
CELLS_PER_THREAD = 1 << 18


def fold_slots(device, n_jobs, n_folds, fold_cells):
    """``(slots, threads)``: how many folds compute at once, and each fold's thread count
    (a list, one per fold; None: the fold keeps the caller's ``n_jobs``).

    The folds move round by round in step, so a round takes as long as its slowest wave:
    with ``s`` slots, ``ceil(n_folds / s)`` waves of folds that each have ``T // s`` of
    the ``T`` threads. A fold of ``fold_cells`` training cells uses at most ``u =
    fold_cells / CELLS_PER_THREAD`` threads well (at least 1), so a wave takes about
    ``1 / min(T // s, u)``; the slot count with the least ``ceil(n_folds / s) /
    min(T // s, u)`` is taken (the most slots among equals). Small folds thus run side by
    side on a thread each; large ones one after the other on all the threads when the
    folds do not share the threads out evenly (3 folds on 2 threads: 2 waves side by side
    cost more than 3 folds at twice the speed). On a GPU, one fold at a time (they share
    the device). The thread counts change no model.
    """
    if device != "cpu":
        return 1, [None] * n_folds
    total = resolve_n_threads(n_jobs)
    if total < 2 or not _threadsafe_layer():
        return 1, [total] * n_folds
    useful = max(1, fold_cells // CELLS_PER_THREAD)
    costs = {s: -(-n_folds // s) / min(total // s, useful)
             for s in range(1, min(total, n_folds) + 1)}
    slots = min(costs, key=lambda s: (costs[s], -s))
    share, extra = divmod(total, slots)
    if slots < n_folds:  # any folds may share a wave: no more than T threads in all
        return slots, [share] * n_folds
    return slots, [share + (k < extra) for k in range(n_folds)]


def _threadsafe_layer():
    """Whether Numba's threading layer takes kernels launched from several threads at
    once (``gbm.runtime.threading_layer`` picks TBB, which does)."""
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet: the layer gbm chose will load
        layer = numba.config.THREADING_LAYER
    return layer in _THREADSAFE_LAYERS


def one_at_a_time(function, lock):
    """``function`` called under ``lock``, with its own signature (``gbm.data.compat``
    tells XGBoost's ``f(predt, dmatrix)`` from gbm's form by it)."""
    if function is None:
        return None

    @functools.wraps(function)
    def locked(*args, **kwargs):
        with lock:
            return function(*args, **kwargs)

    return locked


class _Aborted(Exception):
    """The cv ended early (a fold or the caller failed): a fold's thread stops."""


class FoldHook(TrainingCallback):
    """Fold ``k``'s link to the caller: posts its booster before training and its scores
    after each round, and waits for the caller's decisions."""

    def __init__(self, rounds, k):
        self.rounds, self.k = rounds, k

    def before_training(self, booster):
        self.rounds.post(self.k, "ready", booster)
        return booster

    def before_iteration(self, booster, epoch, evals_log):
        return self.rounds.wait(("start", epoch))

    def after_iteration(self, booster, epoch, evals_log):
        scores = [(name, metric, values[-1]) for name, metrics in evals_log.items()
                  for metric, values in metrics.items()]
        self.rounds.post(self.k, ("scores", epoch), scores)
        return self.rounds.wait(("end", epoch))


class FoldRounds:
    """Runs ``train_fold(k, hook)`` for every fold in a thread of its own, at most
    ``slots`` computing at once, and lets the caller step them round by round:
    ``ready()``, then per round ``start(epoch, stop)``, ``scores(epoch)``,
    ``end(epoch, stop)``. Use as a context manager: on leaving, the threads are stopped
    (when the caller stopped early or failed) and joined, and a fold's error is raised.
    """

    def __init__(self, n_folds, slots, train_fold):
        self.n_folds = n_folds
        self._train_fold = train_fold
        self._cond = threading.Condition()
        self._slots = threading.Semaphore(slots)
        self._posted, self._decided = {}, {}
        self._errors = {}  # fold -> the exception it raised
        self._finished = 0
        self._aborted = False
        self.results = [None] * n_folds  # each fold's ``train_fold`` result
        self._threads = [threading.Thread(target=self._run, args=(k,), daemon=True,
                                          name=f"gbm-cv-fold-{k}") for k in range(n_folds)]

    def __enter__(self):
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        with self._cond:
            self._aborted = True  # a fold still waiting stops there
            self._cond.notify_all()
        for thread in self._threads:
            thread.join()
        if self._errors:  # a fold's own error first: it is the cause of the caller's
            k = min(self._errors)
            err = self._errors[k]
            if hasattr(err, "add_note"):  # Python 3.11
                err.add_note(f"(raised by gbm.cv's fold {k}; row numbers are the fold's)")
            raise err from err.__cause__
        return False

    # --- the folds' side -------------------------------------------------------------

    def _run(self, k):
        self._slots.acquire()
        try:
            self.results[k] = self._train_fold(k, FoldHook(self, k))
        except _Aborted:
            pass
        except BaseException as err:  # noqa: BLE001 - handed to the caller's thread
            with self._cond:
                self._errors[k] = err
        finally:
            self._slots.release()
            with self._cond:
                self._finished += 1
                self._cond.notify_all()

    def post(self, k, key, payload):
        with self._cond:
            self._posted.setdefault(key, {})[k] = payload
            self._cond.notify_all()

    def wait(self, key):
        """The caller's decision on ``key`` (True: stop); the slot is free meanwhile."""
        self._slots.release()
        try:
            with self._cond:
                while key not in self._decided and not self._aborted:
                    self._cond.wait()
                if key not in self._decided:
                    raise _Aborted
                return self._decided[key]
        finally:
            self._slots.acquire()

    # --- the caller's side -----------------------------------------------------------

    def _gather(self, key):
        with self._cond:
            while True:
                posted = self._posted.get(key, {})
                if self._errors:
                    raise _FoldFailed
                if len(posted) == self.n_folds:
                    return [posted[k] for k in range(self.n_folds)]
                if self._finished == self.n_folds:
                    raise RuntimeError(f"gbm.cv: the folds ended before {key!r}")
                self._cond.wait()

    def _decide(self, key, stop):
        with self._cond:
            self._decided[key] = bool(stop)
            self._cond.notify_all()

    def ready(self):
        """Every fold's booster, once each fold is set up, in fold order."""
        return self._gather("ready")

    def start(self, epoch, stop):
        """Tell the folds whether to train round ``epoch`` (``stop``: not)."""
        self._decide(("start", epoch), stop)

    def scores(self, epoch):
        """Each fold's ``[(eval set, metric, score), ...]`` of round ``epoch``."""
        return self._gather(("scores", epoch))

    def end(self, epoch, stop):
        """Tell the folds whether to stop after round ``epoch``."""
        self._decide(("end", epoch), stop)


class _FoldFailed(Exception):
    """A fold raised; ``FoldRounds.__exit__`` raises the fold's own error instead."""
