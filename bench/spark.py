"""``python -m bench spark``: gbm.spark against xgboost.spark, the same workers.

``clf-1m``-like data (``make_classification``, 28 features, ``--rows`` rows, as
``bench dask``), depth 6, learning rate 0.1, max_bin 256, ``--rounds`` rounds, in a Spark
``local[W]`` session with ``--workers`` W barrier tasks of one thread each for both
libraries: gbm's ``SparkGBMClassifier`` and xgboost's ``SparkXGBClassifier`` (``hist``)
on the same cached DataFrame (a vector column), fits interleaved, median of
``--repeats``; and whether gbm's model file is the one local ``gbm.train`` writes on the
collected rows (``--no-check`` skips that local fit).

Writes a Markdown table to ``--out`` (default ``bench/RESULTS_spark.md``). Timings need a
quiet machine: run it alone.
"""
import os
import sys
import time

import numpy as np

from bench.engines import arguments, write_table

PARAMS = dict(max_depth=6, learning_rate=0.1, max_bin=256)


def _session(workers):
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master(f"local[{workers}]").appName("gbm-bench-spark")
             .config("spark.driver.memory", "4g").config("spark.ui.enabled", "false")
             .config("spark.sql.execution.arrow.pyspark.enabled", "true")
             .config("spark.task.cpus", "1").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _frame(spark, X, y, partitions):
    import pandas as pd
    from pyspark.ml.feature import VectorAssembler

    names = [f"f{j}" for j in range(X.shape[1])]
    pdf = pd.DataFrame(X, columns=names)
    pdf["label"] = y
    df = spark.createDataFrame(pdf).repartition(partitions)
    df = VectorAssembler(inputCols=names, outputCol="features").transform(df)
    df = df.select("features", "label").cache()
    df.count()
    return df


def _fit(make, df):
    start = time.perf_counter()
    model = make().fit(df)
    return time.perf_counter() - start, model


def main(argv=None, prog=None):
    args = arguments(argv, prog, __doc__, "RESULTS_spark.md")
    from xgboost.spark import SparkXGBClassifier

    import gbm
    from bench.dask import _data
    from gbm.spark import SparkGBMClassifier

    X, y, _ = _data(args.rows)
    spark = _session(args.workers)
    try:
        df = _frame(spark, X, y, 2 * args.workers)
        rows = df.collect()  # the order the models' row ids follow
        Xc = np.array([r.features.toArray() for r in rows], dtype=np.float32) \
            if not args.no_check else None
        yc = np.array([r.label for r in rows]) if not args.no_check else None
        del rows
        makers = {
            "gbm.spark": lambda: SparkGBMClassifier(num_workers=args.workers, n_jobs=1,
                                                    n_estimators=args.rounds, **PARAMS),
            "xgboost.spark": lambda: SparkXGBClassifier(
                num_workers=args.workers, n_estimators=args.rounds, tree_method="hist",
                **PARAMS)}  # its threads: spark.task.cpus (1)
        times = {name: [] for name in makers}
        models = {}
        for name, make in makers.items():  # warm-up: Python workers, kernels compiled
            _fit(make, df.limit(1000))
        for _ in range(args.repeats):
            for name, make in makers.items():
                t, models[name] = _fit(make, df)
                times[name].append(t)
                print(f"{name}: {t:.2f} s", flush=True)
        same = None
        if not args.no_check:
            local = gbm.GBMClassifier(n_estimators=args.rounds, **PARAMS).fit(Xc, yc)
            same = models["gbm.spark"].get_booster().to_json() == \
                local.get_booster().to_json()
    finally:
        spark.stop()
    _write(args, times, same)
    return 0


def _write(args, times, same):
    write_table(args, "gbm.spark against xgboost.spark", "spark",
                f"`local[{args.workers}]`, one barrier task per worker, one thread each "
                "(repartitioning and the stage included)",
                ("gbm.spark", "xgboost.spark"), times, same)

if __name__ == "__main__":
    sys.exit(main())
