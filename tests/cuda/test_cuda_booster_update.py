"""``Booster.update`` with ``device="cuda"`` trains ``train``'s model, and the CPU's:
the session keeps the device's margins between rounds (gbm.training.stepwise)."""
import numpy as np

import gbm


def test_updates_on_the_device_are_train_and_the_cpus_model():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3)).astype(np.float32)
    d = gbm.DMatrix(X, label=(X[:, 0] > 0).astype(float))
    params = {"max_depth": 2, "objective": "binary:logistic", "subsample": 0.8}
    files = {}
    for device in ("cuda", "cpu"):
        booster = gbm.Booster(dict(params, device=device), [d])
        for i in range(2):
            booster.update(d, i)
        files[device] = booster.save_raw("json")
        assert files[device] == gbm.train(dict(params, device=device), d, 2).save_raw("json")
    assert files["cuda"] == files["cpu"]  # the device is not in the model file
