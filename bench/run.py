"""CPU benchmark of gbm against xgboost, lightgbm and scikit-learn, as BENCHMARKS.md defines it.

* Cases (bench/cases.py): clf-1m, reg-1m, multi-73k, flights, evals-20k, and the rows
  curve rows-5k .. rows-1m (gbm, xgboost, LightGBM; its own table, ms per round).
* Per case the data are made once and saved; every library gets its own fresh
  ``spawn`` worker process that loads them and lives for the whole case.
* Round 0, then rounds 1..repeats: in each round every library fits (and predicts) once, in
  turn, the parent driving one worker at a time, so drift hits all alike. Round 0 is each
  library's first fit in a fresh process ("1st fit s", kept out of the medians).
* Peak fit memory: before each fit the worker frees what it can (gc, malloc_trim), reads its
  RSS and resets the kernel's peak-RSS mark (/proc/self/clear_refs); the rise of VmHWM over
  that RSS is the fit's peak (fallback: ru_maxrss minus the RSS after loading the data).
* gbm's Numba compile time: fresh processes fit and predict a 1,000-row set twice, with
  NUMBA_CACHE_DIR at an empty folder (cold compile) and with the normal cache; compile =
  first call minus second call.
"""
import argparse, contextlib, ctypes, datetime, gc, glob, importlib.metadata, importlib.util, json  # noqa: E401
import multiprocessing as mp, os, platform, re, resource, shlex, statistics  # noqa: E401
import subprocess, sys, tempfile, time  # noqa: E401
from pathlib import Path

import pickle

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from bench.cases import CASES, CURVE_LIBS, LEARNING_RATE, LIBS, MAX_BIN, fit_kwargs, make_data, make_estimator, score  # noqa: E402

FULL_ROWS = 1_000_000  # clf-1m and reg-1m at their standard size


