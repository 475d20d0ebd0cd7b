"""``ProgressBar()`` shows the total rounds and the time left by default (issue 11, item 7)."""
import io

import numpy as np
import pytest

import gbm
from gbm.callback import ProgressBar

pytest.importorskip("tqdm")


def _data():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 3)).astype(np.float32)
    return X, X[:, 0] + rng.normal(scale=0.1, size=200)


def test_progress_bar_total_and_eta():
    X, y = _data()
    out = io.StringIO()
    gbm.train({"max_depth": 2}, X, y, 7, callbacks=[ProgressBar(file=out, mininterval=0)],
              evals=[(X, y, "train")])
    text = out.getvalue()
    assert "7/7" in text  # the total is known: the bar counts towards it
    assert "<" in text  # tqdm's "elapsed<remaining": an ETA is shown
    assert "train-rmse=" in text  # the last scores next to the bar
    # continued training counts only the new rounds; estimators pass their round count
    out = io.StringIO()
    gbm.GBMRegressor(n_estimators=4, max_depth=2, callbacks=[ProgressBar(file=out)]).fit(X, y)
    assert "4/4" in out.getvalue()


def test_progress_bar_early_stop_and_explicit_total():
    X, y = _data()
    out = io.StringIO()
    bar = ProgressBar(file=out, mininterval=0)
    gbm.train({"max_depth": 2, "learning_rate": 1.0}, X[:150], y[:150], 200,
              evals=[(X[150:], y[150:], "valid")], early_stopping_rounds=2, callbacks=[bar])
    assert "/200" in out.getvalue() and "200/200" not in out.getvalue()
    out = io.StringIO()
    gbm.train({"max_depth": 2}, X, y, 3, callbacks=[ProgressBar(total=10, file=out)])
    assert "3/10" in out.getvalue()
