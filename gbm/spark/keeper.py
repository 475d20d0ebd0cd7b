"""Where a Spark training's surviving ranks leave their state when a task is lost.

Spark never retries a failed barrier result stage: a task lost mid-fit (its Python worker
killed, its executor gone) fails the job, and Spark kills the stage's other tasks, a
Python worker within ``spark.python.task.killTimeout`` (2 s) of noticing. The other ranks
notice the loss first, within milliseconds (the lost rank's connections close), and each
sends its state at its last completed round (``gbm.cluster.progress``) to the driver
over one TCP connection to a ``Keeper``, a thread of the driver; the driver then runs the
stage again from the newest state it holds (``gbm.spark.training``).

A connection starts with the fit's 16-byte secret (sent to the tasks inside the job's
closure) and is closed unread when it is wrong: the payload is a pickle.
"""
import hmac
import pickle
import secrets
import socket
import struct
import threading

_HEAD = struct.Struct("<16sQ")  # secret, payload bytes
_TIMEOUT_S = 10.0


class Keeper:
    """A TCP server on the driver that keeps the states the ranks send (``reports``:
    a list of ``(attempt, rank, state, info)``), until ``close()``."""

    def __init__(self, host):
        self.secret = secrets.token_bytes(16)
        self.reports = []
        self._lock = threading.Lock()
        self._server = socket.create_server((host, 0), backlog=64)
        self.address = (host, self._server.getsockname()[1])
        self._thread = threading.Thread(target=self._serve, name="gbm-spark-keeper",
                                        daemon=True)
        self._thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:  # closed
                return
            with conn:
                try:
                    conn.settimeout(_TIMEOUT_S)
                    secret, n = _HEAD.unpack(_read(conn, _HEAD.size))
                    if not hmac.compare_digest(secret, self.secret):
                        continue
                    report = pickle.loads(_read(conn, n))
                    conn.sendall(b"k")
                except (OSError, EOFError, pickle.UnpicklingError, struct.error):
                    continue
            with self._lock:
                self.reports.append(report)

    def states(self, attempt):
        """``(state, info)`` of every report of ``attempt``."""
        with self._lock:
            return [(r[2], r[3]) for r in self.reports if r[0] == attempt]

    def close(self):
        self._server.close()
        self._thread.join(5)


def report(address, secret, attempt, rank, state, info):
    """Send this rank's state to the driver's ``Keeper`` (best effort: False when it
    could not; the driver then goes on from an older state)."""
    payload = pickle.dumps((attempt, rank, state, info), protocol=5)
    try:
        with socket.create_connection(address, timeout=_TIMEOUT_S) as sock:
            sock.sendall(_HEAD.pack(secret, len(payload)) + payload)
            return _read(sock, 1) == b"k"
    except (OSError, EOFError):
        return False


def _read(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)
