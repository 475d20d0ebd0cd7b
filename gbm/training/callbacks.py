"""The callbacks of one fit, run in order: ``train``'s own first (the eval sets'
scoring, printing, early stopping), then the caller's.

Stopping: a callback asks to stop by returning True from ``before_iteration`` or
``after_iteration``, and training ends on every rank. ``train``'s own callbacks decide
the same on every rank (they read the same scores), but the caller's may differ between
ranks (``gbm.dask`` saves checkpoints on rank 0 only), so when any rank has callbacks of
the caller's, the ranks agree on each hook's stop request (one exchange a hook a round).
A callback whose class sets ``never_stops = True`` (it never asks to stop, e.g.
``gbm.dask``'s record of the completed rounds) needs no such agreement.
"""
import numpy as np


class CallbackContainer:
    """``own``: ``train``'s callbacks; ``given``: the caller's; ``rounds``: the
    ``[begin, end)`` of the rounds to train (a progress bar's total)."""

    def __init__(self, own, given, collective, rounds):
        given = [] if given is None else list(given)  # XGBoost's default: None
        for i, cb in enumerate(given):
            _check_callback(cb, i)
            plan = getattr(cb, "plan_rounds", None)
            if plan is not None:
                plan(*rounds)
            on_rank = getattr(cb, "on_rank", None)  # e.g. EvaluationMonitor(rank=...)
            if on_rank is not None:
                on_rank(collective.rank)
        self.callbacks, self.collective = list(own) + given, collective
        self.given = any(not getattr(cb, "never_stops", False) for cb in given)
        self.agree = False

    def before_training(self, booster):
        for cb in self.callbacks:
            booster = _model_returned(cb, "before_training", booster)
        self.agree = agree(self.collective, self.given)  # whether any rank has the caller's
        return booster

    def before_iteration(self, booster, epoch):
        """Whether to stop before training round ``epoch``."""
        return self._stop([cb.before_iteration(booster, epoch, booster.evals_result)
                           for cb in self.callbacks])

    def after_iteration(self, booster, epoch):
        """Whether to stop after round ``epoch``; every callback sees the round."""
        return self._stop([cb.after_iteration(booster, epoch, booster.evals_result)
                           for cb in self.callbacks])

    def after_training(self, booster):
        for cb in self.callbacks:
            booster = _model_returned(cb, "after_training", booster)
        return booster

    def _stop(self, asked):
        return agree(self.collective, any(asked)) if self.agree else any(asked)


def agree(collective, flag):
    """True on every rank when ``flag`` is True on any."""
    return bool(collective.allreduce(np.array([bool(flag)], dtype=np.uint8), "max")[0])


_HOOKS = ("before_training", "after_training", "before_iteration", "after_iteration")
_WHAT = ("a callback is a gbm.callback.TrainingCallback (a subclass of it, as "
         "xgboost.callback.TrainingCallback's): before_training(model) and "
         "after_training(model) return the model, before_iteration and "
         "after_iteration(model, epoch, evals_log) return True to stop training")


def _check_callback(cb, i):
    """``callbacks[i]`` must have every hook (a plain function has none of them)."""
    missing = [hook for hook in _HOOKS if not callable(getattr(cb, hook, None))]
    if missing:
        raise TypeError(f"callbacks[{i}] is {cb!r}, which has no {', '.join(missing)}: "
                        f"{_WHAT}")


def _model_returned(cb, hook, model):
    """``cb``'s ``hook`` (before_training or after_training) called with ``model``: it
    must return the model (a Booster; in ``gbm.cv``, the folds' ``CVBooster``)."""
    returned = getattr(cb, hook)(model)
    if not isinstance(returned, type(model)):
        raise TypeError(f"the callback {type(cb).__name__}'s {hook} returned {returned!r}, "
                        f"not the model: {_WHAT}")
    return returned
