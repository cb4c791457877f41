"""The PolarFly cluster (rack) layout: Algorithm 1 of PolarFly (SC'22, Section V).

Given a starter quadric ``v``: cluster C0 holds every quadric; for each neighbour ``u`` of
``v`` (the *centres*) a cluster holds ``u`` and all non-quadric neighbours of ``u``. Every vertex
lands in exactly one cluster (Proposition V.1).

For odd q the q non-quadric clusters are *fans* of (q-1)/2 triangles sharing the centre
(Proposition V.2), each with q vertices. The paper describes only odd q; for even q the same
algorithm is still a partition (the proof of Proposition V.1 needs only diameter 2 and that the
neighbours of a quadric share no other neighbour, both true for every q): all q+1 quadrics lie
on the polar line of the *nucleus* ``(1, 1, 1)``, so the nucleus is a centre whose cluster is
just itself, and the other q-1 clusters are fans of q/2 triangles with q+1 vertices.

An expanded PolarFly (Section VI) adds the replica clusters after these, in the order they were
created: quadric replicas ``C0.1 .. C0.r0``, then ``C(q+1) .. C(q+r1)`` replicating
``C1 .. Cr1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from innet.gen.topology.core import Topology, check_topology
from innet.gen.topology.ergraph import QUADRIC

__all__ = ["PolarFlyLayout", "default_starter", "polarfly_layout"]


@dataclass(frozen=True)
class PolarFlyLayout:
    """Clusters of a PolarFly (Algorithm 1), C0 first.

    Members
    -------
    q : int
        The field order.
    starter : int
        The starter quadric.
    names : tuple of str
        ``"C0"``, ``"C1"`` .. ``"Cq"``, then replica clusters ``"C0.k"`` and ``"C(q+i)"``.
    clusters : tuple of tuple of int
        The nodes of each cluster: the centre first (non-quadric clusters), then ascending id;
        a replica cluster lists the replicas in the order of the cluster it copies.
    centers : tuple of (int or None)
        The centre of each cluster, None for the quadric clusters.
    cluster_of : tuple of int
        The index (into ``clusters``) of every node's cluster.
    """

    q: int
    starter: int
    names: tuple[str, ...]
    clusters: tuple[tuple[int, ...], ...]
    centers: tuple[int | None, ...]
    cluster_of: tuple[int, ...]

    @property
    def sizes(self) -> tuple[int, ...]:
        """The number of nodes of each cluster."""
        return tuple(len(c) for c in self.clusters)


def _check_polarfly(topo: Topology) -> None:
    check_topology(topo)
    if topo.kind != "polarfly":
        raise ValueError(f"A cluster layout needs a PolarFly topology, not {topo.kind}")


def default_starter(topo: Topology) -> int:
    """The starter quadric a layout of ``topo`` uses when none is given: the one an expansion
    followed, else the quadric with the lowest id."""
    _check_polarfly(topo)
    if "starter" in topo.params:
        return int(topo.params["starter"])
    return topo.classes.index(QUADRIC)


def _check_starter(topo: Topology, starter: object) -> int:
    if isinstance(starter, bool) or not isinstance(starter, (int, np.integer)):
        raise TypeError(f"Starter must be a node id, not {starter!r:.60}")
    starter = int(starter)
    q = topo.params["q"]
    if not 0 <= starter < q * q + q + 1 or topo.classes[starter] != QUADRIC:
        raise ValueError(f"Starter must be a quadric of ER_{q}, not node {starter}")
    return starter


def _er_clusters(topo: Topology, starter: int) -> tuple[list[list[int]], list[int]]:
    """Algorithm 1 on the ER_q part (ids ``0..q^2+q``) of ``topo``."""
    q = topo.params["q"]
    n = q * q + q + 1
    quadric = np.array([c == QUADRIC for c in topo.classes[:n]])
    peer = topo.ports.peer
    clusters = [np.flatnonzero(quadric).tolist()]
    centers = [u for u in topo.neighbors(starter) if u < n]
    for u in centers:
        row = peer[u][(peer[u] >= 0) & (peer[u] < n)]
        clusters.append([u, *sorted(row[~quadric[row]].tolist())])
    return clusters, centers


def polarfly_layout(topo: Topology, starter: int | None = None) -> PolarFlyLayout:
    """The cluster layout of a PolarFly (Algorithm 1), expanded clusters included.

    Parameters
    ----------
    topo : Topology
        A topology built by :func:`innet.gen.topology.polarfly`.
    starter : int, optional
        The starter quadric; default :func:`default_starter`. An expanded PolarFly only has
        the layout its expansion followed.

    Raises
    ------
    TypeError
        If ``topo`` is not a Topology or ``starter`` not an integer.
    ValueError
        If ``topo`` is not a PolarFly, ``starter`` is not a quadric, or it differs from the
        starter an expansion followed.
    """
    _check_polarfly(topo)
    q = int(topo.params["q"])
    r0, r1 = int(topo.params.get("r0", 0)), int(topo.params.get("r1", 0))
    if starter is None:
        starter = default_starter(topo)
    starter = _check_starter(topo, starter)
    if (r0 or r1) and starter != topo.params["starter"]:
        raise ValueError(f"This PolarFly was expanded along the layout of starter "
                         f"{topo.params['starter']}, not {starter}")
    clusters, centers = _er_clusters(topo, starter)
    names = [f"C{i}" for i in range(q + 1)]
    all_centers: list[int | None] = [None, *centers]
    n = q * q + q + 1
    # Replicas: label (x, y, z, k) copies the vertex labelled (x, y, z); quadric replicas are
    # numbered k = 1..r0 and non-quadric replicas have k = 1.
    index = {topo.labels[u]: u for u in range(n)}
    home = np.empty(n, dtype=np.int64)
    for i, members in enumerate(clusters):
        home[members] = i
    replica_clusters: dict[tuple[int, int], list[int]] = {}
    for u in range(n, topo.nodes):
        label = topo.labels[u]
        original = index[label[:3]]
        key = (int(home[original]), label[3] if home[original] == 0 else 1)
        replica_clusters.setdefault(key, []).append(u)
    for k in range(1, r0 + 1):
        names.append(f"C0.{k}")
        clusters.append(replica_clusters[(0, k)])
        all_centers.append(None)
    for i in range(1, r1 + 1):
        names.append(f"C{q + i}")
        members = replica_clusters[(i, 1)]
        order = {index[topo.labels[u][:3]]: u for u in members}
        clusters.append([order[v] for v in clusters[i]])
        all_centers.append(order[centers[i - 1]])
    cluster_of = np.empty(topo.nodes, dtype=np.int64)
    for i, members in enumerate(clusters):
        cluster_of[members] = i
    return PolarFlyLayout(q=q, starter=starter, names=tuple(names),
                          clusters=tuple(map(tuple, clusters)), centers=tuple(all_centers),
                          cluster_of=tuple(cluster_of.tolist()))
