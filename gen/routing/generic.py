"""Shortest-path routing on any topology, with failed links and switches; hop distances.

Used for topologies without a closed-form rule (expanded PolarFly, custom graphs) and for
every routing around failures. Distances are breadth-first searches run on whole arrays
(one row per source); the next hop at ``u`` toward ``d`` is the **lowest-numbered live port**
whose neighbour is one hop closer to ``d``. Such a table is minimal and loop-free, so the
paths toward any destination form a tree.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from innet.gen.routing.core import UNREACHABLE
from innet.gen.topology import LOCAL, Topology, check_topology

__all__ = [
    "ShortestPath",
    "alive_ports",
    "bfs_distances",
    "parse_failures",
]

#: Distance entries per BFS block (bounds the (sources x N) work arrays).
_BFS_ENTRIES = 1 << 24


def _pair(topo: Topology, item: Any) -> tuple[int, int]:
    if isinstance(item, str):
        parts = item.replace(":", "-").split("-")
        if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
            raise ValueError(f"A failed link must be written u-v, not {item!r}")
        item = (int(parts[0]), int(parts[1]))
    if (isinstance(item, (str, bytes)) or not hasattr(item, "__len__") or len(item) != 2
            or not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool)
                       for x in item)):
        raise TypeError(f"A failed link must be a pair of node ids, not {item!r:.60}")
    u, v = int(item[0]), int(item[1])
    for x in (u, v):
        if not 0 <= x < topo.nodes:
            raise ValueError(f"Failed link {u}-{v} names node {x}, outside 0..{topo.nodes - 1}")
    row = topo.ports.peer[u, : topo.ports.degree[u]]
    if not (row == v).any():
        raise ValueError(f"Failed link {u}-{v} does not exist: nodes {u} and {v} are not "
                         f"adjacent")
    return (u, v) if u < v else (v, u)


def parse_failures(topo: Topology, links: Iterable[Any] | None,
                   switches: Iterable[Any] | None
                   ) -> tuple[tuple[tuple[int, int], ...], tuple[int, ...]]:
    """Validate failures; return sorted unique ``((u, v), ...)`` with ``u < v`` and switch ids.

    A link is a ``(u, v)`` pair or the string ``"u-v"``.

    Raises
    ------
    TypeError
        If ``topo`` is not a Topology, a link is not a pair of integers or a switch not an
        integer.
    ValueError
        If a link joins nodes that are not adjacent, or a node id is out of range.
    """
    check_topology(topo)
    if isinstance(links, (str, bytes)):
        links = [links]
    pairs = sorted({_pair(topo, item) for item in (links or ())})
    nodes = set()
    for s in switches or ():
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"A failed switch must be a node id, not {s!r:.60}")
        if not 0 <= s < topo.nodes:
            raise ValueError(f"Failed switch {s} is outside 0..{topo.nodes - 1}")
        nodes.add(int(s))
    return tuple(pairs), tuple(sorted(nodes))


def alive_ports(topo: Topology, failed_links: Iterable[tuple[int, int]] = (),
                failed_switches: Iterable[int] = ()) -> np.ndarray:
    """``(N, radix)`` bool: port ``p`` of ``u`` exists and neither its link nor either end has
    failed.

    Raises
    ------
    TypeError, ValueError
        As :func:`parse_failures`, on a failure that is not a link or switch of ``topo``.
    """
    failed_links, failed_switches = parse_failures(topo, failed_links, failed_switches)
    peer = topo.ports.peer
    alive = peer >= 0
    dead = np.zeros(topo.nodes, dtype=bool)
    dead[list(failed_switches)] = True
    alive &= ~dead[:, None]
    alive &= ~dead[np.where(peer >= 0, peer, 0)]
    for u, v in failed_links:
        alive[u, topo.ports.peer[u] == v] = False
        alive[v, topo.ports.peer[v] == u] = False
    return alive


def bfs_distances(topo: Topology, sources: Any, alive: np.ndarray | None = None) -> np.ndarray:
    """Hop distances from each source to every node: ``(len(sources), N)`` int32, ``-1`` where
    unreachable.

    Parameters
    ----------
    topo : Topology
        The network.
    sources : int or array of int
        Source nodes (a scalar gives a 1-D result).
    alive : array of bool, shape (N, radix), optional
        Usable ports (see :func:`alive_ports`); default every port.

    Raises
    ------
    TypeError, ValueError
        If ``topo`` is not a Topology, a source is not a node id of it, or ``alive`` does not
        have the shape of its ports.
    """
    check_topology(topo)
    given = np.asarray(sources)
    if given.dtype == bool or not np.issubdtype(given.dtype, np.integer):
        raise TypeError(f"Sources must be node ids, not {sources!r:.60}")
    scalar = given.ndim == 0
    src = np.atleast_1d(given.astype(np.int64))
    n = topo.nodes
    bad = src[(src < 0) | (src >= n)]
    if len(bad):
        raise ValueError(f"Source {bad[0]} is outside 0..{n - 1}")
    peer = topo.ports.peer
    if alive is None:
        alive = peer >= 0
    elif np.shape(alive) != peer.shape:
        raise ValueError(f"Alive must have the shape {peer.shape} of the ports, not "
                         f"{np.shape(alive)}")
    columns = [(np.flatnonzero(alive[:, p]), None) for p in range(peer.shape[1])]
    columns = [(cols, peer[cols, p]) for p, (cols, _) in enumerate(columns) if len(cols)]
    dist = np.full((len(src), n), -1, dtype=np.int32)
    block = max(1, _BFS_ENTRIES // max(n, 1))
    for start in range(0, len(src), block):
        rows = src[start:start + block]
        sub = dist[start:start + len(rows)]
        frontier = np.zeros((len(rows), n), dtype=bool)
        frontier[np.arange(len(rows)), rows] = True
        sub[frontier] = 0
        level = 0
        while frontier.any():
            level += 1
            nxt = np.zeros_like(frontier)
            for cols, nbr in columns:
                nxt[:, cols] |= frontier[:, nbr]
            nxt &= sub < 0
            sub[nxt] = level
            frontier = nxt
    return dist[0] if scalar else dist


class ShortestPath:
    """Next-hop function: lowest live port one hop closer (see the module docstring)."""

    def __init__(self, topo: Topology, failed_links: tuple = (), failed_switches: tuple = ()
                 ) -> None:
        self.topo = topo
        self.alive = alive_ports(topo, failed_links, failed_switches)
        self._dist: np.ndarray | None = None

    @property
    def dist(self) -> np.ndarray:
        """All-pairs hop distances (computed on first use)."""
        if self._dist is None:
            self._dist = bfs_distances(self.topo, np.arange(self.topo.nodes), self.alive)
        return self._dist

    def _choose(self, u: np.ndarray, d: np.ndarray, du: np.ndarray,
                dnbr: np.ndarray) -> np.ndarray:
        """Lowest live port of ``u`` whose neighbour distance ``dnbr`` is ``du - 1``."""
        ok = self.alive[u] & (dnbr == (du - 1)[:, None]) & (du > 0)[:, None]
        port = np.where(ok.any(axis=1), ok.argmax(axis=1), UNREACHABLE)
        return np.where(u == d, LOCAL, port)

    def next_port(self, u: np.ndarray, d: np.ndarray) -> np.ndarray:
        peer = self.topo.ports.peer[u]
        dnbr = self.dist[np.where(peer >= 0, peer, 0), d[:, None]]
        return self._choose(u, d, self.dist[u, d], dnbr)

    def column(self, dest: int) -> np.ndarray:
        """Every node's port toward ``dest`` from one breadth-first search."""
        dist = self.dist[dest] if self._dist is not None else bfs_distances(
            self.topo, dest, self.alive)
        n = self.topo.nodes
        peer = self.topo.ports.peer
        u = np.arange(n)
        return self._choose(u, np.full(n, dest), dist, dist[np.where(peer >= 0, peer, 0)])
