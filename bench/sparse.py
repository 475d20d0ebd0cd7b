"""``python -m bench sparse``: wide sparse data (issue 25), gbm against xgboost and LightGBM:
fit time, peak memory of the fit and the test metric, written to ``bench/RESULTS_sparse.md``.

Cases (SciPy CSR input for every library; 50 rounds, depth 6, learning rate 0.1,
max_bin 256, all cores):

* ``csr-50k``: 50,000 x 10,000 at 0.1% density, binary: uniform values, the columns'
  densities falling as a power law (the densest near 5%, the sparsest a few rows); the
  label a logistic draw from the values of 40 of the 100 densest columns;
* ``hashed-200k``: hashed text, 200,000 rows x 2**20 columns, n-gram counts: 40 tokens a
  row drawn from a Zipf law (a = 1.1) over 2,000,000 n-grams, hashed into the columns
  (about 27 distinct a row), binary: a logistic draw from the counts of 2,000 of the
  20,000 most frequent columns;
* ``onehot-3x10k``: three categorical variables of 10,000 levels, one-hot encoded (30,000
  columns, 3 entries a row), 200,000 rows, regression: level ``k`` drawn with weight
  ``1 / (k + 10)`` (a few common levels, a long tail), the label the sum of a normal
  effect per level and unit noise.

Test sets: 25% more rows drawn the same way. Each library runs in its own ``spawn``
process per case: a first fit (round 0: compile and warm caches, not in the medians),
then ``--repeats`` timed fits, the libraries interleaved. Peak fit memory: as
``bench/run.py`` measures it, the rise of the process's resident memory during the fit
above its level just before (VmHWM reset through /proc/self/clear_refs); the input CSR
matrix is loaded before and not counted.
"""
import argparse
import contextlib
import datetime
import importlib.metadata
import multiprocessing as mp
import os
import pickle
import platform
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from bench.run import _free_memory, _proc_status_mb, _recv, _reset_peak_rss  # noqa: E402

CASES = {
    "csr-50k": {"task": "binary", "rows": 50_000},
    "hashed-200k": {"task": "binary", "rows": 200_000},
    "onehot-3x10k": {"task": "regression", "rows": 200_000},
}
LIBS = ("gbm", "xgboost", "lightgbm")
ROUNDS, DEPTH, LEARNING_RATE, MAX_BIN = 50, 6, 0.1, 256


def make_data(case, scale=1.0):
    """``(X_train, y_train, X_test, y_test)``: SciPy CSR float64 matrices and labels;
    ``scale`` shrinks the row counts (quick runs)."""
    import scipy.sparse as sp

    n_train = max(1000, int(CASES[case]["rows"] * scale))
    n = n_train + n_train // 4
    rng = np.random.default_rng({"csr-50k": 1, "hashed-200k": 2, "onehot-3x10k": 3}[case])
    if case == "csr-50k":
        n_cols = 10_000
        density = 1.0 / np.arange(1, n_cols + 1) ** 0.6
        density *= 0.001 * n_cols / density.sum()  # 0.1% of the cells in all
        counts = rng.binomial(n, np.minimum(density, 1.0))
        rows = np.concatenate([rng.choice(n, c, replace=False) for c in counts])
        cols = np.repeat(np.arange(n_cols), counts)
        X = sp.csr_matrix((rng.random(rows.size), (rows, cols)), shape=(n, n_cols))
        w = np.zeros(n_cols)
        w[rng.choice(100, 40, replace=False)] = rng.normal(size=40) * 10
        logit = X @ w - (X > 0) @ (w * 0.5)  # a value above / below 0.5: up / down
        y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float64)
    elif case == "hashed-200k":
        width, per_row = 2**20, 40
        tokens = np.minimum(rng.zipf(1.1, size=n * per_row), 2_000_000) - 1
        cols = (tokens.astype(np.int64) * 2654435761) % width
        X = sp.csr_matrix((np.ones(n * per_row), (np.repeat(np.arange(n), per_row), cols)),
                          shape=(n, width))
        X.sum_duplicates()
        frequent = np.argsort(-np.bincount(X.indices, minlength=width), kind="stable")[:20_000]
        w = np.zeros(width)
        w[rng.choice(frequent, 2_000, replace=False)] = rng.normal(size=2_000)
        logit = X @ w
        y = (rng.random(n) < 1 / (1 + np.exp(-2 * (logit - np.median(logit))))).astype(np.float64)
    else:
        levels = 10_000
        p = 1.0 / (np.arange(levels) + 10.0)
        codes = rng.choice(levels, size=(n, 3), p=p / p.sum())
        effects = rng.normal(size=(3, levels))
        y = effects[0, codes[:, 0]] + effects[1, codes[:, 1]] + effects[2, codes[:, 2]] \
            + rng.normal(size=n)
        cols = (codes + np.arange(3) * levels).ravel()
        X = sp.csr_matrix((np.ones(3 * n), (np.repeat(np.arange(n), 3), cols)),
                          shape=(n, 3 * levels))
    X = X.tocsr()
    X.sort_indices()
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def make_estimator(lib, case, n_jobs):
    classify = CASES[case]["task"] == "binary"
    if lib == "gbm":
        from gbm import GBMClassifier, GBMRegressor
        return (GBMClassifier if classify else GBMRegressor)(
            n_estimators=ROUNDS, max_depth=DEPTH, learning_rate=LEARNING_RATE, max_bin=MAX_BIN,
            n_jobs=n_jobs)
    if lib == "xgboost":
        import xgboost
        return (xgboost.XGBClassifier if classify else xgboost.XGBRegressor)(
            n_estimators=ROUNDS, max_depth=DEPTH, learning_rate=LEARNING_RATE, max_bin=MAX_BIN,
            tree_method="hist", n_jobs=n_jobs)
    import lightgbm
    return (lightgbm.LGBMClassifier if classify else lightgbm.LGBMRegressor)(
        n_estimators=ROUNDS, max_depth=DEPTH, num_leaves=2 ** DEPTH, learning_rate=LEARNING_RATE,
        max_bin=MAX_BIN, n_jobs=n_jobs, verbose=-1)


