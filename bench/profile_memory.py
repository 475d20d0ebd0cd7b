"""Where a gbm fit's memory goes: RSS and its peak per stage of a fit, with the arrays
tracemalloc sees alive (NumPy's allocations; Numba's own buffers show only in RSS).

    python -m bench.profile_memory [--case rows-200k] [--case rows-1m] [--xgboost]

Each stage's peak is VmHWM after resetting it (/proc/self/clear_refs) at the stage's start,
minus the RSS just before the fit, as bench/run.py measures a whole fit.
"""
import argparse
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from bench.cases import fit_kwargs, make_data, make_estimator  # noqa: E402
from bench.run import _free_memory, _proc_status_mb, _reset_peak_rss  # noqa: E402

LOG = []
TRACE = [False]
REPS = [2]
BASE = [0.0]


def mark(stage, trace=None):
    """Record the stage just ended: its RSS peak above the fit's start, RSS now."""
    trace = TRACE[0]
    hwm, rss = _proc_status_mb("VmHWM"), _proc_status_mb("VmRSS")
    cur, peak = tracemalloc.get_traced_memory() if trace else (0, 0)
    LOG.append((stage, hwm - BASE[0], rss - BASE[0], cur / 2**20, peak / 2**20))
    if trace:
        tracemalloc.reset_peak()
    _reset_peak_rss()


def wrap(owner, name, before=None, after=None, trace=False):
    fn = getattr(owner, name)

    def inner(*a, **k):
        if before:
            mark(before, trace)
        out = fn(*a, **k)
        if after:
            mark(after, trace)
        return out
    setattr(owner, name, inner)
    return fn


def install(trace):
    import gbm.training.prepare as prep
    import gbm.training.loop as loop
    import gbm.bins.binning as binning
    wrap(prep.Fit, "_features", after="checked X (float32)", trace=trace)
    wrap(binning.BinMapper, "fit", before="labels/weights/queries", after="bin edges (mapper.fit)",
         trace=trace)
    wrap(prep, "binned_rows", after="binned rows", trace=trace)
    wrap(prep.Fit, "start", before="Fit.__init__ rest (whole_trees/lockstep/runner)",
         after="start (booster, margins, y/w on device)", trace=trace)
    orig = loop.grow_round

    def grow_round(fit, booster, round_):
        if round_ == 0:
            mark("eval sets / callbacks", trace)
        orig(fit, booster, round_)
        if round_ == 0:
            mark("round 0", trace)
            if TRACE[0]:
                snap = tracemalloc.take_snapshot()
                LOG.append(("-- alive after round 0 (tracemalloc, top lines) --", snap))
    loop.grow_round = grow_round


def run(case, lib, trace_all):
    Xtr, ytr, Xte, yte, evals = make_data(case)
    make_estimator(lib, case, 2)
    TRACE[0] = False
    if lib == "gbm":
        install(TRACE)
    kw = fit_kwargs(lib, case, evals)
    for rep in range(REPS[0]):  # the first fit compiles / loads the cache
        LOG.clear()
        model = None
        _free_memory()
        trace = TRACE[0] = trace_all and rep == REPS[0] - 1
        if trace:
            tracemalloc.start(25)
        BASE[0] = _proc_status_mb("VmRSS")
        _reset_peak_rss()
        model = make_estimator(lib, case, 2)
        t0 = time.perf_counter()
        model.fit(Xtr, ytr, **kw)
        mark("rest of the rounds + after training", trace)
        secs = time.perf_counter() - t0
        if REPS[0] > 2:
            print(f"fit {rep}: " + ", ".join(f"{e[0][:12]} {e[1]:.1f}/{e[2]:.1f}" for e in LOG
                                             if not isinstance(e[1], tracemalloc.Snapshot)))
    print(f"\n## {case} {lib}: fit {secs:.2f} s, X {Xtr.nbytes / 2**20:.1f} MB, "
          f"rows {Xtr.shape[0]:,}")
    print("| stage | peak MB above start (in stage) | RSS MB after | traced MB now | traced peak MB |")
    print("|---|--:|--:|--:|--:|")
    snaps = []
    for entry in LOG:
        if isinstance(entry[1], tracemalloc.Snapshot):
            snaps.append(entry[1])
            continue
        print("| " + entry[0] + " | " + " | ".join(f"{v:.1f}" for v in entry[1:]) + " |")
    for snap in snaps:
        print("\nlargest live allocations after round 0:")
        stats = snap.statistics("traceback")
        for st in stats[:12]:
            if st.size < 2**18:
                break
            frames = [f"{Path(f.filename).name}:{f.lineno}" for f in st.traceback
                      if "gbm" in f.filename or "bench" in f.filename][-4:]
            print(f"- {st.size / 2**20:.1f} MB x{st.count}: {' <- '.join(reversed(frames))}")
    if trace:
        tracemalloc.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", action="append")
    ap.add_argument("--lib", default="gbm")
    ap.add_argument("--no-trace", action="store_true")
    ap.add_argument("--reps", type=int, default=2, help="fits in a row (the last one traced)")
    a = ap.parse_args()
    REPS[0] = max(2, a.reps)
    for case in a.case or ["rows-200k"]:
        run(case, a.lib, not a.no_trace)


if __name__ == "__main__":
    main()
