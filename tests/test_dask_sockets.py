"""The direct TCP mesh of the Dask collective (``gbm.cluster.sockets``), without a cluster:
ranks are threads of this process, connected over real loopback sockets."""
import socket
import threading
import time

import numpy as np
import pytest

from gbm.cluster import sockets as cs
from gbm.dask import sockets as ds
from gbm.collective import CollectiveError, ThreadGroup
from gbm.dask.collective import DaskCollective

HOST = "127.0.0.1"


def _collective_set_up(addresses, monkeypatch=None, fail_connect=(), fail_accept=()):
    """Every rank's ``DaskCollective._connect`` (its Dask exchanges replaced by a
    ``ThreadGroup``'s), with ``connect``/``accept`` failing on the ranks named."""
    if fail_connect or fail_accept:
        connect, accept = cs.connect, cs.accept  # the mesh's own (gbm.cluster.sockets)
        monkeypatch.setattr(cs, "connect", lambda rank, *a: None if rank in fail_connect
                            else connect(rank, *a))
        monkeypatch.setattr(cs, "accept", lambda listener, rank, *a: None
                            if rank in fail_accept else accept(listener, rank, *a))

    def body(group_rank):
        c = object.__new__(DaskCollective)
        c.rank, c.addresses, c.world_size = group_rank.rank, addresses, len(addresses)
        c._exchange = lambda value, senders: group_rank.allgather(value)
        return c._connect()

    return ThreadGroup(len(addresses), timeout=30).run(body)


def _run(n, fn):
    """``fn(rank, socks)`` in one thread per rank, over the mesh the collective builds;
    results (or exceptions) in rank order."""
    meshes, out = _collective_set_up([f"tcp://{HOST}:1"] * n), [None] * n

    def body(r):
        try:
            out[r] = fn(r, meshes[r])
        except BaseException as err:  # noqa: BLE001 - returned to the test
            out[r] = err

    threads = [threading.Thread(target=body, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for m in meshes:
        cs.close_all(m)
    return out


def _never():
    return None


@pytest.mark.parametrize("n", [2, 3])
def test_all_to_all_exchanges_deliver_every_value(n):
    big = 3_000_000  # 24 MB per value: far more than the socket buffers hold

    def fn(r, socks):
        values = [np.full(big, r, np.int64), {"rank": r, "cats": ["a", r]},
                  np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2] + r,  # not contiguous
                  np.zeros((0, 5), np.uint8), None]
        got = []
        for seq, v in enumerate(values):
            others = [s for s in range(n) if s != r]
            got.append(cs.exchange(socks, seq, v, others, others, 30, _never))
        return got

    out = _run(n, fn)
    for r, got in enumerate(out):
        assert not isinstance(got, BaseException), got
        for s, value in got[0].items():
            assert value.shape == (big,) and (value == s).all()
            assert value.flags.writeable  # reduced in place by the caller
        assert got[1] == {s: {"rank": s, "cats": ["a", s]} for s in range(n) if s != r}
        for s, value in got[2].items():
            np.testing.assert_array_equal(
                value, np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2] + s)
        assert all(v.shape == (0, 5) and v.dtype == np.uint8 for v in got[3].values())
        assert got[4] == {s: None for s in range(n) if s != r}


def test_a_broadcast_sends_from_the_root_only():
    def fn(r, socks):
        send_to = [1, 2] if r == 0 else []
        receive = [] if r == 0 else [0]
        return cs.exchange(socks, 0, f"from {r}", send_to, receive, 30, _never)

    assert _run(3, fn) == [{}, {0: "from 0"}, {0: "from 0"}]


def test_a_connection_with_a_wrong_secret_is_closed_and_ignored():
    listener = cs.listen(HOST)
    port = listener.getsockname()[1]
    secret = cs.new_secret()
    intruder = socket.create_connection((HOST, port))
    intruder.sendall(cs._HELLO.pack(cs._MAGIC, b"x" * 16, 1))
    impostor = socket.create_connection((HOST, port))
    impostor.sendall(cs._HELLO.pack(cs._MAGIC, secret, 7))  # a rank that does not exist
    good = cs.connect(1, [(HOST, port)], secret)
    got = cs.accept(listener, 0, 2, secret)
    listener.close()
    assert set(got) == {1}
    for s in (intruder, impostor):  # closed by the acceptor, nothing read from them
        s.settimeout(5)
        assert s.recv(1) == b""
        s.close()
    cs.close_all(got)
    cs.close_all(good)


