"""Training callbacks: hooks called around the boosting loop, as in XGBoost.

Subclass ``TrainingCallback`` and pass instances to ``gbm.train(..., callbacks=[...])`` or
to an estimator's ``fit(..., callbacks=[...])``. ``after_iteration`` returning True stops
training (after the round it was called for). ``evals_log`` is the booster's
``evals_result``: ``{eval set name: {metric name: [score per round]}}``, holding the round
just trained when ``after_iteration`` is called. Under ``gbm.cv`` (as under
``xgboost.cv``) each score is a pair ``(mean, std)`` over the folds, and the "booster" is
``gbm.training.cv.CVBooster``; the callbacks here read the mean.

``train`` runs its own callbacks first: the eval sets' scoring, ``EvaluationMonitor``
(``verbose_eval``) and ``EarlyStopping`` (``early_stopping_rounds``); these are XGBoost's
and may also be passed directly, as may ``LearningRateScheduler`` and
``TrainingCheckPoint``.

``epoch`` is the round's index in the model: a continued model's first new round is
its ``num_boosted_rounds`` (XGBoost counts from 0 in every ``train`` call; its callbacks
here, ``LearningRateScheduler`` and ``TrainingCheckPoint``, count as XGBoost's do).
"""
import collections.abc
import numbers
import os
import pickle
from typing import Dict, List, Tuple, Union

import numpy as np

from .metrics.names import maximizes
from .param_checks import real

__all__ = ["TrainingCallback", "EarlyStopping", "EvaluationMonitor", "LearningRateScheduler",
           "TrainingCheckPoint", "ProgressBar"]


class TrainingCallback:
    """Base class; every hook is optional."""

    # ``evals_log``'s type: {eval set: {metric: [score per round]}} (under cv, each score
    # a (mean, std) pair), XGBoost's ``TrainingCallback.EvalsLog``
    EvalsLog = Dict[str, Dict[str, Union[List[float], List[Tuple[float, float]]]]]

    def before_training(self, booster):
        return booster

    def after_training(self, booster):
        return booster

    def before_iteration(self, booster, epoch, evals_log):
        return False

    def after_iteration(self, booster, epoch, evals_log):
        return False


class ProgressBar(TrainingCallback):
    """A tqdm progress bar over the boosting rounds (``pip install tqdm``, in the dev extra).

    By default the bar's total is the number of rounds ``train`` was asked for, so it
    shows the share done and the time left (ETA); when early stopping ends training
    sooner, the bar closes where it stopped. ``total`` overrides the count. With eval sets,
    the last round's scores are shown next to the bar (``show_scores=False``: not).
    Other keyword arguments go to ``tqdm``.
    """

    def __init__(self, total=None, show_scores=True, **tqdm_kwargs):
        self.total, self.show_scores, self.kwargs, self.bar = total, show_scores, tqdm_kwargs, None
        self._planned = None

    def plan_rounds(self, begin, end):
        """Called by ``train`` before training: rounds ``[begin, end)`` will be trained."""
        self._planned = end - begin

    def before_training(self, booster):
        try:
            from tqdm.auto import tqdm
        except ImportError as err:
            raise ImportError("ProgressBar needs tqdm: pip install tqdm") from err
        total = self.total if self.total is not None else self._planned
        self.bar = tqdm(total=total, unit="round", **self.kwargs)
        return booster

    def after_iteration(self, booster, epoch, evals_log):
        self.bar.update(1)
        if self.show_scores and evals_log:
            self.bar.set_postfix({f"{name}-{metric}": f"{score_mean(values[-1]):.5g}"
                                  for name, scores in evals_log.items()
                                  for metric, values in scores.items()}, refresh=False)
        return False

    def after_training(self, booster):
        self.bar.close()
        self._planned = None
        return booster


