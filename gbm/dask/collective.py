"""A collective between Dask workers: rank-to-rank messages over Dask's own comms.

Each training rank is one long task on one worker. The ranks exchange directly, worker to
worker, through a comm handler that a ``WorkerPlugin`` adds to every worker (the pattern
of Dask's own P2P shuffle; docs/distributed.md, "Performance"): Dask's connections, addresses,
TLS and zero-copy NumPy serialisation, no extra ports, nothing through the client or the
scheduler. An exchange is all-to-all: every rank sends its value to every other rank and
waits for theirs (a handful of workers; a ring pays off only for many workers).

Where every worker's address is ``tcp://`` (``transport="auto"``, the default), the ranks
first build direct TCP connections of their own (``gbm.cluster.sockets``: a fifth or less of
the latency of Dask's comms) and exchange over them; the set-up, aborts and loss notices
still go over Dask's comms, and ranks that cannot all connect keep using them.

Failing fast, never hanging:

* a rank whose training raises tells the others (``abort``), which raise
  ``CollectiveError`` at their next exchange;
* a ``SchedulerPlugin`` hears the scheduler remove a worker (killed, lost) and tells the
  surviving ranks of every training that worker was part of, within milliseconds;
* every wait has a timeout (``timeout`` seconds per exchange), the backstop for a worker
  that hangs without dying (the scheduler notices those only after ``worker-ttl``).

Messages are tagged by training session (one per attempt) and exchange number, so late
messages of an aborted attempt are dropped, never mistaken for a later one's.

``worker.handlers`` is not a documented API of ``distributed``: setup.py pins its version.
"""
import asyncio
import threading
import time


from ..cluster.collective import Exchanging
from ..collective import CollectiveError
from ..cluster.errors import PeerLost

_MESSAGE = "gbm_collective_message"  # the worker's comm handlers
_ABORT = "gbm_collective_abort"
WORKER_PLUGIN = "gbm-collective"
SCHEDULER_PLUGIN = "gbm-collective-loss-notice"
TRANSPORTS = ("auto", "dask")


def check_transport(transport):
    if transport not in TRANSPORTS:
        raise ValueError(f"transport must be 'auto' or 'dask', got {transport!r}")


