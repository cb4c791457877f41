"""Shortest paths by latency: Dijkstra on peer arrays, and the latency-weighted routing.

Links carry a latency each (``weight[u, p]`` for port ``p`` of ``u``, the same in both
directions), as on multi-level networks where a link's latency depends on its level (PIUMA,
"Analysis: System Parameters"). :func:`latency_distances` runs Dijkstra's algorithm from each
source (a compiled binary-heap kernel, O(E log N) per source); :class:`ShortestLatency` is the
next-hop function of the routing algorithm ``"shortest-latency"``: at ``u`` toward ``d`` the
**lowest-numbered port on a latency-shortest path**. Latencies must be positive, so the
next hops toward any destination form a tree (each hop strictly shortens the remaining
latency).

Two path latencies are taken as equal when they differ by less than :data:`TOLERANCE` times
the larger (sums of the same link latencies in different orders may round differently).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from innet.gen.routing.core import UNREACHABLE
from innet.gen.topology import LOCAL, Topology

__all__ = [
    "TOLERANCE",
    "ShortestLatency",
    "check_weights",
    "dijkstra",
    "latency_distances",
    "path_latency",
    "same_latency",
]

#: Relative tolerance of latency comparisons.
TOLERANCE = 1e-9


def same_latency(a: Any, b: Any) -> Any:
    """``a == b`` up to :data:`TOLERANCE` (arrays broadcast)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return np.abs(a - b) <= TOLERANCE * np.maximum(np.maximum(np.abs(a), np.abs(b)), 1.0)


def check_weights(topo: Topology, weights: Any) -> np.ndarray:
    """Link latencies as an ``(N, radix)`` float64 array, checked.

    ``weights`` is an ``(N, radix)`` array (entries past a node's degree are ignored) or a
    mapping ``{(u, v): latency}`` naming every link (either orientation).

    Raises
    ------
    TypeError
        If it is neither.
    ValueError
        If the shape is wrong, a link is missing, a latency is not finite and positive, or the
        two directions of a link differ.
    """
    peer = topo.ports.peer
    present = peer >= 0
    if isinstance(weights, dict):
        out = np.full(peer.shape, np.nan)
        for key, value in weights.items():
            if not (isinstance(key, tuple) and len(key) == 2):
                raise TypeError(f"Link latency keys must be (u, v) pairs, not {key!r}")
            u, v = int(key[0]), int(key[1])
            out[u, topo.port_to(u, v)] = value
            out[v, topo.port_to(v, u)] = value
    else:
        try:
            out = np.array(weights, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"Link latencies must be an (N, radix) array or a mapping of "
                            f"(u, v) to latency, not {weights!r:.60}") from None
        if out.shape != peer.shape:
            raise ValueError(f"Link latencies must have shape {peer.shape}, not {out.shape}")
    values = out[present]
    bad = ~(np.isfinite(values) & (values > 0))
    if bad.any():
        us, ps = np.nonzero(present)
        i = int(np.argmax(bad))
        u, v = int(us[i]), int(peer[us[i], ps[i]])
        raise ValueError(f"Latency of link {min(u, v)}-{max(u, v)} must be finite and > 0, "
                         f"not {values[i]}")
    us, ps = np.nonzero(present)
    back = out[peer[us, ps], topo.ports.peer_port[us, ps]]
    bad = out[us, ps] != back
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"Link {us[i]}-{peer[us[i], ps[i]]} has latency {out[us[i], ps[i]]} "
                         f"one way and {back[i]} the other")
    out[~present] = np.nan
    out.flags.writeable = False
    return out


@numba.njit(cache=True, nogil=True)
def _dijkstra(peer: np.ndarray, weight: np.ndarray, source: int,
              dist: np.ndarray) -> None:  # pragma: no cover - compiled
    """Single-source latencies into ``dist`` (``inf`` where unreachable); binary heap."""
    n, radix = peer.shape
    dist[:] = np.inf
    heap_d = np.empty(n * radix + 1, dtype=np.float64)
    heap_v = np.empty(n * radix + 1, dtype=np.int64)
    size = 0
    dist[source] = 0.0
    heap_d[0] = 0.0
    heap_v[0] = source
    size = 1
    done = np.zeros(n, dtype=np.bool_)
    while size > 0:
        d = heap_d[0]
        u = heap_v[0]
        size -= 1
        if size > 0:  # sift the last entry down from the top
            ld, lv = heap_d[size], heap_v[size]
            i = 0
            while True:
                c = 2 * i + 1
                if c >= size:
                    break
                if c + 1 < size and heap_d[c + 1] < heap_d[c]:
                    c += 1
                if heap_d[c] >= ld:
                    break
                heap_d[i] = heap_d[c]
                heap_v[i] = heap_v[c]
                i = c
            heap_d[i] = ld
            heap_v[i] = lv
        if done[u]:
            continue
        done[u] = True
        for p in range(radix):
            v = peer[u, p]
            if v < 0 or done[v]:
                continue
            nd = d + weight[u, p]
            if nd < dist[v]:
                dist[v] = nd
                i = size  # sift up
                size += 1
                while i > 0:
                    parent = (i - 1) // 2
                    if heap_d[parent] <= nd:
                        break
                    heap_d[i] = heap_d[parent]
                    heap_v[i] = heap_v[parent]
                    i = parent
                heap_d[i] = nd
                heap_v[i] = v


