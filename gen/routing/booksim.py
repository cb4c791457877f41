"""BookSim2 routing-table export (``anynet`` topology, ``routing_table_file``).

File format: one line ``router dest port`` per (router, destination node), routers ascending,
destinations ascending, fields separated by one space, and no newline after the last line.
That is the form the PolarFly authors' BookSim reads with ``load_routing_file = yes``: its
loader reads lines while the stream is good and splits each on single spaces, so a final
newline would make it read one more, empty, line (and crash on it).

**Port numbering is BookSim's, not the topology's.** BookSim's ``anynet`` numbers the ports of
a router as: first its node (endpoint) ports, in ascending node id, then its router ports in
ascending neighbour-router id. With ``p`` nodes per router (node ``n`` sits on router
``n // p``) the mapping from this project's numbering is

- local delivery of node ``n`` on its own router: BookSim port ``n % p``;
- topology port ``k`` of router ``u`` (to neighbour ``v``): BookSim port ``p + rank``, where
  ``rank`` is the position of ``v`` among the neighbours of ``u`` sorted by id.

For PolarFly (ports already in ascending neighbour order) that is simply ``p + k``; for
HyperX and torus it is a permutation (:func:`booksim_ports` gives it).

The same table serves BookSim's minimal, Valiant and UGAL routing functions: those route
both Valiant legs minimally with it and draw the intermediate at run time (Section VII-B);
there is nothing extra to export for them.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from innet.gen.checks import check_int, check_type
from innet.gen.files import write_atomic
from innet.gen.routing.core import Routing
from innet.gen.topology import LOCAL, Topology, check_topology

__all__ = ["MAX_NODES_PER_ROUTER", "booksim_ports", "booksim_routing_table",
           "iter_booksim_routing", "write_booksim_routing"]


#: Most endpoints per router in a BookSim file (its router ports count them first).
MAX_NODES_PER_ROUTER = 1024


def _check_p(nodes_per_router: object) -> int:
    return check_int("Nodes per router", nodes_per_router, low=1, high=MAX_NODES_PER_ROUTER)


def booksim_ports(topo: Topology, nodes_per_router: int = 1) -> np.ndarray:
    """``(N, radix)`` int array: the BookSim port of each topology port (``-1`` if absent).

    Raises
    ------
    TypeError, ValueError
        If ``topo`` is not a Topology or ``nodes_per_router`` is not an integer from 1 to
        :data:`MAX_NODES_PER_ROUTER`.
    """
    check_topology(topo)
    p = _check_p(nodes_per_router)
    peer = topo.ports.peer
    key = np.where(peer >= 0, peer, np.iinfo(np.int32).max)
    rank = np.argsort(np.argsort(key, axis=1, kind="stable"), axis=1, kind="stable")
    return np.where(peer >= 0, p + rank, -1)


def iter_booksim_routing(routing: Routing, nodes_per_router: int = 1,
                         rows: int = 256) -> Iterator[str]:
    """The routing-table file as text chunks of ``rows`` routers each (streams big tables).

    Joined, the chunks are the file: no newline after the last line.

    Raises
    ------
    TypeError, ValueError
        As :func:`booksim_ports`; ``ValueError`` if some destination is unreachable.
    """
    check_type("Routing", routing, Routing)
    topo = routing.topology
    p = _check_p(nodes_per_router)
    rows = check_int("Rows", rows, low=1)
    ports = booksim_ports(topo, p)
    n = topo.nodes
    names = np.array([str(i) for i in range(max(n * p, ports.max(initial=0) + 1, p))])
    table = routing.table()
    dest_router = np.arange(n * p) // p
    local = np.arange(n * p) % p
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        block = table[start:stop][:, dest_router].astype(np.int64)  # (rows, n*p)
        if (block < LOCAL).any():
            r, c = np.argwhere(block < LOCAL)[0]
            raise ValueError(f"Node {c} cannot be reached from router {start + r}; BookSim "
                             f"needs a route for every destination")
        routers = np.arange(start, stop)[:, None]
        out = np.where(block == LOCAL, local[None, :],
                       ports[routers, np.maximum(block, 0)])
        buf = io.StringIO()
        for i, r in enumerate(range(start, stop)):
            head = ("\n" if r else "") + names[r] + " "
            buf.write(head + ("\n" + names[r] + " ").join(
                d + " " + q for d, q in zip(names[: n * p], names[out[i]], strict=True)))
        yield buf.getvalue()


def booksim_routing_table(routing: Routing, nodes_per_router: int = 1) -> str:
    """The whole routing-table file as a string (see the module docstring)."""
    return "".join(iter_booksim_routing(routing, nodes_per_router))


def write_booksim_routing(routing: Routing, path: str | os.PathLike,
                          nodes_per_router: int = 1) -> Path:
    """Write the routing-table file to ``path`` (:func:`innet.gen.files.write_atomic`: all or
    nothing, the mode a plain ``open()`` gives) and return the path.

    Raises
    ------
    TypeError, ValueError
        As :func:`iter_booksim_routing`; nothing is written then.
    """
    return write_atomic(path, iter_booksim_routing(routing, nodes_per_router))
