"""Saving and loading fitted Spark models with Spark ML's writers and readers.

``model.write().save(path)`` (or ``model.save(path)``) writes Spark ML's metadata (the
class, the parameters, the classes of a classifier) under ``path/metadata``, as Spark's
``DefaultParamsWriter`` does, and gbm's model file, byte for byte what
``Booster.save_model`` writes, as ``path/model/gbm-model.json``: a local
``gbm.Booster.load_model`` reads it. Files go through Hadoop's ``FileSystem``, so
``path`` may be any URI Spark writes to (local, HDFS, S3, ...). A ``PipelineModel``
holding a gbm model saves and loads the same way.

Parameters whose values are not JSON (callbacks) are left out of the metadata, with a
warning: they do not change a fitted model.
"""
import json
import warnings

from pyspark.ml.util import (DefaultParamsReader, DefaultParamsWriter, MLReadable,
                             MLReader, MLWritable, MLWriter)

MODEL_FILE = "model/gbm-model.json"


class GBMModelWriter(MLWriter):
    def __init__(self, instance):
        super().__init__()
        self.instance = instance

    def saveImpl(self, path):
        model = self.instance
        classes = None if model.classes_ is None else [c.item() for c in model.classes_]
        params = {}
        for param, value in model._paramMap.items():
            try:
                json.dumps(value)
            except (TypeError, ValueError):
                warnings.warn(f"{param.name} is not saved with the model (not JSON: {value!r})",
                              stacklevel=3)
                continue
            params[param.name] = value
        DefaultParamsWriter.saveMetadata(model, path, self.sparkSession,
                                         extraMetadata={"classes": classes}, paramMap=params)
        write_bytes(self.sparkSession, f"{path}/{MODEL_FILE}",
                    model.get_booster().to_json().encode("utf-8"))


class GBMModelReader(MLReader):
    def __init__(self, cls):
        super().__init__()
        self.cls = cls

    def load(self, path):
        import numpy as np

        from ..model.booster import Booster

        metadata = DefaultParamsReader.loadMetadata(path, self.sparkSession)
        text = read_bytes(self.sparkSession, f"{path}/{MODEL_FILE}").decode("utf-8")
        classes = metadata.get("classes")
        model = self.cls(Booster.from_json(text),
                         None if classes is None else np.asarray(classes))
        DefaultParamsReader.getAndSetParams(model, metadata)
        return model


class GBMWritable(MLWritable):
    def write(self):
        return GBMModelWriter(self)


class GBMReadable(MLReadable):
    @classmethod
    def read(cls):
        return GBMModelReader(cls)


def _path(spark, path):
    jvm = spark.sparkContext._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    return p, p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())


def write_bytes(spark, path, data):
    """Write ``data`` to ``path`` (a Hadoop URI or a local path), replacing it."""
    p, fs = _path(spark, path)
    out = fs.create(p, True)
    try:
        out.write(bytearray(data))
    finally:
        out.close()


def read_bytes(spark, path):
    """The bytes of the file at ``path``."""
    p, fs = _path(spark, path)
    stream = fs.open(p)
    try:  # a Java byte[] comes back to Python as bytes
        return bytes(spark.sparkContext._jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
    finally:
        stream.close()
