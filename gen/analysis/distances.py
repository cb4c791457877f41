"""Shortest-path statistics: diameter, average shortest path length, distance distribution.

Methods (``method="auto"`` picks the cheapest exact one):

- ``"product"`` (HyperX, torus, mesh): these are Cartesian products of 1-D graphs, so the
  distance between two nodes is the sum of the per-dimension distances and the distribution
  over node pairs is the convolution of the per-dimension distributions. Exact, no search.
- ``"per-degree"`` (PolarFly ER_q, not expanded): by Property 1.4 (exactly one 2-walk between
  distinct vertices, quadric self-loops counted) a vertex's distance distribution is fixed by
  its degree, so one breadth-first search per distinct degree, weighted by how many vertices
  have it, is exact.
- ``"all-pairs"``: bit-parallel breadth-first search from every node. Exact, any graph.
- ``"sampled"``: the same from ``samples`` seeded random sources; an estimate (the diameter is
  a lower bound). ``auto`` uses it only past :data:`ALL_PAIRS_BUDGET`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from innet.gen.analysis.kernels import bfs_counts
from innet.gen.topology import Topology

__all__ = ["ALL_PAIRS_BUDGET", "METHODS", "DistanceStats", "distance_stats", "peer_distances"]

#: ``auto`` runs all-pairs search while ``N * N * mean_degree / 64`` stays below this.
ALL_PAIRS_BUDGET = 2e9

METHODS = ("auto", "all-pairs", "sampled", "product", "per-degree")

#: Sources per bit-parallel search batch.
_BATCH = 512


@dataclass(frozen=True)
class DistanceStats:
    """Shortest-path statistics.

    Members
    -------
    diameter : int or None
        The largest distance; None if the graph is disconnected.
    avg_shortest_path : float or None
        The mean distance over ordered pairs of distinct nodes; None if disconnected.
    counts : tuple of int
        ``counts[d]``: ordered pairs at distance ``d >= 1`` found (``counts[0]`` is 0); for a
        sampled run the pairs from the sampled sources only.
    method : str
        ``"product"``, ``"per-degree"``, ``"all-pairs"`` or ``"sampled"``.
    exact : bool
        False for a sampled estimate.
    sources : int
        The number of breadth-first-search sources (0 for ``"product"``).
    """

    diameter: int | None
    avg_shortest_path: float | None
    counts: tuple[int, ...]
    method: str
    exact: bool
    sources: int

    @property
    def connected(self) -> bool:
        """Whether every node reaches every other."""
        return self.diameter is not None


def _stats(counts: np.ndarray, pairs: int, reached: int, method: str, exact: bool,
           sources: int) -> DistanceStats:
    counts = np.asarray(counts, dtype=np.int64).copy()
    counts[0] = 0
    while len(counts) > 1 and counts[-1] == 0:
        counts = counts[:-1]
    if reached < pairs:
        return DistanceStats(None, None, tuple(counts.tolist()), method, exact, sources)
    total = int(counts.sum())
    mean = float((np.arange(len(counts)) * counts).sum() / total) if total else 0.0
    return DistanceStats(len(counts) - 1, mean, tuple(counts.tolist()), method, exact, sources)


def _bfs(peer: np.ndarray, sources: np.ndarray,
         progress: Callable[[int, int], None] | None) -> tuple[np.ndarray, int]:
    """Sum of :func:`bfs_counts` over batches of sources."""
    total = np.zeros(1, dtype=np.int64)
    reached = 0
    peer = np.ascontiguousarray(peer, dtype=np.int32)
    for start in range(0, len(sources), _BATCH):
        batch = np.ascontiguousarray(sources[start:start + _BATCH], dtype=np.int64)
        counts, found = bfs_counts(peer, batch)
        if len(counts) > len(total):
            total = np.pad(total, (0, len(counts) - len(total)))
        total[: len(counts)] += counts
        reached += found
        if progress is not None:
            progress(min(start + _BATCH, len(sources)), len(sources))
    return total, reached


def peer_distances(peer: np.ndarray, *, method: str = "auto", samples: int = 256,
                   seed: int = 0,
                   progress: Callable[[int, int], None] | None = None) -> DistanceStats:
    """Distance statistics of a raw ``(N, R)`` peer array (negative entries are absent links)
    by all-pairs or sampled search (see the module docstring)."""
    n = peer.shape[0]
    links = int((peer >= 0).sum())
    if method == "auto":
        method = "all-pairs" if n * links / 64 <= ALL_PAIRS_BUDGET or n <= samples else "sampled"
    if method == "all-pairs":
        counts, reached = _bfs(peer, np.arange(n), progress)
        return _stats(counts, n * n, reached, "all-pairs", True, n)
    if method == "sampled":
        sources = np.sort(np.random.default_rng(seed).choice(n, size=min(samples, n),
                                                             replace=False))
        counts, reached = _bfs(peer, sources, progress)
        return _stats(counts, len(sources) * n, reached, "sampled", len(sources) == n,
                      len(sources))
    raise ValueError(f"Method must be auto, all-pairs or sampled for a raw graph, not "
                     f"{method!r}")


def _product(topo: Topology) -> DistanceStats:
    shape = topo.params["shape"]
    total = np.ones(1, dtype=object)  # Python ints: pair counts overflow int64 past 2**31 nodes
    for size in shape:
        x = np.arange(size)
        diff = np.abs(x[:, None] - x[None, :])
        if topo.kind == "hyperx":
            dist = (diff > 0).astype(np.int64)
        elif topo.params.get("mesh"):
            dist = diff
        else:
            dist = np.minimum(diff, size - diff)
        one = np.bincount(dist.ravel()).astype(object)
        total = np.convolve(total, one)
    n = topo.nodes
    return _stats(np.array([int(c) for c in total], dtype=np.int64), n * n, n * n, "product",
                  True, 0)


def _per_degree(topo: Topology, progress) -> DistanceStats:
    degrees = topo.degrees
    values, first, weight = np.unique(degrees, return_index=True, return_counts=True)
    counts = np.zeros(1, dtype=np.int64)
    reached = 0
    for source, w in zip(first, weight, strict=True):
        c, r = bfs_counts(np.ascontiguousarray(topo.ports.peer), np.array([source]))
        if len(c) > len(counts):
            counts = np.pad(counts, (0, len(c) - len(counts)))
        counts[: len(c)] += c * w
        reached += r * w
    if progress is not None:
        progress(1, 1)
    return _stats(counts, topo.nodes ** 2, reached, "per-degree", True, len(values))


def distance_stats(topo: Topology, *, method: str = "auto", samples: int = 256, seed: int = 0,
                   progress: Callable[[int, int], None] | None = None) -> DistanceStats:
    """Diameter, average shortest path length and distance distribution of ``topo``.

    Parameters
    ----------
    topo : Topology
    method : str
        One of :data:`METHODS` (see the module docstring).
    samples : int
        Sources of a ``"sampled"`` run.
    seed : int
        Seed of the source sample.
    progress : callable, optional
        Called as ``progress(done, total)`` (sources searched).

    Raises
    ------
    ValueError
        If ``method`` is unknown or does not apply to ``topo`` (``"product"`` needs HyperX or
        torus, ``"per-degree"`` an unexpanded PolarFly), or ``samples`` is below 1.
    """
    if method not in METHODS:
        raise ValueError(f"Method must be one of {', '.join(METHODS)}, not {method!r}")
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ValueError(f"Samples must be a positive integer, not {samples!r}")
    grid = topo.kind in ("hyperx", "torus") and "shape" in topo.params
    er = (topo.kind == "polarfly" and not topo.params.get("r0")
          and not topo.params.get("r1"))
    if method == "auto":
        method = "product" if grid else "per-degree" if er else "auto"
    if method == "product":
        if not grid:
            raise ValueError(f"The product method needs a HyperX or torus, not {topo.kind}")
        stats = _product(topo)
        if progress is not None:
            progress(1, 1)
        return stats
    if method == "per-degree":
        if not er:
            raise ValueError("The per-degree method needs an unexpanded PolarFly")
        return _per_degree(topo, progress)
    return peer_distances(topo.ports.peer, method=method, samples=samples, seed=seed,
                          progress=progress)
