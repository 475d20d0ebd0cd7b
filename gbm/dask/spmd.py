"""The SPMD launcher of gbm's Dask training: one long task per worker, a worker-to-worker
collective between them, the first telling error when one fails.

``run_ranks`` is shared by the tree training (``gbm.dask.train``) and the linear models
(``gbm.dask.linear``): the client registers a collective session (``gbm.dask.collective``),
submits ``body(collective, share, *args)`` once per rank, pinned to that rank's worker and
never retried by Dask (the other ranks could not wait for a retry), and waits. A rank whose
body raises tells the others, which stop at their next exchange; the client raises that
rank's own error (row numbers in a ``ValueError`` made global, so the message is the one
local training gives), not the ``CollectiveError`` of the ranks it stopped.

When ranks were lost instead (their worker killed or gone, or hung past the collective's
timeout) and no rank failed on its own, ``run_ranks`` raises ``RanksLost``: which ranks
were lost, and what each surviving rank reported when it stopped (``RankStopped``: the
training's state at its last completed round, for ``gbm.dask.recovery`` to go on from).
"""
import re
import time
import uuid

from . import data as dask_data
from ..collective import CollectiveError
from ..cluster.errors import RanksLost, RankStopped

_GRACE_S = 3.0  # after the first failing rank: how long the others get to report theirs
_POLL_S = 0.5  # while waiting for the ranks' reports: how often the scheduler is asked
_WATCH_S = 2.0  # while the ranks train: how often the client checks their workers are there


def run_ranks(client, addresses, body, rank_args, timeout, name="gbm", transport="auto"):
    """Run ``body`` on every rank; returns the ranks' results, in rank order.

    Parameters
    ----------
    client : distributed.Client
    addresses : list of str, one worker per rank, in rank order
    body : module-level function ``body(collective, share, *args)``, run on the rank's
        worker; ``share`` is the rank's ``gbm.dask.data.plan`` entry (its ``ranges`` map
        the rank's rows to global rows in error messages)
    rank_args : list (one per rank) of tuples ``(share, *args)``
    timeout : float, seconds one exchange waits for the other ranks
    name : str, prefix of the tasks' keys
    transport : "auto" (direct TCP between the ranks where their workers' addresses are
        ``tcp://``, else Dask's comms) or "dask" (always Dask's comms); see
        ``gbm.dask.collective``
    """
    from .collective import check_transport, end_session, start_session

    check_transport(transport)
    session = f"gbm-{uuid.uuid4().hex}"
    start_session(client, session, addresses)
    futures = [client.submit(_run_rank, body, session, rank, addresses, float(timeout),
                             transport, *rank_args[rank], workers=[addr],
                             allow_other_workers=False, pure=False, retries=0,
                             key=f"{name}-rank{rank}-{session}")
               for rank, addr in enumerate(addresses)]
    try:
        return _wait_for_ranks(client, futures, addresses, float(timeout))
    finally:
        client.cancel(futures)
        end_session(client, session)


def worker_threads():
    """The Dask threads of the worker running the calling task (the Numba threads a rank
    uses unless ``n_jobs`` says otherwise)."""
    from distributed import get_worker

    return get_worker().state.nthreads


def _run_rank(body, session, rank, addresses, timeout, transport, share, *args):
    """One rank (a long task on its worker): ``body``'s result."""
    from distributed import get_worker

    from .collective import DaskCollective
    from .heap import kept_heap

    with kept_heap():  # Dask's workers make every large allocation a fresh mmap
        collective = None
        try:
            collective = DaskCollective(session, rank, addresses, timeout, transport)
            return body(collective, share, *args)
        except RankStopped:
            raise
        except CollectiveError as err:  # a peer lost or hung: the client decides what next
            raise RankStopped.of(err) from None
        except Exception as err:
            if collective is not None:
                collective.abort(f"rank {rank} ({get_worker().address}) failed: "
                                 f"{type(err).__name__}: {err}")
            raise _global_rows(err, dask_data.row_ids(share)) from None
        finally:
            if collective is not None:
                collective.close()