def dijkstra(peer: np.ndarray, weight: np.ndarray, sources: Any) -> np.ndarray:
    """Latency-shortest distances on raw arrays: ``peer[u, p]`` (``-1`` absent) and
    ``weight[u, p]``; ``(len(sources), N)`` float64, ``inf`` where unreachable."""
    src = np.atleast_1d(np.asarray(sources, dtype=np.int64))
    peer = np.ascontiguousarray(peer, dtype=np.int64)
    weight = np.ascontiguousarray(np.nan_to_num(weight, nan=np.inf), dtype=np.float64)
    out = np.empty((len(src), peer.shape[0]), dtype=np.float64)
    for i, s in enumerate(src.tolist()):
        _dijkstra(peer, weight, int(s), out[i])
    return out


def latency_distances(topo: Topology, weights: np.ndarray, sources: Any,
                      alive: np.ndarray | None = None) -> np.ndarray:
    """Latency-shortest distances from each source to every node: ``(len(sources), N)``
    float64 (a scalar source gives ``(N,)``), ``inf`` where unreachable.

    Parameters
    ----------
    weights : array, shape (N, radix)
        Link latencies (:func:`check_weights`).
    alive : array of bool, shape (N, radix), optional
        Usable ports; default every port.
    """
    peer = topo.ports.peer
    if alive is not None:
        peer = np.where(alive, peer, -1)
    out = dijkstra(peer, weights, sources)
    return out[0] if np.ndim(sources) == 0 else out


def path_latency(weights: np.ndarray, nodes: np.ndarray, ports: np.ndarray) -> np.ndarray:
    """Total latency of routed paths (:class:`innet.gen.routing.Paths` ``nodes, ports``)."""
    crossing = ports >= 0
    lat = np.where(crossing, weights[np.where(crossing, nodes, 0), np.where(crossing, ports, 0)],
                   0.0)
    return lat.sum(axis=1)


class ShortestLatency:
    """Next-hop function: lowest live port on a latency-shortest path (module docstring)."""

    def __init__(self, topo: Topology, weights: np.ndarray,
                 alive: np.ndarray | None = None) -> None:
        self.topo = topo
        self.weights = weights
        self.alive = alive if alive is not None else topo.ports.peer >= 0
        self._columns: dict[int, np.ndarray] = {}

    def _dist(self, dest: int) -> np.ndarray:
        if dest not in self._columns:
            if len(self._columns) > 64:
                self._columns.clear()
            self._columns[dest] = latency_distances(self.topo, self.weights, dest, self.alive)
        return self._columns[dest]

    def _choose(self, u: np.ndarray, dist: np.ndarray) -> np.ndarray:
        peer = self.topo.ports.peer[u]
        w = self.weights[u]
        ok = self.alive[u] & same_latency(dist[np.where(peer >= 0, peer, 0)] + w,
                                          dist[u][:, None]) & np.isfinite(dist[u])[:, None]
        ok &= (dist[u] > 0)[:, None]
        return np.where(ok.any(axis=1), ok.argmax(axis=1), UNREACHABLE)

    def column(self, dest: int) -> np.ndarray:
        """Every node's port toward ``dest`` from one Dijkstra run."""
        dist = self._dist(dest)
        u = np.arange(self.topo.nodes)
        out = self._choose(u, dist)
        out[dest] = LOCAL
        return out

    def next_port(self, u: np.ndarray, d: np.ndarray) -> np.ndarray:
        out = np.empty(len(u), dtype=np.int64)
        for dest in np.unique(d).tolist():
            rows = np.flatnonzero(d == dest)
            col = self.column(dest)
            out[rows] = col[u[rows]]
        return out
