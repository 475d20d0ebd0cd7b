"""``python -m bench dask``: the distributed cases of BENCHMARKS.md.

* scaling: ``clf-1m``-like data (``make_classification``, 28 features, ``--rows`` rows),
  depth 6, learning rate 0.1, max_bin 256, ``--rounds`` rounds, on a ``LocalCluster`` of
  1 worker and one of 2 workers (processes, 1 thread each); efficiency =
  t(1 worker) / (2 x t(2 workers)). gbm and ``xgboost.dask`` (``hist``) side by side, fits
  interleaved, median of ``--repeats``; and whether each library's 1- and 2-worker models
  agree (gbm: identical model files; xgboost: the largest difference of predicted
  probabilities on the test rows).
* collective: the time of one all-reduce of one value and of one level's histograms
  (int64, ``(nodes, 28 features x 256 bins, 2)``, as ``gbm.tree.grower`` sends them) between
  the ranks of 2 and of 3 local workers, through ``gbm.dask.collective`` over each
  transport (the ranks' direct TCP connections, Dask's comms), median of 30.
* recovery: the same fit on 2 workers of a 3-worker ``LocalCluster`` (the third a spare),
  uninterrupted and with one rank's worker SIGKILLed in the middle of round
  ``rounds // 2`` (``max_recoveries``, ``gbm.dask.recovery``), interleaved, median of
  ``--repeats``: the time the loss costs, the recovery's own record (work thrown away,
  re-planning, the new ranks' set-up), and whether the models are the same file.

Writes the tables as Markdown to ``--out`` (default ``bench/RESULTS_dask.md``);
``--recovery-only`` measures the recovery alone and replaces only its section there.
"""
import argparse
import datetime
import os
import platform
import sys
import time

import numpy as np

from gbm.callback import TrainingCallback

FEATURES, BINS, DEPTH = 28, 256, 6
TRANSPORTS = ("tcp", "dask")


def _data(rows):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=rows, n_features=FEATURES, n_informative=20,
                               random_state=0)
    n_train = rows * 4 // 5
    return X[:n_train].astype(np.float32), y[:n_train].astype(np.float64), \
        X[n_train:].astype(np.float32)


def _fit_gbm(client, dX, dy, rounds, stats=None, **kwargs):
    import gbm.dask

    params = {"objective": "binary:logistic", "max_depth": DEPTH, "learning_rate": 0.1,
              "max_bin": BINS}
    start = time.perf_counter()
    booster = gbm.dask.train(client, params, dX, dy, rounds, _stats=stats, **kwargs)
    return time.perf_counter() - start, booster


def _fit_xgboost(client, dX, dy, rounds):
    import xgboost.dask as dxgb

    params = {"objective": "binary:logistic", "max_depth": DEPTH, "learning_rate": 0.1,
              "max_bin": BINS, "tree_method": "hist", "nthread": 1}
    start = time.perf_counter()
    with client.as_current():  # xgboost.dask looks for a default client
        dtrain = dxgb.DaskDMatrix(client, dX, dy)
        out = dxgb.train(client, params, dtrain, rounds)
    return time.perf_counter() - start, out["booster"]


def _allreduce_probe(session, rank, addresses, shapes, repeats, transport):
    """Rank ``rank``'s all-reduce times over ``transport`` ("tcp" or "dask")."""
    from gbm.dask.collective import DaskCollective
    from gbm.dask.heap import kept_heap

    asked = "auto" if transport == "tcp" else transport
    with kept_heap():  # as a training rank runs (gbm.dask.spmd)
        return _probe(DaskCollective(session, rank, addresses, 120.0, asked), shapes,
                      repeats, transport)


def _probe(c, shapes, repeats, transport):
    if c.transport != transport:
        raise AssertionError(f"asked for transport {transport!r}, got {c.transport!r}")
    out = {}
    try:
        for shape in shapes:
            hist = np.full(shape, c.rank + 1, dtype=np.int64)
            c.allreduce(hist)  # warm the connections
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                total = c.allreduce(hist)
                times.append(time.perf_counter() - start)
            expected = c.world_size * (c.world_size + 1) // 2
            if not (total == expected).all():
                raise AssertionError("all-reduce gave a wrong sum")
            out[shape] = float(np.median(times))
    finally:
        c.close()
    return out


