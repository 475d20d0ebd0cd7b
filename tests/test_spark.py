"""gbm.spark on a real local Spark (``local[3]``): the model file is the one local gbm
writes on the collected rows, for 1, 2 and 3 barrier tasks and uneven partitions, for
each objective family, categorical features, sparse vectors and an eval set with early
stopping; predictions, save / load, Pipeline and CrossValidator; bad input."""
import json

import numpy as np
import pytest

pytest.importorskip("pyspark")

import scipy.sparse as sp  # noqa: E402

import gbm  # noqa: E402
from gbm.spark import SparkGBMClassifier, SparkGBMRanker, SparkGBMRegressor  # noqa: E402
from gbm.spark.io import MODEL_FILE  # noqa: E402
from tests.support.spark_cases import column_frame, local_spark, vector_frame  # noqa: E402

SMALL = dict(n_estimators=4, max_depth=3)


@pytest.fixture(scope="module")
def spark():
    session = local_spark(3)
    yield session
    session.stop()


def _data(n=240, f=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f))
    X[rng.random(size=X.shape) < 0.05] = np.nan
    return X, rng


def _same(spark_model, local_booster):
    assert spark_model.get_booster().to_json() == local_booster.to_json()


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_regressor_is_the_local_model_on_any_number_of_workers(spark, workers):
    X, rng = _data()
    y = 2 * np.nan_to_num(X[:, 0]) + rng.normal(size=len(X))
    df = vector_frame(spark, X, y, partitions=4)
    assert [r.label for r in df.collect()] == y.tolist()  # collect() order is the data's
    params = dict(SMALL, subsample=0.7, colsample_bynode=0.8, random_state=3)
    model = SparkGBMRegressor(num_workers=workers, **params).fit(df)
    _same(model, gbm.GBMRegressor(**params).fit(X, y).get_booster())
    assert model.recoveries_ == []


def test_classifier_with_a_validation_set_and_early_stopping(spark):
    X, rng = _data(300)
    y = (np.nan_to_num(X[:, 1]) + 0.5 * rng.normal(size=len(X)) > 0).astype(float)
    valid = rng.random(len(X)) < 0.3
    df = vector_frame(spark, X, y, partitions=3, is_valid=valid.tolist())
    params = dict(n_estimators=40, max_depth=3, learning_rate=0.5, early_stopping_rounds=2,
                  eval_metric="logloss")
    model = SparkGBMClassifier(num_workers=2, validation_indicator_col="is_valid",
                               **params).fit(df)
    local = gbm.GBMClassifier(**params)
    train_params = dict(local._train_params(), objective="binary:logistic")
    expected = gbm.train(train_params, X[~valid], y[~valid], num_boost_round=40,
                         evals=[(X[valid], y[valid], "validation")], early_stopping_rounds=2)
    booster = model.get_booster()
    assert booster.num_boosted_rounds < 40  # it stopped early
    assert booster.to_json() == expected.to_json()
    assert booster.best_iteration == expected.best_iteration
    assert booster.evals_result == expected.evals_result


def test_multiclass_predictions_are_the_local_ones(spark):
    X, rng = _data(270)
    y = np.digitize(np.nan_to_num(X[:, 0]) + 0.3 * rng.normal(size=len(X)), [-0.5, 0.5])
    df = vector_frame(spark, X, y.astype(float), partitions=5)
    model = SparkGBMClassifier(num_workers=3, pred_contrib_col="contrib",
                               pred_leaf_col="leaves", **SMALL).fit(df)
    local = gbm.GBMClassifier(**SMALL).fit(X, y)
    _same(model, local.get_booster())
    assert model.classes_.tolist() == [0.0, 1.0, 2.0]
    out = model.transform(df).collect()
    booster = local.get_booster()
    proba = np.array([r.probability.toArray() for r in out])
    np.testing.assert_allclose(proba, local.predict_proba(X), rtol=1e-12, atol=0)
    assert [r.prediction for r in out] == local.predict(X).astype(float).tolist()
    raw = np.array([r.rawPrediction.toArray() for r in out])
    np.testing.assert_allclose(raw, booster.predict(X, output_margin=True), rtol=1e-12)
    contrib = np.array([r.contrib for r in out])
    np.testing.assert_allclose(contrib, booster.predict(X, pred_contribs=True), rtol=1e-9)
    leaves = np.array([r.leaves for r in out])
    np.testing.assert_array_equal(leaves, booster.predict(X, pred_leaf=True))


