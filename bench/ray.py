"""``python -m bench ray``: gbm.ray's ``GBMTrainer`` against Ray Train's
``XGBoostTrainer``, the same workers.

``clf-1m``-like data (``make_classification``, 28 features, ``--rows`` rows, as
``bench dask``), depth 6, learning rate 0.1, max_bin 256, ``--rounds`` rounds, on a local
Ray (``ray.init(num_cpus=W)``) with ``--workers`` W Ray Train workers of one CPU each:
gbm's ``GBMTrainer`` and ``XGBoostTrainer`` (``hist``, its train loop reading the shard as
Ray's example does, a checkpoint at the end only for both), on the same materialized
Ray dataset, fits interleaved, median of ``--repeats``; and whether gbm's model file is
the one local ``gbm.train`` writes on the whole dataset (``--no-check`` skips it).

Writes a Markdown table to ``--out`` (default ``bench/RESULTS_ray.md``). Timings need a
quiet machine: run it alone.
"""
import sys
import tempfile
import time

import numpy as np

from bench.engines import arguments, write_table

PARAMS = {"objective": "binary:logistic", "max_depth": 6, "learning_rate": 0.1,
          "max_bin": 256}


def _xgboost_loop(config):
    import ray.train
    import xgboost
    from ray.train.xgboost import RayTrainReportCallback

    frame = ray.train.get_dataset_shard("train").materialize().to_pandas()
    dtrain = xgboost.DMatrix(frame.drop(columns="label"), label=frame["label"])
    xgboost.train(dict(config["params"], tree_method="hist", nthread=1), dtrain,
                  num_boost_round=config["rounds"],
                  callbacks=[RayTrainReportCallback(frequency=0)])


def _fit_gbm(ds, args, storage):
    from ray.train import RunConfig, ScalingConfig

    from gbm.ray import GBMTrainer

    start = time.perf_counter()
    result = GBMTrainer(params=dict(PARAMS, n_jobs=1), label_column="label",
                        num_boost_round=args.rounds, datasets={"train": ds},
                        checkpoint_frequency=0,
                        scaling_config=ScalingConfig(num_workers=args.workers),
                        run_config=RunConfig(storage_path=storage)).fit()
    return time.perf_counter() - start, GBMTrainer.get_model(result.checkpoint)


def _fit_xgboost(ds, args, storage):
    from ray.train import RunConfig, ScalingConfig
    from ray.train.xgboost import XGBoostTrainer

    start = time.perf_counter()
    XGBoostTrainer(_xgboost_loop, train_loop_config={"params": PARAMS, "rounds": args.rounds},
                   datasets={"train": ds},
                   scaling_config=ScalingConfig(num_workers=args.workers),
                   run_config=RunConfig(storage_path=storage)).fit()
    return time.perf_counter() - start, None


def main(argv=None, prog=None):
    args = arguments(argv, prog, __doc__, "RESULTS_ray.md")
    import pandas as pd
    import ray
    import ray.data

    import gbm
    from bench.dask import _data

    X, y, _ = _data(args.rows)
    names = [f"f{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    frame["label"] = y
    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    try:
        chunks = np.array_split(np.arange(len(frame)), 4 * args.workers)
        ds = ray.data.from_pandas([frame.iloc[c] for c in chunks]).materialize()
        fits = {"gbm.ray": _fit_gbm, "XGBoostTrainer": _fit_xgboost}
        times = {name: [] for name in fits}
        booster = None
        with tempfile.TemporaryDirectory() as storage:
            for _ in range(args.repeats):
                for name, fit in fits.items():
                    t, model = fit(ds, args, storage)
                    booster = model if model is not None else booster
                    times[name].append(t)
                    print(f"{name}: {t:.2f} s", flush=True)
    finally:
        ray.shutdown()
    same = None
    if not args.no_check:
        local = gbm.train(PARAMS, X, y, num_boost_round=args.rounds, feature_names=names)
        same = booster.to_json() == local.to_json()
    _write(args, times, same)
    return 0


def _write(args, times, same):
    write_table(args, "gbm.ray against Ray Train's XGBoostTrainer", "ray",
                f"`ray.init(num_cpus={args.workers})`, one CPU per worker (`trainer.fit()`: "
                "worker group start, sharding and the final checkpoint included)",
                ("gbm.ray", "XGBoostTrainer"), times, same)

if __name__ == "__main__":
    sys.exit(main())
