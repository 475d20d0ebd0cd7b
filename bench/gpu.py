"""GPU benchmark: gbm ``device="cuda"`` against xgboost ``device="cuda"`` (BENCHMARKS.md,
"GPU cases"): ``python -m bench gpu``.

Cases ``clf-10m`` and ``reg-10m``: 10M rows x 28 float32 features made on the host from a
fixed seed (20 informative features: a linear part and pairwise products, so depth-6
trees have something to find), the first 80% train, the rest test; 500 rounds, depth 6,
learning rate 0.1, 256 bins. Both libraries get the same CuPy arrays (data on the GPU).

Per case, in one process, interleaved: a small warm-up fit of each library (gbm's CUDA
kernels compile at their first launch; its seconds are reported as compile time), then
``--repeats`` timed fits of each in turn. Reported: fit seconds (median) and the ratio
gbm / xgboost, predict seconds on the test rows, the test metric (AUC / RMSE), the peak
device memory of each fit (the rise of the GPU's used memory over its level before the
fit, sampled every 5 ms with ``cudaMemGetInfo``, after freeing CuPy's pool), and the
histogram kernel's bandwidth: the bytes one root-node histogram reads (bins, gradient
pairs and row indices of every training row) per second, against a device-to-device
copy's (bytes read + written per second).

Written for a machine with one NVIDIA GPU and the ``gpu`` extra; not run in this
project's CI (no GPU). ``bench/gpu_check.sh`` runs it with the CUDA tests.
"""
import argparse
import gc
import json
import statistics
import sys
import threading
import time
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CASES = ("clf-10m", "reg-10m")
ROUNDS, DEPTH, LEARNING_RATE, MAX_BIN = 500, 6, 0.1, 256
FULL_ROWS, N_FEATURES = 10_000_000, 28


