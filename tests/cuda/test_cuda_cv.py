"""``gbm.cv`` with ``device="cuda"``: the folds take turns on the device (one at a time),
and every fold's model and score is the CPU's."""
import numpy as np

import gbm
from gbm.callback import TrainingCallback


class Keep(TrainingCallback):
    def after_training(self, booster):
        self.booster = booster
        return booster


def test_cv_on_the_device_is_the_cpus():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(90, 3)).astype(np.float32)
    y = X[:, 0] - X[:, 1] + rng.normal(size=90)
    params = {"max_depth": 2, "max_bin": 16}
    kept = {}
    results = {}
    for device in ("cuda", "cpu"):
        kept[device] = Keep()
        results[device] = gbm.cv(dict(params, device=device), X, y, 2, nfold=3,
                                 callbacks=[kept[device]], as_pandas=False)
    assert results["cuda"] == results["cpu"] and len(results["cpu"]["test-rmse-mean"]) == 2
    for on_gpu, on_cpu in zip(kept["cuda"].booster.cvfolds, kept["cpu"].booster.cvfolds):
        assert on_gpu.bst.to_json() == on_cpu.bst.to_json()