def test_ranker_keeps_each_query_on_one_worker(spark):
    X, rng = _data(200)
    qid = np.sort(rng.integers(0, 25, size=len(X)))
    y = rng.integers(0, 4, size=len(X)).astype(float)
    group_w = rng.uniform(0.5, 2.0, size=25)
    df = vector_frame(spark, X, y, partitions=3, qid=qid.tolist(), w=group_w[qid].tolist())
    model = SparkGBMRanker(num_workers=2, qid_col="qid", weight_col="w", **SMALL).fit(df)
    present = np.unique(qid)
    local = gbm.GBMRanker(**SMALL).fit(X, y, qid=qid, sample_weight=group_w[present])
    _same(model, local.get_booster())
    scores = np.array([r.prediction for r in model.transform(df).collect()])
    np.testing.assert_allclose(scores, local.predict(X), rtol=1e-12)


def test_feature_columns_with_categorical_codes(spark):
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.integers(0, 6, size=240), rng.normal(size=240),
                         rng.normal(size=240)]).astype(float)
    y = np.where(np.isin(X[:, 0], [1, 4]), 3.0, -1.0) + X[:, 1] + 0.1 * rng.normal(size=240)
    df, names = column_frame(spark, X, y, partitions=3)
    params = dict(SMALL, categorical_features=[0], max_cat_to_onehot=2)
    model = SparkGBMRegressor(num_workers=2, features_col=names, **params).fit(df)
    local = gbm.GBMRegressor(**params).fit(X, y)
    assert model.get_booster().feature_names == names
    expected = gbm.train(dict(local._train_params()), X, y, num_boost_round=4,
                         feature_names=names, categorical_features=[0])
    assert model.get_booster().to_json() == expected.to_json()


def test_sparse_vectors_train_as_a_csr_matrix(spark):
    rng = np.random.default_rng(7)
    X = sp.random(250, 8, density=0.3, format="csr", random_state=7)
    y = np.asarray(X[:, 0].todense()).ravel() * 3 + rng.normal(size=250) * 0.1
    df = vector_frame(spark, X, y, partitions=3, sparse=True)
    model = SparkGBMRegressor(num_workers=2, **SMALL).fit(df)
    _same(model, gbm.GBMRegressor(**SMALL).fit(X, y).get_booster())
    pred = np.array([r.prediction for r in model.transform(df).collect()])
    np.testing.assert_allclose(pred, model.get_booster().predict(X), rtol=1e-12)


def test_an_array_column_with_base_margins(spark):
    X, rng = _data(200, 4)
    y = rng.poisson(np.exp(0.5 * np.nan_to_num(X[:, 0]))).astype(float)
    margin = rng.normal(scale=0.2, size=len(X))
    df = spark.createDataFrame(
        spark.sparkContext.parallelize([([float(v) for v in X[i]], float(y[i]), float(margin[i]))
                                        for i in range(len(X))], 3), ["x", "label", "m"])
    params = dict(SMALL, objective="count:poisson")
    model = SparkGBMRegressor(num_workers=3, features_col="x", base_margin_col="m",
                              **params).fit(df)
    local = gbm.GBMRegressor(**params).fit(X, y, base_margin=margin)
    _same(model, local.get_booster())
    pred = np.array([r.prediction for r in model.transform(df).collect()])
    np.testing.assert_allclose(pred, local.predict(X, base_margin=margin), rtol=1e-12)


