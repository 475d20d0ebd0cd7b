"""How a Ray Train worker group builds gbm's TCP mesh.

The mesh's set-up (``gbm.cluster.sockets.mesh``) all-gathers small values three times;
Ray Train's worker collectives offer only ``broadcast_from_rank_zero`` and a barrier. So
rank 0 listens, broadcasts its address and a fresh secret that way, every other rank
connects to it (its hello checked as the mesh's are), and ``StarGather`` all-gathers
over those connections: each rank sends its value to rank 0, which sends the list back.
"""
from ..collective import CollectiveError
from ..cluster import sockets


class StarGather:
    """``gather(value)``: every rank's value in rank order, through rank 0.

    ``broadcast(value)``: rank 0's value on every rank (Ray's
    ``broadcast_from_rank_zero``); ``host``: this rank's address; ``timeout``: seconds
    one gather waits."""

    def __init__(self, rank, world_size, host, broadcast, timeout):
        self.rank, self.world_size, self.timeout = rank, world_size, float(timeout)
        self._seq = 0
        self._socks = {}
        if world_size == 1:
            return
        if rank == 0:
            listener = sockets.listen(host)
            secret = sockets.new_secret()
            broadcast(None if listener is None
                      else (host, listener.getsockname()[1], secret))
            socks = None if listener is None else sockets.accept(listener, 0, world_size,
                                                                 secret)
            if listener is not None:
                listener.close()
        else:
            offer = broadcast(None)
            socks = None
            if offer is not None:
                try:
                    socks = {0: sockets.dial(offer[0], offer[1], offer[2], rank,
                                             self.timeout)}
                except OSError:
                    socks = None
        if socks is None:
            raise CollectiveError(f"rank {rank} could not connect to rank 0 of the Ray Train "
                                  f"workers over TCP (this rank's host {host}); the workers' "
                                  "hosts must reach each other on ephemeral ports")
        sockets.ready(socks)
        self._socks = socks

    def __call__(self, value):
        if self.world_size == 1:
            return [value]
        seq, self._seq = self._seq, self._seq + 2
        others = list(range(1, self.world_size))

        def exchange(n, payload, send_to, receive_from):
            return sockets.exchange(self._socks, n, payload, send_to, receive_from,
                                    self.timeout, lambda: None, 0.0)

        if self.rank == 0:
            got = exchange(seq, None, [], others)
            values = [value] + [got[r] for r in others]
            exchange(seq + 1, values, others, [])
            return values
        exchange(seq, value, [0], [])
        return exchange(seq + 1, None, [], [0])[0]

    def close(self):
        sockets.close_all(self._socks)
        self._socks = {}
