"""Incremental expansion of PolarFly by cluster replication (PolarFly, SC'22, Section VI).

Replication of a cluster C (Definition VI.1) adds a replica v' for every v in C: replicas of
two adjacent vertices of C are adjacent, and v' is adjacent to every neighbour of v outside C.
No existing link is removed or moved to another port: every new link uses the next free port.

- Quadric replication (Section VI-A), ``r0`` times: C0 is copied and every quadric is joined
  to all of its replicas. Each copy adds q+1 nodes and keeps the diameter at 2; quadrics gain
  ``r0`` ports, V1 vertices ``2*r0``.
- Non-quadric replication (Section VI-B), ``r1 <= q`` clusters round-robin: C1, C2, .. Cr1 are
  copied in that order (each copy is Definition VI.1 on the graph as it is then, so replicas
  of two clusters are joined as their originals are). The degree fix: for every other
  non-quadric cluster Cj (and its replica C(q+j) if it exists) the one vertex of Ci with no
  edge to Cj (Proposition V.4.3) has its replica joined to the centre of Cj (of C(q+j)).
  Each copy adds q nodes; the diameter becomes at most 3.

Quadric replicas are created first, then non-quadric ones. Ids: the ER_q vertices keep
``0..N-1``; quadric replicas follow (copy k = 1..r0, quadrics in id order), then the replica
clusters (in cluster order, members in the order of the cluster they copy). A replica's label is
its original's vector followed by the copy number: ``(x0, x1, x2, k)``.
"""

from __future__ import annotations

import numpy as np

from innet.gen.topology.core import MAX_PORT_ENTRIES, Topology, check_topology
from innet.gen.topology.layout import _check_starter, _er_clusters, default_starter

__all__ = ["check_expansion", "expand"]


def _check_count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {value!r:.60}")
    return int(value)


def check_expansion(q: int, r0: object, r1: object) -> tuple[int, int]:
    """``(r0, r1)`` checked for ER_q, before the graph is built (raises as :func:`expand`)."""
    r0 = _check_count("r0", r0)
    r1 = _check_count("r1", r1)
    if r0 < 0:
        raise ValueError(f"r0 must be at least 0, not {r0}")
    if not 0 <= r1 <= q:
        raise ValueError(f"r1 must be between 0 and q={q}, not {r1}")
    if r1 and q % 2 == 0:
        raise ValueError(f"Non-quadric cluster replication needs odd q (Proposition V.4), "
                         f"not q={q}")
    total = q * q + q + 1 + (q + 1) * r0 + q * r1
    if total * (q + 1 + 2 * r0 + 2 * r1 + 2) > MAX_PORT_ENTRIES:
        raise ValueError(f"Expanding ER_{q} by r0={r0}, r1={r1} gives {total} nodes; that is "
                         f"too large")
    return r0, r1


def expand(topo: Topology, *, r0: int = 0, r1: int = 0, starter: int | None = None) -> Topology:
    """Expand a PolarFly ER_q by ``r0`` quadric-cluster and ``r1`` non-quadric-cluster
    replications along the layout of ``starter`` (Section VI; see the module docstring).

    Port order stays "ascending neighbour id" for every node: new links always lead to new,
    higher ids, so every original port keeps its number.

    Parameters
    ----------
    topo : Topology
        An unexpanded PolarFly from :func:`innet.gen.topology.polarfly`.
    r0 : int
        Quadric-cluster replications, ``>= 0``.
    r1 : int
        Non-quadric clusters to replicate, ``0 <= r1 <= q``; needs odd q.
    starter : int, optional
        The starter quadric of the layout (default: the lowest-id quadric). It is recorded in
        ``params["starter"]``.

    Raises
    ------
    TypeError
        If ``r0``, ``r1`` or ``starter`` is not an integer.
    ValueError
        If ``topo`` is not an unexpanded PolarFly, ``r0 < 0``, ``r1`` is outside ``0..q``,
        ``r1 > 0`` with even q, ``starter`` is not a quadric, or the result would be too large.
    """
    check_topology(topo)
    if topo.kind != "polarfly":
        raise ValueError(f"Only a PolarFly can be expanded, not {topo.kind}")
    q = int(topo.params["q"])
    if topo.params.get("r0", 0) or topo.params.get("r1", 0):
        raise ValueError("This PolarFly is already expanded; expand ER_q once with the final "
                         "r0 and r1")
    r0, r1 = check_expansion(q, r0, r1)
    starter = _check_starter(topo, default_starter(topo) if starter is None else starter)
    n = topo.nodes

    clusters, centers = _er_clusters(topo, starter)
    labels = list(topo.labels)
    classes = list(topo.classes)
    new_edges: list[tuple[int, int]] = []
    extra: dict[int, list[int]] = {}  # links added to a node so far

    def add_node(original: int, copy: int) -> int:
        labels.append((*topo.labels[original], copy))
        classes.append(topo.classes[original])
        return len(labels) - 1

    def link(a: int, b: int) -> None:
        new_edges.append((a, b))
        extra.setdefault(a, []).append(b)
        extra.setdefault(b, []).append(a)

    # Section VI-A: copies of C0, each quadric joined to all of its copies.
    copies = {w: [w] for w in clusters[0]}
    for k in range(1, r0 + 1):
        for w in clusters[0]:
            w2 = add_node(w, k)
            for x in topo.neighbors(w):  # C0 has no internal edges: all are inter-cluster
                link(w2, x)
            for other in copies[w]:
                link(w2, other)
            copies[w].append(w2)

    # Section VI-B: copies of C1 .. Cr1, round-robin, with the degree fix.
    cluster_of = np.zeros(n, dtype=np.int64)
    for i, members in enumerate(clusters):
        cluster_of[members] = i
    replicas: dict[int, dict[int, int]] = {}  # cluster -> {original: replica}
    for i in range(1, r1 + 1):
        members = clusters[i]
        inside = set(members)
        replica = {u: add_node(u, 1) for u in members}
        for u in members:
            for x in [*topo.neighbors(u), *extra.get(u, ())]:
                if x not in inside:
                    link(replica[u], x)
                elif u < x:
                    link(replica[u], replica[x])
        # Proposition V.4.3: for every other cluster Cj exactly one non-centre vertex of Ci
        # has no edge to Cj.
        lonely: dict[int, int] = {}
        for u in members[1:]:
            touched = set(cluster_of[list(topo.neighbors(u))].tolist())
            for j in set(range(1, q + 1)) - touched - {i}:
                lonely[j] = u
        for j in range(1, q + 1):
            if j == i:
                continue
            link(replica[lonely[j]], centers[j - 1])
            if j in replicas:
                link(replica[lonely[j]], replicas[j][centers[j - 1]])
        replicas[i] = replica

    edges = np.concatenate([topo.link_array()[:, [0, 2]],
                            np.array(new_edges, dtype=np.int64).reshape(-1, 2)])
    return Topology.from_edges(
        kind="polarfly", params={"q": q, "r0": r0, "r1": r1, "starter": starter},
        labels=labels, edges=edges, classes=classes)
