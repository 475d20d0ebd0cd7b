"""A Spark fit that loses a barrier task mid-training (its Python worker killed with
SIGKILL) goes on from the survivors' last completed round and ends with the model file
of an uninterrupted fit (``gbm.spark.training``, ``gbm.spark.keeper``)."""
import numpy as np
import pytest

pytest.importorskip("pyspark")

import gbm  # noqa: E402
from gbm.collective import CollectiveError  # noqa: E402
from gbm.spark import SparkGBMClassifier  # noqa: E402
from tests.support.spark_cases import local_spark, vector_frame  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    session = local_spark(3)
    yield session
    session.stop()


def _killer(marker, rank, at_round):
    """A callback that SIGKILLs the Python worker of barrier task ``rank`` after round
    ``at_round``, once (``marker``: a file it creates first)."""
    from gbm.callback import TrainingCallback

    class Kill(TrainingCallback):  # defined here: pickled by value into the tasks
        def after_iteration(self, booster, epoch, evals_log):
            import os
            import signal

            from pyspark import BarrierTaskContext

            if epoch == at_round and BarrierTaskContext.get().partitionId() == rank:
                try:
                    os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
                except FileExistsError:
                    return False
                os.kill(os.getpid(), signal.SIGKILL)
            return False

    return Kill()


def _data(n=300):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(float)
    valid = rng.random(n) < 0.25
    return X, y, valid


@pytest.mark.parametrize("workers, rank", [(2, 1), (3, 0)])
def test_a_killed_task_ends_with_the_uninterrupted_model(spark, tmp_path, workers, rank):
    X, y, valid = _data()
    df = vector_frame(spark, X, y, partitions=3, is_valid=valid.tolist())
    params = dict(n_estimators=12, max_depth=3, subsample=0.8, random_state=1,
                  early_stopping_rounds=20, eval_metric="logloss")
    killer = _killer(str(tmp_path / "killed"), rank, at_round=5)
    model = SparkGBMClassifier(num_workers=workers, validation_indicator_col="is_valid",
                               callbacks=[killer], **params).fit(df)
    assert (tmp_path / "killed").exists()  # the worker was killed
    local = gbm.GBMClassifier(**params)
    expected = gbm.train(dict(local._train_params(), objective="binary:logistic"),
                         X[~valid], y[~valid], num_boost_round=12,
                         evals=[(X[valid], y[valid], "validation")], early_stopping_rounds=20)
    booster = model.get_booster()
    assert booster.to_json() == expected.to_json()
    assert booster.evals_result == expected.evals_result
    assert booster.best_iteration == expected.best_iteration
    [record] = model.recoveries_
    # the survivors reported their state: the fit went on from round 5 or 6 (the round
    # the loss interrupted, and no completed round, was trained again)
    assert record["ranks_reporting"] == workers - 1
    assert record["round"] in (5, 6) and record["rounds_redone"] == 0


def test_max_recoveries_0_fails_at_the_first_lost_task(spark, tmp_path):
    X, y, _ = _data(120)
    df = vector_frame(spark, X, y, partitions=2)
    killer = _killer(str(tmp_path / "killed"), 1, at_round=1)
    with pytest.raises(CollectiveError, match="task of the training was lost"):
        SparkGBMClassifier(num_workers=2, n_estimators=4, max_recoveries=0,
                           callbacks=[killer]).fit(df)
