"""Training callbacks and the progress bar."""
import numpy as np
from sklearn.datasets import make_regression

import gbm
from gbm.callback import ProgressBar, TrainingCallback

X, y = make_regression(1000, 5, random_state=0)


class Recorder(TrainingCallback):
    def __init__(self, stop_at=None):
        self.events, self.stop_at = [], stop_at

    def before_training(self, booster):
        self.events.append("start")
        return booster

    def before_iteration(self, booster, epoch, evals_log):
        self.events.append(("before", epoch))
        return False

    def after_iteration(self, booster, epoch, evals_log):
        self.events.append(("after", epoch, booster.num_boosted_rounds,
                            len(evals_log.get("valid", {}).get("rmse", []))))
        return epoch == self.stop_at

    def after_training(self, booster):
        self.events.append("end")
        return booster


def test_hooks_run_in_order_and_can_stop_training():
    rec = Recorder(stop_at=2)
    b = gbm.train({}, X, y, 10, evals=[(X, y, "valid")], callbacks=[rec])
    assert b.num_boosted_rounds == 3
    assert rec.events == ["start", ("before", 0), ("after", 0, 1, 1), ("before", 1),
                          ("after", 1, 2, 2), ("before", 2), ("after", 2, 3, 3), "end"]


def test_progress_bar_counts_rounds_in_an_estimator(capsys):
    bar = ProgressBar(total=4, disable=False, file=None)
    model = gbm.GBMRegressor(n_estimators=4).fit(X, y, callbacks=[bar])
    assert bar.bar.n == 4
    assert model.get_booster().num_boosted_rounds == 4
    assert np.isfinite(model.predict(X)).all()
