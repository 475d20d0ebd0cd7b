"""``python -m bench extmem``: data larger than memory (issue 26), written to
``bench/RESULTS_extmem.md``.

The case: ``--rows`` (20,000,000 by default) x 28 float32 rows given as ``--batches`` (40)
batches, binary labels, 100 rounds depth 6, learning rate 0.1, max_bin 256, all cores.
Batch ``b`` is drawn from its own seed, so an iterator makes it again on each pass and
never holds more than one batch. Runs, each in its own ``spawn`` process, one after the
other:

* ``gbm memory``: the batches concatenated into one float32 array, ``gbm.train`` on it;
* ``gbm QuantileDMatrix``: ``gbm.QuantileDMatrix(iterator)`` (bins in memory), then train;
* ``gbm ExtMemQuantileDMatrix``: pages on disk (a temporary folder), then train;
* ``xgboost QuantileDMatrix`` and ``xgboost ExtMemQuantileDMatrix``: the same iterator
  through ``xgboost.DataIter``, ``tree_method="hist"``.

Reported per run: the seconds to make the data (concatenate, or bin the stream), the fit's
seconds, the peak resident memory of the process above its level after imports (VmHWM,
reset through /proc/self/clear_refs): of the data making and the fit together, and of the
fit alone (above the level just before it), and for gbm whether the model file equals the
in-memory one (a SHA-256 of ``to_json()``).
"""
import argparse
import datetime
import hashlib
import importlib.metadata
import multiprocessing as mp
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from bench.run import _free_memory, _proc_status_mb, _recv, _reset_peak_rss  # noqa: E402

N_FEATURES, ROUNDS, DEPTH, LEARNING_RATE, MAX_BIN = 28, 100, 6, 0.1, 256
RUNS = ("gbm memory", "gbm QuantileDMatrix", "gbm ExtMemQuantileDMatrix",
        "xgboost QuantileDMatrix", "xgboost ExtMemQuantileDMatrix")


def batch(b, bounds):
    """Batch ``b`` (rows ``bounds[b] .. bounds[b + 1]``): ``(X float32, y float64)``."""
    rng = np.random.default_rng(1000 + b)
    n = int(bounds[b + 1] - bounds[b])
    X = rng.standard_normal((n, N_FEATURES), dtype=np.float32)
    logit = X[:, :10] @ np.linspace(-1.0, 1.0, 10, dtype=np.float32) + X[:, 10] * X[:, 11]
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.float64)
    return X, y


def _iterator(base, bounds, cache_prefix=None):
    """A ``base`` (``gbm.DataIter`` or ``xgboost.DataIter``) subclass over the batches."""

    class Batches(base):
        def __init__(self):
            self.i = 0
            super().__init__(cache_prefix=cache_prefix)

        def next(self, input_data):
            if self.i >= len(bounds) - 1:
                return False
            X, y = batch(self.i, bounds)
            input_data(data=X, label=y)
            self.i += 1
            return True

        def reset(self):
            self.i = 0

    return Batches()


def _worker(conn, run, rows, n_batches, n_jobs, tmp):
    try:
        bounds = np.linspace(0, rows, n_batches + 1).astype(np.int64)
        lib = run.split()[0]
        if lib == "gbm":
            import gbm
            params = {"objective": "binary:logistic", "max_depth": DEPTH,
                      "learning_rate": LEARNING_RATE, "max_bin": MAX_BIN, "n_jobs": n_jobs}
            gbm.train(params, *batch(0, [0, 2000]), 2)  # compile before the baseline
        else:
            import xgboost
            params = {"objective": "binary:logistic", "max_depth": DEPTH, "eta": LEARNING_RATE,
                      "max_bin": MAX_BIN, "nthread": n_jobs, "tree_method": "hist"}
        _free_memory()
        base, reset = _proc_status_mb("VmRSS"), _reset_peak_rss()
        t0 = time.perf_counter()
        if run == "gbm memory":
            parts = [batch(b, bounds) for b in range(n_batches)]
            X = np.concatenate([p[0] for p in parts])
            y = np.concatenate([p[1] for p in parts])
            del parts
            data = gbm.DMatrix(X, label=y)
        elif run == "gbm QuantileDMatrix":
            data = gbm.QuantileDMatrix(_iterator(gbm.DataIter, bounds), max_bin=MAX_BIN)
        elif run == "gbm ExtMemQuantileDMatrix":
            data = gbm.ExtMemQuantileDMatrix(_iterator(gbm.DataIter, bounds), max_bin=MAX_BIN,
                                             cache_prefix=tmp)
        elif run == "xgboost QuantileDMatrix":
            data = xgboost.QuantileDMatrix(_iterator(xgboost.DataIter, bounds),
                                           max_bin=MAX_BIN, nthread=n_jobs)
        else:
            data = xgboost.ExtMemQuantileDMatrix(
                _iterator(xgboost.DataIter, bounds, os.path.join(tmp, "xgb")),
                max_bin=MAX_BIN, nthread=n_jobs)
        data_s = time.perf_counter() - t0
        _free_memory()
        before = _proc_status_mb("VmRSS")
        peak_data = _proc_status_mb("VmHWM") - base if reset else None
        reset_fit = _reset_peak_rss()
        t0 = time.perf_counter()
        if lib == "gbm":
            booster = gbm.train(params, data, ROUNDS)
            model = hashlib.sha256(booster.to_json().encode()).hexdigest()[:16]
            passes = getattr(getattr(data.data, "matrix", None), "passes", None)
        else:
            booster = xgboost.train(params, data, ROUNDS)
            model, passes = None, None
        fit_s = time.perf_counter() - t0
        peak_fit = _proc_status_mb("VmHWM") - before if reset_fit else None
        peak_all = max(peak_data or 0, _proc_status_mb("VmHWM") - base) if reset else None
        conn.send({"data_s": data_s, "fit_s": fit_s, "peak_mb": peak_all,
                   "peak_fit_mb": peak_fit, "model": model, "passes": passes,
                   "disk_mb": _disk_mb(tmp)})
    except BaseException as e:  # reported in the table
        conn.send({"error": f"{type(e).__name__}: {e}"})


