"""Following routing tables hop by hop: paths and per-link loads for many pairs at once.

A path is the list of ``(node, output port)`` a packet takes, ending with
``(dst, LOCAL)`` where it leaves the network: a path from ``u`` to itself is
``((u, LOCAL),)`` and a path of ``h`` hops has ``h + 1`` entries.

:func:`paths` routes whole arrays of ``(src, dst)`` pairs in lock step (one vectorised table
look-up per hop, so the cost is ``pairs x longest path``); :func:`link_loads` sums a weight
over every directed link ``(node, port)`` the packets cross. With ``via`` (Valiant
intermediates, see :mod:`innet.gen.routing.valiant`) each packet routes minimally to its
intermediate and then minimally to its destination.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from innet.gen.routing.core import Routing, check_pairs
from innet.gen.topology import LOCAL

__all__ = ["Paths", "link_loads", "path", "paths"]


@dataclass(frozen=True, eq=False)
class Paths:
    """Routes of ``k`` packets, padded to the longest.

    Members
    -------
    nodes : ndarray of int32, shape (k, H)
        ``nodes[i, j]`` is the switch of hop ``j`` of packet ``i`` (``-1`` past its end).
    ports : ndarray of int32, shape (k, H)
        The output port taken there: a network port, ``LOCAL`` at the destination, ``-2`` past
        the end.
    hops : ndarray of int32, shape (k,)
        Links crossed by each packet (its path has ``hops + 1`` entries).
    """

    nodes: np.ndarray
    ports: np.ndarray
    hops: np.ndarray

    def __len__(self) -> int:
        return len(self.hops)

    def path(self, i: int) -> tuple[tuple[int, int], ...]:
        """Packet ``i`` as ``((node, port), ..., (dst, LOCAL))``."""
        h = int(self.hops[i]) + 1
        return tuple(zip(self.nodes[i, :h].tolist(), self.ports[i, :h].tolist(), strict=True))

    def links(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every link crossing as flat arrays ``(packet, node, port)`` (local exits omitted)."""
        packet, hop = np.nonzero(self.ports >= 0)
        return packet, self.nodes[packet, hop], self.ports[packet, hop]


def _walk(routing: Routing, src: np.ndarray, dst: np.ndarray) -> Paths:
    topo = routing.topology
    impl = routing._impl
    peer = topo.ports.peer
    degree = topo.ports.degree
    k, n = len(src), topo.nodes
    nodes_cols, ports_cols = [], []
    cur = src.copy()
    active = np.arange(k)
    hops = np.zeros(k, dtype=np.int32)
    for step in range(n + 1):
        node_col = np.full(k, -1, dtype=np.int32)
        port_col = np.full(k, -2, dtype=np.int32)
        here = cur[active]
        port = impl.next_port(here, dst[active]) if len(active) else here
        node_col[active] = here
        port_col[active] = port
        nodes_cols.append(node_col)
        ports_cols.append(port_col)
        done = port == LOCAL
        bad = np.flatnonzero(~done & ((port < 0) | (port >= degree[here])))
        if len(bad):
            i = active[bad[0]]
            raise ValueError(f"Node {dst[i]} cannot be reached from node {src[i]}: switch "
                             f"{here[bad[0]]} has no route to it")
        hops[active[~done]] += 1
        moving = active[~done]
        cur[moving] = peer[cur[moving], port[~done]]
        active = moving
        if not len(active):
            break
        if step == n:
            i = active[0]
            raise ValueError(f"The route from node {src[i]} to node {dst[i]} loops: it does "
                             f"not arrive within {n} hops")
    return Paths(nodes=np.stack(nodes_cols, axis=1), ports=np.stack(ports_cols, axis=1),
                 hops=hops)


def _join(first: Paths, second: Paths, use: np.ndarray) -> Paths:
    """Where ``use``: ``first`` without its final local exit, then ``second``."""
    k = len(first)
    cut = np.where(use, first.hops, 0)  # entries kept from the first leg
    width = int((cut + second.hops + 1).max(initial=1))
    nodes = np.full((k, width), -1, dtype=np.int32)
    ports = np.full((k, width), -2, dtype=np.int32)
    row, col = np.nonzero(np.arange(first.nodes.shape[1])[None, :] < cut[:, None])
    nodes[row, col] = first.nodes[row, col]
    ports[row, col] = first.ports[row, col]
    row, col = np.nonzero(second.ports != -2)
    nodes[row, cut[row] + col] = second.nodes[row, col]
    ports[row, cut[row] + col] = second.ports[row, col]
    return Paths(nodes=nodes, ports=ports, hops=(cut + second.hops).astype(np.int32))


