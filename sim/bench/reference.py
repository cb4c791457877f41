"""Straightforward networkx implementations that innet's generators are measured against.

Each function computes what a generator computes, the way one would write it first: a dense
dot-product matrix and a :class:`networkx.Graph` for PolarFly, one
:func:`networkx.single_source_shortest_path_length` per destination for routing tables, one per
candidate root for embeddings, and plain Python loops over ranks for Swing. They share no code
with :mod:`innet.gen` (only the conventions: node numbering, port order, tie-breaks), so the
tests that compare them with the generators on small inputs check the generators too.

Every function can do part of its work (``rows``, ``destinations``, ``candidates``): the
benchmarks time a documented share of the independent units of work on the full-size input
and scale it, where the whole would take minutes.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import networkx as nx
import numpy as np

__all__ = [
    "LOCAL",
    "embedding_reference",
    "graph_of",
    "next_hops",
    "polarfly_reference",
    "root_keys_reference",
    "routing_reference",
    "swing_peers_reference",
    "tree_reference",
]

#: The local (endpoint) port, as in :data:`innet.gen.topology.LOCAL`.
LOCAL = -1


def _prime(q: int) -> int:
    if isinstance(q, bool) or not isinstance(q, int):
        raise TypeError(f"q must be an integer, not {q!r}")
    if q < 2 or any(q % d == 0 for d in range(2, int(q**0.5) + 1)):
        raise ValueError(f"The reference PolarFly needs a prime q, not {q}")
    return q


def polarfly_reference(q: int, rows: Iterable[int] | None = None
                       ) -> tuple[list[tuple[int, int, int]], nx.Graph]:
    """ER_q by its definition (PolarFly, SC'22, Section IV-A): the points of PG(2, q) as
    left-normalised vectors, ``u ~ v`` when ``u . v = 0 (mod q)`` and ``u != v``.

    The vectors are enumerated in lexicographic order (the node ids of
    :func:`innet.gen.topology.polarfly`); the dot products of a row block form a dense matrix
    and the zero entries become the edges of a :class:`networkx.Graph`.

    Parameters
    ----------
    q : int
        A prime (this reference does not do GF(p^m) arithmetic).
    rows : iterable of int, optional
        Only add the edges of these vertices (default: all).

    Returns
    -------
    labels : list of (int, int, int)
        The vector of each node id.
    graph : networkx.Graph
        Every node, and the edges of ``rows``.
    """
    q = _prime(q)
    labels = [v for v in itertools.product(range(q), repeat=3)
              if any(v) and v[next(i for i, x in enumerate(v) if x)] == 1]
    vectors = np.array(labels, dtype=np.int64)
    n = len(labels)
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    todo = np.arange(n) if rows is None else np.fromiter(rows, dtype=np.int64)
    block = max(1, (1 << 22) // n)  # rows per dense block: ~4 M dot products
    for start in range(0, len(todo), block):
        chunk = todo[start:start + block]
        dots = (vectors[chunk] @ vectors.T) % q
        dots[np.arange(len(chunk)), chunk] = 1  # no self-loops
        u, v = np.nonzero(dots == 0)
        graph.add_edges_from(zip(chunk[u].tolist(), v.tolist(), strict=True))
    return labels, graph


def graph_of(ports: Sequence[Sequence[int]]) -> nx.Graph:
    """The networkx graph of neighbour lists ``ports[u] = [v, ...]`` (peer of each port)."""
    graph = nx.Graph()
    graph.add_nodes_from(range(len(ports)))
    graph.add_edges_from((u, v) for u, row in enumerate(ports) for v in row if v >= 0)
    return graph


def next_hops(ports: Sequence[Sequence[int]], dist: dict[int, int]) -> list[int]:
    """Every node's lowest port whose peer is one hop closer (``dist`` from the destination);
    ``LOCAL`` at distance 0, ``-2`` where unreachable."""
    out = []
    for u, row in enumerate(ports):
        d = dist.get(u)
        if d is None:
            out.append(-2)
        elif d == 0:
            out.append(LOCAL)
        else:
            out.append(next(p for p, v in enumerate(row) if dist.get(v) == d - 1))
    return out


def routing_reference(graph: nx.Graph, ports: Sequence[Sequence[int]],
                      destinations: Iterable[int] | None = None) -> np.ndarray:
    """Minimal routing tables by breadth-first search from every destination.

    ``table[u, j]`` is the lowest port of ``u`` one hop closer to ``destinations[j]`` (the rule
    of :func:`innet.gen.routing.routing` for any topology; on PolarFly the next hop of a
    minimal path is unique, so it is also the cross-product routing's), ``LOCAL`` at the
    destination. ``ports[u][p]`` is the peer of port ``p`` of ``u``.
    """
    dests = list(range(graph.number_of_nodes()) if destinations is None else destinations)
    table = np.empty((graph.number_of_nodes(), len(dests)), dtype=np.int64)
    for j, d in enumerate(dests):
        table[:, j] = next_hops(ports, nx.single_source_shortest_path_length(graph, d))
    return table


def _centre(node: int, shape: Sequence[int] | None) -> int:
    if not shape:
        return 0
    coords = np.unravel_index(node, tuple(shape))
    return int(sum(abs(2 * int(x) - (s - 1)) for x, s in zip(coords, shape, strict=True)))


def embedding_reference(graph: nx.Graph, ports: Sequence[Sequence[int]],
                        participants: Sequence[int], *, grid: Sequence[int] | None = None,
                        candidates: Iterable[int] | None = None, root: int | None = None
                        ) -> dict[str, Any]:
    """PIUMA's dynamic embedding of an allreduce by shortest paths in networkx.

    The root is the participant of least ``(eccentricity over the participants, total
    distance, distance from the grid centre (on a grid of shape ``grid``), id)``, one
    breadth-first search per candidate; each participant then follows the lowest port one hop
    closer to the root (:func:`next_hops`), and every switch on those paths is configured.

    Parameters
    ----------
    graph, ports
        The network and the peer of every port.
    participants : sequence of int
        The participating nodes (the root candidates).
    grid : sequence of int, optional
        The grid shape of a HyperX or torus (adds the centre tie-break).
    candidates : iterable of int, optional
        Evaluate only these root candidates (for timing a share of the work).
    root : int, optional
        Skip the root search and use this root.

    Returns
    -------
    dict
        ``root``, ``depth``, ``keys`` (the root key of each candidate evaluated) and
        ``switches``: ``{node: (req_in, req_out)}`` with ``req_in`` a frozenset of ports
        (``LOCAL`` for a participant) and ``req_out`` the port toward the root (None there).
    """
    parts = list(participants)
    keys = {}
    if root is None:
        keys = root_keys_reference(graph, parts, grid=grid, candidates=candidates)
        root = min(keys.values())[3]
    return {**tree_reference(graph, ports, parts, root), "keys": keys}


def root_keys_reference(graph: nx.Graph, participants: Sequence[int], *,
                        grid: Sequence[int] | None = None,
                        candidates: Iterable[int] | None = None
                        ) -> dict[int, tuple[int, int, int, int]]:
    """The root key ``(eccentricity over the participants, total distance, centre offset,
    id)`` of every candidate (default: the participants), one BFS each."""
    parts = list(participants)
    keys = {}
    for c in (parts if candidates is None else candidates):
        dist = nx.single_source_shortest_path_length(graph, c)
        reach = [dist[p] for p in parts]
        keys[c] = (max(reach), sum(reach), _centre(c, grid), c)
    return keys


def tree_reference(graph: nx.Graph, ports: Sequence[Sequence[int]],
                   participants: Sequence[int], root: int) -> dict[str, Any]:
    """The reduction tree into ``root``: ``root``, ``depth`` and ``switches`` as in
    :func:`embedding_reference`."""
    parts = list(participants)
    dist = nx.single_source_shortest_path_length(graph, root)
    hop = next_hops(ports, dist)
    up: dict[int, int | None] = {root: None}
    req_in: dict[int, set[int]] = {root: set()}
    for p in parts:
        req_in.setdefault(p, set()).add(LOCAL)
        u = p
        while u != root and u not in up:
            port = hop[u]
            v = ports[u][port]
            up[u] = port
            req_in.setdefault(v, set()).add(ports[v].index(u))
            u = v
    for u in up:
        req_in.setdefault(u, set())
    return {"root": root, "depth": max(dist[p] for p in parts),
            "switches": {u: (frozenset(req_in[u]), up[u]) for u in sorted(up)}}


def swing_peers_reference(shape: Sequence[int], collectives: Iterable[int] | None = None
                          ) -> np.ndarray:
    """The peers of multiport Swing on a torus with power-of-two sides (Swing, NSDI'24,
    Eq. 2 per dimension and Section 4.1), one rank at a time.

    Collective ``c < D`` starts on dimension ``c`` and visits the dimensions round-robin;
    collective ``D + c`` is its mirror image (every coordinate reflected, ``a -> -a``). At step
    ``s`` rank ``r`` moves coordinate ``omega = (start + s) mod D`` by ``rho(sigma)``,
    ``sigma = s // D``, ``rho(i) = sum_{k<=i} (-2)^k``: forward if the coordinate is even,
    backward if odd.

    Returns
    -------
    numpy.ndarray, shape (2D, steps, P)
        ``peers[c, s, r]`` (collectives not asked for stay ``-1``).
    """
    shape = [int(d) for d in shape]
    dims = len(shape)
    if any(d < 2 or d & (d - 1) for d in shape) or len({*shape}) != 1:
        raise ValueError(f"The reference Swing needs a square torus with power-of-two sides, "
                         f"not {shape}")
    ranks = int(np.prod(shape))
    steps = dims * (shape[0].bit_length() - 1)
    peers = np.full((2 * dims, steps, ranks), -1, dtype=np.int64)
    for c in (range(2 * dims) if collectives is None else collectives):
        start, mirrored = c % dims, c >= dims
        for s in range(steps):
            dim, sigma = (start + s) % dims, s // dims
            rho = sum((-2) ** k for k in range(sigma + 1))
            size = shape[dim]
            stride = int(np.prod(shape[dim + 1:]))
            for r in range(ranks):
                a = (r // stride) % size
                if mirrored:
                    a = -a % size
                b = (a + rho) % size if a % 2 == 0 else (a - rho) % size
                if mirrored:
                    b = -b % size
                peers[c, s, r] = r + (b - (r // stride) % size) * stride
    return peers
