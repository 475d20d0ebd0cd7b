"""A small local Spark session for the gbm.spark tests, and DataFrames made from NumPy
rows (with the rows they hold in ``collect()`` order, for the local fit to compare with)."""
import os
import sys

import numpy as np


def local_spark(slots=3):
    """A ``local[slots]`` session with a small driver (the machine is shared); its Python
    workers run this interpreter."""
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    spark = (SparkSession.builder.master(f"local[{slots}]").appName("gbm-tests")
             .config("spark.driver.memory", "1g").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "3")
             .config("spark.sql.execution.arrow.pyspark.enabled", "true")
             .config("spark.python.worker.reuse", "true").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def vector_frame(spark, X, y, partitions=3, sparse=False, **extra):
    """A DataFrame with a ``features`` vector column (sparse vectors: each row's stored
    entries, from a SciPy CSR ``X``), ``label`` and the ``extra`` columns (name: values
    per row), in ``partitions`` partitions of uneven sizes; rows in the given order."""
    from pyspark.ml.linalg import Vectors

    n = X.shape[0]
    rows = []
    for i in range(n):
        if sparse:
            row = X[i]
            vec = Vectors.sparse(X.shape[1], row.indices.tolist(), row.data.tolist())
        else:
            vec = Vectors.dense([float(v) for v in X[i]])
        rows.append((vec, float(y[i])) + tuple(_plain(extra[k][i]) for k in extra))
    return _split(spark, rows, ["features", "label"] + list(extra), partitions)


def column_frame(spark, X, y, partitions=3, **extra):
    """A DataFrame with one column per feature (``f0``, ...), ``label`` and ``extra``."""
    names = [f"f{j}" for j in range(X.shape[1])]
    rows = [tuple(float(v) for v in X[i]) + (float(y[i]),)
            + tuple(_plain(extra[k][i]) for k in extra) for i in range(X.shape[0])]
    return _split(spark, rows, names + ["label"] + list(extra), partitions), names


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _split(spark, rows, names, partitions):
    """Rows in ``partitions`` partitions of uneven sizes, in order (parallelize's slices
    keep the order: ``collect()`` gives the rows back as given)."""
    rdd = spark.sparkContext.parallelize(rows, partitions)
    return spark.createDataFrame(rdd, names)