def _broadcast(name: str, values: Any, shape: tuple[int, ...]) -> np.ndarray:
    """``values`` broadcast to the pairs' ``shape``, flat."""
    array = np.asarray(values)
    try:
        return np.broadcast_to(array, shape).reshape(-1)
    except ValueError:
        raise ValueError(f"{name} must broadcast against the {shape[0]} pairs, not shape "
                         f"{array.shape}") from None


def paths(routing: Routing, src: Any, dst: Any, via: Any = None) -> Paths:
    """Route every ``(src[i], dst[i])`` pair by following ``routing`` hop by hop.

    Parameters
    ----------
    routing : Routing
        From :func:`innet.gen.routing.routing` or :func:`routing_from_table`.
    src, dst : int or array of int
        Broadcastable arrays of node ids.
    via : array of int, optional
        Intermediate node per pair (Valiant); ``-1`` routes that pair minimally.

    Raises
    ------
    TypeError
        If ``routing`` is not a Routing or a node id is not an integer.
    ValueError
        If a node id is out of range, the arguments do not broadcast together, a destination
        is unreachable, or the table loops.
    """
    s, d = _checked_pairs(routing, src, dst)
    return _route(routing, s, d, via)


def _checked_pairs(routing: Routing, src: Any, dst: Any) -> tuple[np.ndarray, np.ndarray]:
    """``src`` and ``dst`` checked against ``routing``'s topology (as :func:`paths`), flat."""
    if not isinstance(routing, Routing):
        raise TypeError(f"Routing must be a Routing, not {type(routing).__name__}")
    s, d = check_pairs(routing.topology, src, dst)
    return np.ascontiguousarray(s.reshape(-1)), np.ascontiguousarray(d.reshape(-1))


def _route(routing: Routing, s: np.ndarray, d: np.ndarray, via: Any) -> Paths:
    """:func:`paths` of checked, flat pairs."""
    topo = routing.topology
    if via is None:
        return _walk(routing, s, d)
    v = _broadcast("Via", via, s.shape)
    if v.dtype == bool or not np.issubdtype(v.dtype, np.integer):
        raise TypeError(f"Via must be node ids or -1, not {via!r:.60}")
    v = v.astype(np.int64)
    bad = np.flatnonzero((v < -1) | (v >= topo.nodes))
    if len(bad):
        raise ValueError(f"Via names node {v[bad[0]]}, outside 0..{topo.nodes - 1} (or -1 for "
                         f"none)")
    use = v >= 0
    mid = np.where(use, v, s)
    return _join(_walk(routing, s, mid), _walk(routing, mid, d), use)


def path(routing: Routing, src: int, dst: int) -> tuple[tuple[int, int], ...]:
    """The route from ``src`` to ``dst`` as ``((node, port), ..., (dst, LOCAL))``.

    Raises
    ------
    As :func:`paths`.
    """
    return paths(routing, [src], [dst]).path(0)


def link_loads(routing: Routing, src: Any, dst: Any, weight: Any = 1, via: Any = None
               ) -> np.ndarray:
    """Sum of ``weight`` over the packets crossing each directed link.

    Returns an ``(N, radix)`` array: entry ``[u, p]`` is the load on the channel leaving node
    ``u`` on port ``p`` (float64, or int64 for integer weights). Local exits are not counted.

    Parameters
    ----------
    routing, src, dst, via
        As :func:`paths`.
    weight : number or array
        Per-packet weight (bytes, elements, ...), broadcast against the pairs.

    Raises
    ------
    TypeError
        As :func:`paths`, or if a weight is not a number.
    ValueError
        As :func:`paths`, or if ``weight`` does not broadcast against the pairs.
    """
    s, d = _checked_pairs(routing, src, dst)
    weights = _broadcast("Weight", weight, s.shape)  # checked before any pair is routed
    if weights.dtype == bool or not np.issubdtype(weights.dtype, np.number) \
            or np.issubdtype(weights.dtype, np.complexfloating):
        raise TypeError(f"Weight must be numbers, not {weight!r:.60}")
    routes = _route(routing, s, d, via)
    topo = routing.topology
    packet, node, port = routes.links()
    radix = max(topo.radix, 1)
    flat = np.bincount(node.astype(np.int64) * radix + port, weights=weights[packet],
                       minlength=topo.nodes * radix)
    if np.issubdtype(weights.dtype, np.integer):
        flat = np.rint(flat).astype(np.int64)
    return flat.reshape(topo.nodes, radix)
