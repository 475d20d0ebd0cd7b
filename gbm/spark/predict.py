"""Predictions of a fitted Spark model: one pandas UDF over the feature columns.

The model file travels once per executor (a broadcast of its text); each Python worker
loads it once. The UDF returns a struct of the columns asked for: the prediction, a
classifier's probabilities and raw margins (vector columns, as Spark's classifiers give
them), a regressor's or ranker's raw margins (``raw_prediction_col``), SHAP
contributions (``pred_contrib_col``) and each tree's leaf (``pred_leaf_col``).
"""
import hashlib

import numpy as np

from . import data as sd

_LOADED = {}  # model digest -> Booster, in each Python worker


def predict_frame(model, dataset):
    """``dataset`` with the model's output columns added."""
    import pandas as pd
    from pyspark.ml.functions import array_to_vector
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf

    booster = model.get_booster()
    kind, features, _ = sd.feature_columns(dataset, model.getOrDefault("features_col"))
    margin_col = model.getOrDefault("base_margin_col")
    inputs = list(features)
    if margin_col is not None and margin_col in dataset.columns:
        inputs.append(F.col(margin_col).alias(sd.MARGIN))
    outputs = _outputs(model, booster)
    sc = dataset.sparkSession.sparkContext
    model_text = booster.to_json()
    key = hashlib.sha256(model_text.encode()).hexdigest()
    text = sc.broadcast(model_text)
    classes = model.classes_
    n_features = booster.n_features
    missing = model.getOrDefault("missing") if model.hasParam("missing") else None
    layout = {"kind": kind, "n_features": len(features) if kind == "columns" else None}
    schema = ", ".join(f"{name} {dtype}" for name, dtype, _ in outputs)

    @pandas_udf(schema)
    def predict(frame: pd.DataFrame) -> pd.DataFrame:
        X, margin = _rows(frame, layout, n_features, missing)
        return _predict(_booster(key, text), X, margin, outputs, classes)

    out_col = "_gbm_out"
    out = dataset.withColumn(out_col, predict(F.struct(*inputs)))
    for name, dtype, column in outputs:
        value = F.col(f"{out_col}.{name}")
        if name in ("probability", "raw_vector"):
            value = array_to_vector(value)
        out = out.withColumn(column, value)
    return out.drop(out_col)


def _outputs(model, booster):
    """``(field, Spark type, output column)`` of each output asked for."""
    groups = booster.n_groups
    vector = "array<double>"
    outputs = [("prediction", "double" if groups == 1 or model.classes_ is not None
                else vector, model.getOrDefault("prediction_col"))]
    if model.classes_ is not None:
        for field, param in (("probability", "probability_col"),
                             ("raw_vector", "raw_prediction_col")):
            if model.getOrDefault(param):
                outputs.append((field, vector, model.getOrDefault(param)))
    elif model.getOrDefault("raw_prediction_col"):
        outputs.append(("raw", "double" if groups == 1 else vector,
                        model.getOrDefault("raw_prediction_col")))
    if model.getOrDefault("pred_contrib_col"):
        outputs.append(("contrib", vector if groups == 1 else "array<array<double>>",
                        model.getOrDefault("pred_contrib_col")))
    if model.getOrDefault("pred_leaf_col"):
        outputs.append(("leaf", "array<int>", model.getOrDefault("pred_leaf_col")))
    return outputs


def _booster(key, text):
    """The model of the broadcast ``text`` (``key``: its digest), loaded once."""
    booster = _LOADED.get(key)
    if booster is None:
        from ..model.booster import Booster

        _LOADED.clear()  # one model at a time per worker: a long session fits many
        booster = _LOADED[key] = Booster.from_json(text.value)
    return booster


def _rows(frame, layout, n_features, missing):
    """A pandas batch of the feature struct as X (float32, or CSR) and base margins."""
    import pyarrow as pa

    margin = frame.pop(sd.MARGIN).to_numpy() if sd.MARGIN in frame else None
    if margin is not None and margin.dtype == object:
        margin = np.stack(margin)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    n = table.num_rows
    rows = sd.feature_rows(table, layout, missing)
    if rows["sizes"] - {n_features}:
        raise ValueError(f"features_col holds vectors of size(s) {sorted(rows['sizes'])}; the "
                         f"model was trained on {n_features} features")
    return sd.matrix(rows, np.arange(n), n_features, rows["sparse"]), margin


def _predict(booster, X, margin, outputs, classes):
    import pandas as pd

    out = {}
    fields = {name for name, _, _ in outputs}
    raw = booster.predict(X, output_margin=True, base_margin=margin)
    if classes is not None:
        proba = booster.predict(X, base_margin=margin)
        if proba.ndim == 1:
            proba = np.column_stack([1.0 - proba, proba])
            raw = np.column_stack([-raw, raw])
        out["prediction"] = classes[np.argmax(proba, axis=1)].astype(np.float64)
        out["probability"] = list(proba)
        out["raw_vector"] = list(raw)
    else:
        value = raw if booster.params["objective"].startswith("rank:") else \
            booster.predict(X, base_margin=margin)
        out["prediction"] = list(value) if value.ndim > 1 else value
        out["raw"] = list(raw) if raw.ndim > 1 else raw
    if "contrib" in fields:
        contrib = booster.predict(X, pred_contribs=True, base_margin=margin)
        out["contrib"] = [c.tolist() for c in contrib] if contrib.ndim == 3 else list(contrib)
    if "leaf" in fields:
        out["leaf"] = list(booster.predict(X, pred_leaf=True).astype(np.int32))
    return pd.DataFrame({name: out[name] for name, _, _ in outputs})
