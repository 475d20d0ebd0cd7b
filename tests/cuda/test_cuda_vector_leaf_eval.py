"""Eval sets of a vector-leaf model on ``device="cuda"``: each round's tree walked once
on the eval set's device bins (``gbm.model.vector_predict.add_binned_vector_margins``),
the scores and early stopping bit for bit those of the per-output path and of the CPU."""
import numpy as np

import gbm
import gbm.training.evaluation as evaluation
from tests.support.device_arrays import host


def test_cuda_eval_scores_same_bits(monkeypatch):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(500, 4)).astype(np.float32)
    y = np.argmax(X[:, :3] + rng.normal(scale=0.7, size=(500, 3)), axis=1)
    params = {"multi_strategy": "multi_output_tree", "objective": "multi:softprob",
              "num_class": 3, "max_depth": 2, "eta": 0.5, "device": "cuda"}
    Xraw = X[400:].copy()
    Xraw[::4, 0] = np.nan  # no NaN in 400 training values, 256 bins: raw rows

    def fit(device):
        result = {}
        booster = gbm.train(dict(params, device=device), X[:400], y[:400], 4,
                            evals=[(X[400:], y[400:], "binned"), (Xraw, y[400:], "raw")],
                            evals_result=result, early_stopping_rounds=2)
        return booster, result

    calls, sets = [], []
    init = evaluation.EvalSet.__init__
    monkeypatch.setattr(evaluation.EvalSet, "__init__",
                        lambda self, *a: init(self, *a) or sets.append(self))
    inner = evaluation.add_binned_vector_margins
    monkeypatch.setattr(evaluation, "add_binned_vector_margins",
                        lambda *a: calls.append(1) or inner(*a))
    new, new_result = fit("cuda")
    assert len(calls) == new.num_boosted_rounds  # the binned set's, each round
    assert [es.binned for es in sets] == [True, False]
    cpu, cpu_result = fit("cpu")
    monkeypatch.setattr(evaluation, "_walks_vectors", lambda booster: False)
    old, old_result = fit("cuda")
    for other in (cpu_result, old_result):
        for name in ("binned", "raw"):
            a = np.array(new_result[name]["mlogloss"])
            b = np.array(other[name]["mlogloss"])
            assert a.size > 0 and np.array_equal(a.view(np.int64), b.view(np.int64))
    assert new.best_iteration == old.best_iteration == cpu.best_iteration
    # the sets' last margins, bit for bit (a score can round a last-bit difference away)
    margins = [np.asarray(host(es.margin)) for es in sets]
    for i in range(2):  # new cuda, cpu, per-output cuda: 2 sets each
        for other in (margins[2 + i], margins[4 + i]):
            assert np.array_equal(margins[i].view(np.int64), other.view(np.int64))
    assert new.to_json() == old.to_json()
