"""The direct TCP mesh of a Dask training: the mesh itself is engine-neutral
(``gbm.cluster.sockets``, re-exported here under its earlier path); what is Dask's is
which host a worker listens on."""
from ..cluster.sockets import (accept, close_all, connect, exchange, listen,  # noqa: F401
                               mesh, new_secret, ready)


def tcp_host(address):
    """The host of a ``tcp://host:port`` worker address, or None for another scheme."""
    from distributed.comm.addressing import parse_address, parse_host_port

    scheme, loc = parse_address(address)
    if scheme != "tcp":
        return None
    return parse_host_port(loc)[0]