def _collective_times(client, shapes, transport, repeats=30):
    """Median seconds per all-reduce of each shape, as rank 0 measured it, over
    ``transport`` ("tcp": the direct connections, "dask": Dask's comms)."""
    import uuid

    from gbm.dask.collective import end_session, start_session

    addresses = sorted(client.scheduler_info()["workers"])
    session = f"bench-{uuid.uuid4().hex}"
    start_session(client, session, addresses)
    try:
        futures = [client.submit(_allreduce_probe, session, r, addresses, shapes, repeats,
                                 transport, workers=[a], pure=False)
                   for r, a in enumerate(addresses)]
        return client.gather(futures)[0]
    finally:
        end_session(client, session)


class _KillMidRound(TrainingCallback):
    """A callback: on the worker ``address``, SIGKILLs the process half way through round
    ``epoch`` (half the last round's time after it starts, from a timer thread: the ranks
    are growing that round's trees)."""

    def __init__(self, address, epoch):
        self.address, self.epoch, self.last = address, epoch, None

    def before_iteration(self, booster, epoch, evals_log):
        import signal
        import threading

        from distributed import get_worker

        now = time.monotonic()
        if epoch == self.epoch and get_worker().address == self.address:
            delay = 0.5 * (now - self.last)
            threading.Timer(delay, os.kill, (os.getpid(), signal.SIGKILL)).start()
        self.last = now
        return False


