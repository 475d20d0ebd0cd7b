"""Direct TCP connections between the ranks of one training (the fast path of
``gbm.dask.collective``; the whole collective of ``gbm.spark`` and ``gbm.ray``,
``gbm.cluster.collective``).

A small all-reduce over Dask's own comms cost 1.5-3.6 ms between two workers on the
2-core machine this was measured on, and a depth-6 round makes 7 exchanges; over the ranks'
own sockets it costs 0.3-0.4 ms (``bench/RESULTS_dask.md``, docs/distributed.md). So,
when every rank's worker has a ``tcp://`` address, the ranks build a full mesh of their
own connections at the start of a training and exchange over it (``mesh``); the set-up
itself and the fallback decision go over the engine's own channel (Dask's comms, Spark's
barrier ``allGather``, Ray's collective):

1. every rank listens on its worker's host (an ephemeral port) and all ranks gather the
   ``(host, port)`` of every rank and rank 0's random secret;
2. each rank connects to every lower rank and sends a hello (the secret and its rank);
   an acceptor closes a connection whose hello is wrong before reading anything else
   (payloads are pickles: only the ranks of this training may send them);
3. the ranks agree (over that channel) that every connection was made; if one failed (a
   firewall, an address not routable from a peer), they all keep Dask's comms (Dask) or
   stop with an error naming the ranks (the other engines).

A Dask cluster with ``tls://`` addresses (or any other scheme) keeps Dask's comms: plain
sockets would bypass its encryption.

An exchange sends each value to every other rank and reads theirs, all sockets
non-blocking under one selector, so large values never deadlock on full socket buffers.
A peer that closes its connection (its process killed, its training failed and closed)
ends the wait at once; a peer that hangs ends it after the exchange timeout.
"""
import hmac
import pickle
import secrets
import selectors
import socket
import struct
import time

from ..collective import CollectiveError
from .errors import PeerLost

_HELLO = struct.Struct("<4s16sI")  # magic, secret, rank
_MAGIC = b"gbm1"
_HEAD = struct.Struct("<QQQ")  # exchange number, pickle bytes, out-of-band buffers
_CONNECT_S = 5.0  # how long set-up waits for a rank's connections (each way)



