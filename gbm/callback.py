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
    """A tqdm progress bar over the boosting rounds (``pip install tqdm``, in the dev extra)."""

    def __init__(self, total=None, **tqdm_kwargs):
        self.total, self.kwargs, self.bar = total, tqdm_kwargs, None

    def before_training(self, booster):
        try:
            from tqdm.auto import tqdm
        except ImportError as err:
            raise ImportError("ProgressBar needs tqdm: pip install tqdm") from err
        self.bar = tqdm(total=self.total, unit="round", **self.kwargs)
        return booster

    def after_iteration(self, booster, epoch, evals_log):
        self.bar.update(1)
        return False

    def after_training(self, booster):
        self.bar.close()
        return booster
