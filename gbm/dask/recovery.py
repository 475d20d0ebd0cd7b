"""A fit that loses a worker goes on without it (``max_recoveries``).

When ranks of a Dask training are lost (their worker killed, crashed or gone) or hang
past ``collective_timeout``, the surviving ranks stop at their next exchange and report
the training's state at their last completed round (``gbm.dask.progress``); the client
(``run``):

1. checks that Dask can give every partition again: one held only by a lost worker is
   computed again from its graph, or read from a replica; a partition with neither
   (data scattered with ``client.scatter`` and not replicated) fails the fit at once,
   with an error that names it;
2. takes the most advanced state the survivors reported (every rank holds the same
   model), or the last one it had (a loss before the first round: the start);
3. re-plans the partitions over the workers still there, and any that joined (the
   survivors of ``workers=`` when it was given, topped up to the fit's first rank count
   by the cluster's other workers: a spare, a restarted worker), never a worker that was
   lost or hung in this fit; row ids stay those of the whole data set, so the model does
   not depend on the new plan;
4. starts the ranks again from that state, and logs the recovery (``gbm.dask`` logger:
   which workers, at which round, the seconds lost) and records it.

``max_recoveries`` bounds the number of recoveries of one fit (0: fail at the first loss,
as before). No shared filesystem is needed: the state travels from a surviving rank to
the client and on to the next ranks. ``checkpoint_dir`` still covers a restart of the
client itself. The linear models go through the same steps, fitting again from the start
(they keep no state between attempts; a fit is certified by its duality gap, whatever
the number of ranks).
"""
import logging
import time

from ..collective import CollectiveError
from ..cluster.progress import DEFAULT_MAX_RECOVERIES, check_max_recoveries, newer  # noqa: F401
from ..cluster.errors import RanksLost
from .spmd import alive_workers

LOG = logging.getLogger("gbm.dask")
_WAIT_FOR_WORKERS_S = 0.1  # polling the scheduler for a worker when none is left


def run(client, addresses, attempt, layouts, max_recoveries, timeout, fixed=None):
    """Run ``attempt(addresses, resume)`` (which calls ``gbm.dask.spmd.run_ranks``) until
    it returns, recovering from ``RanksLost`` at most ``max_recoveries`` times.

    Parameters
    ----------
    client : distributed.Client
    addresses : list of str, the first attempt's workers in rank order
    attempt : callable ``(addresses, resume) -> results``; ``resume`` is the state to go
        on from (a ``gbm.dask.progress.Resume``) or None
    layouts : list of ``gbm.dask.data.Layout``, the data the ranks read
    max_recoveries : int >= 0
    timeout : float, ``collective_timeout``: also how long to wait for a worker to join
        when none is left
    fixed : list of str or None, the ``workers=`` the caller gave

    Returns ``(results, records)``: the last attempt's results and one dict per recovery
    (``workers``, ``ranks``, ``round``, ``reason``, ``work_lost_s``, ``replan_s``,
    ``restart_s``, ``seconds_lost``, ``workers_after``; see docs/distributed.md).
    """
    records, resume, started = [], None, len(addresses)
    excluded, dead = set(), set()  # lost or hung in this fit; lost with their data
    while True:
        submitted = time.time()  # the workers' first-round times are wall-clock times
        try:
            results = attempt(addresses, resume)
        except RanksLost as lost:
            if len(records) >= max_recoveries:
                if records:
                    raise CollectiveError(f"{lost} (after {len(records)} recoveries: "
                                          f"max_recoveries={max_recoveries})") from None
                raise
            _restarted(records, submitted, lost.reports.values())
            gone = [addresses[r] for r in lost.lost]
            excluded.update(gone)
            dead.update(addresses[r] for r in lost.lost if r not in lost.hung)
            _check_recomputable(client, layouts, dead, gone)
            reports = list(lost.reports.values())
            best = newer(resume, _newest(reports))
            chosen = [e for e in reports if e.state is not None and e.state is best]
            work = chosen[0] if chosen else max(
                reports, key=lambda e: e.times.get("partial_s", 0.0), default=None)
            resume = best
            addresses = _pool(client, started, fixed, excluded, timeout)
            records.append(_record(lost, gone, resume, work, addresses, max_recoveries,
                                   len(records) + 1))
            continue
        _restarted(records, submitted, [r for r in results if r is not None])
        return results, records


def _newest(reports):
    best = None
    for e in reports:
        best = newer(best, e.state)
    return best


def _record(lost, gone, resume, work, addresses, max_recoveries, n):
    """A recovery's record, logged."""
    replan_s = time.monotonic() - lost.noticed
    work_lost_s = 0.0 if work is None else float(work.times.get("partial_s", 0.0))
    rounds = 0 if resume is None else resume.rounds
    record = {"workers": gone, "ranks": list(lost.lost), "round": rounds,
              "reason": str(lost), "work_lost_s": work_lost_s, "replan_s": replan_s,
              "restart_s": None, "seconds_lost": work_lost_s + replan_s,
              "workers_after": list(addresses)}
    where = (f"in round {rounds}: {lost}; going on from round {rounds}" if resume else
             f"before a round was completed: {lost}; starting again (from checkpoint_dir's "
             "last checkpoint, if any)")
    LOG.warning("gbm.dask: lost worker(s) %s (rank(s) %s) %s on %d worker(s) (recovery %d "
                "of at most %d); %.2f s of work thrown away, %.2f s to re-plan",
                ", ".join(gone) or "?", list(lost.lost), where, len(addresses), n,
                max_recoveries, work_lost_s, replan_s)
    return record


