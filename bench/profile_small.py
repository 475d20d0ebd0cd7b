"""Where a small fit's time goes: ``python -m bench profile [--rows 5000 ...]``.

A binary fit of ``--rows`` x 10 float features (``make_classification``), ``--rounds``
rounds of depth ``--depth`` on ``--n-jobs`` threads, as the rows curve of ``bench/run.py``
fits it, measured five ways:

* wall time of whole fits (best of ``--repeats``), and of a fit of 0 rounds (the set-up);
* Python frames: ``cProfile`` of one fit, the functions with the most own time;
* every kernel call (the backend's kernels module wrapped): calls per round, time per
  call, and how many ran with more than one thread (a parallel region's wake-up);
* the grower's steps per tree level (histograms, split evaluation, partition);
* the fixed costs they are made of, measured alone: a Numba call's dispatch by argument
  count, a parallel region on 1 and on 2 threads, a thread-count switch.

The instrumented runs cost more than plain ones (a wrapper per call): their shares, not
their sums, are the point; the plain fits give the totals.
"""
import argparse
import cProfile
import collections
import contextlib
import io
import os
import pstats
import sys
import time

import numpy as np


def make_data(rows, seed=0):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=rows, n_features=10, n_informative=6, random_state=seed)
    return X.astype(np.float32), y.astype(np.float64)


def params_of(args):
    return {"objective": "binary:logistic", "max_depth": args.depth, "learning_rate": 0.1,
            "max_bin": 256, "n_jobs": args.n_jobs}