def score(case, model, X, y):
    from sklearn.metrics import mean_squared_error, roc_auc_score

    t0 = time.perf_counter()
    if CASES[case]["task"] == "binary":
        pred = model.predict_proba(X)[:, 1]
        return time.perf_counter() - t0, "AUC", float(roc_auc_score(y, pred))
    pred = model.predict(X)
    return time.perf_counter() - t0, "RMSE", float(mean_squared_error(y, pred) ** 0.5)


def _worker(conn, lib, case, data_file, n_jobs):
    """One library on one case: load the data, then fit on each 'fit' message."""
    try:
        make_estimator(lib, case, n_jobs)  # the library imported before the baseline
        Xtr, ytr, Xte, yte = pickle.loads(Path(data_file).read_bytes())
        _free_memory()
        conn.send({"ready": True})
    except BaseException as e:  # noqa: BLE001 - reported in the table
        conn.send({"error": f"{type(e).__name__}: {e}"})
        return
    while conn.recv() == "fit":
        try:
            model = None
            _free_memory()
            before, reset = _proc_status_mb("VmRSS"), _reset_peak_rss()
            model = make_estimator(lib, case, n_jobs)
            t0 = time.perf_counter()
            model.fit(Xtr, ytr)
            fit_s = time.perf_counter() - t0
            peak = _proc_status_mb("VmHWM") - before if reset else None
            predict_s, metric_name, metric = score(case, model, Xte, yte)
            conn.send({"fit_s": fit_s, "peak_mb": peak, "predict_s": predict_s,
                       "metric": metric, "metric_name": metric_name})
        except Exception as e:  # noqa: BLE001 - reported in the table
            conn.send({"error": f"{type(e).__name__}: {e}"})


