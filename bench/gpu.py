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
project's CI (no GPU). ``bench/gpu_check.sh`` runs it with the CUDA tests; ``--libs gbm``
when xgboost is missing there. Under Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``,
the check's rehearsal) it runs the same code on NumPy arrays at a small size (``--rows``
from 1,000, ``--depth``, ``--max-bin``), xgboost on its CPU, and says that its numbers mean
nothing.
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


class NoPeak:
    """No device memory to watch (the simulator): ``rise`` is None."""
    rise = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


class Device:
    """Where the benchmark's arrays live: CuPy on a GPU; NumPy under Numba's CUDA simulator
    (``NUMBA_ENABLE_CUDASIM=1``: ``bench/gpu_check.sh``'s rehearsal, where times and memory
    mean nothing and xgboost, finding no GPU, trains on the CPU)."""

    def __init__(self):
        from numba import config

        self.simulator = bool(config.ENABLE_CUDASIM)
        if self.simulator:
            self.xp, self.name = np, "Numba's CUDA simulator, no GPU"
            return
        import cupy

        self.xp, self.name = cupy, cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()

    def sync(self):
        if not self.simulator:
            self.xp.cuda.Device().synchronize()

    def peak_memory(self):
        return NoPeak() if self.simulator else PeakMemory()

    def timed(self, fn):
        self.sync()
        start = time.perf_counter()
        out = fn()
        self.sync()
        return time.perf_counter() - start, out


def _params(classify, depth, max_bin):
    return {"objective": "binary:logistic" if classify else "reg:squarederror",
            "max_depth": depth, "learning_rate": LEARNING_RATE, "max_bin": max_bin}


def fit_gbm(X, y, classify, rounds, depth=DEPTH, max_bin=MAX_BIN):
    import gbm

    return gbm.train(dict(_params(classify, depth, max_bin), device="cuda"), X, y, rounds)


def fit_xgboost(X, y, classify, rounds, depth=DEPTH, max_bin=MAX_BIN):
    import xgboost
    from numba import config

    device = "cpu" if config.ENABLE_CUDASIM else "cuda"  # the simulator: no GPU to find
    params = dict(_params(classify, depth, max_bin), device=device, tree_method="hist")
    return xgboost.train(params, xgboost.QuantileDMatrix(X, y, max_bin=max_bin), rounds)


FITS = {"gbm": fit_gbm, "xgboost": fit_xgboost}


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


def histogram_bandwidth(device, X, y, max_bin=MAX_BIN, repeats=5):
    """(GB/s of one root-node histogram over every training row, GB/s of a copy)."""
    from gbm.runtime.backend import get_backend
    from gbm.bins.binning import BinMapper
    from gbm.kernels import cuda as kernels
    from gbm.tree.quantize import quantize

    xp = device.xp
    backend = get_backend("cuda")
    mapper = BinMapper(max_bin).fit(X[:200_000])
    bins = mapper.transform(X, kernels, xp)
    grad = xp.asarray(y, dtype=xp.float64) - 0.5
    gpair, _ = quantize(grad, xp.ones_like(grad), backend)
    rows = xp.arange(X.shape[0], dtype=xp.int32)
    hist = xp.empty((1, int(mapper.feature_offsets[-1]), 2), dtype=xp.int64)
    starts, ends = np.array([0]), np.array([X.shape[0]])
    call = lambda: kernels.build_histograms(bins, gpair, rows, starts, ends,  # noqa: E731
                                            mapper.feature_offsets, hist)
    call()  # compiled
    seconds = min(device.timed(call)[0] for _ in range(repeats))
    read = bins.nbytes + gpair.nbytes + rows.nbytes
    source = xp.empty(1 << (20 if device.simulator else 30), dtype=xp.uint8)
    target = xp.empty_like(source)
    copy_seconds = min(device.timed(lambda: target.__setitem__(Ellipsis, source))[0]
                       for _ in range(repeats))
    return read / seconds / 1e9, 2 * source.nbytes / copy_seconds / 1e9


def run_case(device, case, args):
    """Warm-up and timed fits of each library of ``args.libs``, then the histogram's bandwidth."""
    classify = case.startswith("clf")
    X_train, y_train, X_test, y_test = make_data(case, args.rows)
    X_train, y_train = device.xp.asarray(X_train), device.xp.asarray(y_train)
    X_test_dev = device.xp.asarray(X_test)
    fits = {lib: partial(FITS[lib], classify=classify, depth=args.depth, max_bin=args.max_bin)
            for lib in args.libs}
    result = {lib: {"fit_s": [], "predict_s": [], "peak_bytes": []} for lib in fits}
    for lib, fit in fits.items():  # warm-up on 100k rows: compile, caches, allocators
        seconds, _ = device.timed(partial(fit, X_train[:100_000], y_train[:100_000],
                                          rounds=min(10, args.rounds)))
        result[lib]["warmup_s"] = seconds
        _progress(f"{case} {lib} warm-up {seconds:.1f} s")
    for _ in range(args.repeats):
        for lib, fit in fits.items():
            with device.peak_memory() as memory:
                seconds, model = device.timed(partial(fit, X_train, y_train, rounds=args.rounds))
            result[lib]["fit_s"].append(seconds)
            result[lib]["peak_bytes"].append(memory.rise)
            seconds, pred = device.timed(partial(predict, lib, model, X_test_dev))
            result[lib]["predict_s"].append(seconds)
            result[lib]["metric"] = metric(classify, y_test, _host(pred))
            _progress(f"{case} {lib} fit {result[lib]['fit_s'][-1]:.2f} s, predict "
                      f"{seconds:.2f} s, {result[lib]['metric'][0]} {result[lib]['metric'][1]:.4f}")
            del model, pred
            gc.collect()
    result["histogram_gbps"], result["copy_gbps"] = histogram_bandwidth(
        device, X_train, y_train, args.max_bin, repeats=1 if device.simulator else 5)
    return result


