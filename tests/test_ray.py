"""gbm.ray on a real local Ray (``ray.init(num_cpus=2)``): ``GBMTrainer`` gives the model
file ``gbm.train`` writes on the whole dataset for 1, 2 and 3 workers and uneven blocks,
with an eval set and early stopping; a worker SIGKILLed mid-fit ends, after Ray Train's
restart from the last checkpoint, with the uninterrupted model; bad input."""
import numpy as np
import pytest

pytest.importorskip("ray.train")

import pandas as pd  # noqa: E402

import gbm  # noqa: E402


@pytest.fixture(scope="module")
def ray_session():
    import ray

    ray.init(num_cpus=2, object_store_memory=200 * 2**20, include_dashboard=False,
             log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def _dataset(X, y, cuts, **extra):
    """A Ray dataset of columns f0.., y and ``extra``, in blocks cut at ``cuts``."""
    import ray.data

    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    df["y"] = y
    for name, values in extra.items():
        df[name] = values
    bounds = [0] + list(cuts) + [len(df)]
    return ray.data.from_pandas([df.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:])])


def _fit(tmp_path, workers, **kwargs):
    from ray.train import RunConfig, ScalingConfig

    from gbm.ray import GBMTrainer

    run_config = kwargs.pop("run_config", None) or RunConfig(storage_path=str(tmp_path),
                                                             name="fit")
    trainer = GBMTrainer(scaling_config=ScalingConfig(
        num_workers=workers, resources_per_worker={"CPU": 2 / max(workers, 2)}),
        run_config=run_config, **kwargs)
    result = trainer.fit()
    return GBMTrainer.get_model(result.checkpoint), result


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[rng.random(size=X.shape) < 0.05] = np.nan
    return X, rng


NAMES = [f"f{j}" for j in range(4)]


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_the_local_model_on_any_number_of_workers(ray_session, tmp_path, workers):
    X, rng = _data()
    y = 2 * np.nan_to_num(X[:, 0]) + rng.normal(size=len(X))
    ds = _dataset(X, y, cuts=[40, 41, 200])
    params = {"max_depth": 3, "subsample": 0.7, "random_state": 4}
    booster, result = _fit(tmp_path, workers, params=params, label_column="y",
                           num_boost_round=4, datasets={"train": ds})
    expected = gbm.train(params, X, y, num_boost_round=4, feature_names=NAMES)
    assert booster.to_json() == expected.to_json()
    assert result.metrics["rounds"] == 4 and result.metrics["resumed_from_round"] == 0


def test_an_eval_set_with_early_stopping(ray_session, tmp_path):
    X, rng = _data(400, seed=1)
    y = (np.nan_to_num(X[:, 1]) + 0.5 * rng.normal(size=len(X)) > 0).astype(float)
    params = {"objective": "binary:logistic", "max_depth": 3, "learning_rate": 0.5,
              "eval_metric": "logloss"}
    booster, _ = _fit(tmp_path, 2, params=params, label_column="y", num_boost_round=40,
                      datasets={"train": _dataset(X[:300], y[:300], [100]),
                                "valid": _dataset(X[300:], y[300:], [30])},
                      early_stopping_rounds=2, checkpoint_frequency=0)
    expected = gbm.train(params, X[:300], y[:300], num_boost_round=40,
                         evals=[(X[300:], y[300:], "valid")], early_stopping_rounds=2,
                         feature_names=NAMES)
    assert booster.num_boosted_rounds < 40
    assert booster.to_json() == expected.to_json()


def _killer(marker, rank, at_round):
    """A callback that SIGKILLs the process of worker ``rank`` after round ``at_round``,
    once (``marker``: a file it creates first)."""
    from gbm.callback import TrainingCallback

    class Kill(TrainingCallback):  # defined here: pickled by value into the workers
        def after_iteration(self, booster, epoch, evals_log):
            import os
            import signal

            import ray.train

            if epoch == at_round and ray.train.get_context().get_world_rank() == rank:
                try:
                    os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
                except FileExistsError:
                    return False
                os.kill(os.getpid(), signal.SIGKILL)
            return False

    return Kill()


def test_a_killed_worker_ends_with_the_uninterrupted_model(ray_session, tmp_path):
    from ray.train import FailureConfig, RunConfig

    X, rng = _data(300, seed=2)
    y = np.nan_to_num(X[:, 0]) + rng.normal(size=len(X))
    params = {"max_depth": 3, "subsample": 0.8, "random_state": 2}
    run_config = RunConfig(storage_path=str(tmp_path), name="killed",
                           failure_config=FailureConfig(max_failures=1))
    booster, result = _fit(tmp_path, 2, params=params, label_column="y", num_boost_round=8,
                           datasets={"train": _dataset(X, y, [120])}, checkpoint_frequency=1,
                           callbacks=[_killer(str(tmp_path / "kill-marker"), 1, at_round=4)],
                           run_config=run_config)
    assert (tmp_path / "kill-marker").is_file()  # the worker was killed
    expected = gbm.train(params, X, y, num_boost_round=8, feature_names=NAMES)
    assert booster.to_json() == expected.to_json()
    # the restarted group went on from a checkpoint (not from the start), of at most the
    # 5 rounds the killed group completed: Ray Train registers a checkpoint once it has
    # every worker's report, so the last one or two may be missing (rounds redone)
    assert 1 <= result.metrics["resumed_from_round"] <= 5


def test_bad_input_names_the_argument(ray_session):
    from ray.train import ScalingConfig

    from gbm.ray import GBMTrainer

    X, rng = _data(20)
    ds = _dataset(X, rng.normal(size=20), [10])
    with pytest.raises(ValueError, match="label_column='target'.*no such column"):
        GBMTrainer(params={}, label_column="target", datasets={"train": ds})
    with pytest.raises(ValueError, match="scaling_config.num_workers must be .*got 0"):
        GBMTrainer(params={}, label_column="y", datasets={"train": ds},
                   scaling_config=ScalingConfig(num_workers=0))
    with pytest.raises(ValueError, match="'train' dataset"):
        GBMTrainer(params={}, label_column="y", datasets={"valid": ds})