class EvaluationMonitor(TrainingCallback):
    """Prints the last round's scores every ``period`` rounds, XGBoost's line
    ``[round]\tname-metric:score...`` (scores to 5 decimals); the last round is printed
    too when training ends between two periods. (``train(verbose_eval=N)`` adds one on
    the first rank only.) ``show_stdv``: under ``gbm.cv``, print each score as
    ``mean+std`` (XGBoost's form), else the mean alone. As XGBoost's: ``rank``, the rank
    of a distributed fit that prints (the others stay silent), and ``logger``, a function
    called with each line instead of printing it."""

    def __init__(self, period=1, show_stdv=False, *, rank=0, logger=None):
        if isinstance(period, bool) or not isinstance(period, numbers.Integral) or period < 1:
            raise ValueError(f"period must be an integer >= 1, got {period!r}")
        if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or rank < 0:
            raise ValueError(f"rank must be an integer >= 0, got {rank!r}")
        if logger is not None and not callable(logger):
            raise TypeError(f"logger must be a function of a line of text, got {logger!r}")
        self.period, self.unprinted = int(period), None
        self.show_stdv = bool(show_stdv)
        self.rank, self.logger, self.silent = int(rank), logger, False

    def on_rank(self, rank):
        """Called by ``train`` with this process's rank: print on ``self.rank`` only."""
        self.silent = rank != self.rank

    def _print(self, line):
        if self.silent:
            return
        if self.logger is None:
            print(line, flush=True)
        else:
            self.logger(line)

    def after_iteration(self, booster, epoch, evals_log):
        scores = self._round_scores(evals_log)
        if not scores:
            return False
        line = "\t".join([f"[{epoch}]"] + [f"{name}-{metric}:{self._format(score)}"
                                            for name, metric, score in scores])
        if epoch % self.period == 0:
            self._print(line)
            self.unprinted = None
        else:
            self.unprinted = line
        return False

    def after_training(self, booster):
        if self.unprinted is not None:
            self._print(self.unprinted)
        self.unprinted = None
        return booster

    def _format(self, score):
        if isinstance(score, tuple):  # gbm.cv's (mean, std) over the folds
            mean, std = score
            return f"{mean:.5f}+{std:.5f}" if self.show_stdv else f"{mean:.5f}"
        return f"{score:.5f}"

    def _round_scores(self, evals_log):
        """``(eval set, metric, score)`` to print: each metric's last score in the log."""
        return [(name, metric, scores[-1]) for name, metrics in evals_log.items()
                for metric, scores in metrics.items()]


class EarlyStopping(TrainingCallback):
    """Stops training when a metric on an eval set has not improved for ``rounds``
    rounds (XGBoost's rule); the booster's ``best_iteration`` and ``best_score`` tell the
    best round. All trees trained are kept unless ``save_best``.

    Parameters
    ----------
    rounds : int >= 1
    metric_name, data_name : str, optional
        The metric and eval set watched; default: the last metric of the last eval set.
    maximize : bool, optional
        Whether larger is better; default: by the metric (e.g. AUC, NDCG: larger).
    save_best : bool
        Return the model cut after its best round (``booster[:best_iteration + 1]``,
        keeping ``best_iteration``, ``best_score`` and the scores of every round trained),
        as XGBoost's; not with ``gbm.cv``, which returns no model.
    min_delta : float >= 0
        How much a score must improve on the best one to count as better.

    The best round so far is the booster's ``best_iteration`` / ``best_score``: a fit
    resumed with those set (a Dask checkpoint) counts from its best round.
    ``stopping_history`` is XGBoost's record of the scores watched: ``{eval set: {metric:
    [score of each round of the last fit]}}``.
    """

    def __init__(self, rounds, metric_name=None, data_name=None, maximize=None,
                 save_best=False, min_delta=0.0):
        if isinstance(rounds, bool) or not isinstance(rounds, numbers.Integral) or rounds < 1:
            raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")
        if not min_delta >= 0:
            raise ValueError(f"min_delta must be >= 0, got {min_delta!r}")
        self.rounds, self.metric_name, self.data_name = int(rounds), metric_name, data_name
        self.maximize, self.min_delta = maximize, float(min_delta)
        self.save_best = bool(save_best)
        self.stopping_history = {}

    def before_training(self, booster):
        if self.save_best and hasattr(booster, "cvfolds"):
            raise ValueError("EarlyStopping(save_best=True) does not apply to gbm.cv, which "
                             "returns no model")
        self.stopping_history = {}
        return booster

    def after_training(self, booster):
        if not self.save_best or booster.best_iteration is None:
            return booster
        best, score, log = booster.best_iteration, booster.best_score, booster.evals_result
        rounds = num_rounds(booster)
        if best + 1 >= rounds:
            return booster
        booster = booster[:best + 1]
        booster.best_iteration, booster.best_score = best, score
        booster.evals_result = log  # every round trained, as XGBoost's evals_result
        return booster

    def after_iteration(self, booster, epoch, evals_log):
        if not evals_log:
            raise ValueError("early stopping needs at least one eval set (evals / eval_set)")
        data, metric = self._watched(evals_log)
        if data not in evals_log:
            raise ValueError(f"EarlyStopping's data_name {data!r} is not an eval set; the eval "
                             f"sets are {list(evals_log)}")
        metrics = evals_log[data]
        if metric not in metrics:
            raise ValueError(f"EarlyStopping's metric_name {metric!r} is not scored on {data!r}; "
                             f"its metrics are {list(metrics)}")
        self.stopping_history.setdefault(data, {}).setdefault(metric, []).append(
            metrics[metric][-1])
        score = score_mean(metrics[metric][-1])
        maximize = maximizes(metric) if self.maximize is None else bool(self.maximize)
        best = booster.best_score
        if best is None or (score > best + self.min_delta if maximize
                            else score < best - self.min_delta):
            booster.best_iteration, booster.best_score = epoch, score
        return epoch - booster.best_iteration >= self.rounds

    def _watched(self, evals_log):
        """``(eval set, metric)`` watched: the given names, else the log's last set and
        that set's last metric (XGBoost's choice)."""
        data = self.data_name if self.data_name is not None else list(evals_log)[-1]
        metric = self.metric_name
        if metric is None and evals_log.get(data):
            metric = list(evals_log[data])[-1]
        return data, metric