def _proc_status_mb(key):
    m = re.search(rf"^{key}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.M)
    return int(m.group(1)) / 1024 if m else float("nan")


def _reset_peak_rss():
    with contextlib.suppress(OSError):
        return Path("/proc/self/clear_refs").write_text("5") > 0
    return False


def _cpu_seconds():
    """(CPU seconds the whole machine has been busy, CPU seconds of this process)."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    own = os.times()
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK"), own.user + own.system


def _free_memory():
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _worker(conn, lib, case, data_dir, n_jobs):
    """One library on one case: load the data, then fit/predict on each 'fit' message."""
    try:
        if lib == "sklearn":  # HistGradientBoosting* has no n_jobs: OpenMP threads
            from threadpoolctl import threadpool_limits
            _limits = threadpool_limits(limits=n_jobs, user_api="openmp")  # noqa: F841
        make_estimator(lib, case, n_jobs)  # import the library before the baseline
        Xtr, ytr, Xte, yte, evals = pickle.loads((Path(data_dir) / "data.pkl").read_bytes())
        kwargs = fit_kwargs(lib, case, evals)
        _free_memory()
        rss_loaded = _proc_status_mb("VmRSS")
        conn.send({"ready": True})
    except BaseException as e:  # noqa: BLE001 - reported in the table
        conn.send({"error": f"{type(e).__name__}: {e}"})
        return
    model = None
    while conn.recv() == "fit":
        try:
            model = None
            _free_memory()
            before, reset = _proc_status_mb("VmRSS"), _reset_peak_rss()
            model = make_estimator(lib, case, n_jobs)
            cpu0, t0 = _cpu_seconds(), time.perf_counter()
            model.fit(Xtr, ytr, **kwargs)
            t1, cpu1 = time.perf_counter(), _cpu_seconds()
            others = max(0.0, (cpu1[0] - cpu0[0]) - (cpu1[1] - cpu0[1])) / ((t1 - t0) * os.cpu_count())
            peak = _proc_status_mb("VmHWM") - before if reset else None
            maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - rss_loaded
            predict_s, metric_name, metric = score(case, model, Xte, yte)
            conn.send({"fit_s": t1 - t0, "predict_s": predict_s, "peak_mb": peak,
                       "maxrss_mb": maxrss, "metric": metric, "metric_name": metric_name,
                       "others_pct": 100 * min(1.0, others)})
        except Exception as e:  # noqa: BLE001 - reported in the table
            conn.send({"error": f"{type(e).__name__}: {e}"})


def _recv(conn, proc):
    """The worker's next message, or an error once it has died."""
    with contextlib.suppress(EOFError):
        while proc.is_alive() or conn.poll(0):
            if conn.poll(1.0):
                return conn.recv()
    return {"error": f"worker process died (exit code {proc.exitcode})"}


def run_case(case, rows, libs, repeats, n_jobs, tmp):
    """{lib: {"runs": [round 0, 1, ...], "error": str or None}} for one case."""
    libs = [lib for lib in libs if lib in CASES[case].get("libs", libs)]  # the curve: 3 libraries
    data_dir = Path(tmp) / case
    data_dir.mkdir()
    (data_dir / "data.pkl").write_bytes(pickle.dumps(make_data(case, rows)))
    ctx = mp.get_context("spawn")
    workers, res = {}, {lib: {"runs": [], "error": None} for lib in libs}
    try:
        for lib in libs:
            parent, child = ctx.Pipe()
            workers[lib] = (parent, ctx.Process(target=_worker, args=(child, lib, case, str(data_dir), n_jobs)))
            workers[lib][1].start()
        for lib in libs:
            res[lib]["error"] = _recv(*workers[lib]).get("error")
        for rnd in range(repeats + 1):  # round 0: first fit in the fresh process
            for lib in [lib for lib in libs if not res[lib]["error"]]:
                workers[lib][0].send("fit")
                r = _recv(*workers[lib])
                res[lib]["error"] = r.get("error")
                res[lib]["runs"] += [] if "error" in r else [r]
                print(f"[bench] {case} round {rnd} {lib:9s} " + (f"error: {r['error']}" if "error" in r else
                      f"fit {r['fit_s']:7.2f} s  predict {r['predict_s']:6.2f} s  metric {r['metric']:.4f}  "
                      f"others' CPU {r['others_pct']:3.0f}%"), file=sys.stderr, flush=True)
    finally:
        for parent, proc in workers.values():
            with contextlib.suppress(OSError):
                parent.send("stop")
            proc.join(30)
            if proc.is_alive():
                proc.terminate()
    return res


_PROBE = """
import json, sys, time
t0 = time.perf_counter()
import gbm
out = {"import_s": time.perf_counter() - t0}
from bench.cases import make_data, make_estimator
for name in ("clf", "reg"):
    Xtr, ytr, Xte, _, _ = make_data(name + "-1m", 1250)
    for i in (1, 2):
        m = make_estimator("gbm", name + "-1m", int(sys.argv[1]))
        t0 = time.perf_counter(); m.fit(Xtr, ytr); t1 = time.perf_counter(); m.predict(Xte)
        out[f"{name}_fit{i}"], out[f"{name}_predict{i}"] = t1 - t0, time.perf_counter() - t1
import numba; out["layer"] = numba.threading_layer()
print(json.dumps(out))
"""


def compile_probe(n_jobs, cache_dir=None):
    """A fresh process's 1,000-row gbm fits and predicts; ``cache_dir``: its NUMBA_CACHE_DIR."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    p = subprocess.run([sys.executable, "-c", _PROBE, str(n_jobs)], env=env, cwd=ROOT, capture_output=True, text=True)
    if p.returncode:
        return {"error": (p.stderr.strip().splitlines() or [f"exit code {p.returncode}"])[-1]}
    r = json.loads(p.stdout.strip().splitlines()[-1])
    calls = [f"{n}_{s}" for n in ("clf", "reg") for s in ("fit", "predict")]
    r["first_s"] = sum(r[c + "1"] for c in calls)
    r["compile_s"] = r["first_s"] - sum(r[c + "2"] for c in calls)
    return r


def numba_cache_files():
    """The Numba index files (*.nbi) in gbm's and gbm.kernels' __pycache__ folders now."""
    dirs = set()
    for mod in ("gbm", "gbm.kernels"):
        try:
            dirs.update(importlib.util.find_spec(mod).submodule_search_locations or [])
        except (ImportError, AttributeError):
            pass
    return sorted(f for d in dirs for f in glob.glob(os.path.join(d, "__pycache__", "*.nbi")))


def header_lines(command, args, load_start):
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    m = re.search(r"^model name\s*:\s*(.+)$", info, re.M)

    def ver(dist):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"
    n_test = args.rows - args.rows * 4 // 5
    return ["# gbm benchmark results", "",
            f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
            f"- machine: {os.cpu_count()} CPUs ({m.group(1).strip() if m else platform.processor()}), "
            f"{platform.platform()}; load average at start {load_start:.2f}, at end {os.getloadavg()[0]:.2f}",
            f"- python: {platform.python_version()} ({sys.executable})",
            # gbm's distribution is detgbm (``gbm`` on the package index is another project)
            "- versions: " + ", ".join(f"{name} {ver(dist)}" for name, dist in
                                       (("gbm", "detgbm"), ("numpy",) * 2, ("numba",) * 2,
                                        ("xgboost",) * 2, ("lightgbm",) * 2,
                                        ("scikit-learn",) * 2)),
            f"- command: `{command}`",
            f"- settings: learning rate {LEARNING_RATE}, max_bin {MAX_BIN}, n_jobs {args.n_jobs}, "
            f"{args.repeats} timed repeats (+1 first fit), libraries interleaved; clf-1m / reg-1m "
            f"{args.rows:,} rows ({args.rows - n_test:,} train / {n_test:,} test); per case: "
            + "; ".join(f"{c} {CASES[c]['rounds']} rounds depth {CASES[c]['depth']}"
                        for c in args.cases.split(",")), ""]


def _f(x, fmt="{:.2f}"):
    return "—" if x is None or x != x else fmt.format(x)


def report(results, args, command, probes, nbi_before, load_start):
    med = {(c, lib): tuple(statistics.median(x[k] for x in r["runs"][1:]) if r["runs"][1:] else None
                           for k in ("fit_s", "predict_s"))
           for c, per_lib in results.items() for lib, r in per_lib.items()}
    lines = header_lines(command, args, load_start)
    if load_start > 0.5:
        lines += [f"**Warning:** the machine was busy before the run (load average {load_start:.2f} on "
                  f"{os.cpu_count()} CPUs): absolute times are unreliable, ratios less so.", ""]
    head = [f"{c} {med[c, 'gbm'][0] / med[c, 'xgboost'][0]:.2f}x" for c in results
            if med.get((c, "gbm"), [None])[0] and med.get((c, "xgboost"), [None])[0]]
    lines += [f"**Headline, gbm fit / xgboost fit:** {', '.join(head)}", ""] if head else []
    lines += ["| case | library | fit s (median) | fit s per repeat | 1st fit s | predict s | peak fit MB"
              " | test metric | others' CPU % | fit gbm/lib | predict gbm/lib |", "|---|---|" + "--:|" * 9]
    for case, per_lib in results.items():
        label = case if args.rows == FULL_ROWS or "rows" not in CASES[case] \
            else f"{case} @{args.rows:,} rows"
        gbm_fit, gbm_pred = med.get((case, "gbm"), (None, None))
        for lib, r in per_lib.items():
            timed, (fit, pred) = r["runs"][1:], med[case, lib]
            if not timed:
                lines.append(f"| {label} | {lib} | error: {(r['error'] or '')[:150].replace('|', '/')} |" + " |" * 8)
                continue
            peaks = [x["peak_mb"] for x in timed]
            peak = max(peaks) if None not in peaks else max(x["maxrss_mb"] for x in r["runs"])
            metric = f"{timed[-1]['metric_name']} " + _f(timed[-1]["metric"], "{:.4f}")
            ratios = ["—" if lib == "gbm" or g is None else _f(g / x) for g, x in ((gbm_fit, fit), (gbm_pred, pred))]
            name = lib + (f" (then error: {r['error'][:80].replace('|', '/')})" if r["error"] else "")
            lines.append(f"| {label} | {name} | {_f(fit)} | {' / '.join(_f(x['fit_s']) for x in timed)} | "
                         f"{_f(r['runs'][0]['fit_s'])} | {_f(pred)} | {_f(peak, '{:.0f}')} | {metric} | "
                         f"{' / '.join(_f(x['others_pct'], '{:.0f}') for x in timed)} | "
                         f"{ratios[0]} | {ratios[1]} |")
    lines += curve_lines(results, med)
    lines += ["", "Notes:", "",
              "- fit / predict s: medians of the timed repeats; `1st fit s`: each library's first fit in "
              "its fresh worker process (round 0, not in the medians). Predict = `predict_proba` "
              "(classification) or `predict` on the test set. Metric on the test set: AUC (binary), "
              "logloss (multiclass), RMSE (regression). evals-20k scores two eval sets (logloss and "
              "AUC) after every round; scikit-learn's HistGradientBoosting takes no eval sets.",
              "- peak fit MB: largest rise of the worker's resident memory during a timed fit above its "
              "RSS just before the fit (VmHWM after resetting it via /proc/self/clear_refs).",
              "- others' CPU %: per timed fit, the share of the machine's CPU time that other processes "
              "used during the fit (/proc/stat less the worker's own CPU time). Repeats with a high share "
              "are unreliable: with OpenMP/Numba spin-waiting, sharing cores can slow a fit many times."]
    if probes:
        lines.append(f"- gbm's Numba cache before the run: {len(nbi_before)} `*.nbi` index files in its "
                     "`__pycache__` folders" + ("" if nbi_before else " (none: first use compiles)") + ".")
        for name, p in (("cold compile, fresh process with an empty NUMBA_CACHE_DIR", probes[0]),
                        ("fresh process with the normal cache as found", probes[1])):
            lines.append(f"- gbm {name}: error: {p['error']}" if "error" in p else
                         f"- gbm {name}: first 1,000-row fit + predict (clf and reg) {_f(p['first_s'])} s, "
                         f"{_f(p['compile_s'])} s more than the second (compile / cache load); `import gbm` "
                         f"{_f(p['import_s'])} s; Numba threading layer `{p['layer']}`.")
    for case, per_lib in results.items():
        if "gbm" in per_lib and len(per_lib["gbm"]["runs"]) > 1:
            first, later = per_lib["gbm"]["runs"][0]["fit_s"], med[case, "gbm"][0]
            lines.append(f"- gbm {case}: first full fit in a fresh process {_f(first)} s vs median of the "
                         f"later fits {_f(later)} s (difference {_f(first - later)} s; cache warmed by the probe).")
    return "\n".join(lines) + "\n"


def curve_lines(results, med):
    """The rows curve's own table (the ``rows-*`` cases): fit seconds, ratios and ms per
    round by training rows; nothing when no curve case ran."""
    cases = [c for c in results if "curve_rows" in CASES[c]]
    if not cases:
        return []
    libs = [lib for lib in CURVE_LIBS if any(lib in results[c] for c in cases)]
    head = ("| rows | " + " | ".join(f"{lib} s" for lib in libs) + " | "
            + " | ".join(f"gbm/{lib}" for lib in libs if lib != "gbm") + " | "
            + " | ".join(f"{lib} ms per round" for lib in libs) + " |")
    lines = ["", "**Rows curve** (binary, 10 float features, 200 rounds depth 6; fit seconds, "
             "medians; the fixed cost per round shows at the small end):", "", head,
             "|--:|" + "--:|" * (3 * len(libs) - 1)]
    for case in cases:
        fit = {lib: med.get((case, lib), (None,))[0] for lib in libs}
        rounds = CASES[case]["rounds"]
        ratios = [_f(fit["gbm"] / fit[lib]) if fit.get("gbm") and fit[lib] else "—"
                  for lib in libs if lib != "gbm"]
        lines.append(f"| {CASES[case]['curve_rows']:,} | " + " | ".join(_f(fit[lib]) for lib in libs)
                     + " | " + " | ".join(ratios) + " | "
                     + " | ".join(_f(None if fit[lib] is None else 1e3 * fit[lib] / rounds)
                                  for lib in libs) + " |")
    return lines


def main(argv=None, prog=None):
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default=",".join(CASES), help="comma list of: " + ", ".join(CASES))
    ap.add_argument("--libs", default=",".join(LIBS), help="comma list of: " + ", ".join(LIBS))
    ap.add_argument("--repeats", type=int, default=3, help="timed fits per library (median)")
    ap.add_argument("--rows", type=int, default=FULL_ROWS,
                    help="rows of clf-1m and reg-1m (first 80%% train)")
    ap.add_argument("--n-jobs", type=int, default=os.cpu_count(), help="threads (default: all cores)")
    ap.add_argument("--out", help="Markdown file to write (default bench/RESULTS.md, but only with "
                    "the standard --rows)")
    ap.add_argument("--no-probes", action="store_true",
                    help="skip gbm's compile probes (two fresh processes; bench/gpu_check.sh)")
    args = ap.parse_args(argv)
    cases, libs = args.cases.split(","), args.libs.split(",")
    bad = [c for c in cases if c not in CASES] + [lib for lib in libs if lib not in LIBS]
    if bad or args.repeats < 1 or args.rows < 100:
        ap.error(f"unknown case/library {bad}" if bad else "need --repeats >= 1 and --rows >= 100")
    argv = sys.argv[1:] if argv is None else argv
    command = f"cd {shlex.quote(os.getcwd())} && {prog or sys.executable + ' ' + sys.argv[0]} {shlex.join(argv)}"
    load_start, nbi_before, probes = os.getloadavg()[0], numba_cache_files(), None
    with tempfile.TemporaryDirectory(prefix="gbm-bench-") as tmp:
        if "gbm" in libs and not args.no_probes:
            print("[bench] gbm compile probes", file=sys.stderr, flush=True)
            (Path(tmp) / "numba-cache").mkdir()
            probes = (compile_probe(args.n_jobs, Path(tmp) / "numba-cache"), compile_probe(args.n_jobs))
        results = {case: run_case(case, args.rows, libs, args.repeats, args.n_jobs, tmp) for case in cases}
    text = report(results, args, command.rstrip(), probes, nbi_before, load_start)
    print(text)
    out = args.out or (str(ROOT / "bench" / "RESULTS.md") if args.rows == FULL_ROWS else None)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    print(f"[bench] written to {out}" if out else "[bench] non-standard --rows and no --out: "
          "nothing written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    from bench.run import main as _main  # run as bench.run, so that spawn workers can import it
    sys.exit(_main(sys.argv[1:], prog=f"{sys.executable} {sys.argv[0]}"))
