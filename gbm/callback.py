"""Training callbacks: hooks called around the boosting loop, as in XGBoost.

Subclass ``TrainingCallback`` and pass instances to ``gbm.train(..., callbacks=[...])`` or
to an estimator's ``fit(..., callbacks=[...])``. ``after_iteration`` returning True stops
training (after the round it was called for).
"""


class TrainingCallback:
    """Base class; every hook is optional."""

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
            self.bar.set_postfix({f"{name}-{metric}": f"{values[-1]:.5g}"
                                  for name, scores in evals_log.items()
                                  for metric, values in scores.items()}, refresh=False)
        return False

    def after_training(self, booster):
        self.bar.close()
        self._planned = None
        return booster