class LearningRateScheduler(TrainingCallback):
    """Sets ``learning_rate`` after each round, for the rounds after it, as XGBoost's:
    after round ``i`` of this fit (0 = its first), to ``learning_rates(i)`` (a function)
    or ``learning_rates[i]`` (a sequence). The first round trains with the parameters'
    rate. Under ``gbm.cv``, every fold's rate is set.
    """

    def __init__(self, learning_rates):
        if callable(learning_rates):
            self.learning_rates = learning_rates
        elif isinstance(learning_rates, (collections.abc.Sequence, np.ndarray)) \
                and not isinstance(learning_rates, str):
            rates = list(learning_rates)
            self.learning_rates = rates.__getitem__
        else:
            raise TypeError(f"learning_rates must be a function of the round or a sequence "
                            f"of rates, got {type(learning_rates).__name__}")
        self._start = 0

    def before_training(self, booster):
        self._start = num_rounds(booster)
        return booster

    def after_iteration(self, booster, epoch, evals_log):
        i = epoch - self._start
        try:
            rate = self.learning_rates(i)
        except IndexError:
            raise ValueError(f"learning_rates has no rate for round {i}: give one per "
                             "boosting round") from None
        rate = real(0, None)("learning_rate", rate)
        # the booster's parameters are the ones its fit reads each round
        for model in getattr(booster, "cvfolds", None) or [booster]:
            model = getattr(model, "bst", model)
            model.params["learning_rate"] = rate
        return False


class TrainingCheckPoint(TrainingCallback):
    """Saves the model every ``interval`` rounds into ``directory`` (made if missing), as
    ``<name>_<i>.json`` (gbm's model file, ``Booster.save_model``) or ``<name>_<i>.pkl``
    (``as_pickle``: the pickled Booster), ``i`` being the last round in it counted from
    the model's first (XGBoost's naming; its files are ``.ubj``). Unlike XGBoost 3.2,
    which first saves after ``interval + 1`` rounds, the first file holds ``interval``
    rounds.
    """

    default_format = "json"

    def __init__(self, directory, name="model", as_pickle=False, interval=100):
        if isinstance(interval, bool) or not isinstance(interval, numbers.Integral) \
                or interval < 1:
            raise ValueError(f"interval must be an integer >= 1, got {interval!r}")
        self.directory, self.name = os.fspath(directory), str(name)
        self.as_pickle, self.interval = bool(as_pickle), int(interval)
        self._start = 0

    def before_training(self, booster):
        self._start = num_rounds(booster)
        os.makedirs(self.directory, exist_ok=True)
        return booster

    def after_iteration(self, booster, epoch, evals_log):
        if (num_rounds(booster) - self._start) % self.interval:
            return False
        suffix = "pkl" if self.as_pickle else self.default_format
        path = os.path.join(self.directory, f"{self.name}_{num_rounds(booster) - 1}.{suffix}")
        if self.as_pickle:
            with open(path, "wb") as f:
                pickle.dump(booster, f)
        else:
            booster.save_model(path)
        return False


def num_rounds(booster):
    """The rounds ``booster`` holds (its ``num_boosted_rounds``, a method or a number)."""
    n = booster.num_boosted_rounds
    return int(n() if callable(n) else n)


def score_mean(score):
    """A score of ``evals_log``: a number, or under ``gbm.cv`` its mean over the folds (the
    first of a ``(mean, std)`` pair, which XGBoost's early stopping watches too)."""
    return score[0] if isinstance(score, tuple) else score
