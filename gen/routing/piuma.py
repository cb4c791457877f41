"""PIUMA's hierarchical routing on multi-level networks (algorithm ``"piuma"``).

PIUMA, "Allreduce Embedding: Reduction Tree": between nodes, packets follow "dimension
ordered shortest paths in the HyperX" (Fig. 2); inside a node they take "the corresponding
shortest paths in the intra-node mesh" (by latency: mesh and socket links, Fig. 3) to the
switch whose port leads to the next node, or to the destination. So at switch ``u`` toward
``d``:

- same node: the lowest-numbered intra-node port on a latency-shortest path inside the node
  (mesh and socket links only);
- otherwise: the next node corrects the **lowest** differing HyperX coordinate (as
  :mod:`innet.gen.routing.grid`); the switch carrying the link toward it (its *exit*) takes that
  link; any other switch of the node heads for the exit as above.

Every node is wired alike (:mod:`innet.gen.topology.piuma`), so one node's intra-node
distances (:func:`intra_node_latencies`, a ``slots x slots`` matrix from Dijkstra) and next
hops serve every node, and the routing works on whole arrays without materialising anything
of size ``N``. Each path is minimal in node hops and latency-shortest within each node it
crosses; the next hops toward any destination form a tree, so a column of the table is a
PIUMA reduction tree (Fig. 2 between nodes, Fig. 3 within them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from innet.gen.routing.latency import dijkstra, same_latency
from innet.gen.topology import LOCAL, Topology
from innet.gen.topology.piuma import (
    LEVELS,
    PiumaLayout,
    intra_node,
    level_latencies,
    piuma_layout,
)

__all__ = ["Hierarchical", "IntraNode", "hierarchical", "intra_node_latencies"]


@dataclass(frozen=True, eq=False)
class IntraNode:
    """One node's latency structure (the same for every node of a PIUMA network).

    Members
    -------
    distance : ndarray of float64, shape (slots, slots)
        ``distance[a, b]``: latency-shortest path from slot ``a`` to slot ``b`` inside a node
        (mesh and socket links), ns.
    next_port : ndarray of int64, shape (slots, slots)
        ``next_port[a, b]``: the lowest port of ``a`` on such a path (``LOCAL`` on the
        diagonal).
    peer : ndarray of int64, shape (slots, R)
        Intra-node peer slot behind each port (``-1`` absent).
    latency : ndarray of float64, shape (slots, R)
        Latency of the link behind each port (``nan`` absent).
    """

    distance: np.ndarray
    next_port: np.ndarray
    peer: np.ndarray
    latency: np.ndarray


def intra_node_latencies(layout: PiumaLayout, latencies: dict[str, float]) -> IntraNode:
    """Distances and next hops inside one node (Dijkstra from every slot).

    Raises
    ------
    ValueError
        If the node is not connected (it always is for a layout built by
        :func:`innet.gen.topology.piuma.piuma`).
    """
    peer, level = intra_node(layout)
    table = np.array([latencies[name] for name in LEVELS] + [np.nan])
    latency = table[np.where(level >= 0, level, len(LEVELS))]
    slots = layout.slots
    distance = dijkstra(peer, latency, np.arange(slots))
    if not np.isfinite(distance).all():
        raise ValueError("A PIUMA node must be connected inside")
    present = peer >= 0
    # nxt[a, b]: lowest port p of a with latency[a, p] + distance[peer, b] == distance[a, b].
    nxt = np.empty((slots, slots), dtype=np.int64)
    block = max(1, (1 << 22) // max(slots * peer.shape[1], 1))
    for start in range(0, slots, block):
        rows = slice(start, min(slots, start + block))
        via = latency[rows, :, None] + distance[np.where(present[rows], peer[rows], 0)]
        ok = present[rows, :, None] & same_latency(via, distance[rows, None, :])
        nxt[rows] = np.where(ok.any(axis=1), ok.argmax(axis=1), LOCAL)
    np.fill_diagonal(nxt, LOCAL)
    for array in (distance, nxt, peer, latency):
        array.flags.writeable = False
    return IntraNode(distance=distance, next_port=nxt, peer=peer, latency=latency)


class Hierarchical:
    """Next-hop function of the ``"piuma"`` routing (module docstring), built from a wiring
    plan and the latency of each level (``{"core": L_C, "socket": L_S, "node": L_P}``, ns);
    :func:`hierarchical` builds it for a topology."""

    def __init__(self, layout: PiumaLayout, latencies: dict[str, float]) -> None:
        self.layout = layout
        self.latencies = dict(latencies)
        self.intra = intra_node_latencies(layout, self.latencies)
        self.shape = np.array(layout.nodes, dtype=np.int64)
        width = max(int(self.shape.max()), 1)
        dims = len(self.shape)
        self.exit_slot = np.full((dims, width), -1, dtype=np.int64)
        self.exit_port = np.full((dims, width), -1, dtype=np.int64)
        for d in range(dims):
            self.exit_slot[d, : self.shape[d]] = layout.node_slot[d]
            self.exit_port[d, : self.shape[d]] = layout.node_port[d]

    def latency(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Latency (ns) of the routed path of every ``(src[i], dst[i])`` pair, in closed form:
        ``W[a, exit_1] + L_P + W[arrival_1, exit_2] + L_P + ... + W[arrival_h, b]`` over the
        differing HyperX dimensions in ascending order (``W`` the intra-node distances)."""
        slots = self.layout.slots
        src, dst = np.broadcast_arrays(np.asarray(src, dtype=np.int64),
                                       np.asarray(dst, dtype=np.int64))
        shape = src.shape
        nu, cur = np.divmod(src.reshape(-1), slots)
        nd, kd = np.divmod(dst.reshape(-1), slots)
        total = np.zeros(len(nu))
        if self.layout.node_count > 1:
            cu = self.layout.node_coordinates(nu)
            cd = self.layout.node_coordinates(nd)
            node_latency = self.node_latency
            for dim in range(len(self.shape)):
                size = int(self.shape[dim])
                if size == 1:
                    continue
                delta = (cd[:, dim] - cu[:, dim]) % size
                hop = delta != 0
                exit_slot = self.exit_slot[dim, delta]
                arrival = self.exit_slot[dim, (size - delta) % size]
                total += np.where(hop, self.intra.distance[cur, np.maximum(exit_slot, 0)]
                                  + node_latency, 0.0)
                cur = np.where(hop, arrival, cur)
        total += self.intra.distance[cur, kd]
        return total.reshape(shape)

    @property
    def node_latency(self) -> float:
        """``L_P``, ns."""
        return float(self.latencies["node"])

    def next_port(self, u: np.ndarray, d: np.ndarray) -> np.ndarray:
        slots = self.layout.slots
        nu, ku = np.divmod(np.asarray(u, dtype=np.int64), slots)
        nd, kd = np.divmod(np.asarray(d, dtype=np.int64), slots)
        local = self.intra.next_port[ku, kd]
        if len(self.shape) == 0 or self.layout.node_count == 1:
            return local
        cu = self.layout.node_coordinates(nu)
        cd = self.layout.node_coordinates(nd)
        differ = cu != cd
        dim = differ.argmax(axis=1)
        rows = np.arange(len(nu))
        delta = (cd[rows, dim] - cu[rows, dim]) % self.shape[dim]
        exit_slot = self.exit_slot[dim, delta]
        inter = np.where(ku == exit_slot, self.exit_port[dim, delta],
                         self.intra.next_port[ku, np.maximum(exit_slot, 0)])
        return np.where(differ.any(axis=1), inter, local)


_CACHE: dict[str, Hierarchical] = {}


def hierarchical(topo: Topology) -> Hierarchical:
    """The ``"piuma"`` next-hop function of ``topo`` (cached for a few recent topologies).

    Raises
    ------
    TypeError, ValueError
        If ``topo`` is not a PIUMA network.
    """
    piuma_layout(topo)
    key = topo.fingerprint
    if key not in _CACHE:
        if len(_CACHE) >= 4:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = Hierarchical(piuma_layout(topo), level_latencies(topo))
    return _CACHE[key]
