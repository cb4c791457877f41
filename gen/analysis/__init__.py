"""Structural analysis of topologies (PolarFly, SC'22, Sections IV and IX).

- :func:`distance_stats`: diameter, average shortest path length, distance distribution
  (exact by Cartesian-product convolution, per-degree search or all-pairs search; sampled
  only when asked or past a work budget).
- :func:`degree_distribution`, :func:`moore_bound`, :func:`moore_efficiency`.
- :func:`triangle_count`; :func:`polarfly_triangles` splits them by cluster.
- :func:`bisection`: METIS (pymetis) balanced bisection cut.
- :func:`link_failures`: seeded random link failures until disconnection.
- :func:`summarize`: all of it as one JSON-ready dict (what ``innet topo --json`` prints).
"""

from innet.gen.analysis.distances import (
    ALL_PAIRS_BUDGET,
    METHODS,
    DistanceStats,
    distance_stats,
    peer_distances,
)
from innet.gen.analysis.resilience import (
    Bisection,
    FailurePoint,
    Failures,
    bisection,
    link_failures,
)
from innet.gen.analysis.structure import (
    PolarFlyTriangles,
    degree_distribution,
    moore_bound,
    moore_efficiency,
    polarfly_triangles,
    triangle_count,
)
from innet.gen.analysis.summary import summarize

__all__ = [
    "ALL_PAIRS_BUDGET",
    "METHODS",
    "Bisection",
    "DistanceStats",
    "FailurePoint",
    "Failures",
    "PolarFlyTriangles",
    "bisection",
    "degree_distribution",
    "distance_stats",
    "link_failures",
    "moore_bound",
    "moore_efficiency",
    "peer_distances",
    "polarfly_triangles",
    "summarize",
    "triangle_count",
]