def _host(array):
    return array.get() if hasattr(array, "get") else np.asarray(array)


def _progress(text):
    print(f"[bench gpu] {text}", file=sys.stderr, flush=True)


def _cell(value, fmt="{:.2f}"):
    return "—" if value is None else fmt.format(value)


def report(device, results, args):
    libs = ("gbm", "xgboost")
    lines = [f"# GPU benchmark ({device.name})", "",
             f"`python -m bench gpu --rows {args.rows} --rounds {args.rounds} --repeats "
             f"{args.repeats} --libs {','.join(args.libs)}`; {args.rounds} rounds, depth "
             f"{args.depth}, {args.max_bin} bins, 80% of rows train; medians of {args.repeats} "
             "fit(s).", "",
             "| case | gbm fit s | xgboost fit s | gbm / xgboost fit | gbm / xgboost predict "
             "| gbm metric | xgboost metric | gbm peak GiB | xgboost peak GiB | histogram GB/s "
             "| copy GB/s |",
             "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for case, r in results.items():
        med = {lib: (statistics.median(r[lib]["fit_s"]), statistics.median(r[lib]["predict_s"]),
                     None if None in r[lib]["peak_bytes"] else max(r[lib]["peak_bytes"]) / 2**30)
               if lib in r else (None, None, None) for lib in libs}
        ratio = [None if None in (med["gbm"][i], med["xgboost"][i])
                 else med["gbm"][i] / med["xgboost"][i] for i in (0, 1)]
        score = {lib: f"{r[lib]['metric'][0]} {r[lib]['metric'][1]:.4f}" if lib in r else "—"
                 for lib in libs}
        lines.append(
            f"| {case} | {_cell(med['gbm'][0])} | {_cell(med['xgboost'][0])} | "
            f"{_cell(ratio[0])} | {_cell(ratio[1])} | {score['gbm']} | {score['xgboost']} | "
            f"{_cell(med['gbm'][2])} | {_cell(med['xgboost'][2])} | "
            f"{r['histogram_gbps']:.0f} | {r['copy_gbps']:.0f} |")
    lines += ["", f"Warm-up fits ({min(10, args.rounds)} rounds on "
              f"{min(100_000, args.rows * 4 // 5):,} rows; gbm's includes compiling its CUDA "
              "kernels): " + ", ".join(f"{case} " + " / ".join(
                  f"{lib} {r[lib]['warmup_s']:.1f} s" for lib in libs if lib in r)
                  for case, r in results.items()), ""]
    if "xgboost" not in args.libs:
        lines += ["xgboost was not run (`--libs gbm`): gbm alone.", ""]
    if device.simulator:
        lines += ["Under Numba's CUDA simulator: a rehearsal of the code paths; the times, "
                  "bandwidths and memory mean nothing, and xgboost (no GPU found) trained on "
                  "its CPU.", ""]
    return "\n".join(lines)


def main(argv=None, prog=None):
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default=",".join(CASES), help="comma list of: " + ", ".join(CASES))
    ap.add_argument("--libs", default="xgboost,gbm", help="comma list of: gbm, xgboost; fitted "
                    "in this order (xgboost first: a run cut during gbm's fit keeps xgboost's)")
    ap.add_argument("--rows", type=int, default=FULL_ROWS)
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--depth", type=int, default=DEPTH)
    ap.add_argument("--max-bin", type=int, default=MAX_BIN)
    ap.add_argument("--repeats", type=int, default=1, help="timed fits per library (median)")
    ap.add_argument("--out", help="Markdown file (default bench/GPU_RESULTS.md with the "
                    "standard rows and rounds)")
    ap.add_argument("--json", help="also write the raw results here")
    args = ap.parse_args(argv)
    cases, args.libs = args.cases.split(","), args.libs.split(",")
    if ([c for c in cases if c not in CASES] or args.repeats < 1 or not args.libs
            or [lib for lib in args.libs if lib not in FITS]):
        ap.error(f"cases among {CASES}, libs among {tuple(FITS)}, --repeats >= 1")
    try:
        device = Device()
        from numba import cuda

        if not device.simulator and not cuda.is_available():
            raise RuntimeError("numba.cuda.is_available() is False")
    except Exception as err:  # a clear stop, not a traceback from deep inside
        print(f"bench gpu needs an NVIDIA GPU and the gpu extra (pip install -e '.[gpu]'): "
              f"{type(err).__name__}: {err}", file=sys.stderr)
        return 2
    smallest = 1000 if device.simulator else 200_000
    if args.rows < smallest:
        ap.error(f"--rows >= {smallest}" + (" on a GPU" if smallest > 1000 else ""))
    results = {}
    for case in cases:
        _progress(case)
        results[case] = run_case(device, case, args)
        print(f"[bench gpu] {case}: {json.dumps(results[case], default=str)}", flush=True)
    text = report(device, results, args)
    print(text)
    standard = args.rows == FULL_ROWS and args.rounds == ROUNDS and len(set(args.libs)) == 2
    out = args.out or (str(ROOT / "bench" / "GPU_RESULTS.md") if standard else None)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
