"""The errors of a Dask training that lost ranks: how a collective names the ranks it
lost (``PeerLost``), what a stopped rank reports (``RankStopped``) and what the client
raises for a recovery to handle (``RanksLost``, ``gbm.dask.recovery``). All are
``gbm.collective.CollectiveError``: code that catches that sees them as before."""
from ..collective import CollectiveError


class PeerLost(CollectiveError):
    """An exchange ended because of other ranks: ``ranks`` are those that closed their
    connection (lost) or, with ``hung``, sent nothing within the timeout (their worker
    may be alive: hung, or far slower)."""

    def __init__(self, message, ranks=(), hung=False):
        super().__init__(message)
        self.ranks, self.hung = [int(r) for r in ranks], bool(hung)


class RankStopped(CollectiveError):
    """Raised by a rank that another rank's loss (or a failure of the collective) stopped.

    ``lost``: the ranks its collective named as gone or hung (may be empty; ``hung``: they
    did not answer in time, rather than closed their connection); ``state``: what the
    body kept of its work (``gbm.dask.progress``), or None; ``times``: ``partial_s`` (the
    seconds of work since that state, thrown away), ``first_round_at`` (``time.time()``
    when the rank reached its first round, None if it did not). Attributes survive
    pickling (Dask sends the exception to the client)."""

    def __init__(self, message, lost=(), state=None, hung=False, times=None):
        super().__init__(message)
        self.lost, self.state, self.hung = list(lost), state, bool(hung)
        self.times = dict(times or {})

    @classmethod
    def of(cls, err, state=None, times=None):
        """The ``RankStopped`` of a rank whose collective raised ``err``."""
        return cls(str(err), getattr(err, "ranks", ()), state, getattr(err, "hung", False),
                   times)


class RanksLost(CollectiveError):
    """Raised by ``run_ranks`` on the client when ranks were lost or hung and none failed
    on its own: ``lost`` (rank numbers), ``hung`` (those of them whose worker is still
    there: it holds its data yet), ``reports`` (rank -> its ``RankStopped``, for the ranks
    that reported), ``noticed`` (``time.monotonic()`` when the client saw the failure)."""

    def __init__(self, message, lost=(), reports=None, noticed=0.0, hung=()):
        super().__init__(message)
        self.lost, self.reports, self.noticed = sorted(lost), dict(reports or {}), noticed
        self.hung = sorted(hung)