def test_accept_gives_up_when_a_rank_does_not_connect(monkeypatch):
    monkeypatch.setattr(cs, "_CONNECT_S", 0.3)
    listener = cs.listen(HOST)
    port = listener.getsockname()[1]
    start = time.monotonic()
    assert cs.accept(listener, 0, 2, cs.new_secret()) is None
    assert time.monotonic() - start < 5
    listener.close()
    assert cs.connect(1, [(HOST, port)], b"s" * 16) is None  # nobody listens there now


def test_a_peer_that_closes_ends_the_wait_at_once():
    def fn(r, socks):
        if r == 1:
            time.sleep(0.2)
            cs.close_all(socks)  # as a killed process's sockets are
            return "closed"
        start = time.monotonic()
        try:
            cs.exchange(socks, 0, np.ones(3, np.int64), [1], [1], 60, _never)
        except CollectiveError as err:
            return str(err), time.monotonic() - start

    (message, elapsed), closed = _run(2, fn)
    assert closed == "closed"
    assert "rank 1 closed its connection during exchange 0" in message
    assert elapsed < 5  # not the 60 s timeout (1 s grace for a reason from Dask)


def test_a_reason_from_the_other_ranks_stops_the_wait():
    said = threading.Event()

    def fn(r, socks):
        if r == 1:
            time.sleep(0.3)
            said.set()
            return "said"
        start = time.monotonic()
        try:
            cs.exchange(socks, 0, 1, [1], [1], 60,
                        lambda: "rank 1 failed: ValueError" if said.is_set() else None)
        except CollectiveError as err:
            return str(err), time.monotonic() - start

    (message, elapsed), _ = _run(2, fn)
    assert message == "rank 1 failed: ValueError"
    assert elapsed < 5


def test_a_hung_peer_times_out():
    def fn(r, socks):
        if r == 1:
            time.sleep(1.5)
            return "hung"
        start = time.monotonic()
        try:
            cs.exchange(socks, 3, 1, [1], [1], 0.4, _never)
        except CollectiveError as err:
            return str(err), time.monotonic() - start

    (message, elapsed), _ = _run(2, fn)
    assert "exchange 3 timed out after 0.4 s waiting for rank(s) [1]" in message
    assert 0.4 <= elapsed < 3


def test_ranks_out_of_step_are_caught():
    def fn(r, socks):
        return cs.exchange(socks, r, "v", [1 - r], [1 - r], 30, _never)  # 0 and 1

    out = _run(2, fn)
    assert all(isinstance(e, CollectiveError) and "lost step" in str(e) for e in out)


def test_the_collective_builds_a_full_mesh_of_three_ranks():
    def fn(r, socks):
        others = [s for s in range(3) if s != r]
        return sorted(socks), cs.exchange(socks, 0, r * 10, others, others, 30, _never)

    assert _run(3, fn) == [([1, 2], {1: 10, 2: 20}), ([0, 2], {0: 0, 2: 20}),
                           ([0, 1], {0: 0, 1: 10})]


@pytest.mark.parametrize("fail", [{"fail_connect": (2,)}, {"fail_accept": (0,)}])
def test_ranks_that_cannot_all_connect_keep_dask_comms(monkeypatch, fail):
    assert _collective_set_up(["tcp://127.0.0.1:1"] * 3, monkeypatch, **fail) == [None] * 3


def test_a_tls_cluster_keeps_dask_comms(monkeypatch):
    monkeypatch.setattr(ds, "listen", lambda host: pytest.fail("listened on a TLS cluster"))
    assert _collective_set_up(["tls://127.0.0.1:1"] * 2, monkeypatch) == [None, None]


def test_only_tcp_addresses_get_a_mesh():
    assert ds.tcp_host("tcp://10.1.2.3:8786") == "10.1.2.3"
    assert ds.tcp_host("tcp://[::1]:8786") == "::1"
    assert ds.tcp_host("tls://10.1.2.3:8786") is None
    assert ds.tcp_host("inproc://10.1.2.3/123/4") is None
