"""The SPMD launcher of gbm's Dask training: one long task per worker, a worker-to-worker
collective between them, the first telling error when one fails.

``run_ranks`` is shared by the tree training (``gbm.dask.train``) and the linear models
(``gbm.dask.linear``): the client registers a collective session (``gbm.dask.collective``),
submits ``body(collective, share, *args)`` once per rank, pinned to that rank's worker and
never retried by Dask (the other ranks could not wait for a retry), and waits. A rank whose
body raises tells the others, which stop at their next exchange; the client raises that
rank's own error (row numbers in a ``ValueError`` made global, so the message is the one
local training gives), not the ``CollectiveError`` of the ranks it stopped.
"""
import re
import uuid

from . import data as dask_data
from ..collective import CollectiveError

_GRACE_S = 3.0  # after the first failing rank: how long the others get to report theirs


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
        return _wait_for_ranks(client, futures)
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
        collective = DaskCollective(session, rank, addresses, timeout, transport)
        try:
            return body(collective, share, *args)
        except CollectiveError:
            raise
        except Exception as err:
            collective.abort(f"rank {rank} ({get_worker().address}) failed: "
                             f"{type(err).__name__}: {err}")
            raise _global_rows(err, dask_data.row_ids(share)) from None
        finally:
            collective.close()


def _wait_for_ranks(client, futures):
    """Every rank's result; on a failure, the most telling error (a rank's own error over
    the ``CollectiveError`` of the ranks it stopped), without waiting on a lost rank."""
    pending = list(futures)
    while pending:  # distributed.wait has no FIRST_EXCEPTION
        _, pending = _wait(client, pending, return_when="FIRST_COMPLETED")
        if any(f.status in ("error", "cancelled") for f in futures):
            break
    else:
        return client.gather(futures)
    if pending:  # the other ranks were told to stop; let them say why (a lost one never does)
        try:
            _wait(client, list(pending), timeout=_GRACE_S)
        except TimeoutError:
            pass
    errors = [f.exception() for f in futures if f.status == "error"]
    first = next((e for e in errors if not isinstance(e, CollectiveError)), errors[0])
    raise first


def _wait(client, futures, timeout=None, return_when="ALL_COMPLETED"):
    """``distributed.wait`` on ``client`` (which need not be the default client)."""
    from distributed.client import _wait as wait_async

    return client.sync(wait_async, futures, timeout=timeout, return_when=return_when)


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
