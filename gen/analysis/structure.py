"""Degrees, the Moore bound and triangles."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from innet.gen.analysis.kernels import triangles_by_group
from innet.gen.topology import Topology, polarfly_layout

__all__ = [
    "PolarFlyTriangles",
    "degree_distribution",
    "moore_bound",
    "moore_efficiency",
    "polarfly_triangles",
    "triangle_count",
]


def degree_distribution(topo: Topology) -> dict[int, int]:
    """``{degree: number of nodes}``, ascending by degree."""
    values, counts = np.unique(topo.degrees, return_counts=True)
    return {int(v): int(c) for v, c in zip(values, counts, strict=True)}


def moore_bound(degree: int, diameter: int) -> int:
    """The Moore bound: the most nodes a graph of maximum degree ``degree`` and diameter
    ``diameter`` can have, ``1 + d * sum((d - 1)**i for i < D)`` (PolarFly, Section IV, Fig. 2).

    Raises
    ------
    ValueError
        If ``degree`` or ``diameter`` is negative.
    """
    if degree < 0 or diameter < 0:
        raise ValueError(f"Degree and diameter must be non-negative, not {degree} and "
                         f"{diameter}")
    return 1 + degree * sum((degree - 1) ** i for i in range(diameter))


def moore_efficiency(nodes: int, degree: int, diameter: int) -> float:
    """``nodes / moore_bound(degree, diameter)``: how close a network is to the bound."""
    return nodes / moore_bound(degree, diameter)


def _triangles(topo: Topology, group: np.ndarray) -> np.ndarray:
    return triangles_by_group(np.ascontiguousarray(topo.ports.peer),
                              np.ascontiguousarray(group, dtype=np.int64))


def triangle_count(topo: Topology) -> int:
    """The number of triangles (exact; forward algorithm, O(sum of deg^2))."""
    return int(_triangles(topo, np.zeros(topo.nodes, dtype=np.int64))[0])


@dataclass(frozen=True)
class PolarFlyTriangles:
    """Triangles of a PolarFly by how they sit in the cluster layout (Proposition V.6).

    Members
    -------
    intra : int
        Triangles inside one cluster (the fan blades: C(q, 2) for odd q).
    inter : int
        Triangles joining three clusters (C(q, 3) for odd q, one per triplet: Theorem V.7).
    mixed : int
        Triangles with corners in exactly two clusters (none in ER_q).
    """

    intra: int
    inter: int
    mixed: int

    @property
    def total(self) -> int:
        """All triangles."""
        return self.intra + self.inter + self.mixed


def polarfly_triangles(topo: Topology, starter: int | None = None) -> PolarFlyTriangles:
    """Count the triangles of a PolarFly by cluster (see :class:`PolarFlyTriangles`).

    Raises
    ------
    ValueError
        As :func:`innet.gen.topology.polarfly_layout`.
    """
    layout = polarfly_layout(topo, starter)
    one, two, three = _triangles(topo, np.array(layout.cluster_of)).tolist()
    return PolarFlyTriangles(intra=one, inter=three, mixed=two)