def _disk_mb(folder):
    return sum(f.stat().st_size for f in Path(folder).rglob("*") if f.is_file()) / 2**20


def run_all(runs, rows, n_batches, n_jobs):
    ctx = mp.get_context("spawn")
    results = {}
    for run in runs:
        with tempfile.TemporaryDirectory(prefix="gbm-bench-extmem-") as tmp:
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(child, run, rows, n_batches, n_jobs, tmp))
            proc.start()
            results[run] = _recv(parent, proc)
            proc.join()
        print(run, results[run], flush=True)
    return results


def _f(x, fmt="{:.1f}"):
    return "-" if x is None else fmt.format(x)


def report(results, args, command, load):
    memory = results.get("gbm memory", {})
    lines = ["# gbm benchmark: data larger than memory (issue 26)", "",
             f"- command: `{command}`",
             f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
             f"- machine: {os.cpu_count()} CPUs; load average at start {load[0]:.2f}, "
             f"at end {os.getloadavg()[0]:.2f} (a shared machine: times are indicative)",
             f"- versions: gbm {importlib.metadata.version('detgbm')}, xgboost "
             f"{_version('xgboost')}, numpy {np.__version__}",
             f"- data: {args.rows:,} x {N_FEATURES} float32 in {args.batches} batches "
             f"({args.rows * N_FEATURES * 4 / 2**20:,.0f} MB of floats); {ROUNDS} rounds, depth "
             f"{DEPTH}, max_bin {MAX_BIN}, n_jobs {args.n_jobs}"
             + ("" if args.rows == 20_000_000 else
                " (a smaller run than the issue's 20,000,000 rows: --rows)"), "",
             "| run | make data s | fit s | fit / memory fit | peak MB (data + fit) | "
             "peak / memory's | peak MB (fit) | page passes | cache MB | model = memory's |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for run, r in results.items():
        if "error" in r:
            lines.append(f"| {run} | error: {r['error']} |||||||||")
            continue
        same = "-" if r["model"] is None or memory.get("model") is None else (
            "yes" if r["model"] == memory["model"] else "NO")  # no memory run: nothing to match
        lines.append(
            f"| {run} | {_f(r['data_s'])} | {_f(r['fit_s'])} | "
            f"{_f(r['fit_s'] / memory['fit_s'] if memory.get('fit_s') else None, '{:.2f}')} | "
            f"{_f(r['peak_mb'], '{:.0f}')} | "
            f"{_f(r['peak_mb'] / memory['peak_mb'] if memory.get('peak_mb') else None, '{:.2f}')}"
            f" | {_f(r['peak_fit_mb'], '{:.0f}')} | {_f(r['passes'], '{}')} | "
            f"{_f(r['disk_mb'], '{:.0f}')} | {same} |")
    lines += ["", "- peak MB (data + fit): the rise of the process's resident memory above its "
              "level after imports and a first small fit (compiled kernels), over making the "
              "data and the fit; peak MB (fit): above the level just before the fit.",
              "- page passes: reads of every page file during the fit (a tree's root "
              "histograms, each level's partition with its children's histograms, a tree's "
              "margins); with a warm page cache they cost no disk reads.",
              "- model = memory's: the SHA-256 of the gbm model file equals the in-memory fit's "
              "(- when this run had no in-memory fit: --runs)."]
    return "\n".join(lines) + "\n"


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def main(argv=None, prog=None):
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--n-jobs", type=int, default=os.cpu_count())
    parser.add_argument("--runs", default=",".join(RUNS),
                        help="comma-separated, of: " + ", ".join(RUNS))
    parser.add_argument("--out", default=str(ROOT / "bench" / "RESULTS_extmem.md"))
    args = parser.parse_args(argv)
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    unknown = [r for r in runs if r not in RUNS]
    if unknown:
        parser.error(f"unknown runs {unknown}; known: {list(RUNS)}")
    load = os.getloadavg()
    results = run_all(runs, args.rows, args.batches, args.n_jobs)
    command = " ".join([prog or "python -m bench extmem"] + [shlex.quote(a) for a in
                                                              (argv or [])])
    text = report(results, args, command, load)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