def _family(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def listen(host):
    """A listening socket on ``host`` (any free port), or None if that fails."""
    try:
        return socket.create_server((host, 0), family=_family(host), backlog=64)
    except OSError:
        return None


def new_secret():
    return secrets.token_bytes(16)


def connect(rank, peers, secret):
    """Connections to every lower rank (``peers[r] = (host, port)``), each sent a hello;
    ``{rank: socket}``, or None if one could not be made."""
    socks = {}
    deadline = time.monotonic() + _CONNECT_S  # for all of them: a firewall drops, not refuses
    try:
        for r in range(rank):
            host, port = peers[r]
            left = deadline - time.monotonic()
            if left <= 0:
                raise OSError("timed out")
            socks[r] = dial(host, port, secret, rank, left)
    except OSError:
        close_all(socks)
        return None
    return socks


def dial(host, port, secret, rank, timeout):
    """A connection to ``(host, port)`` that has sent its hello (``secret``, ``rank``);
    raises OSError when it cannot be made in ``timeout`` seconds."""
    sock = socket.create_connection((host, port), timeout=timeout)
    try:
        sock.sendall(_HELLO.pack(_MAGIC, secret, rank))
    except OSError:
        sock.close()
        raise
    return sock


def accept(listener, rank, world_size, secret):
    """The connections of every higher rank, their hellos checked; ``{rank: socket}``, or
    None if they did not all arrive in time. Connections with a wrong hello are closed
    and ignored."""
    expected = set(range(rank + 1, world_size))
    socks = {}
    deadline = time.monotonic() + _CONNECT_S
    try:
        while expected - socks.keys():
            left = deadline - time.monotonic()
            if left <= 0:
                raise OSError("timed out")
            listener.settimeout(left)
            sock, _ = listener.accept()
            sock.settimeout(max(deadline - time.monotonic(), 0.01))
            try:
                magic, got, src = _HELLO.unpack(_read_exactly(sock, _HELLO.size))
            except (OSError, EOFError):
                sock.close()
                continue
            if magic != _MAGIC or not hmac.compare_digest(got, secret) or src not in expected \
                    or src in socks:
                sock.close()
                continue
            socks[src] = sock
    except OSError:
        close_all(socks)
        return None
    return socks


def _read_exactly(sock, n):
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            raise EOFError
        got += k
    return bytes(buf)


def close_all(socks):
    for sock in socks.values():
        try:
            sock.close()
        except OSError:
            pass


def ready(socks):
    """Make the mesh's sockets non-blocking, without Nagle's delay."""
    for sock in socks.values():
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def mesh(rank, world_size, host, gather):
    """Connections from this rank to every other rank of a training (the set-up of the
    module's docstring): ``{rank: socket}``, non-blocking, or None on every rank when any
    rank could not listen, connect or accept (the sockets made are closed then).

    ``host``: the address this rank listens on (None: it cannot, so none get a mesh);
    ``gather(value)``: every rank's ``value`` in rank order, over the engine's own channel
    (each rank calls it three times, in the same order)."""
    listener = listen(host) if host is not None else None
    offer = None if listener is None else (host, listener.getsockname()[1],
                                           new_secret() if rank == 0 else None)
    socks, made = {}, False
    try:
        offers = gather(offer)
        if any(o is None for o in offers):
            return None
        secret = offers[0][2]
        lower = connect(rank, [o[:2] for o in offers], secret)
        socks.update(lower or {})
        if not all(gather(lower is not None)):
            return None
        higher = accept(listener, rank, world_size, secret)
        socks.update(higher or {})
        if not all(gather(higher is not None)):
            return None
        ready(socks)
        made = True
        return socks
    finally:
        if listener is not None:
            listener.close()
        if not made:
            close_all(socks)


def _frames(seq, value):
    """The bytes that carry ``value`` (pickle protocol 5, NumPy buffers out of band)."""
    buffers = []
    main = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
    raws = [b.raw() for b in buffers]
    head = _HEAD.pack(seq, len(main), len(raws)) + struct.pack(f"<{len(raws)}Q",
                                                               *(r.nbytes for r in raws))
    return [memoryview(head), memoryview(main)] + raws


class _Reader:
    """One peer's message, read as it arrives: header, buffer sizes, pickle, buffers."""

    def __init__(self):
        self.parts = [bytearray(_HEAD.size)]  # then the buffer sizes, the pickle, the buffers
        self.index, self.got = 0, 0  # the part being read, and its bytes read so far
        self.seq = None

    def feed(self, sock):
        """Read what is there; True once the message is complete, raises EOFError if the
        peer closed."""
        while True:
            buf = self.parts[self.index]
            if self.got == len(buf):
                if self._advance():
                    return True
                continue
            try:
                k = sock.recv_into(memoryview(buf)[self.got:])
            except (BlockingIOError, InterruptedError):
                return False
            if k == 0:
                raise EOFError
            self.got += k

    def _advance(self):
        """On to the next part (the header and the sizes say which come); True once the
        last is complete."""
        if self.index == 0:
            self.seq, self._n_main, n_bufs = _HEAD.unpack(self.parts[0])
            self.parts.append(bytearray(8 * n_bufs))
        elif self.index == 1:
            sizes = struct.unpack(f"<{len(self.parts[1]) // 8}Q", self.parts[1])
            self.parts += [bytearray(self._n_main)] + [bytearray(n) for n in sizes]
        elif self.index == len(self.parts) - 1:
            return True
        self.index, self.got = self.index + 1, 0
        return False

    def value(self):
        return pickle.loads(self.parts[2], buffers=self.parts[3:])


def exchange(socks, seq, value, send_to, receive_from, timeout, stopped, grace=1.0):
    """Send ``value`` to the ranks ``send_to`` and read exchange ``seq`` from the ranks
    ``receive_from``; ``{rank: value}``.

    ``stopped()`` returns a reason to give up (another rank said so over Dask) or None;
    it is polled while waiting, and for up to ``grace`` seconds after a peer closed its
    connection (a failing peer's reason may come just after). Raises
    ``CollectiveError`` on a peer that closed, a reason from ``stopped``, or ``timeout``
    seconds without completion.
    """
    frames = _frames(seq, value) if send_to else []
    sending = {r: list(frames) for r in send_to}
    readers = {r: _Reader() for r in receive_from}
    done = {}
    sel = selectors.DefaultSelector()
    try:
        for r, sock in socks.items():
            events = (selectors.EVENT_WRITE if r in sending else 0) | \
                     (selectors.EVENT_READ if r in readers else 0)
            if events:
                sel.register(sock, events, r)
        deadline = time.monotonic() + timeout
        while sending or len(done) < len(readers):
            left = deadline - time.monotonic()
            if left <= 0:
                missing = sorted(set(readers) - done.keys()) or sorted(sending)
                raise PeerLost(
                    f"exchange {seq} timed out after {timeout:g} s waiting for rank(s) "
                    f"{missing} (a worker hung or is far slower; raise collective_timeout "
                    "if it is only slow)", missing, hung=True)
            events = sel.select(min(left, 0.5))
            if not events:
                reason = stopped()
                if reason is not None:
                    raise CollectiveError(reason)
            for key, mask in events:
                r = key.data
                try:
                    if mask & selectors.EVENT_READ and r not in done:
                        if readers[r].feed(key.fileobj):
                            done[r] = readers[r]
                    if mask & selectors.EVENT_WRITE and r in sending:
                        _send_some(key.fileobj, sending[r])
                        if not sending[r]:
                            del sending[r]
                except (EOFError, OSError) as err:
                    raise _lost(r, seq, err, stopped, grace) from None
                _update(sel, key.fileobj, r, sending, readers, done)
    finally:
        sel.close()
    out = {}
    for r, reader in done.items():
        if reader.seq != seq:
            raise CollectiveError(f"rank {r} sent exchange {reader.seq} where exchange {seq} "
                                  "was due; the ranks lost step (please report this)")
        out[r] = reader.value()
    return out


def _send_some(sock, queue):
    """Send as much of the queued frames as the socket takes now."""
    while queue:
        try:
            k = sock.send(queue[0])
        except (BlockingIOError, InterruptedError):
            return
        if k == len(queue[0]):
            queue.pop(0)
        else:
            queue[0] = queue[0][k:]


def _update(sel, sock, r, sending, readers, done):
    events = (selectors.EVENT_WRITE if r in sending else 0) | \
             (selectors.EVENT_READ if r in readers and r not in done else 0)
    if events:
        sel.modify(sock, events, r)
    else:
        sel.unregister(sock)


def _lost(r, seq, err, stopped, grace=1.0):
    """The error for rank ``r``'s connection having ended: the reason its training gave
    (it tells the others over Dask before it closes; waited for up to ``grace`` seconds),
    else a lost worker (``PeerLost`` naming rank ``r``)."""
    deadline = time.monotonic() + grace
    while True:
        reason = stopped()
        if reason is not None or time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    if reason is not None:
        return CollectiveError(reason)
    return PeerLost(f"rank {r} closed its connection during exchange {seq} "
                    f"({type(err).__name__}: {err}); its worker was killed, crashed or "
                    "was lost, and the training was stopped", [r])