def _wait_for_ranks(client, futures, addresses, timeout):
    """Every rank's result; on a failure, the most telling error (a rank's own error over
    the ``CollectiveError`` of the ranks it stopped), without waiting on a lost rank; or
    ``RanksLost`` when ranks were lost or hung and none failed on its own."""
    pending = list(futures)
    while pending:  # distributed.wait has no FIRST_EXCEPTION
        try:
            _, pending = _wait(client, pending, timeout=_WATCH_S, return_when="FIRST_COMPLETED")
        except TimeoutError:  # no rank left to notice a loss (a single rank): ask
            alive = alive_workers(client)
            if all(addresses[futures.index(f)] in alive for f in pending):
                continue
            break
        if any(f.status in ("error", "cancelled") for f in futures):
            break
    else:
        return client.gather(futures)
    noticed = time.monotonic()
    errors, lost, alive = _reports(client, futures, addresses, noticed + timeout + _GRACE_S)
    own = [e for e in errors.values() if not _is_loss(e)]
    if own:  # a rank failed on its own (bad input, a callback's exception): its error
        raise own[0]
    if futures[0].status == "finished":  # rank 0 ended its work: a loss after the end
        return [f.result() if f.status == "finished" else None for f in futures]
    first = next((e for e in errors.values() if isinstance(e, CollectiveError)), None)
    message = str(first) if first is not None else (
        f"rank(s) {sorted(lost)} ({', '.join(addresses[r] for r in sorted(lost))}) were lost")
    hung = {r for e in errors.values() if getattr(e, "hung", False) for r in e.lost}
    raise RanksLost(message, lost, {r: e for r, e in errors.items()
                                    if isinstance(e, RankStopped)}, noticed,
                    {r for r in lost & hung if addresses[r] in alive})


def _reports(client, futures, addresses, deadline):
    """After a failure: ``(errors by rank, lost ranks, the workers there)``, once every
    rank has reported or is known lost: its worker gone, a surviving rank's collective
    named it (gone or hung), its task cancelled, or still silent at ``deadline``. A rank
    that failed on its own gives the others ``_GRACE_S`` to report."""
    grace = None
    while True:
        errors = {r: f.exception() for r, f in enumerate(futures) if f.status == "error"}
        if grace is None and any(not _is_loss(e) for e in errors.values()):
            grace = time.monotonic() + _GRACE_S
        named = {r for e in errors.values() for r in getattr(e, "lost", ())}
        alive = alive_workers(client)
        lost = {r for r, f in enumerate(futures)
                if f.status == "cancelled" or (f.status == "pending"
                                               and (r in named or addresses[r] not in alive))}
        lost |= {r for r, e in errors.items() if not isinstance(e, CollectiveError)
                 and _is_loss(e)}  # KilledWorker
        waiting = [f for r, f in enumerate(futures) if f.status == "pending" and r not in lost]
        now = time.monotonic()
        if not waiting or now >= (deadline if grace is None else min(grace, deadline)):
            lost |= {r for r, f in enumerate(futures) if f.status == "pending"}
            return errors, lost, alive
        try:
            _wait(client, waiting, timeout=_POLL_S, return_when="FIRST_COMPLETED")
        except TimeoutError:
            pass


def _is_loss(err):
    """Whether a rank's error says it was lost or stopped by a loss (not its own failure)."""
    from distributed import KilledWorker

    return isinstance(err, (CollectiveError, KilledWorker))


def alive_workers(client):
    """The addresses of the workers the scheduler has now (not a cached list)."""
    return set(client.run_on_scheduler(_scheduler_workers))


def _scheduler_workers(dask_scheduler=None):
    return list(dask_scheduler.workers)


def _wait(client, futures, timeout=None, return_when="ALL_COMPLETED"):
    """``distributed.wait`` on ``client`` (which need not be the default client); a
    cancelled future (a rank whose input data Dask forgot) counts as done, not raised."""
    from distributed.client import FuturesCancelledError, _wait as wait_async

    try:
        return client.sync(wait_async, futures, timeout=timeout, return_when=return_when)
    except FuturesCancelledError:
        done = {f for f in futures if f.status != "pending"}
        return done, {f for f in futures if f not in done}


_ROW = re.compile(r"\b(at row|row) (\d+)\b")


def _global_rows(err, ids):
    """``err`` with the rank's row numbers in its message made global (the message local
    training gives on the same data)."""
    if not isinstance(err, ValueError) or not err.args or not isinstance(err.args[0], str):
        return err

    def fix(m):
        row = int(m.group(2))
        return f"{m.group(1)} {ids[row]}" if row < len(ids) else m.group(0)

    new = type(err)(_ROW.sub(fix, err.args[0]), *err.args[1:])
    new.__traceback__ = err.__traceback__
    return new