def best_of(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


class KernelTimer:
    """Wraps every function of a kernels module: counts, time, calls on > 1 thread."""

    def __init__(self, module):
        import numba

        self.module, self.saved = module, {}
        self.stats = collections.defaultdict(lambda: [0, 0, 0])  # calls, ns, parallel calls
        self.numba = numba

    def __enter__(self):
        for name in getattr(self.module, "__all__", ()):
            fn = getattr(self.module, name)
            self.saved[name] = fn
            setattr(self.module, name, self._wrap(name, fn))
        try:  # the whole-tree kernel, where this gbm has it: each fit's WholeTrees calls it
            from gbm.tree.whole_tree import WholeTrees
        except ImportError:
            WholeTrees = None
        if WholeTrees is not None:
            self.tree_class, self.tree_init = WholeTrees, WholeTrees.__init__
            wrap, init = self._wrap, WholeTrees.__init__

            def wrapped_init(tree_self, *a, **k):
                init(tree_self, *a, **k)
                tree_self.kernel = wrap("grow_tree", tree_self.kernel)

            WholeTrees.__init__ = wrapped_init
        return self

    def _wrap(self, name, fn):
        stats, get = self.stats[name], self.numba.get_num_threads

        def timed(*a, **k):
            parallel = get() > 1
            t0 = time.perf_counter_ns()
            out = fn(*a, **k)
            stats[1] += time.perf_counter_ns() - t0
            stats[0] += 1
            stats[2] += parallel
            return out
        return timed

    def __exit__(self, *exc):
        for name, fn in self.saved.items():
            setattr(self.module, name, fn)
        if getattr(self, "tree_class", None) is not None:
            self.tree_class.__init__ = self.tree_init


@contextlib.contextmanager
def level_timer(out):
    """Time of the grower's steps by tree level: ``out[(step, depth)] = [calls, ns]``."""
    from gbm.tree import grower

    cls = grower.TreeGrower
    saved = {name: getattr(cls, name) for name in ("_build", "_evaluate", "_split", "_finish")}

    def wrap(name, fn):
        def timed(self, *a, **k):
            ids = a[0] if name != "_finish" else None
            depth = int(self.nodes.depth[ids[0]]) if ids is not None and len(ids) else -1
            t0 = time.perf_counter_ns()
            result = fn(self, *a, **k)
            entry = out[(name.strip("_"), depth)]
            entry[0] += 1
            entry[1] += time.perf_counter_ns() - t0
            return result
        return timed

    for name, fn in saved.items():
        setattr(cls, name, wrap(name, fn))
    try:
        yield out
    finally:
        for name, fn in saved.items():
            setattr(cls, name, fn)


@contextlib.contextmanager
def switch_counter(out):
    """Counts ``Backend.threads`` blocks that switch Numba's thread count."""
    from gbm.runtime import backend

    cls = backend._Switch
    enter = cls.__enter__

    def counted(self):
        out["switches"] += 1
        return enter(self)

    cls.__enter__ = counted
    try:
        yield out
    finally:
        cls.__enter__ = enter


def micro_costs(n_jobs):
    """Fixed costs alone, in microseconds: dispatch by argument count, a parallel region,
    a thread-count switch, a small NumPy operation."""
    import numba
    from numba import njit, prange

    from gbm.runtime.backend import get_backend

    out = {}
    arrays = [np.zeros(3) for _ in range(17)]
    for k in (1, 8, 17):
        names = ", ".join(f"a{i}" for i in range(k))
        scope = {}
        exec(f"def f({names}):\n    return 0\n", scope)  # noqa: S102 - a fixed template
        f = njit(scope["f"])
        f(*arrays[:k])
        n = 20000
        t0 = time.perf_counter()
        for _ in range(n):
            f(*arrays[:k])
        out[f"dispatch, {k} array args"] = (time.perf_counter() - t0) / n * 1e6

    @njit(parallel=True)
    def region(x):
        for i in prange(x.shape[0]):
            x[i] += 1.0

    x = np.zeros(64)
    for threads in sorted({1, n_jobs}):
        numba.set_num_threads(threads)
        region(x)
        n = 2000
        t0 = time.perf_counter()
        for _ in range(n):
            region(x)
        out[f"parallel region (64 cells) on {threads} thread(s)"] = \
            (time.perf_counter() - t0) / n * 1e6
    numba.set_num_threads(n_jobs)
    backend = get_backend("cpu", n_jobs)
    n = 20000
    t0 = time.perf_counter()
    with backend.threads():
        for _ in range(n):
            with backend.threads(1):
                pass
    out["Backend.threads switch (inside a block)"] = (time.perf_counter() - t0) / n * 1e6
    a = np.zeros(64)
    t0 = time.perf_counter()
    for _ in range(n):
        np.empty(64)
        a[a > 0]
    out["small NumPy op (np.empty + a boolean index)"] = (time.perf_counter() - t0) / n / 2 * 1e6
    return out


def run(args):
    import gbm
    from gbm.kernels import cpu

    X, y = make_data(args.rows)
    params = params_of(args)

    def fit(rounds=args.rounds):
        return gbm.train(params, X, y, num_boost_round=rounds)

    def estimator_fit():
        gbm.GBMClassifier(n_estimators=args.rounds, max_depth=args.depth, learning_rate=0.1,
                          max_bin=256, n_jobs=args.n_jobs).fit(X, y)

    fit(), estimator_fit()  # compile / load the kernels
    lines = [f"# profile: {args.rows:,} rows x 10 float features, binary, {args.rounds} rounds "
             f"depth {args.depth}, n_jobs {args.n_jobs}"
             + ("" if args.fused is None else f", fused levels {args.fused}"), "",
             f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", ""]
    t_fit = best_of(fit, args.repeats)
    t_est = best_of(estimator_fit, args.repeats)
    t_setup = best_of(lambda: fit(0), args.repeats)
    per_round = (t_fit - t_setup) / args.rounds
    lines += ["## wall time (best of %d)" % args.repeats, "",
              "| what | s | ms per round |", "|---|--:|--:|",
              f"| gbm.train, {args.rounds} rounds | {t_fit:.3f} | {1e3 * t_fit / args.rounds:.3f} |",
              f"| GBMClassifier.fit | {t_est:.3f} | {1e3 * t_est / args.rounds:.3f} |",
              f"| gbm.train, 0 rounds (set-up) | {t_setup:.3f} | |",
              f"| rounds alone ((train - set-up) / rounds) | | {1e3 * per_round:.3f} |", ""]
    # Python frames
    profile = cProfile.Profile()
    profile.enable()
    fit()
    profile.disable()
    text = io.StringIO()
    stats = pstats.Stats(profile, stream=text).sort_stats("tottime")
    stats.print_stats(args.top)
    lines += ["## Python frames (cProfile, one fit, by own time)", "", "```",
              *[line for line in text.getvalue().splitlines() if line.strip()][-(args.top + 2):],
              "```", ""]
    # kernel calls
    with KernelTimer(cpu) as kt:
        fit()
    total_ns = sum(s[1] for s in kt.stats.values())
    lines += ["## kernel calls (one fit, wrapped)", "",
              "| kernel | calls per round | us per call | ms per round | calls on > 1 thread |",
              "|---|--:|--:|--:|--:|"]
    for name, (calls, ns, par) in sorted(kt.stats.items(), key=lambda kv: -kv[1][1]):
        if not calls:
            continue
        lines.append(f"| {name} | {calls / args.rounds:.1f} | {ns / calls / 1e3:.1f} | "
                     f"{ns / args.rounds / 1e6:.3f} | {par} |")
    calls = sum(s[0] for s in kt.stats.values())
    lines += [f"| all | {calls / args.rounds:.1f} | {total_ns / calls / 1e3:.1f} | "
              f"{total_ns / args.rounds / 1e6:.3f} | {sum(s[2] for s in kt.stats.values())} |", ""]
    # levels
    out = collections.defaultdict(lambda: [0, 0])
    with level_timer(out):
        fit()
    lines += ["## the grower by level (one fit, wrapped)", "",
              "| step | depth | calls per round | us per call | ms per round |",
              "|---|--:|--:|--:|--:|"]
    for (step, depth), (n, ns) in sorted(out.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        lines.append(f"| {step} | {depth if depth >= 0 else '-'} | {n / args.rounds:.1f} | "
                     f"{ns / n / 1e3:.1f} | {ns / args.rounds / 1e6:.3f} |")
    lines.append("")
    counts = collections.Counter()
    with switch_counter(counts):
        fit()
    lines += [f"thread-count switches (`Backend.threads` blocks that change Numba's count): "
              f"{counts['switches'] / args.rounds:.1f} per round", ""]
    lines += ["## fixed costs alone (microseconds)", "", "| what | us |", "|---|--:|"]
    lines += [f"| {k} | {v:.2f} |" for k, v in micro_costs(args.n_jobs).items()]
    lines += ["", f"load average at end: {os.getloadavg()[0]:.2f}"]
    return "\n".join(lines) + "\n"


def compare_fused(args):
    """The rows curve's fits (``bench.cases``, n_jobs ``--n-jobs``) with the whole-tree
    kernel's fused levels off (0) and on (1), and xgboost's, alternating in this
    process; best of ``--repeats`` each (``--compare-fused``)."""
    from bench.cases import make_data, make_estimator
    from gbm.tree import growers

    def fit(lib, X, y, case):
        growers.SWITCHES.fused_levels = 0 if lib == "fused 0" else 1
        model = make_estimator("gbm" if lib.startswith("fused") else lib, case, args.n_jobs)
        t0 = time.perf_counter()
        model.fit(X, y)
        return time.perf_counter() - t0

    libs = ("fused 0", "fused 1", "xgboost")
    lines = [f"# fused levels off / on against xgboost, n_jobs {args.n_jobs}, best of "
             f"{args.repeats}, alternating", "",
             f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", "",
             "| case | fused 0 s | fused 1 s | xgboost s | 1 / 0 | 1 / xgboost | load |",
             "|---|--:|--:|--:|--:|--:|--:|"]
    for case in args.cases.split(","):
        X, y = make_data(case)[:2]
        for lib in libs:  # compile / load, and the whole-tree kernel in use
            fit(lib, X, y, case)
        times = {lib: [] for lib in libs}
        for _ in range(args.repeats):
            for lib in libs:
                times[lib].append(fit(lib, X, y, case))
        best = {lib: min(t) for lib, t in times.items()}
        a, b, x = best["fused 0"], best["fused 1"], best["xgboost"]
        lines.append(f"| {case} | {a:.3f} | {b:.3f} | {x:.3f} | {b / a:.2f} | {b / x:.2f} | "
                     f"{os.getloadavg()[0]:.1f} |")
        print(lines[-1], flush=True)
    growers.SWITCHES.fused_levels = 1
    return "\n".join(lines) + "\n"


def main(argv=None, prog=None):
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--top", type=int, default=30, help="cProfile lines")
    ap.add_argument("--fused", type=int, choices=(0, 1, 2), default=None,
                    help="the whole-tree kernel's fused levels (gbm.tree.growers.SWITCHES): "
                         "0 never, 1 where estimated faster (the default), 2 wherever a level "
                         "has two threads")
    ap.add_argument("--compare-fused", action="store_true",
                    help="instead of the profile: the rows curve's fits with fused levels off "
                         "and on, and xgboost's, alternating (--cases)")
    ap.add_argument("--cases", default="rows-5k,rows-20k,rows-50k,rows-200k",
                    help="bench.cases names for --compare-fused")
    ap.add_argument("--out", help="Markdown file to write (default: print only)")
    args = ap.parse_args(argv)
    if args.fused is not None:
        from gbm.tree import growers

        growers.SWITCHES.fused_levels = args.fused
    text = compare_fused(args) if args.compare_fused else run(args)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
