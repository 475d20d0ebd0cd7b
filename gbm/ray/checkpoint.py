"""A gbm training's state in a Ray Train checkpoint.

A checkpoint directory holds ``model.json``, gbm's model file of the rounds completed
(what ``Booster.save_model`` writes: ``GBMTrainer.get_model`` reads it), and
``state.json``, what a restarted worker group needs to go on exactly as an
uninterrupted fit: the eval scores so far, early stopping's best round and score and
whether its patience ran out, and the round the fit ends at.
"""
import json
import os

from ..callback import TrainingCallback
from ..cluster.progress import Resume

MODEL = "model.json"
STATE = "state.json"


def save(folder, resume):
    """Write ``resume`` (a ``gbm.cluster.progress.Resume``) into ``folder``."""
    b = resume.booster
    with open(os.path.join(folder, MODEL), "w", encoding="utf-8") as f:
        f.write(b.to_json())
    with open(os.path.join(folder, STATE), "w", encoding="utf-8") as f:
        json.dump({"evals_result": b.evals_result, "best_iteration": b.best_iteration,
                   "best_score": b.best_score, "stopped": resume.stopped,
                   "end": resume.end}, f)


def load_model(folder):
    from ..model.booster import Booster

    return Booster.load_model(os.path.join(folder, MODEL))


def load(folder):
    """The ``Resume`` saved in ``folder``."""
    booster = load_model(folder)
    with open(os.path.join(folder, STATE), encoding="utf-8") as f:
        state = json.load(f)
    booster.evals_result = state["evals_result"]
    booster.best_iteration, booster.best_score = state["best_iteration"], state["best_score"]
    return Resume(booster, state["stopped"], state["end"])


class Report(TrainingCallback):
    """Every ``frequency`` rounds (and after the last), every rank calls
    ``ray.train.report`` (Ray Train's barrier: all ranks report as often) with the
    round's scores; rank 0 adds a checkpoint of the state at that round
    (``progress.state()``: run after ``gbm.cluster.progress.Progress``)."""

    def __init__(self, progress, rank, frequency, extra):
        self.progress, self.rank, self.frequency = progress, rank, int(frequency)
        self.extra = dict(extra)
        self.reported = None  # rounds at the last report

    def after_iteration(self, booster, epoch, evals_log):
        if self.frequency > 0 and (epoch + 1) % self.frequency == 0:
            self.report(booster, evals_log)
        return False

    def after_training(self, booster):
        if self.reported != booster.num_boosted_rounds:
            self.report(booster, booster.evals_result)
        return booster

    def report(self, booster, evals_log):
        import tempfile

        import ray.train

        rounds = int(booster.num_boosted_rounds)
        metrics = {f"{name}-{metric}": scores[-1] for name, by_metric in evals_log.items()
                   for metric, scores in by_metric.items() if scores}
        metrics.update(self.extra, rounds=rounds)
        state = self.progress.state()
        if self.rank != 0 or state is None:
            ray.train.report(metrics, checkpoint=None)
        else:
            with tempfile.TemporaryDirectory() as folder:
                save(folder, state)
                ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(folder))
        self.reported = rounds
