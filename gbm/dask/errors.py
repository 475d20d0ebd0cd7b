"""The errors of a Dask training that lost ranks: how a collective names the ranks it
lost (``PeerLost``), what a stopped rank reports (``RankStopped``) and what the client
raises for a recovery to handle (``RanksLost``, ``gbm.dask.recovery``). All are
``gbm.collective.CollectiveError``: code that catches that sees them as before."""
from ..collective import CollectiveError


class PeerLost(CollectiveError):
    """An exchange ended because of other ranks: ``ranks`` are those that closed their
    connection or sent nothing within the timeout (lost or hung)."""

    def __init__(self, message, ranks=()):
        super().__init__(message)
        self.ranks = [int(r) for r in ranks]


class RankStopped(CollectiveError):
    """Raised by a rank that another rank's loss (or a failure of the collective) stopped.

    ``lost``: the ranks its collective named as gone or hung (may be empty); ``state``: what
    the body kept of its work (``gbm.dask.progress``), or None; ``partial_s``: seconds of
    work since that state, thrown away; ``setup_s``: seconds from the rank's start to its
    first round (None if it did not get there). Attributes survive pickling (Dask sends
    the exception to the client)."""

    def __init__(self, message, lost=(), state=None, partial_s=0.0, setup_s=None):
        super().__init__(message)
        self.lost, self.state, self.partial_s = list(lost), state, float(partial_s)
        self.setup_s = setup_s


class RanksLost(CollectiveError):
    """Raised by ``run_ranks`` on the client when ranks were lost or hung and none failed
    on its own: ``lost`` (rank numbers), ``reports`` (rank -> its ``RankStopped``, for the
    ranks that reported), ``noticed`` (``time.monotonic()`` when the client saw the
    failure)."""

    def __init__(self, message, lost=(), reports=None, noticed=0.0):
        super().__init__(message)
        self.lost, self.reports, self.noticed = sorted(lost), dict(reports or {}), noticed