def _recovery(X, y, rounds, repeats):
    """The recovery measurements (see the module's docstring): a dict for ``_recovery_lines``.

    The workers are ``dask worker --no-nanny`` processes of their own: a killed one stays
    dead, as a lost machine would, instead of a nanny restarting it on the same 2 cores
    in the middle of the measured recovery; each repeat starts a new spare, untimed."""
    import cloudpickle
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the callback, on workers
    chunk = max(1, X.shape[0] // 4)
    out = {"plain": [], "killed": [], "setup": [], "records": [], "same": [],
           "load": [os.getloadavg()[0]]}
    procs = []
    with LocalCluster(n_workers=0, dashboard_address=None) as cluster, \
            Client(cluster, set_as_default=False) as client:
        try:
            for _ in range(3):
                procs.append(_start_worker(cluster.scheduler_address))
            client.wait_for_workers(3, timeout=300)
            ranks = sorted(client.scheduler_info()["workers"])[:2]
            kw = dict(workers=ranks, allow_other_workers=True)  # lost ones: anywhere
            dX = client.persist(da.from_array(X, chunks=(chunk, FEATURES)), **kw)
            dy = client.persist(da.from_array(y, chunks=(chunk,)), **kw)
            with client.as_current():
                wait([dX, dy])
            _fit_gbm(client, dX, dy, 2)  # warm up: Numba kernels load in each worker, untimed
            _fit_gbm(client, dX, dy, 2, workers=ranks)
            for _ in range(repeats):  # interleaved: drift hits both columns alike
                if len(client.scheduler_info()["workers"]) < 3:  # a new spare, warmed up
                    procs.append(_start_worker(cluster.scheduler_address))
                    client.wait_for_workers(3, timeout=300)
                    _fit_gbm(client, dX, dy, 2)
                ranks = _holders(client, dX)  # the 2 workers holding the data; third: spare
                stats, submitted = {}, time.time()
                seconds, plain = _fit_gbm(client, dX, dy, rounds, stats, workers=ranks)
                out["plain"].append(seconds)
                out["setup"].append(max(r["first_round_at"] for r in stats["ranks"])
                                    - submitted)
                stats = {}
                seconds, killed = _fit_gbm(client, dX, dy, rounds, stats, workers=ranks,
                                           callbacks=[_KillMidRound(ranks[1], rounds // 2)])
                out["killed"].append(seconds)
                out["records"] += stats["recoveries"]
                out["same"].append(killed.to_json() == plain.to_json())
                print(f"[dask] recovery: {out['plain'][-1]:.2f} s uninterrupted, "
                      f"{seconds:.2f} s with a loss; {stats['recoveries']}", file=sys.stderr,
                      flush=True)
            out["rows_per_rank"] = [r["rows"] for r in stats["ranks"]]
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(timeout=60)
    out["load"].append(os.getloadavg()[0])
    return out


def _start_worker(scheduler):
    """A ``dask worker`` process without a nanny, 1 thread, on ``scheduler``."""
    import subprocess

    return subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", scheduler,
                             "--no-nanny", "--nthreads", "1", "--memory-limit", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _holders(client, dX):
    """The 2 workers holding most of ``dX``'s partitions (then by address)."""
    from collections import Counter

    held = Counter(a for who in client.who_has(dX).values() for a in who)
    workers = sorted(client.scheduler_info()["workers"])
    return sorted(sorted(workers, key=lambda a: (-held[a], a))[:2])


def _recovery_lines(rec, rows, rounds, repeats):
    med = {k: float(np.median(rec[k])) for k in ("plain", "killed", "setup")}
    rs = rec["records"]
    part = {k: float(np.median([r[k] for r in rs if r[k] is not None]))
            for k in ("work_lost_s", "replan_s", "restart_s", "seconds_lost")}
    per_round = med["plain"] / rounds
    return [
        "## Recovery from a lost worker", "",
        f"{datetime.date.today()}, load average {rec['load'][0]:.1f} at start and "
        f"{rec['load'][1]:.1f} at the end (a shared 2-core machine; read the parts, not the "
        f"seconds). `make_classification` {rows * 4 // 5:,} x {FEATURES} train rows in 4 "
        f"partitions on 2 of 3 worker processes (`dask worker --no-nanny`, 1 thread each: a "
        f"killed one stays dead; the third is a spare), {rounds} rounds, depth "
        f"{DEPTH}; the worker of rank 1 SIGKILLed half a round into round {rounds // 2}; "
        f"median of {repeats}, the two fits interleaved.", "",
        "| fit | seconds | per round |", "|---|---|---|",
        f"| uninterrupted | {med['plain']:.2f} | {per_round:.3f} |",
        f"| one worker lost | {med['killed']:.2f} | |",
        f"| cost of the loss (the difference) | {med['killed'] - med['plain']:.2f} | "
        f"{(med['killed'] - med['plain']) / per_round:.1f} rounds' time |", "",
        f"Same model file as the uninterrupted fit: {sum(rec['same'])} of {len(rec['same'])}. "
        f"Rows per rank after the recovery: {rec['rows_per_rank']}. The recovery's record "
        f"(median over the {len(rs)} recoveries): went on from round "
        f"{sorted({r['round'] for r in rs})}; {part['work_lost_s']:.2f} s of work thrown "
        f"away (the survivor's time since its last completed round, noticing the loss "
        f"included), {part['replan_s']:.2f} s for the client to collect the survivor's "
        f"state and re-plan, {part['restart_s']:.2f} s of set-up of the new ranks (the lost "
        f"partitions computed again and moved, binning, the margins of the "
        f"{rounds // 2} trees so far: from their submission to their first round; a fresh "
        f"fit's set-up takes {med['setup']:.2f} s the same way); "
        f"{part['seconds_lost']:.2f} s in all."]


def main(argv=None, prog=None):
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=2_000_000,
                    help="rows (80%% train; BENCHMARKS.md: clf-1m x 2)")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-xgboost", action="store_true")
    ap.add_argument("--recovery-only", action="store_true",
                    help="measure the recovery alone; replace only its section of --out")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "RESULTS_dask.md"))
    args = ap.parse_args(argv)
    from distributed import Client, LocalCluster

    import dask.array as da

    X, y, X_test = _data(args.rows)
    if args.recovery_only:
        recovery = _recovery_lines(_recovery(X, y, args.rounds, args.repeats), args.rows,
                                   args.rounds, args.repeats)
        _replace_section(args.out, recovery)
        print("\n".join(recovery))
        return 0
    chunk = max(1, X.shape[0] // 4)
    libs = ["gbm"] + ([] if args.no_xgboost else ["xgboost"])
    fit = {"gbm": _fit_gbm, "xgboost": _fit_xgboost}
    load_start = os.getloadavg()[0]
    times = {(lib, n): [] for lib in libs for n in (1, 2)}
    models, stats = {}, {}
    clusters = {n: LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                dashboard_address=None) for n in (1, 2)}
    clients = {n: Client(clusters[n], set_as_default=False) for n in (1, 2)}
    try:
        data = {}
        for n, client in clients.items():
            dX = client.persist(da.from_array(X, chunks=(chunk, FEATURES)))
            dy = client.persist(da.from_array(y, chunks=(chunk,)))
            data[n] = (dX, dy)
            for lib in libs:  # warm up (Numba kernels load in each worker), untimed
                fit[lib](client, dX, dy, 2)
        for _ in range(args.repeats):  # interleaved: drift hits every column alike
            for lib in libs:
                for n in (1, 2):
                    extra = {"stats": stats.setdefault(n, {})} if lib == "gbm" else {}
                    seconds, model = fit[lib](clients[n], *data[n], args.rounds, **extra)
                    times[(lib, n)].append(seconds)
                    models[(lib, n)] = model
                    print(f"[dask] {lib} {n} worker(s): {seconds:.2f} s", file=sys.stderr, flush=True)
        shapes = [(1,), (1, FEATURES * BINS, 2), (16, FEATURES * BINS, 2)]
        collective = {(2, t): _collective_times(clients[2], shapes, t) for t in TRANSPORTS}
    finally:
        for n in (1, 2):
            clients[n].close()
            clusters[n].close()
    with LocalCluster(n_workers=3, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster3, Client(cluster3, set_as_default=False) as c3:
        collective.update({(3, t): _collective_times(c3, shapes, t) for t in TRANSPORTS})
    agree = {"gbm": "identical model files" if models[("gbm", 1)].to_json()
             == models[("gbm", 2)].to_json() else "DIFFERENT model files"}
    if "xgboost" in libs:
        import xgboost

        p = [models[("xgboost", n)].inplace_predict(X_test) for n in (1, 2)]
        agree["xgboost"] = f"max |p1 - p2| = {float(np.abs(p[0] - p[1]).max()):.3g}"
    lines = _report(args, libs, times, agree, collective, shapes, load_start, stats[2])
    lines += [""] + _recovery_lines(_recovery(X, y, args.rounds, args.repeats), args.rows,
                                    args.rounds, args.repeats)
    text = "\n".join(lines) + "\n"
    print(text)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


def _report(args, libs, times, agree, collective, shapes, load_start, stats2):
    import distributed

    med = {k: float(np.median(v)) for k, v in times.items()}
    lines = [
        "# Distributed benchmark (`python -m bench dask`)", "",
        f"{datetime.date.today()}, {platform.machine()}, {os.cpu_count()} cores, load average "
        f"{load_start:.1f} at start (a shared machine: read ratios, not seconds), "
        f"distributed {distributed.__version__}. "
        f"`make_classification` {args.rows * 4 // 5:,} x {FEATURES} train rows, binary, "
        f"{args.rounds} rounds, depth {DEPTH}, max_bin {BINS}; LocalCluster worker processes, "
        f"1 thread each; median of {args.repeats}.", "",
        "| library | 1 worker (s) | 2 workers (s) | scaling efficiency t1 / (2 t2) | 1 vs 2 workers |",
        "|---|---|---|---|---|"]
    for lib in libs:
        t1, t2 = med[(lib, 1)], med[(lib, 2)]
        lines.append(f"| {lib} | {t1:.2f} | {t2:.2f} | {t1 / (2 * t2):.2f} | {agree[lib]} |")
    ranks = stats2["ranks"]
    lines += ["", f"gbm on 2 workers (last fit): rows per rank {[r['rows'] for r in ranks]}; "
              f"transport {ranks[0]['transport']}; "
              f"{ranks[0]['exchanges'] / args.rounds:.0f} exchanges per round, "
              f"{ranks[0]['collective_s'] / args.rounds * 1e3:.0f} ms per round in the collective "
              "(rank 0: sending and waiting for the other rank, which includes waiting for a "
              "slower rank to reach the exchange)."]
    lines += ["", "All-reduce of one int64 value and of one level's histograms (int64, nodes x 28 "
              "features x 256 bins x 2), worker to worker (`gbm.dask.collective`): over the "
              "ranks' direct TCP connections (`gbm.dask.sockets`, the default) and over Dask's "
              "comms (`transport=\"dask\"`), median ms:", "",
              "| all-reduced | bytes | 2 workers, TCP | 2 workers, Dask comms | 3 workers, TCP "
              "| 3 workers, Dask comms |", "|---|---|---|---|---|---|"]
    for shape in shapes:
        nbytes = int(np.prod(shape)) * 8
        what = "1 value" if len(shape) == 1 else f"{shape[0]} node(s)"
        cells = " | ".join(f"{collective[(n, t)][shape] * 1e3:.2f}" for n in (2, 3)
                           for t in TRANSPORTS)
        lines.append(f"| {what} | {nbytes / 1e6:.6g} MB | {cells} |")
    return lines


def _replace_section(path, lines):
    """``path`` with its "## Recovery ..." section (to the next "## " heading or the end)
    replaced by ``lines``, or ``lines`` added at its end."""
    text = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    head = lines[0]
    start = text.find(head)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
    else:
        end = text.find("\n## ", start + len(head))
        rest = "" if end < 0 else text[end:]
        text = text[:start] + "\n".join(lines) + "\n" + rest
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    sys.exit(main())