class Mailbox:
    """A worker's received messages, by (session, exchange number, sender rank).

    The comm handlers (on the worker's event loop) put; the rank's task thread takes."""

    def __init__(self):
        self._cond = threading.Condition()
        self._messages = {}
        self._aborted = {}  # session -> reason
        self._closed = set()  # sessions that ended here: their late messages are dropped

    def put(self, session, seq, src, payload):
        with self._cond:
            if session not in self._closed:
                self._messages[(session, seq, src)] = payload
                self._cond.notify_all()

    def abort(self, session, reason):
        with self._cond:
            if session not in self._closed:
                self._aborted.setdefault(session, reason)
                self._cond.notify_all()

    def take(self, session, seq, sources, timeout):
        """``{src: payload}`` once every rank in ``sources`` has sent exchange ``seq``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                if session in self._aborted:
                    raise CollectiveError(self._aborted[session])
                if all((session, seq, s) in self._messages for s in sources):
                    return {s: self._messages.pop((session, seq, s)) for s in sources}
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = [s for s in sources if (session, seq, s) not in self._messages]
                    raise PeerLost(
                        f"exchange {seq} timed out after {timeout:g} s waiting for rank(s) "
                        f"{missing} (a worker hung or is far slower; raise collective_timeout "
                        "if it is only slow)", missing, hung=True)
                self._cond.wait(min(left, 1.0))

    def reason(self, session):
        """Why ``session`` was aborted, or None (without waiting)."""
        with self._cond:
            return self._aborted.get(session)

    def close(self, session):
        with self._cond:
            self._closed.add(session)
            self._aborted.pop(session, None)
            for key in [k for k in self._messages if k[0] == session]:
                del self._messages[key]


def _worker_plugin_class():
    from distributed.diagnostics.plugin import WorkerPlugin

    class CollectivePlugin(WorkerPlugin):
        """Adds the collective's comm handlers and a ``Mailbox`` to a worker (idempotent:
        registering it again keeps the mailbox of trainings under way)."""

        name = WORKER_PLUGIN

        def setup(self, worker):
            if getattr(worker, "_gbm_mailbox", None) is None:
                worker._gbm_mailbox = Mailbox()
            mailbox = worker._gbm_mailbox

            def receive(session=None, seq=None, src=None, payload=None):
                mailbox.put(session, seq, src, payload)
                return "OK"

            def abort(session=None, reason=None):
                mailbox.abort(session, reason)
                return "OK"

            worker.handlers[_MESSAGE] = receive
            worker.handlers[_ABORT] = abort

    return CollectivePlugin


def _scheduler_plugin_class():
    from distributed.diagnostics.plugin import SchedulerPlugin

    class LossNotice(SchedulerPlugin):
        """Tells the surviving ranks of a training when the scheduler removes a worker."""

        name = SCHEDULER_PLUGIN

        def __init__(self):
            self.sessions = {}  # session -> worker addresses in rank order

        async def remove_worker(self, scheduler, worker, **kwargs):
            sends = []
            for session, addresses in list(self.sessions.items()):
                if worker not in addresses:
                    continue
                reason = (f"worker {worker} (rank {addresses.index(worker)} of "
                          f"{len(addresses)}) left the cluster during training (killed, "
                          "crashed or lost); the training was stopped")
                sends += [scheduler.rpc(a).gbm_collective_abort(session=session, reason=reason)
                          for a in addresses if a != worker]
            await asyncio.gather(*sends, return_exceptions=True)

    return LossNotice


def _add_session(session, addresses, dask_scheduler=None):
    plugin = dask_scheduler.plugins.get(SCHEDULER_PLUGIN)
    if plugin is None:
        return False
    plugin.sessions[session] = list(addresses)
    return True


def _remove_session(session, dask_scheduler=None):
    plugin = dask_scheduler.plugins.get(SCHEDULER_PLUGIN)
    if plugin is not None:
        plugin.sessions.pop(session, None)


def start_session(client, session, addresses):
    """Install the plugins (once per cluster) and register a training's ranks; returns
    whether the scheduler will send loss notices (else only timeouts catch a lost worker:
    the scheduler cannot import gbm)."""
    client.register_plugin(_worker_plugin_class()(), name=WORKER_PLUGIN)
    try:
        if not client.run_on_scheduler(_has_loss_notice):
            client.register_plugin(_scheduler_plugin_class()(), name=SCHEDULER_PLUGIN)
        return bool(client.run_on_scheduler(_add_session, session, list(addresses)))
    except Exception:  # noqa: BLE001 - e.g. gbm missing on the scheduler: timeouts remain
        return False


def _has_loss_notice(dask_scheduler=None):
    return SCHEDULER_PLUGIN in dask_scheduler.plugins


def end_session(client, session):
    try:
        client.run_on_scheduler(_remove_session, session)
    except Exception:  # noqa: BLE001 - the scheduler's bookkeeping only
        pass


class DaskCollective(Exchanging):
    """One rank of a training over Dask workers (built inside the rank's task).

    Parameters
    ----------
    session : str, the training attempt's tag
    rank : int, this rank's index in ``addresses``
    addresses : list of str, the workers of the ranks, in rank order
    timeout : float, seconds an exchange may wait for the other ranks
    transport : "auto" (direct TCP connections where possible) or "dask" (Dask's comms);
        ``self.transport`` says which one it got ("tcp" or "dask")
    """

    def __init__(self, session, rank, addresses, timeout, transport="auto"):
        from distributed import get_worker

        check_transport(transport)
        self.session, self.rank = session, rank
        self.addresses, self.world_size = list(addresses), len(addresses)
        self.timeout = float(timeout)
        self._worker = get_worker()
        self._mailbox = self._worker._gbm_mailbox
        self._seq = 0
        self.n_exchanges, self.seconds = 0, 0.0  # for the benchmark
        self._socks = None  # the direct connections (gbm.dask.sockets), when made
        if transport == "auto" and self.world_size > 1:
            self._socks = self._connect()
        self.transport = "tcp" if self._socks is not None else "dask"

    def _connect(self):
        """Direct connections to every other rank (``gbm.cluster.sockets.mesh``), or None
        where any rank could not make its own (they then all keep Dask's comms)."""
        from ..cluster.sockets import mesh
        from .sockets import tcp_host

        hosts = [tcp_host(a) for a in self.addresses]
        host = hosts[self.rank] if None not in hosts else None
        return mesh(self.rank, self.world_size, host,
                    lambda value: self._exchange(value, range(self.world_size)))

    # -- messages -----------------------------------------------------------------------
    def _without_mesh(self, seq, value, senders, others):
        """Exchange ``seq`` over Dask's comms (``Exchanging._exchange`` without a mesh)."""
        if self.rank in senders:
            self._send_all(seq, value)
        return self._mailbox.take(self.session, seq, others, self.timeout)

    def _send_all(self, seq, value):
        """Send ``value`` to every other rank without waiting for their replies (the
        worker's event loop sends it); a failed send aborts this rank's next wait."""
        from distributed.protocol import to_serialize

        payload = to_serialize(value)
        targets = [a for r, a in enumerate(self.addresses) if r != self.rank]
        mailbox, session, rank, rpc = self._mailbox, self.session, self.rank, self._worker.rpc

        async def send():
            try:
                await asyncio.gather(*(rpc(a).gbm_collective_message(
                    session=session, seq=seq, src=rank, payload=payload) for a in targets))
            except Exception as err:  # noqa: BLE001 - a lost peer shows here as a comm error
                mailbox.abort(session, f"rank {rank} could not send exchange {seq} to the other "
                              f"ranks ({type(err).__name__}: {err}); a worker was lost or is "
                              "unreachable")

        self._worker.loop.add_callback(send)

    def failure(self):
        """Why this training was stopped (another rank failed, a worker was lost), or
        None; for waits outside the mailbox (``gbm.dask.nccl``)."""
        return self._mailbox.reason(self.session)

    def abort(self, reason):
        """Tell the other ranks to stop (best effort: they may be gone)."""
        from distributed.utils import sync

        targets = [a for r, a in enumerate(self.addresses) if r != self.rank]

        async def send():
            await asyncio.gather(*(self._worker.rpc(a).gbm_collective_abort(
                session=self.session, reason=reason) for a in targets), return_exceptions=True)

        try:
            sync(self._worker.loop, send, callback_timeout=5.0)
        except Exception:  # noqa: BLE001 - the ranks not told time out
            pass

    def close(self):
        if self._socks is not None:
            from ..cluster.sockets import close_all

            close_all(self._socks)
            self._socks = None
        self._mailbox.close(self.session)
