"""The dynamic embedding on multi-level PIUMA networks, by latency (PIUMA, "Allreduce
Embedding", Fig. 2 and 3).

On a PIUMA network (:mod:`innet.gen.topology.piuma`) :func:`innet.gen.embed.embed` follows the
``"piuma"`` routing (:mod:`innet.gen.routing.piuma`): dimension order between nodes and
latency-shortest paths inside them, so every node forwards the reduction of everything it holds
on one node link (the paper's "single leader") from the switch that carries that link, the
intra-node root of Fig. 3.

**Root** (:func:`piuma_root`): the participant of minimum *latency* eccentricity over the
participants along those paths. Ties, in order: least total latency to the participants; the
node nearest the middle of the HyperX, ``sum |2*x_d - (S_d - 1)|`` (PIUMA: "root is mapped to
the node at midpoint coordinates in each dimension"); lowest id. For a global allreduce every
node is wired alike, so eccentricity and total are the same at the same slot of every node:
the root is in the midpoint node, at the slot of least eccentricity, found in closed form
(:func:`slot_eccentricity`) without looking at the ``N`` switches.

**Check** (used by :func:`innet.gen.embed.verify` where the hop-count depth check fails, as
it may for trees built by latency): a tree is minimal if it is PIUMA's
(:func:`hierarchy_violation`: it leaves every node other than the root's on exactly one node
link, each node link goes one HyperX hop closer to the root's node, and inside every node each
switch forwards on a latency-shortest path, over the node's mesh and socket links, toward the
switch that leaves the node, or toward the root) or if every participant reaches the root on a
latency-shortest path of the whole network (:func:`latency_minimal`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from innet.gen.routing.latency import same_latency
from innet.gen.routing.piuma import Hierarchical, hierarchical
from innet.gen.topology import Topology
from innet.gen.topology.piuma import piuma_layout

__all__ = [
    "hierarchy_violation",
    "latency_minimal",
    "piuma_root",
    "slot_eccentricity",
    "tree_latencies",
    "tree_levels",
]

#: Pairwise latency entries per block in the general root search.
_PAIR_ENTRIES = 1 << 21


def _climb(topo: Topology, ports: np.ndarray, root: int, step: np.ndarray) -> np.ndarray:
    """Sum of ``step[u]`` along every node's path to ``root`` (pointer jumping, O(N log depth)).

    ``ports[u]`` is the port toward the root (anything at the root itself)."""
    n = topo.nodes
    u = np.arange(n)
    up = np.where(u == root, 0, ports).astype(np.int64)
    ptr = topo.ports.peer[u, np.maximum(up, 0)].astype(np.int64)
    ptr[root] = root
    acc = np.where(u == root, 0, step).astype(np.result_type(step, np.int64))
    for _ in range(64):
        if (ptr == root).all():
            break
        acc = acc + np.where(ptr == root, 0, acc[ptr])
        ptr = ptr[ptr]
    return acc


def tree_levels(topo: Topology, ports: np.ndarray, root: int) -> np.ndarray:
    """Hops from every node to ``root`` along ``ports`` (a routing column toward ``root``)."""
    return _climb(topo, ports, root, np.ones(topo.nodes, dtype=np.int64))


def tree_latencies(topo: Topology, ports: np.ndarray, root: int,
                   weights: np.ndarray) -> np.ndarray:
    """Latency from every node to ``root`` along ``ports``: the sum of ``weights[u, port]``."""
    u = np.arange(topo.nodes)
    step = np.where(u == root, 0.0, weights[u, np.maximum(ports, 0)])
    return _climb(topo, ports, root, step)


def slot_eccentricity(route: Hierarchical) -> tuple[np.ndarray, np.ndarray]:
    """Latency eccentricity and total latency of every slot of a node over **all** switches of
    the network, along the ``"piuma"`` routing: ``(slots,)`` arrays, the same in every node.

    A max-plus (and sum) recursion over the dimensions: ``K_0[k] = max_s W[s, k]`` over the
    node's own switches; adding dimension ``d`` brings in the neighbours at every offset ``δ``,
    whose whole lower-dimensional subnetworks first gather at their exit ``e(d, -δ)`` and then
    arrive at ``e(d, δ)``: ``K_{d+1}[k] = max(K_d[k], max_δ K_d[e(d, -δ)] + L_P +
    W[e(d, δ), k])``.
    """
    layout = route.layout
    w = route.intra.distance
    ecc = w.max(axis=0)
    total = w.sum(axis=0)
    count = layout.slots
    for d, size in enumerate(layout.nodes):
        if size == 1:
            continue
        new_ecc, new_total = ecc.copy(), total.copy()
        for delta in range(1, size):
            arrive = route.exit_slot[d, delta]
            leave = route.exit_slot[d, size - delta]
            reach = route.node_latency + w[arrive]  # (slots,) from arrival to every slot
            new_ecc = np.maximum(new_ecc, ecc[leave] + reach)
            new_total = new_total + total[leave] + count * reach
        ecc, total = new_ecc, new_total
        count *= size
    return ecc, total


def _centre(route: Hierarchical, nodes: np.ndarray) -> np.ndarray:
    coords = route.layout.node_coordinates(nodes)
    return np.abs(2 * coords - (route.shape - 1)).sum(axis=-1)


def piuma_root(topo: Topology, participants: np.ndarray) -> int:
    """The root of a PIUMA embedding over ``participants`` (module docstring).

    Raises
    ------
    TypeError, ValueError
        If ``topo`` is not a PIUMA network.
    """
    route = hierarchical(topo)
    layout = route.layout
    parts = np.asarray(participants, dtype=np.int64)
    if len(parts) == topo.nodes:
        ecc, total = slot_eccentricity(route)
        nodes = np.arange(layout.node_count)
        centre = _centre(route, nodes)
        node = int(nodes[np.lexsort((nodes, centre))[0]])
        slot = int(np.lexsort((np.arange(layout.slots), total, ecc))[0])
        return node * layout.slots + slot
    keys = np.empty((len(parts), 4), dtype=np.float64)
    block = max(1, _PAIR_ENTRIES // len(parts))
    for start in range(0, len(parts), block):
        cands = parts[start:start + block]
        lat = route.latency(parts[None, :], cands[:, None])  # participant -> candidate
        keys[start:start + len(cands), 0] = lat.max(axis=1)
        keys[start:start + len(cands), 1] = lat.sum(axis=1)
    keys[:, 2] = _centre(route, parts // layout.slots)
    keys[:, 3] = parts
    # Latencies equal up to rounding tie: compare them on a grid finer than any link latency.
    keys[:, :2] = np.round(keys[:, :2], 6)
    return int(keys[np.lexsort(keys.T[::-1])[0], 3])


def hierarchy_violation(topo: Topology, root: int, parent: dict[int, int]) -> str | None:
    """Why the request tree ``parent`` (child switch -> parent switch) is not a PIUMA
    hierarchical tree into ``root`` (module docstring), or None.

    Raises
    ------
    TypeError, ValueError
        If ``topo`` is not a PIUMA network.
    """
    layout = piuma_layout(topo)
    route = hierarchical(topo)
    if not parent:
        return None
    slots = layout.slots
    child = np.fromiter(parent.keys(), dtype=np.int64, count=len(parent))
    par = np.fromiter(parent.values(), dtype=np.int64, count=len(parent))
    nc, kc = np.divmod(child, slots)
    np_, kp = np.divmod(par, slots)
    root_node = root // slots
    inter = nc != np_
    leaving = child[inter]
    out_nodes, counts = np.unique(nc[inter], return_counts=True)
    if (out_nodes == root_node).any():
        u = int(leaving[nc[inter] == root_node][0])
        return (f"Switch {u} sends requests out of node {root_node}, which holds the root "
                f"{root}")
    if (counts > 1).any():
        x = int(out_nodes[counts > 1][0])
        return (f"Node {x} sends requests on {int(counts[counts > 1][0])} node links; a PIUMA "
                f"tree leaves each node on one")
    rc = layout.node_coordinates(root_node)
    hops_child = (layout.node_coordinates(nc[inter]) != rc).sum(axis=-1)
    hops_parent = (layout.node_coordinates(np_[inter]) != rc).sum(axis=-1)
    bad = np.flatnonzero(hops_parent != hops_child - 1)
    if len(bad):
        i = bad[0]
        return (f"Switch {int(leaving[i])} sends requests to node {int(np_[inter][i])}, which "
                f"is not one HyperX hop closer to node {root_node} of the root")
    target = np.full(layout.node_count, -1, dtype=np.int64)
    target[nc[inter]] = kc[inter]
    target[root_node] = root % slots
    intra = ~inter
    ti = target[nc[intra]]
    missing = np.flatnonzero(ti < 0)
    if len(missing):
        i = missing[0]
        return (f"Switch {int(child[intra][i])} forwards requests inside node "
                f"{int(nc[intra][i])}, which never sends them on")
    w = route.intra.distance
    lat = np.where(np.divmod(kc[intra], layout.cores)[0] == np.divmod(kp[intra],
                                                                      layout.cores)[0],
                   float(topo.params["latency_core"]), float(topo.params["latency_socket"]))
    ok = same_latency(w[kc[intra], ti], lat + w[kp[intra], ti])
    bad = np.flatnonzero(~ok)
    if len(bad):
        i = bad[0]
        u, v, x = int(child[intra][i]), int(par[intra][i]), int(nc[intra][i])
        return (f"Switch {u} forwards requests to switch {v}, which is not on a "
                f"latency-shortest path inside node {x} toward switch {x * slots + ti[i]}")
    return None


def latency_minimal(topo: Topology, root: int, parent: dict[int, int],
                    participants: Sequence[int]) -> bool:
    """Whether every participant's path along ``parent`` to ``root`` is a latency-shortest path
    of the network (link latencies of the PIUMA levels; Dijkstra from the root).

    Raises
    ------
    TypeError, ValueError
        If ``topo`` is not a PIUMA network.
    """
    from innet.gen.routing.latency import latency_distances
    from innet.gen.topology.piuma import link_latency_array

    weights = link_latency_array(topo)
    n = topo.nodes
    up = np.full(n, -1, dtype=np.int64)
    child = np.fromiter(parent.keys(), dtype=np.int64, count=len(parent))
    par = np.fromiter(parent.values(), dtype=np.int64, count=len(parent))
    ports = np.full(n, -1, dtype=np.int64)
    if len(child):
        match = topo.ports.peer[child] == par[:, None]
        ports[child] = match.argmax(axis=1)
    up[child] = ports[child]
    along = tree_latencies(topo, up, root, np.nan_to_num(weights))
    best = latency_distances(topo, weights, root)
    parts = np.asarray(participants, dtype=np.int64)
    return bool(same_latency(along[parts], best[parts]).all())