def make_data(case, rows, seed=0):
    """float32 X (rows, 28) and y, on the host; the first 80% of rows train."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, N_FEATURES), dtype=np.float32)
    w = rng.standard_normal(20).astype(np.float32)
    signal = X[:, :20] @ w + 0.5 * X[:, 0] * X[:, 1] - 0.7 * X[:, 2] * X[:, 3]
    if case == "clf-10m":
        noise = rng.logistic(size=rows).astype(np.float32)
        y = (signal + noise > 0).astype(np.float32)
    else:
        y = (10.0 * signal + rng.normal(scale=10.0, size=rows)).astype(np.float32)
    n_train = rows * 4 // 5
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


class PeakMemory:
    """Peak used device memory during a block, above its level at the start."""

    def __init__(self, interval=0.005):
        import cupy

        self.cupy, self.interval = cupy, interval

    def __enter__(self):
        self.cupy.get_default_memory_pool().free_all_blocks()
        gc.collect()
        self.cupy.cuda.Device().synchronize()
        free, total = self.cupy.cuda.runtime.memGetInfo()
        self.base, self.peak, self.total = total - free, total - free, total
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self):
        while not self._stop.is_set():
            free, _ = self.cupy.cuda.runtime.memGetInfo()
            self.peak = max(self.peak, self.total - free)
            time.sleep(self.interval)

    def __exit__(self, *exc):
        self.cupy.cuda.Device().synchronize()
        self._stop.set()
        self._thread.join()
        free, _ = self.cupy.cuda.runtime.memGetInfo()
        self.peak = max(self.peak, self.total - free)
        self.rise = self.peak - self.base


def _params(classify):
    return {"objective": "binary:logistic" if classify else "reg:squarederror",
            "max_depth": DEPTH, "learning_rate": LEARNING_RATE, "max_bin": MAX_BIN}


def fit_gbm(X, y, classify, rounds):
    import gbm

    return gbm.train(dict(_params(classify), device="cuda"), X, y, rounds)


def fit_xgboost(X, y, classify, rounds):
    import xgboost

    params = dict(_params(classify), device="cuda", tree_method="hist")
    return xgboost.train(params, xgboost.QuantileDMatrix(X, y, max_bin=MAX_BIN), rounds)


def predict(lib, model, X):
    if lib == "gbm":
        return model.predict(X)
    return model.inplace_predict(X)


def metric(classify, y, pred):
    y, pred = np.asarray(y, np.float64), np.asarray(pred, np.float64)
    if classify:
        from sklearn.metrics import roc_auc_score

        return "AUC", float(roc_auc_score(y, pred))
    return "RMSE", float(np.sqrt(np.mean((pred - y) ** 2)))


def _timed(fn):
    import cupy

    cupy.cuda.Device().synchronize()
    start = time.perf_counter()
    out = fn()
    cupy.cuda.Device().synchronize()
    return time.perf_counter() - start, out


def histogram_bandwidth(X, y, repeats=5):
    """(GB/s of one root-node histogram over every training row, GB/s of a copy)."""
    import cupy

    from gbm.runtime.backend import get_backend
    from gbm.bins.binning import BinMapper
    from gbm.kernels import cuda as kernels
    from gbm.tree.quantize import quantize

    backend = get_backend("cuda")
    mapper = BinMapper(MAX_BIN).fit(X[:200_000])
    bins = mapper.transform(X, kernels, cupy)
    grad = cupy.asarray(y, dtype=cupy.float64) - 0.5
    gpair, _ = quantize(grad, cupy.ones_like(grad), backend)
    rows = cupy.arange(X.shape[0], dtype=cupy.int32)
    hist = cupy.empty((1, int(mapper.feature_offsets[-1]), 2), dtype=cupy.int64)
    starts, ends = np.array([0]), np.array([X.shape[0]])
    call = lambda: kernels.build_histograms(bins, gpair, rows, starts, ends,  # noqa: E731
                                            mapper.feature_offsets, hist)
    call()  # compiled
    seconds = min(_timed(call)[0] for _ in range(repeats))
    read = bins.nbytes + gpair.nbytes + rows.nbytes
    source = cupy.empty(1 << 30, dtype=cupy.uint8)
    target = cupy.empty_like(source)
    copy_seconds = min(_timed(lambda: target.__setitem__(Ellipsis, source))[0]
                       for _ in range(repeats))
    return read / seconds / 1e9, 2 * source.nbytes / copy_seconds / 1e9


def run_case(case, rows, rounds, repeats):
    import cupy

    classify = case.startswith("clf")
    X_train, y_train, X_test, y_test = make_data(case, rows)
    X_train, y_train = cupy.asarray(X_train), cupy.asarray(y_train)
    X_test_dev = cupy.asarray(X_test)
    fits = {"gbm": fit_gbm, "xgboost": fit_xgboost}
    result = {lib: {"fit_s": [], "predict_s": [], "peak_bytes": []} for lib in fits}
    for lib, fit in fits.items():  # warm-up on 100k rows: compile, caches, allocators
        seconds, _ = _timed(partial(fit, X_train[:100_000], y_train[:100_000], classify, 10))
        result[lib]["warmup_s"] = seconds
    for _ in range(repeats):
        for lib, fit in fits.items():
            with PeakMemory() as memory:
                seconds, model = _timed(partial(fit, X_train, y_train, classify, rounds))
            result[lib]["fit_s"].append(seconds)
            result[lib]["peak_bytes"].append(memory.rise)
            seconds, pred = _timed(partial(predict, lib, model, X_test_dev))
            result[lib]["predict_s"].append(seconds)
            result[lib]["metric"] = metric(classify, y_test, cupy.asnumpy(pred))
            del model, pred
            gc.collect()
    result["histogram_gbps"], result["copy_gbps"] = histogram_bandwidth(X_train, y_train)
    return result


def report(results, args):
    import cupy

    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    lines = [f"# GPU benchmark ({device})", "",
             f"`python -m bench gpu --rows {args.rows} --rounds {args.rounds} --repeats "
             f"{args.repeats}`; {args.rounds} rounds, depth "
             f"{DEPTH}, {MAX_BIN} bins, 80% of rows train; medians of {args.repeats} fit(s).", "",
             "| case | gbm fit s | xgboost fit s | gbm / xgboost fit | gbm / xgboost predict "
             "| gbm metric | xgboost metric | gbm peak GiB | xgboost peak GiB | histogram GB/s "
             "| copy GB/s |",
             "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for case, r in results.items():
        g, x = r["gbm"], r["xgboost"]
        med = {lib: (statistics.median(r[lib]["fit_s"]), statistics.median(r[lib]["predict_s"]),
                     max(r[lib]["peak_bytes"]) / 2**30) for lib in ("gbm", "xgboost")}
        lines.append(
            f"| {case} | {med['gbm'][0]:.2f} | {med['xgboost'][0]:.2f} | "
            f"{med['gbm'][0] / med['xgboost'][0]:.2f} | {med['gbm'][1] / med['xgboost'][1]:.2f} | "
            f"{g['metric'][0]} {g['metric'][1]:.4f} | {x['metric'][0]} {x['metric'][1]:.4f} | "
            f"{med['gbm'][2]:.2f} | {med['xgboost'][2]:.2f} | {r['histogram_gbps']:.0f} | "
            f"{r['copy_gbps']:.0f} |")
    lines += ["", "Warm-up fits (10 rounds on 100k rows; gbm's includes compiling its CUDA "
              "kernels): " + ", ".join(f"{case} gbm {r['gbm']['warmup_s']:.1f} s / xgboost "
                                      f"{r['xgboost']['warmup_s']:.1f} s"
                                      for case, r in results.items()), ""]
    return "\n".join(lines)


def main(argv=None, prog=None):
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default=",".join(CASES), help="comma list of: " + ", ".join(CASES))
    ap.add_argument("--rows", type=int, default=FULL_ROWS)
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--repeats", type=int, default=1, help="timed fits per library (median)")
    ap.add_argument("--out", help="Markdown file (default bench/GPU_RESULTS.md with the "
                    "standard rows and rounds)")
    ap.add_argument("--json", help="also write the raw results here")
    args = ap.parse_args(argv)
    cases = args.cases.split(",")
    if [c for c in cases if c not in CASES] or args.rows < 200_000 or args.repeats < 1:
        ap.error(f"cases among {CASES}, --rows >= 200000, --repeats >= 1")
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
        from numba import cuda

        if not cuda.is_available():
            raise RuntimeError("numba.cuda.is_available() is False")
    except Exception as err:  # a clear stop, not a traceback from deep inside
        print(f"bench gpu needs an NVIDIA GPU and the gpu extra (pip install -e '.[gpu]'): "
              f"{type(err).__name__}: {err}", file=sys.stderr)
        return 2
    results = {}
    for case in cases:
        print(f"[bench gpu] {case}", file=sys.stderr, flush=True)
        results[case] = run_case(case, args.rows, args.rounds, args.repeats)
        print(f"[bench gpu] {case}: {json.dumps(results[case], default=str)}", flush=True)
    text = report(results, args)
    print(text)
    standard = args.rows == FULL_ROWS and args.rounds == ROUNDS
    out = args.out or (str(ROOT / "bench" / "GPU_RESULTS.md") if standard else None)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