def run_case(case, libs, repeats, n_jobs, scale, tmp):
    """``(data facts, {lib: {"runs": [...], "error": ...}})``."""
    data = make_data(case, scale)
    X = data[0]
    facts = {"shape": X.shape, "nnz": int(X.nnz),
             "csr_mb": (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20}
    data_file = Path(tmp) / f"{case}.pkl"
    data_file.write_bytes(pickle.dumps(data))
    del data, X
    ctx = mp.get_context("spawn")
    res = {lib: {"runs": [], "error": None} for lib in libs}
    workers = {}
    try:
        for lib in libs:
            parent, child = ctx.Pipe()
            workers[lib] = (parent, ctx.Process(target=_worker,
                                                args=(child, lib, case, str(data_file), n_jobs)))
            workers[lib][1].start()
            res[lib]["error"] = _recv(*workers[lib]).get("error")
        for rnd in range(repeats + 1):
            for lib in [lib for lib in libs if not res[lib]["error"]]:
                workers[lib][0].send("fit")
                r = _recv(*workers[lib])
                res[lib]["error"] = r.get("error")
                res[lib]["runs"] += [] if "error" in r else [r]
                print(f"[bench sparse] {case} round {rnd} {lib:9s} " + (
                    f"error: {r['error']}" if "error" in r else
                    f"fit {r['fit_s']:8.2f} s  peak {r['peak_mb'] or float('nan'):7.0f} MB  "
                    f"{r['metric_name']} {r['metric']:.4f}  load {os.getloadavg()[0]:.2f}"),
                    file=sys.stderr, flush=True)
    finally:
        for parent, proc in workers.values():
            with contextlib.suppress(OSError):
                parent.send("stop")
            proc.join(30)
            if proc.is_alive():
                proc.terminate()
    return facts, res


def _f(x, fmt="{:.2f}"):
    return "—" if x is None or x != x else fmt.format(x)


def report(results, args, command, load_start):
    def version(dist):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    lines = ["# gbm benchmark: wide sparse data (`python -m bench sparse`)", "",
             f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
             f"- machine: {os.cpu_count()} CPUs, {platform.platform()}; load average at start "
             f"{load_start:.2f}, at end {os.getloadavg()[0]:.2f}",
             "- versions: " + ", ".join(f"{n} {version(d)}" for n, d in (
                 ("gbm", "detgbm"), ("numpy",) * 2, ("numba",) * 2, ("scipy",) * 2,
                 ("xgboost",) * 2, ("lightgbm",) * 2)),
             f"- command: `{command}`",
             f"- settings: {ROUNDS} rounds, depth {DEPTH}, learning rate {LEARNING_RATE}, max_bin "
             f"{MAX_BIN}, n_jobs {args.n_jobs}, {args.repeats} timed fit(s) after a first one, "
             f"libraries interleaved" + (f"; rows scaled by {args.scale}" if args.scale != 1 else ""),
             ""]
    if load_start > 0.5 * (os.cpu_count() or 1):
        lines += [f"**Warning:** the machine was busy (load average {load_start:.2f} on "
                  f"{os.cpu_count()} CPUs): times are unreliable, ratios less so.", ""]
    lines += ["| case | train rows x columns, stored | CSR input MB | library | fit s (median) | "
              "1st fit s | peak fit MB | peak / input | test metric | fit gbm/lib |",
              "|---|---|--:|---|--:|--:|--:|--:|---|--:|"]
    for case, (facts, per_lib) in results.items():
        med = {lib: statistics.median(x["fit_s"] for x in r["runs"][1:]) if r["runs"][1:]
               else None for lib, r in per_lib.items()}
        shape = f"{facts['shape'][0]:,} x {facts['shape'][1]:,}, {facts['nnz']:,}"
        for lib, r in per_lib.items():
            timed = r["runs"][1:]
            if not timed:
                lines.append(f"| {case} | {shape} | {_f(facts['csr_mb'], '{:.0f}')} | {lib} | "
                             f"error: {(r['error'] or '')[:120].replace('|', '/')} |" + " |" * 5)
                continue
            peak = max((x["peak_mb"] for x in timed), default=None)
            ratio = "—" if lib == "gbm" or not med.get("gbm") else _f(med["gbm"] / med[lib])
            lines.append(
                f"| {case} | {shape} | {_f(facts['csr_mb'], '{:.0f}')} | {lib} | {_f(med[lib])} | "
                f"{_f(r['runs'][0]['fit_s'])} | {_f(peak, '{:.0f}')} | "
                f"{_f(peak / facts['csr_mb'] if peak is not None else None)} | "
                f"{timed[-1]['metric_name']} {_f(timed[-1]['metric'], '{:.4f}')} | {ratio} |")
    lines += ["", "Notes:", "",
              "- fit s: median of the timed fits; 1st fit s: the first fit in the library's fresh "
              "process (gbm: Numba's compile or cache load included).",
              "- peak fit MB: the rise of the process's resident memory during a timed fit above "
              "its level just before it (the input already loaded); peak / input: that over the "
              "CSR input's bytes (data, indices, indptr).",
              "- test metric: AUC (binary) or RMSE (regression) on the test rows.",
              "- the issue's targets: csr-50k fit time and memory at most xgboost's; hashed-200k "
              "at most LightGBM's time and twice the input's memory; onehot-3x10k at most "
              "LightGBM's time and a test metric within 0.5% of the best peer's."]
    return "\n".join(lines) + "\n"


def main(argv=None, prog=None):
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default=",".join(CASES), help="comma list of: " + ", ".join(CASES))
    ap.add_argument("--libs", default=",".join(LIBS), help="comma list of: " + ", ".join(LIBS))
    ap.add_argument("--repeats", type=int, default=1, help="timed fits per library (median)")
    ap.add_argument("--n-jobs", type=int, default=os.cpu_count(), help="threads")
    ap.add_argument("--scale", type=float, default=1.0, help="row counts times this (quick runs)")
    ap.add_argument("--out", help="Markdown file (default bench/RESULTS_sparse.md at scale 1)")
    args = ap.parse_args(argv)
    cases, libs = args.cases.split(","), args.libs.split(",")
    bad = [c for c in cases if c not in CASES] + [lib for lib in libs if lib not in LIBS]
    if bad or args.repeats < 1 or not 0 < args.scale <= 1:
        ap.error(f"unknown case/library {bad}" if bad else "need --repeats >= 1, 0 < --scale <= 1")
    argv = sys.argv[1:] if argv is None else argv
    command = f"{prog or sys.executable + ' -m bench sparse'} {shlex.join(argv)}".rstrip()
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="gbm-bench-sparse-") as tmp:
        results = {case: run_case(case, libs, args.repeats, args.n_jobs, args.scale, tmp)
                   for case in cases}
    text = report(results, args, command, load_start)
    print(text)
    out = args.out or (str(ROOT / "bench" / "RESULTS_sparse.md") if args.scale == 1 else None)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    print(f"[bench sparse] written to {out}" if out else "[bench sparse] scaled rows and no "
          "--out: nothing written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