def _restarted(records, submitted, reports):
    """The last recovery's ``restart_s``: from its ranks' submission (``submitted``,
    ``time.time()`` on the client) to the first round of the last of them to get there
    (their data computed again and moved, bin edges, the margins of the model so far),
    once they reported it (a rank's result, or its ``RankStopped``)."""
    if not records or records[-1]["restart_s"] is not None:
        return
    times = [t for t in map(_first_round_at, reports) if t is not None]
    if times:
        restart_s = max(0.0, max(times) - submitted)
        records[-1]["restart_s"] = restart_s
        records[-1]["seconds_lost"] += restart_s


def _first_round_at(report):
    """``time.time()`` when a rank reached its first round, from its ``RankStopped`` or
    its result (whose last item is its stats dict), or None."""
    if isinstance(report, CollectiveError):
        return getattr(report, "times", {}).get("first_round_at")
    stats = report[-1] if isinstance(report, tuple) and report else None
    return stats.get("first_round_at") if isinstance(stats, dict) else None


def _pool(client, started, fixed, excluded, timeout):
    """The workers of the next attempt (sorted): see the module's docstring, step 3.
    Waits up to ``timeout`` seconds for one when none is left."""
    deadline = time.monotonic() + timeout
    while True:
        alive = sorted(a for a in alive_workers(client) if a not in excluded)
        if fixed is not None:
            keep = [a for a in alive if a in fixed]
            extra = [a for a in alive if a not in fixed][:max(0, started - len(keep))]
            alive = sorted(keep + extra)
        if alive:
            return alive
        if time.monotonic() > deadline:
            raise CollectiveError(f"no worker is left to go on with the training (waited "
                                  f"{timeout:g} s for one to join); workers lost or hung: "
                                  f"{sorted(excluded)}")
        time.sleep(_WAIT_FOR_WORKERS_S)


def _check_recomputable(client, layouts, dead, gone):
    """CollectiveError naming the first partition Dask cannot give again (no copy on a
    worker outside ``dead``, and no graph to compute it from, or only on workers that are
    gone); a hung worker's copies count (it is left out of the ranks, but Dask still
    fetches from it)."""
    futures = [f for lay in layouts for f in lay.futures()]
    keys = [f.key for f in futures]
    bad = client.run_on_scheduler(_unrecoverable, keys, sorted(dead))
    if not bad:
        return
    i, why = bad[0]
    for lay in layouts:
        n = len(lay.futures())
        if i < n:
            what = lay.describe(i)
            break
        i -= n
    how = {"scattered": "Dask has no graph to compute it from (data given with "
                        "client.scatter, or a dependency of it)",
           "restricted": "Dask may compute it only on workers that are gone (persisted "
                         "with workers= and without allow_other_workers=True)"}[why]
    raise CollectiveError(
        f"worker(s) {', '.join(gone) or sorted(dead)} left the cluster during training, "
        f"and {len(bad)} partition(s) of the data cannot be had again, {what} among them: "
        f"its only copy was on a lost worker and {how}. Build the dask collections from a "
        "graph (dask.array.from_array, reading from storage) that any worker may compute, "
        "or replicate scattered data (client.replicate), for gbm to go on after a lost "
        "worker; or fit again (checkpoint_dir resumes from the last saved round)")


def _unrecoverable(keys, lost, dask_scheduler=None):
    """On the scheduler: ``(index, why)`` for each of ``keys`` that has no copy on a
    worker outside ``lost`` and cannot be computed again: ``"scattered"`` (no run_spec,
    here or in a dependency that has to be computed again too) or ``"restricted"`` (its
    worker restrictions allow only workers in ``lost`` or gone)."""
    lost = set(lost)
    known = {}  # key -> None (can be had) or why not

    def why_not(ts):
        if any(ws.address not in lost for ws in (ts.who_has or ())):
            return None
        if ts.run_spec is None:
            return "scattered"
        allowed = dask_scheduler.valid_workers(ts)
        if (not ts.loose_restrictions and allowed is not None
                and not any(ws.address not in lost for ws in allowed)):
            return "restricted"
        return ""  # computable here: its dependencies decide

    for key in keys:  # depth first, without recursion: graphs can be deep
        stack = [key]
        while stack:
            k = stack[-1]
            if k in known:
                stack.pop()
                continue
            ts = dask_scheduler.tasks.get(k)
            reason = "scattered" if ts is None else why_not(ts)
            if reason != "":
                known[k] = reason or None
                stack.pop()
                continue
            deps = [d.key for d in ts.dependencies]
            todo = [d for d in deps if d not in known]
            if todo:
                stack.extend(todo)
                continue
            known[k] = next((known[d] for d in deps if known[d] is not None), None)
            stack.pop()
    return [(i, known[k]) for i, k in enumerate(keys) if known[k] is not None]