def test_save_and_load_hold_the_model_file(spark, tmp_path):
    from pyspark.ml import Pipeline, PipelineModel

    from gbm.spark import SparkGBMClassifierModel

    X, rng = _data(150, 3)
    y = (np.nan_to_num(X[:, 0]) > 0).astype(float)
    df = vector_frame(spark, X, y, partitions=2)
    model = SparkGBMClassifier(num_workers=2, max_depth=2, n_estimators=3).fit(df)
    path = str(tmp_path / "model")
    model.write().overwrite().save(path)
    loaded = SparkGBMClassifierModel.load(path)
    assert loaded.get_booster().to_json() == model.get_booster().to_json()
    assert loaded.classes_.tolist() == [0.0, 1.0] and loaded.getOrDefault("max_depth") == 2
    model.get_booster().save_model(str(tmp_path / "local.json"))
    saved = (tmp_path / "model" / MODEL_FILE).read_bytes()
    assert saved == (tmp_path / "local.json").read_bytes()  # gbm's model file, as it is
    assert gbm.Booster.load_model(str(tmp_path / "model" / MODEL_FILE)).to_json() == \
        model.get_booster().to_json()
    pipeline = Pipeline(stages=[SparkGBMClassifier(num_workers=1, max_depth=2,
                                                   n_estimators=2)]).fit(df)
    pipeline.write().overwrite().save(str(tmp_path / "pipeline"))
    again = PipelineModel.load(str(tmp_path / "pipeline"))
    first = [r.probability for r in pipeline.transform(df).collect()]
    assert [r.probability for r in again.transform(df).collect()] == first
    part = next(p for p in (tmp_path / "model" / "metadata").glob("part-*")
                if not p.name.endswith(".crc"))
    meta = json.loads(part.read_text().splitlines()[0])
    assert meta["class"].endswith("SparkGBMClassifierModel")


def test_pipeline_and_cross_validator(spark):
    from pyspark.ml import Pipeline
    from pyspark.ml.evaluation import BinaryClassificationEvaluator
    from pyspark.ml.feature import VectorAssembler
    from pyspark.ml.tuning import CrossValidator, ParamGridBuilder

    rng = np.random.default_rng(11)
    X = rng.normal(size=(160, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=160) > 0).astype(float)
    df, names = column_frame(spark, X, y, partitions=2)
    clf = SparkGBMClassifier(num_workers=2, n_estimators=3)
    pipeline = Pipeline(stages=[VectorAssembler(inputCols=names, outputCol="features"), clf])
    grid = ParamGridBuilder().addGrid(clf.max_depth, [1, 3]).build()
    cv = CrossValidator(estimator=pipeline, estimatorParamMaps=grid, numFolds=2, seed=1,
                        evaluator=BinaryClassificationEvaluator())
    fitted = cv.fit(df)
    best = fitted.bestModel.stages[-1]
    assert len(fitted.avgMetrics) == 2 and best.getOrDefault("max_depth") in (1, 3)
    assert best.get_booster().params["max_depth"] == best.getOrDefault("max_depth")
    assert BinaryClassificationEvaluator().evaluate(fitted.transform(df)) > 0.8


def test_bad_input_names_the_argument(spark):
    X, rng = _data(60, 3)
    y = rng.normal(size=60)
    df = vector_frame(spark, X, y, partitions=2)
    with pytest.raises(ValueError, match="label_col='target'.*no such column"):
        SparkGBMRegressor(label_col="target").fit(df)
    with pytest.raises(ValueError, match="num_workers must be an integer >= 1.*got 0"):
        SparkGBMRegressor(num_workers=0).fit(df)
    with pytest.raises(ValueError, match="num_workers=4 is more than the 3 task slot"):
        SparkGBMRegressor(num_workers=4).fit(df)
    with pytest.raises(TypeError, match="unexpected parameter.*max_dept"):
        SparkGBMRegressor(max_dept=3)
    from pyspark.ml.linalg import Vectors

    mixed = spark.createDataFrame([(Vectors.dense([1.0, 2.0]), 1.0),
                                   (Vectors.dense([1.0, 2.0, 3.0]), 2.0)] * 5,
                                  ["features", "label"])
    with pytest.raises(ValueError, match="features_col holds vectors of different sizes"):
        SparkGBMRegressor(num_workers=2, n_estimators=2).fit(mixed)
    with pytest.raises(ValueError, match="y contains NaN|label"):
        SparkGBMRegressor(num_workers=2, n_estimators=2).fit(
            vector_frame(spark, X, np.r_[np.nan, y[1:]], partitions=2))
