"""Bisection cut and link-failure resilience (PolarFly, SC'22, Section IX)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from innet.gen.analysis.distances import peer_distances
from innet.gen.analysis.kernels import connected_suffix
from innet.gen.topology import Topology

__all__ = ["Bisection", "FailurePoint", "Failures", "bisection", "link_failures"]


@dataclass(frozen=True)
class Bisection:
    """A balanced two-way partition and the links it cuts (Section IX-A, Fig. 12).

    Members
    -------
    cut : int
        Links between the halves (an upper bound on the bisection width: METIS is heuristic).
    links : int
        All links.
    fraction : float
        ``cut / links``, the paper's measure (0.5 is the fat tree's optimum).
    sizes : tuple of int
        Nodes in each half.
    method : str
        ``"METIS (pymetis), seed S"``.
    parts : tuple of int
        The half (0 or 1) of every node.
    """

    cut: int
    links: int
    fraction: float
    sizes: tuple[int, int]
    method: str
    parts: tuple[int, ...]


def bisection(topo: Topology, *, seed: int = 0) -> Bisection:
    """Estimate the bisection cut with METIS (through pymetis), as the paper does.

    METIS k-way partitioning into two parts of equal size (within METIS's 3% default
    imbalance); ``seed`` fixes its random choices.
    """
    import pymetis

    degree = topo.degrees.astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(degree)])
    peer = topo.ports.peer
    adjacent = peer[peer >= 0].astype(np.int64)
    options = pymetis.Options(seed=int(seed))
    result = pymetis.part_graph(2, pymetis.CSRAdjacency(starts, adjacent), options=options)
    parts = np.asarray(result.vertex_part, dtype=np.int64)
    links = topo.link_array()
    cut = int((parts[links[:, 0]] != parts[links[:, 2]]).sum())
    sizes = np.bincount(parts, minlength=2)
    return Bisection(cut=cut, links=len(links), fraction=cut / len(links) if len(links) else 0.0,
                     sizes=(int(sizes[0]), int(sizes[1])),
                     method=f"METIS (pymetis), seed {seed}", parts=tuple(parts.tolist()))


@dataclass(frozen=True)
class FailurePoint:
    """Network state after a fraction of its links failed."""

    ratio: float
    failed: int
    diameter: int | None
    avg_shortest_path: float | None


@dataclass(frozen=True)
class Failures:
    """Seeded random link-failure experiment (Section IX-B, Fig. 14).

    Members
    -------
    ratios : tuple of float
        Per run, the fraction of links that had failed when the network first disconnected.
    median_ratio : float
        Their median (the lower median for an even number of runs).
    median_run : int
        The run (one with the median ratio, chosen with the seed) the curve follows.
    curve : tuple of FailurePoint
        Diameter and average shortest path of that run at ``0, step, 2*step, ...`` failed,
        while still connected.
    distance_method : str
        How the curve's distances were found (``"all-pairs"`` or ``"sampled"``).
    seed, runs, step : as given.
    """

    ratios: tuple[float, ...]
    median_ratio: float
    median_run: int
    curve: tuple[FailurePoint, ...]
    distance_method: str
    seed: int
    runs: int
    step: float


def link_failures(topo: Topology, *, runs: int = 20, seed: int = 0, step: float = 0.05,
                  samples: int = 256,
                  progress: Callable[[int, int], None] | None = None) -> Failures:
    """Fail links in random order until the network disconnects, ``runs`` times.

    Following Section IX-B: each run fails links in an order drawn from
    ``numpy.random.default_rng(seed)``; the disconnection ratio is the fraction of links
    failed when the network first splits. The run with the median ratio (one of them, picked
    with the same generator) is replayed to trace diameter and average shortest path length
    every ``step`` of failed links. Distances are exact (all-pairs) while affordable, else
    sampled from ``samples`` sources (see :func:`innet.gen.analysis.peer_distances`).

    Raises
    ------
    ValueError
        If ``runs`` < 1, ``step`` is not in (0, 1), or ``topo`` has no link.
    """
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"Runs must be a positive integer, not {runs!r}")
    if not 0 < step < 1:
        raise ValueError(f"Step must be between 0 and 1, not {step!r}")
    links = topo.link_array()
    total = len(links)
    if not total:
        raise ValueError("A network without links cannot lose any")
    rng = np.random.default_rng(seed)
    orders, ratios = [], []
    for run in range(runs):
        order = rng.permutation(total)
        k = connected_suffix(topo.nodes, np.ascontiguousarray(links[order][:, [0, 2]]))
        orders.append(order)
        ratios.append((k + 1) / total)  # failing links order[0..k] disconnects
        if progress is not None:
            progress(run + 1, runs + 1)
    median = sorted(ratios)[(runs - 1) // 2]
    chosen = int(rng.choice([r for r in range(runs) if ratios[r] == median]))
    curve = []
    method = "all-pairs"
    for i in range(math.ceil(median / step) + 1):
        failed = min(round(i * step * total), total)
        if failed >= median * total:
            break
        peer = topo.ports.peer.copy()
        gone = links[orders[chosen][:failed]]
        peer[gone[:, 0], gone[:, 1]] = -1
        peer[gone[:, 2], gone[:, 3]] = -1
        stats = peer_distances(peer, samples=samples, seed=seed)
        method = stats.method
        curve.append(FailurePoint(ratio=failed / total, failed=failed, diameter=stats.diameter,
                                  avg_shortest_path=stats.avg_shortest_path))
    if progress is not None:
        progress(runs + 1, runs + 1)
    return Failures(ratios=tuple(ratios), median_ratio=median, median_run=chosen,
                    curve=tuple(curve), distance_method=method, seed=seed, runs=runs, step=step)
