"""What a callback must be and return (issue 44): a plain function, or a
``before_training`` / ``after_training`` that returns nothing, is refused with a message
that says so (before: bare AttributeErrors), in ``train`` and ``cv`` alike."""
import numpy as np
import pytest

import gbm
from gbm.callback import TrainingCallback


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    return X, X[:, 0] + 0.1 * rng.normal(size=60)


class ReturnsNothing(TrainingCallback):
    def __init__(self, hook):
        self.hook = hook

    def before_training(self, model):
        return None if self.hook == "before_training" else model

    def after_training(self, model):
        return None if self.hook == "after_training" else model


@pytest.mark.parametrize("hook", ["before_training", "after_training"])
def test_a_hook_that_returns_nothing_is_named(hook):
    X, y = _data()
    with pytest.raises(TypeError, match=rf"ReturnsNothing's {hook} returned None, not the "
                                        r"model: a callback is a gbm.callback.TrainingCallback"):
        gbm.train({}, gbm.DMatrix(X, y), 2, callbacks=[ReturnsNothing(hook)])
    with pytest.raises(TypeError, match=rf"ReturnsNothing's {hook} returned None"):
        gbm.cv({}, gbm.DMatrix(X, y), 2, nfold=2, callbacks=[ReturnsNothing(hook)])


def test_a_plain_function_is_not_a_callback():
    X, y = _data()
    with pytest.raises(TypeError, match=r"callbacks\[1\] is <function .*has no "
                                        r"before_training, after_training, before_iteration, "
                                        r"after_iteration: a callback is a gbm.callback"):
        gbm.train({}, gbm.DMatrix(X, y), 2,
                   callbacks=[TrainingCallback(), lambda env: None])


def test_a_callback_that_returns_the_model_trains():
    class Counts(TrainingCallback):
        rounds = 0

        def after_iteration(self, model, epoch, evals_log):
            Counts.rounds += 1
            return False

    X, y = _data()
    model = gbm.train({}, gbm.DMatrix(X, y), 3, callbacks=[Counts()])
    assert Counts.rounds == 3 and model.num_boosted_rounds() == 3
