"""Estimator contracts: scikit-learn's checks, clone, pickle, pipelines, search, pandas."""
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from gbm import GBMClassifier, GBMRegressor


@parametrize_with_checks([GBMRegressor(n_estimators=10), GBMClassifier(n_estimators=10)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("Estimator, make", [(GBMClassifier, make_classification),
                                              (GBMRegressor, make_regression)])
def test_clone_pickle_pipeline_search(Estimator, make):
    X, y = make(600, 6, random_state=0)
    model = Estimator(n_estimators=20, max_depth=3).fit(X, y)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    fresh = clone(model)
    assert fresh.get_params() == model.get_params() and not hasattr(fresh, "_Booster")
    pipe = make_pipeline(StandardScaler(), Estimator(n_estimators=10)).fit(X, y)
    assert pipe.score(X, y) > 0.5
    search = GridSearchCV(Estimator(n_estimators=10), {"max_depth": [2, 4]}, cv=3).fit(X, y)
    assert search.best_params_["max_depth"] in (2, 4)
    scores = cross_val_score(Estimator(n_estimators=10), X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.3)


def test_string_labels_and_multiclass():
    X, y = make_classification(900, 6, n_informative=4, n_classes=3, random_state=1)
    labels = np.array(["cat", "dog", "emu"])[y]
    clf = GBMClassifier(n_estimators=20).fit(X, labels)
    assert list(clf.classes_) == ["cat", "dog", "emu"]
    assert clf.predict_proba(X).shape == (900, 3)
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    assert set(clf.predict(X)) <= {"cat", "dog", "emu"} and clf.score(X, labels) > 0.8


def test_pandas_feature_names_and_nullable_columns():
    pd = pytest.importorskip("pandas")
    X, y = make_regression(300, 3, random_state=2)
    df = pd.DataFrame(X, columns=["alpha", "beta", "gamma"])
    df["beta"] = df["beta"].astype("Float64")
    df.loc[::7, "beta"] = pd.NA
    df["flag"] = (df["alpha"] > 0).astype("boolean")
    model = GBMRegressor(n_estimators=10).fit(df, y)
    assert list(model.feature_names_in_) == ["alpha", "beta", "gamma", "flag"]
    assert model.n_features_in_ == 4
    assert model.get_booster().feature_names == ["alpha", "beta", "gamma", "flag"]
    assert np.isfinite(model.predict(df)).all()
