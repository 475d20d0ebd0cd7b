"""The CPU benchmark cases of BENCHMARKS.md: their data, each library's estimator with the
shared settings, the fit arguments and the test metric."""
import numpy as np

# case -> settings; "rows" only for the synthetic cases whose size --rows may change
CASES = {
    "clf-1m": {"task": "binary", "rounds": 100, "depth": 6, "rows": 1_000_000},
    "reg-1m": {"task": "regression", "rounds": 100, "depth": 6, "rows": 1_000_000},
    "multi-73k": {"task": "multiclass", "rounds": 200, "depth": 6},
    "flights": {"task": "binary", "rounds": 200, "depth": 8, "categorical": True},
    "evals-20k": {"task": "binary", "rounds": 500, "depth": 6, "evals": 2},
}
# the rows curve (issue 28): binary, 10 float features, 200 rounds depth 6, from 5,000 to
# 1,000,000 training rows: the fixed cost per round shows at the small end
CURVE_ROWS = (5_000, 20_000, 50_000, 200_000, 1_000_000)
CURVE_LIBS = ("gbm", "xgboost", "lightgbm")
for _rows in CURVE_ROWS:
    CASES[f"rows-{_rows // 1000}k" if _rows < 10**6 else f"rows-{_rows // 10**6}m"] = {
        "task": "binary", "rounds": 200, "depth": 6, "curve_rows": _rows, "libs": CURVE_LIBS}
LIBS = ("gbm", "xgboost", "lightgbm", "sklearn")
LEARNING_RATE, MAX_BIN = 0.1, 256
MULTI_LEVELS = (2, 10, 50, 300, 1_000, 3_000)  # multi-73k: distinct values of its 6 features


def make_data(case, rows=None):
    """``(X_train, y_train, X_test, y_test, evals)``: ``evals`` a list of (X, y) eval sets."""
    from sklearn.datasets import make_classification, make_regression
    if case in ("clf-1m", "reg-1m"):
        rows = rows or CASES[case]["rows"]
        if case == "clf-1m":
            X, y = make_classification(n_samples=rows, n_features=28, n_informative=20,
                                       random_state=0)
        else:
            X, y = make_regression(n_samples=rows, n_features=28, n_informative=20, noise=10,
                                   random_state=0)
        X, n_train = X.astype(np.float32), rows * 4 // 5
        return X[:n_train], y[:n_train], X[n_train:], y[n_train:], []
    if "curve_rows" in CASES[case]:  # the training rows, then a fifth as many to test
        n = CASES[case]["curve_rows"]
        X, y = make_classification(n_samples=n + n // 5, n_features=10, n_informative=6,
                                   random_state=0)
        X = X.astype(np.float32)
        return X[:n], y[:n], X[n:], y[n:], []
    if case == "multi-73k":
        return _multi_73k()
    if case == "flights":
        from gbm.cli.demo import load_flights
        X, y, train = load_flights()
        return X[train], y[train], X[~train], y[~train], []
    # evals-20k: 20k training rows, two eval sets of 10k, a 10k test set
    X, y = make_classification(n_samples=50_000, n_features=20, n_informative=12, random_state=1)
    X = X.astype(np.float32)
    return X[:20_000], y[:20_000], X[40_000:], y[40_000:], \
        [(X[20_000:30_000], y[20_000:30_000]), (X[30_000:40_000], y[30_000:40_000])]


def _multi_73k():
    """5 classes, 73k rows (58,400 train), 6 integer features with 2 to 3,000 levels: a
    shape where per-node overhead, not row work, dominates."""
    rng = np.random.default_rng(7)
    n = 73_000
    X = np.column_stack([rng.integers(0, k, n) for k in MULTI_LEVELS]).astype(np.float32)
    score = np.column_stack([np.sin(X[:, 5] / 400.0 + c) + 0.8 * np.cos(X[:, 4] / 150.0 * (c + 1))
                             + 0.5 * (X[:, 0] == c % 2) + 0.3 * np.sin(X[:, 3] / 40.0 - c)
                             + 0.2 * (X[:, 1] % 5 == c) + 0.1 * (X[:, 2] / 50.0) * c
                             for c in range(5)])
    y = np.argmax(score + rng.gumbel(size=score.shape), axis=1).astype(np.float64)
    n_train = n * 4 // 5
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:], []


def make_estimator(lib, case, n_jobs):
    """An unfitted estimator with the case's shared hyperparameters (each library's names)."""
    s = CASES[case]
    classify = s["task"] != "regression"
    rounds, depth = s["rounds"], s["depth"]
    metrics = {"gbm": ["logloss", "auc"], "xgboost": ["logloss", "auc"],
               "lightgbm": ["binary_logloss", "auc"]} if s.get("evals") else {}
    if lib == "gbm":
        from gbm import GBMClassifier, GBMRegressor
        return (GBMClassifier if classify else GBMRegressor)(
            n_estimators=rounds, max_depth=depth, learning_rate=LEARNING_RATE, max_bin=MAX_BIN,
            n_jobs=n_jobs, eval_metric=metrics.get("gbm"))
    if lib == "xgboost":
        import xgboost
        return (xgboost.XGBClassifier if classify else xgboost.XGBRegressor)(
            n_estimators=rounds, max_depth=depth, learning_rate=LEARNING_RATE, max_bin=MAX_BIN,
            tree_method="hist", n_jobs=n_jobs, enable_categorical=s.get("categorical", False),
            eval_metric=metrics.get("xgboost"))
    if lib == "lightgbm":
        import lightgbm
        return (lightgbm.LGBMClassifier if classify else lightgbm.LGBMRegressor)(
            n_estimators=rounds, max_depth=depth, num_leaves=2 ** depth,
            learning_rate=LEARNING_RATE, max_bin=MAX_BIN, n_jobs=n_jobs, verbose=-1)
    if s.get("evals"):
        raise NotImplementedError("scikit-learn's HistGradientBoosting takes no eval sets")
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    return (HistGradientBoostingClassifier if classify else HistGradientBoostingRegressor)(
        max_iter=rounds, max_depth=depth, learning_rate=LEARNING_RATE,
        max_leaf_nodes=2 ** depth, early_stopping=False, max_bins=255,
        categorical_features="from_dtype")


def fit_kwargs(lib, case, evals):
    """Extra ``fit`` arguments: the eval sets (scored after every round)."""
    if not evals:
        return {}
    if lib == "lightgbm":
        return {"eval_set": evals, "eval_metric": ["binary_logloss", "auc"]}
    if lib == "xgboost":
        return {"eval_set": evals, "verbose": False}
    return {"eval_set": evals}


def score(case, model, X_test, y_test):
    """``(prediction seconds, metric name, test metric)``."""
    import time

    from sklearn.metrics import log_loss, mean_squared_error, roc_auc_score
    task = CASES[case]["task"]
    t0 = time.perf_counter()
    pred = model.predict(X_test) if task == "regression" else model.predict_proba(X_test)
    seconds = time.perf_counter() - t0
    if task == "regression":
        return seconds, "RMSE", float(mean_squared_error(y_test, pred) ** 0.5)
    if task == "binary":
        return seconds, "AUC", float(roc_auc_score(y_test, pred[:, 1]))
    return seconds, "logloss", float(log_loss(y_test, pred, labels=np.arange(pred.shape[1])))
